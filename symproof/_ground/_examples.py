"""The examples shipped with symproof, found by name.

The variant descriptions (``variants/*.toml``) and model configs
(``configs/*.json``) install inside the package ``symproof._derivations``, so
they are there after a wheel install as well as in a checkout.  Where a command
takes a file (``symproof check FILE``, ``symproof audit ... --like FILE``), an
argument that is not an existing path and names no folder is looked up here by
the example's file stem: ``symproof check xpos``, ``--like llama-3.1-8b``.
A path always wins over an example of the same name -- ``./xpos``, or the file
the name would mean with the example's suffix, ``./xpos.toml`` -- and the
command then says, on stderr, which file it read instead of the example.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources

from ._errors import VariantFileError
from ._text import did_you_mean

__all__ = ["Example", "shipped_examples", "resolve_example", "EXAMPLES_PACKAGE"]

#: the package the repository's top-level derivations/ folder installs as
EXAMPLES_PACKAGE = "symproof._derivations"

#: (folder in the package, file suffix, what the files are), in the order they are listed
FOLDERS = (("variants", ".toml", "variant"), ("configs", ".json", "model config"),
           ("layers", ".toml", "layer pattern"))


@dataclass(frozen=True)
class Example:
    name: str    # the file stem, which names it on the command line
    kind: str    # "variant" or "model config"
    path: str


def shipped_examples() -> dict:
    """Every shipped example by name, variants first, each group in file-name order."""
    root = resources.files(EXAMPLES_PACKAGE)
    found: dict = {}
    for folder, suffix, kind in FOLDERS:
        for entry in sorted((root / folder).iterdir(), key=lambda p: p.name):
            if entry.name.endswith(suffix):
                name = entry.name[:-len(suffix)]
                if name in found:  # a name must say which file it means
                    raise VariantFileError(f"shipped example {name!r} is both a {found[name].kind} and a {kind}")
                found[name] = Example(name, kind, os.fspath(entry))
    return found


def _names_a_folder(text: str) -> bool:
    return os.sep in text or bool(os.altsep and os.altsep in text)


def resolve_example(argument, option: str = "") -> str:
    """``argument`` as a path to read: itself when it exists or looks like a path, else a shipped example.

    A bare name that is neither a file here nor an example is refused with the closest example
    names; a path that does not exist is passed on, so that the reader names it in its own words.
    """
    text = os.fspath(argument)
    if not text or _names_a_folder(text):
        return text
    examples = shipped_examples()
    if text in examples:  # a local file named like the example is read, saying so
        example = examples[text]
        suffix = next(suffix for _folder, suffix, kind in FOLDERS if kind == example.kind)
        local = next((name for name in (text, text + suffix) if os.path.lexists(name)), None)
        if local is not None:
            _say(f"reading ./{local}, not the shipped example {text} (name it by its path to read it: "
                 f"{example.path})")
            return local
    if os.path.lexists(text):
        return text
    stem = text
    for _folder, suffix, _kind in FOLDERS:
        if text.endswith(suffix):
            stem = text[:-len(suffix)]
    example = examples.get(stem)
    if example is not None and (stem == text or example.path.endswith(text)):
        return example.path
    if stem != text:
        return text  # a file name with its suffix: "no such file" from the reader says it best
    hint = did_you_mean(stem, examples)
    where = f"{option} " if option else ""
    shown = ascii(text)[1:-1] if not text.isprintable() else text
    raise VariantFileError(f"{where}{shown}: no such file, and no shipped example of that name{hint} "
                           "(`symproof examples` lists them)")


def _say(note: str) -> None:
    import sys

    from ._text import one_line

    print(f"note: {one_line(note)}", file=sys.stderr, flush=True)
