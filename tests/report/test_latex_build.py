"""The LaTeX reports compile with pdflatex (plain TeX Live: latex-base, -recommended, fonts-recommended)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from symproof import SymproofError
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


TEMPLATES = REPO / "symproof" / "report" / "templates"
_USEPACKAGE = re.compile(r"\\usepackage(?:\[[^\]]*\])?\{([^}]*)\}")


def _template_packages():
    text = "\n".join(p.read_text("utf-8") for p in sorted(TEMPLATES.glob("*.tex.j2")))
    return sorted({name.strip() for group in _USEPACKAGE.findall(text) for name in group.split(",")})


def test_the_templates_load_packages():
    assert {"amsmath", "lmodern", "hyperref"} <= set(_template_packages())


@pytest.mark.latex
@pytest.mark.skipif(shutil.which("kpsewhich") is None, reason="kpsewhich (TeX Live) is not installed")
@pytest.mark.parametrize("package", _template_packages())
def test_every_package_the_templates_load_is_installed(package):
    """A package missing from .ci/run's apt-get line fails here, not in the README's first command."""
    found = subprocess.run(["kpsewhich", f"{package}.sty"], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0 and found.stdout.strip(), (
        f"{package}.sty is not installed: add its Debian package to .ci/run's apt-get line")


def _fake_pdflatex(folder: Path) -> Path:
    """A ``pdflatex`` that fails the way a missing package does."""
    folder.mkdir()
    script = folder / "pdflatex"
    script.write_text("#!/bin/sh\necho \"! LaTeX Error: File lmodern.sty not found.\"\nexit 1\n")
    script.chmod(0o755)
    return folder


def test_a_failing_pdf_costs_only_the_pdf(false_results, tmp_path, monkeypatch):
    fake = _fake_pdflatex(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    written = render_report(false_results, tmp_path / "out", figures=[], pdf="auto")
    assert written["pdf"] is None and "lmodern.sty" in written["pdf_error"]
    assert Path(written["html"]).exists() and Path(written["tex"]).exists()
    with pytest.raises(SymproofError, match="lmodern.sty"):
        render_report(false_results, tmp_path / "required", figures=[], pdf=True)
    assert (tmp_path / "required" / "index.html").exists()


def test_the_command_names_a_pdf_failure_and_exits_non_zero(tmp_path):
    fake = _fake_pdflatex(tmp_path / "bin")
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}"}
    run = subprocess.run([sys.executable, "-m", "symproof", "report", "--only", "rope.relative", "--out",
                          str(tmp_path / "out")], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "no PDF written" in run.stderr and "lmodern.sty" in run.stderr and "Traceback" not in run.stderr
    assert (tmp_path / "out" / "index.html").exists() and (tmp_path / "out" / "chapter.tex").exists()
    assert not (tmp_path / "out" / "chapter.pdf").exists()
    no_pdf = subprocess.run([sys.executable, "-m", "symproof", "report", "--only", "rope.relative", "--no-pdf",
                             "--out", str(tmp_path / "plain")], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=300)
    assert no_pdf.returncode == 0, no_pdf.stderr
    assert (tmp_path / "plain" / "index.html").exists() and not (tmp_path / "plain" / "chapter.pdf").exists()


@pytest.fixture(scope="module")
def committed_build():
    from symproof.report._latex import build_pdf

    if not (REPO / "reports" / "chapter.tex").exists():
        pytest.skip("reports/ has not been generated in this checkout")
    figures = {f"figures/{p.name}": p.read_bytes() for p in (REPO / "reports" / "figures").glob("*.pdf")}
    return build_pdf((REPO / "reports" / "chapter.tex").read_text("utf-8"), figures)


@pytest.mark.latex
@needs_pdflatex
def test_the_pdf_has_no_overfull_box(committed_build):
    over = [float(w) for w in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)", committed_build.log)]
    assert [w for w in over if w > 2.0] == []


@pytest.mark.latex
@needs_pdflatex
def test_no_formula_is_scaled_below_70_percent(committed_build):
    scaled = re.findall(r"symproof-fit: ([\d.]+)pt into ([\d.]+)pt", committed_build.log)
    ratios = [float(line) / float(natural) for natural, line in scaled]
    assert all(r >= 0.7 for r in ratios), sorted(ratios)[:5]
    # the long ones are broken over lines instead (the log names each)
    assert "symproof-break" in committed_build.log


@pytest.mark.latex
@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_the_contents_give_the_pages_the_sections_are_on(committed_build, tmp_path):
    entries = re.findall(r"\\contentsline \{section\}\{(.+?)\}\{(\d+)\}", committed_build.toc)
    assert len(entries) >= 5
    pdf = tmp_path / "chapter.pdf"
    pdf.write_bytes(committed_build.pdf)
    for title, page in entries:
        plain = re.sub(r"\\([^A-Za-z])", r"\1", title.replace("-{}", "-"))
        words = re.sub(r"\\[A-Za-z]+|[{}]", " ", plain).split()[:2]
        text = subprocess.run(["pdftotext", "-f", page, "-l", page, "-layout", str(pdf), "-"], capture_output=True,
                              text=True, timeout=60).stdout
        assert " ".join(words) in " ".join(text.split()), (title, page)
    assert committed_build.passes >= 3  # two passes are not enough: the contents' length moves the pages


@pytest.mark.latex
@needs_pdflatex
def test_assumptions_and_derivation_headings_stand_on_their_own_lines():
    tex = (REPO / "reports" / "chapter.tex").read_text("utf-8")
    assert tex.count(r"\textbf{Derivation.}\nopagebreak\par") == tex.count(r"\textbf{Derivation.}") > 0
    assert tex.count(r"\textbf{Assumptions.}\par") == tex.count(r"\textbf{Assumptions.}") > 0


def _pdf_pages(build, tmp_path) -> list:
    pdf = tmp_path / "chapter.pdf"
    pdf.write_bytes(build.pdf)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, timeout=120).stdout
    return text.split("\f")


@pytest.mark.latex
@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_listings_copy_as_code_with_straight_quotes_and_line_numbers(committed_build, tmp_path):
    text = "\n".join(_pdf_pages(committed_build, tmp_path))
    assert "\u2019adjacent\u2019" not in text and "\u2018" not in text.split("symproof_rope.py")[-1]
    assert re.search(r"^\s*\d+\s+PAIRING = 'adjacent'", text, re.M), "the Python listing's PAIRING line"


@pytest.mark.latex
@needs_pdflatex
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_no_page_ends_on_a_dangling_heading(committed_build, tmp_path):
    """A page's last line (above its number) is never "Derivation." or a claim's title alone."""
    dangling = []
    for number, page in enumerate(_pdf_pages(committed_build, tmp_path), start=1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        if len(lines) >= 2 and lines[-1].isdigit():
            lines = lines[:-1]
        if lines and (lines[-1] in ("Derivation.", "Statement.") or lines[-1].endswith("expression:")):
            dangling.append((number, lines[-1]))
    assert dangling == []
