"""``symproof compare A B``: equal only when every pair's map is proved equal; a difference with a witness
whose two images are really different numbers; unknown, said so, outside what compare reads."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from symproof import Variant
from symproof._face._compare_command import load_rotary_map
from symproof.variants._compare import compare_variants

REPO = Path(__file__).resolve().parents[2]

PLAIN = """name = "{name}"
kind = "rotary"
width = 8
pairing = "{pairing}"
[frequencies]
{frequencies}
"""


def _toml(name, pairing="adjacent", frequencies='rule = "geometric"\nbase = 10000', extra=""):
    return Variant.from_toml(PLAIN.format(name=name, pairing=pairing, frequencies=frequencies) + extra)


WRITTEN = {
    "plain": lambda: _toml("plain"),
    "as-formula": lambda: _toml("as-formula", frequencies='rule = "formula"\nformula = "10000**(-2*r/d)"'),
    "as-list": lambda: _toml("as-list", frequencies='rule = "list"\nvalues = [1, "10000**(-1/4)", "1/100", '
                                                   '"10000**(-3/4)"]'),
    "base-10001": lambda: _toml("base-10001", frequencies='rule = "geometric"\nbase = 10001'),
    "half": lambda: _toml("half", pairing="half"),
    "flipped-sine": lambda: _toml("flipped-sine", extra='[rotation]\nblock = [["cos(x)", "sin(x)"], '
                                                       '["-sin(x)", "cos(x)"]]\n'),
    "key-scaled": lambda: _toml("key-scaled", extra='[scale]\nkey = "2"\n'),
    # a query scale stepping at m = 20000 (Ministral 3's form), and the same with another beta: they differ from
    # the step on, which the prover's small points do not reach
    "step-beta-1": lambda: _stepped("step-beta-1", "10"),
    "step-beta-2": lambda: _stepped("step-beta-2", "5"),
}


def _stepped(name, divisor):
    return Variant.from_dict({"name": name, "kind": "rotary", "width": 8, "pairing": "adjacent",
                              "positions": "nonnegative", "frequencies": {"rule": "geometric", "base": 10000},
                              "scale": {"query": f"1 + log(1 + floor(m / 20000)) / {divisor}"}})

CASES = [
    # (left, right, verdict, words of the reason)
    ("plain", "as-formula", "equal", "8 maps"),
    ("plain", "as-list", "equal", "8 maps"),
    ("plain", "base-10001", "differ", "pair 1"),
    ("plain", "half", "differ", "rotate different coordinates"),
    ("plain", "flipped-sine", "differ", "pair 0"),
    ("plain", "key-scaled", "differ", "key side"),
    ("step-beta-1", "step-beta-2", "differ", "differ at m = 20000"),
    ("step-beta-1", "step-beta-1", "equal", "8 maps"),
    ("llama-2-7b", "mistral-7b", "equal", "128 maps"),
    ("llama-3.1-8b", "llama-2-7b", "differ", "pair 1"),
    ("gpt-j-6b", "llama-2-7b", "differ", "head widths differ"),
    ("pythia-1.4b", "llama-2-7b", "differ", "rotate different coordinates"),
    ("phase_offset", "half_split", "differ", "pair 1"),
    ("nope", "half_split", "differ", "pair 0"),
    ("alibi", "xpos", "unknown", "not a rotary map"),
    ("rerope", "xpos", "unknown", "position.relative"),
    ("dynamic_ntk", "llama3", "unknown", "length of the call"),
    ("axial_2d", "xpos", "unknown", "several position axes"),
]


def _load(name):
    return WRITTEN[name]() if name in WRITTEN else load_rotary_map(name)


@pytest.mark.parametrize("left, right, verdict, words", CASES, ids=[f"{a}-{b}" for a, b, _, _ in CASES])
def test_compare(left, right, verdict, words):
    comparison = compare_variants(_load(left), _load(right))
    assert (comparison.verdict, words in comparison.reason) == (verdict, True), comparison.summary()
    if verdict == "differ" and comparison.witness:
        # the witness's two entries, read back and evaluated independently, are different numbers
        a, b = (sp.sympify(comparison.witness[side]) for side in ("left", "right"))
        assert abs(sp.N(a - b, 30)) > sp.Float("1e-20"), comparison.witness
    if verdict == "equal":  # and the other way round
        assert compare_variants(_load(right), _load(left)).verdict == "equal"


def test_every_difference_of_the_table_has_a_witness_or_a_structural_reason():
    for left, right, verdict, _ in CASES:
        if verdict == "differ":
            comparison = compare_variants(_load(left), _load(right))
            assert comparison.witness or "widths differ" in comparison.reason, comparison.summary()


@pytest.mark.parametrize("left, right, code", [("llama-2-7b", "mistral-7b", 0), ("llama-3.1-8b", "llama-2-7b", 0),
                                               ("alibi", "xpos", 1), ("no-such-file.toml", "xpos", 2)])
def test_the_command_prints_json_and_exits_with_the_documented_code(left, right, code):
    done = subprocess.run([sys.executable, "-m", "symproof", "compare", left, right, "--json"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == code, done.stderr
    if code != 2:
        assert json.loads(done.stdout)["verdict"] in ("equal", "differ", "unknown")
    else:
        assert done.stderr.count("\n") == 1 and "no-such-file.toml" in done.stderr, done.stderr
