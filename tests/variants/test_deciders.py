"""Answers a reader sees at once must not be left unknown: each case is a small variant file whose
property has an evident answer, decided here with an exact witness (or proved).

Each case names the property, the expected status and, for a refutation, the largest position the
witness may use (a reader's witness is small) or the head that fails.
"""

from __future__ import annotations

import pytest
import sympy as sp

from symproof.variants import Variant, check_variant

ROPE = {"name": "probe", "kind": "rotary", "width": 4, "pairing": "adjacent",
        "frequencies": {"rule": "geometric", "base": 10000}}

# a learned table of 4 positions read at min(i, 3): s(1, 1) and s(0, 0) already differ
TABLE_BIAS = {"name": "probe", "kind": "bias", "positions": "nonnegative",
              "params": {"u": [0.5, -0.25, 0.75, 1], "v": [1, 0.5, -1, 2]},
              "bias": {"formula": "u(Min(i, 3)) * v(Min(j, 3))", "heads": 1, "slope": "1"}}

#: (case id, file, property, expected status, largest |position| of the witness or None)
SMALL_WITNESSES = [
    ("table-shift", TABLE_BIAS, "shift", "refuted", 1),
    ("table-plain", TABLE_BIAS, "plain_at_zero", "refuted", 1),
    ("table-causal", TABLE_BIAS, "causal_relative", "refuted", 2),
    # g(m) = m^2 on m >= 0: s(1, 2) against s(0, 1), inside the positions (j - i = -1 is not)
    ("square-relative", {**ROPE, "positions": "nonnegative", "position": {"transform": "m**2"}}, "relative",
     "refuted", 2),
    ("square-shift", {**ROPE, "positions": "nonnegative", "position": {"transform": "m**2"}}, "shift", "refuted", 1),
]

_POSITIONS = {"i", "j", "c", "m", "t", "D"}


def _positions(witness) -> dict:
    return {str(k): sp.sympify(v) for k, v in witness.items() if str(k).split("_")[0] in _POSITIONS}


@pytest.mark.parametrize("case, data, key, status, largest", SMALL_WITNESSES, ids=[c[0] for c in SMALL_WITNESSES])
def test_small_witnesses_inside_the_positions(case, data, key, status, largest):
    (result,) = check_variant(Variant.from_dict(data), only={key})
    assert result.status == status, (result.status, result.reason)
    (witness,) = [p.witness for p in result.proof.parts if p.witness]
    positions = _positions(witness)
    assert positions and all(v >= 0 for v in positions.values()), witness
    assert max(abs(v) for v in positions.values()) <= largest, witness
