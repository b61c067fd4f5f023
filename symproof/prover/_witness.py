"""Counterexample search: exact witnesses, shrunk to the simplest form.

Candidates are ordered by simplicity (small integers, then simple rationals,
then simple rational multiples of pi), always including zero and negative
values, and filtered by each symbol's SymPy assumptions.  A candidate point is
a witness only if both sides are certified finite there and the difference is
certified non-zero: exactly (a rational) or by a rigorous interval enclosure
(mpmath's ``iv`` context, :mod:`symproof.checker._interval`) that excludes
zero.  Discontinuous functions (``sign``, ``floor``, ``Piecewise``...) and
branch-cut functions (``log``, ``asin``, ``sqrt``...) are evaluated only where
their argument is exact (SymPy evaluates them itself) or certified away from
the jump or the cut; otherwise the point is skipped.  A statement with a
non-commutative symbol has no numeric witness (numbers commute).
"""

from __future__ import annotations

import functools
import random
import threading
from contextlib import contextmanager
from typing import Any, Iterable, Mapping

import sympy as sp
from sympy import Rational, pi

from ..checker._interval import certainly_different, certainly_finite, certainly_nonzero, value_at
from . import _budget

__all__ = ["candidates_for", "search_variables", "complete_witness", "find_witness", "find_defined_point",
           "is_certainly_nonzero", "evaluate_at", "format_witness", "condition_holds", "defined_context"]

_BASE_CANDIDATES = [
    sp.Integer(0), sp.Integer(1), sp.Integer(-1), sp.Integer(2), sp.Integer(-2),
    Rational(1, 2), Rational(-1, 2), pi / 2, pi, sp.Integer(3), sp.Integer(-3),
    pi / 3, -pi / 2, pi / 4, Rational(1, 3), Rational(3, 2), Rational(-3, 2),
    2 * pi / 3, pi / 6, -pi, 3 * pi / 2, sp.Integer(4), sp.Integer(5), sp.Integer(-5),
    Rational(2, 3), Rational(1, 10), sp.Integer(7), Rational(5, 2),
]
_INTEGER_CANDIDATES = [sp.Integer(v) for v in (0, 1, -1, 2, -2, 3, -3, 4, -4, 5, 6, 7, -7, 8, 10, 12, 16)]

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

    A rational is decided exactly; anything else by a rigorous interval
    enclosure (:mod:`symproof.checker._interval`) that excludes zero, in which
    every discontinuous or branch-cut function is evaluated only where its
    argument is certified away from the jump or the cut.
    """
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or not _defined(value):
        return False
    return certainly_nonzero(value)


def evaluate_at(expr, point: Mapping):
    """``expr`` at ``point`` exactly (sums with now-concrete limits are evaluated)."""
    # values given as Python numbers are sympified first: xreplace of a bare symbol
    # would hand back the Python int itself
    point = {symbol: sp.sympify(v) for symbol, v in dict(point).items()}
    expr = sp.sympify(expr)
    labels = {s for s in point if isinstance(s, sp.Symbol)}
    if expr.has(sp.Indexed) and labels:
        # elements first: a bound label is the value of every element it does not bind itself
        expr = expr.replace(lambda e: isinstance(e, sp.Indexed) and e not in point and e.base.label in labels,
                            lambda e: point[e.base.label])
    value = sp.sympify(_chosen_branches(expr, point) if expr.has(sp.Piecewise) else expr.xreplace(point))
    if value.has(sp.Sum, sp.Product):
        value = _expand_finite(value)
    return value


def _chosen_branches(expr, point):
    """``expr.xreplace(point)`` with every Piecewise replaced by the branch its conditions choose at
    the point, before that branch is built: a Piecewise is its chosen branch, so a branch that is
    not chosen need not be defined there (T5's ``where(n < 16, n, log(n / 16))`` at ``n = 0``), and
    substituting into it first would stop the evaluation (``Min(31, zoo)`` raises).  A condition
    that is not decided at the point leaves that Piecewise to plain substitution."""
    if not expr.has(sp.Piecewise):
        return expr.xreplace(point)
    if isinstance(expr, sp.Piecewise):
        for branch, condition in expr.args:
            decided = sp.sympify(condition.xreplace(point))
            if decided is sp.true:
                return _chosen_branches(branch, point)
            if decided is not sp.false:
                return expr.xreplace(point)
        return sp.nan  # no branch applies: undefined, as the fragment reads it
    if isinstance(expr, sp.Basic) and expr.args:
        return expr.func(*(_chosen_branches(a, point) for a in expr.args))
    return expr.xreplace(point)


#: the most terms a concrete sum or product is expanded into at a witness point
MAX_TERMS = 1000


def _expand_finite(value):
    """Concrete sums and products written out term by term (SymPy's ``doit`` would sum
    under the index's declared assumptions, and refuses ranges that contradict them)."""
    for _ in range(10):
        ready = {}
        for node in value.atoms(sp.Sum, sp.Product):
            if node.function.has(sp.Sum, sp.Product) or len(node.limits) != 1 or len(node.limits[0]) != 3:
                continue
            k, a, b = node.limits[0]
            count = b - a + 1
            if not (a.is_Integer and count.is_Integer and 0 <= count <= MAX_TERMS):
                continue
            terms = [node.function.xreplace({k: a + n}) for n in range(int(count))]
            ready[node] = sp.Add(*terms) if isinstance(node, sp.Sum) else sp.Mul(*terms)
        if not ready:
            return value
        value = value.xreplace(ready)
    return value


_context = threading.local()


@contextmanager
def defined_context(conditions):
    """Within the block, a witness must also satisfy ``conditions`` (the side conditions of the
    whole statement: every entry of a matrix statement defined, not only the entry refuted);
    the variables they add take their simplest admissible values."""
    outer = getattr(_context, "conditions", ())
    _context.conditions = tuple(conditions)
    try:
        yield
    finally:
        _context.conditions = outer


#: how many values of the other variables are tried to satisfy the statement's side conditions
MAX_COMPLETIONS = 40


def _completion(point):
    """``point`` with the statement's other variables bound so that every side condition holds,
    or ``None``: the simplest such values, among a few."""
    conditions = getattr(_context, "conditions", ())
    if not conditions:
        return point
    extra = sorted(search_variables(*[e for e, _ in conditions]) - set(point), key=str)
    if UNSEARCHABLE in extra:
        return None
    pools = [candidates_for(v) for v in extra]
    if any(not p for p in pools):
        return None
    for n, values in enumerate(_points(extra, pools, random.Random(0)) if extra else [{}]):
        if n >= MAX_COMPLETIONS:
            return None
        full = {**point, **values}
        if all(condition_holds(e, kind, full) for e, kind in conditions):
            return full
    return None


@functools.lru_cache(maxsize=64)
def _nodes(expr) -> int:
    return sum(1 for _ in sp.preorder_traversal(expr))


def expression_size(expr) -> int:
    """The number of nodes of ``expr``'s tree (the step cost of evaluating it once at a point)."""
    if not isinstance(expr, sp.Basic) or not isinstance(expr, sp.Expr):
        return 1
    return _nodes(expr)


def _is_witness(lhs, rhs, point) -> bool:
    """Both sides defined at ``point`` at every subterm, evaluated bottom-up on the unevaluated
    trees (no substitution: SymPy's evaluation of ``1/(1 + 1/x)`` at ``x = 0`` gives 0), their
    values certainly different, and the statement's other side conditions satisfiable there."""
    _budget.check(expression_size(lhs) + expression_size(rhs))  # the evaluation's work: one step per node evaluated
    return certainly_different(lhs, rhs, point) and _completion(point) is not None


def condition_holds(expr, kind, point) -> bool:
    """A side condition at ``point``: ``"nonzero"`` (certified non-zero, every subterm defined)
    or ``"defined"`` (every subterm defined), evaluated bottom-up."""
    return (certainly_nonzero if kind == "nonzero" else certainly_finite)(expr, point)


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
    """The variables a witness binds: the genuine free variables.  A matrix symbol is replaced by
    its entries (``A[0, 1]``), an ``IndexedBase`` by its elements at literal indices (``a[0]``):
    only entries and elements have values, and an element at a literal index is one value.  A
    bound index is never free; an element at a bound index (``omega[r]`` in a sum over ``r``)
    reads the table, whose other elements all take the label's value (``omega: 1``: one
    consistent table); an element at a free index has no value of its own and makes the
    statement unsearchable (:data:`UNSEARCHABLE`)."""
    variables = set()
    for expr in exprs:
        labels = {i.base.label for i in expr.atoms(sp.Indexed)} if expr.has(sp.Indexed) else set()
        for symbol in expr.free_symbols:
            if isinstance(symbol, sp.MatrixSymbol):
                rows, cols = symbol.shape
                if not (isinstance(rows, (int, sp.Integer)) and isinstance(cols, (int, sp.Integer))):
                    continue
                variables.update(symbol[r, c] for r in range(int(rows)) for c in range(int(cols)))
            elif isinstance(symbol, sp.Indexed):
                if all(isinstance(i, sp.Integer) for i in symbol.indices):
                    variables.add(symbol)
                elif any(i.free_symbols & expr.free_symbols for i in symbol.indices):
                    variables.add(UNSEARCHABLE)  # an element at a free index: no value of its own
                else:
                    variables.add(symbol.base.label)  # at a bound index: the table's constant value
            elif isinstance(symbol, sp.IndexedBase):
                continue
            elif symbol in labels:
                continue
            else:
                variables.add(symbol)
    return variables


#: stands for a variable no point can bind (an element at a symbolic index)
UNSEARCHABLE = sp.Dummy("unsearchable")


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


def find_witness(lhs: Any, rhs: Any, symbols: Iterable | None = None, *, fixed: Mapping | None = None,
                 seed: int = 0, limit: int | None = None) -> Mapping | None:
    """A simplest exact point where ``lhs - rhs`` is certified non-zero, or ``None``.

    ``fixed`` pins some symbols to given values (they are not searched); ``limit``
    caps the number of candidate points tried (a quick probe).
    """
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    fixed = dict(fixed or {})
    if symbols is None:
        symbols = search_variables(lhs, rhs) - set(fixed)
    symbols = sorted(symbols, key=str)
    if UNSEARCHABLE in symbols or any(s.is_commutative is False for s in symbols):
        return None  # numbers commute: no numeric point refutes an ordering
    pools = [candidates_for(s) for s in symbols]
    if any(not p for p in pools):
        return None
    if not symbols:
        return fixed if _is_witness(lhs, rhs, fixed) else None
    rng = random.Random(seed)
    for n, point in enumerate(_points(symbols, pools, rng)):
        if limit is not None and n >= limit:
            return None
        full = {**fixed, **point}
        if _is_witness(lhs, rhs, full):
            found = _completion({**fixed, **_shrink(lhs, rhs, point, pools, symbols, fixed)})
            return None if found is None else _explicit_tables(lhs, rhs, found)
    return None


def _explicit_tables(lhs, rhs, point):
    """The witness with each table label replaced by the elements the evaluation read from it
    (``{a: 1, n: 0}`` becomes ``{a[0]: 1, n: 0}``): a witness binds elements, never a label; it
    is re-checked in that form, else dropped."""
    labels = {v for v in point if isinstance(v, sp.Symbol) and (lhs.has(sp.Indexed) or rhs.has(sp.Indexed))
              and any(i.base.label == v for side in (lhs, rhs) for i in side.atoms(sp.Indexed))}
    if not labels:
        return point
    record: dict = {}
    value_at(lhs, point, record=record)
    value_at(rhs, point, record=record)
    explicit = {v: value for v, value in point.items() if v not in labels}
    explicit.update({element: point[label] for element, label in record.items()})
    return explicit if _is_witness(lhs, rhs, explicit) else None


def format_witness(witness: Mapping) -> str:
    """A paste-able substitution: ``{a: 1, b: pi/2}`` ordered by name."""
    items = sorted(witness.items(), key=lambda kv: str(kv[0]))
    return "{" + ", ".join(f"{k}: {sp.sstr(v)}" for k, v in items) + "}"


def find_defined_point(checks):
    """A simplest exact point that passes every check, or ``None``: ``(expression, "nonzero")``
    (certified non-zero there, every subterm defined) or ``(expression, "defined")`` (every
    subterm defined there), evaluated bottom-up.

    A proof of a statement with side conditions holds wherever it is defined; the
    point shows that this is somewhere (``0/0 = 42`` has no such point).
    """
    checks = [(sp.sympify(e), kind) for e, kind in checks]
    symbols = sorted(search_variables(*[e for e, _ in checks]), key=str)
    if UNSEARCHABLE in symbols or any(s.is_commutative is False for s in symbols):
        return None
    pools = [candidates_for(s) for s in symbols]
    if any(not p for p in pools):
        return None
    for n, point in enumerate(_points(symbols, pools, random.Random(0))):
        if n >= 60:
            return None
        _budget.check()
        if all(condition_holds(e, kind, point) for e, kind in checks):
            return point
    return None
