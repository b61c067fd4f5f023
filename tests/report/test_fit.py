"""Formulas and figures that fit, counted in a real headless Chromium on a fresh report of every claim:
no display formula cut off at 1280 px, at most one in ten scrolling sideways at 390 px and never a
claim's statement, figures no wider than their column, and a page under its byte budget."""

from __future__ import annotations


import pytest

from .conftest import launch_chromium, needs_chromium


#: a phone's and a desktop's viewport width (CSS px), as the page tests (test_browser.py) take them
PHONE_WIDTH = 390

playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [pytest.mark.browser, needs_chromium]

DESKTOP_WIDTH = 1280
#: the share of display formulas that may scroll sideways on a phone (wide matrices cannot break)
PHONE_SCROLL_SHARE = 0.10
from .conftest import FIGURES_BUDGET, PAGE_BUDGET

#: every display formula: whether its content is wider than its box (it scrolls, or an ancestor that
#: clips it is too narrow), and whether it is a claim's statement
_FORMULAS = """() => [...document.querySelectorAll('math[display="block"]')].map(m => {
    let clipped = false;
    for (let el = m.parentElement; el && el.tagName !== 'ARTICLE' && el.tagName !== 'BODY'; el = el.parentElement) {
        if (getComputedStyle(el).overflowX !== 'visible' && el.scrollWidth > el.clientWidth + 1) { clipped = true; break; }
    }
    const dd = m.closest('dd');
    let dt = dd && dd.previousElementSibling;
    while (dt && dt.tagName !== 'DT') dt = dt.previousElementSibling;
    return {claim: (m.closest('article') || {}).id, wide: m.scrollWidth > m.clientWidth + 1 || clipped,
            statement: !!dt && dt.textContent.trim() === 'Statement', text: m.textContent.slice(0, 60)};
})"""

_FIGURES = """() => [...document.querySelectorAll('figure svg')].map(img => ({
    id: img.closest('figure').id, width: img.getBoundingClientRect().width,
    column: img.closest('figure').clientWidth}))"""


@pytest.fixture(scope="module")
def report(fresh_report):
    return fresh_report.folder / "index.html"


@pytest.fixture(scope="module")
def layouts(report):
    """``{width: (formulas, figures)}`` with every ``<details>`` open (its formulas count too)."""
    out = {}
    with playwright.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            for width in (DESKTOP_WIDTH, PHONE_WIDTH):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.goto(report.as_uri(), wait_until="load")
                page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
                out[width] = (page.evaluate(_FORMULAS), page.evaluate(_FIGURES))
        finally:
            browser.close()
    return out


def test_no_display_formula_is_cut_off_on_a_desktop(layouts):
    formulas, _ = layouts[DESKTOP_WIDTH]
    assert len(formulas) > 200
    wide = [f"{f['claim']}: {f['text']}" for f in formulas if f["wide"]]
    assert wide == []


def test_few_display_formulas_scroll_on_a_phone_and_no_statement(layouts):
    formulas, _ = layouts[PHONE_WIDTH]
    wide = [f for f in formulas if f["wide"]]
    statements = [f"{f['claim']}: {f['text']}" for f in wide if f["statement"]]
    assert statements == []
    assert sum(f["statement"] for f in formulas) > 30  # the statements were found at all
    assert len(wide) <= PHONE_SCROLL_SHARE * len(formulas), [f"{f['claim']}: {f['text']}" for f in wide]


def test_figures_fit_their_column_on_a_phone(layouts):
    _, figures = layouts[PHONE_WIDTH]
    assert len(figures) >= 5
    too_wide = [f for f in figures if f["width"] > f["column"] + 0.5]
    assert too_wide == []
    # and they scale: on a desktop the same figures are wider than on the phone
    desktop = {f["id"]: f["width"] for f in layouts[DESKTOP_WIDTH][1]}
    assert all(desktop[f["id"]] > f["width"] for f in figures)


def test_the_page_is_under_its_budget(report):
    size = report.stat().st_size
    assert size < PAGE_BUDGET + FIGURES_BUDGET, f"index.html is {size} bytes"
