"""Bad input raises one clear InvalidInputError; the wording is pinned because users read it."""

import numpy as np
import pytest

from symproof import InvalidInputError
from symproof.kernels import RopeConfig, alibi_slopes, rope_apply, rope_scores

CASES = [
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.array([0.0, 1.0])), r"positions must be integer position ids, got dtype float64 \(round them", id="float-positions"),
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.arange(3)), r"positions of shape \(3,\) do not broadcast to x.shape\[:-1\] = \(2,\)", id="positions-shape"),
    pytest.param(lambda: rope_apply(np.zeros((2, 7)), np.arange(2)), r"head_dim must be an even integer >= 2", id="odd-width"),
    pytest.param(lambda: rope_apply(np.zeros(8), 0), r"x must have shape \(..., T, d_k\), got shape \(8,\)", id="vector-x"),
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.arange(2), rotary_dim=4), r"partial rotation needs an explicit frequency denominator", id="partial-without-denominator"),
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.arange(2), pairing="interleaved"), r"unknown pairing 'interleaved'", id="pairing"),
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.arange(2), freqs=[1.0]), r"freqs must hold rotary_dim / 2 = 4 frequencies, got 1", id="freqs-length"),
    pytest.param(lambda: rope_apply(np.zeros((2, 8)), np.arange(2), config=RopeConfig(head_dim=16)), r"x has last dimension 8, expected head_dim = 16", id="config-width"),
    pytest.param(lambda: rope_apply(np.array([["a", "b"]]), [0]), r"x must hold real numbers", id="strings"),
    pytest.param(lambda: rope_scores(np.zeros((2, 8)), np.zeros((3, 8)), [0, 1], [0, 1, 2], q_offset=0.5), r"q_offset must be an integer", id="offset"),
    pytest.param(lambda: alibi_slopes(0), r"n_heads must be a positive integer, got 0", id="alibi-heads"),
]


@pytest.mark.parametrize("call, message", CASES)
def test_bad_input_message(call, message):
    with pytest.raises(InvalidInputError, match=message):
        call()


def test_config_dtype_is_used():
    out = rope_apply(np.ones((2, 8), dtype=np.float64), [0, 1], config=RopeConfig(head_dim=8, dtype="float32"))
    assert out.dtype == np.float32


def test_index_origin_shifts_every_position():
    x = np.random.default_rng(0).standard_normal((3, 8))
    shifted = rope_apply(x, [0, 1, 2], config=RopeConfig(head_dim=8, index_origin=1))
    np.testing.assert_allclose(shifted, rope_apply(x, [1, 2, 3]), rtol=0, atol=1e-15)
