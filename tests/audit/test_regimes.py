"""A config whose layers use several rotary maps (Gemma 3's sliding and full attention, SmolLM3's NoPE
layers): the audit compares the code with the regime it implements, never with a guessed one.

HF's own per-layer-type module (``forward(x, position_ids, layer_type)``) is audited once per regime with
one plain command; code that implements one map is refused until ``--regime`` names it; a module that
ignores its ``layer_type`` is named under the regime it gets wrong."""

from __future__ import annotations

import json

import pytest
import sympy

from pathlib import Path

from symproof import InvalidInputError, SymproofError, audit

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VARIANTS = Path(__file__).resolve().parents[2] / "derivations" / "variants"
GEMMA3 = "transformers.models.gemma3.modeling_gemma3:Gemma3RotaryEmbedding"
SMALL = dict(head_dim=16, hidden_size=64, num_attention_heads=4, num_key_value_heads=1,
             max_position_embeddings=4096)

# one map only, half pairs at a base filled in: Gemma 3's sliding layers (10000; its full layers turn with base 10^6)
ONE_MAP = '''
import torch

def rope(x, positions):
    d = x.shape[-1]
    inv = 1.0 / {base} ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = positions.to(torch.float64)[:, None] * inv[None]
    cos, sin = torch.cos(angle).repeat(1, 2), torch.sin(angle).repeat(1, 2)
    return x * cos + torch.cat((-x[..., d // 2:], x[..., :d // 2]), -1) * sin
'''
SLIDING_ONLY = ONE_MAP.format(base=10000.0)

# HF's module with its layer_type ignored: every layer gets the sliding layers' frequencies
IGNORES_LAYER_TYPE = '''
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding, apply_rotary_pos_emb  # noqa: F401


class Rotary(Gemma3RotaryEmbedding):
    def forward(self, x, position_ids, layer_type):
        return super().forward(x, position_ids, "sliding_attention")
'''


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory):
    config = transformers.AutoConfig.for_model("gemma3_text", **SMALL)
    path = tmp_path_factory.mktemp("regimes") / "gemma3.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    return str(path)


def _code(tmp_path, text):
    path = tmp_path / "code.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_hf_per_layer_type_module_is_audited_in_every_regime_with_one_plain_command(gemma3):
    result = audit(GEMMA3, gemma3)
    regimes = result.as_dict()["regimes"]
    assert result.verdict == "equivalent"
    assert set(regimes) == {"sliding_attention", "full_attention"}
    for name, one in regimes.items():
        assert one["verdict"] == "equivalent"
        assert f"layer_type={name!r}" in one["convention"]["call"]
    assert "-- regime full_attention" in result.summary()


def test_a_module_ignoring_its_layer_type_is_named_under_the_regime_it_gets_wrong(gemma3, tmp_path):
    result = audit(f"{_code(tmp_path, IGNORES_LAYER_TYPE)}:Rotary", gemma3)
    regimes = result.as_dict()["regimes"]
    assert result.verdict == "differs" and result.exit_code == 1
    assert regimes["sliding_attention"]["verdict"] == "equivalent"
    assert regimes["full_attention"]["verdict"] == "differs"
    (difference,) = regimes["full_attention"]["differences"]
    # 10^4 at d = 16 is 10^6 at d = 24: the diagnosis says both, the sliding layers' base among them
    assert difference["what"] in ("frequency", "denominator") and "base 10000" in difference["detail"]


def test_code_of_one_map_is_refused_until_the_regime_is_named(gemma3, tmp_path):
    code = f"{_code(tmp_path, SLIDING_ONLY)}:rope"
    with pytest.raises(InvalidInputError, match=r"2 rotary regimes \(sliding_attention, full_attention\).*"
                                                r"takes no layer_type: pass --regime NAME"):
        audit(code, gemma3)
    assert audit(code, gemma3, regime="sliding_attention").verdict == "equivalent"
    wrong = audit(code, gemma3, regime="full_attention")
    assert wrong.verdict == "differs" and {d.what for d in wrong.differences} & {"frequency", "denominator"}


@pytest.mark.parametrize("like, regime, message", [
    ("gemma3", "global", r"no regime 'global'; expected one of sliding_attention, full_attention"),
    ("gemma3", "", r"--regime expects the name of one of the config's rotary regimes"),
    ("toml", "sliding_attention", r"--regime sliding_attention: only a model config.json has regimes"),
])
def test_a_regime_that_cannot_be_read_is_one_line_before_the_code_runs(gemma3, like, regime, message):
    file = gemma3 if like == "gemma3" else str(VARIANTS / "xpos.toml")
    with pytest.raises(SymproofError, match=message) as caught:  # the target is never imported
        audit("never_imported_module:never_run", file, regime=regime)
    assert "\n" not in str(caught.value)


def test_a_config_whose_other_layers_are_nope_audits_its_one_rotary_map(tmp_path):
    config = transformers.AutoConfig.for_model("smollm3", **{k: v for k, v in SMALL.items()
                                                             if k != "num_key_value_heads"})
    path = tmp_path / "smollm3.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    assert len(set(json.loads(path.read_text())["no_rope_layers"])) == 2  # rotary and NoPE layers both
    result = audit("transformers.models.smollm3.modeling_smollm3:SmolLM3RotaryEmbedding", str(path))
    assert result.verdict == "equivalent" and result.regime is not None


def test_an_attention_that_scales_the_query_audits_the_rotation_and_says_so(tmp_path):
    # Ministral 3: HF's rotary module rotates; its attention then multiplies the query by
    # 1 + beta log(1 + floor(m / L)), which no rotary code contains: the rotation is audited, the scale named
    config = transformers.AutoConfig.for_model("ministral3", num_hidden_layers=2, **SMALL)
    path = tmp_path / "ministral3.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    result = audit("transformers.models.ministral3.modeling_ministral3:Ministral3RotaryEmbedding", str(path))
    assert result.verdict == "equivalent"
    rope = config.rope_parameters
    beta, length = sympy.nsimplify(rope["llama_4_scaling_beta"]), int(rope["original_max_position_embeddings"])
    assert ("HF's attention multiplies the rotated query by 1 + scaling_beta * log(1 + floor(m / scaling_length)) at "
            f"its position m (scaling_beta = {beta}, scaling_length = {length})") in result.note, result.note
    assert "not audited here" in result.summary()


def test_a_layer_type_list_longer_than_the_attention_layers_is_read_through_its_rope_tables(tmp_path):
    # Dory: layer_types lists an `mlp` entry after each attention layer; the entries with a rope table, in order,
    # are the attention layers, so each regime is called with its own layer type (a regime name is no layer type)
    config = transformers.AutoConfig.for_model("dory")
    path = tmp_path / "dory.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    result = audit("transformers.models.dory.modeling_dory:DoryRotaryEmbedding", str(path))
    assert result.verdict == "equivalent", result.summary()
    called = {r.regime: r.convention["call"] for r in (result, *result.other_regimes)}
    assert len(called) == 2 and {"layer_type='sliding_attention'", "layer_type='full_attention'"} == {
        next(part for part in ("layer_type='sliding_attention'", "layer_type='full_attention'") if part in call)
        for call in called.values()}


# OLMo 3: one rotary map for its sliding and its full layers, and a module that takes layer_type all the same
OLMO3_FULL_LAYERS_WRONG = '''
from transformers.models.olmo3.modeling_olmo3 import Olmo3RotaryEmbedding, apply_rotary_pos_emb  # noqa: F401


class Rotary(Olmo3RotaryEmbedding):
    def forward(self, x, position_ids, layer_type):
        cos, sin = super().forward(x, position_ids, layer_type)
        return (cos, -sin) if layer_type == "full_attention" else (cos, sin)
'''

ONE_MAP_NO_LAYER_TYPE = ONE_MAP.format(base=500000.0)  # OLMo 3's one map, by code taking no layer_type


@pytest.fixture(scope="module")
def olmo3(tmp_path_factory):
    config = transformers.AutoConfig.for_model("olmo3", num_hidden_layers=4, **SMALL)
    assert len(set(config.layer_types)) == 2
    path = tmp_path_factory.mktemp("olmo3") / "olmo3.json"
    path.write_text(config.to_json_string(), encoding="utf-8")
    return str(path)


def test_one_map_under_two_layer_types_is_audited_once_per_layer_type(olmo3):
    result = audit("transformers.models.olmo3.modeling_olmo3:Olmo3RotaryEmbedding", olmo3)
    assert result.verdict == "equivalent", result.summary()
    assert [r.layer_type for r in (result, *result.other_regimes)] == ["sliding_attention", "full_attention"]
    assert set(result.as_dict()["regimes"]) == {"sliding_attention", "full_attention"}


def test_a_fault_under_one_layer_type_is_named_under_it(olmo3, tmp_path):
    result = audit(f"{_code(tmp_path, OLMO3_FULL_LAYERS_WRONG)}:Rotary", olmo3)
    assert result.verdict == "differs"
    verdicts = {r.layer_type: r.own_verdict for r in (result, *result.other_regimes)}
    assert verdicts == {"sliding_attention": "equivalent", "full_attention": "differs"}, result.summary()
    assert "-- layer type full_attention" in result.summary()


def test_code_without_layer_type_is_the_one_map_of_the_regime(olmo3, tmp_path):
    result = audit(f"{_code(tmp_path, ONE_MAP_NO_LAYER_TYPE)}:rope", olmo3)
    assert result.verdict == "equivalent" and not result.other_regimes and result.layer_type is None


def test_a_layer_type_of_another_regime_is_refused(olmo3):
    with pytest.raises(InvalidInputError, match="layer types sliding_attention, full_attention"):
        audit("transformers.models.olmo3.modeling_olmo3:Olmo3RotaryEmbedding", olmo3, layer_type="chunked")
