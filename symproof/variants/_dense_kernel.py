"""The ``kernel`` property of a ``kind = "dense"`` file: the written ``apply`` against ``exp(sum_a m_a A_a) x``
at 40 digits (mpmath's ``expm``), called by :mod:`._kernel_file` with its own guards."""

from __future__ import annotations

import sympy as sp

__all__ = ["compare_dense", "WIDE"]

#: above this width the 40-digit reference (pure-Python mpmath, about width^3 operations per Taylor term and
#: squaring) is built at the positions of _WIDE_PROBES only: a 32-wide file would spend a minute on all of them
WIDE = 8
_WIDE_PROBES = (0, 1, 7, 4097, 2**20, -1, -(2**20))


def _reference(variant, vector, position, overflow) -> dict | None:
    """``exp(sum_a m_a A_a) x`` at 40 digits (mpmath), ``{coordinate: float}``; ``None`` where not finite."""
    import mpmath

    with mpmath.workdps(50):
        x = mpmath.matrix(variant.width, variant.width)
        for p, g in zip(position, variant.generators):
            for a in range(g.rows):
                for b in range(g.cols):
                    x[a, b] += p * mpmath.mpf(sp.Float(g[a, b], 60))
        image = mpmath.expm(x) * mpmath.matrix([mpmath.mpf(float(v)) for v in vector])
        out = {}
        for k in range(variant.width):
            value = image[k]
            if mpmath.isnan(value):
                return None
            if mpmath.isinf(value) or abs(value) > 1.7e308:
                raise overflow
            out[k] = float(value)
    return out


def compare_dense(variant, written, positions, tally, cache, safe, overflow) -> None:
    """The dense file's ``apply`` against ``exp(sum_a m_a A_a) x`` (40 digits) at every probed position
    (``p + 3a`` on axis ``a``, as the rotary comparison does); the query and key sides are the same map.
    ``safe(function, position, *args)`` builds a reference value (``None`` where it is not one);
    ``overflow`` is the exception a value beyond float64 raises into it."""
    import numpy as np

    rng = np.random.default_rng(0)
    vector = np.round(rng.standard_normal(variant.width), 6)
    if variant.width > WIDE:
        positions = [p for p in positions if p in _WIDE_PROBES]
    axes = len(variant.axes)
    for side in ("query", "key"):
        probes = []
        for p in positions:
            position = tuple(p + 3 * a for a in range(axes))
            if position not in cache:
                cache[position] = safe(_reference, p, variant, vector, position, overflow)
            if cache[position] is None:
                tally.skipped.add(p)
            else:
                probes.append((p, position))
        got = written.rotate(vector, [q[1] for q in probes], side, [1] * len(probes))
        for row, (p, position) in enumerate(probes):
            for index, value in cache[position].items():
                tally.add(got[row, index], value, p, f"{side} at position {p}, coordinate {index}", position)
