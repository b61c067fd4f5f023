"""A bound on the CPU time of a piece of work: past it, the work is abandoned with a clear reason.

Verdicts never depend on time: the prover's budgets count steps
(:mod:`symproof.prover._budget`), the same on every machine.  CPU time bounds
what is not a verdict: loading a file (:func:`cpu_budget`, past which the file
is refused with :class:`BudgetExhausted`) and the safety stop of ``symproof
check --time-limit`` (:func:`cpu_time_limit`, past which the check stops with
:class:`TimeLimitExceeded`: no verdict for the property it names, never an
*unknown*).  Both raise from a ``SIGPROF`` timer once the process has used
``seconds`` of CPU time inside the block.  The CPU time of the child processes
the work waited for (a C compiler, say) counts too: it is added when the block
ends, and work that used more than its limit in all is abandoned then, whoever
did the work.  The timer fires again every 10 ms after the limit is spent: an
exception raised inside a callback that swallows it (a destructor run by the
garbage collector) must not leave the block unbounded.  Both exceptions derive
from ``BaseException`` so that no ``except Exception`` on the way swallows
them.  Only the main thread arms the timer (signals belong to it); elsewhere
the block runs unbounded.
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

__all__ = ["BudgetExhausted", "TimeLimitExceeded", "cpu_budget", "cpu_time_limit"]


class BudgetExhausted(BaseException):
    """The CPU-time budget of the enclosing :func:`cpu_budget` block is used up."""

    def __init__(self, seconds: float, what: str):
        self.seconds, self.what = seconds, what
        super().__init__(f"{what}: the budget of {seconds:g} s of CPU time is used up")


class TimeLimitExceeded(BaseException):
    """A time limit stopped the work: there is no verdict, and none is made up.

    Time limits are safety stops (``symproof check --time-limit``, ``prove_equal(timeout=...)``):
    verdicts depend on the step budget only, so a limit that fires never turns one answer into
    another; it ends the work, and the caller says so.  A ``BaseException``, like
    ``KeyboardInterrupt``, so that no ``except Exception`` on the way (SymPy's, a tactic's) turns
    the stop into an answer.
    """

    def __init__(self, seconds: float | None, what: str, clock: str = "CPU"):
        self.seconds, self.what, self.clock = seconds, what, clock
        kind = "CPU time" if clock == "CPU" else "wall time"
        limit = "" if seconds is None else f" of {seconds:g} s of {kind}"
        super().__init__(f"stopped: {what} exceeded the time limit{limit}; no verdict")


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


def cpu_time_limit(seconds: float | None, what: str):
    """:func:`cpu_budget` as a safety stop: past ``seconds`` of CPU time the block is left with
    :class:`TimeLimitExceeded` (no verdict) instead of :class:`BudgetExhausted`."""
    return cpu_budget(seconds, what, stop=True)


@contextmanager
def cpu_budget(seconds: float | None, what: str, *, stop: bool = False):
    """Run the block with at most ``seconds`` of CPU time, its waited-for children's included
    (``None``: no bound); past it, :class:`BudgetExhausted` (``stop``: :class:`TimeLimitExceeded`)."""
    error = TimeLimitExceeded if stop else BudgetExhausted
    usable = (seconds is not None and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def exhausted(signum, frame):
        # not while the block is being left: the ``finally`` below disarms the timer and must run
        if frame is not None and frame.f_code.co_filename in _LEAVING:
            return
        raise error(seconds, what)

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
            raise error(seconds, what)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
