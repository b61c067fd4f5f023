"""Jupyter: Verdict, ClaimResult and AuditResult show the formula, the verdict and the witness, escaped."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest
import sympy as sp

from symproof import audit, load_claims, prove_equal, rotation, run_claim

a, b = sp.symbols("a b", real=True)
x = sp.Symbol("x", real=True)
y = sp.Symbol("y", positive=True)
HOSTILE = sp.Symbol('<img src=x onerror="alert(1)">&amp;', real=True)


class _Tags(HTMLParser):
    """The element names and the text of an HTML fragment, as a browser parses it."""

    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


ALLOWED_TAGS = {"div", "strong", "table", "tr", "th", "td", "math", "mrow", "mi", "mo", "mn", "msub", "msup",
                "mfrac", "msqrt", "mtable", "mtr", "mtd", "mfenced", "mtext", "mspace", "mstyle", "mover",
                "munder", "msubsup", "mpadded", "mphantom", "menclose", "semantics", "annotation"}

# (name, the object's maker, words its view must show, the witness text or None)
VERDICTS = [
    ("proved", lambda: prove_equal(rotation(a).T * rotation(b), rotation(b - a)), ["proved"], None),
    ("refuted", lambda: prove_equal(sp.sqrt(x**2), x), ["refuted", "witness"], "x: -1"),
    ("unknown", lambda: prove_equal(sp.gamma(y + 1), y * sp.gamma(y), timeout=5.0), ["reason", "unknown"], None),
    ("hostile name", lambda: prove_equal(sp.sqrt(HOSTILE**2), HOSTILE), ["refuted"], None),
]


@pytest.mark.parametrize("name, make, words, witness", VERDICTS, ids=[v[0] for v in VERDICTS])
def test_a_verdict_shows_its_formula_verdict_and_witness(name, make, words, witness):
    verdict = make()
    assert verdict.status == name.split()[0] if name != "hostile name" else verdict.status == "refuted"
    page, markdown = verdict._repr_html_(), verdict._repr_markdown_()
    parsed = _parse(page)
    assert set(parsed.tags) <= ALLOWED_TAGS, set(parsed.tags) - ALLOWED_TAGS
    assert "math" in parsed.tags  # the formula, as MathML
    text = " ".join(parsed.text)
    for word in words + [verdict.status, verdict.method]:
        assert word in text and word in markdown
    if witness is not None:
        assert witness in text and witness in markdown
    assert markdown.count("$") % 2 == 0 and "$" in markdown  # the formula, as LaTeX math


def test_a_symbol_named_like_markup_stays_text():
    verdict = prove_equal(sp.sqrt(HOSTILE**2), HOSTILE)
    page, markdown = verdict._repr_html_(), verdict._repr_markdown_()
    assert "<img" not in page and "<img" not in markdown
    assert "onerror" in " ".join(_parse(page).text)  # shown, as text
    assert '<img src=x onerror="alert(1)">&amp;' in " ".join(_parse(page).text)  # exactly the name, decoded once
    formula = re.search(r"\$(.*?)\$", markdown).group(1)
    assert "<" not in formula and ">" not in formula and r"\lt" in formula


def test_markdown_text_cannot_open_markup_math_or_cells():
    verdict = prove_equal(sp.sqrt(HOSTILE**2), HOSTILE)
    rows = [line for line in verdict._repr_markdown_().splitlines() if line.startswith("| witness")]
    (row,) = rows
    assert row.count("|") == 3  # the witness's own characters never split the cell
    assert not re.search(r"[<>`*_\[\]$]", row.replace("| witness |", ""))


@pytest.fixture(scope="module")
def claim_results():
    claims = load_claims()
    return {cid: run_claim(claims[cid]) for cid in ("rope.rotation", "rope.relative")}


@pytest.mark.parametrize("cid", ["rope.rotation", "rope.relative"])
def test_a_claim_result_shows_its_statement_verdict_and_witness(cid, claim_results):
    result = claim_results[cid]
    page, markdown = result._repr_html_(), result._repr_markdown_()
    parsed = _parse(page)
    assert set(parsed.tags) <= ALLOWED_TAGS and "math" in parsed.tags
    text = " ".join(parsed.text)
    for shown in (cid, result.claim.title, result.status, result.method):
        assert shown in text
    assert cid in markdown and result.status in markdown and result.claim.statement in markdown
    if result.witness_text:
        assert result.witness_text in text
        assert result.witness_text.replace("_", "&#95;") in markdown


def _identity(x, positions):
    return np.array(x, copy=True)


@pytest.mark.parametrize("like, verdict", [("half_split", "differs")])
def test_an_audit_result_shows_the_model_verdict_and_the_minimal_input(like, verdict):
    from symproof._ground._examples import shipped_examples

    result = audit(_identity, shipped_examples()[like].path, name="<b>identity</b>")
    page, markdown = result._repr_html_(), result._repr_markdown_()
    parsed = _parse(page)
    assert set(parsed.tags) <= ALLOWED_TAGS and "b" not in parsed.tags
    text = " ".join(parsed.text)
    assert result.verdict == verdict and verdict in text and verdict in markdown
    assert "<b>identity</b>" in text and "<b>" not in markdown
    first = result.differences[0]
    assert f"e_{first.basis} at position {first.position}" in text
    assert result.variant.title in text
