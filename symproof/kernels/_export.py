"""``symproof export``: a generated kernel written as standalone source.

Targets: a NumPy module (the very text ``rope_apply`` runs), a C99 ``.c``/``.h``
pair printed by SymPy's C printer, and a PyTorch module printed by SymPy's
PyTorch printer.  Every file opens with a header naming the definition and the
configuration it was generated from and the claims verified for it (re-run at
export time; a kernel whose claims do not all end *proved* is not written).
"""

from __future__ import annotations


import sympy as sp
from sympy.printing.c import C99CodePrinter

from .._errors import InvalidInputError, SymproofError
from .._provenance import c_comment_text, c_header, python_header, rope_provenance
from .._io import output_folder, write_owned_files
from .._text import one_line
from ._config import RopeConfig
from ._numpy_source import rope_numpy_source
from ._symbolic import (
    DIRECTIONS, RopeSpec, angle_entries, cos_t, omega, pair, pair_index_form, position, rope_spec, rotation_form,
    sin_t, x_a, x_b,
)

__all__ = ["KERNELS", "TARGETS", "KERNEL_CLAIMS", "export_kernel", "kernel_sources", "kernel_listings", "main_export"]

TARGETS = ("numpy", "c", "torch")
#: the claims a kernel's correctness rests on; re-run and recorded in every exported file
KERNEL_CLAIMS = {
    "rope": ("rope.rotation", "rope.orthogonal", "rope.compose", "rope.relative", "rope.block_relative",
             "rope.frequency_denominator", "rope.partial", "rope.pairing_permutation", "rope.algorithm_7_1",
             "grad.rotation_backward"),
}
KERNELS = tuple(KERNEL_CLAIMS)
_C_TYPES = {"float64": "double", "float32": "float"}
#: widest head ``symproof export`` writes a kernel for (the frequency table is baked into the source)
MAX_EXPORT_WIDTH = 16384


# --------------------------------------------------------------------------- claims

def verified_claims(kernel: str, results=None) -> list:
    """``[(id, verdict)]`` for the kernel's claims; raises if one is not proved.

    ``results`` (``ClaimResult``s of a run that just happened) are used as they
    are; without them the kernel's claims are run now.
    """
    if results is None:
        from ..claims import load_claims, run_claims

        registered = load_claims()
        results = run_claims([registered[cid] for cid in KERNEL_CLAIMS[kernel] if cid in registered])
    found = {r.id: r for r in results if r.id in KERNEL_CLAIMS[kernel]}
    failed = [r for r in found.values() if r.status != "proved"]
    if failed:
        raise SymproofError(f"refusing to export {kernel!r}: claim {failed[0].id} is {failed[0].status} "
                            f"({failed[0].reason})", kernel=kernel)
    return [(cid, found[cid].status if cid in found else "not registered in this build")
            for cid in KERNEL_CLAIMS[kernel]]


def _header_lines(spec: RopeSpec, target: str, claims) -> list:
    return rope_provenance(spec, target, claims)


# --------------------------------------------------------------------------- printers

_C_NAMES = {cos_t: "c", sin_t: "s", x_a: "x_a", x_b: "x_b", position: "p", omega: "w", pair: "r"}


class RopeCPrinter(C99CodePrinter):
    """C99 printer for the kernel's symbols; integer index expressions stay integer arithmetic."""

    def _print_Symbol(self, expr):
        return _C_NAMES.get(expr, super()._print_Symbol(expr))


def _c(expr) -> str:
    return RopeCPrinter().doprint(expr)


def _torch(expr) -> str:
    # imported here: sympy.printing.pytorch imports torch (~5 s), which verify must not pay
    from sympy.printing.pytorch import TorchPrinter

    class RopeTorchPrinter(TorchPrinter):
        def _print_Symbol(self, expr):
            return {position: "p", omega: "w"}.get(expr, super()._print_Symbol(expr))

    return RopeTorchPrinter().doprint(expr)


def _c_number(value: float) -> str:
    return repr(float(value))


def rope_c_source(spec: RopeSpec, name: str, header_lines) -> tuple:
    """``(c_text, h_text)`` for the kernel ``name``."""
    c = spec.config
    ctype = _C_TYPES[c.dtype]
    upper = name.upper()
    comment = header_lines if isinstance(header_lines, str) else c_header(header_lines)
    index_a, index_b = (_c(e) for e in pair_index_form(c.rotary_dim, c.pairing))
    cos_expr, sin_expr = angle_entries(c)
    h = comment + f"""#ifndef {upper}_H
#define {upper}_H

#include <stddef.h>
#include <stdint.h>

#define {upper}_HEAD_DIM {c.head_dim}
#define {upper}_ROTARY_DIM {c.rotary_dim}
#define {upper}_N_PAIRS {c.rotary_dim // 2}
/* return codes */
#define {upper}_OK 0
#define {upper}_POSITION_OUT_OF_TABLE 1
#define {upper}_OUT_OF_MEMORY 2

/* (cos, sin) of position ids first .. first + n_positions - 1: table[2 (k N_PAIRS + r) + {{0, 1}}] */
void {name}_table(int64_t first_position, size_t n_positions, {ctype} *table);
"""
    c_text = comment + f'#include "{name}.h"\n\n#include <math.h>\n#include <stdlib.h>\n\n'
    c_text += f"// {c_comment_text(spec.describe_frequencies())}: exact values rounded once\n"
    c_text += f"static const double FREQUENCIES[{upper}_N_PAIRS] = {{\n"
    c_text += "".join(f"    {_c_number(v)},  // {c_comment_text(sp.sstr(e))}\n"
                      for v, e in zip(spec.frequency_values, spec.frequency_exprs))
    c_text += "};\n\n"
    c_text += f"""void {name}_table(int64_t first_position, size_t n_positions, {ctype} *table)
{{
    for (size_t k = 0; k < n_positions; ++k) {{
        const double p = (double)(first_position + (int64_t)k);
        for (size_t r = 0; r < {upper}_N_PAIRS; ++r) {{
            const double w = FREQUENCIES[r];
            table[2 * (k * {upper}_N_PAIRS + r)] = ({ctype})({_c(cos_expr)});
            table[2 * (k * {upper}_N_PAIRS + r) + 1] = ({ctype})({_c(sin_expr)});
        }}
    }}
}}
"""
    for direction in DIRECTIONS:
        verb = "apply" if direction == "forward" else "backward"
        update_a, update_b = (_c(e) for e in rotation_form(direction).update)
        what = "R_m x" if direction == "forward" else "R_m^T g (the gradient of apply)"
        h += f"""
/* {what} for n_rows rows of HEAD_DIM values; positions[row] is the row's position id.
 * out may equal x.  _with_table uses a table from {name}_table covering every id. */
int {name}_{verb}_with_table(const {ctype} *x, {ctype} *out, const int64_t *positions, size_t n_rows,
                     const {ctype} *table, int64_t first_position, size_t n_positions);
int {name}_{verb}(const {ctype} *x, {ctype} *out, const int64_t *positions, size_t n_rows);
"""
        c_text += f"""
int {name}_{verb}_with_table(const {ctype} *x, {ctype} *out, const int64_t *positions, size_t n_rows,
                     const {ctype} *table, int64_t first_position, size_t n_positions)
{{
    for (size_t row = 0; row < n_rows; ++row) {{
        const int64_t k = positions[row] - first_position;
        if (k < 0 || (uint64_t)k >= (uint64_t)n_positions) {{
            return {upper}_POSITION_OUT_OF_TABLE;
        }}
        const {ctype} *t = table + 2 * (size_t)k * {upper}_N_PAIRS;
        const {ctype} *in = x + row * {upper}_HEAD_DIM;
        {ctype} *o = out + row * {upper}_HEAD_DIM;
        for (size_t r = 0; r < {upper}_N_PAIRS; ++r) {{
            const {ctype} c = t[2 * r], s = t[2 * r + 1];
            const {ctype} x_a = in[{index_a}], x_b = in[{index_b}];
            o[{index_a}] = {update_a};
            o[{index_b}] = {update_b};
        }}
        for (size_t j = {upper}_ROTARY_DIM; j < {upper}_HEAD_DIM; ++j) {{
            o[j] = in[j];
        }}
    }}
    return {upper}_OK;
}}

int {name}_{verb}(const {ctype} *x, {ctype} *out, const int64_t *positions, size_t n_rows)
{{
    if (n_rows == 0) {{
        return {upper}_OK;
    }}
    int64_t lo = positions[0], hi = positions[0];
    for (size_t row = 1; row < n_rows; ++row) {{
        lo = positions[row] < lo ? positions[row] : lo;
        hi = positions[row] > hi ? positions[row] : hi;
    }}
    const size_t n_positions = (size_t)(hi - lo) + 1;
    {ctype} *table = malloc(2 * n_positions * {upper}_N_PAIRS * sizeof *table);
    if (table == NULL) {{
        return {upper}_OUT_OF_MEMORY;
    }}
    {name}_table(lo, n_positions, table);
    const int status = {name}_{verb}_with_table(x, out, positions, n_rows, table, lo, n_positions);
    free(table);
    return status;
}}
"""
    h += f"\n#endif /* {upper}_H */\n"
    return c_text, h


_TORCH_TEMPLATE = """\
{header}
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


def rope_torch_source(spec: RopeSpec, header: str) -> str:
    cos_expr, sin_expr = angle_entries(spec.config)
    parts = {}
    for direction in DIRECTIONS:
        form = rotation_form(direction)
        parts[f"{direction}_re"], parts[f"{direction}_im"] = (_torch(e) for e in form.complex_factor.as_real_imag())
        parts[f"{direction}_entries"] = ", ".join(_torch(e) for e in form.entries)
    return _TORCH_TEMPLATE.format(
        header=header, head_dim=spec.config.head_dim, rotary_dim=spec.config.rotary_dim,
        pairing=spec.config.pairing, frequency_doc=spec.describe_frequencies(),
        frequencies=repr([float(v) for v in spec.frequency_values]),
        cos_code=_torch(cos_expr), sin_code=_torch(sin_expr), **parts,
    )


# --------------------------------------------------------------------------- writing

def _docstring(lines) -> str:
    return python_header(lines)


def kernel_sources(kernel: str, target: str, *, config: RopeConfig | None = None, verify: bool = True,
                   claim_results=None, name: str | None = None, **options) -> dict:
    """``{file name: source}`` of ``kernel`` for ``target``, each file opening with its header.

    ``config`` (or the keyword options of :func:`rope_spec`) fixes the configuration;
    ``verify`` records the verdicts of the kernel's claims in the header (from
    ``claim_results`` when given, else by running the claims now)."""
    if kernel not in KERNELS:
        raise InvalidInputError(f"unknown kernel {kernel!r}; expected one of {KERNELS}", kernel=kernel)
    if target not in TARGETS:
        raise InvalidInputError(f"unknown target {target!r}; expected one of {TARGETS}", target=target)
    spec = rope_spec(config, **options)
    claims = verified_claims(kernel, claim_results) if verify else None
    lines = _header_lines(spec, target, claims)
    name = name or f"symproof_{kernel}"
    if not name.isidentifier():
        raise InvalidInputError(f"kernel file name {name!r} must be a valid identifier")
    if target == "numpy":
        return {f"{name}.py": rope_numpy_source(spec, _docstring(lines))}
    if target == "torch":
        return {f"{name}_torch.py": rope_torch_source(spec, _docstring(lines))}
    c_text, h_text = rope_c_source(spec, name, lines)
    return {f"{name}.c": c_text, f"{name}.h": h_text}


def export_kernel(kernel: str, target: str, out_dir, *, config: RopeConfig | None = None, verify: bool = True,
                  name: str | None = None, option: str = "--out", **options) -> list:
    """Write :func:`kernel_sources` into ``out_dir``; return the paths written."""
    files = kernel_sources(kernel, target, config=config, verify=verify, name=name, **options)
    return write_owned_files(out_dir, {filename: text.encode("utf-8") for filename, text in files.items()},
                             group=f"export:{name or 'symproof_' + kernel}:{target}", option=option)


def kernel_listings(claim_results) -> list:
    """``(title, language, source)`` of the exported RoPE kernels, for a report of ``claim_results``.

    Empty when the run did not prove every claim the kernels rest on (export would refuse)."""
    if not {cid for cid in KERNEL_CLAIMS["rope"]} <= {r.id for r in claim_results}:
        return []
    try:
        numpy_files = kernel_sources("rope", "numpy", head_dim=64, claim_results=claim_results)
        c_files = kernel_sources("rope", "c", head_dim=64, claim_results=claim_results)
    except SymproofError:
        return []
    listings = [(f"{filename} (symproof export rope --target numpy --head-dim 64)", "python", text)
                for filename, text in numpy_files.items()]
    listings += [(f"{filename} (symproof export rope --target c --head-dim 64)", "c", text)
                 for filename, text in sorted(c_files.items(), key=lambda item: not item[0].endswith(".h"))]
    return listings


def main_export(args) -> int:
    """``symproof export KERNEL --target T --out DIR [...]``: write the files, print their paths."""
    if args.kernel not in KERNELS:
        raise InvalidInputError(f"unknown kernel {args.kernel!r}; expected one of {KERNELS}")
    if args.head_dim is None:
        raise InvalidInputError(f"export {args.kernel} needs --head-dim (the per-head width d_k)")
    for option, value in (("--head-dim", args.head_dim), ("--rotary-dim", args.rotary_dim),
                          ("--denominator", getattr(args, "denominator", None))):
        if value is not None and not 2 <= value <= MAX_EXPORT_WIDTH:
            raise InvalidInputError(f"{option}: expected an even width between 2 and {MAX_EXPORT_WIDTH} "
                                    f"(the bound on exported kernels), got {value}")
    if not (args.base > 1 and args.base < 1e300):
        raise InvalidInputError(f"--base: expected a finite number > 1, got {args.base}")
    out = output_folder(args.out, "--out")
    options = dict(head_dim=args.head_dim, rotary_dim=args.rotary_dim, base=args.base,
                   denominator=getattr(args, "denominator", None), pairing=args.pairing,
                   dtype=getattr(args, "dtype", None))
    for path in export_kernel(args.kernel, args.target, out, **options):
        print(one_line(path))
    return 0

