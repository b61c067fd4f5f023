"""Formulas in variant files, parsed as data: never evaluated as Python.

Description files travel between people, so a formula such as ``m / s`` or
``10000 * s**(d/(d-2))`` must not be able to run code.  SymPy's ``sympify``
and ``parse_expr`` call ``eval``; this module does not.  The text is parsed by
``ast.parse(..., mode="eval")`` and the tree is walked with a whitelist:

- numbers (integers and decimals, turned into exact rationals; no ``1j``, no
  booleans, no strings), bounded in magnitude;
- names from the context's whitelist (``r``, ``m``, parameters...) and the
  constants ``pi`` and ``E``;
- ``+ - * / **`` and unary ``-``/``+``;
- calls of whitelisted functions by name, positional arguments only;
- one comparison (``< <= > >= == !=``) as the first argument of ``where`` and
  nowhere else; ``sum(expr, k, a, b)`` binds the new name ``k`` inside ``expr``
  for the integers ``a..b`` (bounds that evaluate to integers, at most
  :data:`MAX_SUM_TERMS` terms).

Anything else (attribute access, subscripts, lambdas, comprehensions,
keyword arguments, comparisons outside ``where``, ``^``...) is refused with an error that
names the offending construct.  Exhausting memory is refused too: the text
length, the number of nodes, literal sizes and every power (``base**exp``
with numeric operands, checked with the *actual* values each time the
formula is built, so that ``10**(10**r)`` cannot explode when ``r`` becomes
concrete) are bounded.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Callable, Mapping

import sympy as sp
from sympy.core.function import AppliedUndef

from .._ground._errors import VariantFileError

__all__ = [
    "Formula", "parse_formula", "mod_as_floor", "FUNCTIONS", "FUNCTION_MEANINGS", "COMPARISONS", "CONSTANTS", "clip", "ramp",
    "MAX_SUM_TERMS", "MAX_TABLE_VALUES", "LookupBase", "lookup_table",
    "MAX_FORMULA_CHARS", "MAX_NODES", "MAX_LITERAL", "MAX_EXPONENT", "MAX_POWER_BITS", "MAX_EXP_ARGUMENT",
    "MAX_VALUE_NODES",
]

#: longest accepted formula text
MAX_FORMULA_CHARS = 400
#: most syntax-tree nodes in one formula
MAX_NODES = 160
#: largest magnitude of a literal number (and of the inverse of a small one)
MAX_LITERAL = 10**30
#: largest magnitude of a numeric exponent
MAX_EXPONENT = 256
#: largest size, in bits, of an exact number a power (or any operation) may produce
MAX_POWER_BITS = 8192
#: largest magnitude of a number ``exp`` is applied to (``exp(5000)`` has about 7200 bits)
MAX_EXP_ARGUMENT = 5000
#: most nodes in the value of one formula once its names are replaced by their values
#: (products of parameters that are themselves products grow without this bound)
MAX_VALUE_NODES = 4000


def clip(x, low, high):
    """``x`` limited to ``[low, high]`` (``Min(Max(x, low), high)``)."""
    x, low, high = (sp.sympify(v) for v in (x, low, high))
    if x.is_number and low.is_number and high.is_number:
        # decided by SymPy's certified numeric comparison; Min/Max would search for redundant
        # arguments symbolically first, ~30 ms per call on a transcendental number
        for bound, outside in ((low, x <= low), (high, x >= high)):
            if outside is sp.true:
                return bound
        if (x > low) is sp.true and (x < high) is sp.true:
            return x
    return sp.Min(sp.Max(x, low), high)


#: what ``ramp`` adds to ``high`` when ``low == high``, as Hugging Face transformers' YaRN does
#: (``linear_ramp_factor``: "if min == max: max += 0.001  # Prevent singularity")
RAMP_DEGENERATE_WIDTH = sp.Rational(1, 1000)


def ramp(x, low, high):
    """0 below ``low``, 1 above ``high``, linear in between (YaRN's and Llama-3's blend).

    When ``low == high`` the ramp is the steep one transformers uses, from ``low`` to
    ``low + 1/1000``, not a division by zero."""
    low, high = sp.sympify(low), sp.sympify(high)
    if (high - low).is_zero:
        high = low + RAMP_DEGENERATE_WIDTH
    return clip((x - low) / (high - low), 0, 1)


def _log(x, base=None):
    return sp.log(x) if base is None else sp.log(x, base)


def _bounded_integer_part(func):
    """``floor``/``ceiling`` evaluate their argument's digits: refuse astronomically large ones."""

    def build(x):
        if x.is_number:
            try:
                size = abs(float(sp.N(x, 15)))
            except (TypeError, ValueError, OverflowError):
                size = math.inf
            if not math.isfinite(size):
                raise _Refused(f"takes {func.__name__} of a number too large to evaluate exactly")
        return func(x)

    return build


def _magnitude(x) -> float:
    try:
        return abs(float(sp.N(x, 15)))
    except (TypeError, ValueError, OverflowError):
        return math.inf


def _bounded_exp(x):
    """``exp`` of a number of bounded magnitude: ``exp(exp(exp(9)))`` is refused, not evaluated."""
    if x.is_number and _magnitude(x) > MAX_EXP_ARGUMENT:
        raise _Refused(f"takes exp of {sp.sstr(x)[:60]}, beyond the accepted |argument| <= {MAX_EXP_ARGUMENT}")
    return sp.exp(x)


def _mod(a, b):
    """``a - b*floor(a/b)``, the sign of ``b`` (``mod(-1, 3) = 2``), as SymPy's ``Mod``; a ``b`` that is not
    a positive number where the formula is built (``mod(m, 0)``, ``mod(m, r)`` at a symbolic ``r``) is refused."""
    if not b.is_number:
        raise _Refused(f"takes mod(a, b) with b = {sp.sstr(b)[:40]}, which is not a constant; expected b a "
                       "positive number or [params] value (mod(m, 4))")
    if b.is_extended_real is not True or b.is_positive is not True:
        raise _Refused(f"takes mod(a, b) with b = {sp.sstr(b)[:40]}; expected b > 0 (mod(a, b) lies in 0..b, "
                       "with the sign of b): write mod(a, -b) as -mod(-a, b)")
    return sp.Mod(a, b)


def mod_as_floor(expr):
    """``expr`` with every ``Mod(a, b)`` written ``a - b*floor(a/b)`` (equal for ``b > 0``): ``floor`` is in the
    prover's fragment and the certified evaluator's language, ``Mod`` in neither."""
    if not isinstance(expr, sp.Basic) or not expr.has(sp.Mod):
        return expr
    return expr.replace(sp.Mod, lambda a, b: a - b * sp.floor(a / b))


def _where(condition, if_true, if_false):
    """``if_true`` where ``condition`` holds, else ``if_false`` (a step function, T5's and Shaw's clipping)."""
    if condition is sp.true:
        return if_true
    if condition is sp.false:
        return if_false
    return sp.Piecewise((if_true, condition), (if_false, True))


def _sum(*_):  # built by _Builder itself: its second argument is a bound name, not a value
    raise AssertionError("unreachable")


#: most terms of one ``sum(expr, k, a, b)``
MAX_SUM_TERMS = 256

#: the comparisons ``where``'s condition may use (and nothing else may)
COMPARISONS = {ast.Lt: (sp.Lt, "<"), ast.LtE: (sp.Le, "<="), ast.Gt: (sp.Gt, ">"), ast.GtE: (sp.Ge, ">="),
               ast.Eq: (sp.Eq, "=="), ast.NotEq: (sp.Ne, "!=")}

#: name -> (SymPy builder, smallest and largest number of arguments)
FUNCTIONS: dict = {
    "sin": (sp.sin, 1, 1), "cos": (sp.cos, 1, 1), "tan": (sp.tan, 1, 1),
    "exp": (_bounded_exp, 1, 1), "log": (_log, 1, 2), "sqrt": (sp.sqrt, 1, 1),
    "floor": (_bounded_integer_part(sp.floor), 1, 1),
    "ceiling": (_bounded_integer_part(sp.ceiling), 1, 1), "abs": (sp.Abs, 1, 1),
    "mod": (_mod, 2, 2), "sign": (sp.sign, 1, 1),
    "Min": (sp.Min, 2, 8), "Max": (sp.Max, 2, 8), "min": (sp.Min, 2, 8), "max": (sp.Max, 2, 8),
    "clip": (clip, 3, 3), "ramp": (ramp, 3, 3),
    "where": (_where, 3, 3), "sum": (_sum, 4, 4),
}

#: what each function computes, for the README's table and error messages (a test keeps the two in step)
FUNCTION_MEANINGS: dict = {
    "sin": "sine", "cos": "cosine", "tan": "tangent", "exp": f"exponential (|argument| <= {MAX_EXP_ARGUMENT})",
    "log": "natural logarithm; log(x, b) to base b", "sqrt": "square root", "floor": "largest integer <= x",
    "ceiling": "smallest integer >= x", "abs": "absolute value",
    "mod": "mod(a, b) = a - b*floor(a/b), in 0 <= mod(a, b) < b: the sign of b (mod(-1, 3) = 2); b a positive "
           "constant",
    "sign": "sign(x): 1 for x > 0, -1 for x < 0, 0 at 0",
    "Min": "smallest of 2 to 8 arguments", "Max": "largest of 2 to 8 arguments", "min": "same as Min",
    "max": "same as Max", "clip": "clip(x, low, high) = Min(Max(x, low), high)",
    "ramp": "ramp(x, low, high): 0 below low, 1 above high, linear between",
    "where": "where(a < b, x, y): x where the comparison holds, else y (< <= > >= == !=)",
    "sum": f"sum(expr, k, a, b): expr summed over the integers k = a..b (at most {MAX_SUM_TERMS} terms)",
}

CONSTANTS: dict = {"pi": sp.pi, "E": sp.E}

#: most values of one lookup table (``[params] name = [v0, v1, ...]``)
MAX_TABLE_VALUES = 4096


class LookupBase(AppliedUndef):
    """``name(index)``: entry ``index`` (an integer 0..len-1) of a table of exact numbers written in the
    file (T5's buckets, Shaw's clipped offsets, learned values).  Unevaluated at a symbolic index, so
    ``T(j - i)`` on both sides of an identity is the same expression, and to the prover an undefined
    function of its argument (an opaque atom of its fragment): what it proves then holds for every table,
    this one included; at a concrete index it is the table's entry.  A concrete index outside the
    table, or not an integer, is an error naming the table.  (The name ends in ``Base`` so that SymPy's
    printers dispatch every table's class to ``_print_LookupBase``.)"""

    values: tuple = ()
    table_name: str = ""

    @classmethod
    def eval(cls, index):
        if index.is_number:
            if not index.is_Integer:
                try:
                    rounded = sp.Integer(round(float(sp.N(index, 30))))
                except (TypeError, ValueError, OverflowError):
                    raise ValueError(f"table {cls.table_name!r} indexed by {index}, which is not an integer") from None
                if not sp.simplify(index - rounded) == 0:
                    raise ValueError(f"table {cls.table_name!r} indexed by {index}, which is not an integer")
                index = rounded
            if not 0 <= int(index) < len(cls.values):
                raise ValueError(f"table {cls.table_name!r} indexed by {index}, outside 0..{len(cls.values) - 1}")
            return cls.values[int(index)]
        return None


def lookup_table(name: str, values) -> type:
    """The :class:`LookupBase` function of the table ``name`` (a class, as SymPy functions are)."""
    return type(f"table_{name}", (LookupBase,), {"values": tuple(sp.sympify(v) for v in values), "table_name": name})

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_HINTS = {
    ast.BitXor: "uses '^', which is not a power here: write '**'",
    ast.FloorDiv: "uses '//', which is not supported: write floor(a / b)",
    ast.Mod: "uses '%', which is outside the formula language: write a % b as mod(a, b)",
    ast.MatMult: "uses '@', which is not supported",
}


#: functions papers use that the language does not have, and how to write each with the ones it has
#: (``a``, ``b``, ``x`` stand for the arguments; the docs' formula reference prints this table)
NEAREST_FORMS = {
    "Mod": "mod(a, b)", "remainder": "mod(a, b)",
    "fmod": "where(a < 0, -mod(-a, b), mod(a, b)) (C's fmod and % keep the sign of a; mod has the sign of b)",
    "sgn": "sign(x)", "signum": "sign(x)",
    "Heaviside": "where(x > 0, 1, where(x < 0, 0, 1/2))", "step": "where(x >= 0, 1, 0)",
    "round": "floor(x + 1/2) (halves up; Python's round sends them to the even neighbour)",
    "trunc": "where(x >= 0, floor(x), ceiling(x))",
    "expm1": "exp(x) - 1", "log1p": "log(1 + x)", "log2": "log(x, 2)", "log10": "log(x, 10)", "ln": "log(x)",
    "pow": "a**b", "square": "x**2", "rsqrt": "1/sqrt(x)", "reciprocal": "1/x",
    "sigmoid": "1/(1 + exp(-x))", "softplus": "log(1 + exp(x))",
    "tanh": "(exp(2*x) - 1)/(exp(2*x) + 1)", "sinh": "(exp(x) - exp(-x))/2", "cosh": "(exp(x) + exp(-x))/2",
    "maximum": "Max(a, b)", "minimum": "Min(a, b)", "fabs": "abs(x)", "Abs": "abs(x)",
    "clamp": "clip(x, low, high)", "clip_by_value": "clip(x, low, high)", "if_else": "where(c, a, b)",
    "ceil": "ceiling(x)",
}


#: names a file reaching for the content of queries and keys (CoPE's gates) would use
CONTENT_NAMES = frozenset({"q", "k", "query", "key", "gate", "gates", "content", "sigmoid"})
CONTENT_HINT = (" (positions that depend on the content of queries and keys, as in CoPE, cannot be described: "
                "formulas are functions of integer positions only)")


class _Refused(Exception):
    """Internal: why a formula is refused (turned into a VariantFileError at the boundary)."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula: its text, the names it uses, and a builder of SymPy values."""

    text: str
    names: frozenset
    _tree: ast.expr
    where: str = ""

    def build(self, env: Mapping[str, object]) -> sp.Expr:
        """The formula as a SymPy expression with ``env`` bound to its names.

        Every power is checked against the bounds with the values it actually
        gets, so a formula that only explodes for concrete values is refused
        here with a :class:`VariantFileError`.
        """
        missing = sorted(self.names - set(env) - set(CONSTANTS))
        if missing:
            raise _error(self.where, self.text, f"uses {missing}, which have no value here")
        try:
            value = _Builder(env).visit(self._tree)
        except _Refused as why:
            raise _error(self.where, self.text, str(why)) from None
        except (ZeroDivisionError, ValueError, TypeError, OverflowError, RecursionError) as err:
            raise _error(self.where, self.text, f"cannot be evaluated ({type(err).__name__}: {err})") from None
        try:
            _check_value(value)
        except _Refused as why:
            raise _error(self.where, self.text, f"{why} for {_bindings(env, self.names)}") from None
        if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise _error(self.where, self.text,
                         f"is undefined for {_bindings(env, self.names)} (a division by zero or an infinity)")
        return value

    def __str__(self) -> str:
        return self.text


def _bindings(env, names) -> str:
    def short(value) -> str:
        text = str(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return "{" + ", ".join(f"{n}={short(env[n])}" for n in sorted(names) if n in env) + "}"


def _error(where: str, text: str, why: str) -> VariantFileError:
    place = f"{where}: " if where else ""
    return VariantFileError(f"{place}formula {text!r} {why}")


def parse_formula(text, *, names, where: str = "", tables=()) -> Formula:
    """Parse ``text`` into a :class:`Formula` that may use only ``names`` (plus ``pi``, ``E``).

    ``where`` locates the formula for error messages (``file.toml: key
    'position.transform'``).  Raises :class:`VariantFileError` for anything
    outside the whitelist described in the module docstring.  ``tables``: the names of lookup
    tables (called with one index, ``T(k)``; their :class:`LookupBase` is bound by the environment).
    """
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise _error(where, repr(text), "must be a string or a number")
    if not isinstance(text, str):
        text = repr(text)
    if len(text) > MAX_FORMULA_CHARS:
        raise VariantFileError(
            f"{where + ': ' if where else ''}formula is {len(text)} characters long; "
            f"at most {MAX_FORMULA_CHARS} are accepted")
    if not text.strip():
        raise _error(where, text, "is empty")
    # ``ast`` drops a ``#`` comment before the whitelist sees it, yet the formula's text is quoted
    # in reports and kernel headers: refuse it, and anything that is not one line of printable ASCII
    if "#" in text:
        raise _error(where, text, "is not a formula: it contains '#' (comments are not allowed in a formula)")
    odd = next((ch for ch in text if not (" " <= ch <= "~" or ch == "\t")), None)
    if odd is not None:
        raise _error(where, text, f"is not a formula: it contains the character U+{ord(odd):04X}; "
                                  "a formula is one line of printable ASCII")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise _error(where, text, f"is not a formula ({err.msg})") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise _error(where, text, f"is not a formula ({type(err).__name__})") from None
    allowed = frozenset(names)
    try:
        used = _Checker(allowed, text.strip(), frozenset(tables)).check(tree.body)
    except _Refused as why:
        raise _error(where, text, str(why)) from None
    return Formula(text=text, names=frozenset(used), _tree=tree.body, where=where)


def _literal(value) -> sp.Rational:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        kind = "a string" if isinstance(value, (str, bytes)) else type(value).__name__
        raise _Refused(f"contains {kind} ({value!r}); only numbers are allowed")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Refused(f"contains the non-finite number {value!r}")
        exact = sp.Rational(repr(value))
    else:
        exact = sp.Integer(value)
    if abs(exact.p) > MAX_LITERAL or exact.q > MAX_LITERAL:
        raise _Refused(f"contains the number {value!r}, outside the accepted range "
                       f"(magnitude between 1e-30 and 1e30)")
    return exact


class _Checker:
    """Walk the tree once, refusing every construct outside the whitelist."""

    def __init__(self, allowed, text, tables=frozenset()):
        self.allowed, self.text, self.tables = allowed, text, tables
        self.used: set = set()
        self.count = 0

    def check(self, node):
        self._visit(node, 0)
        return self.used

    def _visit(self, node, depth):
        self.count += 1
        if self.count > MAX_NODES:
            raise _Refused(f"is too large (more than {MAX_NODES} syntax nodes)")
        if isinstance(node, ast.Constant):
            _literal(node.value)
            written = ast.get_source_segment(self.text, node) or ""
            if node.value == 0 and any(ch in "123456789" for ch in written.split("e")[0].split("E")[0]):
                raise _Refused(f"contains the number {written}, outside the accepted range "
                               "(magnitude between 1e-30 and 1e30)")
        elif isinstance(node, ast.Name):
            if node.id in CONSTANTS:
                return
            if node.id in FUNCTIONS:
                raise _Refused(f"uses the function {node.id!r} without calling it")
            if node.id in self.tables:
                raise _Refused(f"uses the table {node.id!r} without an index: write {node.id}(k)")
            if node.id not in self.allowed:
                known = sorted(self.allowed | set(CONSTANTS))
                hint = CONTENT_HINT if node.id in CONTENT_NAMES else ""
                raise _Refused(f"uses the unknown name {node.id!r}; the names allowed here are {known}{hint}")
            self.used.add(node.id)
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                raise _Refused(_HINTS.get(type(node.op), f"uses the operator {type(node.op).__name__}, "
                                                         "which is not one of + - * / **"))
            self._visit(node.left, depth + 1)
            self._visit(node.right, depth + 1)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd)):
                raise _Refused(f"uses the unary operator {type(node.op).__name__}; only - and + are allowed")
            self._visit(node.operand, depth + 1)
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise _Refused("calls something that is not a plain function name "
                               f"(allowed functions: {sorted(FUNCTIONS)})")
            name = node.func.id
            if name in self.tables:
                if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
                    raise _Refused(f"indexes the table {name!r} with {len(node.args)} argument(s); "
                                   f"write {name}(k) with one index")
                self.used.add(name)
                self._visit(node.args[0], depth + 1)
                return
            if name not in FUNCTIONS:
                if name in NEAREST_FORMS:
                    raise _Refused(f"calls {name!r}, which is outside the formula language; write it as "
                                   f"{NEAREST_FORMS[name]}")
                raise _Refused(f"calls {name!r}, which is outside the formula language "
                               f"(its functions: {sorted(FUNCTIONS)})")
            if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
                raise _Refused(f"passes keyword or starred arguments to {name!r}; only positional ones are allowed")
            _, low, high = FUNCTIONS[name]
            if not low <= len(node.args) <= high:
                count = str(low) if low == high else f"{low} to {high}"
                raise _Refused(f"calls {name!r} with {len(node.args)} argument(s); it takes {count}")
            if name == "where":
                self._condition(node.args[0], depth + 1)
                for arg in node.args[1:]:
                    self._visit(arg, depth + 1)
            elif name == "sum":
                self._sum(node, depth + 1)
            else:
                for arg in node.args:
                    self._visit(arg, depth + 1)
        elif isinstance(node, ast.Compare):
            raise _Refused("compares outside where(...): a comparison is allowed only as where's first "
                           "argument, as in where(m < 4, m, 4)")
        else:
            raise _Refused(f"contains an expression of type {type(node).__name__}, which is not allowed "
                           "(only numbers, names, + - * / **, and calls of allowed functions)")


    def _condition(self, node, depth):
        if not isinstance(node, ast.Compare):
            raise _Refused("calls 'where' with a first argument that is not a comparison "
                           "(write where(a < b, x, y); allowed: < <= > >= == !=)")
        if len(node.ops) != 1:
            raise _Refused("chains comparisons in where(...): compare two values, as in where(a < b, x, y)")
        if type(node.ops[0]) not in COMPARISONS:
            raise _Refused(f"compares with {type(node.ops[0]).__name__} in where(...); allowed: < <= > >= == !=")
        self.count += 1
        self._visit(node.left, depth + 1)
        self._visit(node.comparators[0], depth + 1)

    def _sum(self, node, depth):
        expr, index, first, last = node.args
        if not isinstance(index, ast.Name):
            raise _Refused("calls 'sum' with a second argument that is not a new name: "
                           "write sum(expr, k, a, b) for expr summed over k = a..b")
        taken = self.allowed | set(CONSTANTS) | set(FUNCTIONS)
        if index.id in taken:
            raise _Refused(f"sums over {index.id!r}, which already has a meaning here; choose a new index name")
        self._visit(first, depth)
        self._visit(last, depth)
        outer = self.allowed
        self.allowed = outer | {index.id}
        try:
            self._visit(expr, depth)
        finally:
            self.allowed = outer
        self.used.discard(index.id)
        self.count += 1


def _bits(value) -> float:
    """log2 of the larger of numerator and denominator of a rational (0 for tiny ones)."""
    return max(abs(int(value.p)).bit_length(), int(value.q).bit_length())


def _check_value(value) -> None:
    """Refuse a built value that is too large to reason about: too many nodes, a huge exact
    number, a huge exponent, ``exp`` of a huge number (the walk stops at the first excess)."""
    for count, node in enumerate(sp.preorder_traversal(value), 1):
        if count > MAX_VALUE_NODES:
            raise _Refused(f"has a value of more than {MAX_VALUE_NODES} nodes (the bound on the size of a value)")
        if node.is_Rational:
            if _bits(node) > MAX_POWER_BITS:
                raise _Refused(f"has a value with an exact number of more than {MAX_POWER_BITS} bits")
        elif node.is_Pow and node.exp.is_Rational and abs(node.exp) > MAX_EXPONENT:
            raise _Refused(f"has a value with the power {node.exp}, beyond the accepted "
                           f"|exponent| <= {MAX_EXPONENT}")


def _check_power(base, exponent) -> None:
    if not exponent.is_number:
        return
    if exponent.is_Rational:
        if abs(exponent) > MAX_EXPONENT:
            raise _Refused(f"raises to the power {exponent}, beyond the accepted |exponent| <= {MAX_EXPONENT}")
        if base.is_Rational and float(abs(exponent)) * _bits(base) > MAX_POWER_BITS:
            raise _Refused(f"computes {base}**{exponent}, an exact number of more than {MAX_POWER_BITS} bits")
    elif base.is_number:
        try:
            size = abs(float(exponent)) * abs(math.log2(abs(float(base)))) if base != 0 else 0.0
        except (TypeError, ValueError, OverflowError):
            size = math.inf
        if size > MAX_POWER_BITS:
            raise _Refused(f"computes {base}**{exponent}, a number of more than {MAX_POWER_BITS} bits")


class _Builder:
    """Build the SymPy value of a checked tree with names bound to values."""

    def __init__(self, env):
        self.env = env

    def visit(self, node):
        if isinstance(node, ast.Constant):
            return _literal(node.value)
        if isinstance(node, ast.Name):
            if node.id in CONSTANTS:  # an environment may bind them to Floats, for fast numeric evaluation
                return sp.sympify(self.env.get(node.id, CONSTANTS[node.id]))
            return sp.sympify(self.env[node.id])
        if isinstance(node, ast.UnaryOp):
            value = self.visit(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            left, right = self.visit(node.left), self.visit(node.right)
            op = type(node.op)
            if op is ast.Add:
                return left + right
            if op is ast.Sub:
                return left - right
            if op is ast.Mult:
                return left * right
            if op is ast.Div:
                if right == 0:
                    raise _Refused("divides by zero")
                return left / right
            _check_power(left, right)
            if left == 0 and right.is_number and right.is_negative:
                raise _Refused("raises 0 to a negative power")
            return sp.Pow(left, right)
        if isinstance(node, ast.Call):
            if node.func.id not in FUNCTIONS:  # a lookup table (the checker allowed only those)
                return self.env[node.func.id](self.visit(node.args[0]))
            if node.func.id == "sum":
                return self._sum(*node.args)
            if node.func.id == "where":
                # only the branch taken is built at a decided condition: where(n < 8, n, log(n / 8))
                # at n = 0 must not build log(0)
                condition = self._condition(node.args[0])
                if condition is sp.true or condition is sp.false:
                    return self.visit(node.args[1] if condition is sp.true else node.args[2])
                return _where(condition, *[self.visit(a) for a in node.args[1:]])
            func: Callable = FUNCTIONS[node.func.id][0]
            return func(*[self.visit(a) for a in node.args])
        raise _Refused(f"contains a {type(node).__name__} expression")  # unreachable after _Checker

    def _condition(self, node):
        relation = COMPARISONS[type(node.ops[0])][0]
        return relation(self.visit(node.left), self.visit(node.comparators[0]))

    def _sum(self, expr, index, first, last):
        bounds = [self.visit(first), self.visit(last)]
        if not all(b.is_Integer for b in bounds):
            raise _Refused(f"sums from {bounds[0]} to {bounds[1]}; the bounds must be integers "
                           "(they may use names that have integer values, not positions)")
        low, high = (int(b) for b in bounds)
        if high - low + 1 > MAX_SUM_TERMS:
            raise _Refused(f"sums {high - low + 1} terms; at most {MAX_SUM_TERMS} are accepted")
        outer = self.env
        total = sp.Integer(0)
        try:
            for k in range(low, high + 1):
                self.env = {**outer, index.id: sp.Integer(k)}
                total += self.visit(expr)
        finally:
            self.env = outer
        return total
