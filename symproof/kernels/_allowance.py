"""Rounding allowances: what a floating-point comparison proves, as exact powers of two.

Two float computations of the same exact value (summed in different orders, by another BLAS
kernel, on another CPU) differ by a residue of a few units in the last place, and that residue
is not the same on every machine.  So no output shows it.  A computed check instead compares the
residue, exactly (each float is a binary fraction, :class:`fractions.Fraction` holds it without
loss), against an allowance fixed before the run from the float format and the operation count:

    allowance = 2^ceil(log2(operations)) * u * 2^magnitude * 2

with ``u = 2^-bits`` the unit roundoff of the format (``2^-53`` for float64), ``2^magnitude`` a
bound on the values compared (checked too), and the last factor for the two computations.  What
the output then says, ``|difference| ≤ 2⁻⁴³``, is the same on every machine, and the check
still fails when the residue exceeds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._ground._errors import InvalidInputError

__all__ = ["stable_digits", "UNIT_ROUNDOFF_BITS", "Allowance", "rounding_allowance", "power_of_two", "exact_max_gap",
           "ceil_log2", "first_index_above"]

#: bits of significand with the implicit bit: the unit roundoff of round-to-nearest is 2^-bits
UNIT_ROUNDOFF_BITS = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}


def ceil_log2(value) -> int:
    """The least ``k`` with ``value <= 2^k``, exactly, for a positive int, Fraction or finite float."""
    value = Fraction(value)
    if value <= 0:
        raise InvalidInputError(f"ceil_log2 needs a positive value, got {value}")
    k = value.numerator.bit_length() - value.denominator.bit_length()
    while Fraction(2) ** k < value:
        k += 1
    while Fraction(2) ** (k - 1) >= value:
        k -= 1
    return k


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def power_of_two(exponent: int) -> str:
    """``2⁻⁴³``: how an allowance is printed (Unicode superscripts: plain text that reads as math in the
    terminal, the page and, mapped, the TeX)."""
    return "2" + str(exponent).translate(_SUPERSCRIPT)


def stable_digits(value: Fraction, spread: Fraction, most: int = 3):
    """``value`` to at most ``most`` significant digits, only as many as every number within ``spread`` of
    it rounds to alike (``None`` when not even one digit is): the digits a residue of that size cannot
    move, on any machine."""
    from decimal import Decimal, localcontext

    low, high = value - spread, value + spread
    if low <= 0 <= high or value == 0:
        return None
    for digits in range(most, 0, -1):
        with localcontext() as context:
            context.prec = digits
            ends = {+(Decimal(end.numerator) / Decimal(end.denominator)) for end in (low, high)}
        if len(ends) == 1:
            return ends.pop()
    return None


@dataclass(frozen=True)
class Allowance:
    """``2^exponent``: the largest residue accepted; ``magnitude``: ``2^magnitude`` bounds the values."""

    dtype: str
    operations: int
    magnitude: int
    exponent: int

    @property
    def bound(self) -> Fraction:
        return Fraction(2) ** self.exponent

    def text(self) -> str:
        return power_of_two(self.exponent)

    def why(self) -> str:
        """How the allowance was derived, in one clause (every number an exact power of two)."""
        return (f"{self.dtype} rounding allowance: {power_of_two(ceil_log2(self.operations))} operations \u00d7 "
                f"{power_of_two(-UNIT_ROUNDOFF_BITS[self.dtype])} \u00d7 values \u2264 "
                f"{power_of_two(self.magnitude)}, two computations")


def rounding_allowance(dtype: str, operations: int, magnitude: int) -> Allowance:
    """The allowance for two computations of ``operations`` rounded operations each on values of
    absolute value at most ``2^magnitude``, in ``dtype``."""
    if dtype not in UNIT_ROUNDOFF_BITS:
        raise InvalidInputError(f"dtype must be one of {tuple(UNIT_ROUNDOFF_BITS)}, got {dtype!r}")
    if isinstance(operations, bool) or not isinstance(operations, int) or operations < 1:
        raise InvalidInputError(f"operations must be a positive integer, got {operations!r}")
    exponent = ceil_log2(operations) - UNIT_ROUNDOFF_BITS[dtype] + magnitude + 1
    return Allowance(dtype, operations, magnitude, exponent)


def exact_max_gap(a, b) -> tuple:
    """``(max |a - b|, max(|a|, |b|))`` over the entries, as exact Fractions (``None`` when an entry is
    not finite or the shapes differ): no rounding in the subtraction, whatever the hardware."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return None, None
    gap = size = Fraction(0)
    for x, y in zip(a.ravel().tolist(), b.ravel().tolist()):
        fx, fy = Fraction(x), Fraction(y)
        gap, size = max(gap, abs(fx - fy)), max(size, abs(fx), abs(fy))
    return gap, size


def first_index_above(a, b, threshold: Fraction):
    """The first index (C order) where ``|a - b| > threshold`` exactly, or ``None``.  An entry that is
    not finite proves no difference (a broken kernel's NaN is no witness)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return None
    for flat, (x, y) in enumerate(zip(a.ravel().tolist(), b.ravel().tolist())):
        if math.isfinite(x) and math.isfinite(y) and abs(Fraction(x) - Fraction(y)) > threshold:
            return tuple(int(n) for n in np.unravel_index(flat, a.shape))
    return None
