"""A statement with ``where(...)`` proved case by case, split at its condition over the integers.

The prover reads ``Piecewise(a, cond; b)`` as one term: an identity such as ``where(t < 8, t, 8) =
Min(t, 8)`` is outside its class.  Over the integers the condition of a ``where`` that is linear, with
integer coefficients, in a position symbol ``s`` (``t < 8``, ``i + c >= 0``) holds exactly on one side
of an integer cut: ``s <= cut`` or ``s >= cut + 1``.  Each side is a case, substituted into the
statement so that SymPy's own evaluation of the condition picks the branch:

* a side bounded by the symbol's range (``0 <= t <= 7``) of at most :data:`MAX_POINTS` integers: each
  integer, exactly;
* an unbounded side: ``s = cut + 1 + u`` or ``s = cut - u`` with ``u`` a new non-negative integer symbol.

Every case is proved by the prover (certificates re-checked with the claim), up to :data:`MAX_DEPTH`
nested splits; the cases together cover every integer ``s`` of its range, which the caller records.
Nothing here refutes: a case not proved leaves the statement undecided (its refutation is the witness
search's).  A symbol's range is its own assumption (``t >= 0``), or ``s >= 0`` for a position of a file
whose positions are non-negative (the statement ranges over those only).
"""

from __future__ import annotations

import sympy as sp

from ..prover import prove_equal

__all__ = ["MAX_DEPTH", "MAX_POINTS", "where_cases"]

#: most nested splits of one statement
MAX_DEPTH = 4
#: most integers of a bounded side proved one by one
MAX_POINTS = 16


def where_cases(lhs, rhs, nonnegative=frozenset()) -> list | None:
    """``[(case, verdict), ...]``, every verdict proved, whose cases cover every integer value of the split
    symbols; ``None`` when there is no condition to split at or some case is not proved.
    ``nonnegative``: the symbols whose range is ``>= 0`` besides those declared so."""
    return _cases(sp.sympify(lhs), sp.sympify(rhs), frozenset(nonnegative), 0, "")


def _cases(lhs, rhs, nonnegative, depth, label) -> list | None:
    if depth:
        verdict = prove_equal(lhs, rhs)
        if verdict.proved:
            return [(label, verdict)]
    if depth >= MAX_DEPTH:
        return None
    split = _split(lhs, rhs, nonnegative)
    if split is None:
        return None
    symbol, cut = split  # the condition holds exactly on one side of symbol <= cut
    out = []
    for name, substitution in _sides(symbol, cut, nonnegative):
        cases = _cases(lhs.xreplace({symbol: substitution}), rhs.xreplace({symbol: substitution}), nonnegative,
                       depth + 1, f"{label}{'; ' if label else ''}{name}")
        if cases is None:
            return None
        out += cases
    return out


def _split(lhs, rhs, nonnegative):
    """The first ``where`` condition linear in some symbol with coefficient +-1 and integer coefficients
    elsewhere: ``(symbol, cut)``, the condition holding exactly on one side of ``symbol <= cut`` (``cut``
    an integer-valued expression in the other symbols), or ``None``."""
    for piecewise in sorted(sp.Tuple(lhs, rhs).atoms(sp.Piecewise), key=sp.default_sort_key):
        for _, condition in piecewise.args:
            if not isinstance(condition, (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan)):
                continue
            found = _cut(condition)
            if found is not None:
                return found
    return None


def _cut(condition):
    difference = sp.expand(condition.lhs - condition.rhs)
    symbols = sorted(difference.free_symbols, key=lambda s: s.name)
    if not symbols or not all(s.is_integer for s in symbols) or not difference.is_polynomial(*symbols):
        return None
    poly = sp.Poly(difference, *symbols)
    if poly.total_degree() != 1:
        return None
    coefficients = {s: poly.coeff_monomial(s) for s in symbols}
    constant = poly.coeff_monomial(1)
    if not (all(v.is_Integer for v in coefficients.values()) and constant.is_Rational):
        return None
    unit = [s for s in symbols if abs(coefficients[s]) == 1]
    if not unit:
        return None
    symbol = unit[0]
    a = coefficients[symbol]
    rest = sp.Add(*[coefficients[s] * s for s in symbols if s is not symbol])  # an integer for integer symbols
    # a*s + rest + constant REL 0  <=>  s REL' -(rest + constant)/a  (a = +-1, REL turned round for a = -1)
    relation = type(condition)
    if a < 0:
        relation = {sp.StrictLessThan: sp.StrictGreaterThan, sp.LessThan: sp.GreaterThan,
                    sp.StrictGreaterThan: sp.StrictLessThan, sp.GreaterThan: sp.LessThan}[relation]
    bound = -rest / a  # integer-valued
    threshold = -constant / a  # rational: s REL bound + threshold
    if relation is sp.StrictGreaterThan:  # holds for s >= floor(threshold) + 1 + bound
        cut = bound + sp.floor(threshold)
    elif relation in (sp.GreaterThan, sp.StrictLessThan):  # s >= ceil(threshold), or s <= ceil(threshold) - 1
        cut = bound + sp.ceiling(threshold) - 1
    else:
        cut = bound + sp.floor(threshold)
    return symbol, cut


def _sides(symbol, cut, nonnegative):
    """The two sides ``symbol <= cut`` and ``symbol >= cut + 1`` as substitutions (points of a small
    bounded side one by one, else a new non-negative integer ``u``)."""
    u = sp.Symbol(f"u_{symbol.name}", integer=True, nonnegative=True)
    floor_ = sp.Integer(0) if (symbol.is_nonnegative or symbol in nonnegative) else None
    sides = []
    if cut.is_Integer:
        if floor_ is None or cut >= floor_:
            if floor_ is not None and cut - floor_ + 1 <= MAX_POINTS:
                sides += [(f"{symbol} = {v}", sp.Integer(v)) for v in range(int(floor_), int(cut) + 1)]
            else:
                sides.append((f"{symbol} <= {cut}", cut - u))
        start = cut + 1 if floor_ is None else max(cut + 1, floor_)
        sides.append((f"{symbol} >= {start}", start + u))
        return sides
    # a cut that reads other symbols: both sides unbounded (the statement is proved for every integer there)
    return [(f"{symbol} <= {cut}", cut - u), (f"{symbol} >= {cut + 1}", cut + 1 + u)]
