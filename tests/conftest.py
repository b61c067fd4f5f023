"""Settings for the whole suite."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest


def pytest_configure(config):
    # A test run started in the background of a script (`pytest &`, `nohup`, some CI harnesses) has
    # SIGINT ignored, and every child it starts inherits that: the Ctrl-C tests would then see their
    # command rightly ignore the signal.  Run as from a terminal, where Python's own handler is in place
    # (children start with SIGINT at its default).  The test of an ignored SIGINT sets it in its child.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# -- the slow tests ------------------------------------------------------------------------------------
# The README's test command runs the suite without the tests listed in tests/slow.txt (long
# property-based runs, real models end to end, whole-report renders); `.ci/run` runs them after it
# with `pytest -m slow`.  A list rather than decorators: the entries are chosen from measured
# durations, and one place shows them all.  An entry is a node id without its parameters (every
# case of the test) or with them (that case only).

SLOW_LIST = Path(__file__).with_name("slow.txt")


def slow_entries() -> frozenset:
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines() if SLOW_LIST.exists() else ()
    return frozenset(line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#"))


def _relative_id(item) -> str:
    return item.nodeid[len("tests/"):] if item.nodeid.startswith("tests/") else item.nodeid


def pytest_collection_modifyitems(config, items):
    entries = slow_entries()
    if not entries:
        return
    for item in items:
        node = _relative_id(item)
        if node in entries or node.split("[", 1)[0] in entries:
            item.add_marker(pytest.mark.slow)
    if config.getoption("markexpr"):
        return  # -m decides (`-m slow`: only these; `-m "slow or not slow"`: the whole suite)
    fast = [item for item in items if item.get_closest_marker("slow") is None]
    if not fast:
        return  # only slow tests were named: run them rather than select nothing (pytest's exit 5)
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = fast
