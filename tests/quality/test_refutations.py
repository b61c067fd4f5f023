"""Known-false identities: each must be REFUTED with the expected simplest witness.

The expected witness is the first point, in the search's order of simplicity
(0, 1, -1, 2, -2, 1/2, ... for reals; 0, 1, -1, 2, ... for integers), that
respects the symbols' assumptions, lies in the domain of both sides and makes
them differ.  Each row was worked out by hand from that order; a prover that
returns another point is either less simple or wrong.

``test_every_witness_is_admissible_and_certified`` re-checks the whole table
independently of the prover's own certification: assumptions by SymPy's
``is_<assumption>`` queries, the difference by exact rational arithmetic or by
evaluation at two precisions.
"""

import pytest
import sympy as sp
from sympy import Abs, MatMul, Rational, Sum, Transpose, cos, pi, sin, sqrt

from symproof import prove_equal, rope_matrix, rotation, sin_shift, sin_shift_matrix, sinusoidal_vector

x, y, a, b, th, w, t = sp.symbols("x y a b theta w t", real=True)
n, i, j = sp.symbols("n i j", integer=True)
k = sp.Symbol("k", even=True)
p = sp.Symbol("p", positive=True)
q = sp.Symbol("q", negative=True)
m = sp.Symbol("m", integer=True, positive=True)
r = sp.Symbol("r", integer=True, nonnegative=True)
w0, w1 = sp.symbols("w0 w1", positive=True)
omega = 10000 ** (-2 * r / (2 * m))


def _norm_squared(vector):
    return sum(e**2 for e in vector)


A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)


def _zero(matrix):
    return {matrix[r, c]: 0 for r in range(matrix.rows) for c in range(matrix.cols)}


FALSE = [
    # -- assumption-dependent: true for one kind of symbol, false for another
    pytest.param(sin(pi * x), 0, {x: Rational(1, 2)}, id="sin(pi x)=0 for real x"),
    pytest.param(sqrt(x**2), x, {x: -1}, id="sqrt(x^2)=x for real x"),
    pytest.param(Abs(sin(x)), sin(x), {x: -1}, id="|sin x|=sin x"),
    pytest.param(Abs(q), q, {q: -1}, id="|q|=q for negative q"),
    pytest.param(cos(pi * n), 1, {n: 1}, id="cos(pi n)=1 for integer n"),
    pytest.param(cos(pi * k / 2), 1, {k: 2}, id="cos(pi k/2)=1 for even k"),
    pytest.param(sp.log(p), p - 1, {p: 2}, id="log p = p-1 for positive p"),
    pytest.param((-1) ** (2 * x), 1, {x: Rational(1, 2)}, id="(-1)^(2x)=1 for real x"),
    pytest.param(sp.floor(x), x, {x: Rational(1, 2)}, id="floor x = x for real x"),
    pytest.param(sp.Max(x, 0), x, {x: -1}, id="max(x,0)=x"),
    pytest.param(sp.log(x * y), sp.log(x) + sp.log(y), {x: -1, y: -1}, id="log(xy)=log x+log y for real x,y"),
    pytest.param(sqrt(1 - sin(x) ** 2), cos(x), {x: 2}, id="sqrt(1-sin^2 x)=cos x (cos 2 < 0)"),
    pytest.param(sin(x) ** 2 + cos(y) ** 2, 1, {x: 1, y: 0}, id="sin^2 x+cos^2 y=1 (different atoms)"),
    pytest.param(cos(x) ** 2, cos(x**2), {x: 1}, id="cos^2 x=cos(x^2)"),
    # -- tiny offsets: the difference is far below float resolution
    pytest.param(sin(x) ** 2 + cos(x) ** 2 + Rational(1, 10**30), 1, {x: 0}, id="sin^2+cos^2+1e-30=1"),
    pytest.param(cos(x) ** 2, 1 - sin(x) ** 2 + x / 10**40, {x: 1}, id="cos^2=1-sin^2+x/1e40"),
    # -- wrong signs, wrong multiples, wrong half angles
    pytest.param(cos(2 * x), cos(x) ** 2 + sin(x) ** 2, {x: 1}, id="cos2x=cos^2+sin^2"),
    pytest.param(sin(2 * x), 2 * sin(x), {x: 1}, id="sin2x=2sin x"),
    pytest.param(cos(3 * x), 4 * cos(x) ** 3 + 3 * cos(x), {x: 0}, id="cos3x wrong sign"),
    pytest.param(cos(x) ** 4 - sin(x) ** 4, cos(x) ** 2, {x: 1}, id="cos^4-sin^4=cos^2"),
    pytest.param(cos(x / 2) ** 2, (1 - cos(x)) / 2, {x: 0}, id="half angle wrong sign"),
    pytest.param(sin(x + pi), sin(x), {x: 1}, id="sin(x+pi)=sin x"),
    pytest.param(sin(x + pi / 3), sin(x) / 2 - sqrt(3) / 2 * cos(x), {x: 0}, id="sin(x+pi/3) wrong sign"),
    pytest.param(sp.Float(0.1) * x, x / 10, {x: 1}, id="0.1 is not 1/10 in binary"),
    pytest.param(cos(65 * x), cos(x), {x: 1}, id="cos65x=cos x (beyond the Chebyshev bound)"),
    pytest.param(cos(sin(x)), cos(x), {x: 1}, id="cos(sin x)=cos x (nested)"),
    # -- differences of atoms and swapped arguments
    pytest.param(cos((i - j) * w), cos(i * w) * cos(j * w) - sin(i * w) * sin(j * w), {i: 1, j: 1, w: 1},
                 id="cos((i-j)w) with the sum formula"),
    pytest.param(sin(x - y), sin(y - x), {x: 1, y: 0}, id="sin(x-y)=sin(y-x)"),
    pytest.param(sp.exp(x * y), sp.exp(x) * sp.exp(y), {x: 1, y: 0}, id="exp(xy)=exp x exp y"),
    pytest.param((x + y) ** 2, x**2 + y**2, {x: 1, y: 1}, id="(x+y)^2=x^2+y^2"),
    # -- the simplest candidates are outside the domain and must be skipped
    pytest.param(sin(x) / x, 1, {x: 1}, id="sin x/x=1 (x=0 undefined)"),
    pytest.param(1 / (x**2 - x), 1 / x, {x: -1}, id="1/(x^2-x)=1/x (x=0,1 undefined)"),
    pytest.param(1 / x**2, 1 / x, {x: -1}, id="1/x^2=1/x (x=0 undefined)"),
    # -- rotation matrices
    pytest.param(rotation(a).T * rotation(b), rotation(a - b), {a: 1, b: 0}, id="R(a)^T R(b)=R(a-b)"),
    pytest.param(rotation(th).T * rotation(th), -sp.eye(2), {th: 0}, id="R^T R=-I"),
    pytest.param(rotation(a) * rotation(b), rotation(a - b), {a: 1, b: 1}, id="R(a)R(b)=R(a-b)"),
    pytest.param(rotation(th).det(), cos(2 * th), {th: 1}, id="det R=cos 2th"),
    pytest.param(sin_shift(a) * sin_shift(b), sin_shift(a - b), {a: 1, b: 1}, id="A(a)A(b)=A(a-b)"),
    # -- matrices with symbolic entries: a witness binds the entries (matrix units come out)
    pytest.param((A * B).T, A.T * B.T, {**_zero(A), **_zero(B), A[0, 1]: 1, B[1, 0]: 1}, id="(AB)^T=A^T B^T"),
    pytest.param(A.T * A, A * A.T, {**_zero(A), A[0, 1]: 1}, id="A^T A=A A^T"),
    pytest.param(A * B, B * A, {**_zero(A), **_zero(B), A[0, 1]: 1, B[1, 0]: 1}, id="AB=BA"),
    # -- block-diagonal products, built unevaluated
    pytest.param(MatMul(Transpose(rope_matrix(i, [w0, w1])), rope_matrix(j, [w0, w1])),
                 rope_matrix(i - j, [w0, w1]), {i: 1, j: 0, w0: 1, w1: 1}, id="R_i^T R_j=R_(i-j)"),
    pytest.param(MatMul(Transpose(rope_matrix(i, [w0, w1])), rope_matrix(i, [w1, w0])),
                 sp.eye(4), {i: 1, w0: 2, w1: 1}, id="R_i(w0,w1)^T R_i(w1,w0)=I"),
    pytest.param(MatMul(sin_shift_matrix(a, [w0, w1]), sin_shift_matrix(b, [w0, w1])),
                 sin_shift_matrix(a - b, [w0, w1]), {a: 1, b: 1, w0: 1, w1: 1}, id="A_a A_b=A_(a-b)"),
    pytest.param(MatMul(sin_shift_matrix(a, [w0, w1]), sinusoidal_vector(t, [w0, w1])),
                 sinusoidal_vector(t - a, [w0, w1]), {a: 1, t: 0, w0: 1, w1: 1}, id="A_a p_t=p_(t-a)"),
    # -- sums over a symbolic range
    pytest.param(Sum(sin(r * w) ** 2 + cos(r * w) ** 2, (r, 0, m - 1)), m + 1, {m: 1, w: 0},
                 id="sum of 1 over m terms = m+1"),
    pytest.param(Sum(r, (r, 0, m - 1)), m**2 / 2, {m: 1}, id="0+..+(m-1)=m^2/2"),
    pytest.param(Sum(cos(r * x), (r, 0, m - 1)), m, {m: 2, x: 1}, id="sum cos(rx)=m"),
    pytest.param(Sum(cos(r * x), (r, 0, m - 1)), Sum(sin(r * x), (r, 0, m - 1)), {m: 1, x: 0},
                 id="same range, different summands"),
    pytest.param(Sum(sin(t * omega) ** 2 + cos(t * omega) ** 2, (r, 0, m - 1)), 2 * m, {m: 1, t: 0},
                 id="||p_t||^2=d for d=2m"),
    pytest.param(_norm_squared(sinusoidal_vector(t, [w0, w1])), 4, {t: 0, w0: 1, w1: 1},
                 id="||p_t||^2=d at d=4"),
]


@pytest.mark.parametrize("lhs, rhs, witness", FALSE)
def test_false_identity_is_refuted_with_the_simplest_witness(lhs, rhs, witness):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "refuted", str(verdict)
    assert verdict.witness == witness


@pytest.mark.parametrize("lhs, rhs, witness", FALSE)
def test_every_witness_is_admissible_and_certified(lhs, rhs, witness):
    verdict = prove_equal(lhs, rhs)
    assert verdict.refuted, str(verdict)
    free = _free_symbols(lhs) | _free_symbols(rhs)
    assert set(verdict.witness) == free, "the witness must bind every free symbol"
    for symbol, value in verdict.witness.items():
        assert _respects_assumptions(symbol, value), f"{symbol} = {value} breaks {symbol.assumptions0}"
    left, right = _at(lhs, verdict.witness), _at(rhs, verdict.witness)
    assert not _undefined(left) and not _undefined(right)
    differences = list(left - right) if isinstance(left, sp.MatrixBase) else [left - right]
    assert any(_certainly_nonzero(d) for d in differences)
    if not isinstance(left, sp.MatrixBase):
        assert _certainly_nonzero(verdict.residual)


def _free_symbols(expr):
    """Free symbols, a matrix symbol standing for its entries."""
    free = sp.sympify(expr).free_symbols if not isinstance(expr, sp.MatrixBase) else expr.free_symbols
    out = set()
    for symbol in free:
        if isinstance(symbol, sp.MatrixSymbol):
            out |= set(_zero(symbol))
        else:
            out.add(symbol)
    return out


def _respects_assumptions(symbol, value):
    return all(
        getattr(value, f"is_{key}") is wanted
        for key, wanted in symbol.assumptions0.items()
        if key != "commutative"
    )


def _at(expr, point):
    # the prover reads a float as the exact binary rational it stores; so does this check
    expr = sp.sympify(expr)
    expr = expr.xreplace({f: sp.Rational(f) for f in expr.atoms(sp.Float)})
    if isinstance(expr, sp.matrices.MatrixExpr):
        # explicit entries first: a matrix symbol's entries A[0, 1] are what the witness binds
        expr = sp.Matrix(sp.block_collapse(expr))
    value = expr.xreplace(point)
    if isinstance(value, sp.MatrixBase):
        return value.applyfunc(lambda e: e.doit())
    return value.doit()


def _undefined(value):
    entries = list(value) if isinstance(value, sp.MatrixBase) else [value]
    return any(e.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for e in entries)


def _certainly_nonzero(difference):
    """Independent of the prover: exact for rationals, else two precisions that agree."""
    if difference.is_Rational:
        return difference != 0
    coarse, fine = difference.evalf(50), difference.evalf(100)
    size = abs(fine)
    return size != 0 and abs(coarse - fine) < size / 10**6


def test_the_false_table_is_large_enough():
    scalar = [c for c in FALSE if not isinstance(c.values[0], (sp.MatrixBase, sp.matrices.MatrixExpr))]
    assert len(FALSE) >= 25 and len(scalar) >= 20


def test_the_witness_against_abs_sin_lies_where_the_sine_is_negative():
    verdict = prove_equal(Abs(sin(x)), sin(x))
    assert sin(verdict.witness[x]).is_negative


def test_the_witness_against_sqrt_of_a_square_is_negative():
    verdict = prove_equal(sqrt(x**2), x)
    assert verdict.witness[x].is_negative
