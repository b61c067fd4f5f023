"""Every HF transformers 5.24 RoPE family the reader's table has, against HF's own rotary modules.

For each shipped config (``derivations/configs``, one published config per
family at least) the module exported by ``symproof check CONFIG --export``
(numpy) is compared, layer by layer, with HF's own rotary embedding class and
the family's own ``apply_rotary_pos_emb`` (``conftest.hf_model_rotate``):

- every decoder layer, through ``apply(x, positions, regime=LAYER_REGIMES[i])``,
  at positions 0..2000: exact to 1e-6 at position 1, within float32 angle error
  elsewhere (HF's angles are float32 products);
- the first layer of each regime also at positions up to 40000;
- M-RoPE (Qwen2-VL) with three different t, h, w position rows.

The never-ignore rule is tested for every rope key of every family: a key
another family reads, added to a config of a family whose row does not read
it, is a one-line refusal naming the key (exit 2 from the CLI).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from importlib import resources

import numpy as np
import pytest

from symproof import VariantFileError
from symproof.models._families import FAMILIES, ROPE_LIKE, TEXT_CONFIGS
from symproof.models._check import export_model
from symproof.models._config import load_model, load_model_config
from symproof.models._model import attention_scaling

ULP = 2.0**-24
SHORT = np.array([[0, 1, 2, 3, 7, 100, 2000]])
LONG = np.array([[1, 4095, 4096, 4097, 8191, 16384, 32767, 40000]])


def shipped() -> dict:
    folder = resources.files("symproof._derivations") / "configs"
    return {p.name[:-5]: str(p) for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".json")}


def _json(name):
    with open(shipped()[name], encoding="utf-8") as handle:
        return json.load(handle)


def _text_type(config):
    if config["model_type"] in TEXT_CONFIGS:
        text = config.get("text_config") or {}
        return text.get("model_type", TEXT_CONFIGS[config["model_type"]][0])
    return config["model_type"]


#: families with no shipped config, and why
UNSHIPPED = {"phimoe": "its published config (Phi-3.5-MoE) uses longrope with short_mscale / long_mscale, refused",
             "qwen2_vl_text": "shipped as its wrapper qwen2_vl", "qwen2_5_vl_text": "shipped as qwen2_5_vl"}


def test_every_family_of_the_table_has_a_shipped_config():
    types = {_text_type(_json(name)) for name in shipped()}
    assert set(FAMILIES) - set(UNSHIPPED) <= types
    assert types <= set(FAMILIES)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            model = load_model(shipped()[name])
            (path,) = export_model(model, tmp_path_factory.mktemp(name), "numpy")
            spec = importlib.util.spec_from_file_location(f"exported_{name.replace('-', '_').replace('.', '_')}",
                                                          path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            cache[name] = model, module
        return cache[name]

    return get


def _bound(model, regime, x, positions):
    """Per coordinate: 8 ulps of each pair's float32 angle plus 8 ulps (times pair size and scaling)."""
    from symproof.encodings import pair_indices

    variant = model.regime(regime).variant
    bound = np.full(x.shape, 8 * ULP * np.max(np.abs(x)))
    if variant is None:
        return bound
    seq_len = int(positions.max()) + 1
    w = np.array([float(v) for v in variant.frequencies_digits(seq_len=seq_len)])
    scale = float(attention_scaling(variant))
    block = np.zeros(x.shape[:-1] + (variant.width,))
    xb = x[..., model.offset:model.offset + variant.width]
    for r, (a, b) in enumerate(pair_indices(variant.rotated_width, variant.pairing)):
        size = np.abs(xb[..., a]) + np.abs(xb[..., b])
        block[..., a] = block[..., b] = scale * size * (8 * np.abs(positions * w[r]) + 8) * ULP
    block[..., variant.rotated_width:] = 8 * ULP * np.max(np.abs(x))
    if model.output_order is not None:
        block = block[..., list(model.output_order)]
    bound[..., model.offset:model.offset + variant.width] = np.maximum(
        block, bound[..., model.offset:model.offset + variant.width])
    return bound


def _compare(hf_model, config, model, module, layer, positions, rng):
    regime = module.LAYER_REGIMES[layer]
    x = rng.standard_normal((1, positions.shape[-1], module.HEAD_WIDTH)).astype(np.float32)
    theirs = hf_model.rotate(config, x, positions, layer)
    ours = module.apply(x.astype(np.float64), positions, regime=regime)
    at_one = (positions == 1) if positions.ndim == 2 else np.all(positions == 1, axis=0)
    if at_one.any():
        assert np.max(np.abs(ours[at_one] - theirs[at_one])) <= 1e-6, f"layer {layer} ({regime}) at position 1"
    plain = positions if positions.ndim == 2 else positions.max(axis=0)
    gap = np.abs(ours - theirs) - _bound(model, regime, x.astype(np.float64), plain)
    assert np.max(gap) <= 0, f"layer {layer} ({regime}): beyond float32-angle accuracy at " \
                             f"{np.unravel_index(np.argmax(gap), gap.shape)}"


@pytest.mark.parametrize("name", sorted(shipped()))
def test_every_layer_rotates_as_hf(hf_model, exported, name):
    config = _json(name)
    model, module = exported(name)
    hcfg, _ = hf_model.config(config)
    count = getattr(hcfg, "num_hidden_layers", None) or len(module.LAYER_REGIMES)
    assert len(module.LAYER_REGIMES) == count and module.REGIMES == model.names
    rng = np.random.default_rng(11)
    first = {}
    for layer in range(count):
        first.setdefault(module.LAYER_REGIMES[layer], layer)
        _compare(hf_model, config, model, module, layer, SHORT, rng)
    for layer in first.values():
        _compare(hf_model, config, model, module, layer, LONG, rng)


@pytest.mark.parametrize("name", [n for n in sorted(shipped()) if _text_type(_json(n)) in ("qwen2_vl_text",
                                                                                            "qwen2_5_vl_text")])
def test_mrope_positions_follow_their_bands(hf_model, exported, name):
    config = _json(name)
    model, module = exported(name)
    rng = np.random.default_rng(5)
    t = np.array([0, 1, 5, 5, 5, 9, 300])
    positions = np.stack([t, t + np.array([0, 0, 1, 2, 3, 0, 7]), t + np.array([0, 0, 4, 1, 0, 2, 11])])[:, None]
    _compare(hf_model, config, model, module, 0, positions, rng)
    # text positions: the three rows equal, the same as plain (B, T) positions
    x = rng.standard_normal((1, 7, module.HEAD_WIDTH))
    text = np.stack([t, t, t])[:, None]
    np.testing.assert_array_equal(module.apply(x, text), module.apply(x, t[None]))
    assert any("pairs 0..15 follow the t position" in note for note in model.notes)


# -- never ignore a rope key ------------------------------------------------------------------------------

#: a rope key of some family and a value of the shape that family reads
ROPE_KEYS = {
    "rope_theta": 20000.0, "rotary_emb_base": 20000.0, "rope_local_base_freq": 20000.0,
    "global_rope_theta": 20000.0, "local_rope_theta": 20000.0, "partial_rotary_factor": 0.5, "rotary_pct": 0.5,
    "rotary_dim": 16, "qk_rope_head_dim": 32, "qk_nope_head_dim": 32, "rope_interleave": False,
    "no_rope_layers": [1, 0], "no_rope_layer_interval": 2, "sliding_window_pattern": 2,
    "global_attn_every_n_layers": 2, "layer_types": ["full_attention", "full_attention"],
    "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1, "alibi": False,
    "position_embedding_type": "rotary", "mrope_section": [2, 3, 3], "rotary": True, "n_positions": 2048,
    "rope_type": "default", "use_rope": True, "nope_layer_interval": 2,
    "max_position_embeddings": 4096, "original_max_position_embeddings": 2048,
}


def _base_config(model_type):
    config = {"model_type": model_type, "hidden_size": 256, "num_attention_heads": 8, "num_hidden_layers": 2,
              "max_position_embeddings": 4096}
    if model_type == "gptj":
        config = {"model_type": "gptj", "n_embd": 256, "n_head": 8, "n_layer": 2, "rotary_dim": 16}
    return config


def _reads(model_type):
    from symproof.models._config import _reads

    return _reads(FAMILIES[model_type])


def test_the_key_list_covers_every_rope_key_a_row_reads():
    # the rope tables themselves are read by every row (GPT-J: refused unless default)
    read = {k for family in FAMILIES.values() for k in _reads_of(family) if ROPE_LIKE.search(k)}
    read -= {"rope_scaling", "rope_parameters"}
    assert read <= set(ROPE_KEYS), sorted(read - set(ROPE_KEYS))
    assert all(ROPE_LIKE.search(k) for k in ROPE_KEYS)


def _reads_of(family):
    from symproof.models._config import _reads

    return _reads(family)


CASES = [(t, k) for t in sorted(FAMILIES) for k in sorted(ROPE_KEYS) if k not in _reads(t)]


@pytest.mark.parametrize("model_type, key", CASES, ids=[f"{t}-{k}" for t, k in CASES])
def test_a_rope_key_the_row_does_not_read_is_refused(model_type, key):
    config = {**_base_config(model_type), key: ROPE_KEYS[key]}
    with pytest.raises(VariantFileError) as info:
        load_model(config)
    message = str(info.value)
    assert f"key '{key}'" in message and "refused rather than ignored" in message and "\n" not in message


def test_the_cli_refuses_an_unread_rope_key_in_one_line(tmp_path):
    """A SmolLM3 config labelled llama: no_rope_layers would make every fourth layer NoPE."""
    config = {**_json("smollm3-3b"), "model_type": "llama"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "symproof", "check", str(path)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "key 'no_rope_layer" in done.stderr


@pytest.mark.parametrize("label", ["gemma", "gemma2"])
def test_a_gemma3_config_under_an_older_label_is_refused(label):
    config = {**_json("gemma-3-1b"), "model_type": label}
    with pytest.raises(VariantFileError, match="rope_local_base_freq|sliding_window_pattern"):
        load_model(config)


def test_an_unread_key_inside_the_rope_table_is_refused():
    config = {**_base_config("llama"), "rope_scaling": {"rope_type": "linear", "factor": 2.0, "beta_fast": 4}}
    with pytest.raises(VariantFileError, match=r"key 'rope_scaling.beta_fast'.*refused rather than ignored"):
        load_model(config)


@pytest.mark.parametrize("rope_type, table", [
    ("yarn", {"factor": 16.0, "original_max_position_embeddings": 16384, "beta_fast": 32.0, "beta_slow": 1.0}),
    ("default", {}),
])
def test_a_key_the_attention_reads_outside_the_rotation_is_refused_with_what_it_does(rope_type, table):
    """Ministral 3's llama_4_scaling_beta: not a rope parameter; Ministral 3's attention scales the query with it,
    Llama's does not: a Llama config setting it is refused, naming what it would do and where."""
    config = {**_base_config("llama"), "rope_parameters": {"rope_type": rope_type, "rope_theta": 1e6, **table,
                                                           "llama_4_scaling_beta": 0.1}}
    with pytest.raises(VariantFileError) as info:
        load_model(config)
    message = str(info.value)
    assert "key 'rope_parameters.llama_4_scaling_beta'" in message and "\n" not in message
    assert "1 + beta log(1 + floor(m / original_max_position_embeddings))" in message
    assert "not in HF's llama; refused" in message


# -- the regimes ------------------------------------------------------------------------------------------

REGIMES = {
    # name: (REGIMES, layers of each regime)
    "gemma-3-1b": (("sliding_attention", "full_attention"),
                   {"full_attention": (5, 11, 17, 23)}),
    "command-r7b": (("sliding_attention", "full_attention"), {"full_attention": (3, 7, 11, 15, 19, 23, 27, 31)}),
    "modernbert-base": (("sliding_attention", "full_attention"), {"full_attention": (0, 3, 6, 9, 12, 15, 18, 21)}),
    "smollm3-3b": (("rope", "nope"), {"nope": tuple(range(3, 36, 4))}),
    "llama-4-scout-17b-16e": (("rope", "nope"), {"nope": tuple(range(3, 48, 4))}),
    "gemma-2-9b": (("rope",), {}), "gpt-oss-20b": (("rope",), {}),
}


@pytest.mark.parametrize("name", sorted(REGIMES))
def test_layers_map_to_regimes_as_hf_derives_them(name):
    model = load_model(shipped()[name])
    names, layers = REGIMES[name]
    assert model.names == names
    for regime, expected in layers.items():
        assert model.regime(regime).layers == expected
    assert sorted(i for r in model.regimes for i in r.layers) == list(range(len(model.layer_regimes)))


def test_nope_regimes_are_the_identity_and_regime_is_required(exported):
    model, module = exported("smollm3-3b")
    x = np.random.default_rng(1).standard_normal((2, 5, module.HEAD_WIDTH))
    np.testing.assert_array_equal(module.apply(x, np.arange(5), regime="nope"), x)
    with pytest.raises(ValueError, match="regime is required"):
        module.apply(x, np.arange(5))
    with pytest.raises(ValueError, match="unknown regime"):
        module.apply(x, np.arange(5), regime="sliding")
    with pytest.raises(VariantFileError, match="expected regime= one of them"):
        load_model_config(shipped()["smollm3-3b"])
    with pytest.raises(VariantFileError, match="no positional encoding"):
        load_model_config(shipped()["smollm3-3b"], regime="nope")
    assert load_model_config(shipped()["smollm3-3b"], regime="rope").rotated_width == 128


def test_the_check_reports_each_regime(tmp_path):
    done = subprocess.run([sys.executable, "-m", "symproof", "check", shipped()["gemma-3-1b"], "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [r["regime"] for r in doc["regimes"]] == ["sliding_attention", "full_attention"]
    assert doc["regimes"][1]["layers"] == [5, 11, 17, 23]
    for regime in doc["regimes"]:
        assert {p["property"]: p["verdict"] for p in regime["properties"]}["relative"] == "proved"


# -- the zoo scan -----------------------------------------------------------------------------------------


def test_a_scan_prints_one_line_per_config_and_a_summary(tmp_path):
    cache = tmp_path / "hub"
    for k, name in enumerate(["gemma-3-1b", "aya-23-8b"]):
        snapshot = cache / f"models--org--m{k}" / "snapshots" / "abc"
        snapshot.mkdir(parents=True)
        (snapshot / "config.json").write_text(json.dumps(_json(name)), encoding="utf-8")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**_json("smollm3-3b"), "model_type": "llama"}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "symproof", "check", str(cache), str(bad), "--jobs", "2"],
                          capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 4, done.stdout + done.stderr
    # every regime keeps all but decay: RoFormer's bound rises for any non-zero frequencies (test_decay.py)
    assert "gemma3_text, 2 regime(s): sliding_attention: loses decay; full_attention: loses decay" in lines[0]
    assert "[0] cohere, 1 regime(s)" in lines[1]
    assert "[2] refused:" in lines[2] and "no_rope_layer" in lines[2]
    assert lines[3].startswith("3 config(s): 2 checked, 0 with a property unknown or a kernel mismatch, 1 refused")


def test_a_scan_refuses_export_and_bad_jobs(tmp_path):
    for extra, words in ((["--export", str(tmp_path / "out")], "--export takes one file"),
                         (["--jobs", "0"], "--jobs: expected 1 to 256")):
        done = subprocess.run([sys.executable, "-m", "symproof", "check", shipped()["aya-23-8b"],
                               shipped()["olmo-7b"], *extra], capture_output=True, text=True)
        assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _with_text_config(name, **changes):
    config = _json(name)
    text = {k: v for k, v in config.items() if k not in ("vision_config", "architectures", "model_type")}
    text.update(model_type=config["model_type"] + "_text",
                rope_scaling={"type": "default", "rope_type": "default", "mrope_section": [16, 24, 24]})
    return {**config, "text_config": text, **changes}


def test_a_multimodal_config_is_read_through_its_text_config():
    # the top-level copy says "mrope", text_config "default": the same table as HF resolves it
    model = load_model(_with_text_config("qwen2.5-vl-7b"))
    assert model.model_type == "qwen2_5_vl_text" and model.mrope_section == (16, 24, 24)
    with pytest.raises(VariantFileError, match=r"key 'rope_theta': differs from text_config.rope_theta"):
        load_model(_with_text_config("qwen2.5-vl-7b", rope_theta=5.0))
    with pytest.raises(VariantFileError, match=r"key 'text_config.rope_scaling.beta_fast'"):
        config = _json("gemma-3-4b")
        load_model({**config, "text_config": {**config["text_config"],
                                              "rope_scaling": {"rope_type": "linear", "factor": 8.0,
                                                               "beta_fast": 2}}})


@pytest.mark.parametrize("model_type", ["gemma3", "llama4"])
def test_a_wrapper_without_text_config_is_its_text_class_defaults(hf_model, tmp_path, model_type):
    # HF's Gemma3Config / Llama4Config build the text model from the text config class's defaults
    config = {"model_type": model_type}
    model = load_model(config)
    assert any(note.startswith(f"no text_config: HF's {model_type} builds its text model from the "
                               f"{model_type}_text config class's defaults (hidden_size ") for note in model.notes)
    module = _exported_module(model, tmp_path, f"defaults_{model_type}")
    rng = np.random.default_rng(5)
    for layer in _first_layers(module).values():
        _compare(hf_model, config, model, module, layer, SHORT, rng)
        _compare(hf_model, config, model, module, layer, LONG, rng)


def _exported_module(model, folder, name):
    """The numpy module ``symproof check --export`` writes for ``model``, imported."""
    (path,) = export_model(model, folder, "numpy")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first_layers(module) -> dict:
    """``{regime: its first layer}`` of an exported model module."""
    first: dict = {}
    for layer, regime in enumerate(module.LAYER_REGIMES):
        first.setdefault(regime, layer)
    return first


# -- every key a row reads changes the map as it does in HF -------------------------------------------------

KEY_VARIATIONS = {
    "mistral-head_dim": ("mistral-nemo-12b", {"head_dim": 64}),
    "mixtral-default-theta": ("mixtral-8x7b", {"rope_theta": None}),
    "cohere-theta-and-yarn": ("aya-23-8b", {"rope_theta": 12345.0, "rope_scaling": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}}),
    "glm-partial": ("glm-4-9b-chat-hf", {"partial_rotary_factor": 0.25}),
    "glm-partial-default": ("glm-4-9b-0414", {"partial_rotary_factor": None}),
    "persimmon-partial-default": ("persimmon-8b", {"partial_rotary_factor": None}),
    "stablelm-partial-in-table": ("stablelm-2-1.6b", {"partial_rotary_factor": None, "rope_parameters": {
        "rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.5}}),
    "nemotron-linear": ("minitron-8b", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
    "deepseek_v3-not-interleaved": ("deepseek-v3", {"rope_interleave": False}),
    "deepseek_v3-widths": ("deepseek-v3", {"qk_rope_head_dim": 32, "qk_nope_head_dim": 64}),
    "deepseek_v2-mscale": ("deepseek-v2-lite", {"rope_scaling": {
        "type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 0.5, "beta_fast": 32, "beta_slow": 1,
        "original_max_position_embeddings": 4096}}),
    "gemma3-pattern": ("gemma-3-1b", {"sliding_window_pattern": 3, "rope_local_base_freq": 5000.0}),
    "gemma3-layer_types": ("gemma-3-1b", {"sliding_window_pattern": None,
                                          "layer_types": ["full_attention", "sliding_attention"] * 13}),
    "gemma3-defaults": ("gemma-3-1b", {"rope_theta": None, "rope_local_base_freq": None,
                                       "sliding_window_pattern": None}),
    "gemma3-nested-rope_parameters": ("gemma-3-1b", {
        "rope_theta": None, "rope_local_base_freq": None, "rope_scaling": None,
        "rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 20000.0},
                            "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 500000.0}}}),
    "modernbert-every-2": ("modernbert-base", {"global_attn_every_n_layers": 2, "local_rope_theta": 30000.0}),
    "modernbert-scaling-both": ("modernbert-base", {"rope_scaling": {"rope_type": "linear", "factor": 2.0}}),
    "cohere2-pattern": ("command-r7b", {"sliding_window_pattern": 3}),
    "smollm3-interval": ("smollm3-3b", {"no_rope_layers": None, "no_rope_layer_interval": 3}),
    "llama4-empty-no_rope_layers": ("llama-4-scout-17b-16e", {"no_rope_layers": [], "no_rope_layer_interval": 5}),
    "gpt_oss-truncated-yarn": ("gpt-oss-20b", {"rope_scaling": {
        "rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "truncate": True,
        "original_max_position_embeddings": 4096}}),
    "qwen2_vl-section": ("qwen2-vl-2b", {"rope_scaling": {"type": "mrope", "mrope_section": [32, 16, 16]}}),
    "falcon-theta": ("falcon-7b", {"rope_theta": 50000.0}),
    "neox-rotary_emb_base": ("pythia-1.4b", {"rotary_emb_base": 12345.0, "rotary_pct": 0.5}),
    # proportional: cos and sin over the whole head, the first int(p * d // 2) pairs turning, the others not
    "llama-proportional": ("llama-2-7b", {"rope_scaling": None, "rope_parameters": {
        "rope_type": "proportional", "rope_theta": 1000000.0, "partial_rotary_factor": 0.25}}),
    "qwen3-proportional-factor": ("qwen3-8b", {"rope_scaling": None, "partial_rotary_factor": 0.3, "rope_parameters": {
        "rope_type": "proportional", "rope_theta": 20000.0, "factor": 2.0}}),
}


def _vary(name, changes):
    config = _json(name)
    target = config.get("text_config", config)
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value
    return config


@pytest.mark.parametrize("case", sorted(KEY_VARIATIONS))
def test_read_keys_change_the_map_as_in_hf(hf_model, tmp_path, case):
    name, changes = KEY_VARIATIONS[case]
    config = _vary(name, changes)
    model = load_model(config)
    module = _exported_module(model, tmp_path, f"varied_{case.replace('-', '_')}")
    rng = np.random.default_rng(3)
    for layer in range(len(module.LAYER_REGIMES)):
        _compare(hf_model, config, model, module, layer, SHORT, rng)
    for layer in _first_layers(module).values():
        _compare(hf_model, config, model, module, layer, LONG, rng)
    base = load_model(_json(name))
    assert model != base  # the key was read: the map (or the layer pattern) moved


@pytest.mark.parametrize("name", ["deepseek-v3", "gemma-3-1b", "qwen2.5-vl-7b", "smollm3-3b"])
def test_the_torch_module_agrees_with_the_numpy_module(exported, tmp_path, name):
    torch = pytest.importorskip("torch")
    model, numpy_module = exported(name)
    (path,) = export_model(model, tmp_path, "torch")
    spec = importlib.util.spec_from_file_location(f"torch_{name.replace('-', '_').replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = np.random.default_rng(2).standard_normal((2, 5, module.HEAD_WIDTH))
    positions = np.array([[0, 1, 2, 300, 40000], [7, 1, 2, 3, 4]])
    for regime in module.REGIMES:
        ours = module.apply(torch.tensor(x), torch.tensor(positions), regime=regime).numpy()
        np.testing.assert_allclose(ours, numpy_module.apply(x, positions, regime=regime), rtol=0, atol=1e-12)


def test_the_c_target_refuses_a_model_with_regimes(tmp_path):
    done = subprocess.run([sys.executable, "-m", "symproof", "check", shipped()["gemma-3-1b"], "--export",
                           str(tmp_path / "out"), "--target", "c"], capture_output=True, text=True)
    assert done.returncode == 2 and "use --target numpy or torch" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_layer_types_saved_with_the_pattern_must_agree():
    config = _json("gemma-3-1b")
    pattern = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(26)]
    assert load_model({**config, "layer_types": pattern}).regime("full_attention").layers == (5, 11, 17, 23)
    with pytest.raises(VariantFileError, match=r"key 'sliding_window_pattern': gives another layer pattern"):
        load_model({**config, "layer_types": pattern[1:] + pattern[:1]})


def test_phimoe_reads_default_rope_and_refuses_its_mscale_switch(hf_model, tmp_path):
    config = {"model_type": "phimoe", "hidden_size": 512, "num_attention_heads": 8, "num_hidden_layers": 2,
              "max_position_embeddings": 4096}
    model = load_model(config)
    (path,) = export_model(model, tmp_path, "numpy")
    spec = importlib.util.spec_from_file_location("phimoe_default", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _compare(hf_model, config, model, module, 0, SHORT, np.random.default_rng(4))
    assert any("base 1e+06 (HF's phimoe default_theta)" in note for note in model.regimes[0].variant.notes)
    scaled = {**config, "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 32, "long_factor": [2.0] * 32,
                                         "short_mscale": 1.0, "long_mscale": 1.2,
                                         "original_max_position_embeddings": 2048}}
    with pytest.raises(VariantFileError, match=r"key 'rope_scaling.type': HF's phimoe .* refused rather than read"):
        load_model(scaled)
