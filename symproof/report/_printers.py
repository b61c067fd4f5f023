"""LaTeX and MathML printers that know symproof's objects.

SymPy's printers dispatch on the class of each node (``_print_<Class>``); the
two printers here add what a proof report needs and nothing else:

- a block-diagonal matrix of rotations prints as ``blockdiag(R(x0), ..., R(xn))``
  (``A(x)`` for the sinusoidal shift ``R(x)^T``), not as a 4096-wide matrix;
- long sums keep their first and last terms around an ellipsis, and large
  explicit matrices keep their corners, so a concrete-width instance stays
  readable; the elision is visible in the output (``\\cdots``, ``\\vdots``),
  never silent.

Everything else is SymPy's own printing, so what a reader sees is what the
prover compared.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatMul
from sympy.printing.latex import LatexPrinter
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE, precedence_traditional

from ..encodings import rotation, sin_shift

__all__ = [
    "ReportLatexPrinter", "ReportMathMLPrinter", "to_latex", "to_mathml", "latex_to_mathml",
    "mathml_relation", "latex_relation",
    "split_prose", "text_with_math_to_mathml", "MATHML_NAMESPACE",
]

MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"

#: a sum with more terms than this keeps HEAD_TERMS first and TAIL_TERMS last terms
MAX_TERMS = 8
HEAD_TERMS = 3
TAIL_TERMS = 2
#: a formula whose LaTeX would exceed this many characters is shown as a labelled placeholder
MAX_FORMULA_CHARS = 4000
#: ... and so is one with more shown nodes than this, found without printing it at all
MAX_FORMULA_NODES = 600
#: a matrix or block-diagonal list longer than this keeps its first HEAD_ENTRIES and its last entry
MAX_ENTRIES = 6
HEAD_ENTRIES = 3


def _kept_indices(count: int, limit: int = MAX_ENTRIES, head: int = HEAD_ENTRIES):
    """Indices shown of ``count`` entries; ``None`` marks where the elided ones were."""
    if count <= limit:
        return list(range(count))
    return list(range(head)) + [None, count - 1]


class _TooLong(Exception):
    """Raised inside a budgeted printer as soon as one sub-formula exceeds the budget."""


def _precedence(item):
    # SymPy's precedence of a MatMul asks could_extract_minus_sign(), which multiplies the
    # matrices out (minutes for a 256-block diagonal): a product of matrices binds like Mul
    if isinstance(item, MatMul):
        return PRECEDENCE["Mul"]
    return precedence_traditional(item)


def _matmul_factors(expr):
    """``(negative, factors)`` of a matrix product without multiplying anything out."""
    factors = list(expr.args)
    lead = factors[0]
    if lead.is_number and lead.is_extended_negative:
        factors = factors[1:] if lead == -1 else [-lead] + factors[1:]
        return True, factors
    return False, factors


def _named_block(block):
    """``("R", x)`` for ``rotation(x)``, ``("A", x)`` for ``sin_shift(x)``, else ``None``."""
    if not (getattr(block, "shape", None) == (2, 2) and isinstance(block, sp.MatrixBase)):
        return None
    corner = block[0, 0]
    if not isinstance(corner, sp.cos):
        return None
    angle = corner.args[0]
    if block == rotation(angle):
        return "R", angle
    if block == sin_shift(angle):
        return "A", angle
    return None


class ReportLatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with compact block-diagonal rotations and visible elision."""

    printmethod = "_symproof_latex"

    def __init__(self, settings=None, *, budget: int | None = None):
        super().__init__(settings)
        self._budget = budget

    def _print(self, expr, **kwargs):
        text = super()._print(expr, **kwargs)
        if self._budget is not None and len(text) > self._budget:
            raise _TooLong
        return text

    def parenthesize(self, item, level, is_neg=False, strict=False):
        if is_neg and strict or _precedence(item) < level or (not strict and _precedence(item) <= level):
            return self._add_parens(self._print(item))
        return self._print(item)

    def _print_MatMul(self, expr):
        negative, factors = _matmul_factors(expr)
        level = PRECEDENCE["Mul"]
        text = " ".join(self._print(f) if isinstance(f, sp.Mul) and not isinstance(f, MatMul)
                        else self.parenthesize(f, level) for f in factors)
        return "- " + text if negative else text

    def _print_BlockDiagMatrix(self, expr):
        blocks = expr.args
        shown = []
        for k in _kept_indices(len(blocks)):
            shown.append(r"\ldots" if k is None else self._print_block(blocks[k]))
        return r"\operatorname{blockdiag}\left(" + ", ".join(shown) + r"\right)"

    def _print_block(self, block):
        named = _named_block(block)
        if named is None:
            return self._print(block)
        letter, angle = named
        return letter + r"\left(" + self._print(angle) + r"\right)"

    def _print_Add(self, expr, order=None):
        terms = self._as_ordered_terms(expr, order=order)
        if len(terms) <= MAX_TERMS:
            return super()._print_Add(expr, order=order)
        head, tail = terms[:HEAD_TERMS], terms[-TAIL_TERMS:]
        text = self._signed_terms(head, first=True) + r" + \cdots"
        return text + self._signed_terms(tail, first=False)

    def _signed_terms(self, terms, *, first: bool) -> str:
        out = ""
        for k, term in enumerate(terms):
            leading = first and k == 0
            if term.could_extract_minus_sign():
                out += ("- " if leading else " - ") + self._print_term(-term)
            else:
                out += ("" if leading else " + ") + self._print_term(term)
        return out

    def _print_term(self, term):
        text = self._print(term)
        return r"\left(" + text + r"\right)" if isinstance(term, sp.Add) else text

    def _print_MatrixBase(self, expr):
        rows, cols = expr.shape
        if rows <= MAX_ENTRIES and cols <= MAX_ENTRIES:
            return super()._print_MatrixBase(expr)
        lines = []
        for i in _kept_indices(rows):
            cells = []
            for j in _kept_indices(cols):
                if i is None:
                    cells.append(r"\ddots" if j is None else r"\vdots")
                else:
                    cells.append(r"\cdots" if j is None else self._print(expr[i, j]))
            lines.append(" & ".join(cells))
        body = r"\\".join(lines)
        return r"\left[\begin{matrix}" + body + r"\end{matrix}\right]_{" + f"{rows}" + r"\times" + f"{cols}" + "}"


class ReportMathMLPrinter(MathMLPresentationPrinter):
    """SymPy's MathML (presentation) printer with the same additions as the LaTeX one."""

    printmethod = "_symproof_mathml"

    def __init__(self, settings=None):
        super().__init__({"mat_delim": "[", **(settings or {})})

    def parenthesize(self, item, level, strict=False):
        if _precedence(item) < level or (not strict and _precedence(item) <= level):
            return self._element("mrow", None, self._l_paren(), self._print(item), self._r_paren())
        return self._print(item)

    def _print_MatMul(self, expr):
        negative, factors = _matmul_factors(expr)
        row = self._element("mrow")
        if negative:
            row.appendChild(self._element("mo", "-"))
        for k, factor in enumerate(factors):
            if k:
                row.appendChild(self._element("mo", "\u2062"))  # invisible times
            row.appendChild(self.parenthesize(factor, PRECEDENCE["Mul"]))
        return row

    def _element(self, tag, text=None, *children, **attributes):
        node = self.dom.createElement(tag)
        for key, value in attributes.items():
            node.setAttribute(key, value)
        if text is not None:
            node.appendChild(self.dom.createTextNode(text))
        for child in children:
            node.appendChild(child)
        return node

    def _ellipsis(self, char="\u22ef"):
        return self._element("mo", char)

    def _print_BlockDiagMatrix(self, expr):
        row = self._element("mrow", None, self._element("mi", "blockdiag"), self._element("mo", "("))
        for n, k in enumerate(_kept_indices(len(expr.args))):
            if n:
                row.appendChild(self._element("mo", ","))
            row.appendChild(self._ellipsis("\u2026") if k is None else self._print_block(expr.args[k]))
        row.appendChild(self._element("mo", ")"))
        return row

    def _print_block(self, block):
        named = _named_block(block)
        if named is None:
            return self._print(block)
        letter, angle = named
        return self._element("mrow", None, self._element("mi", letter), self._element("mo", "("),
                             self._print(angle), self._element("mo", ")"))

    def _print_Add(self, expr, order=None):
        terms = self._as_ordered_terms(expr, order=order)
        if len(terms) <= MAX_TERMS:
            return super()._print_Add(expr, order=order)
        row = self._element("mrow")
        self._append_signed(row, terms[:HEAD_TERMS], first=True)
        row.appendChild(self._element("mo", "+"))
        row.appendChild(self._ellipsis())
        self._append_signed(row, terms[-TAIL_TERMS:], first=False)
        return row

    def _append_signed(self, row, terms, *, first: bool):
        for k, term in enumerate(terms):
            negative = term.could_extract_minus_sign()
            if negative or not (first and k == 0):
                row.appendChild(self._element("mo", "-" if negative else "+"))
            shown = -term if negative else term
            printed = self._print(shown)
            if isinstance(shown, sp.Add):
                printed = self._element("mrow", None, self._element("mo", "("), printed, self._element("mo", ")"))
            row.appendChild(printed)

    def _print_MatrixBase(self, expr):
        rows, cols = expr.shape
        if rows <= MAX_ENTRIES and cols <= MAX_ENTRIES:
            return super()._print_MatrixBase(expr)
        table = self._element("mtable")
        for i in _kept_indices(rows):
            tr = self._element("mtr")
            for j in _kept_indices(cols):
                if i is None:
                    cell = self._ellipsis("\u22f1" if j is None else "\u22ee")
                else:
                    cell = self._ellipsis() if j is None else self._print(expr[i, j])
                tr.appendChild(self._element("mtd", None, cell))
            table.appendChild(tr)
        matrix = self._element("mrow", None, self._element("mo", "["), table, self._element("mo", "]"))
        size = self._element("mrow", None, self._element("mn", str(rows)), self._element("mo", "\u00d7"),
                             self._element("mn", str(cols)))
        return self._element("msub", None, matrix, size)


_LATEX = ReportLatexPrinter(budget=MAX_FORMULA_CHARS)
_MATHML = ReportMathMLPrinter()


def _too_long(expr) -> str:
    shape = getattr(expr, "shape", None)
    what = f"{shape[0]}\u00d7{shape[1]} matrix" if shape else "expression"
    return f"{what}, elided: over {MAX_FORMULA_CHARS} characters"


def _shown_children(node):
    """The sub-expressions the printers show: elided terms, entries and blocks are skipped."""
    if isinstance(node, sp.MatrixBase):
        rows, cols = node.shape
        return [node[i, j] for i in _kept_indices(rows) if i is not None
                for j in _kept_indices(cols) if j is not None]
    args = getattr(node, "args", ())
    if isinstance(node, sp.Add) and len(args) > MAX_TERMS:
        return list(args[:HEAD_TERMS]) + list(args[-TAIL_TERMS:])
    if isinstance(node, BlockDiagMatrix):
        return [args[k] for k in _kept_indices(len(args)) if k is not None]
    return list(args)


def _exceeds_node_budget(expr, limit: int = MAX_FORMULA_NODES) -> bool:
    """Walks at most ``limit`` nodes, so a huge expression costs no more than a small one."""
    stack, seen = [expr], 0
    while stack:
        seen += 1
        if seen > limit:
            return True
        stack.extend(_shown_children(stack.pop()))
    return False


def _fitting_latex(expr):
    """The LaTeX of ``expr``, or ``None`` when it exceeds the budget (printing stops early).

    Both formats ask this of every formula (the HTML page to decide whether its
    MathML is shown or a placeholder), and a derivation repeats its formulas
    from step to step, so the answer is remembered per expression.
    """
    if isinstance(expr, Hashable):
        return _fitting_latex_of_hashable(expr)
    return _print_within_budget(expr)  # a mutable Matrix


@functools.lru_cache(maxsize=2048)
def _fitting_latex_of_hashable(expr):
    return _print_within_budget(expr)


def _print_within_budget(expr):
    if _exceeds_node_budget(expr):
        return None
    try:
        return _LATEX.doprint(expr)
    except _TooLong:
        return None


def to_latex(expr) -> str:
    """LaTeX of a SymPy object (or anything sympifiable) for a math environment."""
    expr = _as_printable(expr)
    text = _fitting_latex(expr)
    if text is None:
        return r"\left\langle\text{" + _too_long(expr).replace("\u00d7", r"$\times$") + r"}\right\rangle"
    return text


def to_mathml(expr, *, display: str = "block") -> str:
    """A complete ``<math>`` element for ``expr``."""
    return _wrap_math(_mathml_inner(expr), display)


def mathml_relation(lhs, relation: str, rhs, *, display: str = "block") -> str:
    """``lhs relation rhs`` as one ``<math>`` element (works for matrices, unlike ``Eq``)."""
    symbol = relation.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    inner = _mathml_inner(lhs) + f"<mo>{symbol}</mo>" + _mathml_inner(rhs)
    return _wrap_math(f"<mrow>{inner}</mrow>", display)


def latex_relation(lhs, relation: str, rhs) -> str:
    """``lhs relation rhs`` in LaTeX (``relation`` is a LaTeX relation such as ``\\ne``)."""
    return f"{_latex_inner(lhs)} {relation} {_latex_inner(rhs)}"


_DECIMAL = re.compile(r"-?\d+(\.\d+)?")


def _mathml_inner(value) -> str:
    # digits printed in the chapter are shown as written, not re-rounded by a Float
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return f"<mn>{value}</mn>"
    value = _as_printable(value)
    if _fitting_latex(value) is None:
        return f"<mrow><mo>\u27e8</mo><mtext>{_too_long(value)}</mtext><mo>\u27e9</mo></mrow>"
    return _NAMED_ENTITY.sub(lambda match: _ENTITIES[match.group(1)], _MATHML.doprint(value))


#: SymPy's MathML printer writes a few HTML named entities; numeric ones are valid in XML too
_ENTITIES = {"InvisibleTimes": "&#x2062;", "ExponentialE": "&#x2147;", "ImaginaryI": "&#x2148;",
             "dd": "&#x2146;", "int": "&#x222B;", "pi": "&#x3C0;"}
_NAMED_ENTITY = re.compile("&(" + "|".join(_ENTITIES) + ");")


def _latex_inner(value) -> str:
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return value
    return to_latex(value)


def _as_printable(expr):
    if isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return expr
    if isinstance(expr, bool):
        return sp.true if expr else sp.false
    try:
        return sp.sympify(expr)
    except (sp.SympifyError, TypeError, ValueError):
        return sp.Symbol(str(expr))


def _wrap_math(inner: str, display: str) -> str:
    return f'<math xmlns="{MATHML_NAMESPACE}" display="{display}">{inner}</math>'


def latex_to_mathml(latex: str, *, display: str = "block") -> str:
    """MathML for a LaTeX math string written by hand (a claim's statement)."""
    from latex2mathml.converter import convert

    return convert(latex, display=display)


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


def split_prose(text: str):
    """Split prose with ``$...$`` math into ``[("text", s) | ("math", latex)]`` pieces."""
    pieces, last = [], 0
    for match in _INLINE_MATH.finditer(text):
        if match.start() > last:
            pieces.append(("text", text[last:match.start()]))
        pieces.append(("math", match.group(1)))
        last = match.end()
    if last < len(text):
        pieces.append(("text", text[last:]))
    return pieces


def text_with_math_to_mathml(text: str):
    """:func:`split_prose` with each math piece as inline MathML."""
    return [(kind, latex_to_mathml(piece, display="inline") if kind == "math" else piece)
            for kind, piece in split_prose(text)]
