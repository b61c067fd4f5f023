"""RoPE kernels against the memory floor and against what users run today, in one process.

Run alone: ``python benchmarks/bench_kernels.py [--quick] [--only torch|decode|numpy|c] [--threads N] [--clock wall|cpu]``.

- torch: the exported module (its C kernel on contiguous CPU tensors, and with it off: the eager
  torch path other devices run) beside HF transformers' own RoPE (``apply_rotary_pos_emb`` and
  ``LlamaRotaryEmbedding`` from ``transformers.models.llama.modeling_llama``; install with
  ``pip install -e .[bench]``) and ``x.clone()``, float32 ``(B, H, T, d) = (4, 8, 2048, 128)``;
  then a decode step (``T = 1``, ``B = 8``, ``H = 32``, position ids at a KV-cache offset of 4000,
  ids ``(B, 1, 1)`` and ``(B, H, 1)``, the table built in the step or given), where per-call
  overhead dominates.
- numpy: the generated kernel (the text ``rope_apply`` runs) with ``out=`` against ``np.copyto``;
  half pairing at its default ``threads`` (the kernel's ``THREADS``), at ``threads=1``, and at
  ``threads=1`` with its C kernel off (the NumPy-only path).
- C: the exported kernel's fused pass against a plain copy loop compiled with the same flags.

Every case of a section runs once per iteration, interleaved, so load from other processes
shifts them together; a ratio is the median over iterations of (case time / baseline time in
the same iteration).  Nothing here asserts; the numbers are for the README.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from symproof.kernels import export_kernel, rope_kernel, rope_spec
from symproof.kernels._reference import reference_frequencies

C_FLAGS = ("-std=c99", "-O3", "-march=native", "-shared", "-fPIC")
COPY_LOOP_C = """
#include <stddef.h>
void copy_loop(const float *x, float *out, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        out[i] = x[i];
    }
}
"""


#: what a case's time is: wall time, or the CPU time of the process (every thread's; on a loaded
#: machine it leaves out the time other processes hold the cores, so one-thread ratios settle)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = CLOCKS["wall"]


def interleaved(cases: dict, repeats: int) -> dict:
    """``{name: [seconds per iteration]}``: every case once per iteration, in order, after one warm-up."""
    for run in cases.values():
        run()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            start = CLOCK()
            run()
            times[name].append(CLOCK() - start)
    return times


def ratio(times: dict, name: str, base: str) -> float:
    return statistics.median(a / b for a, b in zip(times[name], times[base]))


def report(title: str, times: dict, base: str, extra=None, unit="ms") -> None:
    scale = 1e3 if unit == "ms" else 1e6
    print(title)
    for name in times:
        line = f"  {name:<58s} {statistics.median(times[name]) * scale:9.2f} {unit}   {ratio(times, name, base):5.2f} x {base}"
        if extra and name in extra:
            line += "   " + extra[name](times)
        print(line, flush=True)


def pure(function, *args, **kwargs):
    """``function`` with the exported module's C path off: the eager torch path other devices run."""
    module = sys.modules[function.__module__]
    module.NATIVE = False
    try:
        return function(*args, **kwargs)
    finally:
        module.NATIVE = True


def load_exported(target_dir: str, **options):
    (path,) = export_kernel("rope", "torch", target_dir, verify=False, name=f"rope_{options['pairing']}", **options)
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- torch

def torch_section(repeats: int, quick: bool, threads=None) -> None:
    try:
        import torch
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb, rotate_half
    except ImportError as err:
        print(f"torch section skipped: {err} (pip install -e .[bench])\n")
        return
    if threads:
        torch.set_num_threads(threads)
    B, H, T, D = (2, 8, 1024, 128) if quick else (4, 8, 2048, 128)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; x: float32 (B, H, T, d) = {(B, H, T, D)}")
    with tempfile.TemporaryDirectory() as tmp:
        half = load_exported(tmp, head_dim=D, pairing="half")
        adjacent = load_exported(tmp, head_dim=D, pairing="adjacent")
    torch.manual_seed(0)
    x = torch.randn(B, H, T, D)
    k = torch.randn(B, H, T, D)
    out = torch.empty_like(x)
    scratch = x.clone()
    positions = torch.arange(T)[None, :].expand(B, T)  # HF's position_ids (B, T)
    rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=H * D, num_attention_heads=H, head_dim=D,
                                              max_position_embeddings=max(T, 8192)))
    cos, sin = rotary(x, positions)
    cos4, sin4 = cos.unsqueeze(1), sin.unsqueeze(1)
    ids = positions[:, None, :]  # (B, 1, T): broadcast over heads
    table_half = half.table(ids, x.dtype, x.device)
    table_adjacent = adjacent.table(ids, x.dtype, x.device)
    cases = {
        "x.clone()": x.clone,
        "out.copy_(x)": lambda: out.copy_(x),
        "HF x*cos + rotate_half(x)*sin (cos, sin given)": lambda: x * cos4 + rotate_half(x) * sin4,
        "HF LlamaRotaryEmbedding + the formula": lambda: (lambda c, s: x * c.unsqueeze(1) + rotate_half(x) * s.unsqueeze(1))(
            *rotary(x, positions)),
        "ours half: apply(x, table=t)": lambda: half.apply(x, table=table_half),
        "ours half: apply(x, positions) (table built)": lambda: half.apply(x, ids),
        "ours half: apply(x, table=t, out=out)": lambda: half.apply(x, table=table_half, out=out),
        "ours half: apply_(x, table=t) (in place)": lambda: half.apply_(scratch, table=table_half),
        "ours half, pure torch: apply(x, table=t, out=out)": lambda: pure(half.apply, x, table=table_half, out=out),
        "ours half, pure torch: apply_(x, table=t)": lambda: pure(half.apply_, scratch, table=table_half),
        "ours adjacent: apply(x, table=t)": lambda: adjacent.apply(x, table=table_adjacent),
        "ours adjacent: apply(x, table=t, out=out)": lambda: adjacent.apply(x, table=table_adjacent, out=out),
    }
    hf = "HF x*cos + rotate_half(x)*sin (cos, sin given)"
    faster = {name: (lambda n: lambda t: f"HF (cos, sin given) / ours = {ratio(t, hf, n):4.2f}")(name)
              for name in cases if name.startswith("ours")}
    times = interleaved(cases, repeats)
    floor = {name: ratio(times, name, "out.copy_(x)") for name in times if "out=" in name or "apply_" in name}
    report(f"prefill, half pairing unless said ({half.native_status().split(':')[0]} on contiguous CPU tensors); "
           "new outputs against x.clone(); out= and in place against out.copy_(x):\n    "
           + "\n    ".join(f"{name}: {value:.2f}x out.copy_(x)" for name, value in floor.items()),
           times, "x.clone()", faster)

    print()


def decode_section(repeats: int, quick: bool, threads=None) -> None:
    """One new token per sequence, position ids at the KV-cache offset, q and k rotated."""
    try:
        import torch
        from transformers import LlamaConfig
        from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    except ImportError as err:
        print(f"decode section skipped: {err} (pip install -e .[bench])\n")
        return
    if threads:
        torch.set_num_threads(threads)
    B, H, D, offset = 8, 32, 128, 4000
    with tempfile.TemporaryDirectory() as tmp:
        half = load_exported(tmp, head_dim=D, pairing="half")
    q1, k1 = torch.randn(B, H, 1, D), torch.randn(B, H, 1, D)
    step_ids = torch.full((B, 1), offset)
    rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=H * D, num_attention_heads=H, head_dim=D,
                                              max_position_embeddings=8192))
    cos, sin = rotary(q1, step_ids)
    # ids (B, 1, 1): one per sequence, broadcast over heads; (B, H, 1): one per head, as a tensor of its own
    ids = {"(B, 1, 1)": step_ids[:, None, :], "(B, H, 1)": torch.full((B, H, 1), offset)}
    tables = {shape: half.table(i, q1.dtype, q1.device) for shape, i in ids.items()}
    hf_given, hf_built = "HF apply_rotary_pos_emb(q, k, cos, sin)", "HF rotary(x, position_ids) + apply_rotary_pos_emb"
    cases = {
        "q.clone(), k.clone()": lambda: (q1.clone(), k1.clone()),
        hf_given: lambda: apply_rotary_pos_emb(q1, k1, cos, sin),
        hf_built: lambda: apply_rotary_pos_emb(q1, k1, *rotary(q1, step_ids)),
    }
    extra = {}
    for shape in ids:
        given, built = f"ours apply_qk(q, k, table=t), ids {shape}", f"ours apply_qk(q, k, ids), ids {shape}"
        cases[given] = (lambda t: lambda: half.apply_qk(q1, k1, table=t))(tables[shape])
        cases[built] = (lambda i: lambda: half.apply_qk(q1, k1, i))(ids[shape])
        cases[f"ours table(ids) alone, ids {shape}"] = (lambda i: lambda: half.table(i, q1.dtype, q1.device))(ids[shape])
        extra[given] = (lambda n: lambda t: f"HF / ours = {ratio(t, hf_given, n):.2f}")(given)
        extra[built] = (lambda n: lambda t: f"HF / ours = {ratio(t, hf_built, n):.2f}")(built)
    times = interleaved(cases, repeats * 20)
    report(f"decode step: q, k float32 (B, H, 1, d) = {(B, H, 1, D)}, position ids {offset} (half pairing; "
           f"{half.native_status().split(':')[0]})", times, "q.clone(), k.clone()", extra, unit="us")
    print()


# --------------------------------------------------------------------------- numpy

def numpy_section(repeats: int, quick: bool, threads=None) -> None:
    B, T, H, D = (2, 1024, 8, 128) if quick else (4, 2048, 8, 128)
    rng = np.random.default_rng(0)
    bthd = rng.standard_normal((B, T, H, D)).astype(np.float32)
    bhtd = np.ascontiguousarray(bthd.transpose(0, 2, 1, 3))
    out_bthd, out_bhtd = np.empty_like(bthd), np.empty_like(bhtd)
    shared = np.arange(T)[None, :, None]  # (1, T, 1): one id per step, shared over batch and heads
    per_sample = np.maximum(np.arange(T)[None, :] - rng.integers(0, 64, (B, 1)), 0)  # left padding, (B, T)
    freqs = np.array(reference_frequencies(D), dtype=np.float64)
    table = np.exp(1j * np.arange(T)[:, None] * freqs).astype(np.complex64)[None, :, None, :]
    print(f"numpy {np.__version__}; x: float32, {bthd.size / 1e6:.1f}M elements, as (B, T, H, d) = {bthd.shape} "
          f"and (B, H, T, d) = {bhtd.shape}")
    cases = {
        "np.copyto(out, x)": lambda: np.copyto(out_bthd, bthd),
        "hand-written: complex view x precomputed table (out=)": lambda: np.multiply(
            bthd.view(np.complex64), table, out=out_bthd.view(np.complex64)),
    }
    layouts = {
        "(B, T, H, d), shared ids": (bthd, shared, out_bthd),
        "(B, T, H, d), per-sample ids": (bthd, per_sample[:, :, None], out_bthd),
        "(B, H, T, d), shared ids": (bhtd, np.arange(T), out_bhtd),
        "(B, H, T, d), per-sample ids": (bhtd, per_sample[:, None, :], out_bhtd),
    }
    kernels = {pairing: rope_kernel(rope_spec(head_dim=D, pairing=pairing)) for pairing in ("adjacent", "half")}
    # the half path runs the C kernel on large contiguous arrays (one pass), split over THREADS threads;
    # threads=1 shows one core's figure, NATIVE off the NumPy-only path (three passes per block)
    half_globals = kernels["half"].apply.__globals__
    print(f"half pairing: {kernels['half'].native_status().split(':')[0]} on large contiguous arrays")

    def numpy_only(run):
        def call():
            half_globals["NATIVE"] = False
            try:
                return run()
            finally:
                half_globals["NATIVE"] = True
        return call

    settings = [("adjacent", None, False), ("half", threads or kernels["half"].THREADS, False), ("half", 1, False),
                ("half", 1, True)]
    for pairing, count, plain in settings:
        kernel = kernels[pairing]
        label = pairing if count is None else f"{pairing}, threads={count}" + (", NumPy only" if plain else "")
        wrap = numpy_only if plain else (lambda run: run)
        for layout, (x, ids, out) in layouts.items():
            cases[f"{label}, {layout}, out="] = wrap(
                (lambda kr, x, ids, out, n: lambda: kr.apply(x, ids, out=out, threads=n))(kernel, x, ids, out, count))
        cases[f"{label}, (B, H, T, d), shared ids, new output"] = wrap(
            (lambda kr, n: lambda: kr.apply(bhtd, np.arange(T), threads=n))(kernel, count))
    report("generated numpy kernel (the text rope_apply runs)", interleaved(cases, repeats), "np.copyto(out, x)")
    print()


# --------------------------------------------------------------------------- C

def c_section(repeats: int, quick: bool, threads=None) -> None:
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        print("C section skipped: no C compiler\n")
        return
    B, T, H, D = (2, 1024, 8, 128) if quick else (4, 2048, 8, 128)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, H, D)).astype(np.float32)
    out = np.empty_like(x)
    per_sample = np.maximum(np.arange(T)[None, :] - rng.integers(0, 64, (B, 1)), 0)[:, :, None]
    ids = np.ascontiguousarray(np.broadcast_to(per_sample, x.shape[:-1]), dtype=np.int64)
    pointer = ctypes.c_void_p
    with tempfile.TemporaryDirectory() as tmp:
        libraries = {}
        for pairing in ("adjacent", "half"):
            c_path, _ = export_kernel("rope", "c", tmp, verify=False, head_dim=D, dtype="float32", pairing=pairing,
                                      name=f"rope_{pairing}")
            so = os.path.join(tmp, f"rope_{pairing}.so")
            subprocess.run([cc, *C_FLAGS, c_path, "-o", so, "-lm"], check=True)
            lib = libraries[pairing] = ctypes.CDLL(so)
            getattr(lib, f"rope_{pairing}_apply").argtypes = [pointer, pointer, pointer, ctypes.c_size_t]
            getattr(lib, f"rope_{pairing}_apply_with_table").argtypes = [
                pointer, pointer, pointer, ctypes.c_size_t, pointer, ctypes.c_int64, ctypes.c_size_t]
            getattr(lib, f"rope_{pairing}_table").argtypes = [ctypes.c_int64, ctypes.c_size_t, pointer]
        copy_c = os.path.join(tmp, "copy_loop.c")
        Path(copy_c).write_text(COPY_LOOP_C)
        subprocess.run([cc, *C_FLAGS, copy_c, "-o", os.path.join(tmp, "copy_loop.so")], check=True)
        copy_lib = ctypes.CDLL(os.path.join(tmp, "copy_loop.so"))
        copy_lib.copy_loop.argtypes = [pointer, pointer, ctypes.c_size_t]
        table = np.empty((T, D // 2, 2), np.float32)
        cases = {
            "copy loop, same flags": lambda: copy_lib.copy_loop(x.ctypes.data, out.ctypes.data, x.size),
            "np.copyto(out, x)": lambda: np.copyto(out, x),
        }
        for pairing, lib in libraries.items():
            getattr(lib, f"rope_{pairing}_table")(0, T, table.ctypes.data)
            tab = table.copy()
            cases[f"{pairing}: fused pass with a table"] = (lambda f, t: lambda: f(
                x.ctypes.data, out.ctypes.data, ids.ctypes.data, ids.size, t.ctypes.data, 0, T))(
                getattr(lib, f"rope_{pairing}_apply_with_table"), tab)
            cases[f"{pairing}: building its own table"] = (lambda f: lambda: f(
                x.ctypes.data, out.ctypes.data, ids.ctypes.data, ids.size))(getattr(lib, f"rope_{pairing}_apply"))
        times = interleaved(cases, repeats)
    extra = {name: (lambda n: lambda t: f"{ratio(t, n, 'np.copyto(out, x)'):4.2f}x np.copyto")(name) for name in times}
    report(f"exported C kernel (gcc {' '.join(C_FLAGS[:3])}, one thread), x float32 {x.shape}, per-sample ids",
           times, "copy loop, same flags", extra)
    print()


SECTIONS = {"torch": torch_section, "decode": decode_section, "numpy": numpy_section, "c": c_section}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and smaller tensors")
    parser.add_argument("--repeats", type=int, default=None, help="iterations per median (default 15, quick 5)")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append", help="run only these sections")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch intra-op threads and the numpy kernel's threads (default: each one's own)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall time (default) or the process's CPU time (steadier on a loaded machine)")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = CLOCKS[args.clock]
    repeats = args.repeats or (5 if args.quick else 15)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
          f"clock: {args.clock}; load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs at start")
    for name, section in SECTIONS.items():
        if not args.only or name in args.only:
            section(repeats, args.quick, args.threads)
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
