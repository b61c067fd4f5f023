"""Numerical kernels generated from the symbolic definitions, references, and export."""

from .._export._config import RopeConfig, atomic_write_text, load_config, save_config
from ._consistency import (
    absolute_attention, apply_position_table, attention, causal_mask, decode_with_cache, document_mask,
    document_positions, load_position_table, padding_mask, positions_from_mask, rope_attention,
    rope_position_table, save_position_table,
)
from ._lookup import embedding_lookup, learned_position_lookup, token_ids
from ._precision import finite_precision_table, round_to_bfloat16
from ._allowance import (
    Allowance, ceil_log2, exact_max_gap, first_index_above, power_of_two, rounding_allowance, stable_digits,
)

__all__ = ["RopeConfig", "atomic_write_text", "load_config", "save_config"]
__all__ += [
    "attention", "causal_mask", "padding_mask", "positions_from_mask", "document_positions", "document_mask",
    "rope_attention", "absolute_attention", "decode_with_cache", "rope_position_table", "apply_position_table",
    "save_position_table", "load_position_table",
    "learned_position_lookup", "embedding_lookup", "token_ids",
    "finite_precision_table", "round_to_bfloat16",
    "Allowance", "rounding_allowance", "exact_max_gap", "first_index_above", "power_of_two", "ceil_log2",
    "stable_digits",
]

# Generated kernels and their hand-written references (kernels engineer).
from ._generate import (
    alibi_bias, alibi_slopes, alibi_slopes_exact, relative_bias_scores, rope_apply, rope_backward, rope_kernel,
    rope_score_frequency_gradient, rope_scores, rope_spec, sinusoidal_table,
)
from ._reference import ROPE_REFERENCES

__all__ += [
    "rope_apply", "rope_backward", "rope_scores", "rope_score_frequency_gradient", "sinusoidal_table",
    "relative_bias_scores", "alibi_slopes", "alibi_slopes_exact", "alibi_bias", "rope_kernel", "rope_spec",
    "ROPE_REFERENCES",
]

from ._export import KERNELS, TARGETS, export_kernel, kernel_listings, kernel_sources

__all__ += ["KERNELS", "TARGETS", "export_kernel", "kernel_sources", "kernel_listings"]
