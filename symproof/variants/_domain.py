"""Formulas defined on the declared positions: a file whose formula is not, somewhere, is refused at load.

A variant's position formulas (``position.transform``, ``position.relative``,
``scale.query``/``scale.key``, ``bias.formula``) must give a finite real number
at every position the file declares (every integer, or the integers >= 0 with
``positions = "nonnegative"``).  A table read outside its entries
(``P(m)`` with 16 entries at m = -1 or 16), a square root of a negative number
or a log of 0 is not: such a file is refused here, in one line naming the
positions where the formula is not defined and the fix (``positions =
"nonnegative"``, a clip, a ``where``).

The search is exact: each formula is built by the whitelisted builder at
integer witness positions (the numbers the formula names and their neighbours,
the table sizes, 0, +-1, large positions), and a witness is counted only when
the exact value is undefined (the builder refuses it: a table index outside the
table, a division by zero) or certainly not real (SymPy's exact assumptions, or
an enclosure of the imaginary part that excludes 0).  A table read by the head or
pair index (``w(h)``, ``S(r)``) is built at every index, the positions symbolic.  A refusal therefore
comes with an exact witness; a file that passes is not thereby proved defined
everywhere, and the exported kernels keep their own guard (a table read
outside its entries is an error at run time in every target).
"""

from __future__ import annotations

import re

import sympy as sp

from .._ground._errors import VariantFileError
from .._export._printers import reads_table
from ._formula import LookupBase

__all__ = ["check_defined", "witness_positions"]

#: positions far from every number a formula names (a table is always exhausted there), up to the
#: int32 and int64 limits a caller may pass
_FAR = (10**5, 2**20, 2**31 - 1, 2**63 - 1)
#: most numbers of one formula whose neighbourhoods are searched
_MOST_NAMED = 32
#: most witnesses named in a refusal
_SHOWN = 3
_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])(\d+(?:\.\d+)?)")


def _named_numbers(text: str, variant) -> set:
    """The integers near every number written in ``text`` and the sizes of the file's tables."""
    out = set()
    for literal in _NUMBER.findall(text):
        value = sp.Rational(literal)
        out |= {sp.floor(value), sp.ceiling(value)}
    for values in getattr(variant, "params", {}).values():
        if isinstance(values, type) and issubclass(values, LookupBase):
            out.add(sp.Integer(len(values.values)))
    # the smallest first: a formula naming hundreds of numbers (a sum of cosines) is searched near the
    # first _MOST_NAMED of them, not at thousands of points
    return set(sorted({int(n) for n in out if abs(n) < 2**63}, key=abs)[:_MOST_NAMED])


def witness_positions(text: str, variant) -> list:
    """Integer positions (or offsets) tried for ``text``: 0, +-1, +-2, each named number n and
    n +- 1, and their negatives, then the far positions; only those the file declares."""
    picks = {0, 1, 2, -1, -2}
    for n in _named_numbers(text, variant):
        picks |= {n - 1, n, n + 1}
    picks |= {-p for p in picks} | set(_FAR) | {-p for p in _FAR}
    last = getattr(variant, "last_position", None)
    if last is not None:  # a declared range 0..N: its last position and the one before it too
        picks |= {last, last - 1}
    ordered = sorted(picks, key=lambda p: (abs(p), p < 0))
    if variant.from_zero:
        ordered = [p for p in ordered if p >= 0 and (last is None or p <= last)]
    return ordered


def _not_real(value) -> bool:
    if value.is_extended_real is False:
        return True
    if value.is_extended_real is None and value.is_number:
        from ..checker._interval import certainly_nonzero

        return certainly_nonzero(sp.im(value))
    return False


#: the builder's words for a value that does not exist (its other refusals, such as a power beyond
#: the accepted size, are limits of the language, not points where the formula is undefined)
_UNDEFINED = ("indexed by", "is undefined for", "ZeroDivisionError", "division by zero", "divides by zero")


def _problem(build, point) -> str:
    """Why the formula is not a finite real number at ``point`` ('' when it is, or when the builder
    refuses the point for another reason than undefinedness)."""
    try:
        value = build(*point)
    except VariantFileError as err:
        why = str(err)
        if not any(word in why for word in _UNDEFINED):
            return ""
        inner = re.search(r"\((?:ValueError|ZeroDivisionError): (.*)\)$", why)
        return inner.group(1) if inner else "a division by zero or an infinity"
    except (ValueError, ZeroDivisionError) as err:
        return str(err)
    if not isinstance(value, sp.Basic) or not value.is_number:
        return ""
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return f"{value}"
    if _not_real(value):
        return f"not real: {sp.sstr(value)[:40]}"
    return ""


def may_be_undefined(expr) -> bool:
    """Whether ``expr`` (a formula built at symbolic positions) contains a partial operation: a table
    read, a log, a tangent, or a power of a position-dependent base whose exponent is not a
    non-negative integer (a square root, a division).  Without one, every integer is in its domain
    and no witness is searched (a sum of cosines costs seconds to build at each point)."""
    if not isinstance(expr, sp.Basic):
        return False
    if any(isinstance(f, LookupBase) for f in expr.atoms(sp.Function)):
        return True
    if expr.has(sp.log, sp.tan):
        return True
    for power in expr.atoms(sp.Pow):
        base, exponent = power.args
        if base.free_symbols and not (exponent.is_Integer and exponent >= 0):
            return True
        if not base.free_symbols and exponent.free_symbols and base.is_positive is not True:
            return True
    return False


def _fix(key: str, text: str, variant, points: list) -> str:
    tables = [name for name, values in getattr(variant, "params", {}).items()
              if isinstance(values, type) and issubclass(values, LookupBase) and f"{name}(" in text]
    negative = all(any(p < 0 for p in point) for point in points)
    fixes = []
    if negative and not variant.from_zero:
        fixes.append('declare positions = "nonnegative" (top level) if the scheme starts at position 0')
    for name in tables:
        size = len(getattr(variant, "params")[name].values)
        if variant.last_position is None or variant.last_position >= size:
            fixes.append(f'declare positions = "0..{size - 1}" (top level) if the table has one entry per position')
        fixes.append(f"clip the index of table {name!r} into its entries ({name}(clip(INDEX, 0, {size - 1})))")
    if not tables:
        fixes.append(f"clip the argument (clip, Max) or choose the value with where(...) where {key} is undefined")
    return "; or ".join(fixes)


def _declared(variant, position: int) -> bool:
    """Whether ``position`` is one of the file's declared positions."""
    last = getattr(variant, "last_position", None)
    return (position >= 0 or not variant.from_zero) and (last is None or position <= last)


def _reads_offset_only(generic, names: tuple) -> bool:
    """Whether ``generic`` (in i, j) is a function of ``i - j`` alone (T5's buckets, Shaw's clip)."""
    i, j = (sp.Symbol(n, integer=True) for n in names)
    d = sp.Dummy("d", integer=True)
    return j not in generic.xreplace({i: j + d}).free_symbols


class _Text:
    """A stand-in formula for a group of formulas (the block's four entries)."""

    def __init__(self, text: str):
        self.text = text


class _Integers:
    """``variant`` seen with every integer as its positions: the offsets i - j of a non-negative file
    are every integer (the point (max(d, 0), max(-d, 0)) keeps both positions >= 0)."""

    positions = "integers"
    from_zero = False
    last_position = None

    def __init__(self, variant):
        self.params = variant.params


def _check(key: str, formula, build, variant, names: tuple, pairs: bool) -> None:
    text = formula.text
    generic = build(*(sp.Symbol(n, integer=True) for n in names))
    if not may_be_undefined(generic):
        return
    offsets = witness_positions(text, variant)
    if pairs and _reads_offset_only(generic, names):  # a function of i - j: one point per offset
        offsets = witness_positions(text, _Integers(variant))
        points = [(max(d, 0), max(-d, 0)) for d in offsets if not (getattr(variant, "causal", False) and d < 0)
                  and _declared(variant, abs(d))]
    elif pairs:  # (i, j): every offset i - j at a few keys j
        keys = [j for j in (0, 1, -1, 2**20) if _declared(variant, j)]
        points = [(j + d, j) for d in offsets for j in keys
                  if _declared(variant, j + d) and not (getattr(variant, "causal", False) and d < 0)]
    else:
        points = [(p,) for p in offsets]
    found = [(point, why) for point in points
             for why in [_problem(build, tuple(sp.Integer(p) for p in point))] if why]
    if not found:
        return
    # the first witness below 0 and the first at or above it, then the next ones
    first = {}
    for point, why in found:
        first.setdefault(min(point) < 0, (point, why))
    shown = list(dict.fromkeys([*first.values(), *found]))[:_SHOWN]
    domain = ("every integer" if not variant.from_zero else "the integers >= 0" if variant.last_position is None
              else f"the integers 0..{variant.last_position}")
    at = "; ".join(", ".join(f"{n} = {p}" for n, p in zip(names, point)) + f" ({why})" for point, why in shown)
    raise VariantFileError(
        f"{variant.source}: key '{key}': '{text}' is not defined at {at}, but the file's positions are {domain}: "
        f"{_fix(key, text, variant, [p for p, _ in found])}")


def _every_index(key: str, formula, build_at, count: int, what: str, variant) -> None:
    """A formula that reads a table by the pair or head index reads it inside the table for every one
    of the ``count`` indices (the positions symbolic): else one line naming the index."""
    for k in range(count):
        try:
            build_at(k)
        except VariantFileError as err:
            inner = re.search(r"\(ValueError: (table .* indexed by .*)\)$", str(err))
            if inner is None:
                raise
            raise VariantFileError(
                f"{variant.source}: key '{key}': '{formula.text}' reads {inner.group(1)} for {what} = {k} (of "
                f"0..{count - 1}): give the table one entry per {what.split()[0]}, or clip its index") from None


def check_defined(variant) -> None:
    """Refuse ``variant`` when one of its position formulas is not a finite real number at a witness
    position of its declared domain (see the module docstring)."""
    i, j, m = (sp.Symbol(n, integer=True) for n in ("i", "j", "m"))
    if variant.kind == "bias":
        if may_be_undefined(variant.bias_at(i, j, sp.Symbol("slope"), sp.Symbol("h", integer=True))):
            _every_index("bias.formula", variant.bias,
                         lambda h: variant.bias_at(i, j, variant.exact_value(h), h), variant.heads, "head h", variant)
        heads = sorted({0, variant.heads - 1})
        for h in heads:
            slope = variant.exact_value(h)
            _check("bias.formula", variant.bias, lambda i, j, _s=slope, _h=h: variant.bias_at(i, j, _s, _h),
                   variant, ("i", "j"), True)
        return
    if variant.relative is not None:
        _check("position.relative", variant.relative, variant.relative_at, variant, ("i", "j"), True)
    if variant.transform is not None:
        _check("position.transform", variant.transform, variant.angle_position, variant, ("m",), False)
    if getattr(variant, "amplitude", None) is not None:
        _check("position.amplitude", variant.amplitude, variant.amplitude_at, variant, ("m",), False)
    if variant.kind == "rotary":
        for key, formula, side in (("scale.query", variant.query_scale, "query"),
                                   ("scale.key", variant.key_scale, "key")):
            if formula is None:
                continue
            if may_be_undefined(variant.scale(side, m, sp.Symbol("r", integer=True))):
                _every_index(key, formula, lambda r, _side=side: variant.scale(_side, m, r), variant.n_pairs,
                             "pair r", variant)
            for r in sorted({0, variant.n_pairs - 1}):
                _check(key, formula, lambda m, _r=r, _side=side: variant.scale(_side, m, _r), variant, ("m",),
                       False)
        if variant.block_reads_position:  # a position formula too: each entry at the angle 1, pair 0
            for k in range(4):
                _check("rotation.block", _Text(variant.block[k // 2][k % 2].text),
                       lambda m, _k=k: variant.block_at(sp.Integer(1), 0, m)[_k // 2, _k % 2], variant, ("m",), False)
        if variant.block is not None and any(reads_table(e) for e in variant.block_at(sp.Symbol("x", real=True))):
            _every_index("rotation.block", _Text("the block"), lambda r: variant.block_at(sp.Symbol("x", real=True), r),
                         variant.n_pairs, "pair r", variant)
