"""The rotary code of real libraries (Hugging Face transformers, test-only) audited as a user would wrap it."""

from __future__ import annotations

import pytest

from symproof import audit
from symproof._audit import load_function

pytest.importorskip("torch")
pytest.importorskip("transformers")

LLAMA = """
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

rotary = LlamaRotaryEmbedding(LlamaConfig(hidden_size=256, num_attention_heads=4, head_dim=64,
                                          rope_theta=$theta, max_position_embeddings=40000))


def apply_rope(x, positions):
    q = x[:, None]  # (B, 1, T, d): one head
    cos, sin = rotary(q, positions)
    q_rot, _ = apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=1)
    return q_rot[:, 0]
"""

NEOX = """
from transformers import GPTNeoXConfig
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding, apply_rotary_pos_emb

rotary = GPTNeoXRotaryEmbedding(GPTNeoXConfig(hidden_size=256, num_attention_heads=4, rotary_pct=0.25,
                                              max_position_embeddings=40000))


def apply_rope(x, positions):
    q = x[:, None]
    cos, sin = rotary(q, positions)
    q_rot, _ = apply_rotary_pos_emb(q, q, cos, sin, unsqueeze_dim=1)
    return q_rot[:, 0]
"""


@pytest.mark.parametrize("source, model, verdict, whats", [
    (LLAMA.replace("$theta", "10000.0"), "hf", "equivalent", []),
    (LLAMA.replace("$theta", "10000.0"), "meta", "equivalent_after_relayout", []),
    (LLAMA.replace("$theta", "500000.0"), "hf", "differs", ["frequency"]),
    (NEOX, "neox", "equivalent", []),
    (NEOX, "gptj", "differs", ["pairing"]),
], ids=["llama", "llama-vs-meta-layout", "llama-wrong-theta", "neox-partial", "neox-vs-gptj-layout"])
def test_transformers_rotary_code(source, model, verdict, whats, tmp_path, model_file):
    path = tmp_path / "wrapped.py"
    path.write_text(source)
    result = audit(load_function(f"{path}:apply_rope"), model_file(model))
    assert result.verdict == verdict, result.summary()
    assert [d.what for d in result.differences] == whats


# transformers' own rotary modules named directly: the audit builds them from the config and finds their apply
_M = "transformers.models"
_HF_CONFIGS = {
    "llama": {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64,
              "rope_theta": 500000.0, "max_position_embeddings": 8192},
    "neox": {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8, "rotary_pct": 0.25,
             "rotary_emb_base": 10000, "max_position_embeddings": 2048},
    "gptj": {"model_type": "gptj", "n_embd": 512, "n_head": 8, "rotary_dim": 16, "n_positions": 2048},
    "phi": {"model_type": "phi", "hidden_size": 512, "num_attention_heads": 8, "partial_rotary_factor": 0.5,
            "rope_theta": 10000.0, "max_position_embeddings": 2048},
}
PERSIMMON = """name = "persimmon-partial"
kind = "rotary"
width = 64
rotated_width = 32
pairing = "half"

[frequencies]
rule = "geometric"
base = 25000
denominator = 32
"""


@pytest.mark.parametrize("module, name, like, verdict, whats, convention", [
    (f"{_M}.llama.modeling_llama", "LlamaRotaryEmbedding", "llama", "equivalent", [], "hf-rotary"),
    (f"{_M}.gpt_neox.modeling_gpt_neox", "GPTNeoXRotaryEmbedding", "neox", "equivalent", [], "hf-rotary"),
    (f"{_M}.gptj.modeling_gptj", "GPTJRotaryEmbedding", "gptj", "equivalent", [], "rotary-x-partial"),
    (f"{_M}.phi.modeling_phi", "PhiRotaryEmbedding", "phi", "equivalent", [], "hf-rotary-partial"),
    (f"{_M}.persimmon.modeling_persimmon", "PersimmonRotaryEmbedding", "persimmon", "equivalent", [],
     "hf-rotary-partial"),
    (f"{_M}.llama.modeling_llama", "LlamaRotaryEmbedding", "meta", "equivalent_after_relayout", [], "hf-rotary"),
], ids=["llama", "gpt-neox", "gpt-j-interleaved", "phi-partial", "persimmon-partial", "llama-vs-meta-64"])
def test_transformers_modules_named_directly(module, name, like, verdict, whats, convention, tmp_path, model_file):
    import importlib
    import json

    cls = getattr(importlib.import_module(module), name)
    if like in _HF_CONFIGS:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(_HF_CONFIGS[like]))
    elif like == "persimmon":
        path = tmp_path / "persimmon.toml"
        path.write_text(PERSIMMON)
    else:  # a TOML at another base and pairing: the module is built from it (theta 10000, head width 64)
        path = model_file(like)
    result = audit(cls, path)
    assert result.verdict == verdict, result.summary()
    assert [d.what for d in result.differences][:len(whats)] == whats
    assert result.convention["name"] == convention


def test_the_command_audits_a_transformers_module_by_its_module_name(tmp_path):
    """`symproof audit transformers.models.llama.modeling_llama:LlamaRotaryEmbedding --like config.json`."""
    import json
    import os
    import subprocess
    import sys

    path = tmp_path / "config.json"
    path.write_text(json.dumps(_HF_CONFIGS["llama"]))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit",
                          f"{_M}.llama.modeling_llama:LlamaRotaryEmbedding", "--like", str(path), "--json"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent" and document["convention"]["name"] == "hf-rotary"
    assert document["positions_probed"][-1] == 8191  # max_position_embeddings bounds the probes


@pytest.mark.parametrize("cast_module, verdict", [(False, "equivalent"), (True, "differs")],
                         ids=["as-from-pretrained-builds-it", "cast-module"])
def test_dtype_is_the_activations_and_cast_module_casts_the_buffers(cast_module, verdict, tmp_path):
    """--dtype bfloat16: bfloat16 activations with HF's module as from_pretrained(dtype=bfloat16) leaves it
    (inv_freq float32): the model, rounding accepted.  --cast-module: module.to(bfloat16) rounds inv_freq
    itself, which the audit reports (a real difference of that deployment, not of the code)."""
    import importlib
    import json

    cls = getattr(importlib.import_module(f"{_M}.llama.modeling_llama"), "LlamaRotaryEmbedding")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_HF_CONFIGS["llama"]))
    result = audit(cls, path, dtype="bfloat16", cast_module=cast_module)
    assert result.verdict == verdict, result.summary()
