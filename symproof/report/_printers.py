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
    "split_prose", "ascii_math_to_latex", "CLAIM_ID", "text_with_math_to_mathml", "MATHML_NAMESPACE",
]

MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"
#: the minus sign (U+2212): an ASCII hyphen renders as a short dash in Chromium's MathML
MINUS = "\u2212"
#: U+2061 FUNCTION APPLICATION: sets ``sin x`` tight, as the hand-written statements are
FUNCTION_APPLICATION = "\u2061"

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
    """``("R", x)`` for ``rotation(x)``, ``("A", x)`` for ``sin_shift(x)``, else ``None``.

    ``sin_shift(x)`` is ``rotation(-x)``: a shift by a monomial (``D w``) keeps the chapter's
    ``A(D w)``; a difference of positions (``(i - j) w``) reads as the chapter's ``R((j - i) w)``.
    """
    if not (getattr(block, "shape", None) == (2, 2) and isinstance(block, sp.MatrixBase)):
        return None
    corner = block[0, 0]
    if not isinstance(corner, sp.cos):
        return None
    angle = corner.args[0]
    if block == rotation(angle):
        return "R", angle
    if block == sin_shift(angle):
        sums = [f for f in sp.Mul.make_args(angle) if f.is_Add]
        if len(sums) == 1 and any(t.could_extract_minus_sign() for t in sums[0].args):
            return "R", sp.Mul(*[(-f if f.is_Add else f) for f in sp.Mul.make_args(angle)])
        return "A", angle
    return None


def _positive_first(terms):
    """``j - i`` rather than SymPy's ``- i + j``: a short sum leads with a positive term when it has one."""
    if terms and terms[0].could_extract_minus_sign():
        lead = next((k for k, t in enumerate(terms) if not t.could_extract_minus_sign()), None)
        if lead is not None:
            return [terms[lead]] + terms[:lead] + terms[lead + 1:]
    return terms


#: symbol names that are words, not a letter with a subscript (``model_id``): printed upright, whole
_WORD_NAME = re.compile(r"[A-Za-z]{2,}(_[A-Za-z]{2,})+")
_GREEK_NAMES = set("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau "
                   "upsilon phi chi psi omega".split())


class ReportLatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with compact block-diagonal rotations and visible elision."""

    printmethod = "_symproof_latex"

    def __init__(self, settings=None, *, budget: int | None = None):
        # a long numerator over a short denominator prints as (1/2)(...): a fraction cannot be broken
        super().__init__({"long_frac_ratio": 3, "fold_func_brackets": True, **(settings or {})})
        self._budget = budget

    def _needs_function_brackets(self, expr):
        # fold_func_brackets: \sin\theta for an atomic argument, as the statements write it, and
        # \sin\left(\frac{m}{10}\right) otherwise (SymPy's own rule folds fractions and products)
        return not _atomic_argument(expr)

    def _print(self, expr, **kwargs):
        text = super()._print(expr, **kwargs)
        if self._budget is not None and len(text) > self._budget:
            raise _TooLong
        return text

    def parenthesize(self, item, level, is_neg=False, strict=False):
        if is_neg and strict or _precedence(item) < level or (not strict and _precedence(item) <= level):
            return self._add_parens(self._print(item))
        return self._print(item)

    # this printer's printmethod is not ``_latex``, so the constants that print themselves through
    # ``_latex`` (pi, oo, I, ...) are routed back to it instead of SymPy's ``\text{ClassName}`` fallback
    def _print_NumberSymbol(self, expr):
        return expr._latex(self)

    _print_Infinity = _print_NegativeInfinity = _print_ImaginaryUnit = _print_NumberSymbol
    _print_ComplexInfinity = _print_NaN = _print_NumberSymbol

    def _print_Symbol(self, expr, style="plain"):
        name = expr.name
        if _WORD_NAME.fullmatch(name) and name.split("_")[0] not in _GREEK_NAMES:
            return r"\mathrm{" + name.replace("_", r"\_") + "}"
        if name.endswith("'") and name.rstrip("'"):
            return self._print_Symbol(sp.Symbol(name.rstrip("'"))) + "'" * (len(name) - len(name.rstrip("'")))
        return super()._print_Symbol(expr, style=style)

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
        return r"\operatorname{blockdiag}\left(" + r", \allowbreak ".join(shown) + r"\right)"

    def _print_block(self, block):
        named = _named_block(block)
        if named is None:
            return self._print(block)
        letter, angle = named
        return letter + r"\left(" + self._print(angle) + r"\right)"

    def _print_Add(self, expr, order=None):
        terms = self._as_ordered_terms(expr, order=order)
        if len(terms) <= MAX_TERMS:
            return self._signed_terms(_positive_first(terms), first=True)
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
        return r"\left(" + text + r"\right)" if isinstance(term, sp.Add) or (
            term.is_Relational if isinstance(term, sp.Basic) else False) else text

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
            row.appendChild(self._element("mo", MINUS))
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

    def doprint(self, expr):
        """SymPy's output with every ``<mrow>`` that holds one element replaced by that element,
        and every ASCII hyphen used as an operator written as the minus sign."""
        node = self._print(expr)
        node = _unwrap_rows(node)
        _minus_signs(node)
        return node.toxml().encode("ascii", "xmlcharrefreplace").decode()

    def _print_Exp1(self, expr):
        # U+2147 (double-struck e) is what SymPy writes; a textbook writes a plain e, as LaTeX's e
        return self._element("mi", "e")

    def _print_exp(self, expr):
        return self._element("msup", None, self._print_Exp1(None), self._print(expr.args[0]))

    def _print_Function(self, expr, exponent=None):
        """``sin θ`` for an atomic argument, ``sin(a + b)`` otherwise, always with U+2061,
        which is how the statements (written in LaTeX as ``\\sin\\theta``) print."""
        name = self._element("mi", self.mathml_tag(expr))
        if exponent is not None:
            name = self._element("msup", None, name, exponent)
        row = self._element("mrow", None, name, self._element("mo", FUNCTION_APPLICATION))
        if len(expr.args) == 1 and _atomic_argument(expr.args[0]):
            row.appendChild(self._print(expr.args[0]))
        else:
            row.appendChild(self._paren_comma_separated(*expr.args))
        return row

    def _print_Pow(self, expr):
        # sin(x)**2 reads sin^2 x, as the chapter writes it (and never (sin x)^2)
        base, exponent = expr.args
        if (isinstance(base, sp.Function) and type(base).__name__ in _POWER_BEFORE_ARGUMENT
                and exponent.is_Integer and exponent > 0):
            return self._print_Function(base, exponent=self._print(exponent))
        return super()._print_Pow(expr)

    def _print_KroneckerDelta(self, expr):
        indices = self._element("mrow")
        for k, index in enumerate(expr.args):
            if k:
                indices.appendChild(self._element("mo", ","))
            indices.appendChild(self._print(index))
        return self._element("msub", None, self._element("mi", "\u03b4"), indices)

    def _print_Symbol(self, sym, style="plain"):
        name = sym.name
        if _WORD_NAME.fullmatch(name) and name.split("_")[0] not in _GREEK_NAMES:
            return self._element("mi", name, mathvariant="normal")
        if name.endswith("'") and name.rstrip("'"):
            primes = len(name) - len(name.rstrip("'"))
            return self._element("msup", None, self._print_Symbol(sp.Symbol(name.rstrip("'"))),
                                 self._element("mo", "\u2032" * primes))
        if _MARKUP.search(name):  # SymPy writes text nodes unescaped: a name must not become markup
            return super()._print_Symbol(sp.Symbol(_MARKUP.sub(lambda m: _XML_ESCAPES[m.group()], name)), style=style)
        return super()._print_Symbol(sym, style=style)

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
            row = self._element("mrow")
            self._append_signed(row, _positive_first(terms), first=True)
            return row
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
                row.appendChild(self._element("mo", MINUS if negative else "+"))
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


#: functions whose positive integer powers print before the argument (sin^2 x)
_POWER_BEFORE_ARGUMENT = frozenset({"sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh"})


def _atomic_argument(arg) -> bool:
    """An argument set without parentheses: a symbol or a non-negative integer."""
    return isinstance(arg, sp.Symbol) or (arg.is_Integer and arg >= 0)


def _minus_signs(node):
    if getattr(node, "tagName", None) == "mo":
        for child in node.childNodes:
            if child.nodeType == child.TEXT_NODE and child.data == "-":
                child.data = MINUS
    for child in node.childNodes:
        _minus_signs(child)


def _unwrap_rows(node):
    for child in list(node.childNodes):
        _unwrap_rows(child)
    if getattr(node, "tagName", None) == "mrow" and node.parentNode is not None:
        children = node.childNodes
        if len(children) == 1 and children[0].nodeType == children[0].ELEMENT_NODE:
            only = children[0]
            node.parentNode.replaceChild(only, node)
            return only
    elif getattr(node, "tagName", None) == "mrow" and node.parentNode is None:
        children = node.childNodes
        if len(children) == 1 and children[0].nodeType == children[0].ELEMENT_NODE:
            return children[0]
    return node


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
    text = _NAMED_ENTITY.sub(lambda match: _ENTITIES[match.group(1)], _MATHML.doprint(value))
    # SymPy writes the relations < and > as raw characters, which is not well-formed XML
    return _RAW_RELATION.sub(lambda match: "<mo>" + ("&lt;" if match.group(1) == "<" else "&gt;") + "</mo>", text)


#: SymPy's MathML printer writes a few HTML named entities; numeric ones are valid in XML too
_ENTITIES = {"InvisibleTimes": "&#x2062;", "ExponentialE": "&#x2147;", "ImaginaryI": "&#x2148;",
             "dd": "&#x2146;", "int": "&#x222B;", "pi": "&#x3C0;"}
_NAMED_ENTITY = re.compile("&(" + "|".join(_ENTITIES) + ");")
_RAW_RELATION = re.compile(r"<mo>([<>])</mo>")
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_MARKUP = re.compile('[&<>"]')


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
    """MathML for a LaTeX math string written by hand (a claim's statement).

    latex2mathml sets ``\\sin\\theta`` and ``\\cos(m\\theta)`` without the function application
    operator; it is added here, so a statement prints as the printer's own formulas do."""
    from latex2mathml.converter import convert

    return _FUNCTION_NAME.sub(r"\1<mo>&#x2061;</mo>", convert(latex, display=display))


#: a function name set by latex2mathml that is not already followed by U+2061
_FUNCTION_NAME = re.compile(r"(<mi>(?:sin|cos|tan|cot|sec|csc|sinh|cosh|tanh|exp|log|ln|arcsin|arccos|arctan)"
                            r"</mi>)(?!<mo>&#x0?2061;</mo>)")


_INLINE_MATH = re.compile(r"\$([^$]+)\$")


def split_prose(text: str):
    """Split prose into ``[("text", s) | ("math", latex)]`` pieces.

    ``$...$`` is math as written; outside it, the ASCII math a derivation's notes and step
    labels use (``P^T P = I``, ``omega_r``, ``sqrt(d)``, ``p_(t+1)``) is recognised and turned
    into LaTeX (:func:`ascii_math_to_latex`), so that no formula reaches the reader as ASCII.
    """
    text = _without_python(text)
    pieces, last = [], 0
    for match in _INLINE_MATH.finditer(text):
        if match.start() > last:
            pieces.extend(_ascii_math_pieces(text[last:match.start()]))
        pieces.append(("math", match.group(1)))
        last = match.end()
    if last < len(text):
        pieces.extend(_ascii_math_pieces(text[last:]))
    return pieces


#: Python notation that derivations' labels use, as a textbook writes it (applied outside $...$)
_PYTHON_NOTATION = (
    (re.compile(r"\s*==\s*"), " = "),                       # a comparison reads as an equation
    (re.compile(r"\b(\d+)x(\d+)\b"), r"$\1\\times\2$"),  # 2x2 -> 2 x 2 (doubled: a replacement reads \t as a tab)
    (re.compile(r"\*\*"), "^"),                              # 2**53 -> 2^53
    (re.compile(r"(?<![\w.])([a-z])(\d)\b"), r"\1_\2"),     # z1 -> z_1 (not inside words or IDs)
)


def _without_python(text: str) -> str:
    """``text`` with :data:`_PYTHON_NOTATION` rewritten outside its ``$...$`` math."""
    parts = re.split(r"(\$[^$]+\$)", text)
    for k in range(0, len(parts), 2):
        for pattern, replacement in _PYTHON_NOTATION:
            parts[k] = pattern.sub(replacement, parts[k])
    return "".join(parts)


_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon "
          "phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega").split()
_FUNCTIONS = ("sin", "cos", "tan", "log", "exp", "sqrt", "max", "min", "softmax", "argmax", "diag", "blockdiag")
_MATH_CHARS = re.compile(r"[A-Za-z0-9_^(){}\[\]+\-*/=<>!|.,'~]+")
_RELATIONS = {"=", "!=", "<", ">", "<=", ">=", "->", "~"}
_OPERATORS = _RELATIONS | {"+", "-", "*", "/"}
_LETTERS = re.compile(r"[A-Za-z]+")
_CALL = re.compile(r"(?:" + "|".join(_FUNCTIONS) + r")\(.*\)[.,;:]?")


#: a claim ID in prose (``rope.relative``): a name to link, never a formula
CLAIM_ID = re.compile(r"\b[a-z]+\.[a-z][a-z0-9_]*\b")


def _word_class(word: str) -> str:
    """``"seed"`` (surely math), ``"atom"`` (math next to math) or ``"word"``."""
    if CLAIM_ID.search(word):
        return "word"
    if word.endswith(":") and not re.search(r"[_^]|[=<>]", word) and not any(
            run in _GREEK for run in _LETTERS.findall(word)) and not re.fullmatch(r"\d+[A-Za-z]?:", word):
        return "word"  # a label ("L1:", "note:"), not a formula
    core = word.rstrip(".,;:")
    if not core or not _MATH_CHARS.fullmatch(core):
        return "word"
    if core in _OPERATORS:
        return "op"
    if _CALL.fullmatch(core) or "||" in core:
        return "seed"
    letters = _LETTERS.findall(core)
    named = all(run in _GREEK or run in _FUNCTIONS or len(run) == 1 for run in letters)
    if "_" in core or "^" in core:
        return "seed" if core[0].isalnum() or core[0] in "(|" else "word"
    if any(run in _GREEK for run in letters) and named:
        return "seed"
    if core in ("a", "A.", "I."):
        return "word"
    if not letters:
        return "atom" if any(ch.isdigit() for ch in core) or core in ("(", ")") else "word"
    if named and all(len(run) == 1 for run in letters) and len(core) <= 12:
        return "atom"
    if named and any(run in _FUNCTIONS for run in letters):
        return "seed"
    return "word"


@functools.lru_cache(maxsize=4096)
def _converts(latex: str) -> bool:
    """Whether recognised ASCII math is well-formed (else it stays text: a guess never breaks a page)."""
    try:
        latex_to_mathml(latex)
    except Exception:  # the converter raises its own assorted errors on what it cannot read
        return False
    return True


def _balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0, "{": 0}
    closing = {")": "(", "]": "[", "}": "{"}
    for ch in text:
        if ch in depth:
            depth[ch] += 1
        elif ch in closing:
            depth[closing[ch]] -= 1
            if depth[closing[ch]] < 0:
                return False
    return all(v == 0 for v in depth.values())


def _ascii_math_pieces(text: str):
    words = re.split(r"(\s+)", text)
    tokens = [(w, _word_class(w) if w and not w.isspace() else "space") for w in words]
    pieces, k = [], 0
    while k < len(tokens):
        word, kind = tokens[k]
        if kind in ("seed", "atom", "op"):
            end = k
            scan = k
            while scan < len(tokens):
                w, c = tokens[scan]
                if c in ("seed", "atom", "op"):
                    end = scan
                    if (w.endswith((".", ";")) and not w.endswith("..") and scan > k) or w.endswith(":"):
                        break
                elif c != "space":
                    break
                scan += 1
            while end > k and tokens[end][1] in ("op", "space"):
                end -= 1  # a relation with nothing after it ("relayout_pairing = adjacent") ends the formula
            run = [w for w, _ in tokens[k:end + 1]]
            classes = [c for _, c in tokens[k:end + 1] if c != "space"]
            while run and tokens[k][1] == "op" and tokens[k][0] not in ("(",):
                pieces.append(("text", tokens[k][0]))
                k += 1
                run = run[1:]
                classes = classes[1:]
            if not run:
                continue
            useful = "seed" in classes or (
                any(c == "op" for c in classes) and sum(c != "op" for c in classes) >= 2)
            if run and useful:
                joined = "".join(run)
                trail = ""
                while joined and joined[-1] in ".,;:" and not joined.endswith(".."):
                    trail = joined[-1] + trail
                    joined = joined[:-1]
                lead = ""
                if not _balanced(joined) and joined.startswith("("):
                    lead, joined = "(", joined[1:]
                if not _balanced(joined) and joined.endswith(")"):
                    trail, joined = ")" + trail, joined[:-1]
                latex = ascii_math_to_latex(joined) if _balanced(joined) and joined else None
                if latex is not None and _converts(latex):
                    if lead:
                        pieces.append(("text", lead))
                    pieces.append(("math", latex))
                    if trail:
                        pieces.append(("text", trail))
                    k = end + 1
                    continue
            # the token at k (leading operators may have been passed over above), never ``word`` again
            pieces.append(("text", tokens[k][0]))
            k += 1
            continue
        pieces.append(("text", word))
        k += 1
    merged = []
    for kind, piece in pieces:
        if merged and kind == "text" and merged[-1][0] == "text":
            merged[-1] = ("text", merged[-1][1] + piece)
        else:
            merged.append((kind, piece))
    return merged


def _group(body: str) -> str:
    return "{" + ascii_math_to_latex(body) + "}"


def ascii_math_to_latex(text: str) -> str:
    """``P^T P = I``, ``omega_r``, ``sqrt(d)``, ``p_(t+1)``, ``||p_t||^2`` as LaTeX."""
    out = re.sub(r"([A-Za-z])('+)", r"{\1\2}", text.replace("_*", "_{*}"))
    out = re.sub(r"\|\|(.+?)\|\|", lambda m: "\x00norm" + m.group(1) + "\x00norm", out)
    out = re.sub(r"sqrt\(([^()]*(?:\([^()]*\)[^()]*)*)\)", lambda m: "\x00sqrt{" + m.group(1) + "}", out)
    out = re.sub(r"([_^])\(([^()]*(?:\([^()]*\)[^()]*)*)\)", lambda m: m.group(1) + "{" + m.group(2) + "}", out)
    out = re.sub(r"\^(-?[A-Za-z0-9]+)", lambda m: "^{" + m.group(1) + "}", out)
    out = re.sub(r"_([A-Za-z0-9]+)", lambda m: "_{" + m.group(1) + "}", out)
    out = re.sub(r"([A-Za-z])~", "\x00tilde{\\1}", out)
    parts = re.split(r"([_^]\{[^{}]*\})", out)
    for k, part in enumerate(parts):
        if k % 2:  # a subscript or superscript: its letters are indices, only Greek names change
            parts[k] = re.sub(r"[A-Za-z]+", lambda m: "\\" + m.group(0) + " " if m.group(0) in _GREEK
                              else m.group(0), part)
        else:
            parts[k] = re.sub(r"(?<![\\A-Za-z\x00])[A-Za-z]+", _latex_name, part)
    out = "".join(parts)
    for ascii_op, tex in (("!=", r" \ne "), ("<=", r" \le "), (">=", r" \ge "), ("->", r" \to "),
                          ("{*}", r"{\ast}"), ("*", r" \cdot ")):
        out = out.replace(ascii_op, tex)
    out = out.replace("\x00norm", r"\|").replace("\x00sqrt", r"\sqrt").replace("\x00tilde", r"\tilde")
    return re.sub(r" +", " ", out).strip().replace(" }", "}").replace(" _", "_").replace(" ^", "^")


def _latex_name(match) -> str:
    word = match.group(0)
    if word in _GREEK or word in ("sin", "cos", "tan", "log", "exp", "max", "min"):
        return "\\" + word + " "
    if word in ("sum", "prod"):
        return "\\" + word + " "
    if len(word) == 1:
        return word
    return r"\mathrm{" + word + "}"


def text_with_math_to_mathml(text: str):
    """:func:`split_prose` with each math piece as inline MathML."""
    return [(kind, latex_to_mathml(piece, display="inline") if kind == "math" else piece)
            for kind, piece in split_prose(text)]
