"""A rotary module that makes one complex table, ``freqs_cis = e^(i m omega)``, applied by
``apply_rotary_emb(xq, xk, freqs_cis)`` (transformers' Llama 4): audited with one plain command, and a
planted bug in the table is named."""

from __future__ import annotations

import pytest

from symproof import audit

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

LLAMA4 = "transformers.models.llama4.modeling_llama4:Llama4TextRotaryEmbedding"

# the table conjugated: every pair turns the other way
CONJUGATED = '''
from transformers.models.llama4.modeling_llama4 import Llama4TextRotaryEmbedding, apply_rotary_emb  # noqa: F401


class Rotary(Llama4TextRotaryEmbedding):
    def forward(self, x, position_ids):
        return super().forward(x, position_ids).conj()
'''


@pytest.fixture(scope="module")
def llama4(tmp_path_factory):
    config = transformers.AutoConfig.for_model("llama4_text", head_dim=16, hidden_size=64, num_attention_heads=4,
                                               num_key_value_heads=1, max_position_embeddings=4096)
    path = tmp_path_factory.mktemp("cis") / "llama4.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    return str(path)


def test_hf_llama4_rotary_is_equivalent_with_one_plain_command(llama4):
    result = audit(LLAMA4, llama4)
    assert result.verdict == "equivalent"
    assert result.convention["name"] == "hf-rotary-cis"
    assert "-> freqs_cis" in result.convention["call"]


def test_a_conjugated_table_is_named(llama4, tmp_path):
    code = tmp_path / "code.py"
    code.write_text(CONJUGATED, encoding="utf-8")
    result = audit(f"{code}:Rotary", llama4)
    assert result.verdict == "differs"
    assert {d.what for d in result.differences} & {"direction", "sign", "rotation_direction"}, \
        [d.what for d in result.differences]


def test_hf_deepseek_v2_rotary_with_heads_before_tokens_is_equivalent(tmp_path):
    """DeepSeek-V2's apply_rotary_emb takes q as (B, H, T, D) and unsqueezes the table at axis 1."""
    config = transformers.AutoConfig.for_model("deepseek_v2", hidden_size=64, num_attention_heads=4,
                                               num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16,
                                               v_head_dim=16, kv_lora_rank=16, q_lora_rank=32,
                                               max_position_embeddings=4096)
    path = tmp_path / "deepseek_v2.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    result = audit("transformers.models.deepseek_v2.modeling_deepseek_v2:DeepseekV2RotaryEmbedding", str(path))
    assert result.verdict == "equivalent", result.summary()
    assert result.convention["name"] == "hf-rotary-cis" and result.convention["layout"] == "bhtd", result.convention
