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
    # a query scale stepping at m = 20000 (Ministral 3's form): the witness sits at the step the floor names,
    # not at a power of two past it
    ("step-shift", {**ROPE, "positions": "nonnegative", "scale": {"query": "1 + log(1 + floor(m / 20000)) / 10"}},
     "shift", "refuted", 20001),
    ("step-relative", {**ROPE, "positions": "nonnegative",
                       "scale": {"query": "1 + log(1 + floor(m / 20000)) / 10"}}, "relative", "refuted", 20001),
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


# -- decay: constant bounds, recognised by what they are -------------------------------------------------------


def _rotary(**extra):
    data = {"name": "probe", "kind": "rotary", "width": 8, "pairing": "half", "frequencies": {"base": 10000}}
    data.update(extra)
    return data


def _bias(formula, slope="1", heads=1, **extra):
    return {"name": "probe", "kind": "bias", "bias": {"formula": formula, "heads": heads, "slope": slope}, **extra}


ZERO = {"rule": "formula", "formula": "0"}

#: (case id, file, words the reason must contain): the bound (or a head's bias) is constant in D >= 0
CONSTANT_DECAYS = [
    # zero frequencies with a constant scale: S_r(D) = r for every D
    ("constant-scale", _rotary(frequencies=ZERO, scale={"query": "3", "key": "1/3"}), "is constant"),
    # every angle a multiple of 2 pi: e^(2 pi i D) = 1
    ("two-pi", _rotary(frequencies={"rule": "formula", "formula": "2*pi"}), "is constant"),
    # equal frequencies: every term turns together, |S_r(D)| = r
    ("equal-frequencies", _rotary(frequencies={"rule": "formula", "formula": "1"}), "is constant"),
    # a clip that saturates on D >= 0: g(D) - g(0) = min(D, 0) = 0
    ("saturated-clip", _rotary(position={"transform": "Min(m, 0)"}), "is constant"),
    # a scale that saturates: min(m + 1, 1) = 1 for m >= 0
    ("saturated-scale", _rotary(frequencies=ZERO, scale={"query": "Min(m + 1, 1)"}), "is constant"),
    # a bias whose past branch is a constant (the where() picks 5 for every past key)
    ("past-constant", _bias("where(j - i > 0, -abs(j - i), 5)"), "head h = 0"),
    # a table whose entries over the reached indices are all equal
    ("flat-table", _bias("T(Min(abs(j - i), 2))", params={"T": [1, 1, 1]}), "constant in D"),
    # one head of three reads a zero entry of a per-head table: that head is constant
    ("zero-entry", _bias("-w(h) * abs(j - i)", heads=3, params={"w": [1, 0, 2]}), "head h = 1"),
]


@pytest.mark.parametrize("case, data, words", CONSTANT_DECAYS, ids=[c[0] for c in CONSTANT_DECAYS])
def test_a_constant_bound_is_recognised(case, data, words):
    (result,) = check_variant(Variant.from_dict(data), only={"decay"})
    assert result.status == "refuted", result.reason
    assert words in result.reason and "does not decay" in result.reason


def test_a_bound_that_only_looks_constant_rises():
    # frequencies 2 pi and pi: |S_2(D)| = |1 + (-1)^D| alternates 2, 0: B rises from D = 1 to 2, not constant
    data = _rotary(width=4, frequencies={"rule": "list", "values": ["2*pi", "pi"]})
    (result,) = check_variant(Variant.from_dict(data), only={"decay"})
    assert result.status == "refuted" and "is constant" not in result.reason
    assert result.witness_text == "{D: 1}"


# -- decay: head by head, a where() split at the integers, a table inside the transform -----------------------

#: (case id, file, expected status, words the reason must contain or None)
DECAYS = [
    # heads 0..7 of a per-head table, head 5 negative: the rise is in head 5 (the spread of four heads missed it)
    ("head-5-rises", _bias("-w(h) * abs(j - i)", heads=8, params={"w": [1, 0.5, 2, 0.25, 3, -1, 1, 1]}),
     "refuted", "head h = 5"),
    # w(h) v(h) changes sign over the table (the hull says nothing) but is a square in every head
    ("square-per-head", _bias("-w(h) * v(h) * abs(j - i)", heads=4,
                              params={"w": [1, -1, 2, -2], "v": [1, -1, 2, -2]}), "proved", "head by head"),
    # 0, -1, then -1.2 from D = 2: the step at 2 D > 3 lies between the integers 1 and 2 (a real split at 3/2
    # would compare -1.5 with -1.2)
    ("integer-cut", _bias("where(2 * abs(j - i) > 3, -1.2, -abs(j - i))"), "proved", None),
    # a branch defined only where its condition holds: log(D - 2) at D >= 3
    ("branch-domain", _bias("where(abs(j - i) > 2, -1 - log(abs(j - i) - 2), -abs(j - i) / 2)"), "proved", None),
    # the same boundary, off by one: -2 at D = 2, then -1 at D = 3
    ("off-by-one", _bias("where(abs(j - i) > 2, -1, -abs(j - i))"), "refuted", "D = 2 steps back"),
    # -D + w(h) i (i - D): in head 1 a row before position -1 rises (b(i, i - D - 1) - b(i, i - D) = -1 - i)
    ("negative-query", _bias("-abs(j - i) + w(h) * i * j", heads=2, params={"w": [0, 1]}), "refuted",
     "head h = 1: b(-2, -4) > b(-2, -3)"),
    # a learned position table inside the transform: B(2) > B(1)
    ("table-transform", _rotary(positions="nonnegative", params={"P": [0, 3, 0.5, 0.5]},
                                position={"transform": "P(Min(m, 3))"}), "refuted", "B(2)"),
    ("table-scale", _rotary(positions="nonnegative", params={"S": [1, 0.5, 2, 2]}, frequencies=ZERO,
                            scale={"query": "S(Min(m, 3))"}), "refuted", "B(2)"),
]


@pytest.mark.parametrize("case, data, status, words", DECAYS, ids=[c[0] for c in DECAYS])
def test_decay_decided(case, data, status, words):
    (result,) = check_variant(Variant.from_dict(data), only={"decay"})
    assert result.status == status, result.reason
    text = result.reason if status != "proved" else " ".join(p.rule for p in result.proof.parts)
    assert words is None or words in text, text


# -- identities: every head of a per-head table -----------------------------------------------------------------

#: (case id, file, {property: status}, the head named in a refutation or None)
PER_HEAD = [
    # i j in head 5 only: every identity fails there, and holds in the seven others
    ("row-term-in-head-5", _bias("-slope * abs(j - i) + w(h) * i * j", heads=8, params={"w": [0] * 5 + [1, 0, 0]}),
     {"relative": "refuted", "shift": "refuted", "causal_relative": "refuted"}, 5),
    # the table is all zeros: proved in each head (the generic head cannot read the table)
    ("row-term-nowhere", _bias("-slope * abs(j - i) + w(h) * i * j", heads=8, params={"w": [0] * 8}),
     {"relative": "proved", "shift": "proved", "causal_relative": "proved"}, None),
]


@pytest.mark.parametrize("case, data, expected, head", PER_HEAD, ids=[c[0] for c in PER_HEAD])
def test_identities_head_by_head(case, data, expected, head):
    results = {r.claim.name: r for r in check_variant(Variant.from_dict(data), only=set(expected))}
    assert {k: r.status for k, r in results.items()} == expected
    for r in results.values():
        if r.status == "refuted":
            assert f"head h = {head}" in r.reason and r.witnesses


# -- soundness: a causal row's offset t >= 0 is never given a negative value ------------------------------------


def test_a_witness_respects_the_range_of_a_causal_offset():
    # where(j - i >= 0, j - i, i - j) is |j - i|: equivalent; a witness at t = -8 once refuted it
    data = _bias("-where(j - i >= 0, j - i, i - j)", equivalent={"bias": "-abs(j - i)"})
    (result,) = check_variant(Variant.from_dict(data), only={"equivalence"})
    assert result.status != "refuted", result.witness_text


# -- identities: a where() split at its condition over the integers ----------------------------------------------

#: (case id, file, {property: status}): each where() is decided branch by branch
WHERE_SPLITS = [
    # where(t < 8, t, 8) is Min(t, 8): t = 0..7 one by one, then t = 8 + u
    ("where-is-min", _bias("-where(abs(j - i) < 8, abs(j - i), 8)", equivalent={"bias": "-Min(abs(j - i), 8)"}),
     {"equivalence": "proved"}),
    # a sign written with two nested where()s against one written differently
    ("nested-sign", _bias("where(j - i > 0, 1, where(j - i < 0, -1, 0))",
                          equivalent={"bias": "-1 + where(j - i > 0, 2, where(j - i >= 0, 1, 0))"}),
     {"equivalence": "proved", "causal_relative": "proved"}),
    # the same with the middle case moved: b - b' is 1 at t = 0 and 0 after, not constant along a row
    ("nested-sign-wrong", _bias("where(j - i > 0, 1, where(j - i < 0, -1, 0))",
                                equivalent={"bias": "-1 + where(j - i > 0, 2, where(j - i >= 0, 0, 0))"}),
     {"equivalence": "refuted"}),
    # an equality: 0 on the diagonal, -1 elsewhere, written with == and with !=
    ("equality", _bias("where(j - i == 0, 0, -1)", equivalent={"bias": "where(i - j != 0, -1, 0)"}),
     {"equivalence": "proved", "causal_relative": "proved"}),
    # on positions >= 0 the branch i < 0 is never taken: the bias is -|j - i|, relative and shift-invariant
    # in the rows (a split over the integers i >= 0, j >= 0); over every integer the other branch breaks it
    ("nonnegative-branch", _bias("where(i >= 0, -abs(j - i), i * j)", positions="nonnegative"),
     {"relative": "proved", "causal_relative": "proved"}),
    ("every-integer-branch", _bias("where(i >= 0, -abs(j - i), i * j)"), {"relative": "refuted"}),
    # a transform that is m on positions >= 0: relative there (the split reads j = i + u_j, u_j >= 0: the
    # statement's offset j - i is a position too)
    ("nonnegative-transform", {**ROPE, "positions": "nonnegative", "position": {"transform": "where(m >= 0, m, -m)"}},
     {"relative": "proved", "plain_at_zero": "proved"}),
]


@pytest.mark.parametrize("case, data, expected", WHERE_SPLITS, ids=[c[0] for c in WHERE_SPLITS])
def test_where_is_split_at_the_integers(case, data, expected):
    results = {r.claim.name: r for r in check_variant(Variant.from_dict(data), only=set(expected))}
    assert {k: r.status for k, r in results.items()} == expected, {k: r.reason for k, r in results.items()}


# -- identities and direction: every pair of a rotary file --------------------------------------------------------


def _listed(values, **extra):
    """A rotary file with one listed frequency per pair."""
    return {"name": "probe", "kind": "rotary", "width": 2 * len(values), "pairing": "half",
            "frequencies": {"rule": "list", "values": values}, **extra}


def _scaled(table):
    """16 pairs of RoPE, both sides of pair r scaled by the table entry S(r)."""
    return _rotary(width=32, params={"S": table}, scale={"query": "S(r)", "key": "S(r)"})


#: multiples of 2 pi: at an integer position every pair turns a whole number of times
TWO_PI = [f"{2 * (k + 1)}*pi" for k in range(16)]
#: the same with pair 11 turning by 1 radian: outside the four pairs spread over the spectrum (0, 15, 8, 4)
PAIR_11 = TWO_PI[:11] + ["1"] + TWO_PI[12:]
SQUARE = {"position": {"transform": "m**2"}}

#: (case id, file, {property: status}, the pair named by a refutation (or a direction witness) or None)
PER_PAIR = [
    # S(r) = +-1: the norm and the plain product hold in each pair (the generic pair cannot read the table)
    ("sign-table", _scaled([1, -1] * 8), {"norm": "proved", "plain_at_zero": "proved"}, None),
    # S(11) = 2: pair 11 alone stretches its query and key
    ("sign-table-pair-11", _scaled([1, -1] * 5 + [1, 2] + [1, -1] * 2), {"norm": "refuted", "plain_at_zero": "refuted"},
     11),
    # g(m) = m^2 turns a whole number of times at every integer in every pair: relative and shift-invariant
    ("square-whole-turns", _listed(TWO_PI, **SQUARE), {"relative": "proved", "shift": "proved"}, None),
    # ... except in pair 11, where s(1, 0) and s(0, -1) turn by 1 and -1
    ("square-pair-11", _listed(PAIR_11, **SQUARE), {"relative": "refuted", "shift": "refuted"}, 11),
    # the direction is invisible in every pair but pair 11: a witness there shows it in the whole score
    ("direction-pair-11", _listed(PAIR_11), {"direction": "proved"}, 11),
    # 20 pairs, every one blind to the sign of the offset: the direction is invisible
    ("direction-nowhere", _listed([f"{2 * (k + 1)}*pi" for k in range(20)]), {"direction": "refuted"}, None),
]


@pytest.mark.parametrize("case, data, expected, pair", PER_PAIR, ids=[c[0] for c in PER_PAIR])
def test_identities_pair_by_pair(case, data, expected, pair):
    results = {r.claim.name: r for r in check_variant(Variant.from_dict(data), only=set(expected))}
    assert {k: r.status for k, r in results.items()} == expected, {k: r.reason for k, r in results.items()}
    for r in results.values():
        if r.status == "refuted" and pair is not None:
            assert f"pair r = {pair} " in r.reason and r.witnesses, r.reason
        if r.claim.name == "direction" and r.status == "proved":
            (part,) = [p for p in r.proof.parts if p.witness]
            assert part.rule.startswith(f"pair r = {pair}:"), part.rule


def test_the_walk_over_the_pairs_stops_with_the_step_budget():
    # 64 pairs, each proved on its own: the walk spends steps pair by pair, and one step fewer than it
    # needs leaves the property unknown (never proved on the pairs reached so far)
    from symproof.prover import _budget

    data = _rotary(width=128, params={"S": [1, -1] * 32}, scale={"query": "S(r)", "key": "S(r)"})
    before = _budget.steps_spent()
    (full,) = check_variant(Variant.from_dict(data), only={"norm"}, steps=None)
    spent = _budget.steps_spent() - before
    assert full.status == "proved", full.reason
    (cut,) = check_variant(Variant.from_dict(data), only={"norm"}, steps=spent - 1)
    assert cut.status == "unknown" and "step budget" in cut.reason, cut.reason


@pytest.mark.parametrize("exponents, verdict", [
    ("[0.5, 1]", "proved"),  # |0|**p = 0 for every head's p > 0: decided head by head
    ("[0.5, -1]", "unknown"),  # head 1's |0|**-1 is undefined: never proved
])
def test_a_head_table_exponent_undefined_for_a_symbolic_head_is_decided_head_by_head(exponents, verdict):
    """0**P(h) is undefined for a symbolic head (the entry's sign is not known there): the concrete heads
    decide, where the generic statement's undefinedness used to end the claim as unknown."""
    from symproof.variants._spec import loads_variant

    variant = loads_variant(f'name = "kerple-power"\nkind = "bias"\n[params]\nP = {exponents}\n[bias]\n'
                            'formula = "-abs(j - i)**P(h)"\nheads = 2\nslope = "1"\n', "<kerple>")
    (result,) = check_variant(variant, only=["plain_at_zero"])
    assert result.status == verdict, result.reason
