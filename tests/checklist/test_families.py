"""Tiny configs of real transformers families pass; the dynamic NTK regime change fails with its mechanism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import TINY
from symproof._face._cli import main
from symproof.checklist import FAILS, HOLDS, build_from_config, checklist


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(TINY))
def test_a_tiny_model_of_a_family_passes(family, write_config, capsys):
    code = main(["checklist", write_config(TINY[family]), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result
    assert result["dtype"] == "float64"
    assert {item["item"]: item["status"] for item in result["items"]} == dict.fromkeys(
        ("left_padding", "packing", "kv_cache", "shift", "reload", "configured_map"), HOLDS)


def test_the_built_model_keeps_what_enters_positions(write_config):
    data = {**TINY["llama"], "hidden_size": 512, "num_attention_heads": 8, "intermediate_size": 2048,
            "vocab_size": 32000, "num_hidden_layers": 3, "rope_parameters": {"rope_type": "linear", "factor": 4.0,
                                                                              "rope_theta": 50000.0}}
    model = build_from_config(write_config(data))
    config = model.config
    assert (config.num_hidden_layers, config.hidden_size // config.num_attention_heads) == (3, 64)
    assert config.rope_parameters["factor"] == 4.0 and config.rope_parameters["rope_theta"] == 50000.0
    assert config.vocab_size < 32000 and config.intermediate_size < 2048


def test_dynamic_ntk_fails_across_its_regime_change_with_the_mechanism(write_config):
    data = {**TINY["llama"], "max_position_embeddings": 16,
            "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}}
    result = checklist(build_from_config(write_config(data)), only=["kv_cache"])
    (item,) = result.items
    assert item.status == FAILS
    assert item.witness["run"] == "across the regime change"
    assert "grow-only base" in item.witness["mechanism"]
    assert "one token at a time: largest difference" in item.notes[0]  # the short runs held


@pytest.mark.parametrize("argv, message", [
    (["checklist", "/nonexistent/config.json"], "no such file"),
    (["checklist", "{config}", "--only", "paddng"], "did you mean left_padding"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, write_config, capsys):
    path = write_config(TINY["llama"])
    code = main([a.replace("{config}", path) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_config_without_model_type_is_refused(write_config, capsys):
    assert main(["checklist", write_config({"hidden_size": 8})]) == 2
    assert "model_type" in capsys.readouterr().err


def test_a_failing_item_exits_1(write_config, capsys):
    data = {**TINY["llama"], "max_position_embeddings": 16,
            "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}}
    assert main(["checklist", write_config(data), "--only", "kv_cache"]) == 1
    assert "kv_cache" in capsys.readouterr().out


def test_longrope_fails_across_its_factor_switch_with_the_mechanism(write_config):
    data = {"model_type": "phi3", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 128, "max_position_embeddings": 64,
            "original_max_position_embeddings": 16, "pad_token_id": 0,
            "rope_parameters": {"rope_type": "longrope", "rope_theta": 10000.0,
                                "short_factor": [1.0] * 8, "long_factor": [1.0, 2.0, 3.0, 4.0] * 2}}
    result = checklist(build_from_config(write_config(data)), only=["kv_cache"])
    (item,) = result.items
    assert item.status == FAILS, item.as_dict()
    assert item.witness["run"] == "across the regime change"
    assert "short_factor" in item.witness["mechanism"]


def test_a_checkpoint_folder_is_read_like_its_config(write_config, capsys):
    folder = str(Path(write_config(TINY["qwen2"])).parent)
    assert main(["checklist", folder, "--only", "shift", "configured_map"]) == 0
    out = capsys.readouterr().out
    assert "qwen2" in out and "configured_map  holds" in out


def test_gptj_reload_is_reported_with_the_table_rebuilt_in_another_dtype(write_config):
    # transformers 5.24: from_config(dtype=float64) computes GPT-J's sin/cos table in float64, from_pretrained
    # recomputes it in float32 and casts: the reload is not bit-identical, and the witness names the buffer
    data = {"model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 2, "rotary_dim": 8, "vocab_size": 128,
            "n_positions": 64}
    (item,) = checklist(build_from_config(write_config(data)), only=["reload"]).items
    assert item.status == FAILS
    assert item.witness["buffers_rebuilt_otherwise"] == ["transformer.rotary_emb.embed_positions"]


#: families whose rotary table reaches attention in another layout than (cos, sin) of the pairing rotated
LAYOUTS = {
    "glm: half-layout table for adjacent pairs": {
        "model_type": "glm", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 128,
        "max_position_embeddings": 64, "partial_rotary_factor": 0.5, "pad_token_id": 0},
    "deepseek_v3: rope_interleave, a half-layout table, the rotated block written out permuted": {
        "model_type": "deepseek_v3", "hidden_size": 64, "intermediate_size": 64, "moe_intermediate_size": 32,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 128,
        "max_position_embeddings": 64, "q_lora_rank": 32, "kv_lora_rank": 16, "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 8, "v_head_dim": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_group": 1,
        "topk_group": 1, "first_k_dense_replace": 1, "rope_interleave": True, "pad_token_id": 0},
    "gptj: (sin, cos), one entry per pair": {
        "model_type": "gptj", "n_embd": 64, "n_head": 4, "n_layer": 2, "rotary_dim": 8, "vocab_size": 128,
        "n_positions": 64},
}


@pytest.mark.parametrize("case", sorted(LAYOUTS))
def test_the_configured_map_is_read_in_the_layout_attention_gets(case, write_config):
    (item,) = checklist(build_from_config(write_config(LAYOUTS[case])), config=None,
                        only=["configured_map"]).items
    assert item.status == HOLDS, item.as_dict()
