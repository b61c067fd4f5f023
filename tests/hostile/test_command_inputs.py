"""The file argument and the output paths of the real command: each abuse is one line and exit 2.

Every case runs ``python -m symproof ...`` in a fresh process with a timeout, so a
hang, an unbounded read or a traceback fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from symproof.variants import shipped_variants

from .conftest import assert_one_line_error, symproof

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
GOOD = 'name = "ok"\nkind = "rotary"\nwidth = 8\npairing = "adjacent"\n[frequencies]\nrule = "geometric"\nbase = 10000\n'


def _fifo(tmp_path):
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    return path


def _loop(tmp_path):
    (tmp_path / "a.toml").symlink_to(tmp_path / "b.toml")
    (tmp_path / "b.toml").symlink_to(tmp_path / "a.toml")
    return tmp_path / "a.toml"


def _unreadable(tmp_path):
    if ROOT:  # root reads any file whatever its mode; the kernel refuses to read this one
        return "/proc/self/mem"
    path = tmp_path / "secret.toml"
    path.write_text(GOOD, encoding="utf-8")
    path.chmod(0)
    return path


def _written(text=None, data=None):
    def make(tmp_path):
        path = tmp_path / "input.toml"
        if data is not None:
            path.write_bytes(data)
        else:
            path.write_text(text, encoding="utf-8")
        return path
    return make


FILE_CASES = {
    # name: (make the argument, words of the one-line error)
    "dev-zero": (lambda tmp: "/dev/zero", ["/dev/zero", "character device", "regular file"]),
    "dev-urandom": (lambda tmp: "/dev/urandom", ["/dev/urandom", "character device"]),
    "fifo": (_fifo, ["pipe.toml", "FIFO"]),
    "unreadable": (_unreadable, ["cannot"] if ROOT else ["secret.toml", "permission denied"]),
    "symlink-loop": (_loop, ["a.toml", "symbolic links"]),
    "name-too-long": (lambda tmp: tmp / ("x" * 300 + ".toml"), ["name is too long"]),
    "directory": (lambda tmp: tmp, ["is a folder"]),
    "missing": (lambda tmp: tmp / "absent.toml", ["absent.toml", "no such file"]),
    "empty-name": (lambda tmp: "", ["expected a file name"]),
    "over-1MB": (_written(GOOD + "# " + "x" * (1 << 20) + "\n"), ["bytes; at most 1048576"]),
    "integer-4301-digits": (_written(GOOD.replace("width = 8", "width = " + "9" * 4301)),
                            ["not accepted TOML", "4300 digits"]),
    "nested-arrays": (_written(GOOD + "[rotation]\nblock = " + "[" * 5000 + "]" * 5000 + "\n"),
                      ["nested too deeply"]),
    "not-utf8": (_written(data=b'name = "\xff\xfe"\n'), ["not UTF-8"]),
    "nul-byte": (_written(data=b'name = "a\x00b"\n'), ["not valid TOML"]),
    "ansi-in-name": (lambda tmp: tmp / "\x1b[2J\x1b[31mred.toml", ["no such file", "\\x1b[2J"]),
}


@pytest.mark.parametrize("case", sorted(FILE_CASES))
def test_file_argument(tmp_path, case):
    make, words = FILE_CASES[case]
    done = symproof("check", make(tmp_path), timeout=60)
    assert_one_line_error(done, "symproof check: error:", *words)


def _existing_file(tmp):
    (tmp / "file").write_text("mine", encoding="utf-8")
    return tmp / "file"


def _symlink_to_file(tmp):
    _existing_file(tmp)
    (tmp / "link").symlink_to(tmp / "file")
    return tmp / "link"


def _read_only(tmp):
    if ROOT:  # root writes into any folder whatever its mode; nobody creates files in /proc
        return "/proc"
    (tmp / "ro").mkdir()
    (tmp / "ro").chmod(0o555)
    return tmp / "ro"


OUTPUT_CASES = {
    "existing-file": (_existing_file, ["is a file; expected a folder"]),
    "symlink-to-file": (_symlink_to_file, ["is a symlink to a file"]),
    "dev-full": (lambda tmp: "/dev/full", ["/dev/full", "not a regular folder"]),
    "below-a-file": (lambda tmp: _existing_file(tmp) / "sub", ["cannot"]),
    "read-only": (_read_only, ["cannot write" if ROOT else "not writable"]),
    "empty": (lambda tmp: "", ["expected a folder name"]),
}

OPTIONS = {
    "check --export": lambda out: ["check", shipped_variants()["xpos"], "--export", out],
    "check --report": lambda out: ["check", shipped_variants()["xpos"], "--report", out],
    "export --out": lambda out: ["export", "rope", "--head-dim", "8", "--out", out],
}


@pytest.mark.parametrize("option", sorted(OPTIONS))
@pytest.mark.parametrize("case", sorted(OUTPUT_CASES))
def test_output_path(tmp_path, case, option):
    make, words = OUTPUT_CASES[case]
    target = make(tmp_path)
    done = symproof(*OPTIONS[option](target), timeout=120)
    flag = option.split()[-1]
    assert_one_line_error(done, flag, *words)
    if case in ("existing-file", "symlink-to-file"):
        assert (tmp_path / "file").read_text(encoding="utf-8") == "mine"


def test_an_existing_user_file_is_never_mistaken_for_a_folder_in_report(tmp_path):
    done = symproof("report", "--only", "rope.relative", "--out", _existing_file(tmp_path))
    assert_one_line_error(done, "--out", "is a file")


# Ctrl-C: tests/hostile/test_interrupt.py


def test_escape_sequences_in_a_title_never_reach_the_terminal(tmp_path):
    path = tmp_path / "ansi\x1b[31m.toml"
    title = "\x1b[2J\x1b[31mred\x1b]0;owned\x07 line\u2028forged\rline"
    import json

    path.write_text(f"title = {json.dumps(title)}\n" + GOOD, encoding="utf-8")  # JSON escapes are TOML escapes
    done = symproof("check", path, "--export", tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    for stream in (done.stdout, done.stderr):
        assert not any(ch in stream for ch in "\x1b\x07\r\u2028"), ascii(stream[:500])
    assert done.stdout.splitlines()[0].startswith("\\x1b[2J\\x1b[31mred")
