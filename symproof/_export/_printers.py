"""The SymPy code printers every exported body is printed with, one subclass per target.

Each takes ``names``: the spelling of the kernel's symbols in the template the
expression is printed into (``cos_t`` as ``c`` in C, as ``cos_`` in NumPy...);
every other symbol is printed as SymPy prints it.  Expressions reach them from
the whitelisted formula parser or from :mod:`symproof.kernels._symbolic`, so
nothing a description file wrote is printed except as numbers and
whitelisted functions.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["NumPyKernelPrinter", "PythonKernelPrinter", "CKernelPrinter", "torch_printer"]


class _Named:
    """``_print_Symbol`` through the template's names first."""

    def __init__(self, names=None, settings=None):
        super().__init__(settings or {})
        self._names = dict(names or {})

    def _print_Symbol(self, expr):
        name = self._names.get(expr)
        return name if name is not None else super()._print_Symbol(expr)

    def _print_AppliedUndef(self, expr):
        # a table lookup is an undefined function to the prover (an opaque atom of its fragment);
        # SymPy's dispatch starts an AppliedUndef's class walk at AppliedUndef, past _print_LookupBase
        table = getattr(self, "_print_LookupBase", None)
        if table is not None and getattr(type(expr), "table_name", ""):
            return table(expr)
        return self._print_Function(expr)


def _nested(printer, function, args) -> str:
    """``function(a, function(b, c))``: a binary elementwise function over any number of arguments."""
    printed = [printer._print(a) for a in args]
    out = printed[-1]
    for text in reversed(printed[:-1]):
        out = f"{function}({text}, {out})"
    return out


def split_fraction(arg) -> tuple:
    """``(n, q)`` with ``arg = n / q``, ``q`` a positive integer when ``arg``'s rational coefficients
    have one (``-i/3 + j/3`` -> ``(j - i, 3)``)."""
    together = sp.together(arg)
    coefficient, rest = together.as_coeff_Mul()
    if coefficient.is_Rational and coefficient.q != 1:
        return sp.Mul(coefficient.p, rest, evaluate=False) if coefficient.p != 1 else rest, sp.Integer(coefficient.q)
    return sp.fraction(together)


def _integer_part(printer, expr, function: str) -> str:
    """``floor``/``ceiling`` of ``n / q`` printed as one division of ``n`` by ``q``: SymPy distributes
    ``(j - i)/3`` into ``-i/3 + j/3``, whose two roundings put ``ceil`` on the wrong side of an integer
    (``-5/3 + 2/3 = -0.9999999999999999``); ``n`` of integer positions is exact in float64, and a
    correctly rounded quotient that is an integer is exact."""
    numerator, denominator = split_fraction(expr.args[0])
    if denominator == 1 or not denominator.is_number:
        return f"{function}({printer._print(expr.args[0])})"
    return f"{function}(({printer._print(numerator)}) / {float(denominator)!r})"


def _table_values(expr) -> str:
    return ", ".join(repr(float(v)) for v in type(expr).values)


class NumPyKernelPrinter(_Named, NumPyPrinter):
    """NumPy target.

    ``Min``/``Max`` are nested ``numpy.minimum``/``numpy.maximum`` (SymPy prints
    ``functools.reduce(...)``, a name the generated file does not import), and ``Piecewise`` is
    nested ``numpy.where`` (SymPy's ``numpy.select`` needs every condition to be an array)."""

    def _print_Min(self, expr):
        return _nested(self, "numpy.minimum", expr.args)

    def _print_Max(self, expr):
        return _nested(self, "numpy.maximum", expr.args)

    def _print_Piecewise(self, expr):
        return _piecewise(self, expr, "numpy.where({}, {}, {})")

    def _print_LookupBase(self, expr):
        return (f"numpy.array([{_table_values(expr)}])"
                f"[numpy.asarray({self._print(expr.args[0])}, dtype=numpy.float64).astype(numpy.int64)]")

    def _print_floor(self, expr):
        return _integer_part(self, expr, "numpy.floor")

    def _print_ceiling(self, expr):
        return _integer_part(self, expr, "numpy.ceil")


def _piecewise(printer, expr, template: str) -> str:
    *cases, (last, last_condition) = expr.args
    if last_condition is not sp.true:
        raise ValueError(f"internal: a Piecewise without a default branch cannot be printed: {expr}")
    out = printer._print(last)
    for value, condition in reversed(cases):
        out = template.format(printer._print(condition), printer._print(value), out)
    return out


class PythonKernelPrinter(_Named, PythonCodePrinter):
    """Plain Python (the ``math`` module): frequency rules evaluated once per call."""


class CKernelPrinter(_Named, C99CodePrinter):
    """C99 target; integer index expressions stay integer arithmetic."""

    def _print_LookupBase(self, expr):
        return f"((const double[]){{{_table_values(expr)}}})[(long)({self._print(expr.args[0])})]"

    def _print_floor(self, expr):
        return _integer_part(self, expr, "floor")

    def _print_ceiling(self, expr):
        return _integer_part(self, expr, "ceil")


@lru_cache(maxsize=None)
def _torch_class():
    # imported here: sympy.printing.pytorch imports torch (seconds), which numpy and C exports need not pay
    from sympy.printing.pytorch import TorchPrinter

    def tensor(printer, arg):
        return f"torch.as_tensor({printer._print(arg)}, dtype=torch.float64)"

    def minimum(self, expr, function="torch.minimum"):
        # torch.minimum/maximum take two tensors: SymPy prints torch.min(512, x), which raises
        out = tensor(self, expr.args[-1])
        for arg in reversed(expr.args[:-1]):
            out = f"{function}({tensor(self, arg)}, {out})"
        return out

    def maximum(self, expr):
        return minimum(self, expr, "torch.maximum")

    def piecewise(self, expr):
        return _piecewise(self, expr, "torch.where(torch.as_tensor({}), " + "torch.as_tensor({}, dtype=torch.float64), "
                                      "torch.as_tensor({}, dtype=torch.float64))")

    return type("TorchKernelPrinter", (_Named, TorchPrinter),
                {"__doc__": "PyTorch target: Min/Max/Piecewise with every operand a float64 tensor.",
                 "_print_Min": minimum, "_print_Max": maximum, "_print_Piecewise": piecewise,
                 "_print_LookupBase": lambda self, expr: (
                     f"torch.tensor([{_table_values(expr)}], dtype=torch.float64)"
                     f"[torch.as_tensor({self._print(expr.args[0])}).long()]"),
                 "_print_floor": lambda self, expr: _integer_part(self, expr, "torch.floor"),
                 "_print_ceiling": lambda self, expr: _integer_part(self, expr, "torch.ceil")})


def torch_printer(names=None, settings=None):
    """A PyTorch printer (the class is made on first use: it imports torch)."""
    return _torch_class()(names, settings)
