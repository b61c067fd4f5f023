"""The command line's CPU budget (``symproof._ground._budget.cpu_budget``): work past its budget is abandoned
whoever did the work, and a budget exception swallowed on the way does not leave the block unbounded."""

import signal
import subprocess
import sys
import time

import pytest

from symproof._ground._budget import BudgetExhausted, cpu_budget

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no CPU timer on this platform")

_BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_a_child_process_counts_against_the_budget():
    """The parent only waits (almost no CPU of its own); the child it waited for used 0.3 s."""
    with pytest.raises(BudgetExhausted, match="compile"):
        with cpu_budget(0.05, "compile"):
            subprocess.run([sys.executable, "-c", _BURN], check=True)


def test_work_within_the_budget_returns():
    with cpu_budget(30, "small"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        value = sum(range(1000))
    assert value == 499500


def test_a_swallowed_budget_exception_fires_again():
    """A handler that swallows the first exception (as a destructor run by the garbage collector
    does) cannot keep the work going: the timer fires again."""
    swallowed = 0
    with pytest.raises(BudgetExhausted):
        with cpu_budget(0.05, "stubborn"):
            for _ in range(100):
                try:
                    _burn(0.1)
                except BudgetExhausted:
                    swallowed += 1
                    if swallowed > 1:
                        raise
    assert swallowed == 2


def test_the_timer_and_handler_are_put_back():
    before = signal.getsignal(signal.SIGPROF)
    with pytest.raises(BudgetExhausted):
        with cpu_budget(0.02, "spent"):
            _burn(0.2)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGPROF) is before
    _burn(0.05)  # nothing fires afterwards
