"""The ``kernel`` property, decided on the files ``--export`` writes.

For each target (numpy always; torch when it is installed; C for rotary
variants when a C compiler is on ``PATH``) the files are generated exactly as
``symproof check FILE --export DIR --target T`` writes them, into a temporary
folder; the Python module is imported fresh from there (a new module object,
never a cached one), the C file is compiled with ``cc -shared`` and loaded with
:mod:`ctypes`.  Their outputs are then compared with the exact definition,
evaluated to 40 digits, at small, random and large positions (powers of two up
to ``2**20``, and negative ones unless the file says ``positions =
"nonnegative"``).  A file that does not import, compile or run refutes the
property, with the error in one line; so does a value that is not finite where
the definition is, or one outside the tolerance.

Positions where the *definition* is not a finite real float64 (a ``log(m)``
at ``m <= 0``, a scale that overflows) are skipped and counted: there is no
float64 value to agree with.  The tolerance grows with the position: a float64
angle ``m * omega`` carries an absolute error of order ``|m| * omega * 2**-53``,
so the relative difference allowed is ``TOLERANCE * (1 + |m|)``.
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import sympy as sp

from .._ground._errors import SymproofError
from .._ground._text import one_line
from ._bias_axes import compare_bias_axes
from ._dense_kernel import compare_dense
from ._kernel import exact_rotary, probed_indices, value_digits
from ._kernel_offset import compare_offset
from ._spec import Variant

__all__ = ["check_kernel", "check_written_kernel", "available_targets", "probe_positions", "TOLERANCE", "LARGE_POSITIONS",
           "prepare_targets"]

#: relative agreement demanded at position 0; it grows as 1 + |position| (see the module docstring)
TOLERANCE = 1e-12
#: powers of two probed besides the small positions (float64 still resolves the angle there)
LARGE_POSITIONS = (2**10, 2**15, 2**20)
_SMALL_POSITIONS = (0, 1, 7, 4097)
#: seconds a C compilation may take before the property is refuted
_COMPILE_SECONDS = 60
_counter = itertools.count()


class _Broken(Exception):
    """The written file does not import, compile or run (the message is one line)."""

    rule = "the {target} file imports and runs"


class _BeyondFloat64(_Broken):
    """The definition overflows float64 where the kernel is called: no float64 file computes it."""

    rule = "the {target} file gives finite values at the small positions"


def compiler() -> str | None:
    """The C compiler used for the C target (``cc``, else ``gcc``), or ``None``."""
    return shutil.which("cc") or shutil.which("gcc")


def _torch_available() -> bool:
    return importlib.util.find_spec("torch") is not None


def prepare_targets(targets=None) -> None:
    """Import torch once, outside any property's budget (its import is a fixed cost of the process)."""
    if (targets is None or "torch" in targets) and _torch_available():
        import torch  # noqa: F401
        from sympy.printing import pytorch  # noqa: F401


def available_targets(variant: Variant) -> list:
    """``[(target, why not checked or "")]`` for every export target."""
    out = [("numpy", "")]
    out.append(("torch", "" if _torch_available() else "torch is not installed"))
    if variant.kind in ("rotary", "dense"):
        out.append(("c", "" if compiler() else "no C compiler (cc or gcc) on PATH"))
    return out


def probe_positions(variant: Variant) -> list:
    """Small, random, large and (unless restricted) negative positions, in that order."""
    rng = np.random.default_rng(0)
    picks = list(_SMALL_POSITIONS) + [int(p) for p in rng.integers(2, 5000, 2)] + list(LARGE_POSITIONS)
    if not variant.from_zero:
        picks += [-1, -7, int(-rng.integers(2, 5000)), -(2**10), -(2**20)]
    if variant.length_dependent:
        picks += [variant.length_threshold - 1, variant.length_threshold]
    if variant.vectors is not None:  # a learned table: its last row, and the first position past it
        picks += [variant.vectors.last, variant.vectors.last + 1]
    last = variant.last_position
    if last is not None:  # a declared range 0..N: its end, and nothing past it (the kernels refuse those)
        picks = [p for p in picks + list(range(min(last, 16) + 1)) + [last - 1, last] if 0 <= p <= last]
    return list(dict.fromkeys(picks))


def _allowed(position) -> float:
    return TOLERANCE * (1 + abs(float(position)))


# -- writing and loading --------------------------------------------------------------------------


def _files(variant: Variant, target: str) -> tuple:
    """``(module name, {file name: text})`` exactly as ``--export`` writes them."""
    from ._export import variant_kernel
    from .._export import kernel_files

    kernel = variant_kernel(variant, target)
    return kernel, kernel_files(kernel, target)


def _import(path: Path):
    spec = importlib.util.spec_from_file_location(f"_symproof_written_{next(_counter)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile(folder: Path, source: Path):
    library = folder / (source.stem + ".so")
    cc = compiler()
    try:
        done = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(library), str(source), "-lm"],
                              cwd=folder, capture_output=True, text=True, timeout=_COMPILE_SECONDS)
    except subprocess.TimeoutExpired:
        raise _Broken(f"{source.name} does not compile within {_COMPILE_SECONDS} s") from None
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if "error" in line), done.stderr.strip()[:300])
        raise _Broken(f"{source.name} does not compile: {first}")
    return ctypes.CDLL(str(library))


def _pointer(array):
    return array.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


class _Written:
    """The exported kernel of one target, loaded: ``rotate``, ``table`` or ``bias_at`` as numpy arrays."""

    def __init__(self, variant: Variant, target: str, folder: Path):
        self.variant, self.target = variant, target
        self.head = None  # a file with heads: the head index every call passes (see _compare_heads)
        kernel, files = _files(variant, target)
        self.family, self.module_name = kernel.family, kernel.module
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        main = folder / next(iter(files))
        try:
            if target == "c":
                self.library = _compile(folder, main)
                entry = "scores" if variant.relative is not None else "apply"  # a score kernel: see _offset
                self.function = getattr(self.library, f"{kernel.module}_{entry}")
            else:
                self.module = _import(main)
        except _Broken:
            raise
        except BaseException as err:  # noqa: BLE001 - anything the file raises is its failure
            if not isinstance(err, Exception):
                raise
            raise _Broken(f"{main.name} does not import: {type(err).__name__}: {err}") from None
        self.file = main.name

    def _to_numpy(self, value):
        if self.target == "torch":
            return value.detach().cpu().numpy()
        return np.asarray(value)

    def _in(self, array):
        if self.target == "torch":
            import torch

            return torch.as_tensor(array)
        return array

    def rotate(self, x, positions: list, side: str, seq_lens: list) -> np.ndarray:
        """The file's image of the row ``x`` at each of ``positions`` (tuples, one coordinate per axis),
        one row per position.  One call for every position (NumPy's table-caching kernel then
        tabulates just those ids), except for a call-length kernel, called once per position with
        its length, and C plain RoPE, which tabulates the whole span of ids of a call."""
        # the C rope kernel tabulates every id from the smallest to the largest of its call
        if self.family == "call-length" or (self.family == "rope" and self.target == "c"):
            return np.concatenate([self._rotate(x, [p], side, n) for p, n in zip(positions, seq_lens)])
        return self._rotate(x, positions, side, None)

    def _rotate(self, x, positions, side, seq_len):
        v = self.variant
        rows = np.repeat(x[None, :], len(positions), axis=0)
        if self.target == "c":
            return self._rotate_c(rows, positions, side, seq_len)
        first = np.array([p[0] for p in positions])
        if self.family == "rope":
            got = self.module.apply(self._in(rows), self._in(first.astype(np.int64)))
        elif self.family == "call-length":
            got = self.module.apply(self._in(rows), self._in(first.astype(np.float64)), seq_len=seq_len)
        else:
            pos = np.array(positions if len(v.axes) > 1 else first, dtype=np.float64)
            got = self.module.apply(self._in(rows), self._in(pos), side,
                                    **({} if self.head is None else {"head": self.head}))
        return self._to_numpy(got)

    def _rotate_c(self, rows, positions, side, seq_len):
        x = np.ascontiguousarray(rows, dtype=np.float64)
        out = np.zeros_like(x)
        f, n = self.function, len(positions)
        if self.family == "rope":
            ids = np.array([p[0] for p in positions], dtype=np.int64)
            f.restype = ctypes.c_int
            status = f(_pointer(x), _pointer(out), ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                       ctypes.c_size_t(n))
            if status != 0:
                raise _Broken(f"{self.file}: {self.module_name}_apply returned {status}")
            return out
        pos = np.ascontiguousarray(np.array(positions, dtype=np.float64))
        last = ctypes.c_double(seq_len) if self.family == "call-length" else ctypes.c_int(int(side == "query"))
        if self.family == "call-length":
            f.restype = None
            f(_pointer(x), _pointer(pos), _pointer(out), ctypes.c_long(n), last)
            return out
        f.restype = ctypes.c_int  # the variant family's status: 0, or a position read outside a table
        status = f(_pointer(x), _pointer(pos), _pointer(out), ctypes.c_long(n), last,
                   *(() if self.head is None else (ctypes.c_int(self.head),)))
        if status != 0:
            raise _Broken(f"{self.file}: {self.module_name}_apply returned {status} (a position read outside a table) "
                          "where the definition is defined")
        return out

    def table(self, positions) -> np.ndarray:
        return self._to_numpy(self.module.table(self._in(np.asarray(positions, dtype=np.float64))))

    def scores(self, q, k, queries, keys) -> np.ndarray:
        """The file's scores ``s[a, b]`` of the rows of ``q`` at ``queries`` against those of ``k`` at ``keys``."""
        queries, keys = (np.ascontiguousarray(p, dtype=np.float64) for p in (queries, keys))
        q, k = np.ascontiguousarray(q, dtype=np.float64), np.ascontiguousarray(k, dtype=np.float64)
        if self.target != "c":
            return self._to_numpy(self.module.scores(*(self._in(a) for a in (q, k, queries, keys))))
        out = np.zeros((len(queries), len(keys)))
        self.function.restype = ctypes.c_int
        status = self.function(_pointer(q), _pointer(k), _pointer(queries), _pointer(keys), _pointer(out),
                               ctypes.c_long(len(queries)), ctypes.c_long(len(keys)))
        if status != 0:
            raise _Broken(f"{self.file}: {self.module_name}_scores returned {status} (a position read outside a "
                          "table) where the definition is defined")
        return out

    def bias_at(self, queries, keys) -> np.ndarray:
        return self._to_numpy(self.module.bias_at(self._in(np.asarray(queries, dtype=np.float64)),
                                                  self._in(np.asarray(keys, dtype=np.float64))))


# -- the exact reference ----------------------------------------------------------------------------


class _Overflow(Exception):
    """The definition is a real number beyond float64's range at this point."""


def _finite(value) -> float | None:
    """``value`` as a float64 when it is a finite real number; ``None`` where it is not real;
    :class:`_Overflow` when it is real but beyond float64."""
    try:
        number = complex(sp.N(value, 30))
    except (TypeError, ValueError):
        return None
    except OverflowError:
        raise _Overflow from None
    if number.imag != 0 or math.isnan(number.real):
        return None
    if math.isinf(number.real):
        raise _Overflow
    return number.real


class _Reference:
    """The exact definition at 40 digits, computed once per position for every target."""

    def __init__(self, variant: Variant):
        self.variant = variant
        self._freqs = None
        if not variant.length_dependent and variant.vectors is None:
            self._freqs = {k: value_digits(variant.exact_value(k)) for k in probed_indices(variant.value_count)}

    def frequencies(self, seq_len):
        if self._freqs is not None:
            return self._freqs
        return variant_digits(self.variant, seq_len)

    def rotate(self, vector, position: tuple, side: str, seq_len: int):
        """``{coordinate: float}`` on the probed pairs, or ``None`` where the definition is not finite."""
        out = exact_rotary(self.variant, vector, position, side, self.frequencies(seq_len), number=_finite)
        return None if any(value is None for value in out.values()) else out

    def pair_score(self, r, vectors, i, j):
        """The exact score of pair ``r`` of a relative-position file for the query at ``i`` and the key at
        ``j`` (``vectors``: the pair's two query and two key coordinates), or ``None`` where not finite."""
        v = self.variant
        q, k = (sp.Matrix([sp.Rational(x) for x in vector]) for vector in vectors)
        angle = sp.N(v.relative_at(sp.Integer(i), sp.Integer(j)) * self._freqs[r], 40)
        mq = sp.N(v.scale("query", i, r), 40) * v.block_at(angle, r).evalf(40)
        mk = sp.N(v.scale("key", j, r), 40) * v.block_at(sp.Integer(0), r).evalf(40)
        return _finite(((mq * q).T * (mk * k))[0])

    def table_row(self, position):
        v = self.variant
        if v.vectors is not None:  # a learned table: the file's row, every entry (exact float64 numbers)
            from ._vectors import exact_row

            return {a: float(value) for a, value in enumerate(exact_row(v, position))}
        n = v.n_pairs
        out = {}
        amplitude = v.amplitude_at(position)
        for r in probed_indices(n):
            angle = v.angle_position(position) * self._freqs[r]
            s_index, c_index = (2 * r, 2 * r + 1) if v.pairing == "adjacent" else (r, r + n)
            out[s_index], out[c_index] = _finite(amplitude * sp.sin(angle)), _finite(amplitude * sp.cos(angle))
        return None if any(value is None for value in out.values()) else out

    def bias(self, head, i, j):
        fast = self._fast_bias(head)
        if fast is not None:
            import mpmath

            with mpmath.workdps(40):
                value = fast(mpmath.mpf(i), mpmath.mpf(j))
            return _finite(sp.Float(value, 40)) if isinstance(value, (mpmath.mpf, int, float)) else None
        return _finite(self.variant.bias_at(i, j, self._freqs[head], head))

    def _fast_bias(self, head):
        """The head's bias as a 40-digit mpmath function of (i, j), built once: a sum of 64 cosines
        (Sandwich) built exactly at each of hundreds of points costs seconds.  Only for continuous
        formulas: at a jump (floor, mod, sign, where, a table index) 40 digits may fall on the wrong side, and
        those are built exactly at each point."""
        cache = self.__dict__.setdefault("_fast", {})
        if head not in cache:
            from ._formula import LookupBase

            si, sj = sp.symbols("i j", integer=True)
            expr = self.variant.bias_at(si, sj, self._freqs[head], head)
            jumps = expr.has(sp.floor, sp.ceiling, sp.Piecewise, sp.Mod, sp.sign) or any(
                isinstance(f, LookupBase) for f in expr.atoms(sp.Function))
            cache[head] = None if jumps else sp.lambdify((si, sj), expr, modules="mpmath")
        return cache[head]


def variant_digits(variant: Variant, seq_len):
    values = variant.frequencies_digits(seq_len=seq_len)
    return {k: values[k] for k in probed_indices(len(values))}


def _safe(function, position, *args):
    """Build a reference value; a definition undefined at this point gives ``None``, and so does one
    beyond float64 at a large or negative position (no float64 kernel can agree with it there).
    At the small positions (``|position| <= 4097``) a definition beyond float64 refutes the
    property: the kernel overflows where a user calls it."""
    try:
        return function(*args)
    except _Overflow:
        if abs(position) <= max(_SMALL_POSITIONS):
            raise _BeyondFloat64(f"at position {position} a value of the definition is beyond float64, so every "
                          "float64 kernel's is not finite (overflow)") from None
        return None
    except (SymproofError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None


# -- the comparison -----------------------------------------------------------------------------------


def _difference(got, value) -> float:
    got = float(got)
    if not math.isfinite(got):
        return math.inf
    return abs(got - value) / (1 + abs(value))


class _Tally:
    """The worst ratio (difference / allowance) seen, where, and the skipped positions."""

    def __init__(self):
        self.worst, self.where, self.compared, self.skipped = 0.0, None, 0, set()
        self.positions = set()  # every position a compared value was computed at (what *tested* reports)

    def add(self, got, value, position, what, at=()):
        ratio = _difference(got, value) / _allowed(position)
        self.compared += 1
        self.positions.update(at)
        if ratio > self.worst or (math.isnan(ratio) and self.where is None):
            overflow = "" if math.isfinite(float(got)) else " (not finite (overflow) where the definition is finite)"
            self.worst, self.where = ratio, f"{what}: file gives {float(got)!r}{overflow}, definition {value!r}"


def _compare_rotary(variant, written, reference, positions, tally, cache):
    rng = np.random.default_rng(0)
    vector = np.round(rng.standard_normal(variant.width), 6)
    axes = len(variant.axes)
    for side in ("query", "key"):
        probes = []
        for p in positions:
            position = tuple(p + 3 * a for a in range(axes))
            seq_len = max(max(position) + 1, 1)
            key = (side, position)
            if key not in cache:
                cache[key] = _safe(reference.rotate, p, vector, position, side, seq_len)
            if cache[key] is None:
                tally.skipped.add(p)
            else:
                probes.append((p, position, seq_len))
        got = written.rotate(vector, [q[1] for q in probes], side, [q[2] for q in probes])
        for row, (p, position, _) in enumerate(probes):
            for index, value in cache[(side, position)].items():
                tally.add(got[row, index], value, p, f"{side} at position {p}, coordinate {index}", position)
            if not np.array_equal(got[row, variant.rotated_width:], vector[variant.rotated_width:]):
                tally.add(math.inf, 0.0, p, f"coordinates past the rotated width {variant.rotated_width} "
                                            f"changed at position {p}")


def _compare_additive(variant, written, reference, positions, tally, cache):
    rows = []
    for p in positions:
        if p not in cache:
            cache[p] = _safe(reference.table_row, p, p)
        if cache[p] is None:
            tally.skipped.add(p)
        else:
            rows.append(p)
    got = written.table(rows)
    for row, p in enumerate(rows):
        for index, value in cache[p].items():
            tally.add(got[row, index], value, p, f"position {p}, column {index}", (p,))


def _compare_bias(variant, written, reference, positions, tally, cache):
    # every offset -5..8 among the small positions (where a steep bias first overflows), then the
    # large and negative ones against each other
    far = [p for p in positions if abs(p) >= 1024]
    queries, keys = list(range(6)) + far, list(range(9)) + far
    heads = probed_indices(variant.heads)
    for i, j in itertools.product(queries, keys):
        for h in heads:
            if (h, i, j) not in cache:
                cache[(h, i, j)] = _safe(reference.bias, max(abs(i), abs(j)), h, i, j)
    try:
        got = written.bias_at(queries, keys)
    except FloatingPointError:  # a bias beyond float64 somewhere in the grid: the file refuses it, pair by pair
        got = None
    for (a, i), (b, j) in itertools.product(enumerate(queries), enumerate(keys)):
        values = [cache[(h, i, j)] for h in heads]
        if got is not None:
            row = [got[h, a, b] for h in heads]
        else:
            try:
                pair = written.bias_at([i], [j])
                row = [pair[h, 0, 0] for h in heads]
            except FloatingPointError:
                # the pair refused (every head's value with it): right where a head's definition is undefined or
                # beyond float64 there, wrong where every head's is a finite float64
                row = [None if any(v is None for v in values) else math.inf] * len(heads)
        for h, written_value, value in zip(heads, row, values):
            if value is None or written_value is None:
                tally.skipped.add((i, j))
                continue
            tally.add(written_value, value, max(abs(i), abs(j)), f"head {h}, query {i}, key {j}", (i, j))


def _compare_heads(variant, written, reference, positions, tally, cache):
    """A file with heads: each probed head's rotation (the file called with that head index) against that
    head's definition, then the bias every head adds (numpy and torch: the C file rotates only)."""
    from ._heads import bias_part

    for h in probed_indices(variant.heads):
        written.head = h
        references = cache.setdefault("_references", {})
        if h not in references:
            references[h] = _Reference(variant.head(h))
        _compare_rotary(variant.head(h), written, references[h], positions, _HeadTally(tally, h),
                        cache.setdefault(("head", h), {}))
    written.head = None
    if variant.bias is not None and written.target != "c":
        part = bias_part(variant)
        if "_bias" not in cache:
            cache["_bias"] = _Reference(part)
        _compare_bias(part, written, cache["_bias"], positions, tally, cache.setdefault("bias", {}))


class _HeadTally:
    """A tally whose entries name their head."""

    def __init__(self, tally, head):
        self.tally, self.head, self.skipped = tally, head, tally.skipped

    def add(self, got, value, position, what, at=()):
        self.tally.add(got, value, position, f"head {self.head}, {what}", at)


_COMPARE = {"rotary": _compare_rotary, "additive": _compare_additive, "bias": _compare_bias}


def check_written_kernel(variant: Variant, proof, targets=None) -> None:
    """The ``kernel`` property: every target's written file (of ``targets``, default all) against the
    exact definition."""
    reference = None if variant.per_head else _Reference(variant)  # a file with heads: one per head
    positions = probe_positions(variant)
    cache: dict = {}
    proof.note(f"Positions probed: {positions} (relative tolerance {TOLERANCE:g} x (1 + |position|)); "
               "each target's files are written as --export writes them, into a temporary folder.")
    for target, why_not in available_targets(variant):
        if targets is not None and target not in targets:
            proof.note(f"{target}: not checked in this run (symproof check checks the numpy and C files, and "
                       "the torch file when --export writes it).")
            continue
        if why_not:
            proof.note(f"{target}: not checked ({why_not}).")
            continue
        tally = _Tally()
        with tempfile.TemporaryDirectory(prefix="symproof-kernel-") as folder:
            try:
                written = _Written(variant, target, Path(folder))
                with np.errstate(all="ignore"):
                    if variant.kind == "dense":  # exp(sum_a m_a A_a), in its own module
                        compare_dense(variant, written, positions, tally, cache, _safe, _Overflow)
                    elif variant.kind == "bias" and len(variant.axes) > 1:  # Swin: position vectors
                        compare_bias_axes(variant, written, positions, tally, cache, _safe, _finite)
                    else:
                        if variant.relative is not None:  # a score of each (query, key) pair (._kernel_offset)
                            compare_offset(variant, written, reference, positions, tally, cache, _safe, _finite)
                        else:
                            compare = _compare_heads if variant.per_head else _COMPARE[variant.kind]
                            compare(variant, written, reference, positions, tally, cache)
            except _Broken as err:
                proof.check(err.rule.format(target=target), False, one_line(str(err)))
                return
            except Exception as err:  # noqa: BLE001 - the written file failed while running
                proof.check(f"the {target} file imports and runs", False,
                            one_line(f"the {target} kernel raises {type(err).__name__}: {err}"))
                return
        skipped = f"; {len(tally.skipped)} probe(s) skipped where the definition is not a finite float64" \
            if tally.skipped else ""
        passed = tally.compared > 0 and tally.worst <= 1.0
        # a pass says what it proved (each difference within its allowance), not the residue: its last
        # digits depend on the CPU's sin/cos and BLAS kernels
        detail = (f"{tally.compared} values compared, every difference within its allowance{skipped}" if passed else
                  (f"no value compared{skipped}" if tally.compared == 0 else
                   f"{tally.where} (difference {tally.worst:.2e} of the allowance){skipped}"))
        proof.check(f"the {target} file {written.file} ({written.family} family) = the exact definition",
                    passed, one_line(detail), data={"target": target, "max_ratio": tally.worst,
                                                    "positions": sorted(tally.positions),
                                                    "compared": tally.compared, "skipped": len(tally.skipped)})
        if not passed:
            return


def check_kernel(variant: Variant, proof, targets=None) -> None:
    """The ``kernel`` property: the files ``--export`` writes (``targets``, default every target this
    machine can run) against the exact definition (:mod:`._kernel_file`)."""
    check_written_kernel(variant, proof, targets)
