"""The chapter's shape on a fresh report: a preface that explains the tags the page prints, an introduction
per section, Algorithm 7.1 beside the generated kernel's loop, and figures inline and readable on a phone."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest

from symproof.report._chapter_text import ALGORITHM_7_1, SECTION_INTROS
from symproof.report._document import Listing
from symproof.report._figures import FIGURES
from symproof.report._preface import printed_tactics, rotation_loop
from symproof.report._typeset import TACTICS, tactic_phrase, tactic_tags

#: the narrowest phone the page is laid out for, and what a figure gets of it: the body's padding
#: (.75rem a side) and a claim box's padding and border (.6rem + 1px a side) come off
PHONE_WIDTH = 390
PHONE_FIGURE_WIDTH = PHONE_WIDTH - 2 * 12 - 2 * (9.6 + 1)
#: the smallest label, in CSS pixels, read without zooming
MIN_LABEL_PX = 9


@pytest.fixture(scope="module")
def page(fresh_report):
    return (fresh_report.folder / "index.html").read_text("utf-8")


@pytest.fixture(scope="module")
def tex(fresh_report):
    return (fresh_report.folder / "chapter.tex").read_text("utf-8")


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def _preface(page: str) -> str:
    found = re.search(r'<div id="preface">(.*?)</div>\s*<nav class="toc"', page, re.DOTALL)
    assert found, "no preface before the contents"
    return found.group(1)


def _engine_tags(results) -> list:
    """Every plain tag the engine recorded, read from the proofs themselves (not from the report)."""
    tags = []
    for result in results:
        methods = list(result.methods) + [part.method for part in result.proof.parts if part.method]
        for method in methods:
            tags += [t for t in tactic_tags(method) if t not in tags]
    return tags


# -- the preface ---------------------------------------------------------------------------------------------

def test_the_preface_explains_every_tag_the_page_prints(fresh_report, page):
    glossary = dict(re.findall(r'<dt id="tactic-[^"]+">(.*?)</dt><dd>(.*?)</dd>', _preface(page), re.DOTALL))
    tags = _engine_tags(fresh_report.results)
    assert len(tags) >= 5
    for tag in tags:
        assert tactic_phrase(tag) in glossary, f"{tag!r} is printed but not explained"
        assert _text(glossary[tactic_phrase(tag)]).strip(), f"{tag!r} has no meaning"
    # and every phrase printed beside a step is one of them, or a nested one made of them
    printed = set(re.findall(r"</i> <small>\(([^<()]*)\)</small>", page))
    assert printed
    for phrase in printed:
        parts = re.split(r", each | or ", phrase)
        assert all(p in glossary for p in parts), f"{phrase!r} is printed beside a step but not explained"


def test_every_tag_the_engine_records_has_a_meaning_in_the_table(fresh_report):
    from symproof.prover import TACTICS as PROVER_TACTICS

    missing = [t for t in [*PROVER_TACTICS, *_engine_tags(fresh_report.results)] if t not in TACTICS]
    assert missing == []


def test_a_tag_the_table_does_not_know_is_said_to_be_unexplained():
    view = SimpleNamespace(methods=("entrywise (made-up)",), items=[])
    found = {t.tag: t for t in printed_tactics([view])}
    assert list(found) == ["entrywise", "made-up"]
    assert found["entrywise"].meaning == TACTICS["entrywise"][1]
    assert "does not explain" in found["made-up"].meaning


def test_the_preface_says_what_the_verdicts_rest_on_and_how_to_recheck(fresh_report, page, tex):
    text = _text(_preface(page))
    certificates = sum(r.certificates + r.rejected for r in fresh_report.results)
    for words in ("proved", "refuted", "unknown", "independent checker", f"{certificates} certificates",
                  "symproof verify", "symproof report", "sha256sum -c SHA256SUMS"):
        assert words in text, words
    preface_tex = tex[tex.index(r"\section*{About this document}"):tex.index(r"\tableofcontents")]
    for tag in _engine_tags(fresh_report.results):
        assert rf"\item[{tactic_phrase(tag)}]" in preface_tex, tag


# -- the sections' introductions -----------------------------------------------------------------------------

def test_every_chapter_section_opens_with_its_introduction(page, tex):
    sections = re.findall(r'<section id="section-(7\.\d)">\s*<h2>[^<]*</h2>\s*(<p class="intro">.*?</p>)?', page, re.DOTALL)
    assert [number for number, _ in sections] == sorted(SECTION_INTROS)
    for number, intro in sections:
        assert intro and len(_text(intro).split()) >= 25, f"section {number} has no introduction"
    for number in SECTION_INTROS:
        heading = re.search(rf"\\section\{{{re.escape(number)} [^\n]*\}}\n\\emph\{{", tex)
        assert heading, f"section {number} of the LaTeX has no introduction"


# -- Algorithm 7.1 and the kernel's loop ---------------------------------------------------------------------

def _algorithm(page: str) -> str:
    found = re.search(r'<div class="algorithm" id="algorithm-7.1">(.*?)</div>\s*<article', page, re.DOTALL)
    assert found, "no algorithm box"
    return found.group(1)


def test_the_algorithm_box_has_inputs_steps_and_invariant(page):
    box = _algorithm(page)
    assert "Input:" in box and "Invariant:" in box
    inputs = re.search(r"<ul>(.*?)</ul>", box, re.DOTALL).group(1)
    assert len(re.findall(r"<li>", inputs)) == len(ALGORITHM_7_1["inputs"]) >= 4
    steps = re.search(r'<ol class="steps">(.*?)</ol>', box, re.DOTALL).group(1)
    assert len(re.findall(r"<li>", steps)) == len(ALGORITHM_7_1["steps"]) >= 4
    # it stands just before the claim it is proved in
    assert re.search(r'id="algorithm-7.1">.*?</div>\s*<article class="claim" id="rope.algorithm_7_1">', page, re.DOTALL)


def test_the_loop_beside_the_algorithm_is_the_generated_kernels(fresh_report, page):
    source = (fresh_report.folder / "listings" / "symproof_rope.c").read_text("utf-8")
    loops = [html.unescape(loop) for loop in re.findall(r'<pre class="loop"><code[^>]*>(.*?)</code></pre>', page, re.DOTALL)]
    # beside the algorithm, and again in the kernels section
    assert len(loops) == 2 and loops[0] == loops[1]
    assert "for (size_t r = 0;" in loops[0] and "o[j] = in[j];" in loops[0]
    indented = "\n".join("    " + line if line else line for line in loops[0].splitlines())
    assert indented in source
    kernel_section = page[page.index('<section id="listing-symproof_rope.c">'):]
    assert '<pre class="loop">' in kernel_section[:kernel_section.index("</section>")]


def test_the_loop_is_cut_from_the_listing_not_kept_as_text(fresh_report):
    from symproof.kernels import kernel_sources

    half = kernel_sources("rope", "c", head_dim=8, pairing="half", claim_results=fresh_report.results)
    adjacent = kernel_sources("rope", "c", head_dim=8, claim_results=fresh_report.results)
    loops = [rotation_loop([Listing("k", "c", text, name)])[0] for files in (half, adjacent)
             for name, text in files.items() if name.endswith(".c")]
    assert len(loops) == 2 and all(loops) and loops[0] != loops[1]
    assert rotation_loop([Listing("k", "python", "for x in y:\n    pass\n", "k.py")]) == ("", "")


# -- figures -----------------------------------------------------------------------------------------------------

def test_the_page_carries_its_figures_inline(page):
    assert not re.search(r"<img\b[^>]*\bsrc=\"[^\"]*\.svg", page)
    figures = re.findall(r'<figure id="figure-([\w]+)">\s*<svg\b', page)
    assert sorted(figures) == sorted(spec.name for spec in FIGURES)


def _font_sizes(svg: str) -> list:
    """Every font size an SVG sets: attributes, and ``font-size`` / ``font`` in style attributes."""
    sizes = [float(v) for v in re.findall(r'\bfont-size="([\d.]+)(?:px)?"', svg)]
    sizes += [float(v) for v in re.findall(r"font(?:-size)?:\s*(?:[a-z]+ )*([\d.]+)px", svg)]
    return sizes


def test_figure_labels_are_readable_on_a_phone(page):
    svgs = re.findall(r"<figure[^>]*>\s*(<svg\b.*?</svg>)", page, re.DOTALL)
    assert len(svgs) == len(FIGURES)
    for svg in svgs:
        width = float(re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+) [\d.]+"', svg).group(1))
        sizes = _font_sizes(svg)
        assert sizes, "a figure without labels, or labels sized some other way"
        smallest = min(sizes) * PHONE_FIGURE_WIDTH / width
        assert smallest >= MIN_LABEL_PX, f"a label of {smallest:.1f} px at {PHONE_WIDTH} px wide"


def test_the_font_bound_fails_a_figure_drawn_with_small_type():
    """The matplotlib figures this page used to link: 8 and 9 pt text on a 460 pt canvas."""
    old = '<svg viewBox="0 0 460.8 187.2"><g style="fill: #262626"><text style="font: 8px \'DejaVu Sans\'">0</text></g></svg>'
    width = float(re.search(r'viewBox="[\d.-]+ [\d.-]+ ([\d.]+) [\d.]+"', old).group(1))
    assert min(_font_sizes(old)) * PHONE_FIGURE_WIDTH / width < MIN_LABEL_PX
