"""2-D and 3-D rotary audited per axis against a multi-axis model, on real upstream code.

Each case is real code with one plain command: transformers' Qwen2-VL rotary (installed; M-RoPE from the
config's ``mrope_section``), diffusers' ``FluxPosEmbed`` (Flux's 3-axis ids, vendored in ``upstream/``) and
timm's axial ViT ``build_rotary_pos_embed`` (vendored).  The code as shipped is equivalent; a planted bug
(axes swapped, a wrong section split, a wrong theta on one axis) is named with its axis and its cause.
Before the per-axis audit, every one of these commands was refused ("the audit handles one position axis").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from symproof import InvalidInputError, audit
from symproof._audit._axes import AXES_WHATS, AxesModel, axes_model, axis_positions, diagnose
from symproof._audit._runner import CONVENTIONS
from symproof.models import load_model_config
from symproof.variants import load_variant

UPSTREAM = Path(__file__).with_name("upstream")
FLUX = UPSTREAM / "flux_axes.toml"
VIT = UPSTREAM / "vit_axial.toml"
# Qwen2-VL's shape, scaled down: 64-wide heads, sections 8, 12, 12 pairs (t, h, w), under text_config
QWEN2_VL = {"model_type": "qwen2_vl", "text_config": {
    "hidden_size": 512, "num_attention_heads": 8, "rope_theta": 1000000.0, "max_position_embeddings": 8192,
    "rope_scaling": {"type": "mrope", "mrope_section": [8, 12, 12]}}}
QWEN_MODULE = "transformers.models.qwen2_vl.modeling_qwen2_vl"

# a user's subclass of transformers' own Qwen2VLRotaryEmbedding whose recomposition (the one method that places
# the sections) carries one planted change; {split} and {axis} are the planted parts
QWEN_SUBCLASS = '''import torch
from {module} import Qwen2VLRotaryEmbedding, apply_rotary_pos_emb  # noqa: F401


class PlantedRotaryEmbedding(Qwen2VLRotaryEmbedding):
    def recomposition_frequencies(self, freq):
        freq = torch.cat([m[{axis}] for i, m in enumerate(freq.split({split}, dim=-1))], dim=-1)
        return torch.cat((freq, freq), dim=-1)
'''
# the method as transformers ships it, in the same form: the control of the planted cases
QWEN_AS_SHIPPED = {"axis": "i % 3", "split": "self.mrope_section"}


def _run(tmp_path, target, like, source=None, flags=()):
    if source is not None:
        file, name = target.split(":")
        (tmp_path / file).write_text(source)
        target = f"{tmp_path / file}:{name}"
    elif target.split(":")[0].endswith(".py"):
        file, name = target.split(":")
        (tmp_path / file).write_text((UPSTREAM / file).read_text())
        target = f"{tmp_path / file}:{name}"
    if isinstance(like, dict):
        path = tmp_path / "config.json"
        path.write_text(json.dumps(like))
        like = path
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "symproof", "audit", target, "--like", str(like), "--json", *flags],
                          capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)


def _planted(file: str, old: str, new: str) -> str:
    source = (UPSTREAM / file).read_text()
    assert source.count(old) == 1, "the planted bug edits one line of the upstream code"
    return source.replace(old, new)


# (id, target, like, convention row, what "called as" shows)
SHIPPED = [
    ("qwen2-vl-mrope", f"{QWEN_MODULE}:apply_rotary_pos_emb", QWEN2_VL, "axes-position-ids",
     ["Qwen2VLRotaryEmbedding(config=<Qwen2VLTextConfig from --like>)"]),
    ("qwen2-vl-2b-shipped-config", f"{QWEN_MODULE}:apply_rotary_pos_emb", "qwen2-vl-2b", "axes-position-ids",
     ["Qwen2VLRotaryEmbedding("]),
    ("qwen2.5-vl-7b-shipped-config", "transformers.models.qwen2_5_vl.modeling_qwen2_5_vl:apply_rotary_pos_emb",
     "qwen2.5-vl-7b", "axes-position-ids", ["Qwen2_5_VLRotaryEmbedding("]),
    ("qwen2-vl-recomposition-as-shipped", "user_rope.py:PlantedRotaryEmbedding", QWEN2_VL, "axes-position-ids",
     ["PlantedRotaryEmbedding("]),
    ("flux-embednd", "diffusers_flux.py:FluxPosEmbed", FLUX, "axes-ids-module",
     ["FluxPosEmbed(theta=10000.0, axes_dim=[16, 56, 56])"]),
    ("timm-axial-vit", "timm_rope.py:build_rotary_pos_embed", VIT, "axes-grid-table",
     ["temperature=10000.0", "in_pixels=False", "rotate_half=False"]),
]


@pytest.mark.parametrize("case", SHIPPED, ids=[c[0] for c in SHIPPED])
def test_shipped_multi_axis_code_is_equivalent_with_one_plain_command(case, tmp_path):
    pytest.importorskip("torch")
    name, target, like, convention, shown = case
    source = QWEN_SUBCLASS.format(module=QWEN_MODULE, **QWEN_AS_SHIPPED) if target.startswith("user_") else None
    run = _run(tmp_path, target, like, source)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent", run.stdout
    assert document["convention"]["name"] == convention
    assert convention in {row.name for row in CONVENTIONS}
    for text in shown:
        assert text in document["convention"]["call"], document["convention"]["call"]
    axes = document["axes"]
    assert axes["mixed"] >= 4 and axes["largest"] >= 1000, axes  # each axis alone far out, and mixed vectors
    assert all(len(p) == len(axes["names"]) for p in document["positions_probed"])


# (id, target, like, source, what, words the detail must say)
PLANTED = [
    ("qwen2-vl-h-and-w-swapped", "user_rope.py:PlantedRotaryEmbedding", QWEN2_VL,
     QWEN_SUBCLASS.format(module=QWEN_MODULE, axis="[0, 2, 1][i % 3]", split="self.mrope_section"),
     "axes", ["axes in the wrong order", "axis 1 (h) turn with the positions of axis 2 (w)",
              "axis 2 (w) turn with the positions of axis 1 (h)"]),
    ("qwen2-vl-wrong-section-split", "user_rope.py:PlantedRotaryEmbedding", QWEN2_VL,
     QWEN_SUBCLASS.format(module=QWEN_MODULE, axis="i % 3", split="[16, 8, 8]"),
     "axes", ["wrong section split", "t 16, h 8, w 8 where the model says t 8, h 12, w 12"]),
    ("qwen2-vl-sections-reversed", "user_rope.py:PlantedRotaryEmbedding", QWEN2_VL,
     QWEN_SUBCLASS.format(module=QWEN_MODULE, axis="i % 3", split="self.mrope_section[::-1]"),
     "axes", ["sections swapped", "t 12, h 12, w 8 where the model says t 8, h 12, w 12"]),
    ("flux-theta-on-axis-1", "diffusers_flux.py:FluxPosEmbed", FLUX,
     _planted("diffusers_flux.py", "                theta=self.theta,\n",
              "                theta=self.theta if i != 1 else 1000,\n"),
     "frequency", ["axis 1 (h): pairs 9..35", "base 1000 where the model's base is 10000"]),
    ("flux-h-and-w-swapped", "diffusers_flux.py:FluxPosEmbed", FLUX,
     _planted("diffusers_flux.py", "                pos[:, i],\n", "                pos[:, [0, 2, 1][i]],\n"),
     "axes", ["axes in the wrong order", "axis 1 (h) turn with the positions of axis 2 (w)"]),
    ("timm-xy-grid", "timm_rope.py:build_rotary_pos_embed", VIT,
     _planted("timm_rope.py", "        grid_indexing: str = 'ij',\n        rotate_half: bool = False,\n",
              "        grid_indexing: str = 'xy',\n        rotate_half: bool = False,\n"),
     "axes", ["axes in the wrong order", "axis 0 (row) turn with the positions of axis 1 (col)"]),
    ("timm-band-exponent", "timm_rope.py:build_rotary_pos_embed", VIT,
     _planted("timm_rope.py", "to(torch.float32) / num_bands\n", "to(torch.float32) / (2 * num_bands)\n"),
     "frequency", ["axis 0 (row): pairs 1..15", "base 100 where the model's base is 10000"]),
]


@pytest.mark.parametrize("case", PLANTED, ids=[c[0] for c in PLANTED])
def test_a_planted_bug_is_named_with_its_axis_and_cause(case, tmp_path):
    pytest.importorskip("torch")
    name, target, like, source, what, words = case
    run = _run(tmp_path, target, like, source)
    assert run.returncode == 1, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "differs"
    first = document["differences"][0]
    assert first["what"] == what and what in AXES_WHATS, run.stdout
    for text in words:
        assert text in first["detail"], first["detail"]


def test_one_axis_code_with_an_mrope_config_is_audited_on_text_and_says_so(tmp_path):
    """litgpt's 1-D code takes one position per token: on text every M-RoPE axis holds it, which is said."""
    run = _run(tmp_path, "litgpt_rope.py:apply_rope", QWEN2_VL)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent"
    assert "audited on text" in document["note"] and "mrope_section [8, 12, 12]" in document["note"]
    assert document["axes"] is None


# -- refusals: a model or a call the per-axis audit cannot compare is one line naming it ------------------------


def _one_axis_rotate(x, positions):
    return x


@pytest.mark.parametrize("like, words", [
    (str(Path(__file__).resolve().parents[2] / "derivations" / "variants" / "rope_mixed.toml"), "every pair of"),
    ({**QWEN2_VL, "text_config": {**QWEN2_VL["text_config"], "rope_scaling": {
        "type": "mrope", "mrope_section": [8, 12, 12], "mrope_interleaved": True}}}, "interleaved"),
    ({**QWEN2_VL, "text_config": {**QWEN2_VL["text_config"], "rope_scaling": {
        "type": "mrope", "mrope_section": [8, 12, 10]}}}, "summing to head_dim / 2 = 32"),
])
def test_a_model_the_per_axis_audit_cannot_compare_is_refused(like, words):
    with pytest.raises(InvalidInputError) as err:
        audit(_one_axis_rotate, like)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_one_axis_code_against_a_multi_axis_variant_is_refused_not_judged():
    """A function of (x, positions (T,)) cannot take a (T, 2) position: no convention fits, the --call is named."""
    def rotate(x, positions):
        return x * np.cos(positions)[None, :, None]

    with pytest.raises(InvalidInputError) as err:
        audit(rotate, VIT)
    assert "no calling convention fits" in str(err.value) and "--call" in str(err.value)


def test_seq_len_is_refused_for_a_multi_axis_model():
    with pytest.raises(InvalidInputError, match="--seq-len applies to one position axis"):
        audit(_one_axis_rotate, VIT, seq_len=64)


# -- the diagnosis on images made from the model itself: what it reads is what was planted --------------------


def _model(toml=VIT) -> AxesModel:
    return axes_model(load_variant(str(toml)), None)


def test_the_model_of_a_config_follows_its_mrope_section():
    variant = load_model_config(QWEN2_VL)
    model = axes_model(variant, QWEN2_VL)
    assert model.names == ("t", "h", "w")
    assert model.sections() == [8, 12, 12]
    assert model.axis_of_pair == [0] * 8 + [1] * 12 + [2] * 12


def test_the_diagnosis_reads_a_sign_flipped_on_one_axis():
    model = _model()
    positions, kinds = axis_positions(model, 300)
    expected = model.images(positions)
    flipped = AxesModel(model.model, model.names, model.axis_of_pair, model.source)
    # the col axis turned the other way: its angles negated
    angles = flipped.angles(positions)
    angles[:, 16:] *= -1
    found = np.broadcast_to(np.eye(64), expected.shape).copy()
    pairs = np.array(model.model.pairs).reshape(-1, 2)
    a, b = pairs[:, 0], pairs[:, 1]
    found[:, a, a], found[:, a, b], found[:, b, a], found[:, b, b] = (np.cos(angles), -np.sin(angles),
                                                                      np.sin(angles), np.cos(angles))
    diffs = diagnose(model, found, expected, model.tolerance(positions), positions, kinds)
    assert [d.what for d in diffs] == ["direction"]
    assert "axis 1 (col)" in diffs[0].detail


def test_the_diagnosis_says_axes_that_do_not_add():
    model = _model()
    positions, kinds = axis_positions(model, 300)
    expected = model.images(positions)
    found = expected.copy()
    mixed = [t for t, k in enumerate(kinds) if k[0] == "mixed"]
    found[mixed] = np.eye(64)  # each axis alone right, a mixed vector not rotated at all
    diffs = diagnose(model, found, expected, model.tolerance(positions), positions, kinds)
    assert [d.what for d in diffs] == ["axes"] and "the axes do not add" in diffs[0].detail


# -- generated code: every correct implementation equivalent, one axis's wrong base named -----------------------


class GeneratedPosEmbed:
    """Flux's form in NumPy: one block of geometric frequencies per axis, ``theta^(-2i / axes_dim[k])``."""

    def __init__(self, theta, axes_dim, wrong_axis=None):
        self.theta, self.axes_dim, self.wrong_axis = theta, axes_dim, wrong_axis

    def forward(self, ids):
        blocks = []
        for k, d in enumerate(self.axes_dim):
            theta = self.theta * 10 if k == self.wrong_axis else self.theta
            blocks.append(ids[:, k:k + 1].astype(np.float64) * theta ** (-np.arange(0, d, 2) / d))
        angles = np.concatenate(blocks, axis=-1)
        return np.cos(angles), np.sin(angles)

    __call__ = forward


def apply_rotary_generated(x, freqs):  # found by its name beside GeneratedPosEmbed, as Flux's apply is
    cos, sin = freqs
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return np.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)


def _sections_variant(sections, base):
    """A variant file's dict: consecutive sections of pairs, each axis's block geometric over its own width."""
    offsets = [sum(sections[:k]) for k in range(len(sections))]
    names = [f"a{k}" for k in range(len(sections))]

    def nested(values):
        text = values[-1]
        for k in range(len(sections) - 2, -1, -1):
            text = f"where(r < {offsets[k + 1]}, {values[k]}, {text})"
        return text

    frequency = nested([f"base**(-2 * (r - {o}) / {2 * s})" for o, s in zip(offsets, sections)])
    return {"name": "generated", "kind": "rotary", "width": 2 * sum(sections), "pairing": "adjacent",
            "params": {"base": base}, "frequencies": {"rule": "formula", "formula": frequency},
            "position": {"axes": names, "axis": nested([str(k) for k in range(len(sections))])}}


GENERATED = [((2, 2), 100), ((1, 3, 4), 10000), ((8, 28, 28), 10000), ((2, 2, 2, 2), 500), ((3, 5), 1000000)]


@pytest.mark.parametrize("sections, base", GENERATED, ids=[f"{s}-{b}" for s, b in GENERATED])
def test_every_generated_correct_implementation_is_equivalent(sections, base):
    from symproof import Variant

    result = audit(GeneratedPosEmbed, Variant.from_dict(_sections_variant(sections, base)))
    assert result.verdict == "equivalent", result.summary()
    assert result.convention["name"] == "axes-ids-module"
    assert f"axes_dim={[2 * s for s in sections]}" in result.convention["call"]


@pytest.mark.parametrize("sections, base", GENERATED[1:3], ids=[f"{s}-{b}" for s, b in GENERATED[1:3]])
def test_a_generated_wrong_base_on_one_axis_is_named_with_that_axis(sections, base):
    from symproof import Variant

    class WrongOnLast(GeneratedPosEmbed):
        def __init__(self, theta, axes_dim):
            super().__init__(theta, axes_dim, wrong_axis=len(axes_dim) - 1)

    result = audit(WrongOnLast, Variant.from_dict(_sections_variant(sections, base)))
    assert result.verdict == "differs"
    last = len(sections) - 1
    assert [d.what for d in result.differences] == ["frequency"], result.summary()
    detail = result.differences[0].detail
    assert detail.startswith(f"axis {last} (a{last})") and f"base {base * 10:g} where the model's base is {base:g}" \
        in detail, detail


def test_report_refuses_a_per_axis_result_rather_than_drop_its_differences(tmp_path):
    """The report pages list the one-axis aspects only: a per-axis difference would be missing from them."""
    pytest.importorskip("torch")
    source = _planted("diffusers_flux.py", "                pos[:, i],\n", "                pos[:, [0, 2, 1][i]],\n")
    run = _run(tmp_path, "diffusers_flux.py:FluxPosEmbed", FLUX, source, flags=("--report", str(tmp_path / "out")))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "axes in the wrong order" in run.stdout  # the answer is printed first
    assert "--report: the report pages do not show a per-axis audit yet" in run.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


#: model types whose M-RoPE layout is their code's, not a config key (Cosmos3-Edge interleaves without
#: `mrope_interleaved`): the audit reads the layout as `symproof check` reads the model
INTERLEAVED = [
    ("cosmos3_edge_text", "transformers.models.cosmos3_edge.modeling_cosmos3_edge:Cosmos3EdgeTextRotaryEmbedding"),
    ("qwen3_vl_text", "transformers.models.qwen3_vl.modeling_qwen3_vl:Qwen3VLTextRotaryEmbedding"),
]


@pytest.mark.slow
@pytest.mark.parametrize("model_type, target", INTERLEAVED, ids=[c[0] for c in INTERLEAVED])
def test_an_interleaved_layout_is_audited_as_the_model_is_read(model_type, target, tmp_path):
    transformers = pytest.importorskip("transformers")
    like = json.loads(transformers.AutoConfig.for_model(model_type).to_json_string())
    run = _run(tmp_path, target, like)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent", run.stdout
    assert "t, h, w in turn" in document["axes"]["model"], document["axes"]
    # transformers' consecutive-sections module (Qwen2-VL's) against the same config: the split is named
    wrong = json.loads(_run(tmp_path, f"{QWEN_MODULE}:Qwen2VLRotaryEmbedding", like).stdout)
    assert wrong["verdict"] == "differs" and wrong["differences"][0]["what"] == "axes", wrong


@pytest.mark.slow
def test_a_text_config_nested_two_levels_down_builds_the_module(tmp_path):
    """Qwen2.5-Omni keeps its text model's config under thinker_config.text_config: the module is built from it
    (transformers' get_text_config), not from the top level, which has no max_position_embeddings."""
    transformers = pytest.importorskip("transformers")
    like = json.loads(transformers.AutoConfig.for_model("qwen2_5_omni").to_json_string())
    run = _run(tmp_path, "transformers.models.qwen2_5_omni.modeling_qwen2_5_omni:Qwen2_5OmniRotaryEmbedding", like)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent", run.stdout
    assert "Qwen2_5OmniTextConfig from --like" in document["convention"]["call"]


@pytest.mark.slow
def test_a_wrappers_own_keys_do_not_reach_its_text_models_module(tmp_path):
    """MusicFlamingo's top level holds its audio rotary's head_dim (1280) and length; its text model is a Qwen2,
    whose module must be built from the text config alone (a merged dict gave the text module head_dim 1280)."""
    transformers = pytest.importorskip("transformers")
    like = json.loads(transformers.AutoConfig.for_model("musicflamingo").to_json_string())
    assert like["head_dim"] != like["text_config"].get("head_dim", 128)
    run = _run(tmp_path, "transformers.models.qwen2.modeling_qwen2:Qwen2RotaryEmbedding", like)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent" and document["head_dim"] == 128, run.stdout


@pytest.mark.slow
def test_a_module_annotated_with_another_config_class_takes_the_declared_config(tmp_path):
    """transformers' Qwen3OmniMoeRotaryEmbedding is annotated with the whole model's config class, and the
    talker's code predictor passes its own config (head 128): built from the annotation, the module read the
    thinker's defaults (head 2048 / 28 = 73) and correct code was declared different."""
    transformers = pytest.importorskip("transformers")
    like = json.loads(transformers.AutoConfig.for_model("qwen3_omni_moe_talker_code_predictor").to_json_string())
    run = _run(tmp_path, "transformers.models.qwen3_omni_moe.modeling_qwen3_omni_moe:Qwen3OmniMoeRotaryEmbedding",
               like)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["verdict"] == "equivalent" and document["head_dim"] == 128, run.stdout
