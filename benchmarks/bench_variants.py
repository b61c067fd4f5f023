"""``symproof check`` on every shipped and test variant: wall time per file, and verdicts under load.

Two questions, one pass each:

- **How long does a check take?**  Each file is checked ``--runs`` times (a fresh
  ``symproof check FILE --json`` process each, interpreter start included); the
  median wall time per file and the median over files are printed.
- **Do the verdicts depend on the machine's load?**  With ``--load N``, every file
  is checked once more while ``N`` busy processes spin on the cores, and its
  verdicts are compared with the idle run's: property, verdict, method, witness
  and reason must be the same bytes (only the ``seconds`` fields may differ).
  Any difference is printed and the script exits 1.

Usage::

    python benchmarks/bench_variants.py [--runs 3] [--load 4] [FILE ...]

Without files: ``derivations/variants/*.toml`` and ``tests/variants/published/*.toml``.
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: keys whose values are timings: the only ones allowed to differ between runs
TIMING_KEYS = frozenset({"seconds"})


def default_files() -> list[Path]:
    folders = (ROOT / "derivations" / "variants", ROOT / "derivations" / "layers", ROOT / "tests" / "variants" / "published")
    return [path for folder in folders for path in sorted(folder.glob("*.toml"))]


def check(path: Path) -> tuple[float, int, object]:
    """One ``symproof check PATH --json`` process: (wall seconds, exit code, its JSON without timings)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "symproof", "check", str(path), "--json"],
                          capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    try:
        answer = without_timings(json.loads(done.stdout))
    except json.JSONDecodeError:
        answer = {"refused": done.stderr.strip()}  # a refusal is an answer too, compared as text
    return wall, done.returncode, answer


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def _spin(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--runs", type=int, default=3, help="idle runs per file (default 3)")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="also check every file with N busy processes running and compare the verdicts")
    args = parser.parse_args(argv)
    files = args.files or default_files()
    medians, idle = {}, {}
    print(f"{'file':34} {'median s':>9}  exit")
    for path in files:
        runs = [check(path) for _ in range(max(1, args.runs))]
        medians[path] = statistics.median(wall for wall, _, _ in runs)
        idle[path] = runs[0][1:]
        changed = [i for i, run in enumerate(runs) if run[1:] != idle[path]]
        note = f"  (run {changed[0] + 1} answered differently)" if changed else ""
        print(f"{path.name:34} {medians[path]:9.2f}  {runs[0][1]}{note}", flush=True)
    print(f"median over {len(files)} files: {statistics.median(medians.values()):.2f} s "
          f"(fastest {min(medians.values()):.2f} s, slowest {max(medians.values()):.2f} s)")
    if not args.load:
        return 0
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(args.load)]
    for spinner in spinners:
        spinner.start()
    try:
        loaded = {path: check(path) for path in files}
    finally:
        stop.set()
        for spinner in spinners:
            spinner.join()
    differ = [path for path in files if loaded[path][1:] != idle[path]]
    slower = statistics.median(loaded[p][0] / medians[p] for p in files)
    print(f"with {args.load} busy processes: {len(files) - len(differ)} of {len(files)} files gave identical "
          f"verdicts (median {slower:.1f}x slower)")
    for path in differ:
        print(f"  {path.name}: idle {json.dumps(idle[path])[:300]}\n  {'':{len(path.name)}}  loaded "
              f"{json.dumps(loaded[path][1:])[:300]}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
