"""Generated trig-polynomial identities: true ones proved, perturbed ones refuted.

Each case comes from a fixed seed, so a failure is reproducible by its id.  A
true identity pairs a random polynomial in ``cos``/``sin`` of integer
combinations of ``x, y`` with SymPy's ``expand_trig`` of it, with ``cos^2``
traded for ``1 - sin^2`` where it appears: the same function written in other
atoms.  A false one adds ``k cos(a x + b y)`` or ``k sin(a x + b y)``
(``k != 0``, ``(a, b) != (0, 0)``), which is not the zero function, so the
prover must refute it with a certified witness.
"""

import random

import pytest
import sympy as sp
from sympy import cos, sin

from symproof import prove_equal, rotation
from symproof.prover import is_certainly_nonzero

x, y = sp.symbols("x y", real=True)
SEEDS = range(30)


def _argument(rng):
    a, b = 0, 0
    while (a, b) == (0, 0):
        a, b = rng.randint(-3, 3), rng.randint(-2, 2)
    return a * x + b * y


def _polynomial(rng):
    terms = []
    for _ in range(rng.randint(1, 3)):
        factors = [rng.choice((cos, sin))(_argument(rng)) ** rng.randint(1, 2) for _ in range(rng.randint(1, 2))]
        terms.append(rng.choice((-3, -2, -1, 1, 2, 3)) * sp.Mul(*factors))
    return sp.Add(*terms)


def _rewritten(expr):
    expanded = sp.expand(sp.expand_trig(expr))
    return expanded.subs({cos(x) ** 2: 1 - sin(x) ** 2, cos(y) ** 2: 1 - sin(y) ** 2})


def _true_case(seed):
    rng = random.Random(seed)
    lhs = _polynomial(rng)
    return lhs, _rewritten(lhs)


def _false_case(seed):
    rng = random.Random(1000 + seed)
    lhs = _polynomial(rng)
    perturbation = rng.choice((-2, -1, 1, 2)) * rng.choice((cos, sin))(_argument(rng))
    return lhs, _rewritten(lhs) + perturbation


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed={s}")
def test_generated_true_identity_is_proved(seed):
    lhs, rhs = _true_case(seed)
    verdict = prove_equal(lhs, rhs)
    assert verdict.proved, f"{lhs} = {rhs}: {verdict}"


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"seed={s}")
def test_generated_false_identity_is_refuted(seed):
    lhs, rhs = _false_case(seed)
    verdict = prove_equal(lhs, rhs)
    assert verdict.refuted, f"{lhs} = {rhs}: {verdict}"
    assert set(verdict.witness) <= {x, y}
    residual = (lhs - rhs).xreplace(verdict.witness)
    assert is_certainly_nonzero(residual) and sp.N(residual, 30) != 0


@pytest.mark.parametrize("seed", SEEDS[:10], ids=lambda s: f"seed={s}")
def test_generated_rotation_products(seed):
    rng = random.Random(2000 + seed)
    angles = [rng.randint(-3, 3) * x + rng.randint(-3, 3) * y for _ in range(rng.randint(2, 3))]
    product = sp.Mul(*[rotation(a) for a in angles])
    assert prove_equal(product, rotation(sum(angles))).proved
    flipped = rotation(sum(angles[:-1]) - angles[-1])
    if sp.expand(angles[-1]) != 0:
        assert prove_equal(product, flipped).refuted
