"""The engine's plain text (details, rules, table cells, tactic tags) as a page typesets it.

The engine writes its evidence for a terminal: ``|exact - -0.416147| = 1.6345e-7``,
``t = 1 -> t = 10``, ``a != b``, ``entrywise (trig-polynomial)``.  :func:`typeset_pieces`
reads such a line once into pieces (text, a sign, a number); the HTML and
LaTeX renderers each print the pieces with their own small printer, so both
formats make the same decision about every minus sign, exponent and arrow.
Only what the engine printed is shown: a number keeps its digits, it is only
set differently (``1.6345 × 10⁻⁷``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Text", "Sign", "Tactic", "Number", "Script", "typeset_pieces", "SIGNS", "TACTICS", "TACTIC_PHRASES", "tactic_phrase",
           "tactic_tags", "TextPrinter"]


@dataclass(frozen=True)
class Text:
    """Words, printed as they are (escaped for the format)."""
    text: str


@dataclass(frozen=True)
class Sign:
    """A relation or operator the engine spelled in ASCII; ``name`` is a key of :data:`SIGNS`."""
    name: str


@dataclass(frozen=True)
class Tactic:
    """A verdict the engine wrote as ``proved by <tag>``: printed with the tag's phrase."""
    status: str
    tag: str


@dataclass(frozen=True)
class Number:
    """A decimal as printed: ``negative``, the ``mantissa``'s digits and an ``exponent`` of ten (or ``""``).

    ``parenthesized`` when it follows a binary minus: ``a − (−1)``, as a textbook writes it.
    """
    negative: bool
    mantissa: str
    exponent: str = ""
    parenthesized: bool = False


@dataclass(frozen=True)
class Script:
    """A name or number with a script the engine spelled in ASCII: ``p_9007199254740992`` or ``d_r`` (a
    subscript, ``kind="_"``), ``2^53`` (a superscript, ``kind="^"``)."""
    base: str
    kind: str
    script: str


#: each ASCII spelling, its name, and how the page and the PDF set it: one table for both formats
SIGNS = {
    "minus": ("\u2212", r"\ensuremath{-}"),
    "geq": ("\u2265", r"\ensuremath{\geq}"),
    "leq": ("\u2264", r"\ensuremath{\leq}"),
    "to": ("\u2192", r"\ensuremath{\to}"),
    "equals": ("=", "="),
    "neq": ("\u2260", r"\ensuremath{\neq}"),
    # ``t = 0 .. 65536``: a range as a textbook writes it
    "through": (", \u2026, ", r", \ldots, "),
}
_ASCII_SIGNS = {">=": "geq", "<=": "leq", "->": "to", "==": "equals", "!=": "neq"}

#: each tactic's tag as the engine records it: the phrase a reader reads beside a step, and what it means
#: (the report's preface explains every tag its page prints from this table)
TACTICS = {
    "structural": ("identical sides",
                   "the two sides are the same expression once SymPy has built them; the checker compares them again"),
    "trig-polynomial": ("a trigonometric polynomial",
                        "both sides are read as polynomials with rational coefficients in cos and sin of linear "
                        "combinations of the symbols, and their difference reduces to zero modulo "
                        "$c^2 + s^2 - 1$; the certificate names the multipliers, and the checker redoes the reduction"),
    "power": ("powers compared",
              "products of powers of positive bases, compared through their logarithms (a linear form in the logarithms "
              "of the bases)"),
    "summand-first": ("summand by summand",
                      "two sums over the same range compared by their summands, or closed by a proved closed form "
                      "from a small table (never SymPy's own summation)"),
    "blockwise": ("block by block",
                  "block-diagonal matrices compared block by block, blocks equal up to renaming their symbols proved once"),
    "entrywise": ("entry by entry",
                  "two matrices compared entry by entry, each entry by the tactic named after it"),
    "witness": ("a witness",
                "the statement fails at an exact point where both sides are certified defined and different "
                "(exact arithmetic, or a rigorous interval enclosure that excludes zero)"),
    "assumptions": ("from the assumptions",
                    "the condition follows from the symbols' stated assumptions (signs, integrality, ranges)"),
    "exact evaluation": ("exact evaluation",
                         "the exact value is evaluated to enough digits and compared with the digits the chapter prints"),
    "computed": ("computed",
                 "a check run on concrete data (a generated kernel against the definition, a measured table); "
                 "it passes or fails, it is not a symbolic proof"),
    "raises": ("refused with an error",
               "the input outside the definition (an odd width, a position past the table) is refused with a clear "
               "error, never answered with a silent value"),
}
#: the phrase of each tag (the first column of :data:`TACTICS`)
TACTIC_PHRASES = {tag: phrase for tag, (phrase, _) in TACTICS.items()}
#: how a nested tag reads: ``entrywise (trig-polynomial)`` is entry by entry, each <inner>
_NESTED_PHRASES = {
    "entrywise": "entry by entry, each {}",
    "blockwise": "block by block, each {}",
}
#: the inner phrase of a nested tag, where the outer one's "each" needs a noun
_INNER_PHRASES = {
    "structural": "identical on both sides",
    "trig-polynomial": "a trigonometric polynomial",
    "power": "a power identity",
}

# a number standing alone: not a digit of a name (``float32``, ``x0``) nor of a version (``1.2.3``)
_NUMBER = r"(?<![\w.])(?P<mantissa>\d+(?:\.\d+)?)(?:[eE](?P<exponent>[-+]?\d+))?(?![\w])(?!\.\d)"
# a hyphen is a minus sign before a number that stands alone, after a space, a bracket, a bar, ``=`` or
# the start (``position -1``, ``[-1, 2]``); after a letter or a digit it joins words (``x-1``, ``2-4``)
_SIGNED = r"(?:(?<=^)|(?<=[\s(\[|=,:;]))(?P<negative>-?)" + _NUMBER
# a hyphen between spaces is a binary minus when a number follows it or a one-letter operand precedes
# it (``exact - 0.84``, ``j - i``); between words it stays a dash
_BINARY = r"(?:(?<=\b[A-Za-z] )|(?<=[\d)|] ))-(?= )|-(?= -?\d)(?<= -)"
# a verdict as the prover's ``str()`` spells it: ``proved by structural``, ``proved by entrywise (power)``
_TAG = "(?:" + "|".join(sorted(map(re.escape, TACTIC_PHRASES), key=len, reverse=True)) + ")"
_VERDICT = rf"\b(?P<status>proved|refuted|unknown) by (?P<tag>{_TAG}(?: \({_TAG}(?:, {_TAG})*\))?)(?![\w-])"
# ``p_9007199254740992``, ``2^53``, ``d_r``, ``R'_m``, ``p_(t+1)``: a one-letter name (primed or not) or a
# number, then a script of digits, one letter or a parenthesized group (``model_id``, ``vocab_size`` are words: a letter before or after stops it)
_SCRIPT = (r"(?<![\w.^'])(?P<base>[A-Za-z]'?|\d+)(?P<kind>[_^])"
           r"(?:(?P<script>\d+|[A-Za-z])(?![\w.])|\((?P<group>[\w+\-]+)\))")
_TOKEN = re.compile(rf"(?P<verdict>{_VERDICT})|(?P<script_>{_SCRIPT})|(?P<sign>>=|<=|->|==|!=)|(?P<range> \.\. )"
                    rf"|(?P<binary>{_BINARY})|(?P<number>{_SIGNED})")


def typeset_pieces(text: str) -> tuple:
    """``text`` as :class:`Text`, :class:`Sign` and :class:`Number` pieces; plain words stay one piece."""
    pieces, last, after_minus = [], 0, False
    text = str(text)
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "number" and not (match.group("negative") or match.group("exponent")):
            continue  # a plain unsigned decimal is already what a textbook prints
        if match.start() > last:
            pieces.append(Text(text[last:match.start()]))
            after_minus = after_minus and not text[last:match.start()].strip()
        if kind == "verdict":
            pieces.append(Tactic(*match.group("status", "tag")))
        elif kind == "script_":
            base, script_kind, script, group = match.group("base", "kind", "script", "group")
            pieces.append(Script(base, script_kind, script or group))  # ``p_(t+1)``: the parentheses only group
        elif kind == "range":
            pieces.append(Sign("through"))
        elif kind == "sign":
            pieces.append(Sign(_ASCII_SIGNS[match.group("sign")]))
        elif kind == "binary":
            pieces.append(Sign("minus"))
        else:
            sign, mantissa, exponent = match.group("negative", "mantissa", "exponent")
            pieces.append(Number(bool(sign), mantissa, exponent or "", parenthesized=bool(sign) and after_minus))
        after_minus = kind == "binary"
        last = match.end()
    if last < len(text):
        pieces.append(Text(text[last:]))
    return tuple(pieces)


_NESTED = re.compile(r"([\w -]+?) \((.+)\)")


def tactic_phrase(tag: str) -> str:
    """A tactic's tag (``entrywise (structural, trig-polynomial)``) as English; an unknown tag as itself."""
    tag = str(tag)
    nested = _NESTED.fullmatch(tag)
    if nested and nested.group(1) in _NESTED_PHRASES:
        inner = [_INNER_PHRASES.get(t, tactic_phrase(t)) for t in nested.group(2).split(", ")]
        return _NESTED_PHRASES[nested.group(1)].format(" or ".join(inner))
    return TACTIC_PHRASES.get(tag, tag)


def tactic_tags(tag: str) -> list:
    """The plain tags a method names: ``entrywise (structural, trig-polynomial)`` is ``entrywise``,
    ``structural`` and ``trig-polynomial``."""
    tag = str(tag)
    nested = _NESTED.fullmatch(tag)
    if nested and nested.group(1) in _NESTED_PHRASES:
        return [nested.group(1)] + [t for inner in nested.group(2).split(", ") for t in tactic_tags(inner)]
    return [tag]


class TextPrinter:
    """Prints pieces by their class (``_print_Text``, ``_print_Sign``, ``_print_Number``), as SymPy's printers do."""

    #: which column of :data:`SIGNS` this printer takes
    column = 0

    def doprint(self, text) -> str:
        return "".join(getattr(self, "_print_" + type(piece).__name__)(piece) for piece in typeset_pieces(text))

    def _print_Sign(self, sign: Sign) -> str:
        return SIGNS[sign.name][self.column]

    def _print_Tactic(self, tactic: Tactic) -> str:
        return self._print_Text(Text(f"{tactic.status}: {tactic_phrase(tactic.tag)}"))

    def _print_Script(self, script: Script) -> str:
        raise NotImplementedError

    def _print_Number(self, number: Number) -> str:
        shown = (self._print_Sign(Sign("minus")) if number.negative else "") + self._mantissa(number)
        return "(" + shown + ")" if number.parenthesized else shown

    def _mantissa(self, number: Number) -> str:
        raise NotImplementedError
