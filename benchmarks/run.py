"""Every benchmark, one command: ``python benchmarks/run.py [--quick]``.

Runs, in order, the prover benchmark (``bench_prover.py``), the whole-chapter
``symproof verify`` wall time (``bench_chapter.py``), ``symproof check`` on every
shipped and test variant (``bench_variants.py``) and, when present, the
kernel throughput benchmark (``bench_kernels.py``) and the Triton kernel on a GPU
(``bench_triton_gpu.py``, skipped without CUDA), each in its own
interpreter so that one's SymPy cache or imports do not flatter the next.
``--quick`` is passed on to those that accept it; ``--only NAME`` picks one.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: name -> (script, accepts --quick)
BENCHMARKS = {
    "prover": ("bench_prover.py", True),
    "chapter": ("bench_chapter.py", False),
    "variants": ("bench_variants.py", False),
    "kernels": ("bench_kernels.py", True),
    "kernels-gpu": ("bench_triton_gpu.py", True),  # says "skipped" without a CUDA device
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer slow baselines")
    parser.add_argument("--only", choices=sorted(BENCHMARKS), action="append", help="run only these")
    args = parser.parse_args(argv)
    failed = []
    for name, (script, quick) in BENCHMARKS.items():
        if args.only and name not in args.only:
            continue
        path = HERE / script
        if not path.exists():
            print(f"== {name}: {script} not found, skipped\n")
            continue
        command = [sys.executable, str(path)] + (["--quick"] if quick and args.quick else [])
        print(f"== {name} ({script})", flush=True)
        start = time.perf_counter()
        code = subprocess.call(command)
        print(f"   [{time.perf_counter() - start:.1f} s]\n", flush=True)
        if code:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
