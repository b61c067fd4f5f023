"""``prove_equal``: decide ``lhs = rhs`` exactly, or exhibit a witness.

The tactics run cheapest first and are named, so a verdict says which one
decided it:

``structural``
    the two sides are the same SymPy tree (SymPy keeps sums and products in a
    canonical order, so expressions built the same way compare equal);
``summand-first``
    sums over a (possibly symbolic) range: two sums over the same range are
    equal when their summands are; otherwise each summand is reduced to its
    canonical form first, then ``Sum.doit`` evaluates the now simple sum;
``trig-polynomial``
    the decision procedure of :mod:`._trigpoly`, tried first with each
    distinct argument as its own atom (cheap, proves most steps), then with
    arguments split into common units (complete for the decidable class);
``blockwise``
    block-diagonal matrices are compared block by block (an explicit side
    whose off-diagonal blocks are zero is split the same way), and blocks that
    are the same statement up to renaming their block-local symbols (one
    generic block with a symbolic frequency) are proved once;
``witness``
    a false statement is refuted by a simplest exact point where the two
    sides are defined and certifiably differ; a matrix symbol is bound entry
    by entry.

When no tactic decides, the verdict is ``unknown``; it is never ``proved``.
Floats are read as the exact binary rationals they store, so every step is
exact; a side whose denominator vanishes identically is an error, not a proof
of ``0/0 = anything``.
"""

from __future__ import annotations

import numbers
import operator
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import Any, Mapping

import sympy as sp
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import BlockDiagMatrix, MatAdd, MatMul, MatrixExpr, Transpose

from .._errors import InvalidInputError, UndefinedExpressionError
from ._trigpoly import to_trig_polynomial
from ._witness import complete_witness, evaluate_at, find_witness, format_witness

__all__ = ["Step", "Verdict", "prove_equal", "PROVED", "REFUTED", "UNKNOWN", "TACTICS"]

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"

#: the tactics, in the order they are tried
TACTICS = ("structural", "summand-first", "trig-polynomial", "blockwise", "witness")

_REDUCE_RULE = "cos/sin of atoms -> polynomial in (c_u, s_u), reduce mod c_u^2 + s_u^2 - 1"


@dataclass(frozen=True)
class Step:
    """One recorded rewrite: ``rule`` turned ``before`` into ``after``."""

    rule: str
    before: Any
    after: Any


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`prove_equal`."""

    status: str
    method: str
    lhs: Any
    rhs: Any
    steps: tuple = ()
    witness: Mapping | None = None
    #: ``lhs - rhs`` evaluated exactly at the witness
    residual: Any = None
    #: why the verdict is ``unknown``, or where the refutation is (a matrix entry)
    reason: str = ""
    details: dict = field(default_factory=dict, compare=False)

    @property
    def proved(self) -> bool:
        return self.status == PROVED

    @property
    def refuted(self) -> bool:
        return self.status == REFUTED

    def __bool__(self) -> bool:
        return self.proved

    def witness_text(self) -> str | None:
        return None if self.witness is None else format_witness(self.witness)

    def __str__(self) -> str:
        text = f"{self.status} by {self.method}"
        if self.witness is not None:
            text += f" at {self.witness_text()} (lhs - rhs = {self.residual})"
        if self.reason:
            text += f": {self.reason}"
        return text


# -- input checking -----------------------------------------------------------------------------


_EXPECTED = "a SymPy expression, a SymPy matrix or a block-diagonal matrix expression"


def _as_sympy(value, name: str):
    if isinstance(value, (MatrixBase, MatrixExpr)):
        return value  # floats are read exactly entry by entry (a whole-tree pass costs at d_k = 4096)
    if isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr):
            kind = type(value).__name__
            hint = (" (pass the two sides of a relation separately)"
                    if isinstance(value, (sp.core.relational.Relational, sp.logic.boolalg.Boolean)) else "")
            raise InvalidInputError(
                f"{name} must be {_EXPECTED}, got {kind} {value}{hint}", expected=_EXPECTED,
            )
        return _exact_floats(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        kind = type(value).__name__
        hint = " (convert it with sympy.Matrix(...))" if hasattr(value, "shape") or isinstance(
            value, (list, tuple)) else ""
        raise InvalidInputError(
            f"{name} must be {_EXPECTED} (or a Python number), got {kind} {_short(value)}{hint}")
    return _exact_floats(sp.sympify(value))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _exact_floats(expr):
    """Floats read as the exact binary rationals they store: every later step is exact."""
    if not expr.has(sp.Float):
        return expr
    if isinstance(expr, MatrixBase):
        return expr.applyfunc(_exact_floats)
    return expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})


def _check_defined(expr, name: str) -> None:
    if isinstance(expr, MatrixExpr) and not isinstance(expr, MatrixBase):
        return
    if expr.has(sp.nan) or expr.has(sp.zoo):
        raise UndefinedExpressionError(
            f"{name} is undefined (it contains nan or zoo, e.g. a division by zero): {expr}",
            side=name,
        )


def _is_matrix(x) -> bool:
    return isinstance(x, (MatrixBase, MatrixExpr))


# -- scalar tactics ----------------------------------------------------------------------------


def _reduce_sums(expr, steps):
    """Tactic ``summand-first``: canonicalise each summand, then evaluate the sum."""
    if not expr.has(sp.Sum):
        return expr
    replacement = {}
    for s in expr.atoms(sp.Sum):
        summand = to_trig_polynomial(s.function)
        simpler = sp.factor_terms(summand.as_trig()) if not summand.had_denominator else s.function
        evaluated = sp.Sum(simpler, *s.limits).doit()
        steps.append(Step("reduce the summand, then evaluate the sum", s, evaluated))
        replacement[s] = evaluated
    return expr.xreplace(replacement)


def _prove_scalar(lhs, rhs) -> Verdict:
    if lhs == rhs:
        return Verdict(PROVED, "structural", lhs, rhs, (Step("identical expressions", lhs, rhs),))
    steps: list = []
    method = "trig-polynomial"
    if lhs.has(sp.Sum) or rhs.has(sp.Sum):
        same_range = _same_range_summands(lhs, rhs)
        if same_range is not None:
            f, g = same_range
            summands = _canonical(f - g)
            if summands.is_zero and not summands.denominator_vanishes:
                step = Step("same range: the summands are equal (" + _REDUCE_RULE + ")", f - g, 0)
                return Verdict(PROVED, "summand-first", lhs, rhs, (step,))
        lhs_r, rhs_r = _reduce_sums(lhs, steps), _reduce_sums(rhs, steps)
        method = "summand-first"
        if lhs_r == rhs_r:
            return Verdict(PROVED, method, lhs, rhs, tuple(steps))
    else:
        lhs_r, rhs_r = lhs, rhs
    diff = lhs_r - rhs_r
    canonical = _canonical(diff)
    if canonical.denominator_vanishes:
        raise UndefinedExpressionError(
            f"lhs - rhs is undefined everywhere: a denominator of {diff} is identically zero "
            "(after cos^2 + sin^2 = 1)",
            lhs=lhs, rhs=rhs,
        )
    steps.append(Step(_REDUCE_RULE, diff, canonical.as_trig()))
    if canonical.is_zero:
        return Verdict(PROVED, method, lhs, rhs, tuple(steps))
    witness = find_witness(lhs, rhs)
    if witness is not None:
        residual = _residual(lhs, rhs, witness)
        steps.append(Step(f"evaluate at {format_witness(witness)}", diff, residual))
        return Verdict(REFUTED, "witness", lhs, rhs, tuple(steps), witness=witness, residual=residual)
    why = (
        "canonical form is non-zero but no witness was found among simple exact points"
        if canonical.in_decidable_class
        else "outside the decidable class (canonical form is non-zero) and no witness was found"
    )
    return Verdict(UNKNOWN, method, lhs, rhs, tuple(steps), reason=why)


def _same_range_summands(lhs, rhs):
    """``(f, g)`` when ``lhs = Sum(f, (r, a, b))`` and ``rhs = Sum(g, (k, a, b))`` (``k`` renamed
    to ``r``): equal summands prove the sums equal without ``Sum.doit``, which tries
    Gosper's algorithm and more on summands it cannot sum (~0.1 s each)."""
    if not (isinstance(lhs, sp.Sum) and isinstance(rhs, sp.Sum)):
        return None
    if len(lhs.limits) != 1 or len(rhs.limits) != 1 or len(lhs.limits[0]) != 3 or len(rhs.limits[0]) != 3:
        return None
    (r, a, b), (k, a2, b2) = lhs.limits[0], rhs.limits[0]
    if (a, b) != (a2, b2):
        return None
    g = rhs.function
    if k != r:
        # the summand identity is proved for r under its assumptions: k must carry the same
        if r in rhs.free_symbols or k.assumptions0 != r.assumptions0:
            return None
        g = g.xreplace({k: r})
    return lhs.function, g


def _canonical(diff):
    """The cheap form (each argument its own atom) when it is zero and has no denominator;
    otherwise the full form, which alone can tell that a denominator vanishes identically
    (``cos 2x - cos^2 x + sin^2 x`` is not zero until ``cos 2x`` is split)."""
    cheap = to_trig_polynomial(diff, split=False)
    if cheap.is_zero and not cheap.had_denominator:
        return cheap
    full = to_trig_polynomial(diff)
    if cheap.denominator_vanishes:
        full.denominator_vanishes = True
    if cheap.is_zero and not full.denominator_vanishes:
        return cheap
    return full


def _residual(lhs, rhs, witness):
    return evaluate_at(lhs, witness) - evaluate_at(rhs, witness)


# -- matrices ------------------------------------------------------------------------------------


def _block_terms(m):
    """Per diagonal block, an unevaluated matrix expression, or ``None``.

    Products, sums, transposes and scalar multiples of block-diagonal matrices
    with matching block sizes act block by block; nothing is multiplied out
    here, so that identical blocks can be recognised before any work is done.
    """
    if isinstance(m, BlockDiagMatrix):
        return [b if isinstance(b, MatrixBase) else _explicit(b) for b in m.diag]
    if isinstance(m, MatrixBase):
        return None
    if isinstance(m, Transpose):
        inner = _block_terms(m.arg)
        return None if inner is None else [Transpose(b) for b in inner]
    if isinstance(m, (MatMul, MatAdd)):
        scalars = [a for a in m.args if not isinstance(a, (MatrixBase, MatrixExpr))]
        parts = [_block_terms(a) for a in m.args if isinstance(a, (MatrixBase, MatrixExpr))]
        if any(p is None for p in parts) or len({len(p) for p in parts}) != 1:
            return None
        shapes = [[b.shape for b in p] for p in parts]
        op = MatMul if isinstance(m, MatMul) else MatAdd
        if op is MatAdd and any(s != shapes[0] for s in shapes):
            return None
        if op is MatMul and any(
            left[1] != right[0] for p, q in zip(shapes, shapes[1:]) for left, right in zip(p, q)
        ):
            return None
        return [op(*scalars, *blocks) for blocks in zip(*parts)]
    return None


def _explicit(m):
    """The explicit matrix of ``m``, multiplying explicit factors directly
    (``as_explicit`` on a product goes through one ``Sum`` per entry: 100x slower)."""
    if isinstance(m, MatrixBase):
        return sp.ImmutableMatrix(m)
    if isinstance(m, BlockDiagMatrix):
        return sp.ImmutableMatrix(sp.diag(*[_explicit(b) for b in m.diag]))
    if isinstance(m, Transpose):
        return _explicit(m.arg).T
    if isinstance(m, (MatMul, MatAdd)):
        scalars = [a for a in m.args if not _is_matrix(a)]
        factors = [_explicit(a) for a in m.args if _is_matrix(a)]
        product = reduce(operator.mul if isinstance(m, MatMul) else operator.add, factors)
        return sp.ImmutableMatrix(sp.Mul(*scalars) * product if scalars else product)
    return sp.ImmutableMatrix(m.doit().as_explicit())


def _split_explicit(m, shapes):
    """Diagonal blocks of the explicit ``m`` along ``shapes``, or ``None`` if ``m`` has a
    structurally non-zero entry off them (then the comparison is done entry by entry)."""
    if not isinstance(m, MatrixBase):
        return None
    blocks, row, col = [], 0, 0
    inside = set()
    for rows, cols in shapes:
        blocks.append(sp.ImmutableMatrix(m[row:row + rows, col:col + cols]))
        inside.update((r, c) for r in range(row, row + rows) for c in range(col, col + cols))
        row, col = row + rows, col + cols
    if (row, col) != tuple(m.shape):
        return None
    if any(m[r, c] != 0 for r, c in _nonzero_positions(m) if (r, c) not in inside):
        return None
    return blocks


def _nonzero_positions(m):
    if hasattr(m, "todok"):
        return m.todok().keys()
    return [(r, c) for r in range(m.rows) for c in range(m.cols) if m[r, c] != 0]


def _shape_text(m) -> str:
    return "x".join(str(n) for n in _shape(m))


def _shape(m):
    return tuple(m.shape)


def _prove_matrix(lhs, rhs) -> Verdict:
    if lhs == rhs:
        return Verdict(PROVED, "structural", lhs, rhs, (Step("identical expressions", lhs, rhs),))
    for name, side in (("lhs", lhs), ("rhs", rhs)):
        if not all(isinstance(n, (int, sp.Integer)) for n in _shape(side)):
            raise InvalidInputError(
                f"{name} has the symbolic shape {_shape(side)}; entries are compared one by one, "
                "so give matrices a concrete shape",
                shape=_shape(side),
            )
    if _shape(lhs) != _shape(rhs):
        raise InvalidInputError(
            f"cannot compare matrices of different shapes: lhs is {_shape_text(lhs)}, rhs is {_shape_text(rhs)}"
        )
    left_blocks, right_blocks = _block_terms(lhs), _block_terms(rhs)
    if left_blocks is not None and right_blocks is None:
        right_blocks = _split_explicit(rhs, [b.shape for b in left_blocks])
    elif right_blocks is not None and left_blocks is None:
        left_blocks = _split_explicit(lhs, [b.shape for b in right_blocks])
    if (
        left_blocks is not None
        and right_blocks is not None
        and [b.shape for b in left_blocks] == [b.shape for b in right_blocks]
    ):
        return _prove_blockwise(lhs, rhs, left_blocks, right_blocks)
    return _prove_entrywise(lhs, rhs, _explicit(lhs), _explicit(rhs))


def _prove_entrywise(lhs, rhs, left, right, *, offset=(0, 0)) -> Verdict:
    steps, methods, unknown = [], Counter(), []
    for i in range(left.rows):
        for j in range(left.cols):
            a, b = left[i, j], right[i, j]
            if a == b:
                continue
            verdict = _prove_scalar(_exact_floats(a), _exact_floats(b))
            methods[verdict.method] += 1
            where = f"entry ({i + offset[0]}, {j + offset[1]})"
            steps.extend(Step(f"{where}: {s.rule}", s.before, s.after) for s in verdict.steps)
            if verdict.refuted:
                return Verdict(REFUTED, "witness", lhs, rhs, tuple(steps), witness=verdict.witness,
                               residual=verdict.residual, reason=f"{where} differs")
            if not verdict.proved:
                unknown.append(f"{where}: {verdict.reason}")
    method = "entrywise" + (f" ({', '.join(sorted(methods))})" if methods else " (structural)")
    if unknown:
        return Verdict(UNKNOWN, method, lhs, rhs, tuple(steps), reason="; ".join(unknown[:3]))
    return Verdict(PROVED, method, lhs, rhs, tuple(steps))


_SYMBOL, _MATRIX, _NODE = 0, 1, 2
_KIND_OF_CLASS: dict = {}


def _kind(cls) -> int:
    kind = _KIND_OF_CLASS.get(cls)
    if kind is None:
        if issubclass(cls, sp.Symbol):
            kind = _SYMBOL
        elif issubclass(cls, MatrixBase) and not issubclass(cls, sp.Basic):
            kind = _MATRIX  # a mutable matrix; immutable ones are ordinary nodes (cheap ``args``)
        else:
            kind = _NODE
        _KIND_OF_CLASS[cls] = kind
    return kind


def _signature(node, order: dict) -> tuple:
    """A hashable picture of ``node`` with each symbol replaced by its index of first appearance.

    The picture is the preorder list of ``(class, number of arguments)`` for each
    node, the atoms themselves, and ``("symbol", index)`` for symbols: the arity
    makes the flat list unambiguous.  An explicit stack instead of recursion: at
    ``d_k = 4096`` this runs over ~150 000 nodes and is the blockwise tactic's main cost.
    """
    picture = []
    stack = [node]
    while stack:
        item = stack.pop()
        kind = _kind(item.__class__)
        if kind == _SYMBOL:
            index = order.get(item)
            if index is None:
                index = order[item] = len(order)
            picture.append(("symbol", index))
        elif kind == _MATRIX:
            entries = item.flat()
            picture.append(("matrix", item.rows, item.cols))
            stack.extend(entries[::-1])
        else:
            args = item.args
            if args:
                picture.append((item.func, len(args)))
                stack.extend(args[::-1])
            else:
                picture.append(item)
    return tuple(picture)


def _assumption_key(symbol):
    return ("local", tuple(sorted(symbol.assumptions0.items())))


def _generic_keys(pairs):
    """One key per block statement, equal for blocks equal up to renaming their local symbols.

    A symbol is local when it occurs in one block only.  Two blocks share a key
    only if one is the other with its local symbols renamed, position by
    position, to local symbols with the same assumptions (shared symbols stay
    put): a proof of one block is then a proof of the other.
    """
    pictures = []
    for pair in pairs:
        order: dict = {}
        picture = tuple(_signature(m, order) for m in pair)
        pictures.append((picture, list(order)))
    occurrences = Counter(s for _, symbols in pictures for s in symbols)
    return [
        (picture, tuple(_assumption_key(s) if occurrences[s] == 1 else s for s in symbols))
        for picture, symbols in pictures
    ]


def _prove_blockwise(lhs, rhs, left_blocks, right_blocks) -> Verdict:
    pairs = list(zip(left_blocks, right_blocks))
    generic: dict = {}
    order = []
    for k, key in enumerate(_generic_keys(pairs)):
        if key not in generic:
            generic[key] = k
            order.append(key)
    steps = [Step(
        f"block-diagonal: compare {len(pairs)} blocks; {len(order)} distinct up to renaming "
        "block-local symbols, each proved once as a generic block",
        lhs, rhs,
    )]
    offsets, row = [], 0
    for a, _ in pairs:
        offsets.append(row)
        row += a.rows
    for key in order:
        k = generic[key]
        a, b = (_explicit(m) for m in pairs[k])
        verdict = _prove_entrywise(a, b, a, b, offset=(offsets[k], offsets[k]))
        steps.extend(Step(f"block {k}: {s.rule}", s.before, s.after) for s in verdict.steps)
        if not verdict.proved:
            return Verdict(verdict.status, "blockwise", lhs, rhs, tuple(steps), witness=verdict.witness,
                           residual=verdict.residual, reason=f"block {k}: {verdict.reason}")
    return Verdict(PROVED, "blockwise", lhs, rhs, tuple(steps),
                   details={"blocks": len(pairs), "generic_blocks": len(order)})


# -- the public entry point ---------------------------------------------------------------------


def prove_equal(lhs, rhs) -> Verdict:
    """Decide whether ``lhs`` and ``rhs`` are equal for every value of their symbols.

    Both sides are SymPy expressions, or matrices of the same shape (explicit
    matrices or block-diagonal matrix expressions).  Symbols carry their
    assumptions the SymPy way (``real=True``, ``integer=True``...), and the
    verdict honours them: an identity that needs ``n`` to be an integer is
    proved for an integer symbol and refuted for a real one.

    Returns a :class:`Verdict` whose ``status`` is ``"proved"`` (an exact
    canonical-form argument), ``"refuted"`` (``witness`` maps each free symbol
    to an exact value where the sides certifiably differ) or ``"unknown"``.

    Raises :class:`InvalidInputError` for non-SymPy input (a string, a list, a
    numpy array, a relation), mismatched or symbolic shapes and a matrix
    compared with a scalar; :class:`UndefinedExpressionError` for undefined
    expressions (``nan``, ``zoo``, a denominator that vanishes identically).
    """
    lhs, rhs = _as_sympy(lhs, "lhs"), _as_sympy(rhs, "rhs")
    _check_defined(lhs, "lhs")
    _check_defined(rhs, "rhs")
    if _is_matrix(lhs) != _is_matrix(rhs):
        sides = [
            f"{name} is a {_shape_text(side)} matrix" if _is_matrix(side) else f"{name} is the scalar {_short(side)}"
            for name, side in (("lhs", lhs), ("rhs", rhs))
        ]
        raise InvalidInputError(
            f"cannot compare a matrix with a scalar: {sides[0]}, {sides[1]} "
            "(compare an entry of the matrix, or wrap the scalar in sympy.Matrix([[...]]))"
        )
    if _is_matrix(lhs):
        return _complete_witness(_prove_matrix(lhs, rhs))
    return _prove_scalar(lhs, rhs)


def _complete_witness(verdict: Verdict) -> Verdict:
    """Bind every free symbol of a refuted matrix statement, not only those of the entry
    that differs (the others get their simplest admissible value; they do not change it)."""
    if verdict.witness is None:
        return verdict
    return replace(verdict, witness=complete_witness(verdict.witness, verdict.lhs, verdict.rhs))
