"""Table lookups that refuse what a table cannot answer.

A learned position table has ``Tmax`` rows and nothing beyond: a position
past the table (or a negative one, which numpy would silently read from the
end) is an error, not a row of some other position.  Embedding tables are
read the same way, by token id.
"""

from __future__ import annotations

import numpy as np

from .._ground._errors import InvalidInputError, PositionOutOfRangeError

__all__ = ["learned_position_lookup", "embedding_lookup", "token_ids"]


def _as_table(table, name: str) -> np.ndarray:
    table = np.asarray(table)
    if table.ndim != 2:
        raise InvalidInputError(f"{name} must be a 2-D array (rows, width), got shape {table.shape}",
                                shape=table.shape)
    if table.shape[0] == 0:
        raise InvalidInputError(f"{name} has no rows", shape=table.shape)
    return table


def _as_indices(values, name: str) -> np.ndarray:
    """Integer indices; floats are accepted only when they hold integers (3.0, not 2.5)."""
    array = np.asarray(values)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer)
                                   or np.issubdtype(array.dtype, np.floating)):
        raise InvalidInputError(f"{name} must be integers, got dtype {array.dtype}", dtype=array.dtype)
    if np.issubdtype(array.dtype, np.floating):
        bad = ~np.isfinite(array) | (array != np.round(array))
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise InvalidInputError(
                f"{name} must be integers, got {array[where]!r} at index {_index(where)}",
                expected="whole numbers (a position or id is a row index)")
        array = array.astype(np.int64)
    return array


def _index(where: tuple) -> str:
    """``[2]``, ``[0, 3]``: an array index as the reader writes it (not Python's one-tuple ``(2,)``)."""
    return "[" + ", ".join(str(i) for i in where) + "]"


def _check_range(indices: np.ndarray, rows: int, name: str, error: type, limit_name: str) -> None:
    bad = (indices < 0) | (indices >= rows)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = int(indices[where])
        side = "negative" if value < 0 else f"past the last row {rows - 1}"
        raise error(
            f"{name} {value} at index {_index(where)} is {side}: the table has {limit_name} = {rows} rows "
            f"(valid {name}s are 0 .. {rows - 1})",
            **{name: value, limit_name: rows})


def learned_position_lookup(table, positions) -> np.ndarray:
    """Rows ``table[positions]`` of a learned position table of shape ``(Tmax, d)``.

    Raises :class:`PositionOutOfRangeError` naming the offending position and
    ``Tmax`` when a position is negative or ``>= Tmax`` (a learned table has no
    row to extrapolate from), and :class:`InvalidInputError` for non-integer
    positions or a table that is not 2-D.
    """
    table = _as_table(table, "position table")
    positions = _as_indices(positions, "positions")
    _check_range(positions, table.shape[0], "position", PositionOutOfRangeError, "Tmax")
    return table[positions]


def embedding_lookup(table, ids) -> np.ndarray:
    """Rows ``table[ids]`` of an embedding table of shape ``(vocab_size, d)``.

    Raises :class:`InvalidInputError` for an id outside ``0 .. vocab_size - 1``
    or a non-integer id.
    """
    table = _as_table(table, "embedding table")
    ids = _as_indices(ids, "ids")
    _check_range(ids, table.shape[0], "id", InvalidInputError, "vocab_size")
    return table[ids]


def token_ids(tokens, vocabulary) -> np.ndarray:
    """The ids of ``tokens`` in ``vocabulary`` (a sequence whose index is the id).

    The id order belongs to the embedding table: reading a table through
    another tokenizer's order returns other tokens' vectors without any error,
    so an unknown token is refused here rather than mapped to some default.
    """
    index = {token: n for n, token in enumerate(vocabulary)}
    if len(index) != len(vocabulary):
        seen = set()
        twice = next(t for t in vocabulary if t in seen or seen.add(t))
        raise InvalidInputError(f"vocabulary lists token {twice!r} twice; an id order must be a bijection",
                                token=twice)
    missing = [t for t in tokens if t not in index]
    if missing:
        raise InvalidInputError(f"token {missing[0]!r} is not in the vocabulary of {len(index)} tokens",
                                token=missing[0])
    return np.array([index[t] for t in tokens], dtype=np.int64)
