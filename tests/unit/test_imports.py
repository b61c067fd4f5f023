"""What importing symproof and starting the command load, and what they leave alone.

``import symproof`` loads only the package's ``__init__`` (public names and submodules load on first
use); ``symproof --version`` and ``--help`` load no third-party module; importing never touches the
importing process's signal handlers, environment or working folder.  (Which modules, never how long:
the figures are in the docs.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: symproof's subpackages that pull in SymPy, NumPy or other third-party modules
HEAVY = ("symproof.checker", "symproof.prover", "symproof.claims", "symproof.encodings", "symproof.kernels",
         "symproof.variants", "symproof.report", "symproof._audit", "symproof._export", "symproof._face._api")


def _python(code: str, *args: str, cwd=None, argv0=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-c", code, *args]
    if argv0 is not None:  # a script file of that name, so that sys.argv[0] is it
        script = Path(argv0)
        script.write_text(code, encoding="utf-8")
        command = [sys.executable, str(script), *args]
    done = subprocess.run(command, cwd=cwd or REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _third_party(modules) -> list:
    return sorted(m for m in modules if m.partition(".")[0] not in sys.stdlib_module_names
                  and m.partition(".")[0] not in ("symproof", "__main__") and not m.startswith("_distutils_hack")
                  and not m.startswith("__editable__"))


REPORT = """
import json, os, signal, sys
before = set(sys.modules)
handler, environ, cwd = signal.getsignal(signal.SIGINT), dict(os.environ), os.getcwd()
import symproof
print(json.dumps({"new": sorted(set(sys.modules) - before),
                  "same_handler": signal.getsignal(signal.SIGINT) is handler,
                  "same_environ": dict(os.environ) == environ, "same_cwd": os.getcwd() == cwd}))
"""


def test_import_symproof_loads_only_its_init():
    """And the two small modules it reads at once: the version and the notebook-display registry."""
    report = json.loads(_python(REPORT).stdout)
    assert [m for m in report["new"] if m.startswith("symproof")] == [
        "symproof", "symproof._ground", "symproof._ground._display", "symproof._ground._version"], report["new"]
    assert _third_party(report["new"]) == [], report["new"]


@pytest.mark.parametrize("argv0", ["symproof", "python"])
def test_import_symproof_leaves_signals_environment_and_folder_alone(tmp_path, argv0):
    """Even from a script named ``symproof`` (importing once installed a Ctrl-C handler there)."""
    report = json.loads(_python(REPORT, argv0=tmp_path / argv0, cwd=tmp_path).stdout)
    assert report["same_handler"] and report["same_environ"] and report["same_cwd"], report


USERS_CTRL_C = """
import os, signal
import symproof
symproof.verify  # loads the claims, SymPy and the rest
try:
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause() if hasattr(signal, "pause") else None
except KeyboardInterrupt:
    print("the user's handler ran")
finally:
    print("the user's finally ran")
"""


def test_a_script_named_symproof_keeps_its_own_keyboardinterrupt(tmp_path):
    done = _python(USERS_CTRL_C, argv0=tmp_path / "symproof", cwd=tmp_path)
    assert done.stdout.splitlines() == ["the user's handler ran", "the user's finally ran"], done.stderr[-2000:]


COMMAND = """
import contextlib, io, json, runpy, sys
before = set(sys.modules)
sys.argv = ["symproof", *json.loads(sys.argv[1])]
code = None
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        runpy.run_module("symproof", run_name="__main__", alter_sys=True)
    except SystemExit as done:
        code = done.code
print(json.dumps({"code": code, "new": sorted(set(sys.modules) - before)}))
"""


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []], ids=["--version", "--help", "no arguments"])
def test_version_and_help_load_no_third_party_module(argv):
    report = json.loads(_python(COMMAND, json.dumps(argv)).stdout)
    assert report["code"] == (2 if not argv else 0), report
    loaded = report["new"]
    assert "symproof._face._cli" in loaded  # the command line was loaded and ran
    assert _third_party(loaded) == [], _third_party(loaded)
    assert [m for m in loaded if m.startswith(HEAVY)] == []


def test_every_public_name_and_submodule_loads_on_first_use():
    names = _python("import symproof, json; print(json.dumps(symproof.__all__))").stdout
    code = ("import symproof\nfor name in symproof.__all__: getattr(symproof, name)\n"
            "assert set(symproof.__all__) <= set(dir(symproof))\n"
            "print(symproof.claims.__name__, symproof.variants.__name__, symproof.testing.__name__)")
    assert _python(code).stdout.split() == ["symproof.claims", "symproof.variants", "symproof.testing"]
    assert "verify" in json.loads(names)
    missing = _python("import symproof\ntry:\n    symproof.no_such_name\nexcept AttributeError as e:\n    print(e)")
    assert missing.stdout.strip() == "module 'symproof' has no attribute 'no_such_name'"


def test_every_public_function_is_annotated():
    """The public API carries type hints (py.typed; mypy checks them in CI): every parameter and the return."""
    import inspect

    import symproof

    unannotated = []
    for name in symproof.__all__:
        value = getattr(symproof, name)
        if inspect.isfunction(value):
            signature = inspect.signature(value)
            missing = [p for p, parameter in signature.parameters.items() if parameter.annotation is parameter.empty]
            if missing or signature.return_annotation is signature.empty:
                unannotated.append((name, missing))
    assert unannotated == []
    assert (REPO / "symproof" / "py.typed").is_file()


def test_a_moved_name_is_still_found_where_it_was_with_a_deprecation_warning():
    import warnings

    import symproof
    import symproof.variants

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert symproof.variants.load_model is symproof.models.load_model
        assert symproof.variants.load_model_config is symproof.models.load_model_config
    assert [w.category for w in caught] == [DeprecationWarning, DeprecationWarning]
    assert "symproof.models.load_model" in str(caught[0].message)
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        symproof.variants.nonsense
