"""The adversary: random statements from a grammar wider than the engine's fragment.

Statements come from :mod:`_oracle_statements` (true, false and undefined by
construction); every verdict is judged by :mod:`_oracle_audit` with the
independent bottom-up interval evaluator :mod:`_oracle`, never with SymPy's
evaluation or the engine's own code:

* proved  => true at random points where both sides are defined, and not
  undefined everywhere;
* refuted => the witness binds only free variables, honours their assumptions,
  keeps Indexed elements consistent, and breaks the statement with every
  subterm defined;
* nothing but a SymproofError escapes, and nothing runs past its budget;
* unknown is always acceptable.

Reproducible by default (derandomized, no example database, a fixed number of
examples); ``SYMPROOF_ADVERSARY_EXAMPLES=2000`` runs a longer hunt and
``SYMPROOF_ADVERSARY_SEED`` varies it.
"""

import os
import signal

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from _oracle_audit import audit
from _oracle_statements import (
    deep_statement, false_scalar, law_statement, matrix_law_statement, matrix_statement, tricky_statement, true_scalar,
    undefined_scalar,
)

EXAMPLES = int(os.environ.get("SYMPROOF_ADVERSARY_EXAMPLES", "30"))
SEED = int(os.environ.get("SYMPROOF_ADVERSARY_SEED", "20"))
TIMEOUT = 2.0
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=SEED == 20, database=None,
                    suppress_health_check=list(HealthCheck))


def _judge(statement, point_seed):
    verdict, elapsed, problems = audit(statement.lhs, statement.rhs, statement.kind, TIMEOUT, point_seed)
    assert not problems, (
        f"unsound or out of budget: {statement}\n  verdict: {verdict}\n  elapsed: {elapsed:.2f} s\n  "
        + "\n  ".join(problems))


@seed(SEED)
@SETTINGS
@given(true_scalar(), st.integers(0, 10**6))
def test_true_scalar_statements(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(false_scalar(), st.integers(0, 10**6))
def test_false_scalar_statements(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(undefined_scalar(), st.integers(0, 10**6))
def test_undefined_scalar_statements(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(matrix_statement(), st.integers(0, 10**6))
def test_matrix_statements(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(law_statement(), st.integers(0, 10**6))
def test_laws_at_random_arguments(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@settings(SETTINGS, max_examples=max(EXAMPLES // 2, 1))
@given(matrix_law_statement(), st.integers(0, 10**6))
def test_matrix_symbol_laws(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(tricky_statement(), st.integers(0, 10**6))
def test_tricky_families(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@SETTINGS
@given(deep_statement(), st.integers(0, 10**6))
def test_deeper_expressions(statement, point_seed):
    _judge(statement, point_seed)


@seed(SEED)
@settings(SETTINGS, max_examples=max(EXAMPLES // 2, 1))
@given(st.one_of(true_scalar(), false_scalar(), matrix_statement(), tricky_statement()),
       st.sampled_from([1e-3, 0.02, 0.1, 0.4]), st.integers(0, 10**6))
def test_tiny_budgets(statement, timeout, point_seed):
    """Any statement under a tiny budget: a verdict in time, the alarm handler restored, no stray alarm."""
    before = signal.getsignal(signal.SIGALRM)
    verdict, elapsed, problems = audit(statement.lhs, statement.rhs, statement.kind, timeout, point_seed)
    assert not problems, f"{statement}: {verdict} after {elapsed:.2f} s: " + "; ".join(problems)
    assert signal.getsignal(signal.SIGALRM) is before, "the SIGALRM handler was not restored"
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "an alarm is still pending after the call"
