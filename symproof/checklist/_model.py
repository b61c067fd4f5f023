"""A model under the checklist: how to call it, what it computes in, and how deep it is.

:class:`ModelUnderTest` adapts any ``torch.nn.Module`` whose ``forward`` follows the transformers calling
convention (``input_ids``, ``attention_mask``, ``position_ids``, and the cache as ``cache`` -- transformers
5.24's name -- or ``past_key_values``) to the few calls the items make, and states the rounding unit every
tolerance is written in.  :func:`build_from_config` builds a transformers model from a ``config.json`` with
small random weights: the sizes that do not enter the position computation are shrunk, everything that does
(layer count, head width, rope parameters, layer pattern, windows) is kept.
"""

from __future__ import annotations

import inspect
import json
import os

import torch

from .._ground._errors import InvalidInputError
from .._ground._text import one_line

__all__ = ["ModelUnderTest", "build_from_config", "SEED", "SHRUNK"]

#: the seed of the random weights and of the token ids: the same PATH gives the same run
SEED = 0

#: sizes that do not enter the position computation, and the small value each is given
SHRUNK = {
    "intermediate_size": 64, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
    "vocab_size": 128, "num_local_experts": 2, "num_experts": 2, "n_routed_experts": 2, "n_shared_experts": 1,
    "num_experts_per_tok": 1, "topk_group": 1, "n_group": 1, "kv_lora_rank": 16, "q_lora_rank": 16,
}

#: the keys of the attention-head count, and of the key/value head count, per naming scheme
_HEAD_COUNT_KEYS = ("num_attention_heads", "n_head")
_KV_HEAD_KEYS = ("num_key_value_heads", "multi_query_group_num")
_HIDDEN_KEYS = ("hidden_size", "n_embd")


def _read_config(path: str) -> dict:
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file (expected a config.json or a checkpoint folder holding one)")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInputError(f"{path}: not a readable JSON model config ({err})")
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        raise InvalidInputError(f"{path}: expected a transformers config.json with a model_type")
    return data


def _head_width(config) -> int:
    explicit = getattr(config, "head_dim", None)
    if isinstance(explicit, int) and explicit > 0:
        return explicit
    hidden = next(getattr(config, k) for k in _HIDDEN_KEYS if hasattr(config, k))
    heads = next(getattr(config, k) for k in _HEAD_COUNT_KEYS if hasattr(config, k))
    return hidden // heads


def shrunk_config(data: dict):
    """The transformers config of ``data`` with the sizes that do not enter positions made small."""
    from transformers import AutoConfig

    data = dict(data)
    model_type = data.pop("model_type")
    try:
        original = AutoConfig.for_model(model_type, **data)
    except (ValueError, KeyError, TypeError) as err:
        raise InvalidInputError(f"model_type {model_type!r}: transformers cannot build this config ({err})")
    if hasattr(original, "get_text_config"):
        original = original.get_text_config()
    width = _head_width(original)
    heads = 2
    # a key left None keeps its None, except the experts per token: a trimmed MoE config leaves it None
    changes = {k: v for k, v in SHRUNK.items()
               if hasattr(original, k) and (getattr(original, k) is not None or k == "num_experts_per_tok")}
    changes.update({k: heads for k in _HEAD_COUNT_KEYS if hasattr(original, k)})
    # as many key/value heads as query heads: every attention variant (MLA's too) accepts that
    changes.update({k: heads for k in _KV_HEAD_KEYS if hasattr(original, k) and getattr(original, k) is not None})
    changes.update({k: heads * width for k in _HIDDEN_KEYS if hasattr(original, k)})
    if isinstance(original.to_dict().get("head_dim"), int):  # a field, not a property computed from the others
        changes["head_dim"] = width
    for key in ("pad_token_id", "bos_token_id", "eos_token_id"):
        value = getattr(original, key, None)
        if isinstance(value, int) and value >= SHRUNK["vocab_size"]:
            changes[key] = 0 if key == "pad_token_id" else None
    settings = {**original.to_dict(), **changes}
    settings.pop("model_type", None)
    return AutoConfig.for_model(original.model_type, **settings)


#: how a model is built, in order of preference: float64 so that a failure is one of definition, not of
#: rounding; sdpa because eager attention in float64 turns fully masked (pad) rows into NaN -- its softmax runs
#: in float32, where float64's minimum is -inf; float32 for kernels refusing float64, eager for families
#: without sdpa
BUILDS = (("sdpa", torch.float64), ("sdpa", torch.float32), ("eager", torch.float32))


def build_from_config(path: str, attn_implementation: str | None = None):
    """A causal LM of the config at ``path`` with seeded small random weights (see :data:`BUILDS`).

    The model's ``symproof_build_note`` says why it was not built as asked or as preferred, else is empty.
    """
    from transformers import AutoModelForCausalLM

    config = shrunk_config(_read_config(path))
    builds = [b for b in BUILDS if attn_implementation in (None, b[0])]
    last = None
    for attention, dtype in builds:
        torch.manual_seed(SEED)
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attention).eval()
            with torch.no_grad():  # some kernels refuse a dtype only when called (a float32-only router)
                model(input_ids=torch.ones((1, 2), dtype=torch.long))
        except (ValueError, RuntimeError, TypeError, ImportError) as err:
            last = err
            continue
        model.symproof_build_note = "" if (attention, dtype) == builds[0] else (
            f"built with {attention} attention in {str(dtype).replace('torch.', '')}: {builds[0][0]} in "
            f"{str(builds[0][1]).replace('torch.', '')} was refused ({one_line(str(last))[:160]})")
        return model
    if "Unrecognized configuration class" in str(last):
        raise InvalidInputError(f"{path}: transformers has no causal LM for model_type {config.model_type!r} "
                                f"(the checklist runs decoder-only causal LMs)")
    raise InvalidInputError(f"{path}: transformers could not build a causal LM from this config "
                            f"({one_line(str(last))[:300]})")


class ModelUnderTest:
    """The few calls the items make on ``module``, and the rounding the tolerances are written in."""

    def __init__(self, module, *, cache_factory=None, config_source=None):
        if not isinstance(module, torch.nn.Module):
            raise InvalidInputError(f"expected a torch.nn.Module, got {type(module).__name__}")
        self.module = module.eval()
        self.config = getattr(module, "config", None)
        parameter = next(module.parameters(), None)
        self.dtype = getattr(module, "dtype", None) or (parameter.dtype if parameter is not None else torch.float32)
        if not self.dtype.is_floating_point:
            self.dtype = torch.float32
        #: the rounding unit of the computation (half the machine epsilon of its dtype)
        self.unit = torch.finfo(self.dtype).eps / 2
        #: the rounding unit of the rotary angles: transformers' rotary modules compute position x inv_freq
        #: with ``.float()`` whatever the model's dtype, so where an inv_freq buffer exists it is float32's
        rotary = any(name.endswith("inv_freq") for name, _ in module.named_buffers())
        self.angle_unit = max(self.unit, torch.finfo(torch.float32).eps / 2 if rotary else 0.0)
        self.depth = int(getattr(self.config, "num_hidden_layers", 0) or 0) or _count_layers(module)
        self.vocab = int(getattr(self.config, "vocab_size", 0) or module.get_input_embeddings().num_embeddings)
        self.pad_id = 0
        parameters = inspect.signature(module.forward).parameters
        self.cache_keyword = next((k for k in ("cache", "past_key_values") if k in parameters), None)
        self.accepts_hidden = "output_hidden_states" in parameters or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        self.cache_factory = cache_factory or self._dynamic_cache
        #: the config `symproof check` reads for the configured-map item (a path or dict; None: the module's)
        self.config_source = config_source

    def _dynamic_cache(self):
        from transformers import DynamicCache

        return DynamicCache(config=self.config) if self.config is not None else DynamicCache()

    @property
    def attn_implementation(self):
        return getattr(self.config, "_attn_implementation", None)

    @property
    def rope_type(self) -> str:
        parameters = getattr(self.config, "rope_parameters", None) or {}
        return str(parameters.get("rope_type", "default")) if isinstance(parameters, dict) else "default"

    def regime_length(self):
        """The longest call before the rotary map changes with the call length (dynamic NTK, LongRoPE), or None."""
        if self.rope_type not in ("dynamic", "longrope"):
            return None
        parameters = self.config.rope_parameters
        return int(parameters.get("original_max_position_embeddings") or self.config.max_position_embeddings)

    def tokens(self, length: int, stream: int = 0) -> torch.Tensor:
        generator = torch.Generator().manual_seed(SEED + stream)
        return torch.randint(1, max(self.vocab, 2), (1, length), generator=generator)

    def __call__(self, ids, *, mask=None, positions=None, cache=None):
        """(logits, hidden states or None) of one forward call, without gradients."""
        arguments = {"input_ids": ids}
        if mask is not None:
            arguments["attention_mask"] = mask
        if positions is not None:
            arguments["position_ids"] = positions
        if cache is not None:
            if self.cache_keyword is None:
                raise InvalidInputError("the model's forward takes neither `cache` nor `past_key_values`")
            arguments[self.cache_keyword] = cache
            arguments["use_cache"] = True
        if self.accepts_hidden:
            arguments["output_hidden_states"] = True
        with torch.no_grad():
            output = self.module(**arguments)
        logits = output if isinstance(output, torch.Tensor) else getattr(output, "logits", None)
        if logits is None and isinstance(output, (tuple, list)):
            logits = output[0]
        hidden = getattr(output, "hidden_states", None)
        return logits, (tuple(hidden) if hidden is not None else None)

    def rotary_state(self):
        """What a call may change in the rotary modules (dynamic NTK grows its base), to put back afterwards."""
        saved = []
        for module in self.module.modules():
            if any(name.endswith("inv_freq") for name in module._buffers):
                buffers = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in module._buffers.items()}
                saved.append((module, buffers,
                              {k: v for k, v in vars(module).items()
                               if k.endswith(("max_seq_len_cached", "attention_scaling", "original_inv_freq"))}))
        return saved

    @staticmethod
    def restore(saved) -> None:
        for module, buffers, attributes in saved:
            module._buffers.clear()
            module._buffers.update({k: (v.clone() if isinstance(v, torch.Tensor) else v)
                                    for k, v in buffers.items()})
            for key, value in attributes.items():
                setattr(module, key, value)


def _count_layers(module) -> int:
    lists = [m for m in module.modules() if isinstance(m, torch.nn.ModuleList)]
    return max((len(m) for m in lists), default=1)
