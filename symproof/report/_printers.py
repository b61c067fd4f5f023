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

Longer than 600 lines: the LaTeX and MathML printers are kept side by side, so that each
_print_<Class> of one is read beside its twin and the escaping rules they share; the breaking of
long formulas is _breaking, prose with formulas _prose, the entry points _formulas.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions import BlockDiagMatrix, MatMul
from sympy.printing.latex import LatexPrinter
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE, precedence_traditional

from ..encodings import rotation, sin_shift

__all__ = ["ReportLatexPrinter", "ReportMathMLPrinter", "MATHML_NAMESPACE", "MINUS", "MAX_FORMULA_CHARS",
           "too_long_latex"]

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


_DECIMAL = re.compile(r"-?\d+(\.\d+)?")


def _mathml_inner(value) -> str:
    # digits printed in the chapter are shown as written, not re-rounded by a Float
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        # a minus sign, not the hyphen the digits were written with
        return f"<mrow><mo>\u2212</mo><mn>{value[1:]}</mn></mrow>" if value.startswith("-") else f"<mn>{value}</mn>"
    value = _as_printable(value)
    if isinstance(value, Hashable):
        # a formula's MathML is asked for its width (line breaking, in both formats) and then printed: once.
        # The type is part of the key: SymPy's Float(1.0) == Integer(1), but they print differently
        return _mathml_of_hashable(type(value), value)
    return _mathml_uncached(value)


@functools.lru_cache(maxsize=4096)
def _mathml_of_hashable(kind, value) -> str:
    return _mathml_uncached(value)


def _mathml_uncached(value) -> str:
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
    return too_long_latex(value) if text is None else text


def too_long_latex(expr) -> str:
    """The placeholder printed for a formula over the budget (the PDF says what was elided)."""
    return r"\left\langle\text{" + _too_long(expr).replace("\u00d7", r"$\times$") + r"}\right\rangle"


class _QueryFirst(sp.Symbol):
    """An entry of the query (``q0``) that sorts before the key's (``k0``): the chapter writes ``q_0 k_0`` and
    ``q_1 k_0 - q_0 k_1``, SymPy's alphabetical order ``k_0 q_0``.  Printed exactly as the symbol it stands for."""

    @classmethod
    def class_key(cls):
        return sp.Symbol.class_key()

    def sort_key(self, order=None):
        # just before the key's entries: q_0, q_1, ..., k_0, k_1 (the other names keep their places)
        return self.class_key(), (1, ("k\x00" + self.name[1:],)), sp.S.One.sort_key(), sp.S.One


#: a query entry as SymPy names it: ``q`` and its index digits
_QUERY_ENTRY = re.compile(r"q\d+")


def _in_reading_order(expr):
    """``expr`` with every query entry ``q0, q1, ...`` in a product or sum printed before the key's (a
    scalar: the chapter's products of a query and a key are scores; a matrix is left as it is, since
    rebuilding one through ``xreplace`` costs a second over a report)."""
    if isinstance(expr, sp.Expr) and isinstance(expr, Hashable) and not expr.is_Atom:
        return _in_reading_order_of_hashable(expr)
    return expr


@functools.lru_cache(maxsize=8192)
def _in_reading_order_of_hashable(expr):
    symbols = expr.free_symbols
    queries = {x: _QueryFirst(x.name, **x.assumptions0) for x in symbols
               if type(x) is sp.Symbol and _QUERY_ENTRY.fullmatch(x.name)}
    if not queries or not any(type(x) is sp.Symbol and x.name.startswith("k") for x in symbols):
        return expr
    return expr.xreplace(queries)


def _as_printable(expr):
    if isinstance(expr, (sp.Basic, sp.MatrixBase)):
        return _in_reading_order(expr)
    if isinstance(expr, bool):
        return sp.true if expr else sp.false
    try:
        return sp.sympify(expr)
    except (sp.SympifyError, TypeError, ValueError):
        return sp.Symbol(str(expr))


def _wrap_math(inner: str, display: str) -> str:
    return f'<math xmlns="{MATHML_NAMESPACE}" display="{display}">{inner}</math>'
