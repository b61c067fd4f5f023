"""Per-pair, per-axis frequency vectors (RoPE-Mixed): pair r rotates by sum_a omega[r][a] * transform(m_a).

The verdicts follow from the mathematics (comments say why); refutation witnesses are re-evaluated
here with an independent formula; the exported kernels (numpy, torch, C) are run and compared with
a NumPy implementation of the definition written in this file.
"""

import copy
import ctypes
import importlib.util
import shutil
import subprocess
from pathlib import Path

import mpmath
import numpy as np
import pytest

from symproof import VariantFileError
from symproof.variants import Variant, build_kernel, check_variant, load_variant, shipped_variants
from symproof.variants._export import export_variant

ROWS = [[0.5, 0.25], [-0.3, 0.7], [0.1, 0.0], [0, -0.05]]
BASE = {"name": "mixed", "kind": "rotary", "width": 8, "pairing": "adjacent", "position": {"axes": ["x", "y"]},
        "frequencies": {"per_axis": ROWS}}


def _mixed(**extra):
    data = copy.deepcopy(BASE)
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    return Variant.from_dict(data)


Y, N = "proved", "refuted"

CASES = {
    # theta_r(m) = omega_r . m is linear in the position vector: R(omega.i)^T R(omega.j) = R(omega.(j - i)),
    # so the score is a function of the offset vector; rotations keep norms; omega_0 . D != 0 at D = (1, 0)
    "numbers": (_mixed(), dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y)),
    # the same as a formula in r and a, reading a lookup table of (learned) directions
    "formula with a table": (_mixed(params={"phi": [0.3, 1.9, -2.4, 0.7]},
                                    frequencies={"per_axis": "10**(-4*r/d) * where(a == 0, cos(phi(r)), sin(phi(r)))"}),
                             dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y)),
    # deliberately broken: the angle omega_x x^2 + omega_y y^2 is not linear in the positions, so
    # s(i, j) = s(0, j - i) fails (certified witness); (-D)^2 = D^2 makes the two offsets score alike; at
    # i = j the rotations still cancel. (kernel left out: float64 cannot resolve cos(omega 2^40) to the
    # tolerance at m = 2^20, for one axis as for several)
    "broken: squared positions": (_mixed(position={"transform": "m**2"}),
                                  dict(norm=Y, relative=N, shift=N, direction=N, plain_at_zero=Y)),
    # every frequency vector zero: the identity at every position, so no sign of the offset is visible
    "all zero": (_mixed(frequencies={"per_axis": "0"}),
                 dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y, kernel=Y)),
    # a per-pair scale 2^(r/4) on queries and 2^(-r/4) on keys: norms change (pair 1), the score does not
    "scale in r": (_mixed(scale={"query": "2**(r/4)", "key": "2**(-r/4)"}),
                   dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y)),
    # [[cos, sin], [sin, cos]] is no rotation (determinant cos 2x), whatever the angle
    "not a rotation": (_mixed(rotation={"block": [["cos(x)", "sin(x)"], ["sin(x)", "cos(x)"]]}),
                       dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N, kernel=Y)),
    # a file whose pairs only read x: per-axis rows can state axial RoPE too
    "one axis read": (_mixed(frequencies={"per_axis": "where(a == 0, 2**(-r), 0)"}),
                      dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y)),
    # non-negative positions: direction compares s(0, D) with s(D, 0); a linear angle keeps everything
    "nonnegative": (_mixed(positions="nonnegative"),
                    dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y)),
    # the equivalent written as a formula gives exactly the file's numbers (1/2^r, -1/2^r): proved
    "equivalent, same numbers": (
        _mixed(frequencies={"per_axis": [[1, -1], [0.5, -0.5], [0.25, -0.25], [0.125, -0.125]]},
               equivalent={"name": "halving frequencies", "per_axis": "2**(-r) * where(a == 0, 1, -1)"}),
        dict(equivalence=Y)),
    # the axes swapped: pair 0 rotates by x/2 + y/4 against x/4 + y/2, different at m = (1, 0)
    "equivalent, axes swapped": (_mixed(equivalent={"name": "swapped", "per_axis": [[0.25, 0.5], [0.7, -0.3],
                                                                                    [0.0, 0.1], [-0.05, 0]]}),
                                 dict(equivalence=N)),
}


@pytest.fixture(scope="module")
def results():
    return {name: {r.claim.name: r for r in check_variant(variant, only=set(expected))}
            for name, (variant, expected) in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdicts(results, name):
    got = {key: r.status for key, r in results[name].items()}
    assert got == CASES[name][1], {k: r.reason for k, r in results[name].items() if got[k] != CASES[name][1][k]}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refutations_name_position_vectors_and_fix_the_frequencies(results, name):
    for key, r in results[name].items():
        if r.status != "refuted" or key == "kernel" or r.claim.kind != "identity":
            continue
        witness = next(p.witness for p in r.proof.parts if p.witness)
        names = {str(s) for s in witness}
        assert not any(n.startswith("omega") for n in names), "a witness fixes the scheme's own frequencies"
        if key in ("relative", "shift", "norm", "equivalence"):
            assert any(n.endswith(("_x", "_y")) for n in names), names


def _score(rows, r, transform, qi, ki, q, k):
    """q^T R(theta(qi))^T R(theta(ki)) k for pair r, theta(m) = sum_a rows[r][a] transform(m_a), 50 digits."""
    with mpmath.workdps(50):
        w = [mpmath.mpf(str(v)) for v in rows[r]]
        theta = [sum(wa * transform(mpmath.mpf(int(p))) for wa, p in zip(w, pos)) for pos in (qi, ki)]

        def rotate(t, v):
            return (mpmath.cos(t) * v[0] - mpmath.sin(t) * v[1], mpmath.sin(t) * v[0] + mpmath.cos(t) * v[1])

        a, b = rotate(theta[0], q), rotate(theta[1], k)
        return a[0] * b[0] + a[1] * b[1]


def test_the_broken_variants_relative_witness_is_a_real_counterexample(results):
    result = results["broken: squared positions"]["relative"]
    part = next(p for p in result.proof.parts if p.status == "refuted")
    values = {str(s): int(v) for s, v in part.witness.items()}
    r = int(part.rule.split("pair r = ")[1].split(" ")[0])
    i, j = (values["i_x"], values["i_y"]), (values["j_x"], values["j_y"])
    q, k = (values["q0"], values["q1"]), (values["k0"], values["k1"])
    with mpmath.workdps(50):
        square = lambda m: m**2  # noqa: E731
        at_ij = _score(ROWS, r, square, i, j, q, k)
        at_offset = _score(ROWS, r, square, (0, 0), (j[0] - i[0], j[1] - i[1]), q, k)
        assert abs(at_ij - at_offset) > mpmath.mpf(10) ** -20


def test_four_axes_are_decided_within_the_default_budget():
    # the shift comes from the offset form (one angle of 2A atoms) rather than from products of two
    # such angles, which the trig-polynomial tactic could not expand within the budget at four axes
    rows = [[0.31, -0.72, 0.05, 0.9], [0.12, 0.4, -0.33, 0.0], [-0.8, 0.27, 0.61, -0.15], [0.02, 0.0, 0.0, 0.5]]
    variant = _mixed(position={"axes": ["t", "x", "y", "z"]}, frequencies={"per_axis": rows})
    got = {r.claim.name: r.status for r in check_variant(variant)}
    # decay: the pairs turn by D (sum of a row) = 0.54, 0.19, -0.07, 0.52 per step: RoFormer's bound oscillates
    assert got == dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, kernel=Y, decay="refuted")


def test_the_shift_is_refuted_on_its_own_when_the_offset_form_fails(results):
    shift = results["broken: squared positions"]["shift"]
    part = next(p for p in shift.proof.parts if p.status == "refuted")
    assert {"c_x", "c_y"} <= {str(s) for s in part.witness}  # a witness of the shift statement itself


# -- bad input: one line naming the key and what was expected -------------------------------------------

def _rows(change):
    def mutate(data):
        change(data["frequencies"]["per_axis"])
    return mutate


ERRORS = [
    (_rows(lambda rows: rows[1].append(3)), "frequencies.per_axis[1]", "expected 2 numbers (one per axis"),
    (_rows(lambda rows: rows.pop()), "frequencies.per_axis", "expected 4 rows (one per pair), got 3"),
    (_rows(lambda rows: rows[2].__setitem__(1, "abc")), "frequencies.per_axis[2][1]", "unknown name 'abc'"),
    (_rows(lambda rows: rows[2].__setitem__(1, True)), "frequencies.per_axis[2][1]", "a number or a formula"),
    (_rows(lambda rows: rows.__setitem__(2, 0.5)), "frequencies.per_axis[2]", "expected 2 numbers"),
    (_rows(lambda rows: rows[0].__setitem__(0, "sqrt(-1)")), "frequencies.per_axis[0][0]", "finite real"),
    (lambda d: d.pop("position"), "frequencies.per_axis", "needs several position axes"),
    (lambda d: d["position"].update(axis="r"), "position.axis", "does not apply with frequencies.rule = 'per_axis'"),
    (lambda d: d["frequencies"].update(per_axis="r * m"), "frequencies.per_axis", "unknown name 'm'"),
    (lambda d: d["frequencies"].update(per_axis="log(a - 1)"), "frequencies.per_axis", "expected a finite real"),
    (lambda d: d["frequencies"].update(per_axis=3), "frequencies.per_axis", "an array of rows"),
    (lambda d: d["frequencies"].update(rule="formula", formula="1"), "frequencies.per_axis",
     "need rule = 'per_axis'"),
    (lambda d: d["frequencies"].update(base=100), "frequencies.base", "does not apply when rule = 'per_axis'"),
    (lambda d: d.update(scale={"query": "2**(m/8)"}), "scale.query", "expected a formula in r only"),
    (lambda d: d.update(equivalent={"frequencies": "1"}), "equivalent.frequencies", "state equivalent.per_axis"),
    (lambda d: d.update(equivalent={"name": "x"}), "equivalent.per_axis", "is required"),
    (lambda d: d.update(equivalent={"per_axis": [[1, 2]]}), "equivalent.per_axis", "expected 4 rows"),
    (lambda d: d.update(params={"a": 2}), "params.a", "the axis index"),
    (lambda d: d.update(length={"threshold": 8}), "length", "does not apply with frequencies.rule = 'per_axis'"),
    (lambda d: d.update(kind="additive", pairing="adjacent"), "frequencies.per_axis", "kind = 'rotary' only"),
    (lambda d: (d["frequencies"].clear(), d["frequencies"].update(base=100), d["position"].update(axis="0"),
                d.update(equivalent={"per_axis": "1"})), "equivalent.per_axis", "frequencies.rule = 'per_axis' only"),
]


@pytest.mark.parametrize("mutate, key, words", ERRORS, ids=[f"{e[1]}-{k}" for k, e in enumerate(ERRORS)])
def test_bad_input_is_one_line_naming_the_key(mutate, key, words):
    data = copy.deepcopy(BASE)
    mutate(data)
    with pytest.raises(VariantFileError) as info:
        Variant.from_dict(data)
    message = str(info.value)
    assert f"'{key}'" in message and words in message and "\n" not in message, message


# -- the exported kernels, against a NumPy implementation of the definition written here ----------------

def _reference(x, positions, rows, pairing, transform=lambda m: m, scale=lambda r: 1.0):
    """pair r of x (..., W) rotated by sum_a rows[r][a] transform(positions[..., a])."""
    rows = np.asarray(rows, dtype=np.float64)
    out = np.array(x, dtype=np.float64)
    n = len(rows)
    for r in range(n):
        a, b = (2 * r, 2 * r + 1) if pairing == "adjacent" else (r, r + n)
        theta = sum(transform(positions[..., c].astype(np.float64)) * rows[r, c] for c in range(rows.shape[1]))
        out[..., a] = scale(r) * (np.cos(theta) * x[..., a] - np.sin(theta) * x[..., b])
        out[..., b] = scale(r) * (np.sin(theta) * x[..., a] + np.cos(theta) * x[..., b])
    return out


def _shipped():
    variant = load_variant(shipped_variants()["rope_mixed"])
    import tomllib

    with open(shipped_variants()["rope_mixed"], "rb") as handle:
        rows = tomllib.load(handle)["frequencies"]["per_axis"]
    return variant, rows


def _module(path):
    spec = importlib.util.spec_from_file_location(f"mixed_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(width):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, width))
    positions = np.stack([rng.integers(-40, 200, (2, 5)), rng.integers(0, 3000, (2, 5))], axis=-1)
    positions[0, 0] = (2**20, -(2**15))
    return x, positions


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_exported_python_kernels_take_positions_with_an_axis_dimension(tmp_path, target):
    if target == "torch":
        torch = pytest.importorskip("torch")
    variant, rows = _shipped()
    (path,) = export_variant(variant, tmp_path, target)
    module = _module(path)
    x, positions = _inputs(variant.width)
    expected = _reference(x, positions, rows, variant.pairing)
    if target == "torch":
        got = module.apply(torch.tensor(x), torch.tensor(positions), "key").numpy()
    else:
        got = module.apply(x, positions, "key")
    assert got.shape == x.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    # both axes matter: moving y alone moves the rotation of a pair whose omega_y != 0
    moved = positions.copy()
    moved[..., 1] += 1
    assert not np.allclose(module.apply(x, moved, "key") if target == "numpy" else
                           module.apply(torch.tensor(x), torch.tensor(moved), "key").numpy(), got)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="needs a C compiler")
def test_exported_c_kernel_takes_n_rows_by_axes_positions(tmp_path):
    variant, rows = _shipped()
    (source,) = export_variant(variant, tmp_path, "c")
    library = tmp_path / "mixed.so"
    subprocess.run([shutil.which("cc") or shutil.which("gcc"), "-O2", "-shared", "-fPIC", "-o", str(library),
                    source, "-lm"], check=True)
    apply = getattr(ctypes.CDLL(str(library)), "symproof_variant_rope_mixed_apply")
    x, positions = _inputs(variant.width)
    flat_x = np.ascontiguousarray(x.reshape(-1, variant.width))
    flat_pos = np.ascontiguousarray(positions.reshape(-1, 2), dtype=np.float64)
    out = np.zeros_like(flat_x)
    pointer = ctypes.POINTER(ctypes.c_double)
    apply.restype = None
    apply(flat_x.ctypes.data_as(pointer), flat_pos.ctypes.data_as(pointer), out.ctypes.data_as(pointer),
          ctypes.c_long(len(flat_x)), ctypes.c_int(1))
    np.testing.assert_allclose(out, _reference(flat_x, flat_pos, rows, variant.pairing), rtol=0, atol=1e-9)


def test_in_process_kernel_with_a_transform_and_a_scale():
    variant = _mixed(position={"transform": "m / 4"}, scale={"query": "2**(r/4)"}, pairing="half")
    x, positions = _inputs(variant.width)
    expected = _reference(x, positions, ROWS, "half", transform=lambda m: m / 4, scale=lambda r: 2 ** (r / 4))
    np.testing.assert_allclose(build_kernel(variant).apply(x, positions, "query"), expected, rtol=0, atol=1e-9)


# -- a written file that is wrong refutes the kernel property, and --export writes nothing ---------------

def _swapped(rows, brackets="[]"):
    left, right = brackets
    return left + ", ".join(f"{left}{row[1]!r}, {row[0]!r}{right}" for row in rows) + right


@pytest.mark.parametrize("table, words", [
    (lambda rows, brackets="[]": "[[1.0, 2.0], [3.0]]", "does not import"),  # a ragged table
    (_swapped, "difference"),  # the axes read in the wrong order
])
def test_a_wrong_per_axis_table_refutes_the_kernel_and_export_writes_nothing(monkeypatch, tmp_path, capsys,
                                                                             table, words):
    from symproof._face._cli import main
    from symproof._export import _variant

    monkeypatch.setattr(_variant, "_table", lambda rows, brackets="[]": table([[float(w) for w in r] for r in rows],
                                                                            brackets))
    (result,) = check_variant(_mixed(), only={"kernel"})
    assert result.status == "refuted" and words in result.reason and "\n" not in result.reason
    out = tmp_path / "out"
    assert main(["check", shipped_variants()["rope_mixed"], "--export", str(out), "--target", "numpy"]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_formulas_lambdify_cannot_print_load():
    # a table has no mpmath function: lambdifying it raised NameError (a traceback) at load time
    one_axis = Variant.from_dict({"name": "p", "kind": "rotary", "width": 8, "pairing": "half",
                                  "params": {"w": [0.3, 1.9, -2.4, 0.7]},
                                  "frequencies": {"rule": "formula", "formula": "w(r)"}})
    assert [float(v) for v in one_axis.frequencies_digits()] == [0.3, 1.9, -2.4, 0.7]
    mixed = _mixed(params={"w": [0.3, 1.9, -2.4, 0.7]}, frequencies={"per_axis": "w(r) * (a + 1)"})
    assert [[float(v) for v in row] for row in mixed.frequencies_digits()] == [[0.3, 0.6], [1.9, 3.8],
                                                                               [-2.4, -4.8], [0.7, 1.4]]
    # a sum whose bound reads the axis index is built at concrete indices only
    summed = _mixed(frequencies={"per_axis": "sum(2**(-k), k, 0, a + r)"})
    assert [float(v) for v in summed.frequencies_digits()[1]] == [1.5, 1.75]


def test_the_command_refuses_a_bad_row_in_one_line(tmp_path, capsys):
    from symproof._face._cli import main

    text = Path(shipped_variants()["rope_mixed"]).read_text(encoding="utf-8")
    path = tmp_path / "bad.toml"
    path.write_text(text.replace("[0.1602, 0.0817]", "[0.1602]"), encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'frequencies.per_axis[3]'" in err and "expected 2 numbers" in err, err
