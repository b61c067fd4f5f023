"""Known answers of variant properties the deciders split, head by head or at a where(): a false property is
never proved, a true one never refuted, and every witness is re-checked here from the file's own formula.

Each row is a small file, a property, and the class its verdict must fall in:

* ``NOT_PROVED`` -- the property is false (the comment says where); refuted or unknown;
* ``NOT_REFUTED`` -- the property is true (the comment says why); proved or unknown.

The independent checks do not call the deciders: a bias is evaluated exactly by SymPy at integer points
(``Variant.bias_at``), RoFormer's bound at 50 digits by mpmath from the frequencies.
"""

from __future__ import annotations

import itertools

import mpmath
import pytest
import sympy as sp

from symproof.variants import Variant, check_variant

NOT_PROVED, NOT_REFUTED = ("refuted", "unknown"), ("proved", "unknown")


def _bias(formula, slope="1", heads=1, **extra):
    return {"name": "probe", "kind": "bias", "bias": {"formula": formula, "heads": heads, "slope": slope}, **extra}


def _rotary(**extra):
    data = {"name": "probe", "kind": "rotary", "width": 4, "pairing": "half", "frequencies": {"base": 10000}}
    data.update(extra)
    return data


def _listed(values, **extra):
    return {"name": "probe", "kind": "rotary", "width": 2 * len(values), "pairing": "half",
            "frequencies": {"rule": "list", "values": values}, **extra}


_SIGNS = [1, -1] * 8
_TWO_PI = [f"{2 * (k + 1)}*pi" for k in range(16)]

CASES = [
    # -- decay, head by head: one head of eight rises (w = -1 in head 5)
    ("decay-head-5", _bias("-w(h) * abs(j - i)", heads=8, params={"w": [1, 1, 1, 1, 1, -1, 1, 1]}),
     "decay", NOT_PROVED),
    # w(h) v(h) negative in head 2 only (2 * -1): that head rises
    ("decay-product-head-2", _bias("-w(h) * v(h) * abs(j - i)", heads=4, params={"w": [1, -1, 2, -2],
                                                                                   "v": [1, -1, -1, -2]}),
     "decay", NOT_PROVED),
    # a square in every head: falls (or stays) in every head
    ("decay-product-square", _bias("-w(h) * w(h) * abs(j - i)", heads=4, params={"w": [1, -1, 2, -2]}),
     "decay", NOT_REFUTED),
    # i j in head 1: rows before position -1 rise with the distance (positions are every integer)
    ("decay-negative-rows", _bias("-abs(j - i) + w(h) * i * j", heads=2, params={"w": [0, 1]}), "decay", NOT_PROVED),
    # the same on positions >= 0: -D + i (i - D) = i^2 - (i + 1) D falls in every row i >= 0
    ("decay-nonnegative-rows", _bias("-abs(j - i) + w(h) * i * j", heads=2, params={"w": [0, 1]},
                                     positions="nonnegative"), "decay", NOT_REFUTED),
    # -- decay, a where() at the integers: the step at D > 2 goes from -2 (D = 2) up to -1 (D = 3)
    ("decay-step-off-by-one", _bias("where(abs(j - i) > 2, -1, -abs(j - i))"), "decay", NOT_PROVED),
    # 2 D > 3 holds from D = 2: 0, -1, then -0.8: a rise from D = 1 to 2
    ("decay-half-threshold", _bias("where(2 * abs(j - i) > 3, -0.8, -abs(j - i))"), "decay", NOT_PROVED),
    # D >= 2 against D > 2 written with a non-integer threshold: 2 D >= 5 holds from D = 3; -2 at D = 2, -2.5 after
    ("decay-step-down", _bias("where(2 * abs(j - i) >= 5, -2.5, -abs(j - i))"), "decay", NOT_REFUTED),
    # -- decay, constancy: a bound that alternates is not constant (frequencies 2 pi and pi)
    ("decay-alternating", _rotary(frequencies={"rule": "list", "values": ["2*pi", "pi"]}), "decay", NOT_PROVED),
    # -- identities, head by head: i j in head 3 of 6 breaks the offset form there only
    ("relative-head-3", _bias("-abs(j - i) + w(h) * i * j", heads=6, params={"w": [0, 0, 0, 1, 0, 0]}),
     "relative", NOT_PROVED),
    ("shift-head-3", _bias("-abs(j - i) + w(h) * i * j", heads=6, params={"w": [0, 0, 0, 1, 0, 0]}),
     "shift", NOT_PROVED),
    # -- identities, a where() split: Min(t, 8) against a where() that clips at 7
    ("where-clip-off-by-one", _bias("-where(abs(j - i) < 8, abs(j - i), 7)", equivalent={"bias": "-Min(abs(j - i), 8)"}),
     "equivalence", NOT_PROVED),
    # the same clip at 8: equal at every integer
    ("where-clip", _bias("-where(abs(j - i) < 8, abs(j - i), 8)", equivalent={"bias": "-Min(abs(j - i), 8)"}),
     "equivalence", NOT_REFUTED),
    # where(i >= 0, ...) over every integer: the other branch i j breaks the offset form at i = -1
    ("where-negative-branch", _bias("where(i >= 0, -abs(j - i), i * j)"), "relative", NOT_PROVED),
    # the same, but i > 0 on positions >= 0: the branch i j is taken at i = 0 (b(0, j) = 0 against -|j|)
    ("where-zero-branch", _bias("where(i > 0, -abs(j - i), i * j)", positions="nonnegative"), "relative", NOT_PROVED),
    # on positions >= 0 a transform 2 m below 3 and m after: g(j) - g(i) is not a function of j - i there
    ("where-transform-not-relative", _rotary(positions="nonnegative", position={"transform": "where(m >= 3, m, 2 * m)"}),
     "relative", NOT_PROVED),
    ("where-transform-relative", _rotary(positions="nonnegative", position={"transform": "where(m >= 0, m + 1, m)"}),
     "relative", NOT_REFUTED),
    # a causal row's offset t >= 0: a witness at t < 0 once refuted this true equivalence
    ("causal-offset-range", _bias("-where(j - i >= 0, j - i, i - j)", equivalent={"bias": "-abs(j - i)"}),
     "equivalence", NOT_REFUTED),
    # -- small witnesses on positions >= 0: a learned table, s(1, 1) against s(0, 0)
    ("table-shift", _bias("u(Min(i, 3)) * v(Min(j, 3))", positions="nonnegative",
                          params={"u": [0.5, -0.25, 0.75, 1], "v": [1, 0.5, -1, 2]}), "shift", NOT_PROVED),
    # -- identities, pair by pair: a per-pair scale S(r) = +-1 keeps norms, except S(11) = 2 (16 pairs; the
    # four pairs spread over the spectrum are 0, 15, 8 and 4)
    ("norm-pair-11", _rotary(width=32, params={"S": _SIGNS[:11] + [2] + _SIGNS[12:]},
                             scale={"query": "S(r)", "key": "S(r)"}), "norm", NOT_PROVED),
    ("plain-pair-11", _rotary(width=32, params={"S": _SIGNS[:11] + [2] + _SIGNS[12:]},
                              scale={"query": "S(r)", "key": "S(r)"}), "plain_at_zero", NOT_PROVED),
    ("norm-signs", _rotary(width=32, params={"S": _SIGNS}, scale={"query": "S(r)", "key": "S(r)"}), "norm",
     NOT_REFUTED),
    # g(m) = m^2 with frequencies 2 pi k: whole turns at every integer, except pair 11 (frequency 1)
    ("square-relative-pair-11", _listed(_TWO_PI[:11] + ["1"] + _TWO_PI[12:], position={"transform": "m**2"}),
     "relative", NOT_PROVED),
    ("square-shift-pair-11", _listed(_TWO_PI[:11] + ["1"] + _TWO_PI[12:], position={"transform": "m**2"}),
     "shift", NOT_PROVED),
    ("square-relative-whole-turns", _listed(_TWO_PI, position={"transform": "m**2"}), "relative", NOT_REFUTED),
]


@pytest.mark.parametrize("case, data, key, allowed", CASES, ids=[c[0] for c in CASES])
def test_variant_verdict_class(case, data, key, allowed):
    variant = Variant.from_dict(data)
    (result,) = check_variant(variant, only={key})
    assert result.status in allowed, (result.status, result.reason)
    if result.status == "refuted":
        for part in result.proof.parts:
            if part.witness and part.status in ("refuted", "proved") and part.kind != "differ":
                _recheck(variant, key, part, result)


def _recheck(variant, key, part, result):
    """The witness of a refutation breaks the statement, computed here from the file's formula."""
    witness = {str(k): sp.sympify(v) for k, v in part.witness.items()}
    if key == "decay" and variant.kind == "bias":
        h, query, d = int(witness["h"]), witness["i"], witness["D"]
        slope = variant.slopes()[h]
        far, near = (sp.nsimplify(variant.bias_at(query, query - dd, slope, h)) for dd in (d + 1, d))
        assert sp.N(far - near, 30) > 0, witness
        return
    if key == "decay":
        return  # rotary rises are re-checked at 50 digits in tests/variants/test_decay.py
    if variant.kind == "rotary":
        _recheck_pair(variant, key, witness, result.reason)
        return
    assert all(v.is_nonnegative for k, v in witness.items() if k == "t"), witness
    if variant.positions == "nonnegative":
        assert all(v >= 0 for k, v in witness.items() if k in ("i", "j")), witness
    if variant.kind == "bias" and key in ("relative", "shift"):
        head = int(result.reason.split("head h = ")[1].split(" ")[0]) if "head h = " in result.reason else 0
        slope = variant.slopes()[head]

        def b(a, c):
            return sp.nsimplify(variant.bias_at(a, c, slope, head))

        i, j = witness["i"], witness["j"]
        if key == "relative":
            assert b(i, j) != b(0, j - i), witness
        else:
            c = witness["c"]
            assert b(i + c, j + c) != b(i, j), witness


def _recheck_pair(variant, key, witness, reason):
    """A rotary refutation names its pair: the pair's two sides, built here from the file's frequency, scale
    and transform with the rotation written out, differ at the witness."""
    r = int(reason.split("pair r = ")[1].split(" ")[0])
    w = variant.frequency_at(r)

    def pair_map(side, m):
        x = variant.angle_position(m) * w
        return variant.scale(side, m, r) * sp.Matrix([[sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]])

    q = sp.Matrix([witness.get("q0", 0), witness.get("q1", 0)])
    k = sp.Matrix([witness.get("k0", 0), witness.get("k1", 0)])

    def score(a, b):
        return ((pair_map("query", a) * q).T * (pair_map("key", b) * k))[0]

    i, j, c, m = (witness.get(name, 0) for name in ("i", "j", "c", "m"))
    if key == "norm":
        sides = [((pair_map("query", m) * q).norm() ** 2, q.norm() ** 2), ((pair_map("key", m) * k).norm() ** 2,
                                                                            k.norm() ** 2)]
    else:
        sides = {"relative": [(score(i, j), score(0, j - i))], "shift": [(score(i + c, j + c), score(i, j))],
                 "plain_at_zero": [(score(i, i), (q.T * k)[0])]}[key]
    assert any(abs(sp.N(a - b, 30)) > sp.Float("1e-20") for a, b in sides), (witness, reason)


def test_the_alternating_bound_really_alternates():
    # the row above must not be called constant: B(1) and B(2) differ, computed at 50 digits
    with mpmath.workdps(50):
        def bound(d):
            partial, total = mpmath.mpc(0), mpmath.mpf(0)
            for w in (2 * mpmath.pi, mpmath.pi):
                partial += mpmath.expj(d * w)
                total += abs(partial)
            return total / 2
        assert bound(2) - bound(1) > mpmath.mpf("0.5")
    data = _rotary(frequencies={"rule": "list", "values": ["2*pi", "pi"]})
    (result,) = check_variant(Variant.from_dict(data), only={"decay"})
    assert "is constant" not in (result.reason or "")


# -- a seeded sample of where() biases, per-head tables: every verdict against exact evaluation ----------------

_PIECES = ("-abs(j - i)", "-abs(j - i) / 2", "-2 * abs(j - i)", "{c}", "-w(h) * abs(j - i)", "-Min(abs(j - i), {k})",
           "-log(1 + abs(j - i))", "w(h)")
_RELATIONS = ("<", "<=", ">", ">=")


def _random_bias(rng):
    def piece():
        return rng.choice(_PIECES).format(c=rng.choice([-3, -1, 0, 2]), k=rng.randint(1, 6))

    def condition():
        return f"{rng.randint(1, 3)} * abs(j - i) {rng.choice(_RELATIONS)} {rng.randint(0, 9)}"

    inner = f"where({condition()}, {piece()}, {piece()})"
    formula = f"where({condition()}, {inner}, {piece()})" if rng.random() < 0.4 else inner
    table = [rng.choice([-1, 0, 0.5, 1, 2]) for _ in range(3)]
    return _bias(formula, heads=3, params={"w": table})


def _row(variant, h, distances):
    """b(D + 1, 1) for D in ``distances`` (the key D steps back), exact, then to 40 digits."""
    slope = variant.slopes()[h]
    return [sp.N(variant.bias_at(d + 1, 1, slope, h), 40) for d in distances]


SAMPLE = list(range(40))


@pytest.mark.parametrize("seed", SAMPLE)
def test_sampled_where_biases_decay_verdicts_hold_at_the_integers(seed):
    import random

    rng = random.Random(seed)
    variant = Variant.from_dict(_random_bias(rng))
    (result,) = check_variant(variant, only={"decay"})
    distances = list(range(41))
    rows = [_row(variant, h, distances) for h in range(variant.heads)]
    slack = sp.Float("1e-30", 40)
    if result.status == "proved":
        for h, row in enumerate(rows):
            assert all(b <= a + slack for a, b in itertools.pairwise(row)), (seed, h, row)
    elif result.status == "refuted" and result.witnesses:
        witness = {str(k): int(v) for k, v in result.proof.parts[-1].witness.items()}
        h, d = witness["h"], witness["D"]
        slope = variant.slopes()[h]
        near, far = (sp.N(variant.bias_at(witness["i"], witness["i"] - dd, slope, h), 40) for dd in (d, d + 1))
        assert far > near + slack, (seed, witness)
    elif result.status == "refuted":
        # no witness: a head that does not fall, constant along the row
        assert "does not decay" in result.reason
        head = int(result.reason.split("head h = ")[1].split(":")[0])
        assert all(abs(v - rows[head][0]) <= slack for v in rows[head]), (seed, head)


@pytest.mark.parametrize("seed", SAMPLE[:20])
def test_sampled_where_equivalences_hold_at_the_integers(seed):
    import random

    rng = random.Random(1000 + seed)
    k = rng.randint(1, 6)
    relation, shift = rng.choice([("<", 0), ("<=", -1), ("<", 1), ("<", 2), ("<=", -2)])
    # where(t REL k + shift, t, k) against Min(t, k): equal when the cut falls at k (shift 0 with <, -1 with <=)
    data = _bias(f"-where(abs(j - i) {relation} {k + shift}, abs(j - i), {k})",
                 equivalent={"bias": f"-Min(abs(j - i), {k})"})
    variant = Variant.from_dict(data)
    (result,) = check_variant(variant, only={"equivalence"})
    same = all(sp.Integer(t if (t < k + shift if relation == "<" else t <= k + shift) else k) == min(t, k)
               for t in range(3 * k + 4))
    assert result.status == ("proved" if same else "refuted") or result.status == "unknown", (seed, result.reason)
    if result.status == "refuted":
        assert not same and all(v >= 0 for key, v in result.proof.parts[-1].witness.items() if str(key) == "t")


# -- the case split alone: a proof covers every integer ------------------------------------------------------


def _where_statements(rng):
    """Two sides built from where()s of one integer t >= 0 and one integer s, true or false."""
    t = sp.Symbol("t", integer=True, nonnegative=True)
    s = sp.Symbol("s", integer=True)
    var = rng.choice([t, s, t + s])

    def piece():
        return rng.choice([var, -var, sp.Integer(rng.randint(-3, 9)), 2 * var, sp.Min(var, rng.randint(0, 6))])

    def where():
        cut = rng.randint(-3, 9)
        relation = rng.choice([sp.StrictLessThan, sp.LessThan, sp.StrictGreaterThan, sp.GreaterThan, sp.Eq, sp.Ne])
        inner = sp.Piecewise((piece(), relation(rng.choice([1, 2]) * var, cut)), (piece(), True))
        return inner if rng.random() < 0.5 else sp.Piecewise((inner, relation(var, cut + 1)), (piece(), True))

    return where(), rng.choice([where(), piece(), sp.Max(var, rng.randint(0, 4))]), (t, s)


@pytest.mark.parametrize("seed", range(60))
def test_a_case_split_proof_holds_at_every_integer(seed):
    import random

    from symproof.variants._cases import where_cases

    lhs, rhs, (t, s) = _where_statements(random.Random(seed))
    cases = where_cases(lhs, rhs)
    if cases is None:
        return
    for tv in range(14):
        for sv in range(-14, 14):
            point = {t: sp.Integer(tv), s: sp.Integer(sv)}
            assert lhs.xreplace(point) == rhs.xreplace(point), (seed, lhs, rhs, point, [c for c, _ in cases])


def test_a_case_split_misses_no_integer_next_to_the_cut():
    from symproof.variants._cases import where_cases

    t = sp.Symbol("t", integer=True, nonnegative=True)
    s = sp.Symbol("s", integer=True)
    # Max(40, 81 - t) is 41 at t = 40, the first integer past the cut, and 40 after: only t = 40 tells
    assert where_cases(sp.Piecewise((t, t < 40), (sp.Max(40, 81 - t), True)), sp.Min(t, 40)) is None
    # Min(s, -11 - s) is s up to s = -6 and -6 at s = -5, the last integer of the side s <= -5
    assert where_cases(sp.Piecewise((sp.Min(s, -11 - s), s <= -5), (s, True)), s) is None
    # an equality holds at one integer: 5 at s = 3 only against a form that is 5 there, wrong at s = 4
    assert where_cases(sp.Piecewise((5, sp.Eq(s, 3)), (s + 2, True)), s + 2) is not None
    assert where_cases(sp.Piecewise((5, sp.Eq(s, 3)), (s + 2, True)), sp.Piecewise((5, sp.Eq(s, 4)), (s + 2, True))) \
        is None
    # and the true statements next to them are proved
    assert where_cases(sp.Piecewise((t, t < 40), (40, True)), sp.Min(t, 40)) is not None
    assert where_cases(sp.Piecewise((sp.Min(s, -12 - s), s <= -6), (s, True)), s) is not None
