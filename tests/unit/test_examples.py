"""Shipped examples by name: ``symproof check xpos``, ``--like llama-3.1-8b``, ``symproof examples``."""

from __future__ import annotations

import os
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest

from symproof import VariantFileError
from symproof._face._cli import main
from symproof._face._cli import example_title
from symproof._ground._examples import resolve_example, shipped_examples

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO / "derivations"


def test_every_shipped_file_is_an_example_and_nothing_else():
    kinds = {"variants": "variant", "configs": "model config", "layers": "layer pattern"}
    on_disk = {p.stem: p for sub, suffix in (("variants", ".toml"), ("configs", ".json"), ("layers", ".toml"))
               for p in (FOLDER / sub).glob(f"*{suffix}")}
    examples = shipped_examples()
    assert set(examples) == set(on_disk)
    for name, example in examples.items():
        assert Path(example.path).read_bytes() == on_disk[name].read_bytes()
        assert example.kind == kinds[on_disk[name].parent.name]


# (argument, the shipped file it resolves to)
BY_NAME = [
    ("xpos", "variants/xpos.toml"),
    ("xpos.toml", "variants/xpos.toml"),
    ("llama-3.1-8b", "configs/llama-3.1-8b.json"),
    ("llama-3.1-8b.json", "configs/llama-3.1-8b.json"),
    ("phi-3-mini-128k", "configs/phi-3-mini-128k.json"),
]


@pytest.mark.parametrize("argument, relative", BY_NAME)
def test_a_name_resolves_to_the_shipped_file(argument, relative, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an unrelated folder: nothing of that name here
    assert Path(resolve_example(argument)).read_bytes() == (FOLDER / relative).read_bytes()


# (argument, what it stays): paths are never replaced by an example
KEPT = [
    ("sub/xpos", "sub/xpos"),            # names a folder: a path, even when it does not exist
    ("absent.toml", "absent.toml"),      # a file name with its suffix: the reader says "no such file"
    ("xpos.json", "xpos.json"),          # the suffix of the other kind: not that example
    ("", ""),
]


@pytest.mark.parametrize("argument, kept", KEPT)
def test_a_path_is_passed_on(argument, kept, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_example(argument) == kept


def test_an_existing_path_wins_over_an_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "xpos").write_text("mine", encoding="utf-8")
    assert resolve_example("xpos") == "xpos"


# (mistyped name, the suggestion or None)
UNKNOWN = [("xpoz", "xpos"), ("llama-3.1-8", "llama-3.1-8b"), ("qqqqqq", None)]


@pytest.mark.parametrize("argument, suggestion", UNKNOWN)
def test_an_unknown_name_is_one_clear_error(argument, suggestion, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(VariantFileError) as caught:
        resolve_example(argument, "--like")
    message = str(caught.value)
    assert message.startswith(f"--like {argument}: no such file, and no shipped example of that name")
    assert ("did you mean" in message) is (suggestion is not None)
    if suggestion:
        assert f"did you mean {suggestion}?" in message


def test_symproof_examples_lists_each_once_with_its_title(capsys):
    assert main(["examples"]) == 0
    lines = capsys.readouterr().out.splitlines()
    examples = shipped_examples()
    assert [line.split()[0] for line in lines] == list(examples)
    for line, example in zip(lines, examples.values()):
        if example.kind == "variant":
            with open(example.path, "rb") as handle:
                assert line.endswith(tomllib.load(handle)["title"])
        assert example_title(example) in line


@pytest.mark.parametrize("name, first_words", [("xpos", "xPos"), ("llama-3.1-8b", "llama config, rope_type llama3")])
def test_check_by_name(name, first_words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", name]) in (0, 1)
    out = capsys.readouterr().out
    assert out.startswith(first_words)


def test_check_an_unknown_name_exits_2_with_a_suggestion(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "xpoz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("symproof check: error: xpoz: no such file") and "did you mean xpos?" in err


def test_audit_like_by_name(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text("def rope(x, positions):\n    return x\n", encoding="utf-8")
    code = main(["audit", "mine.py:rope", "--like", "half_split", "--json"])
    captured = capsys.readouterr()
    assert code == 1, captured.err  # the identity is no rotation: it differs, after the example was found
    assert "no such file" not in captured.err
    assert os.path.basename(shipped_examples()["half_split"].path) in captured.out
