"""Tactic ``summand-first``: close sums only through a small table of proved closed forms.

``Sum.doit`` is never trusted: SymPy's closed forms can be wrong at boundary
values of the bound (alternating binomial sums at ``n = 0``), and they hold
under the index's *declared* assumptions, which the range may contradict.
Instead each sum ``Sum(f, (k, a, b))`` is closed by one entry of the table:

``finite``
    a concrete range of at most ``MAX_FINITE_TERMS`` terms: the terms, added;
``delta``
    ``f = delta(k, c)^p g(k)`` with ``a <= c <= b`` shown by the assumptions: ``g(c)``;
``polynomial`` / ``geometric`` / ``telescoping``
    an antidifference ``G`` with ``G(K) - G(K - 1) = f(K)`` *proved* (a
    certificate of its own) for a fresh integer ``K`` whose assumptions follow
    from the range (not from ``k``'s declaration), ``b >= a - 1`` shown, and no
    pole of ``G`` or ``f`` in the range: then ``sum = G(b) - G(a - 1)``.
    ``G`` is proposed by Faulhaber (``polynomial``: ``f`` polynomial in ``k``),
    ``c r^(k+1) / (r - 1)`` (``geometric``: ``f = c r^k`` with ``r - 1`` shown
    non-zero), or Gosper's algorithm (``telescoping``: ``f`` rational in ``k``,
    only when the proposal is itself rational); a proposal is only a guess, the
    proof of the difference is what counts.

Anything else is *unknown*: "summand outside the closed-form table".
"""

from __future__ import annotations

import sympy as sp
from sympy.concrete.gosper import gosper_sum

from .._ground._errors import CertificateError
from ..checker._check import closed_form as _closed_form
from ..checker._certificate import Certificate

__all__ = ["OutsideTable", "range_index", "close_sum", "MAX_FINITE_TERMS"]

MAX_FINITE_TERMS = 1000


class OutsideTable(Exception):
    """The sum is outside the closed-form table; the message says why."""


def range_index(k, a, b):
    """A fresh integer index whose assumptions are exactly what the range ``a..b`` shows."""
    if a.is_integer is not True or b.is_integer is not True:
        raise OutsideTable(f"the bounds {a}, {b} of the sum over {k} are not known integers")
    kwargs = {"integer": True}
    if (a - 1).is_nonnegative:
        kwargs["positive"] = True
    elif a.is_nonnegative:
        kwargs["nonnegative"] = True
    elif (b + 1).is_nonpositive:
        kwargs["negative"] = True
    elif b.is_nonpositive:
        kwargs["nonpositive"] = True
    return sp.Dummy(str(k), **kwargs)


def _limits(s):
    if len(s.limits) != 1 or len(s.limits[0]) != 3:
        raise OutsideTable(f"{s} sums over more than one range")
    return s.limits[0]


def _delta_entry(s, k, a, b):
    entry = {"sum": s, "entry": "delta"}
    try:
        _closed_form(Certificate("sum", s, s), entry)
    except CertificateError as err:
        raise OutsideTable(f"Kronecker-delta sum not closed: {err.message}") from None
    return entry


def _proposal(f, index, a):
    """``(entry name, G)`` for the summand ``f`` in ``index``, or raise :class:`OutsideTable`."""
    if not f.has(index):
        return "polynomial", f * (index + 1)
    opaque = [a for a in f.atoms(sp.Indexed, sp.Function, sp.Sum, sp.Product, sp.Integral)
              if a.has(index) and not isinstance(a, (sp.exp, sp.sin, sp.cos))]
    if opaque:
        raise OutsideTable(f"summand {f} outside the closed-form table ({opaque[0]} depends on the index)")
    if f.is_polynomial(index):
        # Faulhaber by interpolation: G(K) = f(0) + ... + f(K) is a polynomial of degree d + 1,
        # fixed by its values at K = 0..d+1 (exact sums of exact values)
        degree = sp.degree(f, index)
        if degree > 40:
            raise OutsideTable(f"summand {f} of degree {degree} (at most 40)")
        points, total = [], sp.S.Zero
        for K in range(int(degree) + 2):
            total += f.xreplace({index: K})
            points.append((K, total))
        return "polynomial", sp.expand(sp.interpolate(points, index))
    coeff, dependent = f.as_independent(index, as_Add=False)
    ratio = None
    if isinstance(dependent, sp.Pow) and not dependent.base.has(index):
        exponent = dependent.exp
        if exponent.is_polynomial(index) and sp.degree(exponent, index) == 1:
            ratio = dependent.base ** sp.diff(exponent, index)
    elif isinstance(dependent, sp.exp):
        exponent = dependent.args[0]
        if exponent.is_polynomial(index) and sp.degree(exponent, index) == 1:
            ratio = sp.exp(sp.diff(exponent, index))
    if ratio is not None:
        if (ratio - 1).is_nonzero is not True:
            raise OutsideTable(f"geometric summand {f}: the ratio {ratio} is not shown to differ from 1")
        return "geometric", coeff * dependent * ratio / (ratio - 1)
    if f.is_rational_function(index):
        j = sp.Dummy("j", integer=True)
        proposal = gosper_sum(f.xreplace({index: j}), (j, a, index))  # only a guess: the step is proved
        if proposal is not None and proposal.is_rational_function(index) and not proposal.has(sp.Sum, sp.Piecewise):
            return "telescoping", proposal
        raise OutsideTable(f"summand {f} outside the closed-form table (no rational antidifference)")
    raise OutsideTable(f"summand {f} outside the closed-form table")


def close_sum(s, prove):
    """The table entry (a dict the checker reads) that closes ``s``, or raise :class:`OutsideTable`.

    ``prove(lhs, rhs)`` is the prover's scalar entry point; it must return a proved
    verdict with a certificate for the antidifference step.
    """
    k, a, b = _limits(s)
    count = b - a + 1
    if count.is_Integer:
        if 0 <= count <= MAX_FINITE_TERMS:
            return {"sum": s, "entry": "finite"}
        raise OutsideTable(f"the range {a}..{b} has {count} terms (at most {MAX_FINITE_TERMS} are added)")
    f = s.function
    karr = count.is_nonnegative is not True
    if karr:
        # Karr's convention (SymPy's): sum_a^b = G(b) - G(a - 1) for all integers a, b once
        # G(K) - G(K - 1) = f(K) at every integer K: a polynomial summand, a plain integer index
        if a.is_integer is not True or b.is_integer is not True or not f.is_polynomial(k) or f.has(sp.Sum):
            raise OutsideTable(f"the range {a}..{b} is not shown to satisfy b >= a - 1")
        index = sp.Dummy(str(k), integer=True)
    elif f.has(sp.KroneckerDelta):
        return _delta_entry(s, k, a, b)
    else:
        index = range_index(k, a, b)
    summand = f.xreplace({k: index})
    from ._trigpoly import to_trig_polynomial  # the reduced summand proposes the antidifference

    reduced = to_trig_polynomial(summand)
    simple = sp.factor_terms(reduced.as_trig()) if not reduced.had_denominator else summand
    name, anti = _proposal(simple, index, a)
    step_lhs = anti - anti.xreplace({index: index - 1})
    verdict = prove(step_lhs, summand)
    if not verdict.proved or verdict.certificate is None:
        raise OutsideTable(f"the antidifference {anti} of {f} is not proved ({verdict.status}: {verdict.reason})")
    entry = {"sum": s, "entry": name, "index": index, "antidifference": anti, "step": verdict.certificate}
    try:
        _closed_form(Certificate("sum", s, s), entry)
    except CertificateError as err:
        raise OutsideTable(err.message) from None
    return entry
