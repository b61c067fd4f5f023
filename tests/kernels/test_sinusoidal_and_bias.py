"""Sinusoidal table, relative-bias scores and ALiBi slopes against hand-written references."""

import numpy as np
import pytest
import sympy as sp

from symproof import InvalidInputError
from symproof.kernels import alibi_bias, alibi_slopes, alibi_slopes_exact, relative_bias_scores, sinusoidal_table
from symproof.kernels._reference import alibi_slopes_reference, relative_bias_loop, sinusoidal_loop


@pytest.mark.parametrize("n, d, base", [(5, 4, 10000.0), (40, 16, 10000.0), (7, 10, 100.0), (3, 2, 2.5)])
def test_interleaved_table_matches_loop(n, d, base):
    np.testing.assert_allclose(sinusoidal_table(n, d, base=base), sinusoidal_loop(n, d, base), rtol=0, atol=1e-13)


def test_concatenated_layout_is_a_column_permutation_of_interleaved():
    interleaved = sinusoidal_table(9, 8)
    concatenated = sinusoidal_table(9, 8, layout="concatenated")
    np.testing.assert_array_equal(concatenated, interleaved[:, [0, 2, 4, 6, 1, 3, 5, 7]])


def test_table_rows_have_norm_half_width():
    table = sinusoidal_table(50, 32)
    np.testing.assert_allclose(np.sum(table**2, axis=1), 16.0, rtol=1e-14)


def test_table_d4_first_rows():
    # chapter sin.table_d4, frequencies 1 and 1/100
    row = sinusoidal_table(2, 4)[1]
    np.testing.assert_allclose(row, [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)], rtol=1e-15)


def test_odd_width_rejected_without_rule():
    with pytest.raises(InvalidInputError, match=r"d must be even .* odd_rule='zero'"):
        sinusoidal_table(4, 5)


@pytest.mark.parametrize("rule", ["zero", "sin"])
def test_odd_width_rules(rule):
    table = sinusoidal_table(6, 5, odd_rule=rule)
    assert table.shape == (6, 5)
    t = np.arange(6)
    omega = [10000 ** (-2 * r / 5) for r in range(3)]
    np.testing.assert_allclose(table[:, 2], np.sin(t * omega[1]), atol=1e-15)
    last = np.zeros(6) if rule == "zero" else np.sin(t * omega[2])
    np.testing.assert_allclose(table[:, 4], last, atol=1e-15)


@pytest.mark.parametrize("n_heads", list(range(1, 17)) + [24, 32, 48, 64])
def test_alibi_slopes_match_reference(n_heads):
    np.testing.assert_allclose(alibi_slopes(n_heads), alibi_slopes_reference(n_heads), rtol=1e-14)


def test_alibi_slopes_exact_for_eight_heads():
    assert alibi_slopes_exact(8) == [sp.Rational(1, 2**h) for h in range(1, 9)]


def test_alibi_slopes_for_twelve_heads_interleave():
    # 8 slopes of 8 heads, then slopes 1, 3, 5, 7 of 16 heads
    assert alibi_slopes_exact(12)[8:] == [sp.Pow(2, sp.Rational(-h, 2)) for h in (1, 3, 5, 7)]


def test_relative_bias_scores_match_loop_with_alibi():
    rng = np.random.default_rng(0)
    x, A = rng.standard_normal((3, 6, 4)), rng.standard_normal((4, 4))
    got = relative_bias_scores(x, A, alibi_bias(3, 6))
    slopes = alibi_slopes_reference(3)
    for h in range(3):
        want = relative_bias_loop(x[h], A, lambda o, m=slopes[h]: -m * abs(o))
        np.testing.assert_allclose(got[h], want, rtol=1e-13, atol=1e-13)


def test_relative_bias_accepts_callable():
    rng = np.random.default_rng(1)
    x, A = rng.standard_normal((5, 3)), rng.standard_normal((3, 3))
    got = relative_bias_scores(x, A, lambda offsets: 0.5 * offsets)
    np.testing.assert_allclose(got, relative_bias_loop(x, A, lambda o: 0.5 * o), rtol=1e-13, atol=1e-13)


def test_relative_bias_rejects_wrong_length():
    with pytest.raises(InvalidInputError, match=r"2T-1 = 9"):
        relative_bias_scores(np.zeros((5, 3)), np.eye(3), np.zeros(5))
