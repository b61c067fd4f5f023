"""Forged certificates the independent checker must reject, one class of hole per group.

Each row is a certificate built by hand (or taken from the prover and altered) for a
statement that is false or undefined, with why it must be rejected.  The certificates
of the true neighbours must still be accepted: a checker that rejects everything is
not what is tested here.
"""

from dataclasses import replace

import pytest
import sympy as sp
from sympy import Abs, KroneckerDelta, Rational, Sum, cos, sin
from sympy.calculus.accumulationbounds import AccumBounds

from symproof import prove_equal
from symproof.checker import Certificate, certificate_holds, check_certificate
from symproof._ground._errors import CertificateError

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True)
m = sp.Symbol("m", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True)
plain_k = sp.Symbol("k")
c0, s0 = sp.Dummy("c0"), sp.Dummy("s0")
K_nonnegative = sp.Dummy("K", integer=True, nonnegative=True)
ONE = sin(x) ** 2 + cos(x) ** 2  # equal to 1, but not syntactically


def _trig(lhs, rhs, multiples, multipliers=None, angle=x):
    """A trig-polynomial certificate with one pair (cos, sin of ``angle``) and one application."""
    apps = tuple((app, ((0, multiple),), ()) for app, multiple in multiples)
    return Certificate("trig-polynomial", lhs, rhs,
                       {"pairs": ((c0, s0, angle),), "apps": apps, "multipliers": multipliers})


def _pythagoras(constant, multiplier):
    """``sin^2 + cos^2 + constant = 1`` claimed as ``multiplier * (c^2 + s^2 - 1)``."""
    return _trig(ONE + constant, 1, [(sin(x), 1), (cos(x), 1)], (multiplier,))


def _structural(side):
    return Certificate("structural", side, side)


def _finite_sum(s, total):
    """``s = total`` by adding the terms of the concrete range of ``s``."""
    return Certificate("sum", s, total, {"sums": ({"sum": s, "entry": "finite"},),
                                          "rest": _structural(sp.sympify(total))})


def _defined(side, point):
    return Certificate("defined", side, side, {"point": point, "proof": _structural(side)})


def _same_range_abs():
    lhs, rhs = Sum(Abs(k), (k, 0, n)), Sum(k, (k, 0, n))
    summand = Abs(K_nonnegative)  # evaluates to K: true for K >= 0 only
    return Certificate("same-range", lhs, rhs,
                       {"index": K_nonnegative, "summands": Certificate("structural", summand, K_nonnegative)})


def _floats_in_matrices(rhs_entry):
    tenth = sp.ImmutableMatrix([[0.1]])
    return Certificate("entrywise", sp.MatMul(tenth, tenth), sp.ImmutableMatrix([[rhs_entry]]), {"entries": ()})


def _renamed_everywhere(certificate, old, new):
    """The certificate with ``old`` replaced by ``new`` in the statement and in every datum."""
    def walk(value):
        if isinstance(value, Certificate):
            return replace(value, lhs=walk(value.lhs), rhs=walk(value.rhs), data=walk(value.data))
        if isinstance(value, dict):
            return {walk(key): walk(item) for key, item in value.items()}
        if isinstance(value, tuple):
            return tuple(walk(item) for item in value)
        return value.xreplace({old: new}) if isinstance(value, sp.Basic) else value
    return walk(certificate)


def _telescoping_for_any_integer():
    # proved for m >= 0, then claimed for every integer n: at n = -1 the rhs is 1 - 1/0
    verdict = prove_equal(Sum(1 / (k * (k + 1)), (k, 1, m)), 1 - 1 / (m + 1))
    assert verdict.proved
    return _renamed_everywhere(verdict.certificate, m, n)


#: (name, forged certificate of a false or undefined statement, why it must be rejected)
FORGED = [
    # 1. Karr's convention: 0..n with n = -5 sums over -4..-1, negated
    ("karr: |k| and k over 0..n", _same_range_abs,
     "at n = -5 the sums are -(4+3+2+1) and +(4+3+2+1)... negated: 10 and -10"),
    ("karr: a telescoping closed form for every integer bound", _telescoping_for_any_integer,
     "for n < 0 the sum runs over n+1..0 (negated), through the pole k = 0, and 1 - 1/(n+1) is undefined at n = -1"),
    # 2. certificate numbers: a multiple of 1/2 truncated to 0, or 3/2 to 1
    ("number: cos(x/2) = 1, multiple 1/2", lambda: _trig(cos(x / 2), 1, [(cos(x / 2), Rational(1, 2))]),
     "cos(x/2) is not 1; 1/2 is not an integer multiple"),
    ("number: cos(x/2) = 1, multiple 0.5", lambda: _trig(cos(x / 2), 1, [(cos(x / 2), 0.5)]),
     "a Python float is not an exact multiple"),
    ("number: sin(3x/2) = sin(x), multiple 3/2",
     lambda: _trig(sin(3 * x / 2), sin(x), [(sin(3 * x / 2), Rational(3, 2)), (sin(x), 1)]),
     "sin(3x/2) is not sin(x)"),
    ("number: a Float multiplier 1.5 and a float position",
     lambda: Certificate("trig-polynomial", cos(x) + 1, cos(x),
                         {"pairs": ((c0, s0, x),), "apps": ((cos(x), ((0.0, 1),), ()),), "multipliers": (1.5,)}),
     "a float where a position and a multiplier are expected; the statement is false anyway"),
    # 3. the polynomial comparison runs over QQ, never over floating point
    ("domain: + 1e-30 with a Float multiplier", lambda: _pythagoras(sp.Float("1e-30"), sp.Float(1)),
     "sin^2 + cos^2 + 1e-30 is not 1"),
    ("domain: + 1/4 with a 1-bit Float multiplier", lambda: _pythagoras(Rational(1, 4), sp.Float(1, precision=1)),
     "sin^2 + cos^2 + 1/4 is not 1"),
    # 4. Floats in a statement become exact binary rationals before any product
    ("floats: 0.0/0 = 0.0/0", lambda: _structural(sp.Mul(sp.Float(0.0), sp.Pow(0, -1, evaluate=False), evaluate=False)),
     "1/0 is undefined, whatever it is multiplied by"),
    ("floats: 0.0/(sin^2 + cos^2 - 1) = 0",
     lambda: Certificate("structural", sp.Mul(sp.Float(0.0), 1 / (ONE - 1), evaluate=False), sp.S.Zero),
     "the denominator vanishes everywhere; making 0.0 exact must not fold the quotient to 0"),
    ("floats: [0.1]*[0.1] = [the rounded double]",
     lambda: _floats_in_matrices(sp.Float(0.1) * sp.Float(0.1)),
     "the exact product of the two stored binary values is not the double nearest to it"),
    # 5. substitution never rewrites a bound variable
    ("binder: Sum(Subs(k^2, k, 3), (k, 1, 2)) = 1 + 4",
     # the terms as a substitution that rewrites the bound k of Subs makes them
     lambda: _finite_sum(Sum(sp.Subs(plain_k ** 2, plain_k, 3), (plain_k, 1, 2)),
                         sp.Subs(1, 1, 3) + sp.Subs(4, 2, 3)),
     "each term is 3^2: the sum is 18, not 5"),
    # 6. the checker's own term language: no non-finite atom, no unlisted node
    ("language: nan = nan", lambda: _structural(sp.nan), "nan is not a number"),
    ("language: zoo = zoo", lambda: _structural(sp.zoo), "complex infinity is not a number"),
    ("language: oo = oo", lambda: _structural(sp.oo), "oo is not a number"),
    ("language: -oo = -oo", lambda: _structural(-sp.oo), "-oo is not a number"),
    ("language: AccumBounds", lambda: _structural(AccumBounds(-1, 1)), "an interval is not a number"),
    ("language: an infinite symbol", lambda: _structural(sp.Symbol("z", finite=False) - 1),
     "z may be infinite"),
    ("language: O(x)", lambda: _structural(sp.O(x)), "an order term is not a number"),
    ("language: an unlisted function", lambda: _structural(sp.zeta(x)), "zeta is not in the grammar"),
    ("language: zoo*(sin^2 + cos^2 - 1) = 0",
     lambda: _trig(sp.zoo * (ONE - 1), 0, [(sin(x), 1), (cos(x), 1)], None),
     "zoo times 0 is undefined"),
    # 7. every admitted function with poles is defined only away from them
    ("definedness: coth(sin^2 + cos^2 - 1)", lambda: _structural(sp.coth(ONE - 1)), "coth(0) is a pole"),
    ("definedness: factorial(-m)", lambda: _structural(sp.factorial(-m - 1)), "factorial of a negative integer"),
    ("definedness: exp(-Sum(acoth(k), (k, 1, 1))) = 0",
     lambda: Certificate("sum", sp.exp(-Sum(sp.acoth(plain_k), (plain_k, 1, 1))), 0,
                         {"sums": ({"sum": Sum(sp.acoth(plain_k), (plain_k, 1, 1)), "entry": "finite"},),
                          "rest": _structural(sp.S.Zero)}),
     "acoth(1) is infinite"),
    ("definedness: log(sin^2 + cos^2 - 1)", lambda: _defined(sp.log(ONE - 1), {x: 1}), "log(0)"),
    ("definedness: tan(pi/2 + sin^2 + cos^2 - 1)", lambda: _defined(sp.tan(sp.pi / 2 + ONE - 1), {x: 1}),
     "tan(pi/2)"),
    ("definedness: gamma(sin^2 + cos^2 - 1)", lambda: _defined(sp.gamma(ONE - 1), {x: 1}), "gamma(0)"),
    # 8. a point binds free variables only, with values their assumptions allow
    ("point: binds a whole denominator", lambda: _defined(1 / (ONE - 1), {ONE - 1: 1, x: 0}),
     "1/(sin^2 + cos^2 - 1) is undefined everywhere"),
    ("point: binds a literal", lambda: _defined(1 / (2 * ONE - 2), {sp.Integer(-2): 2, x: 0}),
     "1/(2 sin^2 + 2 cos^2 - 2) is undefined everywhere"),
    ("point: binds a bound variable", lambda: _defined(Sum(1 / plain_k, (plain_k, 0, n ** 2)), {n: 1, plain_k: 1}),
     "the term k = 0 is 1/0 whatever n is"),
    ("point: a value its variable's assumptions forbid", lambda: _defined(1 / x, {x: sp.I}),
     "x is real"),
    ("point: a Float value", lambda: _defined(1 / x, {x: sp.Float(0.5)}), "points are exact"),
    ("point: a Python float value", lambda: _defined(1 / x, {x: 0.5}), "points are exact"),
]


@pytest.mark.parametrize("name, build, why", FORGED, ids=[row[0] for row in FORGED])
def test_forged_certificate_is_rejected(name, build, why):
    certificate = build()
    assert not certificate_holds(certificate), f"{name} accepted although {why}"
    with pytest.raises(CertificateError):
        check_certificate(certificate)


#: true neighbours of the forged rows: their certificates must keep being accepted
GENUINE = [
    ("floats: [0.1]*[0.1] = [the exact product]",
     lambda: _floats_in_matrices(Rational(sp.Float(0.1)) ** 2), "the exact product of the stored values"),
    ("binder: Sum(Subs(k^2, k, 3) ...) = 18 is not forged by its closed form",
     lambda: _finite_sum(Sum(plain_k ** 2, (plain_k, 1, 2)), 5), "1 + 4"),
    ("number: cos(2x) = 2cos(x)^2 - 1, multiple 2",
     lambda: _trig(cos(2 * x), 2 * cos(x) ** 2 - 1, [(cos(2 * x), sp.Integer(2)), (cos(x), 1)], (sp.Integer(-1),)),
     "the double-angle formula"),
    ("point: 1/x at x = 1", lambda: _defined(1 / x, {x: 1}), "defined at 1"),
    ("delta sum", lambda: Certificate("sum", Sum(KroneckerDelta(k, 2), (k, 0, m + 2)), 1, {
        "sums": ({"sum": Sum(KroneckerDelta(k, 2), (k, 0, m + 2)), "entry": "delta"},),
        "rest": _structural(sp.S.One)}), "2 lies in 0..m+2"),
]


@pytest.mark.parametrize("name, build, why", GENUINE, ids=[row[0] for row in GENUINE])
def test_genuine_certificate_is_accepted(name, build, why):
    check_certificate(build())


#: statements the prover proved although they are false or undefined
PROVER_HOLES = [
    ("karr: |k| and k over 0..n", Sum(Abs(k), (k, 0, n)), Sum(k, (k, 0, n)), "false at n = -5"),
    ("karr: |k - 3| and k - 3 over 3..n", Sum(Abs(k - 3), (k, 3, n)), Sum(k - 3, (k, 3, n)), "false at n = -2"),
]


@pytest.mark.parametrize("name, lhs, rhs, why", PROVER_HOLES, ids=[row[0] for row in PROVER_HOLES])
def test_prover_does_not_prove(name, lhs, rhs, why):
    verdict = prove_equal(lhs, rhs)
    assert not verdict.proved, f"{name} proved although {why}"


def test_karr_same_range_holds_with_a_plain_index():
    # summands equal at every integer: the sums are equal under Karr's convention too
    lhs, rhs = Sum(sin(k * x) ** 2, (k, 0, n)), Sum(1 - cos(k * x) ** 2, (k, 0, n))
    verdict = prove_equal(lhs, rhs)
    assert verdict.proved, str(verdict)
    check_certificate(verdict.certificate)


def test_nonnegative_range_keeps_its_profile():
    lhs, rhs = Sum(Abs(k), (k, 0, m)), Sum(k, (k, 0, m))
    verdict = prove_equal(lhs, rhs)
    assert verdict.proved, str(verdict)
    check_certificate(verdict.certificate)


# -- the checker's substitution never rewrites a bound variable ------------------------------------

from symproof.checker._grammar import admit, substitute  # noqa: E402 - the rows above need only the public API

j = sp.Symbol("j", integer=True)


def _value_at(expr, **values):
    """Sum out concrete ranges by hand (term by term, no doit): the value of a closed expression."""
    expr = expr.xreplace({sp.Symbol(name, **assumptions): v for name, (v, assumptions) in values.items()})
    sums = sorted(expr.atoms(Sum), key=lambda s: -len(str(s)))
    for s in sums:
        (index, a, b), = s.limits
        expr = expr.xreplace({s: sp.Add(*[s.function.xreplace({index: t}) for t in range(int(a), int(b) + 1)])})
    return expr


SUBSTITUTIONS = [
    # (expression, mapping, what the result must equal once summed out, why)
    (Sum(k * j, (k, 1, 3)), {j: k}, lambda r: _value_at(r.xreplace({k: 2})) == 12,
     "j -> k must not be captured by the bound k: sum_{k'=1}^{3} k' * k at k = 2 is 12"),
    (Sum(k, (k, 1, j)), {k: 5}, lambda r: r == Sum(k, (k, 1, j)), "the bound k is not free: nothing to replace"),
    (j + Sum(k, (k, 1, j)), {j: 3}, lambda r: r == 3 + Sum(k, (k, 1, 3)), "free j replaced in the bound too"),
]


@pytest.mark.parametrize("expr, mapping, holds, why", SUBSTITUTIONS, ids=[row[3][:40] for row in SUBSTITUTIONS])
def test_substitution_is_binder_safe(expr, mapping, holds, why):
    assert holds(substitute(expr, mapping)), why


def test_substitution_refuses_binders_it_does_not_know():
    with pytest.raises(CertificateError):
        substitute(sp.Subs(plain_k ** 2 + x, plain_k, 3), {x: 1})


@pytest.mark.parametrize("term", [sp.nan, sp.zoo, sp.oo, -sp.oo, AccumBounds(-1, 1), sp.O(x), sp.zeta(x),
                                  sp.Subs(x, x, 1), sp.Symbol("z", finite=False), sp.Symbol("r", extended_real=True),
                                  sp.EulerGamma, sp.coth(x), sp.factorial(n)],
                         ids=str)
def test_the_language_refuses(term):
    with pytest.raises(CertificateError):
        admit(term, statement=True)


def test_floats_become_exact_in_statements_and_are_refused_in_data():
    assert admit(sp.Float(0.1) * x, statement=True) == Rational(sp.Float(0.1)) * x
    with pytest.raises(CertificateError):
        admit(sp.Float(0.1) * x, statement=False)


_t = sp.Symbol("t", integer=True, nonnegative=True)


@pytest.mark.parametrize("term", [
    sp.Piecewise((_t, _t < 512), (_t // 8 + 448, True)),              # Self-Extend's window: a symbol in a relation
    sp.Piecewise((1, sp.And(_t >= 1, sp.Not(sp.Eq(_t, 3)))), (0, True)),
], ids=str)
def test_the_language_admits_relations_over_symbols(term):
    # a Symbol is a Boolean to SymPy as well as a term: a relation's sides must be read as terms
    assert admit(term, statement=True) == term
