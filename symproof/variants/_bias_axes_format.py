"""Reading a bias over several position axes (Swin's 2-D relative position bias): ``[bias] axes = ["y", "x"]``.

Positions are vectors, one integer coordinate per axis; the formula reads the query's coordinates
``i_y, i_x`` and the key's ``j_y, j_x`` (named after the axes) instead of ``i`` and ``j``.  Swin indexes a
learned table of ``(2M - 1)^2`` entries by the offset on each axis, flattened row-major exactly as its
``relative_position_index`` is::

    positions = "0..6"                           # a window of M = 7 patches on each axis
    [params]
    B = [...]                                    # 169 entries
    [bias]
    axes = ["y", "x"]
    formula = "B((i_y - j_y + 6) * 13 + (i_x - j_x + 6))"
    heads = 1
    slope = "1"

``positions`` applies to every axis.  A table index outside the table at a declared position is refused
at load, in one line naming the query and key coordinates (tried: on each axis the offsets the formula's
numbers suggest, at a few keys, the other axes at 0, and every axis at once; the exported kernels keep
their own guard, as every kernel does).  The properties are in :mod:`._bias_axes`.
"""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from .._ground._errors import VariantFileError
from ._domain import _declared, _problem, may_be_undefined, witness_positions
from ._format import MAX_AXES, MAX_HEADS, _IDENT, _names, sample_indices

__all__ = ["parse_bias_axes", "coordinate_names"]


def coordinate_names(axes) -> tuple:
    """``(("i_y", "i_x"), ("j_y", "j_x"))``: the names of the query's and the key's coordinates."""
    return tuple(f"i_{a}" for a in axes), tuple(f"j_{a}" for a in axes)


def parse_bias_axes(reader, data: Mapping, fields: dict) -> None:
    """``[bias]`` with ``axes``: the formula in the coordinates, heads and slope, checked at load."""
    table = data["bias"]
    axes = table["axes"]
    if not (2 <= len(axes) <= MAX_AXES) or not all(isinstance(a, str) and _IDENT.match(a) for a in axes):
        raise reader.fail("bias.axes", f"expected 2 to {MAX_AXES} coordinate names (one axis: leave bias.axes out "
                                       f"and write i and j), got {axes!r}")
    if len(set(axes)) != len(axes):
        raise reader.fail("bias.axes", f"names must differ, got {axes!r}")
    if "equivalent" in data:
        raise reader.fail("equivalent", "is not supported with bias.axes (a causal softmax orders one axis)")
    queries, keys = coordinate_names(axes)
    params = fields["params"]
    taken = sorted(set(params) & set(queries + keys))
    if taken:
        raise reader.fail("params", f"{taken[0]!r} names a coordinate of bias.axes; rename the parameter")
    heads = table["heads"]
    if not 1 <= heads <= MAX_HEADS:
        raise reader.fail("bias.heads", f"expected a head count between 1 and {MAX_HEADS}, got {heads}")
    names = (_names("bias.formula", params) - {"i", "j"}) | set(queries) | set(keys)
    fields.update(axes=tuple(axes), heads=heads,
                  bias=reader.formula(table["formula"], "bias.formula", names),
                  slope=reader.formula(table["slope"], "bias.slope", _names("bias.slope", params)))
    variant = reader.variant(**fields)
    variant.frequencies_digits()  # every head's slope, numerically: a non-real one fails here, naming its head
    for h in sample_indices(heads):
        if variant.exact_value(h).is_extended_real is not True:
            raise reader.fail("bias.slope", f"gives {variant.exact_value(h)} for head h={h}; expected a real number")
    _check_defined(variant)


def _points(variant) -> list:
    """``(i, j)`` coordinate vectors to build the formula at: on each axis alone (the others at 0) the
    offsets the formula's numbers suggest at a few keys, then the same (query, key) pair on every axis."""
    offsets = witness_positions(variant.bias.text, variant)
    keys = [k for k in (0, 1, -1, 2**20) if _declared(variant, k)]
    if variant.last_position is not None:
        keys.append(variant.last_position)
    pairs = [(k + d, k) for d in offsets for k in dict.fromkeys(keys) if _declared(variant, k + d)]
    n = len(variant.axes)
    out = []
    for a, b in pairs:
        out.append(((a,) * n, (b,) * n))
        for axis in range(n):
            i = tuple(a if c == axis else 0 for c in range(n))
            j = tuple(b if c == axis else 0 for c in range(n))
            out.append((i, j))
    return list(dict.fromkeys(out))


def _check_defined(variant) -> None:
    """Refuse the file when its bias is not a finite real number at a declared point (a table index
    outside the table, a log of 0), naming up to three points and the fix."""
    n = len(variant.axes)
    symbols = [tuple(sp.Symbol(name, integer=True) for name in side) for side in coordinate_names(variant.axes)]
    generic = variant.bias_at(*symbols, sp.Symbol("slope"), sp.Symbol("h", integer=True))
    if not may_be_undefined(generic):
        return
    found = []
    for h in sorted({0, variant.heads - 1}):
        slope = variant.exact_value(h)
        for i, j in _points(variant):
            why = _problem(lambda *c, _s=slope, _h=h: variant.bias_at(c[:n], c[n:], _s, _h),
                           tuple(sp.Integer(x) for x in i + j))
            if why:
                found.append(((i, j), why))
            if len(found) >= 3:
                break
    if not found:
        return
    queries, keys = coordinate_names(variant.axes)
    at = "; ".join(", ".join(f"{name} = {x}" for name, x in zip(queries + keys, i + j)) + f" ({why})"
                   for (i, j), why in found[:3])
    domain = ("every integer" if not variant.from_zero else "the integers >= 0" if variant.last_position is None
              else f"the integers 0..{variant.last_position}")
    raise VariantFileError(
        f"{variant.source}: key 'bias.formula': '{variant.bias.text}' is not defined at {at}, but the file's "
        f"positions are {domain} on every axis: {_window_fix(variant)}")


def _window_fix(variant) -> str:
    """The fix: the window a table of ``(2N + 1)^n`` entries (Swin's) fits, and a clip of the index."""
    from ._formula import LookupBase

    n, fixes = len(variant.axes), []
    for name, values in variant.params.items():
        if not (isinstance(values, type) and issubclass(values, LookupBase) and f"{name}(" in variant.bias.text):
            continue
        size = len(values.values)
        side = round(size ** (1 / n))
        if side**n == size and side % 2 == 1 and side > 1 and variant.last_position != (side - 1) // 2:
            fixes.append(f'declare positions = "0..{(side - 1) // 2}" (top level) if table {name!r} holds the '
                         f"{side}^{n} offsets of a window of {(side + 1) // 2} positions per axis")
        fixes.append(f"clip the index of table {name!r} into its entries ({name}(clip(INDEX, 0, {size - 1})))")
    return "; or ".join(fixes) or "clip the argument (clip, Max) or choose the value with where(...)"
