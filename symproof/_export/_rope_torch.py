"""PyTorch body of a plain RoPE kernel, printed from the symbolic definitions by SymPy's PyTorch printer.

Tuned for per-call overhead and memory traffic: the table of one forward pass
is built once and shared by every layer (``table(positions, dtype,
device)``), adjacent pairs are one complex multiplication, half pairing runs
``addcmul`` on the two halves, ``out=`` and in place write no temporary beyond
half of ``x``, and the backward is an autograd Function applying ``R_m^T``.
"""

from __future__ import annotations

from ..kernels._symbolic import DIRECTIONS, RopeSpec, angle_entries, omega, position, rotation_form
from . import floats
from ._printers import torch_printer

__all__ = ["rope_torch_body"]

_NAMES = {position: "p", omega: "w"}


def _torch(expr) -> str:
    return torch_printer(_NAMES).doprint(expr)


_TEMPLATE = """
import torch

HEAD_DIM = {head_dim}
ROTARY_DIM = {rotary_dim}
PAIRING = {pairing!r}
# {frequency_doc}; exact values rounded once to float64
FREQUENCIES = torch.tensor({frequencies}, dtype=torch.float64)
DIRECTIONS = ("forward", "backward")
# up to this many elements (a decode step), half pairing spends one small copy to save dispatches
SMALL = 1 << 16


def angle_table(p, w):
    \"\"\"(cos theta, sin theta) of position id p at frequency w: the first column of R(theta).\"\"\"
    return ({cos_code}, {sin_code})


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
    ``apply``, as HF models share ``cos, sin``.  Factors are made on first use per direction.\"\"\"

    __slots__ = ("positions", "cos", "sin", "dtype", "device", "_factors", "_fits")

    def __init__(self, positions, cos_, sin_):
        self.positions, self.cos, self.sin = positions, cos_, sin_
        self.dtype, self.device = cos_.dtype, cos_.device
        self._factors, self._fits = {{}}, set()  # shapes of x the positions are known to broadcast to

    def factors(self, direction="forward"):
        found = self._factors.get(direction)
        if found is None:
            found = self._factors[direction] = _factors(self.cos, self.sin, direction)
        return found

    def __repr__(self):
        return (f"RopeTable(positions of shape {{tuple(self.positions.shape)}}, {{PAIRING}} pairing, "
                f"{{self.dtype}}, {{self.device}})")


_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_frequencies_on = {{}}  # device -> FREQUENCIES there (a decode step should not copy them every call)


def _check_positions(positions, device):
    if not torch.is_tensor(positions) or (device is not None and positions.device != torch.device(device)):
        positions = torch.as_tensor(positions, device=device)
    kind = positions.dtype
    if kind.is_floating_point or kind.is_complex or kind == torch.bool:
        raise ValueError(f"positions must be integers, got {{kind}}")
    return positions


def table(positions, dtype=torch.float32, device=None):
    \"\"\"The :class:`RopeTable` of integer ``positions`` (any shape broadcastable to x.shape[:-1]).

    Angles are computed in float64 on ``device`` (default: the positions' device), then rounded
    once to ``dtype``.\"\"\"
    if dtype not in _FLOAT_DTYPES:
        raise ValueError(f"dtype must be a floating dtype, got {{dtype}}")
    positions = _check_positions(positions, device)
    frequencies = _frequencies_on.get(positions.device)
    if frequencies is None:
        frequencies = _frequencies_on[positions.device] = FREQUENCIES.to(positions.device)
    # integer ids times float64 frequencies: float64 angles (ids are exact below 2^53)
    cos_, sin_ = angle_table(positions.unsqueeze(-1), frequencies)
    rope = RopeTable(positions, cos_.to(dtype), sin_.to(dtype))
    rope.factors("forward")
    return rope


def _resolve(x, positions, rope, name):
    if not torch.is_tensor(x) or not x.is_floating_point() or x.dim() < 2 or x.shape[-1] != HEAD_DIM:
        raise ValueError(f"{{name}} must be a floating tensor of shape (..., T, {{HEAD_DIM}})")
    if rope is None:
        if positions is None:
            raise ValueError("give the position ids or a table built from them")
        rope = table(positions, x.dtype, x.device)
    elif not isinstance(rope, RopeTable):
        raise ValueError(f"table must be a RopeTable from table(positions), got {{type(rope).__name__}}")
    elif positions is not None and positions is not rope.positions and not torch.equal(
            _check_positions(positions, rope.device), rope.positions):
        raise ValueError("positions differ from the ids the table was built from")
    if rope.dtype != x.dtype or rope.device != x.device:
        raise ValueError(f"the table is {{rope.dtype}} on {{rope.device}}, {{name}} is {{x.dtype}} on {{x.device}}: "
                         "build it with table(positions, x.dtype, x.device)")
    if x.shape not in rope._fits:
        shape = rope.positions.shape
        try:
            fits = len(shape) < x.dim() and torch.broadcast_shapes(shape, x.shape[:-1]) == x.shape[:-1]
        except RuntimeError:
            fits = False
        if not fits:
            raise ValueError(f"positions of shape {{tuple(shape)}} do not broadcast to {{tuple(x.shape[:-1])}}")
        rope._fits.add(x.shape)
    return rope


def _complex_view(t):
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


class _Rotation(torch.autograd.Function):
    \"\"\"R_m x with gradient R_m^T g, the proved backward of the rotation.\"\"\"

    @staticmethod
    def forward(ctx, x, rope, direction):
        ctx.rope, ctx.direction = rope, direction
        return _rotate_into(x, rope.factors(direction))

    @staticmethod
    def backward(ctx, g):
        other = DIRECTIONS[1 - DIRECTIONS.index(ctx.direction)]
        return _Rotation.apply(g, ctx.rope, other), None, None


def _rotate(x, positions, rope, out, direction, name):
    rope = _resolve(x, positions, rope, name)
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
    return _rotate_into(x, rope.factors(direction), out)  # nothing requires grad: no graph is recorded


def apply(x, positions=None, table=None, out=None):
    \"\"\"RoPE: rotate pair r of every row of x by the angle of its position id ({pairing} pairing).

    x: (..., T, HEAD_DIM); positions: integer ids broadcastable to x.shape[:-1], or ``table``
    built from them once per forward; out: a tensor to write into, or x itself (in place).\"\"\"
    return _rotate(x, positions, table, out, "forward", "x")


def apply_(x, positions=None, table=None):
    \"\"\"``apply`` in place: x is overwritten by its rotation and returned.\"\"\"
    return _rotate(x, positions, table, x, "forward", "x")


def backward(g, positions=None, table=None, out=None):
    \"\"\"The gradient of ``apply`` with respect to x: R_m^T g.\"\"\"
    return _rotate(g, positions, table, out, "backward", "g")
"""


def rope_torch_body(spec: RopeSpec) -> str:
    """The PyTorch module (``table``, ``apply``, ``apply_``, ``backward``) for ``spec``, without its header."""
    cos_expr, sin_expr = angle_entries(spec.config)
    parts = {}
    for direction in DIRECTIONS:
        form = rotation_form(direction)
        parts[f"{direction}_re"], parts[f"{direction}_im"] = (_torch(e) for e in form.complex_factor.as_real_imag())
        parts[f"{direction}_entries"] = ", ".join(_torch(e) for e in form.entries)
    return _TEMPLATE.format(
        head_dim=spec.config.head_dim, rotary_dim=spec.config.rotary_dim,
        pairing=spec.config.pairing, frequency_doc=spec.describe_frequencies(),
        frequencies=f"[{floats(spec.frequency_values)}]",
        cos_code=_torch(cos_expr), sin_code=_torch(sin_expr), **parts,
    )
