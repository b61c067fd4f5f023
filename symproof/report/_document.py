"""What a report shows, independent of its format.

:func:`build_document` reads the engine's :class:`~symproof.claims.ClaimResult`
objects (their proof records: parts, chains, notes, tables) and lays them out
as sections, claims and derivation items.  It copies verdicts and details as
the engine recorded them and decides nothing; the HTML and LaTeX renderers
then print the same document with their own printer.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import sympy as sp

from .._ground._errors import InvalidInputError
from ..claims import MEASURED, TESTED, verdict_label
from ..prover import PROVED, REFUTED, UNKNOWN
from ._calculation import check_prose, printed_latex
from ._sides import _normal_tex, _row_names, _text, named_sides
from ._chapter_text import ALGORITHM_7_1, SECTION_INTROS
from ._preface import algorithm_box, printed_tactics
from ._prose import CLAIM_ID
from ._views import View, joint_view
from ._witness import Counterexample, counterexample

__all__ = ["Document", "Section", "ClaimView", "Item", "Listing", "build_document", "CHAPTER_SECTIONS"]

#: titles of the chapter's sections, used when no derivation module of a section exists yet
CHAPTER_SECTIONS = {
    "7.1": "Why positions must be represented",
    "7.2": "Absolute and sinusoidal positions",
    "7.3": "Rotary position embedding (RoPE)",
    "7.4": "RoPE gradients",
    "7.5": "Where position enters, and consistency",
}

STATUSES = (PROVED, REFUTED, UNKNOWN)
#: the HTML report's folder for listings that have a file name
LISTING_FOLDER = "listings"


@dataclass
class Item:
    """One entry of a derivation, in the order the derivation recorded it.

    ``kind`` is ``"note"``, ``"table"``, ``"chain"`` or a part kind (``"equal"``,
    ``"differ"``, ``"holds"``, ``"digits"``, ``"check"``, ``"raises"``).
    """

    kind: str  # also "group": ``steps`` are items of one check repeated over instances
    rule: str = ""
    status: str = ""
    method: str = ""
    detail: str = ""
    text: str = ""
    before: Any = None
    after: Any = None
    residual: Any = None
    witness: Sequence = ()
    #: what the witness box shows: the objects, both sides there, where and by how much they differ
    counterexample: Counterexample | None = None
    label: str = ""
    target: Any = None
    closed: bool = True
    steps: list = field(default_factory=list)
    header: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    #: the sides as the derivation names them (LaTeX), or None
    shown: Any = None
    #: what is printed for ``before``/``after`` (a chain: its first row, then one per step)
    view: View | None = None
    #: the two printed sides (or this chain row and the one above) are the same text
    same: bool = False
    #: a group: what sets each instance after the first apart (``pi = (1 2)``), one text per instance
    instances: list = field(default_factory=list)
    #: a chain: for each row (its first, then one per step), whether the row prints the computed
    #: expression; a run of rows that compute to the same text prints it once, on its last row, and
    #: the other rows of the run show the formula the derivation names them by (see :func:`row_formulas`)
    computed_rows: list = field(default_factory=list)
    #: a step whose two sides compute to the same text: how their common form is shown below the
    #: named relation: ``"line"`` (one line), ``"fold"`` (long: folded in a ``<details>``, which the print
    #: style opens), ``""`` (a zero the names state)
    common: str = "line"
    #: a calculation's line: the relation before its printed digits (``\approx``; ``=`` for an exact integer)
    relation: str = r"\approx"


@dataclass
class ClaimView:
    id: str
    title: str
    kind: str
    status: str
    methods: tuple
    statement: str
    assumptions: tuple
    equations: tuple
    equation_numbers: tuple
    items: list
    reason: str
    seconds: float
    steps: int
    figures: list = field(default_factory=list)
    #: other claims of the document this one's derivation cites (``rope.relative``), and those citing it
    uses: tuple = ()
    used_by: tuple = ()
    #: the listed kernels that rest on this claim
    kernels: tuple = ()
    #: the claims the derivation declares it builds on (``@claim(uses=...)``)
    declared_uses: tuple = ()

    @property
    def verdict(self) -> str:
        """The badge: *measured* / *tested* for a measured / tested claim that passed, else the status."""
        return verdict_label(self.status, self.kind)

    @property
    def refutation(self):
        """The counterexample of the first refuted step (in a chain or a group too), or None: what a refuted
        claim's conclusion names."""
        pending = list(self.items)
        while pending:
            item = pending.pop(0)
            if item.status == REFUTED and item.counterexample is not None:
                return item.counterexample
            pending[:0] = item.steps
        return None

    @property
    def conclusion(self) -> str:
        """How the proof ends: ``"proved"`` (the statement restated, ∎), ``"measured"`` (likewise, as
        measured), ``"refuted"`` (the statement is false, with its counterexample, ∎) or ``"open"``."""
        if self.status == PROVED:
            return "measured" if self.verdict in (MEASURED, TESTED) else "proved"
        return "refuted" if self.status == REFUTED else "open"


@dataclass
class Section:
    number: str
    title: str
    claims: list
    figures: list = field(default_factory=list)
    #: the chapter's introduction to the section (prose with ``$...$`` math), or ``""``
    intro: str = ""
    #: Algorithm 7.1 in the section that states it (:class:`~._preface.Algorithm`), or None
    algorithm: Any = None

    @property
    def anchor(self) -> str:
        return "section-" + "".join(ch if ch.isalnum() or ch == "." else "-" for ch in self.number)

    @property
    def heading(self) -> str:
        """``7.2 Title`` for a chapter section; a named group (``variant``) shows its title alone."""
        if _is_chapter_number(self.number):
            return f"{self.number} {self.title}".strip()
        return self.title or self.number


_PLAIN_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


@dataclass
class Listing:
    """A source listing: shown in full in the PDF; in the HTML, when it has a ``file_name``, written
    next to the page as ``listings/<file_name>`` and linked (a kernel is read in an editor, and the
    page stays small)."""

    title: str
    language: str
    source: str
    file_name: str | None = None
    #: the claims the kernel rests on (its export refuses unless they are proved)
    claims: tuple = ()

    def __post_init__(self):
        if self.file_name is not None and not _PLAIN_FILE_NAME.fullmatch(self.file_name):
            raise InvalidInputError(
                f"listing {self.title!r}: file name {self.file_name!r} must be a plain file name "
                "(letters, digits, '_', '.', '-'; no folder)")

    @property
    def path(self) -> str | None:
        """Where the HTML report writes the listing, relative to the page."""
        return None if self.file_name is None else f"{LISTING_FOLDER}/{self.file_name}"

    @property
    def lines(self) -> int:
        return len(self.source.splitlines())

    @property
    def anchor(self) -> str:
        if self.file_name is not None:  # a plain file name is already a valid, short fragment
            return "listing-" + self.file_name
        return "listing-" + "".join(ch if ch.isalnum() else "-" for ch in self.title.lower()).strip("-")


@dataclass
class Document:
    title: str
    sections: list
    listings: list
    counts: dict
    total_seconds: float | None
    include_times: bool
    #: the tactic tags the page prints (:class:`~._preface.Tactic`), explained in the preface
    tactics: list = field(default_factory=list)
    #: proof certificates the independent checker re-checked, and how many it rejected
    certificates: int = 0
    rejected: int = 0

    @property
    def claims(self):
        return [c for s in self.sections for c in s.claims]

    @property
    def algorithm(self):
        """Algorithm 7.1, when a section shows it, else None."""
        return next((s.algorithm for s in self.sections if s.algorithm is not None), None)


def build_document(results, *, title: str, sections: Mapping[str, str] | None = None,
                   extra_listings=(), figures=(), include_times: bool = False,
                   total_seconds: float | None = None) -> Document:
    """Lay out ``results`` by section; ``figures`` are ``(figure, rendered)`` pairs."""
    by_section: dict = {}
    for result in results:
        number = result.claim.section
        if number not in by_section:
            by_section[number] = Section(number, _section_title(number, result, sections), [])
        by_section[number].claims.append(_claim_view(result))
    claims_by_id = {c.id: c for s in by_section.values() for c in s.claims}
    _link_citations(claims_by_id)
    for figure, rendered in figures:
        home = next((claims_by_id[cid] for cid in figure.claims if cid in claims_by_id), None)
        if home is not None:
            home.figures.append(rendered)
            continue
        if figure.section not in by_section:
            by_section[figure.section] = Section(figure.section, _section_title(figure.section, None, sections), [])
        by_section[figure.section].figures.append(rendered)
    ordered = sorted(by_section.values(), key=lambda s: _section_key(s.number))
    counts = {verdict: sum(r.verdict == verdict for r in results) for verdict in (*STATUSES, MEASURED, TESTED)}
    listings = [Listing(*entry) for entry in extra_listings]
    _link_kernels(ordered, listings)
    seconds = total_seconds if total_seconds is not None else sum(r.seconds for r in results)
    for section in ordered:
        section.intro = SECTION_INTROS.get(section.number, "")
        if section.number == ALGORITHM_7_1["section"] and any(c.id == ALGORITHM_7_1["claim"] for c in section.claims):
            section.algorithm = algorithm_box(listings)
    document = Document(title, ordered, listings, counts, seconds, include_times)
    document.tactics = printed_tactics(document.claims)
    document.certificates = sum(getattr(r, "certificates", 0) + getattr(r, "rejected", 0) for r in results)
    document.rejected = sum(getattr(r, "rejected", 0) for r in results)
    return document


def _cited_ids(view: ClaimView) -> list:
    texts = []
    for item in view.items:
        texts += [item.text, item.rule, item.label] + [step.rule for step in item.steps]
    found = []
    for text in texts:
        for match in CLAIM_ID.finditer(text or ""):
            if match.group(0) not in found:
                found.append(match.group(0))
    return found


def _link_citations(claims_by_id: dict) -> None:
    for view in claims_by_id.values():
        # what the derivation declares it builds on, then the claims its notes and steps cite
        cited = dict.fromkeys([*view.declared_uses, *_cited_ids(view)])
        view.uses = tuple(cid for cid in cited if cid in claims_by_id and cid != view.id)
    for view in claims_by_id.values():
        view.used_by = tuple(other.id for other in claims_by_id.values() if view.id in other.uses)


def _link_kernels(sections, listings) -> None:
    """Each claim a listed kernel rests on links to the kernels (and the kernels back, from their data)."""
    for section in sections:
        for view in section.claims:
            view.kernels = tuple(listing for listing in listings if view.id in listing.claims)


def kernel_claims(listings) -> tuple:
    """The claims the listed kernels rest on, in their order, once each."""
    return tuple(dict.fromkeys(cid for listing in listings for cid in listing.claims))


def _is_chapter_number(number: str) -> bool:
    return all(part.isdigit() for part in number.split("."))


def _section_key(number: str):
    """Chapter sections in numeric order, then named groups (the sort is stable: in order of appearance)."""
    if _is_chapter_number(number):
        return (0, tuple(int(p) for p in number.split(".")))
    return (1, ())


def _section_title(number: str, result, sections) -> str:
    if sections and number in sections:
        return sections[number]
    if result is not None:
        heading = _module_heading(result.claim.module, number)
        if heading:
            return heading
    return CHAPTER_SECTIONS.get(number, "")


def _module_heading(module_name: str, number: str) -> str:
    """The title from a derivation module's header line ``# 7.2 Title``."""
    module = sys.modules.get(module_name)
    for line in (getattr(module, "__doc__", None) or "").splitlines():
        line = line.strip()
        if line.startswith("# "):
            heading = line[2:].strip()
            return heading[len(number):].strip() if heading.startswith(number) else heading
    return ""


def _claim_view(result) -> ClaimView:
    claim, proof = result.claim, result.proof
    return ClaimView(
        id=claim.id, title=claim.title, kind=claim.kind, status=result.status, methods=tuple(result.methods),
        statement=claim.statement, assumptions=tuple(claim.assumptions),
        equations=tuple(e for e in claim.equations if not _is_equation_number(e)),
        equation_numbers=tuple(e for e in claim.equations if _is_equation_number(e)),
        items=_derivation_items(proof, claim.id), reason=result.reason, seconds=result.seconds,
        steps=len(proof.parts), declared_uses=claim.uses,
    )


def _is_equation_number(equation) -> bool:
    """``"7.19"`` names a display equation of the chapter; anything else is a formula."""
    return isinstance(equation, str) and _is_chapter_number(equation.strip()) and "." in equation


def _derivation_items(proof, claim_id: str) -> list:
    """Parts in recorded order, each chain gathered where it starts, notes and tables interleaved."""
    notes_at: dict = {}
    for index, text in proof.notes:
        notes_at.setdefault(index, []).append(Item("note", text=text))
    for table in proof.tables:
        notes_at.setdefault(table["after_part"], []).append(
            Item("table", label=table["title"], header=list(table["header"]), rows=[list(r) for r in table["rows"]]))
    items, open_chains, open_calculations = [], {}, {}
    for index, part in enumerate(proof.parts):
        items.extend(notes_at.pop(index, []))
        line = getattr(part, "line", None)
        if line is not None:
            if line[0] not in open_calculations:
                open_calculations[line[0]] = _calculation_item(proof.calculations[line[0]], proof.parts)
                items.append(open_calculations[line[0]])
            continue
        if part.chain is None:
            items.append(_part_item(part))
            continue
        chain_item = open_chains.get(part.chain)
        if chain_item is None:
            chain = proof.chains[part.chain]
            chain_item = Item("chain", label=chain.label, before=chain.lhs, target=chain.rhs, closed=chain.closed,
                              shown=chain.shown)
            open_chains[part.chain] = chain_item
            items.append(chain_item)
        chain_item.steps.append(_part_item(part))
    for index in sorted(notes_at):
        items.extend(notes_at[index])
    for item in items:
        _attach_view(item)
    items = _fold_repeats(items)
    _mark_defined_above(items, claim_id)
    return items


def _calculation_item(calculation, parts) -> Item:
    """A worked calculation as one item: ``label`` the data given (LaTeX), one ``"line"`` step per line,
    each holding the items of the parts that check it (every line's status is that of its checks)."""
    lines = []
    for line in calculation.lines:
        checks = [_part_item(parts[k]) for k in line.parts]
        statuses = {check.status for check in checks}
        status = REFUTED if REFUTED in statuses else UNKNOWN if statuses - {PROVED} or not checks else PROVED
        for k, check in zip(line.parts, checks):
            check.text = check_prose(parts[k], check)
        exact = bool(line.printed) and all("." not in digits for digits in line.printed)
        # an exact integer the line's value already is, is not printed twice (``Δ = j − i = 2``)
        printed = "" if exact and line.show_value and line.value.is_Integer else printed_latex(line.printed)
        lines.append(Item("line", rule=line.label, status=status, shown=line.forms, relation="=" if exact else r"\approx",
                          before=line.value if line.show_value else None, text=printed,
                          label=line.equals[0] if line.equals and not line.show_value else "", steps=checks))
    return Item("calculation", rule=calculation.label, shown=calculation.given, steps=lines,
                status=REFUTED if any(x.status == REFUTED for x in lines) else
                PROVED if all(x.status == PROVED for x in lines) else UNKNOWN)


def _mark_defined_above(items, claim_id: str) -> None:
    """Note on each shown view which of its names (``s_1 = ...``) an earlier step of this claim already
    defines alike, and where, so that a page can refer to that definition instead of repeating it (the
    instances folded into a group show only their rules, so their definitions are not shown to refer to)."""
    views = [(item.steps[0] if item.kind == "group" else item).view for item in items]
    first, anchors = {}, {}
    for view in [v for v in views if v is not None and v.definitions]:
        above = {}
        for name, value in view.definitions:
            if not isinstance(value, Hashable):
                continue  # a mutable matrix: never a definition the views make, and not comparable here
            earlier = first.setdefault((name, value), view)
            if earlier is not view:
                anchor = anchors.setdefault(id(earlier), f"{claim_id}.where{len(anchors) + 1}")
                earlier.anchor = anchor
                above.setdefault(anchor, []).append(name)
        view.defined_above = tuple((anchor, tuple(names)) for anchor, names in above.items())


#: a common form whose LaTeX is longer than this is folded under the named relation (HTML ``<details>``)
FOLD_CHARS = 240


def _attach_view(item: Item) -> None:
    if item.kind == "chain":
        item.view = joint_view([item.before] + [step.after for step in item.steps])
        rows = [_text(e) for e in item.view.exprs]
        for k, step in enumerate(item.steps):
            step.same = rows[k + 1] == rows[k]
        names = _row_names(item)
        # a row prints the computed expression when the next row computes to other text (the last row of a
        # run of equal rows), or when the derivation gives it no name (every row shows a formula) -- but
        # never under a name that is that very formula ("1" over "1")
        item.computed_rows = [(k == len(rows) - 1 or rows[k + 1] != rows[k] or not names[k])
                              and not (names[k] and _normal_tex(names[k]) == _normal_tex(rows[k]))
                              for k in range(len(rows))]
    elif item.kind in ("equal", "differ", "digits"):
        item.view = joint_view([item.before, item.after])
        item.same = item.kind != "digits" and _text(item.view.exprs[0]) == _text(item.view.exprs[1])
        if item.same:
            common = item.view.exprs[0]
            if _is_zero(common) and named_sides(item):
                item.common = ""  # "= 0" is in the named relation already; a bare zero matrix says nothing more
            else:
                long = len(_text(common) or "") > FOLD_CHARS
                # nothing is omitted: a long common form is folded on screen and printed open
                item.common = "fold" if long else "line"
    elif item.kind == "holds":
        item.view = joint_view([item.before])


def _is_zero(expr) -> bool:
    if isinstance(expr, sp.MatrixBase):
        return all(entry == 0 for entry in expr)
    return isinstance(expr, sp.Basic) and expr == 0


_INSTANCE = re.compile(r"\\mathrm\{id\}|\\text\{\(\d[\d ()]*\}|\[[^\]]*\]|\(\d[^)]*\)|\d+")


def _fold_repeats(items: list) -> list:
    """Consecutive proved steps that differ only in their numbers (``pi = (0 1)``, ``pi = id``...) form one group."""
    out = []
    for item in items:
        previous = out[-1] if out else None
        if (previous is not None and item.kind in ("equal", "differ", "holds", "check")
                and item.status == PROVED and _instance_pattern(item) is not None):
            head = previous.steps[0] if previous.kind == "group" else previous
            if (head.kind == item.kind and head.status == PROVED and head.shown == item.shown
                    and _instance_pattern(head) == _instance_pattern(item)):
                if previous.kind != "group":
                    out[-1] = previous = Item("group", rule=head.rule, status=PROVED, steps=[head])
                previous.steps.append(item)
                continue
        out.append(item)
    for group in out:
        if group.kind == "group":
            _telling_first(group.steps)
            group.rule = group.steps[0].rule
            methods = {step.method for step in group.steps}
            group.method = methods.pop() if len(methods) == 1 else ""
            group.instances = _varying_clauses([step.rule for step in group.steps])[1:]
    return out


# a permutation as a rule names it, in cycle notation (``cycle_notation``): ``\pi = \text{(0 1 2)}``, or the identity
_PERMUTATION = re.compile(r"\\pi = (?:\\mathrm\{id\}|\\text\{((?:\(\d+(?: \d+)+\))+)\})")


_SIZE = re.compile(r"\bT = (\d+)")


def _moved(rule: str, size: int) -> int:
    r"""How much an instance shows move: 2 when every permutation in its rule moves every token
    (``\pi = (0 1 2)`` of three tokens), 1 when each moves some, 0 at the identity (``\pi = \mathrm{id}``),
    unfolded there a check shows nothing move; a rule naming no permutation counts as 1.  The number of
    tokens is the rule's ``T = n`` when it states one, else ``size``."""
    found = [[int(n) for n in re.findall(r"\d+", cycles)] for cycles in _PERMUTATION.findall(rule)]
    if not found:
        return 1
    if any(not moved for moved in found):
        return 0
    stated = _SIZE.search(rule)
    tokens = int(stated.group(1)) if stated else size
    return 2 if all(len(moved) == tokens for moved in found) else 1


def _telling_first(steps: list) -> None:
    """Put first (the instance a group shows unfolded) the first one that moves the most tokens (a group
    whose rules state no ``T = n`` permutes as many tokens as the largest index any of them names, plus one)."""
    size = 1 + max((int(n) for step in steps for cycles in _PERMUTATION.findall(step.rule)
                    for n in re.findall(r"\d+", cycles)), default=0)
    best = max(range(len(steps)), key=lambda k: (_moved(steps[k].rule, size), -k))
    steps.insert(0, steps.pop(best))


# a clause ends at a comma or colon followed by a space, outside $...$ and brackets
_CLAUSE_END = re.compile(r"[,:] ")


def _clauses(rule: str) -> list:
    """The clauses of ``rule`` and the separators between them: ``"$T = 3$, $\\pi = (1 2)$, mask causal"``
    is ``["$T = 3$", ", ", "$\\pi = (1 2)$", ", ", "mask causal"]``."""
    out, start, depth, math = [], 0, 0, False
    for k, ch in enumerate(rule):
        if ch == "$":
            math = not math
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif not math and depth == 0 and _CLAUSE_END.match(rule, k):
            out += [rule[start:k], rule[k:k + 2]]
            start = k + 2
    return out + [rule[start:]]


def _varying_clauses(rules: list) -> list:
    """For each rule of a group, the clauses that are not the same in every rule of the group.

    The first instance is shown whole; the others repeat it except in their numbers, so a reader needs
    only the clauses that change (``pi = (1 2)``, not the sentence around it again).  When the rules do
    not split alike, or every clause changes, each rule is kept whole."""
    split = [_clauses(rule) for rule in rules]
    if len({len(pieces) for pieces in split}) != 1:
        return list(rules)
    varying = [k for k in range(0, len(split[0]), 2) if len({pieces[k] for pieces in split}) > 1]
    if not varying or len(varying) == (len(split[0]) + 1) // 2:
        return list(rules)
    shown = []
    for pieces in split:
        text = pieces[varying[0]]
        for before, k in zip(varying, varying[1:]):
            # neighbouring clauses keep the separator between them; others are joined by a semicolon, which
            # ends a formula in prose (after a comma "d_k = 64, 32 blocks" would read as one formula "64, 32")
            text += (pieces[before + 1] if k == before + 2 else "; ") + pieces[k]
        shown.append(text)
    return shown


def _instance_pattern(item: Item):
    pattern = _INSTANCE.sub("#", item.rule)
    return pattern if pattern != item.rule else None


def _part_item(part) -> Item:
    witness = ()
    if part.witness is not None:
        witness = tuple(sorted(part.witness.items(), key=lambda kv: str(kv[0])))
    return Item(part.kind, rule=part.rule, status=part.status, method=part.method, detail=part.detail or "",
                before=part.before, after=part.after, residual=part.residual,
                witness=witness, shown=getattr(part, "shown", None),
                counterexample=counterexample(part.kind, part.before, part.after, witness))
