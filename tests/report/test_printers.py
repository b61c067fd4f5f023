"""The report printers: compact block diagonals, visible elision, well-formed MathML."""

from __future__ import annotations

from xml.dom import minidom

import pytest
import sympy as sp
from sympy import ImmutableMatrix, cos, sin
from sympy.matrices.expressions import BlockDiagMatrix

from symproof import frequencies, rope_matrix, sin_shift_matrix, sinusoidal_vector
from symproof.report import to_latex, to_mathml
from symproof.report._formulas import latex_relation, mathml_relation
from symproof.report._printers import MAX_FORMULA_CHARS

i, j, m, x, th = sp.symbols("i j m x theta")
y = sp.symbols("a:l")


def _mathml_text(expr) -> str:
    """The characters a reader sees in the MathML (also checks that it is well-formed XML)."""
    dom = minidom.parseString(to_mathml(expr))
    out = []

    def walk(node):
        for child in node.childNodes:
            if child.nodeType == child.TEXT_NODE:
                out.append(child.data)
            walk(child)

    walk(dom)
    return "".join(out)


LATEX_CASES = [
    # (what, expression, must contain, must not contain)
    ("rotations print as R(angle)", rope_matrix(m, frequencies(4)),
     [r"\operatorname{blockdiag}", r"R\left(m\right)", r"R\left(\frac{m}{100}\right)"], [r"\cos"]),
    ("shifts print as A(angle)", sin_shift_matrix(m, frequencies(4)), [r"A\left(m\right)"], [r"R\left("]),
    ("a wide block diagonal keeps its first and last blocks", rope_matrix(m, frequencies(64)),
     [r"\ldots", r"R\left(m\right)", r"R\left(\frac{\sqrt[8]{10} m}{10000}\right)"], []),
    ("a block that is not a rotation prints its entries",
     BlockDiagMatrix(ImmutableMatrix([[cos(x), sin(x)], [sin(x), cos(x)]]), ImmutableMatrix([[1, 0], [0, 1]])),
     [r"\cos {x}", r"\sin {x}"], [r"R\left(", r"A\left("]),
    ("a product of transposed rotations", sp.MatMul(sp.Transpose(rope_matrix(i, frequencies(4))),
                                                    rope_matrix(j, frequencies(4))),
     [r")^{T} \symbreak \operatorname{blockdiag}"], []),  # a line may break between the factors
    ("a long sum keeps its ends around an ellipsis", sum((k - 4) * y[k] for k in range(12)),
     [r"\cdots", "- 4 a - 3 b - 2 c", "+ 6 k + 7 l"], ["f"]),
    ("a short sum is SymPy's", y[0] - y[1], ["a - b"], [r"\cdots"]),
    ("a tall vector keeps its corners and its size", sinusoidal_vector(m, frequencies(16)),
     [r"\vdots", r"_{16\times1}", r"\sin {m}", r"\sin{\left(\frac{\sqrt{10} m}{10} \right)}"], []),
    ("a huge expression is a labelled placeholder",
     sp.Matrix(2, 2, lambda r, c: sp.Mul(*[sp.sin(sp.Symbol(f"z{r}{c}{k}")) for k in range(300)])),
     ["2$\\times$2 matrix, elided", str(MAX_FORMULA_CHARS)], ["z_{"]),
    ("an elided sum is not a huge expression",
     sp.exp(sum(sp.Symbol(f"z{k}") ** 2 for k in range(400))), [r"\cdots"], ["elided"]),
]


@pytest.mark.parametrize("what, expr, present, absent", LATEX_CASES, ids=[c[0] for c in LATEX_CASES])
def test_latex(what, expr, present, absent):
    text = to_latex(expr)
    for piece in present:
        assert piece in text, f"{what}: {piece!r} missing from {text!r}"
    for piece in absent:
        assert piece not in text, f"{what}: {piece!r} should not be in {text!r}"


MATHML_CASES = [
    ("rotations", rope_matrix(m, frequencies(4)), ["blockdiag", "R(m)"], ["cos"]),
    ("wide block diagonal", rope_matrix(m, frequencies(64)), ["\u2026"], []),
    ("long sum", sum((k - 4) * y[k] for k in range(12)), ["\u22ef"], ["f"]),
    ("a huge expression is a labelled placeholder", sp.Mul(*[sp.sin(sp.Symbol(f"z{k}")) for k in range(300)]),
     ["\u27e8expression, elided"], ["z1"]),
    ("tall vector", sinusoidal_vector(m, frequencies(16)), ["\u22ee", "16\u00d71"], []),
    ("product of matrices uses invisible times, not an escaped entity",
     sp.MatMul(sp.Transpose(rope_matrix(i, frequencies(4))), rope_matrix(j, frequencies(4))),
     ["\u2062"], ["&InvisibleTimes;"]),
]


@pytest.mark.parametrize("what, expr, present, absent", MATHML_CASES, ids=[c[0] for c in MATHML_CASES])
def test_mathml(what, expr, present, absent):
    text = _mathml_text(expr)
    for piece in present:
        assert piece in text, f"{what}: {piece!r} missing from {text!r}"
    for piece in absent:
        assert piece not in text, f"{what}: {piece!r} should not be in {text!r}"


def test_mathml_is_a_math_element_with_namespace():
    text = to_mathml(th)
    assert text.startswith('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">')
    assert to_mathml(th, display="inline").count('display="inline"') == 1


def test_a_product_of_many_blocks_prints_without_multiplying_out():
    # SymPy's own MatMul printer asks for a sign, which multiplies 256 x 256 blocks out (minutes)
    big = rope_matrix(i, [sp.Symbol(f"w{k}") for k in range(256)])
    text = to_latex(sp.MatMul(sp.Transpose(big), big))
    assert text.count(r"\operatorname{blockdiag}") == 2


@pytest.mark.parametrize("printed", ["0.841471", "-0.989992", "1"])
def test_printed_digits_are_shown_as_written(printed):
    assert latex_relation(sp.sin(1), r"\approx", printed).endswith(printed)
    digits = printed.lstrip("-")  # as written, with a minus sign for the hyphen (MathML shows a hyphen as is)
    sign = "<mo>\u2212</mo>" if printed.startswith("-") else ""
    assert f"{sign}<mn>{digits}</mn>" in mathml_relation(sp.sin(1), "\u2248", printed)


# -- MathML typography ------------------------------------------------------------------------------------------------

_x, _y, _theta = sp.symbols("x y theta")

#: expression, MathML fragments that must appear, fragments that must not
MATHML_TYPOGRAPHY = (
    (-_x, ["<mo>\u2212</mo>"], ["<mo>-</mo>"]),
    (_x - _y, ["<mo>\u2212</mo>"], ["<mo>-</mo>"]),
    (-2 * _x * _y, ["<mo>\u2212</mo>"], ["<mo>-</mo>"]),
    (sp.Matrix([[-_x, 1]]), ["<mo>\u2212</mo>"], ["<mo>-</mo>"]),
    (sp.exp(_x), ["<mi>e</mi>"], ["\u2147", "&#x2147;"]),
    (sp.E, ["<mi>e</mi>"], ["\u2147", "&#x2147;"]),
    # sin theta without parentheses, as the statements write \sin\theta, and TeX's thin space after the name
    (sp.sin(_theta), ['<mi>sin</mi><mo rspace="0.1667em">\u2061</mo><mi>\u03b8</mi>'], ["<mo>(</mo>"]),
    # parentheses around content they cover at their base size do not stretch (Chromium widens a stretchy one)
    (sp.cos(_x - _y), ['<mi>cos</mi><mo>\u2061</mo><mrow><mo stretchy="false">(</mo>'], ["<mo>(</mo>"]),
    (_x * (_x + _y), ['<mo stretchy="false">(</mo>'], ["<mo>(</mo>"]),
    # ... and around taller content they do, as \left( does
    (_x * (_x + 1 / _y), ["<mo>(</mo>"], ['<mo stretchy="false">(</mo>']),
    (_x * (_x + _y ** 2), ["<mo>(</mo>"], ['<mo stretchy="false">(</mo>']),
    (sp.sin(_x) ** 2, ['<msup><mi>sin</mi><mn>2</mn></msup><mo rspace="0.1667em">\u2061</mo><mi>x</mi>'], ["<mo>(</mo>"]),
)


@pytest.mark.parametrize("expr, present, absent", MATHML_TYPOGRAPHY, ids=[str(c[0]) for c in MATHML_TYPOGRAPHY])
def test_mathml_typography(expr, present, absent):
    import html

    text = html.unescape(to_mathml(expr))
    for fragment in present:
        assert fragment in text
    for fragment in absent:
        assert fragment not in text


# -- line breaking ------------------------------------------------------------------------------------------------------

from symproof.report._latex import _statement  # noqa: E402
from symproof.report._breaking import LINE_EM, width_em
from symproof.report._prose import latex_pieces, latex_to_mathml, split_latex# noqa: E402

_z = sp.symbols("z0:8")
_k0, _k1, _q0, _q1, _w = sp.symbols("k0 k1 q0 q1 omega")
_LONG_SUM = sum(sp.sin((n + 1) * _w) * _z[n] for n in range(8))
_PRODUCT_OF_SUMS = (_k0 * sp.sin(_w * i) + _k1 * sp.cos(_w * i) + _z[0] * _z[1] * _z[2]) * (
    _q0 * sp.sin(_w * j) + _q1 * sp.cos(_w * j) + _z[3] * _z[4] * _z[5])


def _mathml_items(mathml: str) -> list:
    """The items of a breakable ``<math class="b">`` (each one's text), or ``[]`` for an unbroken formula."""
    root = minidom.parseString(mathml).documentElement
    if root.getAttribute("class") != "b":
        return []
    return ["".join(t.data for t in _texts(item)) for item in root.childNodes]


def _texts(node):
    for child in node.childNodes:
        if child.nodeType == child.TEXT_NODE:
            yield child
        yield from _texts(child)


def _leading_operator(text: str) -> str:
    """``+`` or ``-`` if a piece (of MathML text or TeX) starts with a binary operator, else ``""``."""
    text = text.lstrip()
    return {"+": "+", "-": "-", "\u2212": "-"}.get(text[:1], "")


BREAK_CASES = [
    # (what, expression, at least this many items)
    ("a long sum breaks before its terms", _LONG_SUM, 3),
    ("a product of two long sums breaks inside their parentheses", _PRODUCT_OF_SUMS, 3),
    ("a wide block diagonal breaks after its commas", rope_matrix(m, frequencies(16)), 3),
    ("a square root of a long sum breaks as (...)^(1/2)", sp.sqrt(_LONG_SUM), 3),
]


@pytest.mark.parametrize("what, expr, at_least", BREAK_CASES, ids=[c[0] for c in BREAK_CASES])
def test_a_long_display_formula_breaks_into_items_at_the_same_places_in_both_formats(what, expr, at_least):
    assert width_em(expr) > LINE_EM
    items = _mathml_items(to_mathml(expr))
    tex_pieces = to_latex(expr).split(r"\symbreak")
    assert len(items) >= at_least, what
    assert len(tex_pieces) == len(items), what
    # the same break before the same operator, and the same characters in each piece (TeX spells them out)
    assert [_leading_operator(t) for t in items] == [_leading_operator(t) for t in tex_pieces], what
    assert all(item.strip() for item in items) and all(piece.strip() for piece in tex_pieces)
    # the inline form of the same formula (prose, witnesses) is never broken
    assert 'class="b"' not in to_mathml(expr, display="inline")


NO_BREAK_CASES = [
    ("a short sum", _z[0] + _z[1] - _z[2]),
    ("a short product", _k0 * sp.sin(_w)),
    ("a long quotient (a fraction bar cannot break)", _LONG_SUM / (1 + _z[7])),
    ("a matrix", sp.Matrix([[_LONG_SUM, 0], [0, 1]])),
    ("a short square root keeps its radical sign", sp.sqrt(_z[0]**2 + _z[1]**2)),
]


@pytest.mark.parametrize("what, expr", NO_BREAK_CASES, ids=[c[0] for c in NO_BREAK_CASES])
def test_a_formula_that_fits_or_cannot_break_is_one_row(what, expr):
    assert _mathml_items(to_mathml(expr)) == [], what
    assert r"\symbreak" not in to_latex(expr), what


def test_a_long_relation_ends_an_item_with_its_relation():
    items = _mathml_items(mathml_relation(_LONG_SUM, "=", _PRODUCT_OF_SUMS))
    tex = latex_relation(_LONG_SUM, "=", _PRODUCT_OF_SUMS).split(r"\symbreak")
    assert len(items) == len(tex) > 2
    ends = [k for k, item in enumerate(items) if item.rstrip().endswith("=")]
    assert len(ends) == 1 and tex[ends[0]].rstrip().endswith("=")
    # a short relation stays one row
    assert _mathml_items(mathml_relation(_z[0], "=", _z[1])) == []
    assert r"\symbreak" not in latex_relation(_z[0], "=", _z[1])


STATEMENTS = [
    # (statement, pieces it must split into (at least), a piece that must stay whole)
    (r"(x_i+p_i)^T A(x_j+p_j) = x_i^TAx_j + x_i^TAp_j + p_i^TAx_j + p_i^TAp_j", 4, r"(x_i+p_i)^T A(x_j+p_j)"),
    (r"g(PX)=g(X) \text{ for } g(X)=1^TX;\ F(PX)=PF(X) \text{ for } F(X)=XW", 4, r"\text{ for }"),
    (r"\sin((t+D)w)=\sin(tw)\cos(Dw)+\cos(tw)\sin(Dw)", 3, r"\sin((t+D)w)"),
    (r"\frac{ds}{d\omega} = D\left(-(q_0k_0 + q_1k_1)\sin(D\omega) + (q_1k_0 - q_0k_1)\cos(D\omega)\right)", 3,
     r"(q_0k_0 + q_1k_1)"),
]


@pytest.mark.parametrize("latex, at_least, whole", STATEMENTS, ids=[s[0][:30] for s in STATEMENTS])
def test_a_long_statement_breaks_at_its_top_level_alike_in_html_and_tex(latex, at_least, whole):
    assert "".join(split_latex(latex)) == latex  # pieces, not a rewrite
    pieces = latex_pieces(latex)
    assert len(pieces) >= at_least
    assert any(whole in piece for piece in pieces)  # never split inside parentheses, braces or \text
    assert len(_mathml_items(latex_to_mathml(latex))) == len(pieces)
    assert _statement(latex).split(r" \symbreak ") == pieces  # the PDF may break at the same places


def test_a_short_statement_is_one_row():
    assert 'class="b"' not in latex_to_mathml(r"P^T P = I")
    assert r"\symbreak" not in to_latex(_z[0])
