"""symproof.verify / check / export: the command line's verbs in Python, with the command's results.

Each is compared with the command it wraps (same verdicts, same exit code, same files), and its
result has a one-line repr."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sympy as sp

import symproof
from symproof._face._cli import main

REPO = Path(__file__).resolve().parents[2]
XPOS = REPO / "derivations" / "variants" / "xpos.toml"
LLAMA = REPO / "derivations" / "configs" / "llama-3.1-8b.json"


def _one_line(text: str, limit: int = 300) -> None:
    assert "\n" not in text and len(text) <= limit, text


def _command(capsys, argv) -> tuple:
    code = main(argv)
    out = capsys.readouterr().out
    return code, out


def test_verify_is_the_commands_verdicts(capsys):
    result = symproof.verify("rope.rel*")
    code, out = _command(capsys, ["verify", "rope.rel*", "--json"])
    assert [(r["id"], r["verdict"]) for r in result.as_dict()] == [(r["id"], r["verdict"]) for r in json.loads(out)]
    assert result.exit_code == code == 0 and result.ok
    assert result["rope.relative"].status == "proved" and result[0].id == "rope.relative"
    _one_line(repr(result))
    assert repr(result).startswith("<VerifyResult 1 claim (rope.relative): 1 proved")
    assert str(result).splitlines()[0].split() == ["claim", "verdict", "seconds", "method"]
    _one_line(repr(result[0]))
    assert repr(result[0]) == "<ClaimResult rope.relative: proved (structural, entrywise)>"


def test_verify_takes_several_patterns_and_refuses_what_matches_nothing(capsys):
    assert {r.id for r in symproof.verify(["rope.relative", "rope.compose"])} == {"rope.compose", "rope.relative"}
    with pytest.raises(symproof.InvalidInputError, match="no claim matches 'rope.relatve'; .*did you mean"):
        symproof.verify("rope.relatve")
    with pytest.raises(symproof.InvalidInputError):
        symproof.verify([1, 2])


def _verdicts(document: dict) -> dict:
    return {p["property"]: p["verdict"] for p in document["properties"]}


# (what is passed to symproof.check, how the command names the same file)
CHECK_INPUTS = [
    ("xpos", "xpos"),
    (XPOS, str(XPOS)),
    (XPOS.read_text(encoding="utf-8"), str(XPOS)),
]


@pytest.mark.parametrize("given, file", CHECK_INPUTS, ids=["example name", "path", "TOML text"])
def test_check_is_the_commands_verdicts(given, file, capsys):
    result = symproof.check(given)
    code, out = _command(capsys, ["check", file, "--json"])
    assert _verdicts(result.as_dict()) == _verdicts(json.loads(out))
    assert result.exit_code == code
    _one_line(repr(result))
    assert repr(result).startswith("<CheckResult xPos") and f"exit {code}>" in repr(result)
    assert "decay" in result.lost and "relative" in result.kept


def test_check_reads_a_model_config_as_json_text(capsys):
    result = symproof.check(LLAMA.read_text(encoding="utf-8"), steps=2_000_000)
    code, out = _command(capsys, ["check", str(LLAMA), "--json"])
    assert result.exit_code == code
    assert repr(result).startswith("<CheckResult llama config")


LAYERS = REPO / "derivations" / "layers" / "llama4_layers.toml"


def _layer_verdicts(document: dict) -> dict:
    return {(kind, p["property"]): p["verdict"] for kind, part in document["layers"]["types"].items()
            for p in part["properties"]}


@pytest.mark.parametrize("given", ["llama4_layers", LAYERS, LAYERS.read_text(encoding="utf-8")],
                         ids=["example name", "path", "TOML text"])
def test_check_reads_a_layer_pattern_as_the_command_does(given, capsys):
    result = symproof.check(given)
    code, out = _command(capsys, ["check", str(LAYERS), "--json"])
    expected = _layer_verdicts(json.loads(out))
    assert _layer_verdicts(result.as_dict()) == expected and result.exit_code == code
    assert len(result.results) == len(expected) and str(result).splitlines()[0].endswith("(layer pattern; "
                                                                                        f"{result.subject.source})")
    # a property with one status in every layer type is named alone, one whose status differs, per type
    status = {(r.id.split(".")[0].removeprefix("llama4_layers-"), r.id.rsplit(".", 1)[1]): r.status
              for r in result.results}
    kinds = {kind for kind, _ in status}
    assert kinds == {"rope", "nope"}
    for listed, wanted in ((result.kept, "proved"), (result.lost, "refuted")):
        for name in {name for _, name in status}:
            if all(status.get((kind, name)) == wanted for kind in kinds):
                assert name in listed and not any(item.endswith("." + name) for item in listed)
            else:
                assert name not in listed
                assert [f"{kind}.{name}" in listed for kind in sorted(kinds)] == \
                       [status.get((kind, name)) == wanted for kind in sorted(kinds)]
    _one_line(repr(result))


@pytest.mark.parametrize("given, part", [("xpos", None), ("gemma3_layers", "layer_type"), ("gemma-3-4b", "regime")])
def test_check_records_are_one_flat_row_per_property(given, part):
    result = symproof.check(given)
    rows = result.records()
    assert [row["id"] for row in rows] == [r.id for r in result.results]
    assert [row["verdict"] for row in rows] == [r.verdict for r in result.results]
    for row in rows:  # a DataFrame's cells: no nested tables (a list of positions is one cell)
        assert not any(isinstance(value, dict) for value in row.values()), row
        if part is None:
            assert "layer_type" not in row and "regime" not in row
        else:
            assert next(iter(row)) == part and row["id"].split(".")[0].endswith("-" + row[part])
    if part is not None:
        assert len({row[part] for row in rows}) == 2
    kernel = next(row for row in rows if row["property"] == "kernel")
    assert {"numpy", "c"} <= set(kernel["tested.targets"]) and "tested" not in kernel


def test_check_refuses_a_plot_of_a_layer_pattern(tmp_path):
    with pytest.raises(symproof.InvalidInputError, match="expected a variant file, got the layer-pattern file"):
        symproof.check("gemma3_layers", plot=tmp_path / "decay.svg")
    assert not list(tmp_path.iterdir())


# (input, the error class, what the message says)
BAD_CHECKS = [
    ('name = "x"\nkind = "rotray"\n', symproof.VariantFileError, "did you mean rotary?"),
    ("{not json", symproof.VariantFileError, "not valid JSON"),
    ("xpoz", symproof.SymproofError, "xpos"),
    (42, symproof.InvalidInputError, "expected a path"),
]


@pytest.mark.parametrize("given, error, words", BAD_CHECKS, ids=["TOML typo", "JSON", "example typo", "not text"])
def test_check_raises_what_the_command_reports(given, error, words):
    with pytest.raises(error, match=words):
        symproof.check(given)


@pytest.mark.parametrize("limits, words", [
    (dict(steps=0), "steps must be a whole number"), (dict(steps=2.5), "steps must be a whole number"),
    (dict(time_limit=0), "time_limit must be a positive number"), (dict(budget=5), "budget=...) was removed"),
])
def test_check_budget_is_validated(limits, words):
    with pytest.raises(symproof.InvalidInputError, match=re.escape(words)):
        symproof.check("xpos", **limits)


def test_export_gives_the_sources_and_writes_what_the_command_writes(tmp_path, capsys):
    in_memory = symproof.export("rope", head_dim=8, target="c")
    assert in_memory.paths == () and sorted(in_memory.files) == ["symproof_rope.c", "symproof_rope.h"]
    _one_line(repr(in_memory))
    written = symproof.export("rope", head_dim=8, target="c", out=tmp_path / "api")
    assert main(["export", "rope", "--head-dim", "8", "--target", "c", "--out", str(tmp_path / "cli")]) == 0
    for name, text in in_memory.files.items():
        assert (tmp_path / "api" / name).read_text(encoding="utf-8") == text
        assert (tmp_path / "cli" / name).read_text(encoding="utf-8") == text
    assert sorted(Path(p).name for p in written.paths) == sorted(in_memory.files)


def test_export_refuses_what_the_command_refuses():
    with pytest.raises(symproof.InvalidInputError, match="--head-dim: expected an even width"):
        symproof.export("rope", head_dim=0)
    with pytest.raises(symproof.InvalidInputError, match="unknown kernel"):
        symproof.export("sinusoidal", head_dim=8)


x = sp.Symbol("x", real=True)

# (lhs, rhs, the status, what the repr shows)
VERDICTS = [
    (sp.sin(x) ** 2 + sp.cos(x) ** 2, sp.Integer(1), "proved", "Verdict(status='proved', method="),
    (sp.sin(2 * x), 2 * sp.sin(x), "refuted", "witness="),
]


@pytest.mark.parametrize("lhs, rhs, status, shown", VERDICTS, ids=[s for _, _, s, _ in VERDICTS])
def test_a_verdicts_repr_is_one_short_line(lhs, rhs, status, shown):
    verdict = symproof.prove_equal(lhs, rhs)
    assert verdict.status == status
    _one_line(repr(verdict), 200)
    assert shown in repr(verdict)
    if status == "proved":  # the certificate is an attribute, not the repr
        assert verdict.certificate is not None and "certificate" not in repr(verdict)
