"""The checker's trusted base is stated, and nothing enters it unannounced.

An AST scan of ``symproof/checker/`` lists every SymPy and mpmath name the
checker refers to (functions it calls, classes it builds or tests against) and
every SymPy method it calls on a term; each must be in the documented lists
(:data:`symproof.checker.TRUSTED_SYMPY`, :data:`symproof.checker.TRUSTED_METHODS`)
and in the user documentation, with the checker's size.  The checker's grammar
admits nothing the prover's fragment refuses.
"""

import ast
import pathlib
import re

import pytest
import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.polys.rings import PolyElement

from symproof import checker
from symproof.checker import _grammar
from symproof.prover import _fragment

ROOT = pathlib.Path(__file__).parents[2]
CHECKER = ROOT / "symproof" / "checker"
DOCS = ROOT / "docs"
#: the libraries whose calls make up the trusted base beside the checker's own lines
LIBRARIES = ("sympy", "mpmath")
#: SymPy classes whose methods a call on a term may reach
TERM_CLASSES = (sp.Expr, sp.Basic, sp.MatrixBase, sp.Poly, PolyElement, sp.logic.boolalg.Boolean)


def _library_names(tree):
    """Fully qualified SymPy/mpmath names the module refers to (``sp.cos`` -> ``sympy.cos``)."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.split(".")[0] in LIBRARIES:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    aliases = {name: full for name, full in aliases.items() if full.split(".")[0] in LIBRARIES}
    names = set()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in aliases and not isinstance(parents.get(node), ast.Attribute):
            names.add(aliases[node.id])
        elif isinstance(node, ast.Attribute) and not isinstance(parents.get(node), ast.Attribute):
            chain, inner = [], node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in aliases:
                names.add(".".join([aliases[inner.id], *reversed(chain)]))
    return names


#: a sparse polynomial is a dict: the dict's own methods are not SymPy's
CONTAINERS = (dict,)


def _method_calls(tree):
    """Names of methods called on objects (``expr.expand()``) that SymPy's term classes define;
    calls on a module (``sp.expand``, ``iv.exp``) are names, counted by :func:`_library_names`."""
    modules = {alias.asname or alias.name.split(".")[0] for node in ast.walk(tree)
               if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    calls = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver, name = node.func.value, node.func.attr
            if isinstance(receiver, ast.Name) and receiver.id in modules:
                continue
            if any(hasattr(cls, name) for cls in TERM_CLASSES) and not any(hasattr(c, name) for c in CONTAINERS):
                calls.add(name)
    return calls


def _scan():
    names, methods = set(), set()
    for path in sorted(CHECKER.glob("*.py")):
        tree = ast.parse(path.read_text())
        names |= _library_names(tree)
        methods |= _method_calls(tree)
    return names, methods


def test_every_library_name_the_checker_uses_is_listed():
    names, _ = _scan()
    unlisted = sorted(names - set(checker.TRUSTED_SYMPY))
    assert not unlisted, f"the checker uses {unlisted}, not in symproof.checker.TRUSTED_SYMPY"
    stale = sorted(set(checker.TRUSTED_SYMPY) - names)
    assert not stale, f"TRUSTED_SYMPY lists {stale}, which the checker no longer uses"


def test_every_sympy_method_the_checker_calls_is_listed():
    _, methods = _scan()
    unlisted = sorted(methods - set(checker.TRUSTED_METHODS))
    assert not unlisted, f"the checker calls the methods {unlisted}, not in symproof.checker.TRUSTED_METHODS"
    stale = sorted(set(checker.TRUSTED_METHODS) - methods)
    assert not stale, f"TRUSTED_METHODS lists {stale}, which the checker no longer calls"


def test_the_documentation_states_the_trusted_base_and_the_size():
    # the reference page prints the lists and the size from the code (docs/_ext), so they cannot drift:
    # check that the page uses both and that the generated table names every trusted name
    import sys
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import symproof_tables as symproof_docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    page = (DOCS / "reference" / "fragment.md").read_text(encoding="utf-8")
    assert "{symproof-table} trusted-base" in page and "{symproof-fact}`checker-lines`" in page
    table = "\n".join(symproof_docs.trusted_base_table())
    missing = [name for name in (*checker.TRUSTED_SYMPY, *checker.TRUSTED_METHODS) if f"`{name}`" not in table]
    assert not missing, f"the trusted-base table does not list {missing}"
    lines = sum(len(p.read_text().splitlines()) for p in CHECKER.glob("*.py"))
    assert symproof_docs.FACTS["checker-lines"]() == str(lines)


def test_the_scan_sees_a_call_that_is_not_listed():
    # the scan must be able to fail: an unlisted call in a module is reported
    tree = ast.parse("import sympy as sp\nfrom mpmath import iv\nsp.nsimplify(x)\niv.erf(y)\nx.evalf()\n")
    assert {"sympy.nsimplify", "mpmath.iv.erf"} <= _library_names(tree) - set(checker.TRUSTED_SYMPY)
    assert "evalf" in _method_calls(tree) - set(checker.TRUSTED_METHODS)


# -- the checker's language against the prover's ---------------------------------------------------


def test_the_checker_admits_no_class_the_prover_refuses():
    prover = set(_fragment.SCALAR_GRAMMAR) | set(_fragment.MATRIX_GRAMMAR)
    extra = sorted(cls.__name__ for cls in set(_grammar.GRAMMAR) | set(_grammar.MATRIX_NODES) if cls not in prover)
    assert not extra, f"the checker admits {extra}, which the prover's fragment does not"


@pytest.mark.parametrize("cls", sorted((c for c in _grammar.GRAMMAR if c in _fragment.SCALAR_GRAMMAR),
                                       key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_the_checker_asks_at_least_the_prover_of_each_argument(cls):
    # where the prover wants integer (or natural) arguments, the checker must too
    prover = _fragment.SCALAR_GRAMMAR[cls].args
    checker_shape = _grammar.GRAMMAR[cls][2]
    wanted = {"expr": {_grammar.ANY, _grammar.INTEGER, _grammar.NATURAL, _grammar.INDEX},
              "integer": {_grammar.INTEGER, _grammar.NATURAL, _grammar.INDEX},
              "natural": {_grammar.NATURAL}, "literal": {_grammar.INDEX}}[prover]
    assert checker_shape in wanted, f"{cls.__name__}: the prover asks {prover!r}, the checker {checker_shape!r}"


def test_every_admitted_function_has_a_definedness_row():
    functions = [cls for cls in _grammar.GRAMMAR
                 if issubclass(cls, (sp.Function, sp.Piecewise, sp.Indexed)) or cls is AppliedUndef
                 or cls.__name__ == "MatrixElement"]
    missing = sorted(cls.__name__ for cls in functions if cls not in _grammar.DEFINEDNESS)
    assert not missing, f"no definedness row for {missing}"


def test_the_grammar_comparison_can_fail():
    # a class only the checker admitted would be reported
    prover = set(_fragment.SCALAR_GRAMMAR) | set(_fragment.MATRIX_GRAMMAR)
    assert sp.coth not in prover and sp.acoth not in prover and sp.zeta not in prover
    assert not {sp.coth, sp.acoth, sp.zeta, sp.Subs} & set(_grammar.GRAMMAR)
