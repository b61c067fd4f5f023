"""Ctrl-C on the command line: one line and exit code 130, never a traceback, wherever it lands.

This is the command line's business only: importing symproof never touches signals.  The
command's :func:`symproof._face._cli.main`, run as the program (the console script, ``python -m
symproof``), goes through three stretches:

- *starting* (SymPy, NumPy and the rest being imported): ``main`` calls
  :func:`quiet_interrupt_while_starting` as its first statement, before any heavy import
  (``symproof/__init__.py`` and ``symproof._face._cli`` import only the standard library), so a Ctrl-C
  there prints ``symproof: interrupted`` and exits 130 at once (nothing has been written yet);
- *running*: ``main`` calls :func:`restore_interrupt`, so Ctrl-C raises ``KeyboardInterrupt``,
  ``finally`` blocks remove temporary files, and ``main`` prints ``symproof COMMAND: interrupted``
  and returns 130; SIGTERM (a CI step's timeout, ``kill``, a container stopping) is handled the
  same way: :class:`Terminated`, a ``KeyboardInterrupt``, runs the same clean-up, and ``main``
  prints ``symproof COMMAND: terminated`` and returns 143;
- *finishing* (after ``main`` returns, until the interpreter exits): ``main`` puts the quick
  handler back, which flushes what was printed and exits 130.

The handler is never installed over a SIGINT that is ignored (``symproof ... &`` in a script) or
that an embedding program handles.  A SIGINT held back because the starting process had it
blocked is let through once the handler is in place.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["quiet_interrupt_while_starting", "restore_interrupt", "quiet_interrupt_when_done", "INTERRUPTED",
           "TERMINATED", "Terminated", "interruption"]

#: the shell's convention for a command ended by SIGINT (128 + 2)
INTERRUPTED = 130
#: ... and by SIGTERM (128 + 15)
TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: a ``KeyboardInterrupt``, so every clean-up written for Ctrl-C runs for it too."""


def _terminated(signum, frame):
    raise Terminated


def interruption(err: KeyboardInterrupt) -> tuple:
    """``(word, exit code)`` for a command ended by ``err``: Ctrl-C or SIGTERM."""
    return ("terminated", TERMINATED) if isinstance(err, Terminated) else ("interrupted", INTERRUPTED)


_MESSAGE = b"symproof: interrupted\n"


def _interrupted_outside_the_command(signum, frame):
    try:
        for stream in (sys.stdout, sys.stderr):  # what a finished command printed is kept
            try:
                stream.flush()
            except Exception:  # a write it interrupted, or a closed pipe: nothing more to save
                pass
        os.write(2, _MESSAGE)
    finally:
        os._exit(INTERRUPTED)


def quiet_interrupt_while_starting() -> None:
    """Ctrl-C exits at once with one line (see the module docstring); for the command's ``main`` only."""
    try:
        if signal.getsignal(signal.SIGINT) not in (signal.default_int_handler, _interrupted_outside_the_command):
            return  # ignored, or someone else's handler: theirs to keep
        signal.signal(signal.SIGINT, _interrupted_outside_the_command)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    except (ValueError, OSError):  # not the main thread: leave signals alone
        pass


def restore_interrupt() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt`` and SIGTERM :class:`Terminated`, so that cleanup
    code runs (SIGTERM only where nobody ignores or handles it already)."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_outside_the_command:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _terminated)
    except (ValueError, OSError):
        pass


def quiet_interrupt_when_done() -> None:
    """After the command, until the process exits: Ctrl-C is the quick exit again, SIGTERM ends the
    process at once again."""
    quiet_interrupt_while_starting()
    try:
        if signal.getsignal(signal.SIGTERM) is _terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except (ValueError, OSError):
        pass
