"""NumPy body of a plain RoPE kernel, printed from the symbolic definitions.

The text :func:`symproof._export.kernel_files` makes of it (header first) is
both what ``symproof export --target numpy`` writes and what ``rope_apply``
executes (the way ``lambdify`` executes the source it prints), so the
exported file is the tested kernel.

Speed comes from the memory layout, not from the formula: with adjacent
pairing a pair ``(x_2r, x_2r+1)`` is one complex number in memory, so the
rotation is one in-place complex multiplication by a table of
``cos + i sin`` (the complex form of ``R(theta)`` is checked exactly when the
kernel is generated); with half pairing the two halves are contiguous and the
update is ``x * [R00 | R11] + swap_halves(x * [R10 | R01])`` (entries of the
2x2 matrix, printed; the same products as ``swap_halves(x) * [R01 | R10]``, so
the same bits), run as ufuncs with ``out=`` on cache-sized blocks, so no
temporary ever leaves the cache.  A block's table rows are taken into scratch
(expanded over heads when the ids are constant over them, so both products run
on contiguous rows) and kept while only axes the ids are broadcast over change;
the half swap is folded into the final add, and large arrays are split over
threads.  NumPy has no fused multiply-add and the swapped add walks the array
64 entries at a time, so on one core those passes cost more than twice a copy;
large contiguous half-pairing arrays therefore go through the exported C kernel
of the same definitions (:mod:`._native`: one pass, compiled on first use,
bitwise the same products and sums as the NumPy path), when a C compiler is
there.
"""

from __future__ import annotations

from ._symbolic import DIRECTIONS, RopeSpec, angle_entries, cos_t, omega, position, rotation_form, sin_t
from . import float_rows
from ._native import NATIVE, native_fields
from ._printers import NumPyKernelPrinter

__all__ = ["rope_numpy_body"]

_NAMES = {cos_t: "cos_", sin_t: "sin_", position: "p", omega: "w"}


def _print(expr) -> str:
    return NumPyKernelPrinter(_NAMES, {"fully_qualified_modules": True}).doprint(expr)


_HEAD = '''
import ctypes
import hashlib
import os
import stat
import subprocess
import tempfile
import threading

import numpy

HEAD_DIM = {head_dim}
ROTARY_DIM = {rotary_dim}
PAIRING = {pairing!r}
# {frequency_doc}; exact values rounded once to float64
FREQUENCIES = numpy.array({frequencies}, dtype=numpy.float64)
# entries of x per block on the half-pairing path (the block and its scratch stay in cache)
BLOCK_ELEMENTS = 1 << 17
# threads the half-pairing path splits arrays of at least PARALLEL_ELEMENTS entries over; every
# entry is computed by the same operations whatever the split, so the result is bitwise the same
THREADS = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
PARALLEL_ELEMENTS = 1 << 20
# a larger threads= is read as this many: more threads than cores only add start-up cost
MAX_THREADS = 64
# contiguous half-pairing arrays of at least this many entries run the C kernel (below, none is compiled)
NATIVE_ELEMENTS = 1 << 16
DIRECTIONS = ("forward", "backward")
# largest span of position ids tabulated in one cached table (about 2^22 entries per table)
TABLE_SPAN_LIMIT = max(1, (1 << 22) // len(FREQUENCIES))

'''

_BODY = '''
_cache = {{}}


def angle_table(p, w):
    """(cos theta, sin theta) of position id p at frequency w: the first column of R(theta)."""
    return ({cos_code}, {sin_code})


def _cos_sin(lo, hi):
    """``(first id, last id, cos, sin, tables built from them)`` covering the ids lo .. hi: float64,
    cached and grown by doubling up to TABLE_SPAN_LIMIT ids; a range the held one cannot grow to
    within that limit replaces it, so the table never spans more than the limit or this call's own
    range.  Callers keep to the entry they are given, so a call running beside one that grows the
    range still pairs each table with its own first id."""
    held = _cache.get("range")
    if held is None or held[0] > lo or held[1] < hi:
        if held is not None and max(hi, held[1]) - min(lo, held[0]) < TABLE_SPAN_LIMIT:
            # grow with head-room, so a decoding loop does not rebuild every step
            lo, hi = min(lo, held[0]), max(hi, held[1])
            span = hi - lo + 1
            hi = lo + max(span, min(2 * span, TABLE_SPAN_LIMIT)) - 1
        p = numpy.arange(lo, hi + 1, dtype=numpy.float64)[:, None]
        cos_, sin_ = angle_table(p, FREQUENCIES[None, :])
        held = (lo, hi, numpy.ascontiguousarray(cos_), numpy.ascontiguousarray(sin_), {{}})
        _cache.clear()
        _cache["range"] = held
    return held


def _complex_table(positions, direction, dtype):
    """The complex table of adjacent pairing, gathered at ``positions``."""
    key = ("gathered", direction, numpy.dtype(dtype).str)
    last = _cache.get(key)
    if last is not None and last[0].shape == positions.shape and numpy.array_equal(last[0], positions):
        return last[1]  # same ids as the previous call (every layer of one forward pass): reuse, stay in cache
    table, index = _table_and_index(positions, direction, "complex", dtype)
    gathered = table[index]
    _cache[key] = (positions.copy(), gathered)
    return gathered


def _table_and_index(positions, direction, kind, dtype):
    """A table with one row per position id (complex, or a (diagonal, off) pair of real tables)
    and, for each entry of ``positions``, its row in that table."""
    lo, hi = int(positions.min()), int(positions.max())
    if hi - lo + 1 <= max(TABLE_SPAN_LIMIT, 4 * positions.size):
        first, _, cos_, sin_, built = _cos_sin(lo, hi)
        key = (direction, kind, numpy.dtype(dtype).str)
        table = built.get(key)
        if table is None:
            table = built[key] = _combine(cos_, sin_, direction, kind, dtype)
        return table, positions - first
    # a sparse set of far-apart ids: tabulate just those
    unique, index = numpy.unique(positions, return_inverse=True)
    cos_, sin_ = angle_table(unique.astype(numpy.float64)[:, None], FREQUENCIES[None, :])
    return _combine(cos_, sin_, direction, kind, dtype), index.reshape(positions.shape)


def _combine(cos_, sin_, direction, kind, dtype):
    if kind == "pairs":  # the C kernel's table: (cos, sin) of each id, whatever the direction
        return numpy.ascontiguousarray(numpy.stack((cos_, sin_), axis=-1).astype(dtype))
    if kind == "real":  # out = x * diagonal + swap_halves(x * swapped_off), entries of the 2x2 matrix
        if direction == "forward":
            diagonal, off = ({forward_diagonal}), ({forward_swapped_off})
        else:
            diagonal, off = ({backward_diagonal}), ({backward_swapped_off})
        return (numpy.concatenate(numpy.broadcast_arrays(*diagonal), axis=-1).astype(dtype),
                numpy.concatenate(numpy.broadcast_arrays(*off), axis=-1).astype(dtype))
    complex_dtype = numpy.result_type(dtype, numpy.complex64)
    if direction == "forward":
        return ({forward_complex}).astype(complex_dtype)
    return ({backward_complex}).astype(complex_dtype)


def _prepare(x, positions):
    x = numpy.asarray(x)
    if x.dtype not in (numpy.float32, numpy.float64):
        x = x.astype(numpy.float64)
    if x.ndim < 2 or x.shape[-1] != HEAD_DIM:
        raise ValueError(f"x must have shape (..., T, {{HEAD_DIM}}), got {{x.shape}}")
    positions = numpy.asarray(positions)
    if positions.dtype.kind not in "iu":
        raise ValueError(f"positions must be integers, got dtype {{positions.dtype}}")
    rows = x.shape[:-1]
    if positions.ndim > len(rows) or numpy.broadcast_shapes(positions.shape, rows) != rows:
        raise ValueError(f"positions of shape {{positions.shape}} do not broadcast to x.shape[:-1] = {{rows}}")
    positions = positions.astype(numpy.int64, copy=False)
    return x, positions.reshape((1,) * (len(rows) - positions.ndim) + positions.shape)


def _blocks(shape, rows, shared=()):
    """Index tuples covering ``shape`` in blocks of at most ``rows`` entries (at least one).

    Outer axes listed in ``shared`` (those the table is broadcast along) are walked innermost,
    so a block of the table is read from memory once and then from cache."""
    inner, axis = 1, len(shape)
    while axis > 0 and inner * shape[axis - 1] <= rows:
        inner *= shape[axis - 1]
        axis -= 1
    if axis == 0:
        yield ()
        return
    step = max(1, rows // inner)
    outer = range(axis - 1)
    varying = [k for k in outer if k not in shared]
    repeated = [k for k in outer if k in shared]
    index = [0] * (axis - 1)
    for first in numpy.ndindex(*(shape[k] for k in varying)):
        for k, i in zip(varying, first):
            index[k] = i
        for start in range(0, shape[axis - 1], step):
            for second in numpy.ndindex(*(shape[k] for k in repeated)):
                for k, i in zip(repeated, second):
                    index[k] = i
                yield tuple(index) + (slice(start, start + step),)


def _output(x, out):
    """``(out, aliased)``: the result array, and whether it is x itself (in place)."""
    if out is None:
        return numpy.empty_like(x), False
    if not isinstance(out, numpy.ndarray) or out.shape != x.shape or out.dtype != x.dtype:
        raise ValueError(f"out must be an array of shape {{x.shape}} and dtype {{x.dtype}}")
    same = out.__array_interface__["data"][0] == x.__array_interface__["data"][0] and out.strides == x.strides
    if not same and numpy.may_share_memory(x, out):
        try:
            overlap = numpy.shares_memory(x, out, max_work=1 << 16)
        except RuntimeError:  # numpy.exceptions.TooHardError: the exact test ran out of work
            overlap = True
        if overlap:  # an entry would be read after another entry's result overwrote it
            raise ValueError("out must be x itself or an array that does not overlap x")
    return out, same


def _threads(threads):
    if threads is None:
        return THREADS
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {{threads!r}}")
    return threads


def _rotate(x, positions, direction, out, threads=1):
    x, positions = _prepare(x, positions)
    out, aliased = _output(x, out)
    if ROTARY_DIM < HEAD_DIM and not aliased:
        numpy.copyto(out[..., ROTARY_DIM:], x[..., ROTARY_DIM:])
    if x.size == 0:
        return out
    if PAIRING == "adjacent":  # element-wise complex product: safe in place as well
        complex_dtype = numpy.result_type(x.dtype, numpy.complex64)
        if x.strides[-1] != x.itemsize or out.strides[-1] != out.itemsize:
            rotated = _rotate(numpy.ascontiguousarray(x), positions, direction, None)
            numpy.copyto(out[..., :ROTARY_DIM], rotated[..., :ROTARY_DIM])
            return out
        z = x[..., :ROTARY_DIM].view(complex_dtype)
        numpy.multiply(z, _complex_table(positions, direction, x.dtype), out=out[..., :ROTARY_DIM].view(complex_dtype))
        return out
    return _rotate_half(x, positions, direction, out, aliased, threads)


def _rotate_half(x, positions, direction, out, aliased, threads):
    """Half pairing: ``out = x * diagonal + swap_halves(x * off)`` on blocks of rows that stay in cache.

    NumPy has no fused multiply-add, so this is three passes over each block; on a large array
    they are split over threads (NumPy releases the GIL in its loops), so one thread computes
    while another waits on memory."""
    if (NATIVE and x.size >= NATIVE_ELEMENTS and x.flags.c_contiguous and out.flags.c_contiguous
            and _native_half(x, positions, direction, out, threads)):
        return out
    (diagonal, off), index = _table_and_index(positions, direction, "real", x.dtype)
    rows = x.shape[:-1]
    shared = [k for k in range(len(rows)) if positions.shape[k] == 1 and rows[k] > 1]
    blocks = list(_blocks(rows, max(1, BLOCK_ELEMENTS // HEAD_DIM), shared))
    parts = min(threads, MAX_THREADS, len(blocks)) if x.size >= PARALLEL_ELEMENTS else 1
    work = (x, out, _halves(out), diagonal, off, numpy.broadcast_to(index, rows), shared, aliased)
    if parts == 1:
        _rotate_half_blocks(blocks, *work)
        return out
    cuts = [len(blocks) * k // parts for k in range(parts + 1)]
    failures = []

    def run(part):
        try:
            _rotate_half_blocks(blocks[cuts[part]:cuts[part + 1]], *work)
        except BaseException as err:  # re-raised in the calling thread once every part has stopped
            failures.append(err)

    helpers = [threading.Thread(target=run, args=(part,), daemon=True) for part in range(1, parts)]
    for helper in helpers:
        helper.start()
    run(0)
    for helper in helpers:
        helper.join()
    if failures:
        raise failures[0]
    return out


def _native_half(x, positions, direction, out, threads):
    """The half-pairing update by the C kernel, one pass; False where it is not available."""
    functions = _native_functions()
    function = None if functions is None else functions.get((x.dtype.name, direction))
    if function is None:
        return False
    pairs, index = _table_and_index(positions, "forward", "pairs", x.dtype)
    rows = numpy.ascontiguousarray(numpy.broadcast_to(index, x.shape[:-1]), dtype=numpy.int64)
    parts = min(threads, MAX_THREADS) if x.size >= PARALLEL_ELEMENTS else 1
    _native_run(function, x.ctypes.data, out.ctypes.data, rows.ctypes.data, rows.size, HEAD_DIM * x.itemsize,
                pairs.ctypes.data, len(pairs), max(1, min(parts, rows.size)))
    return True


def _rotate_half_blocks(blocks, x, out, out_pairs, diagonal, off, index, shared, aliased):
    """The given blocks of the half-pairing update.  A block's table rows are taken once into
    scratch and kept while only axes the ids are broadcast over change (``_blocks`` walks those
    innermost), so no table of x's size is ever built."""
    scratch, held = {{}}, None
    for block_index in blocks:
        block = x[block_index][..., :ROTARY_DIM]
        target = out[block_index][..., :ROTARY_DIM]
        if block.shape not in scratch:  # the swapped view built once: as_strided costs microseconds
            tmp, d, o = (numpy.empty(block.shape, x.dtype) for _ in range(3))
            scratch[block.shape] = (tmp, _halves(tmp, swapped=True), d, o)
        tmp, tmp_swapped, d, o = scratch[block.shape]
        rows_of_table = (tuple(i for k, i in enumerate(block_index) if k not in shared), block.shape)
        if rows_of_table != held:
            ids = index[block_index]
            # every id is a row of the table by construction; "clip" only spares take its buffered copy
            numpy.take(diagonal, ids, axis=0, out=d, mode="clip")
            numpy.take(off, ids, axis=0, out=o, mode="clip")
            held = rows_of_table
        if aliased:  # tmp first: the diagonal product overwrites x in place
            numpy.multiply(block, o, out=tmp)
            numpy.multiply(block, d, out=target)
        else:  # diagonal first: measured faster when out is a separate array
            numpy.multiply(block, d, out=target)
            numpy.multiply(block, o, out=tmp)
        pairs = out_pairs[block_index]
        numpy.add(pairs, tmp_swapped, out=pairs)


def _halves(v, swapped=False):
    """A (..., 2, ROTARY_DIM // 2) view of v's rotated part: its two halves, in swapped order if asked.

    Built with strides, never with reshape, which would silently copy a strided array; built once
    per call (for ``out``) or per scratch shape, never per block, since ``as_strided`` costs microseconds."""
    half, step = ROTARY_DIM // 2, v.strides[-1]
    base = v[..., half:] if swapped else v[..., :half]
    return numpy.lib.stride_tricks.as_strided(
        base, v.shape[:-1] + (2, half), v.strides[:-1] + ((-half if swapped else half) * step, step))


def apply(x, positions, out=None, threads=None):
    """RoPE: rotate pair r of every row of x by the angle of its position id ({pairing} pairing).

    x: array (..., T, HEAD_DIM); positions: integer ids broadcastable to x.shape[:-1];
    out: optional preallocated result (x itself, or an array not overlapping x);
    threads: how many threads may share a large half-pairing array (default THREADS);
    the result does not depend on it."""
    return _rotate(x, positions, "forward", out, _threads(threads))


def backward(g, positions, out=None, threads=None):
    """The gradient of ``apply`` with respect to x: R_m^T g, the inverse rotation."""
    return _rotate(g, positions, "backward", out, _threads(threads))
'''


def rope_numpy_body(spec: RopeSpec) -> str:
    """The NumPy module (``apply``, ``backward``) for ``spec``, without its header."""
    cos_expr, sin_expr = angle_entries(spec.config)
    halves = {}
    for direction in DIRECTIONS:
        m = rotation_form(direction).entries
        halves[f"{direction}_diagonal"] = f"{_print(m[0, 0])}, {_print(m[1, 1])}"
        halves[f"{direction}_swapped_off"] = f"{_print(m[1, 0])}, {_print(m[0, 1])}"
    return (_HEAD + NATIVE + _BODY).format(
        **native_fields(spec, "numpy"),
        head_dim=spec.config.head_dim,
        rotary_dim=spec.config.rotary_dim,
        pairing=spec.config.pairing,
        frequency_doc=spec.describe_frequencies(),
        frequencies=float_rows(spec.frequency_values),
        cos_code=_print(cos_expr),
        sin_code=_print(sin_expr),
        forward_complex=_print(rotation_form("forward").complex_factor),
        backward_complex=_print(rotation_form("backward").complex_factor),
        **halves,
    )
