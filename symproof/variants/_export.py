"""``symproof check FILE --export DIR --target numpy|c|torch``: the variant's kernel as source.

A variant that is plain RoPE once its linear position transform is folded into
the frequencies (interpolation, NTK, YaRN without factor, Llama-3, partial,
half-split) is exported by :func:`symproof.kernels.export_kernel` with those
explicit frequencies, so it gets the same verified header as ``symproof
export rope``.  Every other variant (scales, factors, custom blocks, several
axes, additive tables, biases) is printed here from its exact definition by
SymPy's printers: the frequency table is baked in as float64 literals, the
transform, scales and block entries are printed expressions.
"""

from __future__ import annotations


import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter

from .._errors import InvalidInputError
from .._provenance import render_header, variant_provenance
from ..encodings import pair_indices
from .._io import write_owned_files
from ..kernels import export_kernel
from ._kernel import plain_rope_factor
from ._spec import Variant

__all__ = ["export_variant", "variant_source", "check_target", "TARGETS"]

TARGETS = ("numpy", "c", "torch")

_m = sp.Symbol("m", real=True)
_r = sp.Symbol("r", integer=True, nonnegative=True)
_x = sp.Symbol("x", real=True)
_i, _j, _slope = sp.symbols("i j slope", real=True)


def _module_name(variant: Variant) -> str:
    return "symproof_variant_" + variant.name.replace("-", "_")


def _header(variant: Variant, target: str) -> str:
    return render_header(variant_provenance(variant, target), target)


def _floats(values) -> str:
    return ", ".join(repr(float(v)) for v in values)


def _python_source(variant: Variant, target: str) -> str:
    if target == "numpy":
        printer = NumPyPrinter()
    else:  # imported here: sympy.printing.pytorch imports torch (~2 s), which the numpy and C targets need not pay
        from sympy.printing.pytorch import TorchPrinter

        printer = TorchPrinter()
    lib = "numpy" if target == "numpy" else "torch"

    def code(expr):
        # torch functions take tensors, not Python numbers: constants go in as floats
        return printer.doprint(sp.N(expr, 20) if target == "torch" else expr)

    freqs = variant.frequencies_digits(30)
    lines = [_header(variant, target), "import math", f"import {lib}", ""]
    if target == "numpy":
        lines.append(f"FREQUENCIES = numpy.array([{_floats(freqs)}], dtype=numpy.float64)")
    else:
        lines.append(f"FREQUENCIES = torch.tensor([{_floats(freqs)}], dtype=torch.float64)")
    if variant.kind == "bias":
        lines += ["", "", "def bias(n_queries, n_keys):",
                  '    """b[h, i, j] for query positions 0..n_queries-1 and key positions 0..n_keys-1."""',
                  f"    i = {lib}.arange(n_queries, dtype={lib}.float64)[None, :, None]",
                  f"    j = {lib}.arange(n_keys, dtype={lib}.float64)[None, None, :]",
                  "    slope = FREQUENCIES[:, None, None]",
                  f"    value = {code(variant.bias_at(_i, _j, _slope))}",
                  f"    return value + {lib}.zeros((len(FREQUENCIES), n_queries, n_keys), dtype={lib}.float64)"]
        return "\n".join(lines) + "\n"
    lines += ["", "", "def transform(m):", f"    return {code(variant.angle_position(_m))}"]
    if variant.kind == "additive":
        cat = "numpy.concatenate" if target == "numpy" else "torch.cat"
        lines += ["", "", "def table(positions):",
                  '    """p_t for each position (rows), in the described layout."""',
                  f"    t = {lib}.as_tensor(positions, dtype=torch.float64)" if target == "torch" else
                  "    t = numpy.asarray(positions, dtype=numpy.float64)",
                  "    angle = (transform(t) + 0 * t)[:, None] * FREQUENCIES[None, :]",
                  f"    s, c = {lib}.sin(angle), {lib}.cos(angle)"]
        if variant.pairing == "concatenated":
            lines.append(f"    return {cat}([s, c], {'axis' if target == 'numpy' else 'dim'}=-1)")
        else:
            lines.append(f"    return {lib}.stack([s, c], {'axis' if target == 'numpy' else 'dim'}=-1)"
                         ".reshape(angle.shape[0], -1)")
        return "\n".join(lines) + "\n"
    block = variant.block_at(_x)
    axes = [variant.axis_of(r) for r in range(variant.n_pairs)]
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    lines += [
        "", "", "def scale(side, m, r):",
        f"    if side == 'query':\n        return {code(variant.scale('query', _m, _r))} + 0 * m",
        f"    return {code(variant.scale('key', _m, _r))} + 0 * m",
        "", "", "def block(x):",
        "    return (" + ", ".join(code(e) + " + 0 * x" for e in block) + ")",
        "", "", f"AXIS = {axes}", f"PAIRS = {pairs}", f"N_AXES = {len(variant.axes)}", f"WIDTH = {variant.width}",
        "", "",
        "def apply(x, positions, side='query'):",
        '    """Rotate (and scale) x (..., T, WIDTH) at integer positions (x.shape[:-1], plus a last axis of',
        '    N_AXES coordinates when N_AXES > 1); side is "query" or "key"."""',
    ]
    if target == "numpy":
        lines += ["    x = numpy.asarray(x, dtype=numpy.float64)",
                  "    pos = numpy.asarray(positions, dtype=numpy.float64)",
                  "    if N_AXES == 1:", "        pos = numpy.broadcast_to(pos, x.shape[:-1])[..., None]",
                  "    out = x.copy()"]
    else:
        lines += ["    x = torch.as_tensor(x, dtype=torch.float64)",
                  "    pos = torch.as_tensor(positions, dtype=torch.float64)",
                  "    if N_AXES == 1:", "        pos = pos.expand(x.shape[:-1])[..., None]",
                  "    out = x.clone()"]
    lines += ["    for r, (a, b) in enumerate(PAIRS):",
              "        coord = pos[..., AXIS[r]]",
              "        angle = (transform(coord) + 0 * coord) * FREQUENCIES[r]",
              "        s = scale(side, coord, r)",
              "        b00, b01, b10, b11 = block(angle)",
              "        za, zb = x[..., a], x[..., b]",
              "        out[..., a] = s * (b00 * za + b01 * zb)",
              "        out[..., b] = s * (b10 * za + b11 * zb)",
              "    return out"]
    return "\n".join(lines) + "\n"


def check_target(variant: Variant, target: str) -> None:
    """Refuse a target that cannot be exported for ``variant``."""
    if target not in TARGETS:
        raise InvalidInputError(f"unknown target {target!r}; expected one of {TARGETS}", target=target)
    if target == "c" and variant.kind != "rotary":
        raise InvalidInputError(f"--target c exports rotary variants; {variant.name!r} is {variant.kind} "
                                "(use --target numpy or torch)", target="c")
    if _takes_call_length(variant):
        from ._model_export import supports

        why = supports(variant)
        if why:
            raise InvalidInputError(f"{variant.source}: no kernel taking the call length can be exported for "
                                    f"{variant.name!r}: {why}", target=target)


def _c_source(variant: Variant) -> str:
    printer = C99CodePrinter()
    name = _module_name(variant)
    half = variant.rotated_width // 2
    freqs = variant.frequencies_digits(30)
    block = [printer.doprint(e) for e in variant.block_at(_x)]
    body = [_header(variant, "c")]
    body += ["#include <math.h>", "#include <string.h>", "",
             f"static const double FREQUENCIES[{half}] = {{{_floats(freqs)}}};",
             f"static const int AXIS[{half}] = {{{', '.join(str(variant.axis_of(r)) for r in range(half))}}};", "",
             f"static double transform(double m) {{ return {printer.doprint(variant.angle_position(_m))}; }}",
             f"static double scale_query(double m, int r) {{ return {printer.doprint(variant.scale('query', _m, _r))}; }}",
             f"static double scale_key(double m, int r) {{ return {printer.doprint(variant.scale('key', _m, _r))}; }}",
             "",
             f"/* out[t, :] = T(positions[t, :]) x[t, :] for t < n_rows; x, out: n_rows x {variant.width};",
             f"   positions: n_rows x {len(variant.axes)}; is_query selects the query or key scale. */",
             f"void {name}_apply(const double *x, const double *positions, double *out, long n_rows, int is_query)",
             "{",
             "    for (long t = 0; t < n_rows; ++t) {",
             f"        const double *z = x + t * {variant.width};",
             f"        double *o = out + t * {variant.width};",
             f"        memcpy(o, z, sizeof(double) * {variant.width});",
             f"        for (int r = 0; r < {half}; ++r) {{",
             ("            int a = 2 * r, b = 2 * r + 1;" if variant.pairing == "adjacent"
              else f"            int a = r, b = r + {half};"),
             f"            double m = positions[t * {len(variant.axes)} + AXIS[r]];",
             "            double x = transform(m) * FREQUENCIES[r];",
             "            double s = is_query ? scale_query(m, r) : scale_key(m, r);",
             f"            o[a] = s * (({block[0]}) * z[a] + ({block[1]}) * z[b]);",
             f"            o[b] = s * (({block[2]}) * z[a] + ({block[3]}) * z[b]);",
             "        }", "    }", "}", ""]
    return "\n".join(body)


def _takes_call_length(variant: Variant) -> bool:
    """Model configs and rules that read the call length get the kernel of ``_model_export``, whose
    ``apply`` takes ``seq_len`` as HF does and applies the attention scaling as HF does."""
    return variant.length_dependent or bool(variant.notes)


def variant_source(variant: Variant, target: str) -> dict:
    """``{file name: text}`` of the standalone kernel for ``target``."""
    check_target(variant, target)
    if _takes_call_length(variant):
        from ._model_export import rope_kernel_source

        return rope_kernel_source(variant, target)
    name = _module_name(variant)
    if target == "c":
        return {f"{name}.c": _c_source(variant)}
    suffix = "" if target == "numpy" else "_torch"
    return {f"{name}{suffix}.py": _python_source(variant, target)}


#: up to this many pairs the exported header lists the exact frequencies; beyond, 30 digits of each
#: (building thousands of exact values costs seconds, and a float64 table needs 17 digits)
_EXACT_HEADER_PAIRS = 64


def _frequencies_for_export(variant: Variant) -> list:
    if variant.n_pairs <= _EXACT_HEADER_PAIRS:
        return variant.frequencies()
    return variant.frequencies_digits(30)


def export_variant(variant: Variant, folder, target: str = "numpy", *, option: str = "--export") -> list:
    """Write the variant's kernel for ``target`` into ``folder``; return the paths written."""
    check_target(variant, target)
    if _takes_call_length(variant):
        from ._model_export import export_rope_kernel

        return export_rope_kernel(variant, folder, target, option=option)
    a = plain_rope_factor(variant)
    if a is not None:
        return export_kernel("rope", target, folder, head_dim=variant.width, rotary_dim=variant.rotated_width,
                             denominator=variant.freq_denominator, pairing=variant.pairing,
                             freqs=[a * w for w in _frequencies_for_export(variant)], name=_module_name(variant),
                             option=option)
    files = {filename: text.encode("utf-8") for filename, text in variant_source(variant, target).items()}
    return write_owned_files(folder, files, group=f"export:{_module_name(variant)}:{target}", option=option)
