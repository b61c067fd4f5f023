"""The report as a reader meets it: every step shows what it compares, nothing is elided or bare.

These tests render the whole chapter (every claim, as ``symproof report`` does) and
read the HTML and the LaTeX the way a reader would.
"""

from __future__ import annotations

import html as html_module
import re

import pytest
import sympy as sp

from symproof.report import build_document, render_html, render_latex
from symproof.report._prose import split_prose
from symproof.report._views import joint_view

from .conftest import PAGE_BUDGET


@pytest.fixture(scope="module")
def chapter(fresh_report):
    results = fresh_report.results
    # the page `symproof report` writes: every claim and the kernel listings
    document = build_document(results, title="t", extra_listings=fresh_report.listings)
    return results, document, render_html(document), render_latex(document)


def _articles(page: str) -> dict:
    return dict(re.findall(r'<article class="claim" id="([^"]+)">(.*?)</article>', page, re.S))


def _math_text(math: str) -> str:
    return html_module.unescape(re.sub(r"<[^>]+>", "", math)).replace("\u2062", "").strip()


def test_no_formula_is_elided(chapter):
    _, _, page, tex = chapter
    assert "elided" not in page and "elided" not in tex


def test_no_relation_shows_the_same_text_on_both_sides(chapter):
    _, _, page, _ = chapter
    offenders = []
    for math in re.findall(r"<math\b.*?</math>", page, re.S):
        text = _math_text(math)
        for symbol in ("=", "\u2260"):
            if text.count(symbol) == 1 and text.count("=") + text.count("\u2260") == 1:
                left, right = (side.strip() for side in text.split(symbol))
                if left and left == right:
                    offenders.append(text[:80])
    assert offenders == []


def test_no_step_is_a_bare_truth_value(chapter):
    _, _, page, tex = chapter
    assert not [m for m in re.findall(r"<math\b.*?</math>", page, re.S) if _math_text(m) in ("True", "False")]
    assert r"\text{True}" not in tex and r"\mathrm{True}" not in tex


@pytest.mark.parametrize("claim_id", ["attn.equivariance", "attn.masked_equivariance", "grad.score_not_monotone",
                                      "perm.equivariance_vs_invariance"])
def test_the_headline_steps_name_their_sides(chapter, claim_id):
    """A step whose computed sides coincide must say what was compared (``F(PX)`` vs ``P F(X)``)."""
    _, document, _, _ = chapter
    claim = next(c for c in document.claims if c.id == claim_id)
    items = [s for item in claim.items for s in (item.steps if item.kind == "group" else [item])]
    unnamed = [item.rule for item in items if item.kind in ("equal", "differ") and item.same and not item.shown]
    assert unnamed == []


def test_the_non_monotone_score_shows_its_numbers_and_witness(chapter):
    _, _, page, tex = chapter
    article = _articles(page)["grad.score_not_monotone"]
    texts = [_math_text(m) for m in re.findall(r"<math\b.*?</math>", article, re.S)]
    # as a reader sees it: cos 3 < cos 0 (function application U+2061 is invisible)
    shown = [t.replace(" ", "").replace("\u2061", "") for t in texts]
    assert "cos3<cos0" in shown, texts
    assert "cos6>cos3" in shown, texts
    assert 'class="witnessbox"' in article
    assert r"\cos {3} < \cos {0}" in tex


def test_every_not_in_general_claim_has_a_witness_box(chapter):
    results, _, page, _ = chapter
    articles = _articles(page)
    missing = [r.id for r in results if r.claim.kind == "not-in-general" and 'class="witnessbox"' not in articles[r.id]]
    assert missing == []


def test_prose_has_no_ascii_math(chapter):
    _, _, page, tex = chapter
    visible = re.sub(r"<math\b.*?</math>|<pre>.*?</pre>|<[^>]+>", " ", page, flags=re.S)
    for pseudo in ("P^T P", "omega_r", "sqrt(d)", "p_(t+1)", "kroneckerdelta", "sintwcosDw", "modelid"):
        assert pseudo not in visible, pseudo
    body = tex[tex.index(r"\begin{document}"):tex.index(r"\section{Generated") if r"\section{Generated" in tex
               else len(tex)]
    assert body.count(r"\textasciicircum") <= 5
    assert "omega\\_" not in body


def test_a_long_matrix_is_shown_by_one_entry_with_named_scores():
    x = sp.symbols("x0:12", real=True)
    scores = [sum(x[(k + n) % 12] * x[(k + 2 * n + 1) % 12] for n in range(6)) for k in range(6)]
    row = [sp.exp(s) / sum(sp.exp(t) for t in scores) for s in scores]
    big = sp.ImmutableMatrix(6, 6, lambda i, j: row[j] * (i + 1))
    view = joint_view([big, big])
    assert view.entry == (0, 0) and view.shape == (6, 6)
    assert all(not isinstance(e, sp.MatrixBase) for e in view.exprs)
    assert [str(name) for name, _ in view.definitions][:6] == [f"s_{k}" for k in range(1, 7)]


def test_a_short_matrix_is_shown_whole():
    small = sp.Matrix([[1, 2], [3, 4]])
    view = joint_view([small, small])
    assert view.entry is None and view.exprs[0] == small


@pytest.mark.parametrize("text, math", [
    ("P^T P = I (perm.orthogonal)", "P^{T} P = I"),
    ("the first frequency omega_r", r"\omega_{r}"),
    ("scaled by sqrt(d) here", r"\sqrt{d}"),
    ("p_t = p_(t+1) first", "p_{t} = p_{t+1}"),
])
def test_ascii_math_in_prose_is_typeset(text, math):
    pieces = split_prose(text)
    assert ("math", math) in pieces
    assert all("_" not in piece and "^" not in piece for kind, piece in pieces if kind == "text")


def test_claim_ids_in_prose_stay_words():
    assert split_prose("uses rope.block_relative here") == [("text", "uses rope.block_relative here")]


def test_claims_link_the_claims_they_use(chapter):
    _, document, page, _ = chapter
    users = [c for c in document.claims if c.uses]
    assert users, "no derivation cites another claim"
    for claim in users:
        article = _articles(page)[claim.id]
        for used in claim.uses:
            assert f'<a href="#{used}">{used}</a>' in article
    articles = _articles(page)
    assert 'id="contents"' in page
    for claim in document.claims:
        # the ID in the heading is the permalink; every claim leads back to the contents
        assert f'<h3><a href="#{claim.id}"><code>{claim.id}</code></a>' in articles[claim.id]
        assert '<a class="up" href="#contents">contents</a>' in articles[claim.id]


def test_most_claims_link_to_the_claims_they_use_or_are_used_by(chapter):
    """Cross-links come from the derivations' own data (``@claim(uses=...)``), both ways."""
    _, document, page, tex = chapter
    linked = [c for c in document.claims if c.uses or c.used_by]
    assert len(linked) >= 30, [c.id for c in document.claims if not (c.uses or c.used_by)]
    by_id = {c.id: c for c in document.claims}
    for c in document.claims:
        for used in c.uses:
            assert c.id in by_id[used].used_by
    assert r"\textbf{Uses.}" in tex and r"\textbf{Used by.}" in tex


def test_svg_ids_are_unique(chapter):
    from symproof.report import FIGURES, render_figure

    ids = []
    for spec in FIGURES:
        ids += re.findall(r'\bid="([^"]+)"', render_figure(spec).svg)
    assert len(ids) == len(set(ids))


# (the rules of one folded group, what each instance after the first shows)
FOLDED = [
    ("the varying clause alone",
     ["$T = 3$, $\\pi = \\mathrm{id}$, mask causal L", "$T = 3$, $\\pi = \\text{(1 2)}$, mask causal L"],
     ["$\\pi = \\text{(1 2)}$"]),
    ("neighbouring clauses keep their separator",
     ["float64: p_t == p_(t+1) at t = 9007199254740992, re-computed",
      "float16: p_t == p_(t+1) at t = 2048, re-computed"],
     ["float16: p_t == p_(t+1) at t = 2048"]),
    ("distant clauses joined by a semicolon", ["d_k = 8: blockwise, 4 blocks", "d_k = 64: blockwise, 32 blocks"],
     ["d_k = 64; 32 blocks"]),
    ("a comma inside brackets or parentheses splits nothing", ["f(a, b) at [1, 2], once", "f(a, b) at [2, 1], once"],
     ["f(a, b) at [2, 1]"]),
    ("every clause changes: the whole rule", ["r = 1: pair 1", "r = 2: pair 2"], ["r = 2: pair 2"]),
    ("clauses that do not line up: the whole rule", ["r = 1, once", "r = 2"], ["r = 2"]),
]


@pytest.mark.parametrize("what, rules, shown", FOLDED, ids=[f[0] for f in FOLDED])
def test_a_folded_instance_shows_what_sets_it_apart(what, rules, shown):
    from symproof.report._document import _varying_clauses

    assert _varying_clauses(rules)[1:] == shown


def test_a_folded_instance_reads_as_its_clauses():
    from symproof.report._html import _prose, compact_html

    # the semicolon between two clauses ends the formula: "64; 32 blocks", not a formula "64, 32"
    assert "<mn>64</mn></math>; 32 blocks" in compact_html(str(_prose("d_k = 64; 32 blocks")))


def test_folded_instances_state_their_method_once(chapter):
    _, document, page, _ = chapter
    groups = [item for c in document.claims for item in c.items if item.kind == "group"]
    assert groups and all(len(g.instances) == len(g.steps) - 1 for g in groups)
    assert "The same check, proved (identical sides) for 5 more instances:" in _articles(page)["attn.masked_equivariance"]


def test_a_repeated_abbreviation_refers_to_its_first_definition(chapter):
    _, _, page, _ = chapter
    article = _articles(page)["attn.masked_equivariance"]
    references = re.findall(r'as defined <a href="#([^"]+)">above</a>', article)
    assert references, "the claim repeats its score abbreviations: they should be stated once"
    for anchor in set(references):
        assert article.count(f'id="{anchor}"') == 1
        assert article.index(f'id="{anchor}"') < article.index(f'href="#{anchor}"')


def test_compaction_keeps_every_formula_text(chapter, monkeypatch):
    """The compacted page shows, formula by formula, the text (and so the relation) of the page as rendered."""
    import symproof.report._html as html

    _, document, page, _ = chapter
    monkeypatch.setattr(html, "compact_html", lambda text: text)
    raw = html.render_html(document)
    formulas = lambda text: [_math_text(m).replace("\u2062", "") for m in re.findall(r"<math\b.*?</math>", text, re.S)]
    assert formulas(page) == formulas(raw)


def test_the_page_stays_within_its_budget(chapter):
    _, _, page, _ = chapter
    assert len(page.encode("utf-8")) <= PAGE_BUDGET


# -- typography: what Chromium shows of the MathML ------------------------------------------------------------------

#: (what a reader would see, how to find it in the page's MathML)
TYPOGRAPHY_FAULTS = (
    ("an ASCII hyphen as a minus sign (a short dash in MathML)", re.compile(r"<mo>-</mo>|<mn>-")),
    ("U+2147 DOUBLE-STRUCK ITALIC SMALL E for e", re.compile("\u2147|&#x2147;|&ExponentialE;")),
    ("a function name followed by a parenthesis without U+2061", re.compile(
        r"<mi>(?:sin|cos|tan|exp|log)</mi>(?:<mrow>)?<mo(?: [^>]*)?>\(</mo>")),
)


@pytest.mark.parametrize("fault, pattern", TYPOGRAPHY_FAULTS, ids=[f[0] for f in TYPOGRAPHY_FAULTS])
def test_page_typography(chapter, fault, pattern):
    _, _, page, _ = chapter
    maths = re.findall(r"<math\b.*?</math>", page, re.S)
    offenders = [m[:120] for m in maths if pattern.search(m)]
    assert offenders == [], f"{len(offenders)} formulas show {fault}"


def test_a_measured_claim_wears_a_measured_badge_not_proved(chapter):
    """sin.finite_precision is a table of measurements ("not a proof" in the chapter)."""
    results, _, page, tex = chapter
    measured = [r.id for r in results if r.claim.kind == "measured"]
    assert measured, "the chapter has a measured claim"
    articles = _articles(page)
    for claim_id in measured:
        assert '<span class="badge measured">measured</span>' in articles[claim_id]
        assert "badge proved" not in articles[claim_id]
    proved = [r.id for r in results if r.claim.kind != "measured"]
    assert all('<span class="badge proved">proved</span>' in articles[c] for c in proved)
    assert tex.count(r"\verdict{measured}") == len(measured)


def test_figure_alt_texts_are_words_not_tex():
    from symproof.report import FIGURES
    from symproof.report._html import alt_text

    assert FIGURES
    for figure in FIGURES:
        alt = alt_text(figure.caption)
        assert "\\" not in alt and "$" not in alt and "partial" not in alt and "omega" not in alt, alt
    # and the page uses it: the committed page's figures carry these texts as their labels
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "reports" / "index.html").read_text(encoding="utf-8")
    alts = re.findall(r'<figure [^>]*>\s*<svg [^>]*aria-label="([^"]*)"', page)
    assert len(alts) == len(FIGURES) and all("\\" not in a and "$" not in a for a in alts)


#: (prose as a derivation writes it, what a reader must never see of it)
PYTHON_IN_PROSE = (
    ("position 4 has no entry (Tmax == 4)", ["=="]),
    ("multiply the 2x2 block by the pair", ["2x2"]),
    ("t + 1 first rounds to t at 2**53", ["**"]),
    ("the first output depends on z1", ["z1"]),
    ("generic pair: A(Dw) == I", ["=="]),
)


@pytest.mark.parametrize("prose, never", PYTHON_IN_PROSE, ids=[p[0] for p in PYTHON_IN_PROSE])
def test_prose_is_never_python(prose, never):
    shown = "".join(piece for kind, piece in split_prose(prose) if kind == "text")
    for fragment in never:
        assert fragment not in shown
    # the words around the notation survive, once each (the converter once repeated an operator)
    assert shown.count("=") <= prose.count("==")


def test_error_messages_name_an_index_as_a_reader_writes_it(chapter):
    _, _, page, _ = chapter
    assert "at index (0,)" not in page and "at index [0]" in page
