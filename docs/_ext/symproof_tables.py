"""The reference tables and counted facts, generated from symproof's own data: no Sphinx needed.

:mod:`symproof_docs` (the Sphinx extension) renders them into the pages; the tests
(``tests/docs/test_reference_pages.py``) call the same functions with only the test extra installed,
so they fail when a table stops saying what the code does.  Adding a generated table is one function
and one entry in :data:`TABLES`.
"""

from __future__ import annotations

import ast
import re
import tempfile
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from variant_keys import KEY_DOCS, TABLE_DOCS  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


class TableError(Exception):
    """The code and the hand-written part of a table disagree: the build must stop."""


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _rows(header, rows) -> list:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


# -- the tables ------------------------------------------------------------------------------------------


def families_table() -> list:
    from symproof.models._families import family_table

    return family_table().splitlines()


def formula_names_table() -> list:
    from symproof.variants._format import FORMULA_NAMES, WIDTH_NAMES

    rows = []
    for key, (fixed, widths, meaning) in FORMULA_NAMES.items():
        names = list(fixed) + (list(WIDTH_NAMES) if widths else [])
        rows.append((f"`{key}`", ", ".join(f"`{n}`" for n in names) or "-", meaning))
    return _rows(("key", "names besides `[params]`, `pi`, `E`", "meaning"), rows)


def formula_functions_table() -> list:
    from symproof.variants._formula import FUNCTION_MEANINGS

    return _rows(("function", "meaning"),
                 [(f"`{name}`", meaning) for name, meaning in sorted(FUNCTION_MEANINGS.items(),
                                                                     key=lambda kv: kv[0].lower())])


def formula_nearest_forms_table() -> list:
    from symproof.variants._formula import NEAREST_FORMS

    return _rows(("outside the language", "write it as"),
                 [(f"`{name}`", "`" + form.split(" (", 1)[0] + "`" + (" (" + form.split(" (", 1)[1] if " (" in form
                                                                       else ""))
                  for name, form in sorted(NEAREST_FORMS.items(), key=lambda kv: kv[0].lower())])


def fragment_grammar_table() -> list:
    from symproof.prover._fragment import grammar_rows

    return _rows(("scalar node", "argument constraints and side conditions"),
                 [(f"`{name}`", note) for name, note in grammar_rows()])


def fragment_matrix_table() -> list:
    from symproof.prover._fragment import MATRIX_GRAMMAR

    return _rows(("matrix node", "made explicit as"), [(f"`{cls.__name__}`", note)
                                                       for cls, note in MATRIX_GRAMMAR.items()])


def _type_words(wanted) -> str:
    from symproof.variants._format import _EXPECTED

    return _EXPECTED.get(wanted, getattr(wanted, "__name__", str(wanted)))


def variant_keys_table() -> list:
    """Every key the parser accepts (its own schema, ``_TOP`` and ``_TABLES``), with the documentation of
    :mod:`variant_keys` beside it; a key on one side only stops the build."""
    from symproof.variants._format import _KIND_TABLES, _TABLES, _TOP

    schema = {key: wanted for key, wanted in _TOP.items() if key not in _TABLES}
    for table, keys in _TABLES.items():
        schema.update({f"{table}.{key}": wanted for key, wanted in keys.items()})
    missing, extra = sorted(set(schema) - set(KEY_DOCS)), sorted(set(KEY_DOCS) - set(schema))
    if missing or extra:
        raise TableError(f"docs/_ext/variant_keys.py is out of step with the parser: undocumented keys "
                         f"{missing}, documented keys the parser does not accept {extra}")
    rows = []
    for key, wanted in schema.items():
        table = key.split(".")[0] if "." in key else None
        kinds = sorted(k for k, tables in _KIND_TABLES.items() if table in tables) if table else None
        default, allowed, example = KEY_DOCS[key]
        where = f" ({', '.join(kinds)})" if kinds else ""
        rows.append((f"`{key}`{where}", _type_words(wanted), default, allowed, f"`{example}`"))
    return _rows(("key (kinds)", "type", "default", "allowed values", "example"), rows)


def variant_tables_table() -> list:
    from symproof.variants._format import _KIND_TABLES, _TABLES

    if set(TABLE_DOCS) != set(_TABLES):
        raise TableError(f"docs/_ext/variant_keys.py describes the tables {sorted(TABLE_DOCS)}, the parser "
                         f"accepts {sorted(_TABLES)}")
    return _rows(("table", "kinds", "what it states"),
                 [(f"`[{t}]`", ", ".join(sorted(k for k, ts in _KIND_TABLES.items() if t in ts)), TABLE_DOCS[t])
                  for t in _TABLES])


#: one shipped example per kind of file, whose property list is that kind's (relative offsets: rerope)
_PROPERTY_EXAMPLES = (("rotary", "xpos"), ("rotary, with a [length] rule", "dynamic_ntk"),
                      ("rotary, with [position] relative", "rerope"), ("additive", "t2t_concatenated"),
                      ("additive, with [position] amplitude", "scaled_sinusoidal"),
                      ("additive, a learned table [vectors]", "learned_absolute"),
                      ("bias", "bloom_alibi"), ("rotary, with [mask]", "streaming_llm"), ("dense", "string_2d"))


def properties_table() -> list:
    """Each property's statement as the checker states it, for one shipped file of each kind."""
    from symproof._ground._examples import resolve_example
    from symproof.variants import load_variant
    from symproof.variants._check import PROPERTY_TITLES, properties_of

    rows, seen = [], set()
    for label, name in _PROPERTY_EXAMPLES:
        for prop in properties_of(load_variant(resolve_example(name))):
            if (label.split(",")[0], prop.key, prop.statement) in seen:
                continue
            seen.add((label.split(",")[0], prop.key, prop.statement))
            rows.append((f"`{prop.key}`", label, prop.statement.replace("*", "\\*")))
    unknown = {row[0].strip("`") for row in rows} - set(PROPERTY_TITLES)
    if unknown:
        raise TableError(f"properties without a title in PROPERTY_TITLES: {sorted(unknown)}")
    return _rows(("property", "kind of file", "statement, as the checker states it"), rows)


def property_titles_table() -> list:
    from symproof.variants._check import PROPERTY_TITLES

    return _rows(("property", "in one line"), [(f"`{k}`", v.replace("*", "\\*")) for k, v in PROPERTY_TITLES.items()])


def examples_table() -> list:
    from symproof._face._cli import example_title
    from symproof._ground._examples import shipped_examples

    return _rows(("name", "kind", "what it is"),
                 [(f"`{name}`", ex.kind, example_title(ex)) for name, ex in shipped_examples().items()])


#: what each verdict word means; every word the code defines must be here (and nothing else)
VERDICT_MEANINGS = {
    "proved": "a proof whose certificate the independent checker re-checked and accepted: the statement holds "
              "wherever both sides are defined, for every value the symbols' assumptions allow",
    "refuted": "an exact witness: a point where every subterm of both sides is defined and the sides certainly "
               "differ",
    "unknown": "neither: outside the fragment, no tactic decides it, no witness among the points tried, or the "
               "step budget ran out; the reason says which (a time limit never gives unknown: it stops the run)",
    "measured": "a table of measurements that all passed (a claim about floating-point behaviour): never shown "
                "as proved, counts as passing",
    "tested": "the `kernel` property of `symproof check`: the exported files agreed with the exact definition at "
              "the finitely many positions listed (never shown as proved); counts as passing",
    "equivalent": "audit: the code computes the declared model, within float32 angle error",
    "equivalent_after_relayout": "audit: the same scores once the query and key projections are re-laid by the "
                                 "named `relayout_pairing` call",
    "differs": "audit: a list of differences, each with what differs, the expected and found values and a "
               "minimal input",
}


def verdicts_table() -> list:
    from symproof._audit._audit import VERDICTS
    from symproof.claims._runner import MEASURED, TESTED
    from symproof.prover._prove import PROVED, REFUTED, UNKNOWN

    words = (PROVED, REFUTED, UNKNOWN, MEASURED, TESTED) + tuple(VERDICTS)
    if set(words) != set(VERDICT_MEANINGS):
        raise TableError(f"verdict words in the code {sorted(words)}, described {sorted(VERDICT_MEANINGS)}")
    return _rows(("verdict", "where", "meaning"),
                 [(f"`{w}`", "audit" if w in VERDICTS else "check" if w == TESTED else "verify, check, `prove_equal`",
                   VERDICT_MEANINGS[w].removeprefix("audit: ")) for w in words])


def audit_whats_table() -> list:
    from symproof._audit._diagnose import WHATS

    return _rows(("`what`",), [(f"`{w}`",) for w in WHATS])


def exit_codes_table() -> list:
    """Each command's exit codes, from the sentence its ``--help`` prints (``COMMANDS`` in ``_cli``)."""
    from symproof._face._cli import COMMANDS

    rows = []
    for name, command in COMMANDS.items():
        sentence = re.search(r"Exit .*", command.description or "")
        rows.append((f"`symproof {name}`", sentence.group(0) if sentence else "0 on success, 2 for invalid input"))
    rows.append(("every command", "130 when interrupted (Ctrl-C): one line, `symproof COMMAND: interrupted`"))
    rows.append(("every command", "143 when ended by SIGTERM (`kill`, a CI step's timeout): one line, "
                                  "`symproof COMMAND: terminated`"))
    rows.append(("every command", "2 when the output cannot be written (`> /dev/full`, a full disk): one line, "
                                  "`symproof COMMAND: error: cannot write the output (...)`"))
    return _rows(("command", "exit codes (from its `--help`)"), rows)


def trusted_base_table() -> list:
    """Every SymPy/mpmath name and every method the checker calls: the lists its source scan keeps true."""
    from symproof import checker

    return _rows(("trusted", "names"),
                 [("SymPy and mpmath names", ", ".join(f"`{n}`" for n in sorted(checker.TRUSTED_SYMPY))),
                  ("methods called on terms, matrices and polynomials",
                   ", ".join(f"`{n}`" for n in sorted(checker.TRUSTED_METHODS)))])


TABLES = {
    "trusted-base": trusted_base_table,
    "families": families_table, "formula-names": formula_names_table, "formula-functions": formula_functions_table,
    "formula-nearest-forms": formula_nearest_forms_table,
    "fragment-grammar": fragment_grammar_table, "fragment-matrix": fragment_matrix_table,
    "variant-keys": variant_keys_table, "variant-tables": variant_tables_table, "properties": properties_table,
    "property-titles": property_titles_table, "examples": examples_table, "verdicts": verdicts_table,
    "audit-whats": audit_whats_table, "exit-codes": exit_codes_table,
}


def _checker_lines() -> str:
    return str(sum(len(p.read_text(encoding="utf-8").splitlines())
                   for p in (REPO / "symproof" / "checker").glob("*.py")))


def _count(kind: str) -> str:
    from symproof._ground._examples import shipped_examples

    return str(sum(1 for ex in shipped_examples().values() if ex.kind == kind))


def _claims() -> str:
    from symproof.claims import load_claims

    return str(len(load_claims()))


FACTS = {
    "checker-lines": _checker_lines,
    "shipped-variants": lambda: _count("variant"),
    "shipped-configs": lambda: _count("model config"),
    "model-families": lambda: str(len(__import__("symproof.models._families", fromlist=["FAMILIES"]).FAMILIES)),
    "claims": _claims,
}


# -- exported kernels: what a caller sees ---------------------------------------------------------------

#: what each target's interface is read from, in the files ``symproof export rope`` writes
KERNEL_TARGETS = {"numpy": "python", "torch": "python", "triton": "python", "c": "c"}


def _python_interface(source: str) -> str:
    """The module's public functions: signature and docstring, bodies left out."""
    tree = ast.parse(source)
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            header = source.splitlines()[node.lineno - 1:node.body[0].lineno - 1]
            doc = ast.get_docstring(node)
            text = "\n".join(h for h in header if h.strip())
            if doc:
                text += '\n    """' + doc.replace("\n", "\n    ") + '"""'
            out.append(text + "\n    ...")
    return "\n\n".join(out)


def kernel_interface(target: str) -> tuple:
    """``(language, text)``: the interface of ``symproof export rope --target TARGET --head-dim 8``."""
    from symproof._face._cli import main

    with tempfile.TemporaryDirectory() as folder:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["export", "rope", "--target", target, "--head-dim", "8", "--out", folder])
        if code != 0:
            raise TableError(f"symproof export rope --target {target} exited {code}")
        files = sorted(Path(folder).iterdir())
        if target == "c":
            header = next(p for p in files if p.suffix == ".h").read_text(encoding="utf-8")
            return "c", "\n".join(line for line in header.splitlines() if not line.startswith("//"))
        module = next(p for p in files if p.suffix == ".py")
        return "python", _python_interface(module.read_text(encoding="utf-8"))


