"""The report as one self-contained HTML page: MathML for math, inline SVG for figures.

No script, no stylesheet or font from the network: the page renders offline in
any current browser (MathML Core is native in Chromium, Firefox and Safari).
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from ._printers import CLAIM_ID, latex_to_mathml, mathml_relation, split_prose, to_mathml
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


def _prose(text: str, claim_ids=frozenset()) -> Markup:
    out = Markup("")
    for kind, piece in split_prose(str(text)):
        out += _latex_math(piece, "inline") if kind == "math" else _linked(piece, claim_ids)
    return out


def _linked(text: str, claim_ids) -> Markup:
    """Plain text with every claim ID of the page as a link to that claim."""
    out, last = Markup(""), 0
    for match in CLAIM_ID.finditer(text):
        if match.group(0) in claim_ids:
            out += escape(text[last:match.start()])
            out += Markup('<a href="#{0}"><code>{0}</code></a>').format(match.group(0))
            last = match.end()
    return out + escape(text[last:])


def _statement(value, display="block") -> Markup:
    """A claim's statement or assumption: a SymPy object, a LaTeX formula, or prose."""
    if not isinstance(value, str):
        return _math(value, display)
    if statement_is_prose(value):
        return _prose(value)
    return _latex_math(value, display)


def _witness(pairs) -> Markup:
    """``a = 1, b = pi/2`` as inline MathML; a computed check's named values (``model id: 1``) as text."""
    out = []
    for name, value in pairs:
        if isinstance(name, str) or isinstance(value, str):
            out.append(escape(f"{name} = ") + Markup("<code>") + escape(repr(value) if isinstance(value, str) else
                                                                        str(value)) + Markup("</code>"))
        else:
            out.append(Markup(mathml_relation(name, "=", value, display="inline")))
    return Markup(", ").join(out)


_LATEX_RELATION = {"=": "=", "\u2260": r"\ne", "\u2248": r"\approx"}


def _named_relation(shown, symbol) -> Markup:
    """The two sides as the derivation names them: ``F(PX) = P F(X)``."""
    lhs, rhs = shown
    sides = [side for side in (lhs, rhs) if side]
    return _latex_math(f" {_LATEX_RELATION.get(symbol, symbol)} ".join(sides), "inline")


_LEAF_IN_ROW = re.compile(r"<mrow>(<(mi|mn|mo)>[^<]*</\2>)</mrow>")
_HEX_ENTITY = re.compile(r"&#x0*([0-9A-Fa-f]+);|&#([0-9]+);")
_KEPT_ENTITIES = {ord("<"), ord(">"), ord("&"), ord('"')}


def compact_html(page: str) -> str:
    """The same page in fewer bytes: MathML needs no namespace in HTML, ``display="inline"`` is the
    default, a row around one token is that token, and characters need no numeric entity in UTF-8."""
    page = page.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "").replace(' display="inline"', "")
    # an invisible times only tells a screen reader "times": MathML Core lays out juxtaposition alike
    page = page.replace("<mo>&#x2062;</mo>", "").replace("<mo>\u2062</mo>", "")
    while True:
        shorter = _LEAF_IN_ROW.sub(r"\1", page)
        if shorter == page:
            break
        page = shorter

    def literal(match):
        code = int(match.group(1), 16) if match.group(1) else int(match.group(2))
        return match.group(0) if code in _KEPT_ENTITIES or code < 32 else chr(code)

    return _HEX_ENTITY.sub(literal, page)


def render_html(document) -> str:
    env = environment("html")
    claim_ids = frozenset(c.id for c in document.claims)
    env.filters.update(math=_math, statement=_statement, prose=lambda text: _prose(text, claim_ids), witness=_witness,
                       inline=lambda expr: _math(expr, "inline"), latex_math=_latex_math)
    env.globals["relation"] = lambda lhs, symbol, rhs: Markup(mathml_relation(lhs, symbol, rhs))
    env.globals["relation_inline"] = lambda lhs, symbol, rhs: Markup(
        mathml_relation(lhs, symbol, rhs, display="inline"))
    env.globals["named_relation"] = _named_relation
    return compact_html(env.get_template("report.html.j2").render(doc=document))
