"""Claims about learned position tables and additive amplitudes: exact values, never float closeness.

A statement false for the table's exact values must never be *proved*, however close in floats (one ulp, a
float copy of a sine); one true for them must never be *refuted*.  Each row's truth is worked out in its
comment.
"""

from __future__ import annotations

import numpy as np
import pytest

from symproof.variants import Variant, check_variant


def _table(rows, clip=False, **extra) -> Variant:
    rows = np.asarray(rows, dtype=np.float64)
    positions = "nonnegative" if clip else f"0..{len(rows) - 1}"
    return Variant.from_dict({"name": "probe", "kind": "additive", "width": rows.shape[1], "positions": positions,
                              "vectors": {"rows": rows, **({"clip": True} if clip else {})}, **extra})


def _amplitude(formula: str, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "additive", "width": 4, "frequencies": {"base": 100},
                              "position": {"amplitude": formula}, **extra})


TURNS = [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0], [1.0, 0.0], [0.0, 1.0]]
ULP = np.nextafter(0.0, 1.0)
# sin and cos of t at base 100, width 2 (omega = 1), in float64
SINES = [[np.sin(t), np.cos(t)] for t in range(4)]
SINUSOIDAL = {"name": "sinusoidal", "frequencies": "100**(-2*r/d)"}

#: false for the exact values: never proved
FALSE = {
    # p_4 . p_5 = ULP != 0 = p_0 . p_1
    "one ulp off quarter turns is relative": (_table(TURNS[:5] + [[ULP, 1.0]]), "relative"),
    # p_4 . p_5 = ULP, p_3 . p_4 = 0
    "one ulp off quarter turns is shift-invariant": (_table(TURNS[:5] + [[ULP, 1.0]]), "shift"),
    # 0.6^2 + 0.8^2 in float64 rounds to 1.0, but the exact binary rationals' sum is not 1
    "0.6, 0.8 has the norm of 1, 0": (_table([[1.0, 0.0], [0.6, 0.8]]), "constant_norm"),
    # past the table p_t = p_3 = (0, -1): p_1 . p_4 = -1, p_0 . p_3 = 0
    "a clipped table is relative past its end": (_table(TURNS[:4], clip=True), "relative"),
    # p_1 + p_3 = 0 but p_2 + p_4 = (-1, -1)
    "a clipped table has a shift structure": (_table(TURNS[:4], clip=True), "shift_structure"),
    # float64 sin(1) is a rational, sin(1) is not
    "a float copy of the sinusoidal table is the table": (_table(SINES, equivalent=SINUSOIDAL), "equivalence"),
    # a dot product is symmetric: p_0 . p_D = p_D . p_0 ("direction" is a sensitivity: proved would say it shows)
    "the offset's sign shows in a table": (_table(TURNS), "direction"),
    # 0.25 PE(t) != PE(t) at t = 1
    "scaled sinusoidal is the sinusoidal table": (_amplitude("0.25", equivalent=SINUSOIDAL), "equivalence"),
    # ||p_t||^2 = (1 + t^2)^2 n
    "a growing amplitude keeps the norm": (_amplitude("1 + m**2"), "constant_norm"),
    # p_i . p_j carries (1 + i^2)(1 + j^2)
    "a growing amplitude is relative": (_amplitude("1 + m**2"), "relative"),
    # a(t + D) / a(t) depends on t for 1 + t^2
    "a growing amplitude keeps the shift structure": (_amplitude("1 + m**2"), "shift_structure"),
}

#: true for the exact values: never refuted
TRUE = {
    # quarter turns: p_i . p_j = cos((j - i) pi / 2)
    "quarter turns are relative": (_table(TURNS), "relative"),
    "quarter turns are shift-invariant": (_table(TURNS), "shift"),
    "quarter turns step by one rotation": (_table(TURNS), "shift_structure"),
    "quarter turns keep the norm": (_table(TURNS), "constant_norm"),
    # a constant table: every product the same, A = identity
    "a constant table is relative": (_table([[0.1, 0.7]] * 5), "relative"),
    "a constant table has a shift structure": (_table([[0.1, 0.7]] * 5), "shift_structure"),
    "a clipped constant table is shift-invariant": (_table([[0.1, 0.7]] * 3, clip=True), "shift"),
    # alpha^2 cancels from both sides of every statement
    "a constant amplitude keeps the norm": (_amplitude("0.25"), "constant_norm"),
    "a constant amplitude is relative": (_amplitude("0.25"), "relative"),
    "a constant amplitude keeps the shift structure": (_amplitude("0.25"), "shift_structure"),
    # 2^(t + D) = 2^D 2^t: a(0) p_{t+D} = a(D) A_D p_t
    "an exponential amplitude keeps the shift structure": (_amplitude("2**m"), "shift_structure"),
    # the amplitude 1 is the table itself
    "amplitude 1 is the sinusoidal table": (_amplitude("1", equivalent=SINUSOIDAL), "equivalence"),
}


@pytest.mark.parametrize("case", sorted(FALSE))
def test_a_false_claim_is_never_proved(case):
    variant, key = FALSE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status != "proved", (case, result.status, result.reason)


@pytest.mark.parametrize("case", sorted(TRUE))
def test_a_true_claim_is_never_refuted(case):
    variant, key = TRUE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status != "refuted", (case, result.status, result.reason)
