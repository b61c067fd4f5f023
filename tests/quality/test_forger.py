"""A forger of our own: valid certificates, mutated, must never certify a false or undefined statement.

Valid certificates come from chapter claims (run through the prover) and from true
statements proved here.  Each is mutated the way a forger would -- numbers made
non-integer or Float, points that bind what is not a free variable, binders
swapped, conditions dropped, non-finite atoms, unlisted functions, ranges reversed,
a side perturbed -- most of them *consistently* (the same replacement in the
statement and in every datum, the hard case).  Whenever the checker accepts a
mutated certificate, its statement is judged by the independent interval evaluator
of :mod:`_oracle` (via :mod:`_oracle_audit`): it must not differ at a sampled
point, must be defined somewhere, and -- unless the certificate gives a point --
defined wherever it is evaluated.

The default run uses the ``forger`` profile (about 30 s); ``-m forger_long`` runs
the long one (set ``SYMPROOF_FORGER_EXAMPLES`` to choose its size).
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import KroneckerDelta, Rational, Sum, cos, exp, sin, tan
from sympy.calculus.accumulationbounds import AccumBounds

import _oracle as O
from _oracle_audit import _check_proof, _evaluate_both, free_variables, sample_points
from _oracle_statements import true_scalar
from symproof import TimeLimitExceeded, prove_equal, rotation
from symproof.checker import Certificate, certificate_holds
PROVED = "proved"  # a part's status
from symproof.claims._runner import load_claims, run_claim, select_claims

settings.register_profile("forger", max_examples=150, deadline=None, database=None, derandomize=True,
                          suppress_health_check=list(HealthCheck))
settings.register_profile("forger-long", max_examples=int(os.environ.get("SYMPROOF_FORGER_EXAMPLES", "2000")),
                          deadline=None, database=None, suppress_health_check=list(HealthCheck))
FORGER = settings.get_profile("forger")
LONG = settings.get_profile("forger-long")

x, y = sp.symbols("x y", real=True)
p = sp.Symbol("p", positive=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
j = sp.Symbol("j", integer=True)
k = sp.Symbol("k", integer=True)

#: chapter claims with small certificates (scalar statements, sums, a few matrices)
CLAIMS = ("sin.angle_sum", "sin.inner_product", "sin.frequencies_decrease", "sin.shift_matrix", "rope.compose",
          "rope.score_expansion", "rope.shift_invariance", "grad.frequency", "abs.scale_statistics",
          "perm.orthogonal", "rope.frequency_denominator", "scheme.relative_bias")
#: true statements of every certificate kind
TRUE = [
    (cos(x) ** 4 - sin(x) ** 4, cos(2 * x)),
    (sin(x + y), sin(x) * cos(y) + cos(x) * sin(y)),
    (sin(x) ** 2 / (1 - cos(x) ** 2), 1),
    (tan(x), sin(x) / cos(x)),
    (1 / x + 1 / y, (x + y) / (x * y)),
    (exp(sp.I * x) * exp(-sp.I * y), cos(x - y) + sp.I * sin(x - y)),
    ((p ** 3) ** Rational(1, 3), p),
    (Sum(k, (k, 0, n)), n * (n + 1) / 2),
    (Sum(k ** 2, (k, 1, j)), j * (j + 1) * (2 * j + 1) / 6),
    (Sum(2 ** k, (k, 0, n)), 2 ** (n + 1) - 1),
    (Sum(KroneckerDelta(k, 2), (k, 0, n + 2)), 1),
    (Sum(sp.Abs(k), (k, 0, n)), Sum(k, (k, 0, n))),
    (Sum(sin(k * x) ** 2, (k, 0, j)), Sum(1 - cos(k * x) ** 2, (k, 0, j))),
    (Sum(1 / (k * (k + 1)), (k, 1, n + 1)), 1 - 1 / (n + 2)),
    (Sum(k ** 3, (k, 1, 3)), 36),
    (rotation(x).T * rotation(y), rotation(y - x)),
    (sp.ImmutableMatrix([[sp.Float(0.5), x]]) * 2, sp.ImmutableMatrix([[1, 2 * x]])),
]


def _proved_certificates(pairs):
    out = []
    for lhs, rhs in pairs:
        verdict = prove_equal(lhs, rhs)
        if verdict.proved and verdict.certificate is not None:
            out.append(verdict.certificate)
    return out


@functools.lru_cache(maxsize=None)
def pool():
    """The valid certificates the forger starts from (built once per session)."""
    certificates = _proved_certificates(TRUE)
    assert len(certificates) >= len(TRUE) - 2, "the forger needs valid certificates to start from"
    for claim in select_claims(load_claims(), CLAIMS):
        for part in run_claim(claim).proof.parts:
            certificate = getattr(part.verdict, "certificate", None)
            if part.kind == "equal" and part.status == PROVED and certificate is not None \
                    and certificate.size() <= 60 and len(str(certificate.lhs)) + len(str(certificate.rhs)) < 600:
                certificates.append(certificate)
    return tuple(certificates)


# -- walking a certificate -------------------------------------------------------------------------


def _map(value, fn):
    """``value`` with ``fn`` applied to every SymPy term, in the statement and every datum, at every depth."""
    if isinstance(value, Certificate):
        return replace(value, lhs=_map(value.lhs, fn), rhs=_map(value.rhs, fn), data=_map(value.data, fn))
    if isinstance(value, dict):
        return {_map(key, fn): _map(item, fn) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_map(item, fn) for item in value)
    if isinstance(value, (sp.Basic, sp.MatrixBase)):
        return fn(value)
    return value


def _terms(value, found):
    if isinstance(value, Certificate):
        for side in (value.lhs, value.rhs):
            _terms(side, found)
        _terms(value.data, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _terms(key, found)
            _terms(item, found)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _terms(item, found)
    elif isinstance(value, sp.MatrixBase):
        for entry in value:
            _terms(entry, found)
    elif isinstance(value, sp.Basic):
        for node in sp.preorder_traversal(value):
            found.setdefault(node, None)
    return found


def _replace_everywhere(certificate, old, new):
    return _map(certificate, lambda term: term.xreplace({old: new}))


def _data_integers(value, path=()):
    """Paths to every Python int or SymPy Integer in the data (positions, multiples)."""
    if isinstance(value, Certificate):
        yield from _data_integers(value.data, path + ("data",))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _data_integers(item, path + (key,))
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            yield from _data_integers(item, path + (index,))
    elif (type(value) is int or isinstance(value, sp.Integer)) and not isinstance(value, bool):
        yield path


def _set(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, Certificate):
        return replace(value, data=_set(value.data, rest, new))
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    items = list(value)
    items[head] = _set(items[head], rest, new)
    return type(value)(items)


def _get(value, path):
    for head in path:
        value = value.data if isinstance(value, Certificate) and head == "data" else value[head]
    return value


# -- mutations -------------------------------------------------------------------------------------

NOT_INTEGERS = (lambda v: v + Rational(1, 2), lambda v: sp.Float(v), lambda v: float(v) + 0.5,
                lambda v: Rational(int(v), 2), lambda v: sp.Float(int(v) + 1, 1))
NON_FINITE = (lambda t: sp.zoo * t, lambda t: t + sp.oo, lambda t: sp.nan, lambda t: t - sp.oo,
              lambda t: t * AccumBounds(-1, 1), lambda t: t + sp.Symbol("z", finite=False),
              lambda t: t + sp.O(x), lambda t: sp.zoo * (sin(x) ** 2 + cos(x) ** 2 - 1) + t,
              # an undefined quotient behind a Float zero, which evaluation would fold away
              lambda t: sp.Add(t, sp.Mul(sp.Float(0.0), sp.Pow(sin(x) ** 2 + cos(x) ** 2 - 1, -1), evaluate=False),
                               evaluate=False))
UNLISTED = (sp.coth, sp.acoth, sp.zeta, sp.loggamma, sp.acot, sp.csch,
            lambda t: sp.Subs(t, sp.Symbol("u"), 1), lambda t: sp.Integral(t, (x, 0, 1)))


def number_not_integer(draw, c):
    paths = list(_data_integers(c))
    if not paths:
        return number_inexact(draw, c)
    path = draw(st.sampled_from(paths))
    return _set(c, path, draw(st.sampled_from(NOT_INTEGERS))(_get(c, path)))


def number_inexact(draw, c):
    numbers = [t for t in _terms(c, {}) if isinstance(t, sp.Rational)]
    if not numbers:
        return None
    old = draw(st.sampled_from(numbers))
    new = draw(st.sampled_from([sp.Float(old) + sp.Float(1e-30), old + Rational(1, 2), sp.Float(old, 1),
                                sp.Float(old) * (1 + sp.Float(2) ** -60)]))
    return _replace_everywhere(c, old, new)


def point_binds_non_variable(draw, c):
    if c.kind != "defined":
        return None
    terms = [t for t in _terms(replace(c, data={}), {}) if not isinstance(t, sp.Symbol) or t not in c.lhs.free_symbols]
    bound = [v for s in _terms(c, {}) if isinstance(s, sp.Sum) for v in s.variables]
    key = draw(st.sampled_from(terms + bound + [sp.Integer(-2), sp.Integer(1)]))
    value = draw(st.sampled_from([sp.Integer(1), sp.Integer(2), Rational(1, 3), sp.Integer(-2)]))
    return replace(c, data={**c.data, "point": {**(c.data.get("point") or {}), key: value}})


def point_breaks_assumptions(draw, c):
    if c.kind != "defined" or not c.data.get("point"):
        return None
    variable = draw(st.sampled_from(sorted(c.data["point"], key=str)))
    value = draw(st.sampled_from([sp.I, Rational(-1, 2), sp.Float(0.5), 0.5, sp.Integer(0), sp.pi]))
    return replace(c, data={**c.data, "point": {**c.data["point"], variable: value}})


def drop_condition(draw, c):
    if c.kind == "defined":
        return draw(st.sampled_from([c.data["proof"], replace(c, data={**c.data, "point": {}}),
                                     replace(c, data={**c.data, "point": None})]))
    return None


def _sums(c):
    return sorted((t for t in _terms(c, {}) if isinstance(t, sp.Sum)), key=sp.default_sort_key)


def binder_swapped(draw, c):
    sums = _sums(c)
    if not sums:
        return None
    s = draw(st.sampled_from(sums))
    (index, a, b), = s.limits
    others = sorted(free_variables(c.lhs, c.rhs) - {index}, key=str) + [sp.Symbol("k2", integer=True)]
    other = draw(st.sampled_from(others))
    new = draw(st.sampled_from([Sum(s.function, (other, a, b)), Sum(s.function.xreplace({index: other}), (index, a, b)),
                                Sum(s.function.xreplace({index: other, other: index}), (index, a, b))]))
    return _replace_everywhere(c, s, new)


def range_reversed(draw, c):
    sums = _sums(c)
    if not sums:
        return None
    s = draw(st.sampled_from(sums))
    (index, a, b), = s.limits
    new_a, new_b = draw(st.sampled_from([(b, a), (a, b - 7), (a + 3, b), (b + 1, a - 1), (a, -b)]))
    return _replace_everywhere(c, s, Sum(s.function, (index, new_a, new_b)))


def _subterm(draw, c):
    terms = [t for t in _terms(replace(c, data={}), {}) if isinstance(t, sp.Expr) and not t.is_Number]
    return draw(st.sampled_from(terms)) if terms else None


def non_finite(draw, c):
    t = _subterm(draw, c)
    if t is None:
        return None
    return _replace_everywhere(c, t, draw(st.sampled_from(NON_FINITE))(t))


def unlisted_function(draw, c):
    t = _subterm(draw, c)
    if t is None:
        return None
    return _replace_everywhere(c, t, draw(st.sampled_from(UNLISTED))(t))


def side_perturbed(draw, c):
    delta = draw(st.sampled_from([sp.Integer(1), Rational(1, 2**40), sp.Float(1e-30), sp.pi, x ** 2 + 1]))
    if isinstance(c.rhs, (sp.MatrixBase, sp.MatrixExpr)):
        return None
    return replace(c, rhs=sp.Add(c.rhs, delta))


MUTATIONS = (number_not_integer, number_inexact, point_binds_non_variable, point_breaks_assumptions, drop_condition,
             binder_swapped, range_reversed, non_finite, unlisted_function, side_perturbed)


# -- the judge -------------------------------------------------------------------------------------


def _statement_problems(c, seed):
    """Why the accepted certificate ``c`` certifies a false or undefined statement (empty: it does not)."""
    lhs, rhs = c.lhs, c.rhs
    problems = []
    try:
        _check_proof(lhs, rhs, problems, seed)
        if c.kind != "defined":  # no point given: the checker found no side condition, so defined everywhere
            for point in sample_points(free_variables(lhs, rhs), 4, seed):
                if _evaluate_both(lhs, rhs, point)[0] == "undefined":
                    problems.append("accepted without a point, but undefined at a sampled point")
                    break
        elif c.data.get("point"):
            point = O.Point({v: w for v, w in c.data["point"].items()})
            if _evaluate_both(lhs, rhs, point)[0] == "undefined":
                problems.append(f"accepted with the point {c.data['point']}, where it is undefined")
    except (O.Unbound, O.Unknown):
        pass  # the evaluator cannot judge this statement: nothing is claimed about it
    return problems


def _forge(data, certificate):
    for _ in range(8):
        mutation = data.draw(st.sampled_from(MUTATIONS), label="mutation")
        try:
            forged = mutation(data.draw, certificate)
        except (ValueError, TypeError, AttributeError, NotImplementedError):
            continue  # SymPy refuses to build the mutated term (a bound index made zoo*k): no forgery
        if forged is not None:
            return mutation.__name__, forged
    return None, None


def _judge(data, certificate):
    name, forged = _forge(data, certificate)
    if forged is None:
        return
    if certificate_holds(forged):
        problems = _statement_problems(forged, data.draw(st.integers(0, 10**6), label="point seed"))
        assert not problems, f"{name}: the checker accepted {forged.lhs} = {forged.rhs} ({forged.kind}): {problems}"


def _from_pool(data):
    certificates = pool()
    return certificates[data.draw(st.integers(0, len(certificates) - 1), label="certificate")]


@FORGER
@given(st.data())
def test_mutated_certificates_never_certify_false_or_undefined_statements(data):
    _judge(data, _from_pool(data))


@settings(FORGER, max_examples=40)
@given(st.data(), true_scalar())
def test_mutated_certificates_of_random_true_statements(data, statement):
    try:
        verdict = prove_equal(statement.lhs, statement.rhs, timeout=2.0)
    except TimeLimitExceeded:  # stopped by the time limit: no verdict, no certificate to mutate
        return
    if verdict.proved and verdict.certificate is not None:
        _judge(data, verdict.certificate)


@pytest.mark.forger_long
@LONG
@given(data=st.data())
def test_mutated_certificates_long_run(request, data):
    if "forger_long" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the long forger run: select it with -m forger_long")
    _judge(data, _from_pool(data))


def test_the_pool_holds_every_kind():
    kinds = {c.kind for c in pool()}
    assert {"trig-polynomial", "sum", "same-range", "defined", "entrywise", "structural"} <= kinds, kinds


def test_the_judge_can_fail():
    # a false statement passed to the judge is found false: the forger's assertion can fire
    assert _statement_problems(Certificate("structural", cos(x), cos(x) + 1), 0)
    assert _statement_problems(Certificate("defined", 1 / x, 1 / x, {"point": {x: 0}}), 0)
    assert _statement_problems(Certificate("structural", sp.log(sin(x) ** 2 + cos(x) ** 2 - 1), sp.S.Zero), 0)
