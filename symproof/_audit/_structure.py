"""The linear structure of a rotary map, read off its images of basis vectors.

``F[t, i, j]`` is output coordinate ``i`` for the basis vector ``e_j`` at the
``t``-th probed position.  Coordinates that ever mix form groups; a group of
two is a pair whose 2x2 block is fitted as ``sigma R(phi)`` (scale and angle,
first coordinate of the pair rotated towards the second), a group of one is a
copied coordinate (constant diagonal) or one scaled with position without a
partner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..encodings import pair_indices

__all__ = ["Structure", "recover_structure", "wrap", "LINK_TOLERANCE", "ROTATION_TOLERANCE"]

#: an off-diagonal entry above this (relative to the largest entry) means the two coordinates mix
LINK_TOLERANCE = 1e-6
#: largest entry-wise distance of a pair block from its fitted sigma R(phi) for the block to be a rotation
ROTATION_TOLERANCE = 1e-3
#: a copied coordinate's diagonal may move this much over positions (float32/16 outputs)
CONSTANT_TOLERANCE = 1e-4


def wrap(angle):
    """Angles reduced to ``(-pi, pi]``."""
    return np.pi - np.mod(np.pi - np.asarray(angle, dtype=np.float64), 2 * np.pi)


@dataclass
class Structure:
    width: int
    pairs: list  # [(a, b)], a < b, sorted by a
    groups: list = field(default_factory=list)  # coordinates mixing in groups of more than two
    lone: list = field(default_factory=list)  # coordinates scaled with position, mixing with nothing
    copied: list = field(default_factory=list)  # coordinates with a constant diagonal, mixing with nothing
    copied_scale: np.ndarray | None = None  # the constant diagonal value of each copied coordinate
    angle: np.ndarray | None = None  # (T, n_pairs), wrapped
    scale: np.ndarray | None = None  # (T, n_pairs)
    misfit: np.ndarray | None = None  # (T, n_pairs): distance of each block from sigma R(phi)

    @property
    def rotated(self) -> list:
        """Every coordinate that moves with position."""
        coords = [c for pair in self.pairs for c in pair] + [c for g in self.groups for c in g] + list(self.lone)
        return sorted(coords)

    @property
    def rotated_width(self) -> int:
        return len(self.rotated)

    @property
    def pairing(self) -> str | None:
        """``adjacent`` or ``half`` when the rotated coordinates are ``0..w-1`` paired that way, else ``None``."""
        w = self.rotated_width
        if self.groups or self.lone or w == 0 or w % 2 or self.rotated != list(range(w)):
            return None
        for name in ("adjacent", "half"):
            if self.pairs == pair_indices(w, name):
                return name
        return None

    def describe(self, limit: int = 8) -> dict:
        pairs = [list(p) for p in self.pairs]
        return {"rotated_width": self.rotated_width, "pairing": self.pairing or "other",
                "pairs": pairs[:limit] + (["..."] if len(pairs) > limit else []),
                "groups": [list(g) for g in self.groups], "scaled_alone": list(self.lone),
                "copied": len(self.copied)}


def _components(link: np.ndarray) -> list:
    d = link.shape[0]
    seen = np.zeros(d, dtype=bool)
    out = []
    for start in range(d):
        if seen[start]:
            continue
        stack, comp = [start], []
        seen[start] = True
        while stack:
            node = stack.pop()
            comp.append(node)
            for nxt in np.flatnonzero(link[node] & ~seen):
                seen[nxt] = True
                stack.append(int(nxt))
        out.append(sorted(comp))
    return out


def recover_structure(images: np.ndarray, still=()) -> Structure:
    """The :class:`Structure` of basis images ``F`` (shape ``(T, d, d)``).

    ``still`` are the declared model's pairs of frequency zero (a slice of a multi-axis rotary): they never
    move, so the images cannot show them as pairs; when both coordinates are copied they are read as pairs
    at angle zero, not as coordinates the function leaves out of its rotation."""
    n_pos, d, _ = images.shape
    # no (T, d, d) temporaries: at d = 2048 each is 32 MB per position
    size = max(abs(float(images.max())), abs(float(images.min())), 1e-300)
    off = np.zeros((d, d))
    for t in range(n_pos):
        np.maximum(off, np.abs(images[t]), out=off)
    np.fill_diagonal(off, 0.0)
    link = (off + off.T) > LINK_TOLERANCE * size
    diag = images[:, np.arange(d), np.arange(d)]
    pairs, groups, lone, copied = [], [], [], []
    for comp in _components(link):
        if len(comp) == 2:
            pairs.append(tuple(comp))
        elif len(comp) > 2:
            groups.append(tuple(comp))
        elif np.ptp(diag[:, comp[0]]) > CONSTANT_TOLERANCE * max(1.0, abs(float(diag[0, comp[0]]))):
            lone.append(comp[0])
        else:
            copied.append(comp[0])
    for a, b in still:
        if a in copied and b in copied:
            copied.remove(a)
            copied.remove(b)
            pairs.append((min(a, b), max(a, b)))
    pairs.sort()
    structure = Structure(width=d, pairs=pairs, groups=groups, lone=lone, copied=copied,
                          copied_scale=np.array([float(np.median(diag[:, j])) for j in copied]))
    if pairs:
        a = np.array([p[0] for p in pairs])
        b = np.array([p[1] for p in pairs])
        b00, b01 = images[:, a, a], images[:, a, b]
        b10, b11 = images[:, b, a], images[:, b, b]
        # image of e_a is (b00, b10): rotating (first, second) by phi sends e_a to (cos, sin)
        cos, sin = (b00 + b11) / 2, (b10 - b01) / 2
        structure.scale = np.hypot(cos, sin)
        structure.angle = np.arctan2(sin, cos)
        structure.misfit = np.maximum.reduce([np.abs(b00 - cos), np.abs(b11 - cos),
                                              np.abs(b10 - sin), np.abs(b01 + sin)])
    else:
        structure.scale = structure.angle = structure.misfit = np.zeros((n_pos, 0))
    return structure
