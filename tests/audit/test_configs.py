"""``--like CONFIG.json``: the audit against the published configs in ``derivations/configs``.

The configs are read by the real reader (``symproof.load_model_config``), the
implementations are written here as a user would write them, with the config's
values copied in by hand (``hf_init`` ports HF's rope-init functions: default,
linear, dynamic, llama3, yarn, longrope).  Each case is audited through
``symproof.audit`` (NumPy and PyTorch) and a few through the real command.
"""

from __future__ import annotations

import json
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest

import symproof
from symproof._audit import load_function
from symproof._face._cli import main

import audit_implementations as impl

CONFIGS = Path(__file__).resolve().parents[2] / "derivations" / "configs"

HF_INIT_HEADER = """
ROPE_TYPE = "$rope_type"
BASE = $base
ROT = $rot            # rotated width (None: the whole head)
FACTOR = $factor
MAX_POS = $max_pos    # max_position_embeddings
ORIGINAL = $original  # original_max_position_embeddings
LOW_FREQ, HIGH_FREQ = $low_freq, $high_freq
BETA_FAST, BETA_SLOW = 32, 1
SHORT = $short
LONG = $long
ATTENTION = $attention  # None: the rope type's own attention scaling
FIXED_SEQ_LEN = $fixed_seq_len  # None: the call's max position id + 1 (as HF's dynamic update)
"""

HF_INIT_SOURCES = {
    "numpy": """
import math
import numpy as np
$header


def inv_freq_and_scaling(dim, seq_len):
    exponents = np.arange(0, dim, 2, dtype=np.float64) / dim
    inv_freq, attention = 1.0 / BASE ** exponents, 1.0
    if ROPE_TYPE == "linear":
        inv_freq = inv_freq / FACTOR
    elif ROPE_TYPE == "dynamic" and seq_len > MAX_POS:
        base = BASE * ((FACTOR * seq_len / MAX_POS) - (FACTOR - 1)) ** (dim / (dim - 2))
        inv_freq = 1.0 / base ** exponents
    elif ROPE_TYPE == "llama3":
        low_wavelen, high_wavelen = ORIGINAL / LOW_FREQ, ORIGINAL / HIGH_FREQ
        wavelen = 2 * math.pi / inv_freq
        llama = np.where(wavelen > low_wavelen, inv_freq / FACTOR, inv_freq)
        smooth = (ORIGINAL / wavelen - LOW_FREQ) / (HIGH_FREQ - LOW_FREQ)
        smoothed = (1 - smooth) * llama / FACTOR + smooth * llama
        medium = ~(wavelen < high_wavelen) & ~(wavelen > low_wavelen)
        inv_freq = np.where(medium, smoothed, llama)
    elif ROPE_TYPE == "yarn":
        def correction_dim(rotations):
            return dim * math.log(ORIGINAL / (rotations * 2 * math.pi)) / (2 * math.log(BASE))
        low = max(math.floor(correction_dim(BETA_FAST)), 0)
        high = min(math.ceil(correction_dim(BETA_SLOW)), dim - 1)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        inv_freq = inv_freq / FACTOR * (1 - extrapolation) + inv_freq * extrapolation
        attention = 0.1 * math.log(FACTOR) + 1.0
    elif ROPE_TYPE == "longrope":
        factors = np.array(LONG if seq_len > ORIGINAL else SHORT, dtype=np.float64)
        inv_freq = 1.0 / (factors * BASE ** exponents)
        attention = math.sqrt(1 + math.log(FACTOR) / math.log(ORIGINAL))
    return inv_freq, attention if ATTENTION is None else ATTENTION


def apply_rope(x, positions):
    positions = np.asarray(positions)
    rot = x.shape[-1] if ROT is None else ROT
    seq_len = int(positions.max()) + 1 if FIXED_SEQ_LEN is None else FIXED_SEQ_LEN
    inv_freq, attention = inv_freq_and_scaling(rot, seq_len)
    freqs = positions.astype(np.float64)[..., None] * inv_freq
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb) * attention, np.sin(emb) * attention
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    half = rot // 2
    rotated = np.concatenate([-x_rot[..., half:], x_rot[..., :half]], axis=-1)
    return np.concatenate([x_rot * cos + rotated * sin, x_pass], axis=-1)
""",
    "torch": """
import math
import torch
$header


def inv_freq_and_scaling(dim, seq_len):
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    inv_freq, attention = 1.0 / (BASE ** exponents), 1.0
    if ROPE_TYPE == "linear":
        inv_freq = inv_freq / FACTOR
    elif ROPE_TYPE == "dynamic" and seq_len > MAX_POS:
        base = BASE * ((FACTOR * seq_len / MAX_POS) - (FACTOR - 1)) ** (dim / (dim - 2))
        inv_freq = 1.0 / (base ** exponents)
    elif ROPE_TYPE == "llama3":
        low_wavelen, high_wavelen = ORIGINAL / LOW_FREQ, ORIGINAL / HIGH_FREQ
        wavelen = 2 * math.pi / inv_freq
        llama = torch.where(wavelen > low_wavelen, inv_freq / FACTOR, inv_freq)
        smooth = (ORIGINAL / wavelen - LOW_FREQ) / (HIGH_FREQ - LOW_FREQ)
        smoothed = (1 - smooth) * llama / FACTOR + smooth * llama
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv_freq = torch.where(medium, smoothed, llama)
    elif ROPE_TYPE == "yarn":
        def correction_dim(rotations):
            return dim * math.log(ORIGINAL / (rotations * 2 * math.pi)) / (2 * math.log(BASE))
        low = max(math.floor(correction_dim(BETA_FAST)), 0)
        high = min(math.ceil(correction_dim(BETA_SLOW)), dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        inv_freq = inv_freq / FACTOR * (1 - extrapolation) + inv_freq * extrapolation
        attention = 0.1 * math.log(FACTOR) + 1.0
    elif ROPE_TYPE == "longrope":
        factors = torch.tensor(LONG if seq_len > ORIGINAL else SHORT, dtype=torch.float32)
        inv_freq = 1.0 / (factors * BASE ** exponents)
        attention = math.sqrt(1 + math.log(FACTOR) / math.log(ORIGINAL))
    return inv_freq, attention if ATTENTION is None else ATTENTION


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions):
    rot = x.shape[-1] if ROT is None else ROT
    seq_len = int(positions.max()) + 1 if FIXED_SEQ_LEN is None else FIXED_SEQ_LEN
    inv_freq, attention = inv_freq_and_scaling(rot, seq_len)
    freqs = positions.float()[..., None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * attention).to(x.dtype), (emb.sin() * attention).to(x.dtype)
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)
""",
}

HF_INIT_DEFAULTS = {"rope_type": "default", "base": "10000.0", "rot": "None", "factor": "1.0", "max_pos": "4096",
                    "original": "4096", "low_freq": "1.0", "high_freq": "4.0", "short": "None", "long": "None",
                    "attention": "None", "fixed_seq_len": "None"}


def _config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text(encoding="utf-8"))


def _phi3_factors(which: str) -> str:
    return repr(_config("phi-3-mini-128k")["rope_scaling"][f"{which}_factor"])


#: the constants a user copies from each config into an HF-style port (read here with plain json)
LLAMA3 = {"rope_type": "llama3", "base": "500000.0", "factor": "8.0", "original": "8192", "low_freq": "1.0",
          "high_freq": "4.0"}
YARN = {"rope_type": "yarn", "base": "1000000.0", "factor": "4.0", "original": "32768"}
DYNAMIC = {"rope_type": "dynamic", "factor": "2.0", "max_pos": "4096"}
LONGROPE = {"rope_type": "longrope", "factor": "32.0", "original": "4096", "short": _phi3_factors("short"),
            "long": _phi3_factors("long")}


def source(library: str, style: str, params: dict) -> str:
    if style != "hf_init":
        return impl.implementation_source(library, style, **params)
    values = {**HF_INIT_DEFAULTS, **{k: str(v) for k, v in params.items()}}
    header = string.Template(HF_INIT_HEADER).substitute(values)
    return string.Template(HF_INIT_SOURCES[library]).substitute(header=header)


# -- cases: (id, config, style, params, seq_len, verdict, whats) -------------------------------------------------

RIGHT = [
    ("llama2-rotate-half", "llama-2-7b", "rotate_half", {}, None, "equivalent", set()),
    ("mistral-rotate-half", "mistral-7b", "rotate_half", {}, None, "equivalent", set()),
    ("gemma-rotate-half", "gemma-7b", "rotate_half", {}, None, "equivalent", set()),
    ("gemma-hf-init", "gemma-7b", "hf_init", {}, None, "equivalent", set()),
    ("qwen2-yarn-hf-init", "qwen2-7b-yarn", "hf_init", YARN, None, "equivalent", set()),
    ("gptj-interleaved-partial", "gpt-j-6b", "every_two", {"rot": 64}, None, "equivalent", set()),
    ("pythia-neox-partial", "pythia-1.4b", "rotate_half", {"rot": 32}, None, "equivalent", set()),
    ("phi2-neox-partial", "phi-2", "rotate_half", {"rot": 32}, None, "equivalent", set()),
    ("phi2-hf-init-partial", "phi-2", "hf_init", {"rot": 32}, None, "equivalent", set()),
    ("llama31-llama3-frequencies", "llama-3.1-8b", "hf_init", LLAMA3, None, "equivalent", set()),
    ("longchat-linear-hf-init", "longchat-7b-16k-linear", "hf_init", {"rope_type": "linear", "factor": "8.0"},
     None, "equivalent", set()),
    ("longchat-positions-divided", "longchat-7b-16k-linear", "rotate_half", {"pscale": 8}, None, "equivalent",
     set()),
    ("llama2-meta-complex", "llama-2-7b", "complex", {}, None, "equivalent_after_relayout", set()),
    ("mistral-meta-complex", "mistral-7b", "complex", {}, None, "equivalent_after_relayout", set()),
    ("gptj-rotate-half-port", "gpt-j-6b", "rotate_half", {"rot": 64}, None, "differs", {"pairing"}),
    # length-dependent rules: the short regime by default, another call length with seq_len
    ("dynamic-short", "llama-2-7b-dynamic-ntk", "hf_init", DYNAMIC, None, "equivalent", set()),
    ("dynamic-long", "llama-2-7b-dynamic-ntk", "hf_init", DYNAMIC, 8192, "equivalent", set()),
    ("dynamic-unscaled-short", "llama-2-7b-dynamic-ntk", "rotate_half", {}, None, "equivalent", set()),
    ("longrope-short", "phi-3-mini-128k", "hf_init", LONGROPE, None, "equivalent", set()),
    ("longrope-long", "phi-3-mini-128k", "hf_init", LONGROPE, 8192, "equivalent", set()),
    ("longrope-at-threshold", "phi-3-mini-128k", "hf_init", LONGROPE, 4096, "equivalent", set()),
]

WRONG = [
    ("pythia-head-width-denominator", "pythia-1.4b", "rotate_half", {"rot": 32, "den": 128}, None, "differs",
     {"denominator"}),
    ("phi2-head-width-denominator", "phi-2", "rotate_half", {"rot": 32, "den": 80}, None, "differs",
     {"denominator"}),
    ("phi2-whole-head", "phi-2", "rotate_half", {}, None, "differs", {"rotary_dim"}),
    ("llama2-theta-wrong", "llama-2-7b", "rotate_half", {"base": "500000.0"}, None, "differs", {"frequency"}),
    ("llama31-theta-wrong", "llama-3.1-8b", "hf_init", {**LLAMA3, "base": "10000.0"}, None, "differs",
     {"frequency"}),
    ("llama31-llama3-scaling-missing", "llama-3.1-8b", "rotate_half", {"base": "500000.0"}, None, "differs",
     {"frequency"}),
    ("qwen2-yarn-attention-missing", "qwen2-7b-yarn", "hf_init", {**YARN, "attention": "1.0"}, None, "differs",
     {"scaling"}),
    ("longchat-interpolation-missing", "longchat-7b-16k-linear", "rotate_half", {}, None, "differs",
     {"frequency"}),
    ("gemma-position-from-1", "gemma-7b", "rotate_half", {"offset": 1}, None, "differs", {"position_offset"}),
    ("dynamic-always-long", "llama-2-7b-dynamic-ntk", "hf_init", {**DYNAMIC, "fixed_seq_len": 8192}, None,
     "differs", {"frequency"}),
    ("dynamic-never-grows", "llama-2-7b-dynamic-ntk", "rotate_half", {}, 8192, "differs", {"frequency"}),
    ("longrope-never-switches", "phi-3-mini-128k", "hf_init", {**LONGROPE, "long": _phi3_factors("short")}, 8192,
     "differs", {"frequency"}),
    ("longrope-factors-missing", "phi-3-mini-128k", "hf_init",
     {**LONGROPE, "short": "[1.0] * 48", "long": "[1.0] * 48"}, None, "differs", {"frequency"}),
    ("longrope-attention-missing", "phi-3-mini-128k", "hf_init", {**LONGROPE, "attention": "1.0"}, None,
     "differs", {"scaling"}),
]

CASES = RIGHT + WRONG


@pytest.fixture
def write_source(tmp_path):
    counter = iter(range(10_000))

    def write(library: str, style: str, params: dict) -> Path:
        if library == "torch":
            pytest.importorskip("torch")
        path = tmp_path / f"port_{library}_{next(counter)}.py"
        path.write_text(source(library, style, params), encoding="utf-8")
        return path

    return write


@pytest.mark.parametrize("library", impl.LIBRARIES)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_audit_against_published_config(case, library, write_source):
    name, config, style, params, seq_len, verdict, whats = case
    path = write_source(library, style, params)
    result = symproof.audit(load_function(f"{path}:apply_rope"), CONFIGS / f"{config}.json", seq_len=seq_len)
    assert result.verdict == verdict, result.summary()
    assert {d.what for d in result.differences} == whats, result.summary()
    assert result.backend == library
    declared = symproof.load_model_config(CONFIGS / f"{config}.json")
    assert result.variant.width == declared.width and result.variant.rotated_width == declared.rotated_width
    for difference in result.differences:
        shown = difference.as_dict()["input"]
        assert shown and shown["position"] in result.positions


#: what the text names for the config-specific bugs: (case id, words the summary must contain)
EXPLAINED = [
    ("pythia-head-width-denominator", ["denominator: expected 32, found 128", "(the head width)"]),
    ("phi2-head-width-denominator", ["denominator: expected 32, found 80", "(the head width)"]),
    ("llama2-theta-wrong", ["frequency: expected base theta = 10000, found base 500000"]),
    ("llama2-meta-complex", ["relayout_pairing(w, n_heads, src='half', dst='adjacent')"]),
    ("qwen2-yarn-attention-missing", ["scaling: expected 1.138629, found 1"]),
    ("dynamic-always-long", ["at call length 4096, found base 30528", "audited as calls of length 4096"]),
    ("longrope-never-switches", ["found the short-call frequencies", "the switch at 4096 is missing"]),
    ("longrope-factors-missing", ["no per-pair factors", "short_factor / long_factor) are missing"]),
]


@pytest.mark.parametrize("case_id, words", EXPLAINED, ids=[e[0] for e in EXPLAINED])
def test_the_text_names_the_cause(case_id, words, write_source):
    name, config, style, params, seq_len, verdict, whats = next(c for c in CASES if c[0] == case_id)
    path = write_source("numpy", style, params)
    result = symproof.audit(load_function(f"{path}:apply_rope"), CONFIGS / f"{config}.json", seq_len=seq_len)
    text = result.summary()
    for word in words:
        assert word in text, text


# -- the command: --head-dim with a config, invalid configs, --seq-len ------------------------------------------

def _run(capsys, *argv):
    code = main(["audit", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


#: (id, config, style, params, extra arguments, exit code, JSON head_dim and rotated width or error words)
HEAD_DIM = [
    ("llama2-at-64", "llama-2-7b", "rotate_half", {}, ["--head-dim", 64], 0, (64, 64)),
    ("gptj-at-96", "gpt-j-6b", "every_two", {"rot": 64}, ["--head-dim", 96], 0, (96, 64)),
    ("gptj-at-96-whole-head", "gpt-j-6b", "every_two", {}, ["--head-dim", 96], 1, (96, 64)),
    ("pythia-at-64", "pythia-1.4b", "rotate_half", {"rot": 16}, ["--head-dim", 64], 0, (64, 16)),
    ("pythia-at-64-old-width", "pythia-1.4b", "rotate_half", {"rot": 32}, ["--head-dim", 64], 1, (64, 16)),
    ("gemma-at-128", "gemma-7b", "rotate_half", {}, ["--head-dim", 128], 0, (128, 128)),
    ("gptj-narrower-than-rotary-dim", "gpt-j-6b", "every_two", {"rot": 64}, ["--head-dim", 32], 2,
     ["gpt-j-6b.json", "rotary_dim", "--head-dim 32"]),
    ("phi2-odd-rotated-width", "phi-2", "rotate_half", {}, ["--head-dim", 64], 2,
     ["phi-2.json", "partial_rotary_factor", "25", "--head-dim 64"]),
    ("odd-head-dim", "llama-2-7b", "rotate_half", {}, ["--head-dim", 63], 2, ["--head-dim must be an even"]),
    ("seq-len-too-short", "llama-2-7b", "rotate_half", {}, ["--seq-len", 1], 2, ["--seq-len must be an integer"]),
]


@pytest.mark.parametrize("case", HEAD_DIM, ids=[c[0] for c in HEAD_DIM])
def test_head_dim_and_seq_len_with_a_config(case, write_source, capsys):
    name, config, style, params, extra, exit_code, expected = case
    path = write_source("numpy", style, params)
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", CONFIGS / f"{config}.json", "--json", *extra)
    assert code == exit_code, err
    if exit_code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        for word in expected:
            assert word in err
    else:
        document = json.loads(out)
        assert (document["head_dim"], document["like"]["rotated_width"]) == expected


#: (id, file name, text, words of the one-line error)
INVALID_CONFIGS = [
    ("not-json", "config.json", "{\"model_type\": \"llama\",", ["config.json", "not valid JSON"]),
    ("not-an-object", "config.json", "[1, 2]", ["config.json", "expected a JSON object"]),
    ("unknown-family", "config.json", json.dumps({"model_type": "bert", "hidden_size": 768}),
     ["model_type", "'bert'", "supported"]),
    ("unknown-rope-type", "config.json",
     json.dumps({**_config("llama-2-7b"), "rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2}}),
     ["rope_scaling.rope_type", "ntk-by-parts"]),
    ("linear-without-factor", "config.json",
     json.dumps({**_config("llama-2-7b"), "rope_scaling": {"type": "linear"}}), ["rope_scaling.factor", "required"]),
    ("nan-theta", "config.json", json.dumps({**_config("mistral-7b")}).replace("10000.0", "NaN"),
     ["config.json", "non-finite"]),
    ("negative-theta", "config.json", json.dumps({**_config("mistral-7b"), "rope_theta": -1}), ["rope_theta"]),
    ("no-head-width", "config.json", json.dumps({"model_type": "llama", "hidden_size": None}), ["head_dim", "required"]),
    ("gptj-with-scaling", "config.json",
     json.dumps({**_config("gpt-j-6b"), "rope_scaling": {"type": "linear", "factor": 2}}), ["reads no rope scaling"]),
    ("missing-file", None, None, ["no such file"]),
]


@pytest.mark.parametrize("case", INVALID_CONFIGS, ids=[c[0] for c in INVALID_CONFIGS])
def test_an_invalid_config_is_one_line_and_exit_2(case, tmp_path, capsys):
    name, file_name, text, words = case
    config = tmp_path / (file_name or "absent.json")
    if text is not None:
        config.write_text(text, encoding="utf-8")
    user = tmp_path / "user.py"  # it must not run: a bad --like is reported first
    user.write_text("raise SystemExit('the user file was imported')\n", encoding="utf-8")
    code, out, err = _run(capsys, f"{user}:apply_rope", "--like", config)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and "imported" not in err, err
    for word in words:
        assert word in err, err


def test_a_bad_seq_len_is_reported_before_the_user_file_runs(tmp_path, capsys):
    user = tmp_path / "user.py"
    user.write_text("raise SystemExit('the user file was imported')\n", encoding="utf-8")
    code, out, err = _run(capsys, f"{user}:apply_rope", "--like", CONFIGS / "phi-3-mini-128k.json", "--seq-len", 0)
    assert code == 2 and "--seq-len" in err and "imported" not in err


def test_seq_len_sets_the_probed_positions_and_the_call_length(write_source):
    path = write_source("numpy", "hf_init", LONGROPE)
    fn = load_function(f"{path}:apply_rope")
    short = symproof.audit(fn, CONFIGS / "phi-3-mini-128k.json")
    long = symproof.audit(fn, CONFIGS / "phi-3-mini-128k.json", seq_len=131072)
    assert short.seq_len == 4096 and max(short.positions) == 4095
    assert long.seq_len == 131072 and max(long.positions) == 131071 and 32767 in long.positions
    assert short.verdict == long.verdict == "equivalent"
    plain_path = write_source("numpy", "rotate_half", {})
    plain = symproof.audit(load_function(f"{plain_path}:apply_rope"), CONFIGS / "mistral-7b.json")  # no length
    assert plain.seq_len is None and plain.as_dict()["seq_len"] is None and max(plain.positions) == 32767
    assert "call length" not in plain.summary() and "audited as calls of length 4096" in short.summary()


# -- the real command in fresh interpreters -----------------------------------------------------------------------

#: (id, config, library, style, params, extra arguments, exit code, what stdout shows)
COMMAND = [
    ("llama2-right-torch", "llama-2-7b", "torch", "rotate_half", {}, ["--json"], 0, {"verdict": "equivalent"}),
    ("llama2-meta-port", "llama-2-7b", "numpy", "complex", {}, [], 0,
     "relayout_pairing(w, n_heads, src='half', dst='adjacent')"),
    ("pythia-head-width", "pythia-1.4b", "torch", "rotate_half", {"rot": 32, "den": 128}, ["--json"], 1,
     {"verdict": "differs", "whats": ["denominator"]}),
    ("qwen2-yarn-unscaled", "qwen2-7b-yarn", "numpy", "hf_init", {**YARN, "attention": "1.0"}, [], 1,
     "scaling: expected 1.138629, found 1"),
    ("phi3-long-call", "phi-3-mini-128k", "torch", "hf_init", LONGROPE, ["--seq-len", 8192, "--json"], 0,
     {"verdict": "equivalent", "seq_len": 8192}),
    ("gptj-too-narrow", "gpt-j-6b", "numpy", "every_two", {"rot": 64}, ["--head-dim", 32], 2,
     "error: "),
]


@pytest.mark.parametrize("case", COMMAND, ids=[c[0] for c in COMMAND])
def test_the_command(case, write_source):
    name, config, library, style, params, extra, exit_code, shows = case
    path = write_source(library, style, params)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{path}:apply_rope", "--like",
                          str(CONFIGS / f"{config}.json"), *map(str, extra)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == exit_code, run.stderr
    if exit_code == 2:
        assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1 and shows in run.stderr
    elif isinstance(shows, dict):
        document = json.loads(run.stdout)
        assert document["exit_code"] == exit_code and document["verdict"] == shows["verdict"]
        assert [d["what"] for d in document["differences"]] == shows.get("whats", [])
        if "seq_len" in shows:
            assert document["seq_len"] == shows["seq_len"]
    else:
        assert shows in run.stdout


@pytest.mark.parametrize("config, seq_len, shown", [("phi-3-mini-128k", None, "seq_len = 4096"),
                                                     ("phi-3-mini-128k", 8192, "seq_len = 8192"),
                                                     ("llama-3.1-8b", None, None)])
def test_the_report_says_which_call_length_was_audited(config, seq_len, shown, write_source, tmp_path):
    from symproof.report._audit import write_report

    params = LONGROPE if config.startswith("phi-3") else LLAMA3
    path = write_source("numpy", "hf_init", params)
    result = symproof.audit(load_function(f"{path}:apply_rope"), CONFIGS / f"{config}.json", seq_len=seq_len)
    html, tex = (Path(p).read_text(encoding="utf-8") for p in write_report(result, tmp_path / "report")[:2])
    if shown is None:
        assert "seq_len" not in html and "seq" not in tex
    else:
        assert shown in html and shown.replace("_", r"\_") in tex
