"""timm 1.0.31 (PyPI), timm/layers/pos_embed_sincos.py: the definitions below copied verbatim, audited as they are
(the axial 2-D rotary of timm's ViTs and EVA: ``build_rotary_pos_embed`` makes the sin and cos tables of a whole
(H, W) grid, ``apply_rot_embed`` applies them).  The two decorators the file imports from timm (``_fx``) are
replaced by the identity: they register functions for torch.fx tracing and change no value.

Licence: Apache License 2.0 (timm's); the original file's header follows.
"""

""" Sin-cos, fourier, rotary position embedding modules and functions

Hacked together by / Copyright 2022 Ross Wightman
"""
import math
from numbers import Real
from typing import List, Tuple, Optional, Union

import torch
from torch import nn as nn


def register_notrace_function(func):  # timm/layers/_fx.py registers it for fx tracing; the identity here
    return func


def pixel_freq_bands(
        num_bands: int,
        max_freq: float = 224.,
        linear_bands: bool = True,
        device: Optional[torch.device] = None,
):
    if linear_bands:
        bands = torch.linspace(1.0, max_freq / 2, num_bands, dtype=torch.float32, device=device)
    else:
        bands = 2 ** torch.linspace(0, math.log(max_freq, 2) - 1, num_bands, dtype=torch.float32, device=device)
    return bands * torch.pi


def freq_bands(
        num_bands: int,
        temperature: float = 10000.,
        step: int = 2,
        device: Optional[torch.device] = None,
) -> torch.Tensor:
    exp = torch.arange(0, num_bands, step, dtype=torch.int64, device=device).to(torch.float32) / num_bands
    bands = 1. / (temperature ** exp)
    return bands




def swap_shape_xy(seq: List[int]) -> List[int]:
    if len(seq) < 2:
        return seq
    return [seq[1], seq[0]] + list(seq[2:])


def _build_bands(
        num_bands: int,
        in_pixels: bool = True,
        max_res: int = 224,
        temperature: float = 10000.,
        linear_bands: bool = False,
        device: Optional[torch.device] = None,
) -> torch.Tensor:
    """Build frequency bands from config.

    Args:
        num_bands: Number of frequency bands.
        in_pixels: Pixel based bands (max_res, linear_bands) if True, else temperature based inv-freq bands.
        max_res: Maximum resolution for pixel based bands.
        temperature: Temperature for inv-freq bands.
        linear_bands: Linear (instead of log) band spacing for pixel based bands.
        device: Output device.

    Returns:
        Bands with shape (num_bands,), float32.
    """
    if in_pixels:
        return pixel_freq_bands(num_bands, float(max_res), linear_bands=linear_bands, device=device)
    return freq_bands(num_bands, temperature=temperature, step=1, device=device)


@torch.fx.wrap
@register_notrace_function
def _build_grid(
        feat_shape: List[int],
        grid_type: str = 'index',
        ref_feat_shape: Optional[List[int]] = None,
        grid_offset: float = 0.,
        grid_indexing: str = 'ij',
        normalize_coords: str = 'separate',
        device: Optional[torch.device] = None,
        dtype: torch.dtype = torch.float32,
        ndim: Optional[int] = None,
) -> torch.Tensor:
    """Build the coordinate grid that sin-cos / rotary embeddings are computed over.

    Args:
        feat_shape: Spatial shape of the feature map, e.g. (H, W).
        grid_type: Coordinate type, one of
            'index': integer positions in [0, s) (+ grid_offset),
            'pixel': positions evenly spaced in [-1, 1],
            'centered': 0.5-centered positions (+ grid_offset) normalized to [0, 1] then mapped to [-1, 1] (DINOv3).
        ref_feat_shape: Rescale positions so that feat_shape maps onto this reference (pretrain) shape (EVA style).
        grid_offset: Constant offset added to 'index' and 'centered' positions.
        grid_indexing: 'ij' keeps coordinate channels in feat_shape order, 'xy' swaps the first two axes.
        normalize_coords: Denominator for 'centered' grids, 'separate' (each axis by its own size), 'min' or 'max'.
        device: Output device.
        dtype: Grid dtype; normalized coordinates are cast before the final mapping to [-1, 1].
        ndim: Required spatial rank, if the caller only supports a fixed number of axes.

    Returns:
        Grid with shape (*feat_shape, len(feat_shape)), float32 by default. Spatial layout always follows feat_shape,
        only the coordinate channel order changes with grid_indexing.
    """
    if ndim is not None and len(feat_shape) != ndim:
        raise ValueError(f'Expected {ndim} spatial dimensions, got {len(feat_shape)}')
    if grid_indexing == 'xy':
        feat_shape = swap_shape_xy(feat_shape)
        if ref_feat_shape is not None:
            ref_feat_shape = swap_shape_xy(ref_feat_shape)

    if grid_type == 'pixel':
        t = [
            torch.linspace(-1., 1., steps=s, device=device, dtype=torch.float32)
            for s in feat_shape
        ]
    elif grid_type == 'centered':
        if normalize_coords == 'max':
            denom = [float(max(feat_shape)) for _ in feat_shape]
        elif normalize_coords == 'min':
            denom = [float(min(feat_shape)) for _ in feat_shape]
        elif normalize_coords == 'separate':
            denom = [float(s) for s in feat_shape]
        else:
            raise ValueError(f"Unknown normalize_coords: {normalize_coords}")
        t = [
            (torch.arange(0.5, s, device=device, dtype=torch.float32) + grid_offset) / d
            for s, d in zip(feat_shape, denom)
        ]
    elif grid_type == 'index':
        t = [
            torch.arange(s, device=device, dtype=torch.int64).to(torch.float32) + grid_offset
            for s in feat_shape
        ]
    else:
        raise ValueError(f"Unknown grid_type: {grid_type}")

    if ref_feat_shape is not None:
        # eva's scheme for resizing rope embeddings (ref shape = pretrain)
        t = [x / f * r for x, f, r in zip(t, feat_shape, ref_feat_shape)]

    grid = torch.stack(torch.meshgrid(t, indexing=grid_indexing), dim=-1).to(dtype=dtype)
    if grid_type == 'centered':
        grid = 2.0 * grid - 1.0  # [0, 1] -> [-1, 1]
    return grid


def _rope_layout(x: torch.Tensor, rotate_half: bool = False) -> torch.Tensor:
    """Expand per-frequency values (..., D/2) to the (..., D) layout expected by apply_rot_embed*().

    rotate_half=False gives the interleaved layout [f0, f0, f1, f1, ...] (apply_rot_embed(half=False)),
    rotate_half=True gives the half layout [f0, f1, .., f0, f1, ..] (apply_rot_embed(half=True)).
    Pure data movement, so it can be applied to angles or to sin / cos values interchangeably.
    """
    if rotate_half:
        return torch.cat([x, x], dim=-1)
    return x.repeat_interleave(2, -1)



def _coord_aug_config(
        shift_coords: Optional[float],
        jitter_coords: Optional[float],
        rescale_coords: Optional[float],
) -> Tuple[Optional[float], Optional[float], Optional[float], bool]:
    """Normalize and validate coordinate augmentation parameters without consuming RNG."""
    if not torch.jit.is_scripting():
        for name, value in (
                ('shift_coords', shift_coords), ('jitter_coords', jitter_coords), ('rescale_coords', rescale_coords),
        ):
            if value is None:
                continue
            is_scalar_tensor = isinstance(value, torch.Tensor) and value.numel() == 1 and value.dtype != torch.bool
            if isinstance(value, bool) or not (isinstance(value, Real) or is_scalar_tensor):
                raise TypeError(f'{name} must be a real number or single-element tensor, not a boolean or string.')
    shift = float(shift_coords) if shift_coords is not None else None
    jitter = float(jitter_coords) if jitter_coords is not None else None
    rescale = float(rescale_coords) if rescale_coords is not None else None
    if shift is not None and (not math.isfinite(shift) or shift < 0):
        raise ValueError('shift_coords must be finite and >= 0.')
    if jitter is not None and (not math.isfinite(jitter) or jitter < 1):
        raise ValueError('jitter_coords must be finite and >= 1 (multiplicative factor).')
    if rescale is not None and (not math.isfinite(rescale) or rescale < 1):
        raise ValueError('rescale_coords must be finite and >= 1 (multiplicative factor).')
    return shift, jitter, rescale, shift is not None or jitter is not None or rescale is not None


@torch.fx.wrap
@register_notrace_function
def _apply_coord_augs(
        coords: torch.Tensor,
        shift_coords: Optional[float] = None,
        jitter_coords: Optional[float] = None,
        rescale_coords: Optional[float] = None,
) -> torch.Tensor:
    """Apply one spatial transform to all positions, without modifying the input grid.

    Shift is measured in the grid's existing units. Jitter (independent per-axis scale) and rescale
    (shared scale) are dimensionless log-uniform factors. Callers gate augmentation on training mode.
    Preserve DINOv3's shift, jitter, rescale operation and RNG order, sampling on the grid's device/dtype.

    FX tracing with a constant grid shape can freeze augmentation draws. Trace in eval mode.
    """
    shift_coords, jitter_coords, rescale_coords, _ = _coord_aug_config(shift_coords, jitter_coords, rescale_coords)
    device = coords.device
    dtype = coords.dtype
    num_axes = coords.shape[-1]
    if shift_coords is not None:
        shift = float(shift_coords)
        shift_hw = torch.empty(num_axes, device=device, dtype=dtype).uniform_(-shift, shift)
        coords = coords + shift_hw[None, :]
    if jitter_coords is not None:
        jitter_factor = float(jitter_coords)
        jitter_max = math.log(jitter_factor)
        jitter_hw = torch.empty(num_axes, device=device, dtype=dtype).uniform_(-jitter_max, jitter_max).exp()
        coords = coords * jitter_hw[None, :]
    if rescale_coords is not None:
        rescale_factor = float(rescale_coords)
        rescale_max = math.log(rescale_factor)
        rescale = torch.empty(1, device=device, dtype=dtype).uniform_(-rescale_max, rescale_max).exp()
        coords = coords * rescale
    return coords


def build_fourier_pos_embed(
        feat_shape: List[int],
        bands: Optional[torch.Tensor] = None,
        num_bands: int = 64,
        max_res: int = 224,
        temperature: float = 10000.,
        linear_bands: bool = False,
        include_grid: bool = False,
        in_pixels: bool = True,
        ref_feat_shape: Optional[List[int]] = None,
        grid_offset: float = 0.,
        grid_indexing: str = 'ij',
        device: Optional[torch.device] = None,
        dtype: torch.dtype = torch.float32,
        grid_type: Optional[str] = None,
        normalize_coords: str = 'separate',
        shift_coords: Optional[float] = None,
        jitter_coords: Optional[float] = None,
        rescale_coords: Optional[float] = None,
) -> List[torch.Tensor]:
    """

    Args:
        feat_shape: Feature shape for embedding.
        bands: Pre-calculated frequency bands.
        num_bands: Number of frequency bands (determines output dim).
        max_res: Maximum resolution for pixel based freq.
        temperature: Temperature for non-pixel freq.
        linear_bands: Linear band spacing for pixel based freq.
        include_grid: Include the spatial grid in output.
        in_pixels: Output in pixel freq.
        ref_feat_shape: Reference feature shape for resize / fine-tune.
        grid_offset: Constant offset to add to grid for non-pixel freq.
        grid_indexing: Indexing mode for meshgrid ('ij' or 'xy')
        dtype: Output dtype.
        device: Output device.
        grid_type: Grid coordinate type ('index', 'pixel', 'centered'), overrides the in_pixels based grid selection
            when set (in_pixels still selects the band type if bands are not given). See _build_grid().
        normalize_coords: Normalization for 'centered' grids ('separate', 'min', 'max').
        shift_coords: Optional random per-axis shift in the grid's units, applied when provided.
        jitter_coords: Optional log-uniform per-axis scale in [1/J, J], applied when provided.
        rescale_coords: Optional log-uniform shared scale in [1/R, R], applied when provided.
            These functional arguments are explicit; modules only pass them during augmented training.

    Returns:

    """
    if bands is None:
        bands = _build_bands(
            num_bands,
            in_pixels=in_pixels,
            max_res=max_res,
            temperature=temperature,
            linear_bands=linear_bands,
            device=device,
        )
    else:
        if device is None:
            device = bands.device
        if dtype is None:
            dtype = bands.dtype

    grid_type_: str = 'pixel' if in_pixels else 'index'
    if grid_type is not None:
        grid_type_ = grid_type
    grid = _build_grid(
        feat_shape,
        grid_type=grid_type_,
        ref_feat_shape=ref_feat_shape,
        grid_offset=grid_offset,
        grid_indexing=grid_indexing,
        normalize_coords=normalize_coords,
        device=device,
    )
    if shift_coords is not None or jitter_coords is not None or rescale_coords is not None:
        grid = _apply_coord_augs(grid, shift_coords, jitter_coords, rescale_coords)
    grid = grid.unsqueeze(-1)
    pos = grid * bands

    pos_sin, pos_cos = pos.sin().to(dtype=dtype), pos.cos().to(dtype=dtype)
    out = [grid, pos_sin, pos_cos] if include_grid else [pos_sin, pos_cos]
    return out



def rot(x):
    # x:   [ x0  x1  x2  x3  x4  x5]
    # out: [-x1  x0 -x3  x2 -x5  x4]
    return torch.stack([-x[..., 1::2], x[..., ::2]], -1).reshape(x.shape)


def rope_rotate_half(x: torch.Tensor) -> torch.Tensor:
    # x:   [ x0  x1  x2  x3  x4  x5]
    # out: [-x3 -x4 -x5  x0  x1  x2]
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


def apply_rot_embed(
        x: torch.Tensor,
        sin_emb: torch.Tensor,
        cos_emb: torch.Tensor,
        half: bool = False,
) -> torch.Tensor:
    """Apply rotary embeddings and return the result in x's dtype.

    Multiplication and addition use normal dtype promotion, preserving higher-precision sin/cos until
    the completed rotation is cast back to x's dtype. Already low-precision sin/cos are not upcast.
    """
    # x: [..., D], eg [x0, x1, x2, x3, x4, x5]
    if half:
        # sin: [..., D], eg [sin0, sin1, sin2, sin0, sin1, sin2]
        # cos: [..., D], eg [cos0, cos1, cos2, cos0, cos1, cos2]
        # rope_rotate_half(x): eg [-x3, -x4, -x5, x0, x1, x2]
        out = x * cos_emb + rope_rotate_half(x) * sin_emb
    else:
        # sin: [..., D], eg [sin0, sin0, sin1, sin1, sin2, sin2]
        # cos: [..., D], eg [cos0, cos0, cos1, cos1, cos2, cos2]
        # rot(x): eg [-x1, x0, -x3, x2, -x5, x4]
        out = x * cos_emb + rot(x) * sin_emb
    return out.to(dtype=x.dtype)


def build_rotary_pos_embed(
        feat_shape: List[int],
        bands: Optional[torch.Tensor] = None,
        dim: int = 64,
        max_res: int = 224,
        temperature: float = 10000.,
        linear_bands: bool = False,
        in_pixels: bool = True,
        ref_feat_shape: Optional[List[int]] = None,
        grid_offset: float = 0.,
        grid_indexing: str = 'ij',
        rotate_half: bool = False,
        device: Optional[torch.device] = None,
        dtype: torch.dtype = torch.float32,
        grid_type: Optional[str] = None,
        normalize_coords: str = 'separate',
        shift_coords: Optional[float] = None,
        jitter_coords: Optional[float] = None,
        rescale_coords: Optional[float] = None,
):
    """

    Args:
        feat_shape: Spatial shape of the target tensor for embedding.
        bands: Optional pre-generated frequency bands
        dim: Output dimension of embedding tensor.
        max_res: Maximum resolution for pixel mode.
        temperature: Temperature (inv freq) for non-pixel mode
        linear_bands: Linearly (instead of log) spaced bands for pixel mode
        in_pixels: Pixel vs language (inv freq) mode.
        ref_feat_shape: Reference feature shape for resize / fine-tune.
        grid_offset: Constant offset to add to grid for non-pixel freq.
        grid_indexing: Indexing mode for meshgrid ('ij' or 'xy')
        rotate_half: Emit the 'half' layout ([f0, f1, .., f0, f1, ..], for apply_rot_embed(half=True)) instead
            of the default interleaved layout ([f0, f0, f1, f1, ..], for apply_rot_embed(half=False)).
        device: Output device.
        dtype: Output dtype.
        grid_type: Grid coordinate type ('index', 'pixel', 'centered'), overrides the in_pixels based grid selection
            when set (in_pixels still selects the band type if bands are not given). See _build_grid().
        normalize_coords: Normalization for 'centered' grids ('separate', 'min', 'max').
        shift_coords: Optional random per-axis shift in the grid's units, applied when provided.
        jitter_coords: Optional log-uniform per-axis scale in [1/J, J], applied when provided.
        rescale_coords: Optional log-uniform shared scale in [1/R, R], applied when provided.

    Returns:

    """
    sin_emb, cos_emb = build_fourier_pos_embed(
        feat_shape,
        bands=bands,
        num_bands=dim // 4,
        max_res=max_res,
        temperature=temperature,
        linear_bands=linear_bands,
        in_pixels=in_pixels,
        ref_feat_shape=ref_feat_shape,
        grid_offset=grid_offset,
        grid_indexing=grid_indexing,
        device=device,
        dtype=dtype,
        grid_type=grid_type,
        normalize_coords=normalize_coords,
        shift_coords=shift_coords,
        jitter_coords=jitter_coords,
        rescale_coords=rescale_coords,
    )
    # (*feat_shape, ndim, num_bands) -> (N, ndim * num_bands) via view ops (no python loop over feat_shape, fx friendly)
    sin_emb = _rope_layout(sin_emb.flatten(-2).flatten(0, -2), rotate_half)
    cos_emb = _rope_layout(cos_emb.flatten(-2).flatten(0, -2), rotate_half)
    return sin_emb, cos_emb

