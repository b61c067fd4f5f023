"""Kernels exported from model configs reproduce HF transformers' rotary path.

For every shipped config and every target (numpy, torch, C), ``apply(x,
positions)`` is compared with HF's own rotary module and
``apply_rotary_pos_emb`` (see ``conftest.py``) on float32 inputs:

- at position 1 the two agree to 1e-6 (frequencies, pairing, rotated width,
  attention scaling are all visible there);
- at positions up to 40000 HF's angles are float32 products, so they carry a
  few units in the last place of the angle: each pair must agree within 8 ulps
  of its float32 angle (plus 8 ulps of the value), and no tighter bound is
  meaningful;
- ``seq_len`` defaults to the largest position + 1 of the call, as in HF, so a
  call that reaches past the threshold switches a dynamic or LongRoPE config
  for all its positions, and an explicit ``seq_len=`` gives the same rows.
"""

import ctypes
import functools
import importlib.util
import json
import shutil
import subprocess
from importlib import resources

import numpy as np
import pytest

from symproof.models import load_model_config
from symproof.models._model import attention_scaling
from symproof.variants._export import export_variant, variant_source

CC = shutil.which("gcc") or shutil.which("cc")
ULP = 2.0**-24
SHORT = np.array([[0, 1, 2, 3, 7, 100], [5, 1, 0, 7, 64, 2000]])
LONG = np.array([[0, 1, 4095, 4096, 4097, 8191, 16384, 32767, 40000], [1, 2, 3, 30000, 31000, 9, 10, 11, 12]])


@functools.lru_cache(maxsize=None)
def _configs():
    """The shipped configs whose model is one rotary map over the start of the head (the variant path; the
    others, with regimes, offsets or M-RoPE, are compared in test_model_families.py)."""
    from symproof.models._config import load_model

    folder = resources.files("symproof._derivations") / "configs"
    return {p.name[:-5]: str(p) for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".json")
            and load_model(str(p)).plain and (p.name[:-5] in _FIRST or p.name[:-5] in _CONVENTIONS)}


#: the configs shipped before the family table, and one per convention it added (adjacent pairs over the
#: whole head, adjacent pairs over a partial head, GPT-OSS's halves with YaRN untruncated, a 1/4 partial head)
_FIRST = {"gemma-7b", "gpt-j-6b", "llama-2-7b-dynamic-ntk", "llama-2-7b", "llama-3.1-8b", "longchat-7b-16k-linear",
          "mistral-7b", "phi-2", "phi-3-mini-128k", "pythia-1.4b", "qwen2-7b-yarn"}
_CONVENTIONS = {"aya-23-8b", "glm-4-9b-chat-hf", "gpt-oss-20b", "stablelm-2-1.6b"}


def _load(path):
    spec = importlib.util.spec_from_file_location("exported_model_rope", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _CKernel:
    def __init__(self, path, variant):
        library = str(path)[:-2] + ".so"
        subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-O2", "-shared", "-fPIC", str(path), "-o", library,
                        "-lm"], check=True, capture_output=True, text=True)
        self.func = getattr(ctypes.CDLL(library), f"symproof_rope_{variant.name.replace('-', '_')}_apply")
        pointer = ctypes.c_void_p
        self.func.argtypes = [pointer, pointer, pointer, ctypes.c_long, ctypes.c_double]
        self.func.restype = None
        self.width = variant.width

    def apply(self, x, positions, seq_len=None):
        # one call = the rows of one batch: the length is taken over all of them, as HF does
        x = np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1, self.width))
        pos = np.ascontiguousarray(np.broadcast_to(positions, x.shape[:1]), dtype=np.float64)
        out = np.empty_like(x)
        self.func(x.ctypes.data, pos.ctypes.data, out.ctypes.data, len(x), float(seq_len or 0))
        return out


def _kernel(target, variant, folder):
    (path,) = export_variant(variant, folder, target)
    if target == "c":
        return _CKernel(path, variant)
    module = _load(path)
    if target == "numpy":
        return module
    import torch

    class _Torch:
        @staticmethod
        def apply(x, positions, seq_len=None):
            return module.apply(torch.tensor(x), torch.tensor(positions), seq_len=seq_len).numpy()

    return _Torch


def _apply(kernel, target, x, positions, seq_len=None):
    if target == "c":
        return kernel.apply(x, positions.reshape(-1), seq_len).reshape(x.shape)
    return np.asarray(kernel.apply(x, positions, seq_len=seq_len))


def _pair_bound(variant, x, positions, seq_len):
    """Per coordinate: 8 ulps of each pair's float32 angle plus 8 ulps, times the pair's size and scaling."""
    from symproof.encodings import pair_indices

    w = np.array([float(v) for v in variant.frequencies_digits(seq_len=seq_len)])
    scale = float(attention_scaling(variant))
    bound = np.full(x.shape, 8 * ULP * np.max(np.abs(x)))  # the copied part: float32 rounding of x only
    for r, (a, b) in enumerate(pair_indices(variant.rotated_width, variant.pairing)):
        size = np.abs(x[..., a]) + np.abs(x[..., b])
        pair = scale * size * (8 * np.abs(positions * w[r]) + 8) * ULP
        bound[..., a], bound[..., b] = pair, pair
    return bound


TARGETS = ["numpy", "torch", "c"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Kernels and configs, exported once per (config, target)."""
    cache = {}

    def get(name, target):
        if (name, target) not in cache:
            if target == "torch":
                pytest.importorskip("torch")
            if target == "c" and CC is None:
                pytest.skip("needs a C compiler")
            variant = load_model_config(_configs()[name])
            folder = tmp_path_factory.mktemp(f"{name}-{target}")
            cache[name, target] = variant, _kernel(target, variant, folder)
        return cache[name, target]

    return get


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(_configs()))
def test_exported_kernel_reproduces_hf(hf, exported, name, target):
    variant, kernel = exported(name, target)
    with open(_configs()[name], encoding="utf-8") as handle:
        config = json.load(handle)
    rng = np.random.default_rng(7)
    for positions in (SHORT, LONG):
        x = rng.standard_normal((2, positions.shape[1], variant.width)).astype(np.float32)
        theirs = hf.rotate(config, x, positions)
        ours = _apply(kernel, target, x.astype(np.float64), positions)
        at_one = positions == 1
        assert np.max(np.abs(ours[at_one] - theirs[at_one])) <= 1e-6, "rotation at position 1"
        seq_len = int(positions.max()) + 1
        gap = np.abs(ours - theirs) - _pair_bound(variant, x.astype(np.float64), positions, seq_len)
        assert np.max(gap) <= 0, f"beyond float32-angle accuracy at {np.unravel_index(np.argmax(gap), gap.shape)}"
        # an explicit seq_len gives the rows of the call that has that length
        alone = _apply(kernel, target, x[:1, 1:2].astype(np.float64), positions[:1, 1:2], seq_len=seq_len)
        np.testing.assert_allclose(alone[0, 0], ours[0, 1], rtol=0, atol=1e-13)


def test_length_switch_needs_the_long_call(hf, exported):
    """Position 1 alone (seq_len 2) and position 1 in a 40001-long call differ for LongRoPE, as in HF."""
    variant, kernel = exported("phi-3-mini-128k", "numpy")
    with open(_configs()["phi-3-mini-128k"], encoding="utf-8") as handle:
        config = json.load(handle)
    x = np.random.default_rng(3).standard_normal((1, 2, variant.width)).astype(np.float32)
    short = kernel.apply(x.astype(np.float64), np.array([[0, 1]]))
    long = kernel.apply(x.astype(np.float64), np.array([[0, 1]]), seq_len=40001)
    assert np.max(np.abs(short - long)) > 1e-3
    np.testing.assert_allclose(short, hf.rotate(config, x, np.array([[0, 1]])), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name, scaled", [("qwen2-7b-yarn", True), ("phi-3-mini-128k", True), ("llama-2-7b", False)])
def test_header_says_whether_apply_scales(name, scaled):
    variant = load_model_config(_configs()[name])
    for target in TARGETS:
        (text,) = variant_source(variant, target).values()
        head = text[:4000]
        assert ("apply MULTIPLIES the rotated coordinates by the attention scaling" in head) == scaled
        assert ("apply does NOT multiply by an attention scaling" in head) == (not scaled)
        assert "max(positions) + 1" in head and variant.notes[0][:30] in head


def test_header_text_cannot_close_the_docstring_or_comment(tmp_path):
    """Hostile text in the title and file name stays data: Python string literals, C ``//`` lines."""
    import ast
    import dataclasses

    variant = load_model_config(_configs()["llama-2-7b"])
    title = 'x """ import os; os.system("boom") */ int evil;\n\u2028 \\'
    hostile = dataclasses.replace(variant, title=title, source=str(tmp_path / 'a"""b*/.json'))
    for target in TARGETS:
        (text,) = variant_source(hostile, target).values()
        if target == "c":
            head = text.split("#include")[0]
            assert all(line.startswith("// ") and not line.endswith("\\") for line in head.splitlines() if line)
            assert "*/" not in head
            continue
        module = ast.parse(text)
        doc, provenance = module.body[0], module.body[1]
        assert isinstance(doc, ast.Expr) and "x" not in ast.literal_eval(doc.value).split("Generated by")[0]
        assert isinstance(provenance, ast.Assign) and provenance.targets[0].id == "PROVENANCE"
        lines = ast.literal_eval(provenance.value)  # constants only: raises on anything else
        assert any(title in line for line in lines)


@pytest.mark.parametrize("name", ["phi-3-mini-128k", "llama-2-7b-dynamic-ntk"])
@pytest.mark.parametrize("last", [4095, 4096])
def test_threshold_is_crossed_where_hf_crosses_it(hf, exported, name, last):
    """seq_len = 4096 keeps the short rule, 4097 switches (HF: seq_len > original / max length)."""
    variant, kernel = exported(name, "numpy")
    with open(_configs()[name], encoding="utf-8") as handle:
        config = json.load(handle)
    positions = np.array([[0, 1, last]])
    x = np.random.default_rng(5).standard_normal((1, 3, variant.width)).astype(np.float32)
    ours, theirs = kernel.apply(x.astype(np.float64), positions), hf.rotate(config, x, positions)
    np.testing.assert_allclose(ours[0, :2], theirs[0, :2], rtol=0, atol=1e-6)
    short = kernel.apply(x.astype(np.float64), positions, seq_len=2)
    assert (np.max(np.abs(short[0, 1] - ours[0, 1])) > 1e-7) == (last == 4096)
