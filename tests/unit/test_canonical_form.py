"""The canonical trig-polynomial form and the witness helpers, one function at a time."""

import pytest
import sympy as sp
from sympy import Rational, cos, pi, sin, sqrt

from symproof.prover import (
    candidates_for, evaluate_at, find_witness, format_witness, is_certainly_nonzero, search_variables,
    to_trig_polynomial,
)
from symproof.prover._trigpoly import MAX_MULTIPLE

x, y = sp.symbols("x y", real=True)
n = sp.Symbol("n", integer=True)

# -- to_trig_polynomial ------------------------------------------------------------------------------

CANONICAL = [
    # (expression, is zero, in the decidable class)
    pytest.param(sin(x) ** 2 + cos(x) ** 2 - 1, True, True, id="Pythagoras"),
    pytest.param(cos(2 * x) - cos(x) ** 2 + sin(x) ** 2, True, True, id="double angle"),
    pytest.param(cos(x / 2) ** 2 - (1 + cos(x)) / 2, True, True, id="half angle: common unit x/2"),
    pytest.param(cos(x - y) - cos(x) * cos(y) - sin(x) * sin(y), True, True, id="difference of atoms"),
    pytest.param(sqrt(2) * sin(x + pi / 4) - sin(x) - cos(x), True, True, id="known constant angle"),
    pytest.param(sin(x) - x, False, True, id="x and sin x are different atoms"),
    pytest.param(cos(sin(x)) - cos(x), False, False, id="nested argument: outside the class"),
    pytest.param(cos((MAX_MULTIPLE + 1) * x) - cos(x), False, False, id="beyond the Chebyshev bound"),
]


@pytest.mark.parametrize("expr, zero, decidable", CANONICAL)
def test_canonical_form(expr, zero, decidable):
    form = to_trig_polynomial(expr)
    assert form.is_zero is zero
    assert form.in_decidable_class is decidable


def test_the_form_maps_back_to_the_same_function():
    expr = cos(3 * x) * sin(y) + sin(x) ** 3
    form = to_trig_polynomial(expr)
    assert to_trig_polynomial(form.as_trig() - expr).is_zero


def test_the_form_reduces_every_square_of_a_sine():
    form = to_trig_polynomial(sin(x) ** 4 + sin(y) ** 3)
    s_vars = {s for _, s in form.pairs}
    assert all(p.exp < 2 for p in form.expr.atoms(sp.Pow) if p.base in s_vars)


def test_without_splitting_each_argument_is_an_atom():
    assert to_trig_polynomial(sin(3 * x) ** 2 + cos(3 * x) ** 2 - 1, split=False).is_zero
    unsplit = to_trig_polynomial(cos(2 * x) - cos(x) ** 2 + sin(x) ** 2, split=False)
    assert not unsplit.is_zero and not unsplit.in_decidable_class


def test_a_vanishing_denominator_is_flagged():
    form = to_trig_polynomial(1 / (sin(x) ** 2 + cos(x) ** 2 - 1))
    assert form.had_denominator and form.denominator_vanishes
    assert not to_trig_polynomial(1 / cos(x)).denominator_vanishes


# -- witnesses --------------------------------------------------------------------------------------

@pytest.mark.parametrize("symbol, first", [
    pytest.param(sp.Symbol("a", real=True), [0, 1, -1, 2, -2, Rational(1, 2)], id="real"),
    pytest.param(sp.Symbol("a", positive=True), [1, 2, Rational(1, 2), pi / 2, pi], id="positive"),
    pytest.param(sp.Symbol("a", negative=True), [-1, -2, Rational(-1, 2), -3, -pi / 2], id="negative"),
    pytest.param(sp.Symbol("a", integer=True), [0, 1, -1, 2, -2], id="integer"),
    pytest.param(sp.Symbol("a", even=True), [0, 2, -2, 4, -4], id="even"),
    pytest.param(sp.Symbol("a", odd=True, positive=True), [1, 3, 5, 7], id="odd positive"),
    pytest.param(sp.Symbol("a", integer=True, nonzero=True), [1, -1, 2, -2], id="nonzero integer"),
])
def test_candidates_respect_assumptions_simplest_first(symbol, first):
    pool = candidates_for(symbol)
    assert pool[: len(first)] == first
    assert all(getattr(v, f"is_{k}") is want for v in pool for k, want in symbol.assumptions0.items()
               if k != "commutative")


NONZERO = [
    pytest.param(Rational(1, 10**40), True, id="tiny rational"),
    pytest.param(sin(1) ** 2 + cos(1) ** 2 - 1 + Rational(1, 10**40), True, id="tiny after cancellation"),
    pytest.param(2 * sp.I * pi, True, id="imaginary"),
    pytest.param(sp.Integer(0), False, id="zero"),
    pytest.param(sin(1) ** 2 + cos(1) ** 2 - 1, False, id="zero that needs an identity"),
    pytest.param(sp.gamma(Rational(3, 2)) - sqrt(pi) / 2, False, id="zero through mpmath"),
    pytest.param(sp.zoo, False, id="zoo"),
    pytest.param(sp.nan, False, id="nan"),
    pytest.param(x, False, id="not a number"),
]


@pytest.mark.parametrize("value, expected", NONZERO)
def test_is_certainly_nonzero(value, expected):
    assert is_certainly_nonzero(value) is expected


def test_find_witness_skips_points_outside_the_domain():
    assert find_witness(1 / x, 1 / x ** 2) == {x: -1}


def test_find_witness_keeps_fixed_values():
    assert find_witness(sin(x * y), 0, fixed={y: pi}) == {x: Rational(1, 2), y: pi}


def test_find_witness_on_a_true_identity_finds_nothing():
    assert find_witness(sin(2 * x), 2 * sin(x) * cos(x)) is None


def test_search_variables_replace_a_matrix_symbol_by_its_entries():
    A = sp.MatrixSymbol("A", 1, 2)
    assert search_variables(A * sp.Matrix([x, y])) == {A[0, 0], A[0, 1], x, y}


def test_evaluate_at_sympifies_python_values():
    value = evaluate_at(x, {x: 1})
    assert isinstance(value, sp.Integer) and value == 1
    assert evaluate_at(sp.Sum(x ** n, (n, 0, 2)), {x: 2}) == 7


def test_format_witness_is_pasteable_and_ordered_by_name():
    assert format_witness({y: pi / 2, x: Rational(-1, 2)}) == "{x: -1/2, y: pi/2}"
