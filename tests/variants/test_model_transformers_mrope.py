"""M-RoPE model types with no row in the family table, read through transformers' own code.

A multi-axis rotary class (t, h, w rows of position ids) is identified by
driving it one axis at a time (:mod:`symproof.models._hf_axes`).  Each type of
the table is read from its transformers 5.24 config class's defaults with two
decoder layers, and the module ``symproof check --export`` writes is compared
with HF's own rotary class and ``apply_rotary_pos_emb`` (taken from the type's
modeling module, not from the recorder) at positions whose three axes differ,
and at text positions.  What the engine's M-RoPE form cannot express is
refused in one line: a pair turning with two axes, a pair whose two
coordinates follow different axes, a class with another number of axes.
"""

from __future__ import annotations

import importlib
import importlib.util
import random

import numpy as np
import pytest

from symproof import VariantFileError
from symproof.models import _config, _hf_axes
from symproof.models._check import export_model
from symproof.models._config import load_model

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ULP = 2.0**-24
TEXT = np.array([[0, 1, 2, 3, 7, 100, 2000, 4097, 40000]])
#: t, h, w rows that differ at every token (none of them the probed positions the identification used)
AXES = np.array([[[5, 9, 300, 2, 8191, 6, 31, 64, 1000]], [[0, 44, 12, 2500, 1, 70, 3, 900, 17]],
                 [[13, 2, 1, 600, 40, 33000, 5, 8, 222]]])

#: model type (two decoder layers): HF's rotary class, the config's other keys, and what the layout is
TYPES = {
    "qwen3_vl_text": ("Qwen3VLTextRotaryEmbedding", {}, "interleaved t, h, w (mrope_section [24, 20, 20])"),
    "glm_ocr_text": ("GlmOcrTextRotaryEmbedding", {}, "sections t, h, w, adjacent pairs"),
    # GLM-4.1V's own config: half the head rotated (its class defaults leave the factor out of the rope table,
    # and HF's forward fails on them)
    "glm4v_text": ("Glm4vTextRotaryEmbedding", {"partial_rotary_factor": 0.5, "rope_parameters": {
        "rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 12, 12], "partial_rotary_factor": 0.5}},
        "sections t, h, w over the rotated half, adjacent pairs"),
    "ernie4_5_vl_moe_text": ("Ernie4_5_VLMoeTextRotaryEmbedding", {}, "h, w alternating, then t; adjacent pairs"),
    "paddleocr_vl_text": ("PaddleOCRRotaryEmbedding", {}, "sections t, h, w (Qwen2-VL's)"),
}


def _hf_rotate(text_config, rotary_name, x, positions):
    """HF's rotation of ``x`` (B, T, D) by the type's own rotary class and apply_rotary_pos_emb."""
    import torch

    modeling = importlib.import_module(type(text_config).__module__.replace(".configuration_", ".modeling_"))
    rotary = getattr(modeling, rotary_name)(text_config)
    q = torch.tensor(x, dtype=torch.float32)[:, None]
    cos, sin = rotary(q, torch.tensor(positions))
    rotated, _ = modeling.apply_rotary_pos_emb(q, q, cos, sin)
    return rotated[:, 0].double().numpy()


def _module(model, folder, name):
    (path,) = export_model(model, folder, "numpy")
    spec = importlib.util.spec_from_file_location(f"mrope_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("model_type", sorted(TYPES))
def test_an_mrope_type_is_read_through_transformers_and_rotates_as_hf(model_type, tmp_path):
    rotary_name, keys, _layout = TYPES[model_type]
    model = load_model({"model_type": model_type, "num_hidden_layers": 2, **keys})
    text = transformers.AutoConfig.for_model(model_type, num_hidden_layers=2, **keys).get_text_config(decoder=True)
    assert any(f"read through transformers {transformers.__version__}'s `" in note for note in model.notes)
    assert model.mrope_section is not None
    assert any(note.startswith("M-RoPE, identified by driving HF's rotary class") for note in model.notes)
    assert any("on text (t = h = w = the token's position)" in note for note in model.notes)
    module = _module(model, tmp_path, model_type)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, TEXT.shape[1], model.head_width)).astype(np.float32)
    (regime,) = model.regimes
    w = np.array([float(v) for v in regime.variant.frequencies_digits()])
    for positions in (AXES, TEXT):
        theirs = _hf_rotate(text, rotary_name, x, positions)
        ours = module.apply(x.astype(np.float64), positions)
        peak = positions.reshape(-1, positions.shape[-1]).max(axis=0)
        bound = np.max(np.abs(x)) * (16 * peak[:, None] * w.max() + 16) * ULP
        assert np.all(np.abs(ours - theirs) <= bound), f"{model_type} at {positions.shape}"
    # the axes matter: the same rotation with the axes in another order is not HF's
    swapped = module.apply(x.astype(np.float64), AXES[[1, 2, 0]])
    assert np.max(np.abs(swapped - _hf_rotate(text, rotary_name, x, AXES))) > 1e-3


def test_a_pair_turning_with_two_axes_is_refused(monkeypatch):
    import torch
    from transformers.models.qwen3_vl import modeling_qwen3_vl as modeling

    original = modeling.Qwen3VLTextRotaryEmbedding.forward

    def mixed(self, x, position_ids):
        # t + h - w in place of t: on text (t = h = w) the token's position, so the text map is the plain one
        rows = position_ids.expand(3, -1, -1)
        return original(self, x, torch.stack([rows[0] + rows[1] - rows[2], rows[1], rows[2]]))

    monkeypatch.setattr(modeling.Qwen3VLTextRotaryEmbedding, "forward", mixed)
    monkeypatch.setattr(_config, "_IDENTIFIED", {})  # identified afresh, not the process's earlier reading
    with pytest.raises(VariantFileError) as info:
        load_model({"model_type": "qwen3_vl_text", "num_hidden_layers": 2})
    message = str(info.value)
    assert "\n" not in message and "'qwen3_vl_text' has no row" in message
    assert "layer 0: pair 0 turns with t and h and w of the 3 position axes; expected exactly one" in message


def _hunyuan(section):
    return {"model_type": "hunyuan_vl_text", "num_hidden_layers": 2,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section}}


#: HF's own HunYuan-VL rotary class: its sections split the coordinates (r and r + d/2 of a pair in different
#: sections), and its axis count is the number of sections
REFUSED = [
    (_hunyuan([32, 16, 16]), "layer 0: with positions t = [0, 1, 2]..., h = [0, 0, 0]..., w = [0, 0, 0]..., the block "
                             "of pair 0 (coordinates 0, 64) is not a rotation [[c, -s], [s, c]]: its two coordinates "
                             "follow different positions"),
    (_hunyuan([16, 16, 16, 16]), "HF's multi-axis rotary class takes 4 rows of position ids (one per axis); the "
                                 "engine's M-RoPE form has 3 axes (t, h, w)"),
]


@pytest.mark.parametrize("config, words", REFUSED)
def test_what_the_engine_cannot_express_is_refused_in_one_line(config, words):
    with pytest.raises(VariantFileError) as info:
        load_model(config)
    message = str(info.value)
    assert "\n" not in message and f"{config['model_type']!r} has no row" in message and words in message


@pytest.mark.parametrize("axes, words", [
    ((0,) * 16 + (1,) * 24 + (2,) * 24, "pairs 0..15: t; 16..39: h; 40..63: w"),
    ((0, 1, 2) * 20 + (0,) * 4, "pairs 0..59: t, h, w in turn; 60..63: t"),
    ((1, 2) * 22 + (0,) * 20, "pairs 0..43: h, w in turn; 44..63: t"),
    ((2, 0, 0, 1), "pairs 0: w; 1..2: t; 3: h"),
])
def test_the_axes_are_described_as_runs(axes, words):
    assert _hf_axes.describe(axes) == words


def test_the_engine_bands_give_back_every_sequence_of_axes():
    rng = random.Random(3)
    for _ in range(500):
        axes = tuple(rng.randrange(3) for _ in range(rng.randrange(1, 40)))
        bands = _hf_axes.sections(axes)
        assert tuple(k % 3 for k, size in enumerate(bands) for _ in range(size)) == axes
    assert _hf_axes.sections((0,) * 16 + (1,) * 24 + (2,) * 24) == (16, 24, 24)
