"""Section 7.1: every claim is proved by running it, and perturbed statements are refuted."""

import pytest
import sympy as sp

from symproof import load_claims, prove_equal, run_claim
from symproof.encodings import causal_mask, permutation_matrix, permute_rows_and_columns, self_attention

CLAIMS = load_claims()

SECTION_7_1 = [
    "perm.orthogonal", "perm.equivariance_vs_invariance", "perm.bag_of_tokens", "attn.equivariance",
    "attn.masked_equivariance", "attn.causal_mask_breaks_equivariance",
    "attn.additive_positions_break_equivariance",
]


@pytest.mark.parametrize("claim_id", SECTION_7_1)
def test_claim_is_proved(claim_id):
    result = run_claim(CLAIMS[claim_id])
    assert result.status == "proved", result.reason


def test_not_in_general_claims_carry_checked_witnesses():
    for claim_id in ("attn.causal_mask_breaks_equivariance", "attn.additive_positions_break_equivariance"):
        parts = [p for p in run_claim(CLAIMS[claim_id]).proof.parts if p.kind == "differ"]
        assert parts and all(p.status == "proved" and p.witness is not None for p in parts)


def test_the_masked_row_error_is_recorded():
    parts = run_claim(CLAIMS["attn.masked_equivariance"]).proof.parts
    raised = [p for p in parts if p.kind == "raises"]
    assert raised and all("MaskedRowError" in p.detail and "row 1" in p.detail for p in raised)


# -- perturbed statements must be refuted ---------------------------------------------------------

def _symbols(name, rows, cols):
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}{i}{j}", real=True))


X2 = _symbols("x", 2, 1)
W1 = [sp.Matrix([[sp.Symbol(n, real=True)]]) for n in ("q", "k", "v")]
X3 = _symbols("x", 3, 2)
W = _symbols("w", 2, 2)
SWAP = permutation_matrix([1, 0])
CYCLE = permutation_matrix([1, 2, 0])
ONES3 = sp.Matrix([1, 1, 1])

MUTATIONS = {
    "P P = I for a 3-cycle (transpose dropped)": (CYCLE * CYCLE, sp.eye(3)),
    "a weighted row sum is invariant": (sp.Matrix([[1, 2, 3]]) * (CYCLE * X3), sp.Matrix([[1, 2, 3]]) * X3),
    "(PX)W = P^T (XW) (wrong side of the permutation)": ((CYCLE * X3) * W, CYCLE.T * (X3 * W)),
    "F(PX) = F(X) (equivariance confused with invariance)": (self_attention(SWAP * X2, *W1), self_attention(X2, *W1)),
    "F(PX; L) = P F(X; L) with the causal mask not permuted":
        (self_attention(SWAP * X2, *W1, mask=causal_mask(2)), SWAP * self_attention(X2, *W1, mask=causal_mask(2))),
    "F(PX; P L P^T) = F(X; L) (output not permuted)":
        (self_attention(SWAP * X2, *W1, mask=permute_rows_and_columns(causal_mask(2), [1, 0])),
         self_attention(X2, *W1, mask=causal_mask(2))),
    "1^T X counts each row twice": (ONES3.T * (CYCLE * X3), 2 * ONES3.T * X3),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_perturbed_statement_is_refuted(name):
    lhs, rhs = MUTATIONS[name]
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "refuted", str(verdict)
    assert verdict.witness is not None


def test_the_correct_statements_behind_the_mutations_are_proved():
    assert prove_equal(CYCLE.T * CYCLE, sp.eye(3)).proved
    assert prove_equal((CYCLE * X3) * W, CYCLE * (X3 * W)).proved
    assert prove_equal(self_attention(SWAP * X2, *W1), SWAP * self_attention(X2, *W1)).proved
