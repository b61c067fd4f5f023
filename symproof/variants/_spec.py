"""The description of a position-encoding variant: a TOML file or a :class:`Variant`.

A file states what a scheme *is*, never how to prove anything about it::

    name = "linear-interpolation"
    title = "Linear position interpolation, scale 4"
    kind = "rotary"               # additive | rotary | bias
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
``m >= 0`` (default: every integer).  A ``[params]`` array is a lookup table ``T(k)``.  The names
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
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Mapping

import sympy as sp

from .._errors import VariantFileError
from .._io import read_input_file
from .._text import did_you_mean
from ..encodings import rotation
from ._domain import check_defined
from ._formula import CONSTANTS, FUNCTIONS, MAX_TABLE_VALUES, Formula, LookupBase, lookup_table, parse_formula

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Variant", "load_variant", "parse_variant", "sample_indices", "KINDS", "RULES", "MAX_WIDTH", "MAX_HEADS",
           "MAX_PARAMS", "MAX_LETS", "MAX_LET_DEPTH", "FORMULA_NAMES", "WIDTH_NAMES", "POSITION_DOMAINS"]

KINDS = ("additive", "rotary", "bias")
#: the symbolic pair index and head a block or bias formula is built with when none is given
_R = sp.Symbol("r", integer=True, nonnegative=True)
_H = sp.Symbol("h", integer=True, nonnegative=True)
#: what ``positions = ...`` may say: every integer (the default) or the integers >= 0
POSITION_DOMAINS = {"integers": "every integer, negative ones included (the default)",
                    "nonnegative": "the integers >= 0 (a scheme defined from position 0 on)"}
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
PAIRINGS = {"rotary": ("adjacent", "half"), "additive": ("adjacent", "concatenated"), "bias": ()}
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
RESERVED = frozenset({"r", "m", "i", "j", "x", "h", "heads", "d", "n", "width", "rotated_width", "slope",
                      "seq_len"}) | frozenset(CONSTANTS) | frozenset(FUNCTIONS)

_TOP = {"name": str, "title": str, "description": str, "kind": str, "width": int, "rotated_width": int,
        "pairing": str, "params": dict, "frequencies": dict, "position": dict, "scale": dict,
        "attention": dict, "rotation": dict, "bias": dict, "equivalent": dict, "length": dict,
        "positions": str}
_TABLES = {
    "frequencies": {"rule": str, "base": (int, float, str), "denominator": int, "formula": (str, int, float),
                    "values": list, "let": dict, "factors": list, "per_axis": (list, str)},
    "position": {"transform": (str, int, float), "axes": list, "axis": (str, int), "relative": (str, int, float),
                 "causal": bool},
    "scale": {"query": (str, int, float), "key": (str, int, float)},
    "attention": {"factor": (str, int, float)},
    "rotation": {"block": list},
    "bias": {"formula": (str, int, float), "heads": int, "slope": (str, int, float)},
    "equivalent": {"name": str, "frequencies": (str, int, float), "bias": (str, int, float),
                   "per_axis": (list, str)},
    "length": {"threshold": int, "long_factors": list},
}
#: the tables each kind may have
_KIND_TABLES = {"additive": {"frequencies", "position", "equivalent", "params"},
                "rotary": {"frequencies", "position", "scale", "attention", "rotation", "equivalent", "params",
                           "length"},
                "bias": {"bias", "params", "equivalent"}}
_EXPECTED = {str: "a string", int: "an integer", float: "a number", dict: "a table", list: "an array",
             (int, float, str): "a number or a formula string", (str, int, float): "a formula string or a number",
             (str, int): "a formula string or an integer",
             (list, str): "an array of rows (one per pair, one number per axis) or a formula string in r and a",
             bool: "a boolean (true or false)"}


@dataclass(frozen=True)
class Variant:
    """A parsed, validated variant description (see the module docstring for the fields)."""

    name: str
    kind: str
    title: str = ""
    description: str = ""
    width: int | None = None
    rotated_width: int | None = None
    pairing: str = "adjacent"
    params: Mapping[str, Any] = field(default_factory=dict)
    rule: str = "geometric"
    base: Formula | None = None
    denominator: int | None = None
    frequency_formula: Formula | None = None
    frequency_values: tuple = ()
    let: tuple = ()  # ((name, Formula), ...)
    transform: Formula | None = None
    axes: tuple = ("m",)
    axis: Formula | None = None
    query_scale: Formula | None = None
    key_scale: Formula | None = None
    factor: Formula | None = None
    block: tuple | None = None  # ((Formula, Formula), (Formula, Formula)) in x
    bias: Formula | None = None
    heads: int | None = None
    slope: Formula | None = None
    equivalent_name: str | None = None
    equivalent_frequencies: Formula | None = None
    source: str = "<dict>"
    frequency_factors: tuple = ()  # exact divisor of each pair's geometric frequency (LongRoPE's short factors)
    length_threshold: int | None = None  # [length]: the call length the rule changes at
    long_factors: tuple = ()  # divisors used instead of frequency_factors when seq_len > length_threshold
    equivalent_bias: Formula | None = None  # bias variants: the form to equal under a causal softmax
    notes: tuple = ()  # where the definition came from (a model config: family, pairing, width)
    positions: str = "integers"  # the positions the properties range over: "integers" or "nonnegative"
    relative: Formula | None = None  # [position] relative: rho(i, j), the relative position the angle uses
    causal: bool = False  # [position] causal: only keys j <= i are scored

    per_axis: Formula | tuple | None = None  # rule "per_axis": rows of exact numbers, or a formula in r, a
    equivalent_per_axis: Formula | tuple | None = None  # the same, of the named scheme

    @property
    def mixed(self) -> bool:
        """Whether every pair reads every position axis (per-axis frequency vectors, RoPE-Mixed)."""
        return self.rule == "per_axis"

    @classmethod
    def from_dict(cls, data: Mapping, source: str = "<dict>") -> "Variant":
        """Validate a description given as a mapping (the TOML document's shape)."""
        return parse_variant(data, source)

    # -- exact values --------------------------------------------------------------------------
    @property
    def n_pairs(self) -> int:
        """Number of frequency pairs (rotated pairs, or pairs of the additive table)."""
        if self.kind == "rotary":
            return self.rotated_width // 2
        if self.kind == "additive":
            return self.width // 2
        return 0

    @property
    def freq_denominator(self) -> int | None:
        if self.kind == "bias":
            return None
        if self.denominator is not None:
            return self.denominator
        return self.rotated_width if self.kind == "rotary" else self.width

    def width_env(self) -> dict:
        """Names every formula may use besides its own: widths and params."""
        env = {"d": self.freq_denominator, "n": self.n_pairs, "width": self.width,
               "rotated_width": self.rotated_width}
        env = {k: sp.Integer(v) for k, v in env.items() if v is not None}
        env.update(self.params)
        return env

    @property
    def length_dependent(self) -> bool:
        """Whether the frequencies may change with the length of the call (a ``[length]`` table)."""
        return self.length_threshold is not None

    def _length(self, seq_len) -> sp.Expr:
        return sp.Integer(1) if seq_len is None else sp.sympify(seq_len)

    def _pair_independent_env(self) -> tuple:
        """``(env, per_pair_lets)``: the widths, params and every ``let`` that depends neither on the
        pair index nor on the call's length, built once; the lets that do, in order."""
        cached = self.__dict__.get("_let_env")
        if cached is None:
            env, per_pair, depends = self.width_env(), [], {"r", "seq_len"}
            for name, formula in self.let:
                if formula.names & depends:
                    per_pair.append((name, formula))
                    depends.add(name)
                else:
                    env[name] = formula.build(env)
            cached = self.__dict__["_let_env"] = (env, tuple(per_pair))
        return dict(cached[0]), cached[1]

    def frequency_at(self, r, seq_len=None) -> sp.Expr:
        """The exact frequency of pair ``r`` (an integer or a symbol) in a call of length ``seq_len``
        (an integer or a symbol; default 1, a short call)."""
        if self.rule == "list":
            return self.frequency_values[int(r)]
        if self.mixed:
            return self._axis_row(self.per_axis, r)
        env, per_pair = self._pair_independent_env()
        env["r"] = sp.sympify(r)
        env["seq_len"] = self._length(seq_len)
        for name, formula in per_pair:
            env[name] = formula.build(env)
        if self.rule == "geometric":
            base = self.base.build(env)
            value = sp.Pow(base, -2 * env["r"] / env["d"])
            factors = self.factors_at(seq_len)
            return value / factors[int(r)] if factors else value
        return self.frequency_formula.build(env)

    def _axis_row(self, rows, r) -> tuple:
        """Pair ``r``'s frequency vector ``(omega_{r,0}, ...)`` of ``rows`` (rows, or a formula in r, a)."""
        if isinstance(rows, tuple):
            return rows[int(r)]
        env = {**self.width_env(), "r": sp.sympify(r)}
        return tuple(rows.build({**env, "a": sp.Integer(a)}) for a in range(len(self.axes)))

    def pair_angle(self, position, w) -> sp.Expr:
        """The angle of a pair of frequency ``w`` at ``position``: ``transform(m) * w``, or, per axis,
        ``sum_a transform(m_a) * w_a`` (``position`` and ``w`` then sequences, one entry per axis)."""
        if not self.mixed:
            return self.angle_position(position) * w
        return sp.Add(*[self.angle_position(p) * wa for p, wa in zip(position, w)])

    def factors_at(self, seq_len=None) -> tuple:
        """The per-pair divisors in force in a call of length ``seq_len`` (LongRoPE's short/long switch)."""
        if self.long_factors and self._length(seq_len) > self.length_threshold:
            return self.long_factors
        return self.frequency_factors

    def _length_key(self, seq_len) -> str:
        # a rule that does not read the length gives one table: share its cache
        return "" if not self.length_dependent or seq_len is None else str(seq_len)

    def frequencies(self, seq_len=None) -> list:
        """The exact frequency of every pair, ``r = 0 .. n_pairs - 1``, in a call of length ``seq_len``
        (computed once per length).

        Exact values cost milliseconds each; what needs every pair at once (the kernel's
        table, load-time validation) uses :meth:`frequencies_digits` and :meth:`generic_value`."""
        key = "_frequencies" + self._length_key(seq_len)
        cached = self.__dict__.get(key)
        if cached is None:
            if self._shared_base:  # one base for every pair: build it (and its Max, powers...) once
                env = {**self.width_env(), "seq_len": self._length(seq_len)}
                base, factors, d = self.base.build(env), self.factors_at(seq_len), env["d"]
                cached = [sp.Pow(base, sp.Integer(-2 * r) / d) / (factors[r] if factors else 1)
                          for r in range(self.n_pairs)]
            elif not self._length_key(seq_len):
                cached = [self.exact_value(r) for r in range(self.n_pairs)]
            else:
                cached = [self.frequency_at(r, seq_len) for r in range(self.n_pairs)]
            self.__dict__[key] = cached
        return list(cached)

    @property
    def _shared_base(self) -> bool:
        return self.rule == "geometric" and not self.let and "r" not in self.base.names

    def exact_value(self, index: int) -> sp.Expr:
        """The exact frequency of pair ``index`` (the slope of head ``index`` for bias variants), cached."""
        cache = self.__dict__.setdefault("_exact", {})
        if index not in cache:
            cache[index] = self.slope_at(index) if self.kind == "bias" else self.frequency_at(index)
        return cache[index]

    @property
    def value_count(self) -> int:
        """Number of frequencies (or of slopes, for bias variants)."""
        return self.heads if self.kind == "bias" else self.n_pairs

    def generic_value(self):
        """The frequency of a symbolic pair ``r`` (slope of a symbolic head ``h``), or ``None`` when
        the formula cannot be built for a symbolic index (then values are built one by one)."""
        if "_generic" not in self.__dict__:
            index = sp.Symbol("h" if self.kind == "bias" else "r", integer=True, nonnegative=True)
            try:
                # per-pair divisors (a list) have no value at a symbolic index
                listed = (self.rule == "list" or isinstance(self.per_axis, tuple)
                          or bool(self.frequency_factors or self.long_factors))
                value = None if listed and self.kind != "bias" else (
                    self.slope_at(index) if self.kind == "bias" else self.frequency_at(index))
            except VariantFileError:
                value = None
            self.__dict__["_generic"] = (index, value)
        return self.__dict__["_generic"]

    def frequencies_digits(self, digits: int = 40, seq_len=None) -> list:
        """Every frequency (or slope, for bias variants) to ``digits`` significant digits (computed once
        per call length).

        Without a call length, the symbolic value of a generic pair is evaluated with mpmath at
        ``digits + 10`` digits for each index (microseconds each, where exact construction takes
        milliseconds); a value that is not a finite real number raises a :class:`VariantFileError`
        naming the index. At a given length, frequencies are evaluated from the definition with every
        number a Float of ``digits + 20`` digits: exact powers of large rationals (a dynamic base at
        some call length) would cost SymPy seconds per table."""
        key = f"_digits_{digits}" + self._length_key(seq_len)
        cached = self.__dict__.get(key)
        if cached is None:
            if self.kind != "bias" and self._length_key(seq_len):
                cached = [sp.N(w, digits) for w in self._float_frequencies(digits + 20, seq_len)]
            else:
                cached = self._numeric_values(digits)
            self.__dict__[key] = cached
        return list(cached)

    def _numeric_values(self, digits: int) -> list:
        import mpmath

        index, generic = self.generic_value()
        what = "head h" if self.kind == "bias" else "pair r"
        key = ("bias.slope" if self.kind == "bias" else
               {"geometric": "frequencies.base", "formula": "frequencies.formula",
                "list": "frequencies.values", "per_axis": "frequencies.per_axis"}[self.rule])
        if self.mixed:
            return self._numeric_rows(digits, key)
        if generic is None or generic.has(sp.Symbol("m")) or _reads_table(generic):
            return [sp.N(self.exact_value(k), digits) for k in range(self.value_count)]
        function = sp.lambdify(index, generic, modules="mpmath")
        values = []
        with mpmath.workdps(digits + 10):
            for k in range(self.value_count):
                values.append(sp.Float(self._finite_value(function, (k,), key, f"{what}={k}"), digits))
        return values

    def _finite_value(self, function, arguments, key: str, where: str):
        """``function(*arguments)`` evaluated with mpmath: a finite real mpf, or a one-line error naming
        ``key`` and ``where`` (``pair r=3``)."""
        import mpmath

        try:
            value = function(*(mpmath.mpf(a) for a in arguments))
        except (ZeroDivisionError, ValueError, OverflowError, TypeError) as err:
            raise VariantFileError(f"{self.source}: key '{key}' cannot be evaluated for {where} "
                                   f"({type(err).__name__})") from None
        # a constant formula ("0", "1", "h - h", 1.0) is lambdified to a Python int, which is a finite
        # real number as much as an mpf is
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = mpmath.mpf(value)
        if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value):
            raise VariantFileError(f"{self.source}: key '{key}' gives {mpmath.nstr(value, 8)} for "
                                   f"{where}; expected a finite real number")
        return value

    def _numeric_rows(self, digits: int, key: str) -> list:
        """Every pair's frequency vector to ``digits`` digits: the rows' exact numbers, or the formula
        evaluated with mpmath at each ``(r, a)`` (one exact build per pair costs milliseconds)."""
        import mpmath

        if isinstance(self.per_axis, tuple):
            return [tuple(sp.N(w, digits) for w in row) for row in self.per_axis]
        index, axis = sp.Symbol("r", integer=True, nonnegative=True), sp.Symbol("a", integer=True, nonnegative=True)
        try:
            generic = self.per_axis.build({**self.width_env(), "r": index, "a": axis})
        except VariantFileError:  # only concrete indices build it (a sum up to a): exactly, pair by pair
            generic = None
        if generic is None or _reads_table(generic):  # a lookup table has no mpmath function either
            return [tuple(sp.N(w, digits) for w in self.exact_value(r)) for r in range(self.n_pairs)]
        function = sp.lambdify((index, axis), generic, modules="mpmath")
        rows = []
        with mpmath.workdps(digits + 10):
            for r in range(self.n_pairs):
                rows.append(tuple(
                    sp.Float(self._finite_value(function, (r, a), key, f"pair r={r}, axis a={a}"), digits)
                    for a in range(len(self.axes))))
        return rows

    def axes_of_pairs(self) -> list:
        """:meth:`axis_of` every pair (computed once)."""
        if "_axes" not in self.__dict__:
            self.__dict__["_axes"] = [self.axis_of(r) for r in range(self.n_pairs)]
        return list(self.__dict__["_axes"])
    def _float_frequencies(self, precision: int, seq_len=None) -> list:
        if self.rule == "list":
            return list(self.frequency_values)

        def lift(value):
            if not isinstance(value, sp.Basic):  # a lookup table
                return value
            return sp.Float(sp.N(value, precision), precision) if value.is_number else value

        base_env = {k: lift(v) for k, v in self.width_env().items()}
        base_env["seq_len"] = lift(self._length(seq_len))
        base_env.update({name: lift(value) for name, value in CONSTANTS.items()})
        factors = self.factors_at(seq_len)
        shared = self.base.build(base_env) if self._shared_base else None
        out = []
        for r in range(self.n_pairs):
            env = {**base_env, "r": sp.Integer(r)}
            for name, formula in self.let:
                env[name] = formula.build(env)
            if self.rule == "geometric":
                base = shared if shared is not None else self.base.build(env)
                value = sp.Pow(base, -2 * env["r"] / env["d"])
                value = value / lift(factors[r]) if factors else value
            else:
                value = self.frequency_formula.build(env)
            out.append(value)
        return out

    def axis_of(self, r: int) -> int:
        """Which position coordinate pair ``r`` rotates with (0 for 1-D positions and per-axis
        frequencies, whose pairs read every coordinate: see :meth:`pair_angle`)."""
        if self.axis is None:
            return 0
        if "_axes" in self.__dict__:
            return self.__dict__["_axes"][r]
        value = self.axis.build({**self.width_env(), "r": sp.Integer(r)})
        if not (value.is_Integer and 0 <= int(value) < len(self.axes)):
            raise VariantFileError(f"{self.source}: key 'position.axis' gives {value} for pair r={r}; "
                                   f"expected an integer axis index in 0..{len(self.axes) - 1}")
        return int(value)

    def angle_position(self, m) -> sp.Expr:
        """The position a pair is rotated by, for position (coordinate) ``m``."""
        if self.transform is None:
            return sp.sympify(m)
        return self.transform.build({**self.params, "m": sp.sympify(m)})

    def relative_at(self, i, j) -> sp.Expr:
        """The relative position ``rho(i, j)`` the angle of the query at ``i`` and the key at ``j`` uses
        (``position.relative``; ``i - j`` when the file has none)."""
        if self.relative is None:
            return sp.sympify(i) - sp.sympify(j)
        return self.relative.build({**self.params, "i": sp.sympify(i), "j": sp.sympify(j)})

    def scale(self, side: str, m, r) -> sp.Expr:
        """The per-position scale of queries (``side='query'``) or keys, times the attention factor."""
        formula = self.query_scale if side == "query" else self.key_scale
        env = {**self.width_env(), "m": sp.sympify(m), "r": sp.sympify(r)}
        value = sp.Integer(1) if formula is None else formula.build(env)
        if self.factor is not None:
            value = value * self.factor.build(self.width_env())
        return value

    def block_at(self, x, r=None) -> sp.ImmutableMatrix:
        """The 2x2 block of pair ``r`` at angle ``x`` (the rotation ``R(x)`` unless the file says otherwise;
        ``r`` defaults to the symbolic pair index)."""
        if self.block is None:
            return rotation(x)
        env = {**self.width_env(), "x": sp.sympify(x), "r": _R if r is None else sp.sympify(r)}
        return sp.ImmutableMatrix([[f.build(env) for f in row] for row in self.block])

    def slope_at(self, h) -> sp.Expr:
        """The exact bias slope of head ``h`` (an integer or a symbol)."""
        return self.slope.build({**self.params, "heads": sp.Integer(self.heads), "h": sp.sympify(h)})

    def slopes(self) -> list:
        """The exact bias slope of every head."""
        return [self.exact_value(h) for h in range(self.heads)]

    def _bias_env(self, i, j, slope, h) -> dict:
        return {**self.params, "i": sp.sympify(i), "j": sp.sympify(j), "slope": sp.sympify(slope),
                "h": _H if h is None else sp.sympify(h), "heads": sp.Integer(self.heads)}

    def bias_at(self, i, j, slope, h=None) -> sp.Expr:
        """The bias of the query at ``i`` and the key at ``j`` in head ``h`` (default: the symbolic head)
        of slope ``slope``."""
        return self.bias.build(self._bias_env(i, j, slope, h))

    def equivalent_bias_at(self, i, j, slope, h=None) -> sp.Expr:
        return self.equivalent_bias.build(self._bias_env(i, j, slope, h))

    def equivalent_frequency_at(self, r) -> sp.Expr:
        return self.equivalent_frequencies.build({**self.width_env(), "r": sp.sympify(r)})

    def equivalent_frequencies_exact(self) -> list:
        if self.mixed:
            return [self._axis_row(self.equivalent_per_axis, r) for r in range(self.n_pairs)]
        return [self.equivalent_frequency_at(r) for r in range(self.n_pairs)]

    @property
    def standard_block(self) -> bool:
        return self.block is None

    def describe(self) -> dict:
        """A JSON-ready summary of the definition (formulas as their text)."""
        out = {"name": self.name, "title": self.title, "kind": self.kind, "source": self.source}
        if self.kind != "bias":
            out.update(width=self.width, pairing=self.pairing, frequency_rule=self.rule,
                       denominator=self.freq_denominator)
        if self.kind == "rotary":
            out["rotated_width"] = self.rotated_width
        for key in ("transform", "relative", "query_scale", "key_scale", "factor", "bias", "slope"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value.text
        if self.params:
            out["params"] = {k: [str(x) for x in v.values] if isinstance(v, type) else str(v)
                             for k, v in self.params.items()}
        if self.frequency_factors:
            out["factors"] = [str(f) for f in self.frequency_factors]
        if self.length_dependent:
            out["length"] = {"threshold": self.length_threshold,
                             **({"long_factors": [str(f) for f in self.long_factors]} if self.long_factors else {})}
        if self.equivalent_bias is not None:
            out["equivalent_bias"] = self.equivalent_bias.text
        if self.notes:
            out["notes"] = list(self.notes)
        if self.positions != "integers":
            out["positions"] = self.positions
        if self.causal:
            out["causal"] = True
        if self.mixed:
            out["axes"] = list(self.axes)
            out["per_axis"] = _rows_text(self.per_axis)
            if self.equivalent_per_axis is not None:
                out["equivalent_per_axis"] = _rows_text(self.equivalent_per_axis)
        return out


def _reads_table(expr) -> bool:
    """Whether ``expr`` reads a ``[params]`` lookup table (which lambdify cannot print)."""
    return any(isinstance(f, LookupBase) for f in expr.atoms(sp.Function))


def _rows_text(rows):
    """Per-axis frequencies as text: the formula, or every row (the first 64, then a count)."""
    if not isinstance(rows, tuple):
        return rows.text
    shown = [[str(w) for w in row] for row in rows[:64]]
    return shown if len(rows) <= 64 else shown + [f"... {len(rows) - 64} more rows"]


# -- loading ------------------------------------------------------------------------------------


def load_variant(path: str | os.PathLike) -> Variant:
    """Read and validate a variant description file (TOML): a regular file of at most 1 MB."""
    raw = read_input_file(path, error=VariantFileError)
    source = os.fspath(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise VariantFileError(f"{source}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    return loads_variant(text, source)


def loads_variant(text: str, source: str = "<text>") -> Variant:
    """Validate the text of a variant description (TOML) into a :class:`Variant`; ``source`` names it in errors."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise VariantFileError(f"{source}: not valid TOML ({err})") from None
    except ValueError as err:  # an integer beyond Python's 4300-digit conversion limit
        raise VariantFileError(f"{source}: not accepted TOML ({str(err).split(';')[0]})") from None
    except RecursionError:
        raise VariantFileError(f"{source}: not accepted TOML (arrays or tables nested too deeply)") from None
    return parse_variant(data, source)


class _Reader:
    """Typed access to the document that names the file and key in every error."""

    def __init__(self, source: str):
        self.source = source
        self.tables: set = set()  # the lookup tables of [params], callable in every later formula

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


def parse_variant(data: Mapping, source: str = "<dict>") -> Variant:
    """Validate ``data`` (a parsed TOML document) into a :class:`Variant`."""
    reader = _Reader(source)
    if not isinstance(data, Mapping):
        raise VariantFileError(f"{source}: expected a table of keys, got {_toml_type(data)}")
    reader.check_keys(data, _TOP, "")
    for table, schema in _TABLES.items():
        if table in data:
            reader.check_keys(data[table], schema, f"{table}.")

    for key in ("name", "kind"):
        if key not in data:
            raise reader.fail(key, "is required")
    name, kind = data["name"], data["kind"]
    if not _NAME.match(name):
        raise reader.fail("name", f"expected lower-case letters, digits, '-' or '_' (it becomes part of "
                                  f"the property IDs), got {name!r}")
    if kind not in KINDS:
        raise reader.fail("kind", f"expected one of {list(KINDS)}, got {kind!r}{did_you_mean(kind, KINDS)}")

    fields: dict = {"name": name, "kind": kind, "title": data.get("title", name),
                    "description": data.get("description", ""), "source": source}
    if "positions" in data:
        if data["positions"] in CONTENT_POSITIONS:
            raise reader.fail("positions", CONTENT_REFUSAL)
        if data["positions"] not in POSITION_DOMAINS:
            raise reader.fail("positions", f"expected one of {list(POSITION_DOMAINS)}, got {data['positions']!r}"
                                           f"{did_you_mean(data['positions'], POSITION_DOMAINS)}")
        fields["positions"] = data["positions"]
    for table in _TABLES:
        if table in data and table not in _KIND_TABLES[kind]:
            raise reader.fail(table, f"does not apply to kind = {kind!r} (it applies to "
                                     f"{[k for k, t in _KIND_TABLES.items() if table in t]})")
    for key in ("width", "rotated_width", "pairing"):
        if key in data and kind == "bias":
            raise reader.fail(key, "does not apply to kind = 'bias'")
    if "rotated_width" in data and kind != "rotary":
        raise reader.fail("rotated_width", f"applies to kind = 'rotary' only, not {kind!r}")

    params = _parse_params(reader, data.get("params", {}))
    fields["params"] = params

    if kind == "bias":
        _parse_bias(reader, data, fields)
        return Variant(**fields)
    if "bias" in data.get("equivalent", {}):
        raise reader.fail("equivalent.bias", f"applies to kind = 'bias' only, not {kind!r}")

    if "width" not in data:
        raise reader.fail("width", f"is required for kind = {kind!r}")
    width = _even_width(reader, data["width"], "width")
    rotated = _even_width(reader, data.get("rotated_width", width), "rotated_width") if kind == "rotary" else None
    if rotated is not None and rotated > width:
        raise reader.fail("rotated_width", f"must be <= width ({width}), got {rotated}")
    if kind == "rotary" and "pairing" not in data:
        raise reader.fail("pairing", "is required for kind = 'rotary': " + "; ".join(
            f"'{name}' = {meaning}" for name, meaning in PAIRING_MEANINGS.items()))
    pairing = data.get("pairing", "adjacent")
    if pairing not in PAIRINGS[kind]:
        raise reader.fail("pairing", f"expected one of {list(PAIRINGS[kind])} for kind = {kind!r}, got {pairing!r}"
                                     f"{did_you_mean(pairing, PAIRINGS[kind])}")
    fields.update(width=width, rotated_width=rotated, pairing=pairing)

    if "length" in data:
        _parse_length(reader, data["length"], fields)
    _parse_frequencies(reader, data, fields)
    _parse_position(reader, data.get("position", {}), fields)
    if fields.get("relative") is not None and "equivalent" in data:
        raise reader.fail("position.relative",
                          f"cannot be combined with equivalent: {_RELATIVE_EXCLUDES['equivalent']}")
    if fields["rule"] == "per_axis":
        _parse_per_axis(reader, data, fields)
    if kind == "rotary":
        _parse_rotary_extras(reader, data, fields)
    if "per_axis" in data.get("equivalent", {}) and fields.get("rule") != "per_axis":
        raise reader.fail("equivalent.per_axis", "applies with frequencies.rule = 'per_axis' only; "
                                                 "state equivalent.frequencies")
    if fields.get("rule") == "per_axis" and "equivalent" in data:
        eq = data["equivalent"]
        if "frequencies" in eq:
            raise reader.fail("equivalent.frequencies", "with frequencies.rule = 'per_axis' the named scheme's "
                                                        "frequencies are per axis too: state equivalent.per_axis")
        if "per_axis" not in eq:
            raise reader.fail("equivalent.per_axis", "is required (the named scheme's per-axis frequencies)")
        fields["equivalent_per_axis"] = _axis_rows(reader, "equivalent.per_axis", eq["per_axis"], fields)
    if "equivalent" in data:
        eq = data["equivalent"]
        if "frequencies" not in eq and "per_axis" not in eq:
            raise reader.fail("equivalent.frequencies", "is required (the named scheme's frequencies)")
        eq_name = eq.get("name", "the stated frequencies")
        # the name is quoted inside property statements and proof notes, which reports typeset as
        # LaTeX math and prose: no math delimiters, backslashes, braces or control characters
        if len(eq_name) > 120 or any(ch in "$\\{}" or not ch.isprintable() for ch in eq_name):
            raise reader.fail("equivalent.name", "expected plain text of at most 120 characters without "
                                                 "'$', '\\', '{', '}' or control characters")
        fields["equivalent_name"] = eq_name
        if "frequencies" in eq:
            fields["equivalent_frequencies"] = reader.formula(
                eq["frequencies"], "equivalent.frequencies", _names("equivalent.frequencies", params))
    variant = Variant(**fields)
    _validate_values(reader, variant)
    return variant


#: the widths every formula but the position transform, the bias and the slope may use
WIDTH_NAMES = ("d", "n", "width", "rotated_width")
#: key -> (the names it may use besides its [params] and their tables, whether the widths are among them)
#: and what the names mean; the README's table is tested against it
FORMULA_NAMES: dict = {
    "frequencies.base": (("r",), True, "r = pair index 0..n-1; [frequencies.let] names; seq_len with [length]"),
    "frequencies.formula": (("r",), True, "as frequencies.base"),
    "frequencies.let.NAME": (("r",), True, "as frequencies.base; every earlier let"),
    "frequencies.values[k]": ((), True, "one number per pair"),
    "frequencies.per_axis": (("r", "a"), True, "r = pair index, a = axis index 0..len(axes)-1: omega_{r,a}; "
                                               "or an array of rows [r][a] of numbers"),
    "position.transform": (("m",), False, "m = the position (one coordinate of it with several axes)"),
    "position.axis": (("r",), True, "r = pair index; gives the axis index 0..len(axes)-1 pair r rotates with"),
    "position.relative": (("i", "j"), False, "i = query position, j = key position: the relative position that "
                                             "replaces i - j in the rotary angle (ReRoPE, Self-Extend)"),
    "scale.query / scale.key": (("m", "r"), True,
                                "m = position of the query / of the key (not with per_axis), r = pair index"),
    "attention.factor": ((), True, "a number: multiplies rotated queries and keys"),
    "rotation.block[a][b]": (("x", "r"), True, "x = the angle (transform(m) * frequency), r = pair index"),
    "bias.formula": (("i", "j", "slope", "h", "heads"), False,
                     "i = query position, j = key position, slope = the head's slope, h = head index 0..heads-1"),
    "bias.slope": (("h", "heads"), False, "h = head index 0..heads-1"),
    "equivalent.frequencies": (("r",), True, "r = pair index"),
    "equivalent.per_axis": (("r", "a"), True, "as frequencies.per_axis"),
    "equivalent.bias": (("i", "j", "slope", "h", "heads"), False, "as bias.formula"),
}


def _names(key: str, params) -> set:
    """The names ``key``'s formula may use (:data:`FORMULA_NAMES`), with the params."""
    fixed, widths, _ = FORMULA_NAMES[key]
    return set(fixed) | set(params) | (set(WIDTH_NAMES) if widths else set())


def _width_names(params) -> set:
    return set(WIDTH_NAMES) | set(params)


def _parse_params(reader: _Reader, table: Mapping) -> dict:
    if len(table) > MAX_PARAMS:
        raise reader.fail("params", f"has {len(table)} parameters; at most {MAX_PARAMS} are accepted")
    params: dict = {}
    for key, value in table.items():
        full = f"params.{key}"
        if not _IDENT.match(key):
            raise reader.fail(full, "a parameter name must be a letter followed by letters, digits or '_'")
        if key in RESERVED:
            raise reader.fail(full, f"{key!r} has a fixed meaning in formulas; choose another parameter name")
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
            fields["denominator"] = _even_width(reader, table["denominator"], "frequencies.denominator")
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
        exact, env = [], Variant(**fields).width_env()
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
    env = {**Variant(**fields).width_env()}
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
    variant = Variant(**fields)
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


def _validate_values(reader: _Reader, variant: Variant) -> None:
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
        if variant.kind == "rotary":
            for r in {0, variant.n_pairs - 1}:
                variant.scale("query", position, r)
                variant.scale("key", position, r)
    if variant.kind == "rotary":
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


def _validate_relative(reader: _Reader, variant: Variant) -> None:
    """``rho(i, j)`` built symbolically and at a few positions (the diagonal, a key one step back, one
    far back): a formula that is not a real number there fails at load time, with its key."""
    i, j = sp.symbols("i j", integer=True)
    variant.relative_at(i, j)
    for point in ((0, 0), (1, 0), (4097, 0)) + (() if variant.causal else ((0, 1),)):
        value = variant.relative_at(*point)
        if value.is_extended_real is not True or not value.is_finite:
            raise reader.fail("position.relative", f"gives {value} for (i, j) = {point}; expected a finite real "
                                                   "relative position")
