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
    if choice <= 7:
        f = draw(st.sampled_from(UNARY if choice <= 5 else BINARY))
        args = [draw(expressions(depth - 1)) for _ in range(1 if choice <= 5 else 2)]
        try:
            return f(*args)
        except (ValueError, TypeError, ZeroDivisionError, AttributeError):  # SymPy refuses e.g. Max(nan, x)
            return args[0]
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
        return Statement(e, _add(e, _mul(zd, draw(total_expressions()))), "true", f"e + ({zd})*g")
    if how == 1 and not e.atoms(sp.Float):  # rebuilding a tree with Floats re-rounds its Float arithmetic
        s = draw(st.sampled_from([x, y, p]))
        zd = draw(st.sampled_from(zeros_in_disguise(u)[:9]))
        return Statement(e, e.xreplace({s: s + zd}), "true", f"{s} -> {s} + ({zd})")
    if how in (1, 2) and _total(e):
        return Statement(e, sp.expand(e, power_base=False, log=False), "true", "expand")
    if how == 3:
        power = draw(st.sampled_from([1, 2, 7, 100]))
        one = draw(st.sampled_from([sin(u) ** 2 + cos(u) ** 2, cosh(u) ** 2 - sinh(u) ** 2, exp(u) * exp(-u)]))
        return Statement(_mul(e, sp.Pow(one, power)), e, "true", f"e*(one)**{power}")
    if how == 4:
        f = draw(summand())
        lo = draw(st.sampled_from([0, 1, -2]))
        top = draw(st.sampled_from([n, m, j]))
        last = f.xreplace({k: top})
        return Statement(Sum(f, (k, lo, top)), _add(Sum(f, (k, lo, top - 1)), last), "true", "Karr: split off the top term")
    if how == 5:
        pair = draw(st.sampled_from([
            (KroneckerDelta(i1, i2) * (a[i1] - a[i2]), sp.Integer(0)),
            (KroneckerDelta(i1, i2) * a[i1], KroneckerDelta(i1, i2) * a[i2]),
            (Sum(a[k], (k, 0, n)) - Sum(a[k], (k, 0, n - 1)), a[n]),
            (a[i1] * (sin(x) ** 2 + cos(x) ** 2), a[i1]),
            (Sum(k, (k, 1, j)) - Sum(k, (k, 1, j - 1)), j),
        ]))
        return Statement(_add(pair[0], e), _add(pair[1], e), "true", "indexed / Karr identity")
    g = draw(total_expressions())
    g2 = g + sin(x) ** 2 + cos(x) ** 2 - 1
    ratio = _mul(g**2 + 1, sp.Pow(g2**2 + 1, -1, evaluate=False))
    return Statement(_mul(e, ratio), e, "true", "times (g^2+1)/(g'^2+1)")


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




# -- laws: identities (and near-identities) with a known truth, instantiated at random subterms --------

@st.composite
def real_expressions(draw, depth=2):
    """Real-valued wherever defined, for laws that need a real argument."""
    if depth == 0:
        return draw(st.sampled_from([x, y, p, w, n, j, sp.Integer(2), Rational(-1, 3), pi, Float(0.5)]))
    f = draw(st.sampled_from([sin, cos, exp, atan, Abs, floor, frac, sp.tanh,
                              lambda u: u**2 - 1, lambda u: 2 * u + 1, lambda u: u * y, lambda u: Max(u, 0)]))
    return f(draw(real_expressions(depth - 1)))


@st.composite
def integer_expressions(draw):
    return draw(st.sampled_from([n, m, j, n + 1, 2 * j, j - 3, m * n, -j, n - m, floor(x), Mod(j, 3)]))


# a false law is false at some value of these (a real law at a sign change, an integer law at 0 or below)
REAL_LEAVES = [x, y, 2 * x + 1, x - y, x * y]
NATURALS = [n, m, n + 1, m * n, Mod(j, 3)]


# (lhs(u), rhs(u), kind, argument type)
LAWS = [
    (lambda u: Abs(u) ** 2, lambda u: u**2, "true", "real"),
    (lambda u: sign(u) * u, lambda u: Abs(u), "true", "real"),
    (lambda u: Heaviside(u), lambda u: (1 + sign(u)) / 2, "true", "real"),
    (lambda u: Piecewise((1, u > 0), (0, True)), lambda u: Heaviside(u), "false", "leaf"),
    (lambda u: Piecewise((u, u > 0), (-u, True)), lambda u: Abs(u), "true", "real"),
    (lambda u: floor(u), lambda u: -ceiling(-u), "true", "real"),
    (lambda u: ceiling(u) - floor(u), lambda u: sp.Integer(1), "false", "leaf"),
    (lambda u: frac(u), lambda u: u - floor(u), "true", "real"),
    (lambda u: Max(u, 2 * u), lambda u: (3 * u + Abs(u)) / 2, "true", "real"),
    (lambda u: Min(u, 0) + Max(u, 0), lambda u: u, "true", "real"),
    (lambda u: sqrt(u**2), lambda u: u, "false", "leaf"),
    (lambda u: exp(log(u)), lambda u: u, "true", "real"),
    (lambda u: log(exp(u)), lambda u: u, "true", "real"),
    (lambda u: atan(sp.tan(u)), lambda u: u, "false", "leaf"),
    (lambda u: tan(u), lambda u: sin(u) / cos(u), "true", "real"),
    (lambda u: cosh(u) ** 2, lambda u: 1 + sinh(u) ** 2, "true", "real"),
    (lambda u: sp.tanh(u), lambda u: (exp(2 * u) - 1) / (exp(2 * u) + 1), "true", "real"),
    (lambda u: cosh(u), lambda u: exp(u) / 2 + exp(-u) / 2, "true", "real"),
    (lambda u: sinh(2 * u), lambda u: 2 * sinh(u) * cosh(u), "true", "real"),
    (lambda u: sinh(u), lambda u: exp(u) / 2 - exp(-u) / 2 + Rational(1, 10**15), "false", "real"),
    (lambda u: cos(u) ** 2, lambda u: (1 + cos(2 * u)) / 2, "true", "real"),
    (lambda u: sin(u) ** 4 - cos(u) ** 4, lambda u: -cos(2 * u), "true", "real"),
    (lambda u: sin(3 * u), lambda u: 3 * sin(u) - 4 * sin(u) ** 3, "true", "real"),
    (lambda u: sin(3 * u), lambda u: 3 * sin(u) - 4 * sin(u) ** 2, "false", "leaf"),
    (lambda u: sp.Pow(u, 0, evaluate=False), lambda u: sp.Integer(1), "true", "real"),
    (lambda u: (u**2) ** Rational(1, 2), lambda u: Abs(u), "true", "real"),
    (lambda u: (u**3) ** Rational(1, 3), lambda u: u, "false", "leaf"),
    (lambda u: Mod(u, 2), lambda u: (1 - (-1) ** u) / 2, "true", "integer"),
    (lambda u: (-1) ** (2 * u), lambda u: sp.Integer(1), "true", "integer"),
    (lambda u: cos(pi * u), lambda u: (-1) ** u, "true", "integer"),
    (lambda u: sin(pi * u / 2) ** 2, lambda u: Mod(u, 2), "true", "integer"),
    (lambda u: KroneckerDelta(u, 0) * u, lambda u: sp.Integer(0), "true", "integer"),
    (lambda u: Sum(k, (k, 1, u)), lambda u: u * (u + 1) / 2, "true", "integer"),
    (lambda u: Sum(1, (k, 1, u)), lambda u: u, "true", "integer"),
    (lambda u: Sum(k**2, (k, 1, u)), lambda u: u * (u + 1) * (2 * u + 1) / 6, "true", "integer"),
    (lambda u: Sum(2**k, (k, 0, u)), lambda u: 2 ** (u + 1) - 1, "true", "integer"),
    (lambda u: Sum(Abs(k), (k, 1, u)), lambda u: u * (u + 1) / 2, "false-if-negative", "integer"),
    (lambda u: Sum(k, (k, 1, u)) - Sum(k, (k, 1, u - 1)), lambda u: u, "true", "integer"),
    (lambda u: Product(2, (k, 1, u)), lambda u: 2**u, "true", "integer"),
    (lambda u: Product(k, (k, 1, u)), lambda u: factorial(u), "true", "integer"),
    (lambda u: Product(1 + Rational(1, 1) / k, (k, 1, u)), lambda u: u + 1, "true", "integer"),
    (lambda u: Sum(binomial(u, k), (k, 0, u)), lambda u: 2**u, "true", "natural"),
    (lambda u: Sum((-1) ** k * binomial(u, k), (k, 0, u)), lambda u: sp.Integer(0), "false", "zero-or-below"),
    (lambda u: binomial(u, 2), lambda u: u * (u - 1) / 2, "true", "integer"),
    (lambda u: factorial(u + 1) / factorial(u), lambda u: u + 1, "true", "integer"),
    (lambda u: gamma(u + 1), lambda u: factorial(u), "true", "integer"),
    (lambda u: z0 + u, lambda u: u, "true", "real"),
    (lambda u: z0 * u, lambda u: sp.Integer(0), "true", "real"),
    (lambda u: c * u, lambda u: u * c, "true", "real"),
    (lambda u: Abs(c) ** 2, lambda u: c**2, "false", "real"),
    (lambda u: sp.conjugate(c) * c, lambda u: Abs(c) ** 2, "true", "real"),
    (lambda u: sp.re(c) ** 2 + sp.im(c) ** 2, lambda u: Abs(c) ** 2, "true", "real"),
    (lambda u: log(exp(c)), lambda u: c, "false", "real"),
]


@st.composite
def law_statement(draw):
    lhs_fn, rhs_fn, kind, argument = draw(st.sampled_from(LAWS))
    u = draw({"real": real_expressions(), "integer": integer_expressions(), "leaf": st.sampled_from(REAL_LEAVES),
              "natural": st.sampled_from(NATURALS), "zero-or-below": st.sampled_from([n, j, n - m, -j, floor(x)])}[argument])
    try:
        lhs, rhs = lhs_fn(u), rhs_fn(u)
    except (ValueError, TypeError, ZeroDivisionError):
        lhs, rhs, kind = u, u, "true"
    if u.atoms(sp.Float):
        kind = None  # SymPy folds a law at a Float argument in 53-bit arithmetic: its truth is no longer known
    if kind == "false-if-negative":
        kind = "false" if u in (j, -j, 2 * j, j - 3, n - m, floor(x)) else "true"
    how = draw(st.integers(0, 3))
    if how == 1 and kind == "true":
        zd = draw(st.sampled_from(zeros_in_disguise(x)[:9]))
        rhs = _add(rhs, _mul(zd, draw(total_expressions())))
    elif how == 2 and kind == "true":
        return Statement(lhs, _add(rhs, draw(st.sampled_from([sp.Integer(1), Rational(1, 10**18), Float(0.25)]))),
                         "false", f"law at {u}, plus a constant")
    elif how == 3:
        bad = draw(st.sampled_from(undefined_values()))
        return Statement(_mul(lhs, bad), _mul(rhs, bad), "undefined", f"law at {u}, times {bad}")
    return Statement(lhs, rhs, kind, f"law at {u}")


# -- matrix laws with matrix symbols (an element table per symbol) ---------------------------------

M2, N2 = sp.MatrixSymbol("M", 2, 2), sp.MatrixSymbol("N", 2, 2)
MATRIX_LAWS = [
    (sp.Transpose(sp.MatMul(M2, N2)), sp.MatMul(sp.Transpose(N2), sp.Transpose(M2)), "true"),
    (sp.MatMul(M2, N2), sp.MatMul(N2, M2), "false"),
    (sp.HadamardProduct(M2, N2), sp.HadamardProduct(N2, M2), "true"),
    (sp.KroneckerProduct(M2, N2), sp.KroneckerProduct(N2, M2), "false"),
    (sp.Transpose(sp.Transpose(M2)), M2, "true"),
    (sp.Adjoint(M2), sp.Transpose(M2), "false"),
    (sp.MatAdd(M2, N2), sp.MatAdd(N2, M2), "true"),
    (sp.MatPow(M2, 2), sp.MatMul(M2, M2), "true"),
    (sp.Inverse(sp.Inverse(M2)), M2, "true"),
    (sp.MatMul(M2, sp.Identity(2)), M2, "true"),
    (sp.MatAdd(M2, sp.ZeroMatrix(2, 2)), M2, "true"),
    (sp.MatMul(sp.Inverse(M2), M2), sp.Identity(2), "true"),
    (sp.Trace(sp.MatMul(M2, N2)), sp.Trace(sp.MatMul(N2, M2)), "true"),
    (sp.Determinant(sp.MatMul(M2, N2)), sp.Determinant(M2) * sp.Determinant(N2), "true"),
    (sp.Trace(sp.MatMul(M2, N2)), sp.Trace(M2) * sp.Trace(N2), "false"),
    (sp.MatMul(sp.ImmutableMatrix([[x, 0], [0, x]]), M2), sp.MatMul(M2, sp.ImmutableMatrix([[x, 0], [0, x]])), "true"),
    (sp.MatMul(sp.ImmutableMatrix([[x, 1], [0, x]]), M2), sp.MatMul(M2, sp.ImmutableMatrix([[x, 1], [0, x]])), "false"),
]


@st.composite
def matrix_law_statement(draw):
    lhs, rhs, kind = draw(st.sampled_from(MATRIX_LAWS))
    return Statement(lhs, rhs, kind, "matrix law")


statements = st.one_of(true_scalar(), false_scalar(), undefined_scalar(), matrix_statement(), law_statement(),
                       matrix_law_statement())


# -- tricky families: branch cuts, integer-valued zeros in disguise, points where only one side is defined --

b = IndexedBase("b")
q = sp.Symbol("q", positive=True)


def _div(u, v):
    return _mul(u, sp.Pow(v, -1, evaluate=False))


# zero for every integer n, not written as 0 (an undefined denominator when divided by)
INTEGER_ZEROS = [
    Mod(n**2 + n, 2), (-1) ** (n**2 + n) - 1, cos(pi * (n**2 + n)) - 1, floor(n / 2) + ceiling(n / 2) - n,
    Sum(k, (k, 1, n)) - n * (n + 1) / 2, Sum(1, (k, 0, j)) - j - 1, Product(1, (k, 1, j)) - 1, sin(pi * j),
    binomial(n, 1) - n,
]

TRICKY = [
    # branch cuts (false for negative or complex arguments, true under the assumptions)
    (sqrt(x) * sqrt(y), sqrt(x * y), "false"),
    (sqrt(p) * sqrt(w), sqrt(p * w), "true"),
    (log(x * y), log(x) + log(y), "false"),
    (log(p * q), log(p) + log(q), "true"),
    (log(p**3), 3 * log(p), "true"),
    (log(x**2), 2 * log(x), "false"),
    ((x**2) ** Rational(3, 2), x**3, "false"),
    ((p**2) ** Rational(3, 2), p**3, "true"),
    (atan(x) + atan(1 / x), pi / 2, "false"),
    (atan(p) + atan(1 / p), pi / 2, "true"),
    (exp(x) ** y, exp(x * y), "true"),
    ((x**y) ** 2, x ** (2 * y), "true"),
    ((x**2) ** y, x ** (2 * y), "false"),
    (sqrt(c**2), c, "false"),
    (c * sp.conjugate(c), Abs(c) ** 2, "true"),
    (Abs(exp(I * x)), sp.Integer(1), "true"),
    (Abs(exp(I * c)), sp.Integer(1), "false"),
    (exp(I * x), cos(x) + I * sin(x), "true"),
    (sp.asin(x / (Abs(x) + 1)) + sp.acos(x / (Abs(x) + 1)), pi / 2, "true"),
    # integers
    (floor(n / 2) * 2 + Mod(n, 2), n, "true"),
    (floor(x) + floor(-x), sp.Integer(-1), "false"),
    (floor(j / 2) + ceiling(j / 2), j, "true"),
    ((-1) ** (j**2 + j), sp.Integer(1), "true"),
    (sin(pi * x), sp.Integer(0), "false"),
    (Mod(x, 1), frac(x), "true"),
    (Mod(j, -3) + Mod(-j, 3), sp.Integer(0), "true"),
    (Mod(j, 3) + Mod(-j, 3), sp.Integer(3), "false"),
    (factorial(m) / factorial(m - 1), m, "true"),
    (gamma(m), factorial(m - 1), "true"),
    (gamma(x + 1), x * gamma(x), "true"),
    # sums and products under Karr's convention
    (Sum(k, (k, 1, j)) + Sum(k, (k, j + 1, m)), Sum(k, (k, 1, m)), "true"),
    (Sum(a[k], (k, 0, j)) + Sum(a[k], (k, j + 1, n)), Sum(a[k], (k, 0, n)), "true"),
    (Sum(a[k], (k, 0, n)), Sum(a[n - k], (k, 0, n)), "true"),
    (Sum(a[k] * KroneckerDelta(k, 2), (k, 0, 5)), a[2], "true"),
    (Sum(a[k] * KroneckerDelta(k, j), (k, 0, 5)), a[j], "false"),
    (Sum(k, (k, j, 0)), -j * (j - 1) / 2, "true"),
    (Sum(1 / (k * (k + 1)), (k, 1, m)), 1 - 1 / (m + 1), "true"),
    (Product(k / (k + 1), (k, 1, m)), 1 / (m + 1), "true"),
    (Product(x, (k, 1, j)), x**j, "true"),
    (Sum(x**k, (k, 0, n)) * (x - 1), x ** (n + 1) - 1, "true"),
    (Sum(sp.Max(k, 2), (k, 0, n)), Sum(k, (k, 0, n)), "false"),
    # Indexed
    (a[2 * i1], a[i1 + i1], "true"),
    (a[i1] * KroneckerDelta(i1, 3), a[3] * KroneckerDelta(i1, 3), "true"),
    (a[i1], a[Abs(i1)], "false"),
    (a[floor(x)], a[ceiling(x)], "false"),
    (b[i1, i2], b[i2, i1], "false"),
    (KroneckerDelta(i1, i2) * (b[i1, i2] - b[i2, i1]), sp.Integer(0), "true"),
    (a[i1] ** 2, _mul(a[i1], a[i1]), "true"),
    # removable singularities: true where both sides are defined, never refutable at the hole
    (_div(x**2 - 1, x - 1), x + 1, "true"),
    (_mul(x, sp.Pow(x, -1, evaluate=False)), sp.Integer(1), "true"),
    (_div(sin(x), x) * x, sin(x), "true"),
    (x * Piecewise((1 / x, sp.Ne(x, 0)), (5, True)), sp.Integer(1), "false"),
    (Piecewise((x, x > 0), (0, x > 1), (1, True)), Piecewise((x, x > 0), (1, True)), "true"),
    (Max(x, x**2), x**2, "false"),
    (Max(x, y), (x + y + Abs(x - y)) / 2, "true"),
    (Heaviside(x) * Heaviside(-x), sp.Integer(0), "false"),
    (Heaviside(x, 1) + Heaviside(-x, 1), sp.Integer(1), "false"),
    (sign(x) ** 2, Heaviside(x) + Heaviside(-x) - 2 * Heaviside(x) * Heaviside(-x), "false"),
    # explicit matrices with symbolic singularities
    (sp.Inverse(sp.ImmutableMatrix([[x, 1], [1, x]])),
     sp.ImmutableMatrix([[_div(x, x**2 - 1), _div(-1, x**2 - 1)], [_div(-1, x**2 - 1), _div(x, x**2 - 1)]]), "true"),
    (sp.MatPow(sp.ImmutableMatrix([[1, x], [0, 1]]), -2), sp.ImmutableMatrix([[1, -2 * x], [0, 1]]), "true"),
    (sp.MatPow(sp.ImmutableMatrix([[1, x], [0, 1]]), -2), sp.ImmutableMatrix([[1, 2 * x], [0, 1]]), "false"),
    (sp.Determinant(sp.ImmutableMatrix([[x, y], [y, x]])), (x - y) * (x + y), "true"),
    (sp.Trace(sp.KroneckerProduct(sp.ImmutableMatrix([[x, 0], [0, y]]), sp.ImmutableMatrix([[1, 2], [3, 4]]))),
     5 * (x + y), "true"),
    (sp.BlockMatrix([[M2, sp.ZeroMatrix(2, 2)], [sp.ZeroMatrix(2, 2), N2]]) * sp.BlockMatrix(
        [[N2, sp.ZeroMatrix(2, 2)], [sp.ZeroMatrix(2, 2), M2]]),
     sp.BlockMatrix([[M2 * N2, sp.ZeroMatrix(2, 2)], [sp.ZeroMatrix(2, 2), N2 * M2]]), "true"),
    (sp.MatMul(sp.ImmutableMatrix([[Float(0.1), 0]]), sp.ImmutableMatrix([[Float(0.1)], [x]])),
     sp.ImmutableMatrix([[Float(0.1 * 0.1)]]), "false"),
    (sp.HadamardProduct(sp.ImmutableMatrix([[Float(0.5), x]]), sp.ImmutableMatrix([[Float(0.5), 1]])),
     sp.ImmutableMatrix([[Rational(1, 4), x]]), "true"),
    (sp.Adjoint(sp.ImmutableMatrix([[x, I * y]])), sp.ImmutableMatrix([[x], [I * y]]), "false"),
]


f_ = sp.Function("f")
ONE_X = sin(x) ** 2 + cos(x) ** 2
TRICKY += [
    # undefined functions: one value per argument value, like Indexed elements
    (f_(x) - f_(y), sp.Integer(0), "false"),
    (f_(x), f_(_add(x, ONE_X - 1)), "true"),
    (f_(ONE_X), f_(1), "true"),
    (Sum(f_(k), (k, 0, n)) - Sum(f_(k), (k, 0, n - 1)), f_(n), "true"),
    (f_(floor(x)), f_(x), "false"),
    (f_(x) ** 2, _mul(f_(x), f_(x)), "true"),
    (f_(Abs(j)), f_(j), "false"),
    # Indexed at bound indices, against literal elements
    (Sum(a[k], (k, 0, 2)), a[0] + a[1] + a[2], "true"),
    (Sum(a[k], (k, 0, 1)), 2 * a[0], "false"),
    (Sum(a[2 * k], (k, 0, 1)), a[0] + a[2], "true"),
    (Sum(a[k] - a[k + 1], (k, 0, 1)), a[0] - a[2], "true"),
    (Sum(a[k], (k, 0, n)), a[0] + n * a[1], "false"),
    # matrix symbols entry by entry
    (M2, sp.ImmutableMatrix(2, 2, lambda r, s: M2[r, s]), "true"),
    (M2[0, 0] + M2[1, 1], 2 * M2[0, 0], "false"),
    # complex arguments of real-looking functions
    (sign(c) ** 2, sign(c**2), "true"),
    (sign(c) * Abs(c), c, "true"),
    (Abs(sign(c)), sp.Integer(1), "false"),
    (floor(c), floor(sp.re(c)) + I * floor(sp.im(c)), "true"),
    (floor(c), floor(sp.re(c)), "false"),
    (Abs(c), sqrt(sp.re(c) ** 2 + sp.im(c) ** 2), "true"),
    (Max(c, 0), c, "false"),
    (sqrt(c) ** 2, c, "true"),
    (exp(log(c)), c, "true"),
    # branches, poles and conventions
    (Piecewise((1 / x, x > 0), (5, True)), sp.Integer(5), "false"),
    (sp.asin(sin(x)), x, "false"),
    (sp.acos(x / (Abs(x) + 1)) + sp.acos(-x / (Abs(x) + 1)), pi, "true"),
    (binomial(j, j), sp.Integer(1), "false"),  # SymPy: binomial(-1, -1) = 0
    (binomial(n, n), sp.Integer(1), "true"),
    (Sum(k, (k, 1, j)), j * (j + 1) / 2 * Heaviside(j), "false"),
    (Sum(floor(x), (k, 0, n)), (n + 1) * floor(x), "true"),
    (Sum(1 / (k - j), (k, 0, 2)), 1 / (-j) + 1 / (1 - j) + 1 / (2 - j), "true"),
    (Sum(1 / (k - 1), (k, 0, n)), sp.Integer(0), "false"),  # defined (and -1) at n = 0 only
    (sp.Mul(Float(1e-300), Float(1e-300), evaluate=False), sp.Integer(0), "false"),
    (Float("0.1", 60), Rational(1, 10), "false"),
]


d_ = sp.Symbol("d")
z_ = sp.Symbol("zz", real=True)
# zero at every admissible point, written with the fragment's own functions (a denominator: undefined everywhere)
ZEROS_IN_THE_FRAGMENT = [
    Max(x, 0) + Min(x, 0) - x, Abs(x) - x * sign(x), Heaviside(x) + Heaviside(-x) - 1,
    Piecewise((x, x > 0), (0, True)) - Max(x, 0), f_(x) - f_(_add(x, ONE_X - 1)),
    factorial(n + 1) - (n + 1) * factorial(n), Abs(c) ** 2 - c * sp.conjugate(c),
    sp.re(c) ** 2 + sp.im(c) ** 2 - Abs(c) ** 2, ceiling(j) - floor(j), cos(x) ** 2 - (1 + cos(2 * x)) / 2,
    a[0] - a[0] * ONE_X,
]
TRICKY += [(_div(x + 1, zero), _add(_div(x, zero), _div(1, zero)), "undefined") for zero in ZEROS_IN_THE_FRAGMENT]
TRICKY += [
    # powers with symbolic exponents: principal branches
    ((x**y) ** z_, x ** (y * z_), "false"),
    (x**y * x**z_, x ** (y + z_), "true"),
    ((x * y) ** z_, x**z_ * y**z_, "false"),
    ((-x) ** y, (-1) ** y * x**y, "false"),
    (exp(x) ** y, exp(x * y), "true"),
    (exp(c) ** y, exp(c * y), "false"),
    ((c * d_) ** 2, c**2 * d_**2, "true"),
    ((c**2) ** y, c ** (2 * y), "false"),
    (2 ** (x + y), 2**x * 2**y, "true"),
    (4**x, 2 ** (2 * x), "true"),
    ((-4) ** x, (-2) ** (2 * x), "false"),
    ((-8) ** Rational(1, 3), sp.Integer(2), "false"),
    # conjugates, real and imaginary parts of complex arguments
    (sp.conjugate(sin(c)), sin(sp.conjugate(c)), "true"),
    (sp.conjugate(exp(I * x)), exp(-I * x), "true"),
    (sp.conjugate(exp(I * c)), exp(-I * c), "false"),
    (sp.re(exp(I * x)), cos(x), "true"),
    (sp.re(exp(I * c)), cos(c), "false"),
    (sp.im(sin(c)), sin(sp.im(c)), "false"),
    (sp.re(sin(c)), sin(sp.re(c)) * cosh(sp.im(c)), "true"),
    (sp.conjugate(c), c, "false"),
    (sp.re(c * d_), sp.re(c) * sp.re(d_), "false"),
    (Abs(c * d_), Abs(c) * Abs(d_), "true"),
    (Abs(c + d_), Abs(c) + Abs(d_), "false"),
    (sign(c * d_), sign(c) * sign(d_), "true"),
    # piecewise conditions that hold at one point only
    (Heaviside(x, y), Heaviside(x), "false"),
    (Heaviside(x, Rational(1, 2)), Heaviside(x), "true"),
    (Piecewise((1, sp.Eq(x, Rational(1, 3))), (0, True)), sp.Integer(0), "false"),
    (Piecewise((1, sp.Eq(sin(x), 0)), (0, True)), sp.Integer(0), "false"),
    (Piecewise((1, (x > 0) & (x < 1)), (0, True)), Heaviside(x) * Heaviside(1 - x), "false"),
    (Piecewise((1, x > 0), (Rational(1, 2), sp.Eq(x, 0)), (0, True)), Heaviside(x), "true"),
    (Max(x, y, z_), Max(Max(x, y), z_), "true"),
    (Max(x, y) - Min(x, y), Abs(x - y), "true"),
    (Min(x, -x), -Abs(x), "true"),
    (Max(x, 1 / x), x, "false"),
    # sums whose summand has poles at some indices only
    (Sum(1 / (k - j), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(1 / (k - x), (k, 0, n)), 1 / (-x), "false"),
    (Sum(f_(k), (k, 0, 3)), f_(0) + f_(1) + f_(2) + f_(3), "true"),
    # matrices with symbols, scalars and poles
    (sp.MatMul(1 / x, M2), M2, "false"),
    (sp.MatAdd(sp.MatMul(x, M2), sp.MatMul(-x, M2)), sp.ZeroMatrix(2, 2), "true"),
    (sp.MatPow(M2, 0), sp.Identity(2), "true"),
    (sp.MatMul(sp.Transpose(M2), M2), sp.MatMul(M2, sp.Transpose(M2)), "false"),
    (sp.KroneckerProduct(M2, sp.Identity(1)), M2, "true"),
    (sp.BlockDiagMatrix(M2, N2), sp.BlockMatrix([[M2, sp.ZeroMatrix(2, 2)], [sp.ZeroMatrix(2, 2), N2]]), "true"),
    (sp.MatPow(M2, 3), sp.MatMul(M2, M2, M2), "true"),
    (sp.MatPow(M2, 2), sp.HadamardProduct(M2, M2), "false"),
    (sp.ImmutableMatrix([[1 / x, 0]]), sp.ImmutableMatrix([[1 / x, 1]]), "false"),
    (sp.ImmutableMatrix([[f_(x), a[0]]]), sp.ImmutableMatrix([[f_(x), a[1]]]), "false"),
    (sp.MatMul(sp.ImmutableMatrix([[x, 1 / x]]), sp.ImmutableMatrix([[1], [x]])), sp.ImmutableMatrix([[x + 1]]), "true"),
    (sp.MatMul(sp.ImmutableMatrix([[x, 1 / x]]), sp.ImmutableMatrix([[1], [x]])), sp.ImmutableMatrix([[x]]), "false"),
]


kp = sp.Symbol("kp", integer=True, positive=True)
TRICKY += [
    # closed forms of sums: Faulhaber, telescoping, geometric, a term that appears only from some index on
    (Sum(k**3, (k, 1, n)), (n * (n + 1) / 2) ** 2, "true"),
    (Sum(k**3, (k, 1, n)), (n * (n + 1) / 2) ** 2 + KroneckerDelta(n, 5), "false"),
    (Sum(KroneckerDelta(k, 7), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(k**2 + KroneckerDelta(k, 9), (k, 0, n)), n * (n + 1) * (2 * n + 1) / 6, "false"),
    (Sum(Max(k - 5, 0), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(Heaviside(k - 10), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(a[k] * KroneckerDelta(k, 12), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(binomial(k, 8), (k, 0, n)), binomial(n + 1, 9), "true"),
    (Sum(binomial(k, 8), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(floor(k / 2), (k, 0, n)), floor(n**2 / 4), "true"),
    (Sum((-1) ** k, (k, 0, n)), (1 + (-1) ** n) / 2, "true"),
    (Sum(1 / (k * (k + 1)), (k, 1, n)), n / (n + 1), "true"),
    (Sum(k, (k, 1, j)), j * (j + 1) / 2 + KroneckerDelta(j, -3), "false"),
    (Sum(k, (k, j, j + 3)), 4 * j + 6, "true"),
    (Sum(k, (k, j + 3, j)), -(2 * j + 3), "true"),
    (Sum(1, (k, j + 3, j)), sp.Integer(0), "false"),
    (Sum(k, (k, n + 2, n)), -(n + 1), "true"),
    (Sum(2**k, (k, 0, j)), 2 ** (j + 1) - 1 + KroneckerDelta(j, -4), "false"),
    (Sum(k * 2**k, (k, 0, n)), (n - 1) * 2 ** (n + 1) + 2, "true"),
    (Sum(k * 2**k, (k, 0, n)), (n - 1) * 2 ** (n + 1) + 3, "false"),
    (Sum(factorial(kp) * kp, (kp, 1, n)), factorial(n + 1) - 1, "true"),
    (Sum(k**10, (k, 0, n)), n**11 / 11, "false"),
    (Sum(1 / (k - Rational(1, 2)), (k, 0, n)), sp.Integer(0), "false"),
    (Sum(k * KroneckerDelta(k, m), (k, 0, n)), m * Heaviside(n - m, 1), "true"),
    (Sum(k * KroneckerDelta(k, m), (k, 0, n)), m, "false"),
]


TRICKY += [
    # hyperbolic functions (through exp), at complex arguments too, and their poles cosh = 0, sinh = 0
    (cosh(c) ** 2 - sinh(c) ** 2, sp.Integer(1), "true"),
    (tanh(c) * cosh(c), sinh(c), "true"),
    (tanh(c), 1 - 2 / (exp(2 * c) + 1), "true"),
    (tanh(c), _add(1 - 2 / (exp(2 * c) + 1), Rational(1, 10**20)), "false"),
    (cosh(x + y), cosh(x) * cosh(y) - sinh(x) * sinh(y), "false"),
    (tanh(2 * c), 2 * tanh(c) / (1 + tanh(c) ** 2), "true"),
    (sinh(x) ** 3, (sinh(3 * x) + 3 * sinh(x)) / 4, "false"),
    (cosh(log(c)), (c + 1 / c) / 2, "true"),
    (sinh(log(x)), (x - 1 / x) / 2, "true"),
    (Abs(cosh(c)), cosh(c), "false"),
    (1 / sinh(x), _add(1 / sinh(x), 1), "false"),
    (sp.Pow(cosh(c), -1, evaluate=False), 2 / (exp(c) + exp(-c)), "true"),
    (tanh(pi * I / 2, evaluate=False), sp.Integer(0), "undefined"),
    (cosh(I * pi / 2, evaluate=False) * x, sp.Integer(0), "true"),
]


@st.composite
def tricky_statement(draw):
    lhs, rhs, kind = draw(st.sampled_from(TRICKY))
    how = draw(st.integers(0, 4))
    matrix = isinstance(lhs, (sp.MatrixBase, sp.MatrixExpr))
    if how == 1 and not matrix:
        zero = draw(st.sampled_from(INTEGER_ZEROS))
        return Statement(_div(lhs, zero), _div(rhs, zero), "undefined", f"({lhs} = {rhs}) over {zero}")
    if how == 2 and not matrix and kind == "true":
        zero = draw(st.sampled_from(INTEGER_ZEROS))
        return Statement(lhs, _add(rhs, _mul(zero, draw(total_expressions()))), "true", f"plus ({zero})*g")
    if how == 3 and not matrix and kind == "true":
        delta = draw(st.sampled_from([sp.Integer(1), Rational(1, 10**40), Float(1e-30), pi - Rational(355, 113)]))
        return Statement(lhs, _add(rhs, delta), "false", f"plus {delta}")
    return Statement(lhs, rhs, kind, "tricky family")


statements = st.one_of(statements, tricky_statement())


@st.composite
def deep_statement(draw):
    """A deeper random expression against itself plus a zero in disguise (true) or a small constant (false)."""
    e = draw(expressions(3))
    u = draw(st.sampled_from([x, y]))
    if draw(st.booleans()):
        zd = draw(st.sampled_from(zeros_in_disguise(u) + ZEROS_IN_THE_FRAGMENT[:6]))
        return Statement(e, _add(e, _mul(zd, draw(total_expressions()))), "true", f"deep e + ({zd})*g")
    delta = draw(st.sampled_from([sp.Integer(1), Rational(1, 10**30), near_zeros(u)[1], Float(2.0**-60)]))
    return Statement(e, _add(e, delta), "false", f"deep e + {delta}")
