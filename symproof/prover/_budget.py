"""The budgets of the prover: a deterministic step budget, and a time limit that only stops.

Two different things, kept apart on purpose:

* the **step budget** (:func:`steps`) decides when the prover gives up: every
  cooperative check point (:func:`check`) counts steps, between tactics, sum
  entries, matrix entries, blocks and witness candidates, and inside the
  trig-polynomial expansion (one step per ring term built, so that one check
  point cannot hide unbounded work).  A statement whose steps run past the
  budget is *unknown* with the reason "step budget of N steps exhausted".  The
  count depends on the statement and nothing else: the same statement gives the
  same verdict on a busy machine and an idle one, fast or slow.  Budgets nest:
  the steps of an inner budget count against every enclosing one, and an inner
  budget cannot extend an outer one (the outermost budget that is spent is the
  one reported).
* the **time limit** (:func:`time_limit`) is a safety stop and never an answer:
  when it fires, :class:`~symproof.TimeLimitExceeded` leaves the work
  (``prove_equal`` included) instead of a verdict.  A cooperative deadline is
  checked at the same check points, and on the main thread a
  ``signal.setitimer(ITIMER_REAL)`` timer interrupts a single long SymPy call
  (``Sum.doit`` on a hard summand, the ``expand`` of a huge power).  Off the
  main thread only the cooperative deadline works.

Nothing is started that could outlive the work: no thread, no process; the
timer and the previous ``SIGALRM`` handler are restored on the way out.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import contextmanager
from numbers import Integral, Real

from .._ground._budget import TimeLimitExceeded
from .._ground._errors import InvalidInputError

__all__ = ["StepBudgetExhausted", "TimeLimitExceeded", "check", "steps", "time_limit", "validate_timeout",
           "validate_steps", "MAX_TIMEOUT", "MAX_STEPS", "steps_spent"]

#: time limits above this many seconds (about 11 days) are this many seconds: the platform's timer
#: cannot be armed much further (``setitimer(ITIMER_REAL, 1e12)`` raises ``OverflowError``)
MAX_TIMEOUT = 10.0**6

#: the largest step budget accepted (far more than any statement symproof can decide needs)
MAX_STEPS = 10**12


def validate_timeout(timeout, name: str = "timeout"):
    """``timeout`` as a float number of seconds (``None``: no limit), checked before anything else:
    a positive finite real, capped at :data:`MAX_TIMEOUT` (``10**400`` and ``1e12`` run with that
    cap); a negative number, zero, ``nan``, ``inf`` or a non-number is refused (``None`` is the
    way to ask for no limit)."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, Real):
        raise InvalidInputError(f"{name} must be a positive number of seconds or None, got {timeout!r:.80}")
    try:
        positive = timeout > 0
    except TypeError:
        positive = False
    if not positive or (isinstance(timeout, float) and not math.isfinite(timeout)):
        raise InvalidInputError(f"{name} must be a positive number of seconds or None, got {timeout!r:.80}")
    return MAX_TIMEOUT if timeout >= MAX_TIMEOUT else float(timeout)


def validate_steps(count, name: str = "steps"):
    """``count`` as an int number of steps (``None``: no step budget): a whole number in
    [1, :data:`MAX_STEPS`]; a float, a bool, zero or a negative number is refused."""
    if count is None:
        return None
    if isinstance(count, bool) or not isinstance(count, Integral) or not 1 <= count <= MAX_STEPS:
        raise InvalidInputError(f"{name} must be a whole number of prover steps in [1, {MAX_STEPS}] or None, "
                                f"got {count!r:.80}")
    return int(count)


class StepBudgetExhausted(BaseException):
    """Raised at a check point once the steps of an enclosing :func:`steps` block are spent.

    A ``BaseException``, so that the ``except Exception`` clauses inside SymPy
    (and the prover's own "this point is not a witness") do not swallow it.
    ``frame`` is the budget that was spent (the outermost one, when several are).
    """

    def __init__(self, frame: "StepFrame"):
        self.frame = frame
        super().__init__(frame.message())


class StepFrame:
    """One :func:`steps` block: its limit, what it bounds, and (once left) the steps it used."""

    __slots__ = ("limit", "what", "start", "end", "used")

    def __init__(self, limit: int | None, what: str, start: int):
        self.limit, self.what, self.start = limit, what, start
        self.end = None if limit is None else start + limit
        self.used = None

    def message(self) -> str:
        return f"{self.what}: step budget of {self.limit} steps exhausted"


class _State(threading.local):
    #: steps counted on this thread so far (only differences matter)
    spent = 0
    #: the step count past which the innermost active budget is spent (the least end of all), or None
    end = None
    #: the active step budgets, outermost first
    frames: tuple = ()
    #: the time limit's cooperative deadline (``time.monotonic()``), its seconds and what it bounds
    deadline = None
    seconds = None
    what = ""


_state = _State()


def steps_spent() -> int:
    """The steps counted on this thread so far (a difference of two readings is the steps in between)."""
    return _state.spent


def check(cost: int = 1) -> None:
    """A check point: count ``cost`` steps, raise :class:`StepBudgetExhausted` when a step budget is
    spent and :class:`TimeLimitExceeded` when the time limit has passed."""
    state = _state
    spent = state.spent = state.spent + cost
    end = state.end
    if end is not None and spent > end:
        for frame in state.frames:  # the outermost spent budget: everything inside it is over
            if frame.end is not None and spent > frame.end:
                raise StepBudgetExhausted(frame)
    deadline = state.deadline
    if deadline is not None and time.monotonic() > deadline:
        raise TimeLimitExceeded(state.seconds, state.what)


@contextmanager
def steps(limit: int | None, what: str = "the statement"):
    """Run the body with at most ``limit`` steps counted at check points (``None``: no step bound of
    its own; the enclosing budgets still count).  Yields the :class:`StepFrame`; its ``used`` is set
    when the block is left, however it is left."""
    state = _state
    frame = StepFrame(limit, what, state.spent)
    outer_end, outer_frames = state.end, state.frames
    state.frames = outer_frames + (frame,)
    if frame.end is not None:
        state.end = frame.end if outer_end is None else min(outer_end, frame.end)
    try:
        yield frame
    finally:
        frame.used = state.spent - frame.start
        state.end, state.frames = outer_end, outer_frames


#: code an alarm must not interrupt: it swallows the exception (a gc callback of a test
#: framework) or is reporting one (``traceback``); the timer fires again 50 ms later
_FOREIGN = ("/_pytest/", "/hypothesis/", "/pluggy/", "traceback.py", "warnings.py")


def _alarm(signum, frame):
    filename = frame.f_code.co_filename if frame is not None else ""
    if any(part in filename for part in _FOREIGN):
        return
    raise TimeLimitExceeded(_state.seconds, _state.what, clock="wall")


@contextmanager
def time_limit(seconds: float | None, what: str = "prove_equal"):
    """Stop the body with :class:`TimeLimitExceeded` after ``seconds`` of wall time (``None``: no limit).

    Nested limits keep the earlier deadline: an inner call cannot extend it.
    """
    outer = state_deadline = _state.deadline
    if seconds is None:
        yield
        return
    deadline = time.monotonic() + seconds
    if outer is not None and outer <= deadline:
        deadline, seconds, what = outer, _state.seconds, _state.what  # the outer limit is the one that fires
    outer_seconds, outer_what = _state.seconds, _state.what
    _state.deadline, _state.seconds, _state.what = deadline, seconds, what
    armed, previous = False, None
    if state_deadline is None and threading.current_thread() is threading.main_thread():
        if signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            try:
                previous = signal.signal(signal.SIGALRM, _alarm)
            except ValueError:  # not allowed here (an embedded interpreter)
                previous = None
            else:
                try:
                    # a little after the cooperative deadline: the check points stop the work
                    # cleanly when they can, the alarm only when they cannot; and again every
                    # 50 ms: an alarm raised inside a callback that swallows exceptions (a gc
                    # callback) must not leave the call unbounded
                    signal.setitimer(signal.ITIMER_REAL, min(max(seconds, 0.0), MAX_TIMEOUT) + 0.05, 0.05)
                    armed = True
                except (ValueError, OverflowError):  # the handler goes back at once
                    signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    try:
        yield
    finally:
        _state.deadline, _state.seconds, _state.what = outer, outer_seconds, outer_what
        if armed:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            finally:  # even when the alarm fires just now: the handler is put back
                signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
