"""Claims about files that declare ``positions = "0..N"``: decided over 0..N, never past it.

A statement false inside the range must never be *proved*; one true inside the range (whatever it is past
N) must never be *refuted*: a witness past N, or a rise of the decay bound past N, refutes nothing.  Each
row's truth inside the range is worked out in its comment.
"""

from __future__ import annotations

import pytest

from symproof.variants import Variant, check_variant


def _rope(positions: str, transform: str, params=None) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "positions": positions, "frequencies": {"base": 100}, "params": params or {},
                              "position": {"transform": transform}})


def _bias(positions: str, formula: str) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "bias", "positions": positions,
                              "bias": {"formula": formula, "heads": 1, "slope": "1"}})


#: false inside the range: never proved
FALSE_INSIDE = {
    # P(15) - P(14) = 6, P(1) - P(0) = 1
    "an uneven table is relative": (_rope("0..15", "P(m)", {"P": [*range(15), 20]}), "relative"),
    # the bias is -|j - i| at every distance up to 10: D and -D score alike inside 0..10 ("direction" is a
    # sensitivity: proved would say the sign of the offset shows)
    "the direction shows": (_bias("0..10", "-where(abs(j - i) > 10, j - i, abs(j - i))"), "direction"),
    # mod(200, 200) = 0 != 200
    "mod past its period is relative": (_rope("0..300", "mod(m, 200)"), "relative"),
    # i enters past 50, inside 0..100
    "a late absolute term is relative": (_bias("0..100", "-abs(j - i) + where(i > 50, i, 0)"), "relative"),
    # the bias rises again past a distance of 20 (b(21, 0) > b(21, 1)), inside 0..40
    "a late rise decays": (_bias("0..40", "-abs(j - i) + where(i - j > 20, i - j, 0)"), "decay"),
}

#: true inside the range (false past it): never refuted
TRUE_INSIDE = {
    # mod(m, 200) = m on 0..100
    "mod below its period is relative": (_rope("0..100", "mod(m, 200)"), "relative"),
    "mod below its period is shift-invariant": (_rope("0..100", "mod(m, 200)"), "shift"),
    # where(i > 50, i, 0) = 0 on 0..50
    "an absolute term past the range": (_bias("0..50", "-abs(j - i) + where(i > 50, i, 0)"), "relative"),
    # RoPE's bound (base 100, two pairs) first rises at D = 3 -> 4: non-increasing on 0..3
    "the bound falls on 0..3": (_rope("0..3", "m"), "decay"),
    # -|j - i| on 0..5: the rise past a distance of 20 is outside
    "a late rise is outside": (_bias("0..5", "-abs(j - i) + where(i - j > 20, i - j, 0)"), "decay"),
}


@pytest.mark.parametrize("case", sorted(FALSE_INSIDE))
def test_a_claim_false_inside_the_range_is_never_proved(case):
    variant, key = FALSE_INSIDE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status != "proved", (case, result.status, result.reason)


@pytest.mark.parametrize("case", sorted(TRUE_INSIDE))
def test_a_claim_true_inside_the_range_is_never_refuted(case):
    variant, key = TRUE_INSIDE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status != "refuted", (case, result.status, result.reason)
