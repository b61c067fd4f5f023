"""Section 7.3 (RoPE): every claim is proved, perturbed statements are refuted, and a wrong
definition makes its claim fail."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sp
from sympy import ImmutableMatrix, Matrix, cos, sin
from sympy.matrices.expressions import BlockDiagMatrix, MatMul, Transpose

from symproof import prove_equal, rope_matrix, rotation, run_claim

IDS = ["rope.rotation", "rope.orthogonal", "rope.compose", "rope.relative", "rope.inner_product",
       "rope.score_expansion", "rope.shift_invariance", "rope.block_relative", "rope.frequency_denominator",
       "rope.partial", "rope.pairing_permutation", "rope.algorithm_7_1", "rope.example"]

sec = importlib.import_module("symproof._derivations.sec7_3_rope")
a, b, th, z0, z1 = sec.a, sec.b, sec.th, sec.z0, sec.z1
q0, q1, k0, k1, i, j, c, D, w = sec.q0, sec.q1, sec.k0, sec.k1, sec.i, sec.j, sec.c, sec.D, sec.w
q, k, z = sec.q, sec.k, sec.z


# -- every claim of the section is proved -------------------------------------------------------

@pytest.mark.parametrize("claim_id", IDS)
def test_claim_is_proved(claims, claim_id):
    result = run_claim(claims[claim_id])
    assert result.status == "proved", result.reason
    assert result.proof.parts, "a proof must record checked steps"


@pytest.mark.parametrize("claim_id, rules", [
    ("rope.relative", ["entry products", "angle-difference formulas"]),
    ("rope.score_expansion", ["expand the 2x2 product", "group the cos and sin terms"]),
    ("rope.block_relative", ["block lemma (blocks 2 and 2)", "generic block", "d_k = 64: blockwise"]),
])
def test_steps_name_their_rule(claims, claim_id, rules):
    recorded = [part.rule for part in run_claim(claims[claim_id]).proof.parts]
    for rule in rules:
        assert any(rule in text for text in recorded), (rule, recorded)


@pytest.mark.parametrize("claim_id, rule_words", [
    ("rope.rotation", ["minus sign", "swapping the pair"]),
    ("rope.shift_invariance", ["frequency"]),
    ("rope.frequency_denominator", ["r = 1", "r = 15"]),
    ("rope.pairing_permutation", ["without re-laying"]),
    ("rope.algorithm_7_1", ["in-place"]),
])
def test_not_in_general_parts_carry_exact_witnesses(claims, claim_id, rule_words):
    parts = [p for p in run_claim(claims[claim_id]).proof.parts if p.kind == "differ"]
    for words in rule_words:
        matching = [p for p in parts if words in p.rule]
        assert matching, (words, [p.rule for p in parts])
        assert all(p.status == "proved" and p.witness is not None for p in matching)


def test_block_relative_uses_one_generic_block_per_width(claims):
    parts = run_claim(claims["rope.block_relative"]).proof.parts
    for width in sec.CONCRETE_WIDTHS:
        (part,) = [p for p in parts if p.rule.startswith(f"d_k = {width}:")]
        assert part.method == "blockwise"
        assert part.verdict.details == {"blocks": width // 2, "generic_blocks": 1}


# -- perturbed statements are refuted by the prover ---------------------------------------------

_no_minus = Matrix([[cos(th), sin(th)], [sin(th), cos(th)]])
_half_freqs = sp.symbols("omega_0:2", positive=True)
_algorithm_z = [[list(sp.symbols("y0:6", real=True))]]
_algorithm_m = [[sp.Symbol("m", integer=True)]]

MUTANTS = [
    ("rope.rotation", rotation(th) * z, _no_minus * z),
    ("rope.rotation", rotation(th) * z, Matrix([z0 * cos(th) - z1 * sin(th), z1 * sin(th) + z0 * cos(th) + z1])),
    ("rope.orthogonal", rotation(th).T * rotation(th), 2 * sp.eye(2)),
    ("rope.orthogonal", rotation(th).det(), cos(th) ** 2),
    ("rope.compose", rotation(a) * rotation(b), rotation(a - b)),
    ("rope.relative", rotation(a).T * rotation(b), rotation(a - b)),
    ("rope.relative", rotation(a).T * rotation(b), rotation(a + b)),
    ("rope.inner_product", sec.score(i, j, w), sec.relative_form(i - j, w)),
    ("rope.score_expansion", sec.relative_form(D, w),
     (q0 * k0 + q1 * k1) * cos(D * w) + (q0 * k1 - q1 * k0) * sin(D * w)),
    ("rope.score_expansion", sec.relative_form(D, w), (q0 * k0 + q1 * k1) * cos(D * w)),
    ("rope.shift_invariance", sec.score(i + c, j + c, w), sec.score(i, j + c, w)),
    ("rope.block_relative", sec.block_relative_sides(8)[0], rope_matrix(i - j, sec.frequency_symbols(4))),
    ("rope.partial", (Matrix(sp.symbols("u0:6")).T * sec.partial_rope_matrix(j - i, _half_freqs, 6).as_explicit()
                      * Matrix(sp.symbols("v0:6")))[0],
     (Matrix(sp.symbols("u0:4")).T * rope_matrix(j - i, _half_freqs).as_explicit() * Matrix(sp.symbols("v0:4")))[0]),
    ("rope.algorithm_7_1", Matrix(sec.rope_algorithm_7_1_in_place(_algorithm_z, _algorithm_m, 4, _half_freqs)[0][0]),
     sec.partial_rope_matrix(_algorithm_m[0][0], _half_freqs, 6).as_explicit() * Matrix(_algorithm_z[0][0])),
]


@pytest.mark.parametrize("claim_id, lhs, rhs", MUTANTS, ids=[f"{m[0]}-{n}" for n, m in enumerate(MUTANTS)])
def test_perturbed_statement_is_refuted(claim_id, lhs, rhs):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "refuted", str(verdict)
    assert verdict.witness is not None


def test_perturbed_block_statement_is_refuted_blockwise():
    freqs = sec.frequency_symbols(32)
    verdict = prove_equal(MatMul(Transpose(rope_matrix(i, freqs)), rope_matrix(j, freqs)), rope_matrix(i - j, freqs))
    assert verdict.status == "refuted"
    assert verdict.method == "blockwise"


def test_pairing_without_the_permutation_is_refuted():
    zv = Matrix(sp.symbols("x0:8", real=True))
    m = sp.Symbol("m", integer=True)
    freqs = sec.frequencies(8)
    perm = sec.pairing_permutation(8, "adjacent", "half")
    Q = Matrix(8, 8, lambda row, col: int(perm[row] == col))
    assert prove_equal(sec.rotate_pairs(Q * zv, m, freqs, "half"), Q * sec.rotate_pairs(zv, m, freqs)).proved
    assert prove_equal(sec.rotate_pairs(zv, m, freqs, "half"), Q * sec.rotate_pairs(zv, m, freqs)).refuted


def test_wrong_printed_digits_are_refuted(claims):
    from symproof.claims import Proof

    proof = Proof(claims["rope.example"])
    exact_with_transpose = (rotation(1).T * Matrix([1, 2])).T * (rotation(3).T * Matrix([3, -1]))
    assert proof.digits("R^T convention", exact_with_transpose[0], "5.948935").status == "refuted"
    assert proof.digits("two units off", 3 * sin(3) - cos(3), "1.413351", rounding="truncated").status == "refuted"
    assert proof.digits("cut, as the chapter prints it", 3 * sin(3) - cos(3), "1.413352",
                        rounding="truncated").status == "proved"
    assert proof.digits("cut is not rounded", 3 * sin(3) - cos(3), "1.413352").status == "refuted"


# -- a wrong definition makes its claim fail ----------------------------------------------------

def _clockwise(theta):
    return rotation(theta).T


def _no_relayout(weights, n_heads, src="adjacent", dst="half"):
    return np.array(weights)


def _reflections(m, freqs):
    """Blocks [[cos, sin], [sin, cos]]: the minus sign dropped, not a rotation."""
    return BlockDiagMatrix(*[ImmutableMatrix([[cos(m * f), sin(m * f)], [sin(m * f), cos(m * f)]]) for f in freqs])


def _forgets_the_copy(Z, I, d_r, freqs):
    out = sec.rope_algorithm_7_1(Z, I, d_r, freqs)
    return [[row[:d_r] + [0] * (len(row) - d_r) for row in sample] for sample in out]


def _copy_everything(Z, I, d_r, freqs):
    return [[list(row) for row in sample] for sample in Z]


@pytest.mark.parametrize("claim_id, name, broken", [
    ("rope.example", "rotation", _clockwise),
    ("rope.pairing_permutation", "relayout_pairing", _no_relayout),
    ("rope.algorithm_7_1", "rope_algorithm_7_1", sec.rope_algorithm_7_1_in_place),
    ("rope.algorithm_7_1", "rope_algorithm_7_1", _copy_everything),
    ("rope.algorithm_7_1", "rope_algorithm_7_1", _forgets_the_copy),
    ("rope.block_relative", "rope_matrix", _reflections),
])
def test_a_wrong_definition_makes_the_claim_fail(claims, monkeypatch, claim_id, name, broken):
    monkeypatch.setattr(sec, name, broken)
    result = run_claim(claims[claim_id])
    assert result.status != "proved"


def test_pairing_claim_fails_when_half_split_is_read_as_adjacent(claims, monkeypatch):
    original = sec.rotate_pairs

    def adjacent_always(vec, position, freqs, pairing="adjacent"):
        return original(vec, position, freqs, "adjacent")

    monkeypatch.setattr(sec, "rotate_pairs", adjacent_always)
    assert run_claim(claims["rope.pairing_permutation"]).status != "proved"


# -- the widest heads, through the same block structure -----------------------------------------

@pytest.mark.parametrize("width", [pytest.param(w, marks=pytest.mark.slow) if w > 1000 else w
                                   for w in sec.TESTED_WIDTHS])
def test_block_relative_at_wide_heads(width):
    verdict = prove_equal(*sec.block_relative_sides(width))
    assert verdict.status == "proved", str(verdict)
    assert verdict.method == "blockwise"
    assert verdict.details == {"blocks": width // 2, "generic_blocks": 1}
