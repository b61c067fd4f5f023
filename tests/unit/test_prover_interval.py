"""Rigorous enclosures (the witness certification): what is certified non-zero, and what is not.

A value that is exactly zero but evaluates to noise must never be certified
non-zero; neither may a discontinuous or branch-cut function whose argument is
not certified away from its jump or cut.
"""

import mpmath
import pytest
import sympy as sp
from sympy import Rational, asin, atanh, ceiling, cos, exp, floor, log, pi, sign, sin, sqrt

from symproof.checker import certainly_finite, certainly_nonzero, enclose

NOISE_ZERO = cos(1) ** 2 + sin(1) ** 2 - 1  # exactly 0; SymPy does not fold it

NEVER_NONZERO = [
    pytest.param(NOISE_ZERO, id="cos^2+sin^2-1 at 1"),
    pytest.param(sign(NOISE_ZERO), id="sign of an exact zero"),
    pytest.param(floor(NOISE_ZERO + 1) - 1, id="floor at an integer"),
    pytest.param(ceiling(NOISE_ZERO + 2) - 2, id="ceiling at an integer"),
    pytest.param(sp.Piecewise((1, NOISE_ZERO >= 0), (0, True)) - 1, id="condition on its boundary"),
    pytest.param(asin(NOISE_ZERO + 1) - pi / 2, id="asin at the end of its cut"),
    pytest.param(atanh(NOISE_ZERO), id="atanh at 0 through noise"),
    pytest.param(log(NOISE_ZERO + 1), id="log of an exact 1"),
    pytest.param(sqrt(NOISE_ZERO), id="sqrt of an exact 0"),
    pytest.param(sp.LambertW(NOISE_ZERO + 1) - sp.LambertW(1), id="LambertW (not evaluated)"),
    pytest.param(sp.polylog(2, NOISE_ZERO + Rational(1, 2)) - sp.polylog(2, Rational(1, 2)), id="polylog"),
    pytest.param(sp.loggamma(NOISE_ZERO + 3) - log(2), id="loggamma (not evaluated)"),
    pytest.param(exp(10**3000) - exp(10**3000 - 1), id="exp of a huge argument is refused"),
    pytest.param(sp.Integral(floor(sp.Symbol("t")), (sp.Symbol("t"), 0, 1)), id="an integral"),
]

CERTIFIED_NONZERO = [
    pytest.param(Rational(1, 10**30), id="a tiny rational"),
    pytest.param(cos(1) ** 2 + sin(1) ** 2 - 1 + Rational(1, 10**40), id="noise plus 1e-40"),
    pytest.param(sin(2) - Rational(9, 10), id="sin 2 - 0.9"),
    pytest.param(sign(sqrt(3) - 1) - 2, id="sign of a certified positive"),
    pytest.param(floor(sqrt(2)) - 2, id="floor away from integers"),
    pytest.param(asin(Rational(1, 3)), id="asin inside (-1, 1)"),
    pytest.param(exp(sp.I) - 1, id="a complex value"),
    pytest.param(log(sqrt(2)), id="log of a certified positive"),
    pytest.param(sp.Max(sin(1), cos(1), evaluate=False) - cos(1), id="max"),
    pytest.param(sp.Piecewise((1, sqrt(2) > 1), (0, True)), id="a certified condition"),
]


@pytest.mark.parametrize("value", NEVER_NONZERO)
def test_never_certified_non_zero(value):
    assert not certainly_nonzero(value)


@pytest.mark.parametrize("value", CERTIFIED_NONZERO)
def test_certified_non_zero(value):
    assert certainly_nonzero(value)


def test_an_enclosure_contains_the_value():
    re, im = enclose(pi - 3)
    with mpmath.workdps(60):  # the end points exactly, and pi far more precisely than they are
        low, high = (mpmath.mpf(end) for end in re._mpi_)
        assert low <= mpmath.pi - 3 <= high
    assert im.a == im.b == 0


def test_a_value_with_a_free_symbol_has_no_enclosure():
    assert enclose(sp.Symbol("x")) is None
    assert not certainly_finite(sp.Symbol("x"))
