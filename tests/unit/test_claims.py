"""The claims machinery: how the parts a derivation records become a verdict."""

import pytest
import sympy as sp
from sympy import cos, sin

from symproof import Claim, InvalidInputError, claim, run_claim, select_claims
from symproof.claims import _claim as claim_module

x = sp.Symbol("x", real=True)
p = sp.Symbol("p", positive=True)


def _claim(derive, id="test.claim", kind="identity"):
    return Claim(id=id, section="0.0", title="a test claim", statement="", kind=kind, derive=derive)


def _chain_closed(proof):
    proof.chain(cos(x) ** 4 - sin(x) ** 4, cos(2 * x)) \
        .step("difference of squares", (cos(x) ** 2 - sin(x) ** 2) * (cos(x) ** 2 + sin(x) ** 2)) \
        .step("cos^2 + sin^2 = 1", cos(x) ** 2 - sin(x) ** 2) \
        .step("double angle", cos(2 * x))


def _chain_not_closed(proof):
    proof.chain(cos(x) ** 4 - sin(x) ** 4, cos(2 * x), "quartic") \
        .step("cos^2 + sin^2 = 1", cos(x) ** 2 - sin(x) ** 2)


def _refuted_step(proof):
    proof.chain(cos(2 * x), 1).step("a wrong double angle", cos(x) ** 2 + sin(x) ** 2).step("Pythagoras", 1)


def _raises_a_bug(proof):
    proof.equal("fine", x, x)
    raise ZeroDivisionError("division by zero in the derivation")


def _raises_a_symproof_error(proof):
    proof.equal("bad input", "not an expression", x)


def _records_nothing(proof):
    proof.note("only prose")


def _undecided(proof):
    proof.equal("outside the class", sp.gamma(x + 1), x * sp.gamma(x))


VERDICTS = [
    pytest.param(_chain_closed, "proved", "", id="closed chain"),
    pytest.param(_chain_not_closed, "unknown", "chain quartic stops before reaching its right-hand side",
                 id="chain not closed"),
    pytest.param(_refuted_step, "refuted", "step 'a wrong double angle' is false", id="refuted step"),
    pytest.param(_raises_a_bug, "unknown", "ZeroDivisionError in ", id="derivation raises"),
    pytest.param(_raises_a_symproof_error, "unknown",
                 "InvalidInputError: lhs must be a SymPy expression", id="derivation raises a SymproofError"),
    pytest.param(_records_nothing, "unknown", "the derivation recorded no checked step", id="no parts"),
    pytest.param(_undecided, "unknown", "step 'outside the class' is not decided: outside the decidable class",
                 id="undecided step"),
]


@pytest.mark.parametrize("derive, status, reason", VERDICTS)
def test_parts_become_a_verdict(derive, status, reason):
    result = run_claim(_claim(derive))
    assert result.status == status, result.reason
    assert result.reason.startswith(reason)


def test_an_error_shows_its_message_and_where_it_happened():
    bug = run_claim(_claim(_raises_a_bug))
    assert "test_claims.py:" in bug.reason and bug.reason.endswith("division by zero in the derivation")
    refused = run_claim(_claim(_raises_a_symproof_error))
    assert refused.reason.endswith("[claim: test.claim; step: bad input]")


def test_a_refuted_step_keeps_its_witness():
    result = run_claim(_claim(_refuted_step))
    assert result.witnesses == ["{x: 1}"]
    assert result.methods == ("witness", "trig-polynomial")


def test_the_json_record_of_a_result():
    record = run_claim(_claim(_chain_closed)).as_dict()
    assert set(record) >= {"id", "verdict", "method", "seconds", "witness"}
    assert (record["id"], record["verdict"], record["method"], record["witness"]) == \
        ("test.claim", "proved", "trig-polynomial", None)
    assert isinstance(record["seconds"], float)


# -- the other statements of a derivation ----------------------------------------------------------

def _statement(make):
    result = run_claim(_claim(make))
    (part,) = result.proof.parts
    return part


STATEMENTS = [
    pytest.param(lambda pr: pr.differ("sqrt", sp.sqrt(x**2), x), "proved", id="differ, searched witness"),
    pytest.param(lambda pr: pr.differ("given", sp.sqrt(x**2), x, witness={x: 1}), "unknown",
                 id="differ, witness where the sides agree"),
    pytest.param(lambda pr: pr.differ("unbound", sin(x) + p, p, witness={p: 1}), "unknown",
                 id="differ, witness leaves a symbol unbound"),
    pytest.param(lambda pr: pr.holds("positive", p + 1 > 0), "proved", id="holds"),
    pytest.param(lambda pr: pr.holds("negative", p < 0), "refuted", id="holds, false"),
    pytest.param(lambda pr: pr.holds("sign unknown", x > 0), "unknown", id="holds, undecided"),
    pytest.param(lambda pr: pr.digits("sin 1", sin(1), "0.841471"), "proved", id="digits"),
    pytest.param(lambda pr: pr.digits("sin 1", sin(1), "0.841472"), "refuted", id="digits, last place wrong"),
    pytest.param(lambda pr: pr.digits("integer", sp.Integer(4), "4"), "proved", id="digits, integer"),
    # a value with no certified real enclosure (log of a negative number is complex) is not decided
    pytest.param(lambda pr: pr.digits("log(-1)", sp.log(-1), "0.5"), "unknown", id="digits, complex value"),
    # exactly at half a unit of the last place: not within it
    pytest.param(lambda pr: pr.digits("a tie", sp.Rational(1, 4), "0.2"), "refuted", id="digits, a tie"),
    pytest.param(lambda pr: pr.raises("refuses", InvalidInputError, select_claims, {}, ["x"]), "proved",
                 id="raises"),
    pytest.param(lambda pr: pr.raises("does not refuse", InvalidInputError, abs, -1), "refuted",
                 id="raises, nothing raised"),
    pytest.param(lambda pr: pr.check("computed", True, "max error 0"), "proved", id="check"),
]


@pytest.mark.parametrize("make, status", STATEMENTS)
def test_each_kind_of_statement_is_checked(make, status):
    assert _statement(make).status == status


def test_differ_on_a_matrix_symbol_binds_its_entries():
    A = sp.MatrixSymbol("A", 2, 2)
    part = _statement(lambda pr: pr.differ("not normal", sp.Matrix(A.T * A), sp.Matrix(A * A.T)))
    assert part.status == "proved"
    assert part.witness == {A[0, 0]: 0, A[0, 1]: 1, A[1, 0]: 0, A[1, 1]: 0}


def test_differ_reports_the_witness_and_the_residual():
    part = _statement(lambda pr: pr.differ("sqrt", sp.sqrt(x**2), x))
    assert part.witness == {x: -1} and part.residual == 2 and part.witness_text == "{x: -1}"


# -- registration and selection ----------------------------------------------------------------------

@pytest.fixture
def registry(monkeypatch):
    fresh: dict = {}
    monkeypatch.setattr(claim_module, "_REGISTRY", fresh)
    return fresh


def test_claim_registers_a_derivation(registry):
    @claim("test.one", section="0.1", title="one", statement="1 = 1")
    def one(proof):
        proof.equal("trivial", sp.Integer(1), 1)

    assert list(registry) == ["test.one"] and registry["test.one"].name == "one"


def test_claim_refuses_an_unknown_kind(registry):
    with pytest.raises(InvalidInputError, match=r"claim 'test.kind': kind must be one of .*, got 'lemma'"):
        claim("test.kind", section="0.1", title="", statement="", kind="lemma")


def test_an_id_registered_twice_is_refused(registry):
    claim("test.twice", section="0.1", title="", statement="")(lambda proof: None)

    def other(proof):
        pass

    with pytest.raises(InvalidInputError, match="claim ID 'test.twice' is registered twice"):
        claim("test.twice", section="0.1", title="", statement="")(other)


CLAIMS = {cid: _claim(_chain_closed, id=cid) for cid in ("rope.relative", "rope.orthogonal", "abs.norm")}


@pytest.mark.parametrize("patterns, chosen", [
    pytest.param(None, ["rope.relative", "rope.orthogonal", "abs.norm"], id="all"),
    pytest.param(["abs.norm"], ["abs.norm"], id="exact"),
    pytest.param(["rope.*"], ["rope.relative", "rope.orthogonal"], id="glob"),
    pytest.param(["rope.*", "rope.relative", "abs.*"], ["rope.relative", "rope.orthogonal", "abs.norm"],
                 id="no duplicates"),
])
def test_select_claims(patterns, chosen):
    assert [c.id for c in select_claims(CLAIMS, patterns)] == chosen


def test_an_unknown_pattern_is_a_clear_error():
    with pytest.raises(InvalidInputError) as caught:
        select_claims(CLAIMS, ["rope.*", "nosuch.*"])
    assert str(caught.value) == \
        "no claim matches 'nosuch.*'; known IDs start with ['abs.*', 'rope.*'] [pattern: nosuch.*]"


# -- verdicts computed elsewhere, and steps left undecided ------------------------------------------


@pytest.mark.parametrize("lhs, rhs, status", [
    (sin(x) ** 2 + cos(x) ** 2, 1, "proved"),
    (sp.sqrt(x ** 2), x, "refuted"),
])
def test_a_recorded_verdict_decides_the_claim_like_a_checked_step(lhs, rhs, status):
    from symproof import prove_equal

    verdict = prove_equal(lhs, rhs)
    result = run_claim(_claim(lambda proof: proof.record("computed elsewhere", verdict)))
    assert result.status == status
    part = result.proof.parts[0]
    assert (part.kind, part.before, part.after, part.witness) == ("equal", verdict.lhs, verdict.rhs,
                                                                  verdict.witness)


def test_an_undecided_step_keeps_the_claim_unknown_and_says_why():
    def derive(proof):
        proof.equal("fine", x, x)
        proof.undecided("differ", "a witness of different scores", "no witness among simple points")

    result = run_claim(_claim(derive))
    assert result.status == "unknown"
    assert result.reason == ("step 'a witness of different scores' is not decided: "
                             "no witness among simple points")
