"""The ``decay`` property, on schemes whose answer follows from the mathematics (comments say why).

Bias files: the bias of a past key must be non-increasing in its distance D, in every head, and fall
below its offset-0 value somewhere.  Rotary files: RoFormer's bound B(D) = (1/n) sum_r |S_r(D)| for
the file's frequencies must be non-increasing and not constant.  Every refutation's witness is
re-checked here with mpmath at 50 digits from the definition, not from the decay code.
"""

import re

import mpmath
import pytest
import sympy as sp

from symproof.variants import Variant, check_variant, load_variant, shipped_variants
from symproof.variants._check import properties_of


def _bias(formula, slope="2**(-h - 1)", heads=2, **extra):
    return Variant.from_dict({"name": "probe", "kind": "bias",
                              "bias": {"formula": formula, "heads": heads, "slope": slope}, **extra})


def _rotary(width=8, **extra):
    data = {"name": "probe", "kind": "rotary", "width": width, "pairing": "half", "frequencies": {"base": 10000}}
    data.update(extra)
    return Variant.from_dict(data)


def _decay(variant, **budget):
    (result,) = check_variant(variant, only={"decay"}, **budget)
    return result


# -- an independent evaluation of each statement at a witness ---------------------------------------------


def _bias_value(variant, h, query, key):
    """b(query, key) in head h, at 50 digits, from the file's own formula (no decay code)."""
    with mpmath.workdps(50):
        value = variant.bias_at(query, key, variant.slopes()[h], h)
        return mpmath.mpf(sp.N(value, 50))


def _bound(variant, d):
    """RoFormer's B(d) = (1/n) sum_r |sum_{k<r} a_k e^{i x_k}| at 50 digits, from the file's definition."""
    n = variant.n_pairs
    with mpmath.workdps(50):
        total, partial = mpmath.mpf(0), mpmath.mpc(0)
        axes = len(variant.axes) if variant.mixed else None  # several axes: d on every one
        at = (lambda m: (m,) * axes) if axes else (lambda m: m)
        for k, w in enumerate(variant.frequencies()):
            angle = variant.pair_angle(at(d), w) - variant.pair_angle(at(0), w)
            amplitude = variant.scale("query", d, k) * variant.scale("key", 0, k)
            partial += mpmath.mpf(sp.N(amplitude, 50)) * mpmath.expj(mpmath.mpf(sp.N(angle, 50)))
            total += abs(partial)
        return total / n


def _assert_rise_is_real(variant, result):
    """A refutation by a rise: the witness's two values, computed independently, really rise."""
    last = result.proof.parts[-1]
    witness = {str(k): int(v) for k, v in last.witness.items()}
    d = witness["D"]
    if variant.kind == "rotary" and variant.heads is not None:  # per head: the rise is in the head the step names
        variant = variant.head(int(re.search(r"head h = (\d+)", last.rule + last.detail).group(1)))
    if variant.kind == "rotary":
        assert _bound(variant, d + 1) > _bound(variant, d), witness
    else:
        h, query = witness["h"], witness["i"]
        assert _bias_value(variant, h, query, query - d - 1) > _bias_value(variant, h, query, query - d), witness


# -- bias files ---------------------------------------------------------------------------------------------

BIAS_CASES = {
    # ALiBi: -s D with s = 2^-(h+1) > 0 in every head, falls by s per step
    "alibi": (_bias("-slope * abs(j - i)"), "proved"),
    # KERPLE-log: log(1 + 2 D) rises with D, times -s < 0
    "kerple-log": (_bias("-slope * log(1 + 2 * abs(j - i))"), "proved"),
    # KERPLE-power: D^0.5 rises on D >= 0 (defined at 0), times -s
    "kerple-power": (_bias("-slope * abs(j - i)**0.5"), "proved"),
    # BLOOM's s * j is not relative, yet along a row (fixed i) it falls by s per step back, for every i
    "bloom-form": (_bias("slope * j"), "proved"),
    # ALiBi clipped at 512: Min(D, 512) rises (then stays), times -s
    "clipped": (_bias("-slope * Min(abs(j - i), 512)"), "proved"),
    # a learned table over a monotone bucket index (T5's shape: exact buckets below 2, logarithmic up to 4),
    # whose entries 0..4 fall: the lookup falls
    "t5-monotone": (_bias("T(where(abs(j - i) < 2, abs(j - i), Min(2 + floor(log(abs(j - i) / 2) / log(2)), 4)))",
                          slope="1", heads=1, params={"T": [0, -0.5, -1, -1.25, -2]}), "proved"),
    # the same index, a table that rises from entry 1 to 2: the key 2 steps back beats the key 1 step back
    "t5-not-monotone": (_bias("T(where(abs(j - i) < 2, abs(j - i), Min(2 + floor(log(abs(j - i) / 2) / log(2)), 4)))",
                              slope="1", heads=1, params={"T": [0, -1, 0.5, -1.25, -2]}), "refuted"),
    # Sandwich-like: a sum of cosines of the distance comes back up (cos is periodic)
    "sum-of-cosines": (_bias("sum(cos((j - i) / 10**(k / 2)), k, 0, 7) - 8", slope="1", heads=1), "refuted"),
    # a bias that rises with the distance: s D, s > 0
    "rising": (_bias("slope * abs(j - i)"), "refuted"),
    # a step up: -D below 4, then 0: b at D = 4 is 0 > -3 at D = 3
    "step-up": (_bias("where(abs(j - i) < 4, -abs(j - i), 0)", slope="1", heads=1), "refuted"),
    # slopes 1, 0, -1: head 2 rises (the rules cannot sign the slope; a witness head can)
    "one-head-rises": (_bias("-slope * abs(j - i)", slope="1 - h", heads=3), "refuted"),
    # 1/(1 + D), 2^-D, e^-D: a decreasing function of a rising positive one
    "reciprocal": (_bias("1 / (1 + abs(j - i))", slope="1", heads=1), "proved"),
    "power-of-two": (_bias("2**(-abs(j - i))", slope="1", heads=1), "proved"),
    "exp-falls": (_bias("exp(-abs(j - i))", slope="1", heads=1), "proved"),
    "exp-rises": (_bias("-exp(-abs(j - i))", slope="1", heads=1), "refuted"),
    # a staircase: -floor(D / 2) falls by 1 every second step
    "staircase": (_bias("-floor(abs(j - i) / 2)", slope="1", heads=1), "proved"),
    # -(D - 3)^2 rises from D = 0 to 3 (an even power of a part that changes sign: the rules stop)
    "parabola": (_bias("-(abs(j - i) - 3)**2", slope="1", heads=1), "refuted"),
    # 0 up to D = 4, then -D: the jump at 4 goes down, as the pieces do
    "flat-then-falling": (_bias("where(abs(j - i) < 4, 0, -abs(j - i))", slope="1", heads=1), "proved"),
    # -D up to D = 4 (-4), then -4.5: still down; with -3.5 instead the jump goes up (D = 4 -> 5)
    "jump-down": (_bias("where(abs(j - i) <= 4, -abs(j - i), -4.5)", slope="1", heads=1), "proved"),
    "jump-up": (_bias("where(abs(j - i) <= 4, -abs(j - i), -3.5)", slope="1", heads=1), "refuted"),
    # -D times a window that closes at 10: the product of a rising and a falling part; at D = 10 it is 0 > -9
    "window": (_bias("-abs(j - i) * where(abs(j - i) < 10, 1, 0)", slope="1", heads=1), "refuted"),
    # cos D comes back up after pi
    "cosine": (_bias("cos(abs(j - i))", slope="1", heads=1), "refuted"),
    # slopes -0.5 and 0.5: head 0 rises
    "negative-slope": (_bias("-slope * abs(j - i)", slope="h - 0.5"), "refuted"),
    # degenerate: a zero bias is non-increasing but constant: not decay
    "zero-bias": (_bias("0", slope="0", heads=1), "refuted"),
    # degenerate: slope 0 in head 0, so that head's bias is constant along every row
    "one-head-constant": (_bias("-slope * abs(j - i)", slope="h"), "refuted"),
}

#: biases not defined at some offset: refused at load (naming it), so no decay verdict is given at all
UNDEFINED_BIASES = {
    # log of the distance is not defined at D = 0 (and falls after it)
    "log-at-zero": ("-slope * log(abs(j - i))", "i = 0, j = 0"),
    # not real at D = 0..3, falling after
    "log-shifted": ("-slope * log(abs(j - i) - 3)", "i = 0, j = 0"),
}


@pytest.mark.parametrize("name", sorted(UNDEFINED_BIASES))
def test_undefined_biases_are_refused_before_any_verdict(name):
    from symproof._ground._errors import VariantFileError

    formula, where = UNDEFINED_BIASES[name]
    with pytest.raises(VariantFileError, match=f"is not defined at {where}"):
        _bias(formula)


@pytest.mark.parametrize("name", sorted(BIAS_CASES))
def test_bias_decay(name):
    variant, expected = BIAS_CASES[name]
    result = _decay(variant)
    assert result.status == expected, result.reason
    if expected == "refuted" and result.witnesses:
        _assert_rise_is_real(variant, result)


@pytest.mark.parametrize("name", ["t5-not-monotone", "sum-of-cosines", "rising", "step-up", "one-head-rises"])
def test_bias_rises_are_refuted_with_a_witness(name):
    variant, _ = BIAS_CASES[name]
    result = _decay(variant)
    assert result.witnesses and {"D", "h", "i"} <= {str(k) for k in result.proof.parts[-1].witness}


def test_the_witnesses_are_the_first_rises():
    # step-up: -3 at D = 3, 0 at D = 4, and -D falls before: the first rise is at D = 3; the table rises
    # from entry 1 (D = 1) to entry 2 (D = 2); s D rises at once; the window opens at D = 10 (-9 -> 0);
    # -3.5 after -4 at D = 4 -> 5
    for name, d in (("step-up", 3), ("t5-not-monotone", 1), ("rising", 0), ("window", 9), ("jump-up", 4),
                    ("parabola", 0), ("exp-rises", 0)):
        assert "D: %d," % d in _decay(BIAS_CASES[name][0]).witness_text


@pytest.mark.parametrize("name, words", [
    ("zero-bias", "does not read D"),
    ("one-head-constant", "head h = 0"),
])
def test_degenerate_and_undefined_say_why(name, words):
    assert words in _decay(BIAS_CASES[name][0]).reason


def test_nonnegative_positions_keep_the_witness_at_keys_0_and_1():
    result = _decay(_bias("slope * abs(j - i)", positions="nonnegative"))
    assert result.status == "refuted" and "i: 1" in result.witness_text  # the query at 1, keys at 0 and 1


# -- rotary files ---------------------------------------------------------------------------------------------

ROTARY_CASES = {
    # standard RoPE: the first pair turns by 1 rad a step, |S_r| comes back up once it passes pi
    "rope": (_rotary(), "refuted"),
    # a larger head: the same oscillation
    "rope-64": (_rotary(width=64), "refuted"),
    # linear interpolation: the angles are D omega / 4, still periodic
    "interpolated": (_rotary(position={"transform": "m / 4"}), "refuted"),
    # all-zero frequencies (NoPE): S_r(D) = r for every D, B = (n + 1)/2 is constant: not decay
    "zero-frequencies": (_rotary(frequencies={"rule": "formula", "formula": "0"}), "refuted"),
    # a transform that reads no position: every angle is 0, the same constant bound
    "constant-transform": (_rotary(position={"transform": "0"}), "refuted"),
    # zero frequencies but a scale 2^(-m/8) on queries: B(D) = 2^(-D/8) (n + 1)/2 does decay, yet the
    # rotary check only refutes (a rise) or shows constancy: unknown, never a wrong refutation
    "decaying-scale": (_rotary(frequencies={"rule": "formula", "formula": "0"}, scale={"query": "2**(-m/8)"}),
                       "unknown"),
    # slow frequencies (B falls for thousands of steps) and queries that double after position 8191: B
    # rises from D = 8191 to 8192, a distance the scale's formula names (neither small nor a power of two)
    "step-at-8192": (_rotary(frequencies={"rule": "list", "values": ["1/1000000", "1/2000000", "1/4000000",
                                                                      "1/8000000"]},
                             scale={"query": "where(m + 1 > 8192, 2, 1)"}), "refuted"),
    # the same step written as Llama 4's temperature floor((m + 1) / F): SymPy keeps m/F + 1/F, naming 8192
    # only as its reciprocal; B still rises from D = 8190 to 8191 (the query at 8191 is the first past it)
    "step-as-floor": (_rotary(frequencies={"rule": "list", "values": ["1/1000000", "1/2000000", "1/4000000",
                                                                       "1/8000000"]},
                              params={"F": 8192}, scale={"query": "floor((m + 1) / F) + 1"}), "refuted"),
    # the same step written on the key side, mirrored: a key at 0 never moves, so no rise is found there
    "step-on-keys": (_rotary(frequencies={"rule": "list", "values": ["1/1000000", "1/2000000", "1/4000000",
                                                                      "1/8000000"]},
                             scale={"key": "where(m + 1 > 8192, 2, 1)"}), "unknown"),
}


@pytest.mark.parametrize("name", sorted(ROTARY_CASES))
def test_rotary_decay(name):
    variant, expected = ROTARY_CASES[name]
    result = _decay(variant)
    assert result.status == expected, result.reason
    if result.witnesses:
        _assert_rise_is_real(variant, result)


def test_a_step_the_formula_names_is_probed_where_it_is():
    result = _decay(ROTARY_CASES["step-at-8192"][0])
    assert result.proof.parts[-1].witness == {sp.Symbol("D", integer=True): 8191} or "D: 8191" in result.witness_text


def test_a_step_named_by_a_reciprocal_is_probed_where_it_is():
    result = _decay(ROTARY_CASES["step-as-floor"][0])
    assert result.proof.parts[-1].witness == {sp.Symbol("D", integer=True): 8190} or "D: 8190" in result.witness_text


def test_rope_is_refuted_by_a_rise_and_the_abel_identity_is_proved():
    variant = ROTARY_CASES["rope"][0]
    result = _decay(variant)
    parts = {p.rule.split(":")[0]: p.status for p in result.proof.parts}
    assert parts["Abel summation for n = 4"] == "proved"
    assert result.witnesses and "B(D + 1) <= B(D)" in result.reason
    # the first rise of B, computed here at 50 digits, is the witness (the README quotes D = 3)
    first = next(d for d in range(40) if _bound(variant, d + 1) > _bound(variant, d))
    assert first == 3 and result.witness_text == "{D: %d}" % first


def test_a_wide_head_is_refuted_without_writing_the_abel_identity_out():
    # 520 pairs (past the 512 the identity is written for): B still rises somewhere, certified
    variant = _rotary(width=1040)
    result = _decay(variant)
    assert result.status == "refuted" and not any(p.rule.startswith("Abel") for p in result.proof.parts)
    assert any("not written out" in text for _, text in result.proof.notes)
    _assert_rise_is_real(variant, result)


def test_constancy_is_an_exact_statement_not_a_witness():
    result = _decay(ROTARY_CASES["zero-frequencies"][0])
    assert not result.witnesses and "B(D) = c (n + 1)/2" in result.reason


def test_a_rotary_decay_is_never_proved_even_where_it_holds():
    # numerically, the decaying-scale bound falls at every step: the statement is true, the check says unknown
    variant = ROTARY_CASES["decaying-scale"][0]
    assert all(_bound(variant, d + 1) < _bound(variant, d) for d in range(0, 40))
    assert _decay(variant).status == "unknown"


# -- budget, the table, the command line ---------------------------------------------------------------------


def test_budget_exhaustion_gives_unknown():
    # n = 512 pairs: the Abel identity alone counts far more than a thousand steps
    result = _decay(_rotary(width=1024), steps=1000)
    assert result.status == "unknown" and "step budget of 1000 steps exhausted" in result.reason


@pytest.mark.parametrize("kind, variant, present", [
    ("bias", _bias("-slope * abs(j - i)"), True),
    ("rotary", _rotary(), True),
    ("additive", Variant.from_dict({"name": "probe", "kind": "additive", "width": 8, "pairing": "adjacent",
                                    "frequencies": {"base": 10000}}), False),
])
def test_decay_is_a_property_of_bias_and_rotary_files(kind, variant, present):
    assert ("decay" in [p.key for p in properties_of(variant)]) == present


def test_the_verdict_table_has_a_decay_row(capsys):
    from symproof._face._cli import main

    code = main(["check", str(shipped_variants()["alibi"])])
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if row.startswith("decay "))
    assert line.split()[:3] == ["decay", "yes", "proved"] and code == 0


# -- the shipped examples, by hand ---------------------------------------------------------------------------

SHIPPED = {
    # -s D (ALiBi), s (i - D) along a row (BLOOM), -s log(1 + (h + 1) D) (KERPLE): all slopes > 0
    "alibi": "proved", "bloom_alibi": "proved", "kerple_log": "proved",
    # sum of cosines: comes back up; the learned table rises from bucket 1 (-0.25) to bucket 2 (0.125)
    "sandwich": "refuted", "t5_buckets": "refuted",
    # every rotary file with non-zero frequencies: RoFormer's bound oscillates (pair 0 turns 1 rad a step,
    # or 1/4 rad interpolated); its scales (xPos, YaRN's and LongRoPE's factors) do not stop it, nor does a
    # mask (the bound is the unmasked score's)
    **{name: "refuted" for name in ("axial_2d", "broken_sign", "dynamic_ntk", "half_split", "linear_interpolation",
                                    "llama3", "longrope_switch", "ntk_scaled_base", "partial_rotation",
                                    "phase_offset", "xpos", "yarn", "streaming_llm", "sliding_window")},
    # RoPE-Mixed: D on both axes turns pair k by D (w_kx + w_ky), non-zero sums: the bound oscillates too
    "rope_mixed": "refuted",
    # all-zero frequencies: a constant bound
    "nope": "refuted",
    # ReRoPE, Self-Extend: rho(D, 0) = D below the window w = 512, so the bound is RoPE's and oscillates there
    "rerope": "refuted", "self_extend": "refuted",
    # Dual Chunk Attention: rho(D, 0) = D inside the key's chunk (s = 3072), RoPE's oscillating bound there
    "dual_chunk": "refuted",
    # RetNet: pair 0 turns 1 rad a step; gamma_h^D = (31/32)^D in head 0 is too slow to stop the bound rising
    "retnet": "refuted",
    # RoPE plus ALiBi: the rotary bound rises in head 0 (pair 0 turns 1 rad a step), and for contents large
    # enough the rise beats the bias's fall
    "rope_alibi": "refuted",
    # Shaw: learned(4 - min(D, 4)) = 0.4, 0.1, -0.3, -0.5, -0.8, then -0.8: falls, then stays
    "shaw": "proved",
    # additive: no decay property (its product is a sum of cosines, like Sandwich)
    "t2t_concatenated": None,
    # dense rotations: no decay property either (RoFormer's bound is a sum over rotation pairs)
    "string_2d": None, "liere_2d": None,
    # a bias over two axes: no causal order along which to decay
    "swin_window": None,
    # additive too: a learned table, and a scaled sinusoidal table
    "learned_absolute": None, "scaled_sinusoidal": None,
}


def test_every_shipped_example_has_a_decay_expectation():
    assert set(shipped_variants()) == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_decay(name):
    variant = load_variant(shipped_variants()[name])
    results = check_variant(variant, only={"decay"})
    if SHIPPED[name] is None:
        assert results == []
        return
    (result,) = results
    assert result.status == SHIPPED[name], result.reason
    if result.witnesses:
        _assert_rise_is_real(variant, result)
    if name == "t5_buckets":  # bucket(D) = D below 8: learned[2] = 0.125 > learned[1] = -0.25
        assert "D: 1," in result.witness_text


def _config_regimes():
    from importlib import resources

    from symproof.models._config import load_model

    folder = resources.files("symproof._derivations") / "configs"
    paths = sorted((p for p in folder.iterdir() if p.name.endswith(".json")), key=lambda p: p.name)
    return [pytest.param(regime.variant, id=f"{p.name[:-5]}:{regime.name}") for p in paths
            for regime in load_model(str(p)).regimes if regime.variant is not None]


@pytest.mark.parametrize("variant", _config_regimes())
def test_every_shipped_config_loses_decay_with_a_real_rise(variant):
    # every rotary regime of a published config turns its first pair at a non-zero frequency (base^0,
    # divided by at most its scaling factor): RoFormer's bound oscillates, and the rise is re-derived here
    result = _decay(variant)
    assert result.status == "refuted", result.reason
    _assert_rise_is_real(variant, result)
