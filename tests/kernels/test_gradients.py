"""Backward kernels against finite differences of the forward kernels."""

import numpy as np
import pytest

from symproof.kernels import rope_apply, rope_backward, rope_score_frequency_gradient, rope_scores

CASES = [
    pytest.param(dict(pairing="adjacent"), id="adjacent"),
    pytest.param(dict(pairing="half"), id="half"),
    pytest.param(dict(pairing="adjacent", rotary_dim=4, denominator=8), id="partial"),
]


@pytest.mark.parametrize("options", CASES)
def test_backward_is_the_gradient_of_apply(options):
    # L(x) = <g, rope(x)>; dL/dx = R^T g, checked along random directions by central differences.
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    positions = rng.integers(0, 100, (2, 5))
    grad = rope_backward(g, positions, **options)
    h = 1e-6
    for _ in range(5):
        v = rng.standard_normal(x.shape)
        numeric = (np.sum(g * rope_apply(x + h * v, positions, **options))
                   - np.sum(g * rope_apply(x - h * v, positions, **options))) / (2 * h)
        assert abs(numeric - np.sum(grad * v)) < 1e-8 * max(1.0, abs(numeric))
    np.testing.assert_allclose(np.linalg.norm(grad, axis=-1), np.linalg.norm(g, axis=-1), rtol=1e-13)


def test_backward_undoes_apply():
    rng = np.random.default_rng(1)
    x, positions = rng.standard_normal((3, 6, 8)), rng.integers(0, 5000, (3, 6))
    for pairing in ("adjacent", "half"):
        round_trip = rope_backward(rope_apply(x, positions, pairing=pairing), positions, pairing=pairing)
        np.testing.assert_allclose(round_trip, x, rtol=0, atol=1e-13)


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
def test_frequency_gradient_matches_central_differences(pairing):
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((3, 8)), rng.standard_normal((4, 8))
    q_ids, k_ids = np.array([0, 5, 9]), np.array([1, 2, 30, 7])
    freqs = np.array([0.9, 0.3, 0.05, 0.011])
    grad = rope_score_frequency_gradient(q, k, q_ids, k_ids, freqs=freqs, pairing=pairing)
    assert grad.shape == (3, 4, 4)
    h = 1e-6
    for r in range(4):
        up, down = freqs.copy(), freqs.copy()
        up[r] += h
        down[r] -= h
        numeric = (rope_scores(q, k, q_ids, k_ids, freqs=up, pairing=pairing)
                   - rope_scores(q, k, q_ids, k_ids, freqs=down, pairing=pairing)) / (2 * h)
        np.testing.assert_allclose(grad[..., r], numeric, rtol=1e-6, atol=1e-6)


def test_frequency_gradient_vanishes_at_offset_zero_and_grows_with_offset():
    q = k = np.array([[1.0, 0.0]])
    # s = cos(D w) for q = k = (1, 0): ds/dw = -D sin(D w)
    for offset in (0, 1, 3, 10):
        grad = rope_score_frequency_gradient(q, k, [0], [offset], freqs=[0.1])
        assert grad[0, 0, 0] == pytest.approx(-offset * np.sin(offset * 0.1), abs=1e-15)
