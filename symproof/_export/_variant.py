"""Variant bodies: the dispatcher's ``variant`` family, printed from a variant's exact definition.

For every variant that is neither plain RoPE (exported as the ``rope``
family, with its position transform folded into the frequencies) nor a rule
that reads the call length (the ``call-length`` family): scales, attention
factors, custom blocks, several axes, additive tables, biases.  The frequency
table is baked in as float64 literals; the transform, scales, block entries
and bias are printed by SymPy's printers.
"""

from __future__ import annotations

import sympy as sp

from ..encodings import pair_indices
from . import file_name, floats
from ._printers import (CKernelPrinter, NumPyKernelPrinter, c_functions, c_range_guard, c_status_codes,
                        guard_table_reads, numbers_as_floats, range_guard, torch_printer, with_table_reader)

__all__ = ["bodies"]

_m = sp.Symbol("m", real=True)
_r = sp.Symbol("r", integer=True, nonnegative=True)
_x = sp.Symbol("x", real=True)
_i, _j, _slope = sp.symbols("i j slope", real=True)
_h = sp.Symbol("h", integer=True, nonnegative=True)


def bodies(variant, module: str, target: str) -> dict:
    """``{file name: body}`` of ``variant`` for ``target`` (C: rotary variants only, checked by the caller);
    a file with a ``[mask]`` gets its mask functions too (:mod:`._mask`)."""
    if getattr(variant, "relative", None) is not None:  # no per-token map: a score kernel (ReRoPE, Self-Extend)
        from ._offset import bodies as score_bodies

        files = score_bodies(variant, module, target)
    elif target == "c":
        files = {file_name(module, target): _c_source(variant, module)}
    elif getattr(variant, "vectors", None) is not None:  # a learned table: its rows, read with the checked read
        from ._table import table_source

        files = {file_name(module, target): table_source(variant, target)}
    else:
        files = {file_name(module, target): _python_source(variant, target)}
    if getattr(variant, "mask", None) is None:
        return files
    from ._mask import with_mask

    return with_mask(files, variant, module, target)


def _python_source(variant, target: str) -> str:
    printer = NumPyKernelPrinter() if target == "numpy" else torch_printer()
    lib = "numpy" if target == "numpy" else "torch"

    def code(expr):
        # torch functions take tensors, not Python numbers: constants go in as floats
        expr = guard_table_reads(expr)
        return printer.doprint(numbers_as_floats(expr) if target == "torch" else expr)

    def returned(expr, indent="    ", tail=""):
        """``return <expr>``; numpy evaluates both branches of a ``where``, and the branch not chosen
        may be undefined there (T5's log(n / 16) at n = 0): no warning for it on every call (a value
        the definition makes finite is checked finite by the kernel property)."""
        text = f"{indent}return {code(expr)}{tail}"
        if target != "numpy" or not sp.sympify(expr).has(sp.Piecewise):
            return text
        return f'{indent}with numpy.errstate(divide="ignore", invalid="ignore"):\n    {text}'

    def finite_bias(expr, tail):
        """The bias computed, then a one-line FloatingPointError naming the first head and positions where it
        is not finite (a value beyond float64, or exp overflowing on the way to a finite one): never an inf
        or a nan returned as a bias."""
        body = f"values = {code(expr)}{tail}"
        isfinite, first = (("numpy.isfinite", "numpy.argwhere(bad)[0]") if target == "numpy"
                           else ("torch.isfinite", "torch.nonzero(bad)[0]"))
        lines = [f'    with numpy.errstate(all="ignore"):\n        {body}' if target == "numpy" else f"    {body}",
                 f"    bad = ~{isfinite}(values)",
                 "    if bad.any():",
                 f"        k, a, b = (int(v) for v in {first})",
                 '        raise FloatingPointError(f"bias_at: the bias of head {k} at query position {float(i[0, a, 0]):.17g}, "',
                 '                                 f"key position {float(j[0, 0, b]):.17g} is not finite in float64 (its "',
                 '                                 "formula overflows there)")',
                 "    return values"]
        return lines

    per_head = getattr(variant, "per_head", False)  # a table per head, apply(..., head=h): see head_lines
    freqs = head_frequencies(variant) if per_head else variant.frequencies_digits(30)
    last = getattr(variant, "last_position", None)
    check = (lambda name, value: [f"    _check_positions({name!r}, {value})"]) if last is not None \
        else (lambda name, value: [])
    lines = ["", "import math", f"import {lib}", *(["import operator"] if per_head else []), "",
             *range_guard(target, last), *([""] if last is not None else [])]
    # per-axis frequencies (every pair reads every axis): one row per pair, FREQUENCIES[r, a]
    table = _table(freqs) if variant.kind == "rotary" and (variant.mixed or per_head) else f"[{floats(freqs)}]"
    if target == "numpy":
        lines.append(f"FREQUENCIES = numpy.array({table}, dtype=numpy.float64)")
    else:
        lines.append(f"FREQUENCIES = torch.tensor({table}, dtype=torch.float64)")
    def bias_lines(table):
        as_array = "numpy.asarray" if target == "numpy" else "torch.as_tensor"
        return ["", "", "def bias_at(query_positions, key_positions):",
                '    """b[h, a, b] for the query at query_positions[a] and the key at key_positions[b]."""',
                f"    i = {as_array}(query_positions, dtype={lib}.float64)[None, :, None]",
                f"    j = {as_array}(key_positions, dtype={lib}.float64)[None, None, :]",
                *check("i", "i"), *check("j", "j"),
                f"    slope = {table}[:, None, None]",
                f"    h = {lib}.arange(len({table}), dtype={lib}.float64)[:, None, None]",
                *finite_bias(variant.bias_at(_i, _j, _slope, _h),
                             f" + {lib}.zeros((len({table}), i.shape[1], j.shape[2]), dtype={lib}.float64)"),
                "", "", "def bias(n_queries, n_keys):",
                '    """b[h, i, j] for query positions 0..n_queries-1 and key positions 0..n_keys-1."""',
                f"    return bias_at({lib}.arange(n_queries, dtype={lib}.float64), "
                f"{lib}.arange(n_keys, dtype={lib}.float64))"]

    if variant.kind == "bias":
        return with_table_reader(lines + bias_lines("FREQUENCIES"), target)
    lines += ["", "", "def transform(m):", returned(variant.angle_position(_m))]
    if variant.kind == "additive":
        cat = "numpy.concatenate" if target == "numpy" else "torch.cat"
        lines += ["", "", "def table(positions):",
                  '    """p_t for each position (rows), in the described layout."""',
                  f"    t = {lib}.as_tensor(positions, dtype=torch.float64)" if target == "torch" else
                  "    t = numpy.asarray(positions, dtype=numpy.float64)",
                  *check("t", "t"),
                  "    angle = (transform(t) + 0 * t)[:, None] * FREQUENCIES[None, :]",
                  f"    s, c = {lib}.sin(angle), {lib}.cos(angle)"]
        if getattr(variant, "amplitude", None) is not None:  # p_t = a(t) times the sinusoidal vector
            lines += ["    a = (amplitude(t) + 0 * t)[:, None]", "    s, c = a * s, a * c"]
            lines[lines.index("def table(positions):"):lines.index("def table(positions):")] = [
                "def amplitude(m):", returned(variant.amplitude_at(_m)), "", ""]
        if variant.pairing == "concatenated":
            lines.append(f"    return {cat}([s, c], {'axis' if target == 'numpy' else 'dim'}=-1)")
        else:
            lines.append(f"    return {lib}.stack([s, c], {'axis' if target == 'numpy' else 'dim'}=-1)"
                         ".reshape(angle.shape[0], -1)")
        return with_table_reader(lines, target)
    reads_m = getattr(variant, "block_reads_position", False)
    block = variant.block_at(_x, _r, _m) if reads_m else variant.block_at(_x, _r)
    axes = [variant.axis_of(r) for r in range(variant.n_pairs)]
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    if per_head:
        lines += head_lines(variant, target)
    lines += [
        "", "", "def scale(side, m, r, h):" if per_head else "def scale(side, m, r):",
        "    if side == 'query':", returned(variant.scale('query', _m, _r), "        ", " + 0 * m"),
        returned(variant.scale('key', _m, _r), tail=" + 0 * m"),
        "", "", "def block(x, r, m):" if reads_m else "def block(x, r):",
        "    return (" + ", ".join(code(e) + " + 0 * x" for e in block) + ")",
        "", "", *([] if variant.mixed else [f"AXIS = {axes}"]), f"PAIRS = {pairs}", f"N_AXES = {len(variant.axes)}", f"WIDTH = {variant.width}",
        "", "",
        "def apply(x, positions, side='query', *, head):" if per_head else "def apply(x, positions, side='query'):",
        '    """Rotate (and scale) x (..., T, WIDTH) at integer positions (x.shape[:-1], plus a last axis of',
        '    N_AXES coordinates when N_AXES > 1); side is "query" or "key"' + (
            ';\n    head: the head index 0..HEADS-1 (its frequencies FREQUENCIES[head] and scales).' if per_head else '.') + (
            '\n    Pair r rotates by the angle sum_c transform(positions[..., c]) * FREQUENCIES[r, c]."""'
            if variant.mixed else '"""'),
        *(["    head = _check_head(head)"] if per_head else []),
    ]
    if target == "numpy":
        lines += ["    x = numpy.asarray(x, dtype=numpy.float64)",
                  "    pos = numpy.asarray(positions, dtype=numpy.float64)", *check("m", "pos"),
                  "    if N_AXES == 1:", "        pos = numpy.broadcast_to(pos, x.shape[:-1])[..., None]",
                  "    out = x.copy()"]
    else:
        lines += ["    x = torch.as_tensor(x, dtype=torch.float64)",
                  "    pos = torch.as_tensor(positions, dtype=torch.float64)", *check("m", "pos"),
                  "    if N_AXES == 1:", "        pos = pos.expand(x.shape[:-1])[..., None]",
                  "    out = x.clone()"]
    if variant.mixed:  # angle = sum_a transform(m_a) * FREQUENCIES[r, a]; the scale reads no position
        lines += ["    for r, (a, b) in enumerate(PAIRS):",
                  "        coord = pos[..., 0]",
                  "        angle = sum((transform(pos[..., c]) + 0 * pos[..., c]) * FREQUENCIES[r, c] "
                  "for c in range(N_AXES))"]
    else:
        lines += ["    for r, (a, b) in enumerate(PAIRS):",
                  "        coord = pos[..., AXIS[r]]",
                  f"        angle = (transform(coord) + 0 * coord) * FREQUENCIES[{'head, ' if per_head else ''}r]"]
    head_argument = (", float(head)" if target == "numpy" else ", torch.tensor(float(head), dtype=torch.float64)") \
        if per_head else ""
    lines += [
              f"        s = scale(side, coord, r{head_argument})" if target == "numpy" else
              f"        s = scale(side, coord, torch.tensor(float(r), dtype=torch.float64){head_argument})",
              f"        b00, b01, b10, b11 = block(angle, r{', coord' if reads_m else ''})" if target == "numpy" else
              "        b00, b01, b10, b11 = block(angle, torch.tensor(float(r), dtype=torch.float64)"
              f"{', coord' if reads_m else ''})",
              "        za, zb = x[..., a], x[..., b]",
              "        out[..., a] = s * (b00 * za + b01 * zb)",
              "        out[..., b] = s * (b10 * za + b11 * zb)",
              "    return out"]
    if per_head and variant.bias is not None:  # the bias the score adds, every head at once (as a bias file's)
        slopes = floats(sp.N(variant.slope_at(h), 30) for h in range(variant.heads))
        lines += ["", "", f"SLOPES = {lib}.{'array' if target == 'numpy' else 'tensor'}([{slopes}], dtype={lib}.float64)",
                  *bias_lines("SLOPES")]
    return with_table_reader(lines, target)


def head_frequencies(variant) -> list:
    """Every head's frequencies, one row per head (30 digits each)."""
    return [variant.head(h).frequencies_digits(30) for h in range(variant.heads)]


def head_lines(variant, target: str) -> list:
    """``HEADS`` and ``_check_head(head)``: the head index an integer in ``0..HEADS-1``, else
    ``HeadOutOfRangeError`` (an ``IndexError``) in one line; never a wrapped (negative) read."""
    return ["", f"HEADS = {int(variant.heads)}", "", "",
            "class HeadOutOfRangeError(IndexError):",
            '    """A head index outside 0..HEADS-1 (or not an integer)."""', "", "",
            "def _check_head(head):",
            "    try:",
            "        index = operator.index(head)",
            "    except TypeError:",
            "        index = None",
            "    if index is None or isinstance(head, bool) or not 0 <= index < HEADS:",
            "        raise HeadOutOfRangeError(f\"head = {head!r} is outside the file's heads 0..{HEADS - 1}: pass an "
            "integer head index\")",
            "    return index"]


def _table(rows, brackets="[]") -> str:
    """Per-axis frequency rows as nested literals: ``[[w00, w01], [w10, w11]]`` (C: ``{{...}, {...}}``)."""
    left, right = brackets
    return left + ", ".join(f"{left}{floats(row)}{right}" for row in rows) + right


def _c_source(variant, name: str) -> str:
    printer = CKernelPrinter()
    prefix = name.upper()
    half = variant.rotated_width // 2
    per_head = getattr(variant, "per_head", False)  # FREQUENCIES[head][r], scales of h, apply(..., head)
    freqs = head_frequencies(variant) if per_head else variant.frequencies_digits(30)
    # a block that reads the position prints m, the variable of the row's position in the loop below
    block = [printer.doprint(e) for e in (variant.block_at(_x, _r, _m) if getattr(variant, "block_reads_position", False)
                                          else variant.block_at(_x, _r))]
    axes = len(variant.axes)
    if variant.mixed:  # FREQUENCIES[r][c]: pair r's frequency for axis c; angle = sum_c transform(m_c) * it
        table = f"static const double FREQUENCIES[{half}][{axes}] = {_table(freqs, '{}')};"
        angle = ["            double x = 0.0;",
                 f"            for (int c = 0; c < {axes}; ++c)",
                 f"                x += transform(positions[t * {axes} + c], status) * FREQUENCIES[r][c];",
                 f"            double m = positions[t * {axes}];  /* the scale reads no position */"]
    elif per_head:
        table = f"static const double FREQUENCIES[{variant.heads}][{half}] = {_table(freqs, '{}')};"
        angle = [f"            double m = positions[t * {axes} + AXIS[r]];",
                 "            double x = transform(m, status) * FREQUENCIES[head][r];"]
    else:
        table = f"static const double FREQUENCIES[{half}] = {{{floats(freqs)}}};"
        angle = [f"            double m = positions[t * {axes} + AXIS[r]];",
                 "            double x = transform(m, status) * FREQUENCIES[r];"]
    h_argument = ", double h" if per_head else ""
    functions = [
        f"static double transform(double m, int *status) {{ return {printer.doprint(variant.angle_position(_m))}; }}",
        f"static double scale_query(double m, int r{h_argument}, int *status) "
        f"{{ return {printer.doprint(variant.scale('query', _m, _r))}; }}",
        f"static double scale_key(double m, int r{h_argument}, int *status) "
        f"{{ return {printer.doprint(variant.scale('key', _m, _r))}; }}"]
    last = getattr(variant, "last_position", None)
    guard = [f"        for (int c = 0; c < {axes}; ++c)",
             f"            if (outside_range(positions[t * {axes} + c])) return {prefix}_POSITION_OUT_OF_RANGE;"] \
        if last is not None else []
    body = ["", "#include <math.h>", "#include <string.h>", "",
             f"/* return codes of {name}_apply */", *c_status_codes(prefix), *c_range_guard(prefix, last),
             *([f"#define {prefix}_HEAD_OUT_OF_RANGE 3  /* head is outside 0..{variant.heads - 1}: nothing is "
                "computed, out is then unspecified */", f"#define {prefix}_HEADS {variant.heads}"] if per_head else []),
             "",
             table,
             *(["/* the bias b_h(i, j) the score adds is in the numpy and torch files (bias_at): this file rotates */"]
               if per_head and variant.bias is not None else []),
             *([] if variant.mixed else
               [f"static const int AXIS[{half}] = {{{', '.join(str(variant.axis_of(r)) for r in range(half))}}};"]),
             "", *c_functions(functions + block, prefix),
             *functions,
             "",
             f"/* out[t, :] = T(positions[t, :]) x[t, :] for t < n_rows; x, out: n_rows x {variant.width};",
             f"   positions: n_rows x {len(variant.axes)}; is_query selects the query or key scale.",
             f"   Returns {prefix}_OK, or {prefix}_POSITION_OUT_OF_TABLE when a position reads a table",
             "   outside its entries (no entry is read; out is then unspecified)"
             + ("." if last is None else f", or {prefix}_POSITION_OUT_OF_RANGE when a position is outside 0..{last}.")
             + (f" head: the head index; {prefix}_HEAD_OUT_OF_RANGE when it is outside 0..{variant.heads - 1}."
                if per_head else "") + " */",
             f"int {name}_apply(const double *x, const double *positions, double *out, long n_rows, int is_query"
             + (", int head)" if per_head else ")"),
             "{",
             f"    int status_value = {prefix}_OK, *status = &status_value;",
             *([f"    if (head < 0 || head >= {prefix}_HEADS) return {prefix}_HEAD_OUT_OF_RANGE;",
                "    double h = (double)head;"] if per_head else []),
             "    for (long t = 0; t < n_rows; ++t) {",
             *guard,
             f"        const double *z = x + t * {variant.width};",
             f"        double *o = out + t * {variant.width};",
             f"        memcpy(o, z, sizeof(double) * {variant.width});",
             f"        for (int r = 0; r < {half}; ++r) {{",
             ("            int a = 2 * r, b = 2 * r + 1;" if variant.pairing == "adjacent"
              else f"            int a = r, b = r + {half};"),
             *angle,
             (f"            double s = is_query ? scale_query(m, r{', h' if per_head else ''}, status) : "
              f"scale_key(m, r{', h' if per_head else ''}, status);"),
             f"            o[a] = s * (({block[0]}) * z[a] + ({block[1]}) * z[b]);",
             f"            o[b] = s * (({block[2]}) * z[a] + ({block[3]}) * z[b]);",
             "        }",
             f"        if (*status != {prefix}_OK) return *status;",
             "    }", f"    return {prefix}_OK;", "}", ""]
    return "\n".join(body)
