"""A rotation block that reads the position ``m`` of the token it rotates.

``rotation.block`` entries may use ``m`` besides ``x`` (the angle) and ``r`` (the pair): a phase, or a
wobble, that depends on the position itself (FoPE-like schemes had to fold ``m`` into the angle with
every frequency 1).  Each verdict follows from the mathematics (comments say why); the kernels of every
target are checked against the exact definition by the kernel property (negative positions included).
"""

from __future__ import annotations

import pytest

from symproof import VariantFileError
from symproof.variants import Variant, check_variant


def _block(entries, **extra) -> Variant:
    c, s = entries
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100},
                              "rotation": {"block": [[c, f"-{s}"], [s, c]]}, **extra})


PHASE = ("cos(x + m/4)", "sin(x + m/4)")  # R(x + m/4): RoPE with every frequency raised by 1/4
WOBBLE = ("cos(x + sin(m)/8)", "sin(x + sin(m)/8)")  # R(x + sin(m)/8): a phase that is not linear in m

VERDICTS = {
    # R(x_i + i/4)^T R(x_j + j/4) = R((x_j - x_i) + (j - i)/4): a function of the offset; R(0) at offset 0
    "a linear phase": (_block(PHASE), {"norm": "proved", "relative": "proved", "shift": "proved",
                                       "plain_at_zero": "proved"}),
    # sin(j)/8 - sin(i)/8 is not a function of j - i; at offset 0 the phases cancel
    "a wobble": (_block(WOBBLE), {"norm": "proved", "relative": "refuted", "shift": "refuted",
                                  "plain_at_zero": "proved"}),
    # a block that grows with the position: not a rotation
    "a growing block": (_block(("exp(m/8) * cos(x)", "exp(m/8) * sin(x)")), {"norm": "refuted"}),
    # RoFormer's bound is for R(x): it says nothing about a block that turns by more than the angle
    "decay is not read off the bound": (_block(PHASE), {"decay": "unknown"}),
    # the kernel files (numpy, torch, C) print m where the block reads it
    "the kernels": (_block(WOBBLE), {"kernel": "proved"}),
    # R(m w + m/4) = R(m (w + 1/4)): RoPE at the frequencies raised by 1/4, and not RoPE at its own
    "RoPE at raised frequencies": (_block(PHASE, equivalent={"name": "RoPE, frequencies + 1/4",
                                                             "frequencies": "100**(-2*r/d) + 1/4"}),
                                   {"equivalence": "proved"}),
    "not RoPE at its own frequencies": (_block(PHASE, equivalent={"name": "RoPE", "frequencies": "100**(-2*r/d)"}),
                                        {"equivalence": "refuted"}),
}


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_verdicts_of_a_block_that_reads_the_position(case):
    variant, expected = VERDICTS[case]
    got = {r.claim.name: r.status for r in check_variant(variant, only=set(expected))}
    assert got == expected


def test_the_decay_verdict_says_why():
    (result,) = check_variant(_block(PHASE), only={"decay"})
    assert "reads the position m" in result.reason


@pytest.mark.parametrize("extra, why", [
    ({"position": {"axes": ["row", "col"], "axis": "mod(r, 2)"}}, "a position has 2 coordinates"),
    ({"position": {"relative": "i - j"}}, "position.relative does not give"),
])
def test_a_block_that_reads_m_without_one_position_per_token_is_refused(extra, why):
    with pytest.raises(VariantFileError) as info:
        _block(PHASE, **extra)
    message = str(info.value)
    assert "\n" not in message and "key 'rotation.block'" in message and why in message, message


def test_a_block_that_reads_a_table_by_the_position_is_checked_at_the_positions():
    with pytest.raises(VariantFileError) as info:
        _block(("cos(x + P(m))", "sin(x + P(m))"), params={"P": [0, 1, 2, 3]})
    message = str(info.value)
    assert "key 'rotation.block'" in message and "m = -1" in message and 'positions = "0..3"' in message, message
    assert _block(("cos(x + P(m))", "sin(x + P(m))"), params={"P": [0, 1, 2, 3]}, positions="0..3").block_reads_position
