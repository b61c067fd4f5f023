"""Counterexample search: exact witnesses, shrunk to the simplest form.

Candidates are ordered by simplicity (small integers, then simple rationals,
then simple rational multiples of pi), always including zero and negative
values, and filtered by each symbol's SymPy assumptions.  A candidate point is
a witness only if both sides are defined there and the difference is
certified non-zero: exactly (a rational) or by SymPy's rigorous ``evalf`` with
``strict=True``, which raises rather than return digits it cannot vouch for.
"""

from __future__ import annotations

import random
from typing import Iterable, Mapping

import sympy as sp
from sympy import Rational, pi
from sympy.core.evalf import PrecisionExhausted

__all__ = ["candidates_for", "search_variables", "complete_witness", "find_witness", "is_certainly_nonzero", "evaluate_at", "format_witness"]

_BASE_CANDIDATES = [
    sp.Integer(0), sp.Integer(1), sp.Integer(-1), sp.Integer(2), sp.Integer(-2),
    Rational(1, 2), Rational(-1, 2), pi / 2, pi, sp.Integer(3), sp.Integer(-3),
    pi / 3, -pi / 2, pi / 4, Rational(1, 3), Rational(3, 2), Rational(-3, 2),
    2 * pi / 3, pi / 6, -pi, 3 * pi / 2, sp.Integer(4), sp.Integer(5), sp.Integer(-5),
    Rational(2, 3), Rational(1, 10), sp.Integer(7), Rational(5, 2),
]
_INTEGER_CANDIDATES = [sp.Integer(v) for v in (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, 6, 7, -7, 8, 10, 12, 16)]

#: digits of certified precision asked of ``evalf`` when a residual is not rational
CERTIFY_DIGITS = 30

#: how many candidate points the search evaluates at most
MAX_POINTS = 600


def _satisfies(value: sp.Expr, symbol: sp.Symbol) -> bool:
    for key, wanted in symbol.assumptions0.items():
        if key == "commutative":
            continue
        actual = getattr(value, f"is_{key}", None)
        if actual is not wanted:
            return False
    return True


def candidates_for(symbol: sp.Symbol) -> list:
    """Simple exact values that respect the assumptions of ``symbol``, simplest first."""
    pool = _INTEGER_CANDIDATES if symbol.is_integer else _BASE_CANDIDATES
    return [v for v in pool if _satisfies(v, symbol)]


def _defined(value) -> bool:
    return not value.has(sp.nan, sp.zoo, sp.oo, -sp.oo)


def is_certainly_nonzero(value: sp.Expr) -> bool:
    """True only when ``value`` is provably a non-zero finite (possibly complex) number.

    A rational is decided exactly.  Anything else is evaluated by SymPy's
    ``evalf`` with ``strict=True`` (which raises instead of returning digits it
    cannot vouch for) at two precisions, and must come out non-zero at both
    with agreeing leading digits: functions that ``evalf`` hands to mpmath carry
    no error bound, and a value that is really zero shows up there as noise
    that changes with the precision.
    """
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or not _defined(value):
        return False
    if value.is_Rational:
        return value != 0
    if not value.is_number:
        return False
    low, high = _certified_parts(value, CERTIFY_DIGITS), _certified_parts(value, 2 * CERTIFY_DIGITS)
    if low is None or high is None:
        return False
    size = max(abs(high[0]), abs(high[1]))
    if size == 0:
        return False
    gap = max(abs(low[0] - high[0]), abs(low[1] - high[1]))
    return bool(gap <= size * sp.Float(10) ** (-(CERTIFY_DIGITS // 2)))


def _certified_parts(value, digits):
    """``(re, im)`` of ``value`` to ``digits`` certified digits, or ``None``."""
    try:
        approx = value.evalf(digits, strict=True)
    except (PrecisionExhausted, ValueError, TypeError, ArithmeticError):
        return None
    re, im = approx.as_real_imag()
    if not (re.is_Number and im.is_Number):
        return None
    if not (_defined(re) and _defined(im)):
        return None
    return re, im


def evaluate_at(expr, point: Mapping):
    """``expr`` at ``point`` exactly (sums with now-concrete limits are evaluated)."""
    # values given as Python numbers are sympified first: xreplace of a bare symbol
    # would hand back the Python int itself
    point = {symbol: sp.sympify(v) for symbol, v in dict(point).items()}
    value = sp.sympify(sp.sympify(expr).xreplace(point))
    if value.has(sp.Sum, sp.Product):
        value = value.doit()
    return value


def _is_witness(lhs, rhs, point) -> bool:
    try:
        left, right = evaluate_at(lhs, point), evaluate_at(rhs, point)
    except Exception:  # noqa: BLE001 - a point SymPy cannot evaluate is simply not a witness
        return False
    if not (_defined(left) and _defined(right)):
        return False
    return is_certainly_nonzero(left - right)


def _points(symbols, pools, rng) -> Iterable[dict]:
    """Points in order of total simplicity rank, then a seeded random sample."""
    n = len(symbols)
    seen = set()
    limit = max(len(p) for p in pools) if pools else 0
    for total in range(0, 3 * limit):
        produced = False
        for ranks in _compositions(total, n, [len(p) for p in pools]):
            produced = True
            if ranks in seen:
                continue
            seen.add(ranks)
            yield {s: pools[k][r] for k, (s, r) in enumerate(zip(symbols, ranks))}
            if len(seen) > MAX_POINTS // 2:
                break
        if len(seen) > MAX_POINTS // 2 or not produced:
            break
    for _ in range(MAX_POINTS // 2):
        ranks = tuple(rng.randrange(len(p)) for p in pools)
        if ranks not in seen:
            seen.add(ranks)
            yield {s: pools[k][r] for k, (s, r) in enumerate(zip(symbols, ranks))}


def _compositions(total, n, sizes):
    if n == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(total, sizes[0] - 1), -1, -1):
        for rest in _compositions(total - first, n - 1, sizes[1:]):
            yield (first,) + rest


def _shrink(lhs, rhs, point, pools, symbols, fixed):
    point = dict(point)
    changed = True
    while changed:
        changed = False
        for k, s in enumerate(symbols):
            current = pools[k].index(point[s])
            for simpler in pools[k][:current]:
                trial = {**point, s: simpler}
                if _is_witness(lhs, rhs, {**fixed, **trial}):
                    point, changed = trial, True
                    break
    return point


def search_variables(*exprs) -> set:
    """The variables a witness binds: free symbols, with a matrix symbol replaced by its
    entries (``A[0, 1]``), since only entries have values."""
    variables = set()
    for expr in exprs:
        for symbol in expr.free_symbols:
            if isinstance(symbol, sp.MatrixSymbol):
                rows, cols = symbol.shape
                if not (isinstance(rows, (int, sp.Integer)) and isinstance(cols, (int, sp.Integer))):
                    continue
                variables.update(symbol[r, c] for r in range(int(rows)) for c in range(int(cols)))
            else:
                variables.add(symbol)
    return variables


def complete_witness(witness: Mapping, *exprs) -> dict:
    """``witness`` with every other variable of ``exprs`` bound to its simplest admissible value.

    Used when the witness was found on one entry of a matrix statement: the
    other variables do not change that entry.  A variable with no admissible
    value is left unbound (and the witness with it), so that callers say so.
    """
    extra = {}
    for symbol in sorted(search_variables(*exprs) - set(witness), key=str):
        pool = candidates_for(symbol)
        if not pool:
            return dict(witness)
        extra[symbol] = pool[0]
    return {**witness, **extra}


def find_witness(lhs, rhs, symbols=None, *, fixed: Mapping | None = None, seed: int = 0):
    """A simplest exact point where ``lhs - rhs`` is certified non-zero, or ``None``.

    ``fixed`` pins some symbols to given values (they are not searched).
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    fixed = dict(fixed or {})
    if symbols is None:
        symbols = search_variables(lhs, rhs) - set(fixed)
    symbols = sorted(symbols, key=str)
    pools = [candidates_for(s) for s in symbols]
    if any(not p for p in pools):
        return None
    if not symbols:
        return fixed if _is_witness(lhs, rhs, fixed) else None
    rng = random.Random(seed)
    for point in _points(symbols, pools, rng):
        full = {**fixed, **point}
        if _is_witness(lhs, rhs, full):
            return {**fixed, **_shrink(lhs, rhs, point, pools, symbols, fixed)}
    return None


def format_witness(witness: Mapping) -> str:
    """A paste-able substitution: ``{a: 1, b: pi/2}`` ordered by name."""
    items = sorted(witness.items(), key=lambda kv: str(kv[0]))
    return "{" + ", ".join(f"{k}: {sp.sstr(v)}" for k, v in items) + "}"
