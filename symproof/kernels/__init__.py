"""Numerical kernels generated from the symbolic definitions, references, and export."""

from ._config import RopeConfig, atomic_write_text, load_config, save_config
from ._consistency import (
    absolute_attention, apply_position_table, attention, causal_mask, decode_with_cache, document_mask,
    document_positions, load_position_table, padding_mask, positions_from_mask, rope_attention,
    rope_position_table, save_position_table,
)
from ._lookup import embedding_lookup, learned_position_lookup, token_ids
from ._precision import finite_precision_table, round_to_bfloat16

__all__ = ["RopeConfig", "atomic_write_text", "load_config", "save_config"]
__all__ += [
    "attention", "causal_mask", "padding_mask", "positions_from_mask", "document_positions", "document_mask",
    "rope_attention", "absolute_attention", "decode_with_cache", "rope_position_table", "apply_position_table",
    "save_position_table", "load_position_table",
    "learned_position_lookup", "embedding_lookup", "token_ids",
    "finite_precision_table", "round_to_bfloat16",
]
