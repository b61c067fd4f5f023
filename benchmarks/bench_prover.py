"""The prover against the naive ways, on the chapter's two workhorse statements.

1. ``R_i^T R_j = R_{j-i}`` for a block-diagonal ``R_m`` with symbolic per-block
   frequencies ``w_0 .. w_{d_k/2-1}``: ``prove_equal`` (blockwise: blocks equal up
   to renaming their frequency are proved once, as one generic block) against
   the dense matrix with ``simplify`` on every entry.  Building the matrices
   and proving are timed separately, and together (median of the per-run sums).
   The symbolic-``d_k`` row is the generic 2x2 block with a symbolic frequency,
   which is the proof for every width.
2. ``||p_t||^2 = d/2``: ``simplify`` of the whole concrete sum against
   ``prove_equal`` on the concrete sum (trig-polynomial) and on the sum over a
   symbolic range ``d = 2m`` (summand-first).
3. Refuting ``R_i^T R_j = R'`` where ``R'`` is ``R_{j-i}`` with one entry of one
   block negated, at ``d_k = 1024``: the wrong block is a statement of its own
   and is refuted on its own.  Also the independent checker re-checking the
   certificate of the ``R_i^T R_j = R_{j-i}`` proof.

Every timing is a median over cold runs: SymPy's cache is cleared before each,
because a warm cache would time dictionary look-ups instead of the proof.
Run alone: ``python benchmarks/bench_prover.py [--quick | --full]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import sympy as sp
from sympy import MatMul, Sum, Transpose, cos, sin
from sympy.core.cache import clear_cache

from symproof import frequencies, prove_equal, rope_matrix, rotation, sinusoidal_vector
from symproof.checker import check_certificate

i, j = sp.symbols("i j", integer=True)
t = sp.Symbol("t", real=True)
w = sp.Symbol("w", positive=True)
m = sp.Symbol("m", integer=True, positive=True)
r = sp.Symbol("r", integer=True, nonnegative=True)

#: the performance targets: (what is timed, seconds)
TARGETS = {128: ("prove", 0.050), 4096: ("build + prove", 1.0), "symbolic": ("prove", 0.1),
           "refute 1024": ("refute", 1.0)}


def timed(func, runs: int):
    """Median seconds of ``runs`` cold calls, and the last result."""
    seconds, result = [], None
    for _ in range(runs):
        clear_cache()
        start = time.perf_counter()
        result = func()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def build_relative(width: int):
    ws = sp.symbols(f"w0:{width // 2}", positive=True)
    lhs = MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws))
    return lhs, rope_matrix(j - i, ws)


def build_and_prove(width: int):
    """(build seconds, prove seconds) of one cold run: the proof needs the built matrices."""
    clear_cache()
    start = time.perf_counter()
    lhs, rhs = build_relative(width)
    built = time.perf_counter()
    verdict = prove_equal(lhs, rhs)
    proved = time.perf_counter()
    if not verdict.proved:
        raise AssertionError(f"R_i^T R_j = R_(j-i) at d_k = {width}: {verdict}")
    return built - start, proved - built, verdict


def dense_simplify(width: int) -> None:
    ws = sp.symbols(f"w0:{width // 2}", positive=True)
    dense = lambda mm: sp.diag(*[rotation(mm * x) for x in ws])  # noqa: E731
    difference = dense(i).T * dense(j) - dense(j - i)
    if any(sp.simplify(e) != 0 for e in difference):
        raise AssertionError(f"dense simplify failed to prove the identity at d_k = {width}")


def generic_block():
    verdict = prove_equal(rotation(i * w).T * rotation(j * w), rotation((j - i) * w))
    if not verdict.proved:
        raise AssertionError(str(verdict))
    return verdict


def relative_rotation_rows(widths, dense_widths, runs):
    rows = []
    for width in widths:
        n = runs if width <= 512 else max(1, min(runs, 3))
        builds, proofs = [], []
        for _ in range(n):
            b, p, verdict = build_and_prove(width)
            builds.append(b)
            proofs.append(p)
        dense = None
        if width in dense_widths:
            dense, _ = timed(lambda: dense_simplify(width), 1)
        rows.append({
            "d_k": width, "runs": n, "build": statistics.median(builds), "prove": statistics.median(proofs),
            "total": statistics.median(b + p for b, p in zip(builds, proofs)),
            "dense": dense, "blocks": verdict.details.get("generic_blocks"), "target": TARGETS.get(width),
        })
    seconds, _ = timed(generic_block, runs)
    rows.append({"d_k": "symbolic", "runs": runs, "build": None, "prove": seconds, "total": seconds, "dense": None,
                 "blocks": 1, "target": TARGETS["symbolic"]})
    return rows


def norm_rows(concrete_widths, simplify_widths, runs):
    rows = []
    for width in concrete_widths:
        norm = sum(e**2 for e in sinusoidal_vector(t, frequencies(width)))
        half = sp.Integer(width // 2)
        prove_s, verdict = timed(lambda: prove_equal(norm, half), runs)
        assert verdict.proved, str(verdict)
        simplify_s = None
        if width in simplify_widths:
            simplify_s, value = timed(lambda: sp.simplify(norm - half), 1)
            assert value == 0, f"simplify left {value}"
        rows.append({"d": width, "simplify": simplify_s, "prove": prove_s, "method": verdict.method})
    omega = 10000 ** (-2 * r / (2 * m))
    symbolic = Sum(sin(t * omega) ** 2 + cos(t * omega) ** 2, (r, 0, m - 1))
    prove_s, verdict = timed(lambda: prove_equal(symbolic, m), runs)
    assert verdict.proved, str(verdict)
    rows.append({"d": "2m (symbolic)", "simplify": None, "prove": prove_s, "method": verdict.method})
    return rows


def wrong_block_row(width: int, runs: int):
    """Seconds to refute ``R_i^T R_j = R'`` with one entry of block ``width // 4`` negated."""
    ws = sp.symbols(f"w0:{width // 2}", positive=True)
    lhs = MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws))
    blocks = [rotation((j - i) * x) for x in ws]
    wrong = sp.Matrix(blocks[width // 4])
    wrong[0, 1] = -wrong[0, 1]
    blocks[width // 4] = sp.ImmutableMatrix(wrong)
    rhs = sp.BlockDiagMatrix(*blocks)
    seconds = []
    for _ in range(runs):
        clear_cache()
        start = time.perf_counter()
        verdict = prove_equal(lhs, rhs)
        seconds.append(time.perf_counter() - start)
        if not verdict.refuted:
            raise AssertionError(f"the wrong block was not refuted: {verdict}")
    return statistics.median(seconds), verdict


def check_seconds(width: int, runs: int):
    """Seconds for the independent checker to re-check the ``R_i^T R_j = R_{j-i}`` certificate."""
    _, _, verdict = build_and_prove(width)
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        check_certificate(verdict.certificate)
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def _ms(seconds) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def table(header, rows) -> str:
    widths = [max(len(str(h)), *(len(str(row[k])) for row in rows)) for k, h in enumerate(header)]
    line = lambda cells: "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(row) for row in rows])


def format_relative(rows) -> str:
    cells = []
    for row in rows:
        target = row["target"]
        total = row["total"]
        if target is None:
            goal, verdict = "-", "-"
        else:
            timed_part, seconds = target
            verdict = "ok" if (total if timed_part == "build + prove" else row["prove"]) <= seconds else "OVER"
            goal = f"{timed_part} <= {_ms(seconds)}"
        cells.append([row["d_k"], row["runs"], _ms(row["build"]), _ms(row["prove"]), _ms(total), goal, verdict,
                      row["blocks"], _ms(row["dense"])])
    header = ["d_k", "runs", "build", "prove", "build + prove", "target", "", "generic blocks",
              "dense simplify (1 run)"]
    return table(header, cells)


def format_norm(rows) -> str:
    cells = [[row["d"], _ms(row["simplify"]), _ms(row["prove"]), row["method"]] for row in rows]
    return table(["d", "simplify whole sum (1 run)", "prove_equal", "method"], cells)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="no 4096, dense simplify only at d_k <= 8")
    size.add_argument("--full", action="store_true", help="also simplify the d = 64 norm (~25 s or more)")
    parser.add_argument("--runs", type=int, default=5, help="cold runs per median (default 5)")
    args = parser.parse_args(argv)

    widths = [2, 8, 32, 128, 512] + ([] if args.quick else [4096])
    dense_widths = {2, 8} if args.quick else {2, 8, 32}
    print("R_i^T R_j = R_(j-i), block-diagonal, symbolic per-block frequencies "
          f"(median of cold runs; dense simplify is one run, only up to d_k = {max(dense_widths)}: it is slow)")
    print(format_relative(relative_rotation_rows(widths, dense_widths, args.runs)))
    print()
    concrete = [16, 64, 128]
    simplify_widths = {16, 64} if args.full else {16}
    print("||p_t||^2 = d/2 (simplify of the whole sum is one run"
          + ("" if args.full else "; d = 64 with --full") + ")")
    print(format_norm(norm_rows(concrete, simplify_widths, args.runs)))
    print()
    refute, verdict = wrong_block_row(1024, max(1, min(args.runs, 3)))
    _, target = TARGETS["refute 1024"]
    print(f"refute R_i^T R_j = R' (one entry of one block negated), d_k = 1024: {_ms(refute)} "
          f"(target {_ms(target)}: {'ok' if refute <= target else 'OVER'}); {verdict.reason}")
    for width in [128] + ([] if args.quick else [4096]):
        print(f"checker re-checks the R_i^T R_j = R_(j-i) certificate, d_k = {width}: "
              f"{_ms(check_seconds(width, max(1, min(args.runs, 3))))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
