"""The report's figures, drawn with matplotlib (Agg, no pyplot state).

Each figure evaluates the chapter's own symbolic definitions
(:mod:`symproof.encodings`) numerically at the plotted points: that is
formatting data, not evidence, and no verdict depends on it.  Output is
deterministic: no dates in the metadata, a fixed SVG id salt per figure (so two
figures inlined in one page never share ids), text kept as text in SVG.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from .._ground._lambdify import numpy_function
from ..encodings import frequencies, rotation, sinusoidal_vector

__all__ = ["FigureSpec", "RenderedFigure", "FIGURES", "render_figure", "figures_for"]

_RC = {
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.dpi": 100,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "image.cmap": "RdBu_r",
}
_SVG_METADATA = {"Date": None, "Creator": "symproof", "Format": None, "Type": None}
_PDF_METADATA = {"CreationDate": None, "ModDate": None, "Creator": "symproof", "Producer": "symproof"}


@dataclass(frozen=True)
class FigureSpec:
    """A figure, the claims it illustrates, and how to draw it on a matplotlib ``Figure``."""

    name: str
    section: str
    claims: tuple
    caption: str
    draw: Callable
    size: tuple = (6.4, 2.6)


@dataclass(frozen=True)
class RenderedFigure:
    name: str
    caption: str
    svg: str
    pdf: bytes

    @property
    def pdf_path(self) -> str:
        return f"figures/{self.name}.pdf"

    @property
    def svg_path(self) -> str:
        """The SVG beside the page: the page links it (lazily loaded) instead of carrying it inline."""
        return f"figures/{self.name}.svg"

    @property
    def svg_size(self) -> tuple:
        """``(width, height)`` in CSS pixels, so that the page reserves the figure's box before it loads."""
        found = re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', self.svg)
        if not found:
            return (640, 260)
        return tuple(round(float(v) * 4 / 3) for v in found.groups())

    @property
    def anchor(self) -> str:
        return "figure-" + self.name


def render_figure(spec: FigureSpec, results=()) -> RenderedFigure:
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context({**_RC, "svg.hashsalt": spec.name}):
        fig = Figure(figsize=spec.size, layout="constrained")
        FigureCanvasAgg(fig)
        spec.draw(fig, results)
        svg_buffer, pdf_buffer = io.StringIO(), io.BytesIO()
        fig.savefig(svg_buffer, format="svg", metadata=_SVG_METADATA)
        fig.savefig(pdf_buffer, format="pdf", metadata=_PDF_METADATA)
    return RenderedFigure(spec.name, spec.caption, _inline_svg(svg_buffer.getvalue(), spec), pdf_buffer.getvalue())


def _inline_svg(svg: str, spec: FigureSpec) -> str:
    """The ``<svg>`` element alone (no XML prolog or doctype), labelled for screen readers."""
    start = svg.index("<svg")
    svg = svg[start:].strip()
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    label = spec.caption.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    svg = _prefix_ids(svg, spec.name)
    # coordinates to 0.01 pt: matplotlib writes six decimals, which a screen never shows
    svg = re.sub(r"(-?\d+\.\d{2})\d+", r"\1", svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1)


def _prefix_ids(svg: str, prefix: str) -> str:
    """Every id (and every reference to one) prefixed by the figure's name: matplotlib numbers its
    elements ``figure_1``, ``axes_1``... in every figure, and one page inlines them all."""
    ids = set(re.findall(r'\bid="([^"]+)"', svg))
    if not ids:
        return svg
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    return re.sub(r'#([A-Za-z_][\w.:-]*)', lambda m: f"#{prefix}-{m.group(1)}" if m.group(1) in ids else m.group(0), svg)


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

def _draw_sinusoidal_heatmap(fig, results):
    width, positions = 64, np.arange(100)
    table = _sinusoidal_table(positions, width)
    left, right = fig.subplots(1, 2, width_ratios=(3, 1.2))
    image = left.imshow(table, aspect="auto", origin="lower", vmin=-1, vmax=1, interpolation="nearest")
    left.set_xlabel(r"coordinate $i$ of $p_t$ (pair $r = \lfloor i/2 \rfloor$)")
    left.set_ylabel(r"position $t$")
    left.set_title(rf"$p_t$, $d = {width}$, $\beta = 10000$")
    fig.colorbar(image, ax=left, shrink=0.9, label=r"$p_{t,i}$ (unitless)")
    right.plot((table ** 2).sum(axis=1), positions, color="C0", label=r"$\|p_t\|^2$")
    right.axvline(width / 2, color="C3", linestyle="--", linewidth=1, label=r"$d/2$")
    right.set_xlim(0, width * 0.75)
    right.set_xlabel(r"$\|p_t\|_2^2$ (unitless)")
    right.set_ylabel(r"position $t$")
    right.set_title("constant norm")
    right.legend(loc="center left")


def _draw_sinusoidal_d4(fig, results):
    positions = np.arange(4)
    table = _sinusoidal_table(positions, 4)
    ax = fig.subplots()
    image = ax.imshow(table, vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
    t_symbol = sp.Symbol("t")
    exact = sinusoidal_vector(t_symbol, frequencies(4, base=10000))
    for t in positions:
        for dim in range(4):
            value = table[t, dim]
            ax.text(dim, t, _six_decimals(exact[dim].subs(t_symbol, int(t))), ha="center", va="center",
                    color="white" if abs(value) > 0.6 else "black")
    ax.set_xticks(range(4), [r"$\sin t$", r"$\cos t$", r"$\sin(t/100)$", r"$\cos(t/100)$"])
    ax.set_yticks(positions, [f"$p_{t}$" for t in positions])
    ax.set_xlabel("coordinate")
    ax.set_ylabel(r"position $t$")
    fig.colorbar(image, ax=ax, label="value (unitless)")
    ax.set_title(r"$d = 4$: the fast pair moves between neighbours, the slow pair barely does")


def _draw_rope_score(fig, results):
    left, right = fig.subplots(1, 2)
    offsets = np.linspace(-8, 8, 401)
    integers = np.arange(-8, 9)
    left.plot(offsets, _rope_score((1, 0), (1, 0), offsets, 1), color="C0")
    left.plot(integers, _rope_score((1, 0), (1, 0), integers, 1), "o", color="C0", markersize=3)
    left.set_xlabel(r"offset $D = j - i$ (positions)")
    left.set_ylabel(r"score $s$")
    left.set_title(r"$q = k = (1, 0),\ \omega = 1$: $s = \cos(D\omega)$")
    width = 16
    omegas = [float(w) for w in frequencies(width)]
    far = np.arange(0, 201)
    total = sum(_rope_score((1, 0), (1, 0), far, w) for w in omegas) / len(omegas)
    right.plot(far, total, color="C1")
    right.set_xlabel(r"offset $D$ (positions)")
    right.set_ylabel("mean score over pairs")
    right.set_title(rf"$d_k = {width}$, $q = k$ in every pair")
    right.axhline(0, color="0.6", linewidth=0.6)


def _draw_rope_gradient(fig, results):
    ax = fig.subplots()
    q, k, w = (1, 2), (3, -1), 0.05
    offsets = np.arange(0, 201)
    gradient = _rope_score_gradient(q, k, offsets, w)
    envelope = offsets * float(sp.sqrt(sum(x * x for x in q)) * sp.sqrt(sum(x * x for x in k)))
    ax.plot(offsets, gradient, color="C0", label=r"$\partial s / \partial\omega$")
    ax.plot(offsets, envelope, color="C3", linestyle="--", linewidth=1, label=r"$\pm D\,\|q\|\,\|k\|$")
    ax.plot(offsets, -envelope, color="C3", linestyle="--", linewidth=1)
    ax.set_xlabel(r"offset $D$ (positions)")
    ax.set_ylabel(r"$\partial s / \partial\omega$ (score per radian)")
    ax.set_title(r"$q = (1, 2),\ k = (3, -1),\ \omega = 0.05$: the gradient grows with the offset")
    fig.legend(loc="outside right upper")


def _draw_finite_precision(fig, results):
    from ..kernels import finite_precision_table

    width = 128
    positions = tuple(int(t) for t in np.unique(np.logspace(0, 5, 31).astype(int)))
    ax = fig.subplots()
    for k, row in enumerate(finite_precision_table(d=width, positions=positions)):
        errors = np.asarray(row["phase_error"], dtype=float)
        finite = np.isfinite(errors) & (errors > 0)
        color = f"C{k}"
        ax.loglog(np.asarray(row["positions"])[finite], errors[finite], "o-", markersize=3, color=color,
                  label=rf"{row['dtype']}: $p_t = p_{{t+1}}$ first at $t = {row['first_equal_t']}$")
        if row["first_equal_t"] <= positions[-1]:
            ax.axvline(row["first_equal_t"], color=color, linestyle=":", linewidth=1)
    ax.set_xlabel(r"position $t$")
    ax.set_ylabel("max phase error (radians)")
    ax.set_title(rf"phase error of $\mathrm{{fl}}(t\,\omega_r)$ against an exact reference, $d = {width}$; "
                 "dotted: first collision")
    # outside the axes: inside, the legend covered the float16 and bfloat16 curves
    fig.legend(loc="outside lower center", ncols=2)


FIGURES = (
    FigureSpec("sinusoidal_heatmap", "7.2", ("sin.definition", "sin.norm"),
               "Sinusoidal positions $p_t$ ($d = 64$) as a heat map, and their squared norm, constant at $d/2$.",
               _draw_sinusoidal_heatmap, (6.4, 2.8)),
    FigureSpec("sinusoidal_d4", "7.2", ("sin.table_d4",),
               "The $d = 4$ table: $p_0, \\dots, p_3$ with frequencies 1 and 1/100, six decimals.",
               _draw_sinusoidal_d4, (6.4, 2.2)),
    FigureSpec("finite_precision", "7.2", ("sin.finite_precision",),
               "Finite precision: the phase error of $t\\,\\omega_r$ grows with the position in every dtype; "
               "neighbouring positions become equal at the dotted line (measured, not proved).",
               _draw_finite_precision, (6.4, 3.2)),
    FigureSpec("rope_score_offset", "7.4", ("grad.score_not_monotone", "rope.score_expansion"),
               "RoPE score against the offset: $\\cos(D\\omega)$ falls and rises again; with several frequencies "
               "the score is not monotone in the distance either.",
               _draw_rope_score),
    FigureSpec("rope_score_gradient", "7.4", ("grad.frequency",),
               "$\\partial s/\\partial\\omega = D\\, q^T R'(D\\omega)\\, k$ oscillates inside an envelope that grows "
               "linearly with the offset $D$.",
               _draw_rope_gradient),
)
