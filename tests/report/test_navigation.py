"""An 86-screen page a reader can move through: every section ends on links to the one before, the contents
and the one after, in the page's order; dark-mode and print styles are part of the page.  Checked on the page
``symproof report`` writes, parsed as HTML."""

import re
from html.parser import HTMLParser

import pytest


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
