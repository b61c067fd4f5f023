"""The numeric kernel of a variant, generated from its exact definition, and its check.

The kernel is ``lambdify``-ed from the same SymPy expressions the proofs use
(the expressions come from the whitelisted formula parser, so the generated
code contains nothing a description file could smuggle in).  It is checked
twice: against the exact definition evaluated to 30 digits at a few
positions, and — when the variant is plain RoPE with a linear position
transform, or a plain sinusoidal table — against the hand-written kernels of
:mod:`symproof.kernels` (``rope_apply(..., freqs=...)``, ``sinusoidal_table``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import sympy as sp

from .._ground._errors import InvalidInputError, PositionOutOfRangeError
from .._export._printers import NumPyKernelPrinter, guard_table_reads, reads_table, table_reader
from .._ground._lambdify import numpy_function as _plain_numpy_function
from ..encodings import pair_indices
from ..kernels import rope_apply, sinusoidal_table
from ._spec import Variant, sample_indices

__all__ = ["VariantKernel", "build_kernel", "check_in_process_kernel", "linear_position_factor", "plain_rope_factor",
           "TOLERANCE"]

#: relative agreement demanded of float64 kernels against the exact values
TOLERANCE = 1e-12
_PROBE_POSITIONS = (0, 1, 7, 4097)
_MAX_PROBED_PAIRS = 8

_m = sp.Symbol("m", real=True)
_r = sp.Symbol("r", integer=True, nonnegative=True)
_x = sp.Symbol("x", real=True)


def _float(value) -> float:
    return float(sp.N(value, 30))


def numpy_function(args, expr):
    """``expr`` as a NumPy function of ``args``; a formula that reads a ``[params]`` table reads it through
    the exported kernels' checked read (a position outside the table raises
    :class:`~symproof.PositionOutOfRangeError`, an ``IndexError`` naming the position and the entries;
    plain lambdify would print the table as an undefined name); a ``mod`` is printed as the exported
    kernels print it (exact at every integer position float64 holds)."""
    if not reads_table(expr) and not sp.sympify(expr).has(sp.Mod):
        return _plain_numpy_function(args, expr)
    namespace = {"numpy": np}
    exec(table_reader("numpy"), namespace)  # noqa: S102 - symproof's own source text, no file's
    namespace["PositionOutOfTableError"] = PositionOutOfRangeError
    return sp.lambdify(args, guard_table_reads(expr), modules=[namespace, np], printer=NumPyKernelPrinter())


@dataclass
class VariantKernel:
    """NumPy functions of a variant: ``apply`` (rotary), ``table`` (additive) or ``bias`` (bias)."""

    variant: Variant
    frequencies: np.ndarray  # float64 per pair (rotary, additive) or slopes per head (bias)

    def __post_init__(self):
        v = self.variant
        self._transform = None if v.kind == "bias" else numpy_function(_m, v.angle_position(_m))
        if v.kind == "rotary":
            # a block that reads the position: functions of (x, r, m)
            args = (_x, _r, _m) if v.block_reads_position else (_x, _r)
            self._block = [[numpy_function(args, e) for e in row] for row in v.block_at(*args).tolist()]
            # one function of (m, r) per side: lambdify once, not once per pair
            self._scales = {side: numpy_function((_m, _r), v.scale(side, _m, _r)) for side in ("query", "key")}
            self._axis = v.axes_of_pairs()
            self._pairs = pair_indices(v.rotated_width, v.pairing)

    def frequencies_at(self, seq_len=None) -> np.ndarray:
        """The float64 frequencies of a call of length ``seq_len`` (one table unless the rule reads it)."""
        if not self.variant.length_dependent or seq_len is None:
            return self.frequencies
        cache = self.__dict__.setdefault("_by_length", {})
        if seq_len not in cache:
            cache[seq_len] = np.array([float(w) for w in self.variant.frequencies_digits(seq_len=int(seq_len))])
        return cache[seq_len]

    # -- rotary --------------------------------------------------------------------------------
    def apply(self, x, positions, side: str = "query", seq_len=None) -> np.ndarray:
        """Rotate (and scale) ``x`` of shape ``(..., T, width)`` at integer ``positions``.

        ``positions`` has shape ``x.shape[:-1]`` for one axis, or ``x.shape[:-1] + (axes,)``.
        A rule that reads the call length uses ``seq_len``, by default the largest position + 1 (as
        HF transformers does).
        """
        v = self.variant
        if v.kind != "rotary":
            raise InvalidInputError(f"variant {v.name!r} is {v.kind}; apply() is for rotary variants")
        if v.relative is not None:
            raise InvalidInputError(f"variant {v.name!r} rotates by a relative position (position.relative), not "
                                    "by each token's: its exported kernel's scores(q, k, query_positions, "
                                    "key_positions) computes it")
        x = np.asarray(x, dtype=np.float64)
        if x.shape[-1] != v.width:
            raise InvalidInputError(f"x must have last dimension {v.width} (width), got shape {x.shape}")
        pos = np.asarray(positions, dtype=np.float64)
        _check_range(v, pos, "m")
        if len(v.axes) == 1:
            pos = np.broadcast_to(pos, x.shape[:-1])[..., None]
        elif pos.shape[-1] != len(v.axes):
            raise InvalidInputError(f"positions must end with {len(v.axes)} coordinates {list(v.axes)}, "
                                    f"got shape {pos.shape}")
        if side not in ("query", "key"):
            raise InvalidInputError(f"side must be 'query' or 'key', got {side!r}")
        out = x.copy()
        if v.length_dependent and seq_len is None:
            seq_len = int(pos.max()) + 1 if pos.size else 1
        frequencies = self.frequencies_at(seq_len)
        # every pair at once (one array operation per entry, not a Python loop over thousands of pairs)
        pairs = np.asarray(self._pairs, dtype=np.intp).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        if v.mixed:  # pair r: sum_a transform(m_a) * omega[r, a]
            coord = np.broadcast_to(pos[..., :1], pos.shape[:-1] + (len(pairs),))
            shape = coord.shape
            angle = np.broadcast_to(self._transform(pos), pos.shape) @ frequencies.T
        else:
            coord = pos[..., np.asarray(self._axis, dtype=np.intp)]
            shape = coord.shape
            angle = np.broadcast_to(self._transform(coord), shape) * frequencies
        index = np.arange(len(pairs), dtype=np.float64)
        scale = np.broadcast_to(self._scales[side](coord, index), shape)
        extra = (coord,) if v.block_reads_position else ()
        b00, b01, b10, b11 = (np.broadcast_to(f(angle, index, *extra), shape) for row in self._block for f in row)
        za, zb = x[..., a], x[..., b]
        out[..., a] = scale * (b00 * za + b01 * zb)
        out[..., b] = scale * (b10 * za + b11 * zb)
        return out

    # -- additive ------------------------------------------------------------------------------
    def table(self, positions) -> np.ndarray:
        """``p_t`` for each position: shape ``(len(positions), width)``, in the described layout."""
        v = self.variant
        if v.kind != "additive":
            raise InvalidInputError(f"variant {v.name!r} is {v.kind}; table() is for additive variants")
        pos = np.asarray(positions, dtype=np.float64)
        _check_range(v, pos, "t")
        if v.vectors is not None:  # a learned table: row t (the last row past it, with a clip)
            return v.vectors.values[_table_rows(v, pos)].copy()
        angle = np.broadcast_to(self._transform(pos), pos.shape)[:, None] * self.frequencies[None, :]
        sin, cos = np.sin(angle), np.cos(angle)
        if v.pairing == "concatenated":
            out = np.concatenate([sin, cos], axis=-1)
        else:
            out = np.empty((pos.shape[0], v.width))
            out[:, 0::2], out[:, 1::2] = sin, cos
        if v.amplitude is not None:
            out = out * np.broadcast_to(numpy_function(_m, v.amplitude_at(_m))(pos), pos.shape)[:, None]
        return out

    # -- bias ----------------------------------------------------------------------------------
    def bias(self, n_queries: int, n_keys: int | None = None) -> np.ndarray:
        """``b[h, i, j]`` for query positions ``0..n_queries-1`` and key positions ``0..n_keys-1``."""
        v = self.variant
        if v.kind != "bias":
            raise InvalidInputError(f"variant {v.name!r} is {v.kind}; bias() is for bias variants")
        n_keys = n_queries if n_keys is None else n_keys
        _check_range(v, np.array([n_queries - 1, n_keys - 1], dtype=np.float64), "i")
        si, sj, ss, sh = sp.symbols("i j slope h", real=True)
        func = numpy_function((si, sj, ss, sh), v.bias_at(si, sj, ss, sh))
        ii = np.arange(n_queries, dtype=np.float64)[None, :, None]
        jj = np.arange(n_keys, dtype=np.float64)[None, None, :]
        slopes = self.frequencies[:, None, None]
        heads = np.arange(len(self.frequencies), dtype=np.float64)[:, None, None]
        return np.broadcast_to(func(ii, jj, slopes, heads), (len(self.frequencies), n_queries, n_keys)).copy()


def _check_range(variant: Variant, positions, name: str) -> None:
    """A file that declares ``positions = "0..N"`` is defined on 0..N only: any other position (negative,
    past N, not an integer, NaN) is :class:`~symproof.PositionOutOfRangeError`, as in its exported kernels."""
    last = variant.last_position
    if last is None:
        return
    p = np.asarray(positions, dtype=np.float64)
    inside = (p >= 0) & (p <= last) & (p == np.floor(p))
    if not np.all(inside):
        bad = float(p[~inside].flat[0]) if p.ndim else float(p)
        shown = str(int(bad)) if bad == bad and abs(bad) < 2**63 and bad == int(bad) else repr(bad)
        raise PositionOutOfRangeError(f"position {name} = {shown} is outside the file's positions 0..{last} "
                                      f"(positions = '0..{last}'): pass integer positions in 0..{last}")


def _table_rows(variant: Variant, pos: np.ndarray) -> np.ndarray:
    """The rows of a learned table positions ``pos`` read: integers >= 0 (checked), the last row past the
    table with a clip (a range file's positions were checked by :func:`_check_range`)."""
    inside = (pos >= 0) & (pos == np.floor(pos))
    if not np.all(inside):
        bad = float(pos[~inside].flat[0])
        raise PositionOutOfRangeError(f"position t = {bad!r} is not a position of the table (integers >= 0)")
    return np.minimum(pos, variant.vectors.last).astype(np.intp)


def build_kernel(variant: Variant) -> VariantKernel:
    """The float64 kernel of ``variant``."""
    if variant.vectors is not None:  # a learned table has no frequencies
        return VariantKernel(variant, np.zeros(0))
    values = variant.frequencies_digits()
    # a per-axis file: one row of frequencies per pair, one column per axis
    table = [[float(x) for x in w] if isinstance(w, tuple) else float(w) for w in values]
    return VariantKernel(variant, np.array(table, dtype=np.float64))


def linear_position_factor(variant: Variant):
    """``a`` when the position transform is ``m -> a m`` (so the scheme is RoPE at frequencies ``a omega``)."""
    return variant.linear_position_factor()


def plain_rope_factor(variant: Variant):
    """``a`` when ``variant`` is plain RoPE at frequencies ``a omega`` (standard block, no scale or
    attention factor, one position axis, a linear transform ``m -> a m``); ``None`` otherwise."""
    plain = (variant.kind == "rotary" and variant.standard_block and variant.query_scale is None
             and variant.key_scale is None and variant.factor is None and len(variant.axes) == 1
             and variant.relative is None)
    return linear_position_factor(variant) if plain else None


# -- the check ----------------------------------------------------------------------------------


def probed_indices(n: int) -> list:
    """The pairs (or heads, or values) a kernel check probes: all of a few, else a fixed sample."""
    if n <= _MAX_PROBED_PAIRS:
        return list(range(n))
    return sample_indices(n)


def value_digits(value, digits: int = 40):
    """``digits`` digits of an exact frequency, or of each entry of a per-axis frequency vector."""
    if isinstance(value, tuple):
        return tuple(sp.N(w, digits) for w in value)
    return sp.N(value, digits)


def _exact_digits(variant: Variant, indices) -> dict:
    """40 digits of the *exact* value at each probed index: the kernel's table comes from a fast
    numeric evaluation, and this is where it is compared with the definition."""
    return {k: value_digits(variant.exact_value(k)) for k in indices}


def exact_rotary(variant: Variant, vector, position, side, freqs, number=_float):
    """The exact image of ``vector`` at ``position`` on the probed pairs, each coordinate made a
    Python number by ``number`` (the written-file check's returns ``None`` where it is not finite)."""
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    out = {}
    for r in probed_indices(len(pairs)):
        a, b = pairs[r]
        # every coordinate when every pair reads every axis (its scale reads none: refused at load)
        coord = position if variant.mixed else position[variant.axis_of(r)]
        # 40-digit numbers: products of exact radicals and Floats would only be slower, not more exact
        scale = sp.N(variant.scale(side, 0 if variant.mixed else coord, r), 40)
        block = variant.block_at(sp.N(variant.pair_angle(coord, freqs[r]), 40), r,
                                 None if variant.mixed else coord).evalf(40)
        pair = scale * block * sp.Matrix([sp.Rational(vector[a]), sp.Rational(vector[b])])
        out[a], out[b] = number(pair[0]), number(pair[1])
    return out


def _relative_difference(got, value) -> float:
    """``|got - value| / (1 + |value|)``, and infinite when either is not a finite number: a kernel
    that overflows float64 (``exp(exp(m))``) gives inf - inf = NaN, and ``max(worst, nan)`` would
    keep ``worst`` and let the check pass."""
    got, value = float(got), float(value)
    if not (math.isfinite(got) and math.isfinite(value)):
        return math.inf
    return abs(got - value) / (1 + abs(value))


def _gap_text(worst: float) -> str:
    if math.isfinite(worst):
        return f"{worst:.2e}"
    return "inf: a float64 value of the kernel or of the definition is not finite (overflow)"


def _within_text(worst: float, limit: float, what: str = "relative difference") -> str:
    """What a passing comparison proved, ``every relative difference <= 1e-12``: the limit, the same on
    every machine, not the residue (its last digits depend on the CPU's sin/cos and BLAS kernels); a
    failing one names the residue."""
    if worst <= limit:
        return f"every {what} <= {limit:g}"
    return f"largest {what} {_gap_text(worst)} (must be <= {limit:g})"


def _check_rotary(variant: Variant, kernel: VariantKernel, proof) -> None:
    rng = np.random.default_rng(0)
    vector = np.round(rng.standard_normal(variant.width), 6)
    axes = len(variant.axes)
    worst, passthrough = 0.0, True
    # 40 significant digits of each exact frequency: at positions <= 4097 the angle keeps > 30 digits
    probes = _PROBE_POSITIONS
    exact = None
    if variant.length_dependent:  # both sides of the length threshold
        probes = tuple(sorted(set(probes) | {variant.length_threshold - 1, variant.length_threshold}))
    else:
        exact = _exact_digits(variant, probed_indices(variant.n_pairs))
    for side in ("query", "key"):
        for p in probes:
            # one position per call: the call's length is p + 1 (+ 3 per further axis)
            freqs = exact if exact is not None else variant.frequencies_digits(seq_len=p + 3 * (axes - 1) + 1)
            position = tuple(p + 3 * a for a in range(axes))
            got = kernel.apply(vector[None, :], np.array([position]) if axes > 1 else np.array([p]), side)[0]
            for index, value in exact_rotary(variant, vector, position, side, freqs).items():
                worst = max(worst, _relative_difference(got[index], value))
            passthrough &= np.array_equal(got[variant.rotated_width:], vector[variant.rotated_width:])
    detail = (_within_text(worst, TOLERANCE) if passthrough
              else f"coordinates past the rotated width {variant.rotated_width} are changed")
    proof.check("generated kernel = exact definition (30 digits) at positions "
                f"{list(probes)}, queries and keys", worst <= TOLERANCE and passthrough, detail,
                data={"max_rel": worst if passthrough else math.inf})
    a = plain_rope_factor(variant)
    if a is None:
        proof.note("Not plain RoPE (scale, factor, custom block, several axes or a non-linear transform): "
                   "no hand-written reference kernel applies.")
        return
    x = rng.standard_normal((2, 5, variant.width))
    positions = np.array([[0, 1, 2, 50, 3000], [7, 8, 9, 10, 11]])
    ours = kernel.apply(x, positions)
    theirs = rope_apply(x, positions, head_dim=variant.width, rotary_dim=variant.rotated_width,
                        denominator=variant.freq_denominator, pairing=variant.pairing,
                        freqs=kernel.frequencies_at(int(positions.max()) + 1) * float(a))
    gap = float(np.max(np.abs(ours - theirs)))
    proof.check("generated kernel = symproof.kernels.rope_apply(freqs = a * omega) for the plain-RoPE form",
                gap <= TOLERANCE * 10, _within_text(gap, TOLERANCE * 10, "difference"), data={"max_abs": gap})


def _check_vectors(variant: Variant, kernel: VariantKernel, proof) -> None:
    """A learned table's kernel returns its rows: every probed entry equal to the file's float64 exactly."""
    from ._vectors import exact_row

    table = variant.vectors
    positions = sorted({0, 1, table.last} | ({table.last + 1, 4097} if table.clip else set()))
    got = kernel.table(np.array(positions))
    wrong = [(p, a) for row, p in enumerate(positions) for a, value in enumerate(exact_row(variant, p))
             if sp.Rational(got[row, a]) != value]
    proof.check(f"generated table = the file's rows exactly at positions {positions}", not wrong,
                f"first difference at position {wrong[0][0]}, column {wrong[0][1]}" if wrong else
                "every entry equal", data={"max_rel": 0.0 if not wrong else math.inf})


def _check_additive(variant: Variant, kernel: VariantKernel, proof) -> None:
    if variant.vectors is not None:
        _check_vectors(variant, kernel, proof)
        return
    freqs = _exact_digits(variant, probed_indices(variant.n_pairs))
    got = kernel.table(np.array(_PROBE_POSITIONS))
    n = variant.n_pairs
    worst = 0.0
    for row, p in enumerate(_PROBE_POSITIONS):
        for r in probed_indices(n):
            angle = variant.angle_position(p) * freqs[r]
            s_index, c_index = (2 * r, 2 * r + 1) if variant.pairing == "adjacent" else (r, r + n)
            for index, exact in ((s_index, sp.sin(angle)), (c_index, sp.cos(angle))):
                value = _float(exact * variant.amplitude_at(p))
                worst = max(worst, _relative_difference(got[row, index], value))
    proof.check(f"generated table = exact definition (30 digits) at positions {list(_PROBE_POSITIONS)}",
                worst <= TOLERANCE, _within_text(worst, TOLERANCE), data={"max_rel": worst})
    plain = (variant.rule == "geometric" and variant.transform is None and variant.freq_denominator == variant.width
             and variant.amplitude is None)
    if not plain:
        return
    base = _float(variant.base.build(variant.width_env()))
    layout = "interleaved" if variant.pairing == "adjacent" else "concatenated"
    theirs = sinusoidal_table(max(_PROBE_POSITIONS) + 1, variant.width, base=base, layout=layout)
    gap = float(np.max(np.abs(got - theirs[list(_PROBE_POSITIONS)])))
    proof.check("generated table = symproof.kernels.sinusoidal_table", gap <= TOLERANCE * 100,
                _within_text(gap, TOLERANCE * 100, "difference"), data={"max_abs": gap})


def _check_bias(variant: Variant, kernel: VariantKernel, proof) -> None:
    slopes = _exact_digits(variant, probed_indices(variant.heads))
    got = kernel.bias(6, 9)
    worst = 0.0
    for h in probed_indices(variant.heads):
        for a in range(6):
            for b in range(9):
                value = _float(variant.bias_at(a, b, slopes[h], h))
                worst = max(worst, _relative_difference(got[h, a, b], value))
    proof.check("generated bias = exact definition (30 digits) for 6 query and 9 key positions",
                worst <= TOLERANCE, _within_text(worst, TOLERANCE), data={"max_rel": worst})


def check_in_process_kernel(variant: Variant, proof) -> None:
    """Generate the variant's in-process float64 kernel (:func:`build_kernel`) and compare it with the
    exact definition."""
    kernel = build_kernel(variant)
    checks = {"rotary": _check_rotary, "additive": _check_additive, "bias": _check_bias}
    # overflow is judged by the check (an infinite difference fails it), not printed by NumPy
    with np.errstate(all="ignore"):
        checks[variant.kind](variant, kernel, proof)
