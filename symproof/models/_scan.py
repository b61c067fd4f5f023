"""``symproof check A.json B.json DIR ...``: a zoo scan, one line per model config and a summary.

Several files, or a folder, make ``check`` a scan: a folder is a checkpoint
folder (it holds ``config.json``) or a cache of them (every ``config.json``
below it, HF's ``models--org--name/snapshots/<rev>/config.json`` included).
Each config is read and every rotary regime checked exactly as
``symproof check CONFIG.json`` does; the configs run in a process pool
(``--jobs N``) whose workers are forked after the imports, so SymPy and the
checker are imported once.  A refused config is a line saying why (its exit
code 2), never the end of the scan; the exit code of the scan is the largest
of its configs'.

Nothing is dropped and nothing hangs:

- the walk is iterative (a tree 1,100 folders deep is walked like any other),
  and a folder it cannot read (permission denied, a path longer than the
  system allows) is a refused line naming that folder, never a silent skip;
- a worker that dies (killed, as by the out-of-memory killer) makes the config
  it was checking a refused line; the configs other workers were checking
  then run again in a fresh pool;
- the workers ignore Ctrl-C, which reaches the whole process group: the scan
  itself ends them and prints its one line (exit 130), with no worker's traceback.
"""

from __future__ import annotations

import errno
import os
import signal
import time

from .._ground._errors import InvalidInputError, SymproofError
from .._ground._text import one_line

__all__ = ["scan_paths", "find_configs", "scan", "MAX_CONFIGS"]

#: the most configs one scan reads (a cache walk that finds more is refused, not truncated)
MAX_CONFIGS = 100000
#: directories a cache walk does not enter
_SKIP = {".git", "__pycache__", "blobs", ".locks"}
#: why a folder could not be read, in words
_UNREADABLE = {errno.EACCES: "permission denied", errno.EPERM: "permission denied",
               errno.ENAMETOOLONG: "its path is longer than the system allows",
               errno.ELOOP: "too many levels of symbolic links", errno.ENOENT: "it vanished during the scan"}


class Unread:
    """A folder below a scanned one whose configs could not be looked for, and why."""

    def __init__(self, path: str, why: str):
        self.path, self.why = path, why


def _why(err: OSError) -> str:
    return _UNREADABLE.get(err.errno, (err.strerror or type(err).__name__).lower())


def _walk(top: str) -> list:
    """``config.json`` paths below ``top``, and an :class:`Unread` for each folder that could not be
    read, in the order of a top-down walk with sorted names; symlinked folders are not entered."""
    found, stack = [], [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            subfolders = []
            for entry in entries:
                try:
                    is_folder = entry.is_dir()  # a symlink to a folder is one, but it is not entered
                except OSError:
                    is_folder = False
                if is_folder:
                    if entry.name not in _SKIP and not entry.is_symlink():
                        subfolders.append(entry.path)
                elif entry.name == "config.json":
                    found.append(entry.path)
        except OSError as err:
            found.append(Unread(folder, f"cannot read the folder ({_why(err)}); the configs below it were not "
                                        "checked"))
            continue
        if sum(isinstance(item, str) for item in found) > MAX_CONFIGS:
            raise InvalidInputError(f"{top}: more than {MAX_CONFIGS} config.json files below it; "
                                    "expected a checkpoint folder or a cache of them")
        stack.extend(reversed(subfolders))
    return found


def find_configs(paths) -> list:
    """The config files ``paths`` name, in order: files as given, folders searched for ``config.json``
    (a folder with none below it: its own ``*.json`` files); a folder that could not be read is an
    :class:`Unread` in its place."""
    found = []
    for path in paths:
        name = os.fspath(path)
        if os.path.isdir(name):
            direct = os.path.join(name, "config.json")
            if os.path.isfile(direct):
                found.append(direct)
                continue
            below = _walk(name)
            found += below
            if not below:  # a folder of configs under their own names (derivations/configs)
                found += sorted(os.path.join(name, f) for f in os.listdir(name)
                                if f.endswith(".json") and os.path.isfile(os.path.join(name, f)))
        else:
            found.append(name)
    if not found:
        raise InvalidInputError(", ".join(os.fspath(p) for p in paths)[:200] + ": is a folder with no model "
                                "config in it (no config.json below it, no *.json file in it); expected a "
                                "checkpoint folder, a cache of them, or config files")
    return found


def scan_paths(paths) -> list:
    """The config files ``paths`` name (:func:`find_configs` without the folders it could not read)."""
    return [item for item in find_configs(paths) if isinstance(item, str)]


#: the exit code of a config the scan failed on through an error of symproof's own
INTERNAL_ERROR = 4


def _one(job):
    """``(path, exit code, line, seconds)`` of one config (runs in a worker)."""
    path, limits = job
    from .._ground._budget import TimeLimitExceeded
    from ._check import check_model, model_exit_code
    from ._config import load_model

    start = time.perf_counter()
    try:
        model = load_model(path)
        checked = check_model(model, **(limits or {}))
    except TimeLimitExceeded as stop:
        return path, 3, f"{stop} (--time-limit SECONDS allows more)", time.perf_counter() - start
    except SymproofError as err:
        return path, 2, f"refused: {err}", time.perf_counter() - start
    except MemoryError:
        return path, 2, "refused: checking it needs more memory than is available", time.perf_counter() - start
    except RecursionError:
        return path, 2, "refused: it is nested too deeply to check", time.perf_counter() - start
    except Exception as err:  # noqa: BLE001 -- a bug of ours on one config must not end the scan of the others
        what = f"{type(err).__name__}: {' '.join(str(err).split())[:200]}".rstrip(": ")
        return (path, INTERNAL_ERROR, f"failed: symproof raised {what} on this config (a bug in symproof: please "
                "report it with the config)", time.perf_counter() - start)
    parts = []
    for regime, results in checked:
        if regime.variant is None:
            parts.append(f"{regime.name}: NoPE")
            continue
        lost = [r.claim.name for r in results if r.status == "refuted"]
        open_ = [r.claim.name for r in results if r.status == "unknown"]
        text = f"{regime.name}: loses {', '.join(lost) or '-'}"
        if open_:
            text += f"; unknown {', '.join(open_)}"
        parts.append(text)
    code = model_exit_code(checked)
    line = f"{model.model_type}, {len(model.regimes)} regime(s): " + "; ".join(parts)
    return path, code, line, time.perf_counter() - start


def _worker_started(started) -> None:
    """A worker's first act: Ctrl-C is the scan's to handle (it ends the workers), SIGTERM ends it."""
    global _STARTED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _STARTED = started


_STARTED = None  # in a worker: which worker process took which job (the pids, by job index)


def _one_in_worker(index, job):
    _STARTED[index] = os.getpid()
    return _one(job)


def _death(exitcode) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        cause = " (killed, as by the out-of-memory killer?)" if -exitcode == signal.SIGKILL else ""
        return f"ended by {name}{cause}"
    return f"exited with code {exitcode}" if exitcode is not None else "ended"


def _in_pool(work, jobs: int) -> list:
    """``_one`` of every job, ``jobs`` at a time in forked workers, in order; a job whose worker died is a
    refused line, the jobs it took down with it (the pool is ended when one worker dies) run again."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    # fork: the workers inherit the imported checker instead of importing it again.  Imported here, before
    # the first fork: the command imports it lazily, and a worker importing it on its own would spend its
    # first second outside any config (a kill there would not be that config's refused line)
    from . import _check, _config  # noqa: F401

    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)
    done = [None] * len(work)
    pending = list(range(len(work)))
    while pending:
        started = context.Array("i", len(work), lock=False)
        pool = ProcessPoolExecutor(min(jobs, len(pending)), mp_context=context, initializer=_worker_started,
                                   initargs=(started,))
        broken = False
        workers = {}
        try:
            futures = {pool.submit(_one_in_worker, k, work[k]): k for k in pending}
            workers = dict(getattr(pool, "_processes", None) or {})  # forked at the first submit
            for future in as_completed(futures):
                try:
                    done[futures[future]] = future.result()
                except BrokenProcessPool:
                    broken = True
        except BaseException:  # Ctrl-C (or SIGTERM): end the workers, not wait for them
            workers = {**workers, **dict(getattr(pool, "_processes", None) or {})}
            for process in workers.values():
                process.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if not broken:
            break
        # the pool ends its other workers with SIGTERM once one has died: the others are the dead
        exits = {pid: process.exitcode for pid, process in workers.items()}
        dead = {pid for pid, code in exits.items() if code not in (0, -signal.SIGTERM)}
        unfinished = [k for k in pending if done[k] is None]
        blamed = [k for k in unfinished if started[k] in dead]
        if not blamed and len(unfinished) == len(pending):  # no progress at all: never the same pool again
            blamed = [k for k in unfinished if started[k]] or unfinished[:1]
        for k in blamed:
            path = work[k][0]
            done[k] = (path, 2, f"refused: the worker process checking it {_death(exits.get(started[k]))}; "
                                "nothing was decided", 0.0)
        pending = [k for k in unfinished if done[k] is None]
    return done


def scan(paths, *, jobs: int = 1, limits: dict | None = None, as_json: bool = False) -> int:
    """Check every config ``paths`` name; print one line each and a summary; return the largest exit code."""
    import json

    if not 1 <= jobs <= 256:
        raise InvalidInputError(f"--jobs: expected 1 to 256 worker processes, got {jobs}")
    found = find_configs(paths)
    files = [item for item in found if isinstance(item, str)]
    start = time.perf_counter()
    work = [(path, limits) for path in files]
    if jobs == 1 or len(files) <= 1:
        checked = [_one(job) for job in work]
    else:
        checked = _in_pool(work, jobs)
    results = iter(checked)
    done = [next(results) if isinstance(item, str) else (item.path, 2, f"refused: {item.why}", 0.0)
            for item in found]
    seconds = time.perf_counter() - start
    counts = {0: 0, 1: 0, 2: 0, 3: 0, INTERNAL_ERROR: 0}
    for _, code, _, _ in done:
        counts[code] += 1
    if as_json:
        print(json.dumps({"configs": [{"path": p, "exit_code": c, "summary": line, "seconds": round(s, 4)}
                                      for p, c, line, s in done],
                          "checked": counts[0], "unknown": counts[1], "refused": counts[2],
                          "stopped": counts[3], "failed": counts[INTERNAL_ERROR],
                          "seconds": round(seconds, 4)}, indent=2))
    else:
        for path, code, line, _ in done:
            print(one_line(f"{path}: [{code}] {line}"))
        print(f"{len(done)} config(s): {counts[0]} checked, {counts[1]} with a property unknown or a kernel "
              f"mismatch, {counts[2]} refused" + (f", {counts[3]} stopped by --time-limit" if counts[3] else "")
              + (f", {counts[INTERNAL_ERROR]} failed by an internal error" if counts[INTERNAL_ERROR] else "")
              + f" ({seconds:.2f} s, {seconds / len(done):.3f} s per config, "
              f"{jobs} job(s))")
    return max(code for _, code, _, _ in done)
