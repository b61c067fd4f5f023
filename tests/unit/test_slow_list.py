"""tests/slow.txt, the list of tests the README's test command leaves to `pytest -m slow`: every entry
names a test that exists (a renamed test would otherwise silently rejoin the default run)."""

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]


def _entries():
    lines = (TESTS / "slow.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def _defined(path: Path) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("entry", _entries())
def test_each_slow_entry_names_a_test(entry):
    file, _, name = entry.partition("::")
    path = TESTS / file
    assert path.is_file(), f"tests/slow.txt: {entry!r}: no file tests/{file}"
    function = name.split("[", 1)[0].split("::")[-1]
    assert function in _defined(path), f"tests/slow.txt: {entry!r}: no test {function} in tests/{file}"


def test_the_list_has_no_duplicates():
    entries = _entries()
    assert len(entries) == len(set(entries))
