"""The five families of unsound verdicts, each with false and true statements written fresh.

A false statement must never be *proved* (refuted or unknown are both sound);
a true one must never be *refuted*.  Where the prover decides a case, the
expected verdict is pinned too, so that a regression to *unknown* shows.
Every *proved* verdict's certificate is re-checked by the independent checker,
and every witness is re-checked here by exact substitution and interval
enclosure (not by the prover's own certification).
"""

from decimal import Decimal

import pytest
import sympy as sp
from sympy import (
    Abs, KroneckerDelta, Piecewise, Rational, Sum, acos, asin, atanh, binomial, ceiling, cos, exp, floor, log,
    pi, sign, sin, sqrt, tan,
)

from symproof import SymproofError, UndefinedExpressionError, prove_equal
from symproof.checker import certainly_finite, certainly_nonzero, check_certificate

x, y, z = sp.symbols("x y z", real=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
m = sp.Symbol("m", integer=True, positive=True)
k = sp.Symbol("k", integer=True)
kp = sp.Symbol("k", integer=True, positive=True)
q = sp.Symbol("q", positive=True)
A, B, C = sp.symbols("A B C", commutative=False)
ONE = sin(x) ** 2 + cos(x) ** 2  # identically 1, but not written as 1
ZERO = ONE - 1

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"
NOT_PROVED = (REFUTED, UNKNOWN)
NOT_REFUTED = (PROVED, UNKNOWN)

# -- 1. non-commutative symbols inside trig functions --------------------------------------------

NONCOMMUTATIVE_FALSE = [
    pytest.param(sin(A) * B, B * sin(A), id="sin(A)B=Bsin(A) (the issue's example)"),
    pytest.param(cos(A) * B, B * cos(A), id="cos(A)B=Bcos(A)"),
    pytest.param(sin(A) * cos(B), cos(B) * sin(A), id="sin(A)cos(B)=cos(B)sin(A)"),
    pytest.param(tan(A) * B, B * tan(A), id="tan(A)B=Btan(A)"),
    pytest.param(sin(A + B) * C, C * sin(A + B), id="sin(A+B)C=Csin(A+B)"),
    pytest.param(sin(A) ** 2 * B + cos(A) ** 2 * B, B * (sin(A) ** 2 + cos(A) ** 2), id="reordered pythagoras"),
    pytest.param(exp(sp.I * A) * B, B * exp(sp.I * A), id="exp(iA)B=Bexp(iA)"),
    pytest.param(sin(A) * B * sin(A), sin(A) ** 2 * B, id="sin(A)Bsin(A)=sin(A)^2B"),
    pytest.param(cos(2 * A) * B, B * (cos(A) ** 2 - sin(A) ** 2), id="cos(2A)B=B(cos^2-sin^2)"),
    pytest.param(sin(x * A) * B, B * sin(x * A), id="sin(xA)B=Bsin(xA)"),
    pytest.param(A * B, B * A, id="AB=BA"),
]

NONCOMMUTATIVE_TRUE = [
    pytest.param(A * ONE * B, A * B, PROVED, id="A(sin^2+cos^2)B=AB"),
    pytest.param(sin(x) * A, A * sin(x), PROVED, id="sin(x) commutes with A"),
    pytest.param(cos(2 * x) * A * B, (cos(x) ** 2 - sin(x) ** 2) * A * B, PROVED, id="cos2x AB"),
    pytest.param(exp(sp.I * x) * A, (cos(x) + sp.I * sin(x)) * A, PROVED, id="exp(ix)A"),
    pytest.param(sin(A) * B, sin(A) * B, PROVED, id="sin(A)B=sin(A)B"),
    pytest.param(A * (sin(x + y) - sin(x) * cos(y) - cos(x) * sin(y)), 0 * A, PROVED, id="A times zero"),
]

# -- 2. sums: no trust in Sum.doit, index assumptions from the range --------------------------------

SUM_FALSE = [
    pytest.param(Sum((-1) ** k * binomial(n, k), (k, 0, n)), 0, id="alternating binomial = 0 (n=0: 1)"),
    pytest.param(Sum(k * (-1) ** k * binomial(n, k), (k, 0, n)), 0, id="k alternating binomial = 0 (n=1)"),
    pytest.param(Sum(binomial(n, k), (k, 0, n)), 2**n - 1, id="binomial sum = 2^n-1"),
    pytest.param(Sum(k, (k, 0, n)), n**2 / 2, id="0+..+n=n^2/2"),
    pytest.param(Sum(2**k, (k, 0, n)), 2**n - 1, id="geometric off by one"),
    pytest.param(Sum(1 / (k * (k + 1)), (k, 1, n)), 1 - 1 / (n + 1) + 1 / (n + 2), id="telescoping wrong"),
    pytest.param(Sum(1, (k, 0, n)), n, id="n+1 ones = n"),
    pytest.param(Sum(KroneckerDelta(k, m), (k, 0, n)), 1, id="delta outside the range"),
    pytest.param(Sum(log(kp**2) / 2, (kp, -m, -1)), Sum(log(kp), (kp, -m, -1)),
                 id="positive index over a negative range"),
    pytest.param(Sum(sqrt(kp**2) - Abs(kp), (kp, -3, -1)) + Sum(Abs(k) - k, (k, -3, -1)), 0,
                 id="declared positive, summed over negatives"),
    pytest.param(Sum(x**k, (k, 0, n)), (x**n - 1) / (x - 1), id="geometric in x off by one"),
    pytest.param(Sum(k * (k - 1), (k, 0, n)), n**3 / 3, id="k(k-1) sum"),
]

SUM_TRUE = [
    pytest.param(Sum(k, (k, 0, n)), n * (n + 1) / 2, PROVED, id="Gauss"),
    pytest.param(Sum(k**2, (k, 1, n)), n * (n + 1) * (2 * n + 1) / 6, PROVED, id="squares"),
    pytest.param(Sum(2**k, (k, 0, n - 1)), 2**n - 1, PROVED, id="geometric"),
    pytest.param(Sum(Rational(1, 3) ** k, (k, 0, n)), (1 - Rational(1, 3) ** (n + 1)) * Rational(3, 2), PROVED,
                 id="geometric 1/3"),
    pytest.param(Sum(1 / (k * (k + 1)), (k, 1, n)), n / (n + 1), PROVED, id="telescoping"),
    pytest.param(Sum(KroneckerDelta(k, 2), (k, 0, n + 2)), 1, PROVED, id="delta inside the range"),
    pytest.param(Sum(sin(k * x) ** 2 + cos(k * x) ** 2, (k, 1, m)), m, PROVED, id="m ones"),
    pytest.param(Sum(k, (k, -3, 3)), 0, PROVED, id="finite symmetric"),
    pytest.param(Sum((-1) ** k * binomial(n, k), (k, 0, n)), KroneckerDelta(n, 0), NOT_REFUTED,
                 id="alternating binomial = [n=0] (true, outside the table)"),
]

# -- 3. witnesses at discontinuities and on branch cuts ------------------------------------------------

DISCONTINUOUS_TRUE = [
    pytest.param(sign(ZERO), 0, id="sign of an exact zero"),
    pytest.param(floor(ONE), 1, id="floor of an exact one"),
    pytest.param(ceiling(ONE), 1, id="ceiling of an exact one"),
    pytest.param(Piecewise((1, ONE >= 1), (0, True)), 1, id="piecewise condition on the boundary"),
    pytest.param(asin(ONE), pi / 2, id="asin at the end of its cut"),
    pytest.param(acos(ONE), 0, id="acos at the end of its cut"),
    pytest.param(atanh(ZERO), 0, id="atanh at an exact 0"),
    pytest.param(sqrt(ZERO), 0, id="sqrt of an exact 0"),
    pytest.param(log(ONE), 0, id="log of an exact 1"),
    pytest.param(sign(x) * Abs(x), x, id="sign x |x| = x"),
    pytest.param(sp.arg(ONE), 0, id="arg of an exact 1"),
    pytest.param(Piecewise((x, x >= 0), (-x, True)), Abs(x), id="piecewise |x|"),
    pytest.param(floor(x) + floor(-x), Piecewise((0, sp.Eq(x, floor(x))), (-1, True)), id="floor x + floor -x"),
]

DISCONTINUOUS_FALSE = [
    pytest.param(sign(x), 1, id="sign x = 1"),
    pytest.param(floor(x), x, id="floor x = x"),
    pytest.param(Piecewise((1, x > 0), (0, True)), 1, id="step = 1"),
    pytest.param(ceiling(x), floor(x) + 1, id="ceiling = floor + 1"),
    pytest.param(sign(sin(x)), 1, id="sign sin x = 1"),
    pytest.param(asin(sin(x)), x, id="asin sin x = x"),
    pytest.param(log(x**2), 2 * log(x), id="log x^2 = 2 log x"),
    pytest.param(atanh(x), x, id="atanh x = x"),
    pytest.param(sp.Max(x, 1), x, id="max(x,1)=x"),
    pytest.param(floor(2 * x), 2 * floor(x), id="floor 2x = 2 floor x"),
    pytest.param(sign(x - Rational(1, 3)), sign(x), id="sign shifted"),
    pytest.param(sqrt(x**2), x, id="sqrt x^2 = x"),
]

# -- 4. definedness first; decimals read exactly -------------------------------------------------------

UNDEFINED = [
    pytest.param(1 / ZERO, 1 / ZERO, id="identical sides, denominator 0 (structural path)"),
    pytest.param(ZERO / (cos(2 * x) - cos(x) ** 2 + sin(x) ** 2), 0, id="numerator 0 over denominator 0"),
    pytest.param(log(ZERO), 5, id="log of 0"),
    pytest.param(x / (x - x * ONE), 7, id="x/(x - x*1)"),
    pytest.param(tan(x) / ZERO, 0, id="tan over 0"),
    pytest.param(atanh(ONE), 1, id="atanh of 1"),
    pytest.param(sp.gamma(ZERO), 1, id="gamma of 0"),
    pytest.param(sp.cot(ZERO), 0, id="cot of 0"),
    pytest.param((x + 1) / ((x + 1) ** 2 - x**2 - 2 * x - 1), 1, id="polynomial denominator 0"),
    pytest.param(1 / (exp(x + y) - exp(x) * exp(y)), 3, id="exp denominator 0"),
    pytest.param(sp.Matrix([[1 / ZERO]]), sp.Matrix([[0]]), id="inside a matrix"),
    pytest.param(Sum(1 / (cos(k * x) ** 2 + sin(k * x) ** 2 - 1), (k, 0, n)), 0, id="inside a sum"),
]

DEFINED_TRUE = [
    pytest.param(sin(x) ** 2 / (1 - cos(x) ** 2), 1, id="sin^2/(1-cos^2)"),
    pytest.param((x**2 - 1) / (x - 1), x + 1, id="(x^2-1)/(x-1)"),
    pytest.param(x / (x * ONE), 1, id="x/(x*1)"),
    pytest.param(tan(2 * x), 2 * tan(x) / (1 - tan(x) ** 2), id="tan 2x"),
    pytest.param(log(q) + 0 * ZERO, log(q), id="log of a positive symbol"),
    pytest.param(1 / (1 + x**2), 1 / (1 + x**2), id="1/(1+x^2)"),
]

DECIMALS = [
    pytest.param(Decimal("0.1"), Rational(1, 10), PROVED, id="Decimal 0.1 = 1/10"),
    pytest.param(Decimal("0.1"), 0.1, REFUTED, id="Decimal 0.1 != binary 0.1"),
    pytest.param(Decimal("1e-30"), 0, REFUTED, id="Decimal 1e-30 != 0"),
    pytest.param(Decimal("-2.50"), Rational(-5, 2), PROVED, id="Decimal -2.50 = -5/2"),
    pytest.param(Decimal("0.333"), Rational(1, 3), REFUTED, id="Decimal 0.333 != 1/3"),
]

# -- 5. crashes and time: every call answers, within its budget ----------------------------------------

ANSWERS = [
    pytest.param(sp.Integral(floor(x), (x, 0, y)), y, NOT_PROVED, id="integral of floor"),
    # an integral is outside the fragment: even ``a = a`` is not proved (a divergent integral is undefined)
    pytest.param(sp.Integral(floor(x), (x, 0, y)), sp.Integral(floor(x), (x, 0, y)), (UNKNOWN,), id="same integral"),
    pytest.param(Sum(tan(k * x), (k, 1, 40)), 0, NOT_PROVED, id="sum of 40 tangents"),
    pytest.param(exp(10**3000), exp(10**3000) + 1, NOT_PROVED, id="exp(10^3000)"),
    pytest.param(exp(10**3000) * 0 + 1, 1, (PROVED,), id="exp(10^3000) times 0"),
    pytest.param(sp.Integral(exp(-x**2), (x, 0, y)), y, NOT_PROVED, id="Gaussian integral"),
    pytest.param(sp.LambertW(x), x, NOT_PROVED, id="LambertW x = x"),
    pytest.param(sp.polylog(2, x), x, NOT_PROVED, id="polylog"),
    pytest.param(sp.loggamma(x), log(sp.gamma(x)), NOT_REFUTED, id="loggamma on its cut"),
    pytest.param(sp.zeta(x), 1, NOT_PROVED, id="zeta x = 1"),
    pytest.param(sp.Product(k, (k, 1, n)), sp.factorial(n), NOT_REFUTED, id="product = factorial"),
    pytest.param(sp.hyper([1], [2], x), x, NOT_PROVED, id="hypergeometric"),
    pytest.param(cos(x) ** 200 - sin(x) ** 200, cos(2 * x), NOT_PROVED, id="a high power"),
    pytest.param(sp.besselj(0, x), 1, NOT_PROVED, id="bessel"),
    pytest.param(sp.Mod(x, 1), x, NOT_PROVED, id="Mod x 1 = x"),
]


# -- the two completeness gaps, false variants: refuted with a certified witness ------------------------

beta, s_, e_ = sp.symbols("beta s e", positive=True)
GAPS_FALSE = [
    pytest.param(exp(sp.I * x) * exp(-sp.I * y), cos(x - y) - sp.I * sin(x - y), id="complex phase, wrong sign"),
    pytest.param(exp(sp.I * x) * exp(-sp.I * y), cos(x + y) + sp.I * sin(x + y), id="complex phase, sum"),
    pytest.param(exp(sp.I * x) ** 2, cos(x) ** 2 + sp.I * sin(2 * x), id="de Moivre wrong"),
    pytest.param((beta * s_ ** ((e_ + 2) / e_)) ** (-e_ / (e_ + 2)), beta ** (-e_ / (e_ + 2)) * s_, id="NTK base, s up"),
    pytest.param((beta * s_) ** e_, beta**e_ + s_**e_, id="power of a product as a sum"),
]


@pytest.mark.parametrize("lhs, rhs", GAPS_FALSE)
def test_a_false_variant_of_a_closed_gap_is_refuted(lhs, rhs):
    assert _status(lhs, rhs).refuted


def _status(lhs, rhs):
    verdict = prove_equal(lhs, rhs)
    if verdict.proved:
        check_certificate(verdict.certificate)
    if verdict.refuted:
        _recheck_witness(lhs, rhs, verdict.witness)
    return verdict


def _recheck_witness(lhs, rhs, witness):
    """Independent of the prover's search: substitute, write concrete sums out, enclose."""
    from symproof.prover import evaluate_at

    left, right = evaluate_at(_exact(lhs), witness), evaluate_at(_exact(rhs), witness)
    if isinstance(left, sp.MatrixBase):
        pairs = list(zip(left, right))
    else:
        pairs = [(left, right)]
    assert all(certainly_finite(a) and certainly_finite(b) for a, b in pairs), witness
    assert any(certainly_nonzero(a - b) for a, b in pairs), witness


def _exact(expr):
    if isinstance(expr, Decimal):
        return sp.Rational(*expr.as_integer_ratio())
    expr = sp.sympify(expr)
    if isinstance(expr, sp.MatrixBase):
        return expr
    return expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})


@pytest.mark.parametrize("lhs, rhs", NONCOMMUTATIVE_FALSE + SUM_FALSE + DISCONTINUOUS_FALSE)
def test_a_false_statement_is_never_proved(lhs, rhs):
    verdict = _status(lhs, rhs)
    assert verdict.status in NOT_PROVED, str(verdict)


@pytest.mark.parametrize("lhs, rhs", NONCOMMUTATIVE_FALSE)
def test_non_commutative_trig_is_unknown_with_its_reason(lhs, rhs):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == UNKNOWN
    assert "non-commutative" in verdict.reason or "no witness" in verdict.reason


@pytest.mark.parametrize("lhs, rhs, expected", NONCOMMUTATIVE_TRUE + SUM_TRUE)
def test_a_true_statement_gets_its_verdict(lhs, rhs, expected):
    verdict = _status(lhs, rhs)
    assert verdict.status in (expected if isinstance(expected, tuple) else (expected,)), str(verdict)


@pytest.mark.parametrize("lhs, rhs", [p for p in SUM_FALSE if "alternating" in p.id or "positive" in p.id])
def test_the_sums_sympy_gets_wrong_are_refuted_with_a_boundary_witness(lhs, rhs):
    verdict = _status(lhs, rhs)
    assert verdict.refuted, str(verdict)


def test_a_summand_outside_the_table_is_unknown_with_that_reason():
    verdict = prove_equal(Sum(binomial(n, k) ** 2, (k, 0, n)), binomial(2 * n, n))
    assert verdict.status == UNKNOWN
    assert "outside the closed-form table" in verdict.reason


@pytest.mark.parametrize("lhs, rhs", DISCONTINUOUS_TRUE)
def test_a_true_statement_is_never_refuted_at_a_discontinuity(lhs, rhs):
    verdict = _status(lhs, rhs)
    assert verdict.status in NOT_REFUTED, str(verdict)


@pytest.mark.parametrize("lhs, rhs", DISCONTINUOUS_FALSE)
def test_a_false_discontinuous_statement_is_refuted_with_a_certified_witness(lhs, rhs):
    verdict = _status(lhs, rhs)
    assert verdict.refuted, str(verdict)


@pytest.mark.parametrize("lhs, rhs", UNDEFINED)
def test_an_undefined_side_is_an_error_whatever_tactic_would_fire(lhs, rhs):
    with pytest.raises(UndefinedExpressionError, match="undefined"):
        prove_equal(lhs, rhs)


@pytest.mark.parametrize("lhs, rhs", DEFINED_TRUE)
def test_a_defined_statement_with_a_denominator_is_proved(lhs, rhs):
    verdict = _status(lhs, rhs)
    assert verdict.proved, str(verdict)


@pytest.mark.parametrize("lhs, rhs, expected", DECIMALS)
def test_a_decimal_is_read_exactly(lhs, rhs, expected):
    assert _status(lhs, rhs).status == expected


@pytest.mark.parametrize("value", [Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity")])
def test_a_decimal_that_is_not_a_number_is_undefined(value):
    with pytest.raises(UndefinedExpressionError, match="not a finite number"):
        prove_equal(value, 1)


@pytest.mark.parametrize("lhs, rhs, allowed", ANSWERS)
def test_every_call_answers_without_escaping(lhs, rhs, allowed):
    try:
        verdict = _status(lhs, rhs)
    except SymproofError:
        return
    assert verdict.status in allowed, str(verdict)


def test_the_tables_are_large_enough():
    assert len(NONCOMMUTATIVE_FALSE) >= 10 and len(NONCOMMUTATIVE_TRUE) >= 5
    assert len(SUM_FALSE) >= 10 and len(SUM_TRUE) >= 5
    assert len(DISCONTINUOUS_FALSE) >= 10 and len(DISCONTINUOUS_TRUE) >= 5
    assert len(UNDEFINED) + len([d for d in DECIMALS if d.values[2] != PROVED]) >= 10
    assert len(DEFINED_TRUE) + len([d for d in DECIMALS if d.values[2] == PROVED]) >= 5
    assert len(ANSWERS) >= 15
