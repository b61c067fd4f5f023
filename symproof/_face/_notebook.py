"""How results show in Jupyter: ``_repr_html_`` and ``_repr_markdown_`` of Verdict, ClaimResult, AuditResult.

Each result becomes rows of (label, value); a value is text or a formula.  Every
text is escaped for the format (HTML entities; in Markdown also its own
punctuation), and a formula is printed by the report's printers: MathML in
HTML, LaTeX between ``$$`` in Markdown with ``<``, ``>`` and ``&`` written as
TeX commands, so a symbol named ``<script>`` stays a name and never becomes markup.  No name
reaches TeX as a command (the printers set a name holding ``\\`` or braces character by character),
a command that acts on the page (``\\href``, ``\\class``, ...) is never written, and the HTML view is
marked for MathJax to leave alone (its ``$`` are text, not math).
"""

from __future__ import annotations

import html
import re

__all__ = ["verdict_rows", "claim_result_rows", "audit_result_rows", "to_html", "to_markdown", "render"]


class Math:
    """A formula to print: ``lhs = rhs``, or one expression when ``rhs`` is None."""

    def __init__(self, lhs, rhs=None):
        self.lhs, self.rhs = lhs, rhs


class TeX(str):
    """A formula written by hand in LaTeX (a claim's statement)."""


def verdict_rows(verdict) -> tuple:
    rows = [("formula", Math(verdict.lhs, verdict.rhs)), ("verdict", verdict.status), ("method", verdict.method)]
    if verdict.witness is not None:
        rows.append(("witness", verdict.witness_text()))
        rows.append(("lhs - rhs there", Math(verdict.residual)))
    if verdict.reason:
        rows.append(("reason", verdict.reason))
    return f"prove_equal: {verdict.status}", tuple(rows)


def claim_result_rows(result) -> tuple:
    claim = result.claim
    rows = [("claim", f"{claim.id} ({claim.section}): {claim.title}"), ("statement", TeX(claim.statement))]
    rows += [("formula", equation) for equation in claim.equations if not re.fullmatch(r"\(?[0-9.]+\)?", equation)]
    rows += [("verdict", result.verdict), ("method", result.method)]
    if result.witness_text:
        rows.append(("witness", result.witness_text))
    if result.reason:
        rows.append(("reason", result.reason))
    return f"{claim.id}: {result.verdict}", tuple(rows)


def audit_result_rows(result) -> tuple:
    rows = [("function", result.function), ("model", result.variant.title), ("verdict", result.verdict)]
    if result.max_error is not None:
        rows.append(("max entry error", f"{result.max_error:.3g}"))
    for difference in result.differences:
        found = f"{difference.what}: expected {difference.expected}, found {difference.found}"
        rows.append(("differs", found))
        if difference.basis is not None:  # the witness: the smallest input that shows it
            rows.append(("witness", f"e_{difference.basis} at position {difference.position}"))
    if result.relayout:
        rows.append(("re-layout", str(result.relayout.get("call", ""))))
    return f"audit: {result.verdict}", tuple(rows)


def _html_value(value) -> str:
    if isinstance(value, TeX):
        from ..report._prose import latex_to_mathml

        return latex_to_mathml(value, display="inline")
    if isinstance(value, Math):
        from ..report import to_mathml
        from ..report._formulas import mathml_relation

        if value.rhs is None:
            return to_mathml(value.lhs, display="inline")
        return mathml_relation(value.lhs, "=", value.rhs, display="inline")
    return html.escape(str(value), quote=True)


def to_html(title: str, rows) -> str:
    body = "".join(f"<tr><th style=\"text-align:left\">{html.escape(label)}</th><td>{_html_value(value)}</td></tr>"
                   for label, value in rows)
    # MathJax (Jupyter's) reads $...$ in HTML outputs too: this one holds MathML and text only
    return (f"<div class=\"symproof tex2jax_ignore mathjax_ignore\"><strong>{html.escape(title)}</strong>"
            f"<table>{body}</table></div>")


#: characters Markdown (or Jupyter's math finder) would read as markup, written as character references,
#: which CommonMark turns back into the plain character and never into markup
_MARKDOWN_MARKUP = {ord(ch): f"&#{ord(ch)};" for ch in "&<>\"'\\`*_[]$|#~!"}
#: in a formula: what would end the math or the table cell, or become markup, as a TeX command
_TEX_MARKUP = {"<": r"\lt ", ">": r"\gt ", "|": r"\vert "}


#: TeX commands that act on the page where MathJax renders them (links, classes, styles, loaded code);
#: the printers never write one from a name, and a formula that still holds one shows it as text
_ACTIVE_TEX = ("href", "class", "style", "cssId", "url", "unicode", "require", "html", "data", "attr", "tip",
               "toggle", "mathtip", "texttip", "action", "def", "newcommand", "renewcommand", "let")
_TEX_TOKEN = re.compile(r"\\([A-Za-z]+)|\\.|\$")


def _inert_tex(tex: str) -> str:
    """``tex`` with every unescaped ``$`` escaped (it would end the math) and every command of
    :data:`_ACTIVE_TEX` written as text (``\\backslash{}href``)."""
    def token(match):
        if match.group() == "$":
            return r"\$"
        if match.group(1) in _ACTIVE_TEX:
            return r"\backslash{}\mathrm{" + match.group(1) + "}"
        return match.group()
    return _TEX_TOKEN.sub(token, tex)


def _markdown_text(text) -> str:
    return str(text).replace("\n", " ").translate(_MARKDOWN_MARKUP)  # one pass: no reference is re-escaped


def _markdown_value(value) -> str:
    if isinstance(value, (Math, TeX)):
        from ..report import to_latex

        if isinstance(value, TeX):
            tex = str(value)
        else:
            tex = to_latex(value.lhs) if value.rhs is None else f"{to_latex(value.lhs)} = {to_latex(value.rhs)}"
        return "$" + "".join(_TEX_MARKUP.get(ch, ch) for ch in _inert_tex(tex).replace("\n", " ")) + "$"
    return _markdown_text(value)


def to_markdown(title: str, rows) -> str:
    lines = [f"**{_markdown_text(title)}**", "", "| | |", "|---|---|"]
    lines += [f"| {_markdown_text(label)} | {_markdown_value(value)} |" for label, value in rows]
    return "\n".join(lines)


def render(result, format: str) -> str:
    """The notebook view of a ``Verdict``, ``ClaimResult`` or ``AuditResult`` in ``format`` (``"html"`` or
    ``"markdown"``): the function :mod:`symproof` registers with :mod:`symproof._ground._display`."""
    from .._audit import AuditResult
    from ..claims import ClaimResult
    from ..prover import Verdict

    rows = {Verdict: verdict_rows, ClaimResult: claim_result_rows, AuditResult: audit_result_rows}
    for kind, rows_of in rows.items():
        if isinstance(result, kind):
            return (to_html if format == "html" else to_markdown)(*rows_of(result))
    raise TypeError(f"no notebook view for {type(result).__name__}")
