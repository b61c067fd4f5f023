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
from xml.dom import minidom

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions import BlockDiagMatrix, MatMul
from sympy.printing.latex import LatexPrinter
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE, precedence_traditional

from ..encodings import rotation, sin_shift

__all__ = [
    "ReportLatexPrinter", "ReportMathMLPrinter", "to_latex", "to_mathml", "latex_to_mathml",
    "mathml_relation", "latex_relation",
    "split_prose", "split_latex", "latex_pieces", "break_items", "ascii_math_to_latex", "CLAIM_ID", "text_with_math_to_mathml", "MATHML_NAMESPACE",
]

MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"
#: the minus sign (U+2212): an ASCII hyphen renders as a short dash in Chromium's MathML
MINUS = "\u2212"
#: U+2061 FUNCTION APPLICATION, between a function's name and its argument
FUNCTION_APPLICATION = "\u2061"
#: the space after U+2061 before an argument without parentheses: TeX's thin space between an operator
#: name and an ordinary atom (``\sin\theta``); Chromium gives U+2061 no width, so ``sin a`` read ``sina``
FUNCTION_SPACE = "0.1667em"

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

    def _deal_with_super_sub(self, string, style="plain"):
        # every name (a symbol's, a function's, a matrix symbol's) passes here: one holding TeX's own
        # characters is set upright, character by character, so no command in it (\href{javascript:...},
        # \class, \style) ever reaches TeX or MathJax
        if _TEX_ACTIVE.search(string):
            text = r"\mathrm{" + string.translate(_TEX_NAME_CHARACTERS) + "}"
            return r"\mathbf{" + text + "}" if style == "bold" else text
        return super()._deal_with_super_sub(string, style=style)

    def _print_Function(self, expr, exp=None):
        name = type(expr).__name__
        if isinstance(expr, AppliedUndef) and _TEX_ACTIVE.search(name):
            # SymPy formats the arguments into the printed name with '%', which such a name may hold
            head = self._deal_with_super_sub(name)
            head = head if exp is None else f"{head}^{{{exp}}}"
            return head + r"{\left(" + ", ".join(self._print(arg) for arg in expr.args) + r" \right)}"
        return super()._print_Function(expr, exp=exp)

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
        every ASCII hyphen used as an operator written as the minus sign, and parentheses around
        content no taller than they are set as they are in the statements (:func:`_tight_fences`)."""
        node = self._print(expr)
        node = _unwrap_rows(node)
        _minus_signs(node)
        _tight_fences(node)
        return node.toxml().encode("ascii", "xmlcharrefreplace").decode()

    def _print_Exp1(self, expr):
        # U+2147 (double-struck e) is what SymPy writes; a textbook writes a plain e, as LaTeX's e
        return self._element("mi", "e")

    def _print_exp(self, expr):
        return self._element("msup", None, self._print_Exp1(None), self._print(expr.args[0]))

    def _print_Function(self, expr, exponent=None):
        """``sin θ`` for an atomic argument, ``sin(a + b)`` otherwise, always with U+2061 after the
        name (and after its exponent: ``sin²θ``), as the statements (``\\sin\\theta``) print."""
        name = self._element("mi", _xml_text(self.mathml_tag(expr)))
        if exponent is not None:
            name = self._element("msup", None, name, exponent)
        application = self._element("mo", FUNCTION_APPLICATION)
        row = self._element("mrow", None, name, application)
        if len(expr.args) == 1 and _atomic_argument(expr.args[0]):
            application.setAttribute("rspace", FUNCTION_SPACE)
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
        return self._element("msub", None, self._element("mi", "\u03b4"), self._indices(expr.args))

    def _print_Indexed(self, expr):
        # p[t, i] is p_{t,i}: SymPy prints the tuple of indices, in parentheses, as the subscript
        return self._element("msub", None, self._print(expr.base), self._indices(expr.indices))

    def _indices(self, indices):
        """A multi-index as one subscript row, its indices separated by commas."""
        row = self._element("mrow")
        for k, index in enumerate(indices):
            if k:
                row.appendChild(self._element("mo", ","))
            row.appendChild(self._print(index))
        return row

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
        return _split_index_lists(super()._print_Symbol(sym, style=style), self)

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


def _split_index_lists(node, printer):
    """A script of a symbol's name that is a list of indices (``p_t,i``), which SymPy sets as one
    ``<mi>t,i</mi>``, as a row of the indices separated by commas: ``p_{t,i}``, as TeX sets it."""
    if getattr(node, "tagName", None) not in ("msub", "msup", "msubsup"):
        return node
    for script in list(node.childNodes)[1:]:
        text = script.firstChild.data if getattr(script, "tagName", None) == "mi" and script.firstChild else ""
        if "," in text.strip(",") and " " not in text:
            row = printer._element("mrow")
            for k, index in enumerate(text.split(",")):
                if k:
                    row.appendChild(printer._element("mo", ","))
                row.appendChild(printer._element("mn" if index.isdigit() else "mi", index))
            node.replaceChild(row, script)
    return node


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


_TIGHT_PAIRS = {"(": ")", "[": "]"}
#: glyphs that a parenthesis at its base size covers (letters, digits, the operators of a sum)
_BIG_GLYPHS = frozenset("\u2211\u220f\u222b\u221a/|\u2016")
#: letters that reach below a subscript's baseline: a subscript of one would reach below a parenthesis
_DESCENDERS = frozenset("gjpqyβγζημξρφχψ,")


def _low(node, script=False) -> bool:
    """Whether an element is no taller and no deeper than a parenthesis at its base size."""
    tag = getattr(node, "tagName", None)
    if node.nodeType == node.TEXT_NODE:
        return True
    if tag in ("mi", "mn", "mo", "mtext"):
        text = "".join(child.data for child in node.childNodes if child.nodeType == child.TEXT_NODE)
        return not set(text) & _BIG_GLYPHS and not (script and set(text) & _DESCENDERS)
    if tag == "msub" and len(node.childNodes) == 2:
        base, sub = node.childNodes
        return getattr(sub, "tagName", None) in ("mi", "mn") and _low(base) and _low(sub, script=True)
    if tag == "mrow":
        return all(_low(child, script) for child in node.childNodes)
    return False


def _tight_fences(node) -> None:
    """``(`` and ``)`` around content they cover at their base size do not stretch: Chromium sets a
    stretchy parenthesis half an em wider than the glyph even when it keeps its size, which is the loose
    ``sin ( θ )`` beside the statements' tight ``sin(θ)``; nothing taller is affected."""
    for child in node.childNodes:
        _tight_fences(child)
    if getattr(node, "tagName", None) != "mrow" or len(node.childNodes) < 3:
        return
    children = node.childNodes
    fences = [k for k, n in enumerate(children) if _fence_text(n) is not None]
    if not fences:
        return
    ends = (0, len(children) - 1)
    # a row of fenced low content (``(a + b)``), or a low row with fences inside it (``R(i w)``): either
    # way no fence of it stretches beyond its base size
    if tuple(fences) == ends and _TIGHT_PAIRS.get(_fence_text(children[0])) == _fence_text(children[-1]) \
            and all(_low(child) for child in children[1:-1]) \
            or all(_low(child) for k, child in enumerate(children) if k not in fences):
        for k in fences:
            children[k].setAttribute("stretchy", "false")


def _fence_text(node):
    if getattr(node, "tagName", None) == "mo" and node.firstChild is not None and not node.attributes.length:
        text = node.firstChild.data
        return text if text in "()[]" else None
    return None


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
    """LaTeX of a SymPy object (or anything sympifiable) for a math environment, with ``\\symbreak``
    where its MathML may break (:func:`break_items`)."""
    expr = _as_printable(expr)
    text = _fitting_latex(expr)
    if text is None:
        return r"\left\langle\text{" + _too_long(expr).replace("\u00d7", r"$\times$") + r"}\right\rangle"
    items = break_items(expr)
    return _latex_lines(items) if len(items) > 1 else text


def to_mathml(expr, *, display: str = "block") -> str:
    """A complete ``<math>`` element for ``expr``; a display formula wider than :data:`LINE_EM` is a
    breakable row (:func:`break_items`)."""
    if display == "block":
        items = break_items(expr)
        if len(items) > 1:
            return _mathml_lines(items)
    return _wrap_math(_mathml_inner(expr), display)


def mathml_relation(lhs, relation: str, rhs, *, display: str = "block") -> str:
    """``lhs relation rhs`` as one ``<math>`` element (works for matrices, unlike ``Eq``)."""
    symbol = relation.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if display == "block":
        items = relation_items(lhs, symbol, rhs)
        if len(items) > 1:
            return _mathml_lines(items)
    inner = _mathml_inner(lhs) + f"<mo>{symbol}</mo>" + _mathml_inner(rhs)
    return _wrap_math(f"<mrow>{inner}</mrow>", display)


def latex_relation(lhs, relation: str, rhs) -> str:
    """``lhs relation rhs`` in LaTeX (``relation`` is a LaTeX relation such as ``\\ne``), with
    ``\\symbreak`` where the MathML of the same relation may break."""
    items = relation_items(lhs, relation, rhs)
    if len(items) > 1:
        return _latex_lines(items)
    return f"{_latex_inner(lhs)} {relation} {_latex_inner(rhs)}"


_DECIMAL = re.compile(r"-?\d+(\.\d+)?")


def _mathml_inner(value) -> str:
    # digits printed in the chapter are shown as written, not re-rounded by a Float
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        # a minus sign, not the hyphen the digits were written with
        return f"<mrow><mo>\u2212</mo><mn>{value[1:]}</mn></mrow>" if value.startswith("-") else f"<mn>{value}</mn>"
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
#: a character reference SymPy's own tables write as a name (``&#x393;`` for gamma): kept as it is
_CHARACTER_REFERENCE = re.compile(r"&(#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z]+);")


def _xml_text(name: str) -> str:
    """``name`` for a text node SymPy writes unescaped: markup characters as references, SymPy's own
    character references kept."""
    out, last = [], 0
    for match in _CHARACTER_REFERENCE.finditer(name):
        out.append(_MARKUP.sub(lambda m: _XML_ESCAPES[m.group()], name[last:match.start()]) + match.group())
        last = match.end()
    return "".join(out) + _MARKUP.sub(lambda m: _XML_ESCAPES[m.group()], name[last:])


#: the characters TeX acts on inside a name (a backslash starts a command)
_TEX_ACTIVE = re.compile(r"[\\{}$%#&~]")
#: each character of such a name as math-mode TeX that prints it and does nothing else
_TEX_NAME_CHARACTERS = {ord("\\"): r"\backslash{}", ord("{"): r"\{", ord("}"): r"\}", ord("$"): r"\$",
                        ord("%"): r"\%", ord("#"): r"\#", ord("&"): r"\&", ord("~"): r"\sim{}",
                        ord("_"): r"\_", ord("^"): r"\wedge{}", ord(" "): r"\ "}


def _latex_whole(value) -> str:
    """One piece of a broken formula: printed without breaks of its own."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return value
    value = _as_printable(value)
    text = _fitting_latex(value)
    return to_latex(value) if text is None else text


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

    latex2mathml's output is finished by :func:`_finish_converted`, so a statement prints as the
    printer's own formulas do.  A display formula wider than :data:`LINE_EM` is a breakable row of
    the pieces :func:`split_latex` finds."""
    from latex2mathml.converter import convert

    whole = _finish_converted(convert(latex, display=display))
    if display != "block":
        return whole
    if _em_of_mathml(_MATH_ELEMENT.sub("", whole)) <= LINE_EM:
        return whole
    chunks = latex_pieces(latex)
    if len(chunks) < 2:
        return whole
    rows = []
    for chunk in chunks:
        try:
            converted = _finish_converted(convert(chunk, display="inline"))
        except Exception:  # a piece the converter cannot read alone: the formula stays one line
            return whole
        inner = _MATH_ELEMENT.sub("", converted)
        if inner.startswith("<mrow>") and inner.endswith("</mrow>"):  # the converter's own row around it all
            inner = inner[len("<mrow>"):-len("</mrow>")]
        rows.append("<mrow>" + _infix_lead(len(rows), inner) + "</mrow>")
    start = whole[:whole.index(">")]
    return start + ' class="b">' + "".join(rows) + "</math>"


_MATH_ELEMENT = re.compile(r"</?math[^>]*>")
_LATEX_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\s+|.", re.S)
#: relations a statement may break after, and spacing or punctuation that ends a piece
_LATEX_RELATIONS = frozenset(r"= < > \ne \neq \le \leq \ge \geq \approx \equiv \Rightarrow \Leftrightarrow \iff "
                             r"\implies \to \mapsto \sim".split())
_LATEX_SEPARATORS = frozenset([";", ",", r"\quad", r"\qquad"])
_LATEX_SPACES = frozenset([r"\ ", r"\;", r"\,", r"\:", r"\!", r"\quad", r"\qquad"])


def latex_pieces(latex: str) -> list:
    """:func:`split_latex`, and a piece still wider than :data:`LINE_EM` split again inside its
    outer ``\\left(...\\right)`` (which become plain parentheses, the only kind a line can break)."""
    pieces = []
    for piece in split_latex(latex):
        if r"\left" in piece and _latex_em(piece) > LINE_EM:
            plain = _SIZED_FENCE.sub(lambda match: match.group(1), piece)
            pieces.extend(split_latex(plain, inside=1))
        else:
            pieces.append(piece)
    return pieces


_SIZED_FENCE = re.compile(r"\\(?:left|right)\s*([()\[\]]|\\[{}|])")


def _latex_em(latex: str) -> float:
    from latex2mathml.converter import convert

    try:
        return _em_of_mathml(_MATH_ELEMENT.sub("", convert(latex)))
    except Exception:  # the converter's own assorted errors: a piece it cannot read is not split
        return 0.0


def split_latex(latex: str, *, inside: int = 0) -> list:
    """A hand-written formula cut where a line may break, at its top level (outside braces,
    parentheses and ``\\left...\\right``): before a binary + or -, after a relation, after
    ``;``, ``,`` and ``\\quad`` (never around ``\\text{...}``, whose spaces a line's end would
    drop); ``inside=1`` also inside one level of parentheses.  Joining the pieces gives ``latex`` back."""
    tokens = _LATEX_TOKEN.findall(latex)
    pieces, current, depth, k = [], "", 0, 0
    previous = None  # the last token that is not white space
    while k < len(tokens):
        token = tokens[k]
        if token in ("{", r"\left") or token in ("(", "[") and previous != r"\left":
            depth += 1
        elif token in ("}", r"\right") or token in (")", "]") and previous != r"\right":
            depth = max(depth - 1, 0)
        binary = token in ("+", "-") and previous is not None and previous not in _LATEX_RELATIONS \
            and previous not in ("(", "[", "{", "^", "_", ",", ";") and previous not in _LATEX_SPACES
        if depth <= inside and binary and current.strip():
            pieces.append(current)
            current = ""
        current += token
        if not token.isspace():
            previous = token
        if depth <= inside and (token in _LATEX_RELATIONS or token in _LATEX_SEPARATORS):
            while k + 1 < len(tokens) and (tokens[k + 1].isspace() or tokens[k + 1] in _LATEX_SPACES):
                k += 1
                current += tokens[k]
            pieces.append(current)
            current = ""
        k += 1
    if current.strip():
        pieces.append(current)
    elif current and pieces:
        pieces[-1] += current
    return pieces


#: the function names latex2mathml sets as an ``<mi>`` without the function application operator
_FUNCTION_NAMES = frozenset("sin cos tan cot sec csc sinh cosh tanh exp log ln arcsin arccos arctan".split())
_SCRIPTS = ("msub", "msup", "msubsup")
_OPENING = {")": "(", "]": "[", "}": "{"}
_ROWS = ("math", "mrow", "mtd", "msqrt", "mstyle", "mpadded", "mphantom")


def _finish_converted(mathml: str) -> str:
    """latex2mathml's MathML with what TeX does by itself and MathML must say (:func:`_apply_functions`,
    :func:`_script_whole_groups`)."""
    root = minidom.parseString(mathml).documentElement
    _apply_functions(root)
    _script_whole_groups(root)
    return root.toxml().encode("ascii", "xmlcharrefreplace").decode()


def _element_children(node):
    return [child for child in node.childNodes if child.nodeType == child.ELEMENT_NODE]


def _text(node) -> str:
    return "".join(child.data if child.nodeType == child.TEXT_NODE else _text(child) for child in node.childNodes)


def _apply_functions(root) -> None:
    """U+2061 after each function name, after its scripts (``sin²θ`` is ``<msup>sin 2</msup>⁡θ``: an
    operator inside the ``<msup>`` would be a third child), followed by TeX's thin space unless the
    argument opens with a parenthesis."""
    for name in root.getElementsByTagName("mi"):
        if _text(name) not in _FUNCTION_NAMES:
            continue
        head, parent = name, name.parentNode
        if parent.tagName in _SCRIPTS + ("munder", "mover") and _element_children(parent)[0] is name:
            head, parent = parent, parent.parentNode
        after = head.nextSibling
        if getattr(after, "tagName", None) == "mo" and _text(after) == FUNCTION_APPLICATION:
            application = after
        else:
            application = root.ownerDocument.createElement("mo")
            application.appendChild(root.ownerDocument.createTextNode(FUNCTION_APPLICATION))
            parent.insertBefore(application, after)
        argument = application.nextSibling
        if argument is not None and not _opens_with_fence(argument):
            application.setAttribute("rspace", FUNCTION_SPACE)


def _opens_with_fence(node) -> bool:
    while getattr(node, "tagName", None) in ("mrow",) + _SCRIPTS:
        children = _element_children(node)
        if not children:
            return False
        node = children[0]
    return getattr(node, "tagName", None) == "mo" and _text(node) in ("(", "[", "{", "|", "\u2016", "\u27e8")


def _script_whole_groups(root) -> None:
    """A script written after a closing parenthesis (``R(\\theta)^T``, ``(P^T P)_{ij}``), which TeX sets on
    the parenthesis, on the whole parenthesized group: latex2mathml makes the lone ``)`` the base."""
    for script in list(root.getElementsByTagName("msup") + root.getElementsByTagName("msub")
                       + root.getElementsByTagName("msubsup")):
        base = _element_children(script)[0]
        # the group is gathered from the row around the script (an element of fixed arity has none)
        if base.tagName != "mo" or _text(base) not in _OPENING or script.parentNode.tagName not in _ROWS:
            continue
        siblings = _element_children(script.parentNode)
        depth, start = 0, None
        for k in range(siblings.index(script) - 1, -1, -1):
            text = _text(siblings[k]) if siblings[k].tagName == "mo" else ""
            if text in _OPENING:
                depth += 1
            elif text in _OPENING.values():
                if depth == 0:
                    start = k
                    break
                depth -= 1
        if start is None:  # a group opened in another piece of a broken line: its part on this line
            start = 1 if siblings[0].tagName == "mo" and siblings[0] is not script else 0
        if start == siblings.index(script):
            continue
        group = root.ownerDocument.createElement("mrow")
        script.replaceChild(group, base)
        for sibling in siblings[start:siblings.index(script)]:
            group.appendChild(sibling)
        group.appendChild(base)


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


# -- line breaking ------------------------------------------------------------------------------------
#
# MathML Core has no automatic line breaking, and a page is read at 1280 px and at 390 px, so the breaks
# cannot be fixed for one width.  A display formula wider than LINE_EM is printed instead as a row of
# *items* (``<math class="b">``) that the page's stylesheet lays out as a wrapping flex box: each item is
# an ordinary MathML row, and the browser starts a new (indented) line before any item that does not fit.
# An item starts with the binary operator before its term (the break is before a top-level + or −) or
# ends with a relation (the break is after = or ≤); a term still wider than LINE_EM is split in turn,
# between its factors and inside its parentheses, so no unbreakable piece is much wider than a phone.
# The LaTeX printer writes the same items separated by ``\symbreak``, which the document's \fitmath turns
# into the only places a too-wide formula may break: both formats break at the same places.

#: a display formula (or a term of one) estimated wider than this many em is split into items; a
#: phone's column is about 17.4 em of math at the page's size, less the 1 em that indents a continued
#: line, and the estimate is within 10% for nine formulas in ten
LINE_EM = 15.0
#: items are at least this wide (em) where their terms allow: shorter ones are joined with their neighbours
GROUP_EM = 7.0
#: a factor narrower than this stays on the line of the factor after it (``2 (a + b)``, never ``2`` alone)
GLUE_EM = 3.0

_FENCE_EM = {"(": 0.87, ")": 0.87, "[": 0.78, "]": 0.78}  # stretchy fences, as Chromium sets them
_RELATION_OPERATORS = frozenset("=\u2260\u2248<>\u2264\u2265\u2261\u2192\u21d2")
_BINARY_OPERATORS = frozenset("+-\u2212\u00b1\u00d7\u22c5\u00b7")


def _em(node) -> float:
    """A rough width, in em, of a MathML element as a MathML Core browser lays it out: enough to decide
    whether a formula needs break points, never used to place a break (the browser does that)."""
    tag = node.tag.rsplit("}", 1)[-1]
    if tag in ("mi", "mn", "mtext", "ms"):
        return 0.56 * len(node.text or "") + (0.25 if tag == "mtext" and " " in (node.text or "") else 0)
    if tag == "mo":
        text = (node.text or "").strip()
        if text == FUNCTION_APPLICATION and node.get("rspace") == FUNCTION_SPACE:
            return 0.1667
        if text in ("\u2061", "\u2062", ""):
            return 0.0
        if node.get("stretchy") == "false":
            return 0.39
        if text in _FENCE_EM:
            return _FENCE_EM[text]
        if text in _RELATION_OPERATORS:
            return 1.33
        if text in _BINARY_OPERATORS:
            return 1.22
        if text in (",", ";"):
            return 0.45
        return 0.6 * len(text)
    children = list(node)
    if tag in ("msub", "msup") and len(children) == 2:
        return _em(children[0]) + 0.72 * _em(children[1]) + 0.05
    if tag == "msubsup" and len(children) == 3:
        return _em(children[0]) + 0.72 * max(_em(children[1]), _em(children[2])) + 0.05
    if tag in ("mfrac", "munder", "mover", "munderover"):
        return max((_em(child) for child in children), default=0.0) + 0.2
    if tag in ("msqrt", "mroot"):
        return sum(_em(child) for child in children) + 0.9
    if tag == "mtable":
        columns: dict = {}
        for row in children:
            for k, cell in enumerate(row):
                columns[k] = max(columns.get(k, 0.0), _em(cell))
        return sum(columns.values()) + 0.8 * max(len(columns) - 1, 0)
    return sum(_em(child) for child in children)


def _em_of_mathml(mathml: str) -> float:
    import xml.etree.ElementTree as ElementTree

    try:
        return _em(ElementTree.fromstring(f"<mrow>{mathml}</mrow>"))
    except ElementTree.ParseError:
        return 0.0


def width_em(expr) -> float:
    """The estimated width (em) of ``expr`` as one unbroken MathML row."""
    expr = _as_printable(expr)
    if isinstance(expr, Hashable):
        return _width_of_hashable(expr)
    return _em_of_mathml(_mathml_inner(expr))


@functools.lru_cache(maxsize=4096)
def _width_of_hashable(expr) -> float:
    return _em_of_mathml(_mathml_inner(expr))


def break_items(expr) -> list:
    """``expr`` as the items of a breakable display formula: a list of items, each a list of pieces
    ``("op", text)`` (an operator), ``("expr", e)`` / ``("paren", e)`` (a sub-expression printed whole,
    bare or in parentheses), ``("open",)`` / ``("close", exponent)`` (the parentheses of a split sum),
    ``("block", b)`` and ``("raw", mathml, latex)`` (the parts of a block diagonal), ``("script", mathml,
    latex)`` (a superscript on the parentheses that close before it: :func:`_mathml_item`).
    One item (``[[("expr", expr)]]``) means: no break."""
    expr = _as_printable(expr)
    if isinstance(expr, _BREAKABLE) and _fitting_latex(expr) is not None and width_em(expr) > LINE_EM:
        return _grouped(_items(expr))
    return [[("expr", expr)]]


def relation_items(lhs, relation: str, rhs) -> list:
    """The items of ``lhs relation rhs``: the relation ends the last item of the left side."""
    if isinstance(lhs, str) or isinstance(rhs, str):
        return [[("expr", lhs), ("op", relation), ("expr", rhs)]]
    if width_em(lhs) + width_em(rhs) + 1.3 <= LINE_EM:
        return [[("expr", _as_printable(lhs)), ("op", relation), ("expr", _as_printable(rhs))]]
    left = break_items(lhs)
    left[-1] = left[-1] + [("op", relation)]
    return _grouped(left + break_items(rhs))


def _grouped(items) -> list:
    """Neighbouring items that are together narrower than :data:`GROUP_EM` made one: every break
    opportunity costs the page a row element, and a line that holds two of them needs none between."""
    out, widths = [], []
    for item in items:
        width = _em_of_mathml(_mathml_item(item))
        if out and widths[-1] + width <= GROUP_EM:
            out[-1] = out[-1] + item
            widths[-1] += width
        else:
            out.append(item)
            widths.append(width)
    return out


def _items(expr) -> list:
    if isinstance(expr, sp.Add):
        return _sum_items(expr)
    if _block_list(expr) is not None:
        return _blockdiag_items(expr)
    factors = _breakable_factors(expr)
    if factors is None:
        return [[("expr", expr)]]
    items: list = []
    glue = False  # the previous factor was short: this one continues its item
    for factor in factors:
        pieces = _factor_items(factor)
        if items:  # juxtaposition is a product: the invisible times ends the factor before
            items[-1] = items[-1] + [("op", "\u2062")]
        if glue and items:
            items[-1] = items[-1] + pieces[0]
            items.extend(pieces[1:])
        else:
            items.extend(pieces)
        glue = len(pieces) == 1 and width_em(factor) < GLUE_EM
    return items


def _sum_items(expr) -> list:
    terms = _LATEX._as_ordered_terms(expr, order=None)
    if len(terms) <= MAX_TERMS:
        shown = _positive_first(terms)
    else:
        shown = terms[:HEAD_TERMS] + [None] + terms[-TAIL_TERMS:]
    items: list = []
    for k, term in enumerate(shown):
        if term is None:
            items.append([("op", "+"), ("dots",)])
            continue
        negative = term.could_extract_minus_sign()
        body = -term if negative else term
        pieces = _term_items(body)
        operator = MINUS if negative else ("+" if k else None)
        if operator:
            pieces[0] = [("op", operator)] + pieces[0]
        items.extend(pieces)
    return items


def _term_items(term) -> list:
    if isinstance(term, _BREAKABLE) and width_em(term) > LINE_EM:
        return _items(term)
    return [[("expr", term)]]


def _block_list(expr):
    """``(blocks, transposed)`` of a block diagonal (or its transpose), else ``None``."""
    if isinstance(expr, sp.Transpose) and isinstance(expr.arg, BlockDiagMatrix):
        return expr.arg.args, True
    if isinstance(expr, BlockDiagMatrix):
        return expr.args, False
    return None


def _blockdiag_items(expr) -> list:
    """``blockdiag(B0, B1, ...)`` with a break opportunity after each comma."""
    blocks, transposed = _block_list(expr)
    kept = _kept_indices(len(blocks))
    items = []
    for n, k in enumerate(kept):
        item = [("block", None if k is None else blocks[k])]
        # the parentheses stand in different items: plain ones in TeX (a \left...\right pair cannot break)
        if n == 0:
            item = [("raw", "<mo>(</mo>" if transposed else "", "(" if transposed else ""),
                    ("raw", "<mi>blockdiag</mi><mo>(</mo>", r"\operatorname{blockdiag}(")] + item
        if n < len(kept) - 1:
            item.append(("op", ","))
        else:
            item.append(("raw", "<mo>)</mo><mo>)</mo>" if transposed else "<mo>)</mo>", "))" if transposed else ")"))
            if transposed:
                item.append(("script", "<mi>T</mi>", "^{T}"))
        items.append(item)
    return items


_BREAKABLE = (sp.Add, sp.Mul, sp.Pow, BlockDiagMatrix, sp.Transpose)


def _breakable_factors(expr):
    """The factors of a product (or power) to break between, or ``None`` (a quotient is not broken)."""
    if isinstance(expr, sp.Pow):
        return [expr] if _split_power(expr) else None
    if isinstance(expr, MatMul):  # its own factors: asking a matrix product for its sign multiplies it out
        negative, factors = _matmul_factors(expr)
        return None if negative else factors
    if not isinstance(expr, sp.Mul) or expr.could_extract_minus_sign():
        return None
    factors = expr.as_ordered_factors()
    numbers = [f for f in factors if f.is_number]
    rest = [f for f in factors if not f.is_number]
    if not rest or any(f.is_Pow and f.exp.is_negative for f in rest):
        return None
    # the numeric coefficient (``\sqrt{2}/2``) is one factor, printed whole before the others
    return ([sp.Mul(*numbers)] if numbers else []) + rest


def _split_power(expr) -> bool:
    # a square root too wide for a line is written (...)^{1/2}: a radical sign cannot be broken
    return (isinstance(expr.base, sp.Add) and width_em(expr) > LINE_EM
            and ((expr.exp.is_Integer and expr.exp > 1) or expr.exp == sp.S.Half))


def _factor_items(factor) -> list:
    """A factor of a split product: whole, or a wide sum in parentheses split inside them."""
    base, exponent = factor, None
    if isinstance(factor, sp.Pow) and _split_power(factor):
        base, exponent = factor.base, factor.exp
    # a factor's sum splits a little below LINE_EM: a short factor before it joins its first item
    if isinstance(base, sp.Add) and (exponent is not None or width_em(base) > LINE_EM - GLUE_EM):
        inner = _sum_items(base)
        inner[0] = [("open",)] + inner[0]
        inner[-1] = inner[-1] + [("close", exponent)]
        return inner
    if _block_list(factor) is not None and width_em(factor) > LINE_EM:
        return _blockdiag_items(factor)
    return [[("paren" if _precedence(factor) < PRECEDENCE["Mul"] else "expr", factor)]]


def _mathml_piece(piece) -> str:
    kind = piece[0]
    if kind == "raw":
        return piece[1]
    if kind == "block":
        return "<mo>\u2026</mo>" if piece[1] is None else _mathml_node(_MATHML._print_block(piece[1]))
    if kind == "op":
        return f"<mo>{piece[1]}</mo>"
    if kind == "dots":
        return "<mo>\u22ef</mo>"
    # the parentheses of a split sum stand in different items: neither stretches, so both have one size
    if kind == "open":
        return '<mo stretchy="false">(</mo>'
    if kind == "close":  # its exponent is set by _mathml_item
        return '<mo stretchy="false">)</mo>'
    if kind == "paren":  # a factor in parentheses, set as the printer sets them (tight around low content)
        printer = _MATHML
        row = printer._element("mrow", None, printer._element("mo", "("), printer._print(piece[1]),
                               printer._element("mo", ")"))
        return _mathml_node(row)
    return _mathml_inner(piece[1])


def _mathml_item(item) -> str:
    """An item's MathML.  The exponent after a closing parenthesis (of a split power, of a split transpose)
    is a superscript on the parenthesized group: all of it when this item opens it, else the part of it on
    this line, after the item's leading operator; a superscript on the lone ``)`` would be an operator of
    its own to MathML, neither part of the group nor sized with it."""
    shown, opened = [], []  # MathML of the pieces so far, and where the open groups start in it
    for piece in item:
        kind = piece[0]
        if kind == "open":
            opened.append(len(shown))
        exponent = piece[1] if kind == "script" else (
            None if kind != "close" or piece[1] is None else _mathml_inner(piece[1]))
        if kind != "script":
            shown.append(_mathml_piece(piece))
        if kind == "close" and opened and exponent is None:
            opened.pop()
        if exponent is None:
            continue
        if opened:
            start = opened.pop()
        else:
            start = 1 if len(shown) > 1 and item[0][0] == "op" else 0
        shown[start:] = ["<msup><mrow>" + "".join(shown[start:]) + "</mrow>" + exponent + "</msup>"]
    return "".join(shown)


def _mathml_node(node) -> str:
    """A printed MathML node as text, finished as :meth:`ReportMathMLPrinter.doprint` finishes a formula."""
    node = _unwrap_rows(node)
    _minus_signs(node)
    _tight_fences(node)
    text = node.toxml().encode("ascii", "xmlcharrefreplace").decode()
    text = _NAMED_ENTITY.sub(lambda match: _ENTITIES[match.group(1)], text)
    return _RAW_RELATION.sub(lambda match: "<mo>" + ("&lt;" if match.group(1) == "<" else "&gt;") + "</mo>", text)


_LEADING_SIGN = re.compile(r"^<mo>(\+|\u2212|-|\u00b1|&#x0*2[Bb];|&#x0*2212;|&#x0*[Bb]1;)</mo>")


def _infix_lead(k: int, row: str) -> str:
    """An item after the first that starts with + or −: its operator is binary (``form="infix"``), which
    MathML Core would otherwise take for a sign, the first operator of a row, and set without space."""
    return _LEADING_SIGN.sub(r'<mo form="infix">\1</mo>', row, count=1) if k else row


def _mathml_lines(items) -> str:
    """The items as a breakable display formula: ``<math class="b">`` of one ``<mrow>`` per item."""
    rows = "".join("<mrow>" + _infix_lead(k, _mathml_item(item)) + "</mrow>"
                   for k, item in enumerate(items))
    return f'<math xmlns="{MATHML_NAMESPACE}" display="block" class="b">{rows}</math>'


_LATEX_OPERATORS = {"+": "+", MINUS: "-", "=": "=", "\u2260": r"\ne", "\u2248": r"\approx",
                    "\u2264": r"\le", "\u2265": r"\ge", "&lt;": "<", "&gt;": ">"}


def _latex_piece(piece) -> str:
    kind = piece[0]
    if kind == "raw":
        return piece[2]
    if kind == "block":
        return r"\ldots" if piece[1] is None else _LATEX._print_block(piece[1])
    if kind == "op" and piece[1] == "\u2062":
        return " "
    if kind == "op":
        return f" {_LATEX_OPERATORS.get(piece[1], piece[1])} "
    if kind == "dots":
        return r"\cdots"
    if kind == "open":
        return "("
    if kind == "close":
        return ")" if piece[1] is None else ")^{" + _latex_whole(piece[1]) + "}"
    if kind == "script":
        return piece[2]
    if kind == "paren":
        return r"\left(" + _latex_whole(piece[1]) + r"\right)"
    return _latex_whole(piece[1])


def _latex_lines(items) -> str:
    """The items of :func:`break_items` joined by ``\\symbreak`` (a no-op unless the formula is too wide)."""
    return r" \symbreak ".join("".join(_latex_piece(p) for p in item).strip() for item in items)
