"""A statement with ``where(...)`` proved case by case, split at its condition over the integers.

The prover reads ``Piecewise(a, cond; b)`` as one term: an identity such as ``where(t < 8, t, 8) =
Min(t, 8)`` is outside its class.  Over the integers the condition of a ``where`` that is linear, with
integer coefficients and a coefficient +-1 on some symbol ``s`` (``t < 8``, ``i + c >= 0``, ``j - i ==
0``), holds exactly on one side of an integer cut, ``s <= cut`` or ``s >= cut + 1`` (an equality: at one
integer ``v``, between the cuts ``v - 1`` and ``v``).  Each integer interval between the cuts is a case,
substituted into the statement so that SymPy's own evaluation of the condition picks the branch:

* an interval of at most :data:`MAX_POINTS` integers (bounded by the cuts and the symbol's range,
  ``0 <= t <= 7``): each integer, exactly;
* an unbounded one: ``s = start + u`` or ``s = end - u`` with ``u`` a new non-negative integer symbol (a
  longer bounded one as ``end - u``: a superset of its integers).

The cuts only choose where to split: the intervals always cover every integer of the symbol's range,
and a case whose condition SymPy does not decide is split again or left unproved, so a wrong cut costs
a proof, never soundness.

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
    symbol, cuts = split  # the condition is constant on each integer interval the cuts bound
    out = []
    for name, substitution in _sides(symbol, cuts, nonnegative):
        cases = _cases(lhs.xreplace({symbol: substitution}), rhs.xreplace({symbol: substitution}), nonnegative,
                       depth + 1, f"{label}{'; ' if label else ''}{name}")
        if cases is None:
            return None
        out += cases
    return out


def _split(lhs, rhs, nonnegative):
    """The first ``where`` condition linear in some symbol with coefficient +-1 and integer coefficients
    elsewhere: ``(symbol, cuts)``, the condition taking one truth value on each of the integer intervals
    ``symbol <= cuts[0]``, ``cuts[0] < symbol <= cuts[1]``, ..., ``symbol > cuts[-1]`` (each cut an
    integer-valued expression in the other symbols), or ``None``."""
    kinds = (sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan, sp.Eq, sp.Ne)
    for piecewise in sorted(sp.Tuple(lhs, rhs).atoms(sp.Piecewise), key=sp.default_sort_key):
        for _, condition in piecewise.args:
            if not isinstance(condition, kinds):
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
    if relation in (sp.Eq, sp.Ne):  # holds (or fails) at the one integer s = v: s <= v - 1, s = v, s >= v + 1
        if not constant.is_Integer:
            return None
        v = (-rest - constant) / a
        return symbol, [v - 1, v]
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
    return symbol, [cut]


def _sides(symbol, cuts, nonnegative):
    """The integer intervals between the cuts as substitutions: the points of a bounded interval of at
    most :data:`MAX_POINTS` integers one by one, else ``start + u`` or ``end - u`` with a new non-negative
    integer ``u`` (a longer bounded interval as ``end - u``: every integer up to its end, a superset).
    A symbol whose range is ``>= 0`` has its intervals cut at 0."""
    u = sp.Symbol(f"u_{symbol.name}", integer=True, nonnegative=True)
    floor_ = sp.Integer(0) if (symbol.is_nonnegative or symbol in nonnegative) else None
    bounds, previous = [], None
    for cut in cuts:
        bounds.append((None if previous is None else previous + 1, cut))
        previous = cut
    bounds.append((previous + 1, None))
    sides = []
    for start, end in bounds:
        if floor_ is not None:
            if end is not None and end.is_Integer and end < floor_:
                continue  # wholly below the symbol's range
            if start is None or (start.is_Integer and start < floor_):
                start = floor_
        if start is None:
            sides.append((f"{symbol} <= {end}", end - u))
        elif end is None:
            sides.append((f"{symbol} >= {start}", start + u))
        elif (end - start).is_Integer and end - start < MAX_POINTS:
            sides += [(f"{symbol} = {start + k}", start + k) for k in range(int(end - start) + 1)]
        else:
            sides.append((f"{start} <= {symbol} <= {end}", end - u))
    return sides
