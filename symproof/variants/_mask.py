"""Attention masks: ``[mask] allowed = "CONDITION"``, the set of (query, key) pairs a score is kept at.

A mask is a condition on the query position ``i`` and the key position ``j`` (and ``[params]``):
comparisons of formulas (``< <= > >= == !=``, chains such as ``0 <= i - j < W`` included) joined by
``and``, ``or``, ``not`` and parentheses::

    [mask]
    allowed = "j <= i and (i - j < W or j < S)"     # StreamingLLM: S attention sinks + a window of W

Where the condition is false the score is ``-inf`` (the softmax gives the key weight 0).  The checker
never computes with ``-inf``: a mask is the *set* of allowed pairs, and its properties are statements
about that set, each decided exactly on integers:

- ``mask_relative``: ``A(i + c, j + c) = A(i, j)`` for every common shift ``c`` -- whether a key is
  visible depends only on the offset ``j - i`` (a causal mask and a sliding window: yes; attention
  sinks, which keep the first keys whatever the offset, and Llama 4's chunks: no);
- ``mask_causal``: ``A(i, j)`` is false for every key after its query (``j > i``);
- ``mask_self``: ``A(i, i)`` at every position: every query sees itself, so no row of the softmax is
  empty (an empty row is ``0/0``, a NaN).

Proofs are exact: ``mask_relative`` when every comparison reads the positions only through ``j - i``
(each side, expanded, is unchanged by the shift); ``mask_causal`` and ``mask_self`` by three-valued
evaluation of the condition over boxes of integers (each comparison's difference enclosed by exact
rational interval arithmetic: the comparison is true on the whole box, false on the whole box, or
undecided), the boxes cut at every number the condition names.  Refutations are exact witnesses found
by evaluating the condition in integers and rationals at small positions and next to the numbers the
condition names.  Neither found: *unknown*, said so.

The score's own properties (``relative``, ``shift``...) stay those of the unmasked score at every pair;
the mask's are listed beside them.  Exported kernels give the mask as booleans (``mask_at``) and as the
additive form (``mask_bias``: ``0.0`` where allowed, ``-inf`` elsewhere), with the file's position guard.
"""

from __future__ import annotations

import ast
import functools
import itertools
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from .._ground._errors import VariantFileError
from ..prover import _budget
from ._formula import COMPARISONS, MAX_FORMULA_CHARS, MAX_NODES, mod_as_floor, parse_formula

__all__ = ["Mask", "read_mask", "parse_mask", "mask_properties", "MASK_KEY", "MASK_NAMES", "allowed_at"]

MASK_KEY = "mask.allowed"
#: the position names a mask condition may read besides the [params]
MASK_NAMES = ("i", "j")
#: the kinds a mask applies to (an additive table has no score to mask)
MASK_KINDS = ("rotary", "bias")

_I, _J = sp.symbols("i j", integer=True)
_C = sp.Symbol("c", integer=True)
_U = sp.Symbol("u", integer=True, positive=True)


@dataclass(frozen=True)
class Mask:
    """A parsed condition: its text and its tree (``("and"|"or", parts)``, ``("not", part)``,
    ``("cmp", op, left Formula, right Formula)``)."""

    text: str
    tree: tuple

    def condition(self, env) -> sp.Basic:
        """The condition as a SymPy boolean with ``env`` bound (``i``, ``j`` and the params)."""
        return _build(self.tree, env)

    def __str__(self) -> str:
        return self.text


def _fail(source: str, message: str) -> VariantFileError:
    return VariantFileError(f"{source}: key '{MASK_KEY}': {message}")


def read_mask(reader, table, params) -> Mask:
    """The ``[mask]`` table of a file (``reader``: the file's typed reader)."""
    if "allowed" not in table:
        raise reader.fail(MASK_KEY, "is required in [mask]: the condition on i, j that keeps a score, e.g. "
                                    "allowed = \"j <= i\" (causal)")
    return parse_mask(table["allowed"], reader.source, params, reader.tables)


def parse_mask(value, source: str, params, tables=frozenset()) -> Mask:
    """``[mask] allowed``: a condition on ``i``, ``j`` and the params, refused in one line naming the key."""
    if not isinstance(value, str):
        raise _fail(source, f"expected a condition string such as \"j <= i\", got {type(value).__name__}")
    text = value.strip()
    if len(value) > MAX_FORMULA_CHARS:
        raise _fail(source, f"the condition is {len(value)} characters long; at most {MAX_FORMULA_CHARS} are accepted")
    if not text:
        raise _fail(source, "the condition is empty; expected a condition such as \"j <= i\"")
    if "#" in text:
        raise _fail(source, "the condition contains '#' (comments are not allowed in a condition)")
    odd = next((ch for ch in text if not (" " <= ch <= "~" or ch == "\t")), None)
    if odd is not None:
        raise _fail(source, f"the condition contains the character U+{ord(odd):04X}; a condition is one line "
                            "of printable ASCII")
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as err:
        raise _fail(source, f"{text!r} is not a condition ({err.msg}); expected comparisons joined by and, or, "
                            "not, as in \"j <= i and i - j < W\"") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise _fail(source, f"{text!r} is not a condition ({type(err).__name__})") from None
    names = (set(MASK_NAMES) | set(params)) - set(tables)
    counter = itertools.count()
    return Mask(text, _read(tree, text, source, names, counter))


def _read(node, text: str, source: str, names, counter) -> tuple:
    if next(counter) > MAX_NODES:
        raise _fail(source, f"the condition is too large (more than {MAX_NODES} parts)")
    if isinstance(node, ast.BoolOp):
        op = "and" if isinstance(node.op, ast.And) else "or"
        return (op, tuple(_read(v, text, source, names, counter) for v in node.values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ("not", _read(node.operand, text, source, names, counter))
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        formulas = []
        for side in sides:
            segment = ast.get_source_segment(text, side) or ""
            formulas.append(parse_formula(segment, names=names, where=f"{source}: key '{MASK_KEY}'"))
            next(counter)
        parts = []
        for op, left, right in zip(node.ops, formulas, formulas[1:]):
            if type(op) not in COMPARISONS:
                raise _fail(source, f"compares with {type(op).__name__}; allowed: < <= > >= == !=")
            parts.append(("cmp", type(op), left, right))
        return parts[0] if len(parts) == 1 else ("and", tuple(parts))
    written = ast.get_source_segment(text, node) or type(node).__name__
    raise _fail(source, f"{written!r} is not a comparison: a mask is comparisons of formulas in i, j and the "
                        "params joined by and, or, not (\"j <= i and i - j < W\"); write a number-valued "
                        "formula as a comparison, e.g. \"where(...) > 0\"")


def _build(tree, env):
    kind = tree[0]
    if kind == "and":
        return sp.And(*[_build(t, env) for t in tree[1]])
    if kind == "or":
        return sp.Or(*[_build(t, env) for t in tree[1]])
    if kind == "not":
        return sp.Not(_build(tree[1], env))
    _, op, left, right = tree
    relation = COMPARISONS[op][0]
    return relation(mod_as_floor(left.build(env)), mod_as_floor(right.build(env)))


def symbolic_condition(variant):
    """The variant's mask condition at the integer symbols ``i``, ``j`` (built once)."""
    cached = variant.__dict__.get("_mask_condition")
    if cached is None:
        cached = variant.__dict__["_mask_condition"] = variant.mask.condition({**variant.params, "i": _I, "j": _J})
    return cached


def validate_mask(variant) -> None:
    """Build the condition once symbolically and at two points: a formula refused there (too large, a
    division by zero) fails at load, naming the key."""
    if variant.length_threshold is not None:
        raise _fail(variant.source, "cannot be combined with [length] (a rule that reads the call length); "
                                    "state the mask in a file without [length]")
    symbolic_condition(variant)
    for point in ((0, 0), (1, 0)):
        allowed_at(variant, *point)


# -- exact evaluation at integer points ------------------------------------------------------------------


class _NotRational(Exception):
    """A value the fast evaluator does not compute exactly (SymPy decides it instead)."""


def _value(expr, env):
    """``expr`` at ``env`` (symbols to Fractions) as a Fraction, exactly."""
    if expr.is_Integer or expr.is_Rational:
        return Fraction(int(expr.p), int(expr.q))
    if expr.is_Symbol:
        return env[expr]
    if expr.is_Add:
        return sum((_value(a, env) for a in expr.args), Fraction(0))
    if expr.is_Mul:
        out = Fraction(1)
        for a in expr.args:
            out *= _value(a, env)
        return out
    if expr.is_Pow and expr.exp.is_Integer and abs(int(expr.exp)) <= 64:
        base = _value(expr.base, env)
        if base == 0 and expr.exp < 0:
            raise _NotRational
        return base ** int(expr.exp)
    if isinstance(expr, sp.floor):
        return Fraction(_floor(_value(expr.args[0], env)))
    if isinstance(expr, sp.ceiling):
        return Fraction(-_floor(-_value(expr.args[0], env)))
    if isinstance(expr, sp.Abs):
        return abs(_value(expr.args[0], env))
    if isinstance(expr, sp.Min):
        return min(_value(a, env) for a in expr.args)
    if isinstance(expr, sp.Max):
        return max(_value(a, env) for a in expr.args)
    if isinstance(expr, sp.sign):
        v = _value(expr.args[0], env)
        return Fraction((v > 0) - (v < 0))
    if isinstance(expr, sp.Piecewise):
        for value, cond in expr.args:
            if _truth(cond, env):
                return _value(value, env)
        raise _NotRational
    raise _NotRational


def _floor(x: Fraction) -> int:
    return x.numerator // x.denominator


_RELATION = {sp.StrictLessThan: lambda d: d < 0, sp.LessThan: lambda d: d <= 0, sp.StrictGreaterThan: lambda d: d > 0,
             sp.GreaterThan: lambda d: d >= 0, sp.Equality: lambda d: d == 0, sp.Unequality: lambda d: d != 0}


def _truth(cond, env) -> bool:
    """The exact truth of ``cond`` at ``env``; rational arithmetic, else SymPy's exact comparison."""
    if cond is sp.true or cond is sp.false:
        return bool(cond)
    if isinstance(cond, sp.And):
        return all(_truth(a, env) for a in cond.args)
    if isinstance(cond, sp.Or):
        return any(_truth(a, env) for a in cond.args)
    if isinstance(cond, sp.Not):
        return not _truth(cond.args[0], env)
    if type(cond) in _RELATION:
        try:
            return _RELATION[type(cond)](_value(cond.lhs, env) - _value(cond.rhs, env))
        except _NotRational:
            decided = cond.xreplace({s: sp.Rational(v.numerator, v.denominator) for s, v in env.items()})
            if decided is sp.true or decided is sp.false:
                return bool(decided)
            raise _Undecided(f"{cond} is not decided at {_show(env)}") from None
    raise _Undecided(f"{cond} is not a comparison")


class _Undecided(Exception):
    """The condition's truth at a point could not be computed exactly."""


def _show(env) -> str:
    return ", ".join(f"{s} = {v}" for s, v in sorted(env.items(), key=lambda kv: str(kv[0])))


def allowed_at(variant, i: int, j: int) -> bool:
    """Whether the key at ``j`` is visible to the query at ``i``, exactly (a one-line error when the
    condition cannot be decided there)."""
    try:
        return _truth(symbolic_condition(variant), {_I: Fraction(i), _J: Fraction(j)})
    except _Undecided as why:
        raise VariantFileError(f"{variant.source}: key '{MASK_KEY}': {why}") from None


# -- three-valued evaluation over boxes of integers -------------------------------------------------------

#: an interval: (low, high), Fractions, None for an infinite end


def _add(a, b):
    return (None if a[0] is None or b[0] is None else a[0] + b[0], None if a[1] is None or b[1] is None else a[1] + b[1])


def _scale(k: Fraction, a):
    lo, hi = a
    if k == 0:
        return (Fraction(0), Fraction(0))
    lo2 = None if lo is None else k * lo
    hi2 = None if hi is None else k * hi
    return (lo2, hi2) if k > 0 else (hi2, lo2)


def _enclose(expr, box):
    """An interval holding every value of ``expr`` on ``box`` (symbols to intervals); (None, None) when
    the expression is outside what is enclosed (then nothing is concluded from it)."""
    if expr.is_Rational:
        v = Fraction(int(expr.p), int(expr.q))
        return (v, v)
    if expr.is_Symbol:
        return box.get(expr, (None, None))
    if expr.is_Add:
        out = (Fraction(0), Fraction(0))
        for a in expr.args:
            out = _add(out, _enclose(a, box))
        return out
    if expr.is_Mul:
        constant = Fraction(1)
        rest = []
        for a in expr.args:
            if a.is_Rational:
                constant *= Fraction(int(a.p), int(a.q))
            else:
                rest.append(a)
        if len(rest) == 1:
            return _scale(constant, _enclose(rest[0], box))
        return (None, None)
    if isinstance(expr, (sp.floor, sp.ceiling)):
        lo, hi = _enclose(expr.args[0], box)
        f = _floor if isinstance(expr, sp.floor) else (lambda x: -_floor(-x))
        return (None if lo is None else Fraction(f(lo)), None if hi is None else Fraction(f(hi)))
    if isinstance(expr, (sp.Min, sp.Max)):
        parts = [_enclose(a, box) for a in expr.args]
        if isinstance(expr, sp.Min):
            lo = None if any(p[0] is None for p in parts) else min(p[0] for p in parts)
            his = [p[1] for p in parts if p[1] is not None]
            return (lo, min(his) if his else None)
        los = [p[0] for p in parts if p[0] is not None]
        hi = None if any(p[1] is None for p in parts) else max(p[1] for p in parts)
        return (max(los) if los else None, hi)
    return (None, None)


@functools.lru_cache(maxsize=1024)
def _difference(relation):
    """``lhs - rhs`` of a comparison, expanded (once per comparison: the boxes reuse it)."""
    return sp.expand(relation.lhs - relation.rhs)


def _three_valued(cond, box):
    """True / False when ``cond`` has that value at every point of ``box``, else None."""
    if cond is sp.true or cond is sp.false:
        return bool(cond)
    if isinstance(cond, (sp.And, sp.Or)):
        values = [_three_valued(a, box) for a in cond.args]
        if isinstance(cond, sp.And):
            return False if False in values else (True if all(v is True for v in values) else None)
        return True if True in values else (False if all(v is False for v in values) else None)
    if isinstance(cond, sp.Not):
        value = _three_valued(cond.args[0], box)
        return None if value is None else not value
    if type(cond) not in _RELATION:
        return None
    lo, hi = _enclose(_difference(cond), box)
    kind = type(cond)
    always = {sp.StrictLessThan: hi is not None and hi < 0, sp.LessThan: hi is not None and hi <= 0,
              sp.StrictGreaterThan: lo is not None and lo > 0, sp.GreaterThan: lo is not None and lo >= 0,
              sp.Equality: lo is not None and lo == hi == 0,
              sp.Unequality: (hi is not None and hi < 0) or (lo is not None and lo > 0)}[kind]
    never = {sp.StrictLessThan: lo is not None and lo >= 0, sp.LessThan: lo is not None and lo > 0,
             sp.StrictGreaterThan: hi is not None and hi <= 0, sp.GreaterThan: hi is not None and hi < 0,
             sp.Equality: (hi is not None and hi < 0) or (lo is not None and lo > 0),
             sp.Unequality: lo is not None and lo == hi == 0}[kind]
    return True if always else (False if never else None)


def condition_numbers(cond) -> list:
    """The integers a condition names (and their neighbours): where its comparisons change."""
    near = set()
    for atom in sp.sympify(cond).atoms(sp.Rational):
        if abs(atom) <= 2**20:
            base = int(sp.floor(atom))
            near |= {base - 1, base, base + 1, base + 2}
    return sorted(near)


def _pieces(low, high, cuts) -> list:
    """The integer range low..high (None: no end) cut before every number of ``cuts`` inside it: single
    points at the cuts, intervals between them."""
    inside = sorted(c for c in set(cuts) if (low is None or c > low) and (high is None or c < high))
    pieces, start = [], low
    for cut in inside:
        pieces.append((start, cut - 1))
        start = cut
    pieces.append((start, high))
    return [(None if a is None else Fraction(a), None if b is None else Fraction(b)) for a, b in pieces
            if a is None or b is None or a <= b]


#: most boxes one three-valued decision evaluates
_MAX_BOXES = 4096


def _decide_on_boxes(cond, ranges: dict, cuts) -> tuple:
    """``(True, n)`` when ``cond`` is true on every box of the grid cut at ``cuts`` (``n`` boxes), ``(False, box)``
    at a box where it is false everywhere, ``(None, n)`` when some box is undecided."""
    axes = [[(s, p) for p in _pieces(lo, hi, cuts)] for s, (lo, hi) in ranges.items()]
    boxes = list(itertools.islice(itertools.product(*axes), _MAX_BOXES + 1))
    if len(boxes) > _MAX_BOXES:
        return None, len(boxes)
    undecided = 0
    for box in boxes:
        _budget.check()
        value = _three_valued(cond, dict(box))
        if value is False:
            return False, dict(box)
        if value is None:
            undecided += 1
    return (True, len(boxes)) if not undecided else (None, undecided)


# -- the properties ----------------------------------------------------------------------------------------


def _domain(variant) -> tuple:
    if not variant.from_zero:
        return (None, None)
    return (0, variant.last_position)


def inside(variant, *positions) -> bool:
    low, high = _domain(variant)
    return all((low is None or p >= low) and (high is None or p <= high) for p in positions)


def candidates(variant) -> list:
    """Positions the witness search tries: small ones, the numbers the condition names and their
    neighbours, a few far ones; negative ones too on every-integer files; inside the declared range."""
    cond = symbolic_condition(variant)
    values = list(range(0, 9)) + condition_numbers(cond) + [16, 64, 1024, 4096]
    if variant.last_position is not None:
        values += [variant.last_position - 1, variant.last_position]
    if not variant.from_zero:
        values += [-v for v in values]
    # the smallest first: the witness shown is the simplest found; at most MAX_CANDIDATES (a condition
    # naming many numbers would otherwise make the pair-and-shift search cubic in them)
    ordered = sorted((v for v in dict.fromkeys(values) if inside(variant, v)), key=lambda v: (abs(v), v < 0))
    return ordered[:MAX_CANDIDATES]


#: most positions the witness searches try on each axis
MAX_CANDIDATES = 40


def allowed_or_none(variant, i, j) -> bool | None:
    _budget.check()  # one evaluation, one step: the searches stop where --steps does
    try:
        return _truth(symbolic_condition(variant), {_I: Fraction(i), _J: Fraction(j)})
    except _Undecided:
        return None


def _word(value: bool) -> str:
    return "true (visible)" if value else "false (masked, -inf)"


def _derive_relative(variant, proof) -> None:
    cond = symbolic_condition(variant)
    proof.note("A mask is the set of pairs (i, j) it keeps; the statement is about that set (no -inf is computed).")
    relations = sorted(cond.atoms(sp.core.relational.Relational), key=str) if cond not in (sp.true, sp.false) else []
    moved = [r for r in relations
             if sp.expand((r.lhs - r.rhs).xreplace({_I: _I + _C, _J: _J + _C})) != sp.expand(r.lhs - r.rhs)]
    if not moved:
        proof.check("every comparison, expanded, is unchanged by i -> i + c, j -> j + c (it reads i and j only "
                    "through j - i), so the condition is", True,
                    f"{len(relations)} comparison(s): " + "; ".join(str(r) for r in relations[:6]))
        return
    values = candidates(variant)
    shifts = [v for v in values if v != 0]
    for i, j in itertools.product(values, values):
        before = allowed_or_none(variant, i, j)
        if before is None:
            continue
        for c in shifts:
            if not inside(variant, i + c, j + c):
                continue
            after = allowed_or_none(variant, i + c, j + c)
            if after is not None and after != before:
                proof.check(f"A({i}, {j}) = A({i + c}, {j + c}) (the same offset j - i = {j - i}, shifted by c = {c})",
                            False, f"A({i}, {j}) is {_word(before)} but A({i + c}, {j + c}) is {_word(after)}, "
                                   "computed exactly", witness={_I: sp.Integer(i), _J: sp.Integer(j), _C: sp.Integer(c)})
                return
    proof.undecided("check", "A(i + c, j + c) = A(i, j) for every i, j, c",
                    f"the comparisons {', '.join(str(r) for r in moved[:3])} read more than j - i, and no pair of "
                    f"positions among {len(values)} probed ones differs", method="witness")


def _derive_causal(variant, proof) -> None:
    cond = symbolic_condition(variant)
    later = cond.xreplace({_J: _I + _U})  # the key u >= 1 steps after its query
    low, high = _domain(variant)
    ranges = {_I: (low, None if high is None else high - 1), _U: (1, None if high is None else high)}
    if _false_everywhere(later, ranges):
        proof.check("A(i, i + u) is false for every u >= 1 (three-valued evaluation over integer boxes, exact "
                    "rational intervals)", True, f"j = i + u, i in {_range_text(ranges[_I])}, u in "
                                                 f"{_range_text(ranges[_U])}")
        return
    for i in candidates(variant):
        for u in [1, 2, 3] + [v for v in candidates(variant) if v > 0]:
            if inside(variant, i + u) and allowed_or_none(variant, i, i + u):
                proof.check(f"A({i}, {i + u}) is false (a key after its query is masked)", False,
                            f"the key at j = {i + u} is visible to the query at i = {i}, computed exactly",
                            witness={_I: sp.Integer(i), _J: sp.Integer(i + u)})
                return
    proof.undecided("check", "A(i, j) is false for every j > i",
                    "neither shown false on every box nor true at a probed pair", method="three-valued")


def _false_everywhere(cond, ranges) -> bool:
    return _decide_on_boxes(sp.Not(cond), ranges, condition_numbers(cond))[0] is True


def _range_text(interval) -> str:
    lo, hi = interval
    return f"{'-inf' if lo is None else lo}..{'inf' if hi is None else hi}"


def _derive_self(variant, proof) -> None:
    cond = symbolic_condition(variant)
    diagonal = cond.xreplace({_J: _I})
    low, high = _domain(variant)
    ranges = {_I: (low, high)}
    decided, _ = _decide_on_boxes(diagonal, ranges, condition_numbers(diagonal))
    if decided is True:
        proof.check("A(i, i) is true at every position i (three-valued evaluation over integer boxes, exact "
                    "rational intervals)", True, f"i in {_range_text(ranges[_I])}")
        return
    for i in candidates(variant):
        if allowed_or_none(variant, i, i) is False:
            proof.check(f"A({i}, {i}) is true (the query sees itself)", False,
                        f"the query at i = {i} does not see itself, computed exactly; its row is empty unless "
                        "another key is visible", witness={_I: sp.Integer(i)})
            return
    proof.undecided("check", "A(i, i) for every i", "neither shown true on every box nor false at a probed position",
                    method="three-valued")


MASK_TITLES = {
    "mask_relative": "the mask depends only on the offset j - i",
    "mask_causal": "the mask hides every key after its query",
    "mask_self": "every query sees its own key (no empty softmax row)",
}


def mask_properties(variant, property_class) -> list:
    """The mask's properties (``property_class``: the checker's Property), after the score's."""
    if variant.mask is None:
        return []
    shown = f"A(i, j) = [{variant.mask.text}]"
    return [
        property_class("mask_relative", f"{shown}: A(i + c, j + c) = A(i, j) for every common shift c (whether a key "
                                        "is visible depends only on the offset j - i)", "identity",
                       derive=_derive_relative),
        property_class("mask_causal", f"{shown}: A(i, j) is false for every key j > i (no key after its query is "
                                      "visible)", "identity", derive=_derive_causal),
        property_class("mask_self", f"{shown}: A(i, i) is true at every position i (every softmax row keeps at "
                                    "least its own key, so none is empty)", "identity", derive=_derive_self),
    ]
