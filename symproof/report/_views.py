"""What a report prints for the expressions of one step: whole, or one representative entry.

A step of the chapter often compares two 3 x 2 matrices of attention outputs whose
entries run to thousands of characters.  Printing them whole makes formulas nobody
reads (and a PDF that shrinks them to dashes); eliding them hides what was checked.
:func:`joint_view` instead keeps a matrix whole when it is short, and otherwise
shows one entry of every matrix of the step, the same entry for each, with the
arguments of ``exp`` named ``s_1, s_2, ...`` (the attention scores) and, when an
entry is still long, its common subterms named ``u_1, u_2, ...``.  The names are
defined once, below the step.  The view is presentation only: the prover compared
every entry of the full expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ._printers import _as_printable, _fitting_latex

__all__ = ["View", "joint_view", "MAX_SHOWN_CHARS", "MAX_ENTRY_CHARS"]

#: a matrix whose LaTeX is longer than this is shown by one entry
MAX_SHOWN_CHARS = 900
#: an entry (or a non-matrix expression) longer than this gets its subterms named
MAX_ENTRY_CHARS = 420
#: at most this many common subterms are named
MAX_DEFINITIONS = 8


@dataclass
class View:
    """The expressions to print, in the order given, and what the reader must be told about them.

    ``entry``: ``(i, j)`` when each matrix is shown by that entry (``shape`` is the full shape);
    ``definitions``: ``(symbol, expression)`` pairs naming subterms of the shown expressions.
    """

    exprs: list
    entry: tuple | None = None
    shape: tuple | None = None
    definitions: list = field(default_factory=list)
    #: ``(anchor, names)`` pairs: names among ``definitions`` that an earlier step of the same claim defined
    #: alike, and the anchor of that step's definitions (set by the document)
    defined_above: tuple = ()
    #: the anchor of these definitions when a later step refers to them
    anchor: str | None = None

    @property
    def entries(self) -> int:
        return self.shape[0] * self.shape[1] if self.shape else 0

    @property
    def new_definitions(self) -> list:
        """``definitions`` less those stated alike above: a page that says "as defined above" prints these."""
        above = {name for _, names in self.defined_above for name in names}
        return [(name, value) for name, value in self.definitions if name not in above]


def _latex_length(expr) -> int:
    text = _fitting_latex(expr)
    return 10**9 if text is None else len(text)


def _is_matrix(expr) -> bool:
    return isinstance(expr, sp.MatrixBase)


def joint_view(values) -> View:
    """One :class:`View` for expressions shown together (the two sides of a relation, a chain's rows)."""
    exprs = [_as_printable(v) if v is not None and not isinstance(v, str) else v for v in values]
    matrices = [e for e in exprs if _is_matrix(e)]
    long_matrix = any(_latex_length(m) > MAX_SHOWN_CHARS for m in matrices)
    shapes = {m.shape for m in matrices}
    shown_values = [e for e in exprs if e is not None and not isinstance(e, str)]
    if shapes == {(1, 1)} and len(matrices) == len(shown_values):
        return joint_view([e[0, 0] if _is_matrix(e) else e for e in exprs])  # a 1 x 1 matrix is its entry
    if long_matrix and len(shapes) == 1 and len(matrices) == len(shown_values):
        shape = shapes.pop()
        i, j = _telling_entry(matrices)
        shown = [e[i, j] if _is_matrix(e) else e for e in exprs]
        shown, definitions = _abbreviate(shown)
        return View(shown, (i, j), shape, definitions)
    if any(_is_scalar(e) and _latex_length(e) > MAX_ENTRY_CHARS for e in exprs):
        shown, definitions = _abbreviate(exprs)
        return View(shown, definitions=definitions)
    return View(exprs)


def _is_scalar(expr) -> bool:
    """A scalar expression (a matrix expression such as a block diagonal prints compactly already)."""
    return isinstance(expr, sp.Expr) and not isinstance(expr, sp.MatrixExpr)


def _telling_entry(matrices):
    """The first entry that is not the same constant in every matrix (an all-zero corner says nothing)."""
    rows, cols = matrices[0].shape
    for i in range(rows):
        for j in range(cols):
            if not all(m[i, j].is_number for m in matrices):
                return i, j
    return 0, 0


def _abbreviate(exprs):
    """Name the arguments of ``exp`` (``s_k``), then, if still long, common subterms (``u_k``)."""
    basics = [e for e in exprs if isinstance(e, sp.Basic)]
    arguments = []
    for e in basics:
        for node in sp.preorder_traversal(e):
            if isinstance(node, sp.exp) and not node.args[0].is_number and node.args[0] not in arguments:
                arguments.append(node.args[0])
    definitions = []
    replace = {}
    if len(arguments) > 0 and any(_latex_length(e) > MAX_ENTRY_CHARS for e in basics):
        for k, argument in enumerate(arguments, start=1):
            name = sp.Symbol(f"s_{k}")
            replace[sp.exp(argument)] = sp.exp(name)
            definitions.append((name, argument))
    shown = [e.xreplace(replace) if isinstance(e, sp.Basic) else e for e in exprs]
    if any(_is_scalar(e) and _latex_length(e) > MAX_ENTRY_CHARS for e in shown):
        positions = [k for k, e in enumerate(shown) if _is_scalar(e)]
        names = sp.numbered_symbols("u_", start=1)
        pairs, reduced = sp.cse([shown[k] for k in positions], symbols=names, optimizations=None, order="none")
        if len(pairs) <= MAX_DEFINITIONS:  # more names than that would read worse than the whole formula
            for k, value in zip(positions, reduced):
                shown[k] = value
            definitions.extend(pairs)
    return shown, definitions
