"""The LaTeX reports compile with pdflatex (plain TeX Live: latex-base, -recommended, fonts-recommended)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from symproof.report import render_report
from symproof.report._latex import escape_tex

REPO = Path(__file__).resolve().parents[2]

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")


def _compile(folder: Path, name: str) -> subprocess.CompletedProcess:
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
                          cwd=folder, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.latex
@needs_pdflatex
def test_the_committed_chapter_compiles(tmp_path):
    if not (REPO / "reports" / "chapter.tex").exists():
        pytest.skip("reports/ has not been generated in this checkout")
    shutil.copytree(REPO / "reports", tmp_path / "reports", ignore=shutil.ignore_patterns("chapter.pdf"))
    run = _compile(tmp_path / "reports", "chapter")
    assert run.returncode == 0, run.stdout.decode("utf-8", "replace")[-2000:]
    pdf = tmp_path / "reports" / "chapter.pdf"
    assert pdf.exists() and pdf.read_bytes().startswith(b"%PDF")


@pytest.mark.latex
@needs_pdflatex
def test_render_report_builds_the_pdf_with_hostile_text(false_results, tmp_path):
    listing = "s = '100% & #1 {x} ~ ^ _ \\\\end{lstlisting}' \u03c9 \u2264\n"
    paths = render_report(false_results, tmp_path, title="Odd title: 50% & #2 \u03c9 \u2260 \u2603",
                          sections={"9.1": "Section with $x_1$ and under_scores"},
                          extra_listings=[("Listing {1}", "python", listing)], figures="all", pdf=True)
    pdf = Path(paths["pdf"])
    assert pdf.exists() and pdf.read_bytes().startswith(b"%PDF")


ESCAPES = [
    ("50%", r"50\%"),
    ("a_b", r"a\_b"),
    ("{x}", r"\{x\}"),
    ("\\", r"\textbackslash{}"),
    ("\u03c9 \u2264 1", r"\ensuremath{\omega} \ensuremath{\le} 1"),
    ("\u2603", r"\texttt{[U+2603]}"),
]


@pytest.mark.parametrize("text, expected", ESCAPES)
def test_escape_tex(text, expected):
    assert escape_tex(text) == expected
