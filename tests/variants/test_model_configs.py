"""Model configs (``config.json``): read as HF transformers reads them, checked, refused when malformed.

Verdicts are written from the mathematics; the reading is compared with HF's own
modules (frequencies, rotated width, attention scaling) for the shipped configs
and for every variation of the keys the reader follows.
"""

import functools
import json
from importlib import resources

import numpy as np
import pytest

from symproof import VariantFileError
from symproof._face._cli import main
from symproof.models import load_model, load_model_config
from symproof.variants import check_variant
from symproof.models._config import FAMILIES, ROPE_TYPES
from symproof.models._json import MAX_CONFIG_BYTES
from symproof.models._model import attention_scaling

Y, N = "proved", "refuted"
ROPE = dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y)


def all_shipped() -> dict:
    folder = resources.files("symproof._derivations") / "configs"
    return {p.name[:-5]: str(p) for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".json")}


def shipped_configs() -> dict:
    """The shipped configs with a verdict table here (one rotary map each; the per-regime verdicts of the
    others are in REGIME_EXPECTED)."""
    return {name: path for name, path in all_shipped().items() if name in EXPECTED}


EXPECTED = {
    # frequencies only (default, linear, llama3; partial widths copy the rest): every RoPE property
    "llama-2-7b": ROPE, "mistral-7b": ROPE, "gemma-7b": ROPE, "llama-3.1-8b": ROPE, "longchat-7b-16k-linear": ROPE,
    "pythia-1.4b": ROPE, "phi-2": ROPE, "gpt-j-6b": ROPE,
    # YaRN multiplies q and k by 0.1 ln 4 + 1: norms and the offset-0 score change, offsets still rule
    "qwen2-7b-yarn": dict(ROPE, norm=N, plain_at_zero=N),
    # within a call plain RoPE; the base grows once seq_len > 4096, so cached keys go stale
    "llama-2-7b-dynamic-ntk": dict(ROPE, cache=N),
    # attention factor sqrt(1 + ln 32 / ln 4096) != 1, short and long factors differ
    "phi-3-mini-128k": dict(ROPE, norm=N, plain_at_zero=N, cache=N),
}


def _config(name: str) -> dict:
    with open(shipped_configs()[name], encoding="utf-8") as handle:
        return json.load(handle)


def test_every_shipped_config_has_expectations():
    assert set(EXPECTED) <= set(all_shipped())
    types = {load_model_config(p).title.split("rope_type ")[1].split(" ")[0] for p in shipped_configs().values()}
    families = {json.load(open(p))["model_type"] for p in shipped_configs().values()}
    assert types == set(ROPE_TYPES) - set(UNSHIPPED_TYPES) and families <= set(FAMILIES)


#: rope types no shipped config has, and why: their published models are types read through transformers
UNSHIPPED_TYPES = {"proportional": "Gemma 4's full-attention layers (tests/variants/test_model_transformers.py); "
                                   "a row's reading is tested in test_model_families.py's KEY_VARIATIONS"}


#: per regime of configs added with the family table: the verdicts follow from the rope type and the
#: attention scaling (YaRN with mscale == mscale_all_dim scales by 1: every RoPE property)
REGIME_EXPECTED = {
    "gemma-3-1b": {"sliding_attention": ROPE, "full_attention": ROPE},
    "gpt-oss-20b": {"rope": dict(ROPE, norm=N, plain_at_zero=N)},
    "deepseek-v3": {"rope": ROPE},
    "deepseek-v2-lite": {"rope": ROPE},
    "llama-4-scout-17b-16e": {"rope": ROPE},
    "glm-4-9b-chat-hf": {"rope": ROPE},
    "qwen2.5-vl-7b": {"rope": ROPE},
}


@pytest.mark.parametrize("name", sorted(REGIME_EXPECTED))
def test_regime_verdicts(name):
    from symproof.models._check import check_model
    from symproof.models._config import load_model

    checked = check_model(load_model(all_shipped()[name]))
    got = {regime.name: {r.claim.name: r.status for r in results if r.claim.name not in ("kernel", "decay")}
           for regime, results in checked if results}
    assert got == REGIME_EXPECTED[name]
    assert all(r.status == Y for _, results in checked for r in results if r.claim.name == "kernel")


@pytest.fixture(scope="module")
def results():
    return {name: {r.claim.name: r for r in check_variant(load_model_config(path))}
            for name, path in shipped_configs().items()}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_verdicts(results, name):
    got = {key: r.status for key, r in results[name].items() if key not in ("kernel", "decay")}
    assert got == EXPECTED[name], {k: results[name][k].reason for k in got if got[k] != EXPECTED[name].get(k)}
    assert results[name]["kernel"].status == Y, results[name]["kernel"].reason


def test_cache_witness_names_the_two_lengths(results):
    cache = results["llama-2-7b-dynamic-ntk"]["cache"]
    assert "seq_len = 4096" in cache.reason and "8192" in cache.reason
    assert cache.witnesses and "i: 4096" in cache.witness_text and "j: 1" in cache.witness_text


@pytest.mark.parametrize("name, words", [
    ("gpt-j-6b", "gptj: rotate_every_two, adjacent pairs (2r, 2r+1); first rotary_dim = 64 of 256"),
    ("pythia-1.4b", "int(128 * 0.25) = 32 coordinates (rotary_pct)"),
    ("phi-2", "int(80 * 0.4) = 32 coordinates (partial_rotary_factor)"),
    ("llama-2-7b", "llama: rotate_half, half pairs (r, r + d/2); whole head (128 coordinates)"),
    ("phi-3-mini-128k", "original_max_position_embeddings 4096 (top level)"),
    ("qwen2-7b-yarn", "attention scaling 1.138629436: HF multiplies cos and sin by it"),
    ("llama-3.1-8b", "attention scaling 1: apply does not scale"),
])
def test_notes_say_where_each_choice_comes_from(name, words):
    assert any(words in note for note in load_model_config(shipped_configs()[name]).notes)


# -- the reading against HF's own modules -------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _variant(document: str):
    return load_model_config(json.loads(document))


def _assert_reads_like_hf(hf, config, seq_len):
    variant = _variant(json.dumps(config, sort_keys=True))  # one exact reading per config, several lengths
    inv_freq, scaling = hf.frequencies(config, seq_len)
    ours = np.array([float(w) for w in variant.frequencies_digits(seq_len=seq_len)])
    assert ours.shape == inv_freq.shape, "rotated width differs from HF's"
    # HF computes inv_freq in float32: a few units in the last place
    np.testing.assert_allclose(ours, inv_freq, rtol=1e-6, atol=0)
    assert float(attention_scaling(variant)) == pytest.approx(scaling, rel=1e-12)


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("seq_len", [None, 3000, 40000])
def test_shipped_configs_read_like_hf(hf, name, seq_len):
    _assert_reads_like_hf(hf, _config(name), seq_len)


LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 4096}
YARN = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}
VARIATIONS = {
    "rope_parameters-new-format": {**LLAMA, "rope_parameters": {"rope_type": "linear", "factor": 2.0,
                                                                "rope_theta": 50000.0}},
    "rope_scaling-wins-over-rope_parameters": {**LLAMA, "rope_scaling": {"type": "linear", "factor": 4.0},
                                               "rope_parameters": {"rope_type": "linear", "factor": 2.0}},
    "theta-inside-beats-top-level": {**LLAMA, "rope_theta": 20000.0,
                                     "rope_parameters": {"rope_type": "default", "rope_theta": 30000.0}},
    "explicit-head_dim": {**LLAMA, "head_dim": 32, "rope_theta": 1e6},
    "yarn-defaults": {**LLAMA, "rope_scaling": YARN},
    "yarn-mscale": {**LLAMA, "rope_scaling": {**YARN, "mscale": 0.707, "mscale_all_dim": 1.0}},
    "yarn-equal-mscales": {**LLAMA, "rope_scaling": {**YARN, "mscale": 1.0, "mscale_all_dim": 1.0}},
    "yarn-attention_factor": {**LLAMA, "rope_scaling": {**YARN, "attention_factor": 1.5}},
    "yarn-betas": {**LLAMA, "rope_scaling": {**YARN, "beta_fast": 16, "beta_slow": 2}},
    "yarn-untruncated": {**LLAMA, "rope_scaling": {**YARN, "truncate": False}},
    "yarn-no-factor": {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": None,
                                                 "original_max_position_embeddings": 1024}},
    # an original length of 6 puts both ends of the ramp at pair 0: HF adds 0.001 to the top
    "yarn-ramp-ends-meet": {**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 2.0,
                                                      "original_max_position_embeddings": 6}},
    "yarn-top-level-original": {**LLAMA, "original_max_position_embeddings": 1024, "rope_scaling": YARN},
    "llama3-inner-original": {**LLAMA, "rope_theta": 500000.0, "rope_scaling": {
        "rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192}},
    "dynamic": {**LLAMA, "rope_scaling": {"type": "dynamic", "factor": 4.0}},
    "neox-partial-in-rope_parameters": {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8,
                                        "rope_parameters": {"rope_type": "default", "rope_theta": 20000.0,
                                                            "partial_rotary_factor": 0.5}},
    "neox-defaults": {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 4},
    "neox-linear": {"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 4, "rotary_pct": 0.5,
                    "rope_scaling": {"type": "linear", "factor": 2.0}},
    "phi-defaults": {"model_type": "phi", "hidden_size": 512, "num_attention_heads": 8},
    "phi-dynamic": {"model_type": "phi", "hidden_size": 640, "num_attention_heads": 8, "partial_rotary_factor": 0.4,
                    "max_position_embeddings": 2048, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
    "phi3-su-is-longrope": {"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8,
                            "max_position_embeddings": 8192, "original_max_position_embeddings": 2048,
                            # the top-level value beats the inner one (HF requires the inner key for "su")
                            "rope_scaling": {"type": "su", "original_max_position_embeddings": 1024,
                                             "short_factor": [1.0 + k / 100 for k in range(32)],
                                             "long_factor": [1.0 + k for k in range(32)]}},
    "phi3-longrope-attention_factor": {"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8,
                                       "max_position_embeddings": 8192, "rope_scaling": {
                                           "type": "longrope", "attention_factor": 1.25,
                                           "original_max_position_embeddings": 4096,
                                           "short_factor": [1.0] * 32, "long_factor": [2.0] * 32}},
    "gemma-default-head_dim": {"model_type": "gemma", "rope_theta": 10000.0},
    # GemmaConfig's head_dim defaults to 256 whatever hidden_size // num_attention_heads is
    "gemma-head_dim-not-derived": {"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16},
    # sizes a config leaves out are the config class's defaults, as in HF
    "llama-class-defaults": {"model_type": "llama"},
    "gemma2-class-defaults": {"model_type": "gemma2", "rope_theta": 10000.0},
    "falcon-class-defaults": {"model_type": "falcon"},
    # Llama 4 Scout's published scaling: equal band factors, no smoothed band (computed, as HF does)
    "llama3-equal-band-factors": {**LLAMA, "rope_scaling": {
        "rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192}, "max_position_embeddings": 10485760, "rope_theta": 500000.0},
    "llama3-low-above-high": {**LLAMA, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 4.0, "high_freq_factor": 1.0,
        "original_max_position_embeddings": 512}},
    "qwen2-yarn-legacy-type": {"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14,
                               "max_position_embeddings": 32768, "rope_theta": 1e6,
                               "rope_scaling": {"type": "yarn", "factor": 4.0,
                                                "original_max_position_embeddings": 32768}},
    "mistral-head_dim-null": {"model_type": "mistral", "hidden_size": 1024, "num_attention_heads": 8,
                              "head_dim": None, "rope_theta": 1e6},
    "gptj-rotary_dim-32": {"model_type": "gptj", "n_embd": 1024, "n_head": 8, "rotary_dim": 32},
}


@pytest.mark.parametrize("name", sorted(VARIATIONS))
@pytest.mark.parametrize("seq_len", [None, 9000])
def test_key_variations_read_like_hf(hf, name, seq_len):
    _assert_reads_like_hf(hf, VARIATIONS[name], seq_len)


# -- refusals -----------------------------------------------------------------------------------


REFUSED = [
    ({"model_type": "bloom", "hidden_size": 64}, "model_type", "supported: cohere, cohere2"),
    ({"model_type": ["llama"], "hidden_size": 64}, "model_type", "supported: cohere, cohere2"),
    # GPT-NeoX reads rotary_emb_base, never a top-level rope_theta: refused, not ignored
    ({"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 4, "rope_theta": 123456.0},
     "rope_theta", "refused rather than ignored"),
    ({**LLAMA, "rope_scaling": {"type": {"nested": 1}}}, "rope_scaling", "per-layer"),
    ({**LLAMA, "rope_scaling": {"rope_type": ["linear"], "factor": 2.0}}, "rope_scaling.rope_type",
     "expected a rope type name"),
    ({**LLAMA, "rope_scaling": "linear"}, "rope_scaling", "expected an object"),
    ({**LLAMA, "rope_scaling": {"type": "ntk-by-parts", "factor": 2.0}}, "rope_scaling.type",
     "supported: default, linear, dynamic, yarn, longrope, llama3"),
    ({**LLAMA, "rope_parameters": {"rope_type": "axial"}}, "rope_parameters.rope_type", "not supported"),
    # proportional cos and sin span the whole head; a family that slices its rotated part first is not that map
    ({"model_type": "stablelm", "hidden_size": 256, "num_attention_heads": 4,
      "rope_parameters": {"rope_type": "proportional", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}},
     "rope_parameters.rope_type", "rotates only the part its partial_rotary_factor slices off"),
    ({**LLAMA, "rope_parameters": {"rope_type": "proportional", "rope_theta": 10000.0,
                                   "partial_rotary_factor": 0.001}},
     "rope_parameters.partial_rotary_factor", "0 turning pairs"),
    ({"model_type": "gptj", "n_embd": 64, "n_head": 2, "rope_scaling": {"type": "linear", "factor": 2.0}},
     "rope_scaling.type", "reads no rope scaling"),
    ({**LLAMA, "partial_rotary_factor": 0.5}, "partial_rotary_factor", "rotates the whole head"),
    ({**LLAMA, "rope_scaling": {"type": "linear"}}, "rope_scaling.factor", "is required"),
    ({**LLAMA, "rope_scaling": {"type": "linear", "factor": -2.0}}, "rope_scaling.factor", "expected a number >"),
    ({**LLAMA, "rope_scaling": {"type": "linear", "factor": "2"}}, "rope_scaling.factor", "expected a number"),
    ({**LLAMA, "rope_theta": True}, "rope_theta", "expected a number"),
    ({**LLAMA, "hidden_size": 10**30}, "hidden_size", "<= "),
    ({**LLAMA, "hidden_size": 10**400}, "hidden_size", "<= "),
    ({**LLAMA, "rope_theta": -(10**400)}, "rope_theta", "expected a number >"),
    ({"model_type": "llama", "max_position_embeddings": 10, "hidden_size": None}, "head_dim",
     "hidden_size and num_attention_heads"),
    ({"model_type": "phi", "hidden_size": 80, "num_attention_heads": 1, "partial_rotary_factor": 0.01},
     "partial_rotary_factor", "even width >= 2"),
    ({"model_type": "gptj", "n_embd": 64, "n_head": 2, "rotary_dim": None}, "rotary_dim", "is null"),
    ({"model_type": "gptj", "n_embd": 64, "n_head": 2, "rotary_dim": 64}, "rotary_dim", "at most head_dim 32"),
    ({"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 8192,
      "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 4096, "short_factor": [1.0] * 31,
                       "long_factor": [1.0] * 32}}, "rope_scaling.short_factor", "expected 32 numbers"),
    ({"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 8192,
      "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 4096, "short_factor": [1.0] * 32,
                       "long_factor": [1.0] * 31 + [0.0]}}, "rope_scaling.long_factor[31]", "positive number"),
    ({"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 8192,
      "rope_scaling": {"type": "longrope", "original_max_position_embeddings": 4096, "short_factor": [1.0] * 32,
                       "long_factor": [10**400] + [1.0] * 31}}, "rope_scaling.long_factor[0]", "positive number"),
    ({**LLAMA, "rope_scaling": {**YARN, "truncate": "yes"}}, "rope_scaling.truncate", "true or false"),
    ({**LLAMA, "rope_scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                "beta_fast": 3.0}}, "rope_scaling.beta_fast", "refused rather than ignored"),
    ({**LLAMA, "rope_scaling": {"rope_type": "yarn", "factor": 2.0}, "max_position_embeddings": None},
     "rope_scaling.original_max_position_embeddings", "is required"),
    ({**LLAMA, "rope_parameters": {"full_attention": {"rope_type": "default"}}}, "rope_parameters", "per-layer"),
]


@pytest.mark.parametrize("config, key, words", REFUSED, ids=[f"{c[1]}-{k}" for k, c in enumerate(REFUSED)])
def test_malformed_config_is_refused_with_its_key(tmp_path, config, key, words):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(VariantFileError) as info:
        load_model_config(path)
    message = str(info.value)
    assert str(path) in message and f"'{key}'" in message and words in message and "\n" not in message, message


@pytest.mark.parametrize("text, words", [
    ("{", "not valid JSON"),
    ('{"model_type": "llama", "rope_theta": NaN}', "non-finite number NaN"),
    ('{"model_type": "llama", "rope_theta": Infinity}', "non-finite number Infinity"),
    ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ('{"model_type": "llama", "hidden_size": 1' + "0" * 5000 + "}", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
])
def test_unreadable_files(tmp_path, text, words):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VariantFileError, match=words):
        load_model_config(path)


def test_file_size_is_bounded(tmp_path):
    path = tmp_path / "config.json"
    path.write_text('{"model_type": "llama", "pad": "' + "x" * MAX_CONFIG_BYTES + '"}', encoding="utf-8")
    with pytest.raises(VariantFileError, match="at most 1048576 are read"):
        load_model_config(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(VariantFileError, match="no such file"):
        load_model_config(tmp_path / "absent.json")
    with pytest.raises(VariantFileError, match="is a folder"):
        load_model_config(tmp_path)


# -- the command --------------------------------------------------------------------------------


def test_check_prints_the_family_reasons(capsys):
    assert main(["check", shipped_configs()["gpt-j-6b"]]) == 0
    out = capsys.readouterr().out
    assert "gptj: rotate_every_two, adjacent pairs" in out and "keeps: norm, relative" in out


def test_check_json_and_content_dispatch(tmp_path, capsys):
    path = tmp_path / "model-config"  # no suffix: the content decides
    path.write_text(json.dumps(_config("phi-3-mini-128k")), encoding="utf-8")
    assert main(["check", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    by_key = {p["property"]: p for p in document["properties"]}
    assert by_key["cache"]["holds"] is False and by_key["relative"]["holds"] is True
    assert document["variant"]["length"]["threshold"] == 4096 and len(document["variant"]["factors"]) == 48
    assert any("longrope" in note for note in document["variant"]["notes"])


def test_check_refuses_a_bad_config_with_exit_2(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "t5"}), encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'model_type'" in err and "supported" in err


# -- a plain model prints every note of the model, not only its one variant's -------------------------------
# (a model of one regime prints the variant's own table; the class defaults it filled in, the family's facts
# and the keys it accepted unread were in the model's notes only, and went unsaid)

PLAIN_NOTES = [
    ({"model_type": "qwen2"}, "absent from the config, HF's qwen2 config class defaults: hidden_size 4096"),
    ({"model_type": "gemma2"}, "gemma2: sliding and full layers alternate but share one rotary map"),
    ({"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14, "num_hidden_layers": 24,
      "max_position_embeddings": 32768, "use_mrope": False}, "use_mrope = false: not read by HF's qwen2"),
]


@pytest.mark.parametrize("config, words", PLAIN_NOTES, ids=[w.split(":")[0][:30] for _, w in PLAIN_NOTES])
def test_a_plain_model_prints_every_note_of_the_model(tmp_path, capsys, config, words):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    model = load_model(str(path))
    assert model.plain and any(words in note for note in model.notes)
    assert sum(words in note for note in load_model_config(str(path)).notes) == 1  # the Python API says it too
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count(words) == 1 and "layers: " not in out
    assert main(["check", str(path), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["variant"]["notes"]
    assert sum(words in note for note in notes) == 1
