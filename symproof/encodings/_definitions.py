"""The symbolic definitions of the chapter, shared by the proofs and the kernels.

Conventions (chapter.md): positions are integers from 0; vectors are columns;
frequencies ``omega_r = base**(-2 r / D)`` for ``r = 0 .. D/2 - 1`` where ``D``
is the *denominator* width the scheme states; pairing is ``adjacent``
``(2r, 2r+1)`` unless ``half`` ``(r, r + D/2)`` is asked for.
"""

from __future__ import annotations

import sympy as sp
from sympy import ImmutableMatrix, cos, sin
from sympy.matrices.expressions import BlockDiagMatrix

from .._errors import InvalidInputError

__all__ = [
    "DEFAULT_BASE", "PAIRINGS", "check_width", "frequency", "frequencies", "rotation", "sin_shift",
    "rope_matrix", "sin_shift_matrix", "sinusoidal_vector", "pairing_permutation", "pair_indices",
]

DEFAULT_BASE = 10000
PAIRINGS = ("adjacent", "half")


def check_width(width, name: str = "width", *, minimum: int = 2) -> int:
    """``width`` as an even integer ``>= minimum``, or a clear error."""
    if isinstance(width, bool) or not isinstance(width, (int, sp.Integer)):
        raise InvalidInputError(f"{name} must be an even integer, got {type(width).__name__} {width!r}")
    width = int(width)
    if width < minimum or width % 2:
        raise InvalidInputError(
            f"{name} must be an even integer >= {minimum} (dimensions are used in pairs), got {width}",
            **{name: width},
        )
    return width


def _check_pairing(pairing: str) -> str:
    if pairing not in PAIRINGS:
        raise InvalidInputError(f"unknown pairing {pairing!r}; expected one of {PAIRINGS}", pairing=pairing)
    return pairing


def frequency(r, denominator, base=DEFAULT_BASE):
    """``omega_r = base**(-2 r / denominator)`` (symbolic or exact)."""
    return sp.Pow(sp.sympify(base), -2 * sp.sympify(r) / sp.sympify(denominator))


def frequencies(width: int, *, base=DEFAULT_BASE, denominator: int | None = None) -> list:
    """Exact frequencies of the ``width / 2`` pairs; ``denominator`` defaults to ``width``."""
    width = check_width(width)
    denominator = width if denominator is None else check_width(denominator, "denominator")
    return [frequency(r, denominator, base) for r in range(width // 2)]


def rotation(theta) -> ImmutableMatrix:
    """``R(theta) = [[cos, -sin], [sin, cos]]`` (counter-clockwise)."""
    c, s = cos(theta), sin(theta)
    return ImmutableMatrix([[c, -s], [s, c]])


def sin_shift(x) -> ImmutableMatrix:
    """``A(x) = [[cos x, sin x], [-sin x, cos x]] = R(x)^T``: the shift in (sin, cos) order."""
    c, s = cos(x), sin(x)
    return ImmutableMatrix([[c, s], [-s, c]])


def rope_matrix(m, freqs) -> BlockDiagMatrix:
    """``R_m = blockdiag(R(m omega_0), ..., R(m omega_{n-1}))`` (adjacent pairing)."""
    return BlockDiagMatrix(*[rotation(m * w) for w in freqs])


def sin_shift_matrix(offset, freqs) -> BlockDiagMatrix:
    """``A_offset = blockdiag(A(offset omega_r))``: ``p_{t+offset} = A_offset p_t``."""
    return BlockDiagMatrix(*[sin_shift(offset * w) for w in freqs])


def sinusoidal_vector(t, freqs) -> ImmutableMatrix:
    """``p_t`` interleaved: ``p_{t,2r} = sin(t omega_r)``, ``p_{t,2r+1} = cos(t omega_r)``."""
    entries = []
    for w in freqs:
        entries += [sin(t * w), cos(t * w)]
    return ImmutableMatrix(entries)


def pair_indices(width: int, pairing: str = "adjacent") -> list:
    """The coordinate pairs ``(a, b)`` rotated together, pair ``r`` at position ``r``."""
    width, pairing = check_width(width), _check_pairing(pairing)
    half = width // 2
    if pairing == "adjacent":
        return [(2 * r, 2 * r + 1) for r in range(half)]
    return [(r, r + half) for r in range(half)]


def pairing_permutation(width: int, src: str = "adjacent", dst: str = "half") -> list:
    """Index map ``Q`` with ``z_dst = z_src[Q]``: coordinate ``k`` of the ``dst`` layout
    is coordinate ``Q[k]`` of the ``src`` layout (pair ``r`` keeps its role)."""
    src_pairs, dst_pairs = pair_indices(width, src), pair_indices(width, dst)
    perm = [0] * width
    for (sa, sb), (da, db) in zip(src_pairs, dst_pairs):
        perm[da], perm[db] = sa, sb
    return perm
