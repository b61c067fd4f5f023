"""The command line's help says what the code does: every "(default: X)" is the default the code uses,
and ``check --steps`` is, as its help says, the step budget of each property."""

from __future__ import annotations

import re

import pytest

from symproof._face._cli import build_parser

DEFAULT = re.compile(r"\(default:? ([^;)]*)")


def _code_default_of_none():
    """(command, option) -> the value the code uses when the option is not given (argparse's default None)."""
    from symproof._audit._probe import PROBE_SECONDS
    from symproof.kernels import RopeConfig

    return {
        ("export", "dtype"): RopeConfig.__dataclass_fields__["dtype"].default,
        ("audit", "timeout"): PROBE_SECONDS,
    }


#: options whose help states the default in words rather than as a value
IN_WORDS = {("verify", "ids"): "all", ("report", "only"): "all", ("export", "rotary_dim"): "all of --head-dim",
            ("check", "time_limit"): "none", ("checklist", "only"): "all", ("checklist", "attn"): "sdpa in float64, else eager in float32: eager in "
                                                                   "float64 turns fully masked pad rows into NaN"}


def _stated_defaults():
    parser = build_parser()
    for command, child in parser.subcommands.items():
        for action in child._actions:
            found = DEFAULT.search(action.help or "")
            if found:
                yield command, action.dest, found.group(1).strip(), action.default


STATED = list(_stated_defaults())


def _same(stated: str, value) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(stated) == float(value)
    return stated.rstrip("/") == str(value).rstrip("/")


def test_the_help_states_defaults():
    assert len(STATED) >= 10  # the table below is not empty by accident


@pytest.mark.parametrize("command, dest, stated, default", STATED, ids=[f"{c} {d}" for c, d, _, _ in STATED])
def test_every_stated_default_is_the_codes(command, dest, stated, default):
    if (command, dest) in IN_WORDS:
        assert default is None and stated == IN_WORDS[command, dest]
        return
    if default is None:
        default = _code_default_of_none()[command, dest]
    assert _same(stated, default), (command, dest, stated, default)


def test_check_steps_default_is_the_checks_constant():
    from symproof.variants._check import DEFAULT_STEPS

    steps = next(a for a in build_parser().subcommands["check"]._actions if a.dest == "steps")
    assert steps.default == DEFAULT_STEPS


def test_check_steps_are_per_property_as_the_help_says(monkeypatch):
    """Each property gets the whole --steps (not one budget shared by all): what the help promises."""
    from symproof.prover import _budget
    from symproof.variants import _check, load_variant, shipped_variants

    steps = next(a for a in build_parser().subcommands["check"]._actions if a.dest == "steps")
    assert "each property" in steps.help and "all the properties" not in steps.help
    granted = []
    real = _budget.steps

    def recording(limit, what="the statement"):
        if what != "prove_equal":
            granted.append((limit, what))
        return real(limit, what)

    monkeypatch.setattr(_budget, "steps", recording)
    results = _check.check_variant(load_variant(shipped_variants()["xpos"]), steps=7_000_000,
                                   kernel_targets={"numpy"})
    assert [limit for limit, _ in granted] == [7_000_000] * len(results)
    assert len({what for _, what in granted}) == len(results)  # one per property
