"""A bound on the CPU time of a piece of work: past it, the work is abandoned with a clear reason.

Structural bounds (file size, width, digits, exponents, value sizes, let depth)
keep every *input* small; the prover can still meet a small statement that
takes it a very long time (a product of a dozen cosines, nested ``exp``).
:func:`cpu_budget` raises :class:`BudgetExhausted` from a ``SIGPROF`` timer
once the process has used ``seconds`` of CPU time inside the block.  CPU
time, not wall time, so that a machine busy with other work does not turn a
decided property into an unknown one.  The CPU time of the child processes the
work waited for (a C compiler, say) counts too: it is added when the block
ends, and work that used more than its budget in all is abandoned then, so a
budget too small for the work never returns a verdict, whoever did the work.
The timer fires again every 10 ms after the budget is spent: an exception
raised inside a callback that swallows it (a destructor run by the garbage
collector) must not leave the block unbounded.  ``BudgetExhausted`` derives from
``BaseException`` so that no ``except Exception`` on the way swallows it.
Only the command line sets budgets (signals belong to the main thread).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from contextlib import contextmanager

try:
    import resource
except ImportError:  # not on Windows, where no timer is armed either (no setitimer)
    resource = None

__all__ = ["BudgetExhausted", "cpu_budget"]


class BudgetExhausted(BaseException):
    """The CPU-time budget of the enclosing :func:`cpu_budget` block is used up."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what
        super().__init__(f"{what}: the budget of {seconds:g} s of CPU time is used up")


def _children_cpu() -> float:
    if resource is None:
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _own_cpu() -> float:
    if resource is None:
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: the code that leaves a block (this module's and contextlib's): the timer is not let interrupt it
_LEAVING = frozenset({__file__, contextlib.__file__})

#: after the budget is spent, the timer fires again this often until the block is left
_REFIRE_SECONDS = 0.01


@contextmanager
def cpu_budget(seconds: float | None, what: str):
    """Run the block with at most ``seconds`` of CPU time, its waited-for children's included
    (``None``: no bound)."""
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def exhausted(signum, frame):
        # not while the block is being left: the ``finally`` below disarms the timer and must run
        if frame is not None and frame.f_code.co_filename in _LEAVING:
            return
        raise BudgetExhausted(seconds, what)

    try:
        seconds_f = min(float(seconds), 1e6)
    except OverflowError:  # 10**400: larger than any timer, so the cap
        seconds_f = 1e6
    previous = signal.signal(signal.SIGPROF, exhausted)
    try:  # capped: the timer cannot be armed for 1e12 s, and the handler must go back then too
        signal.setitimer(signal.ITIMER_PROF, max(seconds_f, 1e-3), _REFIRE_SECONDS)
    except (ValueError, OverflowError, TypeError):
        signal.signal(signal.SIGPROF, previous)
        yield
        return
    own, children = _own_cpu(), _children_cpu()
    try:
        yield
        spent = (_own_cpu() - own) + (_children_cpu() - children)
        if spent > seconds_f:
            raise BudgetExhausted(seconds, what)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
