"""The formula language's features, each decided on a constructed scheme whose verdicts follow from
the mathematics (comments say why) (the docs' tables are tested in tests/docs/)."""

import re

import pytest

from symproof import VariantFileError
from symproof.variants import Variant, check_variant



def _bias(formula, slope="1 / (h + 1)", heads=2, **extra):
    return Variant.from_dict({"name": "probe", "kind": "bias",
                              "bias": {"formula": formula, "heads": heads, "slope": slope}, **extra})


def _rope(**extra):
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, **extra})


def _verdicts(variant, keys):
    return {r.claim.name: r.status for r in check_variant(variant, only=set(keys))}


CASES = {
    # Shaw's clipped relative positions: a table of w over clip(j - i, -2, 2); offset-only by construction,
    # w(2) = 0 at offset 0, w(3) = 0.3 != w(1) = -0.2 at offsets +-1
    "table": (_bias("w(clip(j - i, -2, 2) + 2)", slope="1", heads=1, params={"w": [-0.5, -0.2, 0, 0.3, 0.7]}),
              {"relative": "proved", "shift": "proved", "direction": "proved", "plain_at_zero": "proved"}),
    # a step function of the offset: where(j - i < 0, ...) sees the sign, and is 0 at offset 0
    "where": (_bias("-slope * where(j - i < 0, 2 * abs(j - i), abs(j - i))"),
              {"relative": "proved", "direction": "proved", "plain_at_zero": "proved"}),
    # sum of cosines of the offset (Sandwich-like): even in the offset, so no direction; cos(0) terms at 0
    "sum": (_bias("sum(cos((j - i) / 10**(k / 2)), k, 0, 7)", slope="1", heads=1),
            {"relative": "proved", "direction": "refuted", "plain_at_zero": "refuted"}),
    # KERPLE-log with a per-head parameter: h in the bias, still offset-only and even
    "h in bias": (_bias("-slope * log(1 + (h + 1) * abs(j - i))"),
                  {"relative": "proved", "direction": "refuted", "plain_at_zero": "proved"}),
    # a per-pair phase R(x + r/4) on both sides cancels in R^T R: every RoPE property survives
    "r in block": (_rope(rotation={"block": [["cos(x + r/4)", "-sin(x + r/4)"], ["sin(x + r/4)", "cos(x + r/4)"]]}),
                   {"norm": "proved", "relative": "proved", "plain_at_zero": "proved"}),
    # all-zero frequencies, written as the integer "0": the identity map at every position, so norms are
    # kept and the sign of the offset is invisible
    "integer constants": (_rope(frequencies={"rule": "formula", "formula": "0"}),
                          {"norm": "proved", "direction": "refuted"}),
}


@pytest.mark.parametrize("feature", sorted(CASES))
def test_feature_verdicts(feature):
    variant, expected = CASES[feature]
    assert _verdicts(variant, expected) == expected


# -- witnesses beyond small points ---------------------------------------------------------------------


def test_far_witness_at_a_threshold_the_formula_names():
    # FIRE-like: log(1 + |j - i|) / log(1 + Max(|i|, 512)) depends on i itself only once |i| > 512
    variant = _bias("-slope * log(1 + abs(j - i)) / log(1 + Max(abs(i), 512))")
    (result,) = check_variant(variant, only={"relative"})
    assert result.status == "refuted"
    witness = result.proof.parts[-1].witness
    assert max(abs(int(v)) for v in witness.values()) > 512


def test_far_witness_is_not_invented_for_a_true_identity():
    # Min(|j - i|, 512) is a function of the offset at every position, however large
    (result,) = check_variant(_bias("-slope * Min(abs(j - i), 512)"), only={"relative"})
    assert result.status == "proved"


def test_one_expensive_property_leaves_the_others_their_budget():
    variant = _bias("-slope * Min(abs(j - i), 512)")
    results = check_variant(variant)
    assert all(r.status != "unknown" for r in results), [(r.claim.name, r.reason) for r in results]


# -- domains ------------------------------------------------------------------------------------------


def test_nonnegative_positions_never_refute_with_a_negative_witness():
    # log(m + 1) is not defined at m <= -1: a refutation there says nothing about the declared scheme
    variant = _rope(positions="nonnegative", position={"transform": "m + log(m + 1)"})
    for result in check_variant(variant, only={"relative", "shift"}):
        for part in result.proof.parts:
            if result.status == "refuted" and part.witness:
                assert all(int(v) >= 0 for k, v in part.witness.items() if str(k) in "ijmtcD")


@pytest.mark.parametrize("text, words", [
    ('positions = "content"', "content-dependent positions"),
    ('positions = "sometimes"', "expected one of ['integers', 'nonnegative']"),
])
def test_position_domain_errors(tmp_path, text, words):
    from symproof.variants import load_variant

    path = tmp_path / "v.toml"
    path.write_text(f'name = "v"\nkind = "bias"\n{text}\n[bias]\nformula = "0"\nheads = 1\nslope = "1"\n')
    with pytest.raises(VariantFileError, match=re.escape(words)):
        load_variant(path)


@pytest.mark.parametrize("formula, words", [
    ("gate * (j - i)", "as in CoPE"),
    ("w + 1", "without an index"),
    ("w(1, 2)", "with one index"),
    ("w(7)", "outside 0..2"),
    ("w(1/2)", "not an integer"),
])
def test_table_and_content_errors(formula, words):
    with pytest.raises(VariantFileError, match=re.escape(words)):
        _bias(formula, slope="1", heads=1, params={"w": [1, 2, 3]})


@pytest.mark.parametrize("key, formula, name", [
    ("position.transform", "m + r", "r"),  # the transform is per position, not per pair
    ("bias.slope", "i", "i"),  # a slope is per head, not per position
])
def test_a_name_outside_its_keys_table_is_refused(key, formula, name):
    table, field = key.split(".")
    data = ({"name": "p", "kind": "bias", "bias": {"formula": "0", "heads": 1, "slope": formula}} if table == "bias"
            else {"name": "p", "kind": "rotary", "width": 4, "pairing": "half", "frequencies": {"base": 100},
                  "position": {"transform": formula}})
    with pytest.raises(VariantFileError, match=f"unknown name '{name}'"):
        Variant.from_dict(data)
