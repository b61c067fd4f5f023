"""xformers (facebookresearch/xformers), tests/test_rope_padded.py @ ca6d2aa0d43241fc8a8dcd872debc2406160160d:
apply_scaling and _slow_rope copied verbatim (the pure-PyTorch reference its Triton rope_padded kernel is tested
against), audited as they are. Its positions are keyword-only (seqpos), its Llama 3 scaling is named
use_dynamic_scaling with dynamic_* parameters. Licence: xformers' (BSD-3-Clause).
"""
import math
from functools import partial
from typing import Optional

import torch


def apply_scaling(
    freqs: torch.Tensor,
    old_context_len: float,
    low_freq_factor: float,
    high_freq_factor: float,
    dynamic_scale_factor: float,
):
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    assert low_freq_wavelen >= high_freq_wavelen

    for idx, freq in enumerate(freqs):
        wavelen = 2 * math.pi / freq
        if wavelen > low_freq_wavelen:
            freqs[idx] = freq / dynamic_scale_factor

        if high_freq_wavelen <= wavelen and wavelen <= low_freq_wavelen:
            assert low_freq_wavelen != high_freq_wavelen
            smooth = (old_context_len / wavelen - low_freq_factor) / (
                high_freq_factor - low_freq_factor
            )
            freqs[idx] = (1 - smooth) * freqs[
                idx
            ] / dynamic_scale_factor + smooth * freqs[idx]
    return freqs


def _slow_rope(
    x: torch.Tensor,
    *,
    seqpos: Optional[torch.Tensor] = None,
    theta=10000,
    linear_scale=1,
    adjacents: bool = True,
    use_dynamic_scaling: bool = False,
    dynamic_old_context_len: float = 8192.0,
    dynamic_scale_factor: float = 16.0,
    dynamic_low_freq_factor: float = 1.0,
    dynamic_high_freq_factor: float = 32.0,
):
    """
    Simple rope calculation of rope of one tensor

    Args:
        x: input, shape (B, M, H, K).
        seqpos: gives the position of each sequence element in x in its sequence
            (shape (M,)).
    """
    x_shape = x.shape
    dim = x_shape[-1]
    seq_dim = 1
    M = x_shape[seq_dim]
    assert dim % 2 == 0
    if seqpos is None:
        seqpos = torch.arange(M, device=x.device)
    power = torch.arange(0, dim, 2, device=x.device)[: (dim // 2)].float() / dim
    freqs: torch.Tensor = 1.0 / (theta**power)  # type: ignore
    if use_dynamic_scaling:
        freqs = apply_scaling(
            freqs,
            dynamic_old_context_len,
            dynamic_low_freq_factor,
            dynamic_high_freq_factor,
            dynamic_scale_factor,
        )
    all_freqs = torch.outer(seqpos / linear_scale, freqs)
    freqs_cis = torch.polar(torch.ones_like(all_freqs), all_freqs)  # complex64
    for _ in range(x.ndim - seq_dim - 2):
        freqs_cis = freqs_cis[:, None]
    if adjacents:
        x_reshaped = x.float().unflatten(-1, (-1, 2))
        x_ = torch.view_as_complex(x_reshaped)
        x_out = torch.view_as_real(x_ * freqs_cis)
    else:
        x_reshaped = x.float().unflatten(-1, (2, -1)).transpose(-1, -2).contiguous()
        x_ = torch.view_as_complex(x_reshaped)
        x_out = torch.view_as_real(x_ * freqs_cis)
        x_out = x_out.transpose(-1, -2)
    return x_out.flatten(-2).type_as(x)


