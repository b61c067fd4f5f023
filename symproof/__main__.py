"""The ``symproof`` command: ``python -m symproof`` and the console script (``symproof.__main__:main``).

Ctrl-C is handled before anything else is imported: the command line's imports (argparse,
dataclasses, SymPy...) may take a Ctrl-C, and it must be one line and exit 130 (see
:mod:`._interrupt`).  So this file imports only :mod:`._interrupt` (standard library) at its top.
"""

import sys

from ._ground._interrupt import quiet_interrupt_while_starting


def main() -> int:
    """Run the command line with ``sys.argv``; the exit code."""
    quiet_interrupt_while_starting()
    from ._face._cli import main as run_command_line

    return run_command_line()


if __name__ == "__main__":
    sys.exit(main())
