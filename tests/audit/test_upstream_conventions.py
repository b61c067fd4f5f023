"""Calling conventions of real projects, each audited with one plain command: upstream code, copied verbatim.

``upstream/`` holds the rotary code of litgpt, Megatron-LM, diffusers, Gemma, MaxText, ESM, ChatGLM2 (a
TorchScript apply function), open_lm, xformers, EasyLM, x-transformers, OLMo and transformers 4's Flax Llama (a flax linen module) as their packages ship it (each file says where it comes from, with its licence notice).  Each row is one
convention the audit has to find by itself -- no ``--call``, no ``--apply`` -- on the code as it is (the
verdict is the model's) and on the same code with a known bug planted (the diagnosis names it).  The
rows run the command as a user types it: a child process, ``--json``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from symproof._audit._runner import CONVENTIONS

pytest.importorskip("torch")

UPSTREAM = Path(__file__).parent / "upstream"
_LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64,
          "rope_theta": 10000.0, "max_position_embeddings": 4096}
LLAMA = dict(_LLAMA)
LLAMA_1M = dict(_LLAMA, rope_theta=1000000.0)
ESM = dict(_LLAMA, max_position_embeddings=1026)  # ESM-2's length; its base is fixed at 10000
# Flux's rotary: adjacent pairs (a variant file: HF configs are half pairs)
ADJACENT_1M = 'name = "adjacent"\nkind = "rotary"\nwidth = 64\npairing = "adjacent"\n\n[frequencies]\n' \
              'rule = "geometric"\nbase = 1000000\n'
# Phi-3 LongRoPE: a list of factors per regime
PHI3 = {"model_type": "phi3", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64, "rope_theta": 10000.0,
        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0 + r / 32 for r in range(32)],
                         "long_factor": [1.5 + r / 4 for r in range(32)]}}
# Llama 3.1's scaling, at a head width of 64
LLAMA31 = dict(_LLAMA, rope_theta=500000.0, max_position_embeddings=131072,
               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192})
# GPT-J's layout: the first 32 of 64 coordinates rotate, in adjacent pairs (x-transformers' Decoder, dim_head // 2)
GPTJ_SMALL = {"model_type": "gptj", "n_embd": 512, "n_head": 8, "n_layer": 2, "n_positions": 1024, "rotary_dim": 32}
# ChatGLM2: the first half of a 128-wide head rotates, in adjacent pairs (GLM's HF config)
GLM_HALF = {"model_type": "glm", "hidden_size": 512, "num_attention_heads": 4, "head_dim": 128,
            "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "max_position_embeddings": 8192}
# Qwen2-VL style: the text model's values are under text_config (none at top level)
QWEN2_VL = {"model_type": "qwen2_vl", "text_config": {
    "hidden_size": 512, "num_attention_heads": 8, "rope_theta": 1000000.0, "max_position_embeddings": 8192,
    "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}}

# (id, file:NAME, config, convention found, what "called as" shows, verdict,
#  (old text, planted text), differences the planted bug must get, libraries the file needs)
CASES = [
    ("cos-sin-with-a-batch-axis", "litgpt_rope.py:apply_rope", LLAMA, "table-cos-sin-batch",
     ["cos[positions][None]", "n_elem=64", "base=10000.0"], "equivalent",
     ("rotated = torch.cat((-x2, x1), dim=-1)", "rotated = torch.cat((x2, -x1), dim=-1)"), ["direction"], ()),
    ("angles-from-a-length", "megatron_rotary.py:RotaryEmbedding", LLAMA_1M, "length-module",
     ["kv_channels=64", "rotary_percent=1.0", "rotary_base=1000000.0", "(n)"], "equivalent",
     ("            rotary_base\n", "            500000\n"), ["frequency"], ()),
    ("positions-named-pos", "diffusers_rope.py:get_1d_rotary_pos_embed", ADJACENT_1M, "positions-table",
     ["pos=positions", "theta=1000000.0", "use_real=True"], "equivalent",
     ("    theta = theta * ntk_factor\n", "    theta = 500000.0 * ntk_factor\n"), ["frequency"], ()),
    ("keyword-only-base-frequency", "gemma_rope.py:apply_rope", LLAMA_1M, "x-positions-full",
     ["base_frequency=1000000.0"], "equivalent",
     ("      base_frequency**freq_exponents,", "      500_000**freq_exponents,"), ["frequency"], ("jax",)),
    ("min-max-timescale", "maxtext_rope.py:RotaryEmbedding", LLAMA_1M, "module-positions",
     ["min_timescale=1", "max_timescale=1000000.0", "embedding_dims=64", "mesh=None"], "equivalent",
     ("    return jnp.concatenate((-x2, x1), axis=-1)", "    return jnp.concatenate((x2, -x1), axis=-1)"),
     ["direction"], ("jax", "flax")),
    ("no-positions-at-all", "esm_rotary.py:RotaryEmbedding", ESM, "module-qk-implicit", ["(q, k)"], "equivalent",
     ("inv_freq = 1.0 / (10000 ** (", "inv_freq = 1.0 / (1000 ** ("), ["frequency"], ()),
    ("factor-lists", "vllm_phi3_longrope.py:Phi3LongRoPEScaledRotaryEmbedding", PHI3, "vllm",
     ["short_factor=[1, 1.03125", "long_factor=[1.5, 1.75", "short_mscale=1.19", "original_max_position_embeddings=4096"],
     "equivalent", ("    return torch.cat((-x2, x1), dim=-1)", "    return torch.cat((x2, -x1), dim=-1)"),
     ["direction"], ()),
    ("flax-linen-module", "hf_flax_llama_rope.py:FlaxLlamaRotaryEmbedding", LLAMA, "module-qk-positions",
     ["config=<LlamaConfig from --like>", ".apply(variables, q, k, position_ids)", "init(PRNGKey(0), q, k"],
     "equivalent", ("        (-tensor[..., tensor.shape[-1] // 2 :], tensor[..., : tensor.shape[-1] // 2]), axis=-1",
                    "        (tensor[..., tensor.shape[-1] // 2 :], -tensor[..., : tensor.shape[-1] // 2]), axis=-1"),
     ["direction"], ("jax", "flax")),
    ("torchscript-apply", "chatglm2_rope.py:RotaryEmbedding", GLM_HALF, "length-module",
     ["RotaryEmbedding(dim=64)(n)", "apply_rotary_pos_emb(x, freqs[positions])"], "equivalent",
     ("            self, seq_len: int, n_elem: int, dtype: torch.dtype, device: torch.device, base: int = 10000",
      "            self, seq_len: int, n_elem: int, dtype: torch.dtype, device: torch.device, base: int = 1000"),
     ["frequency"], ()),
    ("module-q-k-offset", "openlm_rotary.py:RotaryEmbedding", LLAMA, "module-qk-offset",
     ["dim_model=64", "seq_len=4096", "(q, k, offset=start)"], "equivalent",
     ("        self.inv_freq = 1.0 / (10000 ** (", "        self.inv_freq = 1.0 / (1000 ** ("), ["frequency"], ()),
    ("keyword-only-positions", "xformers_slow_rope.py:_slow_rope", LLAMA31, "x-positions",
     ["seqpos=positions (keyword-only)", "use_dynamic_scaling=True", "dynamic_scale_factor=8.0",
      "dynamic_high_freq_factor=4", "dynamic_old_context_len=8192"], "equivalent_after_relayout",
     ("            freqs[idx] = freq / dynamic_scale_factor", "            freqs[idx] = freq"), ["pairing", "frequency"],
     ()),
    ("a-table-size-the-apply-requires", "easylm_rope.py:apply_rotary_emb", ADJACENT_1M, "qk-positions-full",
     ["max_pos=32768", "theta=1000000.0"], "equivalent",
     ("        freqs = 1.0 / (theta ** (", "        freqs = 1.0 / (500000 ** ("), ["frequency"], ("jax",)),
    ("angles-and-a-scale", "xtransformers_rope.py:RotaryEmbedding", GPTJ_SMALL, "angles-scale-module",
     ["freqs, scale = RotaryEmbedding(dim=32", "apply_rotary_pos_emb(x, freqs, scale)"], "equivalent",
     ("        base *= base_rescale_factor ** (dim / (dim - 2))",
      "        base *= 10 * base_rescale_factor ** (dim / (dim - 2))"), ["frequency"], ()),
    ("a-config-dataclass-and-a-cache", "olmo_rope.py:RotaryEmbedding", LLAMA, "module-qk-implicit",
     ["config=ModelConfig(d_model=64, n_heads=1, rope_theta=10000.0, max_sequence_length=4096)",
      "cache=BufferCache()", "(q, k)"], "equivalent",
     ("                self.config.rope_theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float) / dim)",
      "                (self.config.rope_theta / 10) ** (torch.arange(0, dim, 2, device=device, dtype=torch.float) / dim)"),
     ["frequency"], ()),
    ("config-text-config", "litgpt_rope.py:apply_rope", QWEN2_VL, "table-cos-sin-batch",
     ["seq_len=8192", "base=1000000.0"], "equivalent",
     ("    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device).float() / n_elem))",
      "    theta = 1.0 / (500000 ** (torch.arange(0, n_elem, 2, device=device).float() / n_elem))"), ["frequency"],
     ()),
]


def _audit(tmp_path, target, config, source=None, flags=(), package=None):
    file, name = target.split(":")
    code = tmp_path / file
    if package is not None:  # the upstream package the file imports, beside it (its own edits applied)
        shutil.copytree(UPSTREAM / package, tmp_path / package)
    if source is None:
        shutil.copy(UPSTREAM / file, code)
    else:
        code.write_text(source)
    like = tmp_path / ("adjacent.toml" if isinstance(config, str) else "config.json")
    like.write_text(config if isinstance(config, str) else json.dumps(config))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{code}:{name}", "--like", str(like), "--json",
                          *flags], capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    return run


def _needs(libraries):
    for library in libraries:
        pytest.importorskip(library)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_code_as_it_is_with_one_plain_command(case, tmp_path):
    _, target, config, convention, shown, verdict, _, _, libraries = case
    _needs(libraries)
    run = _audit(tmp_path, target, config)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == verdict, run.stdout
    assert document["convention"]["name"] == convention
    assert convention in {row.name for row in CONVENTIONS}
    for text in shown:
        assert text in document["convention"]["call"], document["convention"]["call"]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_a_planted_bug_is_named(case, tmp_path):
    _, target, config, convention, _, _, (old, new), whats, libraries = case
    _needs(libraries)
    source = (UPSTREAM / target.split(":")[0]).read_text()
    assert source.count(old) == 1, "the planted bug edits one line of the upstream code"
    run = _audit(tmp_path, target, config, source.replace(old, new))
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "differs"
    assert document["convention"]["name"] == convention
    assert [d["what"] for d in document["differences"]][:len(whats)] == whats, run.stdout


def test_flax_llama_ignoring_rope_theta_is_named(tmp_path):
    """transformers 4's Flax Llama built its table with base 10000 whatever the config's rope_theta: against a
    Llama 3 config (500000), the audit names the base the code uses. (Against 10^6 it says both explanations:
    base 10^4 at denominator 64 equals base 10^6 at denominator 96.)"""
    _needs(("jax", "flax"))
    run = _audit(tmp_path, "hf_flax_llama_rope.py:FlaxLlamaRotaryEmbedding", dict(_LLAMA, rope_theta=500000.0))
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert [d["what"] for d in document["differences"]] == ["frequency"], run.stdout
    assert "base 10000 where the model says theta = 500000" in document["differences"][0]["detail"], run.stdout
    assert not any(default.startswith(("parent", "name")) for default in document["left_at_default"])


def test_every_parameter_is_filled_or_listed(tmp_path):
    """MaxText's module: each parameter of __init__ is in the call shown or in left_at_default, none unnamed."""
    _needs(("jax", "flax"))
    run = _audit(tmp_path, "maxtext_rope.py:RotaryEmbedding", LLAMA)
    document = json.loads(run.stdout)
    named = document["convention"]["call"] + " ".join(document["left_at_default"])
    for parameter in ("min_timescale", "max_timescale", "mesh", "embedding_dims", "cast_as_fprop_dtype",
                      "fprop_dtype", "shard_mode", "rope_linear_scaling_factor", "rngs"):
        assert f"{parameter}=" in named, named


def test_vllm_long_factors_at_every_length_are_named(tmp_path):
    """vLLM started with its default max_model_len (the model's 131072) uses the long factors for every call;
    HF's rule uses the short ones up to 4096 tokens: the audit names that switch, with the lengths."""
    source = (UPSTREAM / "vllm_phi3_longrope.py").read_text()
    assert source.count("MAX_MODEL_LEN = 4096\n") == 1
    run = _audit(tmp_path, "vllm_phi3_longrope.py:Phi3LongRoPEScaledRotaryEmbedding", PHI3,
                 source.replace("MAX_MODEL_LEN = 4096\n", "MAX_MODEL_LEN = 131072\n"))
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert [d["what"] for d in document["differences"]] == ["frequency"]
    assert "the model uses for calls of length > 4096" in document["differences"][0]["detail"], run.stdout


#: flash-attn's kernel runs in Triton's CPU interpreter here, about 1.5 s a call: the plain command passes within
#: its limits (10 s per call of the code, 60 s for the first), about 40 s in all on an idle machine; the test
#: gives a longer limit only so that a loaded CI machine cannot turn the verdict into a time-out


@pytest.mark.parametrize("planted, verdict, whats", [
    (None, "equivalent", []),
    (("    if CONJUGATE:\n        sin = -sin", "    if not CONJUGATE:\n        sin = -sin"), "differs", ["direction"]),
], ids=["as-shipped", "sine-flipped-in-the-kernel"])
def test_flash_attn_qkv_packed_with_a_table_built_by_a_method(planted, verdict, whats, tmp_path):
    pytest.importorskip("triton")
    pytest.importorskip("einops")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if planted is not None:
        shutil.copytree(UPSTREAM / "flash_attn", tmp_path / "edited")
        kernel = tmp_path / "edited" / "ops" / "triton" / "rotary.py"
        text = kernel.read_text()
        assert text.count(planted[0]) == 1
        kernel.write_text(text.replace(*planted))
        shutil.copytree(tmp_path / "edited", run_dir / "flash_attn")
        package = None
    else:
        package = "flash_attn"
    run = _audit(run_dir, "flash_attn_user.py:RotaryEmbedding", LLAMA, flags=("--timeout", "300"), package=package)
    assert run.returncode == (0 if verdict == "equivalent" else 1), run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == verdict
    assert document["convention"]["name"] == "module-qkv-offset"
    assert "(qkv, seqlen_offset=start)" in document["convention"]["call"]
    assert [d["what"] for d in document["differences"]] == whats


def test_an_apply_parameter_about_scaling_left_at_its_default_stops_the_audit(tmp_path):
    """xformers' switch under a name the audit does not know: the apply would run unscaled against a Llama 3
    model, so the audit names the parameter and stops (it used to compare, and call correct code wrong)."""
    source = (UPSTREAM / "xformers_slow_rope.py").read_text().replace("use_dynamic_scaling", "use_l3_scaling")
    run = _audit(tmp_path, "xformers_slow_rope.py:_slow_rope", LLAMA31, source)
    assert run.returncode == 2, run.stdout + run.stderr
    message = run.stderr.strip()
    assert "_slow_rope's parameter use_l3_scaling is left at its default False, but it concerns scaling" in message
    assert "\n" not in message and "that calls _slow_rope with use_l3_scaling=True" in message


def test_a_rule_switched_off_needs_none_of_its_parameters(tmp_path):
    """Against a model without scaling, xformers' Llama 3 switch is off and its dynamic_* parameters stay at
    their defaults, listed: the original length 8192 is no length of this model's (no stop)."""
    run = _audit(tmp_path, "xformers_slow_rope.py:_slow_rope", LLAMA)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent_after_relayout"
    assert "use_dynamic_scaling=False" in document["convention"]["call"]
    assert "_slow_rope: dynamic_old_context_len=8192.0" in document["left_at_default"]


def test_a_config_dataclass_field_about_scaling_the_audit_cannot_fill_stops_it(tmp_path):
    """OLMo's config dataclass with a scaling field under a name no role reads, against a scaled model: the
    audit names the field and stops rather than build the module unscaled."""
    source = (UPSTREAM / "olmo_rope.py").read_text().replace(
        "    max_sequence_length: int = 1024\n", "    max_sequence_length: int = 1024\n    rope_stretch_factor: float = 1.0\n")
    run = _audit(tmp_path, "olmo_rope.py:RotaryEmbedding", LLAMA31, source)
    assert run.returncode == 2, run.stdout + run.stderr
    message = run.stderr.strip()
    assert "cannot build ModelConfig without an assumption: ModelConfig's parameter rope_stretch_factor is left at " \
           "its default 1.0, but it concerns scaling" in message and "\n" not in message
