"""The decay curve of a variant as an SVG: certified enclosures of the score bound against the distance.

What is drawn is what :mod:`._decay` computes, at each integer distance ``D = 0..max_distance``:

* a rotary file: RoFormer's bound ``B(D)`` (one curve), each point a 64-bit interval enclosure from the
  exact frequencies (:class:`._decay._RoformerBound`);
* a bias file: ``b(D, 0)``, the bias of the key at 0 seen from the query at ``D``, one curve per head
  (the first :data:`MAX_CURVES`), each point an interval enclosure of the exact value.

Each curve is a band from the lower to the upper end of the enclosures with the upper ends as a line; a
distance where the value has no certified enclosure (undefined there) is a gap.  The SVG is written
directly, without matplotlib: the same bytes on every machine (no date, no random identifiers, every
coordinate printed with two decimals from the enclosure's ends rounded to float64), written atomically
and never through a symbolic link (:func:`symproof._ground._io.atomic_write_bytes` replaces the link).
"""

from __future__ import annotations

import sympy as sp

from .._ground._errors import InvalidInputError
from .._ground._io import atomic_write_bytes
from ..checker._interval import value_at

__all__ = ["DEFAULT_DISTANCE", "MAX_CURVES", "decay_enclosures", "decay_svg", "write_decay_plot"]

#: most curves drawn (heads of a bias file)
MAX_CURVES = 16
#: distances drawn by default: D = 0..DEFAULT_DISTANCE
DEFAULT_DISTANCE = 128
#: the largest distance accepted
MAX_DISTANCE = 4096

_WIDTH, _HEIGHT = 720, 440
_LEFT, _RIGHT, _TOP, _BOTTOM = 72, 168, 48, 56
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def decay_enclosures(variant, max_distance: int = DEFAULT_DISTANCE) -> tuple:
    """``(what, curves)``: ``what`` names the plotted value; ``curves`` is ``[(label, [(D, lo, hi) or
    (D, None, None)])]``, ``lo <= value <= hi`` certified (float64 ends rounded outward)."""
    if variant.kind not in ("rotary", "bias"):
        raise InvalidInputError(f"--plot: {variant.name} is a {variant.kind} file; the decay curve is drawn for "
                                "rotary and bias files")
    if variant.kind == "bias" and len(variant.axes) > 1:
        raise InvalidInputError(f"--plot: {variant.name} is a bias over the axes {list(variant.axes)}; the decay "
                                "curve is drawn along one axis (bias files without bias.axes)")
    if isinstance(max_distance, bool) or not isinstance(max_distance, int) or not 1 <= max_distance <= MAX_DISTANCE:
        raise InvalidInputError(f"plot distance: expected a whole number in [1, {MAX_DISTANCE}], got {max_distance!r}")
    from . import _decay

    distances = range(max_distance + 1)
    if variant.per_head:  # one curve per head (the first MAX_CURVES heads)
        curves = [(f"head {h}", decay_enclosures(variant.head(h), max_distance)[1][0][1])
                  for h in range(min(variant.heads, MAX_CURVES))]
        return "B_h(D), RoFormer's bound of each head's rotary part (certified enclosure)", curves
    if variant.kind == "rotary":
        omegas = variant.frequencies()
        if variant.mixed:
            omegas = [sp.Add(*row) for row in omegas]
        bound = _decay._RoformerBound(variant, omegas)
        points = [(d, *_ends(bound.at(d))) for d in distances]
        return "B(D), RoFormer's bound (certified enclosure)", [("B(D)", points)]
    past = variant.bias_at(_decay.i, _decay.i - _decay.D, _decay.slope_sym, _decay.h_sym)
    slopes = variant.slopes()
    curves = []
    for h in range(min(variant.heads, MAX_CURVES)):
        at_head = past.xreplace({_decay.slope_sym: slopes[h], _decay.h_sym: sp.Integer(h)})
        points = []
        for d in distances:
            point = {_decay.i: sp.Integer(d), _decay.D: sp.Integer(d)}
            expr = _decay._tables_read(at_head, point)
            value = None if expr is None else value_at(expr, point, _decay.PRECISION)
            points.append((d, *_ends(_decay._iv_of(value))))
        curves.append((f"head {h}", points))
    return "b(D, 0), the bias of a key D steps back (certified enclosure)", curves


def _ends(enclosure) -> tuple:
    """The float64 ends of an ``iv`` enclosure, rounded outward, or ``(None, None)``."""
    import math

    if enclosure is None:
        return None, None
    lo, hi = float(enclosure.a), float(enclosure.b)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None, None
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def _fmt(x: float) -> str:
    text = f"{x:.2f}"
    return "0.00" if text == "-0.00" else text


def _tick(x: float) -> str:
    """A tick label: up to 4 significant digits, no exponent below 10^6."""
    text = f"{x:.4g}"
    return "0" if text in ("-0", "0") else text


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def decay_svg(variant, max_distance: int = DEFAULT_DISTANCE) -> str:
    """The SVG text of the decay curve(s) of ``variant`` (see the module docstring)."""
    what, curves = decay_enclosures(variant, max_distance)
    values = [v for _, points in curves for _, lo, hi in points if lo is not None for v in (lo, hi)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high - low < 1e-12 * (1 + abs(high)):
        low, high = low - 0.5, high + 0.5
    plot_w, plot_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def x_of(d):
        return _LEFT + plot_w * d / max_distance

    def y_of(v):
        return _TOP + plot_h * (high - v) / (high - low)

    title = f"{variant.title or variant.name}: decay, D = 0..{max_distance}"
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
            f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="12">'),
           f"<title>{_escape(title)}</title>",
           ("<desc>Each point is a certified interval enclosure (64-bit interval arithmetic from the exact "
            "definition) of the value at an integer distance D; the band spans the enclosure, the line is its "
            "upper end; a gap is a distance with no certified value. Coordinates are rounded to 0.01 px.</desc>"),
           f'<rect x="0" y="0" width="{_WIDTH}" height="{_HEIGHT}" fill="#ffffff"/>',
           f'<text x="{_LEFT}" y="24" font-size="14">{_escape(title)}</text>',
           (f'<rect x="{_LEFT}" y="{_TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
            'stroke="#444444"/>')]
    for k in range(5):  # ticks: 5 on each axis
        d = max_distance * k / 4
        v = low + (high - low) * k / 4
        out.append(f'<line x1="{_fmt(x_of(d))}" y1="{_TOP + plot_h}" x2="{_fmt(x_of(d))}" y2="{_TOP + plot_h + 5}" '
                   'stroke="#444444"/>')
        out.append(f'<text x="{_fmt(x_of(d))}" y="{_TOP + plot_h + 19}" text-anchor="middle">{_tick(d)}</text>')
        out.append(f'<line x1="{_LEFT - 5}" y1="{_fmt(y_of(v))}" x2="{_LEFT}" y2="{_fmt(y_of(v))}" stroke="#444444"/>')
        out.append(f'<text x="{_LEFT - 8}" y="{_fmt(y_of(v) + 4)}" text-anchor="end">{_tick(v)}</text>')
    out.append(f'<text x="{_fmt(_LEFT + plot_w / 2)}" y="{_HEIGHT - 14}" text-anchor="middle">distance D</text>')
    out.append(f'<text x="16" y="{_fmt(_TOP + plot_h / 2)}" text-anchor="middle" '
               f'transform="rotate(-90 16 {_fmt(_TOP + plot_h / 2)})">{_escape(what)}</text>')
    for n, (label, points) in enumerate(curves):
        colour = _COLOURS[n % len(_COLOURS)]
        for run in _runs(points):
            upper = " ".join(f"{_fmt(x_of(d))},{_fmt(y_of(hi))}" for d, _, hi in run)
            lower = " ".join(f"{_fmt(x_of(d))},{_fmt(y_of(lo))}" for d, lo, _ in reversed(run))
            out.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.25" stroke="none"/>')
            out.append(f'<polyline points="{upper}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        y = _TOP + 8 + 18 * n
        out.append(f'<line x1="{_WIDTH - _RIGHT + 12}" y1="{y}" x2="{_WIDTH - _RIGHT + 32}" y2="{y}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{_WIDTH - _RIGHT + 38}" y="{y + 4}">{_escape(label)}</text>')
    if variant.heads is not None and variant.heads > MAX_CURVES:
        out.append(f'<text x="{_WIDTH - _RIGHT + 12}" y="{_TOP + 8 + 18 * len(curves)}">'
                   f"(first {MAX_CURVES} of {variant.heads} heads)</text>")
    out.append(f'<text x="{_LEFT}" y="{_HEIGHT - 2}" font-size="10" fill="#555555">certified bounds: each band '
               "is an interval enclosure of the exact value</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _runs(points) -> list:
    """The stretches of consecutive distances with a certified value."""
    runs, current = [], []
    for point in points:
        if point[1] is None:
            if current:
                runs.append(current)
            current = []
        else:
            current.append(point)
    if current:
        runs.append(current)
    return runs


def write_decay_plot(variant, path, max_distance: int = DEFAULT_DISTANCE, *, option: str = "--plot") -> str:
    """Write :func:`decay_svg` to ``path`` atomically (a symbolic link at ``path`` is replaced, never
    followed); returns the SVG text."""
    text = decay_svg(variant, max_distance)
    atomic_write_bytes(path, text.encode("ascii", "xmlcharrefreplace"), option=option)
    return text
