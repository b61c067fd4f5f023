"""Text a description file controls never becomes code in an exported kernel.

Every hostile title and file name below would, written raw into a docstring
or a C comment, close it and run (Python) or define a symbol (C).  Each is
exported to numpy, torch and C; the Python modules are imported in a fresh
interpreter and the C files compiled by gcc, and both must define exactly what
the export of a harmless description defines, run nothing, and keep the text
as data (the ``PROVENANCE`` strings hold it unchanged).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from symproof.variants import load_variant
from symproof.variants._export import export_variant

from .conftest import assert_one_line_error, symproof

#: closes a docstring, a string literal or a comment, then defines or runs something
PAYLOADS = {
    "triple-double": '"""\nimport pathlib; pathlib.Path("PWNED").touch(); injected = 1\n"""',
    "triple-single": "'''\ninjected = 1\n'''",
    "quote-close": '"; injected = 1; "',
    "backslash-end": "innocent \\",
    "backslash-quote": '\\"""; injected = 1 #',
    "named-escape": "\\N{LATIN SMALL LETTER A} \\N{no such name",
    "octal-escape": "\\0 \\x41 \\u0041 \\777",
    "newline-code": "title\ninjected = 1\nint injected_c = 1;",
    "carriage-return": "title\rinjected = 1\rint injected_c = 1;",
    "c-comment-close": "*/ int injected_c = 1; /*",
    "c-line-splice": "x \\\nint injected_c = 1;",
    "c-splice-space": "x \\ \nint injected_c = 1;",
    "c-trigraph": "x ??/\nint injected_c = 1;",
    "c-preprocessor": "\n#define apply injected\n#include \"/etc/passwd\"",
    "line-separator": "x\u2028injected = 1\u2029int injected_c = 1;",
    "next-line": "x\u0085injected = 1\u0085int injected_c = 1;",
    "form-feed-vt": "x\x0cinjected = 1\x0bint injected_c = 1;",
    "nul": "x\x00injected = 1",
    "ansi": "\x1b[2J\x1b[31mred\x1b]0;title\x07",
    "bidi": "x\u202eint injected_c = 1;\u202c",
    "hash": "# coding: rot13\n#!python",
}

#: file names (no '/' and no NUL, which no file name can hold)
FILE_NAMES = {
    "name-newline": "a\ninjected = 1\n.toml",
    "name-quotes": "a\"\"\"; injected = 1; '''.toml",
    "name-c-close": "a *\\ int injected_c = 1; ??\\.toml",
    "name-splice": "a \\\nint injected_c = 1;.toml",
    "name-separator": "a\u2028injected = 1.toml",
    "name-ansi": "\x1b[31ma.toml",
}

TARGETS = ("numpy", "torch", "c")


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string with \uXXXX escapes is a valid TOML basic string


def _description(title: str, plain: bool) -> str:
    # not plain RoPE (a scale): the variant printer writes the file; plain: the RoPE exporter does
    extra = "" if plain else '[scale]\nquery = "2**(m/64)"\nkey = "2**(-m/64)"\n'
    return (f'name = "victim"\ntitle = {_toml_string(title)}\nkind = "rotary"\nwidth = 4\npairing = "adjacent"\n'
            f'[frequencies]\nrule = "geometric"\nbase = 10000\n{extra}')


def _export_all(tmp_path, cases: dict, plain: bool) -> dict:
    """``{case: {target: [paths]}}`` for each ``case -> (file name, title)``."""
    exported = {}
    for case, (file_name, title) in cases.items():
        folder = tmp_path / case
        folder.mkdir()
        source = folder / file_name
        source.write_text(_description(title, plain), encoding="utf-8")
        variant = load_variant(source)
        assert variant.title == title  # the text reaches the exporter unchanged
        exported[case] = {target: export_variant(variant, folder / target, target) for target in TARGETS}
    return exported


def _cases(plain=False):
    if plain:  # every case goes through the same header code; a few keep the slow claim re-runs short
        return {case: _cases()[case] for case in ("clean", "triple-double", "c-line-splice", "name-newline")}
    cases = {"clean": ("clean.toml", "A harmless title")}
    cases.update({case: ("hostile.toml", title) for case, title in PAYLOADS.items()})
    cases.update({case: (name, "A harmless title") for case, name in FILE_NAMES.items()})
    return cases


_IMPORT_ALL = r"""
import importlib.util, json, os, sys
report = {}
for path in json.loads(sys.argv[1]):
    spec = importlib.util.spec_from_file_location("exported_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report[path] = {"names": sorted(vars(module)), "provenance": list(getattr(module, "PROVENANCE", ()))}
json.dump({"modules": report, "cwd": sorted(os.listdir("."))}, sys.stdout)
"""


@pytest.mark.parametrize("plain", [False, True], ids=["variant-printer", "rope-exporter"])
def test_hostile_text_defines_and_runs_nothing(tmp_path, cc, plain):
    pytest.importorskip("torch")
    exported = _export_all(tmp_path, _cases(plain), plain)
    python_files = [str(p) for case in exported.values() for t in ("numpy", "torch") for p in case[t]
                    if str(p).endswith(".py")]
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    done = subprocess.run([sys.executable, "-c", _IMPORT_ALL, json.dumps(python_files)], cwd=workdir,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["cwd"] == []  # nothing ran that wrote a file
    modules = result["modules"]
    clean = exported["clean"]
    for case, by_target in exported.items():
        for target in ("numpy", "torch"):
            (path,) = [str(p) for p in by_target[target] if str(p).endswith(".py")]
            (clean_path,) = [str(p) for p in clean[target] if str(p).endswith(".py")]
            assert modules[path]["names"] == modules[clean_path]["names"], (case, target)
            assert "injected" not in modules[path]["names"]
            if not plain:  # the variant's title and file name are kept, as strings
                title, file_name = _cases()[case][1], _cases()[case][0]
                assert f"Title: {title}" in modules[path]["provenance"], case
                assert f"File: {file_name}" in modules[path]["provenance"], case
            _assert_only_provenance_differs(path, clean_path)
        symbols = {}
        for flags in (["-std=c99"], ["-std=gnu11"]):
            sources = [str(p) for p in by_target["c"] if str(p).endswith(".c")]
            symbols[case, flags[0]] = _defined_symbols(cc, sources, tmp_path / f"{case}{flags[0]}.so", flags)
            assert not any("injected" in s for s in symbols[case, flags[0]]), case
        if case != "clean":
            for flags in ("-std=c99", "-std=gnu11"):
                assert symbols[case, flags] == _clean_symbols(cc, clean, tmp_path, flags), case


def _assert_only_provenance_differs(path, clean_path):
    """Same module, statement for statement, once the PROVENANCE assignment is set aside."""
    def body(p):
        tree = ast.parse(open(p, encoding="utf-8").read())
        kept = [node for node in tree.body
                if not (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets]
                        == ["PROVENANCE"])]
        provenance = [node for node in tree.body if node not in kept]
        assert len(provenance) == 1
        assert all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in provenance[0].value.elts)
        return ast.dump(ast.Module(body=kept, type_ignores=[]))

    assert body(path) == body(clean_path)


_CLEAN_CACHE: dict = {}


def _clean_symbols(cc, clean, tmp_path, flag):
    key = (str(tmp_path), flag)
    if key not in _CLEAN_CACHE:
        sources = [str(p) for p in clean["c"] if str(p).endswith(".c")]
        _CLEAN_CACHE[key] = _defined_symbols(cc, sources, tmp_path / f"clean-ref{flag}.so", [flag])
    return _CLEAN_CACHE[key]


def _defined_symbols(cc, sources, library, flags) -> set:
    done = subprocess.run([cc, *flags, "-Wall", "-shared", "-fPIC", "-o", str(library), *sources, "-lm"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    names = subprocess.run(["nm", "--defined-only", str(library)], capture_output=True, text=True, check=True)
    return {line.split()[-1] for line in names.stdout.splitlines() if line.strip()}


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_hostile_title_through_the_command(tmp_path, cc, target):
    """The same, driven through ``symproof check FILE --export DIR``."""
    source = tmp_path / "a \\\nint injected_c = 1; .toml"
    source.write_text(_description(PAYLOADS["triple-double"] + PAYLOADS["c-line-splice"], plain=False),
                      encoding="utf-8")
    done = symproof("check", source, "--export", tmp_path / "out", "--target", target, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    (written,) = [p for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")]  # not the manifest
    if target == "c":
        assert not any("injected" in s for s in _defined_symbols(cc, [str(written)], tmp_path / "k.so", ["-std=c99"]))
    else:
        subprocess.run([sys.executable, str(written)], cwd=tmp_path, check=True, timeout=60)
        assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("formula", [
    "m # \"\"\"; import os",
    "m #*/ int injected_c = 1;",
    "m\n",
    "(m\n+ 1)",
    "m\u2028",
    "\uff4d",  # a full-width m: Python would fold it to m; it is not printable ASCII
])
def test_formula_with_a_comment_or_odd_character_is_refused(tmp_path, formula):
    source = tmp_path / "comment.toml"
    source.write_text(_description("t", plain=True) + f"[position]\ntransform = {_toml_string(formula)}\n",
                      encoding="utf-8")
    assert_one_line_error(symproof("check", source), "comment.toml", "position.transform", "not a formula")
