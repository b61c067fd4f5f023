"""Model types with no row in the family table, read through transformers' own code.

Each model type of the table below is read from its transformers 5.24 config
class's defaults (``{"model_type": T}``): either it is accepted and the module
``symproof check --export`` writes rotates as HF's own rotary class and
``apply_rotary_pos_emb`` do (taken from the type's modeling module, not from
the recorder that identified it), with the NoPE layers HF's attention skips;
or it is refused in one line naming the model type.  Exactness is tested on
its own: a recorded map one ulp away from HF's reference is refused, naming the
layer.  A Gemma 3 config re-saved by transformers 5.24 is read with a note.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from symproof import VariantFileError
from symproof.models import _config, _hf_read
from symproof.models._check import export_model
from symproof.models._config import load_model
from symproof.models._model import attention_scaling

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ULP = 2.0**-24
POSITIONS = np.array([[0, 1, 2, 3, 7, 100, 2000, 4097, 40000]])


def _every_layer_rotates(config):
    return []


def _exaone4_nope(config):
    # Exaone4Attention: rotates when sliding_window is None or the layer is sliding
    if config.sliding_window is None:
        return []
    return [i for i, t in enumerate(config.layer_types) if t != "sliding_attention"]


def _mllama_nope(config):
    # MllamaCrossAttentionDecoderLayer: attends to the vision tokens, no rotary embedding
    return list(config.cross_attention_layers)


def _muse_spark_nope(config):
    # MuseSparkTextModel: a layer whose layer_rope_theta is 0 is given no position embeddings
    return [i for i, theta in enumerate(config.layer_rope_theta) if not theta]


def _beam_nope(config):
    # BeamConfig: rope_parameters by layer type, None for full_attention: those layers get no rotary embedding
    return [i for i, t in enumerate(config.layer_types) if config.rope_parameters.get(t) is None]


def _qwen3_next_nope(config):
    # Qwen3NextDecoderLayer: linear_attention layers are a gated delta net, no rotary embedding
    return [i for i, t in enumerate(config.layer_types) if t == "linear_attention"]


#: model type: the layers HF's attention applies no rotation to, derived from HF's config as its modeling
#: code does; None: the type is expected to be refused (its class defaults are not a model symproof can state)
TYPES = {
    "apertus": _every_layer_rotates,
    "bitnet": _every_layer_rotates,
    "dbrx": None,
    "emu3": _every_layer_rotates,  # Emu3TextConfig: no auto class; built by Emu3TextModel, its own model class
    "granite4_vision": _every_layer_rotates,  # the same, a composite config's text part
    "laguna": _every_layer_rotates,  # num_attention_heads_per_layer: head counts one per layer, shrunk
    "mllama": _mllama_nope,  # the same, and cross_attention_layers states the layers with no rotation
    "moshi": _every_layer_rotates,  # ffn_dim and the audio vocabulary: sizes shrunk by their names
    "ministral": _every_layer_rotates,  # head_dim left None by the class: hidden_size / num_attention_heads  # DbrxConfig's defaults: HF's own model fails to build (no rope_theta on its attn_config)
    "ernie4_5": _every_layer_rotates,
    "falcon_h1": _every_layer_rotates,  # the Mamba-2 mixer's head sizes made to agree again after shrinking
    "bamba": None,  # its class defaults state no attention layer (attn_layer_indices None): nothing rotates
    "glm4_moe_lite": _every_layer_rotates,  # apply_rotary_pos_emb_interleave: adjacent pairs out as [even | odd]
    "muse_spark_text": _muse_spark_nope,  # moe_hidden_size, an expert's MLP width, shrunk by its name
    "mistral_large4_text": None,  # LeRoPE: its rotary class has a learned alpha, the map depends on the weights
    "voxtral_realtime_encoder": _every_layer_rotates,  # an encoder: run on inputs_embeds, it takes no token ids
    "exaone4": _exaone4_nope,
    "gemma3n_text": _every_layer_rotates,  # the query and the key rotated by two calls recording the same map
    "deepseek_v32": _every_layer_rotates,  # the indexer's own rotation (a second call) is set aside, named
    "axk2": _every_layer_rotates,  # the same
    "longcat_flash": _every_layer_rotates,  # two attention sublayers per decoder layer: layer_idx 0..55 are the layers
    "glm4_moe": _every_layer_rotates,  # head 4096 // 96 = 42, partial 0.5: HF rotates 22 coordinates of exponent width 21
    "helium": _every_layer_rotates,
    "hunyuan_v1_dense": _every_layer_rotates,  # head_dim left None by the class, as ministral
    "gemma4_text": _every_layer_rotates,  # full layers: proportional rope, pairs (r, r + 256) of which r < 64 turn
    "embedding_gemma2_text": _every_layer_rotates,  # per_layer_config: head_dim 256 sliding, 512 full
    "dots3_note_text": _every_layer_rotates,  # per_layer_config: MLA head counts and qk_nope_head_dim per layer
    "olmoe": _every_layer_rotates,
    "seed_oss": _every_layer_rotates,
    "olmo3": _every_layer_rotates,
    "mistral3": _every_layer_rotates,
    "qwen3_next": _qwen3_next_nope,
    "ministral3": _every_layer_rotates,  # its attention then scales the query (llama_4_scaling_beta): apply rotates
    "mistral4": _every_layer_rotates,  # the same, multi-head latent attention
    "beam": _beam_nope,  # a rope table of None for a layer type: its layers are NoPE
    "nanochat": _every_layer_rotates,  # its rotate_half gives (x2, -x1): every pair turns by the negative angle
    "dots1": _every_layer_rotates,  # n_routed_experts left None by the class, which HF's code uses: filled, named
    # forwards that need an input besides token ids (_hf_read._EXTRA_INPUTS), given random values, named
    "t5gemma2": _every_layer_rotates,  # its decoder: the encoder's hidden states its cross-attention reads
    "voxtral_realtime_text": _every_layer_rotates,  # the time conditioning of its norms (t_cond)
    "deepseek_ocr2_encoder": _every_layer_rotates,  # inputs_embeds and how many of them are patches
    "blt_local_encoder": _every_layer_rotates,  # num_patches and each token's patch (patch_ids)
    "blt_local_decoder": _every_layer_rotates,  # the global model's patch states (patch_embeds)
    # models that number their tokens themselves: their rotary classes given the probed positions, named
    "dia_encoder": _every_layer_rotates,  # its forward takes no position ids
    "csm_depth_decoder_model": _every_layer_rotates,  # it takes them and gives its rotary class 0..T-1
}

#: the types whose rotary classes the reading had to give the probed positions
NUMBERED = {"dia_encoder", "csm_depth_decoder_model"}

#: the inputs each of those types' forward was given besides token ids or hidden states, as the output names them
EXTRA_INPUTS = {"t5gemma2": "encoder_hidden_states", "voxtral_realtime_text": "t_cond",
                "deepseek_ocr2_encoder": "num_patches", "blt_local_encoder": "num_patches, patch_ids, patch_embeds",
                "blt_local_decoder": "patch_embeds"}


#: what a refusal names, for the refused types whose reason this reading states itself
REFUSED_FOR = {
    "bamba": "no decoder layer called a rotary apply function",
    "mistral_large4_text": "HF's MistralLarge4TextRotaryEmbedding (alpha) has learned parameters",
}


#: text configs whose attention rotates by apply_rotary_pos_emb_interleave with no rope_interleave key (Dots3's text
#: attention calls it; the module's apply_rotary_pos_emb is its audio encoder's)
INTERLEAVED = {"Dots3NoteTextConfig", "DeepseekV32Config", "AXK2Config"}  # (the latter two: their MLA attention)


def _hf_rotate(text_config, x, positions, layer):
    """HF's rotation of ``x`` (B, T, D) in decoder layer ``layer`` by the type's own rotary class and
    apply_rotary_pos_emb (a rotary class with one table per layer type is given the layer's type)."""
    import inspect

    import torch

    modeling = importlib.import_module(type(text_config).__module__.replace(".configuration_", ".modeling_"))
    prefix = type(text_config).__name__[: -len("Config")]
    # the rotary class named after the text config, else the module's only one (Emu3TextConfig: Emu3RotaryEmbedding)
    named = [n for n in vars(modeling) if n.endswith("RotaryEmbedding")]
    rotary = getattr(modeling, f"{prefix}RotaryEmbedding" if f"{prefix}RotaryEmbedding" in named else named[0])
    rotary = rotary(text_config)
    q = torch.tensor(x, dtype=torch.float32)[:, None]
    kwargs = {}
    if "layer_type" in inspect.signature(rotary.forward).parameters:
        kwargs["layer_type"] = text_config.layer_types[layer]
    cos, sin = rotary(q, torch.tensor(positions), **kwargs)
    # multi-head latent attention with rope_interleave rotates by the interleaved apply function, as HF's attention does
    apply = modeling.apply_rotary_pos_emb_interleave if getattr(text_config, "rope_interleave", False) \
        or type(text_config).__name__ in INTERLEAVED or not hasattr(modeling, "apply_rotary_pos_emb") \
        else modeling.apply_rotary_pos_emb
    if "k" in inspect.signature(apply).parameters:
        rotated, _ = apply(q, q, cos, sin)
    else:  # one tensor per call (Gemma 3n rotates the query and the key by separate calls)
        rotated = apply(q, cos, sin)
    return rotated[:, 0].double().numpy()


def _module(model, folder, name):
    (path,) = export_model(model, folder, "numpy")
    spec = importlib.util.spec_from_file_location(f"through_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: types whose shrunk model takes over ~5 s to build and run on a busy machine
SLOW = {"granite4_vision", "dots3_note_text", "embedding_gemma2_text", "deepseek_v32", "axk2", "longcat_flash"}


@pytest.mark.parametrize("model_type", [pytest.param(t, marks=pytest.mark.slow) if t in SLOW else t
                                        for t in sorted(TYPES)])
def test_a_type_without_a_row_is_read_through_transformers_or_refused(model_type, tmp_path):
    expected_nope = TYPES[model_type]
    if expected_nope is None:
        with pytest.raises(VariantFileError) as info:
            load_model({"model_type": model_type})
        message = str(info.value)
        assert "\n" not in message and f"{model_type!r} has no row" in message and "transformers" in message
        assert REFUSED_FOR.get(model_type, "") in message
        return
    model = load_model({"model_type": model_type})
    text = transformers.AutoConfig.for_model(model_type).get_text_config(decoder=True)
    assert any(f"read through transformers {transformers.__version__}'s `" in note for note in model.notes)
    first = text.per_layer_config[0] if getattr(text, "per_layer_attributes", None) else text  # per-layer config
    if getattr(first, "qk_nope_head_dim", None) is not None:  # multi-head latent attention: which part is read
        assert any(f"the head read is the qk_rope_head_dim = {model.head_width} coordinates" in note
                   for note in model.notes)
    numbered = [note for note in model.notes if "numbers its tokens itself" in note]
    assert len(numbered) == (model_type in NUMBERED), numbered
    given = [note for note in model.notes if note.startswith("HF's forward needs ")]
    assert given == ([f"HF's forward needs {EXTRA_INPUTS[model_type]} besides the token ids: given random values "
                      "(inputs of the attention or norms, not of the rotary map; every rotary call was recorded and "
                      "compared)"] if model_type in EXTRA_INPUTS else [])
    nope = [i for r in model.regimes if r.variant is None for i in r.layers]
    assert nope == expected_nope(text)
    assert len(model.layer_regimes) == text.num_hidden_layers
    module = _module(model, tmp_path, model_type)
    rng = np.random.default_rng(7)
    for regime in model.regimes:
        if regime.variant is None:
            continue
        # a config may set the head width per layer (HF's per_layer_config): x of the regime's own width
        x = rng.standard_normal((1, POSITIONS.shape[1], model.width_of(regime.name))).astype(np.float32)
        theirs = _hf_rotate(text, x, POSITIONS, regime.layers[0])
        ours = module.apply(x.astype(np.float64), POSITIONS, **({"regime": regime.name} if not model.plain else {}))
        w = np.array([float(v) for v in regime.variant.frequencies_digits()])
        scale = float(attention_scaling(regime.variant))
        # 8 ulps of the largest float32 angle of each position, and 8 ulps of the values
        bound = scale * np.max(np.abs(x)) * (16 * POSITIONS[0, :, None] * np.abs(w).max() + 16) * ULP
        assert np.all(np.abs(ours - theirs) <= bound), f"{model_type} {regime.name}"


#: rows whose apply rotates cos's width, each with an odd int(head_dim * factor) = int(42 * 0.5) = 21: HF's 11
#: frequencies theta^(-2r/21) rotate 22 coordinates; a row slicing int(head_dim * factor) itself (phi) is refused
ODD_WIDTH = {
    "glm4": {"hidden_size": 168, "num_attention_heads": 4, "head_dim": 42, "partial_rotary_factor": 0.5},
    "gpt_neox": {"hidden_size": 168, "num_attention_heads": 4, "rotary_pct": 0.5},
    "phi3": {"hidden_size": 168, "num_attention_heads": 4, "partial_rotary_factor": 0.5},
    "phi": {"hidden_size": 168, "num_attention_heads": 4, "partial_rotary_factor": 0.5},
}


@pytest.mark.parametrize("model_type", sorted(ODD_WIDTH))
def test_an_odd_partial_width_rotates_as_hf_does(model_type, tmp_path):
    config = {"model_type": model_type, "num_hidden_layers": 1, "max_position_embeddings": 65536,
              **ODD_WIDTH[model_type]}
    if model_type == "phi":  # its attention slices query_states[..., :rotary_ndims] = 21: not cos's width
        with pytest.raises(VariantFileError, match="gives a rotated width of 21 of head_dim 42; expected an even"):
            load_model(config)
        return
    model = load_model(config)
    (regime,) = model.regimes
    assert regime.variant.rotated_width == 22 and regime.variant.freq_denominator == 21
    text = transformers.AutoConfig.for_model(**config)
    x = np.random.default_rng(3).standard_normal((1, POSITIONS.shape[1], 42)).astype(np.float32)
    theirs = _hf_rotate(text, x, POSITIONS, 0)
    ours = _module(model, tmp_path, model_type).apply(x.astype(np.float64), POSITIONS)
    bound = np.max(np.abs(x)) * (16 * POSITIONS[0, :, None] + 16) * ULP
    assert np.all(np.abs(ours - theirs) <= bound) and np.array_equal(ours[..., 22:], x[..., 22:].astype(np.float64))
    with pytest.raises(VariantFileError, match="' with an odd rotated width 21: HF then rotates 22 coordinates"):
        load_model({**config, "rope_scaling": {"rope_type": "yarn", "factor": 2.0,
                                               "original_max_position_embeddings": 4096}})


def test_an_identification_one_ulp_off_is_refused_naming_the_layer(monkeypatch):
    original = _hf_read._reference

    def nudged(*args, **kwargs):
        cos, sin, partial = original(*args, **kwargs)
        cos = cos.clone()
        cos[4, 3] = np.nextafter(float(cos[4, 3]), 2.0)
        return cos, sin, partial

    monkeypatch.setattr(_hf_read, "_reference", nudged)
    monkeypatch.setattr(_config, "_IDENTIFIED", {})  # identified afresh, not the process's earlier reading
    with pytest.raises(VariantFileError, match=r"layer 0: pair 3 at position 7: cos .* is not HF's reference") as info:
        load_model({"model_type": "helium", "num_hidden_layers": 2})
    assert "\n" not in str(info.value)


def test_a_block_that_is_not_a_rotation_is_refused():
    import torch

    def fail(what):
        return VariantFileError(what)

    maps = torch.zeros((3, 4, 4), dtype=torch.float64)
    for a, b in ((0, 2), (1, 3)):  # half pairs of a width-4 head, each rotated by 45 degrees (scaled)
        maps[:, a, a] = maps[:, b, b] = maps[:, b, a] = 0.5
        maps[:, a, b] = -0.5
    assert _hf_read._structure(maps, 5, fail) == (4, "half", None)
    # the same rotation with its output rows written out as [even | odd] (apply_rotary_pos_emb_interleave):
    # adjacent pairs, the order given back
    interleaved = maps[:, [0, 2, 1, 3], :][:, :, [0, 2, 1, 3]]
    assert _hf_read._structure(interleaved[:, [0, 2, 1, 3], :], 5, fail) == (4, "adjacent", (0, 2, 1, 3))
    maps[:, 2, 0] = 0.25  # c equal, but s and -s differ
    with pytest.raises(VariantFileError, match="layer 5: the block of coordinates 0, 2 is not a rotation"):
        _hf_read._structure(maps, 5, fail)
    maps[:, 2, 0] = 0.5
    proportional = maps.clone()
    proportional[:, 1, 1] = proportional[:, 3, 3] = 1.0
    proportional[:, 3, 1] = proportional[:, 1, 3] = 0.0
    # 1 and 3 copied, 0 and 2 turning: half pairs of the whole head of which the first turns (HF's proportional
    # rope), read as the whole head with pair 1 at frequency 0
    assert _hf_read._structure(proportional, 5, fail) == (4, "half", None)
    maps[:, 0, 0] = maps[:, 2, 2] = 1.0
    maps[:, 2, 0] = maps[:, 0, 2] = 0.0  # 0 and 2 copied: the moving coordinates 1, 3 are not a block at the start
    with pytest.raises(VariantFileError, match=r"layer 5: the coordinates that move \(1, 3\) are not an even block"):
        _hf_read._structure(maps, 5, fail)


@pytest.mark.parametrize("change, words", [
    ({"rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}},
     "layer 0: rope_type 'dynamic' depends on the call length"),
])
def test_what_one_call_cannot_identify_is_refused(change, words):
    with pytest.raises(VariantFileError, match=words):
        load_model({"model_type": "helium", "num_hidden_layers": 2, **change})


def test_a_size_the_class_defaults_leave_none_is_filled_and_named():
    # Dots1Config leaves the expert counts None and Dots1's MoE layers use them: the build fails on the defaults
    model = load_model({"model_type": "dots1", "num_hidden_layers": 2})
    (note,) = [n for n in model.notes if n.startswith("filled to build the model: ")]
    assert "n_routed_experts = 4" in note and "a size that never enters the position map" in note


def test_a_type_that_is_not_rotary_is_still_refused_as_no_family():
    with pytest.raises(VariantFileError, match=r"key 'model_type': 't5' has no row.*supported: .*no rope_parameters"):
        load_model({"model_type": "t5"})


def test_the_identified_row_names_the_class_and_pairing():
    identified = _hf_read.identify({"model_type": "helium", "num_hidden_layers": 2}, "<config>", "helium")
    row = _hf_read.identified_row(identified)
    assert row.startswith('    "helium": _row("HeliumModel", pairing="adjacent"') and "rotated width 128" in row
    # a rotation by the negative angle is read (frequencies negated) but no row field states it: said, not printed
    negated = _hf_read.identify({"model_type": "nanochat", "num_hidden_layers": 2}, "<config>", "nanochat")
    assert [m.negated for m in negated.layers] == [True, True]
    assert _hf_read.identified_row(negated) == ("    # nanochat: every pair turns by the negative angle, which no "
                                                "field of a row states")
    # a proportional table is read by a row that rotates the whole head (no partial key); a query scale is no row's
    gemma4 = _hf_read.identified_row(_hf_read.identify({"model_type": "gemma4_text", "num_hidden_layers": 6},
                                                       "<config>", "gemma4_text"))
    assert '    "gemma4_text": _row("Gemma4TextModel", pairing="half"),  # rotated width 512 of 512' in gemma4
    scaled = _hf_read.identify(_ministral3().to_dict(), "<config>", "ministral3")
    assert [m.query_scale for m in scaled.layers] == [(0.1, 16384)]
    assert "its attention scales the rotated query (llama_4_scaling_beta)" in _hf_read.identified_row(scaled)


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_gemma3_config_resaved_by_transformers_checks(tmp_path, wrapped):
    text = transformers.Gemma3TextConfig(num_hidden_layers=8)
    config = transformers.Gemma3Config(text_config=text.to_dict()) if wrapped else text
    config.save_pretrained(tmp_path)
    saved = json.loads((tmp_path / "config.json").read_text())
    inner = saved["text_config"] if wrapped else saved
    assert "_sliding_window_pattern" in inner  # what transformers writes
    model = load_model(tmp_path / "config.json")
    assert [model.layer_regimes[i] for i in range(8)] == text.layer_types
    assert any("_sliding_window_pattern = 6: written by HF's Gemma3TextConfig" in n for n in model.notes)


def test_the_cli_says_where_the_map_came_from(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "olmo3", "num_hidden_layers": 2}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "symproof", "check", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"read through transformers {transformers.__version__}'s `Olmo3Model`" in done.stdout
    assert "relative       yes    proved" in done.stdout


def test_a_head_width_set_per_layer_is_read_per_regime(tmp_path):
    # EmbeddingGemma 2's per_layer_config gives its full-attention layers head_dim 512, the others 256: each regime
    # is read at its layers' own width, as HF's per_layer_config[layer] gives it, and apply takes that width
    config = {"model_type": "embedding_gemma2_text", "num_hidden_layers": 6}
    model = load_model(config)
    text = transformers.AutoConfig.for_model(**config).get_text_config(decoder=True)
    widths = dict(model.regime_widths)
    assert len(set(widths.values())) == 2
    for regime in model.regimes:
        assert {text.per_layer_config[i].head_dim for i in regime.layers} == {model.width_of(regime.name)}
        assert regime.variant.width == model.width_of(regime.name)
    assert any(n.startswith("head width per layer (HF's per_layer_config): ") for n in model.notes)
    module = _module(model, tmp_path, "embedding_gemma2_widths")
    assert module.HEAD_WIDTHS == widths
    narrow, wide = sorted(widths, key=widths.get)
    with pytest.raises(ValueError, match=rf"x must end with HEAD_WIDTHS\['{wide}'\] = {widths[wide]} coordinates"):
        module.apply(np.zeros((1, 3, widths[narrow])), np.arange(3)[None], regime=wide)
    x = np.random.default_rng(3).standard_normal((1, POSITIONS.shape[1], widths[wide])).astype(np.float32)
    theirs = _hf_rotate(text, x, POSITIONS, model.regime(wide).layers[0])
    ours = module.apply(x.astype(np.float64), POSITIONS, regime=wide)
    w = np.array([float(v) for v in model.regime(wide).variant.frequencies_digits()])
    bound = np.max(np.abs(x)) * (16 * POSITIONS[0, :, None] * np.abs(w).max() + 16) * ULP  # 8 ulps of angle and value
    assert np.all(np.abs(ours - theirs) <= bound) and np.max(np.abs(ours - x)) > 0.1


# -- an attention that scales the rotated query (Ministral 3, Mistral 4: llama_4_scaling_beta) -------------------


def _ministral3(**changes):
    return transformers.AutoConfig.for_model(
        "ministral3", num_hidden_layers=1, hidden_size=64, num_attention_heads=2, num_key_value_heads=2, head_dim=32,
        intermediate_size=32, vocab_size=64, **changes)


def test_the_query_the_attention_sees_is_the_rotation_times_the_exported_query_scale(tmp_path, monkeypatch):
    import torch
    from transformers.models.ministral3 import modeling_ministral3 as modeling

    config = _ministral3()
    config._attn_implementation = "eager"
    with torch.random.fork_rng():
        torch.manual_seed(0)
        hf = transformers.AutoModel.from_config(config, dtype=torch.float64).eval()
    seen = {}
    hf.layers[0].self_attn.q_proj.register_forward_hook(lambda _m, _a, out: seen.setdefault("projected", out))
    original = modeling.eager_attention_forward

    def attention(module, query, *args, **kwargs):
        seen["query"] = query
        return original(module, query, *args, **kwargs)

    monkeypatch.setattr(modeling, "eager_attention_forward", attention)
    positions = np.array([[0, 1, 16383, 16384, 40000, 99999]])
    with torch.no_grad():
        hf(input_ids=torch.arange(1, 7).reshape(1, 6), position_ids=torch.tensor(positions), use_cache=False)
    model = load_model(config.to_dict())
    (regime,) = model.regimes
    assert regime.attention is not None and any("llama_4_scaling_beta = 0.1" in n for n in regime.variant.notes)
    module = _module(model, tmp_path, "ministral3_scaled")
    projected = seen["projected"].reshape(1, 6, 2, 32).numpy()
    theirs = seen["query"].numpy()  # (batch, heads, positions, head width)
    scale = module.query_scale(positions)
    assert scale[0, 0] == 1 and scale[0, 3] > 1  # 1 before original_max_position_embeddings, larger from it on
    w = np.array([float(v) for v in regime.variant.frequencies_digits()])
    for head in range(2):
        ours = scale[..., None] * module.apply(projected[:, :, head], positions)
        bound = np.max(np.abs(projected)) * (16 * positions[0, :, None] * np.abs(w).max() + 16) * ULP * 2
        assert np.all(np.abs(ours - theirs[:, head]) <= bound)
    for bad in ([-1], [0.5], [np.inf], [np.nan]):
        with pytest.raises(ValueError, match="integer positions >= 0"):
            module.query_scale(np.array(bad))
    (path,) = export_model(model, tmp_path / "torch", "torch")
    spec = importlib.util.spec_from_file_location("ministral3_scaled_torch", path)
    in_torch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(in_torch)
    assert np.array_equal(in_torch.query_scale(torch.tensor(positions)).numpy(), scale)
    for bad in ([0.5], [float("inf")], [float("nan")]):
        with pytest.raises(ValueError, match="integer positions >= 0"):
            in_torch.query_scale(torch.tensor(bad))


def test_the_scores_the_attention_computes_are_what_is_checked():
    from symproof.models._check import check_model

    model = load_model(_ministral3().to_dict())
    (regime, results), = check_model(model, steps=None)
    verdicts = {r.id.split(".")[-1]: r for r in results}
    # the rotation alone is relative; the scores are not once the query is scaled from position 16384 on
    assert verdicts["relative"].status == "refuted" and verdicts["norm"].status == "refuted"
    witness = verdicts["relative"].witnesses[0]  # as printed: "{i: 16384, j: 16384, ...}"
    assert max(int(v) for k, v in re.findall(r"\b([ij]): (\d+)", witness)) >= 16384


def test_a_query_scale_key_no_attention_reads_is_refused():
    config = {"model_type": "helium", "num_hidden_layers": 2,
              "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "llama_4_scaling_beta": 0.1,
                                  "original_max_position_embeddings": 4096}}
    with pytest.raises(VariantFileError) as info:
        load_model(config)
    assert "layer 0: the rope table sets llama_4_scaling_beta = 0.1 but the layer's attention does not call HF's " \
           "get_llama_4_attn_scale" in str(info.value)


# -- a layer whose sparse-attention indexer rotates its own queries and keys (DeepSeek-V3.2) ----------------------

#: (callers of a layer's calls, which call is kept or None: the calls are left for the refusal)
CALLERS = [
    (["DeepseekV32Indexer", "DeepseekV32Attention"], 1),
    (["DeepseekV32Attention", "DeepseekV32Indexer"], 0),
    (["DeepseekV32Attention", "DeepseekV32Attention"], None),  # two attention calls that differ: not chosen between
    (["DeepseekV32Attention", "SomethingElse"], None),  # a second rotation that is no indexer's
    (["DeepseekV32Indexer", "DeepseekV32Indexer"], None),  # no attention call
    (["DeepseekV32Attention"], None),  # fewer callers than calls: not read
]


@pytest.mark.parametrize("callers, kept", CALLERS)
def test_only_an_indexer_rotation_is_set_aside_and_it_is_named(callers, kept):
    calls = [("apply_rotary_pos_emb", "indexer map"), ("apply_rotary_pos_emb_interleave", "attention map")]
    if kept == 0:
        calls = calls[::-1]
    notes = []
    chosen = _hf_read._attention_call(calls, callers, 3, notes)
    if kept is None:
        assert chosen == calls and notes == []
        return
    assert chosen == [calls[kept]]
    (note,) = notes
    assert note.startswith("DeepseekV32Indexer (apply_rotary_pos_emb) rotates its own queries and keys")
    assert note.endswith("the attention's rotation (apply_rotary_pos_emb_interleave, from DeepseekV32Attention)")


def test_deepseek_v32_reads_its_attention_rotation_and_names_the_indexer():
    model = load_model({"model_type": "deepseek_v32", "num_hidden_layers": 2})
    assert model.output_order is not None  # the attention's interleaved rotation, not the indexer's half pairs
    assert any(note.startswith("DeepseekV32Indexer (apply_rotary_pos_emb) rotates its own queries and keys")
               for note in model.notes)


def test_compare_reads_a_config_s_scores_with_its_query_scale(tmp_path):
    from symproof._face._compare_command import load_rotary_map
    from symproof.variants._compare import compare_variants

    paths = []
    for beta in (0.1, 0.2):
        config = _ministral3().to_dict()
        config["rope_parameters"] = dict(config["rope_parameters"], llama_4_scaling_beta=beta)
        path = tmp_path / f"beta-{beta}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        paths.append(str(path))
    left, right = (load_rotary_map(p) for p in paths)
    assert left.query_scale is not None  # the attention's scores, not the rotation alone
    comparison = compare_variants(left, right)
    assert comparison.verdict == "differ" and "query side: the 2x2 maps differ at m = 16384" in comparison.reason
