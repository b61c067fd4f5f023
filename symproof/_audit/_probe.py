"""Calling the user's rotary map: its convention found, bounded time, the positions it can take, clean outputs.

The probe hands the runner (:mod:`._runner`: the conventions of real code)
a canonical ``x`` of shape ``(N, T, d)`` (float64) and the ``T`` positions;
the runner finds how the code is called and returns the rotated ``x`` (and
the rotated key when the code returns ``(q, k)``).  The runner lives in a
child process for a named file or module (:mod:`._child`: a hard wall-clock
limit, the process killed past it) or in this process for a Python object
given to :func:`symproof.audit` (``SIGALRM`` on the main thread of a Unix
process).  The first request (importing, building, trial calls) has the
longer warm-up limit; every later call has :data:`PROBE_SECONDS`.
"""

from __future__ import annotations

import signal
import threading
import time

import numpy as np

from .._ground._errors import InvalidInputError
from .._ground._text import one_line
from ._child import WARMUP_SECONDS, ChildFailure, ChildSession
from ._runner import CallTimeout, RunnerError, Session

__all__ = ["Probe", "PROBE_SECONDS", "MAX_PROBE_ELEMENTS", "WARMUP_SECONDS", "TRIAL_POSITIONS"]

#: most seconds one call of the user's function may take
PROBE_SECONDS = 10.0
#: most elements of one probe batch (basis vectors are sent in chunks below this: 8 MB of float64, so that the
#: user's code, its temporaries and the copies on the pipe stay small for wide heads)
MAX_PROBE_ELEMENTS = 1 << 20
#: positions of the trial calls that find the convention (small: inside any table)
TRIAL_POSITIONS = (0, 1, 2, 3, 5)
#: a call reaching this position may be slow for its length alone (a table built up to it): a time limit there
#: suggests --seq-len
LONG_CALL = 4096


_Timeout = CallTimeout


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:240]}" if text else type(err).__name__


class _time_limit:
    """Raise :class:`_Timeout` inside the call after ``seconds`` (main thread, Unix); otherwise no limit."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.active = (hasattr(signal, "setitimer") and seconds is not None and seconds > 0
                       and threading.current_thread() is threading.main_thread())

    def __enter__(self):
        if self.active:
            def on_alarm(signum, frame):
                raise _Timeout()

            self.previous = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


class InProcess:
    """The runner's session in this process (a Python object given to :func:`symproof.audit`)."""

    def __init__(self, fn, options: dict, *, call_seconds: float, warmup_seconds: float = WARMUP_SECONDS):
        self.session = Session(fn, options)
        self.label = self.session.label
        self.call_seconds, self.warmup_seconds = call_seconds, warmup_seconds

    def _run(self, seconds, what, func, *args, shown=None):
        try:
            with _time_limit(seconds):
                return func(*args)
        except _Timeout:
            raise InvalidInputError(f"{self.label} did not return within {shown or seconds:g} s ({what})") from None
        except (InvalidInputError, RunnerError):
            raise
        except BaseException as err:  # the user's code: KeyboardInterrupt and SystemExit are its failures too
            raise ChildFailure({"error": _one_line(err), "kind": "raised",
                                "index_error": isinstance(err, IndexError)}) from None

    def setup(self, x, positions):
        try:
            return self._run(self.warmup_seconds, "the first call", self.session.setup, x, positions)
        except RunnerError as err:
            raise ChildFailure({"error": str(err), "kind": "convention"}) from None

    def call(self, x, positions, repeat=False):
        try:
            return self._run(self.call_seconds * (2 if repeat else 1), f"a probe call with x of shape "
                             f"{tuple(x.shape)}", self.session.call, x, positions, repeat,
                             shown=self.call_seconds)
        except RunnerError as err:
            raise ChildFailure({"error": str(err), "kind": "raised"}) from None

    def close(self):
        pass


class Probe:
    """The user's code as a float64 NumPy map ``(x, positions) -> y`` with checks."""

    def __init__(self, runner, width: int, name: str = "the function", seconds: float = PROBE_SECONDS):
        self.runner = runner
        self.width = width
        self.name = name
        self.seconds = seconds
        self.info: dict = {}
        self.backend = None
        self.layout = None
        self.calls = 0
        self.call_seconds = 0.0
        self.stateful = False
        self.has_key = False
        self.range_note = None

    @classmethod
    def of(cls, target, options: dict, width: int, name: str, seconds: float = PROBE_SECONDS,
           warmup: float = WARMUP_SECONDS) -> "Probe":
        """A named target (``FILE.py:NAME``, ``module:NAME``) runs in a child process; an object here."""
        if isinstance(target, str):
            runner = ChildSession(target, options, call_seconds=seconds, warmup_seconds=warmup)
        else:
            runner = InProcess(target, options, call_seconds=seconds, warmup_seconds=warmup)
        return cls(runner, width, name=name, seconds=seconds)

    def close(self):
        self.runner.close()

    # -- setup -----------------------------------------------------------------------------------
    def setup(self) -> dict:
        """Find the convention with trial calls at small positions; return what the runner found."""
        positions = np.array(TRIAL_POSITIONS, dtype=np.int64)
        rng = np.random.default_rng(7)
        x = rng.standard_normal((2, len(positions), self.width))
        return self.setup_with(x, positions)

    def setup_with(self, x: np.ndarray, positions: np.ndarray) -> dict:
        """Find the convention with trial calls on ``x`` at ``positions`` ((T,), or (T, A) for several axes)."""
        try:
            info = self.runner.setup(x, positions)
        except ChildFailure as err:
            raise InvalidInputError(err.message if err.kind == "convention" else
                                    f"{self.name} raised {err.message} while it was being set up") from None
        self.info = info
        self.backend = info.get("array_library")
        self.layout = info.get("layout")
        self.has_key = bool(info.get("key"))
        return info

    def usable_positions(self, positions: tuple, extend: bool = True) -> tuple:
        """``positions`` within the range the code can take: its tables' length, then a trial at the largest.

        An out-of-range error at the largest position shrinks the range to the largest position that
        works (said in :attr:`range_note`); an error even at the smallest is one clear line.
        """
        bound = self.info.get("bound")
        kept = tuple(p for p in positions if bound is None or p < bound)
        if bound is not None and len(kept) < len(positions):
            if extend and bound - 1 > max(kept, default=-1):
                kept = kept + (bound - 1,)  # the largest position the code takes is probed too
            self.range_note = f"positions probed below {bound} ({self._bound_source()})"
        candidates = sorted(set(kept), reverse=True)
        rows = self.info.get("table_rows")
        if rows and candidates and rows - 1 < candidates[0]:  # the code's table as it is now: tried first below
            candidates = sorted(set(candidates) | {rows - 1}, reverse=True)
        last_error = None
        for p in candidates:
            x = np.zeros((1, 1, self.width))
            x[0, 0, 0] = 1.0
            try:
                self._raw(x, np.array([p], dtype=np.int64))
            except ChildFailure as err:
                last_error = err
                if p == candidates[-1]:
                    break
                continue
            if p != candidates[0]:
                self.range_note = (f"positions probed up to {p}: at position {candidates[0]} the code raised "
                                   f"{last_error.message[:160]} (a table shorter than the model's range?)")
                kept = tuple(q for q in kept if q < p) + (p,)
            return kept
        message = last_error.message if last_error is not None else "nothing to probe"
        raise InvalidInputError(f"{self.name} fails at every probed position (0..{max(positions)}): {message}; "
                                "--seq-len N audits calls of length N (positions below N)")

    def _bound_source(self) -> str:
        return self.info.get("bound_source") or "the code's own tables"

    # -- calls -----------------------------------------------------------------------------------
    def _raw(self, x, positions, repeat=False):
        start = time.perf_counter()
        try:
            return self.runner.call(x, positions, repeat)
        except InvalidInputError as err:  # a time limit: a call reaching a large position may build a big table
            top = int(np.max(positions)) if np.size(positions) else 0
            if "did not return within" in str(err) and top >= LONG_CALL and "--seq-len" not in str(err):
                raise InvalidInputError(f"{err} at positions up to {top}; --seq-len N audits calls of length N "
                                        f"(positions below N), --timeout SECONDS allows slower calls") from None
            raise
        finally:
            self.calls += 2 if repeat else 1
            self.call_seconds += time.perf_counter() - start

    def __call__(self, x: np.ndarray, positions: np.ndarray, repeat: bool = True):
        """``(q, k or None)`` as float64 for ``x`` of shape ``(N, T, d)``, with the convention found."""
        try:
            q, k, stateful = self._raw(x, positions, repeat)
        except ChildFailure as err:
            raise InvalidInputError(f"{self.name} raised {err.message} (called as {self.call_text()}, positions "
                                    f"{int(positions.min())}..{int(positions.max())})") from None
        self.stateful |= stateful
        for out in (q, k):
            if out is not None and out.shape != x.shape:
                raise InvalidInputError(f"{self.name} returned shape {out.shape} for x of shape {x.shape}; "
                                        "expected the shape of x")
        return q, k

    def call_text(self) -> str:
        return one_line(self.info.get("call", "fn(x, positions)"))

    def basis_images(self, positions: np.ndarray, extra: np.ndarray | None = None):
        """``(F, K, outputs)``: ``F[t, i, j]`` coordinate ``i`` of the output for ``e_j`` at ``positions[t]``,
        ``K`` the same for the key (or None), ``outputs`` the images of ``extra``.

        ``extra`` (shape ``(k, T, d)``) rides along in the same call (a call can cost more than its
        inputs, e.g. when it builds a table for every position up to the largest).
        """
        d, n = self.width, len(positions)
        extra = np.zeros((0, n, d)) if extra is None else np.asarray(extra, dtype=np.float64)
        rows = d + len(extra)
        chunk = max(1, MAX_PROBE_ELEMENTS // (n * d))
        out = np.empty((rows, n, d))
        key = np.empty((rows, n, d)) if self.has_key else None
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            x = np.zeros((stop - start, n, d))
            basis = np.arange(start, min(stop, d))
            x[basis - start, :, basis] = 1.0
            if stop > d:
                x[max(start, d) - start:] = extra[max(start, d) - d:stop - d]
            q, k = self(x, positions)
            out[start:stop] = q
            if key is not None:
                if k is None:
                    raise InvalidInputError(f"{self.name} returned a key on one call and not on another")
                key[start:stop] = k
        images = np.transpose(out[:d], (1, 2, 0))
        self.check_finite(images, positions)
        key_images = None if key is None else np.transpose(key[:d], (1, 2, 0))
        if key_images is not None:
            self.check_finite(key_images, positions)
        return images, key_images, out[d:]

    def disturbed(self, x: np.ndarray, positions: np.ndarray, longer: np.ndarray) -> bool:
        """Does ``x`` at ``positions`` give other outputs after one call at the ``longer`` positions?"""
        try:
            before, _ = self(x, positions, repeat=False)
            self._raw(np.ones((1, len(longer), self.width)), longer)
            after, _ = self(x, positions, repeat=False)
        except (ChildFailure, InvalidInputError):
            return False
        scale = max(1.0, float(np.abs(before).max()))
        return bool(np.abs(after - before).max() > 1e-6 * scale)

    def check_finite(self, images: np.ndarray, positions: np.ndarray) -> None:
        bad = ~np.isfinite(images)
        if bad.any():
            t, i, j = (int(v) for v in np.argwhere(bad)[0])
            where = positions[t]
            shown = int(where) if np.ndim(where) == 0 else "(" + ", ".join(str(int(v)) for v in where) + ")"
            raise InvalidInputError(f"{self.name} returned {images[t, i, j]} (output coordinate {i}) for the basis "
                                    f"vector e_{j} at position {shown}; expected finite numbers")
