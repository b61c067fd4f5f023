"""Triton body of a plain RoPE kernel: the torch module's table and API over one ``@triton.jit`` kernel.

The module shares the exported torch module's table (``table(positions,
dtype, device)``: the (cos, sin) of each distinct id, computed in float64 by
torch and rounded once), its input checks and its public functions
(``apply``, ``apply_``, ``apply_qk``, ``backward``, autograd through
``R_m^T``); what differs is ``_rotation``: one Triton program per block of
rows, each row reading its table row through the row ids
(``RopeTable.rows``), both coordinates of every pair loaded, rotated and
stored once (``out`` may be ``x``: a program reads a pair before writing it),
the unrotated tail copied.  The pair indices come from
:func:`~symproof._export._symbolic.pair_index_form` and the update from
:func:`~symproof._export._symbolic.rotation_form`, printed by SymPy's Python
printer, as the C body prints them with the C printer.  On a machine without
a GPU the kernel runs in Triton's interpreter (``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

from ._symbolic import DIRECTIONS, RopeSpec, cos_t, pair, pair_index_form, rotation_form, sin_t, x_a, x_b
from ._printers import PythonKernelPrinter
from ._rope_torch import _API, _CONSTANTS, _TABLE, shared_fields

__all__ = ["rope_triton_body"]

_NAMES = {cos_t: "c", sin_t: "s", x_a: "x_a", x_b: "x_b", pair: "r"}

_HEAD = """
import os

import torch
import triton
import triton.language as tl

"""

_KERNEL = '''
# rows per Triton program
BLOCK_ROWS = 16
# Triton's interpreter (numpy on the CPU) was asked for when this module was imported, as Triton
# itself reads TRITON_INTERPRET (on, true, yes, 1...; "off" is off)
INTERPRETED = (bool(triton.knobs.runtime.interpret) if hasattr(triton, "knobs")
               else os.environ.get("TRITON_INTERPRET", "").strip().lower() in ("1", "true", "yes", "on", "y"))


@triton.jit
def _rope_kernel(x, out, rows, pairs, n_rows, x_stride, out_stride, BACKWARD: tl.constexpr,
                 N_PAIRS: tl.constexpr, PAIRS_BLOCK: tl.constexpr, TAIL: tl.constexpr, TAIL_BLOCK: tl.constexpr,
                 ROWS: tl.constexpr, COMPUTE: tl.constexpr):
    row = (tl.program_id(0) * ROWS + tl.arange(0, ROWS)).to(tl.int64)[:, None]
    r = tl.arange(0, PAIRS_BLOCK)[None, :]
    live_row = row < n_rows
    live = live_row & (r < N_PAIRS)
    entry = tl.load(rows + row, mask=live_row, other=0)
    c = tl.load(pairs + (entry * N_PAIRS + r) * 2, mask=live, other=0).to(COMPUTE)
    s = tl.load(pairs + (entry * N_PAIRS + r) * 2 + 1, mask=live, other=0).to(COMPUTE)
    at_a, at_b = {index_a}, {index_b}
    x_a = tl.load(x + row * x_stride + at_a, mask=live, other=0).to(COMPUTE)
    x_b = tl.load(x + row * x_stride + at_b, mask=live, other=0).to(COMPUTE)
    if BACKWARD:
        new_a, new_b = {backward_a}, {backward_b}
    else:
        new_a, new_b = {forward_a}, {forward_b}
    tl.store(out + row * out_stride + at_a, new_a.to(out.dtype.element_ty), mask=live)
    tl.store(out + row * out_stride + at_b, new_b.to(out.dtype.element_ty), mask=live)
    if TAIL > 0:  # partial rotation: the entries past ROTARY_DIM are copied
        j = {rotary_dim} + tl.arange(0, TAIL_BLOCK)[None, :]
        kept = live_row & (j < {rotary_dim} + TAIL)
        tl.store(out + row * out_stride + j, tl.load(x + row * x_stride + j, mask=kept), mask=kept)


def _rows_of(t):
    """t as a (rows, HEAD_DIM) view with unit stride along the row, or None if its strides forbid one."""
    if t.stride(-1) != 1:
        return None
    try:
        return t.view(-1, HEAD_DIM)
    except RuntimeError:
        return None


def _rotation(x, rope, direction, out=None):
    """The rotation of x by one launch of ``_rope_kernel`` (into out, a new tensor if None, or x)."""
    if x.device.type == "cpu" and not INTERPRETED:
        raise ValueError("the Triton kernel runs on a GPU tensor, or on the CPU in Triton's interpreter: "
                         "set TRITON_INTERPRET=1 before importing this module (or use the torch export)")
    if out is None:
        out = torch.empty_like(x, memory_format=torch.contiguous_format)
    source, target = _rows_of(x), _rows_of(out)
    if source is None or target is None:  # odd strides: through contiguous copies
        rotated = _rotation(x.contiguous(), rope, direction)
        return out.copy_(rotated)
    rows = rope.rows(x.shape)
    count = rows.numel()
    if count == 0:
        return out
    tail = HEAD_DIM - ROTARY_DIM
    compute = tl.float64 if x.dtype == torch.float64 else tl.float32
    grid = (triton.cdiv(count, BLOCK_ROWS),)
    _rope_kernel[grid](source, target, rows, rope.pairs, count, source.stride(0), target.stride(0),
                       BACKWARD=direction == "backward", N_PAIRS=ROTARY_DIM // 2,
                       PAIRS_BLOCK=triton.next_power_of_2(ROTARY_DIM // 2), TAIL=tail,
                       TAIL_BLOCK=triton.next_power_of_2(max(tail, 1)), ROWS=BLOCK_ROWS, COMPUTE=compute)
    return out


'''


def _py(expr) -> str:
    return PythonKernelPrinter(_NAMES).doprint(expr)


def rope_triton_body(spec: RopeSpec) -> str:
    """The Triton module (``table``, ``apply``, ``apply_``, ``apply_qk``, ``backward``) for ``spec``."""
    fields = shared_fields(spec)
    index_a, index_b = (_py(e) for e in pair_index_form(spec.config.rotary_dim, spec.config.pairing))
    kernel = {"index_a": index_a, "index_b": index_b, "rotary_dim": spec.config.rotary_dim}
    for direction in DIRECTIONS:
        kernel[f"{direction}_a"], kernel[f"{direction}_b"] = (_py(e) for e in rotation_form(direction).update)
    return (_HEAD + _CONSTANTS.format(**fields) + _TABLE.format(**fields) + _KERNEL.format(**kernel)
            + _API.format(**fields))
