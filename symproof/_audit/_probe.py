"""Calling the user's rotary map: which array library it takes, bounded time, clean outputs.

The function is called as ``fn(x, positions)`` with ``x`` of shape ``(B, T, d)``
(float64) and integer positions.  Two position layouts are accepted -- the
full ``x.shape[:-1]`` and one row ``(T,)`` broadcast over the batch -- and two
array libraries, NumPy first, then PyTorch (tried only when the user's code
has imported torch already: importing it costs seconds).  The first
combination that returns an array of ``x``'s shape is kept for every probe.

Each call is bounded in time (``SIGALRM`` on the main thread of a Unix
process); a function that loops forever is reported, not waited for.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
import warnings

import numpy as np

from .._errors import InvalidInputError

__all__ = ["Probe", "PROBE_SECONDS", "MAX_PROBE_ELEMENTS"]

#: most seconds one call of the user's function may take
PROBE_SECONDS = 10.0
#: most elements of one probe batch (basis vectors are sent in chunks below this)
MAX_PROBE_ELEMENTS = 1 << 22


class _Timeout(Exception):
    pass


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:240]}" if text else type(err).__name__


def _module_globals(fn) -> dict:
    """The globals of the code behind ``fn``: a function, a ``functools.partial``, or a callable object
    (a ``torch.nn.Module`` instance: its ``forward``)."""
    for candidate in (fn, getattr(fn, "func", None), getattr(fn, "forward", None),
                      getattr(type(fn), "__call__", None)):
        names = getattr(candidate, "__globals__", None)
        if isinstance(names, dict):
            return names
    return {}


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


class Probe:
    """The user's function as a float64 NumPy map ``(x, positions) -> y`` with checks."""

    def __init__(self, fn, width: int, name: str = "the function", seconds: float = PROBE_SECONDS):
        self.fn = fn
        self.width = width
        self.name = name
        self.seconds = seconds
        self.backend = None  # "numpy" | "torch"
        self.layout = None  # "full": positions of shape x.shape[:-1]; "row": shape (T,)
        self.calls = 0
        self.call_seconds = 0.0

    # -- conventions -----------------------------------------------------------------------------
    def _conventions(self):
        numpy_first = [("numpy", "full"), ("numpy", "row")]
        if "torch" not in sys.modules:
            return numpy_first
        torch_first = [("torch", "full"), ("torch", "row")]
        # a function whose module uses torch is tried with tensors first: a failed NumPy attempt can cost a
        # whole call (tables built before the first tensor method is reached)
        uses_torch = any(getattr(v, "__name__", "").split(".")[0] == "torch"
                         for v in list(_module_globals(self.fn).values()))
        return torch_first + numpy_first if uses_torch else numpy_first + torch_first

    def _call(self, backend: str, layout: str, x: np.ndarray, positions: np.ndarray):
        pos = np.ascontiguousarray(np.broadcast_to(positions, x.shape[:-1])) if layout == "full" else positions.copy()
        xin = x.copy()
        if backend == "torch":
            import torch

            xin, pos = torch.from_numpy(xin), torch.from_numpy(pos)
        start = time.perf_counter()
        try:
            # the user's overflow/invalid warnings (float16 angles...) are what the audit reports on, not noise
            with _time_limit(self.seconds), warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                y = self.fn(xin, pos)
        finally:
            self.calls += 1
            self.call_seconds += time.perf_counter() - start
        return self._as_numpy(y, x.shape)

    def _as_numpy(self, y, shape):
        if type(y).__module__.startswith("torch"):
            y = y.detach().cpu()
            if y.is_complex():
                raise InvalidInputError(f"{self.name} returned complex values; expected a real array of shape {shape}")
            y = y.double().numpy()
        try:
            y = np.asarray(y)
        except Exception as err:  # an object numpy cannot read
            raise InvalidInputError(f"{self.name} returned {type(y).__name__}, not an array ({_one_line(err)})") from None
        if np.iscomplexobj(y):
            raise InvalidInputError(f"{self.name} returned complex values; expected a real array of shape {shape}")
        if y.shape != shape:
            raise InvalidInputError(f"{self.name} returned shape {y.shape} for x of shape {shape}; "
                                    "expected the shape of x")
        try:
            return y.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise InvalidInputError(f"{self.name} returned {y.dtype} values, not numbers ({_one_line(err)})") from None

    def _describe(self, backend, layout, x, positions) -> str:
        pos_shape = x.shape[:-1] if layout == "full" else positions.shape
        kind = "numpy arrays" if backend == "numpy" else "torch tensors"
        return f"{kind} x{tuple(x.shape)} float64, positions{tuple(pos_shape)} int64"

    def detect(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """Find the convention the function accepts (first probe); return its output for ``x``."""
        failures = []
        for backend, layout in self._conventions():
            try:
                y = self._call(backend, layout, x, positions)
            except _Timeout:
                raise InvalidInputError(f"{self.name} took longer than {self.seconds:g} s on one probe "
                                        f"({self._describe(backend, layout, x, positions)})") from None
            except KeyboardInterrupt:
                raise
            except InvalidInputError as err:
                failures.append(f"with {self._describe(backend, layout, x, positions)}: {err.message}")
                continue
            except BaseException as err:  # whatever the user's code raises
                failures.append(f"with {self._describe(backend, layout, x, positions)}: raised {_one_line(err)}")
                continue
            self.backend, self.layout = backend, layout
            return y
        # the full-layout failure of each library says the most; the row layout repeats it
        shown = failures[0::2] if len(failures) > 1 else failures
        hint = "" if "torch" in sys.modules else " (torch tensors were not tried: the file does not import torch)"
        raise InvalidInputError(f"{self.name} failed on every probe convention: " + "; ".join(shown) + hint)

    def __call__(self, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """``fn(x, positions)`` as float64, with the convention found by :meth:`detect`."""
        if self.backend is None:
            return self.detect(x, positions)
        try:
            return self._call(self.backend, self.layout, x, positions)
        except _Timeout:
            raise InvalidInputError(f"{self.name} took longer than {self.seconds:g} s on one probe "
                                    f"({self._describe(self.backend, self.layout, x, positions)})") from None
        except (InvalidInputError, KeyboardInterrupt):
            raise
        except BaseException as err:
            raise InvalidInputError(f"{self.name} raised {_one_line(err)} with "
                                    f"{self._describe(self.backend, self.layout, x, positions)}") from None

    def basis_images(self, positions: np.ndarray, extra: np.ndarray | None = None):
        """``F[t, i, j]``: coordinate ``i`` of the output for basis vector ``e_j`` at ``positions[t]``.

        ``extra`` (shape ``(k, T, d)``) rides along in the same call (a call can cost more than its
        inputs, e.g. when it builds a table for every position up to the largest); with ``extra`` the
        result is ``(F, outputs for extra)``.
        """
        d, n = self.width, len(positions)
        extra = np.zeros((0, n, d)) if extra is None else np.asarray(extra, dtype=np.float64)
        rows = d + len(extra)
        chunk = max(1, MAX_PROBE_ELEMENTS // (n * d))
        out = np.empty((rows, n, d))
        for start in range(0, rows, chunk):
            stop = min(rows, start + chunk)
            x = np.zeros((stop - start, n, d))
            basis = np.arange(start, min(stop, d))
            x[basis - start, :, basis] = 1.0
            if stop > d:
                x[max(start, d) - start:] = extra[max(start, d) - d:stop - d]
            out[start:stop] = self(x, positions)
        images = np.transpose(out[:d], (1, 2, 0))
        self.check_finite(images, positions)
        return (images, out[d:]) if len(extra) else images

    def check_finite(self, images: np.ndarray, positions: np.ndarray) -> None:
        bad = ~np.isfinite(images)
        if bad.any():
            t, i, j = (int(v) for v in np.argwhere(bad)[0])
            raise InvalidInputError(f"{self.name} returned {images[t, i, j]} (output coordinate {i}) for the basis "
                                    f"vector e_{j} at position {int(positions[t])}; expected finite numbers")
