"""Descriptions that break a property must be refuted, with an exact witness of that very scheme."""

import pytest

from symproof.variants import Variant, check_variant
from symproof.variants._results import exit_code

ROPE = {"name": "probe", "kind": "rotary", "width": 4, "pairing": "adjacent",
        "frequencies": {"rule": "geometric", "base": 10000}}
TABLE = {"name": "probe", "kind": "additive", "width": 4, "frequencies": {"rule": "geometric", "base": 10000}}

CASES = [
    # a quadratic position transform: angles no longer subtract to a function of j - i
    (ROPE, {"position": {"transform": "m**2"}}, {"relative": "refuted", "shift": "refuted", "norm": "proved"}),
    # an offset in the transform is harmless: g(j) - g(i) still depends on j - i only
    (ROPE, {"position": {"transform": "m + 3"}}, {"relative": "proved", "shift": "proved", "plain_at_zero": "proved"}),
    # a scale that is not of the form zeta^m zeta^-m breaks the offset property
    (ROPE, {"scale": {"query": "1 + m", "key": "1 + m"}}, {"relative": "refuted", "norm": "refuted"}),
    # the same scale on both sides grows with position: still not offset-only
    (ROPE, {"params": {"z": 2}, "scale": {"query": "z**m", "key": "z**m"}}, {"relative": "refuted"}),
    # transposed rotation R(x)^T is still a rotation: everything holds
    (ROPE, {"rotation": {"block": [["cos(x)", "sin(x)"], ["-sin(x)", "cos(x)"]]}},
     {"norm": "proved", "relative": "proved", "direction": "proved"}),
    (TABLE, {"position": {"transform": "m**2"}}, {"shift_structure": "refuted", "relative": "refuted",
                                                   "constant_norm": "proved"}),
    (TABLE, {"position": {"transform": "2*m"}}, {"shift_structure": "proved", "direction": "refuted"}),
    ({"name": "probe", "kind": "bias", "bias": {"formula": "-slope*abs(j)", "heads": 2, "slope": "1/(h+1)"}}, {},
     {"relative": "refuted", "plain_at_zero": "refuted"}),
    ({"name": "probe", "kind": "bias", "bias": {"formula": "-slope*(j - i)", "heads": 2, "slope": "1/(h+1)"}}, {},
     {"relative": "proved", "direction": "proved"}),
]


@pytest.mark.parametrize("base, extra, expected", CASES, ids=[str(k) for k in range(len(CASES))])
def test_verdicts_of_constructed_variants(base, extra, expected):
    variant = Variant.from_dict({**base, **extra})
    results = {r.claim.name: r for r in check_variant(variant, only=set(expected))}
    assert {k: r.status for k, r in results.items()} == expected
    for key, r in results.items():
        if r.status == "refuted" and r.claim.kind == "identity":
            assert r.witnesses, key


def test_exit_code_is_1_only_for_undecided_or_a_wrong_kernel():
    class Result:
        def __init__(self, name, status):
            self.status, self.id = status, f"v.{name}"
            self.claim = type("C", (), {"name": name})()

    assert exit_code([Result("norm", "refuted"), Result("kernel", "proved")]) == 0
    assert exit_code([Result("norm", "unknown"), Result("kernel", "proved")]) == 1
    assert exit_code([Result("norm", "proved"), Result("kernel", "refuted")]) == 1


BIAS = {"name": "probe-bias", "kind": "bias", "bias": {"heads": 2, "slope": "2**(-h - 1)"}}


@pytest.mark.parametrize("formula, equivalent, expected", [
    # i * j is no per-row constant away from an offset function: row i = 2 gives -2 t, row i = 1 gives -t
    ("slope * i * j", "-slope * (i - j)", dict(causal_relative="refuted", equivalence="refuted")),
    # j**2 - (-(i - j)) is not constant along a row
    ("slope * j**2", "-slope * (i - j)", dict(causal_relative="refuted", equivalence="refuted")),
    # a per-row constant added to the relative form: equal under softmax, but another offset function
    ("slope * (j - i) + 5 * slope * i", "-slope * abs(i - j)", dict(causal_relative="proved", equivalence="proved")),
    # relative under softmax, but the offset function differs from the stated form: 2 t against t
    ("-2 * slope * (i - j)", "-slope * (i - j)", dict(causal_relative="proved", equivalence="refuted")),
])
def test_softmax_equivalence_of_bias_forms(formula, equivalent, expected):
    data = {**BIAS, "bias": {**BIAS["bias"], "formula": formula}, "equivalent": {"bias": equivalent}}
    results = {r.claim.name: r for r in check_variant(Variant.from_dict(data), only=set(expected))}
    assert {k: r.status for k, r in results.items()} == expected
    for r in results.values():
        if r.status == "refuted":
            assert r.witnesses and "slope" not in r.witness_text  # a witness of the described slopes


# a float64 kernel whose values overflow at a probed position (exp(4097) > 1.8e308) must fail its kernel check:
# inf - inf is NaN, and a NaN difference once slipped through max() and the kernel was "proved"
OVERFLOWING = [
    (ROPE, {"scale": {"query": "exp(m)", "key": "exp(-m)"}}),
    (TABLE, {"position": {"transform": "exp(m)"}}),
    ({"name": "probe", "kind": "bias", "bias": {"formula": "-slope*exp(100*(j - i))", "heads": 2, "slope": "1/(h+1)"}},
     {}),
]


@pytest.mark.parametrize("base, extra", OVERFLOWING, ids=["rotary", "additive", "bias"])
def test_a_kernel_that_overflows_float64_is_refuted_without_numpy_warnings(base, extra):
    import warnings

    variant = Variant.from_dict({**base, **extra})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a NumPy RuntimeWarning would print to the user's terminal
        (result,) = check_variant(variant, only={"kernel"})
    assert result.status == "refuted", result.reason
    assert "not finite (overflow)" in result.reason
