"""``prove_equal``: decide ``lhs = rhs`` exactly, or exhibit a witness.

The declared fragment
---------------------
Each tactic decides one class of statements and does not fire outside it; a
statement no tactic decides is *unknown*, with a reason naming what is outside.
"Proved" means equal wherever both sides are defined, for every value the
symbols' SymPy assumptions allow.  Before any tactic: each side is checked for
definedness (``nan``/``zoo``; a denominator, a ``log``/``gamma``/``cot``
argument or an ``atanh`` argument ``-+1`` that vanishes identically raises
:class:`UndefinedExpressionError`), floats and decimals are read exactly.

``structural``
    the two sides are the same SymPy tree (after SymPy's own evaluation).
``power``
    both sides are rational multiples of products of powers ``b^e`` of bases
    SymPy knows positive, with exponents it knows real (and ``exp`` of real
    arguments): compared by their logarithms, a linear form in ``log b`` with
    rational-function coefficients (decided by ``cancel``).
``summand-first``
    sums ``Sum(f, (k, a, b))``: two sums over the same range by their summands
    (at a fresh index whose assumptions follow from the range, never from
    ``k``'s declaration); otherwise sums as opaque atoms; otherwise each sum
    closed by the table of :mod:`._sums` (``finite`` ranges up to 1000 terms,
    ``delta``, and ``polynomial``/``geometric``/``telescoping`` antidifferences
    whose difference is itself proved).  ``Sum.doit`` is never trusted.
``trig-polynomial``
    polynomials and ratios of polynomials, with rational coefficients, in
    ``cos``/``sin`` of linear combinations of atoms with rational coefficients
    (``tan, cot, sec, csc`` as quotients; ``exp(a + i y) = exp(a)(cos y + i sin y)``)
    and in other commutative atoms: decided by the canonical form of
    :mod:`._trigpoly` (complete when the atoms are symbols; sound always).  A
    non-commutative argument of a trig function is outside (*unknown*).
``blockwise``
    block-diagonal matrices (``BlockDiagMatrix``, their products, sums,
    transposes and scalar multiples with matching blocks, against another such
    product or an explicit matrix zero off the blocks), block by block; blocks
    equal up to renaming their symbols (same assumptions) are proved once.
``witness``
    a statement is refuted at an exact point (small integers, simple rationals,
    rational multiples of pi, filtered by the assumptions) where both sides are
    certified finite and their difference certified non-zero: exactly, or by a
    rigorous interval enclosure in which discontinuous and branch-cut functions
    are evaluated only away from their jumps and cuts (:mod:`symproof.checker._interval`).

Certificates and the trusted base
---------------------------------
Every *proved* verdict carries a :class:`symproof.checker.Certificate`:
structural (the two sides), trig-polynomial (each application's argument as an
integer combination of pair angles, and the multipliers ``q_k`` with
``numerator = sum q_k (c_k^2 + s_k^2 - 1)``, or a reduction the checker
redoes), power (the two sides), sum (the table entry, its proved
antidifference step, and the rest of the statement), same-range, entrywise
(one certificate per differing entry) and blockwise (the block map with each
block's renaming, one certificate per distinct block).  The checker
(:mod:`symproof.checker`) re-checks them without importing this package: a
reader who trusts it, SymPy's core arithmetic and mpmath's interval arithmetic
need not trust the tactics, their search or their speed-ups.

Budget and failures
-------------------
A call is bounded by a **step budget** (``steps``, default
:data:`DEFAULT_STEPS`): the cooperative check points between tactics, sum
entries, matrix entries, blocks and witness candidates, and inside the
trig-polynomial expansion (one step per ring term built), count steps; past the
budget the answer is *unknown* ("step budget of N steps exhausted").  The count
depends on the statement only, so the verdict is the same on every machine,
busy or idle.  ``timeout`` seconds of wall time (default ``None``: none) are a
safety stop, not a budget: when they pass, :class:`~symproof.TimeLimitExceeded`
leaves the call (it never answers *unknown* because of the clock); on the main
thread a ``SIGALRM`` timer (``signal.setitimer``) interrupts a single long SymPy
call, and the timer and handler are restored.  Any exception from a tactic
other than a :class:`SymproofError` becomes *unknown* with its type and message.

Longer than 600 lines: the dispatcher and the tactics it chooses between (scalar, sums,
trigonometric, matrix, blockwise) share the step recorder and the certificate assembly; the tactics
that stand alone live in their own modules (_sums, _trigpoly, _witness).
"""

from __future__ import annotations

import operator
from fractions import Fraction
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import Any, Mapping

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import (
    Adjoint, BlockDiagMatrix, BlockMatrix, HadamardProduct, Identity, KroneckerProduct, MatAdd, MatMul, MatPow,
    MatrixExpr, MatrixSymbol, Transpose, ZeroMatrix,
)

from .._ground import _display
from .._ground._errors import CertificateError, InvalidInputError, SymproofError, UndefinedExpressionError
from ..checker import Certificate, certificate_holds, check_certificate
from ..checker._check import closed_form
from ..checker._interval import value_at
from . import _budget
from ._sums import OutsideTable, close_sum, range_index
from ._trigpoly import rewrite_trig, to_trig_polynomial
from ._fragment import Outside, parse_statement
from ._witness import (
    complete_witness, condition_holds, defined_context, evaluate_at, expression_size, find_defined_point, find_witness,
    format_witness,
)

__all__ = ["Step", "Verdict", "prove_equal", "PROVED", "REFUTED", "UNKNOWN", "TACTICS", "DEFAULT_TIMEOUT",
           "DEFAULT_STEPS"]

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"

#: the tactics, in the order they are tried
TACTICS = ("structural", "power", "summand-first", "trig-polynomial", "blockwise", "witness")

_REDUCE_RULE = "cos/sin of atoms -> polynomial in (c_u, s_u), reduce mod c_u^2 + s_u^2 - 1"


@dataclass(frozen=True)
class Step:
    """One recorded rewrite: ``rule`` turned ``before`` into ``after``."""

    rule: str
    before: Any
    after: Any


def _shortened(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


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
    #: the evidence of a *proved* verdict, re-checked by :mod:`symproof.checker`
    certificate: Any = field(default=None, compare=False)

    @property
    def proved(self) -> bool:
        return self.status == PROVED

    @property
    def refuted(self) -> bool:
        return self.status == REFUTED

    def __bool__(self) -> bool:
        return self.proved

    def __repr__(self) -> str:
        """One line: the status, the method and the witness (or why unknown); the certificate and the
        steps are attributes, and a notebook shows the formula (``_repr_html_``)."""
        fields = [f"status={self.status!r}", f"method={self.method!r}"]
        if self.witness is not None:
            fields.append(f"witness={_shortened(self.witness_text())!r}")
        if self.reason and self.status != PROVED:
            fields.append(f"reason={_shortened(self.reason)!r}")
        return f"Verdict({', '.join(fields)})"

    def witness_text(self) -> str | None:
        return None if self.witness is None else format_witness(self.witness)

    def _repr_html_(self) -> str:
        """Jupyter's view: the formula, the verdict, the witness (shown by the face, see symproof._ground._display)."""
        return _display.show(self, "html")

    def _repr_markdown_(self) -> str:
        return _display.show(self, "markdown")

    def __str__(self) -> str:
        text = f"{self.status} by {self.method}"
        if self.witness is not None:
            text += f" at {self.witness_text()} (lhs - rhs = {self.residual})"
        if self.reason:
            text += f": {self.reason}"
        return text


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _exact_floats(expr):
    """Floats read as the exact binary rationals they store (closed forms built by a tactic)."""
    if not expr.has(sp.Float):
        return expr
    if isinstance(expr, MatrixBase):
        return expr.applyfunc(_exact_floats)
    return expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})


def _is_matrix(x) -> bool:
    return isinstance(x, (MatrixBase, MatrixExpr))


# -- definedness --------------------------------------------------------------------------------

def _vanishes_identically(expr) -> bool:
    """True when ``expr`` is the zero function (decided by the canonical form, so sound)."""
    if expr.is_Atom or not expr.free_symbols:
        return False
    if any(f.is_commutative is False for f in expr.atoms(sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc)):
        return False
    cheap = to_trig_polynomial(expr, split=False)
    if cheap.is_zero and not cheap.had_denominator:
        return True
    full = to_trig_polynomial(expr)
    return full.is_zero and not full.denominator_vanishes


# -- scalar tactics ----------------------------------------------------------------------------


_TRIG_FUNCTIONS = (sp.sin, sp.cos, sp.tan, sp.cot, sp.sec, sp.csc)


def _non_commutative_trig(expr):
    for f in expr.atoms(*_TRIG_FUNCTIONS):
        if f.is_commutative is False:
            return f
    for f in expr.atoms(sp.exp):
        if f.is_commutative is False and f.args[0].has(sp.I):
            return f
    return None


def _structural(lhs, rhs) -> Verdict:
    return Verdict(PROVED, "structural", lhs, rhs, (Step("identical expressions", lhs, rhs),),
                   certificate=Certificate("structural", lhs, rhs))


def _prove_scalar(lhs, rhs) -> Verdict:
    _budget.check(1 + expression_size(lhs) + expression_size(rhs))  # the tactics read both sides whole
    if lhs == rhs:
        return _structural(lhs, rhs)
    inside = _non_commutative_trig(lhs - rhs)
    if inside is not None:
        return Verdict(UNKNOWN, "trig-polynomial", lhs, rhs,
                       reason=f"non-commutative symbol inside {inside.func.__name__}: {inside} "
                              "(the canonical form is commutative) and no witness (numbers commute)")
    power = _prove_power(lhs, rhs)
    if power is not None:
        return power
    if lhs.has(sp.Sum) or rhs.has(sp.Sum):
        return _prove_with_sums(lhs, rhs)
    return _prove_trig(lhs, rhs, lhs, rhs, "trig-polynomial")


def _is_monomial(expr) -> bool:
    if expr.is_Number:
        return False
    return isinstance(expr, (sp.Mul, sp.Pow, sp.exp, sp.Symbol)) and not expr.has(sp.Sum, *_TRIG_FUNCTIONS)


def _prove_power(lhs, rhs):
    """Tactic ``power``: products of powers of positive bases with real exponents, compared by
    their logarithms (a log-linear normal form); only when one side has a non-integer exponent."""
    if not (_is_monomial(lhs) or _is_monomial(rhs)):
        return None
    if not any(isinstance(p, sp.Pow) and not p.exp.is_Integer for side in (lhs, rhs) for p in side.atoms(sp.Pow)):
        return None
    certificate = Certificate("power", lhs, rhs)
    if not certificate_holds(certificate, top=False):
        return None
    step = Step("positive bases, real exponents: compare log lhs and log rhs as linear forms in the logs", lhs, rhs)
    return Verdict(PROVED, "power", lhs, rhs, (step,), certificate=certificate)


def _prove_with_sums(lhs, rhs) -> Verdict:
    """Tactic ``summand-first``: same-range sums by their summands, then sums as opaque atoms,
    then each sum closed by the table of :mod:`._sums`."""
    same_range = _same_range(lhs, rhs)
    if same_range is not None:
        return same_range
    opaque = _canonical(lhs - rhs)
    if opaque.is_zero and not opaque.denominator_vanishes:
        return _trig_verdict(lhs, rhs, opaque, "summand-first", "the sums cancel as they stand")
    # a sum outside the table stays an opaque atom: sound, and enough when it cancels
    closed, entries, outside = {}, [], []
    for s in sorted(lhs.atoms(sp.Sum) | rhs.atoms(sp.Sum), key=sp.default_sort_key):
        _budget.check()
        try:
            if any(inner != s for inner in s.atoms(sp.Sum)):
                raise OutsideTable(f"nested sum {s}")
            entry = close_sum(s, _prove_scalar)
            closed[s] = closed_form(Certificate("sum", s, s), entry)
            entries.append(entry)
        except OutsideTable as why:
            outside.append(str(why))
    if not entries:
        verdict = _refute(lhs, rhs, [])
        if verdict is not None:
            return verdict
        return Verdict(UNKNOWN, "summand-first", lhs, rhs, reason="; ".join(outside))
    steps = [Step(f"close the sum by the '{e['entry']}' entry of the table", e["sum"], closed[e["sum"]])
             for e in entries]
    lhs_r, rhs_r = _exact_floats(lhs.xreplace(closed)), _exact_floats(rhs.xreplace(closed))
    rest = _prove_scalar(lhs_r, rhs_r)
    steps.extend(rest.steps)
    if rest.proved:
        certificate = Certificate("sum", lhs, rhs, {"sums": tuple(entries), "rest": rest.certificate})
        return Verdict(PROVED, "summand-first", lhs, rhs, tuple(steps), certificate=certificate)
    verdict = _refute(lhs, rhs, steps)
    if verdict is not None:
        return verdict
    return Verdict(UNKNOWN, "summand-first", lhs, rhs, tuple(steps), reason="; ".join(outside + [rest.reason]))


def _same_range(lhs, rhs):
    """Two sums over the same range are equal when their summands are, at every index the
    range allows (a fresh index: the declared assumptions of ``k`` are not used)."""
    if not (isinstance(lhs, sp.Sum) and isinstance(rhs, sp.Sum)):
        return None
    if len(lhs.limits) != 1 or len(rhs.limits) != 1 or len(lhs.limits[0]) != 3 or len(rhs.limits[0]) != 3:
        return None
    (r, a, b), (k, a2, b2) = lhs.limits[0], rhs.limits[0]
    if (a, b) != (a2, b2):
        return None
    try:
        index = range_index(r, a, b)
    except OutsideTable:
        return None
    if (b - a + 1).is_nonnegative is not True:
        # Karr's convention: with b < a - 1 both sums run over b+1..a-1, outside the profile the
        # range a..b shows; the summands must then agree at every integer
        index = sp.Dummy(str(r), integer=True)
    f, g = lhs.function.xreplace({r: index}), rhs.function.xreplace({k: index})
    summands = _prove_scalar(f, g)
    if not summands.proved:
        return None
    certificate = Certificate("same-range", lhs, rhs, {"index": index, "summands": summands.certificate})
    step = Step("same range: the summands are equal (" + _REDUCE_RULE + ")", f - g, 0)
    return Verdict(PROVED, "summand-first", lhs, rhs, (step,), certificate=certificate)


def _trig_certificate(lhs, rhs, canonical):
    data = {
        "pairs": tuple((c, s, angle) for (c, s), angle in zip(canonical.pairs, canonical.angles)),
        "apps": canonical.apps,
        "multipliers": canonical.multipliers,
    }
    return Certificate("trig-polynomial", lhs, rhs, data)


def _has_denominator(expr) -> bool:
    return expr is not None and any(p.exp.is_negative for p in expr.atoms(sp.Pow) if p.base.free_symbols)


def _trig_verdict(lhs, rhs, canonical, method, rule=_REDUCE_RULE):
    certificate = _trig_certificate(lhs, rhs, canonical)
    step = Step(rule, lhs - rhs, canonical.as_trig())
    return Verdict(PROVED, method, lhs, rhs, (step,), certificate=certificate)


#: a statement with this many symbolic denominators is probed for a witness before its common
#: denominator is formed (a sum of 40 tangents has a numerator of 40 factors per term)
_PROBE_DENOMINATORS = 3
_PROBE_POINTS = 24


def _prove_trig(lhs, rhs, lhs_r, rhs_r, method) -> Verdict:
    diff = lhs_r - rhs_r
    if len({p.base for p in rewrite_trig(diff).atoms(sp.Pow)
            if p.exp.is_negative and p.base.free_symbols}) >= _PROBE_DENOMINATORS:
        probe = _refute(lhs, rhs, [], limit=_PROBE_POINTS)
        if probe is not None:
            return probe
    canonical = _canonical(diff)
    if canonical.denominator_vanishes:
        raise UndefinedExpressionError(
            f"lhs - rhs is undefined everywhere: a denominator of {diff} is identically zero "
            "(after cos^2 + sin^2 = 1)",
            lhs=lhs, rhs=rhs,
        )
    if canonical.is_zero:
        return _trig_verdict(lhs, rhs, canonical, method)
    steps = [Step(_REDUCE_RULE, diff, canonical.as_trig())]
    verdict = _refute(lhs, rhs, steps)
    if verdict is not None:
        return verdict
    why = (
        "canonical form is non-zero but no witness was found among simple exact points"
        if canonical.in_decidable_class
        else "outside the decidable class (canonical form is non-zero) and no witness was found"
    )
    return Verdict(UNKNOWN, method, lhs, rhs, tuple(steps), reason=why)


def _refute(lhs, rhs, steps, limit=None):
    witness = find_witness(lhs, rhs, limit=limit)
    if witness is None:
        return None
    residual = _residual(lhs, rhs, witness)
    steps = list(steps) + [Step(f"evaluate at {format_witness(witness)}", lhs - rhs, residual)]
    return Verdict(REFUTED, "witness", lhs, rhs, tuple(steps), witness=witness, residual=residual)


def _canonical(diff):
    """The cheap form (each argument its own atom) when it is zero and has no denominator;
    otherwise the full form, which alone can tell that a denominator vanishes identically
    (``cos 2x - cos^2 x + sin^2 x`` is not zero until ``cos 2x`` is split).

    Sums, products and integrals are opaque atoms: ``expand`` would otherwise rewrite their
    bodies under the declared assumptions of the bound variable, which the range may break.
    """
    bound = {b: sp.Dummy("bound") for b in diff.atoms(ExprWithLimits)}
    if bound:
        form = _canonical(diff.xreplace(bound))
        back = {d: b for b, d in bound.items()}
        form.back.update(back)
        # the certificate speaks of the statement's own sums, not of the stand-ins
        form.apps = tuple((app.xreplace(back), multiples, tuple(k.xreplace(back) for k in constants))
                          for app, multiples, constants in form.apps)
        form.angles = tuple(angle.xreplace(back) for angle in form.angles)
        if form.multipliers is not None:
            form.multipliers = tuple(q.xreplace(back) for q in form.multipliers)
        return form
    cheap = to_trig_polynomial(diff, split=False, certify=True)
    if cheap.is_zero and not cheap.had_denominator:
        return cheap
    _budget.check()
    full = to_trig_polynomial(diff, certify=True)
    if cheap.denominator_vanishes:
        full.denominator_vanishes = True
    if cheap.is_zero and not full.denominator_vanishes:
        return cheap
    return full


def _residual(lhs, rhs, witness):
    """``lhs - rhs`` at the witness: exact from the bottom-up evaluation when both sides are
    rational there, else the sides substituted (a closed form for display)."""
    left, right = value_at(lhs, witness), value_at(rhs, witness)
    if isinstance(left, Fraction) and isinstance(right, Fraction):
        return sp.Rational(left - right)
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
    """The explicit matrix of ``m`` by the engine's own rules, one per class of the matrix
    grammar (never ``doit``: it would evaluate ``Sum``s and other entries unchecked).  Explicit
    factors are multiplied directly (``as_explicit`` on a product builds a ``Sum`` per entry)."""
    if isinstance(m, MatrixBase):
        return sp.ImmutableMatrix(m)
    rule = _EXPLICIT.get(type(m))
    if rule is None:
        raise Outside(f"{type(m).__name__} (no rule makes it explicit)")
    return sp.ImmutableMatrix(rule(m))


def _product_rule(m):
    scalars = [a for a in m.args if not _is_matrix(a)]
    factors = [_explicit(a) for a in m.args if _is_matrix(a)]
    combine = {MatMul: operator.mul, MatAdd: operator.add,
               HadamardProduct: lambda a, b: a.multiply_elementwise(b), KroneckerProduct: _kronecker}[type(m)]
    product = reduce(combine, factors)
    return sp.Mul(*scalars) * product if scalars else product


def _kronecker(a, b):
    return sp.Matrix(a.rows * b.rows, a.cols * b.cols,
                     lambda i, j: a[i // b.rows, j // b.cols] * b[i % b.rows, j % b.cols])


def _power_rule(m):
    base, n = _explicit(m.args[0]), int(m.args[1])
    result = sp.eye(base.rows)
    for _ in range(n):
        result = result * base
    return result


def _block_rule(m):
    grid = m.blocks
    return sp.Matrix.vstack(*[sp.Matrix.hstack(*[_explicit(grid[r, c]) for c in range(grid.cols)])
                              for r in range(grid.rows)])


_EXPLICIT = {
    MatrixSymbol: lambda m: sp.Matrix(*m.shape, lambda i, j: m[i, j]),
    ZeroMatrix: lambda m: sp.zeros(*m.shape),
    Identity: lambda m: sp.eye(m.rows),
    BlockDiagMatrix: lambda m: sp.diag(*[_explicit(b) for b in m.diag]),
    BlockMatrix: _block_rule,
    Transpose: lambda m: _explicit(m.arg).T,
    Adjoint: lambda m: _explicit(m.arg).T.applyfunc(sp.conjugate),
    MatMul: _product_rule, MatAdd: _product_rule, HadamardProduct: _product_rule, KroneckerProduct: _product_rule,
    MatPow: _power_rule,
}


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
        return _structural(lhs, rhs)
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
    steps, methods, unknown, entries = [], Counter(), [], []
    for i in range(left.rows):
        for j in range(left.cols):
            a, b = left[i, j], right[i, j]
            if a == b:
                continue
            _budget.check()  # (the entry's size is counted when it is proved)
            a, b = _exact_floats(a), _exact_floats(b)
            if a == b:
                entries.append((i, j, Certificate("structural", a, b)))
                continue
            verdict = _prove_scalar(a, b)
            methods[verdict.method] += 1
            where = f"entry ({i + offset[0]}, {j + offset[1]})"
            steps.extend(Step(f"{where}: {s.rule}", s.before, s.after) for s in verdict.steps)
            if verdict.refuted:
                return Verdict(REFUTED, "witness", lhs, rhs, tuple(steps), witness=verdict.witness,
                               residual=verdict.residual, reason=f"{where} differs")
            if not verdict.proved:
                unknown.append(f"{where}: {verdict.reason}")
            else:
                entries.append((i, j, verdict.certificate))
    method = "entrywise" + (f" ({', '.join(sorted(methods))})" if methods else " (structural)")
    if unknown:
        return Verdict(UNKNOWN, method, lhs, rhs, tuple(steps), reason="; ".join(unknown[:3]))
    certificate = Certificate("entrywise", lhs, rhs, {"entries": tuple(entries)})
    return Verdict(PROVED, method, lhs, rhs, tuple(steps), certificate=certificate)


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
    """One key per block statement, equal for blocks equal up to renaming their local symbols,
    and each block's symbols in order of first appearance.

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
    keys = [
        (picture, tuple(_assumption_key(s) if occurrences[s] == 1 else s for s in symbols))
        for picture, symbols in pictures
    ]
    return keys, [symbols for _, symbols in pictures]


def _prove_blockwise(lhs, rhs, left_blocks, right_blocks) -> Verdict:
    pairs = list(zip(left_blocks, right_blocks))
    keys, symbols = _generic_keys(pairs)
    generic: dict = {}
    order, plan, counts = [], [], Counter()
    for k, key in enumerate(keys):
        rep = generic.setdefault(key, k)  # one hash of the (large) key per block
        if rep == k:
            order.append(rep)
        counts[rep] += 1
        renaming = {} if rep == k else {
            old: new for old, new in zip(symbols[rep], symbols[k]) if old is not new
        }
        plan.append((rep, renaming))
    steps = [Step(
        f"block-diagonal: compare {len(pairs)} blocks; {len(order)} distinct up to renaming "
        "block-local symbols, each proved once as a generic block",
        lhs, rhs,
    )]
    offsets, row = [], 0
    for a, _ in pairs:
        offsets.append(row)
        row += a.rows
    # the rarest block statements first: a wrong entry makes its block a statement of its own,
    # which is then refuted on that block alone before the generic blocks are proved
    proofs = {}
    for k in sorted(order, key=lambda rep: counts[rep]):
        _budget.check()
        a, b = (_explicit(m) for m in pairs[k])
        verdict = _prove_entrywise(a, b, a, b, offset=(offsets[k], offsets[k]))
        steps.extend(Step(f"block {k}: {s.rule}", s.before, s.after) for s in verdict.steps)
        if not verdict.proved:
            return Verdict(verdict.status, "blockwise", lhs, rhs, tuple(steps), witness=verdict.witness,
                           residual=verdict.residual, reason=f"block {k}: {verdict.reason}")
        proofs[k] = verdict.certificate
    certificate = Certificate("blockwise", lhs, rhs, {"blocks": tuple(plan), "proofs": proofs})
    return Verdict(PROVED, "blockwise", lhs, rhs, tuple(steps), certificate=certificate,
                   details={"blocks": len(pairs), "generic_blocks": len(order)})


# -- the public entry point ---------------------------------------------------------------------


#: steps one ``prove_equal`` call may count before it answers *unknown* ("step budget of N steps exhausted")
DEFAULT_STEPS = 1_000_000

#: the default safety stop of one call, in seconds of wall time: none (the step budget bounds it)
DEFAULT_TIMEOUT = None


def prove_equal(lhs: Any, rhs: Any, *, steps: int | None = DEFAULT_STEPS, timeout: float | None = DEFAULT_TIMEOUT,
                check: bool = True) -> Verdict:
    """Decide whether ``lhs`` and ``rhs`` are equal for every value of their symbols.

    Both sides are SymPy expressions, or matrices of the same shape (explicit
    matrices or block-diagonal matrix expressions).  Symbols carry their
    assumptions the SymPy way (``real=True``, ``integer=True``...), and the
    verdict honours them: an identity that needs ``n`` to be an integer is
    proved for an integer symbol and refuted for a real one.

    Returns a :class:`Verdict` whose ``status`` is ``"proved"`` (an exact
    canonical-form argument, with a ``certificate`` that
    :func:`symproof.checker.check_certificate` re-checks), ``"refuted"``
    (``witness`` maps each free symbol to an exact value where the sides
    certifiably differ) or ``"unknown"`` (with a ``reason``: outside the
    declared fragment, no witness found, a tactic failed internally, the
    certificate was rejected, or the step budget ``steps`` was exhausted;
    ``None`` means no step budget of its own).  The verdict depends on the
    statement and ``steps`` only, never on the machine's speed or load.
    ``timeout``: seconds of wall time after which the call is stopped with
    :class:`symproof.TimeLimitExceeded` (no verdict; ``None``, the default: no
    time limit).  With ``check=True`` (the default)
    every proof's certificate is re-checked by the independent checker before
    it is returned; callers that re-check later (``symproof verify``) pass
    ``check=False`` to do it once.

    Raises :class:`InvalidInputError` for non-SymPy input (a string, a list, a
    numpy array, a relation), mismatched or symbolic shapes and a matrix
    compared with a scalar; :class:`UndefinedExpressionError` for undefined
    expressions (``nan``, ``zoo``, a denominator or a ``log`` argument that
    vanishes identically), before any tactic runs; :class:`symproof.TimeLimitExceeded` when
    ``timeout`` passes, and the step budget of an enclosing computation (``symproof check``'s
    per-property budget) when that is spent first.  No other exception leaves it.
    """
    timeout = _budget.validate_timeout(timeout)
    steps = _budget.validate_steps(steps)
    try:
        with _budget.time_limit(timeout, "prove_equal"), _budget.steps(steps, "prove_equal") as frame:
            try:
                statement = parse_statement(lhs, rhs, _vanishes_identically)
            except Outside as why:
                return Verdict(UNKNOWN, "fragment", lhs, rhs, reason=f"outside the fragment: {why}")
            lhs, rhs = statement.lhs, statement.rhs
            if statement.is_matrix:
                with defined_context(statement.conditions):
                    verdict = _prove_matrix(lhs, rhs)
                verdict = _valid_witness(_complete_witness(verdict), statement.conditions)
            else:
                verdict = _prove_scalar(lhs, rhs)
            if verdict.proved and statement.needs_point:
                verdict = _defined_somewhere(verdict, statement.conditions)
            return _checked(verdict) if check else verdict
    except CertificateError as err:  # a tactic's evidence the checker refused on the way: no proof
        return Verdict(UNKNOWN, "internal", lhs, rhs, reason=f"a step was rejected by the checker: {err.message}")
    except SymproofError:
        raise
    except _budget.StepBudgetExhausted as spent:
        if spent.frame is not frame:  # an enclosing budget: the enclosing work is over, not this call alone
            raise
        return Verdict(UNKNOWN, "budget", lhs, rhs,
                       reason=f"step budget of {steps} steps exhausted (prove_equal(..., steps=N) raises it)")
    except RecursionError:
        return Verdict(UNKNOWN, "internal", lhs, rhs, reason="a tactic failed: the expression is nested too deeply")
    except Exception as err:  # noqa: BLE001 - a tactic's failure is an unknown, never a crash
        return Verdict(UNKNOWN, "internal", lhs, rhs,
                       reason=f"a tactic failed internally ({type(err).__name__}: {_short(err)})")


def _defined_somewhere(verdict: Verdict, conditions) -> Verdict:
    """A statement with side conditions is proved where it is defined: a point where every
    side condition holds (every denominator and pole argument non-zero) shows that this is
    somewhere; the checker re-derives the conditions and re-checks them there."""
    point = find_defined_point(conditions)
    if point is None:
        return replace(verdict, status=UNKNOWN, certificate=None,
                       reason="the two sides agree where they are defined, but no point was found where "
                              "every subterm of both sides is defined")
    certificate = Certificate("defined", verdict.lhs, verdict.rhs, {"point": point, "proof": verdict.certificate})
    return replace(verdict, certificate=certificate)


def _valid_witness(verdict: Verdict, conditions) -> Verdict:
    """A matrix refutation stands only if every entry of both sides is defined at the witness:
    every side condition of the statement (each denominator and pole argument of every entry)
    holds there; the entry that differs was evaluated in full by the search."""
    if verdict.witness is None:
        return verdict
    for condition, kind in conditions:
        _budget.check()
        if not condition_holds(condition, kind, verdict.witness):
            return replace(verdict, status=UNKNOWN, witness=None, residual=None, method="witness",
                           reason=f"the point {format_witness(verdict.witness)} refutes one entry but leaves "
                                  f"{_short(condition)} undefined or zero")
    return verdict


def _checked(verdict: Verdict) -> Verdict:
    """A proof whose certificate the independent checker rejects is not a proof."""
    if not verdict.proved:
        return verdict
    try:
        if verdict.certificate is None:
            raise CertificateError("the proof carries no certificate")
        check_certificate(verdict.certificate)
    except CertificateError as err:
        return replace(verdict, status=UNKNOWN, certificate=None,
                       reason=f"the proof's certificate was rejected by the checker: {err.message}")
    return verdict


def _complete_witness(verdict: Verdict) -> Verdict:
    """Bind every free symbol of a refuted matrix statement, not only those of the entry
    that differs (the others get their simplest admissible value; they do not change it)."""
    if verdict.witness is None:
        return verdict
    return replace(verdict, witness=complete_witness(verdict.witness, verdict.lhs, verdict.rhs))
