"""An export cut off anywhere -- SIGKILL, SIGTERM, Ctrl-C, a full disk -- or run twice at once into one folder
never blocks the next export into that folder, and leaves no temporary file behind once that one succeeds.

The fault is placed exactly: the child is the real command (``main`` of ``symproof._face._cli``, started as the
command is) with the writer's file-writing step wrapped to strike at the second file of the export, after
the first is in place and before the manifest says the run is complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from symproof._ground._io import MANIFEST_NAME

from .conftest import COMMAND_TIMEOUT, assert_one_line_error, symproof

REPO = Path(__file__).resolve().parents[2]
EXPORT = ["export", "rope", "--head-dim", "8", "--target", "c", "--out"]
#: what the C export writes, in the order it writes them
FILES = ["symproof_rope.c", "symproof_rope.h"]

CHILD = r'''
import errno, os, signal, sys, time
sys.argv = ["symproof", *sys.argv[1:]]  # started as the command is: its Ctrl-C and SIGTERM handling
import symproof
from symproof._ground import _io
from symproof._face._cli import main

FAULT = os.environ["FAULT"]
real_write = _io._Folder.write
seen = []


def strike():
    if FAULT == "SIGKILL":
        os.kill(os.getpid(), signal.SIGKILL)
    elif FAULT in ("SIGTERM", "SIGINT"):
        os.kill(os.getpid(), getattr(signal, FAULT))
        time.sleep(5)  # the handler runs here, at the latest
    elif FAULT == "ENOSPC":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def write(self, name, data, expected, before_placing=None):
    if name == _io.MANIFEST_NAME:
        return real_write(self, name, data, expected, before_placing)
    seen.append(name)
    where = os.environ["WHERE"] if len(seen) == 2 else None

    def before(evidence):
        if where == "before recording":  # the temporary file is written, nothing recorded
            strike()
        before_placing(evidence)
        if where == "after recording":  # recorded, not yet in place
            strike()

    if where == "before writing":
        strike()
    return real_write(self, name, data, expected, before)


_io._Folder.write = write
sys.exit(main())
'''


def _faulty_export(out: Path, fault: str, where: str):
    return subprocess.run([sys.executable, "-c", CHILD, *EXPORT, str(out)], capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, cwd=REPO, env={**os.environ, "FAULT": fault, "WHERE": where})


def _leftovers(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".tmp-"))


def _manifest(folder: Path) -> dict:
    return json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))["groups"]


# (fault, where at the second file, the cut-off run's exit code, the one line it prints or None)
FAULTS = [
    ("SIGKILL", "before writing", -signal.SIGKILL, None),
    ("SIGKILL", "before recording", -signal.SIGKILL, None),
    ("SIGKILL", "after recording", -signal.SIGKILL, None),
    ("SIGTERM", "before recording", 143, "symproof export: terminated"),
    ("SIGTERM", "after recording", 143, "symproof export: terminated"),
    ("SIGINT", "after recording", 130, "symproof export: interrupted"),
    ("ENOSPC", "before recording", 2, "no space left on device"),
]


@pytest.mark.parametrize("fault, where, code, line", FAULTS, ids=[f"{f[0]} {f[1]}" for f in FAULTS])
@pytest.mark.parametrize("earlier", [False, True], ids=["fresh folder", "over an earlier export"])
def test_an_export_cut_off_does_not_block_the_next(tmp_path, fault, where, code, line, earlier):
    out = tmp_path / "out"
    if earlier:  # the files of a complete earlier run are there, with other bytes (another head width)
        done = symproof("export", "rope", "--head-dim", "16", "--target", "c", "--out", out)
        assert done.returncode == 0, done.stderr
    cut = _faulty_export(out, fault, where)
    assert cut.returncode == code, (cut.returncode, cut.stderr[-3000:])
    if line is None:
        assert cut.stderr == ""
    elif code == 2:
        assert_one_line_error(cut, line)
    else:
        assert cut.stderr.splitlines() == [line], cut.stderr
    if fault != "SIGKILL":  # a run that could clean up did
        assert _leftovers(out) == []
    again = symproof(*EXPORT, out)
    assert again.returncode == 0, again.stderr
    assert again.stderr == ""
    assert _leftovers(out) == []  # a killed run's temporary files went with the next run
    assert sorted(_manifest(out)) == ["export:symproof_rope:c"]  # no pending group is left
    recorded = _manifest(out)["export:symproof_rope:c"]
    assert sorted(recorded) == FILES
    for name in FILES:  # what is there is what the manifest says was written
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == recorded[name]["sha256"]


def test_a_cut_off_run_records_every_file_it_placed(tmp_path):
    """Killed after the first file was placed: the manifest already lists it (as a pending group)."""
    out = tmp_path / "out"
    cut = _faulty_export(out, "SIGKILL", "before writing")
    assert cut.returncode == -signal.SIGKILL
    placed = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert placed == FILES[:1]
    assert _manifest(out) == {"pending:export:symproof_rope:c": {FILES[0]: _manifest(out)[
        "pending:export:symproof_rope:c"][FILES[0]]}}


def test_only_a_dead_writers_temporary_files_are_swept(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        live = out / f".tmp-{sleeper.pid}-0123456789ab-symproof_rope.c"
        dead = out / f".tmp-{gone.pid}-0123456789ab-symproof_rope.c"
        others = [out / ".tmp-not-a-writers-file", out / ".tmp-0123456789ab-old", out / "tmp-1-0123456789ab-x"]
        for path in [live, dead, *others]:
            path.write_bytes(b"half a file")
        link = out / f".tmp-{gone.pid}-ba9876543210-link"
        link.symlink_to(tmp_path / "elsewhere")
        done = symproof(*EXPORT, out)
        assert done.returncode == 0, done.stderr
        assert live.exists() and not dead.exists()
        assert all(path.exists() for path in others) and link.is_symlink()
    finally:
        sleeper.kill()
        sleeper.wait()


CONCURRENT = r'''
import os, sys, time
sys.argv = ["symproof", *sys.argv[1:]]
import symproof
from symproof._ground import _io
from symproof._face._cli import main

real_read = _io._read_manifest
BARRIER, COUNT = os.environ["BARRIER"], int(os.environ["COUNT"])
reads = []


def read(root):
    # every run reads the manifest to write it (its second read: the first is the check before the work),
    # then waits for the others to have read it too (or 3 s): without a lock each would then write its
    # own copy over the others'
    manifest = real_read(root)
    reads.append(1)
    if len(reads) < 2:
        return manifest
    open(os.path.join(BARRIER, str(os.getpid())), "w").close()
    deadline = time.monotonic() + 3
    while len(os.listdir(BARRIER)) < COUNT and time.monotonic() < deadline:
        time.sleep(0.02)
    return manifest


_io._read_manifest = read
sys.exit(main())
'''


def test_exports_into_one_folder_at_once_keep_each_others_records(tmp_path):
    out, barrier = tmp_path / "out", tmp_path / "barrier"
    barrier.mkdir()
    targets = ["c", "numpy", "triton"]
    env = {**os.environ, "BARRIER": str(barrier), "COUNT": str(len(targets))}
    runs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, "export", "rope", "--head-dim", "8", "--target",
                              target, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=REPO, env=env) for target in targets]
    for run in runs:
        _, err = run.communicate(timeout=COMMAND_TIMEOUT)
        assert run.returncode == 0, err
    assert sorted(_manifest(out)) == sorted(f"export:symproof_rope:{t}" for t in targets)
    for target in targets:  # and each can export again, unforced
        again = symproof("export", "rope", "--head-dim", "8", "--target", target, "--out", out)
        assert again.returncode == 0, again.stderr


def test_a_run_that_cannot_get_the_folder_says_who_holds_it(tmp_path, monkeypatch):
    """A run that holds the folder for too long (hung, stopped with Ctrl-Z) is named, not waited for forever."""
    import fcntl

    from symproof._ground import _io
    from symproof._ground._errors import InvalidInputError

    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.setattr(_io, "LOCK_WAIT", 0.3)
    holder = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(InvalidInputError, match="another symproof run has been writing into this folder"):
            _io.write_owned_files(out, {"a.txt": b"a"}, group="test", option="--out")
        assert not (out / "a.txt").exists()
    finally:
        os.close(holder)
    assert _io.write_owned_files(out, {"a.txt": b"a"}, group="test", option="--out") == [str(out / "a.txt")]
