"""The architecture is a contract: no upward import, no circle inside a package, long modules say why.

``pyproject.toml``'s ``[tool.importlinter]`` states the layers (CONTRIBUTING.md, "Architecture");
``lint-imports`` checks them on the package as it is, and on a copy with one upward import
planted (inside a function, where a lazy import hides) to show that the check can fail.
"""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "symproof"
LINT = Path(sys.executable).with_name("lint-imports")
#: a module longer than this says why in its docstring, in a sentence that starts with these words
MAX_LINES = 600
REASON = "Longer than 600 lines"

pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (the test extra)")


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), str(root / "pyproject.toml"), "--no-cache", "--no-logo"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_package_keeps_its_layers_and_has_no_import_circles():
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout, done.stdout[-2000:]


PLANTED = [
    # (module, line appended to it): an upward import, a lazy one, a circle inside a package
    ("prover/_sums.py", "\n\ndef _planted():\n    from ..report import _html  # noqa\n", "symproof's layers"),
    ("_ground/_text.py", "\n\ndef _planted():\n    from ..checker import check_certificate  # noqa\n",
     "symproof's layers"),
    ("variants/_formula.py", "\n\ndef _planted():\n    from ._check import check_variant  # noqa\n",
     "no circle of imports"),
]


@pytest.mark.parametrize("module, planted, broken", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_import_breaks_the_contract(tmp_path, module, planted, broken):
    shutil.copytree(PACKAGE, tmp_path / "symproof", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    with open(tmp_path / "symproof" / module, "a", encoding="utf-8") as handle:
        handle.write(planted)
    done = _lint(tmp_path)
    assert done.returncode != 0, done.stdout[-3000:]
    assert f"{broken}" in done.stdout and "BROKEN" in done.stdout, done.stdout[-3000:]


def _long_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_LINES:
            yield path.relative_to(REPO).as_posix(), path, lines


LONG_MODULES = list(_long_modules())


@pytest.mark.parametrize("name, path, lines", LONG_MODULES, ids=[m[0] for m in LONG_MODULES])
def test_a_module_over_600_lines_says_why(name, path, lines):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    assert REASON in docstring, f"{name} has {lines} lines and its docstring does not say why ('{REASON} ...')"
