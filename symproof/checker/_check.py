"""Re-check a proof certificate, independently of the tactics that produced it.

This module is the trusted base of a *proved* verdict (with SymPy's core --
automatic evaluation, ``expand``, ``together``, ``xreplace``, the assumption
queries, ``Poly``/``roots`` -- and :mod:`._interval`).  It imports nothing from
:mod:`symproof.prover`: it re-derives every fact it needs by the simplest
means (an ``expand`` to zero, a structural comparison), so a bug in a tactic's
search or speed-ups cannot turn into a wrong "proved" without also fooling
these few hundred lines.  See ``KINDS`` in :mod:`._certificate` for what each
kind of certificate holds.

Longer than 600 lines: the checker is the trusted base, kept in one file that holds nothing else,
so that it can be read and audited top to bottom without following imports into code it does not
trust.
"""

from __future__ import annotations

import operator
from dataclasses import replace
from functools import reduce

import sympy as sp
from sympy.matrices import MatrixBase
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.matrices.expressions import (
    Adjoint, BlockDiagMatrix, BlockMatrix, HadamardProduct, Identity, KroneckerProduct, MatAdd, MatMul, MatPow,
    MatrixExpr, MatrixSymbol, Transpose, ZeroMatrix,
)

from .._ground._errors import CertificateError
from ._certificate import Certificate
from ._grammar import DEFINEDNESS, admit, exact_integer, substitute
from ._interval import certainly_finite, certainly_nonzero

__all__ = ["check_certificate", "certificate_holds"]

#: the longest concrete range a ``finite`` sum entry expands
MAX_FINITE_TERMS = 1000
#: the index profiles a closed-form sum entry may use, and what the range must show for each
_PROFILES = ("integer", "nonnegative", "positive", "nonpositive", "negative")


def certificate_holds(certificate, *, top: bool = True) -> bool:
    """Whether the certificate re-checks; ``top=False`` checks it as one step of a larger proof
    (the side conditions are then the enclosing statement's business)."""
    try:
        (check_certificate if top else _check_any)(certificate)
    except CertificateError:
        return False
    return True


def check_certificate(certificate: Certificate) -> None:
    """Return when ``certificate`` proves ``lhs = rhs``; raise :class:`CertificateError` otherwise.

    At the top level the statement's side conditions are re-derived here (every denominator
    and pole argument): when some may vanish, the certificate must give a point where all hold."""
    original, certificate = certificate, _check_any(certificate)
    try:
        sides = [certificate.lhs, certificate.rhs]
        if certificate is not original:  # Floats made exact: the side conditions of every node as written
            sides += [admit(side, statement=True, evaluate=False) for side in (original.lhs, original.rhs)]
        _check_defined(certificate, sides)
    except CertificateError:
        raise
    except Exception as err:  # noqa: BLE001 - malformed data is a rejection, not a crash
        raise CertificateError(f"side conditions not checked ({type(err).__name__}: {err})") from None


def _check_any(certificate):
    """Check one certificate and those it holds; return it as admitted (its statement made exact)."""
    if not isinstance(certificate, Certificate):
        raise CertificateError(f"not a certificate: {type(certificate).__name__}")
    check = _CHECKS.get(certificate.kind)
    if check is None:
        raise CertificateError(f"unknown certificate kind {certificate.kind!r}")
    try:
        certificate = _admitted(certificate)
        check(certificate)
    except CertificateError:
        raise
    except Exception as err:  # noqa: BLE001 - malformed data is a rejection, not a crash
        raise CertificateError(
            f"{certificate.kind} certificate is malformed ({type(err).__name__}: {err})") from None
    return certificate


def _reject(certificate, why: str):
    raise CertificateError(f"{certificate.kind} certificate rejected: {why}",
                           lhs=_short(certificate.lhs), rhs=_short(certificate.rhs))


def _short(value) -> str:
    if isinstance(value, (MatrixBase, MatrixExpr)) and (sp.sympify(value.shape[0] * value.shape[1]) > 64) is sp.true:
        return f"a {value.shape[0]}x{value.shape[1]} {type(value).__name__}"  # printing it would take minutes
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False


def _admitted(c):
    """``c`` with its statement read in the checker's language (every Float made the exact binary
    rational it stores, before any arithmetic) and every datum checked against that language."""
    _admit_data(c.data)
    lhs, rhs = admit(c.lhs, statement=True), admit(c.rhs, statement=True)
    return c if lhs is c.lhs and rhs is c.rhs else replace(c, lhs=lhs, rhs=rhs)


def _admit_data(value):
    """Every number a certificate carries is exact: Python ints (positions, multiples) and terms
    of the language without Floats; a nested certificate is admitted when it is checked."""
    if value is None or isinstance(value, (str, Certificate)) or type(value) is int:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _admit_data(key)
            _admit_data(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _admit_data(item)
    elif isinstance(value, (sp.Basic, MatrixBase)):
        admit(value, statement=False)
    else:
        raise CertificateError(f"the datum {value!r} ({type(value).__name__}) is not exact")


# -- structural ------------------------------------------------------------------------------------


def _structural(c):
    if not _same(c.lhs, c.rhs):
        _reject(c, "the two sides are not the same expression")


# -- trig-polynomial -------------------------------------------------------------------------------

_QUOTIENTS = {
    sp.tan: lambda a: sp.sin(a) / sp.cos(a),
    sp.cot: lambda a: sp.cos(a) / sp.sin(a),
    sp.sec: lambda a: 1 / sp.cos(a),
    sp.csc: lambda a: 1 / sp.sin(a),
    # hyperbolic functions through exp (identities for every complex argument)
    sp.sinh: lambda a: (sp.exp(a) - sp.exp(-a)) / 2,
    sp.cosh: lambda a: (sp.exp(a) + sp.exp(-a)) / 2,
    sp.tanh: lambda a: (sp.exp(a) - sp.exp(-a)) / (sp.exp(a) + sp.exp(-a)),
}


def _euler(node):
    """``exp(a + I y) = exp(a) (cos y + I sin y)``."""
    kept, turns = [], []
    for term in sp.Add.make_args(sp.expand_mul(node.args[0])):
        factors = list(sp.Mul.make_args(term))
        if sp.I in factors:
            factors.remove(sp.I)
            y = sp.Mul(*factors)
            if not y.has(sp.I) and y.is_commutative:
                turns.append(y)
                continue
        kept.append(term)
    if not turns:
        return node
    y = sp.Add(*turns)
    return sp.exp(sp.Add(*kept)) * (sp.cos(y) + sp.I * sp.sin(y))


def _rewrite(expr):
    for func, quotient in _QUOTIENTS.items():
        if expr.has(func):
            expr = expr.replace(func, quotient)
    if expr.has(sp.exp) and expr.has(sp.I):
        expr = expr.replace(lambda e: isinstance(e, sp.exp) and e.args[0].has(sp.I), _euler)
    return expr


def _turn(c, s, n):
    """``(cos n u, sin n u)`` in ``c = cos u``, ``s = sin u``, by the addition formulas."""
    if n < 0:
        cn, sn = _turn(c, s, -n)
        return cn, -sn
    cn, sn = sp.S.One, sp.S.Zero
    for _ in range(n):
        cn, sn = sp.expand(cn * c - sn * s), sp.expand(sn * c + cn * s)
    return cn, sn


def _has_denominator(expr) -> bool:
    return any(p.exp.is_negative for p in expr.atoms(sp.Pow) if p.base.free_symbols)


def _reduce(expr, pairs):
    expr = sp.expand(expr)
    s_to_c = {s: cv for cv, s, _ in pairs}
    rule = {}
    for p in expr.atoms(sp.Pow):
        if p.base in s_to_c and p.exp.is_Integer and p.exp >= 2:
            rule[p] = p.base ** (p.exp % 2) * (1 - s_to_c[p.base] ** 2) ** (p.exp // 2)
    return sp.expand(expr.xreplace(rule)) if rule else expr


def _opaque(expr):
    """Sums, products and integrals as opaque symbols (the map): ``expand`` would otherwise rewrite
    their bodies under the *declared* assumptions of the bound variable, which the range may break."""
    return {b: sp.Dummy("bound") for b in expr.atoms(ExprWithLimits)}


class _NotPolynomial(Exception):
    pass


def _atoms(expr, leaves, found):
    """The generators ``expr`` needs beyond ``leaves``: everything that is not ``+``, ``*``,
    a positive integer power or a rational."""
    if expr in leaves or expr.is_Rational:
        return
    if isinstance(expr, (sp.Add, sp.Mul)):
        for arg in expr.args:
            _atoms(arg, leaves, found)
    elif isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0:
        _atoms(expr.base, leaves, found)
    elif expr.is_commutative and not (expr.free_symbols & leaves.get("_pair_variables", set())):
        found[expr] = None
    else:
        raise _NotPolynomial(expr)


def _in_ring(expr, ring, index, reduce=None):
    """``expr`` in the ring; with ``reduce``, every power is reduced square by square."""
    hit = index.get(expr)
    if hit is not None:
        return hit
    if expr.is_Rational:
        return ring(expr)
    if isinstance(expr, sp.Add):
        return sum((_in_ring(a, ring, index, reduce) for a in expr.args), ring.zero)
    if isinstance(expr, sp.Mul):
        product = ring.one
        for a in expr.args:
            product *= _in_ring(a, ring, index, reduce)
        return product
    base, n = _in_ring(expr.base, ring, index, reduce), int(expr.exp)
    if reduce is None:
        return base ** n
    result, square = ring.one, reduce(base)
    while n:
        if n & 1:
            result = reduce(result * square)
        n >>= 1
        square = reduce(square * square) if n else square
    return result


def _reducer(ring, s_c):
    """Replace ``s^2`` by ``1 - c^2`` in a ring element: the canonical form modulo the pairs."""
    positions = [(ring.gens.index(s), ring.gens.index(c)) for s, c in s_c]

    def reduce(p):
        out = ring.zero
        for monom, coeff in p.terms():
            kept, term = list(monom), ring({tuple(0 for _ in monom): coeff})
            for si, ci in positions:
                if kept[si] >= 2:
                    term *= (ring.one - ring.gens[ci] ** 2) ** (kept[si] // 2)
                    kept[si] %= 2
            out += term * ring({tuple(kept): 1})
        return out
    return reduce


def _ring_identity(difference, apps, pairs, multipliers) -> bool:
    """``difference = sum q_k (c_k^2 + s_k^2 - 1)`` in a polynomial ring over QQ whose generators
    are the pair variables and every other atom, taken as independent (an identity in independent
    generators holds whatever they stand for).  False when the statement is not polynomial: the
    expression path decides then."""
    variables = {v for cv, sv, _ in pairs for v in (cv, sv)}
    leaves = {app: None for app, _, _ in apps}
    leaves["_pair_variables"] = variables
    found: dict = {}
    try:
        _atoms(difference, leaves, found)
        for app, _, constants in apps:
            for phi in constants:
                _atoms(sp.cos(phi), {}, found)
                _atoms(sp.sin(phi), {}, found)
        for q in multipliers or ():
            _atoms(q, {"_pair_variables": set()}, found)
    except _NotPolynomial:
        return False
    for v in variables:
        found.pop(v, None)
    order = [v for cv, sv, _ in pairs for v in (cv, sv)] + list(found)
    ring, *generators = sp.polys.rings.ring(order, sp.QQ)
    index = dict(zip(order, generators))
    for app, multiples, constants in apps:
        cos_total, sin_total = ring.one, ring.zero
        for k, n in multiples:
            c, s = index[pairs[k][0]], index[pairs[k][1]]
            cn, sn = ring.one, ring.zero
            for _ in range(abs(int(n))):
                cn, sn = cn * c - sn * s, sn * c + cn * s
            if n < 0:
                sn = -sn
            cos_total, sin_total = cos_total * cn - sin_total * sn, sin_total * cn + cos_total * sn
        for phi in constants:
            cn, sn = _in_ring(sp.cos(phi), ring, index), _in_ring(sp.sin(phi), ring, index)
            cos_total, sin_total = cos_total * cn - sin_total * sn, sin_total * cn + cos_total * sn
        index[app] = cos_total if isinstance(app, sp.cos) else sin_total
    if multipliers is None:  # no combination given: reduce, each power as it is built
        reduce = _reducer(ring, [(index[sv], index[cv]) for cv, sv, _ in pairs])
        return not reduce(_in_ring(difference, ring, index, reduce))
    total = _in_ring(difference, ring, index)
    for q, (cv, sv, _) in zip(multipliers, pairs):
        total -= _in_ring(q, ring, index) * (index[cv] ** 2 + index[sv] ** 2 - 1)
    return not total


def _exact_trig_data(c):
    """The data with every position and multiple an exact integer (never truncated: ``1/2`` or
    ``0.5`` is a rejection) and one multiplier per pair."""
    data = c.data
    count = len(data["pairs"])
    apps = []
    for app, multiples, constants in data["apps"]:
        exact = []
        for position, multiple in multiples:
            position = exact_integer(position, "a pair position")
            if not 0 <= position < count:
                _reject(c, f"{app} refers to pair {position} of {count}")
            exact.append((int(position), exact_integer(multiple, "a multiple of a pair angle")))
        apps.append((app, tuple(exact), tuple(constants)))
    multipliers = data.get("multipliers")
    if multipliers is not None and len(multipliers) != count:
        _reject(c, "one multiplier per pair is needed")
    return {**data, "apps": tuple(apps)}


def _trig(c):
    data = _exact_trig_data(c)
    lhs, rhs = c.lhs, c.rhs
    difference = _rewrite(lhs - rhs)
    hide = _opaque(difference)  # the same stand-in for a sum in the statement and in the data
    if hide:
        difference = difference.xreplace(hide)
        data = {**data, "pairs": tuple((cv, sv, sp.sympify(angle).xreplace(hide)) for cv, sv, angle in data["pairs"]),
                "apps": tuple((app.xreplace(hide), multiples, tuple(sp.sympify(k).xreplace(hide) for k in constants))
                              for app, multiples, constants in data["apps"]),
                "multipliers": None if data.get("multipliers") is None
                else tuple(sp.sympify(q).xreplace(hide) for q in data["multipliers"])}
    pairs = tuple(data["pairs"])
    variables = [v for cv, sv, _ in pairs for v in (cv, sv)]
    if len(set(variables)) != len(variables) or not all(isinstance(v, sp.Symbol) for v in variables):
        _reject(c, "the pair variables are not distinct symbols")
    if set(variables) & difference.free_symbols:
        _reject(c, "a pair variable occurs in the statement")
    for app, multiples, constants in data["apps"]:
        if not isinstance(app, (sp.cos, sp.sin)):
            _reject(c, f"{app} is not an application of cos or sin")
        if app.is_commutative is not True:
            _reject(c, f"non-commutative argument inside {app}")
        angle = sp.Add(*[pairs[k][2] if n == 1 else n * pairs[k][2] for k, n in multiples], *constants)
        if sp.expand(app.args[0] - angle) != 0:
            _reject(c, f"the argument of {app} is not {angle}")
    missing = difference.atoms(sp.cos, sp.sin) - {app for app, _, _ in data["apps"]}
    if missing:
        _reject(c, f"{sorted(map(str, missing))[0]} is not substituted")
    multipliers = data.get("multipliers")
    if _ring_identity(difference, data["apps"], pairs, multipliers):
        return
    replacement = {}
    for app, multiples, constants in data["apps"]:
        cos_total, sin_total = sp.S.One, sp.S.Zero
        for k, n in multiples:
            cn, sn = _turn(pairs[k][0], pairs[k][1], int(n))
            cos_total, sin_total = cos_total * cn - sin_total * sn, sin_total * cn + cos_total * sn
        for phi in constants:
            cn, sn = sp.cos(phi), sp.sin(phi)
            cos_total, sin_total = cos_total * cn - sin_total * sn, sin_total * cn + cos_total * sn
        replacement[app] = cos_total if isinstance(app, sp.cos) else sin_total
    polynomial = difference.xreplace(replacement)
    if multipliers is not None:
        # one polynomial identity over QQ, the domain stated (every other atom, pi included, is an
        # independent generator: an identity in independent generators holds whatever they stand for)
        generators = [cv**2 + sv**2 - 1 for cv, sv, _ in pairs]
        polys, _ = sp.parallel_poly_from_expr([polynomial, *multipliers, *generators], domain=sp.QQ)
        p, qs, gs = polys[0], polys[1:1 + len(pairs)], polys[1 + len(pairs):]
        if not (p - sum((q * g for q, g in zip(qs, gs)), p.zero)).is_zero:
            _reject(c, "the polynomial is not the stated combination of c^2 + s^2 - 1")
    else:
        numerator = sp.fraction(sp.together(polynomial))[0] if _has_denominator(polynomial) else polynomial
        if _reduce(numerator, pairs) != 0:
            _reject(c, "the numerator does not reduce to zero modulo c^2 + s^2 - 1")


# -- definedness -----------------------------------------------------------------------------------

def _nowhere_zero(e) -> bool:
    if e.is_Number or isinstance(e, sp.Symbol):
        return e.is_nonzero is True
    if isinstance(e, sp.exp):
        return True
    if isinstance(e, sp.Mul):
        return all(_nowhere_zero(a) for a in e.args)
    if isinstance(e, sp.Pow):
        return _nowhere_zero(e.base)
    if isinstance(e, sp.Add):  # a sum of positive terms
        return all(_positive(a) for a in e.args)
    return False


def _positive(e) -> bool:
    if e.is_Number or isinstance(e, sp.Symbol):
        return e.is_positive is True
    if isinstance(e, sp.exp):
        return e.args[0].is_extended_real is True
    if isinstance(e, (sp.Add, sp.Mul)):
        return all(_positive(a) for a in e.args)
    return isinstance(e, sp.Pow) and _positive(e.base) and e.exp.is_real is True


def _conditions(sides):
    """What a point must satisfy for every subterm of ``sides`` to be defined: each denominator
    and pole argument non-zero, and each sum (whose terms bind its index) defined term by term."""
    found, seen, stack = {}, set(), [s if isinstance(s, MatrixBase) else sp.sympify(s) for s in sides]
    while stack:
        node = stack.pop()
        if isinstance(node, MatrixBase) and not isinstance(node, sp.Basic):
            stack.extend(node.todok().values())  # a mutable matrix: its entries
            continue
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, MatrixBase):
            stack.extend(node.todok().values())
            continue
        if isinstance(node, sp.Piecewise):  # a branch is evaluated only where it is chosen
            branches = _conditions([e for e, _ in node.args])
            if branches or node.args[-1][1] is not sp.true:
                found[(node, "defined")] = None
            stack.extend(a for _, cond in node.args for a in cond.atoms(sp.core.relational.Relational))
            continue
        if isinstance(node, sp.Sum):
            inner = _conditions([node.function])
            if inner:
                found[(node, "defined")] = None
            stack.extend(node.limits[0][1:] if len(node.limits) == 1 else node.limits)
            continue
        if isinstance(node, sp.Pow) and node.exp.is_nonnegative is not True:
            found[(node.base, "nonzero")] = None
        else:
            rule = DEFINEDNESS.get(type(node))
            if rule == "self":
                found[(node, "defined")] = None  # the evaluator knows its poles
            elif rule is not None:
                found.update(((e, "nonzero"), None) for e in rule(node.args[0]))
        stack.extend(a for a in node.args if isinstance(a, sp.Basic))
    return [(e, kind) for e, kind in found if not (kind == "nonzero" and _nowhere_zero(e))]


def _check_defined(certificate, sides):
    """Top level: a statement with side conditions is proved only with a point where they hold."""
    open_ = []
    for e, kind in _conditions(sides):
        if e.free_symbols:
            open_.append((e, kind))
        elif not (certainly_nonzero(e) if kind == "nonzero" else certainly_finite(e)):
            _reject(certificate, f"the side condition on {_short(e)} is not certified")
    if not open_:
        return
    if certificate.kind != "defined":
        _reject(certificate, "the statement has side conditions: the proof needs a point where they hold")
    if not certificate.data.get("point"):
        _reject(certificate, "the statement has side conditions: the proof needs a point where they hold")
    free = set().union(*(_free_variables(side) for side in sides))
    point = {}
    for variable, value in certificate.data["point"].items():
        if not (isinstance(variable, sp.Symbol) and variable in free):
            _reject(certificate, f"the point binds {_short(variable)}, which is not a free variable of the statement")
        value = sp.sympify(value)  # an int, or a term already admitted as exact data
        if value.free_symbols:
            _reject(certificate, f"the point gives {variable} the non-constant value {_short(value)}")
        point[variable] = value
        for key, wanted in variable.assumptions0.items():
            if key != "commutative" and getattr(value, f"is_{key}", None) is not wanted:
                _reject(certificate, f"{variable} = {value} breaks the assumption {key}={wanted}")
    for e, kind in open_:
        if not (certainly_nonzero(e, point) if kind == "nonzero" else certainly_finite(e, point)):
            _reject(certificate, f"the side condition on {_short(e)} fails at the point")


def _free_variables(side):
    if isinstance(side, MatrixBase):
        return set().union(*(_free_variables(e) for e in side))
    return side.free_symbols


def _defined(c):
    """A proof of ``lhs = rhs`` where it is defined, and a point where it is (checked at the top)."""
    proof = c.data["proof"]
    if not (_same(proof.lhs, c.lhs) and _same(proof.rhs, c.rhs)):
        _reject(c, "the proof is about another statement")
    _check_any(proof)


# -- powers of positive bases ---------------------------------------------------------------------


def _log_form(expr, c):
    """``L`` with ``expr = exp(L)``, for a positive ``expr`` built from positive bases."""
    if expr.is_Rational:
        if expr <= 0 or max(abs(expr.p), expr.q) > 10**18:
            _reject(c, f"{expr} is not a small positive rational")
        logs = sp.Add(*[e * sp.log(p) for p, e in sp.factorint(expr.p).items()])
        return logs - sp.Add(*[e * sp.log(p) for p, e in sp.factorint(expr.q).items()])
    if isinstance(expr, sp.Symbol):
        if expr.is_positive is not True:
            _reject(c, f"{expr} is not known to be positive")
        return sp.log(expr)
    if isinstance(expr, sp.Mul):
        return sp.Add(*[_log_form(a, c) for a in expr.args])
    if isinstance(expr, sp.Pow):
        if expr.exp.is_real is not True or expr.base.is_positive is not True:
            _reject(c, f"{expr}: a power needs a positive base and a real exponent")
        return expr.exp * _log_form(expr.base, c)
    if isinstance(expr, sp.exp):
        if expr.args[0].is_real is not True:
            _reject(c, f"{expr}: the exponent is not known to be real")
        return expr.args[0]
    _reject(c, f"{expr} is not a product of powers of positive bases")


def _power(c):
    forms = []
    for side in (c.lhs, c.rhs):
        coeff, rest = side.as_coeff_Mul()
        if not coeff.is_Rational or coeff == 0:
            _reject(c, f"{side} has no non-zero rational coefficient")
        forms.append((1 if coeff > 0 else -1, _log_form(abs(coeff) * rest if coeff < 0 else side, c)))
    (sign_l, log_l), (sign_r, log_r) = forms
    if sign_l != sign_r:
        _reject(c, "the two sides have opposite signs")
    difference = log_l - log_r
    atoms = {a: sp.Dummy("log") for a in difference.atoms(sp.log)}
    if sp.cancel(sp.expand(difference.xreplace(atoms))) != 0:
        _reject(c, "the logarithms of the two sides differ")


# -- sums -----------------------------------------------------------------------------------------


def _limits(c, s):
    if not isinstance(s, sp.Sum) or len(s.limits) != 1 or len(s.limits[0]) != 3:
        _reject(c, f"{s} is not a sum over one range")
    return s.limits[0]


def _profile_ok(c, index, a, b):
    if not isinstance(index, sp.Symbol):
        _reject(c, "the index is not a symbol")
    for profile in _PROFILES:
        kwargs = {"integer": True} if profile == "integer" else {"integer": True, profile: True}
        if index.assumptions0 == sp.Dummy(**kwargs).assumptions0:
            break
    else:
        _reject(c, f"the index {index} carries assumptions outside {_PROFILES}")
    needed = {
        "integer": True,
        "nonnegative": a.is_nonnegative,
        "positive": (a - 1).is_nonnegative,
        "nonpositive": b.is_nonpositive,
        "negative": (b + 1).is_nonpositive,
    }[profile]
    if needed is not True:
        _reject(c, f"the range {a}..{b} does not show the index's assumption '{profile}'")
    if a.is_integer is not True or b.is_integer is not True:
        _reject(c, f"the bounds {a}, {b} are not known integers")


def _pole_free(c, expr, index, low, high):
    for p in expr.atoms(sp.Pow):
        if not p.exp.is_negative:
            continue
        if not p.base.has(index):
            if p.base.is_nonzero is not True:
                _reject(c, f"the denominator {p.base} is not known to be non-zero")
            continue
        others = sorted(p.base.free_symbols - {index}, key=str)
        poly = sp.Poly(p.base, index, domain=sp.QQ[others] if others else sp.QQ)  # stated, not inferred
        if poly.degree() > 4:
            _reject(c, f"the denominator {p.base} has degree above 4")
        roots = sp.roots(poly)
        if sum(roots.values()) != poly.degree():
            _reject(c, f"the roots of {p.base} are not all known")
        for root in roots:
            if root.is_integer is False:
                continue
            if root.is_integer is True and ((low - root).is_positive is True or (root - high).is_positive is True):
                continue
            _reject(c, f"{p.base} may vanish at an index in {low}..{high}")


def _closed_form(c, entry):
    s = entry["sum"]
    k, a, b = _limits(c, s)
    f = s.function
    kind = entry["entry"]
    if kind == "finite":
        count = b - a + 1
        if not count.is_Integer or not 0 <= count <= MAX_FINITE_TERMS:
            _reject(c, f"the range {a}..{b} is not a short concrete range")
        terms = [substitute(f, {k: a + n}) for n in range(int(count))]
        try:  # a term that evaluated to oo, zoo or nan is outside the language: undefined
            return admit(sp.Add(*terms), statement=False)
        except CertificateError as why:
            _reject(c, f"a term of {s} is undefined ({why.message})")
    if kind == "delta":
        deltas = [d for d in f.atoms(sp.KroneckerDelta) if k in d.args and len(d.args) == 2]
        factors = sp.Mul.make_args(f)
        chosen = None
        for d in deltas:
            other = d.args[1] if d.args[0] == k else d.args[0]
            if other.has(k):
                continue
            if any(x == d or (isinstance(x, sp.Pow) and x.base == d and x.exp.is_Integer and x.exp > 0)
                   for x in factors):
                chosen = (d, other)
                break
        if chosen is None or f.has(sp.Sum):  # an inner sum could bind the delta's index anew
            _reject(c, f"{f} is not a Kronecker delta of the index times the rest")
        d, at = chosen
        if at.is_integer is not True or (at - a).is_nonnegative is not True or (b - at).is_nonnegative is not True:
            _reject(c, f"{at} is not shown to lie in {a}..{b}")
        rest = f.xreplace({d: sp.S.One})
        if any(p.exp.is_negative and p.base.has(k) for p in rest.atoms(sp.Pow)):
            _reject(c, "the factor beside the delta has a denominator in the index")
        return substitute(rest, {k: at})
    if kind in ("polynomial", "geometric", "telescoping"):
        index, anti, step = entry["index"], entry["antidifference"], entry["step"]
        _profile_ok(c, index, a, b)
        if (b - a + 1).is_nonnegative is not True:
            # Karr's convention: G(b) - G(a - 1) for all integers a, b when the step holds at every
            # integer (a plain integer index) and neither G nor f has a pole (polynomials in it)
            plain = index.assumptions0 == sp.Dummy(integer=True).assumptions0
            if not (plain and anti.is_polynomial(index) and substitute(f, {k: index}).is_polynomial(index)):
                _reject(c, f"the range {a}..{b} is not shown to have b >= a - 1")
        if s.has(index):
            _reject(c, "the index of the antidifference occurs in the sum")
        expected_lhs = anti - substitute(anti, {index: index - 1})
        if not (_same(step.lhs, expected_lhs) and _same(step.rhs, substitute(f, {k: index}))):
            _reject(c, "the step is not G(K) - G(K - 1) = f(K)")
        _check_any(step)
        _pole_free(c, anti, index, a - 1, b)
        _pole_free(c, substitute(f, {k: index}), index, a, b)
        return substitute(anti, {index: b}) - substitute(anti, {index: a - 1})
    _reject(c, f"unknown closed-form entry {kind!r}")


def _sum(c):
    mapping = {}
    for entry in c.data["sums"]:
        mapping[entry["sum"]] = _closed_form(c, entry)
    rest = c.data["rest"]
    lhs, rhs = c.lhs, c.rhs
    for outer in lhs.atoms(sp.Sum) | rhs.atoms(sp.Sum):
        if any(inner != outer and outer.has(inner) for inner in mapping):
            # the closed form holds under the declared assumptions of its free symbols, which an
            # enclosing sum's index need not keep
            _reject(c, f"a closed sum lies inside the sum {_short(outer)}")
    if not (_same(rest.lhs, lhs.xreplace(mapping)) and _same(rest.rhs, rhs.xreplace(mapping))):
        _reject(c, "the rest is not the statement with each sum replaced by its closed form")
    _check_any(rest)


def _same_range(c):
    lhs, rhs = c.lhs, c.rhs
    (k, a, b), (k2, a2, b2) = _limits(c, lhs), _limits(c, rhs)
    if not (_same(a, a2) and _same(b, b2)):
        _reject(c, "the two sums have different ranges")
    index, summands = c.data["index"], c.data["summands"]
    _profile_ok(c, index, a, b)
    if (b - a + 1).is_nonnegative is not True and index.assumptions0 != sp.Dummy(integer=True).assumptions0:
        # Karr's convention: with b < a - 1 both sums run over b+1..a-1 (negated), indices the
        # profile taken from a..b need not cover: the summands must then agree at every integer
        _reject(c, f"the range {a}..{b} is not shown to have b >= a - 1, and the index is not a plain integer")
    if lhs.has(index) or rhs.has(index):
        _reject(c, "the comparison index occurs in the sums")
    if not (_same(summands.lhs, substitute(lhs.function, {k: index}))
            and _same(summands.rhs, substitute(rhs.function, {k2: index}))):
        _reject(c, "the summands compared are not those of the two sums")
    _check_any(summands)


# -- matrices ---------------------------------------------------------------------------------------


def _is_matrix(x) -> bool:
    return isinstance(x, (MatrixBase, MatrixExpr))


def _explicit(m):
    """The explicit matrix, by one rule per matrix class (never ``doit``); others are rejected."""
    if isinstance(m, MatrixBase):
        return sp.ImmutableMatrix(m)
    kind = type(m)
    if kind is MatrixSymbol:
        return sp.ImmutableMatrix(*m.shape, lambda i, j: m[i, j])
    if kind in (ZeroMatrix, Identity):
        return sp.ImmutableMatrix(sp.zeros(*m.shape) if kind is ZeroMatrix else sp.eye(m.rows))
    if kind is BlockDiagMatrix:
        return sp.ImmutableMatrix(sp.diag(*[_explicit(b) for b in m.diag]))
    if kind is BlockMatrix:
        g = m.blocks
        return sp.ImmutableMatrix(sp.Matrix.vstack(*[sp.Matrix.hstack(*[_explicit(g[r, k]) for k in range(g.cols)])
                                                     for r in range(g.rows)]))
    if kind in (Transpose, Adjoint):
        inner = _explicit(m.arg).T
        return inner.applyfunc(sp.conjugate) if kind is Adjoint else inner
    if kind is MatPow:
        base, power = _explicit(m.args[0]), m.args[1]
        if not (isinstance(power, sp.Integer) and 0 <= power <= 64):
            raise CertificateError(f"the matrix power {power} is not a small natural number")
        return sp.ImmutableMatrix(reduce(operator.mul, [base] * int(power), sp.eye(base.rows)))
    combine = {MatMul: operator.mul, MatAdd: operator.add, HadamardProduct: lambda a, b: a.multiply_elementwise(b),
               KroneckerProduct: lambda a, b: sp.Matrix(a.rows * b.rows, a.cols * b.cols, lambda i, j:
                                                        a[i // b.rows, j // b.cols] * b[i % b.rows, j % b.cols])}
    if kind not in combine:
        raise CertificateError(f"no rule makes {kind.__name__} explicit")
    scalars = [a for a in m.args if not _is_matrix(a)]
    value = reduce(combine[kind], [_explicit(a) for a in m.args if _is_matrix(a)])
    return sp.ImmutableMatrix(sp.Mul(*scalars) * value if scalars else value)


def _entrywise(c):
    left, right = _explicit(c.lhs), _explicit(c.rhs)
    if left.shape != right.shape:
        _reject(c, f"shapes differ: {left.shape} and {right.shape}")
    given = {(int(exact_integer(i, "an entry's row")), int(exact_integer(j, "an entry's column"))): cert
             for i, j, cert in c.data["entries"]}
    for i in range(left.rows):
        for j in range(left.cols):
            a, b = left[i, j], right[i, j]
            if _same(a, b):
                continue
            cert = given.get((i, j))
            if cert is None:
                _reject(c, f"entry ({i}, {j}) differs structurally and has no certificate")
            if not (_same(cert.lhs, a) and _same(cert.rhs, b)):
                _reject(c, f"the certificate of entry ({i}, {j}) is about another statement")
            _check_any(cert)


def _blocks(m):
    """The diagonal blocks of a block-diagonal product, or ``None``.

    A block is a matrix, or a light term ``("T", block)`` (its transpose) or
    ``("*" | "+", scalars, blocks)`` (a product or sum): plain tuples rather than
    SymPy matrix expressions, whose construction costs more than the check.
    """
    if isinstance(m, BlockDiagMatrix):
        return list(m.diag)
    if isinstance(m, Transpose):
        inner = _blocks(m.arg)
        return None if inner is None else [("T", b) for b in inner]
    if isinstance(m, (MatMul, MatAdd)):
        scalars = tuple(a for a in m.args if not _is_matrix(a))
        parts = [_blocks(a) for a in m.args if _is_matrix(a)]
        if any(p is None for p in parts) or len({len(p) for p in parts}) != 1:
            return None
        for p, q in zip(parts, parts[1:]):
            for x, y in zip(p, q):
                if isinstance(m, MatMul) and _term_shape(x)[1] != _term_shape(y)[0]:
                    return None
                if isinstance(m, MatAdd) and _term_shape(x) != _term_shape(y):
                    return None
        op = "*" if isinstance(m, MatMul) else "+"
        return [(op, scalars, blocks) for blocks in zip(*parts)]
    return None


def _term_shape(term):
    if not isinstance(term, tuple):
        return tuple(term.shape)
    if term[0] == "T":
        rows, cols = _term_shape(term[1])
        return cols, rows
    shapes = [_term_shape(b) for b in term[2]]
    return (shapes[0][0], shapes[-1][1]) if term[0] == "*" else shapes[0]


def _explicit_term(term):
    if not isinstance(term, tuple):
        return _explicit(term)
    if term[0] == "T":
        return _explicit_term(term[1]).T
    factors = [_explicit_term(b) for b in term[2]]
    value = reduce(operator.mul if term[0] == "*" else operator.add, factors)
    return sp.ImmutableMatrix(sp.Mul(*term[1]) * value if term[1] else value)


def _cut(m, shapes, c):
    """The diagonal blocks of the explicit ``m``; every entry off them must be 0."""
    m = sp.ImmutableMatrix(m)
    blocks, row, col = [], 0, 0
    for rows, cols in shapes:
        blocks.append(sp.ImmutableMatrix(m[row:row + rows, col:col + cols]))
        row, col = row + rows, col + cols
    if (row, col) != tuple(m.shape):
        _reject(c, "the blocks do not tile the matrix")
    starts, position = [], (0, 0)
    for rows, cols in shapes:
        starts.append((position, (position[0] + rows, position[1] + cols)))
        position = (position[0] + rows, position[1] + cols)
    for (r, col_), value in m.todok().items():
        inside = any(r0 <= r < r1 and c0 <= col_ < c1 for (r0, c0), (r1, c1) in starts)
        if not inside and value != 0:
            _reject(c, f"entry ({r}, {col_}) lies off the diagonal blocks and is not 0")
    return blocks


def _picture(term, renaming=None, forbidden=frozenset()):
    """The preorder list of ``term``'s nodes -- ``(class, arity)`` for inner nodes, atoms
    themselves, symbols through ``renaming`` -- which determines the tree; ``None`` when a
    symbol of ``forbidden`` occurs."""
    picture, stack = [], [term]
    append, pop, extend = picture.append, stack.pop, stack.extend
    symbol, matrix = sp.Symbol, MatrixBase
    while stack:
        a = pop()
        kind = type(a)
        if kind is tuple:
            append((tuple, len(a)))
            extend(reversed(a))
        elif kind is str:
            append(a)
        elif issubclass(kind, symbol):
            if a in forbidden:
                return None
            append(renaming.get(a, a) if renaming else a)
        elif issubclass(kind, matrix):
            append((kind, a.shape))
            extend(reversed(a.flat()))
        else:
            args = a.args
            if args:
                append((kind, len(args)))
                extend(reversed(args))
            else:
                append(a)
    return picture


def _renamed(block, renaming, target, pictures) -> bool:
    """``target`` is the tree of ``block`` with each symbol renamed by ``renaming``: node by node
    the same class and arity, the same atoms, renamed symbols.  The same tree of operations on
    renamed variables is the same function of them, whatever order SymPy would sort them in.

    Checked by naming the target's symbols back (``renaming`` must be injective) and comparing
    pictures; a target that also uses an old name that is not a new one is refused, since naming
    back would confuse the two."""
    if not renaming:
        return _same(block, target)
    back = {new: old for old, new in renaming.items()}
    if len(back) != len(renaming):
        return False
    mine = pictures.get(id(block))
    if mine is None:
        mine = pictures[id(block)] = _picture(block)
    theirs = _picture(target, back, frozenset(renaming) - frozenset(back))
    return theirs is not None and theirs == mine


def _blockwise(c):
    left, right = _blocks(c.lhs), _blocks(c.rhs)
    if left is None and right is None:
        _reject(c, "neither side is block-diagonal")
    if left is None:
        left = _cut(_explicit(c.lhs), [_term_shape(b) for b in right], c)
    if right is None:
        right = _cut(_explicit(c.rhs), [_term_shape(b) for b in left], c)
    if [_term_shape(b) for b in left] != [_term_shape(b) for b in right]:
        _reject(c, "the two sides have different block shapes")
    plan, proofs = c.data["blocks"], c.data["proofs"]
    if len(plan) != len(left):
        _reject(c, "one entry per block is needed")
    pictures: dict = {}
    plan = [(int(exact_integer(rep, "a representative block")), renaming) for rep, renaming in plan]
    for k, (rep, renaming) in enumerate(plan):
        if not 0 <= rep < len(plan):
            _reject(c, f"block {k} refers to block {rep} of {len(plan)}")
        for old, new in renaming.items():
            if not (isinstance(old, sp.Symbol) and isinstance(new, sp.Symbol)
                    and old.assumptions0 == new.assumptions0):
                _reject(c, f"block {k}: {old} -> {new} is not a renaming between equal assumptions")
        if rep == k and renaming:
            _reject(c, f"block {k} is a representative and cannot be renamed")
        if not (_renamed(left[rep], renaming, left[k], pictures)
                and _renamed(right[rep], renaming, right[k], pictures)):
            _reject(c, f"block {k} is not block {rep} with its symbols renamed")
    for rep in {rep for rep, _ in plan}:
        cert = proofs.get(rep)
        if cert is None:
            _reject(c, f"the representative block {rep} has no certificate")
        if not (_same(cert.lhs, _explicit_term(left[rep])) and _same(cert.rhs, _explicit_term(right[rep]))):
            _reject(c, f"the certificate of block {rep} is about another statement")
        _check_any(cert)


_CHECKS = {
    "structural": _structural,
    "trig-polynomial": _trig,
    "power": _power,
    "sum": _sum,
    "same-range": _same_range,
    "entrywise": _entrywise,
    "blockwise": _blockwise,
    "defined": _defined,
}

#: the closed form of one table entry (raises :class:`CertificateError` when the entry does not hold);
#: the prover asks it before it offers an entry
closed_form = _closed_form
