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

import math
from numbers import Real

from .._ground._errors import InvalidInputError

__all__ = ["BudgetExhausted", "check", "budget", "remaining", "validate_timeout", "MAX_TIMEOUT"]

#: budgets above this many seconds (about 11 days) are this many seconds: the platform's timer
#: cannot be armed much further (``setitimer(ITIMER_REAL, 1e12)`` raises ``OverflowError``)
MAX_TIMEOUT = 10.0**6


def validate_timeout(timeout):
    """``timeout`` as a float number of seconds (``None``: no limit), checked before anything else:
    a positive finite real, capped at :data:`MAX_TIMEOUT` (``10**400`` and ``1e12`` run with that
    cap); a negative number, zero, ``nan``, ``inf`` or a non-number is refused (``None`` is the
    way to ask for no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, Real):
        raise InvalidInputError(f"timeout must be a positive number of seconds or None, got {timeout!r:.80}")
    try:
        positive = timeout > 0
    except TypeError:
        positive = False
    if not positive or (isinstance(timeout, float) and not math.isfinite(timeout)):
        raise InvalidInputError(f"timeout must be a positive number of seconds or None, got {timeout!r:.80}")
    return MAX_TIMEOUT if timeout >= MAX_TIMEOUT else float(timeout)


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


#: code an alarm must not interrupt: it swallows the exception (a gc callback of a test
#: framework) or is reporting one (``traceback``); the timer fires again 50 ms later
_FOREIGN = ("/_pytest/", "/hypothesis/", "/pluggy/", "traceback.py", "warnings.py")


def _alarm(signum, frame):
    filename = frame.f_code.co_filename if frame is not None else ""
    if any(part in filename for part in _FOREIGN):
        return
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
            except ValueError:  # not allowed here (an embedded interpreter)
                previous = None
            else:
                try:
                    # a little after the cooperative deadline: the checks between steps stop
                    # the work cleanly when they can, the alarm only when they cannot
                    # and again every 50 ms: an alarm raised inside a callback that swallows
                    # exceptions (a gc callback) must not leave the call unbounded
                    signal.setitimer(signal.ITIMER_REAL, min(max(seconds, 0.0), MAX_TIMEOUT) + 0.05, 0.05)
                    armed = True
                except (ValueError, OverflowError):  # the handler goes back at once
                    signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    try:
        yield
    finally:
        _state.deadline = outer
        if armed:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            finally:  # even when the alarm fires just now: the handler is put back
                signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
