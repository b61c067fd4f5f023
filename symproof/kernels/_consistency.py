"""Executable consistency checks: padding, packing, KV cache, reload.

Small float64 reference computations that back the ``ids.*`` and
``config.*`` claims of chapter section 7.5.  They are written for clarity
(one attention layer, explicit loops where the chapter describes a loop), not
speed.

Conventions: ``x`` is ``(T, d_model)``; ``weights`` is ``(W_Q, W_K, W_V)``
with ``q = x W_Q`` (so each is ``(d_model, d_k)``); a mask is boolean with
``True`` where a query may attend to a key; positions are integers.
"""

from __future__ import annotations

import json

import numpy as np

from .._ground._errors import InvalidInputError, MaskedRowError
from .._export._config import RopeConfig, atomic_write_text
from ._generate import rope_apply
from ._lookup import learned_position_lookup

__all__ = [
    "attention", "causal_mask", "padding_mask", "positions_from_mask", "document_positions", "document_mask",
    "rope_attention", "absolute_attention", "decode_with_cache", "rope_position_table",
    "apply_position_table", "save_position_table", "load_position_table",
]


def _finite(array, name: str) -> np.ndarray:
    array = np.asarray(array, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise InvalidInputError(f"{name} must be finite, got {array[where]} at index {where}")
    return array


def attention(q, k, v, mask=None, *, scale: float | None = None) -> np.ndarray:
    """Softmax attention ``softmax(q k^T * scale, masked) v`` in float64.

    ``q`` is ``(..., T_q, d)``, ``k`` ``(..., T_k, d)``, ``v`` ``(..., T_k, d_v)``
    and ``mask`` (broadcastable to ``(..., T_q, T_k)``) is ``True`` where a
    query may attend.  ``scale`` defaults to ``1 / sqrt(d)``.  A query row
    with no allowed key has no softmax: it raises :class:`MaskedRowError`
    naming the row, instead of returning NaN.
    """
    q, k, v = _finite(q, "q"), _finite(k, "k"), _finite(v, "v")
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise InvalidInputError(f"q, k, v must be at least 2-D (T, d), got shapes {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise InvalidInputError(f"q and k must have the same width, got {q.shape[-1]} and {k.shape[-1]}",
                                q_shape=q.shape, k_shape=k.shape)
    if k.shape[-2] != v.shape[-2]:
        raise InvalidInputError(f"k and v must have the same number of positions, got {k.shape[-2]} and {v.shape[-2]}",
                                k_shape=k.shape, v_shape=v.shape)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else float(scale)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype != bool:
            raise InvalidInputError(f"mask must be boolean (True = may attend), got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, scores.shape)
        except ValueError:
            raise InvalidInputError(f"mask of shape {mask.shape} does not broadcast to the scores "
                                    f"{scores.shape} (..., T_q, T_k)") from None
        empty = ~mask.any(axis=-1)
        if empty.any():
            where = tuple(int(i) for i in np.argwhere(empty)[0])
            raise MaskedRowError(
                f"attention row {where[-1]} has no allowed key (its mask row is all False), "
                "so its softmax is undefined; give every query at least one key or drop the row",
                row=where[-1], batch=where[:-1] or None)
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return np.matmul(weights, v)


def causal_mask(length: int) -> np.ndarray:
    """``mask[i, j] = j <= i``: each query sees itself and earlier columns."""
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 1:
        raise InvalidInputError(f"length must be a positive integer, got {length!r}")
    return np.tril(np.ones((length, length), dtype=bool))


def _boolean(valid, name: str) -> np.ndarray:
    array = np.asarray(valid)
    if array.dtype != bool:
        if not np.issubdtype(array.dtype, np.integer) or not np.isin(array, (0, 1)).all():
            raise InvalidInputError(f"{name} must be boolean (or 0/1), got dtype {array.dtype}")
        array = array.astype(bool)
    if array.ndim < 1:
        raise InvalidInputError(f"{name} must have a token axis, got a scalar")
    return array


def positions_from_mask(valid) -> np.ndarray:
    """Model positions from a validity mask ``(..., T)``: the number of valid tokens before, from 0.

    With left padding the first real token gets position 0 whatever its
    storage column; padding columns get the count of valid tokens before them.
    """
    valid = _boolean(valid, "valid")
    counts = np.cumsum(valid, axis=-1, dtype=np.int64)
    return counts - valid


def padding_mask(valid, *, causal: bool = True) -> np.ndarray:
    """Attention mask for padded rows ``(..., T)``: valid queries see valid (earlier) keys.

    A padding query would have no key at all (left padding puts only padding
    before it), so it sees itself only: its output is defined and discarded.
    """
    valid = _boolean(valid, "valid")
    length = valid.shape[-1]
    mask = np.broadcast_to(valid[..., None, :], (*valid.shape, length))
    if causal:
        mask = mask & causal_mask(length)
    return mask | (np.eye(length, dtype=bool) & ~valid[..., :, None])


def _document_ids(doc_ids) -> np.ndarray:
    ids = np.asarray(doc_ids)
    if ids.ndim < 1 or not np.issubdtype(ids.dtype, np.integer):
        raise InvalidInputError(f"document ids must be an integer array (..., T), got dtype {ids.dtype}, "
                                f"shape {ids.shape}")
    rows = ids.reshape(-1, ids.shape[-1])
    for b, row in enumerate(rows):
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        if len(starts) != len(np.unique(row)):
            again = next(int(row[s]) for k, s in enumerate(starts) if row[s] in row[starts[:k]])
            raise InvalidInputError(
                f"document {again} appears in two separate runs of row {b}; a packed document "
                "must occupy consecutive columns", document=again, row=b)
    return ids


def document_positions(doc_ids) -> np.ndarray:
    """Positions that restart at 0 at the first column of each packed document."""
    ids = _document_ids(doc_ids)
    columns = np.arange(ids.shape[-1])
    starts = np.ones(ids.shape, dtype=bool)
    starts[..., 1:] = ids[..., 1:] != ids[..., :-1]
    first_column = np.maximum.accumulate(np.where(starts, columns, 0), axis=-1)
    return columns - first_column


def document_mask(doc_ids, *, causal: bool = True) -> np.ndarray:
    """``mask[..., i, j]``: query ``i`` and key ``j`` are in the same document (and ``j <= i``)."""
    ids = _document_ids(doc_ids)
    same = ids[..., :, None] == ids[..., None, :]
    return same & causal_mask(ids.shape[-1]) if causal else same


def _weights(weights, d_model: int):
    if len(weights) != 3:
        raise InvalidInputError(f"weights must be (W_Q, W_K, W_V), got {len(weights)} arrays")
    arrays = tuple(_finite(w, name) for w, name in zip(weights, ("W_Q", "W_K", "W_V")))
    for w, name in zip(arrays, ("W_Q", "W_K", "W_V")):
        if w.ndim != 2 or w.shape[0] != d_model:
            raise InvalidInputError(f"{name} must be (d_model={d_model}, width), got shape {w.shape}")
    return arrays


def rope_attention(x, weights, positions, mask=None, **rope) -> np.ndarray:
    """One attention layer with RoPE: ``q = R_pos(x W_Q)``, ``k = R_pos(x W_K)``, ``v = x W_V``.

    ``rope`` is passed to :func:`rope_apply` (``config=``, ``freqs=``, ``base=``...).
    """
    x = _finite(x, "x")
    w_q, w_k, w_v = _weights(weights, x.shape[-1])
    q = rope_apply(x @ w_q, positions, **rope)
    k = rope_apply(x @ w_k, positions, **rope)
    return attention(q, k, x @ w_v, mask)


def absolute_attention(x, weights, positions, table, mask=None) -> np.ndarray:
    """One attention layer with absolute positions: ``x + P[pos]`` read from a learned table."""
    x = _finite(x, "x")
    w_q, w_k, w_v = _weights(weights, x.shape[-1])
    h = x + learned_position_lookup(table, positions)
    return attention(h @ w_q, h @ w_k, h @ w_v, mask)


def decode_with_cache(x, weights, positions=None, *, query_positions=None, **rope) -> np.ndarray:
    """Token-by-token decoding with a KV cache, as an inference loop does it.

    At step ``t`` the new key is rotated at ``positions[t]`` and appended to
    the cache (cached keys are never rotated again), and the new query is
    rotated at ``query_positions[t]`` (by default its true position
    ``positions[t]``) and attends to the whole cache.  Returns the ``T``
    outputs, one per step.
    """
    x = _finite(x, "x")
    w_q, w_k, w_v = _weights(weights, x.shape[-1])
    length = x.shape[-2]
    positions = np.arange(length) if positions is None else np.asarray(positions)
    query_positions = positions if query_positions is None else np.asarray(query_positions)
    for name, pos in (("positions", positions), ("query_positions", query_positions)):
        if pos.shape != (length,):
            raise InvalidInputError(f"{name} must have shape ({length},), got {pos.shape}")
    keys, values, outputs = [], [], []
    for t in range(length):
        token = x[t:t + 1]
        keys.append(rope_apply(token @ w_k, positions[t:t + 1], **rope))
        values.append(token @ w_v)
        query = rope_apply(token @ w_q, query_positions[t:t + 1], **rope)
        outputs.append(attention(query, np.concatenate(keys), np.concatenate(values)))
    return np.concatenate(outputs)


def rope_position_table(n_positions: int, config: RopeConfig) -> np.ndarray:
    """The full precomputed table of a RoPE configuration: ``table[m] = R_m`` (``d_k x d_k``).

    Built by applying :func:`rope_apply` to the basis vectors, so it is the
    position function itself whatever its pairing or partial width.
    """
    if isinstance(n_positions, bool) or not isinstance(n_positions, (int, np.integer)) or n_positions < 1:
        raise InvalidInputError(f"n_positions must be a positive integer, got {n_positions!r}")
    d = config.head_dim
    basis = np.broadcast_to(np.eye(d), (n_positions, d, d))
    positions = np.broadcast_to(np.arange(n_positions)[:, None], (n_positions, d))
    # row e of basis, rotated at m, is column e of R_m
    return np.swapaxes(rope_apply(basis, positions, config=config), -1, -2)


def apply_position_table(x, positions, table) -> np.ndarray:
    """``R_{positions[t]} x_t`` read from a precomputed table (a table-driven kernel)."""
    x = np.asarray(x)
    rows = learned_position_lookup(table.reshape(table.shape[0], -1), positions)
    matrices = rows.reshape(*rows.shape[:-1], *table.shape[1:])
    return np.einsum("...ij,...j->...i", matrices, x)


def save_position_table(path, config: RopeConfig, table: np.ndarray) -> None:
    """Save a precomputed table with the configuration that made it (JSON, atomic).

    JSON numbers are written with Python's shortest round-trip repr, so every
    float64 reloads to the same bits.
    """
    document = {"config": config.to_dict(), "shape": list(table.shape), "dtype": str(table.dtype),
                "values": np.asarray(table).ravel().tolist()}
    atomic_write_text(path, json.dumps(document) + "\n")


def load_position_table(path):
    """``(config, table)`` saved by :func:`save_position_table`."""
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
        config = RopeConfig.from_dict(document["config"])
        table = np.array(document["values"], dtype=document["dtype"]).reshape(document["shape"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise InvalidInputError(f"{path}: not a saved position table ({type(err).__name__}: {err})") from None
    return config, table
