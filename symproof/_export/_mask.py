"""The mask functions a variant file with ``[mask] allowed`` adds to its kernel files.

Every target gets the same two functions, printed from the exact condition (never from the file's text):

- ``mask_at(query_positions, key_positions)``: booleans ``allowed[a, b]``, true where the key at
  ``key_positions[b]`` is visible to the query at ``query_positions[a]``;
- ``mask_bias(query_positions, key_positions)``: the additive form, ``0.0`` where allowed and ``-inf``
  elsewhere, to add to the scores before the softmax (a row with no visible key gives NaN there: the
  ``mask_self`` property says whether one can occur).

C: ``{module}_mask_at(queries, keys, n_queries, n_keys, unsigned char *allowed)`` and
``{module}_mask_bias(..., double *out)``, row-major ``n_queries x n_keys`` outputs the caller allocates;
each returns ``{MODULE}_OK``, or ``{MODULE}_POSITION_OUT_OF_RANGE`` (nothing written past the check) when
a file with a declared range ``0..N`` is given a position outside it.  Positions are float64 numbers, as
in the other functions of the file.
"""

from __future__ import annotations

import sympy as sp

from ._printers import CKernelPrinter, NumPyKernelPrinter, numbers_as_floats, torch_printer

__all__ = ["with_mask"]

_i, _j = sp.symbols("i j", real=True)


def _condition(variant):
    """The condition with every comparison written ``lhs - rhs OP 0``: torch compares a tensor with a number,
    not a number with a tensor (``0 <= i - j`` would print ``torch.le(0, i - j)``)."""
    condition = variant.mask.condition({**variant.params, "i": _i, "j": _j})
    return condition.replace(lambda e: isinstance(e, sp.core.relational.Relational),
                             lambda r: type(r)(r.lhs - r.rhs, 0))


def with_mask(files: dict, variant, module: str, target: str) -> dict:
    """``files`` with the mask functions appended to the main file (the first)."""
    name = next(iter(files))
    lines = _c_lines(variant, module) if target == "c" else _python_lines(variant, target)
    return {**files, name: files[name].rstrip("\n") + "\n" + "\n".join(lines) + "\n"}


def _python_lines(variant, target: str) -> list:
    lib = "numpy" if target == "numpy" else "torch"
    as_array = "numpy.asarray" if target == "numpy" else "torch.as_tensor"
    condition = _condition(variant)
    full = "numpy.full" if target == "numpy" else "torch.full"
    if condition in (sp.true, sp.false):  # decided by SymPy (i == i): a constant grid
        value = f"{full}(i.shape, {condition is sp.true})"
    else:
        printed = (NumPyKernelPrinter().doprint(condition) if target == "numpy"
                   else torch_printer().doprint(numbers_as_floats(condition)))
        value = f"{lib}.logical_and({printed}, {full}(i.shape, True))"
    guard = [] if variant.last_position is None else ["    _check_positions('i', i)", "    _check_positions('j', j)"]
    return ["", "", "MASK = " + repr(variant.mask.text) + "  # the file's [mask] allowed, for reading only", "", "",
            "def mask_at(query_positions, key_positions):",
            '    """allowed[a, b]: True where the key at key_positions[b] is visible to the query at',
            '    query_positions[a] (the file\'s [mask]); elsewhere the score is -inf."""',
            f"    i = {as_array}(query_positions, dtype={lib}.float64)[:, None]",
            f"    j = {as_array}(key_positions, dtype={lib}.float64)[None, :]",
            *guard,
            # every comparison on the full grid (numpy's logical_or.reduce stacks its operands)
            f"    i, j = {'numpy.broadcast_arrays' if target == 'numpy' else 'torch.broadcast_tensors'}(i, j)",
            f"    return {value}",
            "", "",
            "def mask_bias(query_positions, key_positions):",
            '    """0.0 where mask_at is True, -inf elsewhere: add it to the scores before the softmax."""',
            "    allowed = mask_at(query_positions, key_positions)",
            f"    return {lib}.where(allowed, 0.0, -{lib}.inf)" if target == "numpy" else
            "    return torch.where(allowed, torch.tensor(0.0, dtype=torch.float64), "
            "torch.tensor(-torch.inf, dtype=torch.float64))"]


def _c_lines(variant, name: str) -> list:
    prefix = name.upper()
    condition = _condition(variant)
    # a condition SymPy decided (i == i, 0 < 1 or ...) is a constant: C99 without stdbool.h has no `true`
    printed = {sp.true: "1", sp.false: "0"}.get(condition) or CKernelPrinter().doprint(condition)
    guard = ([] if variant.last_position is None else
             [f"    for (long a = 0; a < n_queries; ++a) if (outside_range(queries[a])) return {prefix}_POSITION_OUT_OF_RANGE;",
              f"    for (long b = 0; b < n_keys; ++b) if (outside_range(keys[b])) return {prefix}_POSITION_OUT_OF_RANGE;"])
    text = variant.mask.text.replace("*/", "* /")
    lines = ["", f"/* the file's [mask] allowed: {text} */",
             "static int mask_allowed(double i, double j) { return (" + printed + ") ? 1 : 0; }", ""]
    for entry, kind, value in (("mask_at", "unsigned char *allowed", "allowed[a * n_keys + b] = (unsigned char)"
                                                                    "mask_allowed(queries[a], keys[b]);"),
                               ("mask_bias", "double *out", "out[a * n_keys + b] = mask_allowed(queries[a], keys[b]) "
                                                            "? 0.0 : -INFINITY;")):
        what = ("1 where the key at keys[b] is visible to the query at queries[a], else 0" if entry == "mask_at"
                else "0.0 where the key is visible, -INFINITY elsewhere (add it to the scores)")
        lines += [f"/* {entry}: row-major n_queries x n_keys, {what}.",
                  f"   Returns {prefix}_OK" + ("" if variant.last_position is None else
                                               f", or {prefix}_POSITION_OUT_OF_RANGE when a position is outside "
                                               f"0..{variant.last_position} (nothing is written)") + ". */",
                  f"int {name}_{entry}(const double *queries, const double *keys, long n_queries, long n_keys, {kind})",
                  "{", *guard,
                  "    for (long a = 0; a < n_queries; ++a)",
                  "        for (long b = 0; b < n_keys; ++b)",
                  f"            {value}",
                  f"    return {prefix}_OK;", "}", ""]
    return lines
