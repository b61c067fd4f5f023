"""``symproof report`` and :func:`render_report`: results in, files out, atomically.

Everything is rendered in memory first (figures, HTML, LaTeX and, where
pdflatex exists, the PDF); only then is each file written to a temporary file
beside its destination and moved over it with ``os.replace``.  A run that
fails or is interrupted while rendering leaves the previous reports as they
were.  A failing PDF build costs only the PDF: the HTML, the TeX and the
figures are still written, and the error is returned (``pdf_error``) so that
the command can name it and exit non-zero.

Determinism: the files contain no clock time, no wall time of a proof (unless
``include_times`` is asked for), and figures drawn by the report's own canvas, so two
runs on the same code write byte-identical ``index.html``, ``chapter.tex`` and
figures.  The PDF is built with ``SOURCE_DATE_EPOCH`` and no trailer id, but
its bytes still depend on the TeX installation, so it is not committed.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable, Mapping, Sequence

from .._ground._errors import InvalidInputError, SymproofError
from .._ground._io import check_owned_files, output_folder, write_owned_files
from ..prover import PROVED
from ._document import build_document
from ._figures import FIGURES, FigureSpec, figures_for, render_figure
from ._html import render_html
from ._latex import compile_pdf, find_pdflatex, render_latex

__all__ = ["render_report", "main_report", "pdf_note", "NO_PDFLATEX", "DEFAULT_TITLE", "HTML_NAME", "PUBLISHED_NAME"]

#: the one line every command that skips the PDF for want of pdflatex prints (report, check --report)
NO_PDFLATEX = "no PDF: pdflatex not found"

DEFAULT_TITLE = "Position in transformers: the chapter, claim by claim"
HTML_NAME = "index.html"
#: the list of ``symproof report``'s files by sha256, committed with them (see :func:`render_report`)
PUBLISHED_NAME = "SHA256SUMS"
FIGURE_FOLDER = "figures"
LISTING_FOLDER = "listings"


def render_report(results: Sequence, out_dir, *, title: str = DEFAULT_TITLE,
                  sections: Mapping[str, str] | None = None,
                  extra_listings: Iterable = (), figures="related", include_times: bool = False,
                  total_seconds: float | None = None, pdf="auto", tex_name: str = "chapter",
                  option: str = "--out", force: bool = False, published: str | None = None) -> dict:
    """Write ``index.html``, ``<tex_name>.tex``, its figures and (optionally) the PDF to ``out_dir``.

    ``results``: :class:`~symproof.claims.ClaimResult` objects, in the order to show them.
    ``sections``: section number -> title, overriding the derivation modules' headers.
    ``extra_listings``: ``(title, language, source)`` triples, or ``(title, language, source,
    file_name[, claims])``, shown as source listings at the end (with a file name: in full in the PDF,
    and written to ``listings/<file_name>`` and linked from the HTML; with ``claims``, the IDs the
    listing rests on: it and those claims link to each other).
    ``figures``: ``"related"`` (those that illustrate a claim in ``results``), ``"all"``, or a
    sequence of :class:`FigureSpec`.
    ``pdf``: ``"auto"`` (compile where pdflatex exists), ``True`` (required) or ``False``.
    ``option``: how errors name ``out_dir`` (the command-line option that gave it).
    ``force``: replace files with an output's name that symproof did not write (else refused).
    ``published``: also write, under that name, the list of the files by sha256 (``symproof report`` writes
    ``SHA256SUMS``, committed with ``reports/``): a later run replaces a file still as listed there, and
    names it under ``"regenerated"`` when its bytes change.
    Returns ``{"html": path, "tex": path, "pdf": path or None, "figures": [paths], "listings": [paths],
    "pdf_error": str or None, "regenerated": [paths]}``;
    with ``pdf=True`` a failed build raises after the other files are written.
    """
    results = list(results)
    specs = _figure_specs(figures, results)
    rendered = [(spec, render_figure(spec, results)) for spec in specs]
    document = build_document(results, title=title, sections=sections, extra_listings=extra_listings,
                              figures=rendered, include_times=include_times, total_seconds=total_seconds)
    figure_files = {fig.pdf_path: fig.pdf for _, fig in rendered}  # the page carries its figures inline
    # the page first: the LaTeX then finds every formula's MathML (its width decides line breaks in both
    # formats) and LaTeX already printed
    page = render_html(document)
    tex = render_latex(document)
    listing_files = {listing.path: listing.source.encode("utf-8") for listing in document.listings if listing.path}
    files = {**figure_files, **listing_files, f"{tex_name}.tex": tex.encode("utf-8")}
    files[HTML_NAME] = page.encode("utf-8")
    pdf_error = None
    if pdf is True or (pdf == "auto" and find_pdflatex()):
        try:
            files[f"{tex_name}.pdf"] = compile_pdf(tex, figure_files, name=tex_name)
        except SymproofError as err:
            pdf_error = err
    regenerated: list = []
    _write_files(out_dir, files, tex_name, option, force, published, regenerated)
    if pdf_error is not None and pdf is True:
        raise pdf_error
    paths = {relative: os.path.join(os.fspath(out_dir), relative) for relative in files}
    return {
        "html": paths[HTML_NAME], "tex": paths[f"{tex_name}.tex"], "pdf": paths.get(f"{tex_name}.pdf"),
        "figures": [paths[p] for p in figure_files], "listings": [paths[p] for p in listing_files],
        "pdf_error": None if pdf_error is None else str(pdf_error),
        "regenerated": [paths[p] for p in regenerated],
    }


def _figure_specs(figures, results) -> list:
    if figures == "related":
        return figures_for([r.id for r in results])
    if figures == "all":
        return list(FIGURES)
    if isinstance(figures, str):
        raise InvalidInputError(f"figures must be 'related', 'all' or a list of FigureSpec, got {figures!r}")
    specs = list(figures)
    for spec in specs:
        if not isinstance(spec, FigureSpec):
            raise InvalidInputError(f"figures must hold FigureSpec objects, got {type(spec).__name__}")
    return specs


def _write_files(out_dir, files: Mapping[str, bytes], tex_name: str, option: str, force: bool,
                 published: str | None = None, regenerated: list | None = None) -> None:
    """Each file to a temporary sibling, then ``os.replace``; the page goes last, after what it shows.

    The folder's manifest records them; figures an earlier report of the same kind wrote and this
    one does not are removed, and nothing else (a user's own files in ``figures/`` stay)."""
    order = sorted(files, key=lambda relative: (relative == HTML_NAME, relative))
    write_owned_files(out_dir, files, group=f"report:{tex_name}", option=option, order=order, force=force,
                      published=published, unpublished=(f"{tex_name}.pdf",), regenerated=regenerated)


def check_report_folder(out_dir, tex_name: str, option: str) -> None:
    """Refuse, before the claims run, a report folder whose outputs or sub-folders are symlinks,
    folders or special files (what :func:`render_report` would refuse after the work)."""
    names = [HTML_NAME, f"{tex_name}.tex", f"{tex_name}.pdf", PUBLISHED_NAME] + [f"{FIGURE_FOLDER}/{f.name}.{ext}" for f in FIGURES for ext in ("pdf", "svg")]
    check_owned_files(out_dir, names, option=option, folders=(FIGURE_FOLDER, LISTING_FOLDER))


def pdf_note(written: Mapping, asked: bool = True) -> str | None:
    """The line to show about the PDF of a :func:`render_report` result: why it is missing, or None."""
    if written.get("pdf_error"):
        return f"no PDF written: {written['pdf_error']}"
    if asked and written.get("pdf") is None:
        return NO_PDFLATEX
    return None


def main_report(args) -> int:
    """``symproof report [--out DIR] [--only ID_OR_GLOB ...] [--times] [--no-pdf]``.

    Exit 0 iff every claim is proved and every asked-for file was written; 1 when a claim is not
    proved; 2 when the PDF could not be built (the HTML and TeX are written all the same).
    """
    from ..claims import format_table, verify_claims

    only = getattr(args, "only", None) or None
    out = output_folder(args.out, "--out")  # before the claims run, not after
    check_report_folder(out, "chapter", "--out")
    results, seconds = verify_claims(only, progress_stream=sys.stderr)
    print(format_table(results, seconds))
    from ..kernels import kernel_listings

    written = render_report(results, out, figures="related" if only else "all",
                            extra_listings=kernel_listings(results),
                            include_times=bool(getattr(args, "times", False)), total_seconds=seconds,
                            pdf=False if getattr(args, "no_pdf", False) else "auto",
                            force=bool(getattr(args, "force", False)), published=PUBLISHED_NAME)
    outputs = [written["html"], written["tex"]] + ([written["pdf"]] if written["pdf"] else [])
    print("wrote " + ", ".join(outputs))
    for path in written["regenerated"]:
        # the committed file, replaced: `git diff` shows the change (another SymPy, say)
        print(f"{path}: regenerated, differs from the committed version")
    if written["pdf_error"]:
        print(f"symproof report: error: no PDF written: {written['pdf_error']}", file=sys.stderr)
        return 2
    note = pdf_note(written, asked=not getattr(args, "no_pdf", False))
    if note:
        print(note, file=sys.stderr)
    return 0 if results and all(r.status == PROVED for r in results) else 1
