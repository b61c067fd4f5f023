"""relayout_pairing: the weight re-layout between adjacent and half-split RoPE pairing."""

import numpy as np
import pytest

from symproof import InvalidInputError, pairing_permutation, relayout_pairing


def _rope(x, m, freqs, pairing):
    """Float RoPE of one head vector, written independently of the library's pair tables."""
    d_k = x.shape[0]
    out = x.astype(float).copy()
    for r, w in enumerate(freqs):
        a, b = (2 * r, 2 * r + 1) if pairing == "adjacent" else (r, r + d_k // 2)
        c, s = np.cos(m * w), np.sin(m * w)
        out[a], out[b] = x[a] * c - x[b] * s, x[a] * s + x[b] * c
    return out


@pytest.mark.parametrize("d_k, expected", [
    (2, [0, 1]),
    (4, [0, 2, 1, 3]),
    (8, [0, 2, 4, 6, 1, 3, 5, 7]),
])
def test_one_head_rows_follow_the_permutation(d_k, expected):
    w = np.arange(d_k * 3).reshape(d_k, 3)
    out = relayout_pairing(w, 1, "adjacent", "half")
    assert out[:, 0].tolist() == [3 * k for k in expected]
    assert pairing_permutation(d_k, "adjacent", "half") == expected


@pytest.mark.parametrize("n_heads, d_k", [(1, 4), (2, 4), (3, 8), (4, 2)])
def test_heads_are_permuted_independently(n_heads, d_k):
    w = np.arange(n_heads * d_k)
    out = relayout_pairing(w, n_heads, "adjacent", "half")
    perm = pairing_permutation(d_k, "adjacent", "half")
    for h in range(n_heads):
        assert out[h * d_k:(h + 1) * d_k].tolist() == [h * d_k + p for p in perm]


@pytest.mark.parametrize("src, dst", [("adjacent", "half"), ("half", "adjacent")])
@pytest.mark.parametrize("n_heads, d_k", [(1, 2), (2, 4), (2, 8), (3, 16)])
def test_round_trip_gives_back_the_weights(src, dst, n_heads, d_k):
    w = np.random.default_rng(0).normal(size=(n_heads * d_k, 5))
    back = relayout_pairing(relayout_pairing(w, n_heads, src, dst), n_heads, dst, src)
    assert np.array_equal(back, w)


def test_same_pairing_is_the_identity_and_a_copy():
    w = np.arange(16).reshape(8, 2)
    out = relayout_pairing(w, 2, "half", "half")
    assert np.array_equal(out, w)
    out[0, 0] = 99
    assert w[0, 0] == 0


def test_input_is_not_modified_and_dtype_is_kept():
    w = np.arange(8, dtype=np.int32).reshape(4, 2)
    before = w.copy()
    out = relayout_pairing(w, 1, "adjacent", "half")
    assert np.array_equal(w, before)
    assert out.dtype == np.int32


@pytest.mark.parametrize("n_heads, d_k", [(1, 4), (2, 8), (4, 16)])
def test_half_rope_on_relaid_weights_gives_adjacent_scores(n_heads, d_k):
    rng = np.random.default_rng(1)
    d_model = 6
    wq, wk = rng.normal(size=(2, n_heads * d_k, d_model))
    x_i, x_j = rng.normal(size=(2, d_model))
    freqs = 10000.0 ** (-2 * np.arange(d_k // 2) / d_k)
    wq_h, wk_h = (relayout_pairing(w, n_heads, "adjacent", "half") for w in (wq, wk))
    for h in range(n_heads):
        rows = slice(h * d_k, (h + 1) * d_k)
        adjacent = _rope(wq[rows] @ x_i, 3, freqs, "adjacent") @ _rope(wk[rows] @ x_j, 7, freqs, "adjacent")
        half = _rope(wq_h[rows] @ x_i, 3, freqs, "half") @ _rope(wk_h[rows] @ x_j, 7, freqs, "half")
        swapped = _rope(wq[rows] @ x_i, 3, freqs, "half") @ _rope(wk[rows] @ x_j, 7, freqs, "half")
        assert half == pytest.approx(adjacent, rel=1e-12, abs=1e-12)
        if d_k > 2:
            assert swapped != pytest.approx(adjacent, rel=1e-6)


@pytest.mark.parametrize("args, words", [
    ((np.zeros((6, 3)), 4), ["6 output rows", "not divisible by n_heads = 4"]),
    ((np.zeros((6, 3)), 2), ["d_k = 6 / 2 = 3", "even"]),
    ((np.zeros((6, 3)), 0), ["n_heads must be a positive integer"]),
    ((np.zeros((6, 3)), 1.5), ["n_heads must be a positive integer"]),
    ((np.zeros((2, 2, 2)), 1), ["shape (2, 2, 2)"]),
    ((np.zeros((4, 3)), 1, "adjacent", "interleaved"), ["unknown dst pairing 'interleaved'"]),
    ((np.zeros((4, 3)), 1, "rotate_half", "half"), ["unknown src pairing 'rotate_half'"]),
])
def test_bad_input_is_refused_with_a_message_naming_it(args, words):
    with pytest.raises(InvalidInputError) as err:
        relayout_pairing(*args)
    for word in words:
        assert word in str(err.value)
