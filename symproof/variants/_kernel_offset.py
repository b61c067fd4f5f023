"""The ``kernel`` property of a relative-position file (ReRoPE, Self-Extend): its score kernel, written by
``--export``, against the exact score of each probed (query, key) pair (the per-token files' comparisons
are in :mod:`._kernel_file`, which passes its written-file reader, reference, tally and its two guards
of a reference value: ``safe`` building one, ``None`` where undefined, and ``finite`` reading one as a
float64)."""

from __future__ import annotations

import numpy as np
import sympy as sp

from ._kernel import probed_indices

__all__ = ["compare_offset"]


def _offset_pairs(variant, positions) -> list:
    """The (query, key) positions a relative-position file is probed at: every two probed positions (keys
    j <= i only for a causal file), then offsets next to every number the formula names (a window
    w: i - j = w - 1, w, w + 1) at a few keys."""
    from ._offset import formula_numbers

    i, j = sp.symbols("i j", integer=True)
    keys = [p for p in (0, 7, -1, -(2**10), 2**20) if p >= 0 or not variant.from_zero]
    pairs = [(a, b) for a in positions for b in positions if b <= a or not variant.causal]
    pairs += [(b + n + d, b) for n in formula_numbers(variant.relative_at(i, j)) for d in (-1, 0, 1) for b in keys]
    last = variant.last_position
    if last is not None:
        pairs = [(a, b) for a, b in pairs if 0 <= a <= last and 0 <= b <= last]
    return list(dict.fromkeys(pairs))


def _magnitude(variant, i, j, finite) -> float:
    value = finite(variant.relative_at(sp.Integer(i), sp.Integer(j)))
    return 0.0 if value is None else abs(value)


def compare_offset(variant, written, reference, positions, tally, cache, safe, finite):
    """Each probed pair alone (queries and keys zero elsewhere, so the file's score is that pair's),
    then the coordinates past the rotated width alone (their product, at every position)."""
    from ..encodings import pair_indices

    rng = np.random.default_rng(0)
    pairs = _offset_pairs(variant, positions)
    queries = sorted({a for a, _ in pairs})
    keys = sorted({b for _, b in pairs})
    row, col = {a: n for n, a in enumerate(queries)}, {b: n for n, b in enumerate(keys)}
    index = pair_indices(variant.rotated_width, variant.pairing)
    # the float64 angle rho * omega is only as exact as rho is large (rho = i * j reaches 2**40)
    span = {(a, b): max(abs(a) + abs(b), safe(_magnitude, 0, variant, a, b, finite) or 0) for a, b in pairs}
    for r in probed_indices(variant.n_pairs):
        vectors = [np.zeros(variant.width), np.zeros(variant.width)]
        for vector in vectors:
            vector[list(index[r])] = np.round(rng.standard_normal(2), 6)
        got = written.scores(np.repeat(vectors[0][None], len(queries), 0), np.repeat(vectors[1][None], len(keys), 0),
                             queries, keys)
        for a, b in pairs:
            if (r, a, b) not in cache:
                cache[(r, a, b)] = safe(reference.pair_score, max(abs(a), abs(b)), r,
                                         [v[list(index[r])] for v in vectors], a, b)
            value = cache[(r, a, b)]
            if value is None:
                tally.skipped.add((a, b))
                continue
            tally.add(got[row[a], col[b]], value, span[(a, b)], f"pair {r}, query at {a}, key at {b}", (a, b))
    if variant.rotated_width < variant.width:
        q, k = np.zeros(variant.width), np.zeros(variant.width)
        q[variant.rotated_width:], k[variant.rotated_width:] = 1.5, -0.5
        got = written.scores(np.repeat(q[None], len(queries), 0), np.repeat(k[None], len(keys), 0), queries, keys)
        value = float(q @ k)
        for a, b in pairs:
            tally.add(got[row[a], col[b]], value, 0, f"coordinates past the rotated width, query at {a}, key at {b}")
