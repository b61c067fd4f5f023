"""Judge one verdict of ``prove_equal`` with the independent evaluator (:mod:`_oracle`).

``audit(lhs, rhs, kind, timeout)`` runs the engine once and returns a list of
problems (empty when the verdict is sound):

* proved  => at sampled points where both sides are defined the enclosures
  overlap; the statement is not undefined at every sampled point; ``kind`` is
  not ``false``/``undefined``;
* refuted => the witness binds only free symbols (no bound index, no
  ``IndexedBase``), one consistent value per ``Indexed`` element, each value
  honours its symbol's assumptions, both sides evaluate at the witness with
  every subterm defined, and the enclosures are disjoint; ``kind`` is not
  ``true``/``undefined``;
* an exception => a ``SymproofError``; an ``UndefinedExpressionError`` on a
  statement the evaluator finds defined somewhere is a problem too;
* the call returns (a verdict, or the stop :class:`symproof.TimeLimitExceeded`) within
  ``timeout + SLACK`` seconds of wall time.

*unknown* is always acceptable.
"""

from __future__ import annotations

import math
import random
import time
from fractions import Fraction

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions.matexpr import MatrixElement

import _oracle as O
from symproof import SymproofError, TimeLimitExceeded, UndefinedExpressionError, prove_equal

SLACK = 3.0  # seconds past the budget a call may take (a loaded two-core machine)


def free_variables(*sides):
    """The genuine free variables: Symbols not bound by a Sum/Product and not an IndexedBase label."""
    labels = set()
    free = set()
    for side in sides:
        labels |= {base.label for base in side.atoms(sp.IndexedBase)}
        free |= {s for s in side.free_symbols if isinstance(s, sp.Symbol)}
    return free - labels


def matrix_symbols(*sides):
    return {s for side in sides for s in side.free_symbols if isinstance(s, sp.MatrixSymbol)}


def _sample(sym, rng):
    """A value honouring the symbol's assumptions (SymPy's own flags, read, not evaluated)."""
    if sym.is_zero:
        return sp.Integer(0)
    if sym.is_integer:
        lo = 1 if sym.is_positive else 0 if sym.is_nonnegative else -4
        hi = -1 if sym.is_negative else 0 if sym.is_nonpositive else 5
        value = rng.randint(lo, hi)
        if sym.is_nonzero and value == 0:
            value = 1 if hi > 0 else -1
        return sp.Integer(value)
    magnitude = sp.Rational(rng.choice([0, 1, 1, 2, 3, 5, 7, 11, 19]), rng.choice([1, 1, 2, 3, 4, 7]))
    if sym.is_positive or (sym.is_nonzero and sym.is_nonnegative):
        return magnitude if magnitude else sp.Rational(1, 3)
    if sym.is_nonnegative:
        return magnitude
    if sym.is_negative:
        return -magnitude if magnitude else sp.Rational(-1, 2)
    if sym.is_nonpositive:
        return -magnitude
    value = magnitude * rng.choice([1, -1])
    if (sym.is_nonzero or sym.is_zero is False) and value == 0:
        value = sp.Rational(1, 2)
    if sym.is_real:
        return value
    return value + sp.I * sp.Rational(rng.randint(-3, 3), rng.choice([1, 2]))


def sample_points(variables, count, seed):
    """Points: the first has every variable at its smallest allowed magnitude (to hit poles), then random."""
    rng = random.Random(seed)
    variables = sorted(variables, key=str)
    points = []
    for index in range(count):
        if index == 0:
            point = {s: (sp.Integer(1) if (s.is_positive or s.is_nonzero or s.is_zero is False) else sp.Integer(0))
                     for s in variables}
        else:
            point = {s: _sample(s, rng) for s in variables}
        element_rng = random.Random(seed * 7919 + index)

        def fresh(key, element_rng=element_rng):
            return O.Value.rational(Fraction(element_rng.randint(-9, 9), element_rng.choice([1, 2, 3])))
        points.append(O.Point(point, fresh=fresh))
    return points


def _evaluate_both(lhs, rhs, point, dps=O.DPS):
    """('defined', lv, rv) | ('undefined', why) | ('unknown', why); Unbound propagates."""
    try:
        lv = O.evaluate(lhs, point, dps)
        rv = O.evaluate(rhs, point, dps)
    except O.Undefined as err:
        return ("undefined", str(err))
    except O.Unknown as err:
        return ("unknown", str(err))
    return ("defined", lv, rv)


def _check_proof(lhs, rhs, problems, seed, points=8):
    variables = free_variables(lhs, rhs)
    undefined = defined = 0
    for point in sample_points(variables, points if variables else 1, seed):
        outcome = _evaluate_both(lhs, rhs, point)
        if outcome[0] == "undefined":
            undefined += 1
        elif outcome[0] == "defined":
            defined += 1
            try:
                apart = O.disjoint(outcome[1], outcome[2])
            except O.Unknown:
                continue
            if apart:
                problems.append(f"proved, but the sides differ at {_show(point)}")
                return
    if undefined and not defined and undefined == (points if variables else 1):
        problems.append("proved, but undefined at every sampled point")


def _show(point):
    text = ", ".join(f"{s}={v}" for s, v in sorted(point.symbols.items(), key=lambda kv: str(kv[0])))
    elements = ", ".join(f"{name}{list(idx)}" for name, idx in point.elements)
    return "{" + text + ("; elements " + elements if elements else "") + "}"


def _honours(sym, value: O.Value) -> str | None:
    """Why ``value`` breaks ``sym``'s assumptions, or None."""
    r = value.real_rational()
    if sym.is_real and not value.is_real():
        return "not real"
    if sym.is_integer and (r is None or r.denominator != 1):
        return "not an integer"
    if sym.is_zero and not value.is_exact_zero():
        return "not zero"
    if sym.is_zero is False and not value.certainly_nonzero():
        return "not certainly non-zero"
    if sym.is_even and (r is None or r.denominator != 1 or r.numerator % 2):
        return "not even"
    if sym.is_odd and (r is None or r.denominator != 1 or not r.numerator % 2):
        return "not odd"
    if sym.is_rational and r is None:
        return "not rational"
    if sym.is_noninteger and (r is None or r.denominator == 1):
        if r is not None or value.exact is None and not (value.is_real() and math.floor(value.re.a) == math.floor(value.re.b)
                                                         and value.re.a > math.floor(value.re.a)):
            return "not certainly a non-integer"
    if sym.is_prime and not (r is not None and r.denominator == 1 and sp.isprime(int(r))):
        return "not a prime"
    if sym.is_composite and not (r is not None and r.denominator == 1 and r > 1 and not sp.isprime(int(r))):
        return "not a composite number"
    if sym.is_irrational or sym.is_transcendental:
        # certain only for q + t*pi with t != 0 (pi is transcendental)
        if not (value.exact is not None and value.exact[1] and not value.exact[1].im and not value.exact[0].im):
            return "not certainly irrational"
    if sym.is_algebraic and value.exact is not None and value.exact[1]:
        return "not algebraic"
    if sym.is_imaginary and not (value.exact is not None and not value.exact[0].re and not value.exact[1].re
                                 and (value.exact[0].im or value.exact[1].im)):
        return "not certainly a non-zero imaginary number"
    sign = None
    if r is not None:
        sign = (r > 0) - (r < 0)
    elif value.is_real():
        sign = 1 if value.re.a > 0 else -1 if value.re.b < 0 else None
    needs = [("positive", lambda s: s == 1), ("negative", lambda s: s == -1), ("nonnegative", lambda s: s >= 0),
             ("nonpositive", lambda s: s <= 0), ("nonzero", lambda s: s != 0)]
    for flag, ok in needs:
        if getattr(sym, f"is_{flag}"):
            if sign is None or not ok(sign):
                return f"not certainly {flag}"
    return None


def _check_witness(lhs, rhs, witness, problems):
    variables = free_variables(lhs, rhs)
    labels = {base.label for side in (lhs, rhs) for base in side.atoms(sp.IndexedBase)}
    symbols, elements, defaults = {}, {}, {}
    for key, raw in witness.items():
        if isinstance(key, sp.MatrixSymbol):
            if key not in matrix_symbols(lhs, rhs) or not isinstance(raw, sp.MatrixBase) or raw.shape != key.shape:
                problems.append(f"witness gives the matrix symbol {key} the value {raw!r}")
                return
            try:
                for r in range(raw.rows):
                    for s in range(raw.cols):
                        element = (key, ((O.GQ(r), O.ZERO_GQ), (O.GQ(s), O.ZERO_GQ)))
                        elements[element] = O.exact_value(raw[r, s])
            except (O.Undefined, O.Unknown, O.Unbound) as err:
                problems.append(f"witness value of {key} is not a matrix of finite numbers ({err})")
                return
            continue
        try:
            value = O.exact_value(raw)
        except (O.Undefined, O.Unknown, O.Unbound) as err:
            problems.append(f"witness value {key}={raw} is not a finite number ({err})")
            return
        if isinstance(key, (sp.Indexed, AppliedUndef)):
            continue
        if isinstance(key, MatrixElement) and key.parent in matrix_symbols(lhs, rhs):
            # an element of a matrix symbol: one entry of its table, at concrete indices
            r, s = key.indices
            if not (isinstance(r, sp.Integer) and isinstance(s, sp.Integer)
                    and 0 <= r < key.parent.rows and 0 <= s < key.parent.cols):
                problems.append(f"witness binds {key}, not an element of {key.parent} at concrete indices")
                return
            element = (key.parent, ((O.GQ(int(r)), O.ZERO_GQ), (O.GQ(int(s)), O.ZERO_GQ)))
            if element in elements:
                problems.append(f"witness binds {key} twice")
            elements[element] = value
            continue
        if isinstance(key, sp.Symbol) and key in labels:
            # the label of an IndexedBase: the value of every element the witness does not list (one table)
            defaults[key] = value
            continue
        if isinstance(key, sp.IndexedBase) or not isinstance(key, sp.Symbol) or key not in variables:
            problems.append(f"witness binds {key!r}, which is not a free variable of the statement")
            continue
        why = _honours(key, value)
        if why:
            problems.append(f"witness {key}={raw} breaks the assumptions of {key} ({why})")
        symbols[key] = value
    index_point = O.Point(symbols)
    for key, raw in witness.items():
        if not isinstance(key, (sp.Indexed, AppliedUndef)):
            continue
        arguments = key.indices if isinstance(key, sp.Indexed) else key.args
        try:
            idx = tuple(O.evaluate(t, index_point).exact for t in arguments)
        except (O.Undefined, O.Unknown, O.Unbound) as err:
            problems.append(f"witness binds {key} whose index has no value ({err})")
            continue
        if any(v is None for v in idx):
            problems.append(f"witness binds {key} at a non-exact index")
            continue
        element = (key.base.label, idx) if isinstance(key, sp.Indexed) else (key.func, idx)
        value = O.exact_value(raw)
        if element in elements and not (elements[element].exact == value.exact):
            problems.append(f"witness gives the element {key} two values (inconsistent Indexed table)")
        elements[element] = value
    if problems:
        return
    def default(key):
        if key[0] in defaults:
            return defaults[key[0]]
        raise O.Unbound(f"the element {key[0]}{list(key[1])} has no value")
    point = O.Point(symbols, elements, fresh=default)
    try:
        outcome = _evaluate_both(lhs, rhs, point)
    except O.Unbound as err:
        # elements the witness leaves open (an f(0) both sides share): it must break the statement
        # whatever they are -- try several fillings
        for fill in (0, 1, -1, None):
            rng = random.Random(7)

            def filled(key, rng=rng, fill=fill):
                try:
                    return default(key)
                except O.Unbound:
                    if fill is not None:
                        return O.Value.rational(fill)
                    return O.Value.rational(Fraction(rng.randint(-9, 9), rng.choice([1, 2, 3])))
            try:
                outcome = _evaluate_both(lhs, rhs, O.Point(symbols, elements, fresh=filled))
            except O.Unbound as missing:
                problems.append(f"witness is incomplete: {missing}")
                return
            if outcome[0] != "defined" or not O.disjoint(outcome[1], outcome[2]):
                problems.append(f"witness is incomplete: {err}, and the sides do not differ for every value of it")
                return
        return
    for dps in (3 * O.DPS, 10 * O.DPS):  # more digits when undecided: large values (exp(exp(exp(pi/2)))) need them
        try:
            if outcome[0] == "defined" and O.disjoint(outcome[1], outcome[2]):
                break
        except O.Unknown:
            pass
        outcome = _evaluate_both(lhs, rhs, point, dps)
    if outcome[0] == "undefined":
        problems.append(f"refuted at a point where a subterm is undefined ({outcome[1]})")
        return
    if outcome[0] == "unknown":
        problems.append(f"refuted at a point the evaluator cannot certify ({outcome[1]})")
        return
    try:
        apart = O.disjoint(outcome[1], outcome[2])
    except O.Unknown as err:
        problems.append(f"witness sides are not comparable ({err})")
        return
    if not apart:
        problems.append("refuted, but the sides' enclosures overlap at the witness")


def _defined_somewhere(lhs, rhs, seed):
    for point in sample_points(free_variables(lhs, rhs), 6, seed):
        if _evaluate_both(lhs, rhs, point)[0] == "defined":
            return _show(point)
    return None


def audit(lhs, rhs, kind=None, timeout=2.0, seed=0):
    """Run ``prove_equal`` once and return ``(verdict or exception, elapsed, problems)``."""
    problems = []
    start = time.monotonic()
    try:
        verdict = prove_equal(lhs, rhs, timeout=timeout)
    except (SymproofError, TimeLimitExceeded) as err:  # a stop by the time limit is no verdict, and says so
        verdict = err
    except Exception as err:  # noqa: BLE001 - escaping is exactly what is being tested
        verdict = err
        problems.append(f"{type(err).__name__} escaped: {err}")
    elapsed = time.monotonic() - start
    if timeout is not None and elapsed > timeout + SLACK:
        problems.append(f"ran {elapsed:.1f} s against a budget of {timeout} s")
    if isinstance(verdict, UndefinedExpressionError) and kind in ("true", "false"):
        where = _defined_somewhere(lhs, rhs, seed)
        if where:
            problems.append(f"UndefinedExpressionError, but both sides are defined at {where}")
    if isinstance(verdict, BaseException):
        return verdict, elapsed, problems
    status = verdict.status
    if status == "proved":
        if kind in ("false", "undefined"):
            problems.append(f"proved a statement that is {kind} by construction")
        _check_proof(lhs, rhs, problems, seed)
    elif status == "refuted":
        if kind in ("true", "undefined"):
            problems.append(f"refuted a statement that is {kind} by construction (witness {verdict.witness})")
        if verdict.witness is None:
            problems.append("refuted without a witness")
        else:
            _check_witness(lhs, rhs, dict(verdict.witness), problems)
    elif status != "unknown":
        problems.append(f"unexpected status {status!r}")
    return verdict, elapsed, problems


def outcome_class(verdict) -> str:
    """'proved' | 'refuted' | 'unknown-or-undefined' (unknown, or an UndefinedExpressionError) | 'error'."""
    if isinstance(verdict, UndefinedExpressionError):
        return "unknown-or-undefined"
    if isinstance(verdict, BaseException):
        return "error"
    return {"proved": "proved", "refuted": "refuted"}.get(verdict.status, "unknown-or-undefined")
