"""Dense rotations by a matrix exponential (LieRE, STRING): ``kind = "dense"``.

A token at position ``m`` (one coordinate per axis) is multiplied by ``R(m) = exp(sum_a m_a A_a)``, one
generator ``A_a`` per axis, a square matrix of exact numbers (or formulas in ``[params]``) as wide as
the head::

    kind = "dense"
    width = 3
    [position]
    axes = ["y", "x"]                      # default ["m"]: one axis, then write generator = [[...]]
    [dense]
    generators = [[[0, -1, 0], [1, 0, 0], [0, 0, 0]],
                  [[0, 0, 0], [0, 0, -1], [0, 1, 0]]]

What is decided, and how (no step evaluates ``exp`` in floating point):

- skew-symmetry ``A^T = -A`` and commutation ``A_a A_b = A_b A_a`` are exact identities of the generators'
  entries, decided (and certified) by :func:`~symproof.prover.prove_equal`;
- with every generator skew, ``R(m)^T = exp(-X)`` for ``X = sum_a m_a A_a``, so ``R(m)^T R(m) = I``
  (``X`` commutes with ``-X``): ``norm`` and ``plain_at_zero`` are proved from the skew checks; when
  moreover the generators commute pairwise, ``X_i = sum m_a(i) A_a`` commutes with ``X_j``, so
  ``R(i)^T R(j) = exp(X_j - X_i) = R(j - i)``: ``relative`` and ``shift`` are proved.  These two facts of
  the exponential (``exp(X)^T = exp(X^T)``; ``exp(X) exp(Y) = exp(X + Y)`` when ``XY = YX``) are the
  lemmas each such proof names;
- otherwise a witness is sought at small positions (unit vectors of the axes): an entry of, say,
  ``R(i)^T R(j) - R(j - i)`` that an exact rational enclosure of the exponentials (:mod:`._expm`)
  certifies nonzero refutes the property, with the positions and the basis vectors ``q = e_k``,
  ``k = e_l`` that pick the entry.  When no entry is certified (an irrational entry, a generator too
  large to enclose, differences that vanish at the positions tried) the property is *unknown*, saying
  which.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
import sympy as sp

from ..prover import PROVED, REFUTED, prove_equal
from ._expm import MAX_NORM, Enclosed, exp_enclosure
from ._properties import Property

__all__ = ["dense_properties"]

_LEMMAS = ("exp(X)^T = exp(X^T), and exp(X) exp(Y) = exp(X + Y) when XY = YX (X, Y square matrices; both "
           "series converge absolutely)")


# -- the properties -----------------------------------------------------------------------------------


def _unit(variant, a: int) -> tuple:
    return tuple(int(b == a) for b in range(len(variant.axes)))


def _add(*vectors) -> tuple:
    return tuple(sum(parts) for parts in zip(*vectors))


def _neg(vector) -> tuple:
    return tuple(-x for x in vector)


def _zero(variant) -> tuple:
    return (0,) * len(variant.axes)


def _shown(variant, name: str, vector) -> dict:
    """The witness entries of the position ``name``: ``{i: 1}`` on one axis, ``{i_y: 1, i_x: 0}`` on several."""
    if len(variant.axes) == 1:
        return {sp.Symbol(name): sp.Integer(vector[0])}
    return {sp.Symbol(f"{name}_{axis}"): sp.Integer(x) for axis, x in zip(variant.axes, vector)}


def _basis(k: int):
    return sp.Symbol(f"e_{k}")


#: most exponentials one file's witness search encloses (each costs width^3 big-integer products per Taylor
#: term): past it the search stops, and a property it has not decided is unknown, saying so
MAX_ENCLOSURES = 48


class _Exponentials:
    """``R(m)`` enclosed exactly at integer position vectors, computed once each (rational generators);
    ``None`` for a position past :data:`MAX_ENCLOSURES` distinct ones, or too large to enclose."""

    def __init__(self, variant):
        self.variant = variant
        self.cache: dict = {}
        self.exhausted = False
        irrational = [(a, x) for a, g in enumerate(variant.generators) for x in g if not x.is_Rational]
        self.why_not = (f"the generator of axis {variant.axes[irrational[0][0]]!r} has the irrational entry "
                        f"{irrational[0][1]}: the exact enclosures of exp take rational generators" if irrational else "")

    def at(self, position) -> Enclosed | None:
        if position not in self.cache and len(self.cache) >= MAX_ENCLOSURES:
            self.exhausted = True
            return None
        if position not in self.cache:
            x = sum((p * g for p, g in zip(position, self.variant.generators)),
                    sp.zeros(self.variant.width, self.variant.width))
            rows = [[Fraction(int(v.p), int(v.q)) for v in x.row(a)] for a in range(x.rows)]
            self.cache[position] = exp_enclosure(rows)
        return self.cache[position]


def _facts(variant) -> dict:
    """The exact facts every property reads, decided once: which generators are skew-symmetric, which
    pairs commute, which generators are zero (each an exact :func:`prove_equal` verdict)."""
    cached = variant.__dict__.get("_dense_facts")
    if cached is None:
        n = variant.width
        skew = [prove_equal(g.T, -g) for g in variant.generators]
        commute = {(a, b): prove_equal(variant.generators[a] * variant.generators[b],
                                       variant.generators[b] * variant.generators[a])
                   for a, b in itertools.combinations(range(len(variant.generators)), 2)}
        zero = [prove_equal(g, sp.zeros(n, n)) for g in variant.generators]
        cached = variant.__dict__["_dense_facts"] = {"skew": skew, "commute": commute, "zero": zero,
                                                      "exp": _Exponentials(variant)}
    return cached


def _record_skew(variant, proof, facts) -> bool:
    """Record every generator's skew-symmetry; whether all are (exactly) skew."""
    if not all(v.status == PROVED for v in facts["skew"]):
        return False
    for axis, verdict in zip(variant.axes, facts["skew"]):
        proof.record(f"the generator of axis {axis} is skew-symmetric: A^T = -A", verdict)
    return True


def _record_commute(variant, proof, facts) -> bool:
    if not all(v.status == PROVED for v in facts["commute"].values()):
        return False
    for (a, b), verdict in facts["commute"].items():
        proof.record(f"the generators of axes {variant.axes[a]} and {variant.axes[b]} commute: "
                     f"A_{variant.axes[a]} A_{variant.axes[b]} = A_{variant.axes[b]} A_{variant.axes[a]}", verdict)
    return True


def _not_skew(variant, facts) -> str:
    for axis, verdict in zip(variant.axes, facts["skew"]):
        if verdict.status == REFUTED:
            return f"the generator of axis {axis} is not skew-symmetric (A^T != -A, exactly)"
    return "skew-symmetry of the generators is not decided"


def _not_commuting(variant, facts) -> str:
    for (a, b), verdict in facts["commute"].items():
        if verdict.status == REFUTED:
            return (f"the generators of axes {variant.axes[a]} and {variant.axes[b]} do not commute "
                    f"([A_{variant.axes[a]}, A_{variant.axes[b]}] != 0, exactly)")
    return "the commutation of the generators is not decided"


def _interval(center: Fraction, radius: Fraction) -> str:
    """``c +- r``: the centre to 10 significant digits and the radius rounded up (shown; the certificate
    is the exact comparison ``|centre| > radius``)."""
    import mpmath

    with mpmath.workdps(30):
        shown = mpmath.nstr(mpmath.mpf(center.numerator) / center.denominator, 10)
        bound = mpmath.nstr(mpmath.mpf(radius.numerator) / radius.denominator * (1 + mpmath.mpf(10)**-3), 2)
    return f"{shown} +- {bound}"


def _certificate(center: Fraction, radius: Fraction) -> dict:
    """The exact enclosure a witness rests on: the difference of the two sides lies within ``radius`` of
    ``centre``, and ``|centre| > radius`` (exact rationals, as text)."""
    return {"centre": str(center), "radius": str(radius)}


def _search(variant, proof, facts, rule: str, candidates, difference, what: str, reason: str) -> None:
    """Try each candidate (a witness dict's positions and the matrices to compare); refute at the first
    certified nonzero entry of ``difference(*candidate)``, else record the property undecided."""
    exps = facts["exp"]
    if exps.why_not:
        proof.undecided("check", rule, f"{reason}; no witness sought: {exps.why_not}", method="exact enclosure")
        return
    too_large = False
    for positions, shown in candidates:
        enclosed = difference(*positions)
        if enclosed is None:
            too_large = True
            continue
        found = _entry(enclosed, what)
        if found is None:
            continue
        (k, l), q_vector, detail, certificate = found
        # a norm reads one vector q; a score, q and k
        witness = {**shown, sp.Symbol("q"): q_vector, **({} if what == "gram" else {sp.Symbol("k"): _basis(l)})}
        proof.check(rule, False, f"{reason}; {detail} (exact rational Taylor enclosure of exp, tail bounded): "
                                 "not 0", witness=witness,
                    data=_certificate(*certificate))
        return
    large = ("" if not too_large else f"; the search stopped after {MAX_ENCLOSURES} exponentials" if exps.exhausted
             else f"; some exponentials were not enclosed (||X||_inf > {MAX_NORM})")
    proof.undecided("check", rule, f"{reason}; no entry certified nonzero at the positions tried{large}",
                    method="exact enclosure")


def _entry(enclosed: Enclosed, what: str):
    """The first certified nonzero entry of ``enclosed``: ``((k, l), q, detail, (centre, radius))``; for a Gram matrix
    difference ``G - I`` (``what == "gram"``) the diagonal first (``||R e_k||^2 - 1``), then the
    off-diagonal through ``q = e_k + e_l`` (``G_kk + G_ll + 2 G_kl - 2``)."""
    n = enclosed.size
    if what == "gram":
        for k in range(n):
            if enclosed.certainly_nonzero(k, k):
                c, r = enclosed.entry(k, k)
                return (k, k), _basis(k), f"||R e_{k}||^2 - 1 is {_interval(c, r)}", (c, r)
        for k, l in itertools.combinations(range(n), 2):
            c = enclosed.center[k][k] + enclosed.center[l][l] + 2 * enclosed.center[k][l]
            r = 4 * enclosed.radius
            if abs(c) > r:
                return (k, l), _basis(k) + _basis(l), f"||R (e_{k} + e_{l})||^2 - 2 is {_interval(c, r)}", (c, r)
        return None
    for k, l in itertools.product(range(n), repeat=2):
        if enclosed.certainly_nonzero(k, l):
            c, r = enclosed.entry(k, l)
            return (k, l), _basis(k), f"entry ({k}, {l}) of the difference is {_interval(c, r)}", (c, r)
    return None


def _gram(exps, position):
    """``R(m)^T R(m) - I``, enclosed (``None`` when not enclosed)."""
    r = exps.at(position)
    return None if r is None else r.T @ r - Enclosed.identity(r.size)


def _score_difference(exps, left, right):
    """``R(i)^T R(j) - R(i')^T R(j')`` for ``left = (i, j)``, ``right = (i', j')``: the matrix whose entry
    (k, l) is ``s(i, j) - s(i', j')`` at ``q = e_k``, ``k = e_l``."""
    factors = [exps.at(p) for p in (*left, *right)]
    if any(f is None for f in factors):
        return None
    a, b, c, d = factors
    return a.T @ b - c.T @ d


def _small_positions(variant) -> list:
    """Unit vectors, their doubles and sums, and (unless positions start at 0) their negatives."""
    units = [_unit(variant, a) for a in range(len(variant.axes))]
    out = units + [_add(u, u) for u in units] + [_add(u, v) for u, v in itertools.combinations(units, 2)]
    if not variant.from_zero:
        out += [_neg(u) for u in units]
    return list(dict.fromkeys(out))


def _derive_norm(variant, proof) -> None:
    facts = _facts(variant)
    if _record_skew(variant, proof, facts):
        proof.note(f"With X = sum_a m_a A_a skew-symmetric, R(m)^T R(m) = exp(X^T) exp(X) = exp(-X) exp(X) = "
                   f"exp(0) = I (lemmas: {_LEMMAS}): ||R(m) q|| = ||q|| at every position.")
        return
    exps = facts["exp"]
    candidates = [((p,), _shown(variant, "m", p)) for p in _small_positions(variant)]
    _search(variant, proof, facts, "||R(m) q||^2 = ||q||^2", candidates, lambda p: _gram(exps, p), "gram",
            _not_skew(variant, facts))


def _derive_plain_at_zero(variant, proof) -> None:
    facts = _facts(variant)
    if _record_skew(variant, proof, facts):
        proof.note(f"s(i, i) = q^T R(i)^T R(i) k = q^T exp(-X) exp(X) k = q^T k with X = sum_a i_a A_a skew "
                   f"(lemmas: {_LEMMAS}).")
        return
    exps = facts["exp"]
    candidates = [((p,), _shown(variant, "i", p)) for p in _small_positions(variant)]
    _search(variant, proof, facts, "s(i, i) = q^T k", candidates, lambda p: _gram(exps, p), "any",
            _not_skew(variant, facts))


def _group_law(variant, proof, facts) -> bool:
    """Record skew-symmetry and commutation when both hold, with the lemma that closes the proof."""
    if not (all(v.status == PROVED for v in facts["skew"]) and all(v.status == PROVED for v in facts["commute"].values())):
        return False
    _record_skew(variant, proof, facts)
    _record_commute(variant, proof, facts)
    single = len(variant.axes) == 1
    proof.note(("One generator: X_i = i A and X_j = j A commute" if single else
                "Commuting generators: X_i = sum_a i_a A_a and X_j = sum_a j_a A_a commute")
               + f"; with A skew, R(i)^T R(j) = exp(-X_i) exp(X_j) = exp(X_j - X_i) = R(j - i) (lemmas: {_LEMMAS}).")
    return True


def _why_not_group(variant, facts) -> str:
    if not all(v.status == PROVED for v in facts["skew"]):
        return _not_skew(variant, facts)
    return _not_commuting(variant, facts)


def _derive_relative(variant, proof) -> None:
    facts = _facts(variant)
    if _group_law(variant, proof, facts):
        proof.note("So s(i, j) = q^T R(j - i) k = s(0, j - i).")
        return
    exps, points = facts["exp"], _small_positions(variant)
    zero = _zero(variant)
    pairs = [(a, b) for a in points for b in points] + [(a, zero) for a in points] + [(zero, b) for b in points]
    # from position 0 on, s(0, j - i) reads the position j - i: keep it a position
    pairs = [(a, b) for a, b in pairs if not variant.from_zero or min(_add(b, _neg(a))) >= 0]
    candidates = [(((a, b), (zero, _add(b, _neg(a)))), {**_shown(variant, "i", a), **_shown(variant, "j", b)})
                  for a, b in pairs]
    _search(variant, proof, facts, "s(i, j) = s(0, j - i)", candidates,
            lambda left, right: _score_difference(exps, left, right), "any", _why_not_group(variant, facts))


def _derive_shift(variant, proof) -> None:
    facts = _facts(variant)
    if _group_law(variant, proof, facts):
        proof.note("So s(i + c, j + c) = q^T R(j - i) k = s(i, j).")
        return
    exps, points = facts["exp"], _small_positions(variant)
    zero = _zero(variant)
    triples = [(zero, b, c) for c in points for b in points] + [(a, a, c) for a in points for c in points]
    candidates = [(((_add(a, c), _add(b, c)), (a, b)),
                   {**_shown(variant, "i", a), **_shown(variant, "j", b), **_shown(variant, "c", c)})
                  for a, b, c in triples]
    _search(variant, proof, facts, "s(i + c, j + c) = s(i, j)", candidates,
            lambda left, right: _score_difference(exps, left, right), "any", _why_not_group(variant, facts))


def _derive_direction(variant, proof) -> None:
    """``s(0, D) != s(0, -D)`` (``s(D, 0)`` when positions start at 0) at some offset: a witness."""
    facts = _facts(variant)
    if all(v.status == PROVED for v in facts["zero"]):
        proof.check("s(0, D) != s(0, -D) for some D", False, "every generator is 0: R(m) = exp(0) = I at every "
                                                             "position, so no score sees the offset")
        return
    exps = facts["exp"]
    zero = _zero(variant)
    units = [_unit(variant, a) for a in range(len(variant.axes))]
    points = units + [_add(u, u) for u in units]
    if variant.from_zero:
        candidates = [(((zero, p), (p, zero)), _shown(variant, "D", p)) for p in points]
        rule = "s(0, D) != s(D, 0) for some D"
    else:
        candidates = [(((zero, p), (zero, _neg(p))), _shown(variant, "D", p)) for p in points]
        rule = "s(0, D) != s(0, -D) for some D"
    if exps.why_not:
        proof.undecided("check", rule, f"no witness sought: {exps.why_not}", method="exact enclosure")
        return
    for positions, shown in candidates:
        enclosed = _score_difference(exps, *positions)
        found = None if enclosed is None else _entry(enclosed, "any")
        if found is not None:
            (k, l), q_vector, detail, certificate = found
            proof.check(rule, True, f"{detail} (exact rational Taylor enclosure of exp, tail bounded): not 0",
                        witness={**shown, sp.Symbol("q"): q_vector, sp.Symbol("k"): _basis(l)},
                        data=_certificate(*certificate))
            return
    proof.undecided("check", rule, "no entry certified nonzero at the offsets tried", method="exact enclosure")


def dense_properties(variant) -> list:
    """The properties of a dense file, in report order (``decay`` has no statement for it: RoFormer's bound
    is a sum over rotation pairs, and a dense rotation has none)."""
    vectors = "" if len(variant.axes) == 1 else f" (i, j, c, D, m: integer vectors over the axes {', '.join(variant.axes)})"
    rotation = "R(m) = exp(sum_a m_a A_a)"
    return [
        Property("norm", f"||R(m) q|| = ||q|| for every position m, {rotation}{vectors}", "identity",
                 derive=_derive_norm),
        Property("relative", f"s(i, j) = q^T R(i)^T R(j) k = s(0, j - i): the score depends only on the offset{vectors}",
                 "identity", derive=_derive_relative),
        Property("shift", f"s(i + c, j + c) = s(i, j) for every common shift c{vectors}", "identity",
                 derive=_derive_shift),
        Property("direction", ("s(0, D) != s(D, 0)" if variant.from_zero else "s(0, D) != s(0, -D)")
                 + f" in general: the sign of the offset is visible{vectors}", "sensitivity", derive=_derive_direction),
        Property("plain_at_zero", f"s(i, i) = q^T k: at offset 0 the score is the plain product{vectors}", "identity",
                 derive=_derive_plain_at_zero),
    ]
