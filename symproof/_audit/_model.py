"""The declared rotary map in numbers, and the variations of it the diagnosis tries.

A :class:`Model` is the variant's pairs, float64 frequencies (from the exact
ones, 20 digits), position transform and per-pair scale, plus the three
things a port typically gets wrong without touching the frequencies: a sign
(``direction``), a position offset, a constant extra scale.  ``rebuilt``
re-reads the variant at another rotary width, pairing or denominator, so the
frequencies of a hypothesis come from the same exact definition.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..encodings import pair_indices
from ..variants import Variant
from ..variants._kernel import numpy_function  # a table read and a mod printed as the kernels print them

__all__ = ["Model"]

_m = sp.Symbol("m", real=True)
_r = sp.Symbol("r", integer=True, nonnegative=True)


def _vectorised(expr, *args):
    """``expr`` as a float64 function of arrays; affine and constant expressions without ``lambdify``
    (whose NumPy namespace imports every lazy NumPy submodule, ~1 s on a cold process)."""
    if not expr.free_symbols - set(args[:1]) and expr.is_polynomial(args[0]) and sp.degree(expr, args[0]) <= 1:
        poly = sp.Poly(expr, args[0])
        slope, intercept = (float(c) for c in (poly.coeff_monomial(args[0]), poly.coeff_monomial(1)))

        def affine(*values):
            shape = np.broadcast(*values).shape
            return np.broadcast_to(slope * np.asarray(values[0], dtype=np.float64) + intercept, shape)

        return affine
    func = numpy_function(args, expr)

    def call(*values):
        out = func(*values)
        return np.broadcast_to(np.asarray(out, dtype=np.float64), np.broadcast(*values).shape)

    return call


@dataclass
class Model:
    variant: Variant
    thetas: np.ndarray
    sign: int = 1
    offset: int = 0
    extra_scale: float = 1.0
    seq_len: int | None = None  # the call length the frequencies are read at (length-dependent rules)

    @classmethod
    def of(cls, variant: Variant, seq_len: int | None = None) -> "Model":
        # 40 digits: the same cached values the variant's kernel is built from
        digits = variant.frequencies_digits(40, seq_len=seq_len)
        return cls(variant, np.array([float(w) for w in digits], dtype=np.float64), seq_len=seq_len)

    @property
    def pairs(self) -> list:
        return pair_indices(self.variant.rotated_width, self.variant.pairing)

    @property
    def pairing(self) -> str:
        return self.variant.pairing

    def _functions(self):
        cached = self.variant.__dict__.get("_audit_functions")
        if cached is None:
            cached = (_vectorised(self.variant.angle_position(_m), _m),
                      _vectorised(self.variant.scale("query", _m, _r), _m, _r))
            self.variant.__dict__["_audit_functions"] = cached
        return cached

    def transform(self, positions) -> np.ndarray:
        return self._functions()[0](np.asarray(positions, dtype=np.float64))

    def angles(self, positions, thetas=None) -> np.ndarray:
        """``(T, n_pairs)``: the angle of every pair at every position."""
        thetas = self.thetas if thetas is None else np.asarray(thetas, dtype=np.float64)
        g = self.transform(np.asarray(positions, dtype=np.float64) + self.offset)
        return self.sign * g[:, None] * thetas[None, :]

    def scales(self, positions) -> np.ndarray:
        """``(T, n_pairs)``: the scale of every pair at every position."""
        m = np.asarray(positions, dtype=np.float64)[:, None]
        r = np.arange(len(self.thetas), dtype=np.float64)[None, :]
        return self.extra_scale * self._functions()[1](m, r)

    def images(self, positions) -> np.ndarray:
        """``(T, d, d)``: the map's matrix at every position (pairs rotated and scaled, the rest copied)."""
        d = self.variant.width
        out = np.broadcast_to(np.eye(d), (len(positions), d, d)).copy()
        angles, scales = self.angles(positions), self.scales(positions)
        cos, sin = scales * np.cos(angles), scales * np.sin(angles)
        pairs = np.array(self.pairs, dtype=np.int64).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        out[:, a, a], out[:, a, b] = cos, -sin
        out[:, b, a], out[:, b, b] = sin, cos
        return out

    def rebuilt(self, **changes) -> "Model | None":
        """The model of the variant with ``rotated_width``, ``pairing`` or ``denominator`` changed (or None)."""
        v = self.variant
        fields = dict(changes)
        if "rotated_width" in fields:
            w = fields["rotated_width"]
            if w < 2 or w % 2 or w > v.width:
                return None
            # a denominator that was the rotated width follows it; one that was the head width stays
            if "denominator" not in fields and (v.denominator is None or v.denominator == v.rotated_width):
                fields["denominator"] = None if w == v.width else w
        if v.rule == "list" and fields.get("rotated_width", v.rotated_width) != v.rotated_width:
            return None
        if set(fields) <= {"pairing"}:  # the same pairs' frequencies, transform and scales in another layout
            variant = dataclasses.replace(v, **fields)
            for key in ("_audit_functions", "_frequencies", "_digits_40"):
                if key in v.__dict__:
                    variant.__dict__[key] = v.__dict__[key]
            return Model(variant, self.thetas, self.sign, self.offset, self.extra_scale, self.seq_len)
        try:
            variant = dataclasses.replace(v, **fields)
            thetas = np.array([float(w) for w in variant.frequencies_digits(40, seq_len=self.seq_len)],
                              dtype=np.float64)
        except Exception:  # a rule that does not extend to the new width
            return None
        if not np.all(np.isfinite(thetas)):
            return None
        return Model(variant, thetas, self.sign, self.offset, self.extra_scale, self.seq_len)

    def with_thetas(self, thetas) -> "Model":
        return dataclasses.replace(self, thetas=np.asarray(thetas, dtype=np.float64))
