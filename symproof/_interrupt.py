"""Ctrl-C on the command line: one line and exit code 130, never a traceback, wherever it lands.

This is the command line's business only: importing symproof never touches signals.  The
command's :func:`symproof._cli.main`, run as the program (the console script, ``python -m
symproof``), goes through three stretches:

- *starting* (SymPy, NumPy and the rest being imported): ``main`` calls
  :func:`quiet_interrupt_while_starting` as its first statement, before any heavy import
  (``symproof/__init__.py`` and ``symproof._cli`` import only the standard library), so a Ctrl-C
  there prints ``symproof: interrupted`` and exits 130 at once (nothing has been written yet);
- *running*: ``main`` calls :func:`restore_interrupt`, so Ctrl-C raises ``KeyboardInterrupt``,
  ``finally`` blocks remove temporary files, and ``main`` prints ``symproof COMMAND: interrupted``
  and returns 130;
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

__all__ = ["quiet_interrupt_while_starting", "restore_interrupt", "quiet_interrupt_when_done", "INTERRUPTED"]

#: the shell's convention for a command ended by SIGINT (128 + 2)
INTERRUPTED = 130
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
    """From here on Ctrl-C raises ``KeyboardInterrupt``, so that cleanup code runs."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_outside_the_command:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def quiet_interrupt_when_done() -> None:
    """After the command, until the process exits: Ctrl-C is the quick exit again."""
    quiet_interrupt_while_starting()
