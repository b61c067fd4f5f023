"""Ctrl-C: one line and exit 130 wherever it lands, judged without depending on when the signal arrives.

The child is made to wait at a known point -- the first import of a module that is neither the
standard library's nor symproof's own (SymPy, NumPy...), or the first import of a module the command
loads itself -- and the signal is sent only once it is there.  A ``sitecustomize`` placed first on
the child's path installs that gate; the child announces the point over a pipe and blocks on another.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INTERRUPTED = 130

GATE = r'''
import os, sys

_WHERE = os.environ["GATE_AT"]
_READY, _HOLD = int(os.environ["GATE_READY_FD"]), int(os.environ["GATE_HOLD_FD"])
_PASS = {"symproof", "sitecustomize", "usercustomize"}  # symproof, and what site.py looks for


class _Gate:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if _WHERE == "heavy":
            hit = top not in sys.stdlib_module_names and top not in _PASS and not top.startswith("__editable")
        else:
            hit = name == _WHERE
        if hit:
            sys.meta_path.remove(self)
            os.write(_READY, name.encode() + b"\n")
            os.read(_HOLD, 1)  # never written: the child waits here for the signal
        return None


sys.meta_path.insert(0, _Gate())
'''

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

#: the console script's entry point as pyproject.toml declares it ("module:function")
ENTRY = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["symproof"]

# what pip writes for that entry point
SCRIPT = '''import re
import sys
from {module} import {function}
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit({function}())
'''.format(module=ENTRY.partition(":")[0], function=ENTRY.partition(":")[2])


def _default_sigint():
    """The child starts as a command typed at a terminal does: SIGINT at its default.  A test runner
    started in the background of a script (``pytest &``, a CI harness) has SIGINT ignored, and an
    ignored SIGINT is inherited: the command would rightly keep ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _launchers(tmp_path) -> dict:
    """How symproof is started: ``python -m symproof``, and the console script pip writes for it."""
    script = tmp_path / "bin" / "symproof"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!{sys.executable}\n" + SCRIPT, encoding="utf-8")
    return {"python -m symproof": [sys.executable, "-m", "symproof"], "console script": [sys.executable, str(script)]}


def _interrupt_at(tmp_path, launcher, args, where):
    """Start the command, wait until it reaches ``where``, send SIGINT; return (module, code, stderr)."""
    gate = tmp_path / "gate"
    gate.mkdir(exist_ok=True)
    (gate / "sitecustomize.py").write_text(GATE, encoding="utf-8")
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    env = {**os.environ, "GATE_AT": where, "GATE_READY_FD": str(ready_w), "GATE_HOLD_FD": str(hold_r),
           "PYTHONPATH": os.pathsep.join([str(gate), str(REPO)])}
    process = subprocess.Popen(_launchers(tmp_path)[launcher] + args, cwd=tmp_path, env=env,
                               pass_fds=(ready_w, hold_r), preexec_fn=_default_sigint, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    os.close(ready_w)
    os.close(hold_r)
    try:
        readable, _, _ = select.select([ready_r], [], [], 300)
        module = os.read(ready_r, 200).decode().strip() if readable else ""
        assert module, f"the child never reached {where}: {process.poll()}"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
        return module, process.returncode, err
    finally:
        process.kill() if process.poll() is None else None
        os.close(ready_r)
        os.close(hold_w)


def _assert_one_line(code, err, line):
    assert code == INTERRUPTED, (code, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    assert err.splitlines() == [line], err[-2000:]


@pytest.mark.parametrize("launcher", ["python -m symproof", "console script"])
def test_ctrl_c_before_the_first_heavy_import(tmp_path, launcher):
    """The handler is in place before anything outside the standard library is imported."""
    module, code, err = _interrupt_at(tmp_path, launcher, ["verify"], "heavy")
    assert not module.startswith("symproof")
    _assert_one_line(code, err, "symproof: interrupted")


# (command, a module only that command imports, the line)
WHILE_RUNNING = [
    (["check", "xpos"], "symproof.variants._check", "symproof check: interrupted"),
    (["report", "--only", "rope.relative", "--out", "out"], "symproof.report", "symproof report: interrupted"),
    (["examples"], "symproof._ground._examples", "symproof examples: interrupted"),
]


@pytest.mark.parametrize("args, where, line", WHILE_RUNNING, ids=[a[0] for a, _, _ in WHILE_RUNNING])
def test_ctrl_c_while_the_command_runs(tmp_path, args, where, line):
    module, code, err = _interrupt_at(tmp_path, "console script", args, where)
    assert module == where
    _assert_one_line(code, err, line)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _block_sigint():
    _default_sigint()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


#: from "at once" (before the interpreter is up) to well inside the command
DELAYS = (0.0, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0)


@pytest.mark.slow
@pytest.mark.parametrize("delay", DELAYS)
def test_ctrl_c_at_any_moment_is_one_line_and_130(tmp_path, delay):
    """Started with SIGINT blocked, a signal sent at any moment waits until symproof's handler takes it.

    The command never ends by itself (the audited file sleeps on import), so whatever the delay
    the signal lands somewhere between the first instruction and the user's code."""
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(600)\ndef f(x, positions):\n    return x\n",
                                      encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, str(_launchers(tmp_path)["console script"][1]), "audit",
                                "slow.py:f", "--like", "xpos"], cwd=tmp_path, env=env, preexec_fn=_block_sigint,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=300)
    finally:
        process.kill() if process.poll() is None else None
    assert err.splitlines() in (["symproof: interrupted"], ["symproof audit: interrupted"]), (delay, err[-2000:])
    assert process.returncode == INTERRUPTED, (delay, process.returncode)


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_an_ignored_sigint_stays_ignored(tmp_path):
    """``symproof ... &`` in a script starts with SIGINT ignored: Ctrl-C at the terminal is not for it."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "symproof", "verify", "rope.relative"], cwd=tmp_path, env=env,
                               preexec_fn=_ignore_sigint, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(5):
        time.sleep(0.2)
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-2000:]
    assert "rope.relative" in out and "interrupted" not in err
