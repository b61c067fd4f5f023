"""The independent checker: it accepts the prover's certificates and rejects corrupted ones.

Each kind of certificate is produced by a real proof, accepted as is, then
corrupted one field at a time; the checker must reject every corruption and
say why.  A rejected certificate makes a claim's step unknown.
"""

from dataclasses import replace

import pytest
import sympy as sp
from sympy import KroneckerDelta, MatMul, Rational, Sum, Transpose, cos, sin

from symproof import prove_equal, rope_matrix, rotation
from symproof.checker import Certificate, certificate_holds, check_certificate
from symproof.claims import Claim, Proof
from symproof.claims._runner import recheck_certificates
from symproof._ground._errors import CertificateError

x, y, w = sp.symbols("x y w", real=True)
i, j = sp.symbols("i j", integer=True)
n = sp.Symbol("n", integer=True, nonnegative=True)
k = sp.Symbol("k", integer=True)
beta, s, e = sp.symbols("beta s e", positive=True)
ws = sp.symbols("w0:3", positive=True)


def _certificate(lhs, rhs, kind):
    verdict = prove_equal(lhs, rhs)
    assert verdict.proved, str(verdict)
    assert verdict.certificate.kind == kind
    check_certificate(verdict.certificate)
    return verdict.certificate


def _with(certificate, **changes):
    return replace(certificate, data={**certificate.data, **changes})


def _trig():
    return _certificate(cos(x) ** 4 - sin(x) ** 4, cos(2 * x), "trig-polynomial")


def _trig_fraction():
    # a denominator that may vanish: the trig proof is wrapped with a point where it does not
    return _certificate(sin(x) ** 2 / (1 - cos(x) ** 2), 1, "defined")


def _complex_exponential():
    return _certificate(sp.exp(sp.I * x) * sp.exp(-sp.I * y), cos(x - y) + sp.I * sin(x - y), "trig-polynomial")


def _power():
    return _certificate((beta * s ** ((e + 2) / e)) ** (-e / (e + 2)), beta ** (-e / (e + 2)) / s, "power")


def _sum():
    return _certificate(Sum(k, (k, 0, n)), n * (n + 1) / 2, "sum")


def _delta():
    return _certificate(Sum(KroneckerDelta(k, 2), (k, 0, n + 2)), 1, "sum")


def _same_range():
    return _certificate(Sum(sin(k * x) ** 2, (k, 0, n)), Sum(1 - cos(k * x) ** 2, (k, 0, n)), "same-range")


def _entrywise():
    return _certificate(rotation(x).T * rotation(y), rotation(y - x), "entrywise")


def _blockwise():
    return _certificate(MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws)), rope_matrix(j - i, ws),
                        "blockwise")


def _bump_multiplier(c):
    qs = list(c.data["multipliers"])
    qs[0] = qs[0] + 1
    return _with(c, multipliers=tuple(qs))


def _drop_an_application(c):
    return _with(c, apps=c.data["apps"][1:])


def _wrong_multiple(c):
    app, multiples, constants = c.data["apps"][0]
    wrong = tuple((index, count + 1) for index, count in multiples)
    return _with(c, apps=((app, wrong, constants),) + c.data["apps"][1:])


def _wrong_angle(c):
    (cv, sv, angle), *rest = c.data["pairs"]
    return _with(c, pairs=((cv, sv, 2 * angle), *rest))


def _pair_variable_reused(c):
    (cv, sv, angle), *rest = c.data["pairs"]
    return _with(c, pairs=((cv, cv, angle), *rest))


def _another_statement(c):
    return replace(c, rhs=c.rhs + 1)


def _no_point(c):
    return _with(c, point=None)


def _undefined_point(c):
    return _with(c, point={x: 0})


def _reduce_instead(c):
    # without multipliers the checker reduces itself: a wrong statement still fails
    return replace(_with(c, multipliers=None), rhs=c.rhs + sin(x) ** 2)


def _power_wrong_side(c):
    return replace(c, rhs=c.rhs * s**2)


def _power_non_positive_base(c):
    t = sp.Symbol("t", real=True)
    return replace(c, lhs=t ** Rational(1, 2) * t ** Rational(1, 2), rhs=t)


def _sum_doubled_antidifference(c):
    (entry,) = c.data["sums"]
    return _with(c, sums=({**entry, "antidifference": 2 * entry["antidifference"]},))


def _sum_index_claims_positive(c):
    (entry,) = c.data["sums"]
    index = entry["index"]
    positive = sp.Dummy("k", integer=True, positive=True)
    step = entry["step"]
    step = replace(step, lhs=step.lhs.xreplace({index: positive}), rhs=step.rhs.xreplace({index: positive}))
    return _with(c, sums=({**entry, "index": positive,
                           "antidifference": entry["antidifference"].xreplace({index: positive}),
                           "step": step},))


def _sum_wrong_rest(c):
    rest = c.data["rest"]
    return _with(c, rest=replace(rest, rhs=rest.rhs + 1))


def _sum_unknown_entry(c):
    (entry,) = c.data["sums"]
    return _with(c, sums=({**entry, "entry": "doit"},))


def _delta_out_of_range(c):
    (entry,) = c.data["sums"]
    shifted = Sum(KroneckerDelta(k, n + 3), (k, 0, n + 2))
    return replace(_with(c, sums=({**entry, "sum": shifted},)), lhs=shifted)


def _same_range_other_summands(c):
    summands = c.data["summands"]
    return _with(c, summands=replace(summands, rhs=summands.rhs + 1))


def _entry_missing(c):
    return _with(c, entries=c.data["entries"][1:])


def _entry_moved(c):
    (row, col, cert), *rest = c.data["entries"]
    return _with(c, entries=((col + 1 - row, row, cert), *rest))


def _block_wrong_renaming(c):
    plan = list(c.data["blocks"])
    rep, renaming = plan[1]
    plan[1] = (rep, {old: sp.Symbol("v", positive=True) for old in renaming})
    return _with(c, blocks=tuple(plan))


def _block_renaming_changes_assumptions(c):
    plan = list(c.data["blocks"])
    rep, renaming = plan[1]
    plan[1] = (rep, {old: sp.Symbol(str(new), real=True) for old, new in renaming.items()})
    return _with(c, blocks=tuple(plan))


def _block_proof_missing(c):
    return _with(c, proofs={})


def _block_proof_of_another_block(c):
    (rep, proof), = c.data["proofs"].items()
    other = replace(proof, lhs=proof.lhs.T)
    return _with(c, proofs={rep: other})


CORRUPTIONS = [
    pytest.param(_trig, _bump_multiplier, "combination of c^2 + s^2 - 1", id="trig: a multiplier changed"),
    pytest.param(_trig, _drop_an_application, "is not substituted", id="trig: an application dropped"),
    pytest.param(_trig, _wrong_multiple, "is not", id="trig: a wrong multiple"),
    pytest.param(_trig, _wrong_angle, "is not", id="trig: a wrong angle"),
    pytest.param(_trig, _pair_variable_reused, "distinct", id="trig: pair variables collide"),
    pytest.param(_trig, _another_statement, "", id="trig: another statement"),
    pytest.param(_trig, _reduce_instead, "does not reduce to zero", id="trig: reduction of a wrong statement"),
    pytest.param(_trig_fraction, _no_point, "needs a point", id="trig: fraction without a point"),
    pytest.param(_trig_fraction, _undefined_point, "fails at the point", id="trig: point where undefined"),
    pytest.param(_complex_exponential, _another_statement, "", id="trig: complex exponential, other statement"),
    pytest.param(_power, _power_wrong_side, "logarithms", id="power: another right side"),
    pytest.param(_power, _power_non_positive_base, "positive", id="power: a base not known positive"),
    pytest.param(_sum, _sum_doubled_antidifference, "G(K) - G(K - 1)", id="sum: antidifference changed"),
    pytest.param(_sum, _sum_index_claims_positive, "does not show the index's assumption",
                 id="sum: index assumption the range does not show"),
    pytest.param(_sum, _sum_wrong_rest, "", id="sum: the rest proves another statement"),
    pytest.param(_sum, _sum_unknown_entry, "unknown closed-form entry", id="sum: an entry outside the table"),
    pytest.param(_delta, _delta_out_of_range, "lie in", id="sum: delta outside its range"),
    pytest.param(_same_range, _same_range_other_summands, "summands compared", id="same-range: other summands"),
    pytest.param(_entrywise, _entry_missing, "no certificate", id="entrywise: an entry missing"),
    pytest.param(_entrywise, _entry_moved, "", id="entrywise: a certificate moved"),
    pytest.param(_blockwise, _block_wrong_renaming, "renamed", id="blockwise: a wrong renaming"),
    pytest.param(_blockwise, _block_renaming_changes_assumptions, "equal assumptions",
                 id="blockwise: renaming across assumptions"),
    pytest.param(_blockwise, _block_proof_missing, "no certificate", id="blockwise: proof missing"),
    pytest.param(_blockwise, _block_proof_of_another_block, "another statement",
                 id="blockwise: the proof is of another block"),
]


@pytest.mark.parametrize("make, corrupt, why", CORRUPTIONS)
def test_the_checker_rejects_a_corrupted_certificate(make, corrupt, why):
    certificate = make()
    assert certificate_holds(certificate)
    with pytest.raises(CertificateError) as caught:
        check_certificate(corrupt(certificate))
    assert why in str(caught.value)


@pytest.mark.parametrize("certificate", [
    pytest.param(Certificate("structural", x, x + 1), id="structural: different sides"),
    pytest.param(Certificate("oracle", x, x + 1), id="an unknown kind"),
    pytest.param("proved", id="not a certificate"),
    pytest.param(Certificate("trig-polynomial", x, x, {}), id="malformed data"),
])
def test_the_checker_rejects_what_is_not_a_valid_certificate(certificate):
    assert not certificate_holds(certificate)


def test_every_kind_is_exercised():
    kinds = {make().kind for make in {p.values[0] for p in CORRUPTIONS}}
    assert kinds == {"trig-polynomial", "power", "sum", "same-range", "entrywise", "blockwise", "defined"}


def test_a_rejected_certificate_makes_the_step_unknown():
    claim = Claim(id="test.cert", section="0", title="t", statement="s", kind="identity", derive=lambda p: None)
    proof = Proof(claim)
    proof.equal("pythagoras", sin(x) ** 2 + cos(x) ** 2, 1)
    proof.equal("double angle", cos(2 * x), cos(x) ** 2 - sin(x) ** 2)
    part = proof.parts[1]
    part.verdict = replace(part.verdict, certificate=_bump_multiplier(part.verdict.certificate))
    accepted, rejected = recheck_certificates(proof)
    assert (accepted, rejected) == (1, 1)
    assert proof.parts[0].status == "proved"
    assert part.status == "unknown" and part.detail.startswith("certificate rejected by the checker")


def test_the_checker_does_not_import_the_tactics():
    import ast
    import pathlib

    import symproof.checker as checker

    for path in pathlib.Path(checker.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert "prover" not in (node.module or ""), f"{path.name} imports {node.module}"


def test_a_forged_certificate_for_a_statement_defined_nowhere_is_rejected():
    zero = cos(x) ** 2 + sin(x) ** 2 - 1
    quotient = 1 / (2 * cos(x) ** 2 + 2 * sin(x) ** 2 - 2)
    c, s_ = sp.Dummy("c"), sp.Dummy("s")
    forged = Certificate("trig-polynomial", zero * quotient, 0, {
        "pairs": ((c, s_, x),),
        "apps": ((cos(x), ((0, 1),), ()), (sin(x), ((0, 1),), ())),
        "multipliers": (quotient,),  # the quotient taken as an independent atom
        "point": None,
    })
    with pytest.raises(CertificateError, match="needs a point"):
        check_certificate(forged)
    with pytest.raises(CertificateError, match="fails at the point"):
        check_certificate(Certificate("defined", forged.lhs, forged.rhs, {"point": {x: sp.Integer(1)}, "proof": forged}))
