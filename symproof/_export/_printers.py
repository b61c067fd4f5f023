"""The SymPy code printers every exported body is printed with, one subclass per target.

Each takes ``names``: the spelling of the kernel's symbols in the template the
expression is printed into (``cos_t`` as ``c`` in C, as ``cos_`` in NumPy...);
every other symbol is printed as SymPy prints it.  Expressions reach them from
the whitelisted formula parser or from :mod:`symproof._export._symbolic`, so
nothing a description file wrote is printed except as numbers and
whitelisted functions.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

__all__ = ["NumPyKernelPrinter", "PythonKernelPrinter", "CKernelPrinter", "torch_printer", "guard_table_reads", "C_MOD",
           "reads_table", "table_reader", "range_guard", "c_range_guard", "c_table_reader", "c_status_codes", "C_STATUS_CODES"]


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


# -- mod(a, b): the remainder with the sign of b ------------------------------------------------------
#
# C's ``fmod`` and ``%`` keep the sign of ``a`` (``fmod(-1, 3) = -1``); the formula language's ``mod`` has
# the sign of ``b`` (``mod(-1, 3) = 2``, ``b > 0`` at load).  Every target prints it as IEEE ``fmod`` (exact:
# the remainder of two float64 numbers is a float64 number) with ``b`` added to a negative remainder (exact
# when both are integers: the sum lies in ``0..b``): the same value, not a library's choice of sign.


#: most terms of a ``mod`` argument reduced term by term (each reduced term lies in ``-b..b``)
_MOST_REDUCED = 8


def reduced_mod_argument(expr):
    """``a`` of ``Mod(a, b)``, or, when ``b`` is a positive integer and ``a`` a sum of integers and of
    symbols with coefficient +-1 (``m - 5``, ``j - i``), the same sum with every symbol ``s`` replaced by
    ``Mod(s, b)`` and the constant by its residue: the same remainder for every real value of the symbols
    (``mod(a + c, b) = mod(mod(a, b) + c, b)``), and, in float64, exact at every integer position a kernel
    is called with: ``m - 5`` rounds at ``m = 2**63``, ``fmod(m, 4) - 5`` does not."""
    a, b = expr.args
    if not (b.is_Integer and b > 0) or a.is_Symbol:
        return a
    terms, constant = [], sp.Integer(0)
    for term in sp.Add.make_args(a):
        coefficient, rest = term.as_coeff_Mul()
        if rest == 1 and coefficient.is_Integer:
            constant += coefficient
        elif rest.is_Symbol and coefficient in (1, -1):
            terms.append(coefficient * sp.Mod(rest, b, evaluate=False))
        else:
            return a
    if not terms or len(terms) > _MOST_REDUCED or (len(terms) + 1) * int(b) >= 2**53:
        return a
    return sp.Add(*terms, *([constant % b] if constant % b else []), evaluate=False)


def _python_mod(printer, expr, lib: str) -> str:
    reduced = reduced_mod_argument(expr)
    a, b = printer._print(reduced), printer._print(expr.args[1])
    if lib == "torch":
        a = f"torch.as_tensor({a}, dtype=torch.float64)"
    return f"(lambda r, b: {lib}.where(r < 0, r + b, r))({lib}.fmod({a}, {b}), {b})"


#: the C function every ``mod`` is printed as (appended to a file that uses it)
C_MOD = ["static double mod_floor(double a, double b)", "{",
         "    /* mod(a, b) for b > 0: fmod is exact, and keeps the sign of a; adding b to a negative",
         "       remainder gives the sign of b (exact for integers) */",
         "    double r = fmod(a, b);", "    return r < 0.0 ? r + b : r;", "}"]


def _table_values(expr) -> str:
    return ", ".join(repr(float(v)) for v in type(expr).values)


# -- bounds-checked table reads ---------------------------------------------------------------------
#
# Every target reads a ``[params]`` table through one checked function, never by raw indexing: an
# index outside 0..len-1 (or not an integer, or NaN) is an error naming the positions that produced
# it, never a wrap-around at negative indices (NumPy, torch) nor a read past the array (C).


def _table_call(printer, expr) -> str:
    """``_read_table('name', (values), index, ('m',), (m,))``: the symbols the index reads are passed
    by name, so that the error can say which positions read outside the table."""
    index = expr.args[0]
    symbols = sorted(index.free_symbols, key=str)
    names = "".join(f"{str(s)!r}, " for s in symbols)
    values = "".join(f"{printer._print(s)}, " for s in symbols)
    return (f"_read_table({type(expr).table_name!r}, ({_table_values(expr)},), {printer._print(index)}, "
            f"({names}), ({values}))")


def _is_table_read(expr) -> bool:
    return bool(getattr(type(expr), "table_name", ""))


def guard_table_reads(expr):
    """``expr`` with every table read inside a ``Piecewise`` branch made to read entry 0 where the branch
    is not taken.  NumPy and torch evaluate every branch of ``where`` at every element; a table read
    in a branch not chosen there (``where(m < 16, P(m), 0)`` at m = 20) must not be an error, one in
    the chosen branch must.  (C's ``?:`` evaluates one branch; the guard changes nothing there.)"""
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    if isinstance(expr, sp.Piecewise):
        pieces, earlier = [], sp.false
        for value, condition in expr.args:
            taken = condition if earlier is sp.false else sp.And(condition, sp.Not(earlier))
            pieces.append((_guarded(guard_table_reads(value), taken), condition))
            earlier = condition if earlier is sp.false else sp.Or(earlier, condition)
        return sp.Piecewise(*pieces, evaluate=False)
    if not reads_table(expr):
        return expr
    return expr.func(*[guard_table_reads(a) for a in expr.args])


def _guarded(value, taken):
    if taken is sp.true or not isinstance(value, sp.Basic):
        return value
    reads = [f for f in value.atoms(sp.Function) if _is_table_read(f)]
    if not reads:
        return value
    return value.xreplace({f: type(f)(sp.Piecewise((f.args[0], taken), (0, True))) for f in reads})


def reads_table(expr) -> bool:
    """Whether ``expr`` reads a ``[params]`` table."""
    return isinstance(expr, sp.Basic) and any(_is_table_read(f) for f in expr.atoms(sp.Function))


#: the return codes of exported C kernels (``{PREFIX}_OK``...), each with its meaning
C_STATUS_CODES = (("OK", 0, "every value computed"),
                  ("POSITION_OUT_OF_TABLE", 1, "a position reads a [params] table outside its entries 0..len-1 "
                                               "(no entry is read; out is then unspecified)"))


def c_status_codes(prefix: str) -> list:
    """``#define`` lines of :data:`C_STATUS_CODES`, each with its meaning."""
    return [f"#define {prefix}_{name} {code}  /* {meaning} */" for name, code, meaning in C_STATUS_CODES]


def c_table_reader(prefix: str) -> list:
    """The checked read every C table read goes through: an index outside the table (or NaN, or not an
    integer) records ``{prefix}_POSITION_OUT_OF_TABLE`` in ``*status`` and reads nothing."""
    return ["static double read_table(const double *values, long size, double index, int *status)", "{",
            "    /* !(a && b) also holds for NaN */",
            "    if (!(index >= 0.0 && index <= (double)(size - 1)) || index != floor(index)) {",
            f"        *status = {prefix}_POSITION_OUT_OF_TABLE;", "        return 0.0;", "    }",
            "    return values[(long)index];", "}"]


#: the checked read of the Python targets; standalone, as the exported files are
_PYTHON_TABLE_READER = {
    "numpy": '''

class PositionOutOfTableError(IndexError):
    """A position reads a [params] table outside its entries 0..len-1 (no wrap-around at negative ones)."""


def _read_table(name, values, index, names, positions):
    index = numpy.asarray(index, dtype=numpy.float64)
    inside = (index >= 0) & (index <= len(values) - 1) & (index == numpy.floor(index))
    if not numpy.all(inside):
        arrays = numpy.broadcast_arrays(index, *(numpy.asarray(p, dtype=numpy.float64) for p in positions))
        where = tuple(numpy.argwhere(~numpy.broadcast_to(inside, arrays[0].shape))[0])
        _out_of_table(name, len(values), float(arrays[0][where]), names, [float(a[where]) for a in arrays[1:]])
    return numpy.asarray(values, dtype=numpy.float64)[index.astype(numpy.int64)]
''',
    "torch": '''

class PositionOutOfTableError(IndexError):
    """A position reads a [params] table outside its entries 0..len-1 (no wrap-around at negative ones)."""


def _read_table(name, values, index, names, positions):
    index = torch.as_tensor(index, dtype=torch.float64)
    inside = (index >= 0) & (index <= len(values) - 1) & (index == torch.floor(index))
    if not bool(torch.all(inside)):
        arrays = torch.broadcast_tensors(index, *(torch.as_tensor(p, dtype=torch.float64) for p in positions))
        where = tuple(torch.nonzero(~inside.expand(arrays[0].shape))[0].tolist())
        _out_of_table(name, len(values), float(arrays[0][where]), names, [float(a[where]) for a in arrays[1:]])
    return torch.tensor(values, dtype=torch.float64, device=index.device)[index.long()]
''',
}

_OUT_OF_TABLE = '''

def _number(value):
    return str(int(value)) if value == value and abs(value) < 2**63 and value == int(value) else repr(value)


def _out_of_table(name, size, index, names, values):
    at = ", ".join(f"{n} = {_number(v)}" for n, v in zip(names, values)) or "every position"
    raise PositionOutOfTableError(f"position {at} reads table {name!r} at index {_number(index)}, outside "
                                  f"its entries 0..{size - 1}")
'''


# -- a declared range of positions (positions = "0..N") ------------------------------------------------
#
# A file that declares its positions 0..N is defined there only (a learned table of N + 1 rows needs no
# clip): its kernels refuse every other position -- negative, past N, not an integer, NaN -- before
# computing anything, in one line naming the position and the range (no wrap-around, no read past a table).

_RANGE_GUARD = {
    "numpy": ("numpy.asarray({}, dtype=numpy.float64)", "numpy.floor", "numpy.all", "numpy.argwhere"),
    "torch": ("torch.as_tensor({}, dtype=torch.float64)", "torch.floor", "torch.all", "torch.nonzero"),
}


def range_guard(target: str, last) -> list:
    """The Python lines of ``LAST_POSITION`` and ``_check_positions(name, positions)`` for ``target``
    (numpy or torch): every position must be an integer in ``0..LAST_POSITION``, else
    ``PositionOutOfRangeError`` (an ``IndexError``) in one line.  Nothing when ``last`` is ``None``."""
    if last is None:
        return []
    array, floor, every, where = _RANGE_GUARD[target]
    return ["", f"LAST_POSITION = {int(last)}  # the file's positions are 0..LAST_POSITION", "", "",
            "class PositionOutOfRangeError(IndexError):",
            '    """A position outside the file\'s declared positions 0..LAST_POSITION (or not an integer)."""',
            "", "",
            "def _check_positions(name, positions):",
            f"    p = {array.format('positions')}",
            f"    inside = (p >= 0) & (p <= LAST_POSITION) & (p == {floor}(p))",
            f"    if not bool({every}(inside)):",
            f"        bad = float(p[tuple({where}(~inside)[0].tolist())]) if p.ndim else float(p)",
            "        shown = str(int(bad)) if bad == bad and abs(bad) < 2**63 and bad == int(bad) else repr(bad)",
            ("        raise PositionOutOfRangeError(f\"position {name} = {shown} is outside the file's positions "
             "0..{LAST_POSITION} (positions = '0..{LAST_POSITION}'): pass integer positions in 0..{LAST_POSITION}\")")]


def c_range_guard(prefix: str, last) -> list:
    """C: the ``{prefix}_POSITION_OUT_OF_RANGE`` code and ``outside_range(p)`` (NaN is outside too)."""
    if last is None:
        return []
    return [(f"#define {prefix}_POSITION_OUT_OF_RANGE 2  /* a position outside the file's positions 0..{int(last)} "
             "(or not an integer): nothing is computed, out is then unspecified */"),
            f"#define {prefix}_LAST_POSITION {float(last)!r}", "",
            "static int outside_range(double p)",
            "{",
            "    /* !(a && b) also holds for NaN */",
            f"    return !(p >= 0.0 && p <= {prefix}_LAST_POSITION) || p != floor(p);",
            "}"]


def table_reader(target: str) -> str:
    """The Python source of ``_read_table`` and its error for ``target`` (numpy or torch): appended to
    a file whose body reads a table."""
    return _PYTHON_TABLE_READER[target] + _OUT_OF_TABLE


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
        return _table_call(self, expr)

    def _print_floor(self, expr):
        return _integer_part(self, expr, "numpy.floor")

    def _print_ceiling(self, expr):
        return _integer_part(self, expr, "numpy.ceil")

    def _print_Mod(self, expr):
        return _python_mod(self, expr, "numpy")

    def _print_sign(self, expr):
        return f"numpy.sign({self._print(expr.args[0])})"


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
        # status: the int * every generated C function that prints a formula has in scope
        return (f"read_table((const double[]){{{_table_values(expr)}}}, {len(type(expr).values)}, "
                f"{self._print(expr.args[0])}, status)")

    def _print_floor(self, expr):
        return _integer_part(self, expr, "floor")

    def _print_ceiling(self, expr):
        return _integer_part(self, expr, "ceil")

    def _print_Mod(self, expr):
        return f"mod_floor({self._print(reduced_mod_argument(expr))}, {self._print(expr.args[1])})"


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
                 "_print_LookupBase": _table_call,
                 "_print_floor": lambda self, expr: _integer_part(self, expr, "torch.floor"),
                 "_print_ceiling": lambda self, expr: _integer_part(self, expr, "torch.ceil"),
                 "_print_Mod": lambda self, expr: _python_mod(self, expr, "torch"),
                 "_print_sign": lambda self, expr: f"torch.sign({tensor(self, expr.args[0])})"})


def torch_printer(names=None, settings=None):
    """A PyTorch printer (the class is made on first use: it imports torch)."""
    return _torch_class()(names, settings)


def numbers_as_floats(expr):
    """Every numeric subexpression of ``expr`` (``10000**(-k/64)``, ``log(2)``) as one float: torch's
    functions refuse two Python numbers (``torch.pow(10000, -0.03125)`` raises), and ``sp.N`` leaves
    such powers unevaluated inside a product with symbols."""
    if isinstance(expr, sp.Expr) and expr.is_number and not expr.is_Number:
        return sp.Float(sp.N(expr, 20), 20)
    if isinstance(expr, (sp.floor, sp.ceiling)):
        # keep floor(n / q) one division of an exact numerator (see _printers._integer_part)
        numerator, denominator = split_fraction(expr.args[0])
        if denominator != 1 and denominator.is_Integer:
            return expr.func(numbers_as_floats(numerator) / denominator, evaluate=False)
    if not expr.args:
        return sp.N(expr, 20) if isinstance(expr, sp.Rational) and not expr.is_Integer else expr
    return expr.func(*[numbers_as_floats(a) for a in expr.args])


def with_table_reader(lines: list, target: str) -> str:
    """The file of ``lines``, with the checked table read appended when a formula reads a table."""
    text = "\n".join(lines) + "\n"
    return text + table_reader(target) if "_read_table(" in text else text


def c_functions(printed: list, prefix: str) -> list:
    """The checked table read (and a blank line) when one of the ``printed`` C texts reads a table, and
    :data:`C_MOD` when one takes a ``mod``."""
    out = [*c_table_reader(prefix), ""] if any("read_table(" in text for text in printed) else []
    return out + ([*C_MOD, ""] if any("mod_floor(" in text for text in printed) else [])
