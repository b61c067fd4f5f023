"""Every ``symproof check`` and ``symproof export`` ends, with an answer or a bound named.

Costly inputs are refused (exit 2, one line naming the bound) or decided within
the prover budget (exit 0, or 1 with the unknown properties and the budget as
their reason); valid large inputs (width 8192 with a formula rule, 1024 ALiBi
heads, a 16384-wide RoPE export) are answered.  The subprocess timeout only
guards against a hang; no test here measures time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from symproof.variants import shipped_variants

from .conftest import assert_one_line_error, symproof

ROTARY = 'name = "h"\nkind = "rotary"\nwidth = 8\npairing = "adjacent"\n'
GEOMETRIC = '[frequencies]\nrule = "geometric"\nbase = 10000\n'


def _params(lines):
    return ROTARY + "[params]\n" + "".join(lines) + GEOMETRIC


REFUSED = {
    # name: (description, words of the one-line error)
    "exp-large-argument": (ROTARY + GEOMETRIC + '[position]\ntransform = "m * exp(10**6)"\n',
                           ["position.transform", "beyond the accepted |argument| <= 5000"]),
    "exp-nested-numbers": (ROTARY + GEOMETRIC + '[attention]\nfactor = "exp(exp(exp(3)))"\n',
                           ["attention.factor", "|argument| <= 5000"]),
    "product-of-params": (_params(['p0 = "10**30"\n'] + [f'p{k + 1} = "p{k} * p{k}"\n' for k in range(40)]),
                          ["params.p", "8192 bits"]),
    "product-of-symbolic-params": (_params(['p0 = "sqrt(2) + sqrt(3)"\n']
                                           + [f'p{k + 1} = "p{k} * p{k} + p{k}"\n' for k in range(40)]),
                                   ["params.p", "4000 nodes"]),
    "power-of-a-power": (_params(['a = "(1 + sqrt(2))**200"\n', 'b = "a**200"\n']), ["params.b", "exponent"]),
    "50000-params": (_params([f"a{k} = {k}\n" for k in range(50000)]), ["'params'", "at most 256"]),
    "let-chain": (ROTARY.replace("8", "8192") + '[frequencies]\nrule = "formula"\nformula = "l20 * 10000**(-2*r/d)"\n'
                  '[frequencies.let]\nl0 = "r + 1"\n' + "".join(f'l{k + 1} = "(l{k} + 1) / l{k}"\n' for k in range(20)),
                  ["frequencies.let.l8", "let depth"]),
    "width-over-8192": (ROTARY.replace("8", "8194") + GEOMETRIC, ["'width'", "between 2 and 8192"]),
    "heads-over-1024": ('name = "b"\nkind = "bias"\n[bias]\nformula = "-slope * abs(j - i)"\nheads = 1025\n'
                        'slope = "2**(-h)"\n', ["bias.heads", "1024"]),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_costly_description_is_refused_naming_the_bound(tmp_path, case):
    text, words = REFUSED[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text, encoding="utf-8")
    assert_one_line_error(symproof("check", path), f"{case}.toml", *words)


BUDGETED = {
    # statements that are small to write and costly to decide: the prover budget ends them
    "product-of-cosines": ROTARY + GEOMETRIC + '[scale]\nquery = "' + "*".join(f"cos({k}*m)" for k in range(1, 13)) + '"\n',
    "nested-exp-of-position": ROTARY + GEOMETRIC + '[position]\ntransform = "exp(exp(exp(m)))"\n',
    "nested-exp-scale": ROTARY + GEOMETRIC + '[scale]\nquery = "exp(exp(m))"\nkey = "exp(-exp(m))"\n',
}


@pytest.mark.parametrize("case", sorted(BUDGETED))
def test_costly_statement_ends_within_the_prover_budget(tmp_path, case):
    path = tmp_path / f"{case}.toml"
    path.write_text(BUDGETED[case], encoding="utf-8")
    done = symproof("check", path, "--steps", "200000")
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr and done.stderr == "", done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("keeps: ")
    unknown = [line for line in lines if "  unknown  " in line]
    # exit 1: a property stayed unknown, or the kernel is not proved (exp(exp(7)) is past float64, so
    # every float64 kernel overflows at position 7: refuted, now that each property has its own budget)
    kernel_refuted = any(line.startswith("kernel ") and "  refuted  " in line for line in lines)
    assert (done.returncode == 1) == (bool(unknown) or kernel_refuted)
    # every unknown property says why: the budget, or a bound met while evaluating at a concrete point
    reasons = [lines[lines.index(line) + 1] for line in unknown]
    assert all("step budget of 200000 steps exhausted" in r or "beyond the accepted" in r or "not decided" in r
               for r in reasons), reasons


def _wide(name, old, new):
    return Path(shipped_variants()[name]).read_text(encoding="utf-8").replace(old, new)


VALID_LARGE = {
    "yarn-width-8192": _wide("yarn", "width = 128", "width = 8192"),
    "llama3-width-8192": _wide("llama3", "width = 128", "width = 8192"),
    "alibi-1024-heads": _wide("alibi", "heads = 12", "heads = 1024"),
}


@pytest.mark.parametrize("case", sorted(VALID_LARGE))
def test_valid_large_description_is_answered(tmp_path, case):
    path = tmp_path / f"{case}.toml"
    path.write_text(VALID_LARGE[case], encoding="utf-8")
    done = symproof("check", path, "--export", tmp_path / "out")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "unknown" not in done.stdout
    assert any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("head_dim, words", [
    ("1000000000", ["--head-dim", "between 2 and 16384"]),
    ("16386", ["--head-dim", "16384"]),
    ("-2", ["--head-dim"]),
])
def test_export_width_is_bounded(tmp_path, head_dim, words):
    assert_one_line_error(symproof("export", "rope", "--head-dim", head_dim, "--out", tmp_path), *words)


def test_export_base_is_bounded(tmp_path):
    for base in ("inf", "nan", "1"):
        assert_one_line_error(symproof("export", "rope", "--head-dim", "8", "--base", base, "--out", tmp_path),
                              "--base")


def test_widest_export_is_written(tmp_path):
    done = symproof("export", "rope", "--head-dim", "16384", "--target", "c", "--out", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    text = (tmp_path / "symproof_rope.c").read_text(encoding="utf-8")
    import re

    # the frequency table: one float per pair, each with its exact value in a comment
    assert len(re.findall(r"^    [0-9.e+-]+,  // \S", text, flags=re.M)) == 8192


@pytest.mark.parametrize("option, value", [("--steps", v) for v in ("0", "-1", "nan", "1.5", "1e300", "10000000000000")]
                         + [("--time-limit", v) for v in ("0", "-1", "nan", "inf", "1e300")]
                         + [("--budget", v) for v in ("5", "nan")])
def test_budget_options_are_checked(option, value):
    assert_one_line_error(symproof("check", shipped_variants()["xpos"], option, value), option)
