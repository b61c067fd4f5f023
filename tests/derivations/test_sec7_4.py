"""Section 7.4 (RoPE gradients): every claim is proved, perturbed statements are refuted, and a
wrong derivative makes its claim fail."""

from __future__ import annotations

import importlib

import pytest
import sympy as sp
from sympy import Matrix, cos, sin
from sympy.matrices.expressions import BlockDiagMatrix

from symproof import prove_equal, rope_matrix, rotation, run_claim

IDS = ["grad.rotation_backward", "grad.frequency", "grad.score_not_monotone"]

sec = importlib.import_module("symproof._derivations.sec7_4_rope_gradients")
q0, q1, k0, k1, i, D, w = sec.q0, sec.q1, sec.k0, sec.k1, sec.i, sec.D, sec.w


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_is_proved(claims, claim_id):
    result = run_claim(claims[claim_id])
    assert result.status == "proved", result.reason
    assert result.proof.parts, "a proof must record checked steps"


def test_backward_is_derived_by_diff_then_chain_steps(claims):
    parts = run_claim(claims["grad.rotation_backward"]).proof.parts
    rules = [p.rule for p in parts]
    assert any(rule.startswith("chain rule") for rule in rules)
    assert any("R_i R_i^T = I" in rule for rule in rules)


# -- perturbed statements are refuted -----------------------------------------------------------

_freqs = sp.symbols("omega_0:2", positive=True)
_R = rope_matrix(i, _freqs).as_explicit()
_g = Matrix(sp.symbols("g0:4", real=True))
_score = (Matrix([q0, q1]).T * rotation(D * w) * Matrix([k0, k1]))[0]
_gradient = D * (-(q0 * k0 + q1 * k1) * sin(D * w) + (q1 * k0 - q0 * k1) * cos(D * w))

MUTANTS = [
    ("grad.rotation_backward: R_i g instead of R_i^T g", _R.T * _g, _R * _g),
    ("grad.rotation_backward: the norm doubles", ((_R.T * _g).T * (_R.T * _g))[0], 2 * (_g.T * _g)[0]),
    ("grad.frequency: without the factor D", sp.diff(_score, w), _gradient / D),
    ("grad.frequency: the sine term's sign flipped", sp.diff(_score, w),
     D * ((q0 * k0 + q1 * k1) * sin(D * w) + (q1 * k0 - q0 * k1) * cos(D * w))),
    ("grad.score_not_monotone: q = k = (1, 0) is not a decaying score",
     (Matrix([1, 0]).T * rotation(D * w) * Matrix([1, 0]))[0], sp.exp(-D * w)),
]


@pytest.mark.parametrize("name, lhs, rhs", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_perturbed_statement_is_refuted(name, lhs, rhs):
    verdict = prove_equal(lhs, rhs)
    assert verdict.status == "refuted", str(verdict)


def test_upstream_gradient_naming_reads_the_argument_position():
    loss, g = sp.Function("L"), sp.symbols("g0:2")
    x, y = sp.symbols("x y", real=True)
    named = sec.name_upstream_gradient(sp.diff(loss(2 * x + y, x - y), x), loss, g)
    assert named == 2 * g[0] + g[1]


# -- a wrong definition makes its claim fail ----------------------------------------------------

def _counter_clockwise_transposed(theta):
    return rotation(theta).T


def _monotone_score(offset, freq, q_vec=sec.q, k_vec=sec.k):
    return sp.exp(-offset * freq) * (q_vec.T * k_vec)[0]


@pytest.mark.parametrize("claim_id, name, broken", [
    ("grad.frequency", "rotation", _counter_clockwise_transposed),
    ("grad.score_not_monotone", "relative_score", _monotone_score),
])
def test_a_wrong_definition_makes_the_claim_fail(claims, monkeypatch, claim_id, name, broken):
    monkeypatch.setattr(sec, name, broken)
    assert run_claim(claims[claim_id]).status != "proved"


def test_backward_claim_fails_if_the_rotation_is_not_orthogonal(claims, monkeypatch):
    def scaled(m, freqs):
        return BlockDiagMatrix(*[2 * block for block in rope_matrix(m, freqs).diag])

    monkeypatch.setattr(sec, "rope_matrix", scaled)
    assert run_claim(claims["grad.rotation_backward"]).status != "proved"
