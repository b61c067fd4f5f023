"""The structure of every formula: what MathML Core lays out as the mathematics the PDF shows.

A browser draws whatever it is given, so a formula can be well-formed XML and still wrong on screen:
an ``<msup>`` with three children is drawn as a row (``cos2θ`` for cos²θ), a superscript on a lone
``)`` belongs to no group, and U+2061 has no width in Chromium (``sinasinb``).  The printers' expected
output is pinned in tables, as SymPy tests its printers, and :func:`formula_defects` checks every
formula of the report.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path

import pytest
import sympy as sp

from symproof import frequencies, rope_matrix
from symproof.report import build_document, render_html, to_latex, to_mathml
from symproof.report._prose import latex_to_mathml

REPO = Path(__file__).resolve().parents[2]

#: MathML Core's elements with a fixed number of children
ARITY = {"msub": 2, "msup": 2, "mfrac": 2, "mroot": 2, "munder": 2, "mover": 2, "msubsup": 3, "munderover": 3}
_SCRIPTS = ("msub", "msup", "msubsup")
FUNCTION_APPLICATION = "\u2061"
_CLOSING = set(")]}")
_OPENING = ("(", "[", "{", "|", "\u2016", "\u27e8")
_VOID = {"mspace", "none", "mprescripts"}


class _Formulas(HTMLParser):
    """The ``<math>`` elements of a page as trees of ``[tag, attributes, children, text]``, and where
    their tags do not nest."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.formulas, self.nesting, self._open = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag != "math" and not self._open:
            return
        node = [tag, dict(attrs), [], ""]
        (self._open[-1][2] if self._open else self.formulas).append(node)
        if tag not in _VOID:
            self._open.append(node)

    def handle_startendtag(self, tag, attrs):
        if tag == "math" or self._open:
            node = [tag, dict(attrs), [], ""]
            (self._open[-1][2] if self._open else self.formulas).append(node)

    def handle_endtag(self, tag):
        if not self._open or tag in _VOID:
            return
        if self._open[-1][0] != tag:
            self.nesting.append(f"</{tag}> closes <{self._open[-1][0]}> in formula {len(self.formulas)}")
            # an HTML parser closes the nearest element of that name: so does this one
            while self._open and self._open[-1][0] != tag:
                self._open.pop()
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self._open[-1][3] += data


def _text(node) -> str:
    return node[3] + "".join(_text(child) for child in node[2])


def _first_leaf(node):
    while node[2]:
        node = node[2][0]
    return node


def _defects_of(node, out: list, where: str) -> None:
    tag, attributes, children, _ = node
    shown = lambda n: f"<{n[0]}>{_text(n)}</{n[0]}>"  # noqa: E731
    if tag in ARITY and len(children) != ARITY[tag]:
        out.append(f"{where}: <{tag}> has {len(children)} children, not {ARITY[tag]}: {shown(node)}")
    if tag in ARITY and any(c[0] == "mo" and _text(c) == FUNCTION_APPLICATION for c in children):
        out.append(f"{where}: U+2061 is a child of <{tag}>: {shown(node)}")
    if tag in _SCRIPTS and children and not children[0][2] and children[0][0] in ("mo", "mtext") \
            and _text(children[0]).strip() and set(_text(children[0]).strip()) <= _CLOSING:
        out.append(f"{where}: <{tag}> on a lone {_text(children[0]).strip()!r}: {shown(node)}")
    if tag == "mi" and "," in _text(node).strip(","):
        out.append(f"{where}: a list of indices as one name: {shown(node)}")
    for k, child in enumerate(children):
        if child[0] == "mo" and _text(child) == FUNCTION_APPLICATION and "rspace" not in child[1] \
                and k + 1 < len(children) and children[k + 1][0] != "mspace":
            argument = _first_leaf(children[k + 1])
            if not _text(argument).startswith(_OPENING):
                out.append(f"{where}: no space between a function and its argument {_text(argument)!r}")
        _defects_of(child, out, where)


def formula_defects(page: str) -> list:
    """What is wrong with the formulas of an HTML page (or of a bare ``<math>`` element): tags that do
    not nest, a fixed-arity element with another number of children, a script on a lone closing
    parenthesis, U+2061 inside a script element, a list of indices set as one name, and a function name
    against an argument without parentheses with no space between them."""
    parser = _Formulas()
    parser.feed(page)
    parser.close()
    out = list(parser.nesting)
    if parser._open:
        out.append(f"<{parser._open[-1][0]}> is never closed")
    for k, formula in enumerate(parser.formulas):
        _defects_of(formula, out, f"formula {k} ({_text(formula)[:40]!r})")
    return out


# -- the validator finds what it is for ----------------------------------------------------------------------------

#: formulas as the page showed them before the printers were fixed (cut from reports/index.html), each with
#: the defect that must be reported
DEFECTIVE = [
    ("cos2θ: an exponent after U+2061 in the msup",
     "<math><msup><mi>cos</mi><mo>\u2061</mo><mn>2</mn></msup><mi>\u03b8</mi></math>", "children, not 2"),
    ("... and U+2061 is a child of the msup",
     "<math><msup><mi>sin</mi><mo>\u2061</mo><mn>2</mn></msup><mi>\u03b8</mi></math>", "U+2061 is a child"),
    ("a transpose on a lone parenthesis",
     "<math><mi>R</mi><mtext>(</mtext><mi>\u03b8</mi><msup><mtext>)</mtext><mi>T</mi></msup></math>", "lone ')'"),
    ("a transpose on the last parenthesis of a block diagonal",
     "<math><mi>R</mi><mo>(</mo><mi>i</mi><mo>)</mo><mo>)</mo><msup><mo>)</mo><mi>T</mi></msup></math>", "lone ')'"),
    ("an index on a lone parenthesis",
     "<math><mtext>(</mtext><msup><mi>P</mi><mi>T</mi></msup><mi>P</mi><msub><mtext>)</mtext>"
     "<mrow><mi>i</mi><mi>j</mi></mrow></msub></math>", "lone ')'"),
    ("p_{t,i} as a name with a comma", "<math><msub><mi>p</mi><mi>t,i</mi></msub></math>", "list of indices"),
    ("sinasinb", "<math><mi>sin</mi><mo>\u2061</mo><mi>a</mi><mi>sin</mi><mo>\u2061</mo><mi>b</mi></math>",
     "no space between a function"),
    ("tags that do not nest", "<math><mrow><msub><mi>p</mi><mi>t</mi></mrow></msub></math>", "closes"),
    ("an unclosed formula", "<math><mi>x</mi>", "never closed"),
]


@pytest.mark.parametrize("what, formula, defect", DEFECTIVE, ids=[c[0] for c in DEFECTIVE])
def test_the_validator_finds_each_defect(what, formula, defect):
    found = formula_defects(formula)
    assert any(defect in message for message in found), (what, found)


SOUND = [
    "<math><msup><mi>sin</mi><mn>2</mn></msup><mo rspace=\"0.1667em\">\u2061</mo><mi>\u03b8</mi></math>",
    "<math><mi>sin</mi><mo>\u2061</mo><mtext>(</mtext><mi>a</mi><mo>+</mo><mi>b</mi><mtext>)</mtext></math>",
    "<math><mi>sin</mi><mo>\u2061</mo><mspace width=\"0.1667em\"/><mi>a</mi></math>",
    "<math><mi>R</mi><msup><mrow><mo>(</mo><mi>\u03b8</mi><mo>)</mo></mrow><mi>T</mi></msup></math>",
    "<math><msub><mi>p</mi><mrow><mi>t</mi><mo>,</mo><mi>i</mi></mrow></msub></math>",
    "<math><msubsup><mi>R</mi><mi>i</mi><mo>\u2032</mo></msubsup><mfrac><mn>1</mn><mn>2</mn></mfrac></math>",
]


@pytest.mark.parametrize("formula", SOUND)
def test_the_validator_passes_sound_formulas(formula):
    assert formula_defects(formula) == []


# -- the printers, case by case --------------------------------------------------------------------------------------

a, b, t, i, m, theta = sp.symbols("a b t i m theta")
_p = sp.IndexedBase("p")
_P = sp.MatrixSymbol("P", 4, 4)
_SIN_A = "<mrow><mi>sin</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>a</mi></mrow>"

#: (what, expression, its MathML inside <math>; character references written as characters)
PRINTED = [
    ("sin a: a thin space after U+2061", sp.sin(a), _SIN_A),
    ("sin a sin b", sp.sin(a) * sp.sin(b),
     f"<mrow>{_SIN_A}<mo>\u2062</mo><mrow><mi>sin</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>b</mi></mrow></mrow>"),
    ("sin²θ: the exponent on the name, U+2061 after it", sp.sin(theta) ** 2,
     "<mrow><msup><mi>sin</mi><mn>2</mn></msup><mo rspace=\"0.1667em\">\u2061</mo><mi>\u03b8</mi></mrow>"),
    ("cos(a + b): no space before a parenthesis", sp.cos(a + b),
     "<mrow><mi>cos</mi><mo>\u2061</mo><mrow><mo stretchy=\"false\">(</mo><mrow><mi>a</mi><mo>+</mo><mi>b</mi>"
     "</mrow><mo stretchy=\"false\">)</mo></mrow></mrow>"),
    ("(sin t, cos t)", sp.Tuple(sp.sin(t), sp.cos(t)),
     "<mrow><mo stretchy=\"false\">(</mo><mrow><mi>sin</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>t</mi></mrow>"
     "<mo>,</mo><mrow><mi>cos</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>t</mi></mrow>"
     "<mo stretchy=\"false\">)</mo></mrow>"),
    ("p[t, i] is p_{t,i}", _p[t, i], "<msub><mi>p</mi><mrow><mi>t</mi><mo>,</mo><mi>i</mi></mrow></msub>"),
    ("a symbol p_t,i is p_{t,i}", sp.Symbol("p_t,i"),
     "<msub><mi>p</mi><mrow><mi>t</mi><mo>,</mo><mi>i</mi></mrow></msub>"),
    ("P[t, i] is P_{t,i}", _P[t, i], "<msub><mi>P</mi><mrow><mi>t</mi><mo>,</mo><mi>i</mi></mrow></msub>"),
    ("a transpose of a sum is on the whole group", sp.Transpose(_P + sp.Identity(4)),
     "<msup><mrow><mo stretchy=\"false\">(</mo><mrow><mi>\U0001d540</mi><mo>+</mo><mi>P</mi></mrow>"
     "<mo stretchy=\"false\">)</mo></mrow><mo>T</mo></msup>"),
]


def _inside(math: str) -> str:
    return html.unescape(math[math.index(">") + 1:math.rindex("</math>")])


@pytest.mark.parametrize("what, expr, expected", PRINTED, ids=[c[0] for c in PRINTED])
def test_printed_mathml(what, expr, expected):
    assert _inside(to_mathml(expr, display="inline")) == expected, what


_SPACED = "<mo rspace=\"0.1667em\">\u2061</mo>"
_TIGHT_PAREN = "<mo stretchy=\"false\">"

#: (hand-written LaTeX of a statement, its MathML inside <math>), as latex2mathml sets it and the report finishes it
STATEMENTS = [
    (r"\sin^2\theta + \cos^2\theta = 1",
     f"<mrow><msup><mi>sin</mi><mn>2</mn></msup>{_SPACED}<mi>\u03b8</mi><mo>+</mo><msup><mi>cos</mi><mn>2</mn></msup>"
     f"{_SPACED}<mi>\u03b8</mi><mo>=</mo><mn>1</mn></mrow>"),
    (r"\sin a \sin b", f"<mrow><mi>sin</mi>{_SPACED}<mi>a</mi><mi>sin</mi>{_SPACED}<mi>b</mi></mrow>"),
    (r"\sin(t\omega)",
     f"<mrow><mi>sin</mi><mo>\u2061</mo>{_TIGHT_PAREN}(</mo><mi>t</mi><mi>\u03c9</mi>{_TIGHT_PAREN})</mo></mrow>"),
    (r"\sin^{2}(x)",
     f"<mrow><msup><mi>sin</mi><mrow><mn>2</mn></mrow></msup><mo>\u2061</mo>{_TIGHT_PAREN}(</mo><mi>x</mi>"
     f"{_TIGHT_PAREN})</mo></mrow>"),
    (r"p_{t,i}", "<mrow><msub><mi>p</mi><mrow><mi>t</mi><mo>,</mo><mi>i</mi></mrow></msub></mrow>"),
    (r"R(\theta)^T R(\theta) = I",
     f"<mrow><mi>R</mi><msup><mrow>{_TIGHT_PAREN}(</mo><mi>\u03b8</mi>{_TIGHT_PAREN})</mo></mrow><mi>T</mi></msup>"
     f"<mi>R</mi>{_TIGHT_PAREN}(</mo><mi>\u03b8</mi>{_TIGHT_PAREN})</mo><mo>=</mo><mi>I</mi></mrow>"),
    (r"(P^T P)_{ij}",
     f"<mrow><msub><mrow>{_TIGHT_PAREN}(</mo><msup><mi>P</mi><mi>T</mi></msup><mi>P</mi>{_TIGHT_PAREN})</mo></mrow>"
     "<mrow><mi>i</mi><mi>j</mi></mrow></msub></mrow>"),
    (r"(R(a) q)^T k",
     f"<mrow><msup><mrow>{_TIGHT_PAREN}(</mo><mi>R</mi>{_TIGHT_PAREN}(</mo><mi>a</mi>{_TIGHT_PAREN})</mo><mi>q</mi>"
     f"{_TIGHT_PAREN})</mo></mrow><mi>T</mi></msup><mi>k</mi></mrow>"),
]


@pytest.mark.parametrize("latex, expected", STATEMENTS, ids=[c[0] for c in STATEMENTS])
def test_statement_mathml(latex, expected):
    assert _inside(latex_to_mathml(latex, display="inline")) == expected


_z = sp.symbols("z0:12")
#: display formulas wide enough to be broken into items, with a superscript after a split group
BROKEN = [
    ("a transposed block diagonal", sp.MatMul(sp.Transpose(rope_matrix(i, frequencies(8))),
                                               rope_matrix(m, frequencies(8))), "))^{T}"),
    ("a square root of a long sum", sp.sqrt(sum(z * sp.sin(z) for z in _z)), r")^{\frac{1}{2}}"),
]


@pytest.mark.parametrize("what, expr, latex", BROKEN, ids=[c[0] for c in BROKEN])
def test_a_superscript_after_a_split_group_stands_on_the_group(what, expr, latex):
    """The group's part on the last line is the base (TeX sets the same exponent on its ``)``)."""
    math = to_mathml(expr)
    assert 'class="b"' in math and latex in to_latex(expr)
    assert formula_defects(math) == []
    assert "<mo>)</mo></mrow><mi>T</mi></msup>" in math or '<mo stretchy="false">)</mo></mrow><mfrac>' in math


# -- every formula of the report ---------------------------------------------------------------------------------------

def test_every_formula_of_the_committed_report_is_sound():
    page = REPO / "reports" / "index.html"
    if not page.exists():
        pytest.skip("reports/ has not been generated in this checkout")
    text = page.read_text("utf-8")
    assert text.count("<math") > 500
    defects = formula_defects(text)
    assert defects == [], f"{len(defects)} defects, the first: " + "\n".join(defects[:10])


def test_every_formula_of_the_report_as_rendered_is_sound(full_chapter_results):
    text = render_html(build_document(full_chapter_results, title="t"))
    assert text.count("<math") > 500
    defects = formula_defects(text)
    assert defects == [], f"{len(defects)} defects, the first: " + "\n".join(defects[:10])


#: (statement LaTeX, the compacted MathML inside <math>): an upright word is one <mi>, and a script written on
#: the word (``\mathrm{softmax_{rows}}``, which the converter hangs on the last letter) stands on the whole word
COMPACTED_WORDS = [
    (r"\mathrm{softmax}(X)", "<mi>softmax</mi><mtext>(</mtext><mi>X</mi><mtext>)</mtext>"),
    (r"\mathrm{softmax_{rows}}(X)",
     "<msub><mi>softmax</mi><mi>rows</mi></msub><mtext>(</mtext><mi>X</mi><mtext>)</mtext>"),
    (r"\mathrm{ab}^{2} c_1", "<msup><mi>ab</mi><mn>2</mn></msup><msub><mi>c</mi><mn>1</mn></msub>"),
    (r"x_{rows}", "<msub><mi>x</mi><mrow><mi>r</mi><mi>o</mi><mi>w</mi><mi>s</mi></mrow></msub>"),
]


@pytest.mark.parametrize("latex, expected", COMPACTED_WORDS, ids=[c[0] for c in COMPACTED_WORDS])
def test_an_upright_word_is_one_mi_with_its_scripts(latex, expected):
    from symproof.report._html import compact_mathml

    compacted = compact_mathml(latex_to_mathml(latex, display="inline"))
    assert compacted.startswith("<math>") and compacted.endswith("</math>"), compacted
    assert compacted[len("<math>"):-len("</math>")] == expected
