"""Dense rotations by a matrix exponential (``kind = "dense"``: LieRE, STRING), by purpose:

- the file is read exactly, and what the language cannot say is refused at load in one line;
- the verdicts follow from the mathematics of each generator set (the reason is written beside each row);
- every witness is a real counterexample: rebuilt with ``torch.linalg.matrix_exp`` (an independent
  implementation of exp) at the witness, the two sides differ as the certificate says;
- the exact enclosures of exp contain ``torch.linalg.matrix_exp``'s value;
- every exported kernel (numpy, torch, C under AddressSanitizer/UBSan) agrees with
  ``torch.linalg.matrix_exp`` at small, large and negative positions, and refuses positions that are not
  finite numbers (or outside a declared range).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from symproof import VariantFileError
from symproof.variants import Variant, check_variant
from symproof.variants._export import variant_kernel, variant_source
from symproof.variants._expm import MAX_NORM, TAIL, exp_enclosure

torch = pytest.importorskip("torch")

ROT = [[0, -1], [1, 0]]  # the generator of plane rotations


def _dense(generators, axes=None, **extra) -> Variant:
    width = len(generators[0])
    data = {"name": "probe", "kind": "dense", "width": width, **extra}
    if axes is None:
        data["dense"] = {"generator": generators[0]}
    else:
        data["position"] = {"axes": axes}
        data["dense"] = {"generators": generators}
    return Variant.from_dict(data)


def _so3(a: int) -> list:
    """The generator of rotations about axis ``a`` of 3-space (any two do not commute)."""
    out = [[0] * 3 for _ in range(3)]
    b, c = (a + 1) % 3, (a + 2) % 3
    out[b][c], out[c][b] = -1, 1
    return out


def _plane(width: int, k: int, speed) -> list:
    """Rotation of the coordinates (2k, 2k + 1) at ``speed`` (planes of different k commute)."""
    out = [[0] * width for _ in range(width)]
    out[2 * k][2 * k + 1], out[2 * k + 1][2 * k] = f"-({speed})", f"{speed}"
    return out


Y, N, U = "proved", "refuted", "unknown"
#: name -> (generators, axes, {property: verdict}, why)
VERDICTS = {
    "plane rotation": ([ROT], None, dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                       "exp(m J) = R(m): RoPE's single pair"),
    "a dense skew generator": ([[[0, "1/3", "-1/2"], ["-1/3", 0, "1/5"], ["1/2", "-1/5", 0]]], None,
                               dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                               "one skew generator: i A and j A commute, exp(-iA) exp(jA) = exp((j - i) A)"),
    "zero generator": ([[[0, 0], [0, 0]]], None, dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y),
                       "R(m) = I: the plain product everywhere, no sign of the offset"),
    "not skew": ([[[0.1, -1], [1, 0]]], None, dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N),
                 "trace 0.1: det exp(mA) = e^(0.1 m) != 1, so no R(m) (m != 0) is orthogonal"),
    "nilpotent": ([[[0, 1], [0, 0]]], None, dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N),
                  "exp(mA) = [[1, m], [0, 1]], a shear: ||R(1) e_1||^2 = 2"),
    "so(3), two axes": ([_so3(0), _so3(1)], ["y", "x"],
                        dict(norm=Y, relative=N, shift=N, direction=Y, plain_at_zero=Y),
                        "[A_y, A_x] = A_z != 0: rotations about different axes do not compose additively"),
    "commuting planes, two axes": ([_plane(4, 0, 1), _plane(4, 1, "1/2")], ["y", "x"],
                                   dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                                   "axial RoPE: each axis rotates its own plane"),
    "commuting, three axes": ([_plane(6, 0, 1), _plane(6, 1, 2), _plane(6, 2, "1/4")], ["t", "y", "x"],
                              dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                              "three independent planes"),
    "same plane, two speeds": ([_plane(2, 0, 1), _plane(2, 0, 3)], ["y", "x"],
                               dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                               "multiples of one generator commute"),
    "one skew, one not": ([ROT, [[1, 0], [0, 0]]], ["y", "x"],
                          dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N),
                          "exp(x diag(1, 0)) stretches e_0 by e^x"),
    "irrational skew": ([[[0, "-sqrt(2)"], ["sqrt(2)", 0]]], None,
                        dict(norm=Y, relative=Y, shift=Y, direction=U, plain_at_zero=Y),
                        "skew exactly (sqrt(2) - sqrt(2) = 0); the direction witness needs a rational enclosure"),
    "irrational, not skew": ([[["sqrt(2)", 0], [0, 0]]], None,
                             dict(norm=U, relative=U, shift=U, direction=U, plain_at_zero=U),
                             "not skew, but exp of an irrational generator is not enclosed: no witness, no proof"),
}


@pytest.fixture(scope="module")
def results():
    out = {}
    for name, (generators, axes, _, _) in VERDICTS.items():
        out[name] = {r.claim.name: r for r in check_variant(_dense(generators, axes), kernel_targets=())}
    return out


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_verdicts_follow_from_the_generators(results, name):
    expected = VERDICTS[name][2]
    got = {key: r.status for key, r in results[name].items() if key in expected}
    assert got == expected, {k: results[name][k].reason for k in got if got[k] != expected[k]}


def _exp(variant, position) -> np.ndarray:
    """``exp(sum_a m_a A_a)`` by torch.linalg.matrix_exp (an independent implementation)."""
    x = sum(float(p) * np.array(g.evalf(30).tolist(), dtype=np.float64) for p, g in zip(position, variant.generators))
    return torch.linalg.matrix_exp(torch.as_tensor(x, dtype=torch.float64)).numpy()


def _position(variant, witness, name) -> tuple:
    values = {str(k): int(v) for k, v in witness.items() if str(k) not in ("q", "k")}
    if len(variant.axes) == 1:
        return (values.get(name, 0),)
    return tuple(values.get(f"{name}_{axis}", 0) for axis in variant.axes)


def _vector(variant, value) -> np.ndarray:
    out = np.zeros(variant.width)
    for symbol in sp.sympify(value).free_symbols:
        out[int(symbol.name.split("_")[1])] += 1
    return out


def _score(variant, q, k, i, j) -> float:
    return float(q @ _exp(variant, i).T @ _exp(variant, j) @ k)


def _sides(variant, key, witness):
    """The two sides of property ``key`` at ``witness``, in float64 from torch's exp."""
    q = _vector(variant, witness[sp.Symbol("q")])
    k = _vector(variant, witness.get(sp.Symbol("k"), witness[sp.Symbol("q")]))
    at = lambda name: np.array(_position(variant, witness, name))  # noqa: E731
    if key == "norm":
        r = _exp(variant, at("m"))
        return float(np.dot(r @ q, r @ q)), float(q @ q)
    if key == "relative":
        return _score(variant, q, k, at("i"), at("j")), _score(variant, q, k, 0 * at("i"), at("j") - at("i"))
    if key == "shift":
        return (_score(variant, q, k, at("i") + at("c"), at("j") + at("c")), _score(variant, q, k, at("i"), at("j")))
    if key == "plain_at_zero":
        return _score(variant, q, k, at("i"), at("i")), float(q @ k)
    if key == "direction":
        return _score(variant, q, k, 0 * at("D"), at("D")), _score(variant, q, k, 0 * at("D"), -at("D"))
    raise AssertionError(key)


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_every_witness_breaks_the_statement_under_torch_matrix_exp(results, name):
    generators, axes, _, _ = VERDICTS[name]
    variant = _dense(generators, axes)
    for key, result in results[name].items():
        for part in result.proof.parts:
            if part.witness is None or key == "kernel":
                continue
            left, right = _sides(variant, key, part.witness)
            centre, radius = (Fraction(part.data[k]) for k in ("centre", "radius"))
            assert abs(centre) > radius  # the exact certificate
            # its centre is the difference of the two sides, as torch's exp computes them
            assert abs((left - right) - float(centre)) < 1e-12 * max(1.0, abs(left), abs(right)), \
                (key, part.witness, left, right, part.detail)


def _random_rational(rng, n, skew: bool, scale: int) -> list:
    m = rng.integers(-scale, scale + 1, (n, n))
    if skew:
        m = m - m.T
    return [[Fraction(int(v), scale) for v in row] for row in m]


@pytest.mark.parametrize("n, skew, seed", [(2, True, 0), (3, True, 1), (4, False, 2), (6, True, 3), (8, False, 4),
                                           (16, True, 5)])
def test_the_exact_enclosure_of_exp_contains_torch_matrix_exp(n, skew, seed):
    rng = np.random.default_rng(seed)
    rows = _random_rational(rng, n, skew, 4)
    enclosed = exp_enclosure(rows)
    assert enclosed is not None and enclosed.radius <= TAIL
    reference = torch.linalg.matrix_exp(torch.tensor([[float(v) for v in row] for row in rows],
                                                     dtype=torch.float64)).numpy()
    center = np.array([[float(v) for v in row] for row in enclosed.center])
    # float64 rounding of torch's value (a few ulps of the largest entry) plus the exact radius
    assert np.max(np.abs(center - reference)) <= float(enclosed.radius) + 1e-13 * max(1.0, np.abs(reference).max())


def test_a_matrix_too_large_to_enclose_gives_none_not_a_wrong_enclosure():
    assert exp_enclosure([[MAX_NORM + 1]]) is None


# -- the file ------------------------------------------------------------------------------------------

BASE = {"name": "probe", "kind": "dense", "width": 2}
REFUSED = {
    "no generator": ({}, "dense.generator"),
    "both keys": ({"dense": {"generator": ROT, "generators": [ROT]}}, "exactly one of"),
    "not square": ({"dense": {"generator": [[0, 1, 2], [1, 0, 2]]}}, "2 x 2 matrix"),
    "width mismatch": ({"width": 3, "dense": {"generator": ROT}}, "3 x 3 matrix"),
    "too wide": ({"width": 33, "dense": {"generator": ROT}}, "between 1 and 32"),
    "one matrix, two axes": ({"position": {"axes": ["y", "x"]}, "dense": {"generator": ROT}}, "dense.generators"),
    "wrong count": ({"position": {"axes": ["y", "x"]}, "dense": {"generators": [ROT]}}, "one matrix per position axis"),
    "a transform": ({"position": {"transform": "m / 2"}, "dense": {"generator": ROT}}, "position.transform"),
    "a pairing": ({"pairing": "half", "dense": {"generator": ROT}}, "pairing"),
    "an entry reads the position": ({"dense": {"generator": [[0, "-m"], ["m", 0]]}}, "dense.generator[0][1]"),
    "a complex entry": ({"dense": {"generator": [[0, "sqrt(-1)"], [0, 0]]}}, "finite real number"),
    "an unknown key": ({"dense": {"generator": ROT, "generater": ROT}}, "unknown key 'dense.generater'"),
    "dense table on a rotary file": ({"kind": "rotary", "pairing": "half", "frequencies": {"base": 10},
                                      "dense": {"generator": ROT}}, "does not apply to kind = 'rotary'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_language_cannot_say_is_refused_in_one_line(case):
    extra, fragment = REFUSED[case]
    with pytest.raises(VariantFileError) as err:
        Variant.from_dict({**BASE, **extra})
    message = str(err.value)
    assert fragment in message and "\n" not in message, message


def test_entries_are_read_exactly_from_numbers_decimals_and_params():
    variant = Variant.from_dict({**BASE, "params": {"theta": "1/3"},
                                 "dense": {"generator": [[0, "-theta"], ["theta", 0.25]]}})
    assert variant.generators[0] == sp.ImmutableMatrix([[0, -sp.Rational(1, 3)], [sp.Rational(1, 3), sp.Rational(1, 4)]])


# -- the exported kernels -------------------------------------------------------------------------------

KERNEL_CASES = {
    "so(3), two axes": ([_so3(0), _so3(1)], ["y", "x"]),
    "dense skew, one axis": (VERDICTS["a dense skew generator"][0], None),
    "string_2d-like, two axes": ([[[0, -0.4375, -0.5625, 0], [0.4375, 0, 0, 0.5625], [0.5625, 0, 0, 0.4375],
                                   [0, -0.5625, -0.4375, 0]], _plane(4, 1, 2)], ["y", "x"]),
}
POSITIONS = [0, 1, -1, 7, -7, 100, 4097, -(2**10), 10**5, -(10**5), 2**20]
TARGETS = ["numpy", "torch",
           pytest.param("c", marks=pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH"))]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"dense_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(variant, target: str, folder: Path) -> Path:
    files = variant_source(variant, target)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / next(iter(files))


def _grid(variant, positions) -> np.ndarray:
    return np.array([[p + 3 * a for a in range(len(variant.axes))] for p in positions], dtype=np.float64)


def _c_run(variant, folder: Path, positions, x) -> tuple:
    source = _write(variant, "c", folder)
    module = variant_kernel(variant, "c").module
    axes, w = len(variant.axes), variant.width
    (folder / "driver.c").write_text(
        f'#include <stdio.h>\n#include <stdlib.h>\n#include "{source.name}"\n'
        "int main(int argc, char **argv)\n{\n"
        f"    double x[{w}] = {{{', '.join(repr(float(v)) for v in x)}}}, out[{w}], p[{axes}];\n"
        f"    for (int k = 1; k + {axes} <= argc; k += {axes}) {{\n"
        f"        for (int a = 0; a < {axes}; ++a) p[a] = strtod(argv[k + a], 0);\n"
        f"        int code = {module}_apply(x, p, out, 1, 1);\n"
        '        printf("%d", code);\n'
        f'        for (int i = 0; i < {w}; ++i) printf(" %.17g", out[i]);\n'
        '        printf("\\n");\n'
        "    }\n    return 0;\n}\n", encoding="utf-8")
    done = subprocess.run(["gcc", "-std=c99", "-Wall", "-Werror", "-fsanitize=address,undefined",
                           "-fno-sanitize-recover=all", "-o", "driver", "driver.c", "-lm"],
                          cwd=folder, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    args = [repr(float(v)) for row in positions for v in row]
    run = subprocess.run(["./driver", *args], cwd=folder, capture_output=True, check=False, text=True, timeout=60,
                         env={"ASAN_OPTIONS": "detect_leaks=0", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0 and "runtime error" not in run.stderr, run.stderr[-2000:]
    rows = [line.split() for line in run.stdout.splitlines()]
    return [int(row[0]) for row in rows], np.array([[float(v) for v in row[1:]] for row in rows])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(KERNEL_CASES))
def test_every_target_agrees_with_torch_matrix_exp(case, target, tmp_path):
    variant = _dense(*KERNEL_CASES[case])
    grid = _grid(variant, POSITIONS)
    x = np.round(np.random.default_rng(0).standard_normal(variant.width), 6)
    if target == "c":
        codes, got = _c_run(variant, tmp_path, grid, x)
        assert codes == [0] * len(grid)
    else:
        module = _load(_write(variant, target, tmp_path))
        rows = np.repeat(x[None, :], len(grid), axis=0)
        pos = grid if len(variant.axes) > 1 else grid[:, 0]
        got = module.apply(rows, pos)
        got = got.numpy() if target == "torch" else got
    want = np.array([_exp(variant, p) @ x for p in grid])
    # float64 angles carry |m| ulps of error in either implementation: the kernel property's allowance
    allowance = 1e-12 * (1 + np.abs(grid).max(axis=1))[:, None]
    assert np.all(np.abs(got - want) <= allowance * (1 + np.abs(want))), np.abs(got - want).max()


@pytest.mark.parametrize("target", ["numpy", "torch"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_python_kernels_refuse_a_position_that_is_not_a_number(target, bad, tmp_path):
    variant = _dense([ROT])
    module = _load(_write(variant, target, tmp_path))
    with pytest.raises(ValueError, match="finite"):
        module.apply(np.ones((2, 2)), np.array([0.0, bad]))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH")
def test_the_c_kernel_returns_its_status_for_a_position_that_is_not_a_number(tmp_path):
    codes, _ = _c_run(_dense([ROT]), tmp_path, [[float("nan")], [float("inf")], [1.0]], np.ones(2))
    assert codes == [3, 3, 0]


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_a_declared_range_is_enforced_by_the_python_kernels(target, tmp_path):
    variant = _dense([ROT], positions="0..15")
    module = _load(_write(variant, target, tmp_path))
    module.apply(np.ones((2, 2)), np.array([0.0, 15.0]))
    for bad in (-1.0, 16.0, 1e5, 0.5):
        with pytest.raises(IndexError, match="outside the file's positions"):
            module.apply(np.ones((1, 2)), np.array([bad]))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH")
def test_a_declared_range_is_enforced_by_the_c_kernel(tmp_path):
    codes, _ = _c_run(_dense([ROT], positions="0..15"), tmp_path,
                      [[0.0], [15.0], [-1.0], [16.0], [1e5], [2.0**63], [0.5]], np.ones(2))
    assert codes == [0, 0, 2, 2, 2, 2, 2]


def test_the_kernel_property_holds_for_every_target():
    variant = _dense(*KERNEL_CASES["so(3), two axes"])
    (kernel,) = check_variant(variant, only=["kernel"], kernel_targets=("numpy", "torch", "c"))
    assert kernel.status == "proved" and kernel.verdict == "tested", kernel.reason


def test_triton_is_refused_with_the_targets_a_dense_kernel_has():
    with pytest.raises(Exception, match="plain RoPE only"):
        variant_source(_dense([ROT]), "triton")


def test_a_notebook_passes_generators_as_numpy_arrays():
    variant = Variant.from_dict({**BASE, "dense": {"generator": np.array([[0.0, -0.5], [0.5, 0.0]])}})
    assert variant.generators[0] == sp.ImmutableMatrix([[0, -sp.Rational(1, 2)], [sp.Rational(1, 2), 0]])
