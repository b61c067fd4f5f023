"""NumPy functions of SymPy expressions, without the import cost of ``modules="numpy"``."""

from __future__ import annotations

import numpy as np
import sympy as sp


def numpy_function(args, expr):
    """``sp.lambdify(args, expr)`` printed by SymPy's NumPy printer into NumPy's own namespace.

    The module object, not the name ``"numpy"``: the name makes lambdify run ``from numpy import *``,
    which imports ``numpy.testing`` and ``numpy.f2py`` (about 0.3 s of every cold command) for nothing.
    """
    return sp.lambdify(args, expr, modules=[np])
