"""Every example in README.md and docs/ runs, and prints what the page shows.

A page's fenced blocks run in order, in a fresh folder of their own:

- ```` ```console ````: each ``$ symproof ...`` line runs as ``python -m symproof ...`` (``$ python ...``
  with this interpreter, ``$ echo $?`` prints the previous exit code); stdout and stderr together are
  compared with the lines below it.
- ```` ```pycon ```` (or ```` ```python ```` holding ``>>>``): a doctest; the page's blocks share one
  namespace.
- ```` ```python ````, ```` ```toml ```` or ```` ```json5 ```` (JSON with a comment) whose first line is ``# NAME.ext``: written to
  that file first, for the commands after it to use (a ``json5`` block's JSON without that line).
- ```` ```toml ```` without a name: a variant file, which must parse.
- ```` ```bash ````: install and build steps, which CI runs: each line must be one of the README's first
  block or appear in ``.ci/run``.

Output is compared as doctest does with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``: a run of spaces
matches any run, and ``...`` matches anything -- write it where the output legitimately varies (seconds,
an absolute path). See CONTRIBUTING.md.
"""

from __future__ import annotations

import doctest
import importlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md"] + sorted(p for p in DOCS.rglob("*.md")
                                      if not {"_build", "incoming"} & set(p.relative_to(DOCS).parts))
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
FILE_LINE = re.compile(r"^#\s*(?P<name>[\w.-]+\.(py|toml|json))\s*$")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: how long one shown command may take before the test calls it hung (the commands take seconds)
COMMAND_TIMEOUT = 600


def blocks(text: str) -> list:
    """``(language, body, line)`` of every fenced block, MyST directives (```` ```{name} ````) left out."""
    found = []
    for match in FENCE.finditer(text):
        info = match.group("info").strip()
        if info.startswith("{"):
            continue
        found.append((info.split()[0] if info else "", match.group("body"), text.count("\n", 0, match.start()) + 1))
    return found


def _environment() -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", COLUMNS="100", TERM="dumb")
    env.pop("PYTHONSTARTUP", None)
    return env


def _command(line: str, previous: int | None) -> tuple:
    """``(argv, None)`` for a command to run, or ``(None, text)`` for one answered here."""
    words = shlex.split(line, comments=True)
    if words == ["echo", "$?"]:
        return None, f"{previous}\n"
    if words and words[0] == "symproof":
        return [sys.executable, "-m", "symproof", *words[1:]], None
    if words and words[0] == "python":
        return [sys.executable, *words[1:]], None
    raise AssertionError(f"an example runs {line!r}: only `symproof ...`, `python ...` and `echo $?` are run")


def run_console(body: str, where: Path, folder: Path) -> None:
    checker = doctest.OutputChecker()
    previous = None
    sessions = re.split(r"^\$ ", body, flags=re.M)
    assert sessions[0].strip() == "", f"{where}: a console block starts with output, not `$ `"
    for session in sessions[1:]:
        line, _, want = session.partition("\n")
        argv, answered = _command(line, previous)
        if argv is None:
            got = answered
        else:
            done = subprocess.run(argv, cwd=folder, env=_environment(), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT)
            previous, got = done.returncode, done.stdout
        if not checker.check_output(want, got, FLAGS):
            raise AssertionError(f"{where}: `$ {line}` printed something else:\n"
                                 + checker.output_difference(doctest.Example(line, want), got, FLAGS))


def run_doctest(body: str, where: Path, globs: dict) -> None:
    test = doctest.DocTestParser().get_doctest(body, globs, str(where), str(where), 0)
    output = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=output.append, clear_globs=False)
    globs.update(test.globs)  # DocTest works on a copy: the page's next block sees these names
    assert runner.failures == 0, f"{where}:\n" + "".join(output)


def _ci_lines() -> set:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^```bash\n(.*?)^```$", readme, re.S | re.M).group(1)
    return set(first.splitlines()), (REPO / ".ci" / "run").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(REPO).as_posix() for p in PAGES])
def test_every_example_on_the_page_runs_as_shown(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    # a page's doctests may import the modules it exported: they leave with the page
    monkeypatch.setattr(sys, "path", list(sys.path))
    modules = set(sys.modules)
    try:
        _run_page(page, tmp_path)
    finally:
        for name in set(sys.modules) - modules:
            if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
                del sys.modules[name]
        for entry in [e for e in sys.path_importer_cache if not os.path.isabs(e)]:
            del sys.path_importer_cache[entry]  # "kernels" of this page's folder, not of the next one's
        importlib.invalidate_caches()


def _run_page(page: Path, tmp_path: Path) -> None:
    globs: dict = {}
    first, ci = _ci_lines()
    for language, body, line in blocks(page.read_text(encoding="utf-8")):
        where = Path(f"{page.relative_to(REPO)}:{line}")
        named = FILE_LINE.match(body.splitlines()[0]) if body.strip() else None
        if language in ("python", "toml", "json5") and named:
            # JSON has no comments: the naming line is not part of the file
            content = body.split("\n", 1)[1] if language == "json5" else body
            (tmp_path / named.group("name")).write_text(content, encoding="utf-8")
        elif language == "toml":  # a variant file shown without a name must still be one
            from symproof.variants._spec import parse_variant

            parse_variant(tomllib.loads(body), source=str(where))
        elif language == "pycon" or (language == "python" and ">>>" in body):
            run_doctest(body, where, globs)
        elif language == "console":
            run_console(body, where, tmp_path)
        elif language == "bash":
            for command in filter(str.strip, body.splitlines()):
                assert command in first or command.strip() in ci, \
                    f"{where}: `{command}` is neither one of the README's two commands nor a step of .ci/run"
        elif language == "python":
            raise AssertionError(f"{where}: a python block that is neither a doctest (>>>) nor a file "
                                 "(first line `# NAME.py`): it would never run")


# -- the collector itself -------------------------------------------------------------------------------


def test_a_wrong_output_fails(tmp_path):
    with pytest.raises(AssertionError, match="printed something else"):
        run_console("$ symproof --version\nsymproof 99\n", Path("x.md"), tmp_path)


def test_an_ellipsis_stands_for_what_varies_and_exit_codes_are_compared(tmp_path):
    run_console("$ symproof --version\nsymproof ...\n$ echo $?\n0\n", Path("x.md"), tmp_path)
    with pytest.raises(AssertionError, match="printed something else"):
        run_console("$ symproof --version\nsymproof ...\n$ echo $?\n1\n", Path("x.md"), tmp_path)


def test_an_unknown_command_is_refused(tmp_path):
    with pytest.raises(AssertionError, match="only `symproof ...`"):
        run_console("$ rm -rf build\n", Path("x.md"), tmp_path)


def test_a_failing_doctest_fails():
    with pytest.raises(AssertionError):
        run_doctest(">>> 1 + 1\n3\n", Path("x.md"), {})


def test_blocks_skip_directives_and_keep_languages():
    text = "```{symproof-table} families\n```\n\n```console\n$ symproof --version\n```\n"
    assert [b[0] for b in blocks(text)] == ["console"]
