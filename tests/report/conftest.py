"""Shared fixtures of the report tests: real engine results, including false claims."""

from __future__ import annotations

import os
import shutil
import subprocess
from types import SimpleNamespace

import sympy as sp
import pytest

from symproof import Claim, rotation, run_claim
from symproof.claims import load_claims, run_claims, select_claims

#: the browser the page tests use (Debian's package), else a ``chromium`` on PATH
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]

#: bytes of index.html (figures and kernel listings are separate files); 6 KB of it are the thin spaces
#: after function names (``rspace`` on U+2061), without which Chromium sets ``sin a`` as ``sina``;
#: it was 410,000 until the witness boxes of seven matrix counterexamples showed their two sides whole (3.2 KB),
#: and 413,500 until every section ended on previous / contents / next links and the page gained its dark and
#: print styles (2.4 KB); the proofs' conclusion lines, the entry names of W_Q, W_K, W_V and the inputs of
#: the computed counterexamples were paid for by cycle notation and unused class attributes
#: 416,000 until the page opened on a preface (what the verdicts rest on, the tactic tags it prints explained
#: from one table: 3.6 KB), each section on the chapter's introduction (4.1 KB), and Algorithm 7.1 stood in a
#: box beside the generated kernel's rotation loop, the loop shown again in the kernels section (4.6 KB);
#: 428,000 until the 13 long canonical forms the page used to leave to the PDF (with a one-line note) were
#: folded into the page instead (21.6 KB): nothing on the page is replaced by a note;
#: 450,000 until every proof ended on its statement restated ("Hence <the statement> ∎", or what the
#: counterexample shows, or what is not known) instead of "Hence the statement holds" (21.6 KB: the 42
#: statements' MathML a second time); the worked example set as the chapter's calculation is 0.3 KB smaller
PAGE_BUDGET = 472_000
#: bytes the figures add to the page (test_fit.py renders it with them): they are inline, so the page is one
#: self-contained file; the five, drawn by the report's own canvas, are 55 KB (the matplotlib SVGs the page
#: used to link were 210 KB)
FIGURES_BUDGET = 60_000


def chromium_path():
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


needs_chromium = pytest.mark.skipif(chromium_path() is None, reason="no Chromium at /usr/bin/chromium or on PATH")


def launch_chromium(playwright):
    """A headless Chromium from a ``sync_playwright()`` context."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


a, b = sp.symbols("a b", real=True)


def _false_relative(proof):
    proof.note("A wrong sign: the relative rotation taken as R(a - b).")
    proof.chain(rotation(a).T * rotation(b), rotation(a - b), "relative rotation") \
        .step("angle-difference formulas, sign flipped", rotation(a - b))


def _crashing(proof):
    raise RuntimeError("derivation bug")


FALSE_CLAIMS = (
    Claim(id="test.false_relative", section="9.1", title="A false relative rotation",
          statement=r"R(a)^T R(b) = R(a - b)", kind="identity", derive=_false_relative),
    Claim(id="test.crashing", section="9.1", title="A derivation that crashes",
          statement="the derivation raises before recording anything", kind="identity", derive=_crashing),
)


@pytest.fixture(scope="session")
def chapter_results():
    """A few real claims of the chapter, run by the engine."""
    claims = load_claims()
    return run_claims(select_claims(claims, ["rope.relative", "rope.frequency_denominator", "sin.norm"]))


@pytest.fixture(scope="session")
def false_results():
    return [run_claim(c) for c in FALSE_CLAIMS]


@pytest.fixture(scope="session")
def full_chapter_results():
    """Every claim of the chapter, run by the engine (what ``symproof report`` shows)."""
    return run_claims(list(load_claims().values()))


@pytest.fixture(scope="session")
def fresh_report(full_chapter_results, tmp_path_factory):
    """What ``symproof report`` writes (page, LaTeX, every figure, the kernel listings; no PDF), rendered
    once into a scratch folder for the tests that read it: rendering is the costly part, and each of them
    rendering its own copy made the report tests a minute.  A reader never changes the folder."""
    from symproof.kernels import kernel_listings
    from symproof.report import render_report

    folder = tmp_path_factory.mktemp("fresh-report")
    listings = kernel_listings(full_chapter_results)
    written = render_report(full_chapter_results, folder, figures="all", extra_listings=listings, pdf=False)
    return SimpleNamespace(folder=folder, results=full_chapter_results, listings=listings, written=written)


@pytest.fixture(scope="session")
def fresh_pdf(fresh_report, tmp_path_factory):
    """``fresh_report``'s LaTeX built into a PDF once: the build, and the text ``pdftotext -layout`` reads."""
    from symproof.report._latex import build_pdf, find_pdflatex

    if find_pdflatex() is None or shutil.which("pdftotext") is None:
        pytest.skip("pdflatex or pdftotext (poppler-utils) is not installed")
    tex = (fresh_report.folder / "chapter.tex").read_text("utf-8")
    figures = {f"figures/{p.name}": p.read_bytes() for p in (fresh_report.folder / "figures").glob("*.pdf")}
    build = build_pdf(tex, figures)
    pdf = tmp_path_factory.mktemp("fresh-pdf") / "chapter.pdf"
    pdf.write_bytes(build.pdf)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          timeout=120).stdout
    return SimpleNamespace(tex=tex, build=build, text=text, pages=text.split("\f"))
