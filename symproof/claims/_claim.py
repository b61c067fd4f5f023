"""Claims, and the proof records their derivations write.

A claim is a statement of the chapter with a stable ID.  Its derivation is a
plain function that receives a :class:`Proof` and records *parts*: chains of
equalities whose every step is checked by :func:`prove_equal`, exact
witnesses for "not in general" statements, sign facts, numeric examples
compared to the printed digits, and computed checks backed by the kernels.
The claim is proved exactly when every part is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import sympy as sp

from .._ground._errors import InvalidInputError, SymproofError
from ..prover import PROVED, REFUTED, UNKNOWN, evaluate_at, find_witness, format_witness
from ..prover import complete_witness, is_certainly_nonzero, prove_equal, search_variables

__all__ = ["KINDS", "Claim", "Part", "Proof", "Chain", "claim", "registered_claims"]

#: what a claim says: an identity, a "not in general" warning (proved by a
#: witness), a numeric example (exact value against printed digits), or a
#: measured property of finite-precision kernels, or a generated kernel tested against its exact
#: definition at finitely many positions (numerical evidence, never a proof)
KINDS = ("identity", "not-in-general", "numeric", "measured", "tested")


@dataclass(frozen=True)
class Claim:
    id: str
    section: str
    title: str
    statement: str
    kind: str
    derive: Callable[["Proof"], None]
    assumptions: tuple = ()
    equations: tuple = ()
    name: str = ""
    #: the claims this derivation builds on (IDs), which reports link both ways
    uses: tuple = ()

    @property
    def module(self) -> str:
        return self.derive.__module__


_REGISTRY: dict = {}


def claim(id: str, *, section: str, title: str, statement: str, kind: str = "identity",
          assumptions: Iterable[str] = (), equations: Iterable[str] = (),
          uses: Iterable[str] = ()) -> Callable[[Callable], Callable]:
    """Register the decorated function as the derivation of claim ``id``; ``uses`` names the claims
    it builds on (checked against the registry when the claims are loaded)."""
    if kind not in KINDS:
        raise InvalidInputError(f"claim {id!r}: kind must be one of {KINDS}, got {kind!r}")
    if isinstance(uses, str) or not all(isinstance(u, str) for u in uses) or id in uses:
        raise InvalidInputError(f"claim {id!r}: uses must be a tuple of other claim IDs, got {uses!r}")

    def register(func):
        if id in _REGISTRY and _REGISTRY[id].derive.__qualname__ != func.__qualname__:
            raise InvalidInputError(f"claim ID {id!r} is registered twice "
                                    f"({_REGISTRY[id].module} and {func.__module__})")
        _REGISTRY[id] = Claim(id=id, section=section, title=title, statement=statement, kind=kind,
                              derive=func, assumptions=tuple(assumptions), equations=tuple(equations),
                              name=func.__name__, uses=tuple(uses))
        return func

    return register


def registered_claims() -> dict:
    return dict(_REGISTRY)


@dataclass
class Part:
    """One checked piece of a derivation."""

    kind: str  # "equal", "differ", "holds", "digits", "check", "raises"
    rule: str
    before: Any = None
    after: Any = None
    status: str = UNKNOWN
    method: str = ""
    seconds: float = 0.0
    witness: Mapping | None = None
    residual: Any = None
    detail: str = ""
    verdict: Any = None
    data: Any = None
    chain: int | None = None
    #: how a report names the two sides (LaTeX, unevaluated: ``("F(PX)", "P F(X)")``); presentation only,
    #: the prover compares ``before`` and ``after``
    shown: tuple | None = None

    @property
    def witness_text(self) -> str | None:
        return None if self.witness is None else format_witness(self.witness)


class Chain:
    """``lhs = e1 = e2 = ... = rhs``, each ``=`` checked by the prover."""

    def __init__(self, proof: "Proof", index: int, lhs, rhs, label: str, shown: str | None = None):
        self._proof, self.index, self.lhs, self.rhs, self.label = proof, index, lhs, rhs, label
        self.shown = shown
        self.current = lhs
        self._current_shown = shown

    def step(self, rule: str, expr, *, shown: str | None = None) -> "Chain":
        """Rewrite the current expression into ``expr`` by ``rule``; the prover checks it.

        ``shown``: the new expression as a reader writes it (LaTeX, unevaluated), for reports.
        """
        # each step is checked from the expression the previous step stated, proved or
        # not: a wrong step is reported once, and the steps after it are judged on their own
        self._proof._equal(rule, self.current, expr, chain=self.index,
                           shown=None if shown is None else (self._current_shown, shown))
        self.current = expr
        self._current_shown = shown
        return self

    @property
    def closed(self) -> bool:
        return _same(self.current, self.rhs)


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except TypeError:
        return False


class Proof:
    """The record a derivation writes; see the module docstring."""

    def __init__(self, claim: Claim):
        self.claim = claim
        self.parts: list = []
        self.chains: list = []
        self.notes: list = []
        self.tables: list = []

    # -- recording ----------------------------------------------------------------------------
    def note(self, text: str) -> None:
        """Prose between steps, shown in reports."""
        self.notes.append((len(self.parts), text))

    def table(self, title: str, header, rows) -> None:
        """A table of values (a measured table, an example's numbers) for the report."""
        self.tables.append({"title": title, "header": list(header), "rows": [list(r) for r in rows],
                            "after_part": len(self.parts)})

    def _add(self, part: Part) -> Part:
        self.parts.append(part)
        return part

    def _equal(self, rule, lhs, rhs, chain=None, shown=None) -> Part:
        start = time.perf_counter()
        try:
            # the runner re-checks every certificate once the derivation has run
            verdict = prove_equal(lhs, rhs, check=False)
        except SymproofError as err:
            raise err.with_context(claim=self.claim.id, step=rule)
        return self.record(rule, verdict, seconds=time.perf_counter() - start, chain=chain, shown=shown)

    def record(self, rule: str, verdict, *, seconds: float = 0.0, chain=None, shown=None) -> Part:
        """Record a :class:`Verdict` of ``prove_equal`` computed elsewhere as an equality step."""
        return self._add(Part("equal", rule, verdict.lhs, verdict.rhs, verdict.status, verdict.method,
                              seconds, verdict.witness, verdict.residual, verdict.reason, verdict,
                              chain=chain, shown=_shown_pair(shown)))

    def undecided(self, kind: str, rule: str, detail: str, *, method: str = "") -> Part:
        """A step that could not be decided: it keeps the claim ``unknown`` and says why."""
        return self._add(Part(kind, rule, status=UNKNOWN, method=method, detail=detail))

    # -- the statements a derivation can make ----------------------------------------------------
    def chain(self, lhs, rhs, label: str = "", *, shown: str | None = None) -> Chain:
        """Open a chain of equalities from ``lhs`` that must end at ``rhs`` (``shown``: ``lhs`` in LaTeX)."""
        chain = Chain(self, len(self.chains), lhs, rhs, label, shown)
        self.chains.append(chain)
        return chain

    def equal(self, rule: str, lhs, rhs, *, shown: tuple | None = None) -> Part:
        """A one-step identity ``lhs = rhs``.

        ``shown``: the two sides as a reader writes them, unevaluated (LaTeX, ``("F(PX)", "P F(X)")``);
        reports print them above the computed expressions.
        """
        return self._equal(rule, lhs, rhs, shown=shown)

    def differ(self, rule: str, lhs, rhs, *, witness: Mapping | None = None,
               fixed: Mapping | None = None, shown: tuple | None = None) -> Part:
        """``lhs != rhs`` in general: an exact witness, given or searched, re-checked exactly.

        ``witness`` pins every free symbol; ``fixed`` pins some and searches the rest; ``shown`` as
        for :meth:`equal`.
        """
        start = time.perf_counter()
        lhs_s, rhs_s = _sympify_pair(lhs, rhs)
        if witness is None:
            witness = _search(lhs_s, rhs_s, fixed)
        status, residual, detail = UNKNOWN, None, "no witness found"
        if witness is not None:
            missing = search_variables(lhs_s, rhs_s) - set(witness)
            if missing:
                detail = f"witness leaves {sorted(map(str, missing))} unbound"
            else:
                residual = _residual(lhs_s, rhs_s, witness)
                ok = is_certainly_nonzero(residual)
                status = PROVED if ok else UNKNOWN
                detail = "" if ok else f"the two sides are not shown to differ at {format_witness(witness)}"
        return self._add(Part("differ", rule, lhs_s, rhs_s, status, "witness",
                              time.perf_counter() - start, witness, residual, detail, shown=_shown_pair(shown)))

    def holds(self, rule: str, condition, *, witness: Mapping | None = None) -> Part:
        """A sign or order fact (``expr > 0``...) decided by SymPy's assumption system.

        Pass the relation unevaluated (``sp.Lt(cos(3), cos(0, evaluate=False), evaluate=False)``)
        so that a report shows what is compared, not ``True``; ``witness`` names the values a
        "not in general" fact is an instance at (shown, not used to decide).
        """
        start = time.perf_counter()
        decided = _decide(condition)
        status = PROVED if decided is True else (REFUTED if decided is False else UNKNOWN)
        return self._add(Part("holds", rule, condition, decided, status, "assumptions",
                              time.perf_counter() - start, witness=witness))

    def digits(self, rule: str, exact, printed: str) -> Part:
        """An exact value against digits printed in the chapter (rounded to their last place)."""
        start = time.perf_counter()
        exact = sp.sympify(exact)
        if "." in printed:
            places = len(printed.split(".")[1])
            half = sp.Rational(1, 2 * 10**places)
            status, gap = _within(exact - sp.Rational(printed), half)
            detail = f"|exact - {printed}| = {gap} (must be < {half})"
        else:
            same = prove_equal(exact, sp.Integer(printed))
            status, detail = same.status, str(same)
        return self._add(Part("digits", rule, exact, printed, status, "exact evaluation",
                              time.perf_counter() - start, detail=detail))

    def check(self, rule: str, passed: bool, detail: str = "", *, data=None,
              witness: Mapping | None = None) -> Part:
        """A computed check (kernels, exact rational arithmetic) with its evidence."""
        return self._add(Part("check", rule, status=PROVED if passed else REFUTED, method="computed",
                              detail=detail, data=data, witness=witness))

    def raises(self, rule: str, error: type, func: Callable, *args, **kwargs) -> Part:
        """``func(*args)`` must refuse with ``error`` (an all-masked row, a position past a table)."""
        start = time.perf_counter()
        try:
            func(*args, **kwargs)
        except error as err:
            return self._add(Part("raises", rule, status=PROVED, method="raises",
                                  seconds=time.perf_counter() - start,
                                  detail=f"{type(err).__name__}: {err}"))
        return self._add(Part("raises", rule, status=REFUTED, method="raises",
                              seconds=time.perf_counter() - start,
                              detail=f"expected {error.__name__}, nothing was raised"))


def _within(difference, half):
    """Whether ``|difference| < half``, decided on a certified interval enclosure of ``difference``
    (never a floating-point evaluation): PROVED inside, REFUTED wholly outside, else UNKNOWN; and the
    gap's midpoint to five digits, for the reader."""
    import mpmath
    from mpmath import iv

    from ..checker._interval import PRECISIONS, real_enclosure

    difference = sp.sympify(difference)
    if difference.is_Rational:  # exact: a tie at half a unit is decided too
        return (PROVED if abs(difference) < half else REFUTED), mpmath.nstr(mpmath.mpf(abs(difference).p) /
                                                                           abs(difference).q, 5)
    gap = "?"
    for prec in PRECISIONS:
        real = real_enclosure(difference, prec)
        if real is None:
            continue
        old = iv.prec
        try:
            iv.prec = prec
            size, bound = abs(real), iv.mpf(half.p) / half.q  # |d| in [size.a, size.b]; half in [bound.a, bound.b]
            gap = mpmath.nstr(mpmath.mpf(size.mid), 5)
            if size.b < bound.a:
                return PROVED, gap
            if size.a > bound.b:
                return REFUTED, gap
        finally:
            iv.prec = old
    return UNKNOWN, gap


def _shown_pair(shown):
    if shown is None:
        return None
    pair = tuple(shown)
    if len(pair) != 2 or not all(side is None or isinstance(side, str) for side in pair):
        raise InvalidInputError(f"shown must be a pair of LaTeX strings (lhs, rhs), got {shown!r}")
    return pair


def _sympify_pair(lhs, rhs):
    return sp.sympify(lhs), sp.sympify(rhs)


def _search(lhs, rhs, fixed):
    if isinstance(lhs, sp.MatrixBase):
        for a, b in zip(lhs, rhs):
            if a != b:
                found = find_witness(a, b, fixed=fixed)
                if found is not None:
                    return complete_witness(found, lhs, rhs)
        return None
    return find_witness(lhs, rhs, fixed=fixed)


def _residual(lhs, rhs, witness):
    if isinstance(lhs, sp.MatrixBase):
        diff = (evaluate_at(lhs, witness) - evaluate_at(rhs, witness))
        nonzero = [e for e in diff if is_certainly_nonzero(e)]
        return nonzero[0] if nonzero else diff[0]
    return evaluate_at(lhs, witness) - evaluate_at(rhs, witness)


def _decide(condition):
    condition = sp.sympify(condition)
    if condition in (sp.true, sp.false):
        return bool(condition)
    if isinstance(condition, sp.core.relational.Relational):
        # an unevaluated relation (kept so that reports show it) holds unevaluated sides too
        diff = (condition.lhs - condition.rhs).doit()
        query = {
            sp.StrictLessThan: "is_negative", sp.LessThan: "is_nonpositive",
            sp.StrictGreaterThan: "is_positive", sp.GreaterThan: "is_nonnegative",
            sp.Equality: "is_zero", sp.Unequality: "is_nonzero",
        }[type(condition)]
        return getattr(diff, query)
    return None
