"""What a step and a chain of steps show on the page: their two sides, a formula per row, and the
statement's sides at the ends of a chain -- read from the claim's LaTeX statement and the derivation's
items, for the HTML and LaTeX writers alike.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._printers import _as_printable, _fitting_latex

if TYPE_CHECKING:
    from ._document import Item

__all__ = ["named_sides", "shows_both_sides", "row_formulas", "statement_relations", "chain_ends",
           "runs_between_sides"]


def _text(expr) -> str | None:
    return None if expr is None else _fitting_latex(_as_printable(expr))

def named_sides(item: Item) -> bool:
    """Whether the derivation names both sides of the step (``shown=("F(PX)", "P F(X)")``)."""
    return bool(item.shown) and all(item.shown)


def shows_both_sides(item: Item) -> bool:
    """A step shows its two sides: named by the derivation, or computed and printed apart (``lhs = rhs``)."""
    return named_sides(item) or (item.view is not None and not item.same and len(item.view.exprs) == 2)


def _row_names(chain: Item) -> list:
    return [chain.shown] + [step.shown[1] if step.shown else None for step in chain.steps]


def row_formulas(chain: Item) -> list:
    """What each row of a chain shows: its name (LaTeX), its computed expression, or both; never nothing."""
    names = _row_names(chain)
    return [[f for f in (names[k], chain.view.exprs[k] if chain.computed_rows[k] else None) if f is not None]
            for k in range(len(names))]


_SPACING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)(?![A-Za-z])|\\[,;:! ]|\s+")


def _normal_tex(text: str) -> str:
    return _SPACING.sub("", text or "")


def _top_level_split(text: str, separators) -> list:
    """``text`` split at ``separators`` outside braces, brackets and parentheses."""
    out, start, depth, k = [], 0, 0, 0
    while k < len(text):
        ch = text[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            found = next((sep for sep in separators if text.startswith(sep, k)), None)
            if found:
                out.append(text[start:k])
                k = start = k + len(found)
                continue
        k += 1
    return out + [text[start:]]


_RELATION_SEPARATORS = (r",\ ", r";\ ", r":\ ")
_EQUALS = ("=",)


def statement_relations(claim, chain: Item | None = None) -> list:
    r"""The relations a chain of ``claim`` may run between: those of its statement and equations (split at
    ``,\ ``, ``;\ ``, ``:\ `` outside brackets), and a lemma ``$...$`` its own label states. Each relation is
    the list of its sides, normalised (spacing commands and blanks dropped)."""
    texts = [t for t in (claim.statement, *claim.equations) if isinstance(t, str)]
    if chain is not None and chain.label:
        texts += re.findall(r"\$([^$]+)\$", chain.label)
    relations = []
    for text in texts:
        for piece in _top_level_split(text, _RELATION_SEPARATORS):
            sides = [_normal_tex(side) for side in _top_level_split(piece, _EQUALS)]
            if len(sides) >= 2:
                relations.append(sides)
    return relations


def chain_ends(chain: Item) -> tuple:
    """The chain's first and last row as a reader sees them: the formula the derivation names them by (its
    first, resp. last, ``=``-separated part), else the computed expression's LaTeX; normalised."""
    names = _row_names(chain)
    first = _top_level_split(names[0], _EQUALS)[0] if names[0] else _text(chain.view.exprs[0])
    last = _top_level_split(names[-1], _EQUALS)[-1] if names[-1] else _text(chain.view.exprs[-1])
    return _normal_tex(first), _normal_tex(last)


def runs_between_sides(claim, chain: Item) -> bool:
    """Whether ``chain`` starts at the left side of a relation of the statement and ends at its right side
    (or at a later side of a relation ``a = b = c``)."""
    first, last = chain_ends(chain)
    return any(first == sides[a] and last in sides[a + 1:] for sides in statement_relations(claim, chain)
               for a in range(len(sides) - 1))


# a number, a list, a tuple, or a permutation in cycle notation (the identity is one instance among them)
