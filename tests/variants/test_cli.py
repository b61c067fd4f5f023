"""``symproof check``: output, JSON and exit codes."""

import json

import pytest

from symproof._face._cli import main
from symproof.variants import shipped_variants


def test_json_lists_every_property_with_its_verdict(capsys):
    code = main(["check", shipped_variants()["broken_sign"], "--json"])
    document = json.loads(capsys.readouterr().out)
    by_key = {p["property"]: p for p in document["properties"]}
    # a property that does not hold is an answer: the check ran, so the exit code is 0
    assert code == 0 == document["exit_code"]
    assert by_key["norm"]["holds"] is False and by_key["norm"]["verdict"] == "refuted"
    assert by_key["norm"]["witness"] and "m:" in by_key["norm"]["witness"]
    assert by_key["direction"]["holds"] is True
    assert document["variant"]["name"] == "broken-sign"


def test_table_output(capsys):
    assert main(["check", shipped_variants()["alibi"]]) == 0
    out = capsys.readouterr().out
    assert "direction" in out and "loses: direction" in out


def test_bad_file_exits_2_with_the_key(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\nkind = "rotary"\nwidth = 5\n', encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "'width'" in err and "even integer" in err


def test_export_writes_the_kernel(tmp_path, capsys):
    assert main(["check", shipped_variants()["xpos"], "--export", str(tmp_path), "--target", "numpy"]) == 0
    assert (tmp_path / "symproof_variant_xpos.py").exists()


def test_export_target_is_refused_before_the_check(tmp_path, capsys):
    assert main(["check", shipped_variants()["alibi"], "--export", str(tmp_path), "--target", "c"]) == 2
    assert capsys.readouterr().out == ""


def test_report(tmp_path, capsys):
    assert main(["check", shipped_variants()["xpos"], "--report", str(tmp_path)]) == 0
    assert any(tmp_path.iterdir())
