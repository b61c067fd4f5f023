"""The report's figures, drawn on the report's own small canvas (:mod:`._plot`): no matplotlib.

Each figure evaluates the chapter's own symbolic definitions
(:mod:`symproof.encodings`) numerically at the plotted points: that is
formatting data, not evidence, and no verdict depends on it.  A figure is
printed twice from one drawing: an ``<svg>`` the page inlines (its labels
are SVG text, sized to be read on a phone), and a line-art PDF whose labels
LaTeX sets over it (``tex``, a ``picture``).  Every coordinate is rounded to
two decimals: two runs write the same bytes, on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from .._ground._lambdify import numpy_function
from ..encodings import frequencies, rotation, sinusoidal_vector
from ._plot import COLORS, FONT, Axes, Canvas, colormap, nice_ticks, to_pdf, to_svg, to_tex_overlay

__all__ = ["FigureSpec", "RenderedFigure", "FIGURES", "render_figure", "figures_for", "CANVAS_WIDTH"]

#: every figure's width in canvas units (points in the PDF); the page scales it to its column
CANVAS_WIDTH = 440


@dataclass(frozen=True)
class FigureSpec:
    """A figure, the claims it illustrates, and how to draw it on a :class:`~._plot.Canvas`."""

    name: str
    section: str
    claims: tuple
    caption: str
    draw: Callable
    #: the canvas height in units (its width is :data:`CANVAS_WIDTH`)
    height: float = 300


@dataclass(frozen=True)
class RenderedFigure:
    name: str
    caption: str
    svg: str
    pdf: bytes
    #: the LaTeX ``picture`` that shows ``pdf`` with its labels
    tex: str = ""

    @property
    def pdf_path(self) -> str:
        return f"figures/{self.name}.pdf"

    @property
    def anchor(self) -> str:
        return "figure-" + self.name


def render_figure(spec: FigureSpec, results=()) -> RenderedFigure:
    canvas = Canvas(CANVAS_WIDTH, spec.height)
    spec.draw(canvas, results)
    rendered = RenderedFigure(spec.name, spec.caption, "", to_pdf(canvas))
    return RenderedFigure(spec.name, spec.caption, to_svg(canvas, _alt(spec.caption), "svg-" + spec.name),
                          rendered.pdf, to_tex_overlay(canvas, rendered.pdf_path))


def _alt(caption: str) -> str:
    from ._html import alt_text  # the page's reading of a caption's TeX

    return alt_text(caption)


def figures_for(claim_ids) -> list:
    """The figures that illustrate any of ``claim_ids``."""
    chosen = set(claim_ids)
    return [spec for spec in FIGURES if chosen.intersection(spec.claims)]


# -- numeric evaluation of the symbolic definitions -----------------------------------------------------

def _sinusoidal_table(positions, width, base=10000):
    t = sp.Symbol("t")
    vector = sinusoidal_vector(t, frequencies(width, base=base))
    evaluate = numpy_function(t, list(vector))
    return np.array([np.broadcast_to(np.asarray(v, dtype=float), np.shape(positions)) for v in evaluate(positions)]).T


def _six_decimals(value) -> str:
    """The exact ``value`` rounded to six decimals from 30 significant digits (one rounding of an exact
    value, not numpy's sin/cos, whose last bits depend on the CPU): the same text on every machine."""
    from decimal import ROUND_HALF_EVEN, Decimal

    shown = Decimal(str(sp.N(value, 30))).quantize(Decimal("0.000001"), rounding=ROUND_HALF_EVEN)
    return f"{shown + 0:f}"  # + 0: no "-0.000000"


def _rope_score(q, k, offsets, w):
    """``q^T R(D w) k`` at each offset ``D`` for one pair."""
    D, omega = sp.symbols("D omega")
    score = (sp.Matrix(q).T * rotation(D * omega) * sp.Matrix(k))[0]
    return numpy_function((D, omega), score)(np.asarray(offsets, dtype=float), float(w))


def _rope_score_gradient(q, k, offsets, w):
    """``ds/dw`` of ``s = q^T R(D w) k``, differentiated symbolically."""
    D, omega = sp.symbols("D omega")
    score = (sp.Matrix(q).T * rotation(D * omega) * sp.Matrix(k))[0]
    gradient = sp.diff(score, omega)
    values = numpy_function((D, omega), gradient)(np.asarray(offsets, dtype=float), float(w))
    return np.broadcast_to(values, np.shape(offsets))


# -- the figures ------------------------------------------------------------------------------------

def _colorbar(c: Canvas, left, top, bottom, label):
    steps = 64
    c.raster(left, top, 12, bottom - top, [[colormap(1 - 2 * k / (steps - 1))] for k in range(steps)])
    bar = Axes(c, (left, top, left + 12, bottom), (0, 1), (-1, 1))
    for value in (-1, 0, 1):
        c.line([(left + 12, bar.y(value)), (left + 16, bar.y(value))], "#000000", 0.8)
        c.text(left + 18, bar.y(value), f"${value}$", FONT["tick"], anchor="start")
    c.text(left + 50, (top + bottom) / 2, label, FONT["label"], rotate=True)


def _draw_sinusoidal_heatmap(c: Canvas, results):
    width, positions = 64, np.arange(100)
    table = _sinusoidal_table(positions, width)
    heat = Axes(c, (62, 30, 350, 196), (-0.5, width - 0.5), (-0.5, len(positions) - 0.5))
    c.raster(62, 30, 288, 166, [[colormap(v) for v in table[t]] for t in reversed(positions)])
    heat.frame(nice_ticks(0, width - 1), nice_ticks(0, len(positions) - 1),
               r"coordinate $i$ of $p_t$ (pair $r = \lfloor i/2 \rfloor$)", r"position $t$",
               rf"$p_t$, $d = {width}$, $\beta = 10000$")
    _colorbar(c, 368, 30, 196, r"$p_{t,i}$")
    norm = Axes(c, (62, 270, 425, 370), (0, len(positions) - 1), (0, width * 0.75))
    norm.plot(positions, (table ** 2).sum(axis=1), COLORS[0])
    norm.hline(width / 2, COLORS[3], 1.2, (5, 3))
    norm.frame(nice_ticks(0, len(positions) - 1), nice_ticks(0, width * 0.75, 3), r"position $t$",
               r"$\|p_t\|_2^2$", "constant norm")
    norm.legend([(r"$\|p_t\|^2$", COLORS[0], None), (r"$d/2$", COLORS[3], (5, 3))], 300, 290)


def _draw_sinusoidal_d4(c: Canvas, results):
    positions = range(4)
    table = _sinusoidal_table(np.arange(4), 4)
    left, top, right, bottom = 72, 30, 352, 190
    ax = Axes(c, (left, top, right, bottom), (-0.5, 3.5), (3.5, -0.5))
    t_symbol = sp.Symbol("t")
    exact = sinusoidal_vector(t_symbol, frequencies(4, base=10000))
    cell_w, cell_h = (right - left) / 4, (bottom - top) / 4
    for t in positions:
        for dim in range(4):
            value = float(table[t, dim])
            c.rect(left + dim * cell_w, top + t * cell_h, cell_w, cell_h, "#%02x%02x%02x" % colormap(value))
            c.text(left + (dim + 0.5) * cell_w, top + (t + 0.5) * cell_h,
                   f"${_six_decimals(exact[dim].subs(t_symbol, int(t)))}$", FONT["cell"],
                   color="#ffffff" if abs(value) > 0.6 else "#000000")
    ax.frame(range(4), positions, "coordinate", r"position $t$", r"$d = 4$: the fast pair moves, the slow one barely",
             xtexts=[r"$\sin t$", r"$\cos t$", r"$\sin(t/100)$", r"$\cos(t/100)$"],
             ytexts=[f"$p_{t}$" for t in positions])
    _colorbar(c, 368, top, bottom, "value")


def _draw_rope_score(c: Canvas, results):
    offsets = np.linspace(-8, 8, 161)
    integers = np.arange(-8, 9)
    near = Axes(c, (62, 30, 425, 150), (-8, 8), (-1.1, 1.1))
    near.hline(0, "#999999", 0.6)
    near.plot(offsets, _rope_score((1, 0), (1, 0), offsets, 1), COLORS[0])
    near.dots(integers, _rope_score((1, 0), (1, 0), integers, 1), COLORS[0])
    near.frame(nice_ticks(-8, 8, 4), (-1, 0, 1), r"offset $D = j - i$", r"score $s$",
               r"$q = k = (1, 0)$, $\omega = 1$: $s = \cos(D\omega)$")
    width = 16
    omegas = [float(w) for w in frequencies(width)]
    far = np.arange(0, 201)
    total = sum(_rope_score((1, 0), (1, 0), far, w) for w in omegas) / len(omegas)
    wide = Axes(c, (62, 232, 425, 352), (0, 200), (float(total.min()) - 0.05, 1.05))
    wide.hline(0, "#999999", 0.6)
    wide.plot(far, total, COLORS[1])
    wide.frame(nice_ticks(0, 200), nice_ticks(float(total.min()), 1, 3), r"offset $D$", "mean score",
               rf"$d_k = {width}$, $q = k$ in every pair")


def _draw_rope_gradient(c: Canvas, results):
    q, k, w = (1, 2), (3, -1), 0.05
    offsets = np.arange(0, 201)
    gradient = _rope_score_gradient(q, k, offsets, w)
    envelope = offsets * float(sp.sqrt(sum(x * x for x in q)) * sp.sqrt(sum(x * x for x in k)))
    top = float(envelope.max()) * 1.05
    ax = Axes(c, (72, 30, 425, 220), (0, 200), (-top, top))
    ax.ylabel_gap = 52
    ax.hline(0, "#999999", 0.6)
    ax.plot(offsets, envelope, COLORS[3], 1.2, (5, 3))
    ax.plot(offsets, -envelope, COLORS[3], 1.2, (5, 3))
    ax.plot(offsets, gradient, COLORS[0])
    ax.frame(nice_ticks(0, 200), nice_ticks(-top, top, 4), r"offset $D$", r"$\partial s / \partial\omega$",
             r"$q = (1, 2)$, $k = (3, -1)$, $\omega = 0.05$")
    ax.legend([(r"$\partial s / \partial\omega$", COLORS[0], None), (r"$\pm D\,\|q\|\,\|k\|$", COLORS[3], (5, 3))],
              90, 45)


def _draw_finite_precision(c: Canvas, results):
    from ..kernels import finite_precision_table

    width = 128
    positions = tuple(int(t) for t in np.unique(np.logspace(0, 5, 31).astype(int)))
    rows = finite_precision_table(d=width, positions=positions)
    curves = []
    for row in rows:
        errors = np.asarray(row["phase_error"], dtype=float)
        finite = np.isfinite(errors) & (errors > 0)
        curves.append((row, np.asarray(row["positions"])[finite], errors[finite]))
    low = min(float(e.min()) for _, _, e in curves if len(e))
    high = max(float(e.max()) for _, _, e in curves if len(e))
    ylim = (10.0 ** np.floor(np.log10(low)), 10.0 ** np.ceil(np.log10(high)))
    ax = Axes(c, (90, 30, 425, 220), (1, 1e5), ylim, xlog=True, ylog=True)
    ax.ylabel_gap = 72
    decades = range(int(np.log10(ylim[0])), int(np.log10(ylim[1])) + 1)
    ystep = max(1, len(decades) // 5)
    yticks = [10.0 ** e for e in decades][::ystep]
    legend = []
    for k, (row, xs, ys) in enumerate(curves):
        color = COLORS[k % len(COLORS)]
        if row["first_equal_t"] <= positions[-1]:
            ax.vline(row["first_equal_t"], color, 1.0, (1.5, 2.5))
        ax.plot(xs, ys, color, 1.3)
        ax.dots(xs, ys, color, 2.0)
        legend.append((rf"{row['dtype']}: $p_t = p_{{t+1}}$ first at $t = {row['first_equal_t']}$", color, None))
    ax.frame([10.0 ** e for e in range(6)], yticks, r"position $t$", "max phase error (radians)",
             rf"phase error of $\mathrm{{fl}}(t\,\omega_r)$, $d = {width}$",
             xtexts=[f"$10^{e}$" for e in range(6)], ytexts=[f"$10^{{{int(np.log10(v))}}}$" for v in yticks])
    ax.legend(legend, 80, 270)


FIGURES = (
    FigureSpec("sinusoidal_heatmap", "7.2", ("sin.definition", "sin.norm"),
               "Sinusoidal positions $p_t$ ($d = 64$) as a heat map, and their squared norm, constant at $d/2$.",
               _draw_sinusoidal_heatmap, 410),
    FigureSpec("sinusoidal_d4", "7.2", ("sin.table_d4",),
               "The $d = 4$ table: $p_0, \\dots, p_3$ with frequencies 1 and 1/100, six decimals.",
               _draw_sinusoidal_d4, 240),
    FigureSpec("finite_precision", "7.2", ("sin.finite_precision",),
               "Finite precision: the phase error of $t\\,\\omega_r$ grows with the position in every dtype; "
               "neighbouring positions become equal at the dotted line (measured, not proved).",
               _draw_finite_precision, 330),
    FigureSpec("rope_score_offset", "7.4", ("grad.score_not_monotone", "rope.score_expansion"),
               "RoPE score against the offset: $\\cos(D\\omega)$ falls and rises again; with several frequencies "
               "the score is not monotone in the distance either.",
               _draw_rope_score, 395),
    FigureSpec("rope_score_gradient", "7.4", ("grad.frequency",),
               "$\\partial s/\\partial\\omega = D\\, q^T R'(D\\omega)\\, k$ oscillates inside an envelope that grows "
               "linearly with the offset $D$.",
               _draw_rope_gradient, 265),
)
