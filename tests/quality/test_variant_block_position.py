"""Claims about rotation blocks (``x``, ``r``, and the position ``m``): a false one is never proved.

``equivalence`` states ``M_q(m) = R(m omega')``, the rotation at the named scheme's frequencies: a block that
is not that rotation is not equivalent, whatever its frequencies (a block compared with itself at the named
frequencies once proved R(x) without its minus sign "equivalent" to RoPE).
"""

from __future__ import annotations

import pytest

from symproof.variants import Variant, check_variant

ROPE = {"name": "RoPE", "frequencies": "100**(-2*r/d)"}


def _block(c: str, s: str, minus: str = "-", **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100},
                              "rotation": {"block": [[c, f"{minus}{s}"], [s, c]]}, **extra})


FALSE = {
    # [[cos, sin], [sin, cos]] is no rotation (determinant cos 2x)
    "R without its minus sign is RoPE": (_block("cos(x)", "sin(x)", minus="", equivalent=ROPE), "equivalence"),
    # R(x + r/4) differs from R(x) for the pair r = 1
    "a per-pair phase is RoPE": (_block("cos(x + r/4)", "sin(x + r/4)", equivalent=ROPE), "equivalence"),
    # R(x + m/4) = R(m (w + 1/4)), not R(m w)
    "a position phase is RoPE at its own frequencies": (_block("cos(x + m/4)", "sin(x + m/4)", equivalent=ROPE),
                                                        "equivalence"),
    # sin(j)/8 - sin(i)/8 is not a function of j - i
    "a position wobble is relative": (_block("cos(x + sin(m)/8)", "sin(x + sin(m)/8)"), "relative"),
    "a position wobble is shift-invariant": (_block("cos(x + sin(m)/8)", "sin(x + sin(m)/8)"), "shift"),
    # exp(m/8) R(x) stretches
    "a growing block keeps norms": (_block("exp(m/8) * cos(x)", "exp(m/8) * sin(x)"), "norm"),
}

TRUE = {
    "a position phase is RoPE at raised frequencies": (
        _block("cos(x + m/4)", "sin(x + m/4)", equivalent={"name": "RoPE + 1/4", "frequencies": "100**(-2*r/d) + 1/4"}),
        "equivalence"),
    "the standard block written out is RoPE": (_block("cos(x)", "sin(x)", equivalent=ROPE), "equivalence"),
    "a position wobble cancels at offset 0": (_block("cos(x + sin(m)/8)", "sin(x + sin(m)/8)"), "plain_at_zero"),
}


@pytest.mark.parametrize("case", sorted(FALSE))
def test_a_false_claim_about_a_block_is_refuted(case):
    variant, key = FALSE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status == "refuted", (case, result.status, result.reason)


@pytest.mark.parametrize("case", sorted(TRUE))
def test_a_true_claim_about_a_block_is_proved(case):
    variant, key = TRUE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status == "proved", (case, result.status, result.reason)
