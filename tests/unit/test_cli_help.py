"""The command line helps: --version, truthful --help, subcommand usage and "did you mean" on a typo."""

from __future__ import annotations

import argparse

import pytest

import symproof
from symproof._face._cli import COMMANDS, build_parser, main
from symproof.kernels import KERNELS

USAGE_ERROR = 2


def _subparsers():
    parser = build_parser()
    return parser.subcommands


def _run(capsys, argv):
    """(exit code, stdout, stderr) of ``symproof ARGV`` in process; argparse's exits included."""
    try:
        code = main(argv)
    except SystemExit as done:
        code = done.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_version(capsys):
    code, out, err = _run(capsys, ["--version"])
    assert (code, out.strip(), err) == (0, f"symproof {symproof.__version__}", "")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_of_every_subcommand_has_help(name):
    child = _subparsers()[name]
    for action in child._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
        if action.choices is not None and action.option_strings:
            for choice in action.choices:  # the help names what may be chosen
                assert choice in child.format_help(), (name, action.dest, choice)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_exits_0_with_the_subcommands_usage(name, capsys):
    code, out, _ = _run(capsys, [name, "--help"])
    assert code == 0 and out.startswith(f"usage: symproof {name}")


# (subcommand, option, whether it is required): the usage shows a required option without brackets
REQUIRED = [
    ("export", "--head-dim", True),
    ("export", "--out", True),
    ("export", "--rotary-dim", False),
    ("audit", "--like", True),
    ("audit", "--head-dim", False),
    ("check", "--report", False),
    ("report", "--out", False),
]


@pytest.mark.parametrize("name, option, required", REQUIRED)
def test_required_options_are_shown_required(name, option, required):
    child = _subparsers()[name]
    usage = child.format_usage()
    action = next(a for a in child._actions if option in a.option_strings)
    assert action.required is required
    assert (f"[{option}" not in usage) is required, usage
    assert action.help.endswith("(required)") is required


def test_export_offers_only_the_kernels_that_exist(capsys):
    code, out, _ = _run(capsys, ["export", "--help"])
    assert code == 0 and "sinusoidal" not in out
    kernel = next(a for a in _subparsers()["export"]._actions if a.dest == "kernel")
    assert tuple(kernel.choices) == KERNELS
    code, _, err = _run(capsys, ["export", "sinusoidal", "--head-dim", "8", "--out", "x"])
    assert code == USAGE_ERROR and "invalid choice: 'sinusoidal'" in err


# (argv, the usage line printed, what the error says)
MISTYPED = [
    (["verify", "--jsn"], "usage: symproof verify", "unrecognized arguments: --jsn; did you mean --json?"),
    (["check", "xpos", "--reprot", "out"], "usage: symproof check", "did you mean --report?"),
    (["check", "xpos", "--jsno"], "usage: symproof check", "did you mean --json?"),
    (["export", "rope", "--head-dim", "8", "--out", "o", "--pairng", "half"], "usage: symproof export",
     "did you mean --pairing?"),
    (["audit", "f.py:g", "--like", "xpos", "--seqlen", "4"], "usage: symproof audit", "did you mean --seq-len?"),
    (["report", "--no-pfd"], "usage: symproof report", "did you mean --no-pdf?"),
    (["verfy"], "usage: symproof [-h]", "unknown command 'verfy'; did you mean verify?"),
    (["exmaples"], "usage: symproof [-h]", "did you mean examples?"),
]


@pytest.mark.parametrize("argv, usage, message", MISTYPED, ids=[" ".join(a) for a, _, _ in MISTYPED])
def test_a_typo_gets_the_subcommands_usage_and_a_suggestion(argv, usage, message, capsys):
    code, out, err = _run(capsys, argv)
    assert code == USAGE_ERROR and out == ""
    assert err.startswith(usage), err
    assert message in err, err


# nothing close: the error says what is wrong and suggests nothing
FAR_OFF = [
    ["verify", "--zzzzzz"],
    ["qqqq"],
    ["check", "xpos", "--xyzzy"],
]


@pytest.mark.parametrize("argv", FAR_OFF, ids=[" ".join(a) for a in FAR_OFF])
def test_no_suggestion_when_nothing_is_close(argv, capsys):
    code, _, err = _run(capsys, argv)
    assert code == USAGE_ERROR and "did you mean" not in err
    assert "unrecognized arguments" in err or "unknown command" in err


# (claim pattern, the suggestion or None)
CLAIM_TYPOS = [
    ("rope.rotatoin", "rope.rotation"),
    ("attn.equivarance", "attn.equivariance"),
    ("grad.frequncy", "grad.frequency"),
    ("zzz.qqqq", None),
]


@pytest.mark.parametrize("pattern, suggestion", CLAIM_TYPOS)
def test_a_mistyped_claim_id_gets_a_suggestion(pattern, suggestion, capsys):
    code, _, err = _run(capsys, ["verify", pattern])
    assert code == USAGE_ERROR and f"no claim matches {pattern!r}" in err
    if suggestion is None:
        assert "did you mean" not in err
    else:
        assert f"did you mean {suggestion}?" in err
    assert len(err.strip().splitlines()) == 1
