"""Ctrl-C on the command line: one line and exit code 130, never a traceback, wherever it lands.

Three stretches of a command's life:

- *starting* (SymPy, NumPy and the rest being imported): ``symproof/__init__.py``
  calls :func:`quiet_interrupt_while_starting` as its first statement, before
  any heavy import, so a Ctrl-C there prints ``symproof: interrupted`` and
  exits 130 at once (nothing has been written yet);
- *running*: :func:`symproof._cli.main` calls :func:`restore_interrupt`, so
  Ctrl-C raises ``KeyboardInterrupt``, ``finally`` blocks remove temporary
  files, and ``main`` prints ``symproof COMMAND: interrupted`` and returns 130;
- *finishing* (after ``main`` returns, until the interpreter exits): ``main``
  puts the quick handler back, which flushes what was printed and exits 130.

A package's ``__init__`` runs before any of its submodules, so the console
script (``symproof._cli:main``) and ``python -m symproof`` both reach that
first statement before anything heavy.  The handler is installed only when
symproof is started as a command, never for a library user, and never over a
SIGINT that is ignored (``symproof ... &`` in a script) or that an embedding
program handles.  A SIGINT held back because the starting process had it
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

_command = False  # set once the quick handler was installed for a command


def _started_as_command() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    # python -m symproof: argv[0] is "-m" while the package is imported
    return argv0 == "-m" or os.path.basename(argv0) in ("symproof", "symproof.exe", "__main__.py") \
        and "symproof" in argv0


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


def _install_quick_handler() -> None:
    try:
        if signal.getsignal(signal.SIGINT) not in (signal.default_int_handler, _interrupted_outside_the_command):
            return  # ignored, or someone else's handler: theirs to keep
        signal.signal(signal.SIGINT, _interrupted_outside_the_command)
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    except (ValueError, OSError):  # not the main thread: leave signals alone
        pass


def quiet_interrupt_while_starting() -> None:
    """Install the quick handler if symproof was started as a command (see the module docstring)."""
    global _command
    if _started_as_command():
        _command = True
        _install_quick_handler()


def restore_interrupt() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt``, so that cleanup code runs."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_outside_the_command:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass


def quiet_interrupt_when_done() -> None:
    """After the command: Ctrl-C until the process exits is the quick handler again (commands only)."""
    if _command:
        _install_quick_handler()
