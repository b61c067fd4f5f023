"""The exported kernels of the shipped files with heads against references written from the papers' code.

- ``retnet``: torchscale's ``RetNetRelPos`` and ``theta_shift`` (Sun et al. 2023), re-typed in torch:
  angles ``1 / 10000**linspace(0, 1, d/2)`` repeated per pair, ``rotate_every_two``, and the decay mask
  ``exp((n - m) * log(1 - 2**(-5 - h)))`` on ``n >= m``.  The file states the decayed score without
  the parallel form's two row normalisations (its comment says so), so the comparison is of that score.
- ``rope_alibi``: HF transformers' own Llama ``apply_rotary_pos_emb`` (rotate_half) at base 10000 plus
  ALiBi's ``get_slopes`` from the ALiBi repository (Press et al. 2022), bias ``-slope * |j - i|``.

Neither reference reads symproof's frequencies, scales or slopes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from symproof.variants import load_variant, shipped_variants
from symproof.variants._export import variant_source

torch = pytest.importorskip("torch")


def _kernel(name: str, target: str) -> dict:
    namespace: dict = {}
    (text,) = variant_source(load_variant(shipped_variants()[name]), target).values()
    exec(compile(text, f"<{name} {target}>", "exec"), namespace)  # noqa: S102 - symproof's own generated file
    return namespace


def _retnet_reference(q, k, heads: int):
    """torchscale's retention score before its normalisations, for every head: (heads, T, T)."""
    d, length = q.shape[-1], q.shape[-2]
    angle = 1.0 / (10000 ** torch.linspace(0, 1, d // 2, dtype=torch.float64))
    angle = angle.unsqueeze(-1).repeat(1, 2).flatten()
    decay = torch.log(1 - 2 ** (-5 - torch.arange(heads, dtype=torch.float64)))
    index = torch.arange(length, dtype=torch.float64)
    sin, cos = torch.sin(index[:, None] * angle[None, :]), torch.cos(index[:, None] * angle[None, :])

    def rotate_every_two(x):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)

    def theta_shift(x):
        return (x * cos) + (rotate_every_two(x) * sin)

    mask = torch.tril(torch.ones(length, length, dtype=torch.float64))
    mask = torch.masked_fill(index[:, None] - index[None, :], ~mask.bool(), float("inf"))
    mask = torch.nan_to_num(torch.exp(mask * decay[:, None, None]))
    return (theta_shift(q) @ theta_shift(k).transpose(-1, -2)) * mask


def _alibi_slopes(n: int) -> list:
    """ALiBi's get_slopes (the repository's, for a power-of-two head count)."""
    start = 2 ** (-2 ** -(math.log2(n) - 3))
    return [start * start**i for i in range(n)]


def _rope_alibi_reference(q, k, heads: int):
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    d, length = q.shape[-1], q.shape[-2]
    inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    positions = torch.arange(length, dtype=torch.float64)
    freqs = positions[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    qr, kr = apply_rotary_pos_emb(q[None], k[None], emb.cos()[None], emb.sin()[None])
    slopes = torch.tensor(_alibi_slopes(heads), dtype=torch.float64)
    distance = (positions[None, :] - positions[:, None]).abs()
    return (qr[0] @ kr[0].transpose(-1, -2)) - slopes[:, None, None] * distance[None]


CASES = {"retnet": (_retnet_reference, True), "rope_alibi": (_rope_alibi_reference, False)}


@pytest.mark.parametrize("target", ["numpy", "torch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_scores_match_the_papers_code(name, target):
    reference, causal = CASES[name]
    variant = load_variant(shipped_variants()[name])
    kernel = _kernel(name, target)
    heads, length = variant.heads, 48
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, heads, length, variant.width))
    expected = reference(torch.tensor(q), torch.tensor(k), heads).numpy()
    positions = np.arange(length, dtype=np.float64)
    bias = np.asarray(kernel["bias"](length, length)) if variant.bias is not None else np.zeros((heads, length, length))
    for h in range(heads):
        qr = np.asarray(kernel["apply"](q[h], positions, "query", head=h))
        kr = np.asarray(kernel["apply"](k[h], positions, "key", head=h))
        got = qr @ kr.T + bias[h]
        keep = np.tril(np.ones((length, length), dtype=bool)) if causal else np.ones((length, length), dtype=bool)
        np.testing.assert_allclose(got[keep], expected[h][keep], rtol=1e-11, atol=1e-11)
