"""A learned absolute position table (``[vectors]``) as an exported numpy or torch file.

The rows are printed as float64 literals (``repr`` reads back exactly), and ``table(positions)`` reads them
through the checked table read every exported kernel uses: a position that is negative, not an integer,
NaN or (without a clip) past the last row raises ``PositionOutOfTableError`` (an ``IndexError``) in one
line naming the position and the entries; a file that declares ``positions = "0..N"`` refuses every other
position first, with ``PositionOutOfRangeError``.  No target wraps a negative index.
"""

from __future__ import annotations

from . import floats
from ._printers import range_guard, with_table_reader

__all__ = ["table_source"]


def _rows(values) -> str:
    return "[\n" + "".join(f"    [{floats(row)}],\n" for row in values.tolist()) + "]"


def table_source(variant, target: str) -> str:
    """The Python file of ``variant``'s learned table for ``target`` (numpy or torch)."""
    table = variant.vectors
    lib = "numpy" if target == "numpy" else "torch"
    last = variant.last_position
    lines = ["", "import math", f"import {lib}", "", *range_guard(target, last), "",
             f"# one row per position 0..{table.last}, one column per model coordinate (from {table.origin})",
             f"ROWS = {lib}.array(" + _rows(table.values) + f", dtype={lib}.float64)" if target == "numpy" else
             "ROWS = " + _rows(table.values) + "  # a list: torch.tensor() copies it on the caller's device",
             f"LAST_ROW = {table.last}",
             "", "",
             "def table(positions):",
             '    """p_t for each position (rows): row t of the learned table'
             + (' (row LAST_ROW for every t past it)."""' if table.clip else '."""'),
             "    t = numpy.asarray(positions, dtype=numpy.float64)" if target == "numpy" else
             "    t = torch.as_tensor(positions, dtype=torch.float64)",
             *(["    _check_positions('t', t)"] if last is not None else []),
             f"    index = {lib}.minimum(t, {lib}.full_like(t, LAST_ROW))" if table.clip else "    index = t",
             "    return _read_table('vectors', ROWS, index, ['t'], [t])"]
    return with_table_reader(lines, target)
