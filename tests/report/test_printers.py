"""The report printers: compact block diagonals, visible elision, well-formed MathML."""

from __future__ import annotations

from xml.dom import minidom

import pytest
import sympy as sp
from sympy import ImmutableMatrix, cos, sin
from sympy.matrices.expressions import BlockDiagMatrix

from symproof import frequencies, rope_matrix, sin_shift_matrix, sinusoidal_vector
from symproof.report import to_latex, to_mathml
from symproof.report._printers import MAX_FORMULA_CHARS, latex_relation, mathml_relation

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
     [r"\right)^{T} \symbreak \operatorname{blockdiag}"], []),  # a line may break between the factors
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
    assert f"<mn>{printed}</mn>" in mathml_relation(sp.sin(1), "\u2248", printed)


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
    # sin theta tight and without parentheses, as the statements write \sin\theta
    (sp.sin(_theta), ["<mi>sin</mi><mo>\u2061</mo><mi>\u03b8</mi>"], ["<mo>(</mo>"]),
    (sp.cos(_x - _y), ["<mi>cos</mi><mo>\u2061</mo><mrow><mo>(</mo>"], []),
    (sp.sin(_x) ** 2, ["<msup><mi>sin</mi><mn>2</mn></msup><mo>\u2061</mo><mi>x</mi>"], ["<mo>(</mo>"]),
)


@pytest.mark.parametrize("expr, present, absent", MATHML_TYPOGRAPHY, ids=[str(c[0]) for c in MATHML_TYPOGRAPHY])
def test_mathml_typography(expr, present, absent):
    import html

    text = html.unescape(to_mathml(expr))
    for fragment in present:
        assert fragment in text
    for fragment in absent:
        assert fragment not in text
