"""Every step shows its two sides, every chain row a formula, and every chain runs between the statement's sides.

Counted on a freshly built report of the whole chapter (the view model, the HTML page and the PDF's text), and
on tiny claims built here that break each rule, so that the counts are seen to find what they count.
"""

from __future__ import annotations

import re
import shutil

import pytest
import sympy as sp

from symproof import Claim, rotation, run_claim
from symproof.report import build_document, render_html
from symproof.report._sides import _text, named_sides, row_formulas, runs_between_sides, shows_both_sides

a, b, x = sp.symbols("a b x", real=True)

#: what a page said where a step or a chain row showed no sides of its own (none may come back)
NO_SIDES = ("Both sides reduce to", "as the line above", "the same canonical expression")


def _steps(claim_view):
    return [step for item in claim_view.items for step in (item.steps if item.kind == "group" else [item])]


def _chains(claim_view):
    return [item for item in _steps(claim_view) if item.kind == "chain"]


def steps_without_sides(document) -> list:
    return [(c.id, s.rule) for c in document.claims for s in _steps(c)
            if s.kind in ("equal", "differ") and not shows_both_sides(s)]


def rows_without_a_formula(document) -> list:
    return [(c.id, chain.label, k) for c in document.claims for chain in _chains(c)
            for k, shown in enumerate(row_formulas(chain)) if not shown]


def rows_printed_twice(document) -> list:
    """Consecutive chain rows that both print the same computed text (a formula shown twice)."""
    out = []
    for c in document.claims:
        for chain in _chains(c):
            texts = [_text(e) for e in chain.view.exprs]
            out += [(c.id, chain.steps[k - 1].rule) for k in range(1, len(texts))
                    if chain.computed_rows[k] and chain.computed_rows[k - 1] and texts[k] == texts[k - 1]]
    return out


def chains_off_the_statement(document) -> list:
    return [(c.id, chain.label) for c in document.claims for chain in _chains(c) if not runs_between_sides(c, chain)]


# -- the chapter, freshly built ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chapter(full_chapter_results):
    return build_document(full_chapter_results, title="t")


def test_the_chapter_is_proved_with_every_added_step(full_chapter_results):
    assert [r.id for r in full_chapter_results if r.verdict not in ("proved", "measured")] == []
    assert sum(r.rejected for r in full_chapter_results) == 0


@pytest.mark.parametrize("count", [steps_without_sides, rows_without_a_formula, rows_printed_twice,
                                   chains_off_the_statement], ids=lambda f: f.__name__)
def test_the_chapter_counts_zero(chapter, count):
    assert count(chapter) == []


def test_the_page_never_says_a_step_is_the_same_as_something_unshown(chapter):
    page = render_html(chapter)
    visible = re.sub(r"<[^>]+>", " ", page)
    assert {phrase: visible.count(phrase) for phrase in NO_SIDES} == dict.fromkeys(NO_SIDES, 0)
    # every row of every chain on the page holds a formula (its relation sign aside)
    rows = re.findall(r'<div class="row[^"]*"><span>[^<]*</span><div>(.*?)(?:<div class="why">|</div></div>)', page, re.S)
    assert len(rows) > 24 and [row[:80] for row in rows if "<math" not in row] == []


def test_no_step_shows_a_bare_zero_matrix(chapter):
    """A step whose sides are both zero says what is zero (``dA/dt = 0``): its names, never the zero alone."""
    zero_steps = [(c.id, s) for c in chapter.claims for s in _steps(c) if s.kind == "equal" and s.same
                  and isinstance(s.view.exprs[0], sp.MatrixBase) and all(e == 0 for e in s.view.exprs[0])]
    assert zero_steps, "the chapter has steps whose sides are zero matrices (sin.shift_matrix)"
    assert [(cid, s.rule) for cid, s in zero_steps if not named_sides(s)] == []


def test_rope_inner_product_ends_at_the_statement_right_side(chapter):
    view = next(c for c in chapter.claims if c.id == "rope.inner_product")
    (chain,) = _chains(view)
    assert chain.shown == r"(R(i\omega) q)^T (R(j\omega) k)"
    assert chain.steps[-1].shown[1] == r"q^T R((j-i)\omega) k"
    # the last row's computed expression is the product q^T R((j - i) w) k itself, not a scalar multiplied out
    assert isinstance(chain.view.exprs[-1], sp.MatMul)


# -- tiny claims that break each rule -----------------------------------------------------------------------------

def _chain_stops_short(proof):
    # runs from R(a)^T R(b) but stops at the entry products, never reaching R(b - a)
    proof.chain(rotation(a).T * rotation(b), rotation(b - a), shown="R(a)^T R(b)") \
        .step("entry products", rotation(b - a))


def _chain_starts_elsewhere(proof):
    proof.chain(rotation(a).T * rotation(b), rotation(b - a)) \
        .step("angle-difference formulas", rotation(b - a), shown="R(b - a)")


def _chain_between_sides(proof):
    proof.chain(rotation(a).T * rotation(b), rotation(b - a), shown="R(a)^T R(b)") \
        .step("angle-difference formulas", rotation(b - a), shown="R(b - a)")


def _lemma_chain(proof):
    proof.chain(rotation(a).T * rotation(b), rotation(b - a), r"a lemma: $R(a)^T R(b) = R(b - a)$",
                shown="R(a)^T R(b)").step("angle-difference formulas", rotation(b - a), shown="R(b - a)")


def _unnamed_rows(proof):
    # the second row computes to the first's text: neither named, each prints that expression
    proof.chain(sp.sin(x)**2 + sp.cos(x)**2, sp.Integer(1)) \
        .step("read as it stands", sp.sin(x)**2 + sp.cos(x)**2) \
        .step("sin^2 + cos^2 = 1", sp.Integer(1), shown="1")


def _unnamed_same_step(proof):
    proof.equal("a matrix equals itself", rotation(a), rotation(a))


def _named_same_step(proof):
    proof.equal("a matrix equals itself", rotation(a), rotation(a), shown=("R(a)", "R(a)^{TT}"))


def _zero_step(proof):
    proof.equal("R(a) does not involve b", rotation(a).diff(b), sp.zeros(2, 2))


def _tiny(derive, statement=r"R(a)^T R(b) = R(b - a)"):
    claim = Claim(id=f"test.{derive.__name__.strip('_')}", section="9.1", title="t", statement=statement,
                  kind="identity", derive=derive)
    return build_document([run_claim(claim)], title="t")


@pytest.mark.parametrize("derive, count, found", [
    (_chain_stops_short, chains_off_the_statement, 1),
    (_chain_starts_elsewhere, chains_off_the_statement, 1),
    (_chain_between_sides, chains_off_the_statement, 0),
    (_lemma_chain, chains_off_the_statement, 0),
    (_unnamed_rows, rows_printed_twice, 1),
    (_unnamed_rows, rows_without_a_formula, 0),
    (_unnamed_same_step, steps_without_sides, 1),
    (_named_same_step, steps_without_sides, 0),
    (_zero_step, steps_without_sides, 1),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_count_finds_what_it_counts(derive, count, found):
    assert len(count(_tiny(derive))) == found


def test_a_chain_stopping_short_is_still_proved_and_still_found():
    """The check is about what a reader sees, not the verdict: the chain is proved, and still found short."""
    document = _tiny(_chain_stops_short)
    assert document.claims[0].status == "proved"
    assert chains_off_the_statement(document) == [("test.chain_stops_short", "")]


def test_a_chain_against_a_statement_with_several_relations():
    """``A = B,\\ C = D``: a chain may run between the sides of either relation, not from A to D."""
    statement = r"R(a)^T R(b) = R(b - a),\ \det R(a) = 1"
    assert chains_off_the_statement(_tiny(_chain_between_sides, statement)) == []

    def across(proof):
        proof.chain(rotation(a).T * rotation(b), rotation(b - a), shown="R(a)^T R(b)") \
            .step("angle-difference formulas", rotation(b - a), shown="1")

    assert len(chains_off_the_statement(_tiny(across, statement))) == 1


def test_a_named_zero_step_shows_its_names_not_the_zero():
    def named_zero(proof):
        proof.equal("R(a) does not involve b", rotation(a).diff(b), sp.zeros(2, 2),
                    shown=(r"\partial R(a) / \partial b", "0"))

    document = _tiny(named_zero)
    page = render_html(document)
    article = page[page.index("<article"):page.index("</article>")]
    assert "\u2202" in article  # the named side
    assert "<mtable" not in article  # and no zero matrix


# -- the PDF ------------------------------------------------------------------------------------------------------

needs_pdf_tools = pytest.mark.skipif(shutil.which("pdflatex") is None or shutil.which("pdftotext") is None,
                                     reason="pdflatex or pdftotext (poppler-utils) is not installed")


@pytest.fixture(scope="module")
def chapter_pdf(fresh_pdf):
    return fresh_pdf.tex, fresh_pdf.build, fresh_pdf.text


@pytest.mark.latex
@needs_pdf_tools
def test_the_pdf_shows_every_step_with_its_sides(chapter_pdf):
    tex, _, text = chapter_pdf
    flat = " ".join(text.split())
    assert {phrase: flat.count(phrase) for phrase in NO_SIDES} == dict.fromkeys(NO_SIDES, 0)
    # rope.inner_product's chain ends at q^T R((j - i) w) k in the PDF too
    block = tex[tex.index(r"\texttt{rope.inner\_product}"):tex.index(r"\texttt{rope.score\_expansion}")]
    assert r"q^T R((j-i)\omega) k" in block


@pytest.mark.latex
@needs_pdf_tools
def test_the_pdf_stays_clean(chapter_pdf):
    _, build, text = chapter_pdf
    over = [float(w) for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", build.log)]
    assert [w for w in over if w > 2.0] == []
    dangling = []
    for number, page in enumerate(text.split("\f"), start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if len(lines) >= 2 and lines[-1].isdigit():
            lines = lines[:-1]
        if lines and (lines[-1] in ("Derivation.", "Statement.") or lines[-1].endswith(("expression:", "reduce to:"))):
            dangling.append((number, lines[-1]))
    assert dangling == []


def test_a_rule_naming_a_block_size_reads_as_typeset():
    """``2x2`` in a step's rule is set as 2 x 2; the replacement once read its backslash-t as a tab (``2imes2``)."""
    from symproof.report._prose import split_prose

    assert split_prose("multiply the 2x2 block") == [("text", "multiply the "), ("math", r"2\times2"),
                                                    ("text", " block")]
