"""The README's first screen: two commands, the ones `.ci/run` runs, that work on a stock machine."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def first_block(text: str) -> list:
    """The lines of the README's first ```bash block."""
    match = re.search(r"^```bash\n(.*?)^```$", text, re.S | re.M)
    assert match, "the README has no ```bash block"
    return match.group(1).splitlines()


def _steps(command: str) -> list:
    return [shlex.split(part) for part in command.split("&&")]


def test_the_first_screen_has_two_commands():
    assert len(first_block(README)) == 2


def test_the_first_command_makes_a_venv_in_the_clone_and_runs_the_main_job_without_test_extras():
    steps = _steps(first_block(README)[0])
    assert steps[0] == ["python3", "-m", "venv", ".venv"]  # in the clone, from the stock python3
    installs = [s for s in steps if s[:4] == [".venv/bin/python", "-m", "pip", "install"]]
    assert installs and all("[test]" not in word for s in installs for word in s)
    assert [".venv/bin/symproof", "verify"] in steps and [".venv/bin/symproof", "report"] in steps
    assert not any(s[0] in ("pip", "pip3", "python3") and "install" in s for s in steps)  # never the system's


def test_the_second_command_adds_the_test_extras_to_that_venv_and_runs_the_tests():
    steps = _steps(first_block(README)[1])
    install = next(s for s in steps if s[:4] == [".venv/bin/python", "-m", "pip", "install"])
    assert "-e" in install and ".[test]" in install  # editable: the tests and the command run the clone
    assert steps[-1][:3] == [".venv/bin/python", "-m", "pytest"]


def test_ci_runs_the_readmes_two_commands_as_written():
    program = re.search(r"awk '(.*?)' README\.md", CI, re.S)
    assert program, ".ci/run no longer reads its commands from README.md"
    extracted = subprocess.run(["awk", program.group(1), "README.md"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.splitlines()
    assert extracted == first_block(README)
    assert 'bash -euo pipefail -c "${commands[$i]}"' in CI and "for i in 0 1" in CI
    assert CI.index("apt-get install") < CI.index("for i in 0 1")  # python3-venv before `python3 -m venv`
    assert "python3-venv" in CI


def test_the_readme_says_how_ci_differs():
    assert "PIP_CONSTRAINT" in CI and "PIP_CONSTRAINT=.ci/constraints.txt" in README
    assert "git status --porcelain -- reports/" in CI and "(`git status`)" in README
    assert ".venv/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
