"""False claims about rotary files with heads, and about RoPE plus a bias: never proved.

Each row is a file and a property whose statement is false for the file as written: the verdict must be
*refuted* (pinned, so a regression to *unknown* shows), and where one head alone breaks it, that head is
named.  A decider that judged the heads all at once, or only head 0, or the rotary part without the bias,
would prove these rows.  True rows (controls) must not be refuted; where the prover cannot decide them
the verdict is *unknown*, never a wrong one.
"""

from __future__ import annotations

import pytest

from symproof.variants import Variant, check_variant

ALIBI = {"formula": "-slope * abs(j - i)", "slope": "2**(-8*(h + 1)/heads)"}
ROPE = {"name": "RoPE, base 100", "frequencies": "100**(-2*r/d)"}


def _file(heads=4, **extra) -> Variant:
    data = {"name": "probe", "kind": "rotary", "width": 4, "pairing": "half", "heads": heads,
            "frequencies": {"base": 100}, **extra}
    return Variant.from_dict(data)


FALSE = {
    # head 0 has base 100 (RoPE itself); head 1 has base 200: a per-head file is not a single-base RoPE
    "per-head bases are one RoPE": (_file(frequencies={"base": "100 * 2**h"}, equivalent=ROPE), "equivalence",
                                    "head h = 1"),
    # the last head alone has another base: a decider that looked at head 0 (or at the first heads) proves it
    "only the last head differs": (_file(frequencies={"base": "where(h == 3, 300, 100)"}, equivalent=ROPE),
                                   "equivalence", "head h = 3"),
    # head 2 scales its queries by 2^m: its score reads i itself, not only j - i
    "one head's scale is relative": (_file(scale={"query": "where(h == 2, 2**m, 1)"}), "relative", "head h = 2"),
    "one head's scale keeps norms": (_file(scale={"query": "where(h == 2, 2**m, 1)"}), "norm", "head h = 2"),
    # head 1 does not rotate: q^T k at every offset, whatever its sign
    "a head without rotation sees the direction": (
        _file(frequencies={"rule": "formula", "formula": "where(h == 1, 0, 100**(-2*r/d))"}), "direction", "head h = 1"),
    # the rotary part is offset-only, the bias -slope * j is not: the sum is not (q = k = 0 shows the bias)
    "RoPE plus a key bias is relative": (_file(bias={"formula": "-slope * j", "slope": "1"}), "relative", ""),
    "RoPE plus a key bias is shift-invariant": (_file(bias={"formula": "-slope * j", "slope": "1"}), "shift", ""),
    # ALiBi is 0 at offset 0, but a bias of 1 is not: s(i, i) = q^T k + 1
    "RoPE plus a constant bias is plain at zero": (_file(bias={"formula": "1", "slope": "1"}), "plain_at_zero", ""),
    # the bias of head 3 alone reads i: relative in heads 0..2 only
    "a bias reading i in one head is relative": (_file(bias={"formula": "-abs(j - i) + where(h == 3, i, 0)",
                                                             "slope": "1"}), "relative", "head h = 3"),
    # a bias that grows with the distance: for small contents the score's bound rises
    "RoPE plus a rising bias decays": (_file(bias={"formula": "slope * abs(j - i)", "slope": "1"}), "decay", ""),
    # NoPE plus a bias even in the offset: nothing shows the sign, in any head
    "NoPE plus ALiBi sees the direction": (_file(frequencies={"rule": "formula", "formula": "0"}, bias=ALIBI),
                                           "direction", ""),
}

TRUE = {
    # per-head bases: RoPE in every head
    "per-head RoPE is relative": (_file(frequencies={"base": "100 * 2**h"}), "relative"),
    "per-head decay is relative": (_file(scale={"query": "(1 - 2**(-5 - h))**m", "key": "(1 - 2**(-5 - h))**(-m)"}),
                                   "relative"),
    # both parts offset-only
    "RoPE plus ALiBi is relative": (_file(bias=ALIBI), "relative"),
    "RoPE plus ALiBi is plain at zero": (_file(bias=ALIBI), "plain_at_zero"),
    # a constant bound plus a falling bias: C * B + b falls, for every C
    "NoPE plus ALiBi decays": (_file(frequencies={"rule": "formula", "formula": "0"}, bias=ALIBI), "decay"),
    # a decaying scale plus ALiBi: true, though the rotary bound's fall may be out of the prover's reach
    "halving plus ALiBi decays": (_file(scale={"query": "(1/2)**m", "key": "2**m"}, bias=ALIBI), "decay"),
}


def _result(variant: Variant, key: str):
    (result,) = check_variant(variant, only={key}, kernel_targets=["numpy"])
    return result


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_claims_are_refuted(name):
    variant, key, head = FALSE[name]
    result = _result(variant, key)
    assert result.status == "refuted", (result.status, result.reason)
    assert head in result.reason, result.reason


@pytest.mark.parametrize("name", sorted(TRUE))
def test_true_claims_are_not_refuted(name):
    variant, key = TRUE[name]
    result = _result(variant, key)
    assert result.status in ("proved", "unknown"), result.reason
    if result.status == "unknown":
        assert result.reason, "an unknown verdict says why"


def test_the_decidable_true_rows_are_proved():
    """The controls the prover reaches: pinned, so a regression to *unknown* shows."""
    for name in ("per-head RoPE is relative", "per-head decay is relative", "RoPE plus ALiBi is relative",
                 "RoPE plus ALiBi is plain at zero", "NoPE plus ALiBi decays"):
        variant, key = TRUE[name]
        assert _result(variant, key).status == "proved", name
