"""Every command that can write a PDF says the same one line when it cannot: ``no PDF: pdflatex not found``."""

from __future__ import annotations

import shutil

import pytest

from symproof._face._cli import main
from symproof.report import NO_PDFLATEX

MINE = "def rope(x, positions):\n    return x\n"

# (command line with OUT for the output folder, the exit code, the PDF it writes where pdflatex exists)
WRITERS = [
    (["report", "--only", "rope.relative", "--out", "OUT"], 0, "chapter.pdf"),
    (["check", "xpos", "--report", "OUT"], 0, "variant.pdf"),
    (["audit", "mine.py:rope", "--like", "half_split", "--report", "OUT"], 1, "audit.pdf"),
]


def _run(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(MINE, encoding="utf-8")
    code = main([str(tmp_path / "out") if a == "OUT" else a for a in argv])
    return code, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("argv, code, pdf", WRITERS, ids=[w[0][0] for w in WRITERS])
def test_without_pdflatex_the_same_note(argv, code, pdf, tmp_path, monkeypatch, capsys):
    empty = tmp_path / "no-tex"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    done, err = _run(argv, tmp_path, monkeypatch, capsys)
    assert done == code
    assert err.count(NO_PDFLATEX) == 1 and NO_PDFLATEX == "no PDF: pdflatex not found", err
    assert not (tmp_path / "out" / pdf).exists()


@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("argv, code, pdf", WRITERS, ids=[w[0][0] for w in WRITERS])
def test_with_pdflatex_a_pdf_and_no_note(argv, code, pdf, tmp_path, monkeypatch, capsys):
    done, err = _run(argv, tmp_path, monkeypatch, capsys)
    assert done == code
    assert not any("no PDF" in line for line in err), err
    assert (tmp_path / "out" / pdf).read_bytes()[:5] == b"%PDF-"


def test_report_no_pdf_asked_says_nothing_about_it(tmp_path, monkeypatch, capsys):
    done, err = _run(["report", "--only", "rope.relative", "--out", "OUT", "--no-pdf"], tmp_path, monkeypatch, capsys)
    assert done == 0 and not any("no PDF" in line for line in err)
