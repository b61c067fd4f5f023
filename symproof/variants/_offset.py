"""Rotary schemes whose angle reads a relative position ``rho(i, j)`` (``[position] relative``).

ReRoPE clips the relative position at a window, ``rho = Min(i - j, w)``; Self-Extend groups the
positions beyond a neighbour window.  Neither is a rotation of each token: the query is rotated by
``rho(i, j) * omega`` for each key, and the key by none, so pair ``r`` scores

    s_r(i, j) = (S_q(i) B(rho(i, j) omega_r) q)^T (S_k(j) B(0) k),

which is RoPE's ``R(i omega)^T R(j omega) = R((j - i) omega)`` when ``rho = i - j``.  This module
states the chapter's properties for that score (``norm`` becomes: each side's map keeps norms;
``direction`` does not apply to a causal file, whose scores never see a key after the query) and
searches witnesses over pairs of positions: a clipped or grouped position differs from ``i - j`` only
when *two* positions are past thresholds at once (``j = g - 1`` and ``t = w + 1``), which the search
that moves one position at a time (:func:`._check._far_witness`) does not reach.  Candidates are
screened in float64 and certified exactly, as every witness is.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from ._spec import Variant

__all__ = ["offset_properties", "offset_score", "offset_maps", "offset_witness", "not_applicable", "formula_numbers",
           "OFFSET_NOTE", "CAUSAL_DIRECTION"]

OFFSET_NOTE = ("The angle reads the relative position rho(i, j) (position.relative): pair r scores "
               "(S_q(i) B(rho(i, j) omega_r) q)^T (S_k(j) B(0) k), the query rotated for each key, the key not "
               "rotated; a sum over pairs, so a statement of one generic pair holds for the whole head.")
#: why ``direction`` is not stated for a causal file
CAUSAL_DIRECTION = ("does not apply: position.causal = true, so keys after the query are masked and no score sees "
                    "an offset j - i > 0 (the sign of the offset is fixed by the mask)")
#: position values the screen tries besides the formula's own thresholds
_SMALL = (0, 1, 2, 3)
_POWERS = tuple(2**k for k in range(3, 21))
#: most values per position, grid points screened, and candidates certified exactly
_MAX_VALUES = 48
_MAX_GRID = 200_000
_MAX_CERTIFIED = 12


def offset_maps(variant: Variant, i, j, w, r) -> tuple:
    """``(M_q, M_k)`` of pair ``r`` at frequency ``w``: the score is ``(M_q q)^T (M_k k)``."""
    mq = variant.scale("query", i, r) * variant.block_at(variant.relative_at(i, j) * w, r)
    mk = variant.scale("key", j, r) * variant.block_at(sp.Integer(0), r)
    return mq, mk


def offset_score(variant: Variant, i, j, w, r):
    from ._properties import k0, k1, q0, q1

    mq, mk = offset_maps(variant, i, j, w, r)
    return sp.expand(((mq * sp.Matrix([q0, q1])).T * (mk * sp.Matrix([k0, k1])))[0])


def _rows(variant: Variant) -> tuple:
    """``(query, key, over)``: the generic pair of positions the statements range over, and what it is."""
    from ._properties import back, i, j, j_causal

    if not variant.causal:
        return i, j, "every query position i and key position j"
    key = j_causal if variant.from_zero else j
    return key + back, key, "every key j and every t >= 0 (the query at i = j + t: causal, j <= i)"


def not_applicable(variant: Variant) -> list:
    """``[(property, why)]``: the properties the chapter states that this file's scheme has no meaning for."""
    if variant.relative is not None and variant.causal:
        return [("direction", CAUSAL_DIRECTION)]
    return []


def offset_properties(variant: Variant) -> list:
    from ._properties import D, Property, _direction, _mirror, c, k0, k1, q0, q1

    query, key, over = _rows(variant)
    t = query - key  # the offset i - j of the generic row (t, or i - j)

    def score(a, b, w, r):
        return offset_score(variant, a, b, w, r)

    def norm_sides(w, r):
        mq, mk = offset_maps(variant, query, key, w, r)
        qm, km = mq * sp.Matrix([q0, q1]), mk * sp.Matrix([k0, k1])
        return (sp.ImmutableMatrix([sp.expand((qm.T * qm)[0]), sp.expand((km.T * km)[0])]),
                sp.ImmutableMatrix([q0**2 + q1**2, k0**2 + k1**2]))

    if variant.causal:
        relative = (f"s(j + t, j) = s(t, 0) for {over}: the score depends only on the offset",
                    lambda w, r: (score(query, key, w, r), score(t, 0, w, r)))
        shift = (f"s(j + t + c, j + c) = s(j + t, j) for every common shift c, {over}",
                 lambda w, r: (score(query + c, key + c, w, r), score(query, key, w, r)))
    else:
        relative = ("s(i, j) = s(0, j - i): the score depends only on the offset",
                    lambda w, r: (score(query, key, w, r), score(0, key - query, w, r)))
        shift = ("s(i + c, j + c) = s(i, j) for every common shift c",
                 lambda w, r: (score(query + c, key + c, w, r), score(query, key, w, r)))
    props = [
        Property("norm", f"||S_q(i) B(rho(i, j) omega) q||^2 = ||q||^2 and ||S_k(j) B(0) k||^2 = ||k||^2 for {over}: "
                         "each side of the score keeps norms", "identity", norm_sides),
        Property("relative", relative[0], "identity", relative[1]),
        Property("shift", shift[0], "identity", shift[1]),
    ]
    if not variant.causal:
        props.append(Property("direction", *_direction("s", variant),
                              lambda w, r: (score(0, D, w, r), score(*_mirror(variant), w, r))))
    props.append(Property("plain_at_zero", "s(i, i) = q^T k: at offset 0 the score is the plain product", "identity",
                          lambda w, r: (score(key, key, w, r), q0 * k0 + q1 * k1)))
    return props


# -- witnesses over pairs of positions -------------------------------------------------------------------


def _candidates(variant: Variant, symbol, numbers) -> list:
    values = list(_SMALL)
    for n in numbers:
        values += [n - 2, n - 1, n, n + 1, n + 2]
    values += list(_POWERS)
    negative = not variant.from_zero and not symbol.is_nonnegative
    values += [-v for v in values if v > 0] if negative else []
    allowed = [v for v in dict.fromkeys(values) if negative or v >= 0]
    return sorted(allowed, key=abs)[:_MAX_VALUES]


def formula_numbers(expr) -> list:
    """The integers near every number of ``expr`` (a window, a group size) between 2 and 2**20."""
    out = []
    for atom in sp.sympify(expr).atoms(sp.Rational):
        for value in (atom, 1 / atom if atom != 0 else 0):
            if 2 <= abs(value) <= 2**20:
                out.append(int(sp.floor(abs(value))))
    return sorted(set(out))


def offset_witness(variant: Variant, lhs, rhs):
    """A certified point where ``lhs != rhs`` found by screening a grid of position tuples in float64
    (every value near a number of ``rho`` or of the two sides, small values, powers of two), then
    certifying the simplest differing points exactly; ``(witness, residual)`` or ``None``."""
    from ._properties import _POSITION_NAMES, _VECTORS, _residual_at
    from .._export._printers import NumPyKernelPrinter

    pair = (sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)) if isinstance(lhs, sp.MatrixBase) else (lhs, rhs)
    free = set().union(*(sp.sympify(e).free_symbols for e in pair))
    positions = sorted((s for s in free if s.name in _POSITION_NAMES), key=lambda s: s.name)
    if not positions:
        return None
    symbols = sp.symbols("i j", integer=True)
    numbers = sorted(set(formula_numbers(variant.relative_at(*symbols)) + formula_numbers(sp.Tuple(*pair))))
    axes = [np.array(_candidates(variant, s, numbers), dtype=np.float64) for s in positions]
    while int(np.prod([len(a) for a in axes])) > _MAX_GRID:
        longest = max(range(len(axes)), key=lambda k: len(axes[k]))
        axes[longest] = axes[longest][: len(axes[longest]) * 3 // 4]
    grid = np.meshgrid(*axes, indexing="ij")
    vectors = [v for v in _VECTORS if set(v) & free] or [{}]
    for vector in vectors:
        differences = [sp.sympify(a - b).xreplace({s: sp.Integer(x) for s, x in vector.items()})
                       for a, b in (zip(*pair) if isinstance(pair[0], sp.MatrixBase) else [pair])]
        found = np.zeros(grid[0].shape, dtype=bool)
        for difference in differences:
            try:
                function = sp.lambdify(positions, difference, modules=[{"numpy": np}, np], printer=NumPyKernelPrinter)
                with np.errstate(all="ignore"):
                    value = np.broadcast_to(np.asarray(function(*grid), dtype=np.float64), found.shape)
            except (TypeError, ValueError, NameError, ZeroDivisionError, OverflowError):
                continue
            found |= np.isfinite(value) & (np.abs(value) > 1e-6)
        if not found.any():
            continue
        points = np.argwhere(found)
        size = np.array([[abs(axes[k][index[k]]) for k in range(len(axes))] for index in points])
        order = np.lexsort((size.sum(axis=1), size.max(axis=1)))
        for row in itertools.islice(order, _MAX_CERTIFIED):
            witness = {s: sp.Integer(int(axes[k][points[row][k]])) for k, s in enumerate(positions)}
            witness.update({s: sp.Integer(v) for s, v in vector.items() if s in free})
            residual = _residual_at(pair, witness)
            if residual is not None:
                return witness, residual
    return None
