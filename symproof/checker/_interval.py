"""Rigorous enclosures of closed numeric SymPy expressions, in mpmath's interval context.

``enclose(value)`` returns a complex enclosure ``(re, im)`` of two ``mpmath.iv``
intervals that certainly contain the real and imaginary parts of ``value``, or
``None`` when it cannot vouch for one.  It never guesses:

* only the nodes listed in ``_FUNCTIONS`` (and ``+``, ``*``, powers, the
  constants ``pi``, ``E``, ``I``) are evaluated; anything else (integrals,
  ``polylog``, ``LambertW``, ``loggamma``...) gives ``None``;
* a discontinuous function (``sign``, ``floor``, ``ceiling``, ``Abs`` of a
  complex value, ``Piecewise`` and relational conditions, ``Heaviside``) is
  evaluated only when its argument is certified away from the discontinuity
  (an interval that excludes 0, or contains no integer);
* a function with a branch cut or a restricted domain (``log``, ``sqrt`` and
  other non-integer powers, ``asin``, ``acos``, ``atanh``) is evaluated only on
  real arguments certified strictly inside the region where it is analytic;
* magnitudes are bounded (``|x| <= 10**6`` as an argument of ``exp``,
  integers below ``10**1000``), so ``exp(10**3000)`` is refused in microseconds
  instead of computed.

Why mpmath's ``iv`` rather than python-flint's arb balls: mpmath ships with
SymPy (no new dependency, no compiled wheel to trust per platform), its interval
arithmetic rounds outward at every operation, and the prover only needs a few
elementary functions at modest precision.  Exact values that SymPy evaluates
itself when the point is substituted (``sign(0) = 0``, ``floor(1/2) = 0``,
``asin(1) = pi/2``) never reach this module: they are exact already.

Longer than 600 lines: the enclosures are part of the trusted base; every function's
outward-rounding rule sits beside the rules it composes with, where a reviewer checks them
together.
"""

from __future__ import annotations

import math
import operator
from fractions import Fraction

import mpmath
import sympy as sp
from mpmath import iv

__all__ = ["enclose", "real_enclosure", "value_at", "certainly_nonzero", "certainly_finite", "certainly_different", "PRECISIONS"]

#: working precisions in bits, tried in order until the enclosure is narrow enough
PRECISIONS = (64, 256)

_MAX_EXP_ARGUMENT = 10**6
_MAX_INTEGER_DIGITS = 1000


class _Refuse(Exception):
    """The enclosure cannot be certified."""


_IV_ZERO, _IV_ONE = iv.mpf(0), iv.mpf(1)  # exact at every precision, immutable: built once


def _real(x):
    return (x, _IV_ZERO)


# raw endpoints (mpf tuples): comparing x.a with 0 converted 0 to an interval at every product
_ZERO_ENDPOINTS, _endpoint_sign = (mpmath.libmp.fzero, mpmath.libmp.fzero), mpmath.libmp.mpf_sign


def _is_real(z) -> bool:
    return z[1]._mpi_ == _ZERO_ENDPOINTS


def _positive(x) -> bool:
    return _endpoint_sign(x._mpi_[0]) > 0


def _negative(x) -> bool:
    return _endpoint_sign(x._mpi_[1]) < 0


def _nonzero(x) -> bool:
    return _positive(x) or _negative(x)


def _add(z, w):
    return (z[0] + w[0], z[1] + w[1])


def _mul(z, w):
    if _is_real(z) and _is_real(w):
        return _real(z[0] * w[0])
    return (z[0] * w[0] - z[1] * w[1], z[0] * w[1] + z[1] * w[0])


def _inverse(z):
    if _is_real(z):
        if not _nonzero(z[0]):
            raise _Refuse
        return _real(1 / z[0])
    norm = z[0] * z[0] + z[1] * z[1]
    if not _positive(norm):
        raise _Refuse
    return (z[0] / norm, -z[1] / norm)


def _power(z, n: int):
    if n < 0:
        return _power(_inverse(z), -n)
    result, base = _real(_IV_ONE), z
    while n:
        if n & 1:
            result = _mul(result, base)
        base = _mul(base, base)
        n >>= 1
    return result


def _exp(z):
    re, im = z
    if re.b > _MAX_EXP_ARGUMENT or re.a < -_MAX_EXP_ARGUMENT:
        raise _Refuse
    scale = iv.exp(re)
    if _is_real(z):
        return _real(scale)
    return (scale * iv.cos(im), scale * iv.sin(im))


def _cos(z):
    re, im = z
    if _is_real(z):
        return _real(iv.cos(re))
    return (iv.cos(re) * _cosh(im), -iv.sin(re) * _sinh(im))


def _sin(z):
    re, im = z
    if _is_real(z):
        return _real(iv.sin(re))
    return (iv.sin(re) * _cosh(im), iv.cos(re) * _sinh(im))


def _only_real(func):
    def wrapped(z):
        if not _is_real(z):
            raise _Refuse
        return _real(func(z[0]))
    return wrapped


def _log(x):
    if not _positive(x):  # the cut is the non-positive real axis
        raise _Refuse
    return iv.log(x)


def _sqrt(x):
    if not _positive(x):
        raise _Refuse
    return iv.sqrt(x)


def _inside_unit(x):
    if not (x.a > -1 and x.b < 1):
        raise _Refuse


def _asin(x):
    _inside_unit(x)
    return iv.atan2(x, iv.sqrt(1 - x * x))


def _acos(x):
    _inside_unit(x)
    return iv.pi / 2 - _asin(x)


def _atanh(x):
    _inside_unit(x)
    return (iv.log(1 + x) - iv.log(1 - x)) / 2


def _sign(x):
    if _positive(x):
        return iv.mpf(1)
    if _negative(x):
        return iv.mpf(-1)
    raise _Refuse


def _abs(z):
    if _is_real(z):
        x = z[0]
        if _positive(x):
            return _real(x)
        if _negative(x):
            return _real(-x)
        return _real(iv.mpf([0, max(abs(x.a), abs(x.b))]))  # |.| is continuous: a hull is fine
    return _real(iv.sqrt(z[0] * z[0] + z[1] * z[1]))


def _exact_floor(end) -> int:
    whole = int(end)  # truncation towards zero, exact
    return whole - 1 if end < 0 and end != whole else whole


def _floor(x):
    with mpmath.workprec(iv.prec + 16):  # the end points exactly, not rounded to 53 bits
        low, high = (mpmath.mpf(e) for e in x._mpi_)
        below = _exact_floor(low)
        if _exact_floor(high) != below or high == below or low == below:
            raise _Refuse  # an integer lies in [low, high]: floor jumps there
    return iv.mpf(below)


def _ceiling(x):
    return -_floor(-x)


def _tan(x):
    c = iv.cos(x)
    if not _nonzero(c):
        raise _Refuse
    return iv.sin(x) / c


def _atan(x):
    return iv.atan2(x, iv.mpf(1))


def _sinh(x):
    if x.b > _MAX_EXP_ARGUMENT or x.a < -_MAX_EXP_ARGUMENT:
        raise _Refuse
    return (iv.exp(x) - iv.exp(-x)) / 2


def _cosh(x):
    if x.b > _MAX_EXP_ARGUMENT or x.a < -_MAX_EXP_ARGUMENT:
        raise _Refuse
    return (iv.exp(x) + iv.exp(-x)) / 2


def _tanh(x):
    return _sinh(x) / _cosh(x)


_REAL_FUNCTIONS = {
    sp.asin: _asin,
    sp.acos: _acos,
    sp.atan: _atan,
    sp.atanh: _atanh,
    sp.tan: _tan,
    sp.sinh: _sinh,
    sp.cosh: _cosh,
    sp.tanh: _tanh,
}


_MAX_SUM_TERMS = 1000
_MAX_EXACT_BITS = 20000


def _bits(q: Fraction) -> int:
    return q.numerator.bit_length() + q.denominator.bit_length()


def _to_iv(q: Fraction):
    return iv.mpf(q.numerator) / q.denominator


def _complex(v):
    return _real(_to_iv(v)) if isinstance(v, Fraction) else v


class _Evaluator:
    """Bottom-up evaluation of an *unevaluated* tree at a point: every node is computed from
    its arguments' values, so a subterm that is undefined there (``1/x`` at ``x = 0`` inside
    ``1/(1 + 1/x)``, ``0 * (1/0)``) makes the whole value undefined, whatever SymPy's automatic
    evaluation would absorb.  A value is exact (a ``Fraction``: a real rational) while every
    argument is, else a complex enclosure ``(re, im)`` of ``mpmath.iv`` intervals."""

    def __init__(self, env, prec, record=None):
        self.env, self.prec, self.memo, self.record = env, prec, {}, record

    # -- exact/interval plumbing ---------------------------------------------------------------

    complex = staticmethod(_complex)

    def real_interval(self, v):
        if isinstance(v, Fraction):
            return _to_iv(v)
        if not _is_real(v):
            raise _Refuse
        return v[0]

    def value(self, node):
        key = node
        try:
            return self.memo[key]
        except KeyError:
            pass
        except TypeError:  # unhashable: not a SymPy node
            raise _Refuse from None
        result = self._value(node)
        self.memo[key] = result
        return result

    def _value(self, node):
        if node in self.env:
            return self.env[node]
        if isinstance(node, sp.Rational):
            q = Fraction(int(node.p), int(node.q))
            if _bits(q) > _MAX_EXACT_BITS:
                raise _Refuse
            return q
        if node is sp.pi:
            return _real(iv.pi)
        if node is sp.E:
            return _real(iv.e)
        if node is sp.I:
            return (iv.mpf(0), iv.mpf(1))
        handler = _HANDLERS.get(type(node))
        if handler is None:
            for cls, h in _FAMILY_HANDLERS:
                if isinstance(node, cls):
                    handler = h
                    break
        if handler is None:
            raise _Refuse  # not a node this evaluator knows: no value, never a guess
        return handler(self, node)

    # -- arithmetic ----------------------------------------------------------------------------

    def add(self, node):
        return _sum_values([self.value(a) for a in node.args])

    def mul(self, node):
        return _product_values([self.value(a) for a in node.args])

    def power(self, node):
        base, exp = node.args
        b, e = self.value(base), self.value(exp)
        if isinstance(e, Fraction) and e.denominator == 1:
            n = e.numerator
            if abs(n) > 10**5:
                raise _Refuse
            if isinstance(b, Fraction):
                if b == 0 and n < 0:
                    raise _Refuse  # a division by zero
                if b != 0 and abs(n) * _bits(b) > _MAX_EXACT_BITS:
                    raise _Refuse
                return b ** n
            return _power(b, n)
        if isinstance(b, Fraction) and b == 0:
            if isinstance(e, Fraction) and e > 0:
                return Fraction(0)
            raise _Refuse
        z = self.complex(b)
        if not _is_real(z):
            raise _Refuse
        if isinstance(e, Fraction) and e == Fraction(1, 2):
            if _negative(z[0]):  # the principal root of a negative real: i sqrt(-x)
                return (iv.mpf(0), _sqrt(-z[0]))
            return _real(_sqrt(z[0]))
        # x**y = exp(y log x) on the positive reals only (elsewhere a branch is chosen)
        return _exp(_mul(self.complex(e), _real(_log(z[0]))))

    # -- functions -----------------------------------------------------------------------------

    def exp(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction) and v == 0:
            return Fraction(1)
        return _exp(self.complex(v))

    def cos(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction) and v == 0:
            return Fraction(1)
        return _cos(self.complex(v))

    def sin(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction) and v == 0:
            return Fraction(0)
        return _sin(self.complex(v))

    def abs(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            return abs(v)
        return _abs(v)

    def sign(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            return Fraction((v > 0) - (v < 0))
        return _real(_sign(self.real_interval(v)))

    def floor(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            return Fraction(v.numerator // v.denominator)
        return _real(_floor(self.real_interval(v)))

    def ceiling(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            return Fraction(-((-v.numerator) // v.denominator))
        return _real(_ceiling(self.real_interval(v)))

    def heaviside(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            if v == 0:
                if len(node.args) < 2:
                    raise _Refuse
                at_zero = self.value(node.args[1])
                if not isinstance(at_zero, Fraction):
                    raise _Refuse
                return at_zero
            return Fraction(int(v > 0))
        x = self.real_interval(v)
        if _positive(x):
            return Fraction(1)
        if _negative(x):
            return Fraction(0)
        raise _Refuse

    def extremum(self, node):
        values = [self.value(a) for a in node.args]
        pick = max if isinstance(node, sp.Max) else min
        if all(isinstance(v, Fraction) for v in values):
            return pick(values)
        xs = [self.real_interval(v) for v in values]  # max/min are continuous: hull of the ends
        return _real(iv.mpf([pick(x.a for x in xs), pick(x.b for x in xs)]))

    def delta(self, node):
        a, b = (self.value(x) for x in node.args)
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            if a.denominator != 1 or b.denominator != 1:
                raise _Refuse  # the delta of non-integers is not a value the fragment gives
            return Fraction(int(a == b))
        raise _Refuse

    def integer_function(self, node):
        values = [self.value(a) for a in node.args]
        if not all(isinstance(v, Fraction) and v.denominator == 1 and abs(v) <= 1000 for v in values):
            raise _Refuse
        ints = [int(v) for v in values]
        if isinstance(node, sp.factorial):
            if ints[0] < 0:
                raise _Refuse
            return Fraction(math.factorial(ints[0]))
        n, k = ints
        if k < 0:
            return Fraction(0)
        numerator = 1
        for j in range(k):
            numerator *= n - j
        return Fraction(numerator, math.factorial(k))

    def log(self, node):
        """The principal logarithm: ``log|z| + i arg z`` with ``arg`` in ``(-pi, pi]``; on a real
        argument it is continuous on each half-line (``log(-x) + i pi`` on the negatives), off
        the real axis only where ``arg`` is (away from the negative half-line)."""
        v = self.value(node.args[0])
        if isinstance(v, Fraction):
            if v == 1:
                return Fraction(0)
            if v == 0:
                raise _Refuse
        z = self.complex(v)
        if _is_real(z):
            if _positive(z[0]):
                return _real(_log(z[0]))
            if _negative(z[0]):
                return (_log(-z[0]), iv.pi)
            raise _Refuse
        re, im = z
        if not (_positive(re) or _nonzero(im)):
            raise _Refuse  # near the cut
        return (iv.log(re * re + im * im) / 2, iv.atan2(im, re))

    def indexed(self, node):
        """An element of a table: bound at its own literal indices, else at the indices' values,
        else the table's constant value (the label bound: every element equal)."""
        indices = [self.value(i) for i in node.indices]
        if not all(isinstance(v, Fraction) and v.denominator == 1 for v in indices):
            raise _Refuse
        element = node.base[tuple(sp.Integer(int(v)) for v in indices)]
        if element in self.env:
            return self.env[element]
        if node.base.label in self.env:
            if self.record is not None:
                self.record[element] = node.base.label
            return self.env[node.base.label]
        raise _Refuse

    def gamma(self, node):
        v = self.value(node.args[0])
        if isinstance(v, Fraction) and v.denominator == 1:
            if v <= 0:
                raise _Refuse  # a pole
            if v > 1000:
                raise _Refuse
            return Fraction(math.factorial(int(v) - 1))
        x = self.real_interval(v)
        if not _positive(x) or x.b > 1000:
            raise _Refuse  # only certified away from the poles, on the positive reals
        return _real(iv.gamma(x))

    def real_part(self, node):
        v = self.value(node.args[0])
        return v if isinstance(v, Fraction) else _real(v[0])

    def imaginary_part(self, node):
        v = self.value(node.args[0])
        return Fraction(0) if isinstance(v, Fraction) else _real(v[1])

    def conjugate(self, node):
        v = self.value(node.args[0])
        return v if isinstance(v, Fraction) else (v[0], -v[1])

    def real_function(self, node):
        impl = _REAL_FUNCTIONS[type(node)]
        if len(node.args) != 1:
            raise _Refuse
        return _real(impl(self.real_interval(self.value(node.args[0]))))

    def piecewise(self, node):
        for expr, cond in node.args:
            if self.condition(cond):
                return self.value(expr)
        raise _Refuse  # no branch applies: undefined here

    def condition(self, cond):
        if cond is sp.true:
            return True
        if cond is sp.false:
            return False
        if isinstance(cond, sp.core.relational.Relational):
            return self.relational(cond)
        if isinstance(cond, sp.And):
            return all(self.condition(c) for c in cond.args)
        if isinstance(cond, sp.Or):
            return any(self.condition(c) for c in cond.args)
        if isinstance(cond, sp.Not):
            return not self.condition(cond.args[0])
        raise _Refuse

    def relational(self, node):
        left, right = self.value(node.lhs), self.value(node.rhs)
        if isinstance(left, Fraction) and isinstance(right, Fraction):
            return bool(_EXACT_RELATIONS[type(node)](left, right))
        x = self.real_interval(self.complex(left)) - self.real_interval(self.complex(right))
        if isinstance(node, sp.Equality):
            if _nonzero(x):
                return False
            raise _Refuse  # equality of non-exact values is not decidable by enclosure
        if isinstance(node, sp.Unequality):
            if _nonzero(x):
                return True
            raise _Refuse
        if isinstance(node, (sp.StrictGreaterThan, sp.GreaterThan)):
            if _positive(x):
                return True
            if _negative(x):
                return False
        if isinstance(node, (sp.StrictLessThan, sp.LessThan)):
            if _negative(x):
                return True
            if _positive(x):
                return False
        raise _Refuse

    def total(self, node):
        """A sum or product over a concrete range, term by term (bound index set per term)."""
        if len(node.limits) != 1 or len(node.limits[0]) != 3:
            raise _Refuse
        k, a, b = node.limits[0]
        low, high = self.value(a), self.value(b)
        if not all(isinstance(v, Fraction) and v.denominator == 1 for v in (low, high)):
            raise _Refuse
        low, high = int(low), int(high)
        if high - low + 1 > _MAX_SUM_TERMS:
            raise _Refuse
        if high < low - 1 and isinstance(node, sp.Product):
            raise _Refuse  # the empty-product convention beyond b = a - 1 is not the fragment's
        values = []
        for j in range(low, high + 1):
            inner = _Evaluator({**self.env, k: Fraction(j)}, self.prec, self.record)
            values.append(inner.value(node.function))
        if high < low - 1:  # Karr's convention: sum_{a}^{b} = -sum_{b+1}^{a-1}
            for j in range(high + 1, low):
                inner = _Evaluator({**self.env, k: Fraction(j)}, self.prec, self.record)
                values.append(_negate(inner.value(node.function)))
        return _sum_values(values) if isinstance(node, sp.Sum) else _product_values(values)


def _sum_values(values):
    if all(isinstance(v, Fraction) for v in values):
        return sum(values, Fraction(0))
    total = _real(_IV_ZERO)
    for v in values:
        total = _add(total, _complex(v))
    return total


def _product_values(values):
    if all(isinstance(v, Fraction) for v in values):
        product = Fraction(1)
        for v in values:
            product *= v
            if _bits(product) > _MAX_EXACT_BITS:
                raise _Refuse
        return product
    product = _real(_IV_ONE)
    for v in values:
        product = _mul(product, _complex(v))
    return product


def _negate(v):
    return -v if isinstance(v, Fraction) else (-v[0], -v[1])


_EXACT_RELATIONS = {
    sp.Equality: operator.eq, sp.Unequality: operator.ne,
    sp.StrictGreaterThan: operator.gt, sp.GreaterThan: operator.ge,
    sp.StrictLessThan: operator.lt, sp.LessThan: operator.le,
}

_HANDLERS = {
    **{cls: _Evaluator.real_function for cls in _REAL_FUNCTIONS},
    sp.Add: _Evaluator.add, sp.Mul: _Evaluator.mul, sp.Pow: _Evaluator.power,
    sp.exp: _Evaluator.exp, sp.cos: _Evaluator.cos, sp.sin: _Evaluator.sin,
    sp.Abs: _Evaluator.abs, sp.sign: _Evaluator.sign, sp.floor: _Evaluator.floor,
    sp.ceiling: _Evaluator.ceiling, sp.Heaviside: _Evaluator.heaviside,
    sp.Max: _Evaluator.extremum, sp.Min: _Evaluator.extremum, sp.KroneckerDelta: _Evaluator.delta,
    sp.factorial: _Evaluator.integer_function, sp.binomial: _Evaluator.integer_function,
    sp.gamma: _Evaluator.gamma, sp.log: _Evaluator.log, sp.Indexed: _Evaluator.indexed, sp.re: _Evaluator.real_part, sp.im: _Evaluator.imaginary_part, sp.conjugate: _Evaluator.conjugate,
    sp.Piecewise: _Evaluator.piecewise, sp.Sum: _Evaluator.total,
}
_FAMILY_HANDLERS = ()


def value_at(expr, point=None, prec: int = PRECISIONS[0], record=None):
    """The value of ``expr`` at ``point`` (a mapping from variables to exact numbers), computed
    bottom-up on the unevaluated tree: a ``Fraction`` when exact and real, else ``(re, im)``
    enclosures; ``None`` when some subterm is undefined or cannot be certified there.
    ``record`` (a dict), when given, receives each table element read from its label's value."""
    env = {}
    old = iv.prec
    try:
        iv.prec = prec
        for variable, number in dict(point or {}).items():
            env[variable] = _Evaluator({}, prec).value(sp.sympify(number))
        return _Evaluator(env, prec, record).value(expr)
    except (_Refuse, ValueError, TypeError, ZeroDivisionError, OverflowError, ArithmeticError, RecursionError):
        return None
    finally:
        iv.prec = old


def enclose(value, prec: int = PRECISIONS[0]):
    """A certified enclosure ``(re, im)`` of the closed numeric expression ``value``, or ``None``."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or value.free_symbols:
        return None
    result = value_at(value, None, prec)
    if isinstance(result, Fraction):
        return _real(_to_iv(result))
    return result


def real_enclosure(value, prec: int = PRECISIONS[0]):
    """The ``mpmath.iv`` enclosure of the closed numeric ``value`` when it is certainly real, else ``None``."""
    box = enclose(value, prec)
    return box[0] if box is not None and _is_real(box) else None


def _excludes_zero(v) -> bool:
    if isinstance(v, Fraction):
        return v != 0
    return _nonzero(v[0]) or _nonzero(v[1])


def certainly_nonzero(value, point=None) -> bool:
    """True only when ``value`` (at ``point``) is exactly a non-zero number, or an enclosure
    of it excludes 0, every subterm being defined there."""
    if not isinstance(value, sp.Expr):
        return False
    for prec in PRECISIONS:
        v = value_at(value, point, prec)
        if v is not None and _excludes_zero(v):
            return True
    return False


def certainly_finite(value, point=None) -> bool:
    """True when ``value`` (at ``point``) has an exact value or a bounded certified enclosure,
    every subterm being defined there."""
    if not isinstance(value, sp.Expr):
        return False
    return any(value_at(value, point, prec) is not None for prec in PRECISIONS)


def certainly_different(left, right, point=None) -> bool:
    """True when ``left`` and ``right`` are both defined at ``point`` (every subterm) and their
    values certainly differ."""
    for prec in PRECISIONS:
        a, b = value_at(left, point, prec), value_at(right, point, prec)
        if a is None or b is None:
            continue
        if isinstance(a, Fraction) and isinstance(b, Fraction):
            return a != b
        za, zb = _real(_to_iv(a)) if isinstance(a, Fraction) else a, _real(_to_iv(b)) if isinstance(b, Fraction) else b
        if _excludes_zero((za[0] - zb[0], za[1] - zb[1])):
            return True
    return False
