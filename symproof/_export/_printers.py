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


class NumPyKernelPrinter(_Named, NumPyPrinter):
    """NumPy target."""


class PythonKernelPrinter(_Named, PythonCodePrinter):
    """Plain Python (the ``math`` module): frequency rules evaluated once per call."""


class CKernelPrinter(_Named, C99CodePrinter):
    """C99 target; integer index expressions stay integer arithmetic."""


@lru_cache(maxsize=None)
def _torch_class():
    # imported here: sympy.printing.pytorch imports torch (seconds), which numpy and C exports need not pay
    from sympy.printing.pytorch import TorchPrinter

    return type("TorchKernelPrinter", (_Named, TorchPrinter), {"__doc__": "PyTorch target."})


def torch_printer(names=None, settings=None):
    """A PyTorch printer (the class is made on first use: it imports torch)."""
    return _torch_class()(names, settings)
