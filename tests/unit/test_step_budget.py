"""The step budget: verdicts that depend on the statement and the budget only, never on the machine.

The prover counts steps at its check points; a statement that needs more than its budget is *unknown*
("step budget of N steps exhausted"), at the same step on every run.  A time limit is a safety stop:
when it fires, the work ends with :class:`symproof.TimeLimitExceeded` (no verdict), never with an
answer.  No timing is asserted: a slow machine is simulated by clocks that run fast.
"""

from __future__ import annotations

import itertools
import signal
import threading
import time

import pytest
import sympy as sp
from sympy import cos, sin

import symproof
from symproof import InvalidInputError, prove_equal
from symproof.prover import _budget, _prove
from symproof.variants import check_variant, load_variant, shipped_variants

x, y = sp.symbols("x y", real=True)

#: statements with the verdict each gets within the default budget (proved, refuted, and an expansion)
STATEMENTS = {
    "Pythagoras": (cos(x) ** 2, 1 - sin(x) ** 2),
    "a wrong angle sum": (sin(x + y), sin(x) * cos(y) + sin(y) * cos(x) + sin(x) ** 3),
    "a fourth power": ((cos(x) + sin(y)) ** 4, sp.expand((cos(x) + sin(y)) ** 4)),
}


def _used(lhs, rhs, **kwargs):
    """The verdict of one call and the steps it counted."""
    with _budget.steps(None, "test") as frame:
        verdict = prove_equal(lhs, rhs, **kwargs)
    return verdict, frame.used


# -- the counter ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_the_same_statement_counts_the_same_steps(name):
    first, second = _used(*STATEMENTS[name]), _used(*STATEMENTS[name])
    assert first[0].status == second[0].status != "unknown"
    assert first[1] == second[1] > 0


@pytest.mark.parametrize("name", sorted(STATEMENTS))
def test_the_budget_is_exhausted_at_the_same_step(name):
    verdict, used = _used(*STATEMENTS[name])
    # exactly the steps it needs decide it; one fewer is unknown, naming the budget; every time
    assert prove_equal(*STATEMENTS[name], steps=used).status == verdict.status
    for _ in range(2):
        short = prove_equal(*STATEMENTS[name], steps=used - 1)
        assert (short.status, short.method) == ("unknown", "budget")
        assert short.reason.startswith(f"step budget of {used - 1} steps exhausted")


def test_an_expansion_counts_the_terms_it_builds():
    # one check point per power, but as many steps as the expansion has terms: a larger power cannot
    # hide its work behind a single step
    s = sum(cos(k * x) for k in range(1, 5))
    used = {}
    for n in (2, 8):
        verdict, used[n] = _used(s ** n, s ** (n - 1) * (s + sin(x) ** 2 + cos(x) ** 2 - 1))
        assert verdict.proved
    assert used[8] > 10 * used[2]
    short = prove_equal(s ** 8, s ** 7 * (s + sin(x) ** 2 + cos(x) ** 2 - 1), steps=used[8] // 2)
    assert (short.status, short.method) == ("unknown", "budget")


def test_nested_budgets_count_the_inner_steps_against_the_outer():
    lhs, rhs = STATEMENTS["Pythagoras"]
    _, used = _used(lhs, rhs)
    with _budget.steps(None, "outer") as outer:
        with _budget.steps(None, "inner") as inner:
            prove_equal(lhs, rhs)
        prove_equal(lhs, rhs)
    assert inner.used == used and outer.used == 2 * used


def test_an_inner_budget_cannot_extend_the_outer_one():
    lhs, rhs = STATEMENTS["Pythagoras"]
    _, used = _used(lhs, rhs)
    # the outer budget is spent inside prove_equal: the call does not answer for it, the outer block
    # ends, and it is the outer budget that is named
    with pytest.raises(_budget.StepBudgetExhausted) as spent:
        with _budget.steps(used - 1, "the outer work") as outer:
            prove_equal(lhs, rhs, steps=10 * used)
    assert spent.value.frame is outer
    assert str(spent.value) == f"the outer work: step budget of {used - 1} steps exhausted"


def test_the_outermost_spent_budget_is_the_one_reported():
    with pytest.raises(_budget.StepBudgetExhausted) as spent:
        with _budget.steps(5, "outer") as outer, _budget.steps(5, "inner"):
            for _ in range(6):
                _budget.check()
    assert spent.value.frame is outer


@pytest.mark.parametrize("steps", [0, -1, 1.5, 2e6, "100", True, 10**13])
def test_a_bad_step_budget_is_refused(steps):
    with pytest.raises(InvalidInputError, match="steps must be a whole number of prover steps"):
        prove_equal(x, x, steps=steps)


# -- the time limit is a stop, never an answer ------------------------------------------------------------


def _runs_on(*args, **kwargs):
    end = time.monotonic() + 60
    while time.monotonic() < end:
        sum(range(1000))  # pure Python work that never reaches a check point
    raise AssertionError("the time limit did not stop the tactic")


def test_a_time_limit_stops_the_call_without_a_verdict(monkeypatch):
    monkeypatch.setattr(_prove, "_canonical", _runs_on)
    handler = signal.getsignal(signal.SIGALRM)
    with pytest.raises(symproof.TimeLimitExceeded) as stop:
        prove_equal(cos(x) ** 2, 1 - sin(x) ** 2, timeout=0.2)
    assert str(stop.value) == "stopped: prove_equal exceeded the time limit of 0.2 s of wall time; no verdict"
    # nothing is left running: the timer is disarmed, the handler put back
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is handler


def test_off_the_main_thread_the_deadline_stops_the_search(monkeypatch):
    from symproof.prover import _witness

    def slow_points(*args, **kwargs):
        while True:
            time.sleep(0.01)
            yield {}

    monkeypatch.setattr(_witness, "_points", slow_points)
    out = {}

    def run():
        try:
            out["verdict"] = prove_equal(cos(x), sin(x) + 3, timeout=0.2)
        except symproof.TimeLimitExceeded as stop:
            out["stop"] = stop

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(30)
    assert not worker.is_alive()
    assert "verdict" not in out and out["stop"].seconds == 0.2


def test_a_time_limit_that_does_not_fire_changes_nothing():
    for lhs, rhs in STATEMENTS.values():
        assert prove_equal(lhs, rhs, timeout=3600).status == prove_equal(lhs, rhs).status


def test_a_check_stopped_by_its_time_limit_names_the_property_and_keeps_the_others(monkeypatch):
    from symproof.variants import _check

    variant = load_variant(shipped_variants()["xpos"])
    real = _check.run_claim

    def runs_on_for_shift(claim):
        if claim.name == "shift":
            end = time.process_time() + 60
            while time.process_time() < end:
                sum(range(1000))
        return real(claim)

    monkeypatch.setattr(_check, "run_claim", runs_on_for_shift)
    with pytest.raises(symproof.TimeLimitExceeded) as stop:
        check_variant(variant, time_limit=0.3, kernel_targets={"numpy"})
    assert "the shift property of xpos exceeded the time limit of 0.3 s of CPU time; no verdict" in str(stop.value)
    assert [r.claim.name for r in stop.value.results] == ["norm", "relative"]


def test_the_command_says_stopped_with_exit_3(monkeypatch, capsys):
    from symproof._face._cli import main
    from symproof.variants import _check

    real = _check.run_claim

    def runs_on(claim):
        end = time.process_time() + 60
        while time.process_time() < end:
            sum(range(1000))
        return real(claim)

    monkeypatch.setattr(_check, "run_claim", runs_on)
    assert main(["check", "xpos", "--time-limit", "0.2"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("symproof check: stopped: the norm property of xpos exceeded the time limit")
    assert "no verdict" in line and "unknown" not in line


@pytest.mark.parametrize("call, words", [
    (lambda: check_variant(load_variant(shipped_variants()["xpos"]), budget=5.0), "check_variant(budget=...)"),
    (lambda: symproof.check("xpos", budget=5), "check(budget=...)"),
])
def test_the_removed_seconds_budget_is_a_one_line_error_with_the_fix(call, words):
    with pytest.raises(InvalidInputError) as err:
        call()
    message = str(err.value)
    assert "\n" not in message and words in message and "steps" in message and "time_limit" in message


def test_the_removed_budget_option_is_a_one_line_error_with_the_fix(capsys):
    from symproof._face._cli import main

    assert main(["check", "xpos", "--budget", "5"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--budget SECONDS was removed" in line and "--steps N" in line and "--time-limit SECONDS" in line


# -- the verdicts do not depend on the machine ------------------------------------------------------------


class _FastClock:
    """A clock that runs 1000 times faster than the real one: every reading is a second later."""

    def __init__(self):
        self._ticks = itertools.count()

    def monotonic(self):
        return time.monotonic() + next(self._ticks)

    def __getattr__(self, name):
        return getattr(time, name)


def _on_a_slow_machine(monkeypatch):
    """Every clock the prover and the check read runs fast: a machine a thousand times slower, or
    one so loaded that the check gets a thousandth of a core."""
    from symproof._ground import _budget as cpu

    monkeypatch.setattr(_budget, "time", _FastClock())
    spent = itertools.count(step=1000)
    monkeypatch.setattr(cpu, "_own_cpu", lambda: float(next(spent)))


def _verdicts(path):
    return {r.claim.name: (r.status, r.reason) for r in check_variant(load_variant(path), kernel_targets={"numpy"})}


#: shipped variants whose verdicts are compared on a fast and a slow machine (the whole list: slow.txt)
SAME_VERDICTS = ["xpos", "rope_mixed", "self_extend"]


@pytest.mark.parametrize("name", SAME_VERDICTS)
def test_a_slow_machine_gives_the_same_verdicts(monkeypatch, name):
    path = shipped_variants()[name]
    idle = _verdicts(path)
    _on_a_slow_machine(monkeypatch)
    assert _verdicts(path) == idle


def _every_variant():
    from pathlib import Path

    published = Path(__file__).resolve().parents[1] / "variants" / "published"
    return sorted(shipped_variants().values()) + sorted(str(p) for p in published.glob("*.toml")
                                                        if p.stem != "cope")


@pytest.mark.parametrize("path", _every_variant(), ids=lambda p: p.rsplit("/", 1)[-1])
def test_every_shipped_and_published_variant_gets_the_same_verdicts_on_a_slow_machine(monkeypatch, path):
    idle = _verdicts(path)
    _on_a_slow_machine(monkeypatch)
    assert _verdicts(path) == idle
