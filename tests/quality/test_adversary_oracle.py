"""The adversary's own evaluator (:mod:`_oracle`) and auditor, tested: a judge that cannot fail judges nothing.

Values are checked against numbers known independently (hand-computed, or
mpmath at a point), undefined subterms must be reported undefined however they
are hidden, undecidable ones unknown (never defined), and the auditor must
reject the unsound verdicts the issue lists.
"""

from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from sympy import (
    I, Abs, Float, IndexedBase, KroneckerDelta, Matrix, Max, Min, Mod, Piecewise, Pow, Product, Rational, Sum,
    atan, atan2, binomial, ceiling, cos, cosh, exp, factorial, floor, frac, gamma, log, oo, pi, sign, sin, sinh,
    sqrt, tan, zeta,
)

import _oracle as O
from _oracle_audit import _check_witness, free_variables

x, y = sp.symbols("x y", real=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True)
i, j = sp.symbols("i j", integer=True)
p = sp.Symbol("p", positive=True)
a = IndexedBase("a")
IM = sp.ImmutableMatrix
POINT = {x: Rational(1, 3), y: 0, n: 0, i: 0, j: 0, p: 2}


def _at(expr, **extra):
    return O.evaluate(expr, O.Point({**POINT, **extra}, {(sp.Symbol("a"), ((O.GQ(0), O.ZERO_GQ),)): O.Value.rational(5)}))


def _close(value, number):
    """The enclosure's midpoint agrees with an independently computed double to 1e-13."""
    number = complex(number)
    return abs(complex(value.re.mid, value.im.mid) - number) <= 1e-13 * max(1.0, abs(number))


VALUES = [
    pytest.param(x - Rational(1, 3), 0, id="exact rational zero"),
    pytest.param(Sum((-1) ** k * binomial(n, k), (k, 0, n)), 1, id="alternating binomial at n=0 is 1"),
    pytest.param(Sum(k, (k, 1, n - 3)), 3, id="Karr: sum 1..-3 is -(sum -2..0) = 3"),
    pytest.param(Product(k, (k, 1, n + 4)), 24, id="product 1..4"),
    pytest.param(Product(k + 2, (k, 1, n - 2)), Fraction(1, 2), id="Karr: product 1..-2 is 1/(k+2 at k=0)"),
    pytest.param(sin(x) ** 2 + cos(x) ** 2, 1.0, id="pythagoras (enclosure)"),
    pytest.param(exp(x) + atan(x) + sinh(x), mpmath.exp(1 / 3) + mpmath.atan(1 / 3) + mpmath.sinh(1 / 3), id="exp+atan+sinh"),
    pytest.param(log(-2 * p), mpmath.log(-4), id="log of a negative number"),
    pytest.param(sqrt(-p), 1j * mpmath.sqrt(2), id="sqrt of a negative number"),
    pytest.param((-8) ** Rational(1, 3), mpmath.mpc(-8) ** (1 / mpmath.mpf(3)), id="principal cube root"),
    pytest.param(Float(0.1), Fraction(3602879701896397, 2**55), id="Float is its binary value"),
    pytest.param(sp.Mul(Float(0.1), Float(0.1), evaluate=False), Fraction(3602879701896397, 2**55) ** 2, id="Float product exact"),
    pytest.param(floor(x) + ceiling(-x) + frac(x), Rational(1, 3) - 0 - 0 - 0, id="floor, ceiling, frac"),
    pytest.param(Mod(-x, Rational(1, 4)), Fraction(1, 6), id="Mod has the sign of the divisor"),
    pytest.param(Max(x, y, Rational(1, 4)) - Min(x, -1), Fraction(4, 3), id="Max, Min"),
    pytest.param(sp.Heaviside(y) + sign(x) + Abs(-x), Fraction(11, 6), id="Heaviside(0) is 1/2"),
    pytest.param(Piecewise((1 / y, y > 0), (7, True)), 7, id="only the chosen branch is evaluated"),
    pytest.param(Piecewise((1, sp.ITE(x > 1, y > 0, sp.Eq(y, 0))), (2, True)), 1, id="an ITE condition"),
    pytest.param(Piecewise((1, sp.Xor(x > 0, y > 0)), (2, True)), 1, id="a Xor condition"),
    pytest.param(KroneckerDelta(i, j) * (a[i] - a[j]), 0, id="one table for Indexed"),
    pytest.param(a[i] + a[j], 10, id="a[0] from the table"),
    pytest.param(gamma(Rational(5, 2)), 3 * mpmath.sqrt(mpmath.pi) / 4, id="gamma at a half-integer"),
    pytest.param(factorial(n + 5) / binomial(n + 5, 2), 12, id="factorial, binomial"),
    pytest.param(zeta(2) + zeta(0) + zeta(-2, evaluate=False), mpmath.pi**2 / 6 - 0.5, id="zeta at integers"),
    pytest.param(atan2(-1, -1), -3 * mpmath.pi / 4, id="atan2 in the third quadrant"),
    pytest.param(exp(I * pi / 2, evaluate=False), 1j, id="exp(i pi/2) exact"),
    pytest.param(cos(pi / 3), 0.5, id="cos(pi/3)"),
]


c = sp.Symbol("c")
COMPLEX_VALUES = [
    pytest.param(log(c), {c: -2 * I}, mpmath.log(-2j), id="log in the lower half-plane"),
    pytest.param(log(c), {c: -1 - I}, mpmath.log(-1 - 1j), id="log in the third quadrant"),
    pytest.param(log(c), {c: -1 + I}, mpmath.log(-1 + 1j), id="log in the second quadrant"),
    pytest.param(log(c), {c: 3 - I}, mpmath.log(3 - 1j), id="log in the fourth quadrant"),
    pytest.param(atan2(x, y), {x: -1, y: -1}, -3 * mpmath.pi / 4, id="atan2 at (-1, -1) with symbols"),
    pytest.param(atan2(x, y), {x: 1, y: -1}, 3 * mpmath.pi / 4, id="atan2 at (1, -1) with symbols"),
    pytest.param(sqrt(c), {c: -3 - 4 * I}, mpmath.sqrt(-3 - 4j), id="principal sqrt below the cut"),
    pytest.param(c ** Rational(1, 3), {c: -8 * I}, mpmath.power(-8j, 1 / mpmath.mpf(3)),
                 id="principal cube root of -8i"),
    pytest.param(cosh(log(c)), {c: -2 * I}, (-2j + 1 / (-2j)) / 2, id="cosh(log c) = (c + 1/c)/2"),
    pytest.param(sin(c) * exp(c), {c: 1 - 2 * I}, mpmath.sin(1 - 2j) * mpmath.exp(1 - 2j), id="sin and exp of a complex"),
]


@pytest.mark.parametrize("expr, point, expected", COMPLEX_VALUES)
def test_complex_values(expr, point, expected):
    value = O.evaluate(expr, O.Point(point))
    assert _close(value, expected), (value, expected)


@pytest.mark.parametrize("expr, expected", VALUES)
def test_values(expr, expected):
    value = _at(expr)
    if isinstance(expected, sp.Rational):
        expected = Fraction(int(expected.p), int(expected.q))
    if isinstance(expected, (Fraction, int)):
        assert value.real_rational() == expected, value
        return
    assert _close(value, expected), (value, expected)
    assert value.re.delta < 1e-30 and value.im.delta < 1e-30


UNDEFINED = [
    pytest.param(1 / y, id="1/y at y=0"),
    pytest.param(sp.Mul(0, Pow(0, -1, evaluate=False), evaluate=False), id="0*(1/0) is undefined"),
    pytest.param(sp.Mul(y, 1 / y, evaluate=False), id="y*(1/y) at y=0, unevaluated"),
    pytest.param(1 / (1 + 1 / y), id="1/(1+1/y) at 0 (no absorption of infinities)"),
    pytest.param(tan(pi / 2, evaluate=False), id="tan(pi/2)"),
    pytest.param(sp.cot(pi, evaluate=False), id="cot(pi)"),
    pytest.param(sp.asec(0, evaluate=False), id="asec(0)"),
    pytest.param(atan2(0, 0, evaluate=False), id="atan2(0,0)"),
    pytest.param(Mod(x, 0, evaluate=False), id="Mod(x,0)"),
    pytest.param(log(y), id="log(0)"),
    pytest.param(gamma(-2, evaluate=False), id="gamma(-2)"),
    pytest.param(zeta(1, evaluate=False), id="zeta(1)"),
    pytest.param(factorial(n - 1), id="factorial(-1)"),
    pytest.param(oo * y, id="oo*0"),
    pytest.param(x + sp.zoo, id="zoo"),
    pytest.param(Product((k + 2) / (k + 1), (k, -1, n)), id="a product through a pole"),
    pytest.param(Sum(1 / k, (k, -1, 1)), id="a sum through a pole"),
    pytest.param(Piecewise((1, y > 0)), id="no Piecewise branch"),
    pytest.param(sp.Inverse(IM([[1, 2], [2, 4]])), id="singular inverse"),
    pytest.param(Matrix([[x, 1 / y]]), id="one undefined matrix entry"),
    pytest.param(sp.HadamardProduct(IM([[x]]), IM([[1 / y]])), id="inside a Hadamard product"),
]


@pytest.mark.parametrize("expr", UNDEFINED)
def test_undefined(expr):
    with pytest.raises(O.Undefined):
        _at(expr)


UNKNOWN = [
    pytest.param(1 / (log(6) - log(2) - log(3)), id="disguised zero: not decidable by intervals"),
    pytest.param(1 / (cosh(x) ** 2 - sinh(x) ** 2 - 1), id="hyperbolic disguised zero"),
    pytest.param(floor(sin(x) ** 2 + cos(x) ** 2), id="floor at an integer enclosure"),
    pytest.param(sp.Integral(x, x), id="a construct not modelled"),
    pytest.param(Sum(k, (k, 0, sp.oo)), id="an infinite series"),
]


@pytest.mark.parametrize("expr", UNKNOWN)
def test_unknown(expr):
    with pytest.raises(O.Unknown):
        _at(expr)


def test_matrix_symbol_is_an_element_table():
    M = sp.MatrixSymbol("M", 2, 2)
    with pytest.raises(O.Unbound):
        _at(M)
    table = {(M, ((O.GQ(r), O.ZERO_GQ), (O.GQ(s), O.ZERO_GQ))): O.Value.rational(2 * r + s)
             for r in range(2) for s in range(2)}
    value = O.evaluate(sp.Trace(sp.MatMul(M, M)), O.Point({}, table))
    assert value.real_rational() == 0 * 0 + 1 * 2 + 2 * 1 + 3 * 3


def test_matrix_expressions_entrywise():
    A, B = IM([[1, x], [0, 2]]), IM([[y, 1], [1, 1]])
    cases = {
        sp.MatMul(A, B): [[Fraction(1, 3), Fraction(4, 3)], [2, 2]],
        sp.MatAdd(A, B): [[1, Fraction(4, 3)], [1, 3]],
        sp.HadamardProduct(A, B): [[0, Fraction(1, 3)], [0, 2]],
        sp.Transpose(A): [[1, 0], [Fraction(1, 3), 2]],
        sp.MatPow(A, 2): [[1, 1], [0, 4]],
        sp.Inverse(A): [[1, Fraction(-1, 6)], [0, Fraction(1, 2)]],
        sp.KroneckerProduct(IM([[1, 2]]), IM([[x], [1]])): [[Fraction(1, 3), Fraction(2, 3)], [1, 2]],
        sp.BlockMatrix([[IM([[x]]), IM([[1, 2]])]]): [[Fraction(1, 3), 1, 2]],
    }
    for expr, expected in cases.items():
        got = [[v.real_rational() for v in row] for row in _at(expr)]
        assert got == [[Fraction(e) for e in row] for row in expected], expr


def test_free_variables_exclude_bound_indices_and_labels():
    assert free_variables(Sum(a[k], (k, 0, n)) + x) == {n, x}


@pytest.mark.parametrize("lhs, rhs, witness, complaint", [
    pytest.param(KroneckerDelta(i, j) * (a[i] - a[j]), 0, {a[i]: 1, a[j]: 0, i: 0, j: 0}, "two values",
                 id="inconsistent Indexed table"),
    pytest.param(Sum(k, (k, 0, n)), n, {k: 1, n: 2}, "not a free variable", id="bound index in the witness"),
    pytest.param(a[i] - a[j], 0, {sp.Symbol("a"): 0, i: 0, j: 1}, "overlap", id="the label's default value: a[0] = a[1]"),
    pytest.param(a[i] - a[j], 0, {a: 0, i: 0, j: 1}, "not a free variable", id="the IndexedBase itself as a key"),
    pytest.param(a[i] - a[j], 0, {i: 0, j: 1, a[0]: 1}, "incomplete", id="an element without a value"),
    pytest.param(Matrix([[x, 1 / y]]), Matrix([[x + 1, 1 / y]]), {x: 0, y: 0}, "undefined", id="an undefined entry"),
    pytest.param(1 / (1 + 1 / x), x / (x + 1) + 1, {x: 0}, "undefined", id="absorbed infinity"),
    pytest.param(n, n + 1, {n: Rational(1, 2)}, "assumptions", id="integer assumption broken"),
    pytest.param(p, p + 1, {p: 0}, "assumptions", id="positive assumption broken"),
    pytest.param(x, x + 1, {}, "incomplete", id="a variable left unbound"),
    pytest.param(sp.Symbol("h", zero=False), 1, {sp.Symbol("h", zero=False): 0}, "assumptions",
                 id="zero=False assumption broken"),
    pytest.param(sp.Symbol("P", prime=True), 1, {sp.Symbol("P", prime=True): 4}, "assumptions", id="prime broken"),
    pytest.param(sp.Symbol("t", noninteger=True), 0, {sp.Symbol("t", noninteger=True): 2}, "assumptions",
                 id="noninteger broken"),
    pytest.param(sp.Function("f")(x) + a[0], sp.Function("f")(x), {x: 0}, "incomplete",
                 id="an element left open that decides the verdict"),
    pytest.param(sin(x) ** 2 + cos(x) ** 2, 1 + Rational(1, 10**1000), {x: 1}, "overlap", id="sides not apart"),
])
def test_auditor_rejects_bad_witnesses(lhs, rhs, witness, complaint):
    problems = []
    _check_witness(sp.sympify(lhs), sp.sympify(rhs), witness, problems)
    assert any(complaint in problem for problem in problems), problems


F = sp.Function("f")


@pytest.mark.parametrize("lhs, rhs, witness", [
    pytest.param(a[i] - a[j], 0, {i: 0, j: 1, a[0]: 1, a[1]: 0}, id="every element listed"),
    pytest.param(a[i] - a[j], 0, {i: 0, j: 1, a[0]: 1, sp.Symbol("a"): 0}, id="the label's value for the rest"),
    pytest.param(a[i] - a[j] + F(x), F(x), {i: 0, j: 1, a[0]: 1, a[1]: 0, x: 0}, id="f(0), shared, left open"),
    pytest.param(sp.Function("g")(x) + a[0], 0, {x: 0, a[0]: 1, sp.Function("g")(0): 2}, id="g(0) bound"),
    pytest.param(exp(exp(exp(pi / 2))), 1 + exp(exp(exp(pi / 2))), {}, id="apart by 1 at 2e53: more digits"),
])
def test_auditor_accepts_a_good_witness(lhs, rhs, witness):
    """(Including one whose sides are apart only at more digits than the first try carries.)"""
    problems = []
    _check_witness(sp.sympify(lhs), sp.sympify(rhs), witness, problems)
    assert problems == []
