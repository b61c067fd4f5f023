"""Reports: the engine's results as one HTML page (MathML, inline SVG) and a LaTeX document.

The report layer only formats what :func:`symproof.claims.run_claims` returned;
it never decides a verdict.
"""

from ._document import CHAPTER_SECTIONS, Document, build_document
from ._figures import FIGURES, FigureSpec, RenderedFigure, figures_for, render_figure
from ._html import render_html
from ._latex import compile_pdf, escape_tex, render_latex
from ._formulas import to_latex, to_mathml
from ._printers import ReportLatexPrinter, ReportMathMLPrinter
from ._report import DEFAULT_TITLE, NO_PDFLATEX, main_report, pdf_note, render_report

__all__ = [
    "main_report", "render_report", "pdf_note", "NO_PDFLATEX", "DEFAULT_TITLE",
    "build_document", "Document", "CHAPTER_SECTIONS",
    "render_html", "render_latex", "compile_pdf", "escape_tex",
    "FIGURES", "FigureSpec", "RenderedFigure", "figures_for", "render_figure",
    "ReportLatexPrinter", "ReportMathMLPrinter", "to_latex", "to_mathml",
]
