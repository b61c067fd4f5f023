"""Wall time of ``symproof verify`` on the whole chapter, interpreter start included.

Runs the installed command under ``/usr/bin/time -v`` (falls back to timing
the subprocess when GNU time is missing) and reports the median wall time,
the peak memory, and the slowest claims of the last run (from ``--json``).
The target is 5 s on a 2-core machine.  Run alone:
``python benchmarks/bench_chapter.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

TARGET_SECONDS = 5.0
GNU_TIME = "/usr/bin/time"


def _command():
    found = shutil.which("symproof")
    return [found] if found else [sys.executable, "-m", "symproof"]


def _wall_seconds(text: str):
    match = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def _peak_megabytes(text: str):
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return int(match.group(1)) / 1024 if match else None


def run_once():
    """(wall seconds, peak MB or None, exit code, parsed JSON records)."""
    command = _command() + ["verify", "--json"]
    gnu_time = os.path.exists(GNU_TIME)
    if gnu_time:
        command = [GNU_TIME, "-v"] + command
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - start
    wall = _wall_seconds(done.stderr) if gnu_time else None
    records = json.loads(done.stdout) if done.stdout.strip().startswith("[") else []
    return (wall if wall is not None else elapsed), _peak_megabytes(done.stderr), done.returncode, records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs for the median (default 3)")
    args = parser.parse_args(argv)
    walls, peaks, code, records = [], [], 0, []
    for _ in range(args.runs):
        wall, peak, code, records = run_once()
        walls.append(wall)
        if peak is not None:
            peaks.append(peak)
    counts = {v: sum(r["verdict"] == v for r in records) for v in ("proved", "refuted", "unknown")}
    median = statistics.median(walls)
    print(f"symproof verify (whole chapter, {len(records)} claims: {counts['proved']} proved, "
          f"{counts['refuted']} refuted, {counts['unknown']} unknown; exit code {code})")
    print(f"  wall time, median of {len(walls)}: {median:.2f} s (runs: "
          + ", ".join(f"{w:.2f}" for w in walls) + f"); target {TARGET_SECONDS:.0f} s: "
          + ("ok" if median <= TARGET_SECONDS else "OVER"))
    if peaks:
        print(f"  peak memory: {max(peaks):.0f} MB")
    slowest = sorted(records, key=lambda r: r["seconds"], reverse=True)[:5]
    if slowest:
        in_claims = sum(r["seconds"] for r in records)
        print(f"  time inside claims: {in_claims:.2f} s; slowest: "
              + ", ".join(f"{r['id']} {r['seconds'] * 1e3:.0f} ms" for r in slowest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
