"""The properties of a learned absolute position table (``[vectors]``), decided from its values exactly.

A table's rows are float64 numbers, each an exact binary rational; scaled by one power of two they are
integers (:meth:`~._table_file.VectorTable.scaled`), and every dot product, norm and rank below is
computed on those integers: a verdict never rests on float closeness.  Floats only *guide* the search
for a witness in a large table (which pairs of rows to try first); each witness is then re-computed
exactly.

The positions a statement ranges over are the file's: ``0..N`` for a table of ``N + 1`` rows, or every
position ``t >= 0`` with ``clip = true`` (position ``t`` reads row ``min(t, N)``).  With a clip, the
positions past the table all read the last row, so position ``N + 1`` stands for every one of them and
a finite search covers every position.

- ``constant_norm``: ``||p_t||^2`` is the same at every position (every row's norm against row 0's).
- ``relative``: ``p_i^T p_j = p_0^T p_{j-i}`` for ``0 <= i <= j`` (the Gram matrix is Toeplitz).
- ``shift``: ``p_{i+c}^T p_{j+c} = p_i^T p_j``; by induction on ``c`` it is enough that it holds at
  ``c = 1`` for every ``i, j``.
- ``direction``: ``p_0^T p_D`` against ``p_D^T p_0``: a dot product is symmetric, so never visible.
- ``shift_structure``: one matrix ``A`` with ``p_{t+1} = A p_t`` for every ``t`` (then ``A_D = A^D``):
  exists exactly when the rank of the rows ``p_t`` equals the rank of the rows ``[p_t | p_{t+1}]``,
  computed exactly over the rationals for tables of at most :data:`MAX_RANK_ENTRIES` entries.
- ``equivalence``: the table equals the sinusoidal table of the named frequencies entry by entry,
  decided exactly (a float64 copy of ``sin(t omega)`` differs from it wherever ``t omega != 0``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .._ground._errors import VariantFileError
from ..encodings import sinusoidal_vector
from ..prover import _budget
from ..prover._witness import is_certainly_nonzero
from ._properties import Property, c, i, j, t
from ._spec import Variant

__all__ = ["vector_properties", "exact_row", "MAX_EXACT_PAIRS", "MAX_RANK_ENTRIES"]

#: most (row, row) dot products computed exactly to prove a pairwise property, and most integer products
#: in them (pairs x width); a larger table is unknown unless a witness is found
MAX_EXACT_PAIRS = 200_000
MAX_EXACT_PRODUCTS = 10_000_000
#: most entries of the exact rank computation of shift_structure
MAX_RANK_ENTRIES = 8192
#: rows whose Gram matrix guides the witness search in floats
_GUIDED_ROWS = 2048
#: candidate witnesses re-computed exactly from the float guide
_GUIDED_CANDIDATES = 32


def exact_row(variant: Variant, position: int) -> list:
    """The exact entries (rationals) of ``p_position``."""
    table = variant.vectors
    row = table.row_of(position)
    if not 0 <= row <= table.last:
        raise VariantFileError(f"{variant.source}: table 'vectors' indexed by {position}, outside its rows "
                               f"0..{table.last}")
    return [sp.Rational(x) for x in table.values[row].tolist()]


class _Gram:
    """Exact dot products of the table's rows, on the scaled integers (cached)."""

    def __init__(self, variant: Variant):
        self.table = variant.vectors
        self.ints, self.shift = self.table.scaled()
        self.cache: dict = {}

    def __call__(self, a: int, b: int) -> int:
        """``2**(2 shift) p_a^T p_b`` for positions ``a, b`` (an exact integer)."""
        ra, rb = sorted((self.table.row_of(a), self.table.row_of(b)))
        key = (ra, rb)
        if key not in self.cache:
            self.cache[key] = sum(x * y for x, y in zip(self.ints[ra], self.ints[rb]))
        return self.cache[key]

    def value(self, a: int, b: int) -> sp.Rational:
        return sp.Rational(self(a, b), 2 ** (2 * self.shift))


def _shown(value: sp.Rational) -> str:
    """An exact rational, shown by its first 12 digits (the comparison itself was exact)."""
    return "0" if value == 0 else f"{float(value):.12g}"


def _span(variant: Variant) -> int:
    """The positions a finite search covers: ``0..N``, or ``0..N+1`` with a clip (``N + 1`` stands for
    every position past the table)."""
    return variant.vectors.last + (1 if variant.vectors.clip else 0)


def _guided(variant: Variant, residual) -> list:
    """Candidate ``(a, b)`` of the largest float residuals ``residual(G)`` (``G``: the float Gram
    matrix of the first rows), largest first; empty for a table too large to guide."""
    values = variant.vectors.values
    if values.shape[0] > _GUIDED_ROWS:
        values = values[:_GUIDED_ROWS]
    gram = values @ values.T
    with np.errstate(all="ignore"):
        gap = np.abs(np.nan_to_num(residual(gram), nan=np.inf))
    order = np.argsort(gap, axis=None)[::-1][:_GUIDED_CANDIDATES]
    return [tuple(int(k) for k in np.unravel_index(flat, gap.shape)) for flat in order if gap.flat[flat] > 0]


def _pairwise(variant: Variant, proof, rule: str, candidates, every, compare, witness) -> None:
    """Shared by relative and shift: try ``candidates``, then ``every`` pair when the table is small
    enough; ``compare(a, b)`` gives ``(lhs, rhs)`` as exact integers, ``witness(a, b)`` the witness."""
    gram = _Gram(variant)
    tried = set()
    for a, b in candidates:
        if (a, b) in tried:
            continue
        tried.add((a, b))
        lhs, rhs = compare(gram, a, b)
        if lhs != rhs:
            scale = 2 ** (2 * gram.shift)
            proof.check(rule, False, f"at {witness(a, b)}: {_shown(sp.Rational(lhs, scale))} on the left, "
                                     f"{_shown(sp.Rational(rhs, scale))} on the right (exact rationals of the "
                                     "float64 entries, compared exactly)",
                        witness={k: sp.Integer(v) for k, v in _witness_values(witness(a, b)).items()})
            return
    pairs = every()
    if pairs is None:
        proof.undecided("check", rule, f"no witness among {len(tried)} candidate pairs of positions, and the table "
                                       f"({variant.vectors.rows} rows of {variant.vectors.width}) is too large to compare every "
                                       f"pair exactly (at most {MAX_EXACT_PAIRS} dot products and "
                                       f"{MAX_EXACT_PRODUCTS} products in them)", method="exact")
        return
    count = 0
    for a, b in pairs:
        _budget.check()  # one step per exact comparison: --steps bounds the work, the same on every machine
        lhs, rhs = compare(gram, a, b)
        count += 1
        if lhs != rhs:
            scale = 2 ** (2 * gram.shift)
            proof.check(rule, False, f"at {witness(a, b)}: {_shown(sp.Rational(lhs, scale))} on the left, "
                                     f"{_shown(sp.Rational(rhs, scale))} on the right (compared exactly)",
                        witness={k: sp.Integer(v) for k, v in _witness_values(witness(a, b)).items()})
            return
    proof.check(rule, True, f"{count} pairs of positions compared exactly; they cover every position "
                            + ("(positions past the table read its last row)" if variant.vectors.clip else
                               f"0..{variant.vectors.last}"))


def _affordable(variant: Variant, pairs: int) -> bool:
    """Whether ``pairs`` exact dot products fit the bounds (a count, never a clock: the same verdict on
    every machine)."""
    return pairs <= MAX_EXACT_PAIRS and pairs * variant.vectors.width <= MAX_EXACT_PRODUCTS


def _witness_values(text: str) -> dict:
    """``{i: 1, j: 2}`` from ``"i = 1, j = 2"`` (the witness shown and the witness recorded are one text)."""
    out = {}
    for part in text.split(", "):
        name, value = part.split(" = ")
        out[{"i": i, "j": j, "c": c, "t": t}[name]] = int(value)
    return out


def _relative(variant: Variant, proof) -> None:
    span = _span(variant)

    def compare(gram, a, b):
        return gram(a, b), gram(0, b - a)

    def every():
        # 0 <= i <= j with j - i <= span too: past the table every position reads the last row
        if not _affordable(variant, (span + 1) ** 2):
            return None
        last = variant.vectors.last
        ends = (lambda a: range(a, a + span + 1)) if variant.vectors.clip else (lambda a: range(a, last + 1))
        return ((a, b) for a in range(span + 1) for b in ends(a))

    n = variant.vectors.rows

    def residual(g):
        out = np.zeros_like(g)
        for a in range(g.shape[0]):
            out[a, a:] = g[a, a:] - g[0, :g.shape[0] - a]
        return out

    small = [(1, 1), (1, 2), (2, 2), (1, 3), (2, 3)]
    candidates = [(a, b) for a, b in small if b < n] + _guided(variant, residual)
    _pairwise(variant, proof, "p_i^T p_j = p_0^T p_{j-i} for every 0 <= i <= j", candidates, every, compare,
              lambda a, b: f"i = {a}, j = {b}")


def _shift(variant: Variant, proof) -> None:
    table = variant.vectors
    # c = 1 at every i, j (induction gives every c): i + 1, j + 1 inside 0..N, or any i, j <= N with a clip
    top = table.last if table.clip else table.last - 1

    def compare(gram, a, b):
        return gram(a + 1, b + 1), gram(a, b)

    def every():
        if not _affordable(variant, (top + 1) ** 2):
            return None
        return ((a, b) for a in range(top + 1) for b in range(a, top + 1))

    def residual(g):
        out = np.zeros_like(g)
        out[:-1, :-1] = g[1:, 1:] - g[:-1, :-1]
        return np.triu(out)

    candidates = [(a, b) for a, b in ((0, 0), (0, 1), (1, 1)) if b <= top] + [
        (a, b) for a, b in _guided(variant, residual) if b <= top]
    if top < 0:  # one row and no clip: no shift stays inside the positions
        proof.check("no common shift keeps both positions inside 0..0", True)
        return
    _pairwise(variant, proof, "p_{i+1}^T p_{j+1} = p_i^T p_j for every i, j (hence every shift c)", candidates,
              every, compare, lambda a, b: f"i = {a}, j = {b}, c = 1")


def _constant_norm(variant: Variant, proof) -> None:
    gram = _Gram(variant)
    first = gram(0, 0)
    for row in range(1, variant.vectors.rows):
        _budget.check()
        if gram(row, row) != first:
            proof.check("||p_t||^2 = ||p_0||^2 at every position t", False,
                        f"at t = {row}: ||p_t||^2 = {_shown(gram.value(row, row))} but ||p_0||^2 = "
                        f"{_shown(gram.value(0, 0))} (compared exactly)", witness={t: sp.Integer(row)})
            return
    proof.check("||p_t||^2 = ||p_0||^2 at every position t", True,
                f"every row's norm equals row 0's exactly ({variant.vectors.rows} rows"
                + (", and the clip repeats the last)" if variant.vectors.clip else ")"))


def _direction(variant: Variant, proof) -> None:
    proof.check("the sign of the offset is visible", False,
                "p_0^T p_D = p_D^T p_0 for every D: a dot product is symmetric, so both offsets give the same "
                "value for every table")


def _shift_structure(variant: Variant, proof) -> None:
    """One ``A`` with ``A p_t = p_{t+1}`` for every ``t`` exists iff rank(P) = rank([P | Q]), P the rows
    ``p_t``, Q the rows ``p_{t+1}`` (every ``t`` whose successor is a position)."""
    table = variant.vectors
    ints, _ = table.scaled()
    steps = list(range(table.last + (1 if table.clip else 0)))  # t with t + 1 a position
    if not steps:
        proof.check("p_{t+1} = A p_t for one matrix A and every t", True, "one position: nothing to map")
        return
    source = [tuple(ints[table.row_of(s)]) for s in steps]
    target = [tuple(ints[table.row_of(s + 1)]) for s in steps]
    # a linear map sends equal vectors to equal vectors (and 0 to 0): the cheap witness first
    seen: dict = {}
    zero = tuple([0] * table.width)
    for s, (a, b) in enumerate(zip(source, target)):
        if a == zero and b != zero:
            proof.check("p_{t+1} = A p_t for one matrix A and every t", False,
                        f"p_{steps[s]} = 0 but p_{steps[s] + 1} != 0: no linear map sends 0 to it",
                        witness={t: sp.Integer(steps[s])})
            return
        if a in seen and target[seen[a]] != b:
            u, v = steps[seen[a]], steps[s]
            proof.check("p_{t+1} = A p_t for one matrix A and every t", False,
                        f"p_{u} = p_{v} exactly but p_{u + 1} != p_{v + 1}: no map sends one vector to two",
                        witness={t: sp.Integer(v)})
            return
        seen.setdefault(a, s)
    # equal rows map to equal rows (checked above): the ranks are those of the distinct rows
    kept = sorted(seen.values())
    steps, source, target = [steps[k] for k in kept], [source[k] for k in kept], [target[k] for k in kept]
    if len(steps) * 2 * table.width > MAX_RANK_ENTRIES:
        proof.undecided("check", "p_{t+1} = A p_t for one matrix A and every t",
                        f"the exact rank test is bounded to {MAX_RANK_ENTRIES} entries; this table has "
                        f"{len(steps)} distinct rows x {2 * table.width}", method="exact")
        return
    from sympy.polys.domains import QQ, ZZ
    from sympy.polys.matrices import DomainMatrix

    def rank(rows):
        matrix = DomainMatrix([[ZZ(x) for x in row] for row in rows], (len(rows), len(rows[0])), ZZ)
        return matrix.convert_to(QQ).rank()

    alone, joined = rank(source), rank([a + b for a, b in zip(source, target)])
    if alone == joined:
        proof.check("p_{t+1} = A p_t for one matrix A and every t", True,
                    f"rank of the rows p_t = rank of the rows [p_t | p_(t+1)] = {alone} (exact, over the rationals): "
                    "A exists, and A_D = A^D")
        return
    # the certificate: integers a_t with sum a_t p_t = 0 but sum a_t p_(t+1) != 0 (a linear A would map 0 to 0)
    transposed = DomainMatrix([[ZZ(row[k]) for row in source] for k in range(table.width)],
                              (table.width, len(source)), ZZ).convert_to(QQ)
    for vector in transposed.nullspace().to_Matrix().tolist():
        image = [sum(sp.Rational(a) * row[k] for a, row in zip(vector, target)) for k in range(table.width)]
        if any(image):
            break
    scale = sp.ilcm(*[sp.Rational(a).q for a in vector])
    integers = [int(sp.Rational(a) * scale) for a in vector]
    common = sp.igcd(*[a for a in integers if a]) or 1
    witness = {sp.Symbol(f"a_{steps[k]}"): sp.Integer(a // common) for k, a in enumerate(integers) if a}
    proof.check("p_{t+1} = A p_t for one matrix A and every t", False,
                f"rank of the rows p_t = {alone} < rank of the rows [p_t | p_(t+1)] = {joined} (exact, over the "
                "rationals): the witness a_t gives sum a_t p_t = 0 exactly but sum a_t p_(t+1) != 0, and a linear "
                "map sends 0 to 0", witness=witness)


def _equivalence(variant: Variant, proof) -> None:
    """Entry by entry against ``sin(t omega_r)``, ``cos(t omega_r)`` of the named frequencies."""
    table = variant.vectors
    target = variant.equivalent_frequencies_exact()
    n = len(target)
    rule = f"p_t = the table of {variant.equivalent_name}, entry by entry"
    layout = [(2 * r, 2 * r + 1) for r in range(n)] if variant.pairing == "adjacent" else [(r, r + n) for r in range(n)]
    undecided = None
    for position in range(_span(variant) + 1):
        row = exact_row(variant, position)
        exact = sinusoidal_vector(sp.Integer(position), target)
        for r, (a, b) in enumerate(layout):
            for column, value in ((a, exact[2 * r]), (b, exact[2 * r + 1])):
                _budget.check()
                difference = row[column] - value
                if difference == 0:
                    continue
                if is_certainly_nonzero(difference):
                    proof.check(rule, False, f"at t = {position}, column {column}: the table holds "
                                             f"{float(row[column])!r} exactly, the scheme {value}"
                                             + ("" if value.is_Rational else f" (~ {float(sp.N(value, 20)):.17g})"),
                                witness={t: sp.Integer(position)})
                    return
                undecided = undecided or (position, column)
    if undecided is not None:
        proof.undecided("check", rule, f"no entry certified different; at t = {undecided[0]}, column "
                                       f"{undecided[1]} the difference is not decided", method="exact")
        return
    proof.check(rule, True, "every entry equal exactly")


def vector_properties(variant: Variant) -> list:
    """The properties of a table of learned positions, in the additive kind's report order."""
    table = variant.vectors
    where = "0 <= t <= N" if not table.clip else "t >= 0 (rows past the table: the last)"
    props = [
        Property("constant_norm", f"||p_t||^2 = ||p_0||^2 for every position t ({where})", "identity",
                 derive=_constant_norm),
        Property("shift_structure", "p_{t+D} = A_D p_t for every position t, one matrix A_D independent of t",
                 "identity", derive=_shift_structure),
        Property("relative", "p_i^T p_j = p_0^T p_{j-i} for 0 <= i <= j: the product depends only on the offset",
                 "identity", derive=_relative),
        Property("shift", "p_{i+c}^T p_{j+c} = p_i^T p_j for every common shift c", "identity", derive=_shift),
        Property("direction", "p_0^T p_D != p_D^T p_0 in general: the sign of the offset is visible", "sensitivity",
                 derive=_direction),
    ]
    if variant.equivalent_frequencies is not None:
        props.append(Property("equivalence", f"p_t equals the table of {variant.equivalent_name}", "identity",
                              derive=_equivalence))
    return props
