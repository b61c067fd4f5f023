"""False claims about dense rotations (``kind = "dense"``): never proved.

- Non-commuting skew-symmetric generators claimed relative (or shift-invariant): ``exp(-X_i) exp(X_j)`` is
  not ``exp(X_j - X_i)`` -- Baker-Campbell-Hausdorff puts ``-[X_i, X_j] / 2`` between them -- so the claim is
  false; it must be *refuted* (with a certified witness) or *unknown*, never proved.  Random generator
  pairs, seeded, as well as the textbook so(3) pair.
- A generator that is not skew-symmetric claimed norm-preserving: *refuted*, with a witness that the
  exact definition confirms (rebuilt here with SymPy's own closed-form ``Matrix.exp`` of the rational
  matrix, evaluated to 30 digits: an implementation independent of the checker's enclosures).
- Controls: commuting skew generators (rotated planes) are proved, so a checker that refused every
  dense file would fail here too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp

from symproof.variants import Variant, check_variant


def _dense(generators, axes) -> Variant:
    width = len(generators[0])
    return Variant.from_dict({"name": "probe", "kind": "dense", "width": width, "position": {"axes": axes},
                              "dense": {"generators": generators}})


def _skew(rng, n: int) -> list:
    m = rng.integers(-4, 5, (n, n))
    m = m - m.T
    return [[f"{int(v)}/4" for v in row] for row in m]


def _matrix(rows) -> sp.Matrix:
    return sp.Matrix([[sp.Rational(v) for v in row] for row in rows])


def _non_commuting_pairs() -> list:
    out = [([[0, 0, 0], [0, 0, -1], [0, 1, 0]], [[0, 0, 1], [0, 0, 0], [-1, 0, 0]])]  # so(3): rotations about x, y
    rng = np.random.default_rng(32)
    while len(out) < 8:
        n = int(rng.integers(3, 6))
        a, b = _skew(rng, n), _skew(rng, n)
        if _matrix(a) * _matrix(b) != _matrix(b) * _matrix(a):
            out.append((a, b))
    return out


NON_COMMUTING = _non_commuting_pairs()


@pytest.mark.parametrize("index", range(len(NON_COMMUTING)))
def test_non_commuting_generators_are_never_proved_relative(index):
    a, b = NON_COMMUTING[index]
    results = {r.claim.name: r for r in check_variant(_dense([a, b], ["y", "x"]), only=["relative", "shift"])}
    for key in ("relative", "shift"):
        assert results[key].status in ("refuted", "unknown"), (key, results[key].reason)
    # the exact commutator is what the refusal to prove rests on: it is named
    assert "do not commute" in results["relative"].reason


NOT_SKEW = {
    # trace 1/10: det exp(A) = e^(1/10), never 1
    "a diagonal term": [[sp.Rational(1, 10), -1], [1, 0]],
    # symmetric: exp(A) is symmetric positive definite, not orthogonal
    "symmetric": [[0, sp.Rational(1, 2)], [sp.Rational(1, 2), 0]],
    # nilpotent: exp(A) = I + A, a shear
    "a shear": [[0, 1], [0, 0]],
    # skew plus a small symmetric part
    "nearly skew": [[0, -1, 0], [1, 0, sp.Rational(1, 100)], [0, 0, 0]],
}


def _norm_gap(generator: sp.Matrix, m: int, q: sp.Matrix):
    """``||exp(m A) q||^2 - ||q||^2``, exactly where SymPy has exp of the matrix (these small ones)."""
    r = (m * generator).exp()
    return sp.N((q.T * r.T * r * q)[0] - (q.T * q)[0], 30)


@pytest.mark.parametrize("case", sorted(NOT_SKEW))
def test_a_generator_that_is_not_skew_is_refuted_norm_preserving(case):
    rows = NOT_SKEW[case]
    variant = Variant.from_dict({"name": "probe", "kind": "dense", "width": len(rows),
                                 "dense": {"generator": [[str(v) for v in row] for row in rows]}})
    (norm,) = check_variant(variant, only=["norm"])
    assert norm.status == "refuted", norm.reason
    part = next(p for p in norm.proof.parts if p.status == "refuted")
    m = int(part.witness[sp.Symbol("m")])
    q = sp.zeros(len(rows), 1)
    for symbol in part.witness[sp.Symbol("q")].free_symbols:
        q[int(symbol.name.split("_")[1])] += 1
    assert abs(_norm_gap(sp.Matrix(rows), m, q)) > 1e-20


def test_commuting_skew_generators_are_proved_control():
    """Every commuting skew pair is proved (control): the decider does not refuse dense files wholesale."""
    for speeds in itertools.product((1, 2), ("1/2", 3)):
        a = [[0, f"-{speeds[0]}", 0, 0], [f"{speeds[0]}", 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
        b = [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, f"-({speeds[1]})"], [0, 0, f"{speeds[1]}", 0]]
        results = {r.claim.name: r.status for r in check_variant(_dense([a, b], ["y", "x"]),
                                                                 only=["norm", "relative", "shift"])}
        assert results == {"norm": "proved", "relative": "proved", "shift": "proved"}
