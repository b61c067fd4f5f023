"""Statements the prover can neither prove nor refute: the verdict must be ``unknown``.

Two kinds.  False statements whose counterexamples all lie beyond the simple
points the search tries: ``unknown`` is the honest answer, ``proved`` would be
a soundness bug.  True statements outside the decidable class: a canonical
form that is not zero proves nothing, and no witness can exist, so
``refuted`` would be a soundness bug too.
"""

import pytest
import sympy as sp
from sympy import Piecewise, cos, pi, sin

from symproof import UndefinedExpressionError, prove_equal

x, y = sp.symbols("x y", real=True)
p = sp.Symbol("p", positive=True)

FALSE_WITHOUT_SIMPLE_WITNESS = [
    pytest.param(Piecewise((1, x > 100), (0, True)), 0, id="differs only beyond x=100"),
    pytest.param(sp.floor(p / 1000), 0, id="floor(p/1000)=0"),
    pytest.param(x + Piecewise((sp.Rational(1, 10**30), x > 20), (0, True)), x, id="tiny offset beyond x=20"),
]

P, Q = sp.symbols("P Q", commutative=False)

# non-commutative symbols: numbers commute, so no numeric witness exists, and the
# canonical form (a commutative ring) must not be used to "prove" PQ = QP
NON_COMMUTATIVE = [
    pytest.param(P * Q, Q * P, id="PQ=QP"),
    pytest.param(P * sin(x) ** 2 * Q + P * cos(x) ** 2 * Q, Q * P, id="P(sin^2+cos^2)Q=QP"),
]

TRUE_OUTSIDE_THE_CLASS = [
    pytest.param(sp.gamma(x + 1), x * sp.gamma(x), id="gamma(x+1)=x gamma(x)"),
    pytest.param(sp.acos(x) + sp.asin(x), pi / 2, id="acos+asin=pi/2"),
    pytest.param(sp.erf(x) + sp.erfc(x), 1, id="erf+erfc=1"),
]


@pytest.mark.parametrize("lhs, rhs", FALSE_WITHOUT_SIMPLE_WITNESS + TRUE_OUTSIDE_THE_CLASS + NON_COMMUTATIVE)
def test_undecided_statement_is_unknown(lhs, rhs):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "unknown", str(verdict)
    assert verdict.witness is None
    assert "no witness" in verdict.reason or verdict.reason.startswith("outside the fragment: ")


ZERO = cos(2 * x) - cos(x) ** 2 + sin(x) ** 2  # identically zero, but only once cos 2x is split

UNDEFINED_EVERYWHERE = [
    # the numerator of lhs - rhs is zero modulo cos^2 + sin^2 = 1, but so is the
    # denominator: 0/0 = 42 must not be "proved"
    pytest.param((1 - cos(x) ** 2 - sin(x) ** 2) / (cos(x) ** 2 + sin(x) ** 2 - 1), 42, id="0/0=42"),
    # the numerator is zero even with cos 2x taken as an atom of its own; the
    # denominator is zero only after splitting it
    pytest.param((42 * ZERO + sin(x) ** 2 + cos(x) ** 2 - 1) / ZERO, 42, id="0/0=42 after splitting"),
]


@pytest.mark.parametrize("lhs, rhs", UNDEFINED_EVERYWHERE)
def test_a_denominator_that_vanishes_identically_proves_nothing(lhs, rhs):
    with pytest.raises(UndefinedExpressionError, match="identically zero"):
        prove_equal(lhs, rhs)


def test_non_commutative_factors_keep_their_order():
    assert prove_equal(P * sin(x) ** 2 * Q + P * cos(x) ** 2 * Q, P * Q).proved
