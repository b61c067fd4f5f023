"""The HTML report in a real headless Chromium: no console errors, anchors, laid-out MathML,
no sideways page scroll on a phone, no math glyph too small to read."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import launch_chromium, needs_chromium

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "report"

playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [pytest.mark.browser, needs_chromium]


#: a phone's viewport width (CSS px), and the smallest math glyph a reader can read
PHONE_WIDTH = 390
MIN_GLYPH_PX = 8

_LAYOUT = """() => {
    const glyphs = [...document.querySelectorAll('math mi, math mn, math mo, math mtext')]
        .filter(el => el.getBoundingClientRect().width > 0);
    const small = glyphs.filter(el => parseFloat(getComputedStyle(el).fontSize) < %d)
        .map(el => (el.closest('article') || {}).id + ': ' + el.textContent);
    return {pageWidth: document.documentElement.scrollWidth, viewport: window.innerWidth,
            glyphs: glyphs.length, small: small.slice(0, 10), smallCount: small.length};
}""" % MIN_GLYPH_PX


def _layout(html_path: Path, width: int, screenshot: Path):
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(html_path.as_uri(), wait_until="load")
            facts = page.evaluate(_LAYOUT)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=False)
            return facts
        finally:
            browser.close()


def _inspect(html_path: Path, screenshot: Path):
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 1400})
            problems = []
            page.on("console", lambda msg: problems.append(f"{msg.type}: {msg.text}")
                    if msg.type in ("error", "warning") else None)
            page.on("pageerror", lambda err: problems.append(f"pageerror: {err}"))
            page.on("request", lambda req: problems.append(f"request: {req.url}")
                    if not req.url.startswith("file://") else None)
            page.goto(html_path.as_uri(), wait_until="load")
            facts = page.evaluate("""() => {
                const sized = el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
                const maths = [...document.querySelectorAll('math')];
                const svgs = [...document.querySelectorAll('figure svg')];
                return {
                    ids: [...document.querySelectorAll('article.claim')].map(a => a.id),
                    math: maths.length, mathSized: maths.filter(sized).length,
                    mathmlNamespace: maths.every(m => m.namespaceURI === 'http://www.w3.org/1998/Math/MathML'),
                    svg: svgs.length, svgSized: svgs.filter(sized).length,
                    scripts: document.querySelectorAll('script').length,
                };
            }""")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=False)
            return problems, facts
        finally:
            browser.close()


def test_rendered_report_in_chromium(chapter_results, false_results, tmp_path):
    from symproof.report import render_report

    results = chapter_results + false_results
    paths = render_report(results, tmp_path, figures="all", pdf=False)
    problems, facts = _inspect(Path(paths["html"]), ARTIFACTS / "rendered.png")
    assert problems == []
    assert sorted(facts["ids"]) == sorted(r.id for r in results)
    assert facts["math"] > 0 and facts["mathSized"] == facts["math"]
    assert facts["mathmlNamespace"]
    assert facts["svg"] > 0 and facts["svgSized"] == facts["svg"]
    assert facts["scripts"] == 0


def test_committed_report_in_chromium():
    html = REPO / "reports" / "index.html"
    if not html.exists():
        pytest.skip("reports/ has not been generated in this checkout")
    problems, facts = _inspect(html, ARTIFACTS / "index.png")
    assert problems == []
    text = html.read_text("utf-8")
    for claim_id in facts["ids"]:
        assert f'href="#{claim_id}"' in text
    assert len(facts["ids"]) > 0
    assert facts["mathSized"] == facts["math"] > 0


@pytest.mark.parametrize("width", [PHONE_WIDTH, 1280])
def test_the_committed_report_reads_on_a_phone_and_a_desktop(width):
    """No sideways page scroll (wide formulas and tables scroll in their own box), no glyph under 8 px."""
    html = REPO / "reports" / "index.html"
    if not html.exists():
        pytest.skip("reports/ has not been generated in this checkout")
    facts = _layout(html, width, ARTIFACTS / f"index-{width}.png")
    assert facts["viewport"] == width
    assert facts["pageWidth"] <= width, f"the page scrolls sideways: {facts['pageWidth']} px wide at {width} px"
    assert facts["glyphs"] > 1000
    assert facts["smallCount"] == 0, facts["small"]


def test_a_wide_formula_scrolls_in_its_box_not_the_page(false_results, tmp_path):
    """The layout rule itself, on a report with a formula far wider than a phone."""
    import sympy as sp

    from symproof import Claim, run_claim
    from symproof.report import render_report

    z = sp.symbols("z0:40")

    def wide(proof):
        proof.equal("a long sum", sum(z), sum(reversed(z)))

    claim = Claim(id="test.wide", section="9.2", title="A wide formula", statement="a sum of forty terms",
                  kind="identity", derive=wide)
    paths = render_report([run_claim(claim)] + false_results, tmp_path, figures=[], pdf=False)
    facts = _layout(Path(paths["html"]), PHONE_WIDTH, ARTIFACTS / "wide-390.png")
    assert facts["pageWidth"] <= PHONE_WIDTH
    assert facts["smallCount"] == 0, facts["small"]


_MATH_BOXES = """() => [...document.querySelectorAll('math')].map(m => {
    const r = m.getBoundingClientRect();
    return [m.textContent, +r.x.toFixed(2), +r.y.toFixed(2), +r.width.toFixed(2), +r.height.toFixed(2)];
})"""


#: an upright word set as one run of text (``blockdiag``) is kerned as a word: a fraction of a pixel narrower
#: or wider than its letters set one by one
KERNING_PX = 0.5


def test_compaction_changes_no_formula_layout(chapter_results, false_results, tmp_path, monkeypatch):
    """Every formula of the compacted page has the box it has in the page as rendered: the rows and attributes
    that compaction leaves out change no layout, and an upright word written as one ``<mi>`` only its kerning."""
    import symproof.report._html as html
    from symproof.report import build_document

    document = build_document(chapter_results + false_results, title="t")
    compacted = html.render_html(document)
    monkeypatch.setattr(html, "compact_html", lambda page: page)
    pages = {"compacted": compacted, "rendered": html.render_html(document)}
    boxes = {}
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for name, text in pages.items():
                path = tmp_path / f"{name}.html"
                path.write_text(text, "utf-8")
                page = browser.new_page(viewport={"width": PHONE_WIDTH, "height": 900})
                page.goto(path.as_uri(), wait_until="load")
                page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
                boxes[name] = page.evaluate(_MATH_BOXES)
        finally:
            browser.close()
    assert len(boxes["compacted"]) == len(boxes["rendered"]) > 20
    for (text, *box), (rendered_text, *rendered_box) in zip(boxes["compacted"], boxes["rendered"]):
        assert text == rendered_text.replace("\u2062", "")
        assert max(abs(a - b) for a, b in zip(box, rendered_box)) <= KERNING_PX, (text, box, rendered_box)


_FUNCTION_WIDTHS = """() => Object.fromEntries([...document.querySelectorAll('math')].map(m => {
    const names = [...m.querySelectorAll('mi')].filter(e => e.textContent === 'sin');
    const after = names.length ? names[0].nextElementSibling.nextElementSibling : null;
    return [m.id, {width: m.getBoundingClientRect().width, em: parseFloat(getComputedStyle(m).fontSize),
                   gap: after ? after.getBoundingClientRect().left - names[0].getBoundingClientRect().right : null}];
}))"""


def test_a_function_name_is_set_apart_from_its_argument(tmp_path):
    """``sin a`` is a thin space (TeX's, 1/6 em) wider than the word ``sina``, as printed and as a statement
    writes it; ``sin(a)`` has no space before its parenthesis.  Chromium gives U+2061 itself no width."""
    import sympy as sp

    from symproof.report._html import compact_mathml
    from symproof.report._formulas import to_mathml
    from symproof.report._prose import latex_to_mathml

    a = sp.Symbol("a")
    formulas = {"word": '<math><mi>sina</mi></math>', "printed": to_mathml(sp.sin(a), display="inline"),
                "statement": latex_to_mathml(r"\sin a", display="inline"),
                "parenthesis": latex_to_mathml(r"\sin(a)", display="inline")}
    page = "".join(f'<p>{compact_mathml(text).replace("<math", f"<math id={name!r}", 1)}</p>'
                   for name, text in formulas.items())
    path = tmp_path / "functions.html"
    path.write_text(f"<!DOCTYPE html><html><body>{page}</body></html>", "utf-8")
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page()
            page.goto(path.as_uri(), wait_until="load")
            boxes = page.evaluate(_FUNCTION_WIDTHS)
        finally:
            browser.close()
    thin = boxes["word"]["em"] / 6
    for name in ("printed", "statement"):
        assert boxes[name]["width"] - boxes["word"]["width"] >= thin - KERNING_PX, (name, boxes)
        assert abs(boxes[name]["gap"] - thin) <= KERNING_PX, (name, boxes)
    assert abs(boxes["parenthesis"]["gap"]) <= KERNING_PX, boxes
