"""Fixture ``hf``: HF transformers' own rotary code, called the way its attention layers call it.

``hf_rotate(config, x, positions)`` builds the family's rotary embedding module
from the config dict (a fresh module per call, as a model's first call sees
it), takes cos and sin for ``positions`` and applies the family's
``apply_rotary_pos_emb`` to the rotated slice, copying the rest: exactly the
lines of each attention layer, without the projections.
"""

from __future__ import annotations

import importlib
import types

import numpy as np
import pytest

def _rotary_classes():
    from symproof.models._families import FAMILIES

    return {model_type: family.rotary for model_type, family in FAMILIES.items()}


ROTARY_CLASSES = _rotary_classes()


def hf_module(model_type: str):
    import transformers  # noqa: F401  (imported by the fixture first)

    from symproof.models._families import FAMILIES

    family = FAMILIES.get(model_type)
    name = (family.module if family is not None and family.module else model_type)
    return importlib.import_module(f"transformers.models.{name}.modeling_{name}")


def hf_config(config: dict, largest_position: int = 0):
    config = dict(config)
    if config["model_type"] == "gptj":  # GPT-J tabulates sin/cos up to n_positions: make the table long enough
        config["n_positions"] = max(config.get("n_positions", 2048), largest_position + 1)
    import transformers

    return transformers.AutoConfig.for_model(config.pop("model_type"), **config)


def hf_rotary(config: dict, largest_position: int = 0):
    """The family's rotary embedding module, fresh."""
    model_type = config["model_type"]
    return getattr(hf_module(model_type), ROTARY_CLASSES[model_type])(hf_config(config, largest_position))


def hf_rotate(config: dict, x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """HF's rotation of ``x`` (B, T, head_dim) float32 at ``positions`` (B, T), as float64."""
    import torch

    model_type = config["model_type"]
    if model_type != "gptj":
        return hf_model_rotate(config, x, positions, 0)
    module = hf_module(model_type)
    xt = torch.tensor(x, dtype=torch.float32)
    ids = torch.tensor(positions, dtype=torch.int64)
    rotary = hf_rotary(config, int(positions.max()))
    if model_type == "gptj":
        q = xt[:, :, None, :]  # GPT-J: (B, T, H, D) before the transpose
        sin, cos = rotary(q, ids)
        width = config.get("rotary_dim", 64)
        rotated = module.apply_rotary_pos_emb(q[..., :width], sin, cos)
        return torch.cat([rotated, q[..., width:]], dim=-1)[:, :, 0].double().numpy()
    q = xt[:, None]  # (B, H = 1, T, D)
    cos, sin = rotary(q, ids)
    width = cos.shape[-1]
    rotated, _ = module.apply_rotary_pos_emb(q[..., :width], q[..., :width], cos, sin)
    return torch.cat([rotated, q[..., width:]], dim=-1)[:, 0].double().numpy()


def hf_frequencies(config: dict, seq_len: int | None = None):
    """``(inv_freq, attention_scaling)`` as HF's module computes them for a call of length ``seq_len``."""
    import torch

    model_type = config["model_type"]
    rotary = hf_rotary(config, seq_len or 0)
    if model_type == "gptj":
        width = config.get("rotary_dim", 64)
        table = hf_module("gptj").create_sinusoidal_positions(2, width)
        return table[1, : width // 2].asin().double().numpy(), 1.0  # sin(1 * omega) = sin(omega), omega < pi / 2
    if seq_len is not None:
        x = torch.zeros(1, 1, 1, 2)
        rotary(x, torch.tensor([[seq_len - 1]]))  # the dynamic/longrope update runs on the call's positions
    return rotary.inv_freq.double().numpy(), float(rotary.attention_scaling)


@pytest.fixture(scope="session")
def hf():
    """The helpers above; skips when torch or transformers (test-only dependencies) are missing."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return types.SimpleNamespace(rotate=hf_rotate, frequencies=hf_frequencies, config=hf_config,
                                 module=hf_module)


# -- every family and every layer: the lines of each HF attention layer that rotate q ------------------


def hf_text(config: dict):
    """``(text config dict, model_type)``: a multimodal config's text model, as HF builds it."""
    from symproof.models._families import TEXT_CONFIGS

    model_type = config["model_type"]
    if model_type in TEXT_CONFIGS:
        text_type, top_level = TEXT_CONFIGS[model_type]
        text = config.get("text_config")
        if text is None:
            text = {k: v for k, v in config.items() if k not in ("vision_config", "model_type", "architectures")}
        return dict(text), text.get("model_type", text_type)
    return dict(config), model_type


def hf_model_config(config: dict):
    import transformers

    text, model_type = hf_text(config)
    text.pop("model_type", None)
    text.pop("architectures", None)
    return transformers.AutoConfig.for_model(model_type, **text), model_type


def hf_model_rotate(config: dict, x: np.ndarray, positions: np.ndarray, layer: int) -> np.ndarray:
    """HF's rotation of ``x`` (B, T, head width) float32 in decoder layer ``layer``, as float64.

    ``positions``: (B, T), or (3, B, T) for M-RoPE (t, h, w).  Written from each family's attention
    forward: which layers rotate, which part of the head, with which function."""
    import torch

    from symproof.models._families import FAMILIES

    if config["model_type"] == "gptj":
        return hf_rotate(config, x, positions)
    hcfg, model_type = hf_model_config(config)
    family = FAMILIES[model_type]
    module = hf_module(family.module or model_type)
    xt = torch.tensor(x, dtype=torch.float32)
    ids = torch.tensor(positions, dtype=torch.int64)
    if model_type in ("smollm3", "llama4_text") and not hcfg.no_rope_layers[layer]:
        return xt.double().numpy()  # use_rope = config.no_rope_layers[layer_idx]
    if model_type == "cohere2" and hcfg.layer_types[layer] != "sliding_attention":
        return xt.double().numpy()  # Cohere2Attention rotates only when sliding_window is set
    rotary = getattr(module, family.rotary)(hcfg)
    q = xt[:, None]  # (B, H = 1, T, D)
    if model_type == "deepseek_v2":
        nope = hcfg.qk_nope_head_dim
        rotated, _ = module.apply_rotary_emb(q[..., nope:], q[..., nope:], rotary(q, ids))
        return torch.cat([q[..., :nope], rotated], dim=-1)[:, 0].double().numpy()
    if model_type == "deepseek_v3":
        nope = hcfg.qk_nope_head_dim
        cos, sin = rotary(q, ids)
        apply = module.apply_rotary_pos_emb_interleave if hcfg.rope_interleave else module.apply_rotary_pos_emb
        rotated, _ = apply(q[..., nope:], q[..., nope:], cos, sin)
        return torch.cat([q[..., :nope], rotated], dim=-1)[:, 0].double().numpy()
    if model_type == "llama4_text":
        q4 = xt[:, :, None, :]  # (B, T, H, D)
        rotated, _ = module.apply_rotary_emb(q4, q4, rotary(q, ids))
        return rotated[:, :, 0].double().numpy()
    if model_type in ("gemma3_text", "modernbert"):
        cos, sin = rotary(q, ids, layer_type=hcfg.layer_types[layer])
    else:
        cos, sin = rotary(q, ids)
    if model_type == "gpt_oss":  # cos/sin of the pairs, not repeated: _apply_rotary_emb chunks the head
        rotated, _ = module.apply_rotary_pos_emb(q, q, cos, sin)
        return rotated[:, 0].double().numpy()
    width = cos.shape[-1]
    rotated, _ = module.apply_rotary_pos_emb(q[..., :width], q[..., :width], cos, sin)
    return torch.cat([rotated, q[..., width:]], dim=-1)[:, 0].double().numpy()


@pytest.fixture(scope="session")
def hf_model():
    """``hf_model_rotate`` and ``hf_model_config``; skips without torch and transformers."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    return types.SimpleNamespace(rotate=hf_model_rotate, config=hf_model_config, text=hf_text)
