"""Known-true identities: each must be PROVED, by the tactic that should decide it.

The method is asserted too: an identity of the decidable class proved by the
witness search or by luck of SymPy's automatic simplification would hide a
regression of the tactic that is meant to carry it.
"""

import pytest
import sympy as sp
from sympy import MatMul, Rational, Sum, Transpose, cos, pi, sin, sqrt

from symproof import (
    frequencies, prove_equal, rope_matrix, rotation, sin_shift, sin_shift_matrix, sinusoidal_vector,
)

x, y, a, b, th, w, t, u, v = sp.symbols("x y a b theta w t u v", real=True)
n, i, j = sp.symbols("n i j", integer=True)
p = sp.Symbol("p", positive=True)
m = sp.Symbol("m", integer=True, positive=True)
r = sp.Symbol("r", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
k1 = sp.Symbol("k1", integer=True, positive=True)
z = sp.Symbol("z")
ws = sp.symbols("w0:4", positive=True)
omega = 10000 ** (-2 * r / (2 * m))
BETA, S, E = sp.symbols("beta s e", positive=True)

TRIG = "trig-polynomial"
STRUCTURAL = "structural"
SUMS = "summand-first"
BLOCKS = "blockwise"

TRUE = [
    # -- assumption-dependent: SymPy's own evaluation already knows these
    pytest.param(sin(pi * n), 0, STRUCTURAL, id="sin(pi n)=0 for integer n"),
    pytest.param(sqrt(p**2), p, STRUCTURAL, id="sqrt(p^2)=p for positive p"),
    pytest.param(cos(pi * n), (-1) ** n, STRUCTURAL, id="cos(pi n)=(-1)^n"),
    pytest.param(cos(2 * pi * n + x), cos(x), STRUCTURAL, id="cos(x+2 pi n)=cos x"),
    # -- identities that need cos^2 + sin^2 = 1
    pytest.param(sin(x) ** 2 + cos(x) ** 2, 1, TRIG, id="sin^2+cos^2=1"),
    pytest.param(cos(x) ** 4 - sin(x) ** 4, cos(2 * x), TRIG, id="cos^4-sin^4=cos2x"),
    pytest.param(cos(x) ** 6 + sin(x) ** 6, 1 - 3 * sin(x) ** 2 * cos(x) ** 2, TRIG, id="cos^6+sin^6"),
    pytest.param((sin(x) + cos(x)) ** 2, 1 + sin(2 * x), TRIG, id="(sin+cos)^2=1+sin2x"),
    pytest.param(cos(x + y) * cos(x - y), cos(x) ** 2 - sin(y) ** 2, TRIG, id="cos(x+y)cos(x-y)"),
    # -- multiples and half angles
    pytest.param(cos(3 * x), 4 * cos(x) ** 3 - 3 * cos(x), TRIG, id="cos3x"),
    pytest.param(sin(3 * x), 3 * sin(x) - 4 * sin(x) ** 3, TRIG, id="sin3x"),
    pytest.param(2 * sin(x) * cos(x), sin(2 * x), TRIG, id="2 sin cos = sin2x"),
    pytest.param(cos(x / 2) ** 2, (1 + cos(x)) / 2, TRIG, id="cos^2(x/2)"),
    pytest.param(sin(x / 2) ** 2, (1 - cos(x)) / 2, TRIG, id="sin^2(x/2)"),
    pytest.param(cos(70 * x), cos(35 * x) ** 2 - sin(35 * x) ** 2, TRIG, id="cos70x from cos35x"),
    pytest.param(cos(65 * x) ** 2 + sin(65 * x) ** 2 + cos(x), 1 + cos(x), TRIG,
                 id="a multiple beyond the Chebyshev bound is its own atom"),
    pytest.param(cos(sin(x)) ** 2 + sin(sin(x)) ** 2, 1, TRIG, id="nested argument is an atom"),
    pytest.param(sp.tan(2 * x), 2 * sp.tan(x) / (1 - sp.tan(x) ** 2), TRIG, id="tan2x"),
    pytest.param(sin(x + pi / 3), sin(x) / 2 + sqrt(3) / 2 * cos(x), TRIG, id="sin(x+pi/3)"),
    # -- differences of atoms
    pytest.param(cos((i - j) * w), cos(i * w) * cos(j * w) + sin(i * w) * sin(j * w), TRIG, id="cos((i-j)w)"),
    pytest.param(sin((i - j) * w), sin(i * w) * cos(j * w) - cos(i * w) * sin(j * w), TRIG, id="sin((i-j)w)"),
    pytest.param(cos(u - v) - cos(u + v), 2 * sin(u) * sin(v), TRIG, id="cos(u-v)-cos(u+v)"),
    # -- rational functions: equal wherever both sides are defined
    pytest.param(sin(x) ** 2 / (1 - cos(x) ** 2), 1, TRIG, id="sin^2/(1-cos^2)=1"),
    pytest.param((x**2 - 1) / (x - 1), x + 1, TRIG, id="(x^2-1)/(x-1)=x+1"),
    pytest.param(sp.exp(x + y), sp.exp(x) * sp.exp(y), TRIG, id="exp(x+y)"),
    pytest.param(sp.exp(cos(x) ** 2), sp.exp(1 - sin(x) ** 2), TRIG, id="inside another function"),
    pytest.param(cos(z) ** 2, 1 - sin(z) ** 2, TRIG, id="complex argument"),
    pytest.param(sp.Float(0.5) * x, x / 2, STRUCTURAL, id="a binary float is read exactly"),
    # -- complex exponentials of linear arguments (RoPE in complex form, as Meta writes it)
    pytest.param(sp.exp(sp.I * a) * sp.exp(-sp.I * b), cos(a - b) + sp.I * sin(a - b), TRIG,
                 id="exp(ia)exp(-ib)=cos(a-b)+i sin(a-b)"),
    pytest.param(sp.exp(sp.I * i * w) * sp.exp(-sp.I * j * w), cos((i - j) * w) + sp.I * sin((i - j) * w), TRIG,
                 id="complex RoPE score phase"),
    pytest.param(sp.exp(sp.I * x) ** 3, cos(3 * x) + sp.I * sin(3 * x), TRIG, id="de Moivre"),
    pytest.param((sp.exp(sp.I * x) + sp.exp(-sp.I * x)) / 2, cos(x), TRIG, id="cos as exponentials"),
    # -- powers of positive symbols with real exponents (the NTK-aware base)
    pytest.param((BETA * S ** ((E + 2) / E)) ** (-E / (E + 2)), BETA ** (-E / (E + 2)) / S, "power",
                 id="(beta s^((e+2)/e))^(-e/(e+2))=beta^(-e/(e+2))/s"),
    pytest.param((BETA * S ** ((E + 2) / E)) ** (-2 * r / (E + 2)), BETA ** (-2 * r / (E + 2)) * S ** (-2 * r / E),
                 "power", id="NTK base^(-2r/d)"),
    pytest.param((BETA * S) ** E, BETA**E * S**E, "power", id="a power of a product"),
    # -- rotation matrices (entry by entry)
    pytest.param(rotation(a).T * rotation(b), rotation(b - a), "entrywise", id="R(a)^T R(b)=R(b-a)"),
    pytest.param(rotation(th).T * rotation(th), sp.eye(2), "entrywise", id="R^T R=I"),
    pytest.param(rotation(a) * rotation(b), rotation(a + b), "entrywise", id="R(a)R(b)=R(a+b)"),
    pytest.param(rotation(th).det(), 1, TRIG, id="det R=1"),
    pytest.param(sin_shift(x), rotation(x).T, STRUCTURAL, id="A(x)=R(x)^T"),
    # -- block-diagonal products, built unevaluated: one generic block
    pytest.param(MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws)), rope_matrix(j - i, ws), BLOCKS,
                 id="R_i^T R_j=R_(j-i) symbolic frequencies"),
    pytest.param(MatMul(Transpose(rope_matrix(i, frequencies(8))), rope_matrix(j, frequencies(8))),
                 rope_matrix(j - i, frequencies(8)), BLOCKS, id="R_i^T R_j=R_(j-i) at d=8"),
    pytest.param(MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(i, ws)), sp.eye(8), BLOCKS,
                 id="R_i^T R_i=I against an explicit identity"),
    pytest.param(MatMul(sin_shift_matrix(a, ws), sin_shift_matrix(b, ws)), sin_shift_matrix(a + b, ws), BLOCKS,
                 id="A_a A_b=A_(a+b)"),
    pytest.param(MatMul(sin_shift_matrix(a, ws[:2]), sinusoidal_vector(t, ws[:2])),
                 sinusoidal_vector(t + a, ws[:2]), "entrywise", id="A_a p_t=p_(t+a)"),
    # -- sums over a symbolic range
    pytest.param(Sum(sin(r * w) ** 2 + cos(r * w) ** 2, (r, 0, m - 1)), m, SUMS, id="sum of sin^2+cos^2"),
    pytest.param(Sum(sin(t * omega) ** 2 + cos(t * omega) ** 2, (r, 0, m - 1)), m, SUMS,
                 id="||p_t||^2=d/2 for d=2m"),
    pytest.param(Sum(r, (r, 0, m - 1)), m * (m - 1) / 2, SUMS, id="0+..+(m-1)"),
    pytest.param(Sum(cos(r * x) ** 2 - sin(r * x) ** 2 - cos(2 * r * x), (r, 0, m - 1)), 0, SUMS,
                 id="sum of a zero summand"),
    pytest.param(Sum(Rational(1, 2) ** r, (r, 0, m - 1)), 2 - 2 * Rational(1, 2) ** m, SUMS, id="geometric"),
    pytest.param(Sum(1 / (k1 * (k1 + 1)), (k1, 1, m)), 1 - 1 / (m + 1), SUMS, id="telescoping"),
    pytest.param(Sum(sin(i * omega) * sin(j * omega) + cos(i * omega) * cos(j * omega), (r, 0, m - 1)),
                 Sum(cos((j - i) * omega), (r, 0, m - 1)), SUMS, id="same range: p_i.p_j compared summand by summand"),
    pytest.param(Sum(cos((i - j) * w * r), (r, 0, m - 1)), Sum(cos((j - i) * w * k), (k, 0, m - 1)), SUMS,
                 id="same range, renamed index"),
    pytest.param(Sum(r, (r, 0, m - 1)), Sum(m - 1 - r, (r, 0, m - 1)), SUMS,
                 id="reindexed: summands differ, the sums do not"),
]


@pytest.mark.parametrize("lhs, rhs, method", TRUE)
def test_true_identity_is_proved_by_the_expected_tactic(lhs, rhs, method):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "proved", str(verdict)
    assert verdict.method.startswith(method), verdict.method
    assert verdict.witness is None


@pytest.mark.parametrize("lhs, rhs, method", TRUE)
def test_a_true_identity_stays_proved_with_the_sides_swapped(lhs, rhs, method):
    assert prove_equal(rhs, lhs).proved


def test_the_true_table_is_large_enough():
    assert len(TRUE) >= 25
