"""What symproof writes, as SHA-256 digests: the contract that moving code does not change output.

``python tests/golden/snapshot.py --write`` records the digests of the JSON
verdicts and the exported kernels of the shipped examples (every variant, a
sample of the model configs, every target of ``symproof export rope``) in
``tests/golden/outputs.sha256``; ``test_outputs_unchanged.py`` recomputes them
and compares.  Every command runs as ``python -m symproof`` in a child
process, so the snapshot works whatever the package layout behind the command
line.  Machine-dependent text is normalised first: the repository's path in a
``source`` field, and the seconds a run took.

Run it with ``--write`` only when an output is meant to change, and say in the
commit which outputs changed and why.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("outputs.sha256")

#: shipped examples whose ``check --json`` and numpy kernel are recorded: every variant, and the model
#: configs that cover each rotary rule and layout the engine reads (default, linear, dynamic NTK, llama3,
#: YaRN, LongRoPE, partial rotation, adjacent pairs, per-layer regimes, NoPE layers, M-RoPE)
CONFIGS = ("llama-2-7b", "llama-2-7b-dynamic-ntk", "llama-3.1-8b", "longchat-7b-16k-linear", "qwen2-7b-yarn",
           "phi-3-mini-128k", "pythia-1.4b", "gpt-j-6b", "gemma-3-1b", "llama-4-scout-17b-16e",
           "qwen2-vl-2b", "deepseek-v3")
#: (example, target) pairs exported for the other targets as well
MORE_TARGETS = (("xpos", "c"), ("xpos", "torch"), ("llama-3.1-8b", "c"), ("llama-3.1-8b", "torch"),
                ("phi-3-mini-128k", "c"))
ROPE_EXPORTS = (("numpy", ()), ("torch", ()), ("c", ()), ("triton", ()),
                ("c", ("--rotary-dim", "32", "--denominator", "32")), ("numpy", ("--pairing", "adjacent")))
_TIMING_KEYS = frozenset({"seconds", "wall_seconds", "cpu_seconds", "elapsed"})


def _variants() -> list[str]:
    return sorted(path.stem for path in (REPO / "derivations" / "variants").glob("*.toml"))


def _run(*args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SYMPROOF")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run([sys.executable, "-m", "symproof", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"symproof {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def _normalised(value):
    if isinstance(value, dict):
        return {key: ("<seconds>" if key in _TIMING_KEYS else _normalised(item)) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalised(item) for item in value]
    if isinstance(value, str):
        return value.replace(str(REPO), "<repo>")
    return value


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _json_digest(text: str) -> str:
    """The digest of a command's JSON output, machine-dependent fields normalised, keys sorted."""
    return _digest(json.dumps(_normalised(json.loads(text)), indent=1, sort_keys=True).encode())


def _folder_digests(label: str, folder: Path) -> dict:
    return {f"{label}/{path.name}": _digest(path.read_bytes()) for path in sorted(folder.iterdir())
            if path.is_file() and not path.name.startswith(".")}


def outputs() -> dict:
    """``{output name: sha256}`` of everything the snapshot records."""
    digests = {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for name in (*_variants(), *CONFIGS):
            out = scratch / f"{name}-numpy"
            text = _run("check", name, "--json", "--export", str(out), "--target", "numpy")
            digests[f"check {name} --json"] = _json_digest(text)
            digests.update(_folder_digests(f"check {name} --export numpy", out))
        for name, target in MORE_TARGETS:
            out = scratch / f"{name}-{target}"
            _run("check", name, "--export", str(out), "--target", target)
            digests.update(_folder_digests(f"check {name} --export {target}", out))
        for index, (target, extra) in enumerate(ROPE_EXPORTS):
            out = scratch / f"rope-{index}"
            _run("export", "rope", "--head-dim", "64", "--target", target, *extra, "--out", str(out))
            digests.update(_folder_digests(f"export rope {target} {' '.join(extra)}".rstrip(), out))
        text = _run("verify", "--json")
        digests["verify --json"] = _json_digest(text)
    return digests


def read_golden() -> dict:
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    return {line[66:]: line[:64] for line in lines if line and not line.startswith("#")}


def changed_outputs(golden: dict, digests: dict) -> list:
    """The names whose digest differs between ``golden`` and ``digests`` (recorded on one side only too)."""
    return sorted(name for name in golden.keys() | digests.keys() if golden.get(name) != digests.get(name))


def main(argv) -> int:
    digests = outputs()
    if argv == ["--write"]:
        GOLDEN.write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(digests.items())),
                          encoding="utf-8")
        print(f"{len(digests)} digests written to {GOLDEN.relative_to(REPO)}")
        return 0
    changed = changed_outputs(read_golden(), digests)
    for name in changed:
        print(f"changed: {name}")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
