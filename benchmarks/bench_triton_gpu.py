"""The exported Triton RoPE kernel on a GPU, beside HF's formula and liger-kernel's rotary kernel.

Run: ``python benchmarks/bench_triton_gpu.py [--quick] [--repeats N]`` on a machine with CUDA and
``triton`` (``pip install -e .[test]``); liger-kernel (``pip install liger-kernel``) adds its row.
Without a CUDA device it says so and exits 0: there is nothing to time on the CPU (the
interpreter is a correctness tool, not a kernel).

Shapes: prefill float32/bfloat16 ``(B, H, T, d) = (4, 32, 2048, 128)``, half pairing (HF's
``rotate_half`` layout), position ids ``(B, T)``; a decode step ``(8, 32, 1, 128)`` at position
4000.  Every case runs once per iteration, interleaved, timed with CUDA events; a ratio is the
median over iterations of (case / baseline in the same iteration).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
from pathlib import Path

from symproof.kernels import export_kernel


def load(path):
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def timed(torch, cases: dict, repeats: int) -> dict:
    for run in cases.values():
        run()
    torch.cuda.synchronize()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, run in cases.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / 1e3)
    return times


def report(title, times, base):
    print(title)
    for name, values in times.items():
        ratio = statistics.median(a / b for a, b in zip(values, times[base]))
        print(f"  {name:<52s} {statistics.median(values) * 1e6:10.1f} us   {ratio:5.2f} x {base}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller prefill, fewer repeats")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("skipped: PyTorch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("skipped: no CUDA device on this machine (the Triton kernel is checked in Triton's interpreter "
              "by tests/kernels/test_triton_export.py)")
        return 0
    if importlib.util.find_spec("triton") is None:
        print("skipped: triton is not installed (pip install -e .[test])")
        return 0
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    try:
        from liger_kernel.transformers.rope import liger_rotary_pos_emb
    except ImportError:
        liger_rotary_pos_emb = None
        print("liger-kernel is not installed: its row is left out (pip install liger-kernel)")
    repeats = args.repeats or (10 if args.quick else 50)
    D = 128
    with tempfile.TemporaryDirectory() as tmp:
        (path,) = export_kernel("rope", "triton", tmp, verify=False, head_dim=D, pairing="half", name="rope_gpu")
        ours = load(path)
    device = torch.device("cuda")
    print(f"{torch.cuda.get_device_name(device)}, torch {torch.__version__}")
    shapes = {"prefill": (2, 8, 1024, D) if args.quick else (4, 32, 2048, D), "decode": (8, 32, 1, D)}
    for dtype in (torch.float32, torch.bfloat16):
        for stage, (B, H, T, _) in shapes.items():
            q = torch.randn(B, H, T, D, device=device, dtype=dtype)
            k = torch.randn(B, H, T, D, device=device, dtype=dtype)
            position_ids = (torch.arange(T, device=device) + (4000 if stage == "decode" else 0))[None].expand(B, T)
            table = ours.table(position_ids[:, None, :], dtype, device)
            cos = torch.cat((table.cos, table.cos), dim=-1)[:, 0]  # HF's (B, T, d)
            sin = torch.cat((table.sin, table.sin), dim=-1)[:, 0]
            cases = {
                "q.clone(), k.clone()": lambda: (q.clone(), k.clone()),
                "HF apply_rotary_pos_emb(q, k, cos, sin)": lambda: apply_rotary_pos_emb(q, k, cos, sin),
                "ours (Triton) apply_qk(q, k, table=t)": lambda: ours.apply_qk(q, k, table=table),
                "ours (Triton) table(ids) + apply_qk": lambda: ours.apply_qk(q, k, position_ids[:, None, :]),
            }
            if liger_rotary_pos_emb is not None:
                cases["liger-kernel liger_rotary_pos_emb(q, k, cos, sin)"] = (
                    lambda: liger_rotary_pos_emb(q, k, cos, sin))
            report(f"{stage}, {dtype}, (B, H, T, d) = {(B, H, T, D)}", timed(torch, cases, repeats),
                   "q.clone(), k.clone()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
