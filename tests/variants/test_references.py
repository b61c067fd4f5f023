"""Generated frequencies and slopes against the published formulas, computed here independently.

Each reference below is written from the published description of the method
(float64 NumPy, the way the reference implementations compute it), not from
symproof's definitions; the ALiBi slopes use ``alibi_slopes_reference``, the
hand-written reference the kernels are tested against, written the same way.
"""

import math

import numpy as np
import pytest

from symproof.kernels._reference import alibi_slopes_reference
from symproof.variants import build_kernel, load_variant, shipped_variants


def _freqs(name):
    variant = load_variant(shipped_variants()[name])
    return variant, build_kernel(variant).frequencies


def _inv_freq(base, dim):
    return 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))


def test_ntk_scaled_base():
    variant, got = _freqs("ntk_scaled_base")
    dim, s = variant.width, 4
    expected = _inv_freq(10000 * s ** (dim / (dim - 2)), dim)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # the lowest frequency is divided by exactly s, the highest is unchanged
    assert got[0] == 1.0
    assert got[-1] == pytest.approx(_inv_freq(10000, dim)[-1] / s, rel=1e-13)


def test_yarn_frequencies_and_attention_factor():
    variant, got = _freqs("yarn")
    dim, base, factor, original, beta_fast, beta_slow = 128, 10000, 16, 4096, 32, 1

    def correction_dim(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(correction_dim(beta_fast)), 0)
    high = min(math.ceil(correction_dim(beta_slow)), dim - 1)
    ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
    extrapolation = _inv_freq(base, dim)
    interpolation = extrapolation / factor
    expected = interpolation * ramp + extrapolation * (1 - ramp)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    assert (low, high) == (20, 46)
    mscale = float(variant.factor.build(variant.width_env()))
    assert mscale == pytest.approx(0.1 * math.log(factor) + 1.0, rel=1e-15)
    x = np.zeros((1, dim))
    x[0, 0] = 1.0
    rotated = build_kernel(variant).apply(x, np.array([0]))
    assert np.linalg.norm(rotated) == pytest.approx(mscale, rel=1e-14)


def test_llama3_frequencies():
    _, got = _freqs("llama3")
    dim, base, factor, low_ff, high_ff, original = 128, 500000.0, 8, 1, 4, 8192
    inv_freq = _inv_freq(base, dim)
    low_wavelen, high_wavelen = original / low_ff, original / high_ff
    wavelen = 2 * math.pi / inv_freq
    scaled = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
    smooth = (original / wavelen - low_ff) / (high_ff - low_ff)
    smoothed = (1 - smooth) * scaled / factor + smooth * scaled
    medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
    expected = np.where(medium, smoothed, scaled)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # all three bands occur at this width, so the test exercises each branch
    assert (wavelen < high_wavelen).any() and (wavelen > low_wavelen).any() and medium.any()


@pytest.mark.parametrize("heads", [1, 2, 5, 8, 12, 16, 24, 33])
def test_alibi_slopes_for_any_head_count(heads):
    from symproof.variants import Variant

    shipped = load_variant(shipped_variants()["alibi"])
    data = {"name": "alibi", "kind": "bias",
            "bias": {"formula": shipped.bias.text, "heads": heads, "slope": shipped.slope.text}}
    got = build_kernel(Variant.from_dict(data)).frequencies
    np.testing.assert_allclose(got, alibi_slopes_reference(heads), rtol=1e-14)


def test_alibi_bias_is_minus_slope_times_distance():
    variant = load_variant(shipped_variants()["alibi"])
    bias = build_kernel(variant).bias(5, 5)
    slopes = np.array(alibi_slopes_reference(12))
    distance = np.abs(np.arange(5)[None, :] - np.arange(5)[:, None])
    np.testing.assert_allclose(bias, -slopes[:, None, None] * distance[None], rtol=1e-14, atol=0)


def test_t2t_timescales_and_layout():
    variant = load_variant(shipped_variants()["t2t_concatenated"])
    n = variant.width // 2
    min_timescale, max_timescale = 1.0, 1.0e4
    increment = math.log(max_timescale / min_timescale) / max(n - 1, 1)
    inv_timescales = min_timescale * np.exp(np.arange(n, dtype=np.float64) * -increment)
    got = build_kernel(variant)
    np.testing.assert_allclose(got.frequencies, inv_timescales, rtol=1e-13)
    positions = np.arange(7, dtype=np.float64)
    scaled = positions[:, None] * inv_timescales[None, :]
    expected = np.concatenate([np.sin(scaled), np.cos(scaled)], axis=1)
    np.testing.assert_allclose(got.table(positions), expected, rtol=0, atol=1e-12)
    # the last pair reaches exactly 1/base (the chapter's base^(-2r/d) stops short of it)
    assert got.frequencies[-1] == pytest.approx(1e-4, rel=1e-14)


def test_linear_interpolation_is_rope_at_scaled_frequencies():
    kernels = pytest.importorskip("symproof.kernels")
    variant, got = _freqs("linear_interpolation")
    x = np.random.default_rng(3).standard_normal((4, variant.width))
    positions = np.array([0, 3, 4, 4096])
    expected = kernels.rope_apply(x, positions, head_dim=variant.width, freqs=_inv_freq(10000, variant.width) / 4)
    np.testing.assert_allclose(build_kernel(variant).apply(x, positions), expected, rtol=1e-12, atol=1e-12)


def test_yarn_with_low_equal_high_follows_transformers(tmp_path):
    """beta_fast == beta_slow = 700 puts both ends of the ramp at pair 0 (low == high == 0): the
    ramp is the steep one transformers' ``linear_ramp_factor`` uses (high + 0.001), not a 0/0."""
    torch = pytest.importorskip("torch")
    rope_utils = pytest.importorskip("transformers.modeling_rope_utils")
    from pathlib import Path

    from transformers import LlamaConfig

    text = Path(shipped_variants()["yarn"]).read_text(encoding="utf-8")
    text = text.replace("beta_fast = 32", "beta_fast = 700").replace("beta_slow = 1", "beta_slow = 700")
    path = tmp_path / "yarn_degenerate.toml"
    path.write_text(text, encoding="utf-8")
    variant = load_variant(path)
    env = dict(variant._pair_independent_env()[0])
    assert env["low"] == env["high"] == 0  # the degenerate case, reached through the published formulas
    got = build_kernel(variant).frequencies
    config = LlamaConfig(hidden_size=128, num_attention_heads=1, head_dim=128, max_position_embeddings=65536,
                         rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 16.0,
                                          "beta_fast": 700.0, "beta_slow": 700.0,
                                          "original_max_position_embeddings": 4096})
    expected, _ = rope_utils._compute_yarn_parameters(config, "cpu")
    assert isinstance(expected, torch.Tensor)
    np.testing.assert_allclose(got, expected.double().numpy(), rtol=2e-6)  # transformers computes in float32
    assert got[0] == 1.0 and got[1] == pytest.approx(_inv_freq(10000, 128)[1] / 16, rel=1e-15)
