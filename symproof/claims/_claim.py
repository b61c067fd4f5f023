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

__all__ = ["KINDS", "ROUNDINGS", "Calculation", "CalculationLine", "Claim", "Part", "Proof", "Chain", "claim", "registered_claims", "enclosure_texts"]

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
    #: ``(calculation, line)``: the line of a worked calculation this part checks (:class:`Calculation`)
    line: tuple | None = None

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


@dataclass
class CalculationLine:
    """One line of a worked calculation: ``forms[0] = forms[1] = ... = value ≈ printed``.

    ``forms`` are how the reader writes the quantity (LaTeX, presentation only); ``value`` is its exact
    value, which the line's parts check: each printed entry against the exact one (:meth:`Proof.digits`),
    and ``value = equals`` exactly when ``equals`` is given.
    """

    label: str
    forms: tuple
    value: Any
    printed: tuple = ()
    roundings: tuple = ()
    #: ``(name, expr)``: another exact value of the calculation this one equals (LaTeX name, SymPy value)
    equals: tuple | None = None
    #: whether the exact value is printed (a long trigonometric sum the line names by an equal value is not)
    show_value: bool = True
    #: the indices of the line's parts in :attr:`Proof.parts`
    parts: list = None


class Calculation:
    """A worked example as the chapter calculates it: the data ``given``, then lines in the chapter's order,
    every number on them checked against its exact value (:meth:`line`)."""

    def __init__(self, proof: "Proof", index: int, given, label: str = ""):
        self._proof, self.index, self.label = proof, index, label
        #: the data, one LaTeX formula each (``q = (1, 2)^T``, ``\omega = 1``)
        self.given = (given,) if isinstance(given, str) else tuple(given)
        self.lines: list = []

    def line(self, label: str, forms, value, printed=None, *, rounding="nearest", equals: tuple | None = None,
             show_value: bool = True) -> "CalculationLine":
        """Add a line: ``forms`` (LaTeX, one string or several joined by ``=``) equal ``value`` (exact),
        shown as ``printed`` (the chapter's digits: one string, or one per entry of a vector; an integer
        string is an exact value); ``rounding`` as for :meth:`Proof.digits`, one for all entries or one each;
        ``equals=(name, expr)``: ``value = expr`` exactly, proved."""
        forms = (forms,) if isinstance(forms, str) else tuple(forms)
        value = sp.sympify(value)
        entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
        printed = () if printed is None else ((printed,) if isinstance(printed, str) else tuple(printed))
        roundings = (rounding,) * len(printed) if isinstance(rounding, str) else tuple(rounding)
        if printed and (len(printed) != len(entries) or len(roundings) != len(printed)):
            raise InvalidInputError(f"calculation line {label!r}: {len(entries)} exact entries, "
                                    f"{len(printed)} printed values and {len(roundings)} roundings")
        line = CalculationLine(label, forms, value, printed, roundings, equals, show_value, [])
        where = (self.index, len(self.lines))
        self.lines.append(line)
        for k, (entry, digits, how) in enumerate(zip(entries, printed, roundings)):
            name = forms[0] if len(entries) == 1 else f"({forms[0]})_{k}"
            line.parts.append(len(self._proof.parts))
            self._proof.digits(f"{label}: ${name}$", entry, digits, rounding=how).line = where
        if equals is not None:
            name, expr = equals
            line.parts.append(len(self._proof.parts))
            self._proof.equal(f"{label}: equal to ${name}$", value, expr, shown=(forms[0], name)).line = where
        return line


class Proof:
    """The record a derivation writes; see the module docstring."""

    def __init__(self, claim: Claim):
        self.claim = claim
        self.parts: list = []
        self.chains: list = []
        self.notes: list = []
        self.tables: list = []
        self.calculations: list = []

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

    def calculation(self, given, label: str = "") -> Calculation:
        """Open a worked calculation from the data ``given`` (LaTeX: one formula, or one per datum) and its
        ``label`` (words, ``"angles in radians"``); its lines follow (:meth:`Calculation.line`)."""
        calculation = Calculation(self, len(self.calculations), given, label)
        self.calculations.append(calculation)
        return calculation

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

    def digits(self, rule: str, exact, printed: str, *, rounding: str = "nearest") -> Part:
        """An exact value against digits printed in the chapter: ``rounding="nearest"``, the printed digits
        are the value rounded to their last place; ``"truncated"``, the value cut after their last place.

        Decided on a decimal enclosure of the exact value (a rigorous interval, rounded outward), compared
        with exact rationals; the enclosure is recorded in ``data`` and named in ``detail``, so what a report
        shows is what was proved.
        """
        if rounding not in ROUNDINGS:
            raise InvalidInputError(f"digits {rule!r}: rounding must be one of {ROUNDINGS}, got {rounding!r}")
        start = time.perf_counter()
        exact = sp.sympify(exact)
        if "." in printed:
            places = len(printed.split(".")[1])
            status, enclosure = _rounds_to(exact, printed, places, rounding)
            data = {"printed": printed, "places": places, "rounding": rounding, "enclosure": enclosure,
                    "rounded": _rounded_digits(enclosure, places)}
            detail = _digits_detail(data, status)
        else:
            if rounding != "nearest":
                raise InvalidInputError(f"digits {rule!r}: an integer {printed!r} is exact, not {rounding}")
            same = prove_equal(exact, sp.Integer(printed))
            status, detail, data = same.status, str(same), {"printed": printed, "places": 0, "rounding": "exact",
                                                           "enclosure": None, "rounded": printed}
        return self._add(Part("digits", rule, exact, printed, status, "exact evaluation",
                              time.perf_counter() - start, detail=detail, data=data))

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


#: how printed digits relate to the exact value (:meth:`Proof.digits`)
ROUNDINGS = ("nearest", "truncated")
#: decimals an enclosure shows past the printed ones, at least and at most
_ENCLOSURE_EXTRA = (2, 16)


def _allowed(printed: str, places: int, rounding: str):
    """The values whose digits print as ``printed``: ``(low, high, low_closed, high_closed)``."""
    value, unit = sp.Rational(printed), sp.Rational(1, 10**places)
    if rounding == "nearest":  # a tie is not decided by the digits alone: both ends open
        return value - unit / 2, value + unit / 2, False, False
    if printed.startswith("-"):  # cut toward zero
        return value - unit, value, False, True
    return value, value + unit, True, False


def _inside(lo, hi, allowed) -> bool:
    low, high, low_closed, high_closed = allowed
    return (lo >= low if low_closed else lo > low) and (hi <= high if high_closed else hi < high)


def _outside(lo, hi, allowed) -> bool:
    low, high, low_closed, high_closed = allowed
    return (hi < low if low_closed else hi <= low) or (lo > high if high_closed else lo >= high)


def _rounds_to(exact, printed: str, places: int, rounding: str):
    """``(status, (lo, hi))``: whether ``exact`` prints as ``printed``, decided on the decimal interval
    ``[lo, hi]`` that encloses it (a point when it is a short decimal), with the fewest decimals that decide."""
    import mpmath

    from ..checker._interval import PRECISIONS, real_enclosure

    allowed = _allowed(printed, places, rounding)
    if exact.is_Rational:
        bounds = [(exact, exact)]
    else:
        reals = (real_enclosure(exact, prec) for prec in PRECISIONS)
        bounds = (tuple(sp.Rational(*mpmath.libmp.to_rational(end)) for end in real._mpi_)
                  for real in reals if real is not None)
    shown = None
    for low, high in bounds:
        for decimals in range(places + _ENCLOSURE_EXTRA[0], places + _ENCLOSURE_EXTRA[1] + 1):
            scale = 10**decimals
            lo, hi = sp.Rational(sp.floor(low * scale), scale), sp.Rational(sp.ceiling(high * scale), scale)
            shown = (lo, hi)
            if _inside(lo, hi, allowed):
                return PROVED, shown
            if _outside(lo, hi, allowed):
                return REFUTED, shown
    return UNKNOWN, shown


def decimal_text(value, decimals: int) -> str:
    """A rational whose denominator divides ``10**decimals`` as a decimal (``-1.14264034``)."""
    value = sp.Rational(value)
    sign, value = ("-" if value < 0 else ""), abs(value)
    whole, rest = divmod(value.p * 10**decimals // value.q, 10**decimals)
    return f"{sign}{whole}.{rest:0{decimals}d}" if decimals else f"{sign}{whole}"


def enclosure_texts(data) -> tuple | None:
    """A digits part's enclosure as two decimals of the same length, or None (undecided, or an integer)."""
    enclosure = data.get("enclosure") if data else None
    if not enclosure:
        return None
    decimals = max([data["places"]] + [_decimals(end) for end in enclosure])
    return tuple(decimal_text(end, decimals) for end in enclosure)


def _decimals(value) -> int:
    count = 0
    while (sp.Rational(value) * 10**count).q != 1:
        count += 1
    return count


def _rounded_digits(enclosure, places: int) -> str | None:
    """The value rounded to ``places`` decimals, when the whole enclosure rounds alike and off a tie (else None)."""
    if not enclosure:
        return None
    scaled = [end * 10**places + sp.Rational(1, 2) for end in enclosure]
    ends = {sp.floor(x) for x in scaled}
    if len(ends) != 1 or any(x.is_integer for x in scaled):
        return None
    return decimal_text(sp.Rational(ends.pop(), 10**places), places)


def _digits_detail(data, status) -> str:
    """What was shown about the printed digits, as the engine's plain text."""
    texts = enclosure_texts(data)
    printed, places = data["printed"], data["places"]
    if texts is None:
        return f"no enclosure of the exact value decides whether it prints as {printed}"
    lo, hi = texts
    where = f"exact = {lo}" if lo == hi else f"exact in [{lo}, {hi}]"
    how = "rounded" if data["rounding"] == "nearest" else "cut"
    said = {PROVED: "", REFUTED: "not ", UNKNOWN: "perhaps "}[status]
    rounded = f" (rounded it is {data['rounded']})" if data["rounded"] not in (None, printed) else ""
    return f"{where}, so {how} to {places} decimals it is {said}{printed}{rounded}"


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
