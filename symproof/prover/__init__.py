"""The exact prover: canonical forms, block structure, and witnesses."""

from ._prove import DEFAULT_STEPS, DEFAULT_TIMEOUT, PROVED, REFUTED, TACTICS, UNKNOWN, Step, Verdict, prove_equal
from ._trigpoly import TrigPolynomial, to_trig_polynomial
from ._witness import (
    candidates_for, complete_witness, evaluate_at, find_witness, format_witness, is_certainly_nonzero,
    search_variables,
)

__all__ = [
    "PROVED", "REFUTED", "UNKNOWN", "TACTICS", "DEFAULT_STEPS", "DEFAULT_TIMEOUT", "Step", "Verdict", "prove_equal",
    "TrigPolynomial", "to_trig_polynomial",
    "candidates_for", "complete_witness", "search_variables", "evaluate_at", "find_witness", "format_witness",
    "is_certainly_nonzero",
]
