"""Numeric kernels generated from the symbolic definitions.

RoPE runs the NumPy module :func:`symproof._export.kernel_files` prints (the
same text ``symproof export rope --target numpy`` writes, claims not re-run); the sinusoidal table, the score gradient with
respect to the frequencies and the ALiBi slopes are ``lambdify``-ed from
``symproof.encodings`` and from SymPy's own derivative.  Every entry point
checks its input and raises :class:`InvalidInputError` naming what it got and
what it expected.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import sympy as sp

from .._ground._errors import InvalidInputError
from .._export import Kernel, kernel_files
from .._ground._lambdify import numpy_function
from .._ground._provenance import rope_provenance
from ..encodings import frequency, pair_indices
from .._export._config import RopeConfig
from .._export._symbolic import (
    RopeSpec, _to_float, exact_number, omega, rope_spec, score_frequency_gradient,
    sinusoidal_entries,
)

__all__ = [
    "rope_apply", "rope_backward", "rope_scores", "rope_score_frequency_gradient", "sinusoidal_table",
    "relative_bias_scores", "alibi_slopes", "alibi_slopes_exact", "alibi_bias", "rope_kernel", "rope_spec",
    "SINUSOIDAL_LAYOUTS", "ODD_RULES",
]

SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")
#: how the last coordinate of an odd width is filled: ``zero``, or ``sin`` (the first
#: coordinate of the pair that would follow, i.e. the width ``d + 1`` table cut to ``d``)
ODD_RULES = ("zero", "sin")


# --------------------------------------------------------------------------- RoPE

@lru_cache(maxsize=64)
def rope_kernel(spec: RopeSpec):
    """The generated NumPy module for ``spec`` as a namespace with ``apply``, ``backward`` and ``SOURCE``."""
    (source,) = kernel_files(Kernel("rope", spec, "symproof_rope", tuple(rope_provenance(spec, "numpy", None))),
                             "numpy").values()
    namespace = {"__name__": f"symproof_generated_rope_{abs(hash(spec)):x}"}
    try:
        exec(compile(source, f"<symproof rope kernel {spec.to_dict()}>", "exec"), namespace)  # noqa: S102
    except ValueError as err:  # the only one importing it raises: a setting it reads (SYMPROOF_NATIVE=maybe)
        raise InvalidInputError(str(err)) from None
    namespace["SOURCE"] = source
    return type("GeneratedRopeKernel", (), {k: staticmethod(v) if callable(v) else v
                                            for k, v in namespace.items() if not k.startswith("__")})


def _as_array(value, name: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except Exception as err:  # ragged lists and the like
        raise InvalidInputError(f"{name} must be an array, got {type(value).__name__} ({err})") from None
    if array.dtype.kind not in "biuf" or array.dtype.kind == "b":
        raise InvalidInputError(f"{name} must hold real numbers, got dtype {array.dtype}")
    return array


def _positions(value, rows: tuple, name: str = "positions") -> np.ndarray:
    positions = np.asarray(value)
    if positions.dtype.kind not in "iu":
        raise InvalidInputError(
            f"{name} must be integer position ids, got dtype {positions.dtype}"
            + (" (round them explicitly if they are whole numbers)" if positions.dtype.kind == "f" else ""))
    try:
        fits = positions.ndim <= len(rows) and np.broadcast_shapes(positions.shape, rows) == rows
    except ValueError:
        fits = False
    if not fits:
        raise InvalidInputError(f"{name} of shape {positions.shape} do not broadcast to x.shape[:-1] = {rows}",
                                expected=f"a shape broadcastable to {rows}")
    return positions


def _resolve(x, config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype, name="x"):
    x = _as_array(x, name)
    if x.ndim < 2:
        raise InvalidInputError(f"{name} must have shape (..., T, d_k), got shape {x.shape}")
    if config is not None and not isinstance(config, RopeConfig):
        raise InvalidInputError(f"config must be a RopeConfig, got {type(config).__name__}")
    width = x.shape[-1]
    if config is not None:
        if head_dim is not None and head_dim != config.head_dim:
            raise InvalidInputError(f"head_dim={head_dim} contradicts config.head_dim={config.head_dim}")
        head_dim = config.head_dim
    head_dim = width if head_dim is None else head_dim
    if width != head_dim:
        raise InvalidInputError(f"{name} has last dimension {width}, expected head_dim = {head_dim}")
    spec = rope_spec(config, head_dim=head_dim, rotary_dim=rotary_dim, base=base, denominator=denominator,
                     pairing=pairing, freqs=freqs, dtype=dtype)
    if dtype is not None or config is not None:
        x = x.astype(spec.config.dtype, copy=False)
    return x, spec


def rope_apply(x: Any, positions: Any, *, config: RopeConfig | None = None, head_dim: int | None = None,
               rotary_dim: int | None = None, base: float = 10000.0, denominator: int | None = None,
               pairing: str = "adjacent", freqs: Sequence | None = None, dtype: str | None = None) -> np.ndarray:
    """``R_m x`` for every row: x (..., T, d_k), integer ``positions`` broadcastable to x.shape[:-1].

    The first ``rotary_dim`` coordinates rotate (pairs per ``pairing``), the rest are copied.
    ``freqs`` (exact or float, ``rotary_dim / 2`` of them) replaces ``base**(-2r/denominator)``.
    float32 and float64 inputs keep their dtype unless ``dtype`` (or ``config.dtype``) says otherwise.
    """
    x, spec = _resolve(x, config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype)
    return rope_kernel(spec).apply(x, _positions(positions, x.shape[:-1]))


def rope_backward(g, positions, *, config: RopeConfig | None = None, head_dim=None, rotary_dim=None,
                  base=10000.0, denominator=None, pairing="adjacent", freqs=None, dtype=None) -> np.ndarray:
    """``R_m^T g``: the gradient with respect to x of ``rope_apply`` for upstream gradient ``g``."""
    g, spec = _resolve(g, config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype, name="g")
    return rope_kernel(spec).backward(g, _positions(positions, g.shape[:-1]))


def _score_inputs(q, k, q_positions, k_positions, q_offset, k_offset, options):
    q, spec = _resolve(q, *options, name="q")
    k, _ = _resolve(k, *options, name="k")
    for name, offset in (("q_offset", q_offset), ("k_offset", k_offset)):
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
            raise InvalidInputError(f"{name} must be an integer, got {offset!r}")
    q_positions = _positions(q_positions, q.shape[:-1], "q_positions") + q_offset
    k_positions = _positions(k_positions, k.shape[:-1], "k_positions") + k_offset
    return q, k, q_positions, k_positions, spec


def rope_scores(q, k, q_positions, k_positions, *, q_offset=0, k_offset=0, config: RopeConfig | None = None,
                head_dim=None, rotary_dim=None, base=10000.0, denominator=None, pairing="adjacent", freqs=None,
                dtype=None) -> np.ndarray:
    """``s[..., i, j] = (R_{m_i} q_i)^T (R_{n_j} k_j)`` with ``m = q_positions + q_offset`` and
    ``n = k_positions + k_offset``; q (..., Tq, d_k), k (..., Tk, d_k) -> (..., Tq, Tk)."""
    options = (config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype)
    q, k, q_positions, k_positions, spec = _score_inputs(q, k, q_positions, k_positions, q_offset, k_offset, options)
    kernel = rope_kernel(spec)
    try:
        return np.matmul(kernel.apply(q, q_positions), np.swapaxes(kernel.apply(k, k_positions), -1, -2))
    except ValueError as err:
        raise InvalidInputError(f"q {q.shape} and k {k.shape} cannot be paired: {err}") from None


@lru_cache(maxsize=None)
def _gradient_function():
    symbols, expr = score_frequency_gradient()
    return numpy_function((*symbols, omega), expr)


def rope_score_frequency_gradient(q, k, q_positions, k_positions, *, q_offset=0, k_offset=0,
                                  config: RopeConfig | None = None, head_dim=None, rotary_dim=None,
                                  base=10000.0, denominator=None, pairing="adjacent", freqs=None,
                                  dtype=None) -> np.ndarray:
    """``ds_ij / d omega_r`` for every pair ``r``: shape (..., Tq, Tk, rotary_dim / 2).

    The derivative is SymPy's derivative of ``(R(i w) q)^T (R(j w) k)`` for one pair, lambdified;
    the score is the sum of the pairs' terms, so each frequency only enters its own pair."""
    options = (config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype)
    q, k, q_positions, k_positions, spec = _score_inputs(q, k, q_positions, k_positions, q_offset, k_offset, options)
    c = spec.config
    index_a, index_b = np.array(pair_indices(c.rotary_dim, c.pairing)).T

    def model_position(ids):
        return (np.broadcast_to(ids, ids.shape).astype(np.float64) + c.index_origin) / c.position_scale

    i = model_position(q_positions)[..., :, None, None]
    j = model_position(k_positions)[..., None, :, None]
    q0, q1 = q[..., :, None, index_a], q[..., :, None, index_b]
    k0, k1 = k[..., None, :, index_a], k[..., None, :, index_b]
    w = np.asarray(spec.frequency_values, dtype=np.float64)
    return np.asarray(_gradient_function()(q0, q1, k0, k1, i, j, w))


# --------------------------------------------------------------------------- sinusoidal

@lru_cache(maxsize=None)
def _sinusoidal_function():
    t, entries = sinusoidal_entries()
    return numpy_function((t, omega), entries)


def sinusoidal_table(n_positions: int, d: int, *, base: float = 10000.0, layout: str = "interleaved",
                     odd_rule: str | None = None) -> np.ndarray:
    """``p_t`` for ``t = 0 .. n_positions - 1`` as rows of a (n_positions, d) float64 table.

    ``interleaved``: ``p_{t,2r} = sin(t omega_r)``, ``p_{t,2r+1} = cos(t omega_r)``;
    ``concatenated``: ``[sin(t omega_0..) | cos(t omega_0..)]``; ``omega_r = base**(-2r/d)``.
    An odd ``d`` is rejected unless ``odd_rule`` (one of ``ODD_RULES``) says how to fill the last coordinate.
    """
    for name, value in (("n_positions", n_positions), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < (0 if name == "n_positions" else 1):
            raise InvalidInputError(f"{name} must be a {'non-negative' if name == 'n_positions' else 'positive'} "
                                    f"integer, got {value!r}")
    if layout not in SINUSOIDAL_LAYOUTS:
        raise InvalidInputError(f"unknown layout {layout!r}; expected one of {SINUSOIDAL_LAYOUTS}")
    if odd_rule is not None and odd_rule not in ODD_RULES:
        raise InvalidInputError(f"unknown odd_rule {odd_rule!r}; expected one of {ODD_RULES}")
    if d % 2 and odd_rule is None:
        raise InvalidInputError(
            f"sinusoidal width d must be even (sin/cos pairs), got d={d}; pass odd_rule='zero' or "
            "odd_rule='sin' to state how the last coordinate is filled", d=d)
    exact_base = exact_number(base, "base")
    if not exact_base > 1:
        raise InvalidInputError(f"base must be > 1, got {base!r}")
    n_pairs = (d + 1) // 2 if odd_rule == "sin" else d // 2
    w = np.array([_to_float(frequency(r, d, exact_base)) for r in range(n_pairs)])
    t = np.arange(n_positions, dtype=np.float64)[:, None]
    sines, cosines = (np.broadcast_to(np.asarray(e, dtype=np.float64), (n_positions, n_pairs))
                      for e in _sinusoidal_function()(t, w[None, :]))
    table = np.zeros((n_positions, d), dtype=np.float64)
    full = d // 2
    if layout == "interleaved":
        table[:, 0:2 * full:2], table[:, 1:2 * full:2] = sines[:, :full], cosines[:, :full]
    else:
        table[:, :full], table[:, full:2 * full] = sines[:, :full], cosines[:, :full]
    if d % 2 and odd_rule == "sin":
        table[:, -1] = sines[:, full]
    return table


# --------------------------------------------------------------------------- relative bias, ALiBi

def alibi_slopes_exact(n_heads: int) -> list:
    """ALiBi head slopes as exact powers of two.

    For ``n = 2^k``: ``m_h = 2^(-8 h / n)``, ``h = 1 .. n``.  Otherwise, with ``p`` the largest
    power of two below ``n``: the ``p`` slopes of ``p`` heads, then every other slope of ``2p``
    heads (``h = 1, 3, 5, ...``) until ``n`` slopes are chosen."""
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise InvalidInputError(f"n_heads must be a positive integer, got {n_heads!r}")
    n_heads = int(n_heads)

    def power_of_two_slopes(n):
        return [sp.Pow(2, sp.Rational(-8 * h, n)) for h in range(1, n + 1)]

    p = 1 << (n_heads.bit_length() - 1)
    if p == n_heads:
        return power_of_two_slopes(n_heads)
    return power_of_two_slopes(p) + power_of_two_slopes(2 * p)[0::2][: n_heads - p]


def alibi_slopes(n_heads: int) -> np.ndarray:
    """:func:`alibi_slopes_exact` rounded once to float64."""
    return np.array([_to_float(m) for m in alibi_slopes_exact(n_heads)], dtype=np.float64)


def alibi_bias(n_heads: int, n_positions: int) -> np.ndarray:
    """``b_h[o] = -m_h |o|`` for offsets ``o = j - i`` from ``-(T-1)`` to ``T-1``: shape (H, 2T-1),
    ready for :func:`relative_bias_scores` on (H, T, d) inputs."""
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) or n_positions < 1:
        raise InvalidInputError(f"n_positions must be a positive integer, got {n_positions!r}")
    offsets = np.arange(-(n_positions - 1), n_positions)
    return -alibi_slopes(n_heads)[:, None] * np.abs(offsets)[None, :]


def relative_bias_scores(x, A, bias) -> np.ndarray:
    """``s[..., i, j] = x_i^T A x_j + b_{j-i}``: x (..., T, d), A (d, d).

    ``bias`` is an array (..., 2T-1) whose last axis runs over offsets ``-(T-1) .. T-1``,
    or a callable taking the (T, T) integer offsets ``j - i`` and returning a broadcastable array."""
    x = _as_array(x, "x").astype(np.float64, copy=False)
    A = _as_array(A, "A").astype(np.float64, copy=False)
    if x.ndim < 2:
        raise InvalidInputError(f"x must have shape (..., T, d), got {x.shape}")
    T, d = x.shape[-2:]
    if A.shape != (d, d):
        raise InvalidInputError(f"A must have shape ({d}, {d}) to match x (..., {T}, {d}), got {A.shape}")
    offsets = np.arange(T)[None, :] - np.arange(T)[:, None]
    if callable(bias):
        table = np.asarray(bias(offsets), dtype=np.float64)
    else:
        b = _as_array(bias, "bias").astype(np.float64, copy=False)
        if b.ndim < 1 or b.shape[-1] != 2 * T - 1:
            raise InvalidInputError(f"bias must have last dimension 2T-1 = {2 * T - 1} (offsets -{T - 1}..{T - 1}), "
                                    f"got shape {b.shape}")
        table = b[..., offsets + (T - 1)]
    content = np.matmul(np.matmul(x, A), np.swapaxes(x, -1, -2))
    try:
        return content + table
    except ValueError as err:
        raise InvalidInputError(f"bias of shape {table.shape} does not broadcast to scores {content.shape}: {err}") from None

