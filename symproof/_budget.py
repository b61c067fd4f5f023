"""A bound on the CPU time of a piece of work: past it, the work is abandoned with a clear reason.

Structural bounds (file size, width, digits, exponents, value sizes, let depth)
keep every *input* small; the prover can still meet a small statement that
takes it a very long time (a product of a dozen cosines, nested ``exp``).
:func:`cpu_budget` raises :class:`BudgetExhausted` from a ``SIGPROF`` timer
once the process has used ``seconds`` of CPU time inside the block.  CPU
time, not wall time, so that a machine busy with other work does not turn a
decided property into an unknown one.  ``BudgetExhausted`` derives from
``BaseException`` so that no ``except Exception`` on the way swallows it.
Only the command line sets budgets (signals belong to the main thread).
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

__all__ = ["BudgetExhausted", "cpu_budget"]


class BudgetExhausted(BaseException):
    """The CPU-time budget of the enclosing :func:`cpu_budget` block is used up."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what
        super().__init__(f"{what}: the budget of {seconds:g} s of CPU time is used up")


@contextmanager
def cpu_budget(seconds: float | None, what: str):
    """Run the block with at most ``seconds`` of CPU time (``None``: no bound)."""
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def exhausted(signum, frame):
        signal.setitimer(signal.ITIMER_PROF, 0)
        raise BudgetExhausted(seconds, what)

    try:
        seconds_f = min(float(seconds), 1e6)
    except OverflowError:  # 10**400: larger than any timer, so the cap
        seconds_f = 1e6
    previous = signal.signal(signal.SIGPROF, exhausted)
    try:  # capped: the timer cannot be armed for 1e12 s, and the handler must go back then too
        signal.setitimer(signal.ITIMER_PROF, max(seconds_f, 1e-3))
    except (ValueError, OverflowError, TypeError):
        signal.signal(signal.SIGPROF, previous)
        yield
        return
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
