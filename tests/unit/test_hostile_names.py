"""Every printer, fed the same hostile symbol and function names, writes them as text: never markup, never a
TeX command that acts on the page (a link, a class, a style, loaded code)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
import sympy as sp

from symproof import prove_equal
from symproof.report import to_latex, to_mathml
from symproof.report import _html as html_report
from symproof.report import _latex as tex_report

#: names written to become markup in HTML, or a command in TeX (MathJax acts on \href, \class, \style, ...)
HOSTILE_NAMES = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '"><script>alert(1)</script>',
    "&lt;script&gt;",
    r"\href{javascript:alert(1)}{x}",
    r"\class{evil}{x}",
    r"\style{color:red}{x}",
    r"\cssId{evil}{x}",
    r"\url{javascript:alert(1)}",
    r"\unicode{x41}",
    r"\require{html}",
    r"$\href{javascript:alert(1)}{x}$",
    r"x_{\href{javascript:alert(1)}{y}}",
    r"a^\class{evil}{b}",
    "\\",
    "{",
    "%",
]

x = sp.Symbol("x")

#: how a name enters a formula
SHAPES = {
    "symbol": lambda name: sp.Symbol(name),
    "function": lambda name: sp.Function(name)(x),
    "function of two": lambda name: sp.Function(name)(x, x + 1),
    "function squared": lambda name: sp.Function(name)(x) ** 2,
    "matrix entry": lambda name: sp.MatrixSymbol(name, 2, 2)[0, 1],
    "in a sum": lambda name: sp.Symbol(name) + sp.Function(name)(x),
}

ACTIVE_TEX = re.compile(r"\\(href|class|style|cssId|url|unicode|require)(?![A-Za-z])")
MATHML_TAGS = {"math", "mrow", "mi", "mo", "mn", "msub", "msup", "msubsup", "mfrac", "msqrt", "mtable", "mtr",
               "mtd", "mfenced", "mtext", "mspace", "mstyle", "mover", "munder"}
NOTEBOOK_TAGS = MATHML_TAGS | {"div", "strong", "table", "tr", "th", "td"}
REPORT_TAGS = MATHML_TAGS | {"code"}
#: attributes that run code or load something
ACTIVE_ATTRIBUTE = re.compile(r"^(on.*|href|src|srcset|xlink:href|action|formaction|data)$", re.I)


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs


def _markup(page: str) -> _Markup:
    parser = _Markup()
    parser.feed(page)
    parser.close()
    return parser


def _assert_inert_html(page: str, allowed: set) -> None:
    parsed = _markup(page)
    assert set(parsed.tags) <= allowed, set(parsed.tags) - allowed
    for name, value in parsed.attributes:
        assert not ACTIVE_ATTRIBUTE.match(name), (name, value)
        assert "javascript" not in (value or "").lower() and "alert" not in (value or "")


def _unescaped_dollars(tex: str) -> int:
    return len(re.findall(r"\$", re.sub(r"\\.", "", tex)))


def _assert_inert_tex(tex: str) -> None:
    assert not ACTIVE_TEX.search(tex), tex
    assert _unescaped_dollars(tex) == 0, tex  # a '$' would end the math it sits in
    depth = 0
    for ch in re.sub(r"\\.", "", tex):  # escaped braces are text, the others must nest
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, tex
    assert depth == 0, tex


def _notebook_formula(markdown: str) -> str:
    row = next(line for line in markdown.splitlines() if line.startswith("| formula |"))
    cell = row[len("| formula | "):-len(" |")]
    assert cell.startswith("$") and cell.endswith("$") and len(cell) > 2, cell
    return cell[1:-1]


# (printer, how it is checked): each takes the formula and returns what it writes
PRINTERS = {
    "MathML": (to_mathml, lambda out: _assert_inert_html(out, MATHML_TAGS)),
    "LaTeX": (to_latex, _assert_inert_tex),
    "HTML report statement": (lambda e: str(html_report._statement(e)),
                              lambda out: _assert_inert_html(out, REPORT_TAGS)),
    "HTML report witness": (lambda e: str(html_report._witness([(e, sp.Integer(1))])),
                            lambda out: _assert_inert_html(out, REPORT_TAGS)),
    "TeX report statement": (tex_report._statement, _assert_inert_tex),
    "TeX report witness": (lambda e: tex_report._witness([(e, sp.Integer(1))]), _assert_inert_tex),
    "notebook HTML": (lambda e: prove_equal(e, e)._repr_html_(), lambda out: _assert_inert_html(out, NOTEBOOK_TAGS)),
    "notebook Markdown": (lambda e: _notebook_formula(prove_equal(e, e)._repr_markdown_()), _assert_inert_tex),
}


@pytest.mark.parametrize("printer", PRINTERS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_is_printed_as_text(printer, shape, name):
    write, check = PRINTERS[printer]
    check(write(SHAPES[shape](name)))


@pytest.mark.parametrize("name", ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>"])
def test_the_html_printers_show_the_name_itself(name):
    """Escaped, not dropped: the reader sees the name it was given."""
    for shape in ("symbol", "function"):
        page = to_mathml(SHAPES[shape](name))
        text = re.sub(r"<[^>]*>", "", page).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        assert name in text


def test_the_tex_printers_show_a_command_name_as_text():
    tex = to_latex(sp.Function(r"\href{javascript:alert(1)}{x}")(x))
    assert r"\backslash{}href\{javascript:alert(1)\}" in tex


def test_the_notebook_html_is_left_alone_by_mathjax():
    """Jupyter's MathJax reads $...$ in HTML outputs: the view is marked for it to skip."""
    page = prove_equal(sp.Symbol("$x$"), sp.Symbol("$x$"))._repr_html_()
    assert "mathjax_ignore" in page and "tex2jax_ignore" in page


@pytest.mark.parametrize("name", ["x", "theta", "omega_r", "x'", "model_id", "W_Q"])
def test_ordinary_names_print_as_before(name):
    """Only names holding TeX's own characters are set character by character."""
    tex = to_latex(sp.Symbol(name))
    assert r"\backslash" not in tex and r"\mathrm{\{" not in tex
