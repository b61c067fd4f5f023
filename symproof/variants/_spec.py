"""A position-encoding variant: the :class:`Variant` a description file (TOML, or a dict of the
same shape) is read into, its exact values, and :func:`load_variant` / :func:`parse_variant`.

The file format -- every table, key and formula name -- is documented in
:mod:`._format`, with the readers of its tables.

Longer than 600 lines: the Variant's exact values (frequencies, angles, scales, biases, tables) are
methods sharing its cached tables; the file format and its readers are in _format.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import sympy as sp

from .._ground._errors import VariantFileError
from .._ground._io import read_input_text
from .._ground._text import did_you_mean
from ..encodings import rotation
from ._format import (  # noqa: F401 -- the format's bounds and schema are read here by their users too
    CONTENT_POSITIONS, CONTENT_REFUSAL, FORMULA_NAMES, KINDS, MAX_AXES, MAX_HEADS, MAX_LENGTH, MAX_LETS,
    MAX_LAST_POSITION, MAX_LET_DEPTH, MAX_PARAMS, MAX_WIDTH, PAIRINGS, PAIRING_MEANINGS, POSITION_DOMAINS, RESERVED,
    RULES, position_range_end,
    WIDTH_NAMES, _EXPECTED, _H, _IDENT, _KIND_TABLES, _NAME, _R, _RELATIVE_EXCLUDES, _Reader, _TABLES, _TOP,
    _axis_rows, _even_width, _names, _parse_bias, _parse_frequencies, _parse_length, _parse_params,
    _parse_per_axis, _parse_position, _parse_rotary_extras, _toml_type, _validate_values, sample_indices,
)
from ._formula import CONSTANTS, Formula, LookupBase

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Variant", "load_variant", "loads_variant", "parse_variant", "sample_indices", "KINDS", "RULES", "MAX_WIDTH", "MAX_HEADS",
           "MAX_PARAMS", "MAX_LETS", "MAX_LET_DEPTH", "FORMULA_NAMES", "WIDTH_NAMES", "POSITION_DOMAINS"]

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
    head_index: int | None = None  # a rotary file with heads: the one head this variant is (see head())

    per_axis: Formula | tuple | None = None  # rule "per_axis": rows of exact numbers, or a formula in r, a
    generators: tuple = ()  # kind "dense": one exact width x width matrix A_a per axis, R(m) = exp(sum m_a A_a)
    equivalent_per_axis: Formula | tuple | None = None  # the same, of the named scheme
    amplitude: Formula | None = None  # [position] amplitude: p_t multiplied by a(t) (additive; scaled sinusoidal)
    vectors: Any = None  # [vectors]: a learned table of rows (a _table_file.VectorTable), additive only
    mask: Any = None  # [mask] allowed: the (query, key) pairs the score is kept at (._mask.Mask)

    @property
    def from_zero(self) -> bool:
        """Whether the declared positions start at 0 (``"nonnegative"``, or a range ``"0..N"``)."""
        return self.positions != "integers"

    @property
    def last_position(self) -> int | None:
        """``N`` of a declared range ``positions = "0..N"``; ``None`` when the positions have no end."""
        return position_range_end(self.positions)

    @property
    def per_head(self) -> bool:
        """Whether this is a rotary file of ``heads = N`` heads taken as a whole: its formulas may read the head
        index ``h`` (symbolic here; :meth:`head` gives one head) and it may add a bias (:mod:`._heads`)."""
        return self.kind == "rotary" and self.heads is not None and self.head_index is None

    def head(self, h: int) -> "Variant":
        """Head ``h`` of a rotary file with heads: the same file with ``h`` fixed (built once per head)."""
        cache = self.__dict__.setdefault("_head_variants", {})
        if h not in cache:
            cache[h] = replace(self, head_index=int(h))
        return cache[h]

    @property
    def mixed(self) -> bool:
        """Whether every pair reads every position axis (per-axis frequency vectors, RoPE-Mixed)."""
        return self.rule == "per_axis"

    @classmethod
    def from_dict(cls, data: Mapping, source: str = "<dict>") -> "Variant":
        """Validate a description given as a mapping (the TOML document's shape).

        A notebook's values are welcome where the file would hold numbers: a NumPy array (or anything
        with ``tolist``) is a lookup table, a 2-D array a learned position table (``{"vectors": {"rows":
        wpe}}``, one row per position), a NumPy scalar a number -- each read exactly as the same
        numbers written in the file would be (a float32 value as the float64 number it equals)."""
        return parse_variant(_plain(data), source)

    @classmethod
    def from_toml(cls, path_or_text: "str | os.PathLike") -> "Variant":
        """A description file's path (a path object, or a string without a line break), or its TOML text."""
        if isinstance(path_or_text, str) and "\n" in path_or_text:
            return loads_variant(path_or_text)
        return load_variant(os.fspath(path_or_text))

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
        if self.kind in ("bias", "dense"):
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
        if self.kind == "rotary" and self.heads is not None:  # per-head rotary parameters (see _heads)
            env.update(heads=sp.Integer(self.heads), h=_H if self.head_index is None else sp.Integer(self.head_index))
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
        self._one_head("frequencies")
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

    def _one_head(self, what: str) -> None:
        """A file with per-head rotary parameters has one frequency table per head: asking the whole file
        for one is an error naming the fix, never head 0's table by default."""
        if self.per_head:
            raise VariantFileError(f"{self.source}: {what}() of a rotary file with heads = {self.heads} is per "
                                   "head: take one head with variant.head(h)")

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
        self._one_head("frequencies_digits")
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

    def amplitude_at(self, m) -> sp.Expr:
        """The factor ``a(m)`` multiplying the additive vector ``p_m`` (1 when the file has none)."""
        if self.amplitude is None:
            return sp.Integer(1)
        return self.amplitude.build({**self.params, "m": sp.sympify(m)})

    def linear_position_factor(self):
        """``a`` when the position transform is ``m -> a m`` (so the scheme is RoPE at frequencies
        ``a omega``); ``None`` otherwise.  Code generation reads it from the variant it prints."""
        m = sp.Symbol("m", real=True)
        image = self.angle_position(m)
        a = sp.expand(image / m) if image != 0 else sp.Integer(0)
        if a.has(m) or not a.is_number:
            return None
        return a

    def attention_scaling(self) -> sp.Expr:
        """The exact factor HF multiplies cos and sin by (1 when the variant has none)."""
        return sp.Integer(1) if self.factor is None else self.factor.build(self.width_env())

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

    @property
    def block_reads_position(self) -> bool:
        """Whether a ``rotation.block`` entry reads the position ``m`` of the token it rotates."""
        return self.block is not None and any("m" in f.names for row in self.block for f in row)

    def block_at(self, x, r=None, m=None) -> sp.ImmutableMatrix:
        """The 2x2 block of pair ``r`` at angle ``x`` for the token at position ``m`` (the rotation ``R(x)``
        unless the file says otherwise; ``r`` defaults to the symbolic pair index, ``m`` to a symbolic
        integer position)."""
        if self.block is None:
            return rotation(x)
        env = {**self.width_env(), "x": sp.sympify(x), "r": _R if r is None else sp.sympify(r),
               "m": _M if m is None else sp.sympify(m)}
        return sp.ImmutableMatrix([[f.build(env) for f in row] for row in self.block])

    def slope_at(self, h) -> sp.Expr:
        """The exact bias slope of head ``h`` (an integer or a symbol)."""
        return self.slope.build({**self.params, "heads": sp.Integer(self.heads), "h": sp.sympify(h)})

    def slopes(self) -> list:
        """The exact bias slope of every head."""
        return [self.exact_value(h) for h in range(self.heads)]

    def _bias_env(self, i, j, slope, h) -> dict:
        if h is None and self.head_index is not None:  # one head of a rotary file with a bias
            h = self.head_index
        env = {**self.params, "slope": sp.sympify(slope), "h": _H if h is None else sp.sympify(h),
               "heads": sp.Integer(self.heads)}
        if len(self.axes) > 1:  # bias.axes: i and j are vectors, read as i_y, i_x, j_y, j_x
            env.update({f"{side}_{axis}": sp.sympify(x) for side, point in (("i", i), ("j", j))
                        for axis, x in zip(self.axes, point)})
            return env
        return {**env, "i": sp.sympify(i), "j": sp.sympify(j)}

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
        if self.kind == "dense":
            from ._dense_format import generators_text

            out.update(width=self.width, axes=list(self.axes), generators=generators_text(self))
        elif self.kind != "bias":
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
        if self.kind == "bias" and len(self.axes) > 1:
            out["axes"] = list(self.axes)
        if self.causal:
            out["causal"] = True
        if self.kind == "rotary" and self.heads is not None:
            out["heads"] = self.heads
            if self.head_index is not None:
                out["head"] = self.head_index
        if self.amplitude is not None:
            out["amplitude"] = self.amplitude.text
        if self.vectors is not None:
            out.update(frequency_rule=None, vectors=self.vectors.describe())
        if self.mask is not None:
            out["mask"] = self.mask.text
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


def _plain(value):
    """``value`` with NumPy arrays and scalars (anything with ``tolist``) as Python lists and numbers,
    mappings and lists walked; nothing is imported to recognise them."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if type(value) not in (str, bytes, bool, int, float) and callable(getattr(value, "tolist", None)):
        return _plain(value.tolist())  # numpy.float64 is a float subclass: it goes this way too
    return value


def load_variant(path: str | os.PathLike) -> Variant:
    """Read and validate a variant description file (TOML): a regular file of at most 1 MB."""
    return loads_variant(read_input_text(path, error=VariantFileError), os.fspath(path))


def loads_variant(text: str, source: str = "<text>") -> Variant:
    """Validate the text of a variant description (TOML) into a :class:`Variant`; ``source`` names it in errors."""
    return parse_variant(parse_toml(text, source), source)


def parse_toml(text: str, source: str) -> dict:
    """The TOML document ``text`` (a variant or a layer pattern), or a one-line error naming ``source``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise VariantFileError(f"{source}: not valid TOML ({err})") from None
    except ValueError as err:  # an integer beyond Python's 4300-digit conversion limit
        raise VariantFileError(f"{source}: not accepted TOML ({str(err).split(';')[0]})") from None
    except RecursionError:
        raise VariantFileError(f"{source}: not accepted TOML (arrays or tables nested too deeply)") from None


#: the symbolic position a block that reads ``m`` is built with when none is given
_M = sp.Symbol("m", integer=True)


def parse_variant(data: Mapping, source: str = "<dict>") -> Variant:
    """Validate ``data`` (a parsed TOML document) into a :class:`Variant`."""
    reader = _Reader(source, Variant)
    if not isinstance(data, Mapping):
        raise VariantFileError(f"{source}: expected a table of keys, got {_toml_type(data)}")
    if "layers" in data:  # a layer-pattern file: several variants, read by ._layers
        raise reader.fail("layers", "a layer-pattern file describes one variant per layer type: symproof check "
                                    "reads it, and symproof.variants.load_layers in Python")
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
        named = [p for p in POSITION_DOMAINS if p != "0..N"]
        if data["positions"] not in named and position_range_end(data["positions"]) is None:
            raise reader.fail("positions", f"expected one of {named} or a range \"0..N\" (N an integer from 1 "
                                           f"to {MAX_LAST_POSITION}), got {data['positions']!r}"
                                           f"{did_you_mean(data['positions'], named)}")
        if position_range_end(data["positions"]) is not None and "length" in data:
            raise reader.fail("positions", "a range \"0..N\" cannot be combined with [length] (a rule that reads "
                                           "the call length); declare positions = \"nonnegative\" instead")
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
    from ._heads import parse_heads, parse_rotary_bias, validate_heads

    parse_heads(reader, data, fields)
    if "mask" in data:
        from ._mask import read_mask

        fields["mask"] = read_mask(reader, data["mask"], params)

    if kind == "bias" and "axes" in data.get("bias", {}):  # Swin: positions with several coordinates
        from ._bias_axes_format import parse_bias_axes

        for key in ("formula", "heads", "slope"):
            if key not in data["bias"]:
                raise reader.fail(f"bias.{key}", "is required")
        if "mask" in data:
            raise reader.fail("mask.allowed", "reads scalar positions i, j; a bias over several axes takes no mask")
        parse_bias_axes(reader, data, fields)
        return Variant(**fields)
    if kind == "bias":
        _parse_bias(reader, data, fields)
        return _masked(Variant(**fields))
    if kind == "dense":
        from ._dense_format import parse_dense

        parse_dense(reader, data, fields)
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
    if "vectors" in data:  # a learned table: its rows are the encoding
        from ._table_file import parse_vector_fields

        parse_vector_fields(reader, data, fields)
    else:
        _parse_frequencies(reader, data, fields)
    _parse_position(reader, data.get("position", {}), fields)
    if fields.get("relative") is not None and "equivalent" in data:
        raise reader.fail("position.relative",
                          f"cannot be combined with equivalent: {_RELATIVE_EXCLUDES['equivalent']}")
    if fields["rule"] == "per_axis":
        _parse_per_axis(reader, data, fields)
    if kind == "rotary":
        _parse_rotary_extras(reader, data, fields)
        parse_rotary_bias(reader, data, fields)
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
    if variant.vectors is not None:  # the table was checked as read; the named scheme's frequencies here
        for r in sample_indices(variant.n_pairs) if variant.equivalent_frequencies is not None else ():
            value = variant.equivalent_frequency_at(r)
            if value.is_extended_real is not True or not value.is_finite:
                raise reader.fail("equivalent.frequencies", f"gives {value} for pair r={r}; expected a finite real "
                                                            "frequency")
        return variant
    if variant.per_head:
        validate_heads(reader, variant, _validate_values)
    else:
        _validate_values(reader, variant)
    return _masked(variant)


def _masked(variant: Variant) -> Variant:
    """``variant`` once its mask (if any) is built at load (:mod:`._mask`)."""
    if variant.mask is not None:
        from ._mask import validate_mask

        validate_mask(variant)
    return variant


