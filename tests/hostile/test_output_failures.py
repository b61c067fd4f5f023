"""Output that cannot be written or encoded, a dumb terminal, and options that used to be misread: one line,
never a traceback, for every command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import COMMAND_TIMEOUT, assert_one_line_error, symproof

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "derivations" / "configs"
VARIANTS = REPO / "derivations" / "variants"

IDENTITY = "def rotate(x, positions):\n    return x\n"


def _commands(tmp: Path) -> dict:
    """Every command, as a user runs it, each printing something on stdout."""
    (tmp / "rope.py").write_text(IDENTITY, encoding="utf-8")
    return {
        "verify": ["verify", "rope.relative"],
        "examples": ["examples"],
        "check": ["check", "xpos"],
        "check --json": ["check", "xpos", "--json"],
        "scan": ["check", CONFIGS / "phi-2.json", CONFIGS / "olmo-7b.json"],
        "export": ["export", "rope", "--head-dim", "8", "--out", tmp / "export"],
        "report": ["report", "--only", "rope.relative", "--no-pdf", "--out", tmp / "report"],
        "audit": ["audit", f"{tmp / 'rope.py'}:rotate", "--like", "xpos"],
        "--help": ["--help"],
        "check --help": ["check", "--help"],
        "--version": ["--version"],
    }


COMMANDS = ["verify", "examples", "check", "check --json", "scan", "export", "report", "audit", "--help",
            "check --help", "--version"]


def _run_to(stdout, args, env=None):
    return subprocess.run([sys.executable, "-m", "symproof", *map(str, args)], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace",
                          timeout=COMMAND_TIMEOUT, cwd=REPO, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("command", COMMANDS)
def test_a_full_disk_is_one_line(tmp_path, command):
    with open("/dev/full", "w") as full:
        done = _run_to(full, _commands(tmp_path)[command])
    if command.endswith(("--help", "--version")):  # before a command is parsed, the line names the program
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.splitlines() == ["symproof: error: cannot write the output (no space left on device)"]
    else:
        assert_one_line_error(done, "error: cannot write the output (no space left on device)")


@pytest.mark.parametrize("command", ["verify", "examples", "check", "--help"])
def test_a_reader_that_left_is_no_traceback(tmp_path, command):
    """``symproof ... | head``: the reader has gone; nothing more to say, and no traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = _run_to(write, _commands(tmp_path)[command])
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.returncode in (0, 1) and done.stderr == ""


HOSTILE_TITLE = 'title = "xPos \u03b8 \u2014 \u00fcn\u00efcode \u2264 \U0001d70b"'


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("json_output", [False, True], ids=["table", "json"])
def test_a_narrow_terminal_encoding_gets_replacement_characters(tmp_path, encoding, json_output):
    source = (VARIANTS / "xpos.toml").read_text(encoding="utf-8").splitlines()
    variant = tmp_path / "\u03b8-\u00fc.toml"
    variant.write_text("\n".join(HOSTILE_TITLE if line.startswith("title") else line for line in source) + "\n",
                       encoding="utf-8")
    done = _run_to(subprocess.PIPE, ["check", variant, *(["--json"] if json_output else [])],
                   env={"PYTHONIOENCODING": encoding, "LC_ALL": "C"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "keeps:" in done.stdout or '"properties"' in done.stdout
    if not json_output:
        assert "xPos ? ?" in done.stdout.splitlines()[0]  # the title, with what the encoding lacks replaced


def test_an_unencodable_error_message_is_still_one_line(tmp_path):
    done = _run_to(subprocess.PIPE, ["check", tmp_path / "\u03b8-missing.toml"], env={"PYTHONIOENCODING": "ascii"})
    assert_one_line_error(done, "no such file")


def test_a_dumb_terminal_gets_no_escape_sequence():
    """The progress line on a terminal: with TERM=dumb, carriage returns and spaces only."""
    script = ("import os, pty, sys\n"
              "pid, fd = pty.fork()\n"
              "if pid == 0:\n"
              "    os.execvpe(sys.executable, [sys.executable, '-m', 'symproof', 'verify', 'rope.relative'],"
              " {**os.environ, 'TERM': sys.argv[1]})\n"
              "out = b''\n"
              "while True:\n"
              "    try:\n"
              "        chunk = os.read(fd, 4096)\n"
              "    except OSError:\n"
              "        break\n"
              "    if not chunk:\n"
              "        break\n"
              "    out += chunk\n"
              "os.waitpid(pid, 0)\n"
              "sys.stdout.write(out.decode('utf-8', 'replace'))\n")
    seen = {}
    for term in ("dumb", "xterm"):
        done = subprocess.run([sys.executable, "-c", script, term], capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, cwd=REPO)
        assert "rope.relative" in done.stdout, done.stdout + done.stderr
        seen[term] = done.stdout
    assert "\x1b" not in seen["dumb"]
    assert "\x1b[K" in seen["xterm"]  # the progress line is there, and could have failed the check above


def test_not_a_terminal_gets_no_escape_sequence():
    done = symproof("verify", "rope.relative")
    assert "\x1b" not in done.stdout + done.stderr


@pytest.mark.parametrize("call", ["", "   ", "\t"])
def test_an_empty_call_expression_is_refused(tmp_path, call):
    (tmp_path / "rope.py").write_text(IDENTITY, encoding="utf-8")
    done = symproof("audit", f"{tmp_path / 'rope.py'}:rotate", "--like", "xpos", "--call", call)
    assert_one_line_error(done, "--call expects a Python expression in x and positions")


@pytest.mark.parametrize("base", ["1e308", "1e300", "inf", "nan", "1", "0.5", "-3"])
def test_a_base_out_of_range_names_the_real_bound(tmp_path, base):
    done = symproof("export", "rope", "--head-dim", "8", "--out", tmp_path / "out", "--base", base)
    assert_one_line_error(done, "--base: expected a number greater than 1 and less than 1e+300")


def test_a_base_just_inside_the_bound_is_taken(tmp_path):
    done = symproof("export", "rope", "--head-dim", "8", "--out", tmp_path / "out", "--base", "1e299")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("local", ["xpos", "xpos.toml"])
def test_a_local_file_named_like_an_example_is_read_and_named(tmp_path, local):
    source = (VARIANTS / "xpos.toml").read_text(encoding="utf-8").splitlines()
    (tmp_path / local).write_text("\n".join('title = "my own xpos"' if line.startswith("title") else line
                                            for line in source) + "\n", encoding="utf-8")
    done = symproof("check", "xpos", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("my own xpos")
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"note: reading ./{local}, not the shipped example xpos (name it by its path to "
                               "read it: ") and lines[0].endswith("xpos.toml)")


def test_an_example_with_no_local_file_of_its_name_says_nothing(tmp_path):
    done = symproof("check", "xpos", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
