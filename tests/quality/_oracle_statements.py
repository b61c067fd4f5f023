"""Random statements for the adversary suite, from a grammar wider than the engine's fragment.

Each statement is ``(lhs, rhs, kind, note)`` where ``kind`` is what holds by
construction -- never by asking SymPy or the engine:

* ``"true"``  -- equal at every point where both sides are defined
  (a rewrite of a random expression that only adds exact zeros, exact ones,
  distributes products, splits off the last term of a sum, or spells out a
  matrix expression entry by entry with unevaluated arithmetic);
* ``"false"`` -- a true statement plus a perturbation that is non-zero where
  the sides are defined (a non-zero constant, possibly tiny; a zero in disguise
  replaced by a near-zero; an off-by-one sum; an entry changed);
* ``"undefined"`` -- a true statement with an undefined factor or term on both
  sides (an infinity, an exact pole, a denominator that is a zero in disguise).

The grammar: real, positive, nonnegative, integer, ``zero=True`` and
assumption-free symbols; ``IndexedBase`` elements; Integers, Rationals, Floats
(dyadic and not), ``pi``, ``E``, ``I``; ``+ * / **`` (including unevaluated
``Pow``/``Mul``); exp, log, sqrt, trig, inverse trig, hyperbolic, ``atan2``;
``Abs``, ``sign``, ``floor``, ``ceiling``, ``frac``, ``Mod``, ``Max``, ``Min``,
``Heaviside``, ``KroneckerDelta``, ``Piecewise``; ``gamma``, ``factorial``,
``binomial``, ``zeta``; ``Sum``/``Product`` with symbolic bounds; explicit
matrices and ``MatMul``, ``MatAdd``, ``HadamardProduct``, ``KroneckerProduct``,
``MatPow``, ``Transpose``, ``Adjoint``, ``Inverse``, ``BlockMatrix``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from hypothesis import strategies as st
from sympy import (
    E, I, Abs, Float, Heaviside, IndexedBase, KroneckerDelta, Max, Min, Mod, Piecewise, Product, Rational, Sum,
    atan, atan2, binomial, ceiling, cos, cosh, exp, factorial, floor, frac, gamma, log, pi, sign, sin, sinh,
    sqrt, tan, tanh,
)

x, y = sp.symbols("x y", real=True)
p = sp.Symbol("p", positive=True)
w = sp.Symbol("w", nonnegative=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
m = sp.Symbol("m", integer=True, positive=True)
j = sp.Symbol("j", integer=True)
z0 = sp.Symbol("z", zero=True)
c = sp.Symbol("c")  # no assumptions: complex
k = sp.Symbol("k", integer=True)  # only ever a bound index
i1, i2 = sp.symbols("i1 i2", integer=True)
a = IndexedBase("a")

REALS = (x, y, p, w)
INTEGERS = (n, m, j)
PHI = (1 + sqrt(5)) / 2


@dataclass(frozen=True)
class Statement:
    lhs: object
    rhs: object
    kind: str
    note: str

    def __str__(self):
        return f"{self.lhs} = {self.rhs}  [{self.kind}: {self.note}]"


# -- zeros and ones in disguise --------------------------------------------------------------------

def zeros_in_disguise(u):
    """Expressions that are exactly 0 wherever defined, and defined everywhere (``u`` real)."""
    return [
        sin(u) ** 2 + cos(u) ** 2 - 1,
        cosh(u) ** 2 - sinh(u) ** 2 - 1,
        floor(u) + frac(u) - u,
        log(6) - log(2) - log(3),
        PHI**2 - PHI - 1,
        4 * atan(Rational(1, 5)) - atan(Rational(1, 239)) - pi / 4,
        sqrt(3 + 2 * sqrt(2)) - 1 - sqrt(2),
        Max(u, 1) + Min(u, 1) - u - 1,
        sign(u) * Abs(u) - u,
        Heaviside(u) + Heaviside(-u) - 1,
        exp(u) * exp(-u) - 1,
        sin(2 * u) - 2 * sin(u) * cos(u),
        Sum(k, (k, 1, n)) - n * (n + 1) / 2,
        cos(pi * n) - (-1) ** n,
    ]


def near_zeros(u):
    """Expressions close to a zero in disguise but not zero (a false statement's perturbation).

    Built unevaluated: SymPy would otherwise fold ``-1 + Float(1e-18)`` into the
    Float ``-1.0`` and the perturbation would vanish.
    """
    def plus(*terms):
        return sp.Add(*terms, evaluate=False)
    return [
        plus(sin(u) ** 2 + cos(u) ** 2 - 1, Rational(1, 10**12)),
        plus(log(6) - log(2) - log(3), Rational(1, 10**25)),
        4 * atan(Rational(1, 5)) - atan(Rational(1, 238)) - pi / 4,
        plus(sqrt(3 + 2 * sqrt(2)) - 1 - sqrt(2), Rational(1, 10**20)),
        pi - Rational(355, 113),
        plus(PHI**2 - PHI - 1, Float(1e-18)),
        sqrt(2) - Float(1.4142135623730951),
        plus(Sum(k, (k, 1, n)) - n * (n + 1) / 2, 1),
        plus(exp(u) * exp(-u) - 1, Rational(1, 7)),
    ]


def undefined_values():
    """Symbol-free or assumption-forced undefined values (infinities, exact poles, zero denominators)."""
    D = [log(6) - log(2) - log(3), PHI**2 - PHI - 1, 4 * atan(Rational(1, 5)) - atan(Rational(1, 239)) - pi / 4,
         sqrt(3 + 2 * sqrt(2)) - 1 - sqrt(2), cosh(x) ** 2 - sinh(x) ** 2 - 1, floor(x) + frac(x) - x,
         sin(y) ** 2 + cos(y) ** 2 - 1]
    return [
        sp.oo, -sp.oo, sp.zoo, I * sp.oo,
        sp.Pow(0, -1, evaluate=False), 1 / z0, sp.Pow(z0, -2, evaluate=False),
        tan(pi / 2, evaluate=False), gamma(-2, evaluate=False), sp.zeta(1, evaluate=False),
        factorial(-1, evaluate=False), sp.asec(0, evaluate=False), atan2(0, 0, evaluate=False),
        log(0, evaluate=False), Mod(y, 0, evaluate=False), sp.cot(pi, evaluate=False), log(z0),
    ] + [1 / d for d in D] + [log(d) for d in D[:3]]


# -- random expressions ----------------------------------------------------------------------------

DYADIC_FLOATS = [Float(0.5), Float(0.25), Float(1.5), Float(-0.75), Float(2.0)]
OTHER_FLOATS = [Float(0.1), Float(0.3), Float(1e-20), Float("3.14159")]

leaves = st.one_of(
    st.sampled_from(REALS + INTEGERS),
    st.sampled_from([sp.Integer(0), sp.Integer(1), sp.Integer(2), sp.Integer(-3), Rational(1, 2), Rational(-2, 3)]),
    st.sampled_from(DYADIC_FLOATS + OTHER_FLOATS),
    st.sampled_from([pi, E, pi / 2]),
    st.sampled_from([a[i1], a[i1 + 1], a[n], a[0]]),
    st.just(c),
)

UNARY = [sin, cos, exp, atan, tanh, Abs, sign, floor, ceiling, frac, Heaviside,
         lambda u: sqrt(u**2 + 1), lambda u: log(u**2 + 1), lambda u: 1 / u, lambda u: 1 / (u**2 + 1),
         tan, lambda u: sqrt(u), lambda u: log(u), lambda u: Mod(u, 3), lambda u: u**2, lambda u: u**3,
         lambda u: Piecewise((u, u > 0), (-u / 2, True)), lambda u: Piecewise((1 / u, u > 1), (u, True)),
         lambda u: sp.Pow(u, -1, evaluate=False), lambda u: gamma(u**2 + 1), lambda u: sp.asin(u / (Abs(u) + 1))]
BINARY = [sp.Add, sp.Mul, lambda u, v: u - v, lambda u, v: u / v, Max, Min, atan2,
          lambda u, v: u * v + 1, lambda u, v: Mul_unevaluated(u, v)]


def Mul_unevaluated(u, v):
    return sp.Mul(u, v, evaluate=False)


@st.composite
def summand(draw):
    """A function of the bound index k (and maybe x or an Indexed element)."""
    return draw(st.sampled_from([
        k, k**2, k**2 + 1, 2**k, (-1) ** k * binomial(n, k), binomial(k, 2), 1 / (k + 1), x**k,
        k * x, a[k], sin(k * x), KroneckerDelta(k, m), factorial(k), Rational(1, 2) ** k, 1 / (k**2 + 1),
    ]))


@st.composite
def big_operator(draw):
    f = draw(summand())
    lo = draw(st.sampled_from([0, 1, 2, -1]))
    hi = draw(st.sampled_from([n, n + 1, m, n - 1, j, 3, m - 2]))
    if draw(st.booleans()):
        return Sum(f, (k, lo, hi))
    g = draw(st.sampled_from([k + 1, k**2 + 1, 2, Rational(1, 2) + k, x, (k + 2) / (k + 1)]))
    return Product(g, (k, lo, hi))


@st.composite
def expressions(draw, depth=2):
    if depth == 0:
        return draw(leaves)
    choice = draw(st.integers(0, 9))
    if choice <= 2:
        return draw(leaves)
    if choice <= 5:
        return draw(st.sampled_from(UNARY))(draw(expressions(depth - 1)))
    if choice <= 7:
        return draw(st.sampled_from(BINARY))(draw(expressions(depth - 1)), draw(expressions(depth - 1)))
    if choice == 8:
        return draw(big_operator())
    return draw(st.sampled_from([
        KroneckerDelta(i1, i2) * a[i1], factorial(n), binomial(n, 2), gamma(m), sp.zeta(m + 1),
        Mod(j, 2), cos(pi * j), (-1) ** j, z0 + x, c * x, 1 / (x - Rational(1, 3)), tan(x),
    ]))


@st.composite
def total_expressions(draw):
    """Defined at every real point: a cofactor for zeros in disguise."""
    return draw(st.sampled_from([
        sp.Integer(1), x, y + 2, x**2 + 1, exp(x), sin(x) + 3, x * y - 1, cos(y) ** 3, Rational(3, 7), p,
    ]))


def _total(expr):
    """True when ``expr`` has no Float (expand would round Float arithmetic)."""
    return not expr.atoms(sp.Float)


# -- scalar statements -----------------------------------------------------------------------------

@st.composite
def true_scalar(draw):
    e = draw(expressions())
    u = draw(st.sampled_from([x, y, x + y, 2 * x]))
    how = draw(st.integers(0, 6))
    if how == 0:
        zd = draw(st.sampled_from(zeros_in_disguise(u)))
        return Statement(e, e + zd * draw(total_expressions()), "true", f"e + ({zd})*g")
    if how == 1:
        s = draw(st.sampled_from([x, y, p]))
        zd = draw(st.sampled_from(zeros_in_disguise(u)[:9]))
        return Statement(e, e.xreplace({s: s + zd}), "true", f"{s} -> {s} + ({zd})")
    if how == 2 and _total(e):
        return Statement(e, sp.expand(e, power_base=False, log=False), "true", "expand")
    if how == 3:
        power = draw(st.sampled_from([1, 2, 7, 100]))
        one = draw(st.sampled_from([sin(u) ** 2 + cos(u) ** 2, cosh(u) ** 2 - sinh(u) ** 2, exp(u) * exp(-u)]))
        return Statement(e * one**power, e, "true", f"e*(one)**{power}")
    if how == 4:
        f = draw(summand())
        lo = draw(st.sampled_from([0, 1, -2]))
        top = draw(st.sampled_from([n, m, j]))
        last = f.xreplace({k: top})
        return Statement(Sum(f, (k, lo, top)), Sum(f, (k, lo, top - 1)) + last, "true", "Karr: split off the top term")
    if how == 5:
        pair = draw(st.sampled_from([
            (KroneckerDelta(i1, i2) * (a[i1] - a[i2]), sp.Integer(0)),
            (KroneckerDelta(i1, i2) * a[i1], KroneckerDelta(i1, i2) * a[i2]),
            (Sum(a[k], (k, 0, n)) - Sum(a[k], (k, 0, n - 1)), a[n]),
            (a[i1] * (sin(x) ** 2 + cos(x) ** 2), a[i1]),
            (Sum(k, (k, 1, j)) - Sum(k, (k, 1, j - 1)), j),
        ]))
        return Statement(pair[0] + e, pair[1] + e, "true", "indexed / Karr identity")
    g = draw(total_expressions())
    g2 = g + sin(x) ** 2 + cos(x) ** 2 - 1
    return Statement(e * (g**2 + 1) / (g2**2 + 1), e, "true", "times (g^2+1)/(g'^2+1)")


@st.composite
def false_scalar(draw):
    t = draw(true_scalar())
    how = draw(st.integers(0, 4))
    u = draw(st.sampled_from([x, y]))
    if how == 0:
        delta = draw(st.sampled_from([sp.Integer(1), Rational(-1, 2), Rational(1, 10**30), Float(1e-20),
                                      Float(0.5), pi, sqrt(2) - 1]))
    elif how == 1:
        delta = draw(st.sampled_from(near_zeros(u))) * (u**2 + 1)
    elif how == 2:
        delta = draw(st.sampled_from([sp.Integer(1), Rational(1, 3), Float(0.1)])) * (u**2 + 2)
    elif how == 3:
        f = draw(st.sampled_from([k**2 + 1, 2**k, (k + 2) / (k + 1)]))
        top = draw(st.sampled_from([n, m, j]))
        return Statement(Sum(f, (k, 1, top)), Sum(f, (k, 1, top - 1)), "false", "Karr: top term missing")
    else:
        pair = draw(st.sampled_from([(a[i1] - a[i2], sp.Integer(0)), (a[i1 + 1], a[i1]), (a[n], a[0]),
                                     (Sum(a[k], (k, 0, n)), Sum(a[k], (k, 0, n - 1)))]))
        return Statement(pair[0], pair[1], "false", "indexed elements are independent")
    return Statement(t.lhs, sp.Add(t.rhs, delta, evaluate=False), "false", f"{t.note}, plus {delta}")


@st.composite
def undefined_scalar(draw):
    t = draw(true_scalar())
    u = draw(st.sampled_from(undefined_values()))
    # unevaluated: SymPy folds 0*(1/D) to 0, which would hide the undefined factor
    if draw(st.booleans()):
        return Statement(_mul(t.lhs, u), _mul(t.rhs, u), "undefined", f"({t.note}) times {u}")
    return Statement(_add(t.lhs, u), _add(t.rhs, u), "undefined", f"({t.note}) plus {u}")


# -- matrix statements -----------------------------------------------------------------------------

def _mul(*args):
    return sp.Mul(*args, evaluate=False)


def _add(*args):
    return sp.Add(*args, evaluate=False) if len(args) > 1 else args[0]


def explicit_matmul(A, B):
    return sp.ImmutableMatrix(A.rows, B.cols, lambda r, s: _add(*[_mul(A[r, t], B[t, s]) for t in range(A.cols)]))


def explicit(expr):
    """The explicit matrix of a matrix expression, by the definitions, with unevaluated arithmetic."""
    if isinstance(expr, sp.MatrixBase):
        return sp.ImmutableMatrix(expr)
    args = [explicit(arg) if isinstance(arg, (sp.MatrixExpr, sp.MatrixBase)) else arg for arg in expr.args]
    if isinstance(expr, sp.MatMul):
        scalars = [arg for arg in args if not isinstance(arg, sp.MatrixBase)]
        mats = [arg for arg in args if isinstance(arg, sp.MatrixBase)]
        out = mats[0]
        for M in mats[1:]:
            out = explicit_matmul(out, M)
        if scalars:
            out = out.applyfunc(lambda v: _mul(*scalars, v))
        return out
    if isinstance(expr, sp.MatAdd):
        return sp.ImmutableMatrix(args[0].rows, args[0].cols, lambda r, s: _add(*[M[r, s] for M in args]))
    if isinstance(expr, sp.HadamardProduct):
        return sp.ImmutableMatrix(args[0].rows, args[0].cols, lambda r, s: _mul(*[M[r, s] for M in args]))
    if isinstance(expr, sp.KroneckerProduct):
        A, B = args
        return sp.ImmutableMatrix(A.rows * B.rows, A.cols * B.cols,
                                  lambda r, s: _mul(A[r // B.rows, s // B.cols], B[r % B.rows, s % B.cols]))
    if isinstance(expr, sp.Transpose):
        return args[0].T
    if isinstance(expr, sp.Adjoint):
        A = args[0]
        return sp.ImmutableMatrix(A.cols, A.rows, lambda r, s: sp.conjugate(A[s, r]))
    if isinstance(expr, sp.Inverse):
        A = args[0]
        if A.shape == (1, 1):
            return sp.ImmutableMatrix([[sp.Pow(A[0, 0], -1, evaluate=False)]])
        (p_, q_), (r_, s_) = (A[0, 0], A[0, 1]), (A[1, 0], A[1, 1])
        det = _add(_mul(p_, s_), _mul(-1, q_, r_))
        inv = sp.Pow(det, -1, evaluate=False)
        return sp.ImmutableMatrix([[_mul(s_, inv), _mul(-1, q_, inv)], [_mul(-1, r_, inv), _mul(p_, inv)]])
    if isinstance(expr, sp.MatPow):
        A, e = args
        out = A
        for _ in range(int(e) - 1):
            out = explicit_matmul(out, A)
        return out
    if isinstance(expr, sp.BlockMatrix):
        return sp.ImmutableMatrix(sp.BlockMatrix(expr.blocks.applyfunc(explicit)).as_explicit())
    raise TypeError(type(expr))


@st.composite
def matrices(draw, rows, cols, depth=1):
    return sp.ImmutableMatrix(rows, cols, lambda r, s: draw(expressions(depth)))


@st.composite
def matrix_expressions(draw):
    how = draw(st.integers(0, 8))
    if how == 0:
        A, B = draw(matrices(1, 2)), draw(matrices(2, 2))
        return sp.MatMul(A, B)
    if how == 1:
        A = draw(matrices(2, 2))
        return sp.MatAdd(A, draw(matrices(2, 2)))
    if how == 2:
        return sp.HadamardProduct(draw(matrices(1, 2)), draw(matrices(1, 2)))
    if how == 3:
        return sp.KroneckerProduct(draw(matrices(1, 2)), draw(matrices(2, 1)))
    if how == 4:
        return sp.MatPow(draw(matrices(2, 2, 0)), 2)
    if how == 5:
        return sp.Transpose(draw(matrices(1, 2)))
    if how == 6:
        return sp.Adjoint(draw(matrices(2, 1)))
    if how == 7:
        return sp.Inverse(draw(matrices(2, 2, 0)))
    return sp.BlockMatrix([[draw(matrices(1, 1)), draw(matrices(1, 1))]])


@st.composite
def matrix_statement(draw):
    E_ = draw(matrix_expressions())
    try:
        X = explicit(E_)
    except (TypeError, ValueError):
        X = None
    if X is None:
        return Statement(sp.ImmutableMatrix([[x]]), sp.ImmutableMatrix([[x]]), "true", "fallback")
    kind = draw(st.sampled_from(["true", "true", "false", "undefined"]))
    r, s = draw(st.integers(0, X.rows - 1)), draw(st.integers(0, X.cols - 1))
    if kind == "true":
        if draw(st.booleans()):
            return Statement(E_, X, "true", "matrix expression spelled out")
        zd = draw(st.sampled_from(zeros_in_disguise(x)))
        Y = X.as_mutable()
        Y[r, s] = _add(X[r, s], zd)
        return Statement(E_, sp.ImmutableMatrix(Y), "true", f"spelled out, entry {(r, s)} + ({zd})")
    if kind == "false":
        delta = draw(st.sampled_from([sp.Integer(1), Rational(1, 10**20), Float(1e-20), x**2 + 1,
                                      draw(st.sampled_from(near_zeros(x))) * (x**2 + 1)]))
        Y = X.as_mutable()
        Y[r, s] = _add(X[r, s], delta)
        return Statement(E_, sp.ImmutableMatrix(Y), "false", f"spelled out, entry {(r, s)} + {delta}")
    u = draw(st.sampled_from(undefined_values()))
    Y, Z = X.as_mutable(), X.as_mutable()
    Y[r, s] = _mul(X[r, s], u)
    Z[r, s] = _mul(X[r, s], u)
    rhs = sp.ImmutableMatrix(Z)
    if draw(st.booleans()):
        rhs = sp.HadamardProduct(rhs, sp.ImmutableMatrix(sp.ones(X.rows, X.cols)))
    return Statement(sp.ImmutableMatrix(Y), rhs, "undefined", f"entry {(r, s)} times {u}")


statements = st.one_of(true_scalar(), false_scalar(), undefined_scalar(), matrix_statement())
