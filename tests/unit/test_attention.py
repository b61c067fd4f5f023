"""Exact symbolic attention: permutation matrices, masked softmax, and its refusals."""

import pytest
import sympy as sp

from symproof import InvalidInputError, MaskedRowError
from symproof.encodings import (
    causal_mask, permutation_matrix, permute_rows_and_columns, self_attention, softmax_rows,
)

x0, x1, s00, s01, s10, s11 = sp.symbols("x0 x1 s00 s01 s10 s11", real=True)
S = sp.Matrix([[s00, s01], [s10, s11]])


@pytest.mark.parametrize("perm, moved_rows", [
    ([0, 1, 2], [0, 1, 2]),
    ([2, 0, 1], [2, 0, 1]),
    ([1, 0, 2], [1, 0, 2]),
])
def test_row_i_of_PX_is_row_perm_i_of_X(perm, moved_rows):
    X = sp.Matrix([[10], [11], [12]])
    assert list(permutation_matrix(perm) * X) == [10 + k for k in moved_rows]


@pytest.mark.parametrize("bad", [[0, 0], [1, 2], [0, 1.5], "01", [True, False]])
def test_not_a_permutation_is_refused(bad):
    with pytest.raises(InvalidInputError):
        permutation_matrix(bad)


def test_index_permutation_equals_P_M_Pt_for_a_finite_matrix():
    perm = [1, 0]
    P = permutation_matrix(perm)
    assert permute_rows_and_columns(S, perm) == P * S * P.T


def test_permuting_a_mask_by_indices_keeps_minus_infinity():
    assert permute_rows_and_columns(causal_mask(2), [1, 0]) == sp.Matrix([[0, 0], [-sp.oo, 0]])


@pytest.mark.parametrize("mask, expected", [
    (None, sp.Matrix([[sp.exp(s00), sp.exp(s01)], [sp.exp(s10), sp.exp(s11)]])),
    (causal_mask(2), sp.Matrix([[1, 0], [sp.exp(s10), sp.exp(s11)]])),
])
def test_softmax_rows_normalises_each_row_over_its_allowed_entries(mask, expected):
    A = softmax_rows(S, mask)
    for i in range(2):
        total = sum(expected[i, :])
        for j in range(2):
            assert sp.simplify(A[i, j] - expected[i, j] / total) == 0


def test_forbidden_entries_are_exactly_zero():
    assert softmax_rows(S, causal_mask(2))[0, 1] == 0


def test_a_finite_mask_entry_is_an_additive_bias():
    b = sp.Symbol("b", real=True)
    A = softmax_rows(S, sp.Matrix([[b, 0], [0, 0]]))
    assert A[0, 0] == sp.exp(s00 + b) / (sp.exp(s00 + b) + sp.exp(s01))


def test_an_all_forbidden_row_raises_naming_the_row():
    mask = sp.Matrix([[0, -sp.oo], [-sp.oo, -sp.oo]])
    with pytest.raises(MaskedRowError, match="row 1 of the attention mask forbids every position") as info:
        softmax_rows(S, mask)
    assert info.value.context["row"] == 1


@pytest.mark.parametrize("entry", [sp.oo, sp.nan, sp.I])
def test_a_mask_entry_that_is_not_0_minus_infinity_or_finite_real_is_refused(entry):
    with pytest.raises(InvalidInputError, match=r"mask entry \(0, 1\)"):
        softmax_rows(S, sp.Matrix([[0, entry], [0, 0]]))


def test_mask_shape_must_match_the_scores():
    with pytest.raises(InvalidInputError, match="the mask has shape"):
        softmax_rows(S, causal_mask(3))


def test_causal_mask_is_lower_triangular():
    assert causal_mask(3) == sp.Matrix([[0, -sp.oo, -sp.oo], [0, 0, -sp.oo], [0, 0, 0]])
    with pytest.raises(InvalidInputError):
        causal_mask(0)


def test_self_attention_scales_scores_by_sqrt_dk():
    X = sp.Matrix([[1], [0]])
    both = sp.Matrix([[1, 1]])  # d_k = 2: the score of token 0 with itself is 2 / sqrt(2)
    out = self_attention(X, both, both, sp.Matrix([[1]]))
    assert sp.simplify(out[0, 0] - sp.exp(sp.sqrt(2)) / (sp.exp(sp.sqrt(2)) + 1)) == 0


def test_self_attention_rejects_mismatched_weights():
    X = sp.Matrix([[x0, x1]])
    with pytest.raises(InvalidInputError, match="W_K has 1 rows but X has 2 columns"):
        self_attention(X, sp.eye(2), sp.Matrix([[1]]), sp.eye(2))


def test_numeric_attention_rows_are_convex_combinations_of_values():
    X = sp.Matrix([[0], [1]])
    out = self_attention(X, sp.Matrix([[1]]), sp.Matrix([[1]]), sp.Matrix([[1]]))
    assert out[0, 0] == sp.Rational(1, 2)
    assert sp.simplify(out[1, 0] - sp.E / (1 + sp.E)) == 0
