"""The built documentation in a real headless Chromium: the front page and a reference page with wide
tables never scroll the page sideways, at a desktop's width and a phone's."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "docs" / "_build" / "html"

# the report tests' one Chromium launcher and skip mark, loaded from their conftest by path
_spec = importlib.util.spec_from_file_location("_report_conftest", REPO / "tests" / "report" / "conftest.py")
_report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_report)

playwright = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
pytestmark = [
    pytest.mark.browser, _report.needs_chromium,
    pytest.mark.skipif(not (BUILT / "index.html").is_file(),
                       reason="the docs are not built: sphinx-build -W -n -b html docs docs/_build/html"),
]

PAGES = ["index.html", "reference/variant-files.html", "reference/model-configs.html"]
WIDTHS = [1280, 390]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page_name", PAGES)
def test_no_sideways_page_scroll(page_name, width):
    with playwright.sync_playwright() as p:
        browser = _report.launch_chromium(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto((BUILT / page_name).as_uri(), wait_until="load")
            facts = page.evaluate("() => ({page: document.documentElement.scrollWidth, viewport: window.innerWidth,"
                                  " title: document.title})")
        finally:
            browser.close()
    assert "symproof" in facts["title"]
    assert facts["page"] <= facts["viewport"], f"{page_name} at {width} px scrolls sideways: {facts}"


def test_the_chapter_report_is_part_of_the_site():
    page = (BUILT / "reference" / "report.html").read_text(encoding="utf-8")
    assert 'href="../report/index.html"' in page
    assert (BUILT / "report" / "index.html").is_file()


def test_math_is_mathml_printed_at_build_time():
    page = (BUILT / "reference" / "properties.html").read_text(encoding="utf-8")
    scripts = re.findall(r"<script[^>]*>", page)
    assert "<math" in page and "\\(" not in page
    assert not [tag for tag in scripts if "mathjax" in tag.lower() or "://" in tag], scripts
