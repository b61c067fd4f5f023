"""PyTorch body of a plain RoPE kernel, printed from the symbolic definitions by SymPy's PyTorch printer.

Tuned for per-call overhead and memory traffic: the table of one forward pass
is built once and shared by every layer (``table(positions, dtype,
device)``), for the distinct position ids only (a decode step's ids repeated
over heads are one row each), and ``apply_qk`` rotates queries and keys in
one call.  Contiguous float32/float64 CPU tensors run the exported C kernel
printed from the same definitions (:func:`._rope_c.rope_c_bodies`: one fused
pass reading ``x`` once and writing ``out`` once, ``out`` may be ``x``),
compiled on first use and called through ``ctypes``; everything else (other
devices, dtypes, strides, no C compiler) runs eager torch: adjacent pairs as
one complex multiplication, half pairing as ``addcmul`` on the two halves.
The backward is an autograd Function applying ``R_m^T``.
"""

from __future__ import annotations

import sympy as sp

from ._symbolic import DIRECTIONS, RopeSpec, angle_entries, omega, position, rotation_form
from . import float_rows
from ._printers import torch_printer
from ._native import NATIVE, native_fields

__all__ = ["rope_torch_body"]

_NAMES = {position: "p", omega: "w"}


def _torch(expr) -> str:
    return torch_printer(_NAMES).doprint(expr)


_HEAD = """
import ctypes
import hashlib
import os
import stat
import subprocess
import tempfile
import threading

import torch

"""

#: what the torch and Triton modules share: constants, the table, input checks
_CONSTANTS = """HEAD_DIM = {head_dim}
ROTARY_DIM = {rotary_dim}
PAIRING = {pairing!r}
# {frequency_doc}; exact values rounded once to float64
FREQUENCIES = torch.tensor({frequencies}, dtype=torch.float64)
DIRECTIONS = ("forward", "backward")

# tables of more ids than this merge repeated ids first (on the CPU): below it unique costs more than it saves
DISTINCT_FROM = 32

"""

_TORCH_CONSTANTS = """# up to this many elements (a decode step), half pairing spends one small copy to save dispatches
SMALL = 1 << 16

# a native call on at least this many entries is split over torch's intra-op threads; rows are
# independent, so the split changes no bit
NATIVE_PARALLEL_ELEMENTS = 1 << 18
_NATIVE_DTYPES = {{torch.float32: "float32", torch.float64: "float64"}}


"""

_TABLE = """def angle_table(p, w):
    \"\"\"(cos theta, sin theta) of position id p at frequency w: the first column of R(theta).\"\"\"
{angle_code}


def _factors(c, s, direction):
    \"\"\"What a row is multiplied by, printed from the entries of the pair's 2x2 matrix.

    adjacent pairs in float32/float64: pair r is the complex number x[2r] + i x[2r+1], rotated by
    one complex factor; otherwise (x_a, x_b) = the pairs' first and second coordinates and
    out_a = x_a m00 + x_b m01, out_b = x_b m11 + x_a m10: ([m00 | m11], [m01 | m10], m00, m11, m01, m10).\"\"\"
    if PAIRING == "adjacent" and c.dtype in (torch.float32, torch.float64):
        if direction == "forward":
            return torch.complex({forward_re}, {forward_im})
        return torch.complex({backward_re}, {backward_im})
    if direction == "forward":
        m00, m01, m10, m11 = {forward_entries}
    else:
        m00, m01, m10, m11 = {backward_entries}
    return torch.cat((m00, m11), dim=-1), torch.cat((m01, m10), dim=-1), m00, m11, m01, m10


class RopeTable:
    \"\"\"The rotation of every position id of one forward pass, on one device and dtype.

    Build it once per forward (``table(positions, dtype, device)``) and hand it to every layer's
    ``apply``, as HF models share ``cos, sin``.  ``pairs`` holds (cos, sin) of each distinct id once,
    shape (n, ROTARY_DIM // 2, 2); ``index`` (broadcastable to x.shape[:-1]) is each id's row of it.
    ``cos``/``sin`` (shaped like the ids) and the factors are made on first use.\"\"\"

    __slots__ = ("positions", "pairs", "index", "dtype", "device", "_factors", "_rows")

    def __init__(self, positions, pairs, index):
        self.positions, self.pairs, self.index = positions, pairs, index
        self.dtype, self.device = pairs.dtype, pairs.device
        self._factors, self._rows = {{}}, {{}}  # shape of x -> its rows' index into pairs, once checked

    @property
    def cos(self):
        return self.pairs[self.index][..., 0]

    @property
    def sin(self):
        return self.pairs[self.index][..., 1]

    def factors(self, direction="forward"):
        found = self._factors.get(direction)
        if found is None:
            gathered = self.pairs[self.index]
            found = self._factors[direction] = _factors(gathered[..., 0], gathered[..., 1], direction)
        return found

    def rows(self, shape):
        \"\"\"The row of ``pairs`` of every row of an x of ``shape``: contiguous int64 (the C kernel's ids).\"\"\"
        found = self._rows[shape]
        if found is None:
            key = (self.device, self.index.shape, shape[:-1])
            if _identities.get(key[:2]) is self.index:  # depends on the shapes only: shared by every step
                found = _identities.get(key)
                if found is None:
                    found = _remember(key, self.index.expand(shape[:-1]).contiguous())
            else:
                found = self.index.expand(shape[:-1]).contiguous()
            self._rows[shape] = found
        return found

    def __repr__(self):
        return (f"RopeTable(positions of shape {{tuple(self.positions.shape)}}, {{len(self.pairs)}} distinct, "
                f"{{PAIRING}} pairing, {{self.dtype}}, {{self.device}})")


_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_frequencies_on = {{}}  # device -> FREQUENCIES there (a decode step should not copy them every call)


def _check_positions(positions, device):
    if device is not None and not isinstance(device, torch.device):
        device = torch.device(device)
    if not torch.is_tensor(positions) or (device is not None and positions.device != device):
        positions = torch.as_tensor(positions, device=device)
    kind = positions.dtype
    if kind.is_floating_point or kind.is_complex or kind == torch.bool:
        raise ValueError(f"positions must be integers, got {{kind}}")
    return positions


def _distinct(positions):
    \"\"\"``(ids, index)``: the ids to tabulate (1-D) and each position's entry in them.

    Axes the ids are broadcast over (stride 0, as ``expand`` makes) are dropped first; on the CPU,
    past DISTINCT_FROM ids, one id everywhere is one row and otherwise repeats are merged
    (``unique``); on an accelerator both would wait for the device.\"\"\"
    compact, strides = positions, positions.stride()
    if 0 in strides:
        compact = positions[tuple(slice(0, 1) if st == 0 else slice(None) for st in strides)]
    if compact.device.type == "cpu" and compact.numel() > DISTINCT_FROM:
        low, high = torch.aminmax(compact)
        if low.item() == high.item():  # one id for all (a batch decoding in step): one row
            compact = compact.reshape(-1)[:1].view((1,) * compact.dim())
        else:
            return torch.unique(compact, return_inverse=True)
    key = (compact.device, compact.shape)
    index = _identities.get(key)
    if index is None:
        index = _remember(key, torch.arange(compact.numel(), device=compact.device).view(compact.shape))
    return compact.reshape(-1), index


# (device, shape) -> arange(n).view(shape), and (device, shape, rows) -> it expanded over rows, contiguous:
# the index of ids that are all tabulated (no repeats merged) depends on shapes alone, so a decode loop
# makes it once, not once per step (never written to: kernels only read it)
_identities = {{}}


def _remember(key, value):
    if len(_identities) > 256:
        _identities.clear()
    _identities[key] = value
    return value


def table(positions, dtype=torch.float32, device=None):
    \"\"\"The :class:`RopeTable` of integer ``positions`` (any shape broadcastable to x.shape[:-1]).

    Angles are computed in float64 on ``device`` (default: the positions' device), for each
    distinct id once, then rounded once to ``dtype``.\"\"\"
    if dtype not in _FLOAT_DTYPES:
        raise ValueError(f"dtype must be a floating dtype, got {{dtype}}")
    positions = _check_positions(positions, device)
    where = positions.device
    frequencies = _frequencies_on.get(where)
    if frequencies is None:
        frequencies = _frequencies_on[where] = FREQUENCIES.to(where)
    ids, index = _distinct(positions)
    # integer ids times float64 frequencies: float64 angles (ids are exact below 2^53)
    pairs = torch.stack(angle_table(ids.unsqueeze(-1), frequencies), dim=-1).to(dtype)
    return RopeTable(positions, pairs, index)


def _resolve(x, positions, rope, name):
    if not torch.is_tensor(x) or not x.is_floating_point() or x.dim() < 2 or x.shape[-1] != HEAD_DIM:
        raise ValueError(f"{{name}} must be a floating tensor of shape (..., T, {{HEAD_DIM}})")
    if rope is None:
        if positions is None:
            raise ValueError("give the position ids or a table built from them")
        rope = table(positions, x.dtype, x.device)  # x's dtype and device by construction
    elif not isinstance(rope, RopeTable):
        raise ValueError(f"table must be a RopeTable from table(positions), got {{type(rope).__name__}}")
    elif positions is not None and positions is not rope.positions and not torch.equal(
            _check_positions(positions, rope.device), rope.positions):
        raise ValueError("positions differ from the ids the table was built from")
    elif rope.dtype != x.dtype or rope.device != x.device:
        raise ValueError(f"the table is {{rope.dtype}} on {{rope.device}}, {{name}} is {{x.dtype}} on {{x.device}}: "
                         "build it with table(positions, x.dtype, x.device)")
    if x.shape not in rope._rows:
        shape = rope.positions.shape  # broadcasts to the rows without growing them (plain ints: no dispatch)
        if len(shape) >= x.dim() or any(n != 1 and n != m for n, m in zip(reversed(shape), reversed(x.shape[:-1]))):
            raise ValueError(f"positions of shape {{tuple(shape)}} do not broadcast to {{tuple(x.shape[:-1])}}")
        rope._rows[x.shape] = None  # checked; the C kernel's row ids are made on first use
    return rope


"""

_TORCH_ROTATION = """def _complex_view(t):
    \"\"\"The rotated part of t as complex numbers (adjacent pairs), or None if its strides forbid it.\"\"\"
    try:
        rotated = t if ROTARY_DIM == HEAD_DIM else t[..., :ROTARY_DIM]
        return torch.view_as_complex(rotated.unflatten(-1, (ROTARY_DIM // 2, 2)))
    except RuntimeError:
        return None


def _rotate_into(x, factors, out=None):
    \"\"\"The rotation of x, into out (a new tensor if None, or x itself); no temporary beyond
    half of x in place.  Written for few dispatches: a decode step is all per-call overhead.\"\"\"
    whole = ROTARY_DIM == HEAD_DIM
    if torch.is_tensor(factors):  # complex: adjacent pairs
        z = _complex_view(x)
        if out is None and whole and z is not None:
            return torch.view_as_real(torch.mul(z, factors)).flatten(-2)
        out = torch.empty_like(x) if out is None else out
        target = _complex_view(out)
        if z is None or target is None:  # odd strides or offset: through a contiguous copy
            rotated = _rotate_into(x.contiguous(), factors)
            out[..., :ROTARY_DIM].copy_(rotated[..., :ROTARY_DIM])
        else:
            torch.mul(z, factors, out=target)
    elif PAIRING == "half":
        diagonal, off, m00, m11, m01, m10 = factors
        half = ROTARY_DIM // 2
        if out is None and whole and x.numel() <= SMALL:  # three dispatches: [x_b | x_a] is a small copy
            return torch.addcmul(torch.mul(x, diagonal), x.roll(half, -1), off)
        rotated = x if whole else x[..., :ROTARY_DIM]
        x_a, x_b = rotated.narrow(-1, 0, half), rotated.narrow(-1, half, half)
        if out is x:  # x_a is overwritten first: keep its product with m10
            saved = torch.mul(x_a, m10)
            x_a.mul_(m00).addcmul_(x_b, m01)
            x_b.mul_(m11).add_(saved)
            return out
        if out is None and whole:
            out = target = torch.mul(x, diagonal)
        else:
            out = torch.empty_like(x) if out is None else out
            target = out if whole else out[..., :ROTARY_DIM]
            torch.mul(rotated, diagonal, out=target)
        target.narrow(-1, 0, half).addcmul_(x_b, m01)
        target.narrow(-1, half, half).addcmul_(x_a, m10)
    else:  # adjacent pairs in a dtype without complex numbers
        diagonal, off, m00, m11, m01, m10 = factors
        x_a, x_b = x[..., 0:ROTARY_DIM:2], x[..., 1:ROTARY_DIM:2]
        if out is x:
            saved = torch.mul(x_a, m10)
            x_a.mul_(m00).addcmul_(x_b, m01)
            x_b.mul_(m11).add_(saved)
            return out
        out = torch.empty_like(x) if out is None else out
        out_a, out_b = out[..., 0:ROTARY_DIM:2], out[..., 1:ROTARY_DIM:2]
        torch.mul(x_a, m00, out=out_a).addcmul_(x_b, m01)
        torch.mul(x_b, m11, out=out_b).addcmul_(x_a, m10)
    if not whole and out is not x:
        out[..., ROTARY_DIM:].copy_(x[..., ROTARY_DIM:])
    return out


def _native_rotate(x, rope, direction, out):
    \"\"\"The rotation through the C kernel, or None where it does not apply (device, dtype, strides).\"\"\"
    if not x.is_cpu or not x.is_contiguous() or (out is not None and not out.is_contiguous()):
        return None
    functions = _native_functions()
    function = None if functions is None else functions.get((_NATIVE_DTYPES.get(x.dtype), direction))
    if function is None:
        return None
    out = torch.empty_like(x) if out is None else out
    rows, pairs = rope.rows(x.shape), rope.pairs
    count = rows.numel()
    if x.numel() < NATIVE_PARALLEL_ELEMENTS:  # a decode step: one call, nothing else
        if function(x.data_ptr(), out.data_ptr(), rows.data_ptr(), count, pairs.data_ptr(), 0, pairs.shape[0]):
            raise RuntimeError("internal: the C kernel found a row id outside its table")
        return out
    _native_run(function, x.data_ptr(), out.data_ptr(), rows.data_ptr(), count, HEAD_DIM * x.element_size(),
                pairs.data_ptr(), pairs.shape[0], min(torch.get_num_threads(), 8))
    return out


def _rotation(x, rope, direction, out=None):
    done = _native_rotate(x, rope, direction, out) if NATIVE else None
    return _rotate_into(x, rope.factors(direction), out) if done is None else done


"""

#: the public functions, over ``_rotation(x, rope, direction, out)`` which each target defines
_API = """class _Rotation(torch.autograd.Function):
    \"\"\"R_m x with gradient R_m^T g, the proved backward of the rotation.\"\"\"

    @staticmethod
    def forward(ctx, x, rope, direction):
        ctx.rope, ctx.direction = rope, direction
        return _rotation(x, rope, direction)

    @staticmethod
    def backward(ctx, g):
        other = DIRECTIONS[1 - DIRECTIONS.index(ctx.direction)]
        return _Rotation.apply(g, ctx.rope, other), None, None


def _rotate(x, positions, rope, out, direction, name):
    return _rotate_resolved(x, _resolve(x, positions, rope, name), out, direction, name)


def _rotate_resolved(x, rope, out, direction, name):
    if torch.is_grad_enabled() and x.requires_grad:
        if out is not None:
            raise ValueError(f"out= (and in-place) cannot record a gradient; {{name}} requires grad: use out=None")
        return _Rotation.apply(x, rope, direction)
    if out is not None and out is not x:
        if not torch.is_tensor(out) or out.shape != x.shape or out.dtype != x.dtype or out.device != x.device:
            raise ValueError(f"out must be a tensor of shape {{tuple(x.shape)}}, {{x.dtype}} on {{x.device}}")
        if out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
            raise ValueError(f"out shares memory with {{name}} without being {{name}} itself: pass out={{name}} "
                             "(in place) or a separate tensor")
    return _rotation(x, rope, direction, out)  # nothing requires grad: no graph is recorded


def apply(x, positions=None, table=None, out=None):
    \"\"\"RoPE: rotate pair r of every row of x by the angle of its position id ({pairing} pairing).

    x: (..., T, HEAD_DIM); positions: integer ids broadcastable to x.shape[:-1], or ``table``
    built from them once per forward; out: a tensor to write into, or x itself (in place).\"\"\"
    return _rotate(x, positions, table, out, "forward", "x")


def apply_(x, positions=None, table=None):
    \"\"\"``apply`` in place: x is overwritten by its rotation and returned.\"\"\"
    return _rotate(x, positions, table, x, "forward", "x")


def apply_qk(q, k, positions=None, table=None):
    \"\"\"``(apply(q), apply(k))`` with one table (built here from ``positions`` if not given): the
    rotations of an attention layer's queries and keys, new tensors, in one call.\"\"\"
    rope = _resolve(q, positions, table, "q")
    return (_rotate_resolved(q, rope, None, "forward", "q"),
            _rotate(k, None, rope, None, "forward", "k"))


def backward(g, positions=None, table=None, out=None):
    \"\"\"The gradient of ``apply`` with respect to x: R_m^T g.\"\"\"
    return _rotate(g, positions, table, out, "backward", "g")
"""

_TEMPLATE = _HEAD + _CONSTANTS + _TORCH_CONSTANTS + NATIVE + _TABLE + _TORCH_ROTATION + _API


def _angle_code(cos_expr, sin_expr) -> str:
    """The body of ``angle_table``: the shared angle once (SymPy's ``cse``), then cos and sin of it."""
    shared, (cos_reduced, sin_reduced) = sp.cse([cos_expr, sin_expr], symbols=sp.numbered_symbols("_angle"))
    lines = [f"    {symbol} = {_torch(value)}\n" for symbol, value in shared]
    return "".join(lines) + f"    return ({_torch(cos_reduced)}, {_torch(sin_reduced)})"


def shared_fields(spec: RopeSpec) -> dict:
    """The format fields of :data:`_CONSTANTS`, :data:`_TABLE` and :data:`_API` (shared with the Triton body)."""
    cos_expr, sin_expr = angle_entries(spec.config)
    parts = {}
    for direction in DIRECTIONS:
        form = rotation_form(direction)
        parts[f"{direction}_re"], parts[f"{direction}_im"] = (_torch(e) for e in form.complex_factor.as_real_imag())
        parts[f"{direction}_entries"] = ", ".join(_torch(e) for e in form.entries)
    return dict(head_dim=spec.config.head_dim, rotary_dim=spec.config.rotary_dim, pairing=spec.config.pairing,
                frequency_doc=spec.describe_frequencies(), frequencies=float_rows(spec.frequency_values),
                angle_code=_angle_code(cos_expr, sin_expr), **parts)


def rope_torch_body(spec: RopeSpec) -> str:
    """The PyTorch module (``table``, ``apply``, ``apply_``, ``apply_qk``, ``backward``) for ``spec``, without its header."""
    return _TEMPLATE.format(**native_fields(spec, "torch"), **shared_fields(spec))
