"""RoPE kernel throughput against the memory floor (``np.copyto`` on the same array).

Run alone: ``python benchmarks/bench_kernels.py [--quick]``.  Every figure is a
median over repeated runs of (kernel time / copy time), with the copy timed
right before the kernel in the same iteration, so load from other processes
shifts both.  Nothing here asserts; the numbers are for the report.
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from symproof.kernels import export_kernel, rope_kernel, rope_spec
from symproof.kernels._reference import reference_frequencies


def ratio(kernel, x, out, repeats):
    kernel()
    rates, copies = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.copyto(out, x)
        t1 = time.perf_counter()
        kernel()
        t2 = time.perf_counter()
        rates.append((t2 - t1) / (t1 - t0))
        copies.append(t1 - t0)
    return float(np.median(rates)), float(np.median(copies)) * 1e3


def naive_rotate_half(x, positions, freqs):
    angles = positions[..., None].astype(np.float32) * freqs.astype(np.float32)
    cos, sin = np.cos(angles), np.sin(angles)
    half = x.shape[-1] // 2
    cos, sin = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
    return x * cos + np.concatenate([-x[..., half:], x[..., :half]], -1) * sin


def complex_table_reference(x, table, out):
    """Hand-written best: complex view of adjacent pairs times a precomputed complex table."""
    np.multiply(x.view(np.complex64), table, out=out.view(np.complex64))
    return out


def compile_c(tmp):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None
    c_path, _ = export_kernel("rope", "c", tmp, verify=False, head_dim=128, dtype="float32")
    so = Path(tmp) / "rope.so"
    subprocess.run([cc, "-std=c99", "-O3", "-march=native", "-shared", "-fPIC", c_path, "-o", str(so), "-lm"],
                   check=True)
    lib = ctypes.CDLL(str(so))
    p = ctypes.c_void_p
    lib.symproof_rope_apply.argtypes = [p, p, p, ctypes.c_size_t]
    lib.symproof_rope_apply_with_table.argtypes = [p, p, p, ctypes.c_size_t, p, ctypes.c_int64, ctypes.c_size_t]
    lib.symproof_rope_table.argtypes = [ctypes.c_int64, ctypes.c_size_t, p]
    return lib


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a smaller tensor")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 15
    B, T, H, D = (2, 1024, 8, 128) if args.quick else (4, 2048, 8, 128)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, H, D)).astype(np.float32)
    out = np.empty_like(x)
    shared = np.arange(T)[None, :, None]  # (1, T, 1): one position per column, shared over batch and heads
    per_sample = np.maximum(np.arange(T)[None, :] - rng.integers(0, 64, (B, 1)), 0)[:, :, None]  # left padding
    print(f"x: float32 {x.shape} ({x.size / 1e6:.1f}M elements), layout (B, T, H, d)")
    rows = []

    def record(name, kernel):
        r, copy_ms = ratio(kernel, x, out, repeats)
        rows.append((name, r, copy_ms))
        print(f"  {name:<58s} {r:5.2f} x copy   (copy {copy_ms:.2f} ms)", flush=True)
        return r

    freqs = np.array(reference_frequencies(D), dtype=np.float64)
    table = np.exp(1j * np.arange(T)[:, None] * freqs).astype(np.complex64)[None, :, None, :]
    print("hand-written references")
    best = record("complex view x precomputed table (out=)", lambda: complex_table_reference(x, table, out))
    record("complex view x precomputed table (new output)",
           lambda: complex_table_reference(x, table, np.empty_like(x)))
    record("naive rotate-half with temporaries", lambda: naive_rotate_half(x, np.broadcast_to(shared, (B, T, 1)), freqs))
    print("generated numpy kernel")
    for pairing in ("adjacent", "half"):
        kernel = rope_kernel(rope_spec(head_dim=D, pairing=pairing))
        for label, ids in (("shared positions", shared), ("per-sample positions", per_sample)):
            r_out = record(f"{pairing}, {label}, out=", lambda: kernel.apply(x, ids, out=out))
            record(f"{pairing}, {label}, new output", lambda: kernel.apply(x, ids))
            if pairing == "adjacent":
                print(f"    throughput vs best hand-written (out=): {best / r_out:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        lib = compile_c(tmp)
        if lib is not None:
            print("exported C kernel (gcc -O3 -march=native, one thread)")
            ids = np.ascontiguousarray(np.broadcast_to(per_sample, x.shape[:-1]), dtype=np.int64)
            ctab = np.empty((T, D // 2, 2), np.float32)
            lib.symproof_rope_table(0, T, ctab.ctypes.data)
            record("fused pass with table", lambda: lib.symproof_rope_apply_with_table(
                x.ctypes.data, out.ctypes.data, ids.ctypes.data, ids.size, ctab.ctypes.data, 0, T))
            record("building its own table", lambda: lib.symproof_rope_apply(
                x.ctypes.data, out.ctypes.data, ids.ctypes.data, ids.size))
    print("scaling of the generated adjacent kernel (ms per million rotated elements, out=)")
    kernel = rope_kernel(rope_spec(head_dim=D))
    for tokens in (256, 1024, 4096, 16384):
        y = rng.standard_normal((tokens, H, D)).astype(np.float32)
        o = np.empty_like(y)
        ids = np.arange(tokens)[:, None]
        kernel.apply(y, ids, out=o)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            kernel.apply(y, ids, out=o)
            times.append(time.perf_counter() - t0)
        print(f"  B*T = {tokens:6d}: {np.median(times) * 1e3 / (y.size / 1e6):.3f} ms / M elements")
    return 0


if __name__ == "__main__":
    sys.exit(main())
