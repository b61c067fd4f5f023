"""Hand-written references the generated kernels are checked against.

Deliberately independent of ``symproof.encodings`` and of SymPy: each one
restates the chapter's formulas in its own way, with its own frequency
formula (``base ** (-2 r / D)`` in plain floating point), so a shared mistake
would have to be made three times over.

- :func:`rope_loop`: Algorithm 7.1 of the chapter, a pairwise loop in plain Python.
- :func:`rope_rotate_half`: vectorised NumPy, ``x * cos + rotate(x) * sin`` (the
  "rotate half" / "rotate every two" style of common implementations).
- :func:`rope_complex`: pairs as complex numbers multiplied by ``exp(i m omega)``.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "reference_frequencies", "rope_loop", "rope_rotate_half", "rope_complex", "ROPE_REFERENCES",
    "scores_loop", "sinusoidal_loop", "alibi_slopes_reference", "relative_bias_loop",
]


def reference_frequencies(rotary_dim: int, base: float = 10000.0, denominator: int | None = None) -> list:
    denominator = rotary_dim if denominator is None else denominator
    return [base ** (-2.0 * r / denominator) for r in range(rotary_dim // 2)]


def _pairs(rotary_dim: int, pairing: str):
    half = rotary_dim // 2
    if pairing == "adjacent":
        return [(2 * r, 2 * r + 1) for r in range(half)]
    return [(r, r + half) for r in range(half)]


def rope_loop(x, positions, freqs, *, rotary_dim=None, pairing="adjacent", transpose=False) -> np.ndarray:
    """Algorithm 7.1: for every row, for every pair, keep both originals, then write both outputs.
    ``transpose=True`` applies ``R^T`` (the backward pass) instead of ``R``."""
    x = np.asarray(x, dtype=np.float64)
    rows = x.shape[:-1]
    width = x.shape[-1]
    rotary_dim = width if rotary_dim is None else rotary_dim
    positions = np.broadcast_to(np.asarray(positions), rows)
    out = np.empty_like(x)
    for index in np.ndindex(*rows):
        m = int(positions[index])
        row = [float(v) for v in x[index]]
        result = list(row)  # coordinates >= rotary_dim are copied unchanged
        for r, (ia, ib) in enumerate(_pairs(rotary_dim, pairing)):
            theta = m * freqs[r]
            c, s = math.cos(theta), math.sin(theta)
            a, b = row[ia], row[ib]
            if transpose:
                result[ia], result[ib] = a * c + b * s, -a * s + b * c
            else:
                result[ia], result[ib] = a * c - b * s, a * s + b * c
        out[index] = result
    return out


def rope_rotate_half(x, positions, freqs, *, rotary_dim=None, pairing="adjacent", transpose=False) -> np.ndarray:
    """``x * cos + rotate(x) * sin`` with the rotation partner of each coordinate gathered by slicing."""
    x = np.asarray(x, dtype=np.float64)
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    angles = np.asarray(positions, dtype=np.float64)[..., None] * np.asarray(freqs, dtype=np.float64)
    cos, sin = np.cos(angles), np.sin(angles)
    if transpose:
        sin = -sin
    rot = x[..., :rotary_dim]
    if pairing == "adjacent":
        cos, sin = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)
        partner = np.stack([-rot[..., 1::2], rot[..., 0::2]], axis=-1).reshape(rot.shape)
    else:
        cos, sin = np.concatenate([cos, cos], axis=-1), np.concatenate([sin, sin], axis=-1)
        half = rotary_dim // 2
        partner = np.concatenate([-rot[..., half:], rot[..., :half]], axis=-1)
    return np.concatenate([rot * cos + partner * sin, x[..., rotary_dim:]], axis=-1)


def rope_complex(x, positions, freqs, *, rotary_dim=None, pairing="adjacent", transpose=False) -> np.ndarray:
    """Pair ``(a, b)`` is ``a + i b``; rotating by ``theta`` multiplies it by ``exp(i theta)``."""
    x = np.asarray(x, dtype=np.float64)
    rotary_dim = x.shape[-1] if rotary_dim is None else rotary_dim
    angles = np.asarray(positions, dtype=np.float64)[..., None] * np.asarray(freqs, dtype=np.float64)
    phase = np.exp((-1j if transpose else 1j) * angles)
    out = np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, angles.shape[:-1] + (x.shape[-1],))))
    if pairing == "adjacent":
        z = (out[..., 0:rotary_dim:2] + 1j * out[..., 1:rotary_dim:2]) * phase
        out[..., 0:rotary_dim:2], out[..., 1:rotary_dim:2] = z.real, z.imag
    else:
        half = rotary_dim // 2
        z = (out[..., :half] + 1j * out[..., half:rotary_dim]) * phase
        out[..., :half], out[..., half:rotary_dim] = z.real, z.imag
    return out


#: every hand-written RoPE, by name (tests compare each generated kernel to each)
ROPE_REFERENCES = {"loop": rope_loop, "rotate_half": rope_rotate_half, "complex": rope_complex}


def scores_loop(q, k, q_positions, k_positions, freqs, *, rotary_dim=None, pairing="adjacent") -> np.ndarray:
    """``(R_i q_i)^T (R_j k_j)`` for every i, j of one head, by two loops over rotated rows."""
    q_rot = rope_loop(q, q_positions, freqs, rotary_dim=rotary_dim, pairing=pairing)
    k_rot = rope_loop(k, k_positions, freqs, rotary_dim=rotary_dim, pairing=pairing)
    return np.array([[sum(a * b for a, b in zip(qi, kj)) for kj in k_rot] for qi in q_rot])


def sinusoidal_loop(n_positions: int, d: int, base: float = 10000.0) -> np.ndarray:
    """``p_{t,2r} = sin(t base^(-2r/d))``, ``p_{t,2r+1} = cos(...)`` entry by entry."""
    table = np.zeros((n_positions, d))
    for t in range(n_positions):
        for r in range(d // 2):
            angle = t / base ** (2 * r / d)
            table[t, 2 * r], table[t, 2 * r + 1] = math.sin(angle), math.cos(angle)
    return table


def alibi_slopes_reference(n_heads: int) -> list:
    """The slopes as the ALiBi authors compute them: a geometric sequence whose start and
    ratio are ``2^(-2^(3 - log2 n))``, with the interleaving rule for other head counts."""
    def power_of_two(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_two(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_two(closest) + alibi_slopes_reference(2 * closest)[0::2][: n_heads - closest]


def relative_bias_loop(x, A, bias_of_offset) -> np.ndarray:
    """``x_i^T A x_j + b(j - i)`` for one sequence, entry by entry."""
    x, A = np.asarray(x, dtype=np.float64), np.asarray(A, dtype=np.float64)
    T = x.shape[0]
    return np.array([[x[i] @ A @ x[j] + bias_of_offset(j - i) for j in range(T)] for i in range(T)])
