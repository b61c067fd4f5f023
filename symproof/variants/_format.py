"""The variant file's format: a TOML file (or a dict of its shape) describing a position-encoding variant.

A file states what a scheme *is*, never how to prove anything about it::

    name = "linear-interpolation"
    title = "Linear position interpolation, scale 4"
    kind = "rotary"               # additive | rotary | bias | dense (a matrix exponential: see _dense)
    width = 8                     # head width d_k (rotary) or model width d (additive)
    rotated_width = 8             # optional, rotary only; defaults to width
    pairing = "half"              # rotary: required, adjacent | half; additive: adjacent | concatenated

    [params]                      # exact numbers, or formulas in earlier params
    s = 4

    [frequencies]
    rule = "geometric"            # geometric (base, denominator) | formula | list
    base = 10000                  # a number or a formula (NTK: "10000 * s**(d/(d-2))")
    denominator = 8               # required when rotated_width < width
    factors = [1, 1, 1.25, 2]     # optional (geometric): divide pair r's frequency by factors[r] (LongRoPE)

    [position]
    transform = "m / s"           # the position actually rotated by, a formula in m
    # amplitude = "alpha"         # additive: p_t multiplied by a formula in m (scaled sinusoidal)
    axes = ["m"]                  # 2-D: ["row", "col"], with axis = formula in r, n
    # relative = "Min(i - j, w)"  # instead of a transform: the relative position that replaces i - j in
    #                             # the angle (i = query, j = key position; ReRoPE, Self-Extend)
    # causal = true               # with relative: only keys j <= i are scored (the properties range over them)

    [scale]                       # per-position scale (xPos), formulas in m, r, d, n
    query = "zeta**(m/B)"
    key = "zeta**(-m/B)"

    [attention]
    factor = "0.1*log(s) + 1"     # multiplies the rotated queries and keys (scores by factor**2)

    [rotation]                    # the 2x2 block as formulas in x (default: the rotation R(x))
    block = [["cos(x)", "-sin(x)"], ["sin(x)", "cos(x)"]]

    [bias]                        # kind = "bias" (ALiBi)
    formula = "-slope * abs(j - i)"
    heads = 8
    slope = "2**(-8*(h + 1)/heads)"

    [vectors]                     # additive: a learned table, one row per position (GPT-2's wpe)
    file = "wpe.npy"              # or rows = [[...], ...] inline; .safetensors with tensor = "NAME"
    clip = false                  # true: positions past the table read its last row (positions = "nonnegative")

    [length]                      # rotary: rules that read the call's length seq_len (max position id + 1)
    threshold = 4096              # the length the rule changes at (dynamic NTK: max_position_embeddings)
    long_factors = [1, 2, 4, 8]   # optional: frequencies.factors apply while seq_len <= threshold, these after

    [equivalent]                  # optional: the named scheme this one should equal
    name = "RoPE with every frequency divided by s"
    frequencies = "10000**(-2*r/d) / s"
    # bias variants: bias = "-slope * (i - j)", equal under a causal softmax (row-constant shifts)

``[position] relative`` (rotary only) describes a scheme that is not a rotation of each token: the
score of pair ``r`` for the query at ``i`` and the key at ``j`` is
``(S_q(i) B(rho(i, j) * omega_r) q)^T (S_k(j) B(0) k)``, the query rotated by the relative position
``rho`` and the key by none (``rho = i - j`` with the default block is RoPE: ``R(i w)^T R(j w) = R((j - i) w)``).
It excludes ``transform`` (write it inside ``rho``), several axes, ``[length]`` and ``[equivalent]``.
``causal = true`` restricts every property to keys ``j <= i`` (a causal mask hides the others): then
``direction`` does not apply (no score sees a key after its query) and is listed as such.

Per-pair, per-axis frequency vectors (RoPE-Mixed, Heo et al. 2024): with several axes, pair ``r``
rotates by ``sum_a omega[r][a] * transform(m_a)`` over every coordinate ``m_a``::

    [position]
    axes = ["x", "y"]             # no position.axis: every pair reads every axis
    [frequencies]
    rule = "per_axis"             # may be left out when per_axis is given
    per_axis = [[0.91, 0.40], [-0.29, 0.51]]   # one row per pair, one number per axis
    # or a formula in r and a (the axis index 0..len(axes)-1): "10**(-4*r/d) * where(a == 0, 1, 0.5)"

A per-axis file is rotary; its ``[scale]`` may read ``r`` but not the position ``m`` (which has
several coordinates), it has no ``[length]``, and ``[equivalent]`` states ``per_axis`` (rows or a
formula in ``r`` and ``a``) instead of ``frequencies``.

``positions = "nonnegative"`` (top level) restricts the positions every property ranges over to
``m >= 0`` (default: every integer); ``positions = "0..N"`` to the integers ``0..N`` (a learned absolute
table of ``N + 1`` rows is then defined without a clip, and the exported kernels refuse other positions).  A ``[params]`` array is a lookup table ``T(k)``.  The names
each formula key may use are :data:`FORMULA_NAMES`; the functions, ``FUNCTIONS`` of :mod:`._formula`.

Every bias and rotary file also gets the ``decay`` property (:mod:`._decay`; no key to write, and
additive files have none).  A bias file decays when ``b(i, i - D - 1) <= b(i, i - D)`` for every
distance ``D >= 0``, every query ``i`` and every head, and every head has some ``D`` with
``b(i, i - D) < b(i, i)`` (a constant bias does not decay).  A rotary file decays when RoFormer's
bound for its frequencies, ``B(D) = (1/n) sum_{r=1..n} |S_r(D)|`` with
``S_r(D) = sum_{k<r} a_k(D) e^{i x_k(D)}``, ``x_k(D) = (g(D) - g(0)) omega_k`` (``g`` the position
transform; ``rho(D, 0) omega_k`` with ``position.relative``; ``D`` added to every axis, the frequencies of a call no longer than a ``[length]``
threshold) and ``a_k(D)`` the scales of pair ``k`` for a query at ``D`` and a key at ``0``, is
non-increasing in ``D >= 0`` and not constant.  The rotation block is not read: ``B`` is the bound
for ``R(x)``.

Every formula is parsed by :mod:`._formula` (data, never code).  Names
available in frequency formulas: ``r`` (pair index), ``d`` (the denominator
width), ``n`` (number of frequency pairs), ``width``, ``rotated_width``, the
params and the ``[frequencies.let]`` definitions, in order; with a
``[length]`` table also ``seq_len``, the length of the call (dynamic NTK:
``base = "10000 * Max(s * seq_len / L - (s - 1), 1)**(d / (d - 2))"``).

This module holds the format as data -- the bounds and schema every
description is held to (kinds, rules, pairings, the keys of each table and
their types, the names each formula may use; the reference pages print these
tables) -- and the functions that read one table each into the fields of a
:class:`~._spec.Variant`, refusing an unknown key, a wrong type or a value out
of bounds in one line that names the file, the key and what was expected.
:func:`~._spec.parse_variant` calls them in order and validates the finished
variant with ``_validate_values``.  Longer than 600 lines because the format's
documentation (above) and its schema are kept in one place, where a change to
one is seen beside the other.
"""

from __future__ import annotations

import re
from typing import Mapping

import sympy as sp

from .._ground._errors import VariantFileError
from .._ground._text import did_you_mean
from ._domain import check_defined
from ._formula import CONSTANTS, FUNCTIONS, MAX_TABLE_VALUES, Formula, lookup_table, parse_formula

__all__ = ["KINDS", "RULES", "MAX_WIDTH", "MAX_HEADS", "MAX_PARAMS", "MAX_LETS", "MAX_LET_DEPTH", "FORMULA_NAMES",
           "WIDTH_NAMES", "POSITION_DOMAINS", "MAX_LAST_POSITION", "position_range_end", "sample_indices"]

KINDS = ("additive", "rotary", "bias", "dense")
#: the symbolic pair index and head a block or bias formula is built with when none is given
_R = sp.Symbol("r", integer=True, nonnegative=True)
_H = sp.Symbol("h", integer=True, nonnegative=True)
#: what ``positions = ...`` may say: every integer (the default) or the integers >= 0
POSITION_DOMAINS = {"integers": "every integer, negative ones included (the default)",
                    "nonnegative": "the integers >= 0 (a scheme defined from position 0 on)",
                    "0..N": "the integers 0 to N (a learned absolute table of N + 1 rows; N from 1 to 2^53 - 1)"}
#: the largest N of ``positions = "0..N"``: every integer up to it is a float64 number (kernels take float64)
MAX_LAST_POSITION = 2**53 - 1
_RANGE = re.compile(r"^0\.\.([1-9][0-9]{0,15})$")


def position_range_end(positions) -> int | None:
    """``N`` of ``"0..N"`` (N from 1 to :data:`MAX_LAST_POSITION`), else ``None``."""
    match = _RANGE.match(positions) if isinstance(positions, str) else None
    if match is None or int(match.group(1)) > MAX_LAST_POSITION:
        return None
    return int(match.group(1))
#: what a file may write to ask for positions computed from the content (CoPE), refused in one line
CONTENT_POSITIONS = ("content", "contextual", "gated", "cope")
CONTENT_REFUSAL = ("content-dependent positions (CoPE: positions summed from gates computed from the queries and "
                   "keys) cannot be described here: every formula is a function of integer positions, and the "
                   "properties of such a scheme depend on the content; expected one of "
                   + str(list(POSITION_DOMAINS)))
RULES = ("geometric", "formula", "list", "per_axis")
#: what each rotary pairing means, for the error of a file that leaves it out
PAIRING_MEANINGS = {"adjacent": "pairs (2r, 2r+1): GPT-J rotate_every_two, Meta's complex view",
                    "half": "pairs (r, r + d/2): HF rotate_half, GPT-NeoX, Llama/Mistral/Qwen2/Gemma/Phi in HF"}
#: longest [length] threshold accepted (positions beyond it are far past any published context)
MAX_LENGTH = 2**31
#: pairings per kind; "concatenated" is the [sin | cos] table layout
PAIRINGS = {"rotary": ("adjacent", "half"), "additive": ("adjacent", "concatenated"), "bias": (), "dense": ()}
MAX_WIDTH = 8192
MAX_HEADS = 1024
MAX_AXES = 4
#: most ``[params]`` and most ``[frequencies.let]`` definitions (each may use every earlier one)
MAX_PARAMS = 256
MAX_LETS = 64
#: longest chain of ``let`` definitions each using the previous one (a value can double in size
#: at each link, and SymPy's construction time with it)
MAX_LET_DEPTH = 8
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
#: names with a fixed meaning in some formula; parameters may not shadow them
#: the names formulas give a meaning of their own, and that meaning (a parameter may not take one)
RESERVED_MEANINGS = {
    "r": "the pair index", "m": "the position", "i": "the query position", "j": "the key position",
    "x": "the rotation angle", "h": "the head index", "heads": "the number of heads", "d": "the denominator width",
    "n": "the number of frequency pairs", "width": "the head width", "rotated_width": "the rotated width",
    "slope": "the head's slope", "seq_len": "the length of the call", "pi": "the number pi",
    "E": "Euler's number e", **{name: f"the function {name}" for name in FUNCTIONS},
}
RESERVED = frozenset(RESERVED_MEANINGS) | frozenset(CONSTANTS) | frozenset(FUNCTIONS)

_TOP = {"name": str, "title": str, "description": str, "kind": str, "width": int, "rotated_width": int,
        "pairing": str, "params": dict, "frequencies": dict, "position": dict, "scale": dict,
        "attention": dict, "rotation": dict, "bias": dict, "equivalent": dict, "length": dict,
        "positions": str, "heads": int, "vectors": dict, "mask": dict, "dense": dict}
_TABLES = {
    "frequencies": {"rule": str, "base": (int, float, str), "denominator": int, "formula": (str, int, float),
                    "values": list, "let": dict, "factors": list, "per_axis": (list, str)},
    "position": {"transform": (str, int, float), "axes": list, "axis": (str, int), "relative": (str, int, float),
                 "causal": bool, "amplitude": (str, int, float)},
    "scale": {"query": (str, int, float), "key": (str, int, float)},
    "attention": {"factor": (str, int, float)},
    "rotation": {"block": list},
    "bias": {"formula": (str, int, float), "heads": int, "slope": (str, int, float), "axes": list},
    "equivalent": {"name": str, "frequencies": (str, int, float), "bias": (str, int, float),
                   "per_axis": (list, str)},
    "length": {"threshold": int, "long_factors": list},
    # kind = "dense" (LieRE, STRING): R(m) = exp(sum_a m_a A_a), one square generator per position axis
    "dense": {"generator": list, "generators": list},
    "vectors": {"rows": list, "file": str, "tensor": str, "clip": bool},
    "mask": {"allowed": str},  # read by ._mask
}
#: the tables each kind may have
_KIND_TABLES = {"additive": {"frequencies", "position", "equivalent", "params", "vectors"},
                "rotary": {"frequencies", "position", "scale", "attention", "rotation", "equivalent", "params",
                           "length", "bias", "mask"},
                "bias": {"bias", "params", "equivalent", "mask"},
                "dense": {"dense", "position", "params"}}
_EXPECTED = {str: "a string", int: "an integer", float: "a number", dict: "a table", list: "an array",
             (int, float, str): "a number or a formula string", (str, int, float): "a formula string or a number",
             (str, int): "a formula string or an integer",
             (list, str): "an array of rows (one per pair, one number per axis) or a formula string in r and a",
             bool: "a boolean (true or false)"}


#: the widths every formula but the position transform, the bias and the slope may use
WIDTH_NAMES = ("d", "n", "width", "rotated_width")
#: key -> (the names it may use besides its [params] and their tables, whether the widths are among them)
#: and what the names mean; the README's table is tested against it
FORMULA_NAMES: dict = {
    "frequencies.base": (("r",), True, "r = pair index 0..n-1; [frequencies.let] names; seq_len with [length]; "
                                       "h = head index 0..heads-1 and heads with a top-level heads (rotary)"),
    "frequencies.formula": (("r",), True, "as frequencies.base"),
    "frequencies.let.NAME": (("r",), True, "as frequencies.base; every earlier let"),
    "frequencies.values[k]": ((), True, "one number per pair"),
    "frequencies.per_axis": (("r", "a"), True, "r = pair index, a = axis index 0..len(axes)-1: omega_{r,a}; "
                                               "or an array of rows [r][a] of numbers"),
    "position.transform": (("m",), False, "m = the position (one coordinate of it with several axes)"),
    "position.amplitude": (("m",), False, "m = the position: p_t is multiplied by amplitude(t) (additive only; "
                                          "scaled sinusoidal x + alpha PE(t))"),
    "position.axis": (("r",), True, "r = pair index; gives the axis index 0..len(axes)-1 pair r rotates with"),
    "position.relative": (("i", "j"), False, "i = query position, j = key position: the relative position that "
                                             "replaces i - j in the rotary angle (ReRoPE, Self-Extend)"),
    "scale.query / scale.key": (("m", "r"), True,
                                "m = position of the query / of the key (not with per_axis), r = pair index; "
                                "h, heads with a top-level heads"),
    "attention.factor": ((), True, "a number: multiplies rotated queries and keys"),
    "rotation.block[a][b]": (("x", "r", "m"), True, ("x = the angle (transform(m) * frequency), r = pair index, "
                                                     "m = the position of the token rotated (one axis, not with "
                                                     "position.relative)")),
    "bias.formula": (("i", "j", "slope", "h", "heads"), False,
                     "i = query position, j = key position, slope = the head's slope, h = head index 0..heads-1"),
    "bias.slope": (("h", "heads"), False, "h = head index 0..heads-1"),
    "bias.formula with bias.axes": (("i_AXIS", "j_AXIS", "slope", "h", "heads"), False,
                                    "i_y, i_x = the query's coordinates, j_y, j_x = the key's (named after bias.axes; "
                                    "Swin's 2-D table), instead of i and j"),
    "equivalent.frequencies": (("r",), True, "r = pair index"),
    "equivalent.per_axis": (("r", "a"), True, "as frequencies.per_axis"),
    "equivalent.bias": (("i", "j", "slope", "h", "heads"), False, "as bias.formula"),
    "dense.generator[a][b]": ((), False, "one entry of a generator: a number, or a formula in [params] (no position: "
                                        "the rotation is exp(sum_a m_a A_a))"),
    "mask.allowed": (("i", "j"), False, "i = query position, j = key position: comparisons joined by and, or, "
                                       "not; where false the score is -inf (causal, sliding window, sinks)"),
}


class _Reader:
    """Typed access to the document that names the file and key in every error."""

    def __init__(self, source: str, variant_class):
        self.source = source
        self.tables: set = set()  # the lookup tables of [params], callable in every later formula
        # the class the fields are read into (passed in: the class's module reads the file through this one)
        self.variant = variant_class
        #: the keys (prefixes) whose formulas may read the head index h and the head count (a rotary file
        #: with heads; a list of values or of factors is one table for every head)
        self.head_keys: tuple = ()

    def fail(self, key: str, message: str) -> VariantFileError:
        return VariantFileError(f"{self.source}: key '{key}': {message}")

    def check_keys(self, table: Mapping, schema: Mapping, prefix: str) -> None:
        for key, value in table.items():
            full = f"{prefix}{key}"
            if key not in schema:
                raise VariantFileError(f"{self.source}: unknown key '{full}'{did_you_mean(key, schema)}; "
                                       f"expected one of {sorted(schema)}")
            wanted = schema[key]
            types = wanted if isinstance(wanted, tuple) else (wanted,)
            if isinstance(value, bool) != (wanted is bool) or not isinstance(value, types):
                raise self.fail(full, f"expected {_EXPECTED.get(wanted, wanted)}, "
                                      f"got {_toml_type(value)} {value!r}"[:300])

    def formula(self, value, key: str, names) -> Formula:
        if key.startswith(self.head_keys):  # a rotary file's declared heads: h, heads (see _heads)
            names = set(names) | {"h", "heads"}
        return parse_formula(value, names=set(names) - self.tables, where=f"{self.source}: key '{key}'",
                             tables=self.tables)


def _toml_type(value) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _even_width(reader: _Reader, value, key: str) -> int:
    if value < 2 or value % 2 or value > MAX_WIDTH:
        raise reader.fail(key, f"expected an even integer between 2 and {MAX_WIDTH} "
                               f"(dimensions are used in pairs), got {value}")
    return value


def _exponent_width(reader: _Reader, value, key: str) -> int:
    """The width in the exponent ``base^(-2r/d)``: any positive integer (HF's odd ``int(head * factor)``
    is one), not a count of coordinates, which come in pairs."""
    if value < 1 or value > MAX_WIDTH:
        raise reader.fail(key, f"expected an integer between 1 and {MAX_WIDTH} (the width in the exponent "
                               f"base^(-2r/d)), got {value}")
    return value


def _names(key: str, params) -> set:
    """The names ``key``'s formula may use (:data:`FORMULA_NAMES`), with the params."""
    fixed, widths, _ = FORMULA_NAMES[key]
    return set(fixed) | set(params) | (set(WIDTH_NAMES) if widths else set())


def _width_names(params) -> set:
    return set(WIDTH_NAMES) | set(params)


def _free_name(key: str, table: Mapping) -> str:
    """A parameter name close to ``key`` that is neither reserved nor taken in ``table``."""
    for candidate in (f"{key}_", f"{key}0", f"{key}_param", f"p_{key}"):
        if candidate not in RESERVED and candidate not in table and _IDENT.match(candidate):
            return candidate
    return f"{key}_{len(table)}"


def _parse_params(reader: _Reader, table: Mapping) -> dict:
    if len(table) > MAX_PARAMS:
        raise reader.fail("params", f"has {len(table)} parameters; at most {MAX_PARAMS} are accepted")
    params: dict = {}
    for key, value in table.items():
        full = f"params.{key}"
        if not _IDENT.match(key):
            raise reader.fail(full, "a parameter name must be a letter followed by letters, digits or '_'")
        if key in RESERVED:
            meaning = RESERVED_MEANINGS.get(key, "a name of the formula language")
            raise reader.fail(full, f"{key!r} has a fixed meaning in formulas ({meaning}); rename the parameter "
                                    f"({_free_name(key, table)}, say) and write that name in the formulas")
        if isinstance(value, list):
            params[key] = _lookup(reader, full, key, value, params)
            reader.tables.add(key)
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise reader.fail(full, f"expected a number, a formula string or an array of numbers (a lookup "
                                    f"table), got {_toml_type(value)}")
        formula = reader.formula(value, full, set(params))
        params[key] = formula.build(params)
        if not params[key].is_number:
            raise reader.fail(full, f"expected a number, got {params[key]}")
    return params


def _lookup(reader: _Reader, full: str, key: str, values: list, params: dict):
    """A ``[params]`` array: a lookup table of exact numbers, ``key(k)`` in formulas."""
    if not 1 <= len(values) <= MAX_TABLE_VALUES:
        raise reader.fail(full, f"a lookup table needs 1 to {MAX_TABLE_VALUES} values, got {len(values)}")
    exact = []
    for k, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise reader.fail(f"{full}[{k}]", f"expected a number or a formula string, got {_toml_type(value)}")
        number = reader.formula(value, f"{full}[{k}]", set(params)).build(params)
        if number.is_extended_real is not True or not number.is_finite:
            raise reader.fail(f"{full}[{k}]", f"expected a finite real number, got {number}")
        exact.append(number)
    return lookup_table(key, exact)


def _parse_frequencies(reader: _Reader, data: Mapping, fields: dict) -> None:
    if "frequencies" not in data:
        raise reader.fail("frequencies", f"is required for kind = {data['kind']!r}")
    table = data["frequencies"]
    rule = table.get("rule", "per_axis" if "per_axis" in table else "geometric")
    if rule not in RULES:
        raise reader.fail("frequencies.rule", f"expected one of {list(RULES)}, got {rule!r}{did_you_mean(rule, RULES)}")
    fields["rule"] = rule
    names = _width_names(fields["params"])
    if fields.get("length_threshold") is not None:
        names = names | {"seq_len"}
    needs = {"geometric": {"base"}, "formula": {"formula"}, "list": {"values"}, "per_axis": {"per_axis"}}[rule]
    for key in needs:
        if key not in table:
            raise reader.fail(f"frequencies.{key}", f"is required when rule = {rule!r}")
    foreign = {"geometric": {"formula", "values", "per_axis"},
               "formula": {"values", "base", "denominator", "factors", "per_axis"},
               "list": {"formula", "base", "denominator", "let", "factors", "per_axis"},
               "per_axis": {"formula", "values", "base", "denominator", "let", "factors"}}[rule]
    for key in sorted(foreign & set(table)):
        hint = "; per-axis frequency vectors need rule = 'per_axis'" if key == "per_axis" else ""
        raise reader.fail(f"frequencies.{key}", f"does not apply when rule = {rule!r}{hint}")
    if rule == "per_axis":
        return  # read by _parse_per_axis once the axes are known

    if len(table.get("let", {})) > MAX_LETS:
        raise reader.fail("frequencies.let", f"has {len(table['let'])} definitions; at most {MAX_LETS} "
                                             "are accepted (the bound on the let depth)")
    let, known, depth = [], names | {"r"}, {}
    for key, value in table.get("let", {}).items():
        full = f"frequencies.let.{key}"
        if not _IDENT.match(key) or key in RESERVED or key in fields["params"]:
            raise reader.fail(full, "expected a new name (not a parameter or a reserved name)")
        formula = reader.formula(value, full, known)
        depth[key] = 1 + max((depth[name] for name in formula.names if name in depth), default=0)
        if depth[key] > MAX_LET_DEPTH:
            raise reader.fail(full, f"is the {depth[key]}th link of a chain of definitions each using the "
                                    f"previous one; at most {MAX_LET_DEPTH} are accepted (the bound on the let depth)")
        let.append((key, formula))
        known = known | {key}
    fields["let"] = tuple(let)

    rotated = fields["rotated_width"]
    if rule == "geometric":
        fields["base"] = reader.formula(table["base"], "frequencies.base", known)
        if "denominator" in table:
            fields["denominator"] = _exponent_width(reader, table["denominator"], "frequencies.denominator")
        elif rotated is not None and rotated != fields["width"]:
            raise reader.fail("frequencies.denominator",
                              f"is required for partial rotation (rotated_width {rotated} < width "
                              f"{fields['width']}): state {rotated} or {fields['width']}; the two give "
                              "different frequencies with identical shapes")
        pairs = (rotated if rotated is not None else fields["width"]) // 2
        if "factors" in table:
            fields["frequency_factors"] = _factors(reader, table["factors"], "frequencies.factors", pairs)
        if fields.get("long_factors") and len(fields["long_factors"]) != len(fields.get("frequency_factors", ())):
            raise reader.fail("length.long_factors", f"needs frequencies.factors with {pairs} values "
                                                     "(the factors used up to the threshold)")
    elif rule == "formula":
        fields["frequency_formula"] = reader.formula(table["formula"], "frequencies.formula", known)
    else:
        values = table["values"]
        pairs = (rotated if rotated is not None else fields["width"]) // 2
        if len(values) != pairs:
            raise reader.fail("frequencies.values", f"expected {pairs} values (one per pair), got {len(values)}")
        exact, env = [], reader.variant(**fields).width_env()
        for k, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise reader.fail(f"frequencies.values[{k}]", f"expected a number or a formula string, "
                                                             f"got {_toml_type(value)}")
            exact.append(reader.formula(value, f"frequencies.values[{k}]", names).build(env))
        fields["frequency_values"] = tuple(exact)


def _factors(reader: _Reader, values: list, key: str, pairs: int) -> tuple:
    """Per-pair divisors: exact positive numbers, one per pair."""
    if len(values) != pairs:
        raise reader.fail(key, f"expected {pairs} values (one per pair), got {len(values)}")
    exact = []
    for k, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise reader.fail(f"{key}[{k}]", f"expected a number or a formula string, got {_toml_type(value)}")
        number = reader.formula(value, f"{key}[{k}]", set()).build({})
        if number.is_positive is not True or not number.is_finite:
            raise reader.fail(f"{key}[{k}]", f"expected a positive finite number, got {number}")
        exact.append(number)
    return tuple(exact)


def _parse_length(reader: _Reader, table: Mapping, fields: dict) -> None:
    if "threshold" not in table:
        raise reader.fail("length.threshold", "is required: the call length (max position id + 1) at which "
                                              "the rule changes")
    threshold = table["threshold"]
    if not 1 <= threshold <= MAX_LENGTH:
        raise reader.fail("length.threshold", f"expected an integer between 1 and {MAX_LENGTH}, got {threshold}")
    fields["length_threshold"] = threshold
    if "long_factors" in table:
        pairs = fields["rotated_width"] // 2
        fields["long_factors"] = _factors(reader, table["long_factors"], "length.long_factors", pairs)


def _parse_position(reader: _Reader, table: Mapping, fields: dict) -> None:
    params = fields["params"]
    if "transform" in table:
        fields["transform"] = reader.formula(table["transform"], "position.transform", _names("position.transform", params))
    if "amplitude" in table:
        if fields["kind"] != "additive":
            raise reader.fail("position.amplitude", f"applies to kind = 'additive' only, not {fields['kind']!r} (a "
                                                    "rotary file scales queries and keys with [scale])")
        fields["amplitude"] = reader.formula(table["amplitude"], "position.amplitude",
                                             _names("position.amplitude", params))
    axes = table.get("axes", ["m"])
    if not axes or len(axes) > MAX_AXES or not all(isinstance(a, str) and _IDENT.match(a) for a in axes):
        raise reader.fail("position.axes", f"expected 1 to {MAX_AXES} coordinate names, got {axes!r}")
    if len(set(axes)) != len(axes):
        raise reader.fail("position.axes", f"names must differ, got {axes!r}")
    fields["axes"] = tuple(axes)
    if fields.get("rule") == "per_axis":
        pass  # every pair reads every axis: _parse_per_axis
    elif len(axes) > 1:
        if "axis" not in table:
            raise reader.fail("position.axis", "is required with several axes: a formula in r and n giving "
                                               "the coordinate each pair rotates with")
        fields["axis"] = reader.formula(table["axis"], "position.axis", _names("position.axis", params))
    elif "axis" in table:
        raise reader.fail("position.axis", "applies only when position.axes has several names")
    if "relative" in table:
        _parse_relative(reader, table, fields)
    elif "causal" in table:
        raise reader.fail("position.causal", "applies with position.relative (a per-token rotary scheme's "
                                             "properties range over every pair of positions)")


#: what ``position.relative`` cannot be combined with: the key, and why
_RELATIVE_EXCLUDES = {
    "position.transform": "write the transform inside position.relative (it replaces i - j in the angle)",
    "position.axes": "a relative position of several axes is not supported (one axis only)",
    "length": "frequencies that read the call length are not supported with a relative position",
    "equivalent": "equivalent compares per-token rotations, and a relative position is not one",
    "frequencies.per_axis": "per-axis frequency vectors read a position vector, a relative position one axis",
}


def _parse_relative(reader: _Reader, table: Mapping, fields: dict) -> None:
    """``position.relative``: ``rho(i, j)``, a formula in the query and key positions and [params]."""
    if fields["kind"] != "rotary":
        raise reader.fail("position.relative", f"applies to kind = 'rotary' only, not {fields['kind']!r} "
                                               "(a bias writes its offset j - i in bias.formula)")
    present = {"position.transform": "transform" in table, "position.axes": len(fields["axes"]) > 1,
               "length": fields.get("length_threshold") is not None,
               "frequencies.per_axis": fields.get("rule") == "per_axis"}
    for key, why in _RELATIVE_EXCLUDES.items():
        if present.get(key):
            raise reader.fail("position.relative", f"cannot be combined with {key}: {why}")
    fields["relative"] = reader.formula(table["relative"], "position.relative",
                                        _names("position.relative", fields["params"]))
    fields["causal"] = bool(table.get("causal", False))


def _parse_per_axis(reader: _Reader, data: Mapping, fields: dict) -> None:
    """``frequencies.per_axis``: one frequency vector per pair over every axis (RoPE-Mixed)."""
    axes, position = fields["axes"], data.get("position", {})
    if fields["kind"] != "rotary":
        raise reader.fail("frequencies.per_axis", f"applies to kind = 'rotary' only, not {fields['kind']!r}")
    if len(axes) < 2:
        raise reader.fail("frequencies.per_axis", "needs several position axes (position.axes = [\"x\", \"y\"]): "
                                                  "one frequency per axis in each row; with one axis use "
                                                  "rule = 'list' or 'formula'")
    if "axis" in position:
        raise reader.fail("position.axis", "does not apply with frequencies.rule = 'per_axis': every pair "
                                           "rotates with every axis, by the sum of its frequencies times them")
    if fields.get("length_threshold") is not None:
        raise reader.fail("length", "does not apply with frequencies.rule = 'per_axis'")
    if "a" in fields["params"]:
        raise reader.fail("params.a", "'a' is the axis index in frequencies.per_axis; choose another parameter name")
    fields["per_axis"] = _axis_rows(reader, "frequencies.per_axis", data["frequencies"]["per_axis"], fields)


def _axis_rows(reader: _Reader, key: str, raw, fields: dict):
    """Rows of exact numbers (one per pair, one number per axis), or a formula in r and a."""
    axes, pairs = fields["axes"], fields["rotated_width"] // 2
    names = _names("frequencies.per_axis", fields["params"])
    if isinstance(raw, str):
        return reader.formula(raw, key, names)
    if len(raw) != pairs:
        raise reader.fail(key, f"expected {pairs} rows (one per pair), got {len(raw)}")
    env = {**reader.variant(**fields).width_env()}
    rows = []
    for r, row in enumerate(raw):
        if not isinstance(row, list) or len(row) != len(axes):
            got = f"{len(row)} values" if isinstance(row, list) else _toml_type(row)
            raise reader.fail(f"{key}[{r}]", f"expected {len(axes)} numbers (one per axis {list(axes)}), got {got}")
        exact = []
        for a, value in enumerate(row):
            where = f"{key}[{r}][{a}]"
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise reader.fail(where, f"expected a number or a formula string, got {_toml_type(value)}")
            number = reader.formula(value, where, _width_names(fields["params"])).build(env)
            if number.is_extended_real is not True or not number.is_finite:
                raise reader.fail(where, f"expected a finite real number, got {number}")
            exact.append(number)
        rows.append(tuple(exact))
    return tuple(rows)


def _parse_rotary_extras(reader: _Reader, data: Mapping, fields: dict) -> None:
    params = fields["params"]
    scale = data.get("scale", {})
    names = _names("scale.query / scale.key", params)
    if "query" in scale:
        fields["query_scale"] = reader.formula(scale["query"], "scale.query", names)
    if "key" in scale:
        fields["key_scale"] = reader.formula(scale["key"], "scale.key", names)
    for side in ("query", "key"):
        formula = fields.get(f"{side}_scale")
        if fields.get("rule") == "per_axis" and formula is not None and "m" in formula.names:
            raise reader.fail(f"scale.{side}", "reads m, but with frequencies.rule = 'per_axis' a position has "
                                               f"{len(fields['axes'])} coordinates; expected a formula in r only")
    if "factor" in data.get("attention", {}):
        fields["factor"] = reader.formula(data["attention"]["factor"], "attention.factor", _names("attention.factor", params))
    if "rotation" in data:
        block = data["rotation"].get("block")
        if (not isinstance(block, list) or len(block) != 2
                or not all(isinstance(row, list) and len(row) == 2 for row in block)):
            raise reader.fail("rotation.block", "expected a 2x2 array of formulas in x, "
                                                "e.g. [[\"cos(x)\", \"-sin(x)\"], [\"sin(x)\", \"cos(x)\"]]")
        fields["block"] = tuple(
            tuple(reader.formula(entry, f"rotation.block[{a}][{b}]", _names("rotation.block[a][b]", params))
                  for b, entry in enumerate(row))
            for a, row in enumerate(block))


def _parse_bias(reader: _Reader, data: Mapping, fields: dict) -> None:
    if "bias" not in data:
        raise reader.fail("bias", "is required for kind = 'bias'")
    table = data["bias"]
    for key in ("formula", "heads", "slope"):
        if key not in table:
            raise reader.fail(f"bias.{key}", "is required")
    heads = table["heads"]
    if not 1 <= heads <= MAX_HEADS:
        raise reader.fail("bias.heads", f"expected a head count between 1 and {MAX_HEADS}, got {heads}")
    params = set(fields["params"])
    bias_names = _names("bias.formula", params)
    fields["bias"] = reader.formula(table["formula"], "bias.formula", bias_names)
    fields["heads"] = heads
    fields["slope"] = reader.formula(table["slope"], "bias.slope", _names("bias.slope", params))
    equivalent = data.get("equivalent", {})
    if "frequencies" in equivalent:
        raise reader.fail("equivalent.frequencies", "applies to rotary and additive kinds; a bias variant "
                                                    "states equivalent.bias")
    if equivalent:
        if "bias" not in equivalent:
            raise reader.fail("equivalent.bias", "is required (the bias formula in i, j, slope to equal under a "
                                                 "causal softmax)")
        fields["equivalent_name"] = equivalent.get("name", "the stated bias")
        fields["equivalent_bias"] = reader.formula(equivalent["bias"], "equivalent.bias",
                                                   _names("equivalent.bias", params))
    variant = reader.variant(**fields)
    variant.frequencies_digits()  # every head, numerically: a non-real slope fails here, naming its head
    for h in sample_indices(heads):
        value = variant.exact_value(h)
        if value.is_extended_real is not True:
            raise reader.fail("bias.slope", f"gives {value} for head h={h}; expected a real number")
    # build the bias once symbolically and once at a concrete point: a formula refused there (a table
    # indexed outside its values, a value too large) fails at load time, with its key
    i, j = sp.symbols("i j", integer=True)
    variant.bias_at(i, j, variant.exact_value(0), 0)
    if variant.equivalent_bias is not None:
        variant.equivalent_bias_at(i, j, variant.exact_value(0), 0)
    # a table read outside its entries, a log of 0...: refused with the positions and the fix, as for
    # every kind (one rule, not a bias-only build at one point)
    check_defined(variant)
    if variant.equivalent_bias is not None:
        variant.equivalent_bias_at(sp.Integer(1), sp.Integer(0), variant.exact_value(0), 0)


def sample_indices(count: int) -> list:
    """The pairs (or heads) whose exact values load-time validation, the checks and the kernel
    probe compute: both ends, the middle and the quarters."""
    picks = {0, 1, count // 4, count // 2, (3 * count) // 4, count - 2, count - 1}
    return sorted(k for k in picks if 0 <= k < count)


def _real_rows(reader: _Reader, key: str, rows: dict) -> None:
    """Each exact frequency vector (``{r: row}``) is made of finite real numbers."""
    for r, row in rows.items():
        for a, value in enumerate(row):
            if value.is_extended_real is not True or not value.is_finite:
                raise reader.fail(key, f"gives {value} for pair r={r}, axis a={a}; expected a finite real frequency")


def _validate_values(reader: _Reader, variant) -> None:
    """Evaluate every concrete value once, so a bad formula fails at load time, with its key."""
    key = {"geometric": "frequencies.base", "formula": "frequencies.formula", "list": "frequencies.values"}
    # every pair numerically (microseconds each), the sampled pairs exactly (milliseconds each): the
    # exact values at the other pairs are not needed unless a generic proof fails (see _check)
    variant.frequencies_digits()
    if variant.mixed:
        _real_rows(reader, "frequencies.per_axis", {r: variant.exact_value(r) for r in sample_indices(variant.n_pairs)})
    for r in [] if variant.mixed else sample_indices(variant.n_pairs):
        value = variant.exact_value(r)
        if value.is_extended_real is not True or not value.is_finite:
            raise reader.fail(key[variant.rule], f"gives {value} for pair r={r}; expected a finite real frequency")
    if variant.length_dependent:
        # a call past the threshold: 40 digits show a value that is not finite and real as well, without
        # exact powers of the length-dependent base (seconds of SymPy for a dynamic NTK table)
        seq_len = variant.length_threshold + 1
        for r, value in enumerate(variant.frequencies_digits(seq_len=seq_len)):
            if value.is_extended_real is not True or not value.is_finite:
                raise reader.fail(key[variant.rule], f"gives {value} for pair r={r} at seq_len={seq_len}; "
                                                     "expected a finite real frequency")
    variant.axes_of_pairs()
    # build every formula once with symbolic and concrete arguments: a formula that is refused
    # (too large, undefined) fails here, at load time, with its key
    m = sp.Symbol("m", integer=True)
    for position in (m, sp.Integer(1)):
        variant.angle_position(position)
        variant.amplitude_at(position)
        if variant.kind == "rotary":
            for r in {0, variant.n_pairs - 1}:
                variant.scale("query", position, r)
                variant.scale("key", position, r)
    if variant.kind == "rotary":
        _validate_block_position(reader, variant)
        variant.block_at(sp.Symbol("x", real=True))
    if variant.relative is not None:
        _validate_relative(reader, variant)
    if variant.equivalent_frequencies is not None:
        for r in sample_indices(variant.n_pairs):
            variant.equivalent_frequency_at(r)
    if variant.equivalent_per_axis is not None:
        _real_rows(reader, "equivalent.per_axis",
                   {r: variant._axis_row(variant.equivalent_per_axis, r) for r in sample_indices(variant.n_pairs)})
    if variant.factor is not None:
        factor = variant.factor.build(variant.width_env())
        if factor.is_extended_real is not True:
            raise reader.fail("attention.factor", f"gives {factor}; expected a real number")
    check_defined(variant)


def _validate_block_position(reader: _Reader, variant) -> None:
    """A block that reads the position ``m`` needs one position per token: one axis, and not
    ``position.relative`` (whose query turns by a relative position and whose key by none)."""
    if not variant.block_reads_position:
        return
    if len(variant.axes) > 1:
        raise reader.fail("rotation.block", f"reads m, but a position has {len(variant.axes)} coordinates "
                                            f"{list(variant.axes)}; expected a block in x and r only")
    if variant.relative is not None:
        raise reader.fail("rotation.block", "reads m, which position.relative does not give (the query turns by "
                                            "rho(i, j), the key by none); expected a block in x and r only")


def _validate_relative(reader: _Reader, variant) -> None:
    """``rho(i, j)`` built symbolically and at a few positions (the diagonal, a key one step back, one
    far back): a formula that is not a real number there fails at load time, with its key."""
    i, j = sp.symbols("i j", integer=True)
    variant.relative_at(i, j)
    last = variant.last_position
    for point in ((0, 0), (1, 0), (4097, 0)) + (() if variant.causal else ((0, 1),)):
        if last is not None and max(point) > last:  # a declared range 0..N: its positions only
            continue
        value = variant.relative_at(*point)
        if value.is_extended_real is not True or not value.is_finite:
            raise reader.fail("position.relative", f"gives {value} for (i, j) = {point}; expected a finite real "
                                                   "relative position")
