"""The independent checker: re-checks the certificates the prover attaches to its proofs.

Nothing here imports the prover's tactics.  A *proved* verdict rests on these
modules, on the SymPy and mpmath names in :data:`TRUSTED_SYMPY` (functions
called, classes built or tested against) and the SymPy methods in
:data:`TRUSTED_METHODS`, and on nothing else; a test scans the source and fails
when the checker starts using a name that is not listed.
"""

from ._certificate import KINDS, Certificate
from ._check import certificate_holds, check_certificate
from ._interval import certainly_finite, certainly_nonzero, enclose

__all__ = ["Certificate", "KINDS", "check_certificate", "certificate_holds",
           "certainly_finite", "certainly_nonzero", "enclose", "TRUSTED_SYMPY", "TRUSTED_METHODS"]

#: every SymPy and mpmath name the checker refers to
TRUSTED_SYMPY = (
    'mpmath.iv.atan2', 'mpmath.iv.cos', 'mpmath.iv.e', 'mpmath.iv.exp', 'mpmath.iv.gamma', 'mpmath.iv.log',
    'mpmath.iv.mpf', 'mpmath.iv.pi', 'mpmath.iv.prec', 'mpmath.iv.sin', 'mpmath.iv.sqrt', 'mpmath.libmp.fzero',
    'mpmath.libmp.mpf_sign', 'mpmath.mpf', 'mpmath.workprec', 'sympy.Abs', 'sympy.Add', 'sympy.Add.make_args',
    'sympy.And', 'sympy.Basic', 'sympy.Dummy', 'sympy.E', 'sympy.Eq', 'sympy.Equality', 'sympy.Expr',
    'sympy.Float', 'sympy.Ge', 'sympy.GreaterThan', 'sympy.Gt', 'sympy.Heaviside', 'sympy.I',
    'sympy.ImmutableDenseMatrix', 'sympy.ImmutableMatrix', 'sympy.ImmutableSparseMatrix', 'sympy.Indexed',
    'sympy.Integer', 'sympy.Integral', 'sympy.KroneckerDelta', 'sympy.Lambda', 'sympy.Le', 'sympy.LessThan',
    'sympy.Lt', 'sympy.Matrix', 'sympy.Matrix.hstack', 'sympy.Matrix.vstack', 'sympy.Max', 'sympy.Min',
    'sympy.Mul', 'sympy.Mul.make_args', 'sympy.MutableDenseMatrix', 'sympy.MutableSparseMatrix', 'sympy.Ne',
    'sympy.Not', 'sympy.Or', 'sympy.Piecewise', 'sympy.Poly', 'sympy.Pow', 'sympy.Product', 'sympy.QQ',
    'sympy.Rational', 'sympy.S.One', 'sympy.S.Zero', 'sympy.SparseMatrix', 'sympy.StrictGreaterThan',
    'sympy.StrictLessThan', 'sympy.Subs', 'sympy.Sum', 'sympy.Symbol', 'sympy.Unequality', 'sympy.acos',
    'sympy.asin', 'sympy.atan', 'sympy.atanh', 'sympy.binomial', 'sympy.cancel', 'sympy.ceiling',
    'sympy.concrete.expr_with_limits.ExprWithLimits', 'sympy.conjugate', 'sympy.core.function.AppliedUndef',
    'sympy.core.numbers.Exp1', 'sympy.core.numbers.Half', 'sympy.core.numbers.ImaginaryUnit',
    'sympy.core.numbers.NegativeOne', 'sympy.core.numbers.One', 'sympy.core.numbers.Pi',
    'sympy.core.numbers.Zero', 'sympy.core.relational.Relational', 'sympy.cos', 'sympy.cosh', 'sympy.cot',
    'sympy.csc', 'sympy.diag', 'sympy.exp', 'sympy.expand', 'sympy.expand_mul', 'sympy.eye', 'sympy.factorial',
    'sympy.factorint', 'sympy.false', 'sympy.floor', 'sympy.fraction', 'sympy.gamma', 'sympy.im', 'sympy.log',
    'sympy.logic.boolalg.BooleanFalse', 'sympy.logic.boolalg.BooleanTrue',
    'sympy.matrices.MatrixBase', 'sympy.matrices.expressions.Adjoint',
    'sympy.matrices.expressions.BlockDiagMatrix', 'sympy.matrices.expressions.BlockMatrix',
    'sympy.matrices.expressions.HadamardProduct', 'sympy.matrices.expressions.Identity',
    'sympy.matrices.expressions.KroneckerProduct', 'sympy.matrices.expressions.MatAdd',
    'sympy.matrices.expressions.MatMul', 'sympy.matrices.expressions.MatPow',
    'sympy.matrices.expressions.MatrixExpr', 'sympy.matrices.expressions.MatrixSymbol',
    'sympy.matrices.expressions.Transpose', 'sympy.matrices.expressions.ZeroMatrix',
    'sympy.matrices.expressions.matexpr.MatrixElement', 'sympy.parallel_poly_from_expr', 'sympy.pi',
    'sympy.polys.rings.ring', 'sympy.re', 'sympy.roots', 'sympy.sec', 'sympy.sign', 'sympy.sin', 'sympy.sinh',
    'sympy.sympify', 'sympy.tan', 'sympy.tanh', 'sympy.together', 'sympy.true', 'sympy.zeros',
)

#: every SymPy method the checker calls on a term, a matrix or a polynomial
TRUSTED_METHODS = (
    'add', 'applyfunc', 'as_coeff_Mul', 'atoms', 'degree', 'flat', 'func', 'has', 'hstack', 'is_polynomial',
    'multiply_elementwise', 'replace', 'terms', 'todok', 'vstack', 'xreplace',
)
