"""Exact symbolic self-attention, the object of the permutation arguments of section 7.1.

Conventions (chapter.md): tokens are the *rows* of ``X`` (T x d); a permutation
``perm`` acts by ``P[i, perm[i]] = 1``, so row ``i`` of ``P X`` is row
``perm[i]`` of ``X``.  A mask is *additive*: entry ``0`` allows a position,
``-oo`` forbids it (a finite entry is added to the score).

Everything is built from explicit SymPy matrices without simplification, so
two quantities computed the same way from permuted inputs are the same SymPy
trees: that is what lets the equivariance proofs compare structurally.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy import ImmutableMatrix

from .._ground._errors import InvalidInputError, MaskedRowError

__all__ = ["permutation_matrix", "cycle_notation", "permute_rows_and_columns", "softmax_rows", "self_attention", "causal_mask"]


def _check_permutation(perm) -> list:
    if isinstance(perm, (str, bytes)) or not isinstance(perm, Sequence):
        raise InvalidInputError(f"a permutation must be a sequence of indices 0..T-1, got {perm!r}")
    values = []
    for k in perm:
        if isinstance(k, bool) or not isinstance(k, (int, sp.Integer)):
            raise InvalidInputError(f"a permutation holds integer indices, got {k!r} in {list(perm)!r}")
        values.append(int(k))
    if sorted(values) != list(range(len(values))):
        raise InvalidInputError(
            f"{values} is not a permutation of 0..{len(values) - 1}: each index must appear exactly once",
            permutation=values,
        )
    return values


def permutation_matrix(perm) -> ImmutableMatrix:
    """``P`` with ``P[i, perm[i]] = 1``: ``(P X)[i] = X[perm[i]]`` (one 1 per row and column)."""
    perm = _check_permutation(perm)
    size = len(perm)
    return ImmutableMatrix(size, size, lambda i, j: 1 if perm[i] == j else 0)


def cycle_notation(perm) -> str:
    r"""The permutation ``i -> perm[i]`` in cycle notation, as LaTeX: ``[1, 2, 0]`` is ``\text{(0 1 2)}``,
    ``[1, 0, 3, 2]`` is ``\text{(0 1)(2 3)}`` (fixed points left out), the identity is ``\mathrm{id}``."""
    perm = _check_permutation(perm)
    seen, cycles = set(), []
    for start in range(len(perm)):
        if start in seen or perm[start] == start:
            continue
        cycle, k = [], start
        while k not in seen:
            seen.add(k)
            cycle.append(str(k))
            k = perm[k]
        cycles.append("(" + " ".join(cycle) + ")")
    return r"\text{" + "".join(cycles) + "}" if cycles else r"\mathrm{id}"


def permute_rows_and_columns(M, perm) -> ImmutableMatrix:
    """``P M P^T`` by indices: entry ``(i, j)`` is ``M[perm[i], perm[j]]``.

    A mask holds ``-oo``, and ``0 * -oo`` is undefined, so a mask cannot be
    permuted by multiplying with ``P``; this index form is equal to the product
    for every finite ``M`` (proved in ``attn.masked_equivariance``).
    """
    M = _as_matrix(M, "M")
    perm = _check_permutation(perm)
    if M.shape != (len(perm), len(perm)):
        raise InvalidInputError(
            f"cannot permute a {M.rows}x{M.cols} matrix by a permutation of {len(perm)} positions",
            shape=M.shape, permutation=perm,
        )
    return ImmutableMatrix(M.rows, M.cols, lambda i, j: M[perm[i], perm[j]])


def causal_mask(T: int) -> ImmutableMatrix:
    """The lower-triangular causal mask: position ``i`` sees ``j <= i`` (0), not ``j > i`` (-oo)."""
    if isinstance(T, bool) or not isinstance(T, (int, sp.Integer)) or int(T) < 1:
        raise InvalidInputError(f"the sequence length T must be a positive integer, got {T!r}")
    return ImmutableMatrix(int(T), int(T), lambda i, j: 0 if j <= i else -sp.oo)


def _as_matrix(value, name: str) -> ImmutableMatrix:
    try:
        return ImmutableMatrix(value)
    except (TypeError, ValueError, sp.SympifyError) as err:
        raise InvalidInputError(f"{name} must be a matrix (a SymPy Matrix or nested lists), got {value!r}") \
            from err


def _mask_entry(value, row: int, col: int):
    value = sp.sympify(value)
    if value == -sp.oo:
        return None
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or value.is_extended_real is False:
        raise InvalidInputError(
            f"mask entry ({row}, {col}) is {value}; an additive mask holds 0 (allowed), -oo (forbidden) "
            "or a finite real bias",
            row=row, col=col,
        )
    return value


def softmax_rows(S, mask=None) -> ImmutableMatrix:
    """Row-wise softmax of the scores ``S`` under an additive ``mask``.

    Entry ``(i, j)`` is ``exp(S_ij + M_ij) / sum_k exp(S_ik + M_ik)`` over the
    allowed ``k`` of row ``i``, and exactly ``0`` where ``M_ij = -oo``.  A row
    with no allowed position has no normalisation: it raises
    :class:`MaskedRowError` naming the row, never a NaN or a uniform row.
    """
    S = _as_matrix(S, "S")
    if mask is not None:
        mask = _as_matrix(mask, "mask")
        if mask.shape != S.shape:
            raise InvalidInputError(f"the mask has shape {mask.shape} but the scores have shape {S.shape}",
                                    mask_shape=mask.shape, scores_shape=S.shape)
    rows = []
    for i in range(S.rows):
        logits = []
        for j in range(S.cols):
            bias = 0 if mask is None else _mask_entry(mask[i, j], i, j)
            logits.append(None if bias is None else S[i, j] + bias)
        allowed = [sp.exp(v) for v in logits if v is not None]
        if not allowed:
            raise MaskedRowError(
                f"row {i} of the attention mask forbids every position, so its softmax is undefined; "
                "every row needs at least one allowed (0) entry",
                row=i,
            )
        total = sp.Add(*allowed)
        rows.append([sp.S.Zero if v is None else sp.exp(v) / total for v in logits])
    return ImmutableMatrix(rows)


def self_attention(X, W_Q, W_K, W_V, mask=None) -> ImmutableMatrix:
    """``softmax_rows((X W_Q)(X W_K)^T / sqrt(d_k) + M) (X W_V)``: one position-free head."""
    X, W_Q, W_K, W_V = (_as_matrix(m, n) for m, n in ((X, "X"), (W_Q, "W_Q"), (W_K, "W_K"), (W_V, "W_V")))
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.rows != X.cols:
            raise InvalidInputError(f"{name} has {W.rows} rows but X has {X.cols} columns (d)",
                                    X_shape=X.shape, **{f"{name}_shape": W.shape})
    if W_Q.cols != W_K.cols:
        raise InvalidInputError(f"W_Q and W_K must have the same number of columns (d_k), got "
                                f"{W_Q.cols} and {W_K.cols}")
    d_k = W_K.cols
    scores = (X * W_Q) * (X * W_K).T / sp.sqrt(d_k)
    return ImmutableMatrix(softmax_rows(scores, mask) * (X * W_V))
