"""Dense bodies (``kind = "dense"``: LieRE, STRING): ``apply`` multiplies each row by ``exp(sum_a m_a A_a)``.

The generators are baked in as float64 literals.  ``exp(X)`` is computed by scaling and squaring, the same
way in every target (numpy, torch, C), so that no target depends on a library's ``expm``:

- ``s`` = the least integer with ``||X||_inf / 2^s <= 1/2``; ``Y = X / 2^s``;
- ``T(Y) = sum_{k <= 18} Y^k / k!`` by Horner's rule;
- ``exp(X) = T(Y)^(2^s)`` by ``s`` squarings.

Error bound (documented in each file): the truncation error of ``T`` is at most
``(1/2)^19 / 19! / (1 - 1/40) < 2e-23`` relative to ``exp(Y)``; rounding adds about ``18 * WIDTH * u`` to
``T`` (``u = 2^-53``), and each squaring of a near-orthogonal matrix at most doubles the absolute error, so
the result is within about ``2^s * 40 * WIDTH * u <= 80 * WIDTH * ||X||_inf * u`` (plus ``40 * WIDTH * u``) of
``exp(X)`` when the generators are skew-symmetric (``||exp(Y)||`` stays 1 in the 2-norm); for other
generators the error grows with ``||exp(X)||`` as the entries themselves do.  The ``kernel`` property
compares the files with ``exp`` at 40 digits (mpmath) at small, large and negative positions, and the test
suite with ``torch.linalg.matrix_exp``.
"""

from __future__ import annotations

from . import file_name, floats
from ._printers import c_range_guard, range_guard

__all__ = ["bodies", "TAYLOR_DEGREE"]

#: the Taylor degree after scaling to ||Y||_inf <= 1/2 (truncation error < 2e-23, below float64's resolution)
TAYLOR_DEGREE = 18
#: the most squarings: past 2^1100 * 1/2 every float64 position has overflowed anyway
MAX_SQUARINGS = 1100


def bodies(variant, module: str, target: str) -> dict:
    """``{file name: body}`` of the dense variant for ``target``."""
    if target == "c":
        return {file_name(module, target): _c_source(variant, module)}
    return {file_name(module, target): _python_source(variant, target)}


def _matrices(variant) -> list:
    """Each generator's rows as float64 (from 30 digits of its exact entries)."""
    return [[[float(g[a, b].evalf(30)) for b in range(g.cols)] for a in range(g.rows)] for g in variant.generators]


def _nested(matrices, left="[", right="]") -> str:
    return left + ", ".join(left + ", ".join(f"{left}{floats(row)}{right}" for row in m) + right
                            for m in matrices) + right


_DOC = '''
# R(m) = exp(sum_a m_a A_a) by scaling and squaring: s = least integer with ||X||_inf / 2^s <= 1/2,
# Y = X / 2^s, T(Y) = sum_{{k <= {degree}}} Y^k / k! (Horner), exp(X) = T(Y)^(2^s).  Truncation error
# < 2e-23 relative; with skew-symmetric generators the result is within about 80 * WIDTH * ||X||_inf * 2^-53
# (plus 40 * WIDTH * 2^-53) of exp(X) entrywise.'''


def _python_source(variant, target: str) -> str:
    lib = "numpy" if target == "numpy" else "torch"
    last = getattr(variant, "last_position", None)
    matrices = _nested(_matrices(variant))
    lines = ["", "import math", f"import {lib}", "", *range_guard(target, last), "",
             _DOC.format(degree=TAYLOR_DEGREE).strip("\n"), "",
             f"GENERATORS = {lib}.{'array' if target == 'numpy' else 'tensor'}({matrices}, dtype={lib}.float64)",
             f"N_AXES = {len(variant.axes)}", f"WIDTH = {variant.width}", f"TAYLOR_DEGREE = {TAYLOR_DEGREE}",
             f"MAX_SQUARINGS = {MAX_SQUARINGS}", "", ""]
    if target == "numpy":
        lines += [
            "def rotation(positions):",
            '    """exp(sum_a positions[..., a] * GENERATORS[a]) for positions of shape (..., N_AXES)."""',
            "    pos = numpy.asarray(positions, dtype=numpy.float64)",
            "    if not bool(numpy.all(numpy.isfinite(pos))):",
            '        raise ValueError("positions must be finite numbers")',
            '    x = numpy.einsum("...a,aij->...ij", pos, GENERATORS)',
            "    norm = numpy.abs(x).sum(axis=-1).max(axis=-1)",
            "    with numpy.errstate(divide='ignore'):",
            "        squarings = numpy.where(norm > 0.5, numpy.ceil(numpy.log2(numpy.maximum(norm, 0.5) / 0.5)), 0.0)",
            "    squarings = numpy.minimum(squarings, MAX_SQUARINGS)",
            "    y = x / numpy.exp2(squarings)[..., None, None]",
            "    eye = numpy.broadcast_to(numpy.eye(WIDTH), y.shape)",
            "    out = eye.copy()",
            "    for k in range(TAYLOR_DEGREE, 0, -1):",
            "        out = eye + (y @ out) / k",
            "    for step in range(int(squarings.max(initial=0.0))):",
            "        out = numpy.where((step < squarings)[..., None, None], out @ out, out)",
            "    return out",
        ]
    else:
        lines += [
            "def rotation(positions):",
            '    """exp(sum_a positions[..., a] * GENERATORS[a]) for positions of shape (..., N_AXES)."""',
            "    pos = torch.as_tensor(positions, dtype=torch.float64)",
            "    if not bool(torch.all(torch.isfinite(pos))):",
            '        raise ValueError("positions must be finite numbers")',
            '    x = torch.einsum("...a,aij->...ij", pos, GENERATORS.to(pos.device))',
            "    norm = x.abs().sum(dim=-1).amax(dim=-1)",
            "    squarings = torch.where(norm > 0.5, torch.ceil(torch.log2(torch.clamp(norm, min=0.5) / 0.5)),",
            "                            torch.zeros_like(norm))",
            "    squarings = torch.clamp(squarings, max=float(MAX_SQUARINGS))",
            "    y = x / torch.exp2(squarings)[..., None, None]",
            "    eye = torch.eye(WIDTH, dtype=torch.float64, device=pos.device).expand(y.shape)",
            "    out = eye.clone()",
            "    for k in range(TAYLOR_DEGREE, 0, -1):",
            "        out = eye + (y @ out) / k",
            "    steps = int(squarings.max().item()) if squarings.numel() else 0",
            "    for step in range(steps):",
            "        out = torch.where((step < squarings)[..., None, None], out @ out, out)",
            "    return out",
        ]
    check = ["    _check_positions('m', pos)"] if last is not None else []
    asarray = "numpy.asarray" if target == "numpy" else "torch.as_tensor"
    lines += [
        "", "",
        "def apply(x, positions, side='query'):",
        '    """R(positions) x for x of shape (..., T, WIDTH) and integer positions (x.shape[:-1], plus a last',
        '    axis of N_AXES coordinates when N_AXES > 1); side ("query" or "key") is accepted for the common',
        '    interface: queries and keys are rotated alike."""',
        f"    x = {asarray}(x, dtype={lib}.float64)",
        f"    pos = {asarray}(positions, dtype={lib}.float64)",
        *check,
        "    if N_AXES == 1:",
        "        pos = pos[..., None]",
        f'    return {lib}.einsum("...ij,...j->...i", rotation(pos), x)',
    ]
    return "\n".join(lines) + "\n"


def _c_source(variant, name: str) -> str:
    prefix = name.upper()
    w, axes = variant.width, len(variant.axes)
    last = getattr(variant, "last_position", None)
    guard = [f"        for (int c = 0; c < {axes}; ++c)",
             f"            if (outside_range(positions[t * {axes} + c])) return {prefix}_POSITION_OUT_OF_RANGE;"] \
        if last is not None else []
    lines = [
        "", "#include <math.h>", "#include <string.h>", "",
        f"/* return codes of {name}_apply */",
        f"#define {prefix}_OK 0  /* every row computed */",
        f"#define {prefix}_POSITION_NOT_FINITE 3  /* a position is NaN or infinite: nothing more is computed */",
        *c_range_guard(prefix, last), "",
        *[("/*" + line[1:] + " */") if line.startswith("#") else line
          for line in _DOC.format(degree=TAYLOR_DEGREE).strip("\n").splitlines()],
        f"static const double GENERATORS[{axes}][{w}][{w}] = {_nested(_matrices(variant), '{', '}')};",
        "",
        f"static void multiply(const double a[{w}][{w}], const double b[{w}][{w}], double out[{w}][{w}])",
        "{",
        f"    for (int i = 0; i < {w}; ++i)",
        f"        for (int j = 0; j < {w}; ++j) {{",
        "            double sum = 0.0;",
        f"            for (int p = 0; p < {w}; ++p) sum += a[i][p] * b[p][j];",
        "            out[i][j] = sum;",
        "        }",
        "}",
        "",
        f"/* out[t, :] = exp(sum_a positions[t, a] A_a) x[t, :] for t < n_rows; x, out: n_rows x {w}; positions:",
        f"   n_rows x {axes}; is_query is accepted for the common interface (queries and keys rotate alike).",
        f"   Returns {prefix}_OK, or {prefix}_POSITION_NOT_FINITE"
        + ("." if last is None else f", or {prefix}_POSITION_OUT_OF_RANGE when a position is outside 0..{last}.")
        + " */",
        f"int {name}_apply(const double *x, const double *positions, double *out, long n_rows, int is_query)",
        "{",
        "    (void)is_query;",
        f"    double y[{w}][{w}], e[{w}][{w}], tmp[{w}][{w}];",
        "    for (long t = 0; t < n_rows; ++t) {",
        *guard,
        "        double norm = 0.0;",
        f"        for (int c = 0; c < {axes}; ++c)",
        f"            if (!isfinite(positions[t * {axes} + c])) return {prefix}_POSITION_NOT_FINITE;",
        f"        for (int i = 0; i < {w}; ++i) {{",
        "            double row = 0.0;",
        f"            for (int j = 0; j < {w}; ++j) {{",
        "                double v = 0.0;",
        f"                for (int c = 0; c < {axes}; ++c) v += positions[t * {axes} + c] * GENERATORS[c][i][j];",
        "                y[i][j] = v;",
        "                row += fabs(v);",
        "            }",
        "            if (row > norm) norm = row;",
        "        }",
        "        int squarings = 0;",
        f"        while (norm > 0.5 && squarings < {MAX_SQUARINGS}) {{ norm *= 0.5; ++squarings; }}",
        "        double scale = ldexp(1.0, -squarings);",
        f"        for (int i = 0; i < {w}; ++i)",
        f"            for (int j = 0; j < {w}; ++j) {{ y[i][j] *= scale; e[i][j] = (i == j); }}",
        f"        for (int k = {TAYLOR_DEGREE}; k > 0; --k) {{",
        "            multiply(y, e, tmp);",
        f"            for (int i = 0; i < {w}; ++i)",
        f"                for (int j = 0; j < {w}; ++j) e[i][j] = (i == j) + tmp[i][j] / k;",
        "        }",
        "        for (int s = 0; s < squarings; ++s) {",
        "            multiply(e, e, tmp);",
        "            memcpy(e, tmp, sizeof e);",
        "        }",
        f"        const double *z = x + t * {w};",
        f"        double *o = out + t * {w};",
        f"        for (int i = 0; i < {w}; ++i) {{",
        "            double sum = 0.0;",
        f"            for (int j = 0; j < {w}; ++j) sum += e[i][j] * z[j];",
        "            o[i] = sum;",
        "        }",
        "    }",
        f"    return {prefix}_OK;",
        "}", ""]
    return "\n".join(lines)
