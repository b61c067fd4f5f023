"""Property-based: random trig-polynomial identities, true and false by construction.

True by construction, without trusting SymPy's trigonometry: a random
polynomial ``P`` in ``cos u, sin u, cos v, sin v`` (``u, v`` random integer
combinations of ``x, y``) against ``P + Q (cos^2 u + sin^2 u - 1)`` for a random
polynomial ``Q``, with ``cos u`` and ``sin u`` optionally written out by the
angle-sum formulas (applied here, by hand).  False by construction: the same
plus ``k cos(a x + b y)`` or a constant ``k`` with ``k != 0``, which is not the
zero function.

A true identity must be *proved* and its certificate accepted by the
independent checker; a false one must never be proved, and when it is refuted
its witness is re-checked here: exactly when the residual is rational, else
by an interval enclosure that excludes zero (the checker's, not the search's).
Derandomized with a fixed number of examples: 250 true + 250 false per run.
"""

import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import cos, sin

from symproof import prove_equal
from symproof.checker import certainly_finite, certainly_nonzero, check_certificate
from symproof.prover import evaluate_at

x, y = sp.symbols("x y", real=True)
SETTINGS = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

coefficient = st.integers(-3, 3)
nonzero = st.sampled_from([-3, -2, -1, 1, 2, 3, sp.Rational(1, 2), sp.Rational(-1, 3)])


@st.composite
def angle(draw):
    a, b = draw(st.integers(-3, 3)), draw(st.integers(-2, 2))
    if (a, b) == (0, 0):
        a = 1
    return a * x + b * y


def _angle_sum(u, func):
    """``cos u`` or ``sin u`` with ``u = a x + b y`` split by the angle-sum formulas."""
    a, b = u.coeff(x), u.coeff(y)
    p, q = a * x, b * y
    if func is cos:
        return cos(p) * cos(q) - sin(p) * sin(q)
    return sin(p) * cos(q) + cos(p) * sin(q)


@st.composite
def polynomial(draw, atoms):
    terms = []
    for _ in range(draw(st.integers(1, 3))):
        powers = [draw(st.integers(0, 2)) for _ in atoms]
        terms.append(draw(coefficient) * sp.Mul(*[a**p for a, p in zip(atoms, powers)]))
    return sp.Add(*terms)


@st.composite
def identity(draw):
    u, v = draw(angle()), draw(angle())
    cu, su, cv, sv = sp.symbols("cu su cv sv")
    p = draw(polynomial([cu, su, cv, sv]))
    q = draw(polynomial([cu, su, cv]))
    rhs_polynomial = sp.expand(p + q * (cu**2 + su**2 - 1))
    left = {cu: cos(u), su: sin(u), cv: cos(v), sv: sin(v)}
    right = dict(left)
    if draw(st.booleans()):
        right.update({cu: _angle_sum(u, cos), su: _angle_sum(u, sin)})
    return p.xreplace(left), rhs_polynomial.xreplace(right)


@st.composite
def perturbation(draw):
    if draw(st.booleans()):
        return draw(nonzero) * sp.Integer(1)
    return draw(nonzero) * draw(st.sampled_from([cos, sin]))(draw(angle()))


def _witness_holds(lhs, rhs, witness):
    assert set(witness) <= {x, y}
    left, right = evaluate_at(lhs, witness), evaluate_at(rhs, witness)
    residual = left - right
    assert certainly_finite(left) and certainly_finite(right)
    if residual.is_Rational:
        assert residual != 0
    else:
        assert certainly_nonzero(residual)


@SETTINGS
@given(identity())
def test_a_true_identity_is_proved_with_a_certificate_the_checker_accepts(statement):
    lhs, rhs = statement
    verdict = prove_equal(lhs, rhs)
    assert verdict.proved, f"{lhs} = {rhs}: {verdict}"
    check_certificate(verdict.certificate)


@SETTINGS
@given(identity(), perturbation())
def test_a_perturbed_identity_is_never_proved(statement, extra):
    lhs, rhs = statement
    rhs = rhs + extra
    verdict = prove_equal(lhs, rhs)
    assert not verdict.proved, f"{lhs} = {rhs}: {verdict}"
    if verdict.refuted:
        _witness_holds(lhs, rhs, verdict.witness)
