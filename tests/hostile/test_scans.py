"""``symproof check DIR --jobs N`` under faults: a dead worker, Ctrl-C, folders that cannot be read.

Nothing hangs (every run is bounded by a timeout) and nothing is dropped: each config is a line, and so is
each folder the walk could not read, naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import COMMAND_TIMEOUT, assert_one_line_error, symproof

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "derivations" / "configs"
#: four configs: two workers each have one in hand when one of them is killed
FOUR = ["phi-2", "olmo-7b", "falcon-7b", "gpt-j-6b"]
#: model types without a row, read through transformers from their class defaults
READ_THROUGH_TRANSFORMERS = ["helium", "olmoe", "seed_oss", "exaone4"]


def _configs(folder: Path, names=FOUR) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(CONFIGS / f"{name}.json", folder / f"{name}.json")
    return folder


def _start(*args) -> subprocess.Popen:
    """The command in a session of its own (so Ctrl-C can reach its whole process group, as a terminal's does)."""
    return subprocess.Popen([sys.executable, "-m", "symproof", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
                            cwd=REPO)


def _busy_workers(scan: subprocess.Popen, count: int):
    """The pids of ``count`` forked workers of ``scan`` once each has run for a while, or None if the scan
    ended first (the caller tries again).  Bounded: a scan that neither ends nor forks is a failure."""
    command = Path(f"/proc/{scan.pid}/cmdline").read_bytes()
    deadline = time.monotonic() + COMMAND_TIMEOUT
    seen = {}
    while time.monotonic() < deadline:
        if scan.poll() is not None:
            return None
        children, parents = [], [str(scan.pid)]
        while parents:  # every descendant: a worker may be forked by a helper process of the scan
            parent = parents.pop()
            try:
                tasks = list(Path(f"/proc/{parent}/task").iterdir())
            except OSError:
                continue
            for task in tasks:
                try:
                    found = (task / "children").read_text().split()
                except OSError:
                    continue
                children += found
                parents += found
        workers = []
        for pid in children:
            try:
                same = Path(f"/proc/{pid}/cmdline").read_bytes() == command  # forked: not a helper process
                # utime, stime and the waited-for children's (a config's check may run the C compiler)
                ticks = sum(map(int, Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[11:15]))
            except (OSError, ValueError):
                continue
            # busy: past its start (50 ms of CPU) and, when looked at before, using CPU since (a worker waiting
            # for its next config uses none), so it is inside a config's check.  At first sight the CPU it has
            # used is enough: waiting for a second look missed whole scans on CI (a kill that lands between
            # two configs anyway is tried again by the caller)
            if same and ticks >= 5 and ticks > seen.get(pid, 0):
                workers.append(int(pid))
            seen[pid] = ticks
        if len(workers) >= count:
            return workers
        time.sleep(0.05)
    scan.kill()
    out, err = scan.communicate()
    raise AssertionError(f"the scan's workers never started; it printed {out!r} {err!r}")


def _scan_with_a_worker_killed(folder):
    scan = _start("check", folder, "--jobs", "2")
    try:
        workers = _busy_workers(scan, 1)  # one busy worker is enough to kill: waiting for both missed short scans
        if workers:
            os.kill(workers[0], signal.SIGKILL)
        out, err = scan.communicate(timeout=COMMAND_TIMEOUT)
    finally:
        if scan.poll() is None:
            os.killpg(scan.pid, signal.SIGKILL)
    return scan.returncode, out, err


def test_a_killed_worker_is_a_refused_line_not_a_hang(tmp_path):
    """As the out-of-memory killer would: SIGKILL one worker in the middle of a config.  The configs are of
    types read through transformers (no row), so each takes a worker a second or more (its first one the
    import of torch and transformers too): a worker seen busy is inside one, not between two.  Row configs
    take a fifth of a second, and a full slow session once saw twelve scans of twelve of them end with no
    kill landing inside a config."""
    transformers = pytest.importorskip("transformers")
    folder = tmp_path / "zoo"
    folder.mkdir()
    for model_type in READ_THROUGH_TRANSFORMERS:
        (folder / f"{model_type}.json").write_text(transformers.AutoConfig.for_model(model_type).to_json_string())
    total = len(READ_THROUGH_TRANSFORMERS)
    for _ in range(3):
        code, out, err = _scan_with_a_worker_killed(folder)
        lines = out.strip().splitlines()
        assert "Traceback" not in err and err == "", err
        assert len(lines) == total + 1, out  # every config has its line, then the summary: nothing dropped
        refused = [line for line in lines if "[2] refused: the worker process checking it ended by SIGKILL" in line]
        if refused:
            break
        assert code == 0 and lines[-1].startswith(f"{total} config(s): {total} checked"), out
    assert code == 2 and len(refused) == 1, out
    assert sum("[0]" in line for line in lines) == total - 1, out  # the others were checked
    assert lines[-1].startswith(f"{total} config(s): {total - 1} checked") and "1 refused" in lines[-1]


def test_ctrl_c_during_a_parallel_scan_is_one_line(tmp_path):
    """Ctrl-C reaches the whole foreground group: the workers ignore it, the scan ends them and says so."""
    folder = _configs(tmp_path / "zoo")
    # enough configs that both workers are seen inside one before the scan ends: a config takes a third of a
    # second now, and sixteen of them were once all checked between two looks on a loaded machine
    for copy in range(12):
        for name in FOUR:
            shutil.copy(folder / f"{name}.json", folder / f"{name}-{copy}.json")
    for _ in range(5):  # a scan that ended before both workers were seen busy is started again
        scan = _start("check", folder, "--jobs", "2")
        try:
            workers = _busy_workers(scan, 2)
            if workers:
                os.killpg(scan.pid, signal.SIGINT)
            out, err = scan.communicate(timeout=COMMAND_TIMEOUT)
        finally:
            if scan.poll() is None:
                os.killpg(scan.pid, signal.SIGKILL)
        if workers:
            break
    assert workers, f"every scan ended before its workers were seen busy: {out!r} {err!r}"
    assert scan.returncode == 130, (out, err)
    assert err.splitlines() == ["symproof check: interrupted"], err
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
              for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in workers:  # ended with the scan, not left running
        assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


_DEEP_TREES = []


@pytest.fixture(autouse=True)
def _remove_deep_trees():
    """pytest's own clean-up of tmp_path recurses, and fails on a tree 1,100 folders deep: removed here."""
    yield
    while _DEEP_TREES:
        top, names = _DEEP_TREES.pop()
        fds = [os.open(top, os.O_RDONLY)]
        for name in names:
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        os.unlink("config.json", dir_fd=fds[-1])
        for name, fd in zip(reversed(names), reversed(fds[1:])):
            os.close(fd)
            os.rmdir(name, dir_fd=fds[fds.index(fd) - 1])
        os.close(fds[0])


def _deep(top: Path, names) -> Path:
    """Folders ``top/names[0]/names[1]/...``, made relative to each other's descriptors (the whole path may be
    longer than the system lets one name)."""
    top.mkdir(parents=True, exist_ok=True)
    _DEEP_TREES.append((top, list(names)))
    fd = os.open(top, os.O_RDONLY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        target = os.open("config.json", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(target, (CONFIGS / "phi-2.json").read_bytes())
        os.close(target)
    finally:
        os.close(fd)
    return top


def _scan_json(folder, *extra):
    done = symproof("check", folder, "--json", *extra)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done, json.loads(done.stdout)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_tree_1100_folders_deep_is_walked(tmp_path, jobs):
    zoo = tmp_path / "zoo"
    _deep(zoo / "deep", ["d"] * 1100)
    done, doc = _scan_json(zoo, "--jobs", jobs)
    assert done.returncode == 0, done.stderr
    paths = [c["path"] for c in doc["configs"]]
    assert paths == [str(zoo / "deep") + "/d" * 1100 + "/config.json"]


def test_a_path_longer_than_the_system_allows_is_a_refused_line_naming_the_folder(tmp_path):
    zoo = _configs(tmp_path / "zoo", FOUR[:1])
    (zoo / "a").mkdir()
    shutil.copy(CONFIGS / "olmo-7b.json", zoo / "a" / "config.json")
    _deep(zoo / "long", ["x" * 200] * 25)  # 5,000 characters: more than PATH_MAX
    done, doc = _scan_json(zoo)
    assert done.returncode == 2
    codes = {c["path"]: (c["exit_code"], c["summary"]) for c in doc["configs"]}
    assert codes[str(zoo / "a" / "config.json")][0] == 0  # the readable config is checked all the same
    refused = [(p, s) for p, (code, s) in codes.items() if code == 2]
    assert len(refused) == 1, codes
    path, summary = refused[0]
    assert path.startswith(str(zoo / "long" / ("x" * 200))) and len(path) > 4000
    assert "cannot read the folder (its path is longer than the system allows)" in summary


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its permissions")
def test_an_unreadable_folder_is_a_refused_line_naming_it(tmp_path):
    zoo = tmp_path / "zoo"
    for name in ("a", "b"):
        (zoo / name).mkdir(parents=True)
        shutil.copy(CONFIGS / "phi-2.json", zoo / name / "config.json")
    (zoo / "b").chmod(0)
    try:
        done = symproof("check", zoo)
    finally:
        (zoo / "b").chmod(0o755)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 3, done.stdout + done.stderr
    assert lines[0].startswith(f"{zoo / 'a' / 'config.json'}: [0]")
    assert lines[1] == (f"{zoo / 'b'}: [2] refused: cannot read the folder (permission denied); the configs "
                        "below it were not checked")


def test_a_folder_that_holds_only_an_unreadable_tree_is_not_called_empty(tmp_path):
    """The old error ("a folder with no model config in it") would hide why nothing was found."""
    zoo = tmp_path / "zoo"
    _deep(zoo / "long", ["y" * 200] * 25)
    done, doc = _scan_json(zoo)
    assert done.returncode == 2 and [c["exit_code"] for c in doc["configs"]] == [2]
    assert "its path is longer than the system allows" in doc["configs"][0]["summary"]


def test_jobs_out_of_range_is_still_one_line():
    done = symproof("check", CONFIGS / "phi-2.json", CONFIGS / "olmo-7b.json", "--jobs", "0")
    assert_one_line_error(done, "--jobs: expected 1 to 256")


def test_an_internal_error_on_one_config_is_its_line_and_the_scan_goes_on(tmp_path, monkeypatch, capsys):
    """A bug of symproof's own (here: the reader raising KeyError on one file) is that config's line, exit 4,
    naming the error; the other configs are checked."""
    from symproof.models import _config, _scan

    folder = _configs(tmp_path / "zoo")
    real = _config.load_model
    victim = sorted(folder.iterdir())[0]

    def load_model(path):
        if str(path) == str(victim):
            raise KeyError("rope_theta")
        return real(path)

    monkeypatch.setattr(_config, "load_model", load_model)
    code = _scan.scan([str(folder)], jobs=1)
    lines = capsys.readouterr().out.strip().splitlines()
    failed = [line for line in lines if "[4] failed: symproof raised KeyError: 'rope_theta'" in line]
    assert code == 4 and len(failed) == 1 and str(victim) in failed[0], lines
    assert sum("[0]" in line for line in lines) == len(lines) - 2, lines  # the others, then the summary
    assert "1 failed by an internal error" in lines[-1], lines[-1]
