"""What a witness box shows: a counterexample, read as one.

A derivation binds its witness symbol by symbol (``x00 = 1, x01 = 0, ...``), because the
prover works on entries.  A reader wants the objects the statement names: the matrix
``X``, the vector ``q``.  :func:`counterexample` gathers the bindings into those objects
(by the derivations' naming of entries: ``x01`` is entry (0, 1) of ``X``, ``q1`` the
component 1 of ``q``), evaluates both sides at the witness, names the entry where they
differ and shows the difference simplified, each with a decimal value.

Presentation only, and exact: values are substituted exactly (:func:`evaluate_at`), an
entry is named as differing only when the difference is certified non-zero, the shown
forms are the engine's canonical forms (``cos²1 + sin²1`` reduced to ``1``) and exact
rational-function arithmetic, and a decimal is printed only when a rigorous interval
enclosure fixes all its digits.  The verdict rests on the certificate, not on this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import reduce

import mpmath
import sympy as sp

from ..checker._interval import PRECISIONS, certainly_different, real_enclosure
from ..prover import evaluate_at, is_certainly_nonzero
from ..prover._trigpoly import to_trig_polynomial
from ._printers import _fitting_latex

__all__ = ["Counterexample", "Value", "counterexample", "display_form", "certified_decimal", "witness_objects"]

#: a side's exact value longer than this (LaTeX characters) is shown by its decimal alone; the
#: difference, the point of the box, is shown exactly up to the longer bound
MAX_EXACT_CHARS = 120
MAX_DIFFERENCE_CHARS = 240
#: how many entries of two matrices are compared to say how many differ (beyond, only the first is found)
MAX_COUNTED_ENTRIES = 64
#: two matrix sides are shown whole in the box when each has at most this many entries and each entry's exact
#: form is at most MAX_EXACT_CHARS long (else the box names the entry that differs and its two values only)
MAX_SHOWN_ENTRIES = 6
#: significant digits of a decimal value
DIGITS = 4
#: a canonical form splitting trig arguments over a common unit is tried only up to this multiple
#: (``cos 1`` beside ``cos(1/100)`` would be ``cos(100 u)``, a polynomial nobody reads)
MAX_SHOWN_MULTIPLE = 6

# how the derivations name entries: x01 is entry (0, 1) of a matrix, q1 component 1 of a vector,
# z00_3 component 3 of the vector Z[0, 0]
_ENTRY = re.compile(r"([A-Za-z]+)(\d)(\d)")
_COMPONENT = re.compile(r"([A-Za-z]+)(\d)")
_BLOCK_COMPONENT = re.compile(r"([A-Za-z]+)(\d)(\d)_(\d+)")

#: the statements' names of the matrices whose entries are named ``q_ij``...; any other letter is
#: the matrix named by that letter in upper case (``x_ij`` of ``X``)
MATRIX_NAMES = {"q": "W_Q", "k": "W_K", "v": "W_V"}
#: entries of a square matrix named by one running index, row by row (``wq0 ... wq3`` of a 2 x 2 ``W_Q``)
FLAT_MATRICES = {"wq": "W_Q", "wk": "W_K"}


@dataclass
class Value:
    """A number at the witness: ``exact`` (None when too long to read: the decimal stands alone) and
    its certified decimal (empty for an integer, which is its own decimal, or when no enclosure
    fixes the digits)."""

    exact: object
    decimal: str = ""


@dataclass
class Counterexample:
    #: ``(names, value)``: the objects bound alike (``W_Q = W_K = W_V = I``), in the order of the names
    objects: list
    left: Value | None = None
    right: Value | None = None
    difference: Value | None = None
    #: ``(i, j)`` of the entry shown when the sides are matrices (``(i,)`` for column vectors), how many
    #: entries they have and differ in
    entry: tuple | None = None
    entries: int = 0
    differing: int = 0
    #: the named values of a computed check (``difference = 2.29``), printed as the check gave them
    named: list = field(default_factory=list)
    #: the two sides at the witness when they are small matrices (shown whole beside the entry), else None
    sides: tuple | None = None
    #: when the exact entries of two small matrices are too long to read: each side's rows of certified
    #: decimals (``"−0.8415"``), shown instead of the exact sides
    decimal_sides: tuple | None = None

    @property
    def decimal_sides_tex(self) -> tuple:
        """Each of :attr:`decimal_sides` as a LaTeX ``bmatrix`` (``1.778 \\times 10^{-4}``, not e-notation)."""
        def tex(decimal: str) -> str:
            mantissa, _, exponent = decimal.replace("\u2212", "-").partition("e")
            return mantissa + (f" \\times 10^{{{int(exponent)}}}" if exponent else "")

        return tuple("\\begin{bmatrix}" + r" \\ ".join(" & ".join(tex(d) for d in row) for row in side)
                     + "\\end{bmatrix}" for side in self.decimal_sides or ())

    @property
    def entry_text(self) -> str:
        """``(0, 1)`` of a matrix, ``1`` of a column vector."""
        return str(self.entry[0]) if len(self.entry) == 1 else "({}, {})".format(*self.entry)

    @property
    def lines(self) -> int:
        """About how many lines the box takes on paper (a matrix is as tall as its rows)."""
        rows = [value.rows for _, value in self.objects if isinstance(value, sp.MatrixBase)]
        return 1 + (self.difference is not None) + max(rows, default=1)


def counterexample(kind: str, before, after, witness) -> Counterexample | None:
    """The counterexample a part's witness shows (``witness``: ``(variable, value)`` pairs)."""
    if not witness:
        return None
    named = [(k, v) for k, v in witness if isinstance(k, str) or isinstance(v, str)]
    point = {k: sp.sympify(v) for k, v in witness if not (isinstance(k, str) or isinstance(v, str))}
    view = Counterexample(witness_objects(point), named=named)
    try:
        sides = _sides(kind, before, after, point)
        if sides is not None:
            _compare(view, *sides)
    except (TypeError, ValueError, ArithmeticError, sp.SympifyError, RecursionError):
        # a value the exact evaluation cannot take (a derivation's own data): the box shows the objects alone
        view.left = view.right = view.difference = view.entry = None
    return view


def _sides(kind, before, after, point):
    if kind == "holds" and isinstance(before, sp.core.relational.Relational):
        left, right = before.lhs, before.rhs
    elif kind in ("differ", "equal") and before is not None and after is not None:
        left, right = before, after
    else:
        return None
    if not (_free(left) or _free(right)):
        point = {}  # the relation is stated at the witness already (cos 3 < cos 0)
    elif any(isinstance(v, sp.Tuple) for v in point.values()):
        return None  # a witness naming several instances at once (D = (0, 3, 6)) is no point
    try:
        left, right = evaluate_at(left, point), evaluate_at(right, point)
    except (TypeError, ValueError, ArithmeticError, sp.SympifyError):
        return None
    if _free(left) or _free(right):
        return None
    return left, right


def _free(value) -> bool:
    return not isinstance(value, (sp.Basic, sp.MatrixBase)) or bool(value.free_symbols)


def _compare(view: Counterexample, left, right) -> None:
    if isinstance(left, sp.MatrixBase) and isinstance(right, sp.MatrixBase):
        if left.shape != right.shape:
            return
        if left.shape == (1, 1):
            left, right = left[0, 0], right[0, 0]
        else:
            cells = [(i, j) for i in range(left.rows) for j in range(left.cols)]
            counted = len(cells) <= MAX_COUNTED_ENTRIES
            differ = []
            for cell in cells:
                if is_certainly_nonzero(left[cell] - right[cell]):
                    differ.append(cell)
                    if not counted:
                        break  # a large matrix: the first differing entry, not how many differ
            if not differ:
                return
            view.entry = differ[0][:1] if left.cols == 1 else differ[0]
            view.entries, view.differing = len(cells), len(differ) if counted else 0
            view.sides = _shown_sides(left, right)
            if view.sides is None:
                view.decimal_sides = _decimal_sides(left, right)
            left, right = left[differ[0]], right[differ[0]]
    if isinstance(left, sp.MatrixBase) or isinstance(right, sp.MatrixBase):
        return
    if not (isinstance(left, sp.Expr) and isinstance(right, sp.Expr)):
        return
    view.left, view.right = _value(left), _value(right)
    view.difference = _value(left - right, MAX_DIFFERENCE_CHARS)


def _shown_sides(left, right):
    """Both sides in their display forms, when they are small enough to show whole; else None."""
    if len(left) > MAX_SHOWN_ENTRIES:
        return None
    shown = tuple(side.applyfunc(display_form) for side in (left, right))
    texts = [_fitting_latex(entry) for side in shown for entry in side]
    return shown if all(text is not None and len(text) <= MAX_EXACT_CHARS for text in texts) else None


def _decimal_sides(left, right):
    """Both sides as rows of certified decimals, when they are small matrices whose every entry has one."""
    if len(left) > MAX_SHOWN_ENTRIES:
        return None
    def decimal(entry) -> str:  # an integer is its own decimal
        return str(entry).replace("-", "\u2212") if entry.is_Integer else certified_decimal(entry)

    sides = tuple([[decimal(side[i, j]) for j in range(side.cols)] for i in range(side.rows)]
                  for side in (left, right))
    return sides if all(d for side in sides for row in side for d in row) else None


def _value(number, limit: int = MAX_EXACT_CHARS) -> Value:
    shown = display_form(number)
    text = _fitting_latex(shown)
    exact = shown if text is not None and len(text) <= limit else None
    return Value(exact, "" if number.is_Integer or shown.is_Integer else certified_decimal(number))


# -- exact display forms --------------------------------------------------------------------------


def display_form(value):
    """The shortest printed of a few exactly equal forms of the number ``value``: as given, with the
    arguments of ``exp`` reduced to their trig canonical form, over one denominator, and the whole
    reduced to its trig canonical form (``cos²1 + sin²1`` is ``1``).  Every form is an identity of the
    one before; a form an enclosure shows to differ (a bug) is never chosen."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or value.is_Rational:
        return value
    inner = value.replace(lambda e: isinstance(e, sp.exp) and e.args[0].has(sp.sin, sp.cos),
                          lambda e: sp.exp(_shortest([e.args[0], *_trig_forms(e.args[0])])))
    candidates = [value, inner, sp.together(inner), *_trig_forms(inner)]
    return _shortest([c for c in candidates if not certainly_different(c, value)] or [value])


def _shortest(candidates):
    def length(expr):
        text = _fitting_latex(expr)
        return 10**9 if text is None else len(text)
    return min(candidates, key=length)  # min keeps the first of equally short forms: deterministic


def _trig_forms(expr) -> list:
    """The trig canonical forms of ``expr`` (each argument its own atom; then over common units),
    mapped back to ``sin``/``cos``; none for an expression with a denominator, whose canonical
    form is that of its numerator only."""
    if not expr.has(sp.sin, sp.cos):
        return []
    forms = []
    for split in (False, True):
        if split and not _small_multiples(expr):
            continue
        form = to_trig_polynomial(expr, split=split)
        if form.had_denominator or form.denominator_vanishes:
            continue
        forms.append(form.as_trig())
    return forms


def _small_multiples(expr) -> bool:
    """Whether the rational coefficients of the trig arguments are small multiples of their common unit."""
    coefficients = {}
    for app in expr.atoms(sp.sin, sp.cos):
        for term in sp.Add.make_args(sp.expand_mul(app.args[0])):
            coeff, rest = term.as_coeff_Mul()
            if coeff.is_Rational:
                coefficients.setdefault(rest, set()).add(coeff)
    for values in coefficients.values():
        unit = sp.Rational(reduce(sp.igcd, [abs(v.p) for v in values]), reduce(sp.ilcm, [v.q for v in values]))
        if unit == 0 or any(abs(v / unit) > MAX_SHOWN_MULTIPLE for v in values):
            return False
    return True


def certified_decimal(value, digits: int = DIGITS) -> str:
    """``value`` to ``digits`` significant digits (``"−0.8415"``, U+2212 minus), only when both ends
    of a rigorous enclosure round to the same digits; empty otherwise (or for a complex value)."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or value.free_symbols:
        return ""
    for prec in PRECISIONS:
        re_part = real_enclosure(value, prec)
        if re_part is None:
            continue
        with mpmath.workprec(prec + 16):
            ends = {_rounded(mpmath.mpf(end), digits) for end in re_part._mpi_}
        if len(ends) == 1:
            return ends.pop().replace("-", "\u2212")
    return ""


def _rounded(number, digits: int) -> str:
    text = mpmath.nstr(number, digits, strip_zeros=False, min_fixed=-4, max_fixed=6)
    return "0" if number == 0 else text


# -- the objects of the statement -----------------------------------------------------------------


def witness_objects(point: dict) -> list:
    """``point``'s bindings gathered into the objects the statement names, equal ones together:
    ``[((W_Q, W_K, W_V), I_2), ((X,), 0_2x2), ...]``; other variables stay as they are."""
    groups: dict = {}
    singles = []
    for variable, value in point.items():
        key = _entry_of(variable)
        if key is None:
            singles.append((variable, value))
        else:
            (kind, name), index = key
            groups.setdefault((kind, name), {})[index] = (variable, value)
    objects = []
    for (kind, name), entries in groups.items():
        value = _assembled(kind, name, entries)
        if value is None:
            singles.extend(entries.values())
        else:
            objects.append(value)
    objects.extend(singles)
    objects.sort(key=_reading_order)
    merged: list = []
    for name, value in objects:
        same = next((m for m in merged if _same(m[1], value)), None)
        if same is None:
            merged.append(([name], value))
        else:
            same[0].append(name)
    return [(tuple(names), value) for names, value in merged]


#: the objects a statement names first, in its order (``X``, then the weights); the others follow by name
READING_ORDER = ("X", "W", "W_Q", "W_K", "W_V")


def _reading_order(pair):
    name = str(pair[0])
    return (READING_ORDER.index(name) if name in READING_ORDER else len(READING_ORDER), sp.default_sort_key(pair[0]))


def _same(a, b) -> bool:
    if isinstance(a, sp.MatrixBase) != isinstance(b, sp.MatrixBase):
        return False
    if isinstance(a, sp.MatrixBase):
        return a.shape == b.shape and a == b
    return isinstance(a, sp.Basic) and isinstance(b, sp.Basic) and a == b and type(a) is type(b)


def _entry_of(variable):
    """``(("matrix", "x"), (0, 1))`` for ``x01``, ``(("vector", "q"), 1)`` for ``q1``..., or None."""
    if not isinstance(variable, sp.Symbol):
        return None
    name = variable.name
    match = _BLOCK_COMPONENT.fullmatch(name)
    if match:
        return ("block", (match.group(1), int(match.group(2)), int(match.group(3)))), int(match.group(4))
    match = _ENTRY.fullmatch(name)
    if match and match.group(1) not in FLAT_MATRICES:
        return ("matrix", match.group(1)), (int(match.group(2)), int(match.group(3)))
    match = _COMPONENT.fullmatch(name)
    if match:
        kind = "flat" if match.group(1) in FLAT_MATRICES else "vector"
        return (kind, match.group(1)), int(match.group(2))
    return None


def _assembled(kind, name, entries):
    """The object of ``entries`` (index -> (variable, value)), or None when they do not fill one."""
    values = {index: value for index, (_, value) in entries.items()}
    if kind == "matrix":
        rows, cols = 1 + max(i for i, _ in values), 1 + max(j for _, j in values)
        if len(values) != rows * cols:
            return None
        matrix = sp.Matrix(rows, cols, lambda i, j: values[(i, j)])
        if matrix.shape == (1, 1):
            # one entry: a weight of width 1 is that number (W_Q = 1); any other entry stays itself (m00)
            return (sp.Symbol(MATRIX_NAMES[name]), matrix[0, 0]) if name in MATRIX_NAMES else None
        return sp.Symbol(MATRIX_NAMES.get(name, name.upper())), sp.ImmutableMatrix(matrix)
    if len(values) < 2 or sorted(values) != list(range(len(values))):
        return None
    ordered = [values[k] for k in range(len(values))]
    if kind == "flat":
        side = int(round(len(ordered) ** 0.5))
        if side * side != len(ordered):
            return None
        return sp.Symbol(FLAT_MATRICES[name]), sp.ImmutableMatrix(side, side, ordered)
    if kind == "block":
        letter, b, t = name
        return sp.Symbol(f"{letter.upper()}_{b}{t}"), sp.Tuple(*ordered)  # Z[b, t] printed Z_bt
    return sp.Symbol(name), sp.Tuple(*ordered)
