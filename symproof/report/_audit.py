"""``symproof audit --report DIR``: the comparison as an HTML page, a LaTeX section and a plot.

Files written (atomically, each replaced whole, through the owned-files writer of
:mod:`symproof._ground._io`: a same-name file symproof did not write is refused unless ``--force``;
nothing else in ``DIR`` is touched):
``audit.html``, ``audit.tex`` (a ``\\section`` to ``\\input``), ``audit_angle_error.png``
and ``audit_angle_error.pdf``; where pdflatex exists, :func:`write_pdf` adds ``audit.pdf`` (the
section set as a document of its own).  Every text that comes from the inputs (function name,
variant title, values) is escaped for the format it lands in.
"""

from __future__ import annotations

import html
import io
import os

import numpy as np

from .._ground._io import write_owned_files
from .._audit._audit import AuditResult
from .._audit._diagnose import ANGLE_ATOL, WHATS

__all__ = ["write_report", "write_pdf", "comparison_rows", "angle_error_figure", "FILES", "PDF_NAME"]

FILES = ("audit.html", "audit.tex", "audit_angle_error.png", "audit_angle_error.pdf")
#: written beside them where pdflatex exists: audit.tex set as a document of its own
PDF_NAME = "audit.pdf"
_DOCUMENT = ("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{lmodern}\n\\usepackage{graphicx}\n"
             "\\usepackage[landscape,margin=1.5cm]{geometry}\n"  # the table has six columns
             "\\begin{document}\n\\small\n\\input{audit}\n\\end{document}\n")
_MAX_PLOTTED_PAIRS = 6

_ASPECT = {
    "pairing": "which coordinates rotate together",
    "frequency": "frequency of each pair",
    "denominator": "width D in base^(-2r/D)",
    "direction": "sense of rotation",
    "position_offset": "position of the first token",
    "rotary_dim": "number of rotated coordinates",
    "scaling": "scale of the rotated pairs",
    "precision": "angle arithmetic",
    "nonlinear": "linear in x",
    "stateful": "same output for the same call",
}


def _declared(result: AuditResult, what: str) -> str:
    v = result.variant
    return {
        "pairing": f"{v.pairing} pairs",
        "frequency": f"{v.rule} rule" + (f", base {v.base.text}" if v.rule == "geometric" and v.base else ""),
        "denominator": str(v.freq_denominator),
        "direction": "+m theta",
        "position_offset": "0",
        "rotary_dim": str(v.rotated_width),
        "scaling": v.factor.text if v.factor is not None else "1",
        "precision": "float32 or better",
        "nonlinear": "linear",
        "stateful": "no state between calls",
    }[what]


def comparison_rows(result: AuditResult) -> list:
    """One row per aspect: ``(what, aspect, expected, found, verdict, minimal input)``."""
    rows = []
    by_what: dict = {}
    for d in result.differences:
        by_what.setdefault(d.what, []).append(d)
    for what in WHATS:
        if what in by_what:
            for d in by_what[what]:
                shown = (f"e_{d.basis} at position {d.position}" if d.basis is not None
                         else str(d.extra.get("input", "")))
                rows.append((what, _ASPECT[what], str(d.expected), str(d.found), "differs", shown))
        elif result.verdict == "equivalent_after_relayout" and what == "pairing":
            rows.append((what, _ASPECT[what], _declared(result, what), "the other pairing",
                         "same after re-laying Wq, Wk", result.relayout["call"]))
        elif "nonlinear" in by_what:
            rows.append((what, _ASPECT[what], _declared(result, what), "", "not checked: the map is not linear", ""))
        else:
            rows.append((what, _ASPECT[what], _declared(result, what), "same", "same", ""))
    return rows


def angle_error_figure(result: AuditResult):
    """The matplotlib ``Figure``: |angle error| per pair (radians) against position (tokens), log scales."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.8), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    analysis = result.analysis
    positions = np.array(analysis.positions if analysis is not None else [], dtype=np.float64)
    keep = positions >= 1
    if analysis is not None and analysis.residual.size:
        n = analysis.residual.shape[1]
        picks = sorted(set(np.linspace(0, n - 1, min(n, _MAX_PLOTTED_PAIRS)).round().astype(int).tolist()))
        for r in picks:
            err = np.maximum(np.abs(analysis.residual[keep, r]), 1e-17)
            a, b = analysis.pairs[r]
            ax.plot(positions[keep], err, marker="o", markersize=3, linewidth=1, label=f"pair {r} ({a}, {b})")
        tol = analysis.tolerance[keep].max(axis=1)
        ax.plot(positions[keep], tol, linestyle="--", color="black", linewidth=1,
                label=f"tolerance {ANGLE_ATOL:g} + 2^-19 |angle| (fastest pair)")
        ax.legend(fontsize=7, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no aligned rotating pair to compare", ha="center", va="center", transform=ax.transAxes)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("position m (tokens)")
    ax.set_ylabel("|angle error| (rad)")
    ax.set_title("Angle of each pair: function minus model", fontsize=10)
    ax.grid(True, which="major", linewidth=0.3)
    fig.tight_layout()
    return fig


def _plot(result: AuditResult):
    fig = angle_error_figure(result)
    png, pdf = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", metadata={"Software": None})
    fig.savefig(pdf, format="pdf", metadata={"Creator": None, "Producer": None, "CreationDate": None})
    return png.getvalue(), pdf.getvalue()


def _html(result: AuditResult) -> str:
    e = html.escape
    v = result.variant
    rows = "\n".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in comparison_rows(result))
    angle = result.max_angle_error
    angle_text = (f"; max angle error {angle['radians']:.3g} rad at position {angle['position']}" if angle else "")
    relayout = ""
    if result.relayout:
        relayout = (f"<p>Re-lay the weights with <code>{e(result.relayout['call'])}</code>, applied to "
                    f"{e(result.relayout['applies_to'])}.</p>")
    said = "".join(f"<p>{e(text[0].upper() + text[1:])}.</p>\n" for text in _said(result))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>symproof audit: {e(result.function)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}
td,th{{border:1px solid #999;padding:0.2em 0.5em;font-size:90%}}</style></head>
<body>
<section id="audit">
<h2>Audit of <code>{e(result.function)}</code> against {e(v.title)}</h2>
<p>Declared model: <code>{e(v.source)}</code>, head width {v.width}, {v.rotated_width} rotated coordinates,
{e(v.pairing)} pairing. The function was probed with {e(str(result.backend))} inputs, every basis vector at
positions {e(', '.join(str(p) for p in result.as_dict()['positions_probed']))}{e(_length_text(result))}.</p>
{said}<p><strong>Verdict: {e(result.verdict)}</strong> (max entry error {result.max_error:.3g}{e(angle_text)}).</p>
{relayout}
<table><thead><tr><th>what</th><th>aspect</th><th>model</th><th>function</th><th>verdict</th><th>minimal input</th></tr></thead>
<tbody>
{rows}
</tbody></table>
<figure><img src="audit_angle_error.png" alt="absolute angle error per pair against position">
<figcaption>Per-pair angle error (function minus model, radians) against position (tokens), log scales;
the dashed line is the tolerance of float32 angle arithmetic.</figcaption></figure>
</section>
</body></html>
"""


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text) -> str:
    return "".join(_TEX.get(ch, ch) for ch in str(text))


def _length_text(result: AuditResult) -> str:
    """Which call length the model was read at, for a rule that reads it (else nothing)."""
    if not result.variant.length_dependent:
        return ""
    return (f"; the model's frequencies depend on the call length and were read at seq_len = {result.seq_len} "
            f"(max position id + 1), the length of every probe call")


def _said(result: AuditResult) -> list:
    """How the model was read where that is not plain (the output order, an attention's query scale), as in
    the text output: the report says what the verdict rests on."""
    return [text for text in ((result.output_order or {}).get("said"), result.note) if text]


def _latex(result: AuditResult) -> str:
    v = result.variant
    lines = [f"\\section{{Audit of \\texttt{{{_tex(result.function)}}} against {_tex(v.title)}}}",
             *([_tex(_length_text(result)[2:].capitalize() + ".")] if _length_text(result) else []),
             *[_tex(text[0].upper() + text[1:]) + "." for text in _said(result)],
             f"Verdict: \\textbf{{{_tex(result.verdict)}}} (max entry error {_tex(f'{result.max_error:.3g}')}).",
             "", "\\begin{tabular}{llllll}", "what & aspect & model & function & verdict & minimal input \\\\ \\hline"]
    for row in comparison_rows(result):
        lines.append(" & ".join(_tex(c)[:80] for c in row) + " \\\\")
    lines += ["\\end{tabular}", "", "\\begin{figure}[h]\\centering",
              "\\includegraphics[width=0.8\\linewidth]{audit_angle_error.pdf}",
              "\\caption{Per-pair angle error (radians) against position (tokens).}", "\\end{figure}", ""]
    return "\n".join(lines)


def write_report(result: AuditResult, folder, *, force: bool = False) -> list:
    """Write the report files into ``folder`` (created if needed) through the owned-files writer
    (the page last, after what it shows); return their paths, HTML first.

    ``force``: replace files of these names that symproof did not write (else refused)."""
    png, pdf = _plot(result)
    files = dict(zip(FILES, (_html(result).encode("utf-8"), _latex(result).encode("utf-8"), png, pdf)))
    write_owned_files(folder, files, group="audit", option="--report", force=force, order=FILES[::-1])
    return [os.path.join(os.fspath(folder), name) for name in FILES]


def write_pdf(result: AuditResult, folder, *, force: bool = False) -> dict:
    """``audit.pdf``, the section :func:`write_report` writes set as a document of its own, where
    pdflatex exists; written through the same owned-files writer (its own manifest group).

    Returns ``{"pdf": path or None, "pdf_error": message or None}`` (what
    :func:`symproof.report.pdf_note` reads); a failed build leaves the other files as they are.
    """
    from .._ground._errors import SymproofError
    from ._latex import compile_pdf, find_pdflatex

    if find_pdflatex() is None:
        return {"pdf": None, "pdf_error": None}
    inputs = {"audit.tex": _latex(result).encode("utf-8"), "audit_angle_error.pdf": _plot(result)[1]}
    try:
        pdf = compile_pdf(_DOCUMENT, inputs, name="audit_document")
    except SymproofError as err:
        return {"pdf": None, "pdf_error": str(err)}
    write_owned_files(folder, {PDF_NAME: pdf}, group="audit-pdf", option="--report", force=force)
    return {"pdf": os.path.join(os.fspath(folder), PDF_NAME), "pdf_error": None}
