"""Rounding allowances: exact powers of two, exact residues, one clear error for bad input."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symproof import InvalidInputError
from symproof.kernels import ceil_log2, exact_max_gap, first_index_above, rounding_allowance, stable_digits


@pytest.mark.parametrize("value, exponent", [
    (1, 0), (2, 1), (3, 2), (4, 2), (0.75, 0), (0.5, -1), (2.0 ** -41, -41), (2.0 ** -41 * (1 + 2.0 ** -52), -40),
    (Fraction(1, 3), -1), (5e-324, -1074),
])
def test_ceil_log2_is_exact(value, exponent):
    assert ceil_log2(value) == exponent
    assert Fraction(2) ** (exponent - 1) < Fraction(value) <= Fraction(2) ** exponent


@pytest.mark.parametrize("dtype, operations, magnitude, exponent", [
    ("float64", 69, 4, 7 - 53 + 4 + 1), ("float64", 64, 0, 6 - 53 + 1), ("float32", 4, 3, 2 - 24 + 3 + 1),
    ("float16", 1, 0, -10), ("bfloat16", 2, 1, 1 - 8 + 1 + 1),
])
def test_the_allowance_is_a_power_of_two_from_format_and_count(dtype, operations, magnitude, exponent):
    allowance = rounding_allowance(dtype, operations, magnitude)
    assert allowance.exponent == exponent and allowance.bound == Fraction(2) ** exponent
    superscript = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    assert allowance.text() == "2" + str(exponent).translate(superscript)


@pytest.mark.parametrize("dtype, operations", [("float128", 4), ("float64", 0), ("float64", True), ("float64", 2.5)])
def test_bad_input_is_one_clear_error(dtype, operations):
    with pytest.raises(InvalidInputError) as caught:
        rounding_allowance(dtype, operations, 0)
    assert "\n" not in str(caught.value)


def test_the_residue_is_exact_not_rounded():
    gap, size = exact_max_gap([0.1 + 0.2, 1.0], [0.3, 1.0])
    assert gap == Fraction(0.1 + 0.2) - Fraction(0.3) == Fraction(1, 2 ** 54)  # not 5.55e-17 rounded
    assert size == 1
    assert exact_max_gap([np.nan], [0.0]) == (None, None)
    assert exact_max_gap([1.0, 2.0], [1.0]) == (None, None)


def test_the_first_entry_far_above_a_threshold():
    a, b = np.array([[0.0, 1.0], [5.0, 2.0]]), np.array([[0.0, 1.0 + 2.0 ** -40], [0.0, 2.0]])
    assert first_index_above(a, b, Fraction(1, 2 ** 41)) == (0, 1)
    assert first_index_above(a, b, Fraction(1)) == (1, 0)
    assert first_index_above(a, b, Fraction(10)) is None
    assert first_index_above(np.array([np.inf]), np.array([0.0]), Fraction(1)) is None


@pytest.mark.parametrize("value, spread, shown", [
    (Fraction(2285687, 10 ** 6), Fraction(1, 2 ** 41), "2.29"),  # far from a rounding edge: three digits
    (Fraction(2285, 1000), Fraction(1, 2 ** 41), "2.3"),         # on the edge 2.285: the third digit is not certain
    (Fraction(22850001, 10 ** 7), Fraction(1, 10 ** 6), "2.3"),  # the edge 2.285 is within the spread
    (Fraction(1, 10 ** 9), Fraction(1, 10 ** 6), None),          # not even the sign is certain
])
def test_only_digits_the_spread_cannot_move_are_shown(value, spread, shown):
    digits = stable_digits(value, spread)
    assert (None if digits is None else str(digits)) == shown
