"""The time budget of one ``prove_equal`` call.

Two layers, because neither alone is enough:

* a cooperative deadline, checked between tactics, witness candidates, matrix
  entries and blocks (:func:`check`): cheap, safe anywhere, but blind while a
  single SymPy call runs long (``Sum.doit`` on a hard summand, an ``expand``
  of a huge power);
* a hard stop through ``signal.setitimer(ITIMER_REAL)`` when the call runs on
  the main thread and no other timer is armed: the handler raises
  :class:`BudgetExhausted` inside whatever SymPy is doing.  Off the main thread
  (signals cannot be delivered there) only the cooperative layer works.

Nothing is started that could outlive the call: no thread, no process; the
timer and the previous ``SIGALRM`` handler are restored on the way out.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

__all__ = ["BudgetExhausted", "check", "budget", "remaining"]


class BudgetExhausted(BaseException):
    """Raised inside the prover when its time budget is spent (never escapes ``prove_equal``).

    A ``BaseException``, so that the ``except Exception`` clauses inside SymPy
    (and the prover's own "this point is not a witness") do not swallow it.
    """


_state = threading.local()


def _deadline():
    return getattr(_state, "deadline", None)


def remaining() -> float | None:
    deadline = _deadline()
    return None if deadline is None else deadline - time.monotonic()


def check() -> None:
    """Raise :class:`BudgetExhausted` when the current budget is spent."""
    deadline = _deadline()
    if deadline is not None and time.monotonic() > deadline:
        raise BudgetExhausted


def _alarm(signum, frame):
    raise BudgetExhausted


@contextmanager
def budget(seconds: float | None):
    """Run the body under a deadline of ``seconds`` (``None``: no limit).

    Nested budgets keep the earlier deadline: an inner call cannot extend it.
    """
    outer = _deadline()
    if seconds is None:
        yield
        return
    deadline = time.monotonic() + seconds
    if outer is not None:
        deadline = min(deadline, outer)
    _state.deadline = deadline
    armed, previous = False, None
    if outer is None and threading.current_thread() is threading.main_thread():
        if signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            try:
                previous = signal.signal(signal.SIGALRM, _alarm)
                # a little after the cooperative deadline: the checks between steps stop
                # the work cleanly when they can, the alarm only when they cannot
                signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.0) + 0.05)
                armed = True
            except ValueError:  # not allowed here (an embedded interpreter)
                armed = False
    try:
        yield
    finally:
        _state.deadline = outer
        if armed:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            finally:  # even when the alarm fires just now: the handler is put back
                signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
