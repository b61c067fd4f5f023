"""Learned absolute position tables (``[vectors]``) and the additive amplitude (``position.amplitude``).

Tables are read inline, from a ``.npy`` file and from a safetensors file (written by the safetensors
library when it is installed, by numpy's own ``save`` for ``.npy``); every verdict is checked against an
independent recomputation with :class:`fractions.Fraction` on the same float64 values, so a test fails
when the checker's exact arithmetic (or its witness) is wrong.
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symproof import VariantFileError
from symproof.variants import Variant, check_variant, load_variant

HERE = Path(__file__).parent


def _table(rows, positions=None, clip=False, **extra) -> Variant:
    rows = np.asarray(rows, dtype=np.float64)
    vectors = {"rows": rows, **({"clip": True} if clip else {})}
    positions = positions or ("nonnegative" if clip else f"0..{len(rows) - 1}")
    return Variant.from_dict({"name": "t", "kind": "additive", "width": rows.shape[1], "positions": positions,
                              "vectors": vectors, **extra})


def _rotations(n: int, angle_steps: int = 4) -> np.ndarray:
    """Rows (cos, sin) of t * 90 degrees: exact float64 numbers, a table whose Gram matrix is Toeplitz."""
    unit = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]
    return np.array([unit[t % angle_steps] for t in range(n)])


def _dot(a, b) -> Fraction:
    return sum((Fraction(x) * Fraction(y) for x, y in zip(a, b)), Fraction(0))


def _status(variant, key):
    (result,) = check_variant(variant, only={key})
    return result


# -- reading ----------------------------------------------------------------------------------------


def test_inline_npy_and_numpy_array_give_the_same_table(tmp_path):
    rows = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.save(tmp_path / "wpe.npy", rows)
    inline = "\n".join(f"  [{', '.join(repr(float(x)) for x in row)}]," for row in rows)
    (tmp_path / "a.toml").write_text(f'name = "a"\nkind = "additive"\nwidth = 4\npositions = "0..4"\n'
                                     f'[vectors]\nrows = [\n{inline}\n]\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('name = "b"\nkind = "additive"\nwidth = 4\npositions = "0..4"\n'
                                     '[vectors]\nfile = "wpe.npy"\n', encoding="utf-8")
    a, b = load_variant(tmp_path / "a.toml"), load_variant(tmp_path / "b.toml")
    c = _table(rows)
    for variant in (a, b, c):
        assert np.array_equal(variant.vectors.values, rows.astype(np.float64))
    assert b.vectors.origin == "wpe.npy"


@pytest.mark.parametrize("dtype", ["<f2", "<f4", "<f8", ">f8"])
def test_npy_float_dtypes_are_read_exactly(tmp_path, dtype):
    rows = (np.arange(12).reshape(3, 4) / 8 - 0.5).astype(dtype)
    np.save(tmp_path / "t.npy", rows)
    (tmp_path / "t.toml").write_text('name = "t"\nkind = "additive"\nwidth = 4\npositions = "0..2"\n'
                                     '[vectors]\nfile = "t.npy"\n', encoding="utf-8")
    assert np.array_equal(load_variant(tmp_path / "t.toml").vectors.values, rows.astype(np.float64))


def test_fortran_order_npy_keeps_its_rows(tmp_path):
    rows = np.asfortranarray(np.arange(6, dtype=np.float64).reshape(3, 2))
    np.save(tmp_path / "t.npy", rows)
    (tmp_path / "t.toml").write_text('name = "t"\nkind = "additive"\nwidth = 2\npositions = "0..2"\n'
                                     '[vectors]\nfile = "t.npy"\n', encoding="utf-8")
    assert load_variant(tmp_path / "t.toml").vectors.values.tolist() == rows.tolist()


needs_safetensors = pytest.mark.skipif(importlib.util.find_spec("safetensors") is None,
                                       reason="safetensors is not installed")


@needs_safetensors
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_safetensors_tensor_is_read_by_name(tmp_path, dtype):
    from safetensors.numpy import save_file

    wpe = np.random.default_rng(1).standard_normal((6, 4)).astype(dtype)
    save_file({"wpe.weight": wpe, "wte.weight": np.zeros((3, 4), dtype=dtype)}, str(tmp_path / "m.safetensors"))
    (tmp_path / "t.toml").write_text('name = "t"\nkind = "additive"\nwidth = 4\npositions = "0..5"\n'
                                     '[vectors]\nfile = "m.safetensors"\ntensor = "wpe.weight"\n', encoding="utf-8")
    assert np.array_equal(load_variant(tmp_path / "t.toml").vectors.values, wpe.astype(np.float64))


@needs_safetensors
def test_safetensors_bf16_is_widened_exactly(tmp_path):
    import torch
    from safetensors.torch import save_file

    wpe = torch.tensor([[1.5, -0.375], [2.0**-20, 3.0]], dtype=torch.bfloat16)
    save_file({"wpe": wpe}, str(tmp_path / "m.safetensors"))
    (tmp_path / "t.toml").write_text('name = "t"\nkind = "additive"\nwidth = 2\npositions = "0..1"\n'
                                     '[vectors]\nfile = "m.safetensors"\n', encoding="utf-8")
    assert load_variant(tmp_path / "t.toml").vectors.values.tolist() == wpe.to(torch.float64).tolist()


@pytest.mark.parametrize("data, words", [
    ({"positions": "integers"}, ["'vectors'", 'positions = "0..3"', "clip = true"]),
    ({"positions": "nonnegative"}, ["'vectors'", 'positions = "0..3"']),
    ({"positions": "0..5"}, ["'positions'", "0..5", "4 rows", 'positions = "0..3"']),
    ({"positions": "0..3", "clip": True}, ["'vectors.clip'", 'positions = "nonnegative"']),
    ({"positions": "0..3", "frequencies": {"base": 10000}}, ["'frequencies'", "does not apply with [vectors]"]),
    ({"positions": "0..3", "position": {"transform": "m / 2"}}, ["'position'", "does not apply with [vectors]"]),
    ({"positions": "0..3", "width": 4}, ["vectors.rows", "width = 4"]),
    ({"positions": "0..3", "rows": [[0.0, 1.0], [1.0], [0.0, 0.0], [1.0, 1.0]]}, ["vectors.rows[1]", "2 numbers"]),
    ({"positions": "0..3", "rows": [[0.0, 1.0], [1.0, float("nan")], [0.0, 0.0], [1.0, 1.0]]},
     ["vectors.rows", "row 1", "nan"]),
    ({"positions": "0..3", "rows": [[0.0, 1.0], [1.0, 0.0], [0.0, "x"], [1.0, 1.0]]}, ["vectors.rows[2][1]", "a number"]),
    ({"positions": "0..3", "file": "t.npy"}, ["'vectors'", "exactly one of"]),
])
def test_a_table_the_file_does_not_bound_is_refused_naming_the_fix(data, words):
    vectors = {"rows": data.pop("rows", _rotations(4).tolist())}
    if data.pop("clip", False):
        vectors["clip"] = True
    if "file" in data:
        vectors["file"] = data.pop("file")
    spec = {"name": "t", "kind": "additive", "width": 2, "vectors": vectors, **data}
    with pytest.raises(VariantFileError) as raised:
        Variant.from_dict(spec)
    message = str(raised.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


def test_amplitude_applies_to_additive_files_only():
    with pytest.raises(VariantFileError, match="position.amplitude.*additive"):
        Variant.from_dict({"name": "r", "kind": "rotary", "width": 4, "pairing": "half",
                           "frequencies": {"base": 100}, "position": {"amplitude": "2"}})


def test_an_amplitude_undefined_at_a_position_is_refused():
    with pytest.raises(VariantFileError, match="position.amplitude.*m = 0"):
        Variant.from_dict({"name": "a", "kind": "additive", "width": 4, "positions": "nonnegative",
                           "frequencies": {"base": 100}, "position": {"amplitude": "1 / m"}})


# -- deciding, exactly --------------------------------------------------------------------------------


def _gram_is_toeplitz(rows, positions) -> bool:
    return all(_dot(rows[i], rows[j]) == _dot(rows[0], rows[j - i]) for i in positions for j in positions if j >= i)


TABLES = {
    # name: rows (a range 0..N file)
    "quarter turns": _rotations(8),
    "quarter turns, one entry one ulp off": np.vstack([_rotations(5), [[np.nextafter(0.0, 1.0), 1.0]]]),
    "random float32": np.random.default_rng(3).standard_normal((7, 4)).astype(np.float32),
    "constant rows": np.tile([[0.25, -0.5, 1.0, 2.0]], (6, 1)),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_relative_and_norm_verdicts_match_an_exact_recomputation(name):
    rows = np.asarray(TABLES[name], dtype=np.float64)
    variant = _table(rows)
    positions = range(len(rows))
    relative = _status(variant, "relative")
    assert relative.status == ("proved" if _gram_is_toeplitz(rows, positions) else "refuted"), relative.reason
    if relative.status == "refuted":
        (witness,) = [part.witness for part in relative.proof.parts if part.witness]
        i, j = (int(witness[k]) for k in sorted(witness, key=str))
        assert _dot(rows[i], rows[j]) != _dot(rows[0], rows[j - i])
    norm = _status(variant, "constant_norm")
    equal_norms = len({_dot(row, row) for row in rows}) == 1
    assert norm.status == ("proved" if equal_norms else "refuted")


@pytest.mark.parametrize("name", sorted(TABLES))
def test_shift_verdict_matches_an_exact_recomputation(name):
    rows = np.asarray(TABLES[name], dtype=np.float64)
    n = len(rows)
    holds = all(_dot(rows[i + 1], rows[j + 1]) == _dot(rows[i], rows[j]) for i in range(n - 1) for j in range(n - 1))
    assert _status(_table(rows), "shift").status == ("proved" if holds else "refuted")


def test_one_ulp_breaks_relative_where_floats_would_not_see_it():
    rows = TABLES["quarter turns, one entry one ulp off"]
    assert np.allclose(rows @ rows.T, _rotations(6) @ _rotations(6).T)  # float closeness: "relative"
    assert _status(_table(rows), "relative").status == "refuted"


def test_shift_structure_is_the_rank_condition():
    # quarter turns: p_{t+1} = R(90) p_t; a repeated row followed by two different rows: no map
    assert _status(_table(_rotations(6)), "shift_structure").status == "proved"
    rows = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])
    result = _status(_table(rows), "shift_structure")
    assert result.status == "refuted" and "p_0 = p_2" in str(result.proof.parts[-1].detail)


def test_clip_reads_the_last_row_past_the_table():
    # quarter turns, clipped after 4 rows: past the table p_t = p_3 = (0, -1), so p_1 . p_4 = -1 but
    # p_0 . p_3 = 0; over 0..3 alone the table is relative
    clipped = _table(_rotations(4), clip=True)
    assert _status(_table(_rotations(4)), "relative").status == "proved"
    result = _status(clipped, "relative")
    assert result.status == "refuted"
    (witness,) = [part.witness for part in result.proof.parts if part.witness]
    i, j = (int(witness[k]) for k in sorted(witness, key=str))
    rows = _rotations(4)
    assert j > 3 and _dot(rows[min(i, 3)], rows[min(j, 3)]) != _dot(rows[0], rows[min(j - i, 3)])


def test_a_float_copy_of_the_sinusoidal_table_is_not_equivalent_to_it():
    width, n = 4, 6
    t = np.arange(n)[:, None]
    freqs = 100.0 ** (-2 * np.arange(width // 2) / width)
    rows = np.empty((n, width))
    rows[:, 0::2], rows[:, 1::2] = np.sin(t * freqs), np.cos(t * freqs)
    variant = _table(rows, equivalent={"name": "sinusoidal, base 100", "frequencies": "100**(-2*r/d)"})
    result = _status(variant, "equivalence")
    assert result.status == "refuted"
    (witness,) = [part.witness for part in result.proof.parts if part.witness]
    assert int(next(iter(witness.values()))) >= 1  # row 0 is (0, 1, 0, 1) exactly: the same


def test_the_kernel_returns_the_rows_and_refuses_positions_past_a_range():
    from symproof import PositionOutOfRangeError
    from symproof.variants._kernel import build_kernel

    rows = np.random.default_rng(5).standard_normal((4, 2))
    kernel = build_kernel(_table(rows))
    assert np.array_equal(kernel.table(np.array([3, 0])), rows[[3, 0]])
    with pytest.raises(PositionOutOfRangeError):
        kernel.table(np.array([4]))
    clipped = build_kernel(_table(rows, clip=True))
    assert np.array_equal(clipped.table(np.array([10**6])), rows[[3]])
    with pytest.raises(IndexError):
        clipped.table(np.array([-1]))


def test_kernel_property_passes_for_a_clipped_table():
    rows = np.random.default_rng(6).standard_normal((5, 4))
    (result,) = check_variant(_table(rows, clip=True), only={"kernel"})
    assert result.status == "proved", result.reason


# -- the amplitude -------------------------------------------------------------------------------------


def _scaled(amplitude: str, **extra) -> Variant:
    return Variant.from_dict({"name": "s", "kind": "additive", "width": 4, "frequencies": {"base": 100},
                              "params": {"alpha": 0.25}, "position": {"amplitude": amplitude}, **extra})


@pytest.mark.parametrize("amplitude, expected", [
    # a constant: every structural property kept
    ("alpha", {"constant_norm": "proved", "shift_structure": "proved", "relative": "proved", "shift": "proved"}),
    # a(t) = 1 + t^2: the norm and the offset-only products change with t
    ("1 + m**2", {"constant_norm": "refuted", "relative": "refuted", "shift": "refuted"}),
    # a(t) = 2^t: a(t + D) / a(t) = 2^D, so the shift structure survives (a(0) = 1); the products do not
    ("2**m", {"constant_norm": "refuted", "shift_structure": "proved", "shift": "refuted"}),
])
def test_amplitude_verdicts(amplitude, expected):
    results = {r.claim.name: r.status for r in check_variant(_scaled(amplitude), only=set(expected))}
    assert results == expected


def test_scaled_sinusoidal_is_not_the_sinusoidal_table():
    variant = _scaled("alpha", equivalent={"name": "sinusoidal", "frequencies": "100**(-2*r/d)"})
    assert _status(variant, "equivalence").status == "refuted"
    same = _scaled("1", equivalent={"name": "sinusoidal", "frequencies": "100**(-2*r/d)"})
    assert _status(same, "equivalence").status == "proved"


def test_amplitude_kernel_matches_the_definition():
    from symproof.variants._kernel import build_kernel

    variant = _scaled("alpha")
    table = build_kernel(variant).table(np.array([0, 3]))
    freqs = 100.0 ** (-2 * np.arange(2) / 4)
    assert np.allclose(table[1, 0::2], 0.25 * np.sin(3 * freqs), rtol=0, atol=1e-15)
    (result,) = check_variant(variant, only={"kernel"})
    assert result.status == "proved", result.reason


@pytest.mark.parametrize("target", ["numpy", pytest.param("torch", marks=pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed"))])
@pytest.mark.parametrize("rows", [4, 100])  # 100 x 64 entries: past the literal bound, packed as base64
def test_exported_table_returns_the_rows_exactly(tmp_path, target, rows):
    from symproof.variants._export import export_variant

    wpe = np.random.default_rng(7).standard_normal((rows, 64)).astype(np.float32)
    (path,) = export_variant(_table(wpe), tmp_path, target)
    spec = importlib.util.spec_from_file_location(f"table_{target}_{rows}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    picks = [0, rows - 1, rows // 2]
    assert np.array_equal(np.asarray(module.table(picks)), wpe.astype(np.float64)[picks])
    assert ("_ROWS_BASE64" in Path(path).read_text(encoding="utf-8")) == (wpe.size > 4096)
    with pytest.raises(IndexError, match=f"outside the file's positions 0..{rows - 1}"):
        module.table([rows])


def test_repeated_rows_are_ranked_once():
    # 3000 equal rows: past the exact rank bound as rows, one distinct row (A = identity maps it to itself)
    rows = np.tile([[0.0, 1.0]], (3000, 1))
    assert _status(_table(rows), "shift_structure").status == "proved"


def test_the_step_budget_bounds_the_exact_comparisons():
    # every row equal to the sinusoidal table at frequency 0: the comparison runs row by row until the budget
    rows = np.tile([[0.0, 1.0]], (3000, 1))
    variant = _table(rows, equivalent={"name": "zero", "frequencies": "0"})
    (spent,) = check_variant(variant, only={"equivalence"}, steps=1000)
    assert spent.status == "unknown" and "step budget of 1000 steps" in spent.reason
    (decided,) = check_variant(variant, only={"equivalence"})
    assert decided.status == "proved"
