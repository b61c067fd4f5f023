"""``mod(a, b)`` and ``sign(x)`` in the formula language: exact semantics, refusals, verdicts, kernels.

``mod`` is the mathematical remainder, with the sign of the divisor: ``mod(-1, 3) = 2`` (C's ``fmod`` and
``%`` give ``-1``).  ``b`` must be a positive constant, else the file is refused at load in one line.  The
kernels of every target are compared with Python's integer ``%`` (the same definition) at negative
positions and at the int32 and int64 limits, as the float64 numbers the kernels take.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from symproof import VariantFileError
from symproof.variants import Variant, check_variant
from symproof.variants._export import variant_kernel, variant_source

#: integer positions and what each formula is there, by Python's exact integer arithmetic
EXACT = {
    "mod(m, 3)": lambda m: m % 3,
    "mod(m, 7)": lambda m: m % 7,
    "mod(-m, 4)": lambda m: (-m) % 4,
    "mod(m - 5, 4)": lambda m: (m - 5) % 4,
    "mod(m, 2**20)": lambda m: m % 2**20,
    "mod(m, 1)": lambda m: 0,
    "mod(m, 5/2)": lambda m: sp.Rational(m) - sp.Rational(5, 2) * sp.floor(sp.Rational(2 * m, 5)),
    "sign(m)": lambda m: (m > 0) - (m < 0),
    "sign(m - 3)": lambda m: (m > 3) - (m < 3),
    "m * sign(m)": abs,
}
SMALL = list(range(-12, 13))
#: -1, 10**5, the int32 and int64 limits, 2**53 (float64 holds the integers up to it)
LARGE = [-1, 10**5, -(10**5), 2**31 - 1, -(2**31), 2**53 - 1, -(2**53 - 1), 2**63 - 1, -(2**63)]


def _rotary(query: str, **extra) -> Variant:
    """Zero frequencies and the formula as the query scale: the kernel's output is the formula times x."""
    return Variant.from_dict({"name": "modsign", "kind": "rotary", "width": 4, "pairing": "adjacent",
                              "frequencies": {"rule": "list", "values": [0, 0]},
                              "scale": {"query": query, "key": "1"}, **extra})


@pytest.mark.parametrize("formula", sorted(EXACT))
def test_the_formula_is_the_exact_definition_at_every_small_position(formula):
    variant = _rotary(formula)
    for m in SMALL:
        assert variant.scale("query", sp.Integer(m), 0) == EXACT[formula](m), (formula, m)


REFUSED = {
    "mod(m, 0)": "b > 0", "mod(m, -3)": "b > 0", "mod(m, 3 - 3)": "b > 0",
    "mod(m, m)": "not a constant", "mod(m, r + 1)": "not a constant", "mod(m, I)": "unknown name",
    "sign(m, 1)": "takes 1", "mod(m)": "takes 2",
}


@pytest.mark.parametrize("formula", sorted(REFUSED))
def test_a_divisor_that_is_not_a_positive_constant_is_refused_at_load_in_one_line(formula):
    with pytest.raises(VariantFileError) as info:
        _rotary(formula)
    message = str(info.value)
    assert "\n" not in message and "key 'scale.query'" in message and REFUSED[formula] in message, message


def test_the_percent_operator_points_to_mod():
    with pytest.raises(VariantFileError, match=r"write a % b as mod\(a, b\)"):
        _rotary("m % 3")


# -- verdicts: each follows from the mathematics (comments say why) --------------------------------------


def _bias(formula: str, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "bias",
                              "bias": {"formula": formula, "heads": 2, "slope": "1 / (h + 1)"}, **extra})


def _rope(transform: str, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, "position": {"transform": transform}, **extra})


ROPE = {"name": "RoPE", "frequencies": "100**(-2*r/d)"}
VERDICTS = {
    # a function of the offset: relative and shift-invariant; mod(-1, 4) = 3 != mod(1, 4) = 1 shows the sign
    "bias mod of the offset": (_bias("-slope * mod(j - i, 4)"),
                               {"relative": "proved", "shift": "proved", "direction": "proved",
                                "plain_at_zero": "proved"}),
    # the query's own residue: not a function of the offset
    "bias mod of the query": (_bias("-slope * mod(i, 4)"), {"relative": "refuted", "shift": "refuted"}),
    # sign(j - i) * |j - i| = j - i: an odd function of the offset
    "bias sign": (_bias("-slope * sign(j - i) * abs(j - i)"),
                  {"relative": "proved", "direction": "proved", "plain_at_zero": "proved"}),
    # a rotation by a bounded angle is still a rotation; mod(m, 8) jumps back at 8, so no offset form
    "rope mod": (_rope("mod(m, 8)"), {"norm": "proved", "relative": "refuted", "shift": "refuted"}),
    # m - mod(m, 2) = 2 floor(m / 2): the parity of the query shows
    "rope even part": (_rope("m - mod(m, 2)"), {"norm": "proved", "relative": "refuted"}),
    # mod(m, 4096) = m only for 0 <= m < 4096: not RoPE (m = -1 gives 4095)
    "rope mod not RoPE": (_rope("mod(m, 4096)", equivalent=ROPE), {"equivalence": "refuted"}),
    # m * sign(m) = |m|: RoPE on the non-negative positions only
    "rope sign not RoPE": (_rope("m * sign(m)", equivalent=ROPE), {"equivalence": "refuted", "direction": "refuted"}),
}


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_verdicts_follow_from_the_definition(case):
    variant, expected = VERDICTS[case]
    got = {r.claim.name: r.status for r in check_variant(variant, only=set(expected))}
    assert got == expected


# -- the exported kernels, at negative positions and the integer limits --------------------------------


def _floats(positions) -> list:
    """The positions as the float64 numbers a kernel takes, and the integers those are."""
    return [float(p) for p in positions]


def _expected(formula: str, positions) -> list:
    return [float(EXACT[formula](int(p))) for p in _floats(positions)]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"modsign_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(variant, target: str, folder: Path) -> Path:
    files = variant_source(variant, target)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / next(iter(files))


def _python_values(variant, target: str, folder: Path, positions) -> list:
    module = _load(_write(variant, target, folder))
    x = np.ones((len(positions), variant.width))
    if target == "torch":
        import torch

        out = module.apply(torch.as_tensor(x), torch.as_tensor(_floats(positions), dtype=torch.float64)).numpy()
    else:
        out = module.apply(x, np.array(_floats(positions)))
    return [float(v) for v in out[:, 0]]


def _c_values(variant, folder: Path, positions) -> list:
    source = _write(variant, "c", folder)
    module = variant_kernel(variant, "c", as_rope=False).module
    (folder / "driver.c").write_text(
        f'#include <stdio.h>\n#include <stdlib.h>\n#include "{source.name}"\n'
        "int main(int argc, char **argv)\n{\n"
        "    for (int k = 1; k < argc; ++k) {\n"
        "        double x[4] = {1, 1, 1, 1}, out[4], p = strtod(argv[k], 0);\n"
        f"        int code = {module}_apply(x, &p, out, 1, 1);\n"
        '        printf("%d %.17g\\n", code, out[0]);\n'
        "    }\n    return 0;\n}\n", encoding="utf-8")
    done = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-fsanitize=address,undefined",
                           "-fno-sanitize-recover=all", "-o", "driver", "driver.c", "-lm"],
                          cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    run = subprocess.run(["./driver", *(repr(p) for p in _floats(positions))], cwd=folder, capture_output=True, check=False,
                         text=True, timeout=60, env={"ASAN_OPTIONS": "detect_leaks=0", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr[-2000:]
    rows = [line.split() for line in run.stdout.splitlines()]
    assert all(code == "0" for code, _ in rows), rows
    return [float(value) for _, value in rows]


TARGETS = ["numpy",
           pytest.param("torch", marks=pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                                          reason="torch is not installed")),
           pytest.param("c", marks=pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH"))]
#: the kernels' formulas: exact in float64 at integer positions (mod(m, 5/2) and m * sign(m) are not
#: integers, or not bounded, at the limits: their values there are checked by the kernel property)
KERNEL_FORMULAS = ["mod(m, 3)", "mod(m, 7)", "mod(-m, 4)", "mod(m - 5, 4)", "mod(m, 2**20)", "sign(m)",
                   "sign(m - 3)"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("formula", KERNEL_FORMULAS)
def test_every_target_computes_the_exact_mod_and_sign_at_negative_and_extreme_positions(formula, target, tmp_path):
    variant = _rotary(formula)
    positions = SMALL + LARGE
    got = (_c_values(variant, tmp_path, positions) if target == "c"
           else _python_values(variant, target, tmp_path, positions))
    want = _expected(formula, positions)
    wrong = [(p, g, w) for p, g, w in zip(positions, got, want) if g != w]
    assert not wrong, wrong[:5]


def test_c_fmod_would_differ_here():
    """The table above can fail: C's fmod (the sign of the dividend) differs from mod at m = -1."""
    import math

    assert math.fmod(-1.0, 3.0) == -1.0 and _expected("mod(m, 3)", [-1]) == [2.0]


@pytest.mark.parametrize("formula", ["mod(m, 5/2)", "m * sign(m)", "mod(m, 3) * sign(m - 2)"])
def test_the_kernel_property_holds_for_each_target(formula):
    (result,) = check_variant(_rotary(formula), only={"kernel"})
    assert result.status == "proved", result.reason  # shown as *tested*: evidence at finitely many positions


@pytest.mark.parametrize("formula", KERNEL_FORMULAS)
def test_the_in_process_kernel_computes_the_exact_mod_and_sign(formula):
    from symproof.variants import build_kernel

    positions = SMALL + LARGE
    out = build_kernel(_rotary(formula)).apply(np.ones((len(positions), 4)), np.array(_floats(positions)))
    wrong = [(p, g, w) for p, g, w in zip(positions, out[:, 0], _expected(formula, positions)) if g != w]
    assert not wrong, wrong[:5]
