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


#: up to this many entries the rows are printed as float64 literals; beyond, as the base64 text of their
#: little-endian float64 bytes (a GPT-2 table printed as literals is 16 MB of source Python compiles slowly)
MAX_LITERAL_ENTRIES = 4096


def _rows(values) -> str:
    return "[\n" + "".join(f"    [{floats(row)}],\n" for row in values.tolist()) + "]"


def _packed(values) -> list:
    """``_ROWS_BASE64`` (the rows' little-endian float64 bytes, 76 characters a line) and the lines that
    unpack it into a list of rows of Python floats, exactly (``struct``, whatever the machine's byte order)."""
    import base64

    text = base64.b64encode(values.astype("<f8").tobytes()).decode("ascii")
    rows, width = values.shape
    return ["_ROWS_BASE64 = (", *[f'    "{text[k:k + 76]}"' for k in range(0, len(text), 76)], ")",
            f"_FLAT = struct.unpack('<{rows * width}d', base64.b64decode(_ROWS_BASE64))",
            f"_ROWS_LIST = [list(_FLAT[k:k + {width}]) for k in range(0, {rows * width}, {width})]"]


def table_source(variant, target: str) -> str:
    """The Python file of ``variant``'s learned table for ``target`` (numpy or torch)."""
    table = variant.vectors
    lib = "numpy" if target == "numpy" else "torch"
    last = variant.last_position
    packed = table.values.size > MAX_LITERAL_ENTRIES
    if packed:
        listed = [*_packed(table.values)]
        rows = "_ROWS_LIST"
    else:
        listed, rows = [], _rows(table.values)
    lines = ["", *(["import base64", "import struct"] if packed else []), "import math", f"import {lib}", "",
             *range_guard(target, last), "",
             f"# one row per position 0..{table.last}, one column per model coordinate ({table.rows} x {table.width})",
             *listed,
             f"ROWS = {lib}.array(" + rows + f", dtype={lib}.float64)" if target == "numpy" else
             "ROWS = " + rows + "  # a list: torch.tensor() copies it on the caller's device",
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
