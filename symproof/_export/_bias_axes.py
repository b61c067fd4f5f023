"""Bias bodies over several position axes (Swin's 2-D relative position bias): ``bias_at`` takes positions
with one coordinate per axis.

``bias_at(query_positions, key_positions)`` takes arrays of shape ``(Q, N_AXES)`` and ``(K, N_AXES)`` and
returns ``b[h, a, b]``; ``window(*sizes)`` lists the positions of a window row-major (Swin's token order)
and ``bias_window(*sizes)`` is the bias of a window against itself, ``(heads, P, P)`` for ``P`` positions.
Every table read is checked (an index outside the table raises ``PositionOutOfTableError``), and with a
declared range ``0..N`` every coordinate is checked first (``PositionOutOfRangeError``).
"""

from __future__ import annotations

import sympy as sp

from . import file_name, floats
from ._printers import NumPyKernelPrinter, guard_table_reads, numbers_as_floats, range_guard, torch_printer, \
    with_table_reader

__all__ = ["bodies"]


def bodies(variant, module: str, target: str) -> dict:
    """``{file name: body}`` for numpy or torch (C exports rotary and dense files)."""
    return {file_name(module, target): _python_source(variant, target)}


def _python_source(variant, target: str) -> str:
    printer = NumPyKernelPrinter() if target == "numpy" else torch_printer()
    lib = "numpy" if target == "numpy" else "torch"
    as_array = "numpy.asarray" if target == "numpy" else "torch.as_tensor"
    axes = list(variant.axes)
    queries = tuple(sp.Symbol(f"i_{a}", real=True) for a in axes)
    keys = tuple(sp.Symbol(f"j_{a}", real=True) for a in axes)
    slope, head = sp.Symbol("slope", real=True), sp.Symbol("h", integer=True, nonnegative=True)
    expr = guard_table_reads(variant.bias_at(queries, keys, slope, head))
    body = printer.doprint(numbers_as_floats(expr) if target == "torch" else expr)
    last = getattr(variant, "last_position", None)
    check = ["    _check_positions('i', q)", "    _check_positions('j', k)"] if last is not None else []
    unpack = [f"    i_{a} = q[:, {n}][None, :, None]" for n, a in enumerate(axes)]
    unpack += [f"    j_{a} = k[:, {n}][None, None, :]" for n, a in enumerate(axes)]
    returned = f"    return {body} + {lib}.zeros((len(FREQUENCIES), q.shape[0], k.shape[0]), dtype={lib}.float64)"
    if target == "numpy" and expr.has(sp.Piecewise):
        returned = f'    with numpy.errstate(divide="ignore", invalid="ignore"):\n    {returned}'
    grid = ("numpy.stack(numpy.meshgrid(*[numpy.arange(s, dtype=numpy.float64) for s in sizes], indexing='ij'), "
            "axis=-1).reshape(-1, len(sizes))" if target == "numpy" else
            "torch.stack(torch.meshgrid(*[torch.arange(s, dtype=torch.float64) for s in sizes], indexing='ij'), "
            "dim=-1).reshape(-1, len(sizes))")
    lines = ["", "import math", f"import {lib}", "", *range_guard(target, last), "",
             f"FREQUENCIES = {as_array}([{floats(variant.frequencies_digits(30))}], dtype={lib}.float64)"
             if target == "torch" else
             f"FREQUENCIES = numpy.array([{floats(variant.frequencies_digits(30))}], dtype=numpy.float64)",
             f"AXES = {axes!r}", f"N_AXES = {len(axes)}", "", "",
             "def bias_at(query_positions, key_positions):",
             '    """b[h, a, b] for the query at query_positions[a] and the key at key_positions[b]; positions have',
             '    shape (count, N_AXES), one coordinate per name of AXES."""',
             f"    q = {as_array}(query_positions, dtype={lib}.float64).reshape(-1, N_AXES)",
             f"    k = {as_array}(key_positions, dtype={lib}.float64).reshape(-1, N_AXES)",
             *check, *unpack,
             "    slope = FREQUENCIES[:, None, None]",
             f"    h = {lib}.arange(len(FREQUENCIES), dtype={lib}.float64)[:, None, None]",
             returned,
             "", "",
             "def window(*sizes):",
             '    """Every position of a window of the given size on each axis, row-major (Swin\'s token order)."""',
             f"    return {grid}",
             "", "",
             "def bias_window(*sizes):",
             '    """The bias of a window against itself: (heads, P, P) for the P positions of window(*sizes)."""',
             "    points = window(*sizes)",
             "    return bias_at(points, points)"]
    return with_table_reader(lines, target)
