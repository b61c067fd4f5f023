"""Every witness box of a freshly generated report reads as a counterexample, on the page and on paper.

Counted on the report `symproof report` writes (every claim, the kernel listings), so that none of
these comes back: a box without a numeric difference, a trig identity left unsimplified
(``cos²1 + sin²1``), an unfolded instance at the identity permutation, a box listing the scalar
entries of a matrix the statement names.  The detectors are tested on the defects they must catch.
"""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest
import sympy as sp

from symproof.report._document import build_document
from symproof.report._witness import certified_decimal, display_form, witness_objects

from .conftest import launch_chromium, needs_chromium

#: a box may list at most this many scalar entries (``x_{00} = 1``) when its claim's statement names a matrix
MAX_SCALAR_ENTRIES = 3


@pytest.fixture(scope="module")
def fresh(fresh_report):
    """The report `symproof report` writes, in a scratch folder, and its document."""
    document = build_document(fresh_report.results, title="t", extra_listings=fresh_report.listings)
    page = (fresh_report.folder / "index.html").read_text("utf-8")
    return SimpleNamespace(folder=fresh_report.folder, page=page, document=document, boxes=_boxes(page))


def _boxes(page: str) -> list:
    """``(claim id, box HTML)`` for every witness box of the page."""
    found = []
    for claim_id, article in re.findall(r'<article class="claim" id="([^"]+)">(.*?)</article>', page, re.S):
        found += [(claim_id, box) for box in re.findall(r'<div class="witnessbox">(.*?)</div>', article, re.S)]
    return found


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).replace("\u2061", "")


# -- what counts as a defect ---------------------------------------------------------------------

_NUMBER = re.compile(r"[\u2212-]?\s*\d+(\.\d+)?")


def _has_numeric_difference(text: str) -> bool:
    """The box states the difference as a number: an exact integer, or a decimal after ≈ (or ``=``)."""
    match = re.search(r"difference\s*=?\s*(.*)$", text, re.S)
    if match is None:
        return False
    rest = match.group(1).strip()
    return bool(re.search(r"\u2248\s*[\u2212-]?\d", rest)) or bool(_NUMBER.match(rest.split(",")[0].strip()))


def _categorical(text: str) -> bool:
    """A computed check that compares tokens, not numbers (``token = 'the'``): its box names both values."""
    return any(quote in text for quote in "'\u2018\u2019")


_TRIG_REMNANT = re.compile(r"(cos|sin)2\s*\(?([^+()]+?)\)?\s*\+\s*(sin|cos)2\s*\(?\2\)?")


def _text_has_trig_remnant(text: str) -> bool:
    return any(m.group(1) != m.group(3) for m in _TRIG_REMNANT.finditer(text.replace(" ", "")))


def _tree_has_trig_remnant(expr) -> bool:
    """A sum anywhere in ``expr`` holding ``c cos²a`` and ``c sin²a``: Pythagoras left undone."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Add):
            squares = {}
            for term in node.args:
                coeff, rest = term.as_coeff_Mul()
                if isinstance(rest, sp.Pow) and rest.exp == 2 and isinstance(rest.base, (sp.sin, sp.cos)):
                    squares.setdefault((coeff, rest.base.args[0]), set()).add(type(rest.base))
            if any(len(kinds) == 2 for kinds in squares.values()):
                return True
    return False


# a permutation as the page shows it: a list (the old notation) or cycle notation, the identity as "id"
_PERMUTATION = re.compile(r"\u03c0=(id(?![A-Za-z])|\[[\d,]+\]|(?:\(\d+(?:\d+)*\))+)")


def _identity_permutations(rule_text: str) -> list:
    found = _PERMUTATION.findall(rule_text.replace(" ", ""))
    return [p for p in found if p == "id" or (p.startswith("[") and p[1:-1].split(",") == [
        str(k) for k in range(len(p[1:-1].split(",")))])]


# a scalar entry bound in a box: a name with a numeric subscript (x_{00}, a_0) or digits (x00), then "="
_SCALAR_ENTRY = re.compile(r"(?:<msub><mi>[A-Za-z]+</mi><mi>\d+</mi></msub>|<mi>[A-Za-z]+\d+</mi>)<mo>=</mo>")


def _names_a_matrix(statement: str) -> bool:
    return bool(re.search(r"(?<![A-Za-z\\])[A-Z](?![a-z])", statement))


class TestTheDetectorsCatchTheDefects:
    """Each count below is only as good as its detector: each is shown a defect of the old boxes."""

    @pytest.mark.parametrize("text, numeric", [
        ("Counterexample: x=1; left 1, right 0; difference 1", True),
        ("Counterexample: θ=1; left −sin1 ≈ −0.8415, right 0; difference −sin1 ≈ −0.8415", True),
        ("Counterexample: column = 3, position = 3, difference = 3", True),
        ("Witness: D=(0,3,6), ω=1", False),
        ("Witness: column = 3, position = 3", False),
        ("Witness: x00=0; there the left side minus the right side is e2cos12sin1e2cos12", False),
    ])
    def test_numeric_difference(self, text, numeric):
        assert _has_numeric_difference(text) is numeric

    @pytest.mark.parametrize("text, remnant", [
        ("e2(cos2 1+sin2 1)2", True), ("sin2(θ)+cos2(θ)", True), ("cos2 1+cos2 1", False), ("sin1cos1−sin1", False),
    ])
    def test_trig_remnant_in_text(self, text, remnant):
        assert _text_has_trig_remnant(text) is remnant

    @pytest.mark.parametrize("expr, remnant", [
        (sp.exp(sp.sqrt(2) * (sp.cos(1) ** 2 + sp.sin(1) ** 2) / 2), True),
        (3 * sp.cos(2) ** 2 + 3 * sp.sin(2) ** 2 + 1, True),
        (sp.cos(1) ** 2 + 2 * sp.sin(1) ** 2, False),
        (sp.exp(sp.sqrt(2) / 2) * sp.sin(1), False),
    ])
    def test_trig_remnant_in_a_tree(self, expr, remnant):
        assert _tree_has_trig_remnant(expr) is remnant

    @pytest.mark.parametrize("rule, identities", [
        ("row sum is invariant, π = [0, 1, 2]", 1), ("T=2, π=[1, 0]", 0), ("π=[0,1] then π=[1,0]", 1), ("no π", 0),
        ("row sum is invariant, π = id", 1), ("T=2, π = (0 1)", 0), ("π = (0 1 2) then π = id", 1),
        ("π = (0 1)(2 3)", 0), ("π = identity", 0),
    ])
    def test_identity_permutation(self, rule, identities):
        assert len(_identity_permutations(rule)) == identities

    def test_scalar_entries(self):
        old = ("<msub><mi>x</mi><mi>00</mi></msub><mo>=</mo><mn>0</mn><mo>,</mo>"
               "<msub><mi>x</mi><mi>01</mi></msub><mo>=</mo><mn>0</mn><mo>,</mo><mi>q00</mi><mo>=</mo><mn>1</mn>")
        assert len(_SCALAR_ENTRY.findall(old)) == 3
        assert _SCALAR_ENTRY.findall("<mi>X</mi><mo>=</mo><mrow><mo>[</mo><mtable></mtable></mrow>") == []


class TestTheBoxesOfAFreshReport:
    def test_there_are_witness_boxes_to_count(self, fresh):
        not_in_general = [c.id for c in fresh.document.claims if c.kind == "not-in-general"]
        with_box = {claim_id for claim_id, _ in fresh.boxes}
        assert len(fresh.boxes) >= 30 and set(not_in_general) <= with_box

    def test_every_box_gives_the_difference_as_a_number(self, fresh):
        missing = [(cid, _text(box)) for cid, box in fresh.boxes
                   if not _categorical(_text(box)) and not _has_numeric_difference(_text(box))]
        assert missing == []

    def test_a_categorical_box_names_the_values_it_compares(self, fresh):
        categorical = [_text(box) for _, box in fresh.boxes if _categorical(_text(box))]
        assert len(categorical) <= 2  # the two token checks of vocab.mapping
        assert all(text.count("=") >= 2 for text in categorical)

    def test_both_sides_are_evaluated_and_the_entry_named(self, fresh):
        symbolic = [(cid, _text(box)) for cid, box in fresh.boxes if "left" in _text(box)]
        assert len(symbolic) >= 20
        assert all(re.search(r"left .+, right .+; difference", text) for _, text in symbolic)
        boxes = dict(fresh.boxes)
        assert "entry (0, 0)" in _text(boxes["perm.equivariance_vs_invariance"])

    def test_no_box_holds_an_unsimplified_trig_identity(self, fresh):
        assert [cid for cid, box in fresh.boxes if _text_has_trig_remnant(_text(box))] == []
        values = [getattr(item.counterexample, side).exact for claim in fresh.document.claims
                  for item in _items(claim.items) if item.counterexample is not None and item.counterexample.left
                  for side in ("left", "right", "difference")]
        assert values and [v for v in values if v is not None and _tree_has_trig_remnant(v)] == []

    def test_no_group_unfolds_the_identity_permutation(self, fresh):
        unfolded = []
        for claim_id, article in re.findall(r'<article class="claim" id="((?:perm|attn)\.[^"]+)">(.*?)</article>',
                                            fresh.page, re.S):
            for before in article.split('<details class="repeats">')[:-1]:
                rules = re.findall(r"<i>(.*?)</i>", before, re.S)
                unfolded += [(claim_id, _text(rules[-1]))] if rules else []
        assert len(unfolded) >= 8
        assert [u for u in unfolded if _identity_permutations(u[1])] == []

    def test_no_box_lists_the_scalar_entries_of_a_matrix(self, fresh):
        statements = {c.id: c.statement for c in fresh.document.claims}
        crowded = [(cid, len(_SCALAR_ENTRY.findall(box))) for cid, box in fresh.boxes
                   if _names_a_matrix(statements[cid]) and len(_SCALAR_ENTRY.findall(box)) > MAX_SCALAR_ENTRIES]
        assert crowded == []
        boxes = dict(fresh.boxes)
        assert re.search(r"<mi>X</mi><mo>=</mo><mrow><mo>\[</mo><mtable>",
                         boxes["attn.additive_positions_break_equivariance"])


def _items(items):
    for item in items:
        yield item
        yield from _items(item.steps)


class TestTheBoxIsExact:
    """The box's numbers are exact or certified, never a float's digits."""

    @pytest.mark.parametrize("value, digits", [
        (sp.sin(1), "0.8415"), (-sp.sin(1), "\u22120.8415"), (sp.cos(1) - sp.cos(2), "0.9564"),
        (sp.Rational(1, 3), "0.3333"), (sp.Integer(0), "0"), (sp.sqrt(-1), ""), (sp.log(-1), ""),
    ])
    def test_decimals_are_certified(self, value, digits):
        assert certified_decimal(value) == digits

    @pytest.mark.parametrize("value, shown", [
        (sp.cos(1) ** 2 + sp.sin(1) ** 2, sp.Integer(1)),
        (sp.exp(sp.sqrt(2) * (sp.cos(1) ** 2 + sp.sin(1) ** 2) / 2), sp.exp(sp.sqrt(2) / 2)),
        (1 - sp.E / (1 + sp.E), 1 / (1 + sp.E)),
    ])
    def test_display_forms_are_equal_and_simpler(self, value, shown):
        assert display_form(value) == shown

    def test_objects_are_the_matrices_and_vectors(self):
        x = {sp.Symbol(f"x{i}{j}"): int(i == j == 0) for i in range(3) for j in range(2)}
        w = {sp.Symbol(f"{n}{i}{j}"): int(i == j) for n in "qkv" for i in range(2) for j in range(2)}
        q = {sp.Symbol("q0"): 1, sp.Symbol("q1"): 0}
        objects = witness_objects({**x, **w, **q, sp.Symbol("theta"): 1})
        assert objects == [
            ((sp.Symbol("X"),), sp.ImmutableMatrix([[1, 0], [0, 0], [0, 0]])),
            ((sp.Symbol("W_Q"), sp.Symbol("W_K"), sp.Symbol("W_V")), sp.ImmutableMatrix.eye(2)),
            ((sp.Symbol("q"),), sp.Tuple(1, 0)),
            ((sp.Symbol("theta"),), sp.Integer(1)),
        ]

    @pytest.mark.parametrize("point, objects", [
        ({"z00_0": 1, "z00_1": 0}, [(("Z_00",), sp.Tuple(1, 0))]),
        ({"wq0": 1, "wq1": 0, "wq2": 0, "wq3": 1}, [(("W_Q",), sp.ImmutableMatrix.eye(2))]),
        ({"q00": 2}, [(("W_Q",), 2)]),  # a weight of width 1 is its number
        ({"m00": 1}, [(("m00",), 1)]),  # any other lone entry stays itself
        ({"q0": 1}, [(("q0",), 1)]),  # one component is no vector
        ({"q0": 1, "q2": 0}, [(("q0",), 1), (("q2",), 0)]),  # nor are components with a gap
    ])
    def test_how_entries_are_gathered(self, point, objects):
        found = witness_objects({sp.Symbol(k): sp.sympify(v) for k, v in point.items()})
        assert [(tuple(str(n) for n in names), value) for names, value in found] == objects

    def test_an_incomplete_matrix_stays_entries(self):
        point = {sp.Symbol("x00"): 1, sp.Symbol("x11"): 0}
        assert witness_objects(point) == [((sp.Symbol("x00"),), 1), ((sp.Symbol("x11"),), 0)]


# -- in Chromium ------------------------------------------------------------------------------------

_BOX_FACTS = """() => [...document.querySelectorAll('.witnessbox')].map(box => ({
    id: box.closest('article').id, text: box.innerText,
    overflows: box.scrollWidth > box.clientWidth + 1}))"""


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("width", [390, 1280])
def test_the_boxes_as_chromium_shows_them(fresh, width):
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((fresh.folder / "index.html").as_uri(), wait_until="load")
            boxes = page.evaluate(_BOX_FACTS)
        finally:
            browser.close()
    assert len(boxes) == len(fresh.boxes)
    texts = [b["text"].replace("\u2061", "").replace("\n", " ") for b in boxes]
    assert [t for t in texts if not _categorical(t) and not _has_numeric_difference(t)] == []
    assert [t for t in texts if _text_has_trig_remnant(t)] == []
    assert [b["id"] for b in boxes if b["overflows"]] == []  # a box fits its column, on a phone too


# -- on paper -----------------------------------------------------------------------------------------




def _pdf_boxes(pages) -> list:
    """The text of each box in the PDF: from "Counterexample:" to the next blank line."""
    text = "\n".join(pages)
    return [re.split(r"\n\s*\n", chunk)[0] for chunk in text.split("Counterexample:")[1:]]


@pytest.mark.latex
def test_the_pdf_boxes_carry_the_same_content(fresh, fresh_pdf):
    boxes = _pdf_boxes(fresh_pdf.pages)
    assert len(boxes) == len(fresh.boxes)
    flat = [re.sub(r"\s+", " ", box) for box in boxes]
    assert [b for b in flat if not _categorical(b) and not _has_numeric_difference(b)] == []
    assert sum("left" in b for b in flat) == sum("left" in _text(box) for _, box in fresh.boxes)
    assert sum("entry (" in b for b in flat) == sum("entry (" in _text(box) for _, box in fresh.boxes)


@pytest.mark.latex
def test_the_pdf_keeps_each_box_with_its_step_and_builds_clean(fresh_pdf):
    tops = []
    for number, page in enumerate(fresh_pdf.pages, start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if lines and lines[0].startswith("Counterexample:"):
            tops.append(number)  # a box at the head of a page: its step is on the page before
        if len(lines) >= 2 and lines[-1].isdigit():
            lines = lines[:-1]
        assert not (lines and (lines[-1] in ("Derivation.", "Statement.") or lines[-1].endswith("expression:"))), \
            f"page {number} ends on {lines[-1]!r}"
    assert tops == []
    assert re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", fresh_pdf.build.log) == []


# -- a false claim's counterexample ----------------------------------------------------------------

a, b = sp.symbols("a b", real=True)


def _false_equal(proof):
    from symproof import rotation
    proof.equal("a wrong sign: R(a)^T R(b) taken as R(a - b)", rotation(a).T * rotation(b), rotation(a - b))


def _false_differ(proof):
    x = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"x{i}{j}", real=True))
    proof.differ("X + X is not X", x + x, x, witness={s: 1 for s in x})


@pytest.mark.parametrize("derive, entry, difference", [
    (_false_equal, "entry (0, 1)", "difference"),
    (_false_differ, "entry (0, 0)", "difference 1"),
])
def test_a_false_step_shows_its_counterexample(derive, entry, difference):
    from symproof import Claim, run_claim
    from symproof.report._html import render_html
    from symproof.report._latex import render_latex

    claim = Claim(id="test.counterexample", section="9.1", title="t", statement=r"R(a)^T R(b) = R(a - b)",
                  kind="identity", derive=derive)
    document = build_document([run_claim(claim)], title="t")
    boxes = _boxes(render_html(document))
    assert len(boxes) == 1
    text = _text(boxes[0][1])
    assert entry in text and difference in text and _has_numeric_difference(text), text
    assert "\\witnessbox{Counterexample:" in render_latex(document)


class TestAWitnessTheBoxCannotEvaluate:
    """A derivation's witness is its own data: a value exact evaluation cannot take leaves the box with
    its objects, never a traceback; a large matrix is searched for its first differing entry only."""

    @pytest.mark.parametrize("value", [[1, 2], "one", None, sp.nan, sp.zoo])
    def test_odd_values(self, value):
        from symproof.report._witness import counterexample
        x = sp.Symbol("x")
        view = counterexample("differ", x + 1, x, [(x, value)])
        assert view is not None and view.entry is None
        assert view.difference is None or view.difference.exact is not None

    def test_a_large_matrix_names_its_first_differing_entry(self):
        from symproof.report._witness import MAX_COUNTED_ENTRIES, counterexample
        n = int(MAX_COUNTED_ENTRIES ** 0.5) + 1
        x = sp.Symbol("x", real=True)
        left = sp.ImmutableMatrix(n, n, lambda i, j: x if (i, j) != (1, 2) else x + 1)
        view = counterexample("differ", left, sp.ImmutableMatrix(n, n, lambda i, j: x), [(x, 0)])
        assert view.entry == (1, 2) and view.differing == 0 and view.entries == n * n
        assert view.difference.exact == 1
