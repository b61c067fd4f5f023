"""Score kernels of rotary variants whose angle reads a relative position (``[position] relative``).

Such a scheme (ReRoPE, Self-Extend) rotates the query by ``rho(i, j) * omega`` for each key, so it
has no per-token ``apply``: the exported function is

    scores(q, k, query_positions, key_positions) -> s[..., a, b]

the score of the query ``q[..., a, :]`` at ``query_positions[a]`` and the key ``k[..., b, :]`` at
``key_positions[b]``: per pair ``(S_q(i) B(rho omega_r) q)^T (S_k(j) B(0) k)``, plus ``q^T k`` of
the coordinates past the rotated width (before ``1/sqrt(d)`` and the softmax).  ``rho``, the scales
and the block are printed from the exact definition by the SymPy printers of :mod:`._printers`, the
frequencies baked in as float64 literals.  The C file exports ``{module}_scores`` with the same
meaning, ``out`` row-major ``n_queries x n_keys``.
"""

from __future__ import annotations

import sympy as sp

from ..encodings import pair_indices
from . import file_name, floats
from ._printers import (CKernelPrinter, NumPyKernelPrinter, c_functions, c_range_guard, c_status_codes,
                        guard_table_reads, numbers_as_floats, range_guard, torch_printer, with_table_reader)

__all__ = ["bodies"]

_i, _j, _m, _x = sp.symbols("i j m x", real=True)
_r = sp.Symbol("r", integer=True, nonnegative=True)

_DOC = ('    """s[..., a, b]: the score of the query q[..., a, :] at query_positions[a] and the key k[..., b, :] at',
        '    key_positions[b] (before 1/sqrt(d) and softmax); q: (..., Tq, WIDTH), k: (..., Tk, WIDTH).',
        '    Keys after their query (j > i) get the formula\'s value too: a causal mask is the caller\'s."""')


def bodies(variant, module: str, target: str) -> dict:
    """``{file name: body}`` of the score kernel of ``variant`` for ``target``."""
    if target == "c":
        return {file_name(module, target): _c_source(variant, module)}
    return {file_name(module, target): _python_source(variant, target)}


def _python_source(variant, target: str) -> str:
    printer = NumPyKernelPrinter() if target == "numpy" else torch_printer()
    lib = "numpy" if target == "numpy" else "torch"

    def code(expr):
        # torch functions take tensors, not Python numbers: constants go in as floats
        expr = guard_table_reads(expr)
        return printer.doprint(numbers_as_floats(expr) if target == "torch" else expr)

    as_array = "numpy.asarray" if target == "numpy" else "torch.as_tensor"
    index = "r" if target == "numpy" else "torch.tensor(float(r), dtype=torch.float64)"
    query_block = variant.block_at(_x, _r)
    key_block = variant.block_at(sp.Integer(0), _r)
    last = getattr(variant, "last_position", None)
    lines = ["", "import math", f"import {lib}", "", *range_guard(target, last), *([""] if last is not None else []),
             f"FREQUENCIES = {lib}.{'array' if target == 'numpy' else 'tensor'}([{floats(variant.frequencies_digits(30))}], "
             f"dtype={lib}.float64)",
             f"PAIRS = {pair_indices(variant.rotated_width, variant.pairing)}",
             f"WIDTH = {variant.width}", f"ROTATED_WIDTH = {variant.rotated_width}",
             f"CAUSAL = {bool(variant.causal)}",
             "", "", "def relative(i, j):",
             '    """rho(i, j): the relative position the angle of the query at i and the key at j uses."""',
             f"    return {code(variant.relative_at(_i, _j))} + 0 * i + 0 * j",
             "", "", "def scale(side, m, r):",
             f"    if side == 'query':\n        return {code(variant.scale('query', _m, _r))} + 0 * m",
             f"    return {code(variant.scale('key', _m, _r))} + 0 * m",
             "", "", "def query_block(x, r):",
             "    return (" + ", ".join(code(e) + " + 0 * x" for e in query_block) + ")",
             "", "", "def key_block(r):",
             "    return (" + ", ".join(code(e) for e in key_block) + ")",
             "", "", "def scores(q, k, query_positions, key_positions):", *_DOC,
             f"    q = {as_array}(q, dtype={lib}.float64)",
             f"    k = {as_array}(k, dtype={lib}.float64)",
             f"    i = {as_array}(query_positions, dtype={lib}.float64)[:, None]",
             f"    j = {as_array}(key_positions, dtype={lib}.float64)[None, :]",
             *([] if last is None else ["    _check_positions('i', i)", "    _check_positions('j', j)"]),
             "    rho = relative(i, j)",
             f"    out = {lib}.einsum('...ad,...bd->...ab', q[..., ROTATED_WIDTH:], k[..., ROTATED_WIDTH:])",
             "    for r, (a, b) in enumerate(PAIRS):",
             f"        b00, b01, b10, b11 = query_block(rho * FREQUENCIES[r], {index})",
             f"        c00, c01, c10, c11 = key_block({index})",
             "        qa, qb = q[..., :, None, a], q[..., :, None, b]",
             "        ka, kb = k[..., None, :, a], k[..., None, :, b]",
             f"        s = scale('query', i, {index}) * scale('key', j, {index})",
             "        out = out + s * ((b00 * qa + b01 * qb) * (c00 * ka + c01 * kb)",
             "                         + (b10 * qa + b11 * qb) * (c10 * ka + c11 * kb))",
             "    return out"]
    return with_table_reader(lines, target)


def _c_source(variant, name: str) -> str:
    printer = CKernelPrinter()
    prefix = name.upper()
    half, width = variant.rotated_width // 2, variant.width
    query_block = [printer.doprint(e) for e in variant.block_at(_x, _r)]
    key_block = [printer.doprint(e) for e in variant.block_at(sp.Integer(0), _r)]
    pair = ("int a = 2 * r, b = 2 * r + 1;" if variant.pairing == "adjacent" else f"int a = r, b = r + {half};")
    functions = [
        f"static double relative(double i, double j, int *status) "
        f"{{ return {printer.doprint(variant.relative_at(_i, _j))}; }}",
        f"static double scale_query(double m, int r, int *status) "
        f"{{ return {printer.doprint(variant.scale('query', _m, _r))}; }}",
        f"static double scale_key(double m, int r, int *status) {{ return {printer.doprint(variant.scale('key', _m, _r))}; }}"]
    last = getattr(variant, "last_position", None)
    body = ["", "#include <math.h>", "",
            f"/* return codes of {name}_scores */", *c_status_codes(prefix), *c_range_guard(prefix, last), "",
            f"static const double FREQUENCIES[{half}] = {{{floats(variant.frequencies_digits(30))}}};", "",
            *c_functions(functions + query_block + key_block, prefix),
            *functions,
            "",
            f"/* out[a * n_keys + b] = score of the query q[a, :] at query_positions[a] and the key k[b, :] at",
            f"   key_positions[b] (q: n_queries x {width}, k: n_keys x {width}); keys after their query get the",
            "   formula's value too: a causal mask is the caller's.  Returns "
            f"{prefix}_OK, or {prefix}_POSITION_OUT_OF_TABLE",
            "   when a position reads a table outside its entries (no entry is read; out is then unspecified)"
            + ("." if last is None else f", or {prefix}_POSITION_OUT_OF_RANGE when a position is outside 0..{last}.")
            + " */",
            f"int {name}_scores(const double *q, const double *k, const double *query_positions,",
            "                   const double *key_positions, double *out, long n_queries, long n_keys)",
            "{",
            f"    int status_value = {prefix}_OK, *status = &status_value;",
            "    for (long row = 0; row < n_queries; ++row) {",
            "        for (long col = 0; col < n_keys; ++col) {",
            f"            const double *u = q + row * {width}, *v = k + col * {width};",
            "            double i = query_positions[row], j = key_positions[col];",
            *([] if last is None else [f"            if (outside_range(i) || outside_range(j)) return {prefix}_POSITION_OUT_OF_RANGE;"]),
            "            double rho = relative(i, j, status), sum = 0.0;",
            f"            for (int c = {variant.rotated_width}; c < {width}; ++c) sum += u[c] * v[c];",
            f"            for (int r = 0; r < {half}; ++r) {{",
            f"                {pair}",
            "                double x = rho * FREQUENCIES[r];",
            f"                double qa = ({query_block[0]}) * u[a] + ({query_block[1]}) * u[b];",
            f"                double qb = ({query_block[2]}) * u[a] + ({query_block[3]}) * u[b];",
            f"                double ka = ({key_block[0]}) * v[a] + ({key_block[1]}) * v[b];",
            f"                double kb = ({key_block[2]}) * v[a] + ({key_block[3]}) * v[b];",
            "                sum += scale_query(i, r, status) * scale_key(j, r, status) * (qa * ka + qb * kb);",
            "            }",
            f"            if (*status != {prefix}_OK) return *status;",
            "            out[row * n_keys + col] = sum;",
            "        }", "    }", f"    return {prefix}_OK;", "}", ""]
    return "\n".join(body)
