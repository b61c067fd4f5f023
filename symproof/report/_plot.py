"""A small plotting canvas for the report's figures, printed as SVG (the page) and as PDF + TeX (the PDF).

The figures are line plots and two heat maps; drawing them needs lines, rectangles, circles, one raster,
and labels.  A :class:`Canvas` records those in its own coordinates (x right, y down, one unit one point);
:func:`to_svg` prints it as an ``<svg>`` whose labels are SVG text, :func:`to_pdf` prints the line art
(no text) as a one-page PDF, and :func:`to_tex_overlay` prints the labels as a LaTeX ``picture`` that
sets them, typeset by TeX, over that PDF.  Every number is rounded to two decimals before it is printed,
and nothing depends on the clock or the machine: the same figure gives the same bytes everywhere.

Labels are TeX (``r"$\\|p_t\\|_2^2$ (unitless)"``); :func:`svg_label` reads the little of it that the
figures use (Greek letters, sub- and superscripts, a few symbols) into SVG ``<tspan>`` runs.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import zlib
from dataclasses import dataclass, field

__all__ = [
    "COLORS",
    "FONT",
    "SCRIPT_SCALE",
    "Axes",
    "Canvas",
    "colormap",
    "svg_label",
    "to_pdf",
    "to_svg",
    "to_tex_overlay",
]

#: matplotlib's default cycle, the colours the figures have always used
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")
#: label, tick and title sizes in canvas units (a canvas is 440 units wide: see the page's phone bound)
FONT = {"label": 14, "tick": 13, "title": 14, "legend": 13, "cell": 13}
#: a script's size relative to its base, and the smallest size a script is set at (12 units of a 440-unit
#: canvas read 9.4 px on a 390 px phone)
SCRIPT_SCALE = 0.86
MIN_SCRIPT = 12

# ColorBrewer RdBu, reversed (blue for -1, red for +1), matplotlib's RdBu_r
_RDBU_R = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
           "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f")


def _rgb(color: str) -> tuple:
    return tuple(int(color[k:k + 2], 16) for k in (1, 3, 5))


def colormap(value: float, lo: float = -1.0, hi: float = 1.0) -> tuple:
    """``value`` in ``[lo, hi]`` as an RGB triple of RdBu_r (linear between its eleven colours)."""
    u = min(max((value - lo) / (hi - lo), 0.0), 1.0) * (len(_RDBU_R) - 1)
    k = min(int(u), len(_RDBU_R) - 2)
    a, b = _rgb(_RDBU_R[k]), _rgb(_RDBU_R[k + 1])
    f = u - k
    return tuple(round(x + (y - x) * f) for x, y in zip(a, b))


def _n1(value: float) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _n(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass
class Canvas:
    width: float
    height: float
    items: list = field(default_factory=list)

    def line(self, points, color="#000000", width=1.0, dash=None):
        self.items.append(("line", [(float(x), float(y)) for x, y in points], color, width, dash))

    def rect(self, x, y, w, h, fill, stroke=None):
        self.items.append(("rect", float(x), float(y), float(w), float(h), fill, stroke))

    def circle(self, x, y, r, fill):
        self.items.append(("circle", float(x), float(y), float(r), fill))

    def raster(self, x, y, w, h, rows):
        """``rows``: lists of RGB triples, the first row drawn at the top."""
        self.items.append(("raster", float(x), float(y), float(w), float(h), [list(r) for r in rows]))

    def text(self, x, y, tex, size, anchor="middle", rotate=False, color="#000000"):
        """A label centred vertically on ``y``; ``anchor`` start / middle / end; ``rotate``: read bottom to top."""
        self.items.append(("text", float(x), float(y), tex, size, anchor, rotate, color))


def nice_ticks(lo: float, hi: float, count: int = 5) -> list:
    """Round numbers (1, 2 or 5 times a power of ten apart) from ``lo`` to ``hi``."""
    span = (hi - lo) / max(count, 1)
    power = 10 ** math.floor(math.log10(span))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= span)
    first = math.ceil(lo / step - 1e-9)
    return [k * step for k in range(first, math.floor(hi / step + 1e-9) + 1)]


def tick_text(value: float) -> str:
    text = f"{value:.6g}"
    return f"${text}$"


class Axes:
    """A plot box on a canvas: data limits, optional log scales, and the usual furniture."""

    def __init__(self, canvas: Canvas, box, xlim, ylim, xlog=False, ylog=False):
        self.canvas, self.box = canvas, box
        self.xlim, self.ylim, self.xlog, self.ylog = xlim, ylim, xlog, ylog

    def _t(self, value, lim, log):
        if log:
            value, lim = math.log10(value), (math.log10(lim[0]), math.log10(lim[1]))
        return (value - lim[0]) / (lim[1] - lim[0])

    def x(self, value):
        left, _, right, _ = self.box
        return left + (right - left) * self._t(value, self.xlim, self.xlog)

    def y(self, value):
        _, top, _, bottom = self.box
        return bottom - (bottom - top) * self._t(value, self.ylim, self.ylog)

    def plot(self, xs, ys, color, width=1.5, dash=None):
        self.canvas.line([(self.x(a), self.y(b)) for a, b in zip(xs, ys)], color, width, dash)

    def dots(self, xs, ys, color, radius=2.2):
        for a, b in zip(xs, ys):
            self.canvas.circle(self.x(a), self.y(b), radius, color)

    def hline(self, value, color, width=1.0, dash=None):
        self.canvas.line([(self.box[0], self.y(value)), (self.box[2], self.y(value))], color, width, dash)

    def vline(self, value, color, width=1.0, dash=None):
        self.canvas.line([(self.x(value), self.box[1]), (self.x(value), self.box[3])], color, width, dash)

    def frame(self, xticks, yticks, xlabel="", ylabel="", title="", xtexts=None, ytexts=None):
        """The left and bottom spines, ticks with their labels, axis labels and a title."""
        left, top, right, bottom = self.box
        c = self.canvas
        c.line([(left, top), (left, bottom), (right, bottom)], "#000000", 0.8)
        for k, value in enumerate(xticks):
            x = self.x(value)
            c.line([(x, bottom), (x, bottom + 4)], "#000000", 0.8)
            c.text(x, bottom + 13, xtexts[k] if xtexts else tick_text(value), FONT["tick"])
        for k, value in enumerate(yticks):
            y = self.y(value)
            c.line([(left - 4, y), (left, y)], "#000000", 0.8)
            c.text(left - 6, y, ytexts[k] if ytexts else tick_text(value), FONT["tick"], anchor="end")
        if xlabel:
            c.text((left + right) / 2, bottom + 31, xlabel, FONT["label"])
        if ylabel:
            c.text(left - self.ylabel_gap, (top + bottom) / 2, ylabel, FONT["label"], rotate=True)
        if title:
            c.text((left + right) / 2, top - 12, title, FONT["title"])

    #: how far left of the box the y label stands
    ylabel_gap = 42

    def legend(self, entries, x, y, step=17):
        """``(label, color, dash)`` entries listed from ``(x, y)`` down: a short line, then the label."""
        for k, (label, color, dash) in enumerate(entries):
            yy = y + k * step
            self.canvas.line([(x, yy), (x + 18, yy)], color, 1.5, dash)
            self.canvas.text(x + 23, yy, label, FONT["legend"], anchor="start")


# -- SVG ------------------------------------------------------------------------------------------------

_SYMBOLS = {"omega": "\u03c9", "beta": "\u03b2", "theta": "\u03b8", "alpha": "\u03b1", "partial": "\u2202",
            "lfloor": "\u230a", "rfloor": "\u230b", "|": "\u2016", ",": "\u2009", " ": " ", "pm": "\u00b1",
            "dots": "\u2026", "cdot": "\u22c5", "cos": "cos", "sin": "sin", "le": "\u2264", "ge": "\u2265"}
_TOKEN = re.compile(r"\\mathrm\{([^{}]*)\}|\\([A-Za-z]+|.)|([_^])(\{[^{}]*\}|\\[A-Za-z]+|.)|([A-Za-z])|(.)", re.DOTALL)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _math_runs(tex: str, size: float) -> list:
    """``(text, italic, size, shift)`` runs of one ``$...$``: ``shift`` raises (sup, > 0) or lowers (sub)."""
    runs = []
    for upright, command, script, argument, letter, other in _TOKEN.findall(tex):
        if upright:
            runs.append((upright, False, size, 0))
        elif command:
            runs.append((_SYMBOLS.get(command, command), False, size, 0))
        elif script:
            inner = argument[1:-1] if argument.startswith("{") else argument
            small = max(round(size * SCRIPT_SCALE, 2), MIN_SCRIPT)
            shift = 0.45 * size if script == "^" else -0.3 * size
            runs += [(text, italic, small, shift) for text, italic, _, _ in _math_runs(inner, small)]
        elif letter:
            runs.append((letter, True, size, 0))
        else:
            runs.append(("\u2212" if other == "-" else other, False, size, 0))
    return runs


def label_runs(tex: str, size: float) -> list:
    """A label's runs: text outside ``$...$`` upright at ``size``, math through :func:`_math_runs`."""
    runs = []
    for k, piece in enumerate(tex.split("$")):
        if k % 2:
            runs += _math_runs(piece, size)
        elif piece:
            runs.append((piece, False, size, 0))
    return runs


def svg_label(tex: str, size: float) -> str:
    """The ``<tspan>`` runs of a label (an italic letter, a script: its own size and ``dy``)."""
    out, level = [], 0.0
    for text, italic, run_size, shift in label_runs(tex, size):
        attrs = ""
        if italic:
            attrs += ' font-style="italic"'
        if run_size != size:
            attrs += f' font-size="{_n(run_size)}"'
        if shift != level:
            attrs += f' dy="{_n(level - shift)}"'
            level = shift
        out.append(f"<tspan{attrs}>{_esc(text)}</tspan>" if attrs else _esc(text))
    if level:
        out.append(f'<tspan dy="{_n(level)}"></tspan>')
    return "".join(out)


def _png(rows) -> bytes:
    """RGB ``rows`` as a PNG file (no ancillary chunks: the same bytes on every machine)."""
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(v for pixel in row for v in pixel) for row in rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def _dash(dash) -> str:
    return f' stroke-dasharray="{" ".join(_n(d) for d in dash)}"' if dash else ""


def to_svg(canvas: Canvas, label: str, prefix: str) -> str:
    """The canvas as one ``<svg>`` element (no prolog: it is inlined in the page), titled by ``label``."""
    w, h = _n(canvas.width), _n(canvas.height)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
           f'aria-label="{_esc(label).replace(chr(34), "&quot;")}" font-family="DejaVu Sans, Arial, sans-serif" '
           f'id="{prefix}">']
    for item in canvas.items:
        kind = item[0]
        if kind == "line":
            _, points, color, width, dash = item
            # a tenth of a unit is under a fifth of a pixel at the widest the page shows a figure
            path = " ".join(f"{_n1(x)},{_n1(y)}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="{_n(width)}"'
                       f'{_dash(dash)}/>')
        elif kind == "rect":
            _, x, y, rw, rh, fill, stroke = item
            edge = f' stroke="{stroke}"' if stroke else ""
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(rw)}" height="{_n(rh)}" fill="{fill}"{edge}/>')
        elif kind == "circle":
            _, x, y, r, fill = item
            out.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{fill}"/>')
        elif kind == "raster":
            _, x, y, rw, rh, rows = item
            data = base64.b64encode(_png(rows)).decode("ascii")
            out.append(f'<image x="{_n(x)}" y="{_n(y)}" width="{_n(rw)}" height="{_n(rh)}" preserveAspectRatio="none"'
                       f' style="image-rendering:pixelated" href="data:image/png;base64,{data}"/>')
        else:
            _, x, y, tex, size, anchor, rotate, color = item
            base = y + 0.36 * size if not rotate else y
            turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
            ty = _n(y + 0.36 * size) if rotate else _n(base)
            fill = f' fill="{color}"' if color != "#000000" else ""
            anchor_attr = f' text-anchor="{anchor}"' if anchor != "start" else ""
            out.append(f'<text x="{_n(x)}" y="{ty}" font-size="{_n(size)}"{anchor_attr}{fill}{turn}>'
                       f"{svg_label(tex, size)}</text>")
    out.append("</svg>")
    return "\n".join(out)


# -- PDF (line art) and its TeX labels ------------------------------------------------------------------

def _pdf_color(color: str) -> str:
    return " ".join(_n(v / 255) for v in _rgb(color))


def to_pdf(canvas: Canvas) -> bytes:
    """The canvas without its labels as a one-page PDF (Flate streams, no dates, no id)."""
    h = canvas.height
    ops, images = ["1 J 1 j"], []
    for item in canvas.items:
        kind = item[0]
        if kind == "line":
            _, points, color, width, dash = item
            dash_op = f"[{' '.join(_n(d) for d in dash)}] 0 d" if dash else "[] 0 d"
            path = " ".join(f"{_n(x)} {_n(h - y)} {'m' if k == 0 else 'l'}" for k, (x, y) in enumerate(points))
            ops.append(f"{_pdf_color(color)} RG {_n(width)} w {dash_op} {path} S")
        elif kind == "rect":
            _, x, y, rw, rh, fill, stroke = item
            ops.append(f"{_pdf_color(fill)} rg {_n(x)} {_n(h - y - rh)} {_n(rw)} {_n(rh)} re f")
            if stroke:
                ops.append(f"{_pdf_color(stroke)} RG 0.8 w [] 0 d {_n(x)} {_n(h - y - rh)} {_n(rw)} {_n(rh)} re S")
        elif kind == "circle":
            _, x, y, r, fill = item
            k = 0.5523 * r  # four Bezier quarters
            cx, cy = x, h - y
            ops.append(f"{_pdf_color(fill)} rg {_n(cx + r)} {_n(cy)} m "
                       f"{_n(cx + r)} {_n(cy + k)} {_n(cx + k)} {_n(cy + r)} {_n(cx)} {_n(cy + r)} c "
                       f"{_n(cx - k)} {_n(cy + r)} {_n(cx - r)} {_n(cy + k)} {_n(cx - r)} {_n(cy)} c "
                       f"{_n(cx - r)} {_n(cy - k)} {_n(cx - k)} {_n(cy - r)} {_n(cx)} {_n(cy - r)} c "
                       f"{_n(cx + k)} {_n(cy - r)} {_n(cx + r)} {_n(cy - k)} {_n(cx + r)} {_n(cy)} c f")
        elif kind == "raster":
            _, x, y, rw, rh, rows = item
            name = f"Im{len(images)}"
            images.append((name, rows))
            ops.append(f"q {_n(rw)} 0 0 {_n(rh)} {_n(x)} {_n(h - y - rh)} cm /{name} Do Q")
    content = zlib.compress("\n".join(ops).encode("ascii"), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {_n(canvas.width)} {_n(h)}] /Contents 4 0 R "
         f"/Resources << /XObject << " + " ".join(f"/{name} {5 + k} 0 R" for k, (name, _) in enumerate(images))
         + " >> >> >>").encode("ascii"),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    for _, rows in images:
        data = zlib.compress(b"".join(bytes(v for pixel in row for v in pixel) for row in rows), 9)
        objects.append(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                       b"/BitsPerComponent 8 /Interpolate false /Filter /FlateDecode /Length %d >>\nstream\n"
                       % (len(rows[0]), len(rows), len(data)) + data + b"\nendstream")
    out, offsets = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), []
    for k, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % k + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


_TEX_ANCHOR = {"start": "[l]", "middle": "", "end": "[r]"}


def to_tex_overlay(canvas: Canvas, pdf_path: str, width: str = "0.8\\linewidth") -> str:
    """A LaTeX ``picture`` of ``width``: the line-art PDF, and every label set by TeX at its place."""
    w, h = canvas.width, canvas.height
    lines = [f"\\setlength{{\\unitlength}}{{{width}}}\\divide\\unitlength by {round(w)}",
             f"\\begin{{picture}}({_n(w)},{_n(h)})",
             f"\\put(0,0){{\\includegraphics[width={round(w)}\\unitlength]{{{pdf_path}}}}}"]
    for item in canvas.items:
        if item[0] != "text":
            continue
        _, x, y, tex, _size, anchor, rotate, color = item
        box = f"\\makebox(0,0){_TEX_ANCHOR[anchor]}{{\\strut {tex}}}"
        if color != "#000000":
            box = f"\\textcolor[HTML]{{{color[1:].upper()}}}{{{box}}}"
        if rotate:
            box = f"\\rotatebox{{90}}{{{box}}}"
        lines.append(f"\\put({_n(x)},{_n(h - y)}){{{box}}}")
    lines.append("\\end{picture}")
    return "\n".join(lines)
