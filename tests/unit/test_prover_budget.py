"""The budget and the no-escape rule of ``prove_equal``, by fault injection.

A tactic is replaced by one that raises; the call must still answer *unknown*
with the reason, and leave no timer or signal handler behind.  The step budget
and the time limit (a stop, not an answer) are tested in ``test_step_budget.py``.
"""

import signal

import pytest
import sympy as sp
from sympy import cos, sin

from symproof import InvalidInputError, prove_equal
from symproof.prover import _prove, _sums, _witness

x = sp.Symbol("x", real=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True)

FAULTS = [
    pytest.param(_prove, "to_trig_polynomial", AttributeError("'NoneType' object has no attribute 'evalf'"),
                 (cos(x) ** 2, 1 - sin(x) ** 2), id="canonical form raises AttributeError"),
    pytest.param(_prove, "find_witness", ZeroDivisionError("division by zero"),
                 (cos(x), sin(x)), id="witness search raises ZeroDivisionError"),
    pytest.param(_prove, "_prove_blockwise", KeyError("block"),
                 (sp.BlockDiagMatrix(sp.eye(2), sp.eye(2)), sp.BlockDiagMatrix(sp.eye(2), 2 * sp.eye(2))),
                 id="blockwise raises KeyError"),
    pytest.param(_sums, "_proposal", TypeError("unsupported operand"),
                 (sp.Sum(k, (k, 0, n)), n * (n + 1) / 2), id="sum table raises TypeError"),
    pytest.param(_prove, "_canonical", RecursionError("maximum recursion depth exceeded"),
                 (cos(x) ** 2, 1 - sin(x) ** 2), id="canonical form recurses too deeply"),
    pytest.param(_witness, "evaluate_at", MemoryError(),
                 (cos(x), sin(x)), id="evaluation runs out of memory"),
]


@pytest.mark.parametrize("module, name, error, statement", FAULTS)
def test_a_failing_tactic_gives_unknown_with_its_reason(monkeypatch, module, name, error, statement):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(module, name, broken)
    verdict = prove_equal(*statement)
    assert not verdict.proved
    if verdict.status == "unknown":
        assert verdict.reason


def test_the_reason_names_the_internal_failure(monkeypatch):
    def broken(*args, **kwargs):
        raise AttributeError("'Integral' object has no attribute '_eval_evalf'")

    monkeypatch.setattr(_prove, "to_trig_polynomial", broken)
    verdict = prove_equal(cos(x) ** 2, 1 - sin(x) ** 2)
    assert verdict.status == "unknown"
    assert verdict.reason.startswith("a tactic failed internally (AttributeError:")


def test_an_untouched_call_still_decides():
    assert prove_equal(cos(x) ** 2, 1 - sin(x) ** 2).proved
    assert prove_equal(cos(x), sin(x)).refuted


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "10", True])
def test_a_bad_timeout_is_refused(timeout):
    with pytest.raises(InvalidInputError, match="timeout must be a positive number of seconds or None"):
        prove_equal(x, x, timeout=timeout)


def test_no_budget_means_no_timer():
    assert prove_equal(cos(x) ** 2, 1 - sin(x) ** 2, timeout=None).proved
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_proof_whose_certificate_is_rejected_is_not_returned_as_proved(monkeypatch):
    from symproof.checker import Certificate

    real = _prove._trig_certificate

    def forged(lhs, rhs, canonical):
        certificate = real(lhs, rhs, canonical)
        return Certificate(certificate.kind, certificate.lhs, certificate.rhs + 1, certificate.data)

    monkeypatch.setattr(_prove, "_trig_certificate", forged)
    verdict = prove_equal(cos(x) ** 2, 1 - sin(x) ** 2)
    assert verdict.status == "unknown"
    assert verdict.reason.startswith("the proof's certificate was rejected by the checker")
    assert prove_equal(cos(x) ** 2, 1 - sin(x) ** 2, check=False).proved  # the forgery, unchecked
