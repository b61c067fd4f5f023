"""Every generated RoPE kernel against every hand-written reference, configuration by configuration."""

import numpy as np
import pytest

from symproof.kernels import ROPE_REFERENCES, rope_apply, rope_backward, rope_scores
from symproof.kernels._reference import reference_frequencies, scores_loop

# (head_dim, rotary_dim, denominator, base, pairing, x shape before d_k, positions shape)
CONFIGS = [
    pytest.param(8, 8, 8, 10000.0, "adjacent", (3, 5), (5,), id="adjacent-full"),
    pytest.param(8, 8, 8, 10000.0, "half", (3, 5), (5,), id="half-full"),
    pytest.param(16, 8, 8, 10000.0, "adjacent", (2, 4, 6), (2, 1, 6), id="adjacent-partial-denominator-dr"),
    pytest.param(16, 8, 16, 10000.0, "half", (2, 4, 6), (2, 1, 6), id="half-partial-denominator-dk"),
    pytest.param(12, 4, 12, 500000.0, "adjacent", (2, 7), (2, 7), id="per-sample-positions-base-5e5"),
    pytest.param(6, 6, 6, 10.0, "half", (4,), (4,), id="small-base-three-pairs"),
    pytest.param(4, 4, 4, 10000.0, "adjacent", (2, 3), (2, 3), id="left-padding-style-ids"),
    # (B, T, H, d) with ids constant over heads: the blocked half-pairing path
    pytest.param(16, 8, 16, 10000.0, "half", (2, 5, 3), (5, 1), id="half-partial-bthd-shared-positions"),
    pytest.param(8, 8, 8, 10000.0, "half", (2, 5, 3), (2, 5, 1), id="half-bthd-per-sample-positions"),
]


def _inputs(head_dim, lead, positions_shape, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(lead + (head_dim,))
    positions = rng.integers(0, 3000, positions_shape)
    return x, positions


def _relative_error(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("reference", sorted(ROPE_REFERENCES))
@pytest.mark.parametrize("head_dim, rotary_dim, denominator, base, pairing, lead, positions_shape", CONFIGS)
@pytest.mark.parametrize("direction", ["apply", "backward"])
def test_float64_kernel_matches_reference(reference, head_dim, rotary_dim, denominator, base, pairing, lead,
                                          positions_shape, direction):
    x, positions = _inputs(head_dim, lead, positions_shape)
    kernel = rope_apply if direction == "apply" else rope_backward
    got = kernel(x, positions, rotary_dim=rotary_dim, denominator=denominator, base=base, pairing=pairing)
    freqs = reference_frequencies(rotary_dim, base, denominator)
    want = ROPE_REFERENCES[reference](x, positions, freqs, rotary_dim=rotary_dim, pairing=pairing,
                                      transpose=direction == "backward")
    assert got.dtype == np.float64 and got.shape == x.shape
    assert _relative_error(got, want) < 1e-12
    np.testing.assert_array_equal(got[..., rotary_dim:], x[..., rotary_dim:])


# float32: inputs and outputs rounded to 24 bits, angles still computed in float64; a rotated
# coordinate a c - b s then carries a few float32 roundings: 4 ulp of the row's largest entry.
FLOAT32_BOUND = 4 * np.finfo(np.float32).eps


@pytest.mark.parametrize("head_dim, rotary_dim, denominator, base, pairing, lead, positions_shape", CONFIGS)
def test_float32_kernel_within_stated_bound(head_dim, rotary_dim, denominator, base, pairing, lead, positions_shape):
    x, positions = _inputs(head_dim, lead, positions_shape, seed=1)
    x32 = x.astype(np.float32)
    got = rope_apply(x32, positions, rotary_dim=rotary_dim, denominator=denominator, base=base, pairing=pairing)
    assert got.dtype == np.float32
    want = ROPE_REFERENCES["loop"](x32.astype(np.float64), positions, reference_frequencies(rotary_dim, base, denominator),
                                   rotary_dim=rotary_dim, pairing=pairing)
    scale = np.max(np.abs(x32), axis=-1, keepdims=True)
    assert np.all(np.abs(got - want) <= FLOAT32_BOUND * scale)


def test_explicit_frequencies_override_base():
    x, positions = _inputs(8, (5,), (5,))
    freqs = [1.0, 0.5, 0.25, 0.125]
    got = rope_apply(x, positions, freqs=freqs, base=2.0)
    for reference in ROPE_REFERENCES.values():
        assert _relative_error(got, reference(x, positions, freqs)) < 1e-12


def test_in_place_output_equals_fresh_output():
    for pairing in ("adjacent", "half"):
        x, positions = _inputs(16, (4, 9), (4, 9))
        from symproof.kernels import rope_kernel, rope_spec

        kernel = rope_kernel(rope_spec(head_dim=16, rotary_dim=8, denominator=16, pairing=pairing))
        fresh = kernel.apply(x, positions)
        y = x.copy()
        assert kernel.apply(y, positions, out=y) is y
        np.testing.assert_array_equal(y, fresh)


# Several blocks of positions (the last one partial) on the blocked half path: in place, the
# diagonal product overwrites x, so the off-diagonal product must have read it first.
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("positions_shape", [(300, 1), (2, 300, 1)], ids=["shared", "per-sample"])
@pytest.mark.parametrize("direction", ["apply", "backward"])
def test_half_blocked_path_in_place_equals_fresh_and_reference(dtype, positions_shape, direction):
    from symproof.kernels import rope_kernel, rope_spec

    x, positions = _inputs(128, (2, 300, 4), positions_shape, seed=5)
    x = x.astype(dtype)
    kernel = rope_kernel(rope_spec(head_dim=128, rotary_dim=96, denominator=128, pairing="half"))
    rotate = getattr(kernel, direction)
    fresh = rotate(x, positions)
    y = x.copy()
    assert rotate(y, positions, out=y) is y
    np.testing.assert_array_equal(y, fresh)
    want = ROPE_REFERENCES["rotate_half"](x.astype(np.float64), positions, reference_frequencies(96, 10000.0, 128),
                                          rotary_dim=96, pairing="half", transpose=direction == "backward")
    assert _relative_error(fresh, want) < (1e-12 if dtype == np.float64 else FLOAT32_BOUND)
    np.testing.assert_array_equal(fresh[..., 96:], x[..., 96:])


@pytest.mark.parametrize("pairing", ["adjacent", "half"])
def test_scores_with_offsets_match_loop(pairing):
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((4, 8)), rng.standard_normal((6, 8))
    q_ids, k_ids = np.arange(4), np.arange(6)
    got = rope_scores(q, k, q_ids, k_ids, q_offset=10, k_offset=7, pairing=pairing)
    want = scores_loop(q, k, q_ids + 10, k_ids + 7, reference_frequencies(8), pairing=pairing)
    assert _relative_error(got, want) < 1e-12


def test_scores_depend_only_on_the_offset():
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((3, 8)), rng.standard_normal((3, 8))
    ids = np.arange(3)
    base = rope_scores(q, k, ids, ids)
    shifted = rope_scores(q, k, ids, ids, q_offset=1000, k_offset=1000)
    assert _relative_error(shifted, base) < 1e-10


# The comparison must be able to fail: each wrong variant below is caught by every reference.
WRONG = [
    pytest.param(dict(pairing="half"), dict(pairing="adjacent"), id="pairing-swapped"),
    pytest.param(dict(rotary_dim=8, denominator=16), dict(rotary_dim=8, denominator=8), id="denominator-dk-vs-dr"),
    pytest.param(dict(base=10001.0), dict(base=10000.0), id="base-off-by-one"),
]


@pytest.mark.parametrize("kernel_options, reference_options", WRONG)
@pytest.mark.parametrize("reference", sorted(ROPE_REFERENCES))
def test_wrong_configuration_is_detected(kernel_options, reference_options, reference):
    x, positions = _inputs(16, (2, 5), (2, 5), seed=5)
    got = rope_apply(x, positions, **kernel_options)
    rotary = reference_options.get("rotary_dim", 16)
    freqs = reference_frequencies(rotary, reference_options.get("base", 10000.0), reference_options.get("denominator"))
    want = ROPE_REFERENCES[reference](x, positions, freqs, rotary_dim=rotary,
                                      pairing=reference_options.get("pairing", "adjacent"))
    assert _relative_error(got, want) > 1e-6


# (B, H, T, d) with ids constant over heads, T longer than one block: blocks of positions are
# split, and the heads (the axis the table is broadcast along) are walked innermost.
@pytest.mark.parametrize("positions_shape", [(5000,), (2, 1, 5000)], ids=["shared", "per-sample"])
@pytest.mark.parametrize("direction", ["apply", "backward"])
def test_half_general_path_over_several_blocks(positions_shape, direction):
    from symproof.kernels import rope_kernel, rope_spec

    x, positions = _inputs(16, (2, 3, 5000), positions_shape, seed=6)
    kernel = rope_kernel(rope_spec(head_dim=16, rotary_dim=12, denominator=16, pairing="half"))
    rotate = getattr(kernel, direction)
    fresh = rotate(x, positions)
    want = ROPE_REFERENCES["rotate_half"](x, positions, reference_frequencies(12, 10000.0, 16), rotary_dim=12,
                                          pairing="half", transpose=direction == "backward")
    assert _relative_error(fresh, want) < 1e-12
    y = x.copy()
    assert rotate(y, positions, out=y) is y
    np.testing.assert_array_equal(y, fresh)
