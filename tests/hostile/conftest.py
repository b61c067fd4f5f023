"""Helpers shared by the hostile-input tests: drive the real command, judge its one-line answer."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

#: generous: a guard against a hang, far above the 10 s every command must end within
COMMAND_TIMEOUT = 120


def symproof(*args, cwd=None, timeout=COMMAND_TIMEOUT, stdin=subprocess.DEVNULL, env=None):
    """Run ``python -m symproof ARGS`` as a user would; the completed process (text mode)."""
    return subprocess.run([sys.executable, "-m", "symproof", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, stdin=stdin, env={**os.environ, **(env or {})},
                          errors="replace")


def assert_one_line_error(done, *words, code=2):
    """Exit ``code``, exactly one line on stderr naming ``words``, no traceback, no control character."""
    lines = done.stderr.splitlines()
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr[-3000:]
    assert lines[0].startswith("symproof "), lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert all(ch == "\t" or ch >= " " for ch in lines[0]), repr(lines[0])  # no control character echoed
    return lines[0]


@pytest.fixture
def cc():
    import shutil

    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("needs a C compiler (gcc)")
    return compiler
