"""The fragment: the grammar of statements the engine decides, checked before any tactic.

An allow-list, not a deny-list.  Every node of both sides is looked up in
:data:`SCALAR_GRAMMAR` (expressions) or :data:`MATRIX_GRAMMAR` (matrix
expressions) by its exact class; a class that is not listed makes the verdict
*unknown* with the reason and the place ("outside the fragment: Indexed at
lhs[0]"), so that no tactic ever sees a node nobody decided to handle.  Input
that is not a statement at all (a matrix of relations, a ``Lambda`` side, a
matrix product of mismatched shapes) is an :class:`InvalidInputError`.

While walking, the parse

* reads every ``Float`` as the binary rational it stores and every ``Decimal``
  as its decimal value, with exponents and digits bounded (:data:`MAX_EXPONENT_BITS`,
  :data:`MAX_DECIMAL_DIGITS`), so no conversion runs long;
* collects the *side conditions*: each denominator, and each argument of a
  function with poles or branch points (the ``poles`` column of the grammar),
  must not vanish.  A symbol-free condition is decided on the spot: exactly
  zero (exact arithmetic) is an :class:`UndefinedExpressionError`, certified
  non-zero by interval arithmetic is discharged, neither is *unknown*.  A
  condition with symbols that vanishes identically (the trig canonical form,
  or the symbols' assumptions) is undefined; otherwise the statement is proved
  only where it is defined, and a proof must exhibit a point where every
  subterm of both sides is defined (:attr:`Statement.needs_point`).

Longer than 600 lines: the allow-list grammar and its definedness conditions are one table and its
reader; splitting them would separate a node's entry from the condition that guards it.
"""

from __future__ import annotations

import decimal
import numbers
from dataclasses import dataclass, field

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import (
    Adjoint, BlockDiagMatrix, BlockMatrix, HadamardProduct, Identity, KroneckerProduct, MatAdd, MatMul, MatPow,
    MatrixExpr, MatrixSymbol, Transpose, ZeroMatrix,
)
from sympy.matrices.expressions.matexpr import MatrixElement

from .._ground._errors import InvalidInputError, UndefinedExpressionError
from ..checker._interval import certainly_finite, certainly_nonzero
from . import _budget

__all__ = ["Outside", "Statement", "parse_statement", "SCALAR_GRAMMAR", "MATRIX_GRAMMAR", "MAX_MATRIX_POWER",
           "MAX_EXPONENT_BITS", "MAX_DECIMAL_DIGITS", "grammar_rows"]

#: a ``Float`` whose binary exponent exceeds this is refused (``Float('1e-20000000')``)
MAX_EXPONENT_BITS = 4096
#: a ``Decimal`` with more digits, or a larger decimal exponent, is refused
MAX_DECIMAL_DIGITS = 1000
#: ``MatPow(M, n)`` is in the fragment for integer ``0 <= n <= MAX_MATRIX_POWER``
MAX_MATRIX_POWER = 64


class Outside(Exception):
    """The statement is outside the fragment; the message says which node, and where."""


@dataclass(frozen=True)
class Rule:
    """One row of the grammar: arity, argument constraint, side conditions."""

    arity: tuple  # (least, most) number of arguments; most None: any
    #: what each argument must be: "expr" (in the fragment), "integer" (known integer),
    #: "natural" (known non-negative integer), "literal" (an integer literal)
    args: str = "expr"
    #: the side conditions, as ``poles(args) -> [expression that must not vanish, ...]``
    poles: object = None
    note: str = ""


def _arg(node):
    return [node.args[0]]


def _cos_arg(node):
    return [sp.cos(node.args[0], evaluate=False)]


def _sin_arg(node):
    return [sp.sin(node.args[0], evaluate=False)]


def _unit_arg(node):
    return [node.args[0] - 1, node.args[0] + 1]


def _imaginary_unit_arg(node):
    return [node.args[0] ** 2 + 1]


def _cosh_arg(node):
    return [sp.cosh(node.args[0], evaluate=False)]


_NUMBER = Rule((0, 0), note="a rational literal")

#: the scalar grammar: exact SymPy class -> rule
SCALAR_GRAMMAR = {
    sp.Integer: _NUMBER, sp.Rational: _NUMBER, sp.core.numbers.Zero: _NUMBER, sp.core.numbers.One: _NUMBER,
    sp.core.numbers.NegativeOne: _NUMBER, sp.core.numbers.Half: _NUMBER,
    sp.Float: Rule((0, 0), note="read as the exact binary rational it stores"),
    sp.core.numbers.Pi: Rule((0, 0), note="pi"),
    sp.core.numbers.Exp1: Rule((0, 0), note="E"),
    sp.core.numbers.ImaginaryUnit: Rule((0, 0), note="I"),
    sp.Symbol: Rule((0, 0), note="a finite symbol with its SymPy assumptions"),
    sp.Dummy: Rule((0, 0), note="a finite symbol with its SymPy assumptions"),
    sp.Add: Rule((1, None)),
    sp.Mul: Rule((1, None), note="commutative or not"),
    sp.Pow: Rule((2, 2), poles=None, note="base != 0 unless the exponent is known non-negative"),
    sp.exp: Rule((1, 1)),
    sp.log: Rule((1, 1), poles=_arg, note="argument != 0"),
    sp.sin: Rule((1, 1)), sp.cos: Rule((1, 1)),
    sp.tan: Rule((1, 1), poles=_cos_arg, note="cos(argument) != 0"),
    sp.sec: Rule((1, 1), poles=_cos_arg, note="cos(argument) != 0"),
    sp.cot: Rule((1, 1), poles=_sin_arg, note="sin(argument) != 0"),
    sp.csc: Rule((1, 1), poles=_sin_arg, note="sin(argument) != 0"),
    sp.asin: Rule((1, 1)), sp.acos: Rule((1, 1)),
    sp.gamma: Rule((1, 1), poles="self", note="argument not a non-positive integer"),
    sp.atan: Rule((1, 1), poles=_imaginary_unit_arg, note="argument != +-I"),
    sp.atanh: Rule((1, 1), poles=_unit_arg, note="argument != +-1"),
    sp.sinh: Rule((1, 1)), sp.cosh: Rule((1, 1)),
    sp.tanh: Rule((1, 1), poles=_cosh_arg, note="cosh(argument) != 0"),
    sp.Abs: Rule((1, 1)), sp.sign: Rule((1, 1)), sp.floor: Rule((1, 1)), sp.ceiling: Rule((1, 1)),
    sp.re: Rule((1, 1)), sp.im: Rule((1, 1)), sp.conjugate: Rule((1, 1)),
    sp.Heaviside: Rule((1, 2)),
    sp.Max: Rule((1, None)), sp.Min: Rule((1, None)),
    sp.KroneckerDelta: Rule((2, 2), args="integer", note="integer arguments"),
    sp.factorial: Rule((1, 1), args="natural", note="a known non-negative integer argument"),
    sp.binomial: Rule((2, 2), args="integer", note="integer arguments"),
    sp.Piecewise: Rule((1, None), note="(expression, condition) pairs; conditions are relations of the fragment"),
    sp.Sum: Rule((2, 2), note="one range (k, a, b) with integer bounds; k is bound"),
    sp.Indexed: Rule((2, None), args="literal", note="an element of an IndexedBase: at integer literals (a[0]), or at integer indices made of bound summation indices (a[k] in a sum over k)"),
    MatrixElement: Rule((3, 3), note="an entry A[i, j] of a MatrixSymbol of concrete shape"),
    AppliedUndef: Rule((0, None), note="an undefined function f(x): an opaque atom"),
}

#: conditions of a Piecewise: relations and connectives over fragment expressions
CONDITION_GRAMMAR = (
    sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge, sp.And, sp.Or, sp.Not,
    sp.logic.boolalg.BooleanTrue, sp.logic.boolalg.BooleanFalse,
)

#: the matrix grammar: class -> what it is made explicit by (the engine's own rules)
MATRIX_GRAMMAR = {
    sp.ImmutableDenseMatrix: "its entries", sp.MutableDenseMatrix: "its entries",
    sp.ImmutableSparseMatrix: "its entries", sp.MutableSparseMatrix: "its entries",
    MatrixSymbol: "entries A[i, j] (a concrete shape)",
    ZeroMatrix: "zeros", Identity: "the identity",
    MatMul: "row-by-column products", MatAdd: "entrywise sums", Transpose: "transposition",
    Adjoint: "conjugate transposition", MatPow: f"repeated products (0 <= n <= {MAX_MATRIX_POWER})",
    HadamardProduct: "entrywise products", KroneckerProduct: "block products",
    BlockMatrix: "the blocks side by side", BlockDiagMatrix: "the blocks on the diagonal",
}


def grammar_rows():
    """``(class name, note)`` per scalar node, for the README's table (a test compares them)."""
    return sorted((cls.__name__, rule.note) for cls, rule in SCALAR_GRAMMAR.items())


@dataclass
class Statement:
    """A statement inside the fragment, in the engine's own terms."""

    lhs: object
    rhs: object
    is_matrix: bool
    #: side conditions with symbols that a defined point must satisfy: ``(expression, "nonzero")``,
    #: or ``(sum, "defined")`` for a condition on a summation index
    conditions: list = field(default_factory=list)

    @property
    def needs_point(self) -> bool:
        return bool(self.conditions)


# -- numbers ------------------------------------------------------------------------------------


def _exact_float(f: sp.Float, where: str):
    sign, mantissa, exponent, bits = f._mpf_
    if mantissa == 0 and exponent != 0 or not isinstance(exponent, int):
        raise Outside(f"the float {f} is not finite, at {where}")  # inf/nan carry special _mpf_
    if abs(exponent) > MAX_EXPONENT_BITS:
        raise InvalidInputError(f"the float at {where} has a binary exponent {exponent}, beyond "
                                f"+-{MAX_EXPONENT_BITS}: give it as an exact rational")
    return sp.Rational(f)


def _exact_decimal(value: decimal.Decimal, name: str):
    if not value.is_finite():
        raise UndefinedExpressionError(f"{name} is the decimal {value}, which is not a finite number", side=name)
    digits, exponent = value.as_tuple().digits, value.as_tuple().exponent
    if len(digits) > MAX_DECIMAL_DIGITS or abs(exponent) > MAX_DECIMAL_DIGITS:
        raise InvalidInputError(f"{name} is a decimal with {len(digits)} digits and exponent {exponent}; "
                                f"at most {MAX_DECIMAL_DIGITS} of each are read")
    return sp.Rational(*value.as_integer_ratio())  # exact: Decimal('0.1') is 1/10


_EXPECTED = "a SymPy expression, a SymPy matrix or a matrix expression"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_input(value, name: str):
    """The side as a SymPy object, or :class:`InvalidInputError` when it is not a term at all."""
    if isinstance(value, MatrixBase):
        return value
    if isinstance(value, sp.Basic):
        if isinstance(value, MatrixExpr):
            return value
        if isinstance(value, sp.Lambda) or not isinstance(value, sp.Expr):
            kind = type(value).__name__
            hint = (" (pass the two sides of a relation separately)"
                    if isinstance(value, (sp.core.relational.Relational, sp.logic.boolalg.Boolean)) else "")
            raise InvalidInputError(f"{name} must be {_EXPECTED}, got {kind} {_short(value)}{hint}",
                                    expected=_EXPECTED)
        return value
    if isinstance(value, decimal.Decimal):
        return _exact_decimal(value, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        kind = type(value).__name__
        hint = " (convert it with sympy.Matrix(...))" if hasattr(value, "shape") or isinstance(
            value, (list, tuple)) else ""
        raise InvalidInputError(f"{name} must be {_EXPECTED} (or a Python number), got {kind} {_short(value)}{hint}")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UndefinedExpressionError(f"{name} is the float {value}, which is not a finite number", side=name)
        return sp.Rational(value)
    if isinstance(value, complex):
        return sp.Rational(value.real) + sp.I * sp.Rational(value.imag)
    return sp.sympify(value)


# -- the walk -----------------------------------------------------------------------------------


class _Parse:
    def __init__(self):
        self.seen: dict = {}
        self.floats: dict = {}
        self.conditions: list = []  # (expression, where, bound, why, enclosing sum or None)
        self.enclosing = None
        self.nonempty = True  # every enclosing sum has a range shown non-empty
        self.guarded = False  # inside a Piecewise branch: its conditions hold only where it is chosen

    # scalars

    def scalar(self, node, where: str, bound: frozenset = frozenset(), enclosing=None):
        # the context is part of the key: a subterm met inside a Piecewise branch and again
        # outside it has conditions in both places
        key = (node, bound, self.guarded) if bound or self.guarded else node
        if key in self.seen:
            return
        self.seen[key] = None
        if not isinstance(node, sp.Expr) or isinstance(node, MatrixExpr):
            if isinstance(node, (MatrixExpr, MatrixBase)):
                raise Outside(f"a matrix {type(node).__name__} inside a scalar expression at {where}")
            raise Outside(f"{type(node).__name__} at {where} (not an expression)")
        cls = type(node)
        rule = SCALAR_GRAMMAR.get(cls)
        if rule is None and isinstance(node, AppliedUndef):
            rule = SCALAR_GRAMMAR[AppliedUndef]
        if rule is None:
            raise Outside(f"{cls.__name__} at {where}")
        args = node.args
        least, most = rule.arity
        if len(args) < least or (most is not None and len(args) > most):
            raise Outside(f"{cls.__name__} with {len(args)} arguments at {where}")
        special = _SPECIAL.get(cls)
        if special is not None:
            special(self, node, where, bound)
            return
        if rule.args != "expr":
            for k, a in enumerate(args):
                _check_argument(rule.args, a, f"{where}[{k}]", cls)
        for k, a in enumerate(args):
            self.scalar(a, f"{where}[{k}]", bound)
        if rule.poles == "self":  # the evaluator knows the poles: the node itself must be defined
            self.conditions.append((node, where, bound, f"{_short(node)} is at a pole:",
                                    self.enclosing, self.nonempty, self.guarded))
        elif rule.poles is not None:
            for condition in rule.poles(node):
                self.conditions.append((condition, where, bound, f"{_short(node)} is at a pole:",
                                        self.enclosing, self.nonempty, self.guarded))

    def symbol(self, node, where, bound):
        if node.is_finite is False or node.is_infinite:
            raise Outside(f"the symbol {node} may be infinite, at {where}")
        for key, value in node.assumptions0.items():
            if key.startswith("extended_") and value and node.assumptions0.get(key[len("extended_"):]) is not True:
                raise Outside(f"the symbol {node} is {key} (it may be infinite), at {where}")

    def float_(self, node, where, bound):
        self.floats[node] = _exact_float(node, where)

    def power(self, node, where, bound):
        base, exponent = node.args
        self.scalar(base, f"{where}[0]", bound)
        self.scalar(exponent, f"{where}[1]", bound)
        if exponent.is_nonnegative is not True:
            self.conditions.append((base, where, bound, "the denominator", self.enclosing, self.nonempty, self.guarded))

    def piecewise(self, node, where, bound):
        outer, guarded = self.enclosing, self.guarded
        if outer is None:
            self.enclosing = node
        try:
            for k, pair in enumerate(node.args):
                expr, cond = pair
                self.condition(cond, f"{where}[{k}][1]", bound)
                self.guarded = True  # a branch is evaluated only where it is chosen
                self.scalar(expr, f"{where}[{k}][0]", bound)
                self.guarded = guarded
        finally:
            self.enclosing, self.guarded = outer, guarded
        if node.args[-1][1] is not sp.true:  # where no branch applies, the node is undefined
            self.conditions.append((node, where, bound, "no branch of", self.enclosing or node, False, True))

    def condition(self, cond, where, bound):
        if not isinstance(cond, CONDITION_GRAMMAR):
            raise Outside(f"the condition {type(cond).__name__} at {where}")
        if isinstance(cond, sp.core.relational.Relational):
            self.scalar(cond.lhs, f"{where}.lhs", bound)
            self.scalar(cond.rhs, f"{where}.rhs", bound)
        else:
            for k, c in enumerate(cond.args):
                self.condition(c, f"{where}[{k}]", bound)

    def sum_(self, node, where, bound):
        limits = node.limits
        if len(limits) != 1 or len(limits[0]) != 3:
            raise Outside(f"a Sum with limits {limits} at {where} (one range (k, a, b) is the fragment)")
        k, a, b = limits[0]
        if not isinstance(k, sp.Symbol) or isinstance(k, sp.Wild):
            raise Outside(f"a Sum over {k} at {where}")
        for end, name in ((a, "lower"), (b, "upper")):
            if end.is_integer is not True:
                raise Outside(f"the {name} bound {end} of the Sum at {where} is not a known integer")
            self.scalar(end, f"{where}.{name}", bound)
        outer, nonempty = self.enclosing, self.nonempty
        if outer is None:
            self.enclosing = node
        self.nonempty = nonempty and (b - a).is_nonnegative is True
        try:
            self.scalar(node.function, f"{where}.summand", bound | {k})
        finally:
            self.enclosing, self.nonempty = outer, nonempty

    def indexed(self, node, where, bound):
        if not isinstance(node.base, sp.IndexedBase) or not isinstance(node.base.label, sp.Symbol):
            raise Outside(f"an Indexed of {type(node.base).__name__} at {where}")
        for k, index in enumerate(node.indices):
            if isinstance(index, sp.Integer):
                continue
            if index.is_integer is not True or not index.free_symbols <= bound:
                raise Outside(f"Indexed {node} at {where}: an element is in the fragment only at integer "
                              "literal indices or integer indices made of bound summation indices "
                              "(one value per element)")
            self.scalar(index, f"{where}[{k + 1}]", bound)

    def element(self, node, where, bound):
        parent, i, j = node.args
        if not isinstance(parent, MatrixSymbol):
            raise Outside(f"an entry of {type(parent).__name__} at {where}")
        rows, cols = parent.shape
        if not all(isinstance(v, sp.Integer) for v in (rows, cols, i, j)) or not (0 <= i < rows and 0 <= j < cols):
            raise Outside(f"the entry {node} at {where} (concrete shape and indices in range are the fragment)")

    def undefined_function(self, node, where, bound):
        for k, a in enumerate(node.args):
            self.scalar(a, f"{where}[{k}]", bound)

    # matrices

    def matrix(self, node, where):
        if isinstance(node, MatrixBase):
            cls = type(node)
            if cls not in MATRIX_GRAMMAR:
                raise Outside(f"the matrix class {cls.__name__} at {where}")
            entries = node.todok().items() if hasattr(node, "todok") else ()
            for (i, j), entry in entries:
                if not isinstance(entry, sp.Expr) or isinstance(entry, MatrixExpr):
                    raise InvalidInputError(
                        f"{where} is a matrix whose entry ({i}, {j}) is {type(entry).__name__} {_short(entry)}, "
                        "not an expression")
                self.scalar(entry, f"{where}[{i}, {j}]")
            return tuple(node.shape)
        if not isinstance(node, MatrixExpr):
            raise Outside(f"{type(node).__name__} at {where} (not a matrix)")
        cls = type(node)
        if cls not in MATRIX_GRAMMAR:
            raise Outside(f"{cls.__name__} at {where}")
        shape = tuple(node.shape)
        if not all(isinstance(n, (int, sp.Integer)) for n in shape):
            raise InvalidInputError(f"{where} has the symbolic shape {shape}; entries are compared one by one, "
                                    "so give matrices a concrete shape", shape=shape)
        if cls is MatrixSymbol:
            return shape
        if cls in (ZeroMatrix, Identity):
            return shape
        if cls is MatPow:
            base, n = node.args
            inner = self.matrix(base, f"{where}[0]")
            if not (isinstance(n, sp.Integer) and 0 <= n <= MAX_MATRIX_POWER):
                raise Outside(f"MatPow with exponent {n} at {where} (0..{MAX_MATRIX_POWER} is the fragment)")
            if inner[0] != inner[1]:
                raise InvalidInputError(f"{where}: a power of the non-square {inner[0]}x{inner[1]} matrix")
            return inner
        if cls in (BlockMatrix,):
            grid = node.blocks
            shapes = [[self.matrix(grid[r, c], f"{where}.block[{r}, {c}]") for c in range(grid.cols)]
                      for r in range(grid.rows)]
            for r, row in enumerate(shapes):
                if len({s[0] for s in row}) != 1:
                    raise InvalidInputError(f"{where}: the blocks of block row {r} have different heights")
            for c in range(grid.cols):
                if len({shapes[r][c][1] for r in range(grid.rows)}) != 1:
                    raise InvalidInputError(f"{where}: the blocks of block column {c} have different widths")
            return shape
        if cls is BlockDiagMatrix:
            for k, b in enumerate(node.diag):
                self.matrix(b, f"{where}.block[{k}]")
            return shape
        scalars = [a for a in node.args if not isinstance(a, (MatrixExpr, MatrixBase))]
        factors = [a for a in node.args if isinstance(a, (MatrixExpr, MatrixBase))]
        for k, s in enumerate(scalars):
            self.scalar(s, f"{where}.scalar[{k}]")
        shapes = [self.matrix(a, f"{where}[{k}]") for k, a in enumerate(factors)]
        if cls is MatMul:
            for left, right in zip(shapes, shapes[1:]):
                if left[1] != right[0]:
                    raise InvalidInputError(f"{where}: a product of a {left[0]}x{left[1]} by a "
                                            f"{right[0]}x{right[1]} matrix (shapes do not match)")
        elif cls in (MatAdd, HadamardProduct):
            if len(set(shapes)) > 1:
                raise InvalidInputError(f"{where}: {cls.__name__} of matrices of different shapes {shapes}")
        if cls in (Transpose, Adjoint, MatMul, MatAdd, HadamardProduct, KroneckerProduct) and not factors:
            raise InvalidInputError(f"{where}: {cls.__name__} without a matrix argument")
        return shape


_SPECIAL = {
    sp.Symbol: _Parse.symbol, sp.Dummy: _Parse.symbol, sp.Float: _Parse.float_, sp.Pow: _Parse.power,
    sp.Piecewise: _Parse.piecewise, sp.Sum: _Parse.sum_, sp.Indexed: _Parse.indexed,
    MatrixElement: _Parse.element,
}


def _check_argument(kind, arg, where, cls):
    if kind == "integer" and arg.is_integer is not True:
        raise Outside(f"{cls.__name__} of {arg} at {where}: the argument is not a known integer")
    if kind == "natural" and not (arg.is_integer is True and arg.is_nonnegative is True):
        raise Outside(f"{cls.__name__} of {arg} at {where}: the argument is not a known non-negative integer")


# -- side conditions ----------------------------------------------------------------------------


def _exactly_zero(expr) -> bool:
    """Exact arithmetic: the expanded constant is 0 (algebraic numbers expand exactly)."""
    if expr.is_zero is True:
        return True
    if expr.count_ops() > 200:
        return False
    return sp.expand(expr) == 0


def _positive(expr) -> bool:
    """Cheap structural proof that ``expr`` is positive for every admissible value."""
    if expr.is_Number:
        return expr.is_positive is True
    if isinstance(expr, sp.Symbol):
        return expr.is_positive is True
    if isinstance(expr, sp.exp):
        return expr.args[0].is_extended_real is True
    if isinstance(expr, (sp.Add, sp.Mul)):
        return all(_positive(a) for a in expr.args)
    if isinstance(expr, sp.Pow):
        return _positive(expr.base) and expr.exp.is_real is True
    return False


def _never_zero(expr) -> bool:
    """Cheap structural proof that ``expr`` vanishes nowhere (so no identically-zero test is needed)."""
    if expr.is_Number:
        return expr != 0
    if isinstance(expr, sp.Symbol):
        return expr.is_nonzero is True
    if isinstance(expr, sp.exp):
        return True  # exp of a finite number is never 0
    if isinstance(expr, sp.Mul):
        return all(_never_zero(a) for a in expr.args)
    if isinstance(expr, sp.Pow):
        return _never_zero(expr.base)
    return _positive(expr)


def _decide(conditions, vanishes_identically):
    """Discharge the symbol-free conditions and those that vanish nowhere; return the checks a
    defined point must pass: ``(expression, "nonzero")`` or, for a condition on a summation
    index, ``(the outermost sum, "defined")``."""
    open_ = {}
    for condition, where, bound, why, enclosing, nonempty, guarded in conditions:
        _budget.check()
        if guarded:  # a condition inside a Piecewise branch: the enclosing node must be defined
            _decide_guarded(condition, where, why, enclosing, open_)
            continue
        side = where.split("[", 1)[0].split(".", 1)[0]
        free = condition.free_symbols
        shown = condition
        if isinstance(condition, sp.Function) and not isinstance(condition, sp.gamma):
            condition = condition.func(*condition.args)  # SymPy's own value table: cos(pi/2) = 0
        if isinstance(condition, sp.gamma):
            if free and vanishes_identically(condition.args[0]):
                condition = sp.gamma(0, evaluate=False)  # gamma of the zero function: the pole at 0
                free = set()
            _decide_gamma(condition, where, side, why, free, bound, enclosing, open_)
            continue
        if not free:
            if _exactly_zero(condition):
                raise UndefinedExpressionError(
                    f"{side} is undefined: {why} {_short(shown)} is exactly 0 (at {where})", side=side)
            if not certainly_nonzero(condition):
                raise Outside(f"{why} {_short(condition)} at {where}: cannot decide whether it is 0 "
                              "(neither exactly zero nor certified non-zero by interval arithmetic)")
            continue
        if _never_zero(condition):
            continue
        if condition.is_zero is True or _vanishes(condition, vanishes_identically):
            if free & bound and not nonempty:
                raise Outside(f"{why} {_short(condition)} at {where} vanishes for every value of the bound index")
            raise UndefinedExpressionError(
                f"{side} is undefined everywhere: {why} {_short(condition)} is identically zero (at {where})",
                side=side)
        open_[(enclosing, "defined") if free & bound else (condition, "nonzero")] = None
    return list(open_)


def _vanishes(condition, vanishes_identically) -> bool:
    """The condition is the zero function: by the canonical form, or as ``f(g)`` with ``g`` the
    zero function and ``f(0)`` exactly 0 (``sin(sin^2 x + cos^2 x - 1)``, which the canonical
    form keeps as an opaque atom)."""
    if vanishes_identically(condition):
        return True
    if isinstance(condition, sp.Function) and len(condition.args) == 1 and condition.args[0].free_symbols:
        if vanishes_identically(condition.args[0]):
            return _exactly_zero(condition.func(0))
    return False


def _decide_guarded(condition, where, why, enclosing, open_):
    """A side condition that holds only where its Piecewise branch is chosen: never an error (the
    branch may never be chosen); the enclosing node must be defined at a point (bottom-up, the
    evaluator takes only the chosen branch)."""
    if isinstance(condition, sp.Piecewise) and not condition.free_symbols:
        if not certainly_finite(condition):
            raise Outside(f"{why} {_short(condition)} at {where}: no branch is certified to apply")
        return
    if enclosing is not None and enclosing.free_symbols:
        open_[(enclosing, "defined")] = None
    elif enclosing is not None and not certainly_finite(enclosing):
        raise Outside(f"{why} {_short(condition)} at {where}: the Piecewise is not certified defined")


def _decide_gamma(node, where, side, why, free, bound, enclosing, open_):
    arg = node.args[0]
    if arg.is_integer is True and arg.is_nonpositive is True:
        raise UndefinedExpressionError(
            f"{side} is undefined: {why} {_short(arg)} is a non-positive integer, a pole (at {where})", side=side)
    if not free:
        if not certainly_finite(node):
            raise Outside(f"{why} {_short(arg)} at {where}: not certified away from the poles 0, -1, -2, ...")
        return
    if arg.is_positive is True:
        return
    open_[(enclosing, "defined") if free & bound else (node, "defined")] = None


def parse_statement(lhs, rhs, vanishes_identically) -> Statement:
    """Parse both sides against the grammar (raise :class:`Outside`, :class:`InvalidInputError`
    or :class:`UndefinedExpressionError`), read numbers exactly, decide side conditions."""
    lhs, rhs = _as_input(lhs, "lhs"), _as_input(rhs, "rhs")
    parse = _Parse()
    matrices = []
    for name, side in (("lhs", lhs), ("rhs", rhs)):
        _budget.check()
        if side.has(sp.nan, sp.zoo) if isinstance(side, sp.Basic) else any(
                e.has(sp.nan, sp.zoo) for e in side if isinstance(e, sp.Basic)):
            raise UndefinedExpressionError(
                f"{name} is undefined (it contains nan or zoo, e.g. a division by zero): {_short(side)}", side=name)
        if isinstance(side, (MatrixBase, MatrixExpr)):
            matrices.append(parse.matrix(side, name))
        else:
            parse.scalar(side, name)
    if len(matrices) == 1:
        which = [(n, s) for n, s in (("lhs", lhs), ("rhs", rhs))]
        texts = [f"{n} is a {'x'.join(map(str, s.shape))} matrix" if isinstance(s, (MatrixBase, MatrixExpr))
                 else f"{n} is the scalar {_short(s)}" for n, s in which]
        raise InvalidInputError(f"cannot compare a matrix with a scalar: {texts[0]}, {texts[1]} "
                                "(compare an entry of the matrix, or wrap the scalar in sympy.Matrix([[...]]))")
    if len(matrices) == 2 and matrices[0] != matrices[1]:
        raise InvalidInputError("cannot compare matrices of different shapes: "
                                f"lhs is {'x'.join(map(str, matrices[0]))}, rhs is {'x'.join(map(str, matrices[1]))}")
    if parse.floats:
        lhs, rhs = (_replace_floats(side, parse.floats) for side in (lhs, rhs))
        parse.conditions = [(c.xreplace(parse.floats), w, b, y, e if e is None else e.xreplace(parse.floats), ne, g)
                            for c, w, b, y, e, ne, g in parse.conditions]
    conditions = _decide(parse.conditions, vanishes_identically)
    return Statement(lhs, rhs, bool(matrices), conditions)


def _replace_floats(side, floats):
    if isinstance(side, MatrixBase):
        return sp.ImmutableMatrix(side.applyfunc(lambda e: e.xreplace(floats)))
    return side.xreplace(floats)
