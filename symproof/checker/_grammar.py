"""The checker's own term language: what a certificate may say, and when each term is defined.

Written for the checker alone (the prover's grammar is a separate table; a test
checks that this one admits nothing that one refuses).  Every statement and every
datum of a certificate is parsed against :data:`GRAMMAR` before any rule runs:

* a node is admitted only if its exact class is listed, with the arity and the
  argument shape of its row; nothing non-finite (``nan``, ``zoo``, ``oo``,
  ``AccumBounds``, a symbol that may be infinite, ``Order``) has a row;
* a ``Float`` in a *statement* is read as the binary rational it stores, before
  any arithmetic (matrix products included); in the *data* of a certificate it is
  a rejection -- data are exact or not data;
* :data:`DEFINEDNESS` holds, for every admitted class, what must be true of its
  arguments for it to be defined (``None``: defined wherever its arguments are).

:func:`substitute` is the checker's only substitution: it never rewrites a bound
variable (a binder it cannot see through is a rejection).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.matrices import MatrixBase
from sympy.matrices.expressions import (
    Adjoint, BlockDiagMatrix, BlockMatrix, HadamardProduct, Identity, KroneckerProduct, MatAdd, MatMul, MatPow,
    MatrixSymbol, Transpose, ZeroMatrix,
)
from sympy.matrices.expressions.matexpr import MatrixElement

from .._ground._errors import CertificateError

__all__ = ["GRAMMAR", "MATRIX_NODES", "DEFINEDNESS", "admit", "exact_integer", "substitute"]

#: a Float whose binary exponent exceeds this is not converted (its rational would be huge)
MAX_FLOAT_EXPONENT = 4096

# argument shapes: what every argument of a node must be
ANY, INTEGER, NATURAL, INDEX = "expression", "known integer", "known non-negative integer", "integer index"

#: exact class -> (least, most arguments (None: any), argument shape)
GRAMMAR = {
    sp.Integer: (0, 0, ANY), sp.Rational: (0, 0, ANY), sp.core.numbers.Zero: (0, 0, ANY),
    sp.core.numbers.One: (0, 0, ANY), sp.core.numbers.NegativeOne: (0, 0, ANY), sp.core.numbers.Half: (0, 0, ANY),
    sp.core.numbers.Pi: (0, 0, ANY), sp.core.numbers.Exp1: (0, 0, ANY), sp.core.numbers.ImaginaryUnit: (0, 0, ANY),
    sp.Symbol: (0, 0, ANY), sp.Dummy: (0, 0, ANY),
    sp.Add: (2, None, ANY), sp.Mul: (2, None, ANY), sp.Pow: (2, 2, ANY),
    sp.exp: (1, 1, ANY), sp.log: (1, 1, ANY),
    sp.sin: (1, 1, ANY), sp.cos: (1, 1, ANY), sp.tan: (1, 1, ANY), sp.cot: (1, 1, ANY),
    sp.sec: (1, 1, ANY), sp.csc: (1, 1, ANY),
    sp.asin: (1, 1, ANY), sp.acos: (1, 1, ANY), sp.atan: (1, 1, ANY), sp.atanh: (1, 1, ANY),
    sp.sinh: (1, 1, ANY), sp.cosh: (1, 1, ANY), sp.tanh: (1, 1, ANY),
    sp.Abs: (1, 1, ANY), sp.sign: (1, 1, ANY), sp.floor: (1, 1, ANY), sp.ceiling: (1, 1, ANY),
    sp.re: (1, 1, ANY), sp.im: (1, 1, ANY), sp.conjugate: (1, 1, ANY),
    sp.Max: (2, None, ANY), sp.Min: (2, None, ANY),
    sp.gamma: (1, 1, ANY),
    sp.factorial: (1, 1, NATURAL), sp.binomial: (2, 2, INTEGER), sp.KroneckerDelta: (2, 2, INTEGER),
    sp.Sum: (2, 2, ANY),  # one range (k, a, b): k a symbol, a and b known integers
    sp.Piecewise: (1, None, ANY),
    sp.Indexed: (2, None, INDEX),
    MatrixElement: (3, 3, INDEX),
    AppliedUndef: (0, None, ANY),
}

#: relations and connectives a Piecewise condition may use
CONDITIONS = (sp.Eq, sp.Ne, sp.Lt, sp.Le, sp.Gt, sp.Ge, sp.And, sp.Or, sp.Not,
              sp.logic.boolalg.BooleanTrue, sp.logic.boolalg.BooleanFalse)

#: matrix classes: explicit matrices, and the expressions ``_check._explicit`` makes explicit
MATRIX_NODES = (sp.ImmutableDenseMatrix, sp.MutableDenseMatrix, sp.ImmutableSparseMatrix, sp.MutableSparseMatrix,
                MatrixSymbol, ZeroMatrix, Identity, MatMul, MatAdd, Transpose, Adjoint, MatPow,
                HadamardProduct, KroneckerProduct, BlockMatrix, BlockDiagMatrix)

#: every admitted function class -> what must not vanish for it to be defined ("self": the node
#: itself must be certified finite, its poles being the evaluator's business); None: entire
DEFINEDNESS = {
    sp.exp: None, sp.sin: None, sp.cos: None, sp.sinh: None, sp.cosh: None,
    sp.asin: None, sp.acos: None,  # branch points +-1 are finite values
    sp.Abs: None, sp.sign: None, sp.floor: None, sp.ceiling: None, sp.re: None, sp.im: None,
    sp.conjugate: None, sp.Max: None, sp.Min: None, sp.KroneckerDelta: None, sp.binomial: None,
    sp.factorial: None,  # its argument is a known non-negative integer (GRAMMAR)
    sp.Piecewise: None, sp.Indexed: None, MatrixElement: None, AppliedUndef: None,
    sp.log: lambda a: [a],
    sp.tan: lambda a: [sp.cos(a)], sp.sec: lambda a: [sp.cos(a)],
    sp.cot: lambda a: [sp.sin(a)], sp.csc: lambda a: [sp.sin(a)],
    sp.atan: lambda a: [a ** 2 + 1], sp.atanh: lambda a: [a - 1, a + 1],
    sp.tanh: lambda a: [sp.cosh(a)],
    sp.gamma: "self",
}


def _refuse(why: str):
    raise CertificateError(f"outside the checker's language: {why}")


def exact_integer(value, what: str):
    """``value`` as a SymPy Integer when it is exactly one (a Python int or a SymPy Integer);
    anything else -- a float, a Float, a non-integer Rational, a bool -- is a rejection."""
    if type(value) is int or isinstance(value, sp.Integer):
        return sp.Integer(value)
    raise CertificateError(f"{what} must be an exact integer, not {type(value).__name__} {value!r}")


def _exact_float(f):
    mantissa_sign, mantissa, exponent, _ = f._mpf_
    if not mantissa and exponent:  # the special values: inf, -inf, nan
        _refuse(f"the Float {f} is not a number")
    if abs(exponent) > MAX_FLOAT_EXPONENT:
        _refuse(f"the Float {f} has a binary exponent beyond {MAX_FLOAT_EXPONENT}")
    return sp.Rational(f)


#: how many admitted terms are remembered per mode before the memory is cleared
MAX_REMEMBERED = 50000
_ADMITTED: dict = {(True, True): {}, (True, False): {}, (False, True): {}}
_SAME = object()


class _Admit:
    """One walk over a term; ``floats`` says what a Float becomes (statement) or that it is refused
    (datum); ``evaluate`` whether a node rebuilt around a converted Float is evaluated by SymPy."""

    def __init__(self, floats: bool, evaluate: bool = True):
        self.floats, self.evaluate = floats, evaluate
        # admission is a function of the term alone: remembered across certificates, whose
        # statements repeat their parts' (bounded, and keyed by the mode)
        self.done: dict = _ADMITTED[floats, evaluate]
        if len(self.done) > MAX_REMEMBERED:
            self.done.clear()

    def term(self, node):
        if type(node) is int:
            return sp.Integer(node)
        if type(node) is float and self.floats:
            return _exact_float(sp.Float(node))
        if not isinstance(node, sp.Basic):
            if isinstance(node, MatrixBase):  # a mutable matrix: its entries
                return self.matrix(node)
            _refuse(f"{type(node).__name__} {node!r} is not a SymPy term")
        hit = self.done.get(node)
        if hit is not None:  # an unchanged term is itself, not an equal one met before
            return node if hit is _SAME else hit
        matrix = isinstance(node, MatrixBase) or type(node) in MATRIX_NODES
        result = self.matrix(node) if matrix else self.scalar(node)
        self.done[node] = _SAME if result is node else result
        return result

    def scalar(self, node):
        cls = type(node)
        if cls is sp.Float:
            if not self.floats:
                _refuse(f"the Float {node} in a certificate's data (data are exact)")
            return _exact_float(node)
        row = GRAMMAR.get(cls) or (GRAMMAR[AppliedUndef] if isinstance(node, AppliedUndef) else None)
        if row is None:
            _refuse(f"{cls.__name__} ({_short(node)}) is not listed")
        least, most, shape = row
        args = node.args
        if len(args) < least or (most is not None and len(args) > most):
            _refuse(f"{cls.__name__} with {len(args)} arguments")
        if isinstance(node, sp.Symbol):
            return self.symbol(node)
        if cls is sp.Sum:
            return self.sum_(node)
        if cls is sp.Piecewise:
            return self.piecewise(node)
        if cls is sp.Indexed:
            if not isinstance(node.base.label, sp.Symbol):
                _refuse(f"the indexed base of {node} is not a symbol")
            args = node.indices
            new = [self.term(a) for a in args]
            self.shaped(cls, new, shape)
            return node if list(new) == list(args) else node.func(node.base, *new)
        if cls is MatrixElement:
            parent = node.args[0]
            if not (isinstance(parent, MatrixSymbol) and all(isinstance(d, sp.Integer) for d in parent.shape)):
                _refuse(f"{node} is not an entry of a matrix symbol of concrete shape")
            new = [self.term(a) for a in node.args[1:]]
            self.shaped(cls, new, shape)
            return node
        new = [self.term(a) for a in args]
        self.shaped(cls, new, shape)
        if all(a is b for a, b in zip(new, args)):
            return node
        return self.rebuilt(node.func, new)

    def rebuilt(self, func, args):
        if self.evaluate:
            return func(*args)
        try:
            return func(*args, evaluate=False)
        except TypeError:  # a class without the keyword evaluates nothing
            return func(*args)

    @staticmethod
    def shaped(cls, args, shape):
        for a in args:
            if shape in (INTEGER, INDEX) and a.is_integer is not True:
                _refuse(f"{cls.__name__} of {a}: the argument is not a {shape}")
            if shape == NATURAL and not (a.is_integer is True and a.is_nonnegative is True):
                _refuse(f"{cls.__name__} of {a}: the argument is not a {shape}")

    @staticmethod
    def symbol(node):
        facts = node.assumptions0
        if facts.get("finite") is False or facts.get("infinite") is True:
            _refuse(f"the symbol {node} may be infinite")
        for key, value in facts.items():
            if key.startswith("extended_") and value and facts.get(key[len("extended_"):]) is not True:
                _refuse(f"the symbol {node} is {key} (it may be infinite)")
        return node

    def sum_(self, node):
        if len(node.limits) != 1 or len(node.limits[0]) != 3:
            _refuse(f"{_short(node)} does not sum over one range (k, a, b)")
        k, a, b = node.limits[0]
        if not isinstance(k, sp.Symbol):
            _refuse(f"the index of {_short(node)} is not a symbol")
        self.symbol(k)
        a, b = self.term(a), self.term(b)
        if a.is_integer is not True or b.is_integer is not True:
            _refuse(f"the bounds of {_short(node)} are not known integers")
        function = self.term(node.function)
        if (function, a, b) == (node.function, *node.limits[0][1:]):
            return node
        return sp.Sum(function, (k, a, b))

    def piecewise(self, node):
        pieces = []
        for pair in node.args:
            expr, condition = pair.args
            pieces.append((self.term(expr), self.condition(condition)))
        return node if all(p == q.args for p, q in zip(pieces, node.args)) else self.rebuilt(sp.Piecewise, pieces)

    def condition(self, node):
        if type(node) not in CONDITIONS:
            _refuse(f"the condition {_short(node)} is not a relation or connective")
        if not node.args:
            return node
        # a relation's sides are terms; only a connective's arguments are conditions (a Symbol is a
        # Boolean to SymPy too, so the type of the argument cannot tell them apart)
        inner = self.term if isinstance(node, sp.core.relational.Relational) else self.condition
        new = [inner(a) for a in node.args]
        return node if all(a is b for a, b in zip(new, node.args)) else self.rebuilt(node.func, new)

    def matrix(self, node):
        if isinstance(node, MatrixBase):
            if type(node) not in MATRIX_NODES:
                _refuse(f"the matrix class {type(node).__name__} is not listed")
            entries = node.todok()  # the non-zero entries: a wide sparse matrix is not walked cell by cell
            new = {at: self.term(e) for at, e in entries.items()}
            if isinstance(node, (sp.ImmutableDenseMatrix, sp.ImmutableSparseMatrix)) \
                    and all(new[at] is e for at, e in entries.items()):
                return node
            if isinstance(node, sp.SparseMatrix):
                return sp.ImmutableSparseMatrix(node.rows, node.cols, new)
            return sp.ImmutableMatrix(node.rows, node.cols, lambda r, q: new.get((r, q), sp.S.Zero))
        cls = type(node)
        if cls in (MatrixSymbol, ZeroMatrix, Identity):
            if not all(isinstance(d, sp.Integer) for d in node.shape):
                _refuse(f"{node} has no concrete shape")
            return node
        if cls is MatPow:
            exact_integer(node.args[1], "a matrix power")
            base = self.term(node.args[0])
            return node if base is node.args[0] else MatPow(base, node.args[1])
        if cls is BlockMatrix:
            grid = node.blocks
            new = [[self.term(grid[r, q]) for q in range(grid.cols)] for r in range(grid.rows)]
            same = all(new[r][q] is grid[r, q] for r in range(grid.rows) for q in range(grid.cols))
            return node if same else BlockMatrix(new)
        new = [self.term(a) for a in node.args]
        return node if all(a is b for a, b in zip(new, node.args)) else cls(*new)


def _short(node) -> str:
    text = str(node)
    return text if len(text) <= 80 else text[:77] + "..."


def admit(term, *, statement: bool, evaluate: bool = True):
    """``term`` parsed against the checker's grammar: a statement with every Float read as the
    binary rational it stores, a datum unchanged (a Float in it is a rejection).  Raises
    :class:`CertificateError` for anything outside the language.

    A node rebuilt around a converted Float is evaluated by SymPy, and the result parsed again
    (``0.0/0`` becomes ``nan``, refused); ``evaluate=False`` keeps every node, so that its side
    conditions can be read off (``0.0/(sin^2 + cos^2 - 1)`` evaluates to 0)."""
    admitted = _Admit(statement, evaluate).term(term)
    if statement and evaluate and admitted is not term:
        _Admit(False).term(admitted)
    if not statement and isinstance(term, (sp.Basic, MatrixBase)) and term.atoms(sp.Float):
        # also when a SymPy that equates a Float with a Rational served it from the walk's memo
        _refuse(f"a Float in a certificate's data ({_short(term)}): data are exact")
    return admitted


_BINDERS = (sp.Subs, sp.Lambda, sp.Product, sp.Integral)


def substitute(expr, mapping: dict):
    """``expr`` with each free occurrence of a variable of ``mapping`` replaced: a sum's bound index
    is never rewritten, and it is renamed when a replacement would be captured by it."""
    if isinstance(expr, MatrixBase):
        return expr.applyfunc(lambda e: substitute(e, mapping))
    if not isinstance(expr, sp.Basic):
        return expr
    live = {v: w for v, w in mapping.items() if v in expr.free_symbols}
    if not live:
        return expr
    if isinstance(expr, _BINDERS):
        raise CertificateError(f"no substitution through the binder {type(expr).__name__}")
    if not expr.has(sp.Sum, *_BINDERS):
        return expr.xreplace(live)
    if isinstance(expr, sp.Sum):
        (k, a, b), = expr.limits
        body = expr.function
        inner = {v: w for v, w in live.items() if v != k}
        if any(k in sp.sympify(w).free_symbols for w in inner.values()):
            fresh = sp.Dummy(k.name, **k.assumptions0)
            body, k = substitute(body, {k: fresh}), fresh
        return sp.Sum(substitute(body, inner), (k, substitute(a, live), substitute(b, live)))
    return expr.func(*[substitute(a, live) for a in expr.args])
