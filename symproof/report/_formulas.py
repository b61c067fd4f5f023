"""A SymPy expression, or a relation between two, as the report prints it: LaTeX and MathML that fit.

The entry points every part of the report uses: :func:`to_latex` and :func:`to_mathml` print one
expression with the report's printers (:mod:`._printers`), broken into lines where it is too wide
for the page (:mod:`._breaking`); :func:`mathml_relation` and :func:`latex_relation` print
``lhs = rhs`` (or another relation) the same way.
"""

from __future__ import annotations

from ._breaking import _latex_lines, _mathml_lines, break_items, relation_items
from ._printers import _DECIMAL, _as_printable, _fitting_latex, _mathml_inner, _wrap_math, too_long_latex

__all__ = ["to_latex", "to_mathml", "mathml_relation", "latex_relation"]


def to_latex(expr) -> str:
    """LaTeX of a SymPy object (or anything sympifiable) for a math environment, with ``\\symbreak``
    where its MathML may break (:func:`break_items`)."""
    expr = _as_printable(expr)
    text = _fitting_latex(expr)
    if text is None:
        return too_long_latex(expr)
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


def _latex_inner(value) -> str:
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        return value
    return to_latex(value)
