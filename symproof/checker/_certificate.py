"""What a proof leaves behind for the checker: a small tree of certificates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Certificate", "KINDS"]

#: the kinds of certificate, and what ``data`` holds for each
KINDS = {
    "structural": "nothing: lhs and rhs are the same SymPy tree",
    "trig-polynomial": "pairs (c, s, angle), apps (app, ((pair, n), ...), (constant angle, ...)), "
                       "multipliers (q_k per pair, or None: the checker reduces itself), point",
    "power": "nothing: both sides are monomials in positive bases with real exponents",
    "sum": "sums (one entry per closed sum: sum, entry, index, antidifference, step), rest",
    "same-range": "index (the summation variable the summands are compared at), summands",
    "entrywise": "entries ((row, col, certificate), ...)",
    "blockwise": "blocks ((representative, renaming), ...), proofs {representative: certificate}",
    "defined": "proof (a certificate of lhs = rhs where both are defined), point (where every subterm is)",
}


@dataclass(frozen=True)
class Certificate:
    """``lhs = rhs`` and the evidence the checker needs to re-check it."""

    kind: str
    lhs: Any
    rhs: Any
    data: dict = field(default_factory=dict, compare=False)

    def size(self) -> int:
        """How many certificates this one holds, itself included."""
        total = 1
        for value in self.data.values():
            total += _count(value)
        return total


def _count(value) -> int:
    if isinstance(value, Certificate):
        return value.size()
    if isinstance(value, dict):
        return sum(_count(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_count(v) for v in value)
    return 0
