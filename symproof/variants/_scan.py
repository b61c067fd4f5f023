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
"""

from __future__ import annotations

import os
import time

from .._errors import InvalidInputError, SymproofError
from .._text import one_line

__all__ = ["scan_paths", "scan", "MAX_CONFIGS"]

#: the most configs one scan reads (a cache walk that finds more is refused, not truncated)
MAX_CONFIGS = 100000
#: directories a cache walk does not enter
_SKIP = {".git", "__pycache__", "blobs", ".locks"}


def scan_paths(paths) -> list:
    """The config files ``paths`` name: files as given, folders searched for ``config.json`` (a folder with
    none below it: its own ``*.json`` files)."""
    found = []
    for path in paths:
        name = os.fspath(path)
        if os.path.isdir(name):
            direct = os.path.join(name, "config.json")
            if os.path.isfile(direct):
                found.append(direct)
                continue
            before = len(found)
            for root, dirs, files in os.walk(name, followlinks=False):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP)
                if "config.json" in files:
                    found.append(os.path.join(root, "config.json"))
                if len(found) > MAX_CONFIGS:
                    raise InvalidInputError(f"{name}: more than {MAX_CONFIGS} config.json files below it; "
                                            "expected a checkpoint folder or a cache of them")
            if len(found) == before:  # a folder of configs under their own names (derivations/configs)
                found += sorted(os.path.join(name, f) for f in os.listdir(name)
                                if f.endswith(".json") and os.path.isfile(os.path.join(name, f)))
        else:
            found.append(name)
    if not found:
        raise InvalidInputError(", ".join(os.fspath(p) for p in paths)[:200] + ": is a folder with no model "
                                "config in it (no config.json below it, no *.json file in it); expected a "
                                "checkpoint folder, a cache of them, or config files")
    return found


def _one(job):
    """``(path, exit code, line, seconds)`` of one config (runs in a worker)."""
    path, budget = job
    from ._model_check import check_model, model_exit_code
    from ._model_config import load_model

    start = time.perf_counter()
    try:
        model = load_model(path)
        checked = check_model(model, budget=budget)
    except SymproofError as err:
        return path, 2, f"refused: {err}", time.perf_counter() - start
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


def scan(paths, *, jobs: int = 1, budget=None, as_json: bool = False) -> int:
    """Check every config ``paths`` name; print one line each and a summary; return the largest exit code."""
    import json

    if not 1 <= jobs <= 256:
        raise InvalidInputError(f"--jobs: expected 1 to 256 worker processes, got {jobs}")
    files = scan_paths(paths)
    start = time.perf_counter()
    work = [(path, budget) for path in files]
    if jobs == 1 or len(files) == 1:
        done = [_one(job) for job in work]
    else:
        import multiprocessing

        # fork: the workers inherit the imported checker instead of importing it again
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
        with multiprocessing.get_context(method).Pool(min(jobs, len(files))) as pool:
            done = pool.map(_one, work, chunksize=1)
    seconds = time.perf_counter() - start
    counts = {0: 0, 1: 0, 2: 0}
    for _, code, _, _ in done:
        counts[code] += 1
    if as_json:
        print(json.dumps({"configs": [{"path": p, "exit_code": c, "summary": line, "seconds": round(s, 4)}
                                      for p, c, line, s in done],
                          "checked": counts[0], "unknown": counts[1], "refused": counts[2],
                          "seconds": round(seconds, 4)}, indent=2))
    else:
        for path, code, line, _ in done:
            print(one_line(f"{path}: [{code}] {line}"))
        print(f"{len(done)} config(s): {counts[0]} checked, {counts[1]} with a property unknown or a kernel "
              f"mismatch, {counts[2]} refused ({seconds:.2f} s, {seconds / len(done):.3f} s per config, "
              f"{jobs} job(s))")
    return max(code for _, code, _, _ in done)
