"""Symbolic definitions of the position encodings (one source for proofs and kernels)."""

from ._attention import causal_mask, cycle_notation, permutation_matrix, permute_rows_and_columns, self_attention, softmax_rows
from ._definitions import (
    DEFAULT_BASE, PAIRINGS, check_width, frequencies, frequency, pair_indices, pairing_permutation,
    rope_matrix, rotation, sin_shift, sin_shift_matrix, sinusoidal_vector,
)
from ._pairing import relayout_pairing

__all__ = [
    "DEFAULT_BASE", "PAIRINGS", "check_width", "frequencies", "frequency", "pair_indices",
    "pairing_permutation", "rope_matrix", "rotation", "sin_shift", "sin_shift_matrix", "sinusoidal_vector",
    "causal_mask", "cycle_notation", "permutation_matrix", "permute_rows_and_columns", "self_attention", "softmax_rows",
    "relayout_pairing",
]
