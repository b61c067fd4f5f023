"""The ``kernel`` property of a file with a ``[mask]``: the written files' ``mask_at`` and ``mask_bias``
against the exact condition (:mod:`._mask`), after the score's own comparison (:mod:`._kernel_file`).

Its own module so that neither of the two imports the other: this one reads both."""

from __future__ import annotations

import ctypes
import tempfile
from pathlib import Path

import numpy as np

from .._ground._text import one_line
from ._kernel_file import _Broken, _Written, available_targets, check_kernel
from ._mask import allowed_or_none, candidates, condition_numbers, inside, symbolic_condition

__all__ = ["check_kernel_and_mask", "probe_pairs"]


def check_kernel_and_mask(variant, proof, targets=None) -> None:
    """The ``kernel`` property: the score's files (:func:`~._kernel_file.check_kernel`), then, when the file
    has a mask and the score's files passed, each target's mask."""
    check_kernel(variant, proof, targets)
    if variant.mask is not None and all(part.status == "proved" for part in proof.parts):
        check_mask_kernel(variant, proof, targets)


def probe_pairs(variant) -> list:
    """The (query, key) pairs the kernel files' masks are compared at: every pair of small positions, and
    pairs next to the numbers the condition names (offsets and positions)."""
    values = candidates(variant)
    small = [v for v in values if abs(v) <= 9]
    pairs = [(a, b) for a in small for b in small]
    pairs += [(a, b) for a in values for b in (0, 1, a - 1, a, a + 1) if inside(variant, a, b)]
    pairs += [(a + n, a) for a in (0, 5, 100) for n in condition_numbers(symbolic_condition(variant)) if inside(variant, a, a + n)]
    return list(dict.fromkeys(p for p in pairs if inside(variant, *p)))


def check_mask_kernel(variant, proof, targets=None) -> None:
    """Each target's ``mask_at`` and ``mask_bias`` against the exact mask at the probed pairs."""
    pairs = probe_pairs(variant)
    queries = sorted({a for a, _ in pairs})
    keys = sorted({b for _, b in pairs})
    row, col = {a: n for n, a in enumerate(queries)}, {b: n for n, b in enumerate(keys)}
    expected = {(a, b): allowed_or_none(variant, a, b) for a in queries for b in keys}
    for target, why_not in available_targets(variant):
        if why_not or (targets is not None and target not in targets):
            continue
        with tempfile.TemporaryDirectory(prefix="symproof-mask-") as folder:
            try:
                written = _Written(variant, target, Path(folder))
                allowed, additive = _written_mask(written, target, queries, keys)
            except _Broken as err:
                proof.check(f"the {target} file's mask imports and runs", False, one_line(str(err)))
                return
            except Exception as err:  # noqa: BLE001 - the written file failed while running
                proof.check(f"the {target} file's mask runs", False,
                            one_line(f"the {target} mask raises {type(err).__name__}: {err}"))
                return
        wrong = [(a, b) for (a, b), want in expected.items() if want is not None
                 and (bool(allowed[row[a], col[b]]) != want
                      or not ((additive[row[a], col[b]] == 0.0) if want else np.isneginf(additive[row[a], col[b]])))]
        compared = sum(1 for want in expected.values() if want is not None)
        detail = (f"{compared} pairs: mask_at and mask_bias (0 / -inf) equal the exact mask" if not wrong else
                  f"at (i, j) = {wrong[0]} the file gives {bool(allowed[row[wrong[0][0]], col[wrong[0][1]]])}, "
                  f"the definition {expected[wrong[0]]}")
        proof.check(f"the {target} file's mask_at and mask_bias = the exact mask", not wrong, detail)
        if wrong:
            return


def _written_mask(written, target, queries, keys):
    q = np.ascontiguousarray(queries, dtype=np.float64)
    k = np.ascontiguousarray(keys, dtype=np.float64)
    if target != "c":
        return (written._to_numpy(written.module.mask_at(written._in(q), written._in(k))),
                written._to_numpy(written.module.mask_bias(written._in(q), written._in(k))))
    allowed = np.zeros((len(q), len(k)), dtype=np.uint8)
    additive = np.zeros((len(q), len(k)), dtype=np.float64)
    lib, name = written.library, written.module_name
    double_p = ctypes.POINTER(ctypes.c_double)
    for entry, out, pointer in ((f"{name}_mask_at", allowed, ctypes.POINTER(ctypes.c_ubyte)),
                                (f"{name}_mask_bias", additive, double_p)):
        function = getattr(lib, entry)
        function.restype = ctypes.c_int
        status = function(q.ctypes.data_as(double_p), k.ctypes.data_as(double_p), ctypes.c_long(len(q)),
                          ctypes.c_long(len(k)), out.ctypes.data_as(pointer))
        if status != 0:
            raise _Broken(f"{written.file}: {entry} returned {status} at positions inside the file's range")
    return allowed, additive
