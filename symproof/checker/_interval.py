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
"""

from __future__ import annotations

import sympy as sp
import mpmath
from mpmath import iv

__all__ = ["enclose", "certainly_nonzero", "certainly_finite", "PRECISIONS"]

#: working precisions in bits, tried in order until the enclosure is narrow enough
PRECISIONS = (64, 256)

_MAX_EXP_ARGUMENT = 10**6
_MAX_INTEGER_DIGITS = 1000


class _Refuse(Exception):
    """The enclosure cannot be certified."""


def _real(x):
    return (x, iv.mpf(0))


def _is_real(z) -> bool:
    im = z[1]
    return im.a == 0 and im.b == 0


def _positive(x) -> bool:
    return x.a > 0


def _negative(x) -> bool:
    return x.b < 0


def _nonzero(x) -> bool:
    return x.a > 0 or x.b < 0


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
    result, base = _real(iv.mpf(1)), z
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
    sp.log: _log,
    sp.asin: _asin,
    sp.acos: _acos,
    sp.atan: _atan,
    sp.atanh: _atanh,
    sp.sign: _sign,
    sp.floor: _floor,
    sp.ceiling: _ceiling,
    sp.tan: _tan,
    sp.sinh: _sinh,
    sp.cosh: _cosh,
    sp.tanh: _tanh,
    sp.Heaviside: None,  # handled below: its value at 0 is a convention
}


def _relational(node, prec):
    diff = _enclose(node.lhs - node.rhs, prec)
    if not _is_real(diff):
        raise _Refuse
    x = diff[0]
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


def _condition(cond, prec):
    if cond is sp.true:
        return True
    if cond is sp.false:
        return False
    if isinstance(cond, sp.core.relational.Relational):
        return _relational(cond, prec)
    if isinstance(cond, sp.And):
        return all(_condition(c, prec) for c in cond.args)
    if isinstance(cond, sp.Or):
        return any(_condition(c, prec) for c in cond.args)
    if isinstance(cond, sp.Not):
        return not _condition(cond.args[0], prec)
    raise _Refuse


def _enclose(node, prec):
    if node.is_Integer:
        if len(str(abs(node.p))) > _MAX_INTEGER_DIGITS:
            raise _Refuse
        return _real(iv.mpf(node.p))
    if node.is_Rational:
        if len(str(abs(node.p))) > _MAX_INTEGER_DIGITS or len(str(node.q)) > _MAX_INTEGER_DIGITS:
            raise _Refuse
        return _real(iv.mpf(node.p) / node.q)
    if node is sp.pi:
        return _real(iv.pi)
    if node is sp.E:
        return _real(iv.e)
    if node is sp.I:
        return (iv.mpf(0), iv.mpf(1))
    if node.is_Float:
        return _real(iv.mpf(sp.Rational(node).p) / sp.Rational(node).q)
    if isinstance(node, sp.Add):
        total = _real(iv.mpf(0))
        for arg in node.args:
            total = _add(total, _enclose(arg, prec))
        return total
    if isinstance(node, sp.Mul):
        product = _real(iv.mpf(1))
        for arg in node.args:
            product = _mul(product, _enclose(arg, prec))
        return product
    if isinstance(node, sp.Pow):
        base, exp = node.args
        if exp.is_Integer:
            if abs(exp.p) > 10**5:
                raise _Refuse
            return _power(_enclose(base, prec), int(exp.p))
        z = _enclose(base, prec)
        if exp is sp.S.Half:
            if not _is_real(z):
                raise _Refuse
            return _real(_sqrt(z[0]))
        # x**y = exp(y log x) on the positive reals only (elsewhere a branch is chosen)
        if not _is_real(z):
            raise _Refuse
        return _exp(_mul(_enclose(exp, prec), _real(_log(z[0]))))
    if isinstance(node, sp.exp):
        return _exp(_enclose(node.args[0], prec))
    if isinstance(node, sp.cos):
        return _cos(_enclose(node.args[0], prec))
    if isinstance(node, sp.sin):
        return _sin(_enclose(node.args[0], prec))
    if isinstance(node, sp.Abs):
        return _abs(_enclose(node.args[0], prec))
    if isinstance(node, sp.re):
        return _real(_enclose(node.args[0], prec)[0])
    if isinstance(node, sp.im):
        return _real(_enclose(node.args[0], prec)[1])
    if isinstance(node, sp.Piecewise):
        for expr, cond in node.args:
            if _condition(cond, prec):
                return _enclose(expr, prec)
        raise _Refuse  # no branch applies: undefined here
    if isinstance(node, (sp.Max, sp.Min)):
        values = [_enclose(a, prec) for a in node.args]
        if not all(_is_real(v) for v in values):
            raise _Refuse
        pick = iv.mpf  # max/min are continuous: the hull of the end points is an enclosure
        lows, highs = [v[0].a for v in values], [v[0].b for v in values]
        if isinstance(node, sp.Max):
            return _real(pick([max(lows), max(highs)]))
        return _real(pick([min(lows), min(highs)]))
    for func, impl in _REAL_FUNCTIONS.items():
        if isinstance(node, func):
            if impl is None or len(node.args) != 1:
                raise _Refuse
            z = _enclose(node.args[0], prec)
            if not _is_real(z):
                raise _Refuse
            return _real(impl(z[0]))
    raise _Refuse


def enclose(value, prec: int = PRECISIONS[0]):
    """A certified enclosure ``(re, im)`` of the closed numeric expression ``value``, or ``None``."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr) or value.free_symbols:
        return None
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    old = iv.prec
    try:
        iv.prec = prec
        return _enclose(value, prec)
    except (_Refuse, ValueError, TypeError, ZeroDivisionError, OverflowError, ArithmeticError):
        return None
    finally:
        iv.prec = old


def certainly_nonzero(value) -> bool:
    """True only when ``value`` is exactly a non-zero rational, or an enclosure excludes 0."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr):
        return False
    if value.is_Rational:
        return value != 0
    for prec in PRECISIONS:
        z = enclose(value, prec)
        if z is None:
            continue
        if _nonzero(z[0]) or _nonzero(z[1]):
            return True
    return False


def certainly_finite(value) -> bool:
    """True when ``value`` is a rational, or has a (bounded) certified enclosure."""
    value = sp.sympify(value)
    if not isinstance(value, sp.Expr):
        return False
    if value.is_Rational:
        return True
    return any(enclose(value, prec) is not None for prec in PRECISIONS)
