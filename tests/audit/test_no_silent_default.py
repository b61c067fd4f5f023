"""No silent assumption: every parameter of the audited code is filled from the model or named.

Real implementations of scaled rules (faithful copies in ``reference_code.py``), each audited with one plain
command against a config whose values differ from the code's defaults; then, for every scaling rule the
project reads from configs, an implementation generated around transformers' own frequency function, taking
each parameter of the rule by name: filled when the name says which value it is, a refusal naming the
parameter when it only says it concerns scaling or length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import reference_code as ref
from symproof import InvalidInputError, audit
from symproof._audit._runner import load_target
from symproof.models._config import ROPE_TYPES

torch = pytest.importorskip("torch")

_LLAMA = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64}
LLAMA31 = dict(_LLAMA, rope_theta=500000.0, max_position_embeddings=131072,
               rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": 8192})
# factor 32 (Llama 3.2): torchtune's defaults (scale_factor 8) are another model's
LLAMA32 = dict(LLAMA31, rope_scaling=dict(LLAMA31["rope_scaling"], factor=32.0))
# no scaling at all: torchtitan's default RoPEScalingArgs() would scale
LLAMA2 = dict(_LLAMA, rope_theta=10000.0, max_position_embeddings=4096)
YARN = dict(_LLAMA, rope_theta=1000000.0, max_position_embeddings=131072,
            rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                          "beta_fast": 24.0})
LINEAR = dict(_LLAMA, rope_theta=10000.0, max_position_embeddings=16384,
              rope_scaling={"rope_type": "linear", "factor": 4.0})

# (id, source, target, config, verdict, what "called as" must show): adjacent-pair code against an HF
# (half-pair) config is the same model once Wq, Wk are re-laid, which is what the audit says
REAL = [
    ("torchtune-llama3-scaled-rope", ref.TORCHTUNE_LLAMA3, "Llama3ScaledRoPE", LLAMA32, "equivalent_after_relayout",
     ["base=500000", "scale_factor=32", "old_context_len=8192"]),
    ("torchtitan-llama3", ref.TORCHTITAN, "apply_rotary_emb", LLAMA31, "equivalent_after_relayout",
     ["theta=500000", "RoPEScalingArgs(scaling_factor=8"]),
    ("torchtitan-no-scaling", ref.TORCHTITAN, "apply_rotary_emb", LLAMA2, "equivalent_after_relayout",
     ["theta=10000", "rope_scaling_args=None"]),
    ("vllm-yarn", ref.VLLM_YARN, "YaRNScalingRotaryEmbedding", YARN, "equivalent",
     ["base=1000000", "scaling_factor=4", "max_position_embeddings=32768", "beta_fast=24"]),
    ("meta-use-scaled", ref.META_LLAMA3, "apply_rotary_emb", LLAMA31, "equivalent_after_relayout",
     ["theta=500000", "use_scaled=True"]),
    ("gpt-fast-rope-scaling", ref.GPT_FAST_SCALED, "apply_rotary_emb", LLAMA31, "equivalent_after_relayout",
     ["base=500000", "dtype=torch.float32", "'factor': 8"]),
    ("litgpt-condense-ratio", ref.LITGPT, "apply_rope", LINEAR, "equivalent",
     ["condense_ratio=4", "extra_config=None"]),
    ("litgpt-llama3", ref.LITGPT, "apply_rope", LLAMA31, "equivalent",
     ["base=500000", "extra_config={'rope_type': 'llama3'"]),
]


def _files(tmp_path, source, config, stem="impl"):
    code = tmp_path / f"{stem}.py"
    code.write_text(source)
    like = tmp_path / f"{stem}_config.json"
    like.write_text(json.dumps(config))
    return code, like


@pytest.mark.parametrize("case", REAL, ids=[c[0] for c in REAL])
def test_real_scaled_code_with_one_plain_command(case, tmp_path):
    """The command as a user types it (a child process, no flag): the config's every value reaches the code."""
    _, source, name, config, verdict, shown = case
    code, like = _files(tmp_path, source, config)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{code}:{name}", "--like", str(like), "--json"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == verdict
    for text in shown:
        assert text in document["convention"]["call"], document["convention"]["call"]


def test_the_defaults_left_are_listed_in_text_and_json(tmp_path):
    code, like = _files(tmp_path, ref.TORCHTITAN, LLAMA2)
    result = audit(load_target(f"{code}:apply_rotary_emb")[0], str(like))
    assert result.as_dict()["left_at_default"] == ["apply_rotary_emb: positions=None"]
    assert "left at its default: apply_rotary_emb: positions=None" in result.summary()


def test_a_scaling_default_the_audit_cannot_fill_refuses(tmp_path):
    """Meta's flag renamed to a name the audit does not know: it says which parameter and stops (exit 2)."""
    source = ref.META_LLAMA3.replace("use_scaled", "use_llama31_scaling")
    code, like = _files(tmp_path, source, LLAMA31)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{code}:apply_rotary_emb", "--like", str(like)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 2, run.stdout + run.stderr
    message = run.stderr.strip()
    assert "use_llama31_scaling is left at its default False" in message and "rope_type llama3" in message
    assert "\n" not in message and "Traceback" not in message and "--call" in message


# -- lengths: a cache's size is filled, a length default that is the model's is no assumption -------------------

#: a module whose table is sized by ``NAME`` (default DEFAULT), the rows it needs computed when it is too short
SIZED = """
import torch


class Rope(torch.nn.Module):
    def __init__(self, dim, theta=10000.0, NAME=DEFAULT):
        super().__init__()
        self.rows = NAME
        self.register_buffer("inv_freq", 1.0 / theta ** (torch.arange(0, dim, 2).double() / dim))

    def forward(self, x, positions):
        rows = max(self.rows, int(positions.max()) + 1)
        angles = torch.outer(torch.arange(rows, dtype=torch.float64), self.inv_freq)[positions]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)
"""

# (parameter, its default, config, what "called as" shows or None for "left at its default")
LENGTHS = [
    ("cache_max_seq_len", 8192, LLAMA2, "cache_max_seq_len=4096"),  # a cache's size: the model's length
    ("cache_max_seq_len", 8192, dict(LLAMA2, max_position_embeddings=8192), "cache_max_seq_len=8192"),
    ("context_len", 4096, LLAMA2, None),  # a length not filled whose default is the model's own: listed, no stop
    # a table sized by Llama 4's 10485760 positions would take 10 GB: the rows of the positions probed
    ("max_seq_len", 2048, dict(LLAMA2, max_position_embeddings=10485760),
     "max_seq_len=131072 (rows for the positions probed: max_position_embeddings 10485760 would exceed"),
]


@pytest.mark.parametrize("name, default, config, shown", LENGTHS, ids=[f"{c[0]}-{c[2]['max_position_embeddings']}"
                                                                         for c in LENGTHS])
def test_a_length_parameter_is_filled_or_its_default_is_the_model_s(name, default, config, shown, tmp_path):
    source = SIZED.replace("NAME", name).replace("DEFAULT", str(default))
    code, like = _files(tmp_path, source, config)
    result = audit(load_target(f"{code}:Rope")[0], str(like))
    assert result.verdict == "equivalent_after_relayout", result.summary()
    if shown is None:
        assert f"Rope: {name}={default}" in result.as_dict()["left_at_default"]
    else:
        assert shown in result.convention["call"], result.convention["call"]


def test_a_length_default_that_is_not_the_model_s_still_stops_the_audit(tmp_path):
    source = SIZED.replace("NAME", "context_len").replace("DEFAULT", "2048")
    code, like = _files(tmp_path, source, LLAMA2)
    with pytest.raises(InvalidInputError, match="parameter context_len is left at its default 2048, but it concerns "
                                                "length and the model has max_position_embeddings 4096"):
        audit(load_target(f"{code}:Rope")[0], str(like))


# -- every scaling rule, every parameter -------------------------------------------------------------------

GENERATED = '''
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

RULE = {rule!r}
KEYS = {keys!r}


def build_cos_sin(dim, end, theta=3.0, {params}):
    given = dict(zip(KEYS, ({names})))
    rope = dict(rope_type=RULE, rope_theta=theta, **given)
    config = LlamaConfig(hidden_size=dim * 4, num_attention_heads=4, head_dim=dim, max_position_embeddings=end,
                         rope_parameters=rope)
    inv_freq, scale = ROPE_INIT_FUNCTIONS[RULE](config)
    angles = torch.outer(torch.arange(end, dtype=torch.float64), inv_freq.double())
    emb = torch.cat([angles, angles], dim=-1)
    return emb.cos() * scale, emb.sin() * scale


def apply_rope(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin
'''

_PAIRS = 32
# rule -> (the config's rope_scaling, max_position_embeddings, {parameter: a default that is not the model's})
RULES = {
    "linear": ({"factor": 4.0}, 8192, {"factor": 1.0}),
    "dynamic": ({"factor": 2.0}, 4096, {"factor": 1.0}),
    "yarn": ({"factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 16.0, "beta_slow": 2.0}, 16384,
             {"factor": 1.5, "original_max_position_embeddings": 2048, "beta_fast": 32.0, "beta_slow": 1.0}),
    "llama3": ({"factor": 16.0, "low_freq_factor": 2.0, "high_freq_factor": 8.0,
                "original_max_position_embeddings": 1024}, 16384,
               {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}),
    "longrope": ({"factor": 8.0, "original_max_position_embeddings": 2048,
                  "short_factor": [1.0 + r / 16 for r in range(_PAIRS)],
                  "long_factor": [2.0 + r / 4 for r in range(_PAIRS)]}, 16384,
                 {"factor": 4.0, "original_max_position_embeddings": 4096, "short_factor": [1.0] * _PAIRS,
                  "long_factor": [1.0] * _PAIRS}),
    # the partial factor counts the turning pairs of the whole head (the others at frequency 0)
    "proportional": ({"factor": 2.0, "partial_rotary_factor": 0.25}, 4096,
                     {"factor": 1.0, "partial_rotary_factor": 1.0}),
}


def test_every_scaling_rule_the_project_reads_is_generated():
    assert set(RULES) == set(ROPE_TYPES) - {"default"}


def _generated(rule, rename=None):
    _, _, defaults = RULES[rule]
    names = {key: f"my_{key}" if key == rename else key for key in defaults}
    params = ", ".join(f"{names[key]}={value!r}" for key, value in defaults.items())
    return GENERATED.format(rule=rule, keys=tuple(defaults), params=params,
                            names=", ".join(names[key] for key in defaults) + ",")


def _config(rule):
    scaling, max_position, _ = RULES[rule]
    return dict(_LLAMA, rope_theta=50000.0, max_position_embeddings=max_position,
                rope_scaling=dict(scaling, rope_type=rule))


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_parameter_of_the_rule_is_filled(rule, tmp_path):
    code, like = _files(tmp_path, _generated(rule), _config(rule), stem=f"gen_{rule}")
    result = audit(load_target(f"{code}:apply_rope")[0], str(like))
    assert result.verdict == "equivalent", result.summary()
    for key in RULES[rule][2]:
        assert f"{key}=" in result.convention["call"]


CANNOT = [(rule, key) for rule in sorted(RULES) for key in RULES[rule][2]]


@pytest.mark.parametrize("rule, key", CANNOT, ids=[f"{r}-{k}" for r, k in CANNOT])
def test_a_parameter_the_audit_cannot_fill_stops_it_by_name(rule, key, tmp_path):
    code, like = _files(tmp_path, _generated(rule, rename=key), _config(rule), stem=f"gen_{rule}_{key}")
    with pytest.raises(InvalidInputError) as info:
        audit(load_target(f"{code}:apply_rope")[0], str(like))
    message = str(info.value)
    assert f"parameter my_{key} is left at its default" in message, message
    assert "without an assumption" in message and "\n" not in message


# -- diagnoses that say what is known ------------------------------------------------------------------------

HF64 = {"name": "hf", "kind": "rotary", "width": 64, "pairing": "half", "frequencies": {"rule": "geometric",
                                                                                       "base": 10000}}


def _toml(tmp_path, like):
    lines = [f"{k} = {json.dumps(v)}" for k, v in like.items() if not isinstance(v, dict)]
    for key, value in like.items():
        if isinstance(value, dict):
            lines += [f"[{key}]"] + [f"{k} = {json.dumps(v)}" for k, v in value.items()]
    path = tmp_path / f"{like['name']}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _numpy_rope(base: float, denominator: int, returns: str = "x") -> str:
    return f'''
import importlib

import numpy as np


def rope(x, positions):
    d = x.shape[-1]
    inv = {base!r} ** (-np.arange(0, d, 2) / {denominator})
    ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None, :]
    cos, sin = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    out = x * cos + np.concatenate([-x2, x1], -1) * sin
    return {returns}
'''


def test_a_denominator_that_is_also_a_base_names_both(tmp_path):
    """10000^(-2r/96) = 464.16^(-2r/64): the audit cannot tell a wrong denominator from a wrong base; it says both."""
    code = tmp_path / "den.py"
    code.write_text(_numpy_rope(10000.0, 96, "out"))
    result = audit(load_target(f"{code}:rope")[0], _toml(tmp_path, HF64))
    assert [d.what for d in result.differences] == ["denominator"], result.summary()
    detail = result.differences[0].detail
    assert "denominator 96" in detail and "equally, base 464.159 at denominator 64" in detail, detail


def test_code_returning_another_library_s_arrays_is_audited(tmp_path):
    """NumPy in, torch out (the file never says `import torch`): converted, not an internal error."""
    code = tmp_path / "mixed.py"
    code.write_text(_numpy_rope(10000.0, 64, 'importlib.import_module("torch").from_numpy(out)'))
    result = audit(load_target(f"{code}:rope")[0], _toml(tmp_path, HF64))
    assert result.verdict == "equivalent", result.summary()


def test_a_time_limit_at_a_large_position_suggests_seq_len(tmp_path):
    code = tmp_path / "slow.py"
    code.write_text(_numpy_rope(10000.0, 64, "out").replace(
        "    d = x.shape[-1]\n", "    d = x.shape[-1]\n    if np.max(positions) > 20000:\n"
                                "        import time\n        time.sleep(60)\n", 1))
    with pytest.raises(InvalidInputError) as info:
        audit(load_target(f"{code}:rope")[0], _toml(tmp_path, HF64), probe_seconds=2)
    message = str(info.value)
    assert "did not return within" in message and "--seq-len" in message and "32767" in message, message


ZERO_PAIRS = [1.0, 0.0, 0.5, 0.0, 0.25, 0.0, 0.125, 0.0]  # one axis's slice of a two-axis rotary


@pytest.mark.parametrize("edit, whats", [("", []), ("ang = -ang", ["direction"]), ("ang = ang / 2", ["frequency"]),
                                         ("ang = ang + F[None, :]", ["position_offset"])],
                         ids=["right", "flipped", "halved", "from-one"])
def test_zero_frequency_pairs_are_pairs_of_the_model(edit, whats, tmp_path):
    """Pairs of frequency zero never move: they are the model's (angle 0), not coordinates the code leaves out."""
    code = tmp_path / "zero.py"
    code.write_text(f'''
import numpy as np

F = np.array({ZERO_PAIRS!r})


def rope(x, positions):
    d = x.shape[-1]
    ang = np.asarray(positions, dtype=np.float64)[:, None] * F[None, :]
    {edit or "pass"}
    c, s = np.cos(np.concatenate([ang, ang], -1)), np.sin(np.concatenate([ang, ang], -1))
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * c + np.concatenate([-x2, x1], -1) * s
''')
    like = {"name": "zero", "kind": "rotary", "width": 16, "pairing": "half",
            "frequencies": {"rule": "list", "values": ZERO_PAIRS}}
    result = audit(load_target(f"{code}:rope")[0], _toml(tmp_path, like))
    assert [d.what for d in result.differences] == whats, result.summary()
    assert result.verdict == ("equivalent" if not whats else "differs")
