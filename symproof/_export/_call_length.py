"""Call-length bodies: the dispatcher's ``call-length`` family, rotary kernels that take the call's
length the way HF transformers does.

``apply(x, positions, seq_len=None)`` rotates ``x`` (``(..., T, width)``) at
``positions``: frequencies of the call (``seq_len`` defaults to the largest
position + 1 over the call, as HF's ``dynamic_rope_update`` computes it), the
pairing and rotated width of the definition, and the attention scaling that HF
multiplies cos and sin by.  Written for model configs and for description
files whose rule reads the call length (dynamic NTK, LongRoPE's switch); the
frequency rule is printed from its exact definition by SymPy's printers
(``PythonCodePrinter``, ``C99CodePrinter``), factors and tables as float64
literals.  Nothing from the input file is printed except through the
printers (numbers, whitelisted functions); the provenance header
(:func:`symproof._ground._provenance.call_length_provenance`) is put before the body
by :func:`symproof._export.kernel_files`, escaped for the target.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..encodings import pair_indices
from . import file_name, floats
from ._printers import CKernelPrinter, PythonKernelPrinter

__all__ = ["bodies", "supports", "reads_length", "python_frequencies"]

_DIGITS = 30
_L = sp.Symbol("seq_len", integer=True, positive=True)


def bodies(variant, module: str, target: str) -> dict:
    """``{file name: body}`` of ``variant`` for ``target`` (the caller checked :func:`supports`)."""
    if target == "c":
        return {file_name(module, target): _c_source(variant, module)}
    return {file_name(module, target): _python_source(variant, target)}


def supports(variant) -> str:
    """Why this exporter cannot print ``variant`` ("" when it can)."""
    if variant.kind != "rotary":
        return f"{variant.kind} variants have no rotary kernel"
    if not variant.standard_block or variant.query_scale is not None or variant.key_scale is not None:
        return "a custom block or a per-position scale"
    if len(variant.axes) != 1:
        return "several position axes"
    if variant.linear_position_factor() is None:
        return "a position transform that is not m -> a m"
    return ""


def reads_length(variant) -> bool:
    """Whether the frequency rule itself reads ``seq_len`` (dynamic NTK), beyond a switch of factors."""
    formulas = [variant.base, variant.frequency_formula] + [f for _, f in variant.let]
    return any(f is not None and "seq_len" in f.names for f in formulas)


def _frequency_parts(variant):
    """``(base, short, long)``: per-pair base frequencies (expressions in seq_len or numbers, the position
    factor folded in) and the per-pair divisors before and after the threshold."""
    a = variant.linear_position_factor()
    plain = dataclasses.replace(variant, frequency_factors=(), long_factors=())
    seq_len = _L if reads_length(variant) else None
    base = [sp.N(a * plain.frequency_at(r, seq_len), _DIGITS) for r in range(variant.n_pairs)]
    ones = (sp.Integer(1),) * variant.n_pairs
    short = variant.frequency_factors or ones
    long = variant.long_factors or short
    return base, short, long


def python_frequencies(variant) -> list:
    """The frequency tables and ``frequencies(seq_len)`` of ``variant`` (lines of Python; the model family
    prints them once per regime)."""
    printer = PythonKernelPrinter(settings={"standard": "python3"})
    base, short, long = _frequency_parts(variant)
    lines = [f"THRESHOLD = {variant.length_threshold!r}",
             f"FACTORS_SHORT = ({floats(short)},)", f"FACTORS_LONG = ({floats(long)},)"]
    if reads_length(variant):
        lines += ["", "", "def _base(seq_len):", "    return ["]
        lines += [f"        {printer.doprint(expr)}," for expr in base]
        lines += ["    ]"]
    else:
        lines += [f"BASE = ({floats(base)},)", "", "", "def _base(seq_len):", "    return BASE"]
    lines += ["", "", "def frequencies(seq_len):",
              '    """omega_r of a call of length seq_len (largest position + 1), one per rotated pair."""',
              "    factors = FACTORS_LONG if THRESHOLD is not None and seq_len > THRESHOLD else FACTORS_SHORT",
              "    return [w / f for w, f in zip(_base(seq_len), factors)]"]
    return lines


def _python_source(variant, target: str) -> str:
    lib = "numpy" if target == "numpy" else "torch"
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    lines = ["", "import math", f"import {lib}", "",
             f"WIDTH = {variant.width}", f"ROTATED_WIDTH = {variant.rotated_width}",
             f"PAIRING = {variant.pairing!r}",
             f"ATTENTION_SCALING = {float(sp.N(variant.attention_scaling(), 20))!r}",
             f"FIRST = [{', '.join(str(p[0]) for p in pairs)}]",
             f"SECOND = [{', '.join(str(p[1]) for p in pairs)}]"]
    lines += python_frequencies(variant)
    lines += ["", "", "def apply(x, positions, seq_len=None):",
              '    """Rotate x (..., T, WIDTH) at integer positions (broadcast to x.shape[:-1]) as HF does, times',
              '    ATTENTION_SCALING on the rotated coordinates; seq_len defaults to max(positions) + 1."""']
    if target == "numpy":
        lines += ["    x = numpy.asarray(x, dtype=numpy.float64)",
                  "    if x.shape[-1] != WIDTH:",
                  "        raise ValueError(f'x must end with WIDTH = {WIDTH} coordinates, got shape {x.shape}')",
                  "    pos = numpy.broadcast_to(numpy.asarray(positions, dtype=numpy.float64), x.shape[:-1])",
                  "    if seq_len is None:",
                  "        seq_len = int(pos.max()) + 1 if pos.size else 1",
                  "    w = numpy.asarray(frequencies(seq_len), dtype=numpy.float64)",
                  "    angle = pos[..., None] * w",
                  "    c, s = numpy.cos(angle) * ATTENTION_SCALING, numpy.sin(angle) * ATTENTION_SCALING",
                  "    a, b = x[..., FIRST], x[..., SECOND]",
                  "    out = x.copy()"]
    else:
        lines += ["    x = torch.as_tensor(x, dtype=torch.float64)",
                  "    if x.shape[-1] != WIDTH:",
                  "        raise ValueError(f'x must end with WIDTH = {WIDTH} coordinates, "
                  "got shape {tuple(x.shape)}')",
                  "    pos = torch.as_tensor(positions, dtype=torch.float64, device=x.device).expand(x.shape[:-1])",
                  "    if seq_len is None:",
                  "        seq_len = int(pos.max().item()) + 1 if pos.numel() else 1",
                  "    w = torch.tensor(frequencies(seq_len), dtype=torch.float64, device=x.device)",
                  "    angle = pos[..., None] * w",
                  "    c, s = torch.cos(angle) * ATTENTION_SCALING, torch.sin(angle) * ATTENTION_SCALING",
                  "    a, b = x[..., FIRST], x[..., SECOND]",
                  "    out = x.clone()"]
    lines += ["    out[..., FIRST] = a * c - b * s",
              "    out[..., SECOND] = a * s + b * c",
              "    return out"]
    return "\n".join(lines) + "\n"


def _c_source(variant, name: str) -> str:
    printer = CKernelPrinter()
    half = variant.rotated_width // 2
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    base, short, long = _frequency_parts(variant)
    threshold = variant.length_threshold if variant.length_threshold is not None else -1
    body = ["", "#include <math.h>", "#include <string.h>", "",
             f"static const int FIRST[{half}] = {{{', '.join(str(p[0]) for p in pairs)}}};",
             f"static const int SECOND[{half}] = {{{', '.join(str(p[1]) for p in pairs)}}};",
             f"static const double FACTORS_SHORT[{half}] = {{{floats(short)}}};",
             f"static const double FACTORS_LONG[{half}] = {{{floats(long)}}};",
             f"static const double ATTENTION_SCALING = {float(sp.N(variant.attention_scaling(), 20))!r};", ""]
    if reads_length(variant):
        body += ["static void base_frequencies(double seq_len, double *w)", "{"]
        body += [f"    w[{r}] = {printer.doprint(expr)};" for r, expr in enumerate(base)]
        body += ["}"]
    else:
        body += [f"static const double BASE[{half}] = {{{floats(base)}}};",
                 "static void base_frequencies(double seq_len, double *w)",
                 "{", "    (void)seq_len;", f"    memcpy(w, BASE, sizeof(double) * {half});", "}"]
    body += ["",
             f"/* out[t, :] = rotation of x[t, :] (n_rows x {variant.width}) at positions[t], as HF applies it.",
             "   seq_len <= 0: the call's length is max(positions) + 1 over the n_rows rows. */",
             f"void {name}_apply(const double *x, const double *positions, double *out, long n_rows, double seq_len)",
             "{",
             f"    double w[{half}];",
             "    if (seq_len <= 0) {",
             "        seq_len = 1;",
             "        for (long t = 0; t < n_rows; ++t)",
             "            if (positions[t] + 1 > seq_len) seq_len = positions[t] + 1;",
             "    }",
             "    base_frequencies(seq_len, w);",
             f"    const double *factors = ({threshold} >= 0 && seq_len > {threshold}) ? FACTORS_LONG : FACTORS_SHORT;",
             f"    for (int r = 0; r < {half}; ++r) w[r] /= factors[r];",
             "    for (long t = 0; t < n_rows; ++t) {",
             f"        const double *z = x + t * {variant.width};",
             f"        double *o = out + t * {variant.width};",
             f"        memcpy(o, z, sizeof(double) * {variant.width});",
             f"        for (int r = 0; r < {half}; ++r) {{",
             "            double angle = positions[t] * w[r];",
             "            double c = cos(angle) * ATTENTION_SCALING, s = sin(angle) * ATTENTION_SCALING;",
             "            double a = z[FIRST[r]], b = z[SECOND[r]];",
             "            o[FIRST[r]] = a * c - b * s;",
             "            o[SECOND[r]] = a * s + b * c;",
             "        }", "    }", "}", ""]
    return "\n".join(body)
