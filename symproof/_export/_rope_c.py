"""Plain RoPE's C99 body: the pair ``{module}.c``/``{module}.h``.

A table of ``(cos, sin)`` per position id, then one fused pass per row reading
``x`` once and writing ``out`` once (``out`` may be ``x``), its index and
update expressions printed by SymPy's C printer.  The C target of the
dispatcher's ``rope`` family (:mod:`._rope`), and what the PyTorch body runs on
CPU tensors (:mod:`._native`).
"""

from __future__ import annotations

import sympy as sp

from .._ground._provenance import c_comment_text
from ._symbolic import (
    DIRECTIONS, RopeSpec, angle_entries, cos_t, omega, pair, pair_index_form, position, rotation_form, sin_t, x_a,
    x_b,
)
from . import floats
from ._printers import CKernelPrinter

__all__ = ["rope_c_bodies"]

_C_TYPES = {"float64": "double", "float32": "float"}
_C_NAMES = {cos_t: "c", sin_t: "s", x_a: "x_a", x_b: "x_b", position: "p", omega: "w", pair: "r"}


def _c(expr) -> str:
    return CKernelPrinter(_C_NAMES).doprint(expr)


def rope_c_bodies(spec: RopeSpec, name: str) -> tuple:
    """``(c_body, h_body)`` of the kernel ``name``, without their header."""
    c = spec.config
    ctype = _C_TYPES[c.dtype]
    upper = name.upper()
    index_a, index_b = (_c(e) for e in pair_index_form(c.rotary_dim, c.pairing))
    cos_expr, sin_expr = angle_entries(c)
    h = f"""#ifndef {upper}_H
#define {upper}_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{  /* C linkage: the kernel links from C++ as it is */
#endif

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
    c_text = f'#include "{name}.h"\n\n#include <math.h>\n#include <stdlib.h>\n\n'
    c_text += f"// {c_comment_text(spec.describe_frequencies())}: exact values rounded once\n"
    c_text += f"static const double FREQUENCIES[{upper}_N_PAIRS] = {{\n"
    c_text += "".join(f"    {floats([v])},  // {c_comment_text(sp.sstr(e))}\n"
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
    h += f"\n#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {upper}_H */\n"
    return c_text, h
