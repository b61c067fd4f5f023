"""An 86-screen page a reader can move through: every section ends on links to the one before, the contents
and the one after, in the page's order; dark-mode and print styles are part of the page.  Checked on the page
``symproof report`` writes, parsed as HTML."""

import re
from html.parser import HTMLParser

import pytest

from .conftest import launch_chromium, needs_chromium


class _Outline(HTMLParser):
    """The ids of the top-level sections, in order, and each pager's links."""

    def __init__(self):
        super().__init__()
        self.sections, self.pagers, self._in_pager, self._in_style, self.style = [], [], False, False, ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.sections.append(attrs.get("id"))
        if tag == "nav" and attrs.get("class") == "pager":
            self._in_pager = True
            self.pagers.append((self.sections[-1], []))
        if tag == "a" and self._in_pager:
            self.pagers[-1][1].append(attrs["href"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "nav":
            self._in_pager = False
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.style += data


@pytest.fixture(scope="module")
def outline(fresh_report):
    parser = _Outline()
    parser.feed((fresh_report.folder / "index.html").read_text("utf-8"))
    return parser


def test_every_section_ends_on_previous_contents_and_next(outline):
    sections = outline.sections
    assert len(sections) >= 5 and [where for where, _ in outline.pagers] == sections
    for k, (where, links) in enumerate(outline.pagers):
        expected = ([f"#{sections[k - 1]}"] if k else []) + ["#contents"] + (
            [f"#{sections[k + 1]}"] if k + 1 < len(sections) else [])
        assert links == expected, (where, links)


@pytest.mark.parametrize("rule", [r"@media \(prefers-color-scheme: ?dark\) ?\{[^@]*background", r"@media print ?\{[^@]*nav\.toc"])
def test_the_page_carries_its_dark_and_print_styles(outline, rule):
    assert re.search(rule, outline.style), rule


def test_nothing_on_the_page_is_replaced_by_a_note(fresh_report):
    """A long step is folded, never left out with a pointer to the PDF."""
    page = (fresh_report.folder / "index.html").read_text("utf-8")
    assert "too long for this page" not in page and "printed in full in the PDF" not in page
    assert "<details><summary>both reduce to</summary>" in page



@pytest.mark.browser
@needs_chromium
def test_a_fold_is_open_when_printed(fresh_report):
    """The print style opens every ``<details>``: on screen a folded step's content is hidden, in print it is
    shown (Chromium's computed style of the fold's content, the page as written)."""
    from playwright import sync_api

    probe = "() => getComputedStyle(document.querySelector('details'), '::details-content').contentVisibility"
    with sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            page = browser.new_page()
            page.goto((fresh_report.folder / "index.html").as_uri(), wait_until="load")
            on_screen = page.evaluate(probe)
            page.emulate_media(media="print")
            printed = page.evaluate(probe)
        finally:
            browser.close()
    assert (on_screen, printed) == ("hidden", "visible")
