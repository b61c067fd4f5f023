"""Section 7.2: every claim is proved by running it, and perturbed statements are refuted."""

import pytest
import sympy as sp
from sympy import IndexedBase, Sum, cos, sin

from symproof import frequencies, frequency, load_claims, prove_equal, rotation, run_claim, sin_shift
from symproof import sinusoidal_vector

CLAIMS = load_claims()

SECTION_7_2 = [
    "abs.learned_additive", "abs.scale_statistics", "sin.definition", "sin.frequencies_decrease", "sin.norm",
    "sin.table_d4", "sin.angle_sum", "sin.shift_matrix", "sin.shift_block", "sin.inner_product",
    "sin.score_expansion", "sin.finite_precision",
]


@pytest.mark.parametrize("claim_id", SECTION_7_2)
def test_claim_is_proved(claim_id):
    result = run_claim(CLAIMS[claim_id])
    assert result.status == "proved", result.reason


def test_table_d4_is_recorded_and_checked_entry_by_entry():
    proof = run_claim(CLAIMS["sin.table_d4"]).proof
    assert len([p for p in proof.parts if p.kind == "digits"]) == 16
    assert proof.tables and len(proof.tables[0]["rows"]) == 4


def test_finite_precision_records_the_measured_table_and_rechecks_collisions():
    proof = run_claim(CLAIMS["sin.finite_precision"]).proof
    assert {row[0] for row in proof.tables[0]["rows"]} >= {"float32", "float16", "bfloat16"}
    rechecked = [p.rule.split(":")[0] for p in proof.parts if p.kind == "check" and "p_t == p_(t+1)" in p.rule]
    assert {"float32", "float16", "bfloat16"} <= set(rechecked)


# -- perturbed statements must be refuted ----------------------------------------------------------

t, D, D1, D2 = sp.symbols("t D D1 D2", integer=True)
i, j = sp.symbols("i j", integer=True)
w = sp.Symbol("w", positive=True)
x = sp.Symbol("x", real=True)
r = sp.Symbol("r", integer=True, nonnegative=True)
m = sp.Symbol("m", integer=True, positive=True)
beta, d = sp.Symbol("beta", positive=True), sp.Symbol("d", integer=True, positive=True)
omega = IndexedBase("omega", positive=True)


def s(position, freq=w):
    return sinusoidal_vector(position, [freq])


MUTATIONS = {
    "sin.angle_sum with the sign of the second term flipped":
        (sin((t + D) * w), sin(t * w) * cos(D * w) - cos(t * w) * sin(D * w)),
    "sin.angle_sum for cos with a plus sign": (cos((t + D) * w), cos(t * w) * cos(D * w) + sin(t * w) * sin(D * w)),
    "sin.shift_matrix with R(Dw) instead of A(Dw) = R(Dw)^T": (rotation(D * w) * s(t), s(t + D)),
    "A(x) = R(x) (anticlockwise)": (sin_shift(x), rotation(x)),
    "sin.shift_block: A(D1 w) A(D2 w) = A((D1 - D2) w)": (sin_shift(D1 * w) * sin_shift(D2 * w), sin_shift((D1 - D2) * w)),
    "sin.shift_block: A(Dw)^T A(Dw) = A(2Dw)": (sin_shift(D * w).T * sin_shift(D * w), sin_shift(2 * D * w)),
    "sin.norm: ||p_t||^2 = d for d = 8": ((s(t).T * s(t))[0] * 4, 8),
    "sin.norm, symbolic d = 2m: sum of sin^2 + cos^2 is 2m":
        (Sum(sin(t * omega[r]) ** 2 + cos(t * omega[r]) ** 2, (r, 0, m - 1)), 2 * m),
    "sin.inner_product with cos((j + i) w)": ((s(i).T * s(j))[0], cos((j + i) * w)),
    "sin.inner_product is odd in j - i": ((s(i).T * s(j))[0], -cos((i - j) * w)),
    "sin.frequencies_decrease: the ratio is beta^(-1/d)":
        (frequency(r + 1, d, beta) / frequency(r, d, beta), beta ** (-sp.Integer(1) / d)),
    "sin.definition: sin and cos swapped in a pair": (sinusoidal_vector(t, frequencies(4)),
                                                      sp.Matrix([f(t * q) for q in frequencies(4) for f in (cos, sin)])),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_perturbed_statement_is_refuted(name):
    lhs, rhs = MUTATIONS[name]
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "refuted", str(verdict)


def test_score_expansion_with_a_dropped_cross_term_is_refuted():
    A = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"a{a}{b}", real=True))
    xi, xj = sp.Matrix(sp.symbols("x0 x1", real=True)), sp.Matrix(sp.symbols("y0 y1", real=True))
    full = ((xi + s(i)).T * A * (xj + s(j)))[0]
    dropped = (xi.T * A * xj + xi.T * A * s(j) + s(i).T * A * s(j))[0]
    assert prove_equal(full, dropped).status == "refuted"


def test_table_digits_with_a_wrong_sign_convention_fail():
    from symproof.claims import Proof

    proof = Proof(CLAIMS["sin.table_d4"])
    # cos-first layout would put cos(2) where the chapter prints sin(2)
    part = proof.digits("p_2,0 with cos first", cos(2), "0.909297")
    assert part.status == "refuted"
    assert proof.digits("p_2,1 sign flipped", cos(2), "0.416147").status == "refuted"


# -- the widest models, through the same block structure -----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", ["sin.norm", "sin.shift_block"])
def test_block_claims_hold_at_width_4096(monkeypatch, claim_id):
    """``symproof verify`` checks concrete widths up to MAX_WIDTH for speed; the tests go to 4096."""
    import symproof._derivations.sec7_2_absolute_positions as sec

    monkeypatch.setattr(sec, "MAX_WIDTH", 4096)
    sec.width_blocks.cache_clear()
    sec.block_frequencies.cache_clear()
    try:
        result = run_claim(CLAIMS[claim_id])
        assert result.status == "proved", result.reason
        wide = [p for p in result.proof.parts if "4096" in p.rule]
        assert wide and all(p.status == "proved" for p in wide)
    finally:
        sec.width_blocks.cache_clear()
        sec.block_frequencies.cache_clear()
