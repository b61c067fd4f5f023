"""False claims about variants written with ``mod`` and ``sign``: never proved.

Each row is a variant and a property whose statement is false for the file as written, with the
mathematical ``mod`` (the sign of the divisor): the verdict must be *refuted* (pinned, so a regression
to *unknown* shows) and the witness must break the statement when the definition is rebuilt there
exactly.  Several rows would be *true* with C's ``fmod`` (the sign of the dividend), so a decider that
read ``mod`` as ``fmod`` anywhere would prove them.  True rows (controls) must not be refuted.
"""

from __future__ import annotations

import pytest
import sympy as sp

from symproof.variants import Variant, check_variant


def _bias(formula: str, equivalent: str | None = None, **extra) -> Variant:
    data = {"name": "probe", "kind": "bias", "bias": {"formula": formula, "heads": 2, "slope": "1 / (h + 1)"}, **extra}
    if equivalent is not None:
        data["equivalent"] = {"name": "stated", "bias": equivalent}
    return Variant.from_dict(data)


def _rope(transform: str, **extra) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, "position": {"transform": transform}, **extra})


ROPE = {"name": "RoPE", "frequencies": "100**(-2*r/d)"}

FALSE = {
    # with fmod, mod(D, 3) + mod(-D, 3) = 0 for every D; with mod it is 3 where 3 does not divide D
    "mod(D) + mod(-D) equals 0": (_bias("mod(j - i, 3) + mod(i - j, 3)", "0"), "equivalence"),
    # fmod is odd, so fmod(D, 3) shows the sign of D; mod(D, 2) = mod(-D, 2) does not
    "mod(D, 2) shows the direction": (_bias("-slope * mod(j - i, 2)"), "direction"),
    # sign(D)**2 * |D| = |D|: even in D
    "sign squared shows the direction": (_bias("-slope * sign(j - i)**2 * abs(j - i)"), "direction"),
    # the residues of the positions themselves, not of their offset
    "residues are relative": (_bias("mod(j, 3) - mod(i, 3)"), "relative"),
    # mod(-1, 4096) = 4095, not -1
    "mod(m, 4096) is RoPE": (_rope("mod(m, 4096)", equivalent=ROPE), "equivalence"),
    # |m| differs from m at m = -1
    "m sign(m) is RoPE": (_rope("m * sign(m)", equivalent=ROPE), "equivalence"),
    # 2 floor(m / 2) reads the parity of the query
    "even part is shift-invariant": (_rope("m - mod(m, 2)"), "shift"),
    # at offset 0, mod(-1, 4) = 3 (fmod: -1): not the plain product in either reading
    "mod at offset 0 is 0": (_bias("-slope * mod(j - i - 1, 4)"), "plain_at_zero"),
}

#: true claims and the verdict they get (unknown where the prover cannot decide: t * sign(t) = t for the
#: causal distance t >= 0 needs a case split; its far witnesses must respect t >= 0, see below)
TRUE = {
    "m - mod(m, 1) is RoPE": (_rope("m - mod(m, 1)", equivalent=ROPE), "equivalence", "proved"),
    "mod of the offset is relative": (_bias("-slope * mod(j - i, 4)"), "relative", "proved"),
    "sign times abs is the offset": (_bias("-slope * (j - i)", "-slope * sign(j - i) * abs(j - i)"), "equivalence",
                                     "unknown"),
    "a bounded angle keeps the norm": (_rope("mod(m, 8)"), "norm", "proved"),
}


def _entries(side, point) -> list:
    side = sp.sympify(side)
    if hasattr(side, "as_explicit"):
        side = side.as_explicit()
    side = side.xreplace(point)
    return list(side) if isinstance(side, sp.MatrixBase) else [side]


def _witness_breaks(result) -> bool:
    """The refutation's witness, substituted into the two sides exactly, makes them differ (a computed
    check without a witness, such as "the sign of the offset is visible", carries its own exact data)."""
    parts = [p for p in result.proof.parts if p.status == "refuted"]
    for part in parts:
        if not part.witness:
            return True
        lhs, rhs = _entries(part.before, part.witness), _entries(part.after, part.witness)
        return any(abs(sp.N(a - b, 40)) > sp.Rational(1, 10**30) for a, b in zip(lhs, rhs))
    return False


@pytest.mark.parametrize("case", sorted(FALSE))
def test_a_false_claim_with_mod_or_sign_is_refuted(case):
    variant, key = FALSE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status == "refuted", (case, result.status, result.reason)
    assert _witness_breaks(result), case


@pytest.mark.parametrize("case", sorted(TRUE))
def test_a_true_claim_with_mod_or_sign_is_not_refuted(case):
    variant, key, expected = TRUE[case]
    (result,) = check_variant(variant, only={key})
    assert result.status == expected, (case, result.status, result.reason)


def test_a_far_witness_respects_the_causal_distance_being_non_negative():
    """b(i, i - t) for the causal distance t >= 0: the far search tries large values of both signs, and
    t = -8 is no witness (it once refuted sign(j - i) * |j - i| = j - i at t = -8)."""
    variant, key, _ = TRUE["sign times abs is the offset"]
    (result,) = check_variant(variant, only={key})
    witnesses = [p.witness for p in result.proof.parts if p.witness]
    assert all(v >= 0 for w in witnesses for s, v in w.items() if s.is_nonnegative), witnesses
    assert result.status != "refuted"
