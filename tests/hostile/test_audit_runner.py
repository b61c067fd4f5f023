"""The audit's runner imports only its own code before the user's, and never outlives the audit.

Each case runs the real ``symproof audit`` in a fresh interpreter started so
that the current folder is not on its own ``sys.path`` (as the installed
``symproof`` command is): whatever is planted in the current folder can then
only reach the runner, the child process that imports the audited code.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symproof._audit._child import MEMORY_VARIABLE

LIKE = """name = "hf-llama"
kind = "rotary"
width = 64
pairing = "half"

[frequencies]
rule = "geometric"
base = 10000
"""

ROPE = '''
import numpy as np


def apply_rope(x, positions):
    d = x.shape[-1]
    inv = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    f = np.asarray(positions)[..., None] * inv
    emb = np.concatenate([f, f], -1)
    rot = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
    return x * np.cos(emb) + rot * np.sin(emb)
'''

# the command as installed: the current folder is not on sys.path (`python -m` would put it first)
LAUNCH = "import sys; del sys.path[0]; from symproof._face._cli import main; sys.exit(main())"
# the same, its PYTHONPATH set only once it runs (the first argument): a "." there would let the planted
# modules into this process itself, which is not what is tested here (its children only see it)
LAUNCH_WITH_PATH = ("import os, sys; del sys.path[0]; os.environ['PYTHONPATH'] = sys.argv.pop(1); "
                    "from symproof._face._cli import main; sys.exit(main())")
TIMEOUT = 180
PLANTED = ("json", "numpy", "inspect", "struct", "importlib")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", MEMORY_VARIABLE)}
    env["PYTHONPATH"] = os.getcwd()
    env.update(extra)
    return env


def _audit(args, cwd, env=None, timeout=TIMEOUT):
    return subprocess.run([sys.executable, "-c", LAUNCH, "audit", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env or _env(), timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def clone(tmp_path):
    """A current folder shipping modules named like the runner's own imports; each writes a marker if imported."""
    folder = tmp_path / "clone"
    folder.mkdir()
    for name in PLANTED:
        (folder / f"{name}.py").write_text(
            f"import os\nopen(os.path.join({str(tmp_path)!r}, 'planted-{name}-ran'), 'w').write(str(os.getpid()))\n"
            f"raise SystemExit('the planted {name}.py ran')\n")
    (tmp_path / "like.toml").write_text(LIKE)
    return folder


def _planted_ran(tmp_path):
    return sorted(p.name for p in tmp_path.glob("planted-*-ran"))


@pytest.mark.parametrize("pythonpath", ["", ".", "{clone}", ":"],
                         ids=["no-PYTHONPATH", "dot", "absolute", "empty-entry"])
def test_modules_planted_in_the_current_folder_never_run_for_a_file_target(clone, tmp_path, pythonpath):
    target = tmp_path / "elsewhere" / "rope.py"
    target.parent.mkdir()
    target.write_text(ROPE)
    path = os.pathsep.join([os.getcwd(), pythonpath.format(clone=clone)]) if pythonpath else os.getcwd()
    done = subprocess.run([sys.executable, "-c", LAUNCH_WITH_PATH, path, "audit", f"{target}:apply_rope", "--like",
                           str(tmp_path / "like.toml")], capture_output=True, text=True, cwd=clone, env=_env(),
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert _planted_ran(tmp_path) == [], done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]


def test_a_package_target_in_the_current_folder_is_found_after_the_runner_imported_its_own(clone, tmp_path):
    package = clone / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rope.py").write_text(ROPE)
    done = _audit(["mypkg.rope:apply_rope", "--like", tmp_path / "like.toml"], clone)
    assert _planted_ran(tmp_path) == [], done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_current_folder_is_not_importable_for_a_file_target(tmp_path):
    """Only the file's own folder is added: a sibling of the current folder is not found implicitly."""
    (tmp_path / "like.toml").write_text(LIKE)
    work = tmp_path / "work"
    work.mkdir()
    (work / "helper_in_cwd.py").write_text(ROPE)
    target = tmp_path / "elsewhere" / "rope.py"
    target.parent.mkdir()
    target.write_text("def apply_rope(x, positions):\n    import helper_in_cwd\n"
                      "    return helper_in_cwd.apply_rope(x, positions)\n")
    done = _audit([f"{target}:apply_rope", "--like", tmp_path / "like.toml"], work)
    assert done.returncode == 2 and "No module named 'helper_in_cwd'" in done.stderr, done.stderr[-3000:]


def test_what_the_audited_code_prints_arrives_without_pythonunbuffered(tmp_path):
    (tmp_path / "like.toml").write_text(LIKE)
    target = tmp_path / "printing.py"
    target.write_text("print('printed at import')\n" + ROPE.replace(
        "    d = x.shape[-1]\n", "    print('printed in a call')\n    d = x.shape[-1]\n", 1))
    env = _env()
    assert "PYTHONUNBUFFERED" not in env
    done = _audit([target.name + ":apply_rope", "--like", tmp_path / "like.toml"], tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "printed at import" in done.stderr and "printed in a call" in done.stderr, done.stderr[-3000:]


# -- how the child ends -----------------------------------------------------------------------------------


@pytest.mark.parametrize("body, words, not_words", [
    ("    import os\n    os._exit(3)\n", ["exited with status 3"], ["native code"]),
    ("    import sys\n    print('about to leave', file=sys.stderr, flush=True)\n    import os\n    os._exit(4)\n",
     ["exited with status 4", "its last output: about to leave"], ["native code"]),
    ("    import ctypes\n    ctypes.string_at(0)\n", ["killed by signal 11", "a crash in native code?"], []),
    ("    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n",
     ["killed by signal 9", "killed from outside"], ["a crash in native code"]),
], ids=["os-exit", "os-exit-after-a-message", "segfault", "sigkill"])
def test_a_dying_child_is_described_by_how_it_died(tmp_path, body, words, not_words):
    (tmp_path / "like.toml").write_text(LIKE)
    target = tmp_path / "dies.py"
    target.write_text(f"def apply_rope(x, positions):\n{body}")
    done = _audit([f"{target}:apply_rope", "--like", tmp_path / "like.toml"], tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    for word in words:
        assert word in last, (word, last)
    for word in not_words:
        assert word not in last, (word, last)


def test_the_audited_code_runs_under_a_memory_limit(tmp_path):
    (tmp_path / "like.toml").write_text(LIKE)
    target = tmp_path / "greedy.py"
    target.write_text("import numpy as np\n\ndef apply_rope(x, positions):\n"
                      "    hoard = np.ones(3 << 30, dtype=np.uint8)\n    return x\n")
    done = _audit([f"{target}:apply_rope", "--like", tmp_path / "like.toml"], tmp_path,
                  env=_env(**{MEMORY_VARIABLE: "1G"}))
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert "MemoryError" in last and "under a memory limit of 1 GiB" in last and MEMORY_VARIABLE in last, last


@pytest.mark.parametrize("value", ["lots", "12", "-1G", "1X"])
def test_a_bad_memory_limit_is_one_line(tmp_path, value):
    (tmp_path / "like.toml").write_text(LIKE)
    target = tmp_path / "rope.py"
    target.write_text(ROPE)
    done = _audit([f"{target}:apply_rope", "--like", tmp_path / "like.toml"], tmp_path,
                  env=_env(**{MEMORY_VARIABLE: value}))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{MEMORY_VARIABLE}={value!r}" in lines[0], lines


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie left for an init that does not reap is dead all the same


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_audit_leaves_no_runner_behind(tmp_path, how):
    """The audited code hangs in C after starting a helper process; the audit itself is then killed."""
    (tmp_path / "like.toml").write_text(LIKE)
    pids = tmp_path / "pids"
    target = tmp_path / "hangs.py"
    target.write_text(
        "import ctypes, os, subprocess, sys\n\ndef apply_rope(x, positions):\n"
        "    helper = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)'])\n"
        f"    open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{helper.pid}}')\n"
        "    ctypes.CDLL(None).sleep(1000)\n")
    audit = subprocess.Popen([sys.executable, "-c", LAUNCH, "audit", f"{target}:apply_rope", "--like",
                              str(tmp_path / "like.toml"), "--timeout", "600"], cwd=tmp_path, env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert audit.poll() is None and time.monotonic() < deadline, "the audited code never ran"
            time.sleep(0.2)
        runner, helper = map(int, pids.read_text().split())
        assert _alive(runner) and _alive(helper)
        audit.send_signal(how)
        audit.wait(timeout=60)
        deadline = time.monotonic() + 30  # a guard against a hang, not a timing claim
        while (_alive(runner) or _alive(helper)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(runner), "the runner outlived the audit"
        assert not _alive(helper), "a process the audited code started outlived the audit"
    finally:
        if audit.poll() is None:
            audit.kill()
            audit.wait()
        if pids.exists():
            for pid in map(int, pids.read_text().split()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
