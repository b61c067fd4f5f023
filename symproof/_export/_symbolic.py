"""The symbolic pieces every kernel is printed from.

A kernel never restates a formula: the rotation applied to a pair, the
complex number it multiplies by, the pair indices, the frequencies and the
sinusoidal entries are all taken from ``symproof.encodings`` and handed to a
printer (``lambdify``'s NumPy printer, SymPy's C99 printer, its PyTorch
printer).  Structural facts a fast kernel relies on -- "this 2x2 matrix is
multiplication by one complex number", "pair ``r`` sits at ``a r + b``" -- are
checked exactly here, when the kernel is generated, so a changed definition
breaks generation instead of silently disagreeing with the proofs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import sympy as sp
from sympy import ImmutableMatrix, cos, sin

from .._ground._errors import InvalidInputError
from ..encodings import frequency, pair_indices, rotation, sinusoidal_vector
from ._config import RopeConfig

__all__ = [
    "DIRECTIONS", "RopeSpec", "rope_spec", "rotation_form", "RotationForm", "pair_index_form",
    "exact_number", "sinusoidal_entries", "score_frequency_gradient",
]

#: ``forward`` applies ``R_m``; ``backward`` applies ``R_m^T`` (the gradient of the rotation)
DIRECTIONS = ("forward", "backward")

#: the symbols generated code is written in
position = sp.Symbol("p", integer=True)  # a position id as the caller gives it
omega = sp.Symbol("w", positive=True)  # one frequency
x_a, x_b = sp.symbols("x_a x_b", real=True)  # the two coordinates of a pair
cos_t, sin_t = sp.symbols("c s", real=True)  # cos and sin of the pair's angle
pair = sp.Symbol("r", integer=True, nonnegative=True)  # the pair index


def exact_number(value, name: str):
    """``value`` as an exact SymPy number: integers stay integers, a float becomes the
    decimal it prints as (``10000.0 -> 10000``, ``0.1 -> 1/10``)."""
    if isinstance(value, sp.Basic):
        number = value
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{name} must be finite, got {value!r}")
        number = sp.Integer(int(value)) if value.is_integer() else sp.Rational(repr(value))
    else:
        number = sp.Integer(value)
    if not number.is_real or not number.is_finite:
        raise InvalidInputError(f"{name} must be a finite real number, got {value!r}")
    return number


def _to_float(expr) -> float:
    """An exact value rounded once to float64 (30 significant digits first, then one rounding)."""
    return float(sp.N(expr, 30))


@dataclass(frozen=True)
class RotationForm:
    """The rotation of one pair in the forms the printers need.

    ``matrix`` is ``R(theta)`` (forward) or ``R(theta)^T`` (backward), ``theta = m w``;
    ``update`` is ``matrix * (x_a, x_b)`` written in ``c = cos theta``, ``s = sin theta``;
    ``complex_factor`` is the complex number ``u`` with ``matrix z = u z`` for ``z = x_a + i x_b``;
    ``entries`` is ``matrix`` written in ``c``, ``s``.
    """

    direction: str
    matrix: ImmutableMatrix
    update: tuple
    complex_factor: sp.Expr
    entries: ImmutableMatrix


@lru_cache(maxsize=None)
def rotation_form(direction: str) -> RotationForm:
    if direction not in DIRECTIONS:
        raise InvalidInputError(f"unknown direction {direction!r}; expected one of {DIRECTIONS}")
    theta = sp.Symbol("m", real=True) * omega
    matrix = rotation(theta) if direction == "forward" else rotation(theta).T
    to_cs = {cos(theta): cos_t, sin(theta): sin_t}
    rotated = matrix * ImmutableMatrix([x_a, x_b])
    update = tuple(sp.expand(e.xreplace(to_cs)) for e in rotated)
    if any(e.has(theta) or e.has(omega) for e in update):
        raise InvalidInputError(f"the {direction} rotation is not written in cos/sin of one angle: {update}")
    # The complex form holds exactly when the matrix is [[a, -b], [b, a]]; check it, do not assume it.
    re, im = matrix[0, 0], matrix[1, 0]
    if sp.expand(matrix[0, 1] + im) != 0 or sp.expand(matrix[1, 1] - re) != 0:
        raise InvalidInputError(f"the {direction} rotation {matrix} is not multiplication by a complex number")
    factor = sp.expand(re.xreplace(to_cs) + sp.I * im.xreplace(to_cs))
    z = x_a + sp.I * x_b
    if sp.expand(factor * z - (update[0] + sp.I * update[1])) != 0:
        raise InvalidInputError(f"complex form {factor} disagrees with the {direction} pair update {update}")
    return RotationForm(direction, matrix, update, factor, matrix.xreplace(to_cs))


def angle_entries(config: RopeConfig):
    """``(cos theta, sin theta)`` with ``theta = (p + index_origin) / position_scale * w``:
    the first column of ``R(theta)`` as a function of a position id ``p`` and a frequency ``w``."""
    m = position + config.index_origin
    if config.position_scale != 1:
        m = m / sp.Float(repr(float(config.position_scale)), 17)
    first_column = rotation(m * omega)[:, 0]
    return first_column[0], first_column[1]


@lru_cache(maxsize=None)
def pair_index_form(width: int, pairing: str) -> tuple:
    """``(a r + b, a' r + b')``: the coordinates of pair ``r``, fitted to ``pair_indices`` and
    checked against it for every ``r``."""
    pairs = pair_indices(width, pairing)
    forms = []
    for slot in range(2):
        first = pairs[0][slot]
        step = pairs[1][slot] - first if len(pairs) > 1 else 1
        forms.append(step * pair + first)
        if any(step * r + first != p[slot] for r, p in enumerate(pairs)):
            raise InvalidInputError(f"{pairing} pairing at width {width} is not affine in the pair index")
    return tuple(forms)


#: up to this many pairs the exact frequencies are evaluated (``10000**(-1/2)`` is shown as ``1/100``)
EVALUATED_PAIRS = 256


@dataclass(frozen=True)
class RopeSpec:
    """A fully resolved RoPE kernel: the configuration plus the frequencies it uses."""

    config: RopeConfig
    frequency_exprs: tuple  # exact values (SymPy)
    frequency_values: tuple  # the same, rounded once to float64
    explicit_frequencies: bool

    @property
    def n_pairs(self) -> int:
        return self.config.rotary_dim // 2

    def describe_frequencies(self) -> str:
        if self.explicit_frequencies:
            return "explicit frequencies " + ", ".join(str(f) for f in self.frequency_exprs)
        c = self.config
        return f"omega_r = {sp.sstr(exact_number(c.base, 'base'))}**(-2 r / {c.denominator}), r = 0 .. {self.n_pairs - 1}"

    def to_dict(self) -> dict:
        data = self.config.to_dict()
        if self.explicit_frequencies:
            data["frequencies"] = [sp.sstr(f) for f in self.frequency_exprs]
        return data


def rope_spec(config: RopeConfig | None = None, *, head_dim=None, rotary_dim=None, base=10000.0,
              denominator=None, pairing="adjacent", freqs=None, dtype=None) -> RopeSpec:
    """Resolve keyword arguments (or a ``RopeConfig``) into a :class:`RopeSpec`."""
    if freqs is not None:
        freqs = tuple(freqs.tolist() if hasattr(freqs, "tolist") else freqs)
    return _rope_spec(config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype)


@lru_cache(maxsize=256)
def _rope_spec(config, head_dim, rotary_dim, base, denominator, pairing, freqs, dtype) -> RopeSpec:
    if config is None:
        if head_dim is None:
            raise InvalidInputError("head_dim is required when no RopeConfig is given")
        rotary = head_dim if rotary_dim is None else rotary_dim
        if freqs is not None and denominator is None:
            denominator = rotary  # unused: explicit frequencies replace base**(-2r/D)
        config = RopeConfig(head_dim=head_dim, rotary_dim=rotary_dim, base=base, denominator=denominator,
                            pairing=pairing, dtype=dtype or "float64")
    elif dtype is not None and dtype != config.dtype:
        config = RopeConfig(**{**config.to_dict(), "dtype": dtype})
    n_pairs = config.rotary_dim // 2
    if freqs is None:
        base = exact_number(config.base, "base")
        if n_pairs <= EVALUATED_PAIRS:
            exprs = tuple(frequency(r, config.denominator, base) for r in range(n_pairs))
        else:  # the same exact numbers, left unevaluated: SymPy's evaluation of base**(-2r/D) looks for
            # perfect powers, milliseconds per pair, seconds for a wide head
            exprs = tuple(sp.Pow(base, sp.Rational(-2 * r, config.denominator), evaluate=False) if r else sp.Integer(1)
                          for r in range(n_pairs))
    else:
        if len(freqs) != n_pairs:
            raise InvalidInputError(
                f"freqs must hold rotary_dim / 2 = {n_pairs} frequencies, got {len(freqs)}",
                rotary_dim=config.rotary_dim)
        exprs = tuple(exact_number(f, f"freqs[{k}]") for k, f in enumerate(freqs))
    return RopeSpec(config, exprs, tuple(_to_float(f) for f in exprs), freqs is not None)


def sinusoidal_entries():
    """``(sin(t w), cos(t w))``: one pair of ``sinusoidal_vector`` at a generic frequency."""
    t = sp.Symbol("t", integer=True)
    vector = sinusoidal_vector(t, [omega])
    return t, (vector[0], vector[1])


@lru_cache(maxsize=None)
def score_frequency_gradient():
    """``d/dw (R(i w) q)^T (R(j w) k)`` for one pair, differentiated symbolically.

    Returns the symbols ``(q0, q1, k0, k1, i, j)`` and the expression in them and ``w``."""
    q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
    i, j = sp.symbols("i j", integer=True)
    q, k = ImmutableMatrix([q0, q1]), ImmutableMatrix([k0, k1])
    score = ((rotation(i * omega) * q).T * (rotation(j * omega) * k))[0, 0]
    return (q0, q1, k0, k1, i, j), sp.diff(score, omega)
