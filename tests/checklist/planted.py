"""A small model written as a user would: a faithful wrapper around a transformers Llama, with planted faults.

``PlantedModel(fault=None)`` forwards every call unchanged (so the checklist must pass it); each fault is one
bug users hit between the rotary function and the model:

- ``"columns_under_padding"``: with an attention mask, the positions are the column indices, not the ids passed;
- ``"no_reset_when_packing"``: with a 4-D (per-document) mask, the positions are the columns, not the reset ones;
- ``"query_at_zero_with_cache"``: with a non-empty cache, the new tokens are numbered from 0 again;
- ``"stale_base_with_cache"``: with a non-empty cache, the new tokens are rotated with another base than the
  cached keys were;
- ``"reload_drops_rope_field"``: ``save_pretrained`` writes the config without its rope scaling.
"""

from __future__ import annotations

import json
import os

import torch
from transformers import LlamaConfig, LlamaForCausalLM

FAULTS = ("columns_under_padding", "no_reset_when_packing", "query_at_zero_with_cache", "stale_base_with_cache",
          "reload_drops_rope_field")


def tiny_llama(**rope) -> LlamaForCausalLM:
    config = LlamaConfig(hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=128, max_position_embeddings=64,
                         rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0, **rope})
    torch.manual_seed(0)
    return LlamaForCausalLM(config).to(torch.float64).eval()


class PlantedModel(torch.nn.Module):
    def __init__(self, inner: LlamaForCausalLM, fault: str | None = None):
        super().__init__()
        assert fault in (None, *FAULTS), fault
        self.inner = inner
        self.fault = fault

    @property
    def config(self):
        return self.inner.config

    @property
    def dtype(self):
        return self.inner.dtype

    def get_input_embeddings(self):
        return self.inner.get_input_embeddings()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, cache=None, use_cache=None,
                output_hidden_states=None):
        past = cache.get_seq_length() if cache is not None else 0
        columns = torch.arange(past, past + input_ids.shape[1])[None].expand(input_ids.shape[0], -1)
        if self.fault == "columns_under_padding" and attention_mask is not None and attention_mask.ndim == 2:
            position_ids = columns
        if self.fault == "no_reset_when_packing" and attention_mask is not None and attention_mask.ndim == 4:
            position_ids = columns
        if self.fault == "query_at_zero_with_cache" and past:
            position_ids = columns - past
        rotary = self.inner.model.rotary_emb
        fresh = rotary.inv_freq
        if self.fault == "stale_base_with_cache" and past:
            rotary.inv_freq = fresh * 0.5  # the new queries and keys rotate with frequencies the cache never saw
        try:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                              cache=cache, use_cache=use_cache, output_hidden_states=output_hidden_states)
        finally:
            rotary.inv_freq = fresh

    def save_pretrained(self, folder):
        self.inner.save_pretrained(folder)
        with open(os.path.join(folder, "fault.json"), "w", encoding="utf-8") as handle:
            json.dump({"fault": self.fault}, handle)
        if self.fault == "reload_drops_rope_field":
            path = os.path.join(folder, "config.json")
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            data["rope_parameters"] = {"rope_type": "default", "rope_theta": data["rope_parameters"]["rope_theta"]}
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(data, handle)

    @classmethod
    def from_pretrained(cls, folder, **options):
        with open(os.path.join(folder, "fault.json"), encoding="utf-8") as handle:
            fault = json.load(handle)["fault"]
        return cls(LlamaForCausalLM.from_pretrained(folder, **options).eval(), fault)
