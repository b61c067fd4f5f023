"""``positions = "0..N"``: a declared range of positions, read, checked and decided over that range only.

A learned absolute table of ``N + 1`` rows is defined there without a clip; a formula undefined inside the
range is refused at load; a verdict never rests on a position past ``N`` (nor below 0); the table says the
properties are decided over the range.  The kernels' refusals outside the range are tested with the other
out-of-bounds cases in ``test_kernel_bounds.py``.
"""

from __future__ import annotations

import pytest

from symproof import VariantFileError
from symproof.variants import Variant, check_variant
from symproof.variants._results import format_results

P16 = list(range(16))


def _rope(positions: str, transform: str, params=None, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "positions": positions, "frequencies": {"base": 100}, "params": params or {},
                              "position": {"transform": transform}, **extra})


def _bias(positions: str, formula: str, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "bias", "positions": positions,
                              "bias": {"formula": formula, "heads": 1, "slope": "1"}, **extra})


@pytest.mark.parametrize("text, last", [("0..1", 1), ("0..15", 15), ("0..4095", 4095),
                                        ("0..9007199254740991", 2**53 - 1)])
def test_a_range_is_read(text, last):
    variant = _rope(text, "m")
    assert (variant.last_position, variant.from_zero, variant.describe()["positions"]) == (last, True, text)


@pytest.mark.parametrize("text", ["0..0", "1..5", "0..N", "-3..3", "0..9007199254740992", "0 .. 15", "0..015",
                                  "0...15", "0..1e3"])
def test_a_range_that_is_not_0_to_n_is_refused_in_one_line(text):
    with pytest.raises(VariantFileError) as info:
        _rope(text, "m")
    message = str(info.value)
    assert "\n" not in message and "key 'positions'" in message and 'a range "0..N"' in message, message


def test_a_range_with_a_call_length_rule_is_refused():
    with pytest.raises(VariantFileError, match=r"key 'positions': a range \"0..N\" cannot be combined with \[length\]"):
        Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half", "positions": "0..99",
                           "frequencies": {"base": "100 * Max(seq_len / 64, 1)"}, "length": {"threshold": 64}})


# -- the partial-definition check reads the range -------------------------------------------------------


def test_a_table_of_one_row_per_position_needs_no_clip():
    variant = _rope("0..15", "P(m)", {"P": P16})
    assert variant.angle_position(15) == 15


@pytest.mark.parametrize("positions, at", [("0..16", "m = 16"), ("integers", "m = -1"), ("nonnegative", "m = 16")])
def test_a_table_read_past_the_range_is_refused_naming_the_position_and_the_range_fix(positions, at):
    with pytest.raises(VariantFileError) as info:
        _rope(positions, "P(m)", {"P": P16})
    message = str(info.value)
    assert "\n" not in message and at in message and 'declare positions = "0..15"' in message, message


# -- verdicts over the range only (the comments say why each holds) ---------------------------------------


VERDICTS = {
    # a learned table whose last step is 6, not 1: P(15) - P(14) != P(1) - P(0), inside 0..15
    "uneven table": (_rope("0..15", "P(m)", {"P": [*range(15), 20]}), {"relative": "refuted", "shift": "refuted"}),
    # mod(m, 200) = m on 0..100: the offset form holds there; on 0..300, 199 and 200 break it
    "mod below its period": (_rope("0..100", "mod(m, 200)"), {"relative": ("proved", "unknown")}),
    "mod past its period": (_rope("0..300", "mod(m, 200)"), {"relative": "refuted"}),
    # the sign of the offset shows only past a distance of 10
    "direction past the range": (_bias("0..10", "-where(abs(j - i) > 10, j - i, abs(j - i))"),
                                 {"direction": ("refuted", "unknown")}),
    "direction inside the range": (_bias("0..20", "-where(abs(j - i) > 10, j - i, abs(j - i))"),
                                   {"direction": "proved"}),
    # the query's own position enters only past 50
    "absolute past the range": (_bias("0..50", "-abs(j - i) + where(i > 50, i, 0)"),
                                {"relative": ("proved", "unknown")}),
    "absolute inside the range": (_bias("0..100", "-abs(j - i) + where(i > 50, i, 0)"), {"relative": "refuted"}),
    # RoPE's bound first rises from D = 3 to 4 (base 100, two pairs): no such distance in 0..3
    "decay rise past the range": (_rope("0..3", "m"), {"decay": "unknown"}),
    "decay rise inside the range": (_rope("0..4", "m"), {"decay": "refuted"}),
}


def _position_values(result) -> list:
    return [int(v) for part in result.proof.parts for k, v in dict(part.witness or {}).items()
            if str(k).split("_")[0] in ("i", "j", "m", "c", "t", "D")]


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_verdicts_are_decided_over_the_range_only(case):
    variant, expected = VERDICTS[case]
    results = check_variant(variant, only=set(expected))
    for result in results:
        want = expected[result.claim.name]
        assert result.status in (want if isinstance(want, tuple) else (want,)), (case, result.status, result.reason)
        if result.status == "refuted" or (result.status == "proved" and result.claim.kind == "not-in-general"):
            assert all(0 <= v <= variant.last_position for v in _position_values(result)), result.proof.parts


def test_the_table_says_the_properties_are_decided_over_the_range():
    variant = _rope("0..15", "P(m)", {"P": P16})
    results = check_variant(variant, only={"norm"})
    text = format_results(variant, results, 0.0)
    assert 'positions 0..15 (positions = "0..15"): every property is decided over these positions only' in text
    assert "decided over" not in format_results(_rope("nonnegative", "m"), results, 0.0)


def test_the_kernel_property_probes_inside_the_range_only():
    (result,) = check_variant(_rope("0..15", "P(m)", {"P": P16}), only={"kernel"})
    assert result.status == "proved", result.reason
    positions = {p for part in result.proof.parts for p in (part.data or {}).get("positions", [])}
    assert positions and min(positions) == 0 and max(positions) == 15, positions


@pytest.mark.parametrize("position", [-1, 16, 2.5, float("nan"), 2.0**63])
def test_the_in_process_kernel_refuses_a_position_outside_the_range(position):
    import numpy as np

    from symproof import PositionOutOfRangeError
    from symproof.variants import build_kernel

    kernel = build_kernel(_rope("0..15", "P(m)", {"P": P16}))
    x = np.ones((1, 4))
    assert np.isfinite(kernel.apply(x, np.array([15.0]))).all()
    with pytest.raises(PositionOutOfRangeError, match=r"outside the file's positions 0\.\.15"):
        kernel.apply(x, np.array([position]))


def test_the_audit_probes_inside_the_range_only():
    from symproof._audit._audit import POSITIONS, audit_positions

    positions, _ = audit_positions(_rope("0..100", "m"))
    assert max(positions) == 100 and min(positions) >= 0 and len(set(positions)) == len(positions)
    assert audit_positions(_rope("nonnegative", "m"))[0] == POSITIONS
