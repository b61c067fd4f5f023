"""The reference pages are generated from the code: each table is the code's own, and each page uses them.

The tables are made by ``docs/_ext/symproof_tables.py`` and rendered at build time; these tests call the same
functions, so they fail when a table stops saying what the code does (and the build, ``-W``, fails when
the hand-written part of a table falls out of step with the code).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import symproof_tables as symproof_docs  # noqa: E402  (the tables, without Sphinx)

PAGES = {p.relative_to(DOCS).as_posix(): p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md")
         if "_build" not in p.parts and "incoming" not in p.parts and p.name != "pypi.md"}
USED = {name for text in PAGES.values() for name in re.findall(r"^```\{symproof-table\} (\S+)", text, re.M)}


def _first_cells(lines) -> list:
    return [line.split("|")[1].strip().strip("`") for line in lines[2:]]


def test_every_generated_table_is_on_a_page_and_every_page_names_a_real_one():
    assert USED == set(symproof_docs.TABLES)


@pytest.mark.parametrize("name", sorted(symproof_docs.TABLES))
def test_every_table_renders(name):
    lines = symproof_docs.TABLES[name]()
    assert len(lines) > 2 and all(line.startswith("|") for line in lines)


def test_the_function_table_is_the_parsers():
    from symproof.variants._formula import FUNCTION_MEANINGS, FUNCTIONS

    assert set(FUNCTION_MEANINGS) == set(FUNCTIONS)
    assert _first_cells(symproof_docs.formula_functions_table()) == sorted(FUNCTIONS, key=str.lower)


def test_the_formula_names_table_is_the_parsers():
    from symproof.variants._format import FORMULA_NAMES

    assert _first_cells(symproof_docs.formula_names_table()) == list(FORMULA_NAMES)


def test_the_fragment_table_is_the_grammar():
    from symproof.prover import _fragment

    assert _first_cells(symproof_docs.fragment_grammar_table()) == [n for n, _ in _fragment.grammar_rows()]
    assert _first_cells(symproof_docs.fragment_matrix_table()) == [c.__name__ for c in _fragment.MATRIX_GRAMMAR]


def test_the_family_table_is_the_readers():
    from symproof.models._families import FAMILIES, family_table

    assert symproof_docs.families_table() == family_table().splitlines()
    assert len(symproof_docs.families_table()) - 2 == len(FAMILIES)


def test_every_key_the_parser_accepts_is_documented_with_its_type():
    from symproof.variants._format import _TABLES, _TOP

    keys = {k for k in _TOP if k not in _TABLES} | {f"{t}.{k}" for t, ks in _TABLES.items() for k in ks}
    documented = {cell.split("`")[0] for cell in _first_cells(symproof_docs.variant_keys_table())}
    assert documented == keys


def test_a_key_the_docs_do_not_describe_stops_the_build(monkeypatch):
    from symproof.variants import _spec

    monkeypatch.setitem(_spec._TABLES, "scale", {**_spec._TABLES["scale"], "value": str})
    with pytest.raises(symproof_docs.TableError, match=r"undocumented keys \['scale.value'\]"):
        symproof_docs.variant_keys_table()


@pytest.mark.parametrize("key", ["norm", "relative", "shift", "direction", "plain_at_zero", "decay", "kernel",
                                 "cache", "causal_relative", "equivalence"])
def test_every_property_has_its_statement_on_the_properties_page(key):
    assert key in _first_cells(symproof_docs.properties_table())
    assert f"`{key}`" in PAGES["reference/properties.md"]


def test_the_shipped_examples_are_all_listed():
    from symproof._ground._examples import shipped_examples

    assert _first_cells(symproof_docs.examples_table()) == list(shipped_examples())
    kinds = [ex.kind for ex in shipped_examples().values()]
    assert symproof_docs.FACTS["shipped-variants"]() == str(kinds.count("variant"))


def test_the_checker_size_is_counted_and_small():
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (REPO / "symproof" / "checker").glob("*.py"))
    assert symproof_docs.FACTS["checker-lines"]() == str(lines)
    assert "{symproof-fact}`checker-lines`" in PAGES["reference/fragment.md"]
    assert lines < 2100  # its own grammar, definedness table and trusted-base lists included


def test_every_command_has_its_exit_codes():
    from symproof._face._cli import COMMANDS

    rows = _first_cells(symproof_docs.exit_codes_table())
    assert rows[:len(COMMANDS)] == [f"symproof {name}" for name in COMMANDS]


@pytest.mark.parametrize("target, words", [
    ("numpy", "def apply("), ("c", "_apply("), ("torch", "def table("), ("triton", "def apply("),
])
def test_each_kernel_interface_is_read_from_the_exported_file(target, words):
    if target == "triton":
        pytest.importorskip("triton", reason="the Triton export needs triton installed")
    language, text = symproof_docs.kernel_interface(target)
    assert words in text


def test_every_page_is_in_a_toctree():
    listed = set()
    for name, text in PAGES.items():
        for block in re.findall(r"```\{toctree\}\n(.*?)```", text, re.S):
            folder = str(Path(name).parent)
            listed |= {str(Path(folder, entry)).lstrip("./") + ".md" for entry in block.splitlines()
                       if entry and not entry.startswith(":")}
    assert set(PAGES) - {"index.md"} <= {p.removeprefix("./") for p in listed}
