"""Are two rotary maps the same function?  ``symproof compare A B``.

Researchers ask it of two descriptions of one scheme ("is my file Llama 3's rule?", "does this config
rotate as that TOML says?").  Two rotary variants of one position axis are compared pair by pair,
query side and key side: the coordinates each pair rotates, then each pair's 2x2 map at a symbolic
position ``m`` (scale times block at the pair's angle), through :func:`~symproof.prover.prove_equal`.
The answer is one of

- ``equal``: every pair's map is proved equal (certificates checked), and the coordinates left alone
  are the same;
- ``differ``: the first pair where they differ, with a witness -- a position and a basis vector whose
  images differ, both images' entries exact, their difference certified nonzero;
- ``unknown``: what was not decided, or what compare does not read (a score-only rule, several
  position axes, a rule that reads the length of the call, a bias or an additive table), said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ..encodings import pair_indices
from ..prover import PROVED, REFUTED, prove_equal
from ..prover._witness import is_certainly_nonzero
from ._check import _pair_map
from ._formula import mod_as_floor
from ._spec import Variant

__all__ = ["Comparison", "compare_variants", "VERDICTS"]

VERDICTS = ("equal", "differ", "unknown")
_M = sp.Symbol("m", integer=True)
#: positions tried, in order, for a witness when the pairs themselves differ
_PROBE_POSITIONS = (1, 2, 3, 5, 8, 13, 100, 1000)


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare_variants` found (``verdict`` one of :data:`VERDICTS`)."""

    left: str
    right: str
    verdict: str
    reason: str
    pairs_proved: int = 0
    witness: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return {"equal": 0, "differ": 0, "unknown": 1}[self.verdict]

    def as_dict(self) -> dict:
        return {"left": self.left, "right": self.right, "verdict": self.verdict, "reason": self.reason,
                "pairs_proved": self.pairs_proved, "witness": dict(self.witness)}

    def summary(self) -> str:
        lines = [f"{self.left} vs {self.right}: {self.verdict}", f"  {self.reason}"]
        for key, value in self.witness.items():
            lines.append(f"  {key}: {value}")
        return "\n".join(lines)


def _outside(variant: Variant) -> str:
    """Why compare does not read ``variant``, or ''."""
    if variant.kind != "rotary":
        return f"is a {variant.kind} variant, not a rotary map"
    if variant.mixed or len(variant.axes) > 1:
        return "reads several position axes"
    if variant.relative is not None:
        return "has a position.relative rule (a score, not a map of each token)"
    if variant.length_dependent:
        return "has a rule that reads the length of the call ([length])"
    if variant.per_head:
        return f"has {variant.heads} heads (compare reads one map; compare the heads one by one)"
    return ""


def _image(variant: Variant, side: str, position: int, coordinate: int) -> list:
    """The exact image of the basis vector ``e_coordinate`` at ``position``: the whole head."""
    out = [sp.Integer(0)] * variant.width
    out[coordinate] = sp.Integer(1)
    for r, (a, b) in enumerate(pair_indices(variant.rotated_width, variant.pairing)):
        if coordinate in (a, b):
            block = _pair_map(variant, side, position, variant.exact_value(r), r)
            column = 0 if coordinate == a else 1
            out[a], out[b] = block[0, column], block[1, column]
    return out


def _basis_witness(left: Variant, right: Variant, coordinates, first=None) -> dict:
    """A position and basis vector whose images differ, with the first coordinate where they do
    (``first``: the position to try before the usual ones, the prover's witness)."""
    positions = dict.fromkeys(([int(first)] if first is not None else []) + list(_PROBE_POSITIONS))
    for position in positions:
        for side in ("query", "key"):
            for coordinate in coordinates:
                a, b = _image(left, side, position, coordinate), _image(right, side, position, coordinate)
                for k, (x, y) in enumerate(zip(a, b)):
                    if is_certainly_nonzero(sp.expand(x - y)):
                        return {"side": side, "position": position, "input": f"e_{coordinate}",
                                "output coordinate": k, "left": str(x), "right": str(y)}
    return {}


def compare_variants(left: Variant, right: Variant) -> Comparison:
    """Whether ``left`` and ``right`` rotate every head alike at every position (see the module)."""
    names = (left.name, right.name)
    for variant in (left, right):
        why = _outside(variant)
        if why:
            return Comparison(*names, "unknown", f"{variant.name} {why}; compare reads rotary maps of one "
                                                 "position axis whose frequencies do not depend on the call")
    if left.width != right.width:
        return Comparison(*names, "differ", f"the head widths differ ({left.width} and {right.width}): the maps act "
                                            "on vectors of different sizes")
    pairs_l = pair_indices(left.rotated_width, left.pairing)
    pairs_r = pair_indices(right.rotated_width, right.pairing)
    if sorted(map(tuple, pairs_l)) != sorted(map(tuple, pairs_r)):
        for r in range(max(len(pairs_l), len(pairs_r))):
            here = tuple(pairs_l[r]) if r < len(pairs_l) else None
            there = tuple(pairs_r[r]) if r < len(pairs_r) else None
            if here != there:
                break
        (a, b), who, other = (here, left, right) if here is not None else (there, right, left)
        reason = (f"they rotate different coordinates together: {who.name} pairs ({a}, {b}) as its pair {r} "
                  f"({who.pairing} pairs, {who.rotated_width} rotated), {other.name} does not "
                  f"({other.pairing} pairs, {other.rotated_width} rotated)")
        return Comparison(*names, "differ", reason, witness=_basis_witness(left, right, (a, b)))
    by_coordinates = {tuple(pair): r for r, pair in enumerate(pairs_r)}
    proved = 0
    for r, pair in enumerate(pairs_l):
        r_right = by_coordinates[tuple(pair)]
        for side in ("query", "key"):
            lhs = _pair_map(left, side, _M, left.exact_value(r), r)
            rhs = _pair_map(right, side, _M, right.exact_value(r_right), r_right)
            verdict = prove_equal(mod_as_floor(lhs), mod_as_floor(rhs))  # Mod is outside the prover's fragment
            where = f"pair {r} (coordinates {pair[0]}, {pair[1]}), {side} side"
            if verdict.status == REFUTED:
                found = (verdict.witness or {}).get(_M)
                witness = _basis_witness(left, right, tuple(pair), found if getattr(found, "is_Integer", False)
                                         else None)
                return Comparison(*names, "differ", f"{where}: the 2x2 maps differ ({verdict.witness_text()})",
                                  proved, witness)
            if verdict.status != PROVED:
                far = _far_difference(left, right, lhs, rhs)  # a step the formulas name (floor(m / L)), past
                if far is not None:                            # the prover's small points
                    found, residual = far
                    return Comparison(*names, "differ", f"{where}: the 2x2 maps differ at m = {found} (certified: "
                                                        f"an entry differs by {residual})", proved,
                                      _basis_witness(left, right, tuple(pair), found))
                return Comparison(*names, "unknown", f"{where}: not decided ({verdict.reason or verdict.method})",
                                  proved)
            proved += 1
    rest = left.width - left.rotated_width
    alone = f"; the other {rest} coordinates are left alone by both" if rest else ""
    return Comparison(*names, "equal", f"every pair's map is proved equal, query and key side ({proved} maps, "
                                       f"certificates checked){alone}", proved)


def _far_difference(left: Variant, right: Variant, lhs, rhs):
    """``(m, residual)``: a position inside both files' positions where the two 2x2 maps certifiably differ,
    searched at the numbers and steps the formulas name (the witness search of ``check``), else None."""
    from ._check import _far_witness, _outside_position

    for domain, other in ((left, right), (right, left)):
        found = _far_witness(domain, mod_as_floor(lhs), mod_as_floor(rhs))
        if found is not None and not _outside_position(other, found[0], False):
            witness, residual = found
            m = witness.get(_M)
            if getattr(m, "is_Integer", False):
                return m, residual
    return None
