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

ROTARY_CLASSES = {"llama": "LlamaRotaryEmbedding", "mistral": "MistralRotaryEmbedding",
                  "qwen2": "Qwen2RotaryEmbedding", "gemma": "GemmaRotaryEmbedding",
                  "gpt_neox": "GPTNeoXRotaryEmbedding", "phi": "PhiRotaryEmbedding", "phi3": "Phi3RotaryEmbedding",
                  "gptj": "GPTJRotaryEmbedding"}


def hf_module(model_type: str):
    import transformers  # noqa: F401  (imported by the fixture first)

    return importlib.import_module(f"transformers.models.{model_type}.modeling_{model_type}")


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
