"""The user's code in a child process: bounded in time, unable to touch the verdict.

``symproof audit FILE.py:NAME`` never imports the user's file into its own
process.  A child (``python -B -u _runner.py``, a fresh interpreter in a
session of its own) imports it and answers probe requests over two pipes; its
stdout and stderr (unbuffered, so what the code prints arrives even when the
child is stopped) are drained by threads of the parent and echoed to the
parent's stderr, at most :data:`ECHO_LIMIT` bytes.  The parent waits on each
answer with a wall-clock limit and kills the child's whole process group past
it (or when the audit ends), so that a hang in C code, a swallowed timeout,
non-daemon threads, ``fork``, ``atexit``, ``os._exit``, ``chdir`` or a flood
of output can change nothing but the message.  Answers are JSON headers and
``.npy`` arrays read with ``allow_pickle=False``: nothing the child sends is
ever run by the parent.

The child imports its own modules (json, inspect, NumPy...) before any folder
of the user's enters ``sys.path``: the current folder is never on it at start
(an entry of ``PYTHONPATH`` naming it is dropped), and it is added afterwards
only for a ``package.module:NAME`` target, as ``python -m`` would; a
``FILE.py`` target adds its own folder.  The child dies with the audit however
the audit ends (``PR_SET_PDEATHSIG`` on Linux, and a watcher in its process
group that kills the group when the audit's end of a pipe closes), and runs
under an address-space limit (:data:`MEMORY_VARIABLE`, :func:`memory_limit`).
A process the audited code starts in a session or process group of its own
(``setsid``, ``start_new_session=True``, a daemon) is not ended with it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time

import numpy as np

from .._ground._errors import InvalidInputError
from . import _runner

__all__ = ["ChildSession", "WARMUP_SECONDS", "ECHO_LIMIT"]

#: the first request (importing the user's file, building its modules, the trial calls) may take this many
#: times the limit of one call (60 s at the default 10 s: importing transformers alone can take 15 s on a busy host)
WARMUP_FACTOR = 6
WARMUP_SECONDS = 60.0
#: at most this many bytes of the child's own output are echoed to stderr
ECHO_LIMIT = 64 * 1024
#: a reply larger than this (beyond the arrays it must carry) is refused
_HEADER_LIMIT = 1 << 20
#: the environment variable that sets the child's address-space limit (``8G``, ``512M``, ``unlimited``)
MEMORY_VARIABLE = "SYMPROOF_AUDIT_MEMORY"
#: the default limit: half the machine's memory, but never below this
MEMORY_FLOOR = 4 << 30
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
#: what the way a child ended suggests (killed by these signals; any other end says nothing more)
_ENDINGS = {
    signal.SIGSEGV: "a crash in native code?", signal.SIGBUS: "a crash in native code?",
    signal.SIGILL: "a crash in native code?", signal.SIGFPE: "a crash in native code?",
    signal.SIGABRT: "an abort in native code, e.g. a failed allocation?",
    signal.SIGKILL: "killed from outside: the out-of-memory killer, or another process?",
}


def memory_limit() -> int | None:
    """The child's address-space limit in bytes (None: no limit), from :data:`MEMORY_VARIABLE` or the default."""
    text = os.environ.get(MEMORY_VARIABLE, "").strip().lower()
    if not text:
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            physical = 0
        return max(MEMORY_FLOOR, physical // 2)
    if text in ("unlimited", "none"):
        return None
    number, unit = text.rstrip("bkmgt"), text[len(text.rstrip("bkmgt")):].rstrip("b")
    try:
        size = int(float(number) * _UNITS[unit]) if number and unit in _UNITS else 0
    except (ValueError, OverflowError):
        size = 0
    if size < (64 << 20):
        raise InvalidInputError(f"{MEMORY_VARIABLE}={os.environ[MEMORY_VARIABLE]!r}: expected a size of at least "
                                "64M such as 8G or 512M, or 'unlimited'")
    return size


def _child_path(cwd: str) -> str:
    """PYTHONPATH for the child: its entries made absolute, the current folder and empty entries (which
    mean the current folder) left out, so that nothing there can shadow the runner's own imports."""
    entries = []
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry and os.path.abspath(entry) != cwd:
            entries.append(os.path.abspath(entry))
    return os.pathsep.join(entries)


class _Echo:
    """Drain one of the child's output pipes into our stderr, up to a shared byte budget."""

    budget = ECHO_LIMIT

    def __init__(self, fd: int, shared: dict):
        self.fd, self.shared = fd, shared
        self.tail = b""  # the end of what came through, for the message if the child dies
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                return
            if not chunk:
                return
            self.tail = (self.tail + chunk)[-4096:]
            with self.shared["lock"]:
                left = self.shared["left"]
                if left > 0:
                    shown = chunk[:left]
                    self.shared["left"] = left - len(shown)
                    try:
                        sys.stderr.write(shown.decode("utf-8", "replace"))
                        if self.shared["left"] <= 0:
                            sys.stderr.write("\n[the audited code printed more; the rest is not shown]\n")
                        sys.stderr.flush()
                    except (OSError, ValueError):
                        pass


class ChildSession:
    """The runner's :class:`~._runner.Session` in a child process, with the same ``setup``/``call``."""

    def __init__(self, target: str, options: dict, *, call_seconds: float, warmup_seconds: float = WARMUP_SECONDS):
        self.target, self.options = target, options
        self.call_seconds, self.warmup_seconds = call_seconds, warmup_seconds
        self.proc = None
        self.label = target

    # -- process ---------------------------------------------------------------------------------
    def _start(self):
        memory = memory_limit()
        cwd = os.getcwd()
        env = dict(os.environ)
        # the user's code sees the folders the audit was started with (PYTHONPATH), never the current
        # folder before the runner's own imports are done; a package.module:NAME target gets it after
        # them, first, as `python -m` puts it (a FILE.py target adds its own folder)
        env["PYTHONPATH"] = _child_path(cwd)
        env.pop("PYTHONSTARTUP", None)
        # the child's stdout is a pipe, block-buffered, and the child is killed, never exits: what the
        # user's code prints would be lost unless the caller's shell happened to set PYTHONUNBUFFERED
        env["PYTHONUNBUFFERED"] = "1"
        try:
            target_folder = "" if _runner.split_target(self.target)[0].endswith(".py") else cwd
        except _runner.RunnerError:
            target_folder = ""  # the child says what is wrong with the target
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        lifeline_r, self.lifeline = os.pipe()  # our end closes when we end, however: the child's group dies then
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-B", "-u", _runner.__file__, str(to_child_r), str(from_child_w), str(lifeline_r),
                 str(os.getpid()), str(memory or 0), target_folder],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(to_child_r, from_child_w, lifeline_r), start_new_session=True, env=env, close_fds=True)
        except BaseException:
            os.close(self.lifeline)
            raise
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
            os.close(lifeline_r)
        self.write_fd, self.read_fd = to_child_w, from_child_r
        shared = {"lock": threading.Lock(), "left": ECHO_LIMIT}
        self._echo = [_Echo(self.proc.stdout.fileno(), shared), _Echo(self.proc.stderr.fileno(), shared)]

    def close(self):
        """Kill the child and everything it started (its process group), then reap it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for fd in (self.write_fd, self.read_fd, self.lifeline):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.kill()
        except OSError:
            pass
        proc.wait()
        for echo in self._echo:
            echo.thread.join(timeout=0.2)  # a forked grandchild holding the pipe must not keep us here
        for stream in (proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- requests --------------------------------------------------------------------------------
    def _send(self, header: dict, arrays) -> None:
        try:
            _runner.write_message(self.write_fd, header, arrays)
        except (BrokenPipeError, OSError):
            pass  # the child is gone: the read below says how

    def _read(self, n: int, deadline: float, seconds: float, what: str) -> bytes:
        chunks, got = [], 0
        while got < n:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise InvalidInputError(f"{self.label} did not return within {seconds:g} s ({what}); the process "
                                        "running it was stopped")
            ready, _, _ = select.select([self.read_fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(self.read_fd, min(n - got, 1 << 20))
            if not chunk:
                raise InvalidInputError(self._ended(what))
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _ended(self, what: str) -> str:
        """The line for a child that ended on its own: how (status or signal), what that suggests, and
        the last line it printed (a traceback's last line says what went wrong)."""
        try:
            code = self.proc.wait(timeout=5) if self.proc is not None else None
        except subprocess.TimeoutExpired:
            code = None
        echoes = getattr(self, "_echo", [])
        self.close()
        if code is None:
            how = "ended"
        elif code >= 0:
            how = f"exited with status {code}"
        else:
            ending = _ENDINGS.get(-code)
            how = f"was killed by signal {-code}" + (f" ({ending})" if ending else "")
        said = [line for echo in echoes[::-1] for line in echo.tail.decode("utf-8", "replace").splitlines()[::-1]
                if line.strip()]
        last = "".join(ch if ch.isprintable() else "?" for ch in " ".join(said[0].split()))[:200] if said else ""
        return f"{self.label}: the process running it {how} during {what}" + (f"; its last output: {last}"
                                                                               if last else "")

    def _request(self, header: dict, arrays, seconds: float, what: str, expect_bytes: int, shown=None):
        if self.proc is None:
            self._start()
        self._send(header, arrays)
        deadline = time.monotonic() + seconds
        seconds = seconds if shown is None else shown  # the limit as the user set it (a call made twice: each)
        head = self._read(12, deadline, seconds, what)
        if head[:4] != _runner.MAGIC:
            self.close()
            raise InvalidInputError(f"{self.label}: the process running it wrote something else on the audit's "
                                    f"channel during {what}")
        (size,) = struct.unpack(">Q", head[4:])
        if size > _HEADER_LIMIT:
            self.close()
            raise InvalidInputError(f"{self.label}: the process running it sent a malformed answer ({what})")
        try:
            reply = json.loads(self._read(size, deadline, seconds, what))
            sizes = [int(s) for s in reply.get("sizes", [])]
        except (ValueError, TypeError, AttributeError):
            self.close()
            raise InvalidInputError(f"{self.label}: the process running it sent a malformed answer ({what})") from None
        if sum(sizes) > expect_bytes + (1 << 20) or any(s < 0 for s in sizes):
            self.close()
            raise InvalidInputError(f"{self.label}: the process running it sent more data than asked ({what})")
        blob = self._read(sum(sizes), deadline, seconds, what)
        try:
            arrays = _runner.decode_arrays(reply, blob)
        except (ValueError, OSError, EOFError):
            self.close()
            raise InvalidInputError(f"{self.label}: the process running it sent malformed arrays ({what})") from None
        return reply, arrays

    def setup(self, x: np.ndarray, positions: np.ndarray) -> dict:
        reply, _ = self._request({"op": "setup", "target": self.target, "options": self.options}, [x, positions],
                                 self.warmup_seconds, "the first call (importing the file and finding how to call "
                                 "it)", 0)
        if not reply.get("ok"):
            raise _ChildFailure(reply)
        self.positions_kind = reply["info"].get("positions")
        return reply["info"]

    def call(self, x: np.ndarray, positions: np.ndarray, repeat: bool = False):
        # the limit is per call of the code: a convention that calls it once per position (flash-attn's
        # seqlen_offset, GPT-NeoX's offset) or once per token (llama2.c's loop) has that many calls in a probe
        calls = {"contiguous": x.shape[1], "scalar": x.shape[0] * x.shape[1]}.get(
            getattr(self, "positions_kind", None), 1)
        seconds = self.call_seconds * calls * (2 if repeat else 1)
        what = f"a probe call with x of shape {tuple(x.shape)}" + (f", {calls} calls of the code" if calls > 1 else "")
        reply, arrays = self._request({"op": "call", "repeat": repeat}, [x, positions], seconds, what,
                                      2 * x.nbytes + 4096, shown=self.call_seconds * calls)
        if not reply.get("ok"):
            raise _ChildFailure(reply)
        if len(arrays) < 1 or arrays[0].shape != x.shape or (reply.get("key") and len(arrays) < 2):
            raise InvalidInputError(f"{self.label}: the process running it sent arrays of the wrong shape")
        q = arrays[0].astype(np.float64)
        k = arrays[1].astype(np.float64) if reply.get("key") and arrays[1].shape == x.shape else None
        return q, k, bool(reply.get("stateful"))


class _ChildFailure(Exception):
    """The child answered with an error (the user's code raised, or no convention fits)."""

    def __init__(self, reply: dict):
        super().__init__(str(reply.get("error", "failed")))
        self.message = str(reply.get("error", "failed"))
        self.kind = reply.get("kind")
        self.index_error = bool(reply.get("index_error"))


ChildFailure = _ChildFailure
