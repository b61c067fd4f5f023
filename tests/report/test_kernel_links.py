"""The exported kernels and the claims they rest on link to each other, in the page and in the TeX.

What a kernel rests on is the export's own data (``KERNEL_CLAIMS``: ``symproof export`` refuses unless
those claims are proved), not a list kept for the report.
"""

from __future__ import annotations

import re

import pytest

from symproof.kernels._export import KERNEL_CLAIMS, kernel_listings
from symproof.report import build_document, render_html, render_latex


@pytest.fixture(scope="module")
def document(full_chapter_results):
    return build_document(full_chapter_results, title="t", extra_listings=kernel_listings(full_chapter_results))


@pytest.fixture(scope="module")
def page(document):
    return render_html(document)


def _article(page, claim_id):
    start = page.index(f'<article class="claim" id="{claim_id}"')
    return page[start:page.index("</article>", start)]


def test_every_claim_a_kernel_rests_on_links_to_each_kernel(document, page):
    files = [listing.file_name for listing in document.listings]
    assert files and all(listing.claims == tuple(KERNEL_CLAIMS["rope"]) for listing in document.listings)
    for claim_id in KERNEL_CLAIMS["rope"]:
        article = _article(page, claim_id)
        assert "<dt>Kernels</dt>" in article, claim_id
        assert re.findall(r'<a href="#listing-([^"]+)">', article) == files, claim_id


def test_a_claim_no_kernel_rests_on_has_no_kernel_links(page):
    for claim_id in ("sin.norm", "attn.equivariance", "ids.kv_cache"):
        assert claim_id not in KERNEL_CLAIMS["rope"]
        assert "<dt>Kernels</dt>" not in _article(page, claim_id)


def test_each_kernel_links_back_to_every_claim_it_rests_on(document, page):
    first = document.listings[0]
    start = page.index(f'<section id="{first.anchor}">')
    section = page[start:page.index("</section>", start)]
    assert re.findall(r'<a href="#([a-z]+\.[a-z0-9_]+)">', section) == list(KERNEL_CLAIMS["rope"])
    for listing in document.listings[1:]:  # the same claims: said once, then referred to
        start = page.index(f'<section id="{listing.anchor}">')
        assert "Rests on" in page[start:page.index("</section>", start)]


def test_the_tex_links_both_ways(document):
    tex = render_latex(document)
    for listing in document.listings:
        assert tex.count(listing.file_name.replace("_", r"\_")) >= len(KERNEL_CLAIMS["rope"])
    assert tex.count("Rests on (its export refuses") == len(document.listings)
    assert tex.count(r"\textbf{Kernels.}") == len(KERNEL_CLAIMS["rope"])
