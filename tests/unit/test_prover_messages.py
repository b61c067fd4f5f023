"""What ``prove_equal`` refuses, with which exception, in which words.

The wording is pinned: users read these messages, and a message that stops
naming the input or what was expected is a regression.
"""

import re

import numpy as np
import pytest
import sympy as sp

from symproof import InvalidInputError, SymproofError, UndefinedExpressionError, prove_equal

x = sp.Symbol("x", real=True)
EXPECTED = "a SymPy expression, a SymPy matrix or a matrix expression"

REFUSED = [
    pytest.param("sin(x)", x, InvalidInputError,
                 f"lhs must be {EXPECTED} (or a Python number), got str 'sin(x)'", id="str"),
    pytest.param(x, [1, 2], InvalidInputError,
                 f"rhs must be {EXPECTED} (or a Python number), got list [1, 2] (convert it with sympy.Matrix(...))",
                 id="list"),
    pytest.param(np.array([1.0, 2.0]), x, InvalidInputError,
                 f"lhs must be {EXPECTED} (or a Python number), got ndarray array([1., 2.]) "
                 "(convert it with sympy.Matrix(...))", id="numpy array"),
    pytest.param(None, x, InvalidInputError,
                 f"lhs must be {EXPECTED} (or a Python number), got NoneType None", id="None"),
    pytest.param(True, x, InvalidInputError,
                 f"lhs must be {EXPECTED} (or a Python number), got bool True", id="bool"),
    pytest.param(sp.Eq(x, 1), 1, InvalidInputError,
                 f"lhs must be {EXPECTED}, got Equality Eq(x, 1) (pass the two sides of a relation separately)",
                 id="relation"),
    pytest.param(sp.Tuple(1, 2), sp.Tuple(1, 2), InvalidInputError,
                 f"lhs must be {EXPECTED}, got Tuple (1, 2)", id="sympy tuple"),
    pytest.param(sp.Integer(1) / 0, 1, UndefinedExpressionError,
                 "lhs is undefined (it contains nan or zoo, e.g. a division by zero): zoo [side: lhs]",
                 id="1/0 is zoo"),
    pytest.param(x, sp.nan, UndefinedExpressionError,
                 "rhs is undefined (it contains nan or zoo, e.g. a division by zero): nan [side: rhs]", id="nan"),
    pytest.param(sp.Matrix([[1, 1 / sp.Integer(0)]]), sp.Matrix([[1, 1]]), UndefinedExpressionError,
                 "lhs is undefined (it contains nan or zoo, e.g. a division by zero): Matrix([[1, zoo]]) "
                 "[side: lhs]", id="zoo inside a matrix"),
    pytest.param(sp.Matrix([1, 2]), sp.Matrix([[1, 2]]), InvalidInputError,
                 "cannot compare matrices of different shapes: lhs is 2x1, rhs is 1x2", id="mismatched shapes"),
    pytest.param(sp.Matrix([[x]]), x, InvalidInputError,
                 "cannot compare a matrix with a scalar: lhs is a 1x1 matrix, rhs is the scalar x "
                 "(compare an entry of the matrix, or wrap the scalar in sympy.Matrix([[...]]))",
                 id="matrix vs scalar"),
    pytest.param(1, sp.eye(2), InvalidInputError,
                 "cannot compare a matrix with a scalar: lhs is the scalar 1, rhs is a 2x2 matrix "
                 "(compare an entry of the matrix, or wrap the scalar in sympy.Matrix([[...]]))",
                 id="scalar vs matrix"),
    pytest.param(sp.MatrixSymbol("A", sp.Symbol("n"), 2), sp.MatrixSymbol("B", sp.Symbol("n"), 2),
                 InvalidInputError,
                 "lhs has the symbolic shape (n, 2); entries are compared one by one, so give matrices a "
                 "concrete shape [shape: (n, 2)]", id="symbolic shape"),
    pytest.param((1 - sp.cos(x) ** 2 - sp.sin(x) ** 2) / (sp.cos(x) ** 2 + sp.sin(x) ** 2 - 1), 42,
                 UndefinedExpressionError, "lhs is undefined everywhere: the denominator sin(x)**2 + cos(x)**2 - 1 is identically zero",
                 id="0/0"),
]


@pytest.mark.parametrize("lhs, rhs, error, message", REFUSED)
def test_refused_input_raises_the_documented_error_with_its_message(lhs, rhs, error, message):
    with pytest.raises(error) as caught:
        prove_equal(lhs, rhs)
    assert str(caught.value).startswith(message)
    assert isinstance(caught.value, SymproofError)
    # the error is raised at the boundary: the traceback ends in symproof, not deep inside SymPy
    assert "sympy" not in caught.traceback[-1].path.parts


ACCEPTED_NUMBERS = [
    pytest.param(3, id="int"),
    pytest.param(2.5, id="float"),
    pytest.param(np.int64(3), id="numpy int64"),
    pytest.param(np.float64(0.25), id="numpy float64"),
    pytest.param(1 + 2j, id="complex"),
]


@pytest.mark.parametrize("number", ACCEPTED_NUMBERS)
def test_plain_numbers_are_accepted_and_read_exactly(number):
    assert prove_equal(number, sp.nsimplify(complex(number)) if isinstance(number, complex)
                       else sp.Rational(float(number))).proved


def test_a_binary_float_is_compared_by_its_exact_value():
    assert prove_equal(0.5, sp.Rational(1, 2)).proved
    verdict = prove_equal(0.1, sp.Rational(1, 10))
    assert verdict.refuted and verdict.residual == sp.Rational(1, 180143985094819840)


def test_errors_are_value_errors_for_callers_that_catch_those():
    with pytest.raises(ValueError):
        prove_equal("x", 1)


def test_the_context_of_an_error_is_appended_in_brackets():
    err = InvalidInputError("width must be even", width=3).with_context(claim="rope.relative", step="expand")
    assert str(err) == "width must be even [width: 3; claim: rope.relative; step: expand]"
    assert re.fullmatch(r"width must be even", err.message)
