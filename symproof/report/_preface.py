"""What a report says before and around its claims: the tags it prints, Algorithm 7.1 and the kernel's loop.

:func:`printed_tactics` collects the tactic tags the page prints (a claim's methods, each step's method) so
that the preface explains exactly those, in their order of first appearance, from the one table
:data:`~symproof.report._typeset.TACTICS`.  :func:`rotation_loop` cuts the per-row rotation loop out of the
C kernel the report lists, as the code generator wrote it: the page shows generated code, never a copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._chapter_text import ALGORITHM_7_1
from ._typeset import TACTICS, tactic_phrase, tactic_tags

__all__ = ["Algorithm", "Tactic", "algorithm_box", "printed_tactics", "rotation_loop"]


@dataclass(frozen=True)
class Tactic:
    """A tag the page prints, the phrase it prints for it, and what it means."""

    tag: str
    phrase: str
    meaning: str


@dataclass(frozen=True)
class Algorithm:
    """Algorithm 7.1 as the chapter states it, and the generated kernel's loop beside it (or ``""``)."""

    title: str
    claim: str
    inputs: tuple
    output: str
    steps: tuple
    invariant: str
    loop: str = ""
    #: the listing the loop is cut from (its file name), or ``""``
    loop_file: str = ""


def _methods(view) -> list:
    out = list(view.methods)
    pending = list(view.items)
    while pending:
        item = pending.pop(0)
        if item.method:
            out.append(item.method)
        pending[:0] = item.steps
    return out


def printed_tactics(claims) -> list:
    """One :class:`Tactic` per plain tag the claims' methods name, in order of first appearance; a tag the
    table does not know is shown as itself and said to be unexplained (a test keeps the table complete)."""
    seen: dict = {}
    for view in claims:
        for method in _methods(view):
            for tag in tactic_tags(method):
                if tag and tag not in seen:
                    meaning = TACTICS[tag][1] if tag in TACTICS else "a tactic this report does not explain"
                    seen[tag] = Tactic(tag, tactic_phrase(tag), meaning)
    return list(seen.values())


# the function of a generated C kernel that rotates rows with a table, and its loop over the rows
_WITH_TABLE = re.compile(r"^int \w+_apply_with_table\(.*?^\{\n(?P<body>.*?)^\}", re.DOTALL | re.MULTILINE)
_ROW_LOOP = re.compile(r"^    for \(size_t row = 0; .*?^    \}\n", re.DOTALL | re.MULTILINE)


def rotation_loop(listings) -> tuple:
    """``(loop, file name)``: the row loop of the first listed C kernel's ``*_apply_with_table``, dedented
    by one level, as generated; ``("", "")`` when no C kernel is listed."""
    for listing in listings:
        if listing.language != "c" or not (listing.file_name or "").endswith(".c"):
            continue
        function = _WITH_TABLE.search(listing.source)
        loop = _ROW_LOOP.search(function.group("body")) if function else None
        if loop:
            lines = loop.group(0).splitlines()
            return "\n".join(line[4:] for line in lines), listing.file_name
    return "", ""


def algorithm_box(listings) -> Algorithm:
    """Algorithm 7.1 with the rotation loop of the listed C kernel."""
    loop, file_name = rotation_loop(listings)
    data = ALGORITHM_7_1
    return Algorithm(data["title"], data["claim"], data["inputs"], data["output"], data["steps"], data["invariant"],
                     loop, file_name)
