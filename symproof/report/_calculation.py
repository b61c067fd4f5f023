"""A worked calculation's lines in words: what each check showed about the chapter's printed digits.

The report's calculations (a number the chapter prints, such as an angle or a score) carry, for each
line, the parts that checked it; these functions say in prose (with ``$...$`` math, read by both the
HTML and the LaTeX printer) what was proved: an exact equality, or a certified enclosure of the exact
value and what it makes of the printed digits.  They print what the engine recorded and decide nothing.
"""

from __future__ import annotations

from ..claims import enclosure_texts
from ..prover import PROVED

__all__ = ["check_prose", "printed_latex"]


def printed_latex(printed) -> str:
    """The chapter's digits as LaTeX: one number, or a column of them (the printer's bracketed column)."""
    if not printed:
        return ""
    if len(printed) == 1:
        return printed[0]  # in math, a leading hyphen is set as a minus sign
    return r"\left[\begin{matrix}" + r"\\".join(printed) + r"\end{matrix}\right]"


def check_prose(part, check) -> str:
    """What a calculation line's check showed, in words (prose with ``$...$``), for both formats."""
    if check.kind == "equal":
        return f"exactly equal to ${part.shown[1]}$" if check.status == PROVED else f"not shown equal to ${part.shown[1]}$"
    if (part.data or {}).get("rounding") == "exact":
        return f"exactly ${part.after}$" if check.status == PROVED else f"not exactly ${part.after}$"
    return _enclosure_prose(part, check)


def _enclosure_prose(part, check) -> str:
    """What was proved about a printed number (prose with ``$...$``): a certified enclosure of the exact
    value (``$x \\in [lo,\\ hi]$``, or ``$x = v$`` when the value is that short decimal), and what it
    makes of the printed digits."""
    data, texts = part.data or {}, enclosure_texts(part.data)
    if texts is None:
        return ""
    name = check.rule.rsplit("$", 2)[1] if check.rule.count("$") >= 2 else "x"
    lo, hi = (f"{{{end}}}" if end.startswith("-") else end for end in texts)  # a sign: braced, set as prefix
    where = f"${name} = {lo}$" if lo == hi else f"${name} \\in [{lo},\\ {hi}]$"
    printed, rounded, places = data["printed"], data["rounded"], data["places"]
    decimals = f"{places} decimal{'' if places == 1 else 's'}"
    if data["rounding"] == "truncated":
        said = f"cut after {decimals}, ${printed}$" if check.status == PROVED else f"not ${printed}$ cut after {decimals}"
        return f"{where}: {said}" + (f" (rounded, ${rounded}$)" if rounded and rounded != printed else "")
    if check.status == PROVED:
        return f"{where}: rounded to {decimals}, ${printed}$"
    return f"{where}: not ${printed}$ rounded to {decimals}" + (f" (rounded, ${rounded}$)" if rounded else "")
