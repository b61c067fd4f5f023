"""Reading a file is held to a CPU budget: past it, one line naming the file, what was being read and
the budget (never a hang); within it, the loader's answer unchanged."""

from __future__ import annotations

import time

import pytest

from symproof import VariantFileError
from symproof._face._check_command import _loaded


def _spin(path):
    end = time.process_time() + 5
    while time.process_time() < end:
        pass
    return path


@pytest.mark.parametrize("what, why", [("the description", ": its formulas are too costly to evaluate for every pair"),
                                       ("the layer types", ""), ("the config", "")])
def test_a_load_past_its_budget_is_one_line(what, why):
    start = time.process_time()
    with pytest.raises(VariantFileError) as caught:
        _loaded(_spin, "slow.toml", 0.05, what, why)
    assert time.process_time() - start < 3  # stopped near the budget, not at the loader's end
    assert str(caught.value) == (f"slow.toml: loading {what} takes more than 0.05 s of CPU time (the load "
                                 f"budget){why}")


def test_a_load_within_its_budget_returns_what_it_read():
    assert _loaded(lambda path: ("read", path), "fast.toml", 5, "the description") == ("read", "fast.toml")
