"""A user's function cannot break the audit's promises: verdict, exit code, ``--json``, report paths, time.

Every case runs the real command in a fresh interpreter.  The audited code
runs in a child process; whatever it does (hang in Python or in C, swallow
the timeout, leave threads, ``os._exit``, ``atexit``, ``fork``, ``chdir``,
``KeyboardInterrupt``, a flood of output) changes at most the message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from audit_implementations import MODELS

# a right implementation of the "hf" model, and the same with the sign flipped (a 'differs' verdict)
_ROPE = '''
import numpy as np


def _rope(x, positions, sign):
    d = x.shape[-1]
    inv = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    f = np.asarray(positions)[..., None] * inv
    emb = np.concatenate([f, f], -1)
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * np.cos(emb) + sign * rot * np.sin(emb)
'''
_DIFFERS = "    return _rope(x, positions, -1)\n"
_SWALLOW = "    while True:\n        try:\n            time.sleep(100)\n        except BaseException:\n            pass\n"

#: (id, body of apply_rope(x, positions) or (module prelude, body), extra flags, exit code, in stderr,
#:  verdict of --json or None, most seconds)
CASES = [
    ("hang-swallowing-the-timeout", ("import time", _SWALLOW), ["--timeout", "2"], 2, "did not return within",
     None, 90),
    ("hang-in-c-code", ("import ctypes", "    ctypes.CDLL(None).sleep(1000)\n"), ["--timeout", "2"], 2,
     "did not return within", None, 90),
    ("hang-in-a-later-call", ("import time", "    if x.shape[0] > 10:\n        time.sleep(1000)\n" + _DIFFERS),
     ["--timeout", "2"], 2, "did not return within 2 s", None, 90),
    ("non-daemon-thread", ("import threading, time",
                           "    threading.Thread(target=time.sleep, args=(1000,)).start()\n" + _DIFFERS),
     [], 1, "", "differs", 120),
    ("os-exit-0", ("import os", "    os._exit(0)\n"), [], 2, "exited with status 0", None, 120),
    ("atexit-os-exit-0", ("import atexit, os\natexit.register(lambda: os._exit(0))", _DIFFERS), [], 1, "",
     "differs", 120),
    ("atexit-and-calls-print", ("import atexit\natexit.register(lambda: print('{not json'))\nprint('[import')",
                                "    print('{call')\n" + _DIFFERS), [], 1, "", "differs", 120),
    ("fork-prints", ("import os", "    if os.fork() == 0:\n        print('{forked', flush=True)\n"
                                  "        os._exit(0)\n" + _DIFFERS), [], 1, "", "differs", 120),
    ("keyboard-interrupt", ("", "    raise KeyboardInterrupt\n"), [], 2, "KeyboardInterrupt", None, 120),
    ("system-exit", ("import sys", "    sys.exit(0)\n"), [], 2, "SystemExit", None, 120),
    ("flood-of-output", ("import sys", "    sys.stdout.write('x' * 5_000_000)\n    sys.stderr.write('y' * 5_000_000)\n"
                                       + _DIFFERS), [], 1, "the rest is not shown", "differs", 120),
]


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}


def _run(args, cwd=None, timeout=300):
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", *map(str, args)], capture_output=True,
                         text=True, env=_env(), cwd=cwd, timeout=timeout)
    return run, time.monotonic() - start


@pytest.fixture
def like(tmp_path):
    path = tmp_path / "hf.toml"
    path.write_text(MODELS["hf"])
    return path


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_function(case, tmp_path, like):
    _, (prelude, body), flags, code, message, verdict, seconds = case
    path = tmp_path / "hostile.py"
    path.write_text(f"{prelude}\n{_ROPE}\n\ndef apply_rope(x, positions):\n{body}")
    run, elapsed = _run([f"{path}:apply_rope", "--like", like, "--json", *flags])
    assert run.returncode == code, run.stderr[-2000:]
    assert message in run.stderr
    assert elapsed < seconds
    if verdict is None:
        assert run.stdout == ""
        assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    else:
        document = json.loads(run.stdout)  # the child's prints never reach stdout
        assert document["verdict"] == verdict and document["exit_code"] == code
    assert len(run.stderr) < 200_000  # the child's output is echoed with a bound


def test_chdir_in_the_function_does_not_move_the_report(tmp_path, like):
    path = tmp_path / "chdir.py"
    path.write_text(f"import os\n{_ROPE}\n\ndef apply_rope(x, positions):\n    os.chdir('/')\n{_DIFFERS}")
    work = tmp_path / "work"
    work.mkdir()
    run, _ = _run([f"{path}:apply_rope", "--like", like, "--report", "out"], cwd=work)
    assert run.returncode == 1, run.stderr
    assert (work / "out" / "audit.html").is_file()
    assert str(work / "out" / "audit.html") in run.stderr
    assert not os.path.exists("/out/audit.html")


def test_escape_sequences_in_a_title_are_not_printed_raw(tmp_path):
    toml = MODELS["hf"].replace('name = "hf-llama"', 'name = "hf-llama"\ntitle = "evil \\u001b[2J\\u001b]0;pwned\\u0007"')
    like = tmp_path / "evil.toml"
    like.write_text(toml)
    path = tmp_path / "right.py"
    path.write_text(f"{_ROPE}\n\ndef apply_rope(x, positions):\n    return _rope(x, positions, 1)\n")
    run, _ = _run([f"{path}:apply_rope", "--like", like])
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\x07" not in run.stdout
    assert "\\x1b[2J" in run.stdout


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder", "missing"])
def test_like_with_head_dim_is_read_by_the_bounded_reader(kind, tmp_path):
    path = tmp_path / "right.py"
    path.write_text(f"{_ROPE}\n\ndef apply_rope(x, positions):\n    return _rope(x, positions, 1)\n")
    like = {"fifo": tmp_path / "fifo.toml", "dev-zero": "/dev/zero.toml", "folder": tmp_path / "dir.toml",
            "missing": tmp_path / "missing.toml"}[kind]
    if kind == "fifo":
        os.mkfifo(like)
    elif kind == "folder":
        like.mkdir()
    elif kind == "dev-zero":
        like = tmp_path / "zero.toml"
        os.symlink("/dev/zero", like)
    run, elapsed = _run([f"{path}:apply_rope", "--like", like, "--head-dim", "32"], timeout=120)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert elapsed < 60


def test_an_empty_report_folder_is_refused(tmp_path, like):
    path = tmp_path / "right.py"
    path.write_text(f"{_ROPE}\n\ndef apply_rope(x, positions):\n    return _rope(x, positions, 1)\n")
    run, _ = _run([f"{path}:apply_rope", "--like", like, "--report", ""])
    assert run.returncode == 2 and "--report" in run.stderr and run.stdout == ""


def test_head_dim_2048_stays_well_under_a_gigabyte(tmp_path, like):
    """Peak resident memory of the command and its child (the largest of them), measured by the OS."""
    path = tmp_path / "right.py"
    path.write_text(f"{_ROPE}\n\ndef apply_rope(x, positions):\n    return _rope(x, positions, 1)\n")
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    run = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "symproof", "audit",
                          f"{path}:apply_rope", "--like", str(like), "--head-dim", "2048", "--json"],
                         capture_output=True, text=True, env=_env(), timeout=900)
    code, kilobytes = (int(v) for v in run.stdout.split())
    assert code == 0, run.stderr
    assert kilobytes < 600 * 1024
