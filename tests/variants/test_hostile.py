"""Hostile description files: a formula is data, never code.

Each case must be refused with a VariantFileError naming the file and the key,
quickly, without running anything it contains.
"""

import builtins
import time

import pytest
from sympy.parsing import sympy_parser

from symproof import VariantFileError
from symproof.variants import load_variant, parse_formula

HEADER = ('name = "hostile"\nkind = "rotary"\nwidth = 8\npairing = "adjacent"\n'
          '[frequencies]\nrule = "geometric"\nbase = 10000\n')


def _file(tmp_path, transform):
    path = tmp_path / "hostile.toml"
    path.write_text(HEADER + "[position]\ntransform = " + transform + "\n", encoding="utf-8")
    return path


HOSTILE = [
    # (formula text for position.transform, words the message must contain)
    ('__import__("os").system("touch PWNED")', "not a plain function name"),
    ('__import__("os")', "'__import__', which is outside the formula language"),
    ("m.__class__", "Attribute"),
    ("().__class__.__bases__[0]", "not allowed"),
    ("(lambda: 1)()", "not a plain function name"),
    ("[x for x in ()]", "ListComp"),
    ("{1: 2}", "Dict"),
    ("m[0]", "Subscript"),
    ('"a string"', "string"),
    ('b"bytes"', "string"),
    ('eval("1")', "'eval', which is outside the formula language"),
    ('exec("1")', "'exec'"),
    ('open("/etc/passwd")', "'open'"),
    ('getattr(m, "x")', "'getattr'"),
    ("sin(m, key=1)", "keyword"),
    ("sin(*m)", "starred"),
    ("(x := 1)", "NamedExpr"),
    ("1 if m else 2", "IfExp"),
    ("m < 1", "compares outside where"),
    ("where(m, 1, 2)", "not a comparison"),
    ("where(0 < m < 2, 1, 2)", "chains comparisons"),
    ("sum(k, k, 0, 10**6)", "at most 256"),
    ("sum(k, m, 0, 2)", "already has a meaning"),
    ("sum(k, k, 0, m)", "must be integers"),
    ("not m", "unary operator"),
    ("~m", "unary operator"),
    ("m ^ 2", "'^'"),
    ("m // 2", "'//'"),
    ('f"{m}"', "JoinedStr"),
    ("1j * m", "complex"),
    ("True", "bool"),
    ("undefined_name * m", "unknown name 'undefined_name'"),
    ("9" * 60, "outside the accepted range"),
    ("1e-400 * m", "outside the accepted range"),
    ("1e999 * m", "non-finite"),
    ("2**(2**(2**(2**8)))", "beyond the accepted"),
    ("(10**30)**256", "bits"),
    ("m ** 100000", "beyond the accepted"),
    ("floor(exp(10**30))", "takes exp of 1000000000000000000000000000000, beyond the accepted"),
    ("exp(exp(exp(9)))", "beyond the accepted |argument| <= 5000"),
    ("+".join(["m"] * 250), "characters long"),
    ("m*" * 100 + "m", "too large"),
    ("-" * 300 + "m", "too large"),
    ("m / 0", "divides by zero"),
    ("sin", "without calling it"),
    ("lambda m: m", "Lambda"),
    ("m\x00", "not a formula"),
    ("", "empty"),
]


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\x00", "\\u0000")
    return '"' + escaped + '"'


@pytest.mark.parametrize("transform, words", HOSTILE, ids=[str(k) for k in range(len(HOSTILE))])
def test_hostile_formula_is_refused(tmp_path, monkeypatch, transform, words):
    path = tmp_path / "hostile.toml"
    path.write_text(HEADER + "[position]\ntransform = " + _toml_string(transform) + "\n", encoding="utf-8")

    def forbidden(*args, **kwargs):
        raise AssertionError("a formula reached eval, exec or SymPy's string parser")

    # text becomes running code through eval or SymPy's string parser (exec is left alone: the
    # import system itself uses it for SymPy's lazy imports)
    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(sympy_parser, "parse_expr", forbidden)
    start = time.perf_counter()
    with pytest.raises(VariantFileError) as info:
        load_variant(path)
    message = str(info.value)
    assert words in message, message
    assert "hostile.toml" in message and "position.transform" in message
    assert not (tmp_path / "PWNED").exists()
    assert time.perf_counter() - start < 5  # a guard against exhaustion, not a benchmark


def test_a_benign_file_loads_without_eval(tmp_path, monkeypatch):
    path = tmp_path / "benign.toml"
    path.write_text(HEADER + '[position]\ntransform = "m / 4 + floor(sqrt(16))"\n', encoding="utf-8")

    def forbidden(*args, **kwargs):
        raise AssertionError("eval was called")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(sympy_parser, "parse_expr", forbidden)
    variant = load_variant(path)
    assert variant.angle_position(8) == 6


def test_exponent_bound_is_checked_with_concrete_values():
    formula = parse_formula("10**(10**r)", names={"r"})
    assert formula.build({"r": 1}) == 10**10
    with pytest.raises(VariantFileError, match="beyond the accepted"):
        formula.build({"r": 63})


