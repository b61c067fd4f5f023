"""False claims about biases over several axes (``[bias] axes``, Swin): never proved.

Each row is a bias over (y, x) and a property that is false for it; the verdict must be *refuted* or
*unknown*, never *proved*.  Controls (true rows) must not be refuted.
"""

from __future__ import annotations

import pytest

from symproof.variants import Variant, check_variant

TABLE = [round(0.05 * k - 0.55, 2) for k in range(25)]
SWIN = "B((i_y - j_y + 2) * 5 + (i_x - j_x + 2))"


def _bias(formula: str, table=None, positions: str | None = None) -> Variant:
    data = {"name": "probe", "kind": "bias", "bias": {"axes": ["y", "x"], "formula": formula, "heads": 2,
                                                      "slope": "1 / (h + 1)"}}
    if table is not None:
        data["params"] = {"B": table}
    if positions is not None:
        data["positions"] = positions
    return Variant.from_dict(data)


FALSE = {
    # the key's own coordinates, not the offset
    "absolute key coordinates are relative": (_bias("-slope * (j_y + j_x)"), "relative"),
    # the query's x coordinate itself: a common shift c adds c_x
    "a query coordinate breaks shift": (_bias("-slope * abs(i_y - j_y) + i_x"), "shift"),
    # a symmetric table: B at (dy, dx) equals B at (-dy, -dx), so the direction is invisible
    "a symmetric table shows the direction": (_bias(SWIN, [TABLE[min(k, 24 - k)] for k in range(25)], "0..2"),
                                              "direction"),
    # the Manhattan distance is even in the offset vector
    "Manhattan distance shows the direction": (_bias("-slope * (abs(i_y - j_y) + abs(i_x - j_x))"), "direction"),
    # the table's entry at offset (0, 0) is 0.05
    "Swin's table is 0 at offset 0": (_bias(SWIN, TABLE, "0..2"), "plain_at_zero"),
}

TRUE = {
    "Swin's table is relative": (_bias(SWIN, TABLE, "0..2"), "relative"),
    "Manhattan distance is shift-invariant": (_bias("-slope * (abs(i_y - j_y) + abs(i_x - j_x))"), "shift"),
}


@pytest.mark.parametrize("case", sorted(FALSE))
def test_a_false_claim_is_never_proved(case):
    variant, key = FALSE[case]
    (result,) = check_variant(variant, only=[key], kernel_targets=())
    assert result.status in ("refuted", "unknown"), result.reason


@pytest.mark.parametrize("case", sorted(TRUE))
def test_a_true_claim_is_not_refuted(case):
    variant, key = TRUE[case]
    (result,) = check_variant(variant, only=[key], kernel_targets=())
    assert result.status == "proved", result.reason
