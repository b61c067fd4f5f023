"""The report as one self-contained HTML page: MathML for math, inline SVG for figures.

No script, no stylesheet or font from the network: the page renders offline in
any current browser (MathML Core is native in Chromium, Firefox and Safari).
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from ._printers import latex_to_mathml, mathml_relation, text_with_math_to_mathml, to_mathml
from ._templates import environment

__all__ = ["render_html", "statement_is_prose"]

_WORD = re.compile(r"[A-Za-z]{4,}")


def statement_is_prose(text: str) -> bool:
    """A statement or assumption string is LaTeX math unless it reads as words.

    Strings with ``$...$`` mix prose and math; strings without a backslash
    that contain a word of four letters or more are prose (``"i, j integers"``);
    everything else is one formula (``"m > 0"``, ``"P^T P = I"``).
    """
    return "$" in text or ("\\" not in text and bool(_WORD.search(text)))


def _math(expr, display="block") -> Markup:
    return Markup(to_mathml(expr, display=display))


def _latex_math(text: str, display="block") -> Markup:
    """MathML for a LaTeX string; its source in ``<code>`` if the converter cannot read it."""
    try:
        return Markup(latex_to_mathml(text, display=display))
    except Exception:  # the converter raises its own assorted errors on malformed input
        return Markup("<code class=\"latex\">") + escape(text) + Markup("</code>")


def _prose(text: str) -> Markup:
    out = Markup("")
    for kind, piece in text_with_math_to_mathml(str(text)):
        out += Markup(piece) if kind == "math" else escape(piece)
    return out


def _statement(value, display="block") -> Markup:
    """A claim's statement or assumption: a SymPy object, a LaTeX formula, or prose."""
    if not isinstance(value, str):
        return _math(value, display)
    if statement_is_prose(value):
        return _prose(value)
    return _latex_math(value, display)


def _witness(pairs) -> Markup:
    """``a = 1, b = pi/2`` as inline MathML."""
    return Markup(", ").join(Markup(mathml_relation(symbol, "=", value, display="inline")) for symbol, value in pairs)


def render_html(document) -> str:
    env = environment("html")
    env.filters.update(math=_math, statement=_statement, prose=_prose, witness=_witness,
                       inline=lambda expr: _math(expr, "inline"))
    env.globals["relation"] = lambda lhs, symbol, rhs: Markup(mathml_relation(lhs, symbol, rhs))
    return env.get_template("report.html.j2").render(doc=document)
