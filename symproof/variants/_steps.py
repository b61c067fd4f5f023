"""The step budget's default and the removed seconds budget's error: read before a file is loaded (the
command's options are checked first), so kept apart from the checker and its imports."""

from __future__ import annotations

#: the default step budget of each property (``symproof check --steps``): the verdicts depend on it and on
#: the file only.  Calibrated so that every shipped and published-scheme variant is decided as it was on an
#: idle machine under the old 5-s CPU budget (the costliest decided property, the
#: shift of tests/variants/published/logn_scaling.toml, counts 480 584 steps: a quarter of it)
DEFAULT_STEPS = 2_000_000


def removed_budget(what: str, steps: str, time_limit: str) -> str:
    """The one-line error for the removed seconds budget, naming the options that replace it."""
    return (f"{what} was removed: budgets count prover steps now, so that a verdict never depends on the "
            f"machine ({steps}, default {DEFAULT_STEPS}); {time_limit} stops a run that takes too long, "
            "without a verdict")
