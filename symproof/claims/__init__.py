"""Claims of the chapter, the proof records of their derivations, and the runner."""

from ._claim import KINDS, ROUNDINGS, Calculation, CalculationLine, Chain, Claim, Part, Proof, claim, enclosure_texts, registered_claims
from ._runner import DERIVATIONS_PACKAGE, MEASURED, TESTED, ClaimResult, load_claims, run_claim, run_claims, select_claims, verdict_label
from ._verify import format_table, verify_claims

__all__ = [
    "KINDS", "ROUNDINGS", "Calculation", "CalculationLine", "Chain", "Claim", "Part", "Proof", "claim",
    "enclosure_texts", "registered_claims",
    "DERIVATIONS_PACKAGE", "MEASURED", "TESTED", "verdict_label", "ClaimResult", "load_claims", "run_claim", "run_claims", "select_claims",
    "format_table", "verify_claims",
]
