"""How finely a sinusoidal position can be resolved in each floating-point dtype.

Model of a dtype's computation (the most favourable one a kernel can do):
the position ``t`` and the frequency ``omega_r`` are each rounded once to the
dtype, their product is rounded to the dtype, and ``sin``/``cos`` of that
angle are rounded to the dtype.  float16 uses numpy's own type; bfloat16 is
emulated: each value is computed in float32 and rounded to bfloat16 by
round-to-nearest-even on the bit pattern (no extra package).

The reference is exact: ``t * beta**(-2r/d)`` evaluated by mpmath with
``REFERENCE_DIGITS`` significant digits, against which the rounded angle (an
exact binary fraction) is compared.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .._ground._errors import InvalidInputError
from ..encodings import check_width

__all__ = ["DTYPES", "REFERENCE_DIGITS", "round_to_bfloat16", "finite_precision_table"]

DTYPES = ("float64", "float32", "float16", "bfloat16")
REFERENCE_DIGITS = 40
DEFAULT_POSITIONS = (1, 10, 100, 1_000, 10_000, 100_000)

#: below this bound every ``t`` is scanned; beyond it the fast-pair argument (see
#: ``_first_equal_position``) reduces the search to the first unrepresentable ``t + 1``
DEFAULT_SCAN_LIMIT = 1 << 16
_CHUNK = 1 << 15

#: bits of significand (with the implicit bit): every integer ``<= 2**bits`` is exact
_SIGNIFICAND_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def round_to_bfloat16(values) -> np.ndarray:
    """``values`` rounded to bfloat16 (nearest, ties to even), returned as float32.

    bfloat16 is the upper half of a float32 bit pattern, so rounding adds
    ``0x7FFF`` plus the lowest kept bit (ties go to the even half) and clears
    the lower 16 bits.  NaN stays NaN; overflow rounds to infinity, as in hardware.
    """
    x = np.asarray(values, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).reshape(x.shape)


class _Arithmetic:
    """Round-once arithmetic of one dtype: ``cast``, ``mul``, ``sin``, ``cos``."""

    def __init__(self, dtype: str):
        self.name = dtype
        if dtype == "bfloat16":
            self.cast = round_to_bfloat16
            self.mul = lambda a, b: round_to_bfloat16(a * b)
            self.sin = lambda a: round_to_bfloat16(np.sin(a))
            self.cos = lambda a: round_to_bfloat16(np.cos(a))
        else:
            kind = np.dtype(dtype)
            self.cast = lambda a: np.asarray(a, dtype=np.float64).astype(kind)
            self.mul = lambda a, b: a * b
            self.sin, self.cos = np.sin, np.cos

    def angles(self, positions, omegas):
        """``fl(fl(t) * fl(omega_r))`` for every position (rows) and pair (columns)."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self.mul(self.cast(positions)[:, None], self.cast(omegas)[None, :])

    def vectors(self, positions, omegas):
        with np.errstate(over="ignore", invalid="ignore"):
            angle = self.angles(positions, omegas)
            return np.concatenate([self.sin(angle), self.cos(angle)], axis=1)


def _check_positions(positions) -> list:
    out = []
    for t in positions:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 0:
            raise InvalidInputError(f"positions must be non-negative integers, got {t!r}", position=t)
        out.append(int(t))
    if not out:
        raise InvalidInputError("positions must name at least one position to probe")
    return out


def _phase_errors(arith: _Arithmetic, positions: list, exact_omegas: list, omegas64: np.ndarray):
    """Per position: (max over pairs of |fl angle - exact angle|, the pair that attains it)."""
    angles = arith.angles(np.array(positions, dtype=np.float64), omegas64).astype(np.float64)
    errors, worst = [], []
    with mpmath.workdps(REFERENCE_DIGITS):
        for row, t in zip(angles, positions):
            if not np.all(np.isfinite(row)):
                errors.append(math.inf)
                worst.append(int(np.argmin(np.isfinite(row))))
                continue
            # each float is an exact binary fraction, so mpf(float) loses nothing
            gaps = [abs(mpmath.mpf(float(a)) - t * w) for a, w in zip(row, exact_omegas)]
            k = max(range(len(gaps)), key=gaps.__getitem__)
            errors.append(float(gaps[k]))
            worst.append(k)
    return errors, worst


def _first_equal_position(arith: _Arithmetic, omegas64: np.ndarray, scan_limit: int):
    """The first ``t`` with ``p_t == p_{t+1}`` in the dtype, and how it was established.

    Pair 0 has ``omega_0 = 1`` exactly, so below ``2**bits`` its angle is the
    exact integer ``t``; ``(sin, cos)`` at angles one radian apart lie
    ``2 sin(1/2) ~ 0.96`` apart, far more than any dtype's rounding, so no
    ``t < 2**bits`` can repeat.  At ``t = 2**bits`` the integer ``t + 1`` is a
    tie between two representable neighbours and rounds to the even one, ``t``
    itself: the inputs coincide, hence the vectors.  Positions up to
    ``scan_limit`` are checked exhaustively (pair 0 first, the whole vector on
    a hit), which also confirms the argument where it overlaps.
    """
    bound = 1 << _SIGNIFICAND_BITS[arith.name]
    fast = omegas64[:1]
    stop = min(bound, scan_limit) + 1
    for start in range(0, stop, _CHUNK):
        t = np.arange(start, min(start + _CHUNK, stop) + 1, dtype=np.float64)
        v = arith.vectors(t, fast)
        hits = np.flatnonzero(np.all(v[1:] == v[:-1], axis=1))
        for h in hits:
            pair = arith.vectors(t[h:h + 2], omegas64)
            if np.array_equal(pair[0], pair[1]):
                return int(t[h]), f"exhaustive scan of t = 0 .. {int(t[h])}"
    pair = arith.vectors(np.array([bound, bound + 1], dtype=np.float64), omegas64)
    if not np.array_equal(pair[0], pair[1]):
        return None, f"no repeat up to t = {stop - 1}; t = 2^{_SIGNIFICAND_BITS[arith.name]} does not repeat"
    return bound, (f"scan of t = 0 .. {stop - 1}, then t + 1 first rounds to t at "
                   f"2^{_SIGNIFICAND_BITS[arith.name]} (pair 0 angle exact below it)")


def finite_precision_table(d: int = 512, base: float = 10000.0, dtypes=DTYPES,
                           positions=DEFAULT_POSITIONS, *, scan_limit: int = DEFAULT_SCAN_LIMIT) -> list:
    """Per dtype, the phase error of ``t * omega_r`` and the first ``t`` with ``p_t == p_{t+1}``.

    Returns one dict per dtype with keys ``dtype``, ``positions``,
    ``phase_error`` (per probed position, the largest ``|fl(t omega_r) - t
    omega_r|`` over the ``d/2`` pairs, in radians; ``inf`` where the dtype
    overflows), ``worst_pair`` (the pair ``r`` attaining it), ``first_equal_t``
    and ``search`` (how that position was established).  A measured table,
    not a proof.
    """
    d = check_width(d, "d")
    if not base > 1:
        raise InvalidInputError(f"base must be > 1, got {base!r}")
    unknown = [name for name in dtypes if name not in DTYPES]
    if unknown:
        raise InvalidInputError(f"unknown dtype(s) {unknown}; expected some of {DTYPES}")
    positions = _check_positions(positions)
    with mpmath.workdps(REFERENCE_DIGITS):
        exact_omegas = [mpmath.power(mpmath.mpf(base), mpmath.mpf(-2 * r) / d) for r in range(d // 2)]
    omegas64 = np.array([float(w) for w in exact_omegas])
    rows = []
    for name in dtypes:
        arith = _Arithmetic(name)
        errors, worst = _phase_errors(arith, positions, exact_omegas, omegas64)
        first, how = _first_equal_position(arith, omegas64, scan_limit)
        rows.append({"dtype": name, "positions": list(positions), "phase_error": errors,
                     "worst_pair": worst, "first_equal_t": first, "search": how})
    return rows
