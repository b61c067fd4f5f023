"""Settings for the whole suite."""

from __future__ import annotations

import signal


def pytest_configure(config):
    # A test run started in the background of a script (`pytest &`, `nohup`, some CI harnesses) has
    # SIGINT ignored, and every child it starts inherits that: the Ctrl-C tests would then see their
    # command rightly ignore the signal.  Run as from a terminal, where Python's own handler is in place
    # (children start with SIGINT at its default).  The test of an ignored SIGINT sets it in its child.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
