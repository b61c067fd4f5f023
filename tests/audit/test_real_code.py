"""Real RoPE code audited as it is: transformers' own modules and faithful copies of public reference code.

No adapter: each case is a target name (a function, a class or
``Class.method``) plus at most a flag, and the audit finds the calling
convention itself (the ``convention`` it reports is checked too).  The
historical bugs are one-line edits of the same sources, each with the
diagnosis it must get.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import reference_code as ref
from symproof import InvalidInputError, audit
from symproof._audit._runner import CONVENTIONS, load_target

torch = pytest.importorskip("torch")

HF64 = {"name": "hf", "kind": "rotary", "width": 64, "pairing": "half",
        "frequencies": {"rule": "geometric", "base": 10000}}
META64 = dict(HF64, name="meta", pairing="adjacent")
META64_LLAMA3 = dict(META64, name="meta-llama3", frequencies={"rule": "geometric", "base": 500000})
LLAMA3_CONFIG = {"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64,
                 "rope_theta": 500000.0, "max_position_embeddings": 8192}
LLAMA2_CONFIG = dict(LLAMA3_CONFIG, rope_theta=10000.0, max_position_embeddings=4096)
DYNAMIC = {"name": "dynamic-ntk", "kind": "rotary", "width": 64, "pairing": "half", "params": {"s": 2, "L": 2048},
           "frequencies": {"rule": "geometric", "base": "10000 * Max(s * seq_len / L - (s - 1), 1)**(d / (d - 2))"},
           "length": {"threshold": 2048}}


def _like(tmp_path, like):
    """A dict with ``model_type`` is a config.json; any other dict a variant TOML."""
    if "model_type" in like:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(like))
        return str(path)
    lines = []
    for key, value in like.items():
        if not isinstance(value, dict):
            lines.append(f"{key} = {json.dumps(value)}")
    for key, value in like.items():
        if isinstance(value, dict):
            lines.append(f"[{key}]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in value.items()]
    path = tmp_path / f"{like['name']}.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _write(tmp_path, source, name="impl"):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    return path


# (id, source, target NAME, flags, like, verdict, differences, convention row)
REFERENCE = [
    ("meta-apply", ref.META, "apply_rotary_emb", {}, META64, "equivalent", [], "table-freqs-qk"),
    ("meta-table", ref.META, "precompute_freqs_cis", {}, META64, "equivalent", [], "table-freqs-qk"),
    ("meta-vs-hf-layout", ref.META, "apply_rotary_emb", {}, HF64, "equivalent_after_relayout", [], "table-freqs-qk"),
    ("mistral", ref.MISTRAL, "apply_rotary_emb", {}, META64, "equivalent", [], "table-freqs-qk"),
    # gpt-fast's cache dtype (bfloat16 by default) is a parameter: filled with the activations' dtype (float32
    # unless --dtype), as gpt-fast itself passes the model's dtype, not left at a default that rounds the table
    ("gpt-fast", ref.GPT_FAST, "apply_rotary_emb", {}, META64, "equivalent", [], "table-freqs"),
    ("torchtune", ref.TORCHTUNE, "RotaryPositionalEmbeddings", {}, META64, "equivalent", [], "module-positions"),
    ("rotary-embedding-torch-rotate", ref.ROTARY_EMBEDDING_TORCH, "RotaryEmbedding.rotate_queries_or_keys", {},
     META64, "equivalent", [], "module-offset"),
    ("rotary-embedding-torch-forward", ref.ROTARY_EMBEDDING_TORCH, "RotaryEmbedding", {}, META64, "equivalent", [],
     "angles-module"),
    ("vllm-class", ref.VLLM, "RotaryEmbedding", {}, LLAMA2_CONFIG, "equivalent", [], "vllm"),
    ("vllm-method", ref.VLLM, "RotaryEmbedding.forward_native", {}, LLAMA2_CONFIG, "equivalent", [], "vllm"),
    ("flash-attn-torch", ref.FLASH, "apply_rotary_emb_torch", {}, HF64, "equivalent", [], "table-cos-sin"),
    ("llama2c-loop", ref.LLAMA2C, "rope", {}, META64, "equivalent", [], "vector-qk-position"),
    ("hf-4.31-module", ref.HF_431_DYNAMIC, "LlamaRotaryEmbedding", {}, HF64, "equivalent", [], "hf-rotary"),
    ("hf-4.31-dynamic-ntk", ref.HF_431_DYNAMIC, "LlamaDynamicNTKScalingRotaryEmbedding", {}, DYNAMIC, "differs",
     ["stateful"], "hf-rotary"),
    # forward(x, seq_dim, seq_len) gives whole tables, apply(q, k, cos, sin, offset) slices them from the start
    ("gpt-neox", ref.GPT_NEOX, "RotaryEmbedding", {}, HF64, "equivalent", [], "neox-offset"),
    ("meta-wrong-layout-forced", ref.META, "apply_rotary_emb", {"layout": "bthd"}, META64, "equivalent", [],
     "table-freqs-qk"),
]

# historical bugs: (id, source, (old line, new line), target, like, differences the audit must name)
BUGS = [
    ("fp16-angles", ref.META, ("t = torch.arange(end, device=freqs.device)  # type: ignore",
                               "t = torch.arange(end, device=freqs.device).half()"),
     "apply_rotary_emb", META64, ["precision"]),
    ("bf16-angles", ref.TORCHTUNE, ("seq_idx = torch.arange(max_seq_len, dtype=self.theta.dtype, device=self.theta.device)",
                                    "seq_idx = torch.arange(max_seq_len, dtype=torch.bfloat16, device=self.theta.device)"),
     "RotaryPositionalEmbeddings", META64, ["precision"]),
    ("wrong-base", ref.META, ("freqs = 1.0 / (theta ** (", "freqs = 1.0 / (10000.0 ** ("), "apply_rotary_emb",
     META64_LLAMA3, ["frequency"]),
    ("rotate-half-sign", ref.FLASH, ("return torch.cat((-x2, x1), dim=-1)", "return torch.cat((x2, -x1), dim=-1)"),
     "apply_rotary_emb_torch", HF64, ["direction"]),
    ("rotate-half-mixed", ref.FLASH, ("    if not interleaved:\n        x1, x2 = x.chunk(2, dim=-1)",
                                      "    if not interleaved:\n        x1, x2 = x[..., ::2], x[..., 1::2]"),
     "apply_rotary_emb_torch", HF64, ["pairing"]),
    ("missing-offset", ref.ROTARY_EMBEDDING_TORCH,
     ("self.get_seq_pos(seq_len, device=device, dtype=dtype, offset=offset)",
      "self.get_seq_pos(seq_len, device=device, dtype=dtype)"),
     "RotaryEmbedding.rotate_queries_or_keys", META64, ["position_offset"]),
    ("positions-from-one", ref.VLLM, ("        positions = positions.flatten()",
                                      "        positions = positions.flatten() + 1"),
     "RotaryEmbedding", LLAMA2_CONFIG, ["position_offset"]),
    ("dynamic-ntk-stale-cache", ref.HF_431_DYNAMIC, ("", ""), "LlamaDynamicNTKScalingRotaryEmbedding", DYNAMIC,
     ["stateful"]),
]


def _in_process(tmp_path, source, name):
    """The target as an object (this process: no child start, torch imported once for the whole table)."""
    path = _write(tmp_path, source, name=f"ref_{abs(hash(source)) % 10**8}")
    return load_target(f"{path}:{name}")[0]


@pytest.mark.parametrize("case", REFERENCE, ids=[c[0] for c in REFERENCE])
def test_reference_code_without_adapter(case, tmp_path):
    _, source, name, flags, like, verdict, whats, convention = case
    result = audit(_in_process(tmp_path, source, name), _like(tmp_path, like), **flags)
    assert result.verdict == verdict, result.summary()
    assert [d.what for d in result.differences] == whats, result.summary()
    assert result.convention["name"] == convention
    assert convention in {row.name for row in CONVENTIONS}


@pytest.mark.parametrize("case", BUGS, ids=[c[0] for c in BUGS])
def test_historical_bugs_are_named(case, tmp_path):
    _, source, (old, new), name, like, whats = case
    assert old in source, "the bug's line must be in the source it edits"
    buggy = source.replace(old, new, 1)
    result = audit(_in_process(tmp_path, buggy, name), _like(tmp_path, like))
    assert result.verdict == "differs", result.summary()
    assert [d.what for d in result.differences][:len(whats)] == whats, result.summary()


@pytest.mark.parametrize("case", [c for c in BUGS if c[0] != "dynamic-ntk-stale-cache"], ids=lambda c: c[0])
def test_the_fixed_code_passes(case, tmp_path):
    """Each bug's source without the edit is right: the diagnosis comes from the edit, not the convention."""
    _, source, _, name, like, _ = case
    result = audit(_in_process(tmp_path, source, name), _like(tmp_path, like))
    expected = "differs" if source is ref.GPT_FAST else "equivalent"
    assert result.verdict == expected, result.summary()


def test_a_table_shorter_than_the_probes_shrinks_the_range(tmp_path):
    """torchtune's cache has max_seq_len = 4096 rows: probes stay below it, and the output says so."""
    result = audit(_in_process(tmp_path, ref.TORCHTUNE, "RotaryPositionalEmbeddings"), _like(tmp_path, META64))
    assert max(result.positions) == 4095
    assert "4096" in result.range_note


def test_an_index_error_beyond_a_hidden_table_shrinks_the_range(tmp_path):
    """A table the audit cannot see (a global of 1000 rows): the IndexError at the largest probe shrinks it."""
    source = ref.META + "\n_TABLE = precompute_freqs_cis(64, 1000)\n\n\ndef rope(x, positions):\n" \
                        "    return apply_rotary_emb(x[:, :, None], x[:, :, None], _TABLE[positions])[0][:, :, 0]\n"
    result = audit(_in_process(tmp_path, source, "rope"), _like(tmp_path, META64))
    assert result.verdict == "equivalent", result.summary()
    assert max(result.positions) < 1000 and "IndexError" in result.range_note


@pytest.mark.parametrize("source, name, why", [
    ("def rope(a, b, c, d, e, f):\n    return a\n", "rope",
     "the signature (a, b, c, d, e, f): no row fills its required b, c, e, f"),
    ("def rope(x, freqs, scale=1):\n    return x\n", "rope",  # x-transformers' order: x, then the angles
     "the signature (x, freqs, scale=...): no row takes its arguments in this order"),
    ("class Rope:\n    def __init__(self, dim):\n        pass\n\n    def call(self, x):\n        return x\n", "Rope",
     "the class: Rope has no forward method to call (a Keras layer's call is not read)"),
])
def test_nothing_fits_is_one_line_naming_what_blocked_it(tmp_path, source, name, why):
    with pytest.raises(InvalidInputError) as info:
        audit(_in_process(tmp_path, source, name), _like(tmp_path, HF64))
    message = str(info.value)
    assert "no calling convention fits" in message and "\n" not in message and "--call" in message
    assert why in message, message


#: GPT-J style: one table of [sin | cos], consumed by apply(tensor, sin, cos)
SINCOS_SOURCE = ref.META + "\n\ndef sincos_table(n, d):\n    f = precompute_freqs_cis(d, n)\n" \
                           "    return torch.cat([f.imag, f.real], dim=-1)\n\n\n" \
                           "def rotate(tensor, sin, cos):\n" \
                           "    z = torch.view_as_complex(tensor.float().reshape(*tensor.shape[:-1], -1, 2))\n" \
                           "    return torch.view_as_real(z * torch.complex(cos, sin)).flatten(-2).type_as(tensor)\n"


@pytest.mark.parametrize("call", [
    "rotate(x, *torch.split(sincos_table(40000, 64)[positions], 32, dim=-1))",
    # x and positions are seen inside a lambda and a comprehension, as Python's own top-level names are
    "(lambda t: rotate(t, *torch.split(sincos_table(40000, 64)[positions], 32, dim=-1)))(x)",
    "[rotate(x, *torch.split(sincos_table(40000, 64)[p], 32, dim=-1)) for p in [positions]][0]",
], ids=["plain", "lambda", "comprehension"])
def test_a_call_expression_where_nothing_fits(tmp_path, call):
    """Where no convention of the table fits, one --call expression does."""
    result = audit(_in_process(tmp_path, SINCOS_SOURCE, "rotate"), _like(tmp_path, META64), call=call)
    assert result.verdict == "equivalent", result.summary()
    assert result.convention["name"] == "expression"


def test_a_failing_call_expression_names_what_x_and_positions_were(tmp_path):
    with pytest.raises(InvalidInputError) as info:
        audit(_in_process(tmp_path, SINCOS_SOURCE, "rotate"), _like(tmp_path, META64),
              call="rotate(x, *torch.split(sincos_table(40000, 64)[pos], 32, dim=-1))")
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    assert "--call raised NameError: name 'pos' is not defined (x: torch.Tensor of shape (" in message
    assert "; positions: torch.Tensor of shape (" in message and "int64" in message


def test_an_nn_module_instance(tmp_path):
    cls = _in_process(tmp_path, ref.TORCHTUNE, "RotaryPositionalEmbeddings")
    result = audit(cls(64, max_seq_len=2048), _like(tmp_path, META64))
    assert result.verdict == "equivalent" and max(result.positions) == 2047


def test_the_command_runs_reference_code_in_a_child(tmp_path):
    """The real path: the command, a child process, --json naming the convention."""
    path = _write(tmp_path, ref.META, "meta_model")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{path}:precompute_freqs_cis", "--like",
                          _like(tmp_path, META64), "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent"
    assert document["convention"]["name"] == "table-freqs-qk"
    assert "precompute_freqs_cis(dim=64" in document["convention"]["call"]


@pytest.mark.parametrize("source, edit, verdict, whats", [
    (ref.GPT_FAST, None, "equivalent", []),  # its bfloat16 cache is what the model runs in: rounding accepted
    (ref.META, ("t = torch.arange(end, device=freqs.device)  # type: ignore",
                "t = torch.arange(end, device=freqs.device).half()"), "differs", ["precision"]),
], ids=["gpt-fast-bf16-cache", "fp16-angles-still-found"])
def test_deployment_dtype(source, edit, verdict, whats, tmp_path):
    if edit:
        source = source.replace(*edit)
    result = audit(_in_process(tmp_path, source, "apply_rotary_emb"), _like(tmp_path, META64), dtype="bfloat16")
    assert result.verdict == verdict, result.summary()
    assert [d.what for d in result.differences] == whats


def test_assert_rope_matches_passes_and_fails_with_the_diagnosis(tmp_path):
    from symproof.testing import assert_rope_matches

    right = _write(tmp_path, ref.META, "meta_right")
    wrong = _write(tmp_path, ref.META.replace("freqs = 1.0 / (theta ** (", "freqs = 1.0 / (10000.0 ** ("),
                   "meta_wrong")
    like = _like(tmp_path, META64_LLAMA3)
    assert_rope_matches(_in_process(tmp_path, ref.META.replace("10000.0)", "500000.0)"), "apply_rotary_emb"), like)
    with pytest.raises(AssertionError, match="frequency: expected base 500000"):
        assert_rope_matches(load_target(f"{wrong}:apply_rotary_emb")[0], like)
    with pytest.raises(AssertionError, match="could not be audited"):
        assert_rope_matches(f"{right}:no_such_function", like)


def test_a_convention_whose_trial_calls_are_no_rotation_is_not_accepted(tmp_path):
    """GPT-NeoX's module called as rotary(x, position_ids): the positions land in seq_dim and its tables are
    sliced by the batch size, so position 0 is no identity; that row is rejected, not audited as nonlinear."""
    from symproof._audit._runner import Session, _not_a_rotation

    import numpy as np

    cls = _in_process(tmp_path, ref.GPT_NEOX, "RotaryEmbedding")
    session = Session(cls, {"hints": {"head_dim": 64, "rotated_dim": 64, "pairing": "half", "base": 10000.0},
                            "apply": None, "table": None, "call": None, "layout": None, "dtype": None})
    positions = np.array([0, 1, 2, 3, 5])
    x = np.random.default_rng(7).standard_normal((2, len(positions), 64))
    from symproof._audit._runner import Arrays

    session.arrays = Arrays("torch")
    verdicts = {}
    for attempt in session._candidates():
        try:
            q, _ = attempt.run(x, positions)
        except Exception:  # noqa: BLE001 - a convention that does not fit at all
            continue
        verdicts.setdefault(attempt.row.name, _not_a_rotation(attempt, x, positions, q, "float64"))
    assert verdicts["hf-rotary"] is not None and "position 0" in verdicts["hf-rotary"]
    assert verdicts["neox-offset"] is None


def test_a_cache_that_grows_when_called_is_no_bound(tmp_path):
    """transformers 4.31's module holds 2048 rows (max_seq_len_cached) and grows them on a longer call: the
    audit calls it at every probed position instead of reading its cache's size as the model's range."""
    cls = _in_process(tmp_path, ref.HF_431_DYNAMIC, "LlamaRotaryEmbedding")
    result = audit(cls, _like(tmp_path, HF64))
    assert result.verdict == "equivalent", result.summary()
    assert max(result.positions) == 32767 and result.range_note is None


def test_the_call_shown_is_the_call_made_for_whole_tables(tmp_path):
    """transformers 4.31's module is called with seq_len=n (whole tables) and its apply gathers them by
    position_ids: the "called as" line says so, not the current form (x, position_ids)."""
    result = audit(_in_process(tmp_path, ref.HF_431_DYNAMIC, "LlamaRotaryEmbedding"), _like(tmp_path, HF64))
    call = result.convention["call"]
    assert "(x, seq_len=n) -> cos, sin" in call and call.endswith(" with position_ids=positions"), call


def test_seq_len_sizes_the_tables_the_audit_builds(tmp_path):
    """--seq-len beyond the config's length: the table builder is given the audited length, not the config's."""
    result = audit(_in_process(tmp_path, ref.META, "apply_rotary_emb"), _like(tmp_path, LLAMA2_CONFIG | {
        "model_type": "llama"}), seq_len=10000)
    assert "end=10000" in result.convention["call"], result.convention["call"]
    assert max(result.positions) == 9999


# (1, n, 1, D) tables made from a length, as Qwen (v1) makes them; a module that takes a head count it never uses
QWEN_LIKE = '''
import torch


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, dim, num_heads, base=10000):
        super().__init__()
        self.inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).double() / dim))

    def forward(self, max_seq_len, offset=0):
        freqs = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), self.inv_freq)
        return torch.cat((freqs, freqs), dim=-1)[None, :, None, :][:, offset:offset + max_seq_len]


def apply_rotary_pos_emb(t, freqs):
    half = t.shape[-1] // 2
    rotated = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
    return t * freqs.cos() + rotated * freqs.sin()
'''


def test_a_length_table_with_a_leading_batch_axis(tmp_path):
    result = audit(_in_process(tmp_path, QWEN_LIKE, "RotaryEmbedding"), _like(tmp_path, HF64))
    assert result.verdict == "equivalent", result.summary()
    assert result.convention["name"] == "length-module"
    assert "RotaryEmbedding(dim=64, num_heads=1, base=10000.0)(n)" in result.convention["call"]
