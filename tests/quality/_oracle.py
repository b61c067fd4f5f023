"""An independent bottom-up evaluator of unevaluated SymPy trees, for the adversary suite.

It shares nothing with the engine: it walks the tree node by node, never calls
``doit``, ``simplify``, ``evalf`` or ``subs`` on it, and computes every value
either exactly or as a rigorous enclosure.

A value is a complex number held two ways at once:

* exactly, when it is ``q + c*pi`` with ``q`` and ``c`` Gaussian rationals
  (``Fraction`` real and imaginary parts) -- enough to see that ``sin(pi)``,
  ``cos(pi/2)``, ``x - 1/3`` at ``x = 1/3`` or an unevaluated ``Pow(0, -1)`` hit
  a zero or a pole *exactly*;
* always as a rectangle of two ``mpmath.iv`` intervals (real and imaginary part).

Evaluation ends in one of three ways:

* a value (of a scalar, or a list of rows of values for a matrix);
* :class:`Undefined` -- some subterm is certainly undefined: a division by an
  exact zero, a pole hit exactly (``log(0)``, ``gamma(-2)``, ``zeta(1)``,
  ``tan(pi/2)``, ``asec(0)``, ``atan2(0, 0)``, ``Mod(y, 0)``), an infinity or
  ``nan`` anywhere, a singular matrix inverted, a piecewise with no branch;
* :class:`Unknown` -- the evaluator cannot decide (a denominator enclosure that
  contains 0 without being exactly 0, a branch cut straddled, a construct it
  does not model).  *Unknown* is never used as *defined*.

Strict semantics: ``0*(1/0)`` is undefined because its subterm ``1/0`` is; only
the chosen branch of a ``Piecewise`` is evaluated.  ``Sum``/``Product`` with
integer bounds are iterated explicitly under Karr's convention (a sum with
``b < a - 1`` is ``-sum(b+1 .. a-1)``, a product ``1/prod(b+1 .. a-1)``).
``Indexed`` elements take their values from one table keyed by
``(base, evaluated indices)``, so equal indices always give equal values.
Floats denote their exact binary value (what a SymPy ``Float`` stores).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import sympy as sp
from mpmath import iv

__all__ = ["Undefined", "Unknown", "Unbound", "Value", "evaluate", "overlap", "disjoint", "exact_value", "DPS"]

DPS = 40                 # working precision of the enclosures (decimal digits)
MAX_TERMS = 400          # a Sum/Product with more terms than this is Unknown
MAX_EXACT_BITS = 4000    # exact rationals bigger than this continue as intervals
MAX_FACTORIAL = 300


class Undefined(Exception):
    """A subterm is certainly undefined at the point."""


class Unknown(Exception):
    """The evaluator cannot decide the value (or definedness) at the point."""


class Unbound(Exception):
    """A free symbol or an Indexed element has no value at the point."""


# -- Gaussian rationals and values ---------------------------------------------------------------

class GQ:
    """A Gaussian rational ``re + im*i``."""

    __slots__ = ("re", "im")

    def __init__(self, re, im=0):
        self.re, self.im = Fraction(re), Fraction(im)

    def __add__(self, o):
        return GQ(self.re + o.re, self.im + o.im)

    def __neg__(self):
        return GQ(-self.re, -self.im)

    def __sub__(self, o):
        return GQ(self.re - o.re, self.im - o.im)

    def __mul__(self, o):
        return GQ(self.re * o.re - self.im * o.im, self.re * o.im + self.im * o.re)

    def inverse(self):
        d = self.re * self.re + self.im * self.im
        return GQ(self.re / d, -self.im / d)

    def __bool__(self):
        return bool(self.re) or bool(self.im)

    def __eq__(self, o):
        return self.re == o.re and self.im == o.im

    def __hash__(self):
        return hash((self.re, self.im))

    def bits(self):
        return max(_bits(self.re), _bits(self.im))

    def __repr__(self):
        return f"GQ({self.re}, {self.im})"


def _bits(f: Fraction) -> int:
    return f.numerator.bit_length() + f.denominator.bit_length()


ZERO_GQ = GQ(0)


def _ivq(f: Fraction):
    """A rigorous enclosure of a rational."""
    if f.denominator == 1:
        return iv.mpf(f.numerator)
    return iv.mpf(f.numerator) / iv.mpf(f.denominator)


class Value:
    """A complex value: exact ``q + c*pi`` (``exact`` is ``(q, c)``) or only an enclosure ``(re, im)``."""

    __slots__ = ("exact", "re", "im")

    def __init__(self, re, im, exact=None):
        self.re, self.im, self.exact = re, im, exact

    @classmethod
    def of(cls, q: GQ, c: GQ = ZERO_GQ) -> "Value":
        if q.bits() > MAX_EXACT_BITS or c.bits() > MAX_EXACT_BITS:
            return cls(*_rect(q, c))
        return cls(*_rect(q, c), exact=(q, c))

    @classmethod
    def rational(cls, r) -> "Value":
        return cls.of(GQ(r))

    # exactness helpers
    @property
    def q(self):
        """The exact Gaussian rational, when the value is one (no pi part)."""
        if self.exact is not None and not self.exact[1]:
            return self.exact[0]
        return None

    def is_exact_zero(self) -> bool:
        return self.exact is not None and not self.exact[0] and not self.exact[1]

    def is_real(self) -> bool:
        if self.exact is not None:
            return self.exact[0].im == 0 and self.exact[1].im == 0
        return self.im.a == 0 and self.im.b == 0

    def certainly_nonzero(self) -> bool:
        if self.exact is not None:
            return bool(self.exact[0]) or bool(self.exact[1])
        return not (0 in self.re and 0 in self.im)

    def real_rational(self):
        """The value as a Fraction when it is an exact real rational, else None."""
        q = self.q
        if q is not None and q.im == 0:
            return q.re
        return None

    def __repr__(self):
        if self.exact is not None:
            q, c = self.exact
            return f"Value({q.re}+{q.im}i + ({c.re}+{c.im}i)pi)"
        return f"Value({self.re} + {self.im}i)"


def _rect(q: GQ, c: GQ):
    re, im = _ivq(q.re), _ivq(q.im)
    if c:
        re = re + _ivq(c.re) * iv.pi
        im = im + _ivq(c.im) * iv.pi
    return re, im


def _real(v: Value):
    """The real interval of a value that must be real (else Unknown)."""
    if not v.is_real():
        if v.exact is None and 0 in v.im:
            raise Unknown("cannot tell whether an argument is real")
        raise Unknown("a real-only function at a non-real argument")
    return v.re


# -- arithmetic ------------------------------------------------------------------------------------

def add(a: Value, b: Value) -> Value:
    if a.exact is not None and b.exact is not None:
        return Value.of(a.exact[0] + b.exact[0], a.exact[1] + b.exact[1])
    return Value(a.re + b.re, a.im + b.im)


def neg(a: Value) -> Value:
    if a.exact is not None:
        return Value.of(-a.exact[0], -a.exact[1])
    return Value(-a.re, -a.im)


def mul(a: Value, b: Value) -> Value:
    if a.is_exact_zero() or b.is_exact_zero():
        return Value.rational(0)
    if a.exact is not None and b.exact is not None and (not a.exact[1] or not b.exact[1]):
        (qa, ca), (qb, cb) = a.exact, b.exact
        return Value.of(qa * qb, qa * cb + ca * qb)
    return Value(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)


def inverse(a: Value) -> Value:
    if a.is_exact_zero():
        raise Undefined("division by zero")
    q = a.q
    if q is not None:
        return Value.of(q.inverse())
    if a.is_real():
        if 0 in a.re:
            raise Unknown("a denominator's enclosure contains 0")
        return Value(1 / a.re, iv.mpf(0))
    d = a.re * a.re + a.im * a.im
    if 0 in d:
        raise Unknown("a denominator's enclosure contains 0")
    return Value(a.re / d, -a.im / d)


def div(a: Value, b: Value) -> Value:
    return mul(a, inverse(b))


def int_power(b: Value, e: int) -> Value:
    if e == 0:
        return Value.rational(1)
    if e < 0:
        return inverse(int_power(b, -e))
    q = b.q
    if q is not None and q.bits() * e <= MAX_EXACT_BITS:
        result, base, k = GQ(1), q, e
        while k:
            if k & 1:
                result = result * base
            base = base * base
            k >>= 1
        return Value.of(result)
    if b.is_real():
        return Value(b.re ** e, iv.mpf(0))
    result, base, k = Value.rational(1), b, e
    while k:
        if k & 1:
            result = mul(result, base)
        base = mul(base, base)
        k >>= 1
    return result


def _exact_root(f: Fraction, n: int):
    """The exact positive n-th root of a positive rational, or None."""
    def iroot(m):
        r = round(m ** (1.0 / n)) if m < 2**1000 else int(mpmath.root(m, n))
        for cand in (r - 1, r, r + 1):
            if cand >= 0 and cand**n == m:
                return cand
        return None
    p, s = iroot(f.numerator), iroot(f.denominator)
    return None if p is None or s is None else Fraction(p, s)


# -- elementary functions --------------------------------------------------------------------------

def exp(z: Value) -> Value:
    if z.is_exact_zero():
        return Value.rational(1)
    if z.exact is not None:
        q, c = z.exact
        if q == ZERO_GQ and c.re == 0 and (2 * c.im).denominator == 1:
            # exp(i*pi*t) with 2t an integer: one of 1, i, -1, -i
            quarter = int(2 * c.im) % 4
            return Value.of([GQ(1), GQ(0, 1), GQ(-1), GQ(0, -1)][quarter])
    if z.is_real():
        return Value(iv.exp(z.re), iv.mpf(0))
    m = iv.exp(z.re)
    return Value(m * iv.cos(z.im), m * iv.sin(z.im))


def _pi_multiple(z: Value):
    """t when z is exactly t*pi with t a real rational, else None."""
    if z.exact is None:
        return None
    q, c = z.exact
    if q == ZERO_GQ and c.im == 0:
        return c.re
    return None


def sin(z: Value) -> Value:
    t = _pi_multiple(z)
    if t is not None and (2 * t).denominator == 1:
        return Value.rational([0, 1, 0, -1][int(2 * t) % 4])
    if z.is_real():
        return Value(iv.sin(z.re), iv.mpf(0))
    ep, em = iv.exp(z.im), iv.exp(-z.im)
    return Value(iv.sin(z.re) * (ep + em) / 2, iv.cos(z.re) * (ep - em) / 2)


def cos(z: Value) -> Value:
    t = _pi_multiple(z)
    if t is not None and (2 * t).denominator == 1:
        return Value.rational([1, 0, -1, 0][int(2 * t) % 4])
    if z.is_real():
        return Value(iv.cos(z.re), iv.mpf(0))
    ep, em = iv.exp(z.im), iv.exp(-z.im)
    return Value(iv.cos(z.re) * (ep + em) / 2, -iv.sin(z.re) * (ep - em) / 2)


def log(z: Value) -> Value:
    if z.is_exact_zero():
        raise Undefined("log(0)")
    if z.q is not None and z.q == GQ(1):
        return Value.rational(0)
    if z.is_real():
        if z.re.a > 0:
            return Value(iv.log(z.re), iv.mpf(0))
        if z.re.b < 0:
            return Value(iv.log(-z.re), +iv.pi)  # unary + fixes the lazy constant at this precision
        raise Unknown("log of an enclosure containing 0")
    modulus2 = z.re * z.re + z.im * z.im
    if 0 in modulus2:
        raise Unknown("log near 0")
    if 0 in z.im and not z.re.a > 0:
        raise Unknown("log on its branch cut")
    return Value(iv.log(modulus2) / 2, _arg(z.im, z.re))


def _arg(y, x):
    """atan2 of intervals away from the branch cut (caller checked)."""
    if x.a > 0:
        return iv.atan2(y, x)
    if y.a > 0:
        return iv.pi / 2 - iv.atan2(x, y)  # arg = pi/2 - atan(x/y) for y > 0
    if y.b < 0:
        return -iv.pi / 2 - iv.atan2(-x, -y)  # arg = -pi/2 - atan(x/y) for y < 0
    raise Unknown("an argument on the branch cut")


def power(b: Value, e: Value) -> Value:
    r = e.real_rational()
    if r is not None and r.denominator == 1:
        return int_power(b, int(r))
    if b.is_exact_zero():
        if r is not None:
            if r > 0:
                return Value.rational(0)
            raise Undefined("0 to a negative power")
        if e.is_real():
            if e.re.a > 0:
                return Value.rational(0)
            if e.re.b < 0:
                raise Undefined("0 to a negative power")
        raise Unknown("0 to a power of unknown sign")
    if r is not None:
        bq = b.real_rational()
        if bq is not None and bq > 0:
            root = _exact_root(bq, r.denominator)
            if root is not None:
                return int_power(Value.rational(root), r.numerator)
        if b.is_real() and b.re.a > 0:
            return Value(iv.exp(iv.log(b.re) * _ivq(r)), iv.mpf(0))
    return exp(mul(e, log(b)))


def sqrt(z: Value) -> Value:
    return power(z, Value.rational(Fraction(1, 2)))


# -- the tree walk ---------------------------------------------------------------------------------

class Point:
    """Values of the free symbols and of the Indexed elements (one consistent table).

    ``symbols`` maps a Symbol to a SymPy number (or a Value); ``elements`` maps
    ``(base name, index tuple)`` to a Value; ``fresh`` (optional) makes up the
    value of an element the table lacks, and remembers it -- without it a
    missing element raises :class:`Unbound`.
    """

    def __init__(self, symbols, elements=None, fresh=None):
        self.symbols = {}
        for sym, val in symbols.items():
            self.symbols[sym] = val if isinstance(val, Value) else evaluate(sp.sympify(val), Point({}))
        self.elements = dict(elements or {})
        self.fresh = fresh

    def element(self, key):
        if key not in self.elements:
            if self.fresh is None:
                raise Unbound(f"the element {key[0]}{list(key[1])} has no value")
            self.elements[key] = self.fresh(key)
        return self.elements[key]

    def bind(self, sym, value: Value) -> "Point":
        child = Point.__new__(Point)
        child.symbols = {**self.symbols, sym: value}
        child.elements = self.elements  # shared: one table for the whole statement
        child.fresh = self.fresh
        return child


def evaluate(expr, point: Point, dps: int = DPS):
    """The Value (or list of rows of Values, for a matrix) of ``expr`` at ``point``."""
    saved = iv.dps
    iv.dps = dps
    try:
        return _eval(expr, point)
    except (RecursionError, OverflowError, MemoryError) as err:
        raise Unknown(f"too large to evaluate ({type(err).__name__})") from None
    finally:
        iv.dps = saved


def _eval(expr, pt):
    if isinstance(expr, (int, Fraction)):
        return Value.rational(expr)
    if isinstance(expr, bool):
        raise Unknown("a Python bool")
    for cls in type(expr).__mro__:
        rule = _RULES.get(cls)
        if rule is not None:
            return rule(expr, pt)
    raise Unknown(f"no rule for {type(expr).__name__}")


def _scalar(expr, pt) -> Value:
    v = _eval(expr, pt)
    if isinstance(v, list):
        raise Unknown("a matrix where a scalar was expected")
    return v


def _integer_of(v: Value) -> int:
    r = v.real_rational()
    if r is None:
        # an enclosure of an integer-valued subterm: only if it pins one integer
        if v.exact is None and v.is_real() and math.floor(v.re.a) == math.ceil(v.re.b):
            return int(math.floor(v.re.a))
        raise Unknown("an index or bound that is not an exact number")
    if r.denominator != 1:
        raise Unknown("a non-integer bound")
    return int(r)


def _float(expr, pt):
    sign, man, exp_, _ = expr._mpf_
    if man == 0 and exp_ != 0:
        raise Undefined("a Float infinity or nan")
    value = Fraction(man) * (Fraction(2) ** exp_)
    return Value.rational(-value if sign else value)


def _symbol(expr, pt):
    if expr.is_commutative is False:
        raise Unknown(f"the non-commutative symbol {expr} is not a number")
    if expr in pt.symbols:
        return pt.symbols[expr]
    raise Unbound(f"the symbol {expr} has no value")


def _add(expr, pt):
    total = Value.rational(0)
    for arg in expr.args:
        total = add(total, _scalar(arg, pt))
    return total


def _mul(expr, pt):
    scalars, matrices = [], []
    for arg in expr.args:
        v = _eval(arg, pt)
        (matrices if isinstance(v, list) else scalars).append(v)
    total = Value.rational(1)
    for v in scalars:
        total = mul(total, v)
    if not matrices:
        return total
    result = matrices[0]
    for m in matrices[1:]:
        result = _matmul(result, m)
    return _scale(total, result)


def _pow(expr, pt):
    base, e = expr.args
    b = _eval(base, pt)
    ev = _scalar(e, pt)
    if isinstance(b, list):
        return _matrix_power(b, ev)
    if base is sp.E:
        return exp(ev)
    return power(b, ev)


def _undefined(expr, pt):
    raise Undefined(f"{expr} is not a finite number")


def _unknown(expr, pt):
    raise Unknown(f"{type(expr).__name__} is not modelled")


def _func(f):
    def rule(expr, pt):
        return f(*[_scalar(a, pt) for a in expr.args])
    return rule


def _real_monotone(f_iv, lo=None, hi=None):
    """A real function, increasing, defined on [lo, hi] (None: unbounded)."""
    def rule(v: Value) -> Value:
        x = _real(v)
        if (lo is not None and x.a < lo) or (hi is not None and x.b > hi):
            raise Unknown("outside the real domain modelled")
        return Value(f_iv(x), iv.mpf(0))
    return rule


def _atan_iv(x):
    return iv.atan2(x, iv.mpf(1))


def _asin_iv(x):
    return iv.atan2(x, iv.sqrt(iv.mpf(1) - x * x))


def _acos(v: Value) -> Value:
    x = _real(v)
    if x.a < -1 or x.b > 1:
        raise Unknown("acos outside [-1, 1]")
    return Value(iv.atan2(iv.sqrt(iv.mpf(1) - x * x), x), iv.mpf(0))


def _atan(v: Value) -> Value:
    if v.q is not None and v.q.re == 0 and abs(v.q.im) == 1:
        raise Undefined("atan(+-i)")
    return _real_monotone(_atan_iv)(v)


def _tan(v):
    return div(sin(v), cos(v))


def _cot(v):
    return div(cos(v), sin(v))


def _sec(v):
    return inverse(cos(v))


def _csc(v):
    return inverse(sin(v))


def _sinh(v):
    return div(add(exp(v), neg(exp(neg(v)))), Value.rational(2))


def _cosh(v):
    return div(add(exp(v), exp(neg(v))), Value.rational(2))


def _tanh(v):
    return div(_sinh(v), _cosh(v))


def _coth(v):
    return div(_cosh(v), _sinh(v))


def _asinh(v):
    x = _real(v)
    return Value(iv.log(x + iv.sqrt(x * x + 1)), iv.mpf(0))


def _acosh(v):
    x = _real(v)
    if x.a < 1:
        raise Unknown("acosh below 1")
    return Value(iv.log(x + iv.sqrt(x * x - 1)), iv.mpf(0))


def _atanh(v):
    r = v.real_rational()
    if r is not None and abs(r) == 1:
        raise Undefined("atanh(+-1)")
    x = _real(v)
    if x.a <= -1 or x.b >= 1:
        raise Unknown("atanh outside (-1, 1)")
    return Value(iv.log((1 + x) / (1 - x)) / 2, iv.mpf(0))


def _acot(v):
    if v.is_exact_zero():
        return Value.of(ZERO_GQ, GQ(Fraction(1, 2)))
    return _atan(inverse(v))


def _asec(v):
    return _acos(inverse(v))


def _acsc(v):
    return _real_monotone(_asin_iv, -1, 1)(inverse(v))


def _abs(v):
    q = v.q
    if q is not None and q.im == 0:
        return Value.rational(abs(q.re))
    if v.is_real():
        x = v.re
        if x.a >= 0:
            return Value(x, iv.mpf(0))
        if x.b <= 0:
            return Value(-x, iv.mpf(0))
        return Value(iv.mpf([0, max(-x.a, x.b)]), iv.mpf(0))
    if q is not None:
        return sqrt(Value.rational(q.re * q.re + q.im * q.im))
    return Value(iv.sqrt(v.re * v.re + v.im * v.im), iv.mpf(0))


def _sign_real(x_value: Value) -> Value:
    r = x_value.real_rational()
    if r is not None:
        return Value.rational((r > 0) - (r < 0))
    x = _real(x_value)
    if x.a > 0:
        return Value.rational(1)
    if x.b < 0:
        return Value.rational(-1)
    raise Unknown("sign of an enclosure containing 0")


def _sign(v):
    if v.is_real():
        return _sign_real(v)
    if v.is_exact_zero():
        return Value.rational(0)
    return div(v, _abs(v))


def _floor_value(v: Value) -> int:
    r = v.real_rational()
    if r is not None:
        return math.floor(r)
    x = _real(v)
    lo, hi = int(mpmath.floor(x.a)), int(mpmath.floor(x.b))
    if lo != hi:
        raise Unknown("floor of an enclosure that spans an integer")
    return lo


def _floor(v):
    return Value.rational(_floor_value(v))


def _ceiling(v):
    return Value.rational(-_floor_value(neg(v)))


def _frac(v):
    return add(v, Value.rational(-_floor_value(v)))


def _mod(p: Value, q: Value) -> Value:
    if q.is_exact_zero():
        raise Undefined("Mod(p, 0)")
    _real(p), _real(q)
    quotient = div(p, q)
    return add(p, neg(mul(q, Value.rational(_floor_value(quotient)))))


def _extremum(expr, pt, pick):
    values = [_scalar(a, pt) for a in expr.args]
    rationals = [v.real_rational() for v in values]
    if all(r is not None for r in rationals):
        return Value.rational(pick(rationals))
    xs = [_real(v) for v in values]
    lo = pick(x.a for x in xs)
    hi = pick(x.b for x in xs)
    return Value(iv.mpf([lo, hi]), iv.mpf(0))


def _heaviside(expr, pt):
    x = _scalar(expr.args[0], pt)
    if x.is_exact_zero():
        if len(expr.args) < 2:
            return Value.rational(Fraction(1, 2))
        return _scalar(expr.args[1], pt)
    s = _sign_real(x).real_rational()
    return Value.rational(1 if s > 0 else 0)


def _kronecker(expr, pt):
    a, b = (_scalar(t, pt) for t in expr.args[:2])
    if a.exact is not None and b.exact is not None:
        return Value.rational(1 if a.exact == b.exact else 0)
    if not overlap(a, b):
        return Value.rational(0)
    raise Unknown("KroneckerDelta of enclosures that overlap")


def _gamma_value(v: Value) -> Value:
    r = v.real_rational()
    if r is not None and r.denominator == 1:
        if r <= 0:
            raise Undefined("gamma at a pole")
        if r <= MAX_FACTORIAL:
            return Value.rational(math.factorial(int(r) - 1))
    x = _real(v)
    if x.a <= 0 and (mpmath.floor(x.a) != mpmath.floor(x.b) or mpmath.floor(x.a) == x.a):
        raise Unknown("gamma near a pole")
    return Value(iv.gamma(x), iv.mpf(0))


def _factorial(v: Value) -> Value:
    r = v.real_rational()
    if r is not None and r.denominator == 1:
        if r < 0:
            raise Undefined("factorial of a negative integer")
        if r <= MAX_FACTORIAL:
            return Value.rational(math.factorial(int(r)))
    return _gamma_value(add(v, Value.rational(1)))


def _binomial(n: Value, k: Value) -> Value:
    kr = k.real_rational()
    if kr is None or kr.denominator != 1:
        raise Unknown("binomial with a non-integer k")
    kk = int(kr)
    if kk < 0:
        nr = n.real_rational()
        if nr is not None and nr.denominator == 1:
            return Value.rational(0)  # SymPy's convention: binomial(n, k) = 0 for integer n and k < 0
        raise Unknown("binomial(n, negative k) with n not an integer")
    if kk > MAX_FACTORIAL:
        raise Unknown("binomial with a large k")
    total = Value.rational(1)
    for j in range(kk):
        total = mul(total, add(n, Value.rational(-j)))
    return div(total, Value.rational(math.factorial(kk)))


def _zeta(v: Value) -> Value:
    r = v.real_rational()
    if r is not None and r.denominator == 1:
        s = int(r)
        if s == 1:
            raise Undefined("zeta(1)")
        if s <= 0:
            if -s > 200:
                raise Unknown("zeta far left")
            return Value.rational(-Fraction(mpmath.bernfrac(1 - s)[0], mpmath.bernfrac(1 - s)[1]) / (1 - s)
                                  if s != 0 else Fraction(-1, 2))
        if s % 2 == 0 and s <= 200:
            p, q = mpmath.bernfrac(s)
            coeff = Fraction((-1) ** (s // 2 + 1) * p * 2 ** (s - 1), q * math.factorial(s))
            return mul(Value.rational(coeff), Value(iv.pi ** s, iv.mpf(0)))
    raise Unknown("zeta away from the integers")


def _atan2(y: Value, x: Value) -> Value:
    if y.is_exact_zero() and x.is_exact_zero():
        raise Undefined("atan2(0, 0)")
    yi, xi = _real(y), _real(x)
    if y.is_exact_zero():
        xr = _sign_real(x).real_rational()
        return Value.rational(0) if xr > 0 else Value.of(ZERO_GQ, GQ(1))
    if 0 in yi and not xi.a > 0:
        raise Unknown("atan2 near its branch cut")
    return Value(_arg(yi, xi), iv.mpf(0))


def _re(v):
    if v.exact is not None:
        q, c = v.exact
        return Value.of(GQ(q.re), GQ(c.re))
    return Value(v.re, iv.mpf(0))


def _im(v):
    if v.exact is not None:
        q, c = v.exact
        return Value.of(GQ(q.im), GQ(c.im))
    return Value(v.im, iv.mpf(0))


def _conjugate(v):
    if v.exact is not None:
        q, c = v.exact
        return Value.of(GQ(q.re, -q.im), GQ(c.re, -c.im))
    return Value(v.re, -v.im)


def _arg_value(v):
    if v.is_exact_zero():
        raise Undefined("arg(0)")
    if v.is_real():
        s = _sign_real(v).real_rational()
        return Value.rational(0) if s > 0 else Value.of(ZERO_GQ, GQ(1))
    return Value(_arg(v.im, v.re), iv.mpf(0))


# -- Piecewise and conditions ----------------------------------------------------------------------

def _truth(cond, pt) -> bool:
    if cond is sp.true or cond is True:
        return True
    if cond is sp.false or cond is False:
        return False
    if isinstance(cond, sp.And):
        return all(_truth(c, pt) for c in cond.args)
    if isinstance(cond, sp.Or):
        return any(_truth(c, pt) for c in cond.args)
    if isinstance(cond, sp.Not):
        return not _truth(cond.args[0], pt)
    if isinstance(cond, sp.ITE):  # SymPy writes nested Piecewise conditions this way
        return _truth(cond.args[1] if _truth(cond.args[0], pt) else cond.args[2], pt)
    if isinstance(cond, sp.Xor):
        return sum(_truth(c, pt) for c in cond.args) % 2 == 1
    if isinstance(cond, sp.Implies):
        return (not _truth(cond.args[0], pt)) or _truth(cond.args[1], pt)
    if isinstance(cond, sp.Equivalent):
        return len({_truth(c, pt) for c in cond.args}) == 1
    if isinstance(cond, (sp.Eq, sp.Ne)):
        a, b = (_scalar(t, pt) for t in cond.args)
        if a.exact is not None and b.exact is not None:
            equal = a.exact == b.exact
        elif not overlap(a, b):
            equal = False
        else:
            raise Unknown("an equality of enclosures that overlap")
        return equal if isinstance(cond, sp.Eq) else not equal
    if isinstance(cond, (sp.Lt, sp.Le, sp.Gt, sp.Ge)):
        a, b = (_scalar(t, pt) for t in cond.args)
        d = add(a, neg(b))
        r = d.real_rational()
        if r is None:
            x = _real(d)
            if x.a > 0:
                r = 1
            elif x.b < 0:
                r = -1
            else:
                raise Unknown("an inequality of enclosures that overlap")
        return {sp.Lt: r < 0, sp.Le: r <= 0, sp.Gt: r > 0, sp.Ge: r >= 0}[type(cond)]
    raise Unknown(f"a condition {type(cond).__name__}")


def _piecewise(expr, pt):
    for branch, cond in expr.args:
        if _truth(cond, pt):
            return _eval(branch, pt)
    raise Undefined("no Piecewise branch applies")


# -- sums and products -----------------------------------------------------------------------------

def _bounds(limit, pt):
    if len(limit) != 3:
        raise Unknown("a limit without both bounds")
    var, lo, hi = limit
    if any(bound.has(sp.oo, -sp.oo, sp.zoo) for bound in (lo, hi)):
        raise Unknown("a series (an infinite bound) is not modelled")  # it may converge: never "undefined"
    return var, _integer_of(_scalar(lo, pt)), _integer_of(_scalar(hi, pt))


def _sum(expr, pt):
    return _iterate(expr.function, list(expr.limits), pt, product=False)


def _product(expr, pt):
    return _iterate(expr.function, list(expr.limits), pt, product=True)


def _iterate(function, limits, pt, product):
    if not limits:
        return _scalar(function, pt)
    *inner, outer = limits
    var, lo, hi = _bounds(outer, pt)
    flip = hi < lo - 1      # Karr: sum(a..b) = -sum(b+1..a-1), prod(a..b) = 1/prod(b+1..a-1)
    if flip:
        lo, hi = hi + 1, lo - 1
    if hi - lo + 1 > MAX_TERMS:
        raise Unknown("too many terms")
    total = Value.rational(1 if product else 0)
    for k in range(lo, hi + 1):
        term = _iterate(function, inner, pt.bind(var, Value.rational(k)), product)
        total = mul(total, term) if product else add(total, term)
    if flip:
        total = inverse(total) if product else neg(total)
    return total


# -- Indexed ---------------------------------------------------------------------------------------

def _indexed(expr, pt):
    indices = []
    for idx in expr.indices:
        v = _scalar(idx, pt)
        if v.exact is None:
            raise Unknown("an index that is not exact")
        indices.append(v.exact)
    return pt.element((expr.base.label, tuple(indices)))  # the label Symbol, with its assumptions


def _applied_undef(expr, pt):
    """f(x) of an undefined function: one table per function, keyed by the exact values of its arguments."""
    args = []
    for arg in expr.args:
        v = _scalar(arg, pt)
        if v.exact is None:
            raise Unknown("an undefined function at an argument that is not exact")
        args.append(v.exact)
    return pt.element((expr.func, tuple(args)))


# -- matrices --------------------------------------------------------------------------------------

def _shape(m):
    return len(m), (len(m[0]) if m else 0)


def _explicit(expr, pt):
    rows, cols = expr.shape
    return [[_scalar(expr[i, j], pt) for j in range(cols)] for i in range(rows)]


def _matrix(expr, pt):
    m = _eval(expr, pt)
    if not isinstance(m, list):
        raise Unknown("a scalar where a matrix was expected")
    return m


def _matmul(a, b):
    (r, k), (k2, c) = _shape(a), _shape(b)
    if k != k2:
        raise Unknown("MatMul of mismatched shapes")
    out = []
    for i in range(r):
        row = []
        for j in range(c):
            total = Value.rational(0)
            for t in range(k):
                total = add(total, mul(a[i][t], b[t][j]))
            row.append(total)
        out.append(row)
    return out


def _scale(s: Value, m):
    return [[mul(s, v) for v in row] for row in m]


def _matmul_rule(expr, pt):
    return _mul(expr, pt)


def _matadd(expr, pt):
    mats = [_matrix(a, pt) for a in expr.args]
    shape = _shape(mats[0])
    if any(_shape(m) != shape for m in mats):
        raise Unknown("MatAdd of mismatched shapes")
    out = mats[0]
    for m in mats[1:]:
        out = [[add(u, v) for u, v in zip(r1, r2)] for r1, r2 in zip(out, m)]
    return out


def _hadamard(expr, pt):
    mats = [_matrix(a, pt) for a in expr.args]
    shape = _shape(mats[0])
    if any(_shape(m) != shape for m in mats):
        raise Unknown("HadamardProduct of mismatched shapes")
    out = mats[0]
    for m in mats[1:]:
        out = [[mul(u, v) for u, v in zip(r1, r2)] for r1, r2 in zip(out, m)]
    return out


def _kronecker_product(expr, pt):
    mats = [_matrix(a, pt) for a in expr.args]
    out = mats[0]
    for m in mats[1:]:
        (r1, c1), (r2, c2) = _shape(out), _shape(m)
        out = [[mul(out[i // r2][j // c2], m[i % r2][j % c2]) for j in range(c1 * c2)] for i in range(r1 * r2)]
    return out


def _transpose(expr, pt):
    m = _matrix(expr.args[0], pt)
    return [list(col) for col in zip(*m)]


def _adjoint(expr, pt):
    m = _matrix(expr.args[0], pt)
    return [[_conjugate(v) for v in col] for col in zip(*m)]


def _conjugate_rule(expr, pt):
    v = _eval(expr.args[0], pt)
    if isinstance(v, list):
        return [[_conjugate(e) for e in row] for row in v]
    return _conjugate(v)


def _identity(n):
    return [[Value.rational(int(i == j)) for j in range(n)] for i in range(n)]


def _invert(m):
    """Gauss-Jordan with certified pivots: exact singular -> Undefined, undecidable -> Unknown."""
    n, c = _shape(m)
    if n != c:
        raise Unknown("inverse of a non-square matrix")
    a = [row[:] + ident for row, ident in zip(m, _identity(n))]
    for col in range(n):
        pivot = next((r for r in range(col, n) if a[r][col].certainly_nonzero()), None)
        if pivot is None:
            if all(a[r][col].is_exact_zero() for r in range(col, n)):
                raise Undefined("a singular matrix inverted")
            raise Unknown("a pivot that cannot be certified non-zero")
        a[col], a[pivot] = a[pivot], a[col]
        inv = inverse(a[col][col])
        a[col] = [mul(inv, v) for v in a[col]]
        for r in range(n):
            if r != col and not a[r][col].is_exact_zero():
                f = a[r][col]
                a[r] = [add(v, neg(mul(f, p))) for v, p in zip(a[r], a[col])]
    return [row[n:] for row in a]


def _inverse_rule(expr, pt):
    return _invert(_matrix(expr.args[0], pt))


def _matrix_power(m, e: Value):
    r = e.real_rational()
    if r is None or r.denominator != 1:
        raise Unknown("a matrix power that is not an integer")
    k = int(r)
    n, c = _shape(m)
    if n != c:
        raise Unknown("a power of a non-square matrix")
    if abs(k) > 64:
        raise Unknown("a large matrix power")
    base = _invert(m) if k < 0 else m
    out = _identity(n)
    for _ in range(abs(k)):
        out = _matmul(out, base)
    return out


def _matpow(expr, pt):
    base, e = expr.args
    return _matrix_power(_matrix(base, pt), _scalar(e, pt))


def _block(expr, pt):
    blocks = expr.blocks
    out = []
    for bi in range(blocks.shape[0]):
        row_blocks = [_matrix(blocks[bi, bj], pt) for bj in range(blocks.shape[1])]
        height = _shape(row_blocks[0])[0]
        if any(_shape(b)[0] != height for b in row_blocks):
            raise Unknown("ragged BlockMatrix")
        for i in range(height):
            out.append([v for b in row_blocks for v in b[i]])
    if len({len(r) for r in out}) > 1:
        raise Unknown("ragged BlockMatrix")
    return out


def _concrete_shape(expr):
    rows, cols = expr.shape
    if not (isinstance(rows, (int, sp.Integer)) and isinstance(cols, (int, sp.Integer))):
        raise Unknown("a symbolic shape")
    return int(rows), int(cols)


def _matrix_symbol(expr, pt):
    """A matrix symbol is a table of independent elements, like an IndexedBase (one value per element)."""
    rows, cols = _concrete_shape(expr)
    name = expr
    return [[pt.element((name, ((GQ(r), ZERO_GQ), (GQ(s), ZERO_GQ)))) for s in range(cols)] for r in range(rows)]


def _zero_matrix(expr, pt):
    rows, cols = _concrete_shape(expr)
    return [[Value.rational(0)] * cols for _ in range(rows)]


def _one_matrix(expr, pt):
    rows, cols = _concrete_shape(expr)
    return [[Value.rational(1)] * cols for _ in range(rows)]


def _identity_rule(expr, pt):
    return _identity(_concrete_shape(expr)[0])


def _matrix_element(expr, pt):
    m = _matrix(expr.args[0], pt)
    i, j = (_integer_of(_scalar(t, pt)) for t in expr.args[1:])
    if not (0 <= i < len(m) and 0 <= j < len(m[0])):
        raise Undefined("a matrix element out of range")
    return m[i][j]


def _trace(expr, pt):
    m = _matrix(expr.args[0], pt)
    total = Value.rational(0)
    for i in range(len(m)):
        total = add(total, m[i][i])
    return total


def _determinant_value(m):
    n = len(m)
    if n == 1:
        return m[0][0]
    total = Value.rational(0)
    for j in range(n):
        minor = [row[:j] + row[j + 1:] for row in m[1:]]
        term = mul(m[0][j], _determinant_value(minor))
        total = add(total, term if j % 2 == 0 else neg(term))
    return total


def _determinant(expr, pt):
    m = _matrix(expr.args[0], pt)
    if _shape(m)[0] != _shape(m)[1] or len(m) > 6:
        raise Unknown("determinant not modelled")
    return _determinant_value(m)


def _number_symbol(value):
    def rule(expr, pt):
        return Value(+value(), iv.mpf(0))  # unary + evaluates the lazy constant now, at this precision
    return rule


_RULES = {
    sp.Rational: lambda e, pt: Value.rational(Fraction(int(e.p), int(e.q))),
    sp.Float: _float,
    sp.core.numbers.Pi: lambda e, pt: Value.of(ZERO_GQ, GQ(1)),
    sp.core.numbers.ImaginaryUnit: lambda e, pt: Value.of(GQ(0, 1)),
    sp.core.numbers.Exp1: _number_symbol(lambda: iv.e),
    sp.core.numbers.GoldenRatio: _number_symbol(lambda: (1 + iv.sqrt(5)) / 2),
    sp.core.numbers.EulerGamma: _number_symbol(lambda: iv.euler),
    sp.core.numbers.Infinity: _undefined,
    sp.core.numbers.NegativeInfinity: _undefined,
    sp.core.numbers.ComplexInfinity: _undefined,
    sp.core.numbers.NaN: _undefined,
    sp.Symbol: _symbol,
    sp.Indexed: _indexed,
    sp.Add: _add,
    sp.Mul: _mul,
    sp.Pow: _pow,
    sp.exp: _func(exp),
    sp.log: lambda e, pt: (_func(log)(e, pt) if len(e.args) == 1
                           else div(log(_scalar(e.args[0], pt)), log(_scalar(e.args[1], pt)))),
    sp.sin: _func(sin),
    sp.cos: _func(cos),
    sp.tan: _func(_tan),
    sp.cot: _func(_cot),
    sp.sec: _func(_sec),
    sp.csc: _func(_csc),
    sp.asin: _func(_real_monotone(_asin_iv, -1, 1)),
    sp.acos: _func(_acos),
    sp.atan: _func(_atan),
    sp.acot: _func(_acot),
    sp.asec: _func(_asec),
    sp.acsc: _func(_acsc),
    sp.atan2: _func(_atan2),
    sp.sinh: _func(_sinh),
    sp.cosh: _func(_cosh),
    sp.tanh: _func(_tanh),
    sp.coth: _func(_coth),
    sp.sech: _func(lambda v: inverse(_cosh(v))),
    sp.csch: _func(lambda v: inverse(_sinh(v))),
    sp.asinh: _func(_asinh),
    sp.acosh: _func(_acosh),
    sp.atanh: _func(_atanh),
    sp.Abs: _func(_abs),
    sp.sign: _func(_sign),
    sp.floor: _func(_floor),
    sp.ceiling: _func(_ceiling),
    sp.frac: _func(_frac),
    sp.Mod: _func(_mod),
    sp.Max: lambda e, pt: _extremum(e, pt, max),
    sp.Min: lambda e, pt: _extremum(e, pt, min),
    sp.Heaviside: _heaviside,
    sp.KroneckerDelta: _kronecker,
    sp.gamma: _func(_gamma_value),
    sp.factorial: _func(_factorial),
    sp.binomial: _func(_binomial),
    sp.zeta: lambda e, pt: _zeta(_scalar(e.args[0], pt)) if len(e.args) == 1 else _unknown(e, pt),
    sp.re: _func(_re),
    sp.im: _func(_im),
    sp.conjugate: _conjugate_rule,
    sp.arg: _func(_arg_value),
    sp.Piecewise: _piecewise,
    sp.Sum: _sum,
    sp.Product: _product,
    sp.MatrixBase: _explicit,
    sp.MatMul: _matmul_rule,
    sp.MatAdd: _matadd,
    sp.HadamardProduct: _hadamard,
    sp.KroneckerProduct: _kronecker_product,
    sp.Transpose: _transpose,
    sp.Adjoint: _adjoint,
    sp.Inverse: _inverse_rule,
    sp.MatPow: _matpow,
    sp.BlockMatrix: _block,
    sp.MatrixSymbol: _matrix_symbol,
    sp.ZeroMatrix: _zero_matrix,
    sp.OneMatrix: _one_matrix,
    sp.Identity: _identity_rule,
    sp.matrices.expressions.matexpr.MatrixElement: _matrix_element,
    sp.Trace: _trace,
    sp.Determinant: _determinant,
    sp.core.function.AppliedUndef: _applied_undef,
    sp.Basic: _unknown,   # everything else: not modelled (never "defined")
}


# -- comparisons -----------------------------------------------------------------------------------

def _overlap_iv(a, b):
    return not (a.b < b.a or b.b < a.a)


def overlap(a: Value, b: Value) -> bool:
    """The two enclosures may be equal (exact values compared exactly)."""
    if a.exact is not None and b.exact is not None:
        return a.exact[0] == b.exact[0] and a.exact[1] == b.exact[1]
    return _overlap_iv(a.re, b.re) and _overlap_iv(a.im, b.im)


def disjoint(a, b) -> bool:
    """Certainly different: some entry's enclosures are disjoint (or exact values differ)."""
    if isinstance(a, list) != isinstance(b, list):
        raise Unknown("a matrix compared with a scalar")
    if isinstance(a, list):
        if _shape(a) != _shape(b):
            raise Unknown("matrices of different shapes")
        return any(disjoint(u, v) for ra, rb in zip(a, b) for u, v in zip(ra, rb))
    return not overlap(a, b)


def exact_value(expr):
    """The Value of a symbol-free SymPy number (a witness value), or raises."""
    return evaluate(sp.sympify(expr), Point({}))
