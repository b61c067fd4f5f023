"""The properties of a bias over several position axes (Swin's 2-D relative position bias; the file is
read by :mod:`._bias_axes_format`): those of a bias, with positions as vectors -- ``relative``, ``shift``,
``direction``, ``plain_at_zero``.  ``causal_relative`` and ``decay`` read a causal order along one axis
and have no statement on a grid.
"""

from __future__ import annotations

import sympy as sp

from ._domain import _declared
from ._properties import Property, h_sym, slope_sym

__all__ = ["bias_axes_properties", "compare_bias_axes"]


def _vector(variant, name: str) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix([sp.Symbol(f"{name}_{a}", integer=True) for a in variant.axes])


def bias_axes_properties(variant) -> list:
    """The bias properties with position vectors (``i``, ``j``, ``c``, ``D`` over the axes)."""
    i, j, c, D = (_vector(variant, name) for name in ("i", "j", "c", "D"))
    zero = sp.ImmutableMatrix.zeros(len(variant.axes), 1)

    def bias(a, b):
        return variant.bias_at(tuple(a), tuple(b), slope_sym, h_sym)

    over = f" (i, j, c, D: integer vectors over the axes {', '.join(variant.axes)})"
    mirrored = (D, zero) if variant.from_zero else (zero, -D)
    mirror_text = "b(D, 0)" if variant.from_zero else "b(0, -D)"
    return [
        Property("relative", "b(i, j) = b(0, j - i): the bias depends only on the offset" + over, "identity",
                 lambda w, r: (bias(i, j), bias(zero, j - i))),
        Property("shift", "b(i + c, j + c) = b(i, j) for every common shift c" + over, "identity",
                 lambda w, r: (bias(i + c, j + c), bias(i, j))),
        Property("direction", f"b(0, D) != {mirror_text} in general: the sign of the offset is visible" + over,
                 "sensitivity", lambda w, r: (bias(zero, D), bias(*mirrored))),
        Property("plain_at_zero", "b(i, i) = 0: at offset 0 the score is the plain content product" + over,
                 "identity", lambda w, r: (bias(i, i), sp.Integer(0))),
    ]


# -- the kernel property ---------------------------------------------------------------------------------


def compare_bias_axes(variant, written, positions, tally, cache, safe, reference_value) -> None:
    """The file's ``bias_at`` against the exact bias at 40 digits: every query and key of a small grid
    (coordinates 0..2 and a declared range's last one on each axis; the offsets a window sees), then the large and negative probed
    positions on every axis.  ``safe`` and ``reference_value`` are the kernel property's own guards."""
    import itertools

    n = len(variant.axes)
    last = variant.last_position
    small = [p for p in dict.fromkeys([0, 1, 2] + ([last] if last is not None else [])) if _declared(variant, p)]
    grid = [tuple(point) for point in itertools.product(small, repeat=n)]
    far = [(p,) * n for p in positions if abs(p) >= 1024][:4]
    points = grid + far
    got = written.bias_at([list(p) for p in points], [list(p) for p in points])
    from ._kernel import probed_indices

    for h in probed_indices(variant.heads):
        slope = variant.exact_value(h)
        for (a, i), (b, j) in itertools.product(enumerate(points), repeat=2):
            key = (h, i, j)
            if key not in cache:
                cache[key] = safe(lambda _i=i, _j=j: reference_value(variant.bias_at(_i, _j, slope, h)),
                                  max(abs(x) for x in i + j))
            value = cache[key]
            if value is None:
                tally.skipped.add((i, j))
                continue
            tally.add(got[h, a, b], value, max(abs(x) for x in i + j), f"head {h}, query {i}, key {j}", i + j)
