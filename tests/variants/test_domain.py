"""A position formula must be defined on the positions the file declares; otherwise one line at load.

Each row: a formula, the declared positions, and either the positions the refusal must name and a
word of the fix it must give, or ``None`` when the file is accepted (the formula is defined at every
declared position).  The refusal rests on an exact witness (see ``symproof.variants._domain``).
"""

from __future__ import annotations

import pytest

from symproof._ground._errors import VariantFileError
from symproof.variants._spec import parse_variant

TABLE = list(range(16))

#: (id, key, formula, positions, params, the positions named, a word of the fix) -- None: accepted
CASES = [
    ("table-every-integer", "position.transform", "P(m)", "integers", {"P": TABLE}, ["m = -1", "m = 16"], "clip"),
    ("table-nonnegative", "position.transform", "P(m)", "nonnegative", {"P": TABLE}, ["m = 16"], "clip"),
    ("table-clipped", "position.transform", "P(clip(m, 0, 15))", "integers", {"P": TABLE}, None, None),
    ("table-min-nonnegative", "position.transform", "P(Min(m, 15))", "nonnegative", {"P": TABLE}, None, None),
    ("sqrt-every-integer", "position.transform", "sqrt(m)", "integers", {}, ["m = -1"], 'positions = "nonnegative"'),
    ("sqrt-nonnegative", "position.transform", "sqrt(m)", "nonnegative", {}, None, None),
    ("log-of-zero", "position.transform", "log(m + 1)", "integers", {}, ["m = -1"], 'positions = "nonnegative"'),
    ("log-shifted-nonnegative", "position.transform", "log(m + 1)", "nonnegative", {}, None, None),
    ("log-at-zero-nonnegative", "position.transform", "log(m)", "nonnegative", {}, ["m = 0"], "where"),
    ("division-by-position", "position.transform", "1 / (m - 3)", "nonnegative", {}, ["m = 3"], "where"),
    ("scale-sqrt", "scale.query", "sqrt(m)", "integers", {}, ["m = -1"], 'positions = "nonnegative"'),
    ("total-power", "position.transform", "m**2 + 2**(m / 64)", "integers", {}, None, None),
    ("where-guarded-log", "position.transform", "where(m > 0, log(Max(m, 1)), 0)", "integers", {}, None, None),
]


def _file(key: str, formula: str, positions: str, params: dict) -> dict:
    data = {"name": "domain", "kind": "rotary", "width": 4, "pairing": "adjacent", "positions": positions,
            "frequencies": {"base": "10000"}}
    if params:
        data["params"] = params
    section, name = key.split(".")
    data.setdefault(section, {})[name] = formula
    if key == "scale.query":
        data["scale"]["key"] = "1"
    return data


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_formula_defined_on_the_declared_positions(case):
    _, key, formula, positions, params, named, fix = case
    data = _file(key, formula, positions, params)
    if named is None:
        parse_variant(data, source="f.toml")
        return
    with pytest.raises(VariantFileError) as raised:
        parse_variant(data, source="f.toml")
    message = str(raised.value)
    assert "\n" not in message and f"key '{key}'" in message and "is not defined at" in message
    for position in named:
        assert position in message, message
    assert fix in message, message


BIAS = [
    ("bias-table-offset", "w(j - i)", "integers", ["i = 1, j = 0"], "clip"),
    ("bias-table-clipped", "w(clip(j - i, 0, 3))", "integers", None, None),
    ("tupe-every-integer", "w(Min(i, 3)) * w(Min(j, 3))", "integers", ["i = -1"], 'positions = "nonnegative"'),
    ("tupe-nonnegative", "w(Min(i, 3)) * w(Min(j, 3))", "nonnegative", None, None),
]


@pytest.mark.parametrize("case", BIAS, ids=[c[0] for c in BIAS])
def test_bias_defined_on_the_declared_positions(case):
    """The same rule for a bias (once refused by a build at one point, once refuted by its kernel)."""
    _, formula, positions, named, fix = case
    data = {"name": "b", "kind": "bias", "positions": positions, "params": {"w": [1, 2, 3, 4]},
            "bias": {"formula": formula, "heads": 1, "slope": "1"}}
    if named is None:
        parse_variant(data, source="b.toml")
        return
    with pytest.raises(VariantFileError) as raised:
        parse_variant(data, source="b.toml")
    message = str(raised.value)
    assert "\n" not in message and "key 'bias.formula'" in message
    for position in named:
        assert position in message, message
    assert fix in message, message


HEAD_TABLES = [("one-entry-per-head", 4, None), ("fewer-entries-than-heads", 8, "head h = 4")]


@pytest.mark.parametrize("case", HEAD_TABLES, ids=[c[0] for c in HEAD_TABLES])
def test_a_per_head_table_has_an_entry_for_every_head(case):
    """A table read by the head index: every head reads inside it (load used to build head 0 only,
    and the kernels then read past the table at the other heads)."""
    _, heads, named = case
    data = {"name": "b", "kind": "bias", "params": {"w": [1, 2, 3, 4]},
            "bias": {"formula": "w(h) * (j - i)", "heads": heads, "slope": "1"}}
    if named is None:
        parse_variant(data, source="b.toml")
        return
    with pytest.raises(VariantFileError, match=rf"key 'bias.formula'.*{named}.*one entry per head"):
        parse_variant(data, source="b.toml")
