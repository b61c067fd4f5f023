"""The vocabulary of a variant's properties, shared by the checker (:mod:`._check`) and the offset
properties (:mod:`._offset`): the symbols of the generic statements, :class:`Property`, the mirrored
offset and its direction, the residual of a candidate witness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import sympy as sp

from ..prover._witness import evaluate_at, is_certainly_nonzero
from ._spec import Variant

__all__ = ["Property"]

q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
i, j, c, D = sp.symbols("i j c D", integer=True)
t = sp.Symbol("t", integer=True)
m = sp.Symbol("m", integer=True)
omega = sp.Symbol("omega", real=True)
r_sym = sp.Symbol("r", integer=True, nonnegative=True)
slope_sym = sp.Symbol("slope", real=True)
#: the head index of a bias formula that reads it (KERPLE's per-head second parameter)
h_sym = sp.Symbol("h", integer=True, nonnegative=True)
#: causal rows: key position j >= 0, query position j + back (back >= 0 steps later)
j_causal = sp.Symbol("j", integer=True, nonnegative=True)
back = sp.Symbol("t", integer=True, nonnegative=True)
#: the length of a call (max position id + 1), for rules that read it
seq_len_sym = sp.Symbol("seq_len", integer=True, positive=True)


@dataclass(frozen=True)
class Property:
    """One property to decide for a variant."""

    key: str
    statement: str
    kind: str  # "identity": holds = lhs == rhs; "sensitivity": holds = lhs != rhs somewhere
    sides: Callable | None = None  # (omega, r) -> (lhs, rhs); None for computed checks
    derive: Callable | None = None  # a full derivation, for properties that are not pairwise


def _mirror(variant: Variant, offset=D, origin=0) -> tuple:
    """The positions of the mirrored offset: (0, -D), or (D, 0) when positions are non-negative (the
    same offset -D, with the key before the query)."""
    return (offset, origin) if variant.from_zero else (origin, -offset)


def _direction(letter: str, variant: Variant) -> tuple:
    if letter == "p":
        left, right = ("p_0^T p_D", "p_D^T p_0") if variant.from_zero else ("p_0^T p_D", "p_0^T p_{-D}")
    else:
        left = f"{letter}(0, D)"
        right = f"{letter}(D, 0)" if variant.from_zero else f"{letter}(0, -D)"
    return f"{left} != {right} in general: the sign of the offset is visible", "sensitivity"


_VECTORS = ({q0: 1, q1: 0, k0: 1, k1: 0}, {q0: 1, q1: 0, k0: 0, k1: 1}, {q0: 0, q1: 1, k0: 1, k1: 0})


def _residual_at(pair, witness):
    lhs, rhs = pair
    try:
        if isinstance(lhs, sp.MatrixBase):
            for a, b in zip(lhs, rhs):
                residual = evaluate_at(a, witness) - evaluate_at(b, witness)
                if is_certainly_nonzero(residual):
                    return residual
            return None
        residual = evaluate_at(lhs, witness) - evaluate_at(rhs, witness)
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        return None
    return residual if is_certainly_nonzero(residual) else None


#: the symbols of the generic statements that are positions (or offsets that become positions)
_POSITION_NAMES = frozenset({"i", "j", "m", "t", "c", "D"})
