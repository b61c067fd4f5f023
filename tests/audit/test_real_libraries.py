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
