"""The fields of a ``Verdict`` and its ``Step`` records, for each status."""

import pytest
import sympy as sp
from sympy import cos, sin

from symproof import Step, Verdict, prove_equal
from symproof.prover import PROVED, REFUTED, TACTICS, UNKNOWN

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True)


def test_a_proof_records_its_method_and_checked_steps():
    verdict = prove_equal(cos(x) ** 4 - sin(x) ** 4, cos(2 * x))
    assert isinstance(verdict, Verdict)
    assert (verdict.status, verdict.method) == (PROVED, "trig-polynomial")
    assert verdict.proved and not verdict.refuted and bool(verdict)
    assert verdict.witness is None and verdict.residual is None and verdict.reason == ""
    assert verdict.lhs == cos(x) ** 4 - sin(x) ** 4 and verdict.rhs == cos(2 * x)
    assert verdict.steps and all(isinstance(s, Step) for s in verdict.steps)
    last = verdict.steps[-1]
    assert "reduce mod c_u^2 + s_u^2 - 1" in last.rule
    assert last.before == cos(x) ** 4 - sin(x) ** 4 - cos(2 * x)
    assert last.after == 0


def test_a_refutation_carries_an_exact_witness_and_residual():
    verdict = prove_equal(sp.sqrt(x**2), x)
    assert (verdict.status, verdict.method) == (REFUTED, "witness")
    assert verdict.refuted and not verdict.proved and not bool(verdict)
    assert verdict.witness == {x: -1}
    (symbol, value), = verdict.witness.items()
    assert isinstance(symbol, sp.Symbol) and isinstance(value, sp.Integer)
    assert verdict.residual == 2
    assert verdict.witness_text() == "{x: -1}"
    assert str(verdict) == "refuted by witness at {x: -1} (lhs - rhs = 2)"
    assert verdict.steps[-1].rule == "evaluate at {x: -1}" and verdict.steps[-1].after == 2


def test_witness_values_are_exact_never_floats():
    verdict = prove_equal(sin(x) ** 2 + cos(x) ** 2 + sp.Rational(1, 10**30), 1)
    assert verdict.witness == {x: 0}
    assert verdict.residual == sp.Rational(1, 10**30)
    assert not any(v.has(sp.Float) for v in verdict.witness.values())


def test_unknown_says_why_and_has_no_witness():
    verdict = prove_equal(sp.gamma(x + 1), x * sp.gamma(x))
    assert verdict.status == UNKNOWN and not verdict
    assert verdict.witness is None and verdict.residual is None
    assert verdict.reason == ("outside the decidable class (canonical form is non-zero) "
                              "and no witness was found")
    assert str(verdict).startswith("unknown by trig-polynomial: outside the decidable class")


def test_structural_equality_is_one_step():
    verdict = prove_equal(sin(sp.pi * n), 0)
    assert verdict.method == "structural"
    assert verdict.steps == (Step("identical expressions", 0, 0),)


def test_a_matrix_refutation_names_the_entry():
    a, b = sp.symbols("a b", real=True)
    verdict = prove_equal(sp.Matrix([[cos(a), 0], [0, 1]]), sp.Matrix([[cos(b), 0], [0, 1]]))
    assert verdict.refuted
    assert verdict.reason == "entry (0, 0) differs"
    assert verdict.witness == {a: 1, b: 0}


def test_a_blockwise_proof_reports_its_generic_blocks():
    from sympy import MatMul, Transpose

    from symproof import rope_matrix

    i, j = sp.symbols("i j", integer=True)
    ws = sp.symbols("w0:6", positive=True)
    verdict = prove_equal(MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws)), rope_matrix(j - i, ws))
    assert verdict.proved and verdict.method == "blockwise"
    assert verdict.details == {"blocks": 6, "generic_blocks": 1}


def test_tactics_are_named_in_the_order_they_are_tried():
    assert TACTICS == ("structural", "power", "summand-first", "trig-polynomial", "blockwise", "witness")


@pytest.mark.parametrize("field", ["status", "method", "lhs", "rhs", "steps", "witness", "residual", "reason"])
def test_verdict_is_immutable(field):
    verdict = prove_equal(x, x)
    with pytest.raises(AttributeError):
        setattr(verdict, field, None)
