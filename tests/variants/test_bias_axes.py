"""A bias over several position axes (``[bias] axes``: Swin's 2-D relative position bias), by purpose:

- the shipped Swin file and its exported kernels give the bias of transformers' own
  ``SwinRelativePositionBias`` (its ``relative_position_index``, its table layout);
- the verdicts follow from the formula (the reason beside each row);
- a table read outside its entries at a declared position, and what the language cannot say, are
  refused at load in one line;
- the kernels refuse positions outside the declared range.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from symproof import VariantFileError
from symproof.variants import Variant, check_variant, load_variant, shipped_variants
from symproof.variants._export import variant_source

TABLE = [round(0.05 * k - 0.55, 2) for k in range(25)]  # 5 x 5 offsets of a 3 x 3 window, no symmetry
SWIN = "B((i_y - j_y + 2) * 5 + (i_x - j_x + 2))"


def _bias(formula: str, table=None, positions: str | None = "0..2", **extra) -> Variant:
    data = {"name": "probe", "kind": "bias", "bias": {"axes": ["y", "x"], "formula": formula, "heads": 1,
                                                      "slope": "1", **extra.pop("bias", {})}, **extra}
    if table is not None:
        data["params"] = {"B": table}
    if positions is not None:
        data["positions"] = positions
    return Variant.from_dict(data)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"swin_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(variant, target: str, folder: Path):
    files = variant_source(variant, target)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return _load(folder / next(iter(files)))


def _upstream(variant, window: int):
    """transformers' SwinRelativePositionBias with the file's table: (heads, P, P) for P = window^2."""
    torch = pytest.importorskip("torch")
    from transformers.models.swin.modeling_swin import SwinRelativePositionBias

    module = SwinRelativePositionBias(variant.heads, (window, window)).double()
    values = np.array([float(v) for v in variant.params["B"].values])
    per_head = (2 * window - 1) ** 2
    with torch.no_grad():  # head h's entries are B(h * per_head + index): the table's column h
        module.relative_position_bias_table.copy_(torch.as_tensor(values.reshape(variant.heads, per_head).T))
    return module().squeeze(0).detach().numpy()


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_the_shipped_swin_kernel_is_transformers_relative_position_bias(target, tmp_path):
    pytest.importorskip("torch")
    variant = load_variant(shipped_variants()["swin_window"])
    module = _write(variant, target, tmp_path)
    got = module.bias_window(4, 4)
    got = got.numpy() if target == "torch" else got
    np.testing.assert_array_equal(got, _upstream(variant, 4))


def test_the_exact_definition_is_transformers_relative_position_bias():
    variant = load_variant(shipped_variants()["swin_window"])
    upstream = _upstream(variant, 4)
    points = [(y, x) for y in range(4) for x in range(4)]  # Swin's row-major token order
    for h in range(variant.heads):
        for a, i in enumerate(points):
            for b, j in enumerate(points):
                assert float(variant.bias_at(i, j, variant.exact_value(h), h)) == upstream[h, a, b]


Y, N, U = "proved", "refuted", "unknown"
SYMMETRIC = [TABLE[min(k, 24 - k)] for k in range(25)]  # B(index of (dy, dx)) = B(index of (-dy, -dx))
CENTRED = [0 if k == 12 else v for k, v in enumerate(TABLE)]
#: name -> (formula, table, positions, {property: verdict}, why)
VERDICTS = {
    "Swin's table": (SWIN, TABLE, "0..2", dict(relative=Y, shift=Y, direction=Y, plain_at_zero=N),
                     "a table of (dy, dx) alone; entries of (1, 0) and (-1, 0) differ; entry 12, offset (0, 0), "
                     "is 0.05"),
    # (dy, dx) and (-dy, -dx) read the same entry, so direction is false; showing it needs the table at every
    # offset of the window (no case split over them): unknown, never proved
    "a symmetric table": (SWIN, SYMMETRIC, "0..2", dict(relative=Y, shift=Y, direction=U, plain_at_zero=N),
                          "the sign of the offset is invisible, not shown for a table read at a symbolic offset"),
    "a table with 0 at offset 0": (SWIN, CENTRED, "0..2", dict(relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                                   "entry 12, offset (0, 0), is 0"),
    "Manhattan distance": ("-slope * (abs(i_y - j_y) + abs(i_x - j_x))", None, None,
                           dict(relative=Y, shift=Y, direction=N, plain_at_zero=Y),
                           "2-D ALiBi: a function of |dy| + |dx|, even, 0 at offset 0"),
    "one axis only": ("-(i_y - j_y)", None, None, dict(relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
                      "the y offset alone, odd in it"),
    "absolute coordinates": ("i_y * j_x", None, None, dict(relative=N, shift=N, direction=N, plain_at_zero=N),
                             "no function of the offset; but b(0, D) = 0 * D_x = b(0, -D): no direction either"),
}

@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_verdicts_follow_from_the_formula(name):
    formula, table, positions, expected, _ = VERDICTS[name]
    got = {r.claim.name: r.status for r in check_variant(_bias(formula, table, positions), kernel_targets=())
           if r.claim.name in expected}
    assert got == expected


def test_no_causal_or_decay_property_on_a_grid():
    names = {r.claim.name for r in check_variant(_bias(SWIN, TABLE), kernel_targets=())}
    assert names == {"relative", "shift", "direction", "plain_at_zero", "kernel"}


REFUSED = {
    "a table too small for the window": (dict(formula=SWIN, table=TABLE[:24]), "indexed by 24, outside 0..23"),
    "a table read at every integer": (dict(formula=SWIN, table=TABLE, positions=None),
                                      'declare positions = "0..2"'),
    "a range wider than the window": (dict(formula=SWIN, table=TABLE, positions="0..3"), "i_y = 3"),
    "one axis": (dict(formula="i_y", bias={"axes": ["y"]}), "2 to 4 coordinate names"),
    "the same name twice": (dict(formula="i_y", bias={"axes": ["y", "y"]}), "names must differ"),
    "i and j instead of the coordinates": (dict(formula="-abs(j - i)"), "bias.formula"),
    "a parameter named like a coordinate": (dict(formula="i_y", params={"i_x": 1}), "rename the parameter"),
    "an equivalent form": (dict(formula="i_y", equivalent={"bias": "i_y"}), "not supported with bias.axes"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_cannot_be_said_is_refused_at_load_in_one_line(case):
    spec, fragment = REFUSED[case]
    spec = dict(spec)
    formula, table = spec.pop("formula"), spec.pop("table", None)
    positions = spec.pop("positions", "0..2")
    with pytest.raises(VariantFileError) as err:
        _bias(formula, table, positions, **spec)
    assert fragment in str(err.value) and "\n" not in str(err.value), str(err.value)


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_the_kernels_refuse_positions_outside_the_window(target, tmp_path):
    if target == "torch":
        pytest.importorskip("torch")
    module = _write(_bias(SWIN, TABLE), target, tmp_path)
    module.bias_at([[0, 0], [2, 2]], [[2, 0]])
    for bad in ([[3, 0]], [[0, -1]], [[0, 1e5]], [[0.5, 0]], [[float("nan"), 0]]):
        with pytest.raises(IndexError, match="outside the file's positions 0..2"):
            module.bias_at(bad, [[0, 0]])
        with pytest.raises(IndexError, match="outside the file's positions 0..2"):
            module.bias_at([[0, 0]], bad)


def test_the_kernel_property_holds_for_the_shipped_swin_file():
    variant = load_variant(shipped_variants()["swin_window"])
    (kernel,) = check_variant(variant, only=["kernel"], kernel_targets=("numpy", "torch"))
    assert kernel.status == "proved" and kernel.verdict == "tested", kernel.reason


def test_the_formula_reads_the_coordinates_by_name():
    variant = _bias("i_y - 2 * j_x", positions=None)
    assert variant.bias_at((5, 7), (1, 3), 1, 0) == sp.Integer(5 - 6)


def test_the_decay_plot_is_refused_in_one_line(tmp_path, capsys):
    from symproof._face._cli import main

    code = main(["check", shipped_variants()["swin_window"], "--plot", str(tmp_path / "p.svg")])
    err = capsys.readouterr().err
    assert code == 2 and "drawn along one axis" in err and err.count("\n") == 1, err
