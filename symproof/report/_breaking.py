"""Long formulas broken into lines that fit the page: the width of a formula in em, estimated from
its MathML, and the items (terms, factors, blocks) it may break between.

A formula wider than :data:`LINE_EM` is printed as aligned lines, each item whole; the estimate is
deliberately simple (a width per glyph class) and checked against a real browser's layout in the
report tests.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Hashable

import sympy as sp
from sympy.matrices.expressions import BlockDiagMatrix, MatMul
from sympy.printing.precedence import PRECEDENCE

from ._printers import (
    _ENTITIES, _LATEX, _MATHML, _NAMED_ENTITY, _RAW_RELATION, FUNCTION_APPLICATION, FUNCTION_SPACE, HEAD_TERMS,
    MATHML_NAMESPACE, MAX_TERMS, MINUS, TAIL_TERMS, _as_printable, _fitting_latex, _kept_indices, _latex_whole,
    _mathml_inner, _matmul_factors, _minus_signs, _positive_first, _precedence, _tight_fences, _unwrap_rows,
)

LINE_EM = 15.0
#: items are at least this wide (em) where their terms allow: shorter ones are joined with their neighbours
GROUP_EM = 7.0
#: a factor narrower than this stays on the line of the factor after it (``2 (a + b)``, never ``2`` alone)
GLUE_EM = 3.0

_FENCE_EM = {"(": 0.87, ")": 0.87, "[": 0.78, "]": 0.78}  # stretchy fences, as Chromium sets them
_RELATION_OPERATORS = frozenset("=\u2260\u2248<>\u2264\u2265\u2261\u2192\u21d2")
_BINARY_OPERATORS = frozenset("+-\u2212\u00b1\u00d7\u22c5\u00b7")

__all__ = ["LINE_EM", "width_em", "break_items", "relation_items"]


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
