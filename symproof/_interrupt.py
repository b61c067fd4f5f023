"""Ctrl-C on the command line: one line and exit code 130, never a traceback.

While the command is running, :func:`symproof._cli.main` turns
``KeyboardInterrupt`` into that line (after ``finally`` blocks have removed
any temporary file).  Before it runs, while SymPy and NumPy are imported,
nothing has been written yet, so an interrupt simply ends the process; this
handler is installed only when symproof is started as a command
(``python -m symproof`` or the ``symproof`` script), never for a library user.
"""

from __future__ import annotations

import os
import signal
import sys

__all__ = ["quiet_interrupt_while_starting", "restore_interrupt", "INTERRUPTED"]

#: the shell's convention for a command ended by SIGINT (128 + 2)
INTERRUPTED = 130


def _started_as_command() -> bool:
    argv0 = sys.argv[0] if sys.argv else ""
    # python -m symproof: argv[0] is "-m" while the package is imported
    return argv0 == "-m" or os.path.basename(argv0) in ("symproof", "symproof.exe", "__main__.py") \
        and "symproof" in argv0


def _interrupted_while_starting(signum, frame):
    try:
        os.write(2, b"symproof: interrupted\n")
    finally:
        os._exit(INTERRUPTED)


def quiet_interrupt_while_starting() -> None:
    if not _started_as_command():
        return
    try:
        signal.signal(signal.SIGINT, _interrupted_while_starting)
    except (ValueError, OSError):  # not the main thread: leave signals alone
        pass


def restore_interrupt() -> None:
    """From here on Ctrl-C raises ``KeyboardInterrupt``, so that cleanup code runs."""
    try:
        if signal.getsignal(signal.SIGINT) is _interrupted_while_starting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    except (ValueError, OSError):
        pass
