"""Text a description file controls never becomes code in an exported kernel.

Every hostile title and file name below would, written raw into a docstring
or a C comment, close it and run (Python) or define a symbol (C).  Each is
exported to numpy, torch and C through every kernel family of the one export
path (a variant printed from its definition, a variant exported as plain RoPE,
a rule reading the call length, a model config); the Python modules are
imported in a fresh interpreter and the C files compiled by gcc, and both must
define exactly what the export of a harmless description defines, run
nothing, and keep the text as data (the ``PROVENANCE`` strings hold it
unchanged).  Every command that exports a kernel is then driven once per
target, and each must print its header through the one header function and
write through the one writer.
"""

from __future__ import annotations

import ast
import json
import os
import pathlib
import subprocess
import sys

import pytest

from symproof.models import load_model_config
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


#: the kernel families of the one export path, as ``symproof check FILE --export`` reaches them
FAMILIES = ("variant-printer", "rope-exporter", "call-length", "model-config")
_EXTRA = {
    "variant-printer": '[scale]\nquery = "2**(m/64)"\nkey = "2**(-m/64)"\n',  # a scale: printed from the definition
    "rope-exporter": "",  # plain RoPE: the tuned kernels, claims re-run
    "call-length": "[length]\nthreshold = 8\n",  # the rule reads seq_len: apply takes the call length
}
_MODEL_CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "derivations", "configs", "llama-2-7b.json")


def _description(title: str, family: str) -> str:
    base = '"10000 * Max(seq_len / 8, 1)"' if family == "call-length" else "10000"
    return (f'name = "victim"\ntitle = {_toml_string(title)}\nkind = "rotary"\nwidth = 4\npairing = "adjacent"\n'
            f'[frequencies]\nrule = "geometric"\nbase = {base}\n{_EXTRA[family]}')


def _load(folder, file_name, title, family):
    source = folder / file_name
    if family == "model-config":  # only the file name is the user's: the title is built from the config
        source.write_bytes(pathlib.Path(_MODEL_CONFIG).read_bytes())
        return load_model_config(source)
    source.write_text(_description(title, family), encoding="utf-8")
    variant = load_variant(source)
    assert variant.title == title  # the text reaches the exporter unchanged
    return variant


def _export_all(tmp_path, cases: dict, family: str) -> dict:
    """``{case: {target: [paths]}}`` for each ``case -> (file name, title)``."""
    exported = {}
    for case, (file_name, title) in cases.items():
        folder = tmp_path / case
        folder.mkdir()
        variant = _load(folder, file_name, title, family)
        exported[case] = {target: export_variant(variant, folder / target, target) for target in TARGETS}
    return exported


def _cases(family="variant-printer"):
    if family == "rope-exporter":  # the same header code for every case: a few keep the slow claim re-runs short
        return {case: _cases()[case] for case in ("clean", "triple-double", "c-line-splice", "name-newline")}
    if family == "model-config":
        cases = {"clean": ("clean.json", None)}
        cases.update({case: (name[:-len(".toml")] + ".json", None) for case, name in FILE_NAMES.items()})
        return cases
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


@pytest.mark.parametrize("family", FAMILIES)
def test_hostile_text_defines_and_runs_nothing(tmp_path, cc, family):
    pytest.importorskip("torch")
    cases = _cases(family)
    exported = _export_all(tmp_path, cases, family)
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
        file_name, title = cases[case]
        for target in ("numpy", "torch"):
            (path,) = [str(p) for p in by_target[target] if str(p).endswith(".py")]
            (clean_path,) = [str(p) for p in clean[target] if str(p).endswith(".py")]
            assert modules[path]["names"] == modules[clean_path]["names"], (case, target)
            assert "injected" not in modules[path]["names"]
            # the title and the file name are kept, as strings
            provenance = modules[path]["provenance"]
            assert title is None or any(title in line for line in provenance), case
            assert any(file_name in line for line in provenance), case
            _assert_only_provenance_differs(path, clean_path)
        # C: the symbols of a clean export, under this export's module name (a model config's comes from its
        # file name, made an identifier)
        module, clean_module = (_c_module(paths["c"]) for paths in (by_target, clean))
        sources = [str(p) for p in by_target["c"] if str(p).endswith(".c")]
        for flag in ("-std=c99", "-std=gnu11"):
            symbols = _defined_symbols(cc, sources, tmp_path / f"{case}{flag}.so", [flag])
            if "injected" not in module:
                assert not any("injected" in s for s in symbols), case
            expected = {s.replace(clean_module, module) for s in _clean_symbols(cc, clean, tmp_path, flag)}
            assert symbols == expected, case


def _c_module(paths) -> str:
    (source,) = [os.path.basename(str(p)) for p in paths if str(p).endswith(".c")]
    return source[:-2]


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
    source.write_text(_description(PAYLOADS["triple-double"] + PAYLOADS["c-line-splice"], "variant-printer"),
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
    source.write_text(_description("t", "rope-exporter") + f"[position]\ntransform = {_toml_string(formula)}\n",
                      encoding="utf-8")
    assert_one_line_error(symproof("check", source), "comment.toml", "position.transform", "not a formula")


# -- one export path ------------------------------------------------------------------------------------------

#: every command that writes a kernel: ``(arguments before --target, the output option, the files it writes)``;
#: ``{src}`` is the description file the case writes, ``{module}`` the files' stem
ENTRY_POINTS = {
    "export rope": (["export", "rope", "--head-dim", "8", "--pairing", "half"], "--out", "symproof_rope", None),
    "check variant (printed)": (["check", "{src}"], "--export", "symproof_variant_victim", "variant-printer"),
    "check variant (plain RoPE)": (["check", "{src}"], "--export", "symproof_variant_victim", "rope-exporter"),
    "check variant (call length)": (["check", "{src}"], "--export", "symproof_rope_victim", "call-length"),
    "check config.json": (["check", "{src}"], "--export", "symproof_rope_llama_2_7b", "model-config"),
}
_FILES = {"numpy": ["{module}.py"], "torch": ["{module}_torch.py"], "c": ["{module}.c"]}
#: plain RoPE, from ``symproof export`` or from a description file, also writes a C header
_WITH_H = {"export rope", "check variant (plain RoPE)"}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_every_command_exports_through_the_one_path(tmp_path, monkeypatch, entry, target):
    """Each command writes once, through the owned-files writer of ``symproof._export``, and every file it
    writes starts with a header printed by ``render_header``, laid out for its target."""
    import symproof._export as one_path
    from symproof._face._cli import main
    from symproof._ground._provenance import c_header, python_header

    headers, writes = [], []
    render, write = one_path.render_header, one_path.write_owned_files

    def spy_render(lines, kind):
        headers.append((tuple(lines), kind, render(lines, kind)))
        return headers[-1][2]

    def spy_write(folder, files, **options):
        writes.append(dict(files))
        return write(folder, files, **options)

    monkeypatch.setattr(one_path, "render_header", spy_render)
    monkeypatch.setattr(one_path, "write_owned_files", spy_write)
    arguments, option, module, family = ENTRY_POINTS[entry]
    if family is not None:
        source = _load(tmp_path, "llama-2-7b.json" if family == "model-config" else "victim.toml", "A title",
                       family).source
        arguments = [a.replace("{src}", str(source)) for a in arguments]
    out = tmp_path / "out"
    assert main([*arguments, "--target", target, option, str(out)]) in (0, 1)  # 1: a property refuted

    assert len(writes) == 1, writes
    # the header of the written files (a check also runs rope_apply, whose in-process module has its own)
    # (the kernel property renders the same header once more for each target it writes to a temporary
    # folder and runs: every header that starts the written files is the same one)
    matching = [h for h in headers if all(data.startswith(h[2].encode()) for data in writes[0].values())]
    assert matching and len({h[2] for h in matching}) == 1
    lines, kind, header = matching[-1]
    assert kind == target
    names = [name.format(module=module) for name in _FILES[target]]
    if target == "c" and entry in _WITH_H:
        names.append(f"{module}.h")
    assert sorted(writes[0]) == sorted(names)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(names)
    for name in names:
        text = (out / name).read_text(encoding="utf-8")
        assert text.startswith(header), name
        if target == "c":  # one neutralised // line per provenance line, then the code
            assert header == c_header(lines)
            assert [line for line in text.splitlines() if line.startswith("//")][:len(lines)] == header.splitlines()
        else:  # a fixed docstring, then PROVENANCE: constants holding the lines
            assert header == python_header(lines)
            tree = ast.parse(text)
            assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant)
            assert [getattr(t, "id", None) for t in tree.body[1].targets] == ["PROVENANCE"]
            assert ast.literal_eval(tree.body[1].value) == lines
    assert lines[0].startswith("Generated by symproof ")


def test_headers_are_assembled_in_one_place():
    """No module but the one export path prints a kernel header; none but the provenance module builds one."""
    package = pathlib.Path(__import__("symproof").__file__).parent
    callers = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in ("render_header", "python_header", "c_header", "c_comment_text"):
                    callers.setdefault(name, set()).add(path.relative_to(package).as_posix())
    assert callers.get("render_header") == {"_export/__init__.py"}
    assert callers.get("python_header", set()) | callers.get("c_header", set()) <= {"_ground/_provenance.py"}
    # c_comment_text: the header, and the one comment of the RoPE C body that quotes its frequency formulas
    assert callers.get("c_comment_text") <= {"_ground/_provenance.py", "_export/_rope_c.py"}
