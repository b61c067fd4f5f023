"""``symproof verify``: the JSON schema and the exit codes, in process and as a command."""

import json
import subprocess
import sys

import pytest
import sympy as sp

from symproof import claim
from symproof._face._cli import COMMANDS, main
from symproof.claims import _claim as claim_module
from symproof.claims import _verify as verify_module

x = sp.Symbol("x", real=True)

#: exit codes: every selected claim proved / some claim not proved / an error
ALL_PROVED, NOT_ALL_PROVED, ERROR = 0, 1, 2
VERDICTS = {"proved", "refuted", "unknown"}


@pytest.fixture
def claims(monkeypatch):
    """Only a true and a false test claim: the in-process tests do not depend on the chapter."""
    registry: dict = {}
    monkeypatch.setattr(claim_module, "_REGISTRY", registry)
    monkeypatch.setattr(verify_module, "load_claims", lambda: dict(registry))

    @claim("zz_test.true", section="99.1", title="a true test claim", statement="")
    def true_claim(proof):
        proof.equal("Pythagoras", sp.sin(x) ** 2 + sp.cos(x) ** 2, 1)

    @claim("zz_test.false", section="99.2", title="a false test claim", statement="")
    def false_claim(proof):
        proof.equal("not the absolute value", sp.sqrt(x**2), x)

    @claim("zz_test.measured", section="99.3", title="a measured test claim", statement="", kind="measured")
    def measured_claim(proof):
        proof.check("a measurement within its bound", True, "max error 0")

    return registry


def _check_schema(records):
    assert isinstance(records, list) and records
    for record in records:
        assert {"id", "verdict", "method", "seconds", "witness"} <= set(record)
        assert isinstance(record["id"], str) and record["verdict"] in VERDICTS
        assert isinstance(record["method"], str) and isinstance(record["seconds"], (int, float))
        assert record["witness"] is None or isinstance(record["witness"], str)


def test_verify_json_all_proved(claims, capsys):
    assert main(["verify", "zz_test.true", "--json"]) == ALL_PROVED
    records = json.loads(capsys.readouterr().out)
    _check_schema(records)
    assert [(r["id"], r["verdict"], r["method"], r["witness"]) for r in records] == \
        [("zz_test.true", "proved", "trig-polynomial", None)]


def test_verify_json_with_a_refuted_claim(claims, capsys):
    assert main(["verify", "zz_test.*", "--json"]) == NOT_ALL_PROVED
    records = json.loads(capsys.readouterr().out)
    _check_schema(records)
    refuted = {r["id"]: r for r in records}["zz_test.false"]
    assert (refuted["verdict"], refuted["witness"]) == ("refuted", "{x: -1}")
    assert refuted["reason"] == "step 'not the absolute value' is false"


def test_verify_table(claims, capsys):
    assert main(["verify", "zz_test.*"]) == NOT_ALL_PROVED
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["claim", "verdict", "seconds", "method"]
    assert out[-1].startswith("3 claims: 1 proved, 1 measured, 1 refuted, 0 unknown in ")
    assert any(line.strip() == "-> step 'not the absolute value' is false" for line in out)


def test_a_measured_claim_is_shown_as_measured_not_proved(claims, capsys):
    """A table of measurements that passed is not a proof: the verdict column and the summary say so,
    and the exit code treats it as passing (nothing in it failed)."""
    assert main(["verify", "zz_test.measured"]) == ALL_PROVED
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:2] == ["zz_test.measured", "measured"]
    assert out[-1].startswith("1 claim: 0 proved, 1 measured, 0 refuted, 0 unknown in ")


def test_verify_unknown_pattern_is_an_error(claims, capsys):
    assert main(["verify", "no.such.claim"]) == ERROR
    err = capsys.readouterr().err
    assert err.startswith("symproof verify: error: no claim matches 'no.such.claim'; known IDs start with")


def test_no_command_prints_the_help_as_a_usage_error(capsys):
    """argparse's convention for a missing required argument: exit 2, on stderr; the help is all of it."""
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == ERROR
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: symproof")
    assert err.rstrip().endswith("error: the following arguments are required: COMMAND")
    for name in COMMANDS:  # every subcommand listed with its help line
        assert f"    {name}" in err


def _run(*args):
    return subprocess.run([sys.executable, "-m", "symproof", *args], capture_output=True, text=True,
                          timeout=120)


def test_python_m_symproof_verify_json():
    done = _run("verify", "rope.relative", "--json")
    assert done.returncode == ALL_PROVED, done.stderr
    records = json.loads(done.stdout)
    _check_schema(records)
    assert [(r["id"], r["verdict"]) for r in records] == [("rope.relative", "proved")]


def test_python_m_symproof_unknown_pattern():
    done = _run("verify", "no.such.claim")
    assert done.returncode == ERROR
    assert "symproof verify: error: no claim matches 'no.such.claim'" in done.stderr
    assert "Traceback" not in done.stderr
