"""The report reads as a textbook page: counted on a freshly rendered report, none of the shapes a
program prints comes back.

Each defect has a detector (a function of the page, or of the LaTeX) and the number of times it may
occur. The detectors are first shown the defect as the report used to print it, so a count of zero
means the defect is gone, not that the detector is blind.
"""

from __future__ import annotations

import html
import re

import pytest
import sympy as sp

from symproof.encodings import cycle_notation, permutation_matrix
from symproof.report._document import _moved, _telling_first, Item
from symproof.report._witness import MAX_EXACT_CHARS, MAX_SHOWN_ENTRIES, Counterexample, _decimal_sides, _shown_sides


def _articles(page: str) -> list:
    return re.findall(r'<article class="claim" id="([^"]+)">(.*?)</article>', page, re.S)


def _text(fragment: str) -> str:
    """What a reader reads: tags dropped, invisible operators dropped."""
    fragment = re.sub(r"<(pre|code)\b.*?</\1>", " ", fragment, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).replace("\u2061", "").replace("\u2062", "")


def _boxes(page: str) -> list:
    return [box for _, article in _articles(page) for box in re.findall(r'<div class="witnessbox">(.*?)</div>',
                                                                          article, re.S)]


# -- the detectors ---------------------------------------------------------------------------------------

def python_lists_as_permutations(page: str) -> int:
    """``π = [1, 2, 0]``: a permutation printed as the Python list of its images."""
    return len(re.findall(r"\u03c0\s*=\s*\[\s*\d", _text(page)))


def python_lists_of_integers(page: str) -> int:
    """``positions [0, 3, 1]``: a sequence printed as a Python list (code listings apart)."""
    return len(re.findall(r"\[\s*-?\d+\s*(?:,\s*-?\d+\s*)+\]", _text(page)))


def python_comparisons(page: str) -> int:
    """``==`` or ``!=`` in what a reader reads (code listings apart)."""
    return len(re.findall(r"==|!=", _text(page)))


def proofs_without_conclusion(page: str) -> int:
    """A claim whose derivation does not end on a conclusion: a last paragraph holding the end-of-proof
    mark ∎, or saying the statement is not established."""
    missing = 0
    for _, article in _articles(page):
        derivation = article.split('<div class="derivation">', 1)[-1]
        derivation = re.split(r"<figure\b", derivation)[0].rstrip()
        last = re.findall(r"<p(?: class=\"hence\")?>(.*?)</p>\s*</div>\s*$", derivation, re.S)
        if not last or not ("\u220e" in last[-1] or "not established" in last[-1]):
            missing += 1
    return missing


def conclusions_not_restating_the_statement(page: str) -> int:
    """A claim whose last line does not restate its statement (the same formula, or the same words, as
    under "Statement"): "Hence the statement holds" makes the reader scroll back to learn what was shown."""
    missing = 0
    for _, article in _articles(page):
        stated = re.search(r"<dt>Statement</dt><dd>(.*?)</dd>", article, re.S)
        last = re.findall(r'<p class="hence">(.*?)</p>', article, re.S)
        if not stated or not last or stated.group(1).strip() not in last[-1]:
            missing += 1
    return missing


def key_before_query(page: str) -> int:
    """``k_0 q_0``: SymPy's alphabetical order in a product where the chapter writes the query first."""
    return len(re.findall(r"<msub><mi>k</mi><m[in]>\d+</m[in]></msub>(?:<mo>\u2062</mo>)?<msub><mi>q</mi>", page))


def ascii_scripts_and_ranges(page: str) -> int:
    """``p_9007199254740992``, ``2^53``, ``d_r``, ``t = 0 .. 256``: a script or a range as a program spells it,
    in what a reader reads (code apart)."""
    return len(re.findall(r"(?<![\w.])(?:[A-Za-z]'?|\d+)[_^](?:\d+|[A-Za-z])(?![\w.])|\d \.\. ?\d|\d\.\.[\dA-Za-z]",
                          _text(page)))


def unexplained_tactics(page: str) -> int:
    """A tactic tag the preface lists without saying what it means."""
    return page.count("a tactic this report does not explain")


def computed_boxes_without_inputs(page: str) -> int:
    """A computed counterexample (``difference = 0.612, row = 0``) that does not name its inputs."""
    return sum(1 for box in _boxes(page) if "difference =" in _text(box) and "inputs" not in _text(box))


def boxes_naming_an_entry_without_the_sides(page: str) -> int:
    """A matrix counterexample that names ``entry (0, 0)`` but does not show the two matrices."""
    return sum(1 for box in _boxes(page) if re.search(r"\bentry \(?\d", _text(box)) and "sides" not in _text(box))


def undefined_weight_entries(page: str) -> int:
    """A claim that writes ``q_00``, ``k_00`` or ``v_00`` without saying they are entries of W_Q, W_K, W_V."""
    used = re.compile(r"<msub><mi>[qkv]</mi><mi>\d\d</mi></msub>")
    return sum(1 for _, article in _articles(page) if used.search(article) and "Entries:" not in article)


def vector_entries_as_indexing(page: str) -> int:
    """``R(1) q [0]``: an entry of a vector written as Python indexes it."""
    return len(re.findall(r"\b[a-z] \[\d\]", _text(page)))


def frequency_as_w(page: str) -> int:
    """A bare ``w`` in a formula (the chapter's frequency is ω); ``w_{00}``, an entry of ``W``, is not one."""
    return len(re.findall(r"(?<!<msub>)<mi>w</mi>", page))


def a_row_printing_one_formula_twice(page: str) -> int:
    """A chain row whose named form and computed formula are the same formula (``1`` over ``1``)."""
    rows = re.findall(r'<div class="row[^"]*"><span>[^<]*</span><div>(.*?)(?:<div class="why">|</div></div>)', page,
                      re.S)
    twice = 0
    for row in rows:
        formulas = re.findall(r'<math display="block">.*?</math>', row, re.S)
        twice += any(a == b for a, b in zip(formulas, formulas[1:]))
    return twice


#: (defect, detector, how often it may occur on the page, a page of the old report that shows it)
DEFECTS = [
    ("a permutation as a Python list", python_lists_as_permutations, 0,
     "<i>row sum is invariant, <math><mi>\u03c0</mi><mo>=</mo><mtext>[</mtext><mn>1</mn><mo>,</mo><mn>2</mn>"
     "<mo>,</mo><mn>0</mn><mtext>]</mtext></math></i>"),
    ("a sequence as a Python list", python_lists_of_integers, 0,
     "<i>valid tokens get positions 0, 1, 2</i>: positions [0, 0, 0, 1, 2] for valid [0, 0, 1, 1, 1]"),
    ("== or != in prose", python_comparisons, 0, "<p>float64: p_t == p_(t+1) at t = 2048</p>"),
    ("a proof ending on its last step's tag", proofs_without_conclusion, 0,
     '<article class="claim" id="a.b"><div class="derivation"><div><i>step</i> <b>\u2713</b></div>\n</div>'
     "</article>"),
    ("a conclusion that does not restate the statement", conclusions_not_restating_the_statement, 0,
     '<article class="claim" id="a.b"><dl class="facts"><dt>Statement</dt><dd><math><mi>a</mi></math></dd></dl>'
     '<div class="derivation"><p class="hence">Hence the statement holds. \u220e</p></div></article>'),
    ("SymPy's term order: the key's entry before the query's", key_before_query, 0,
     "<math><msub><mi>k</mi><mn>0</mn></msub><msub><mi>q</mi><mn>0</mn></msub></math>"),
    ("a script or range spelled as a program does", ascii_scripts_and_ranges, 0,
     "<small>p_9007199254740992 and p_9007199254740993 are bit-identical (scan of t = 0 .. 65536, then t + 1 "
     "rounds to t at 2^53); valid positions are 0..T-1</small>"),
    ("a tactic the preface does not explain", unexplained_tactics, 0,
     "<dt>exact evaluation, trig-polynomial</dt><dd>a tactic this report does not explain</dd>"),
    ("a computed counterexample without its inputs", computed_boxes_without_inputs, 0,
     '<article class="claim" id="a.b"><div class="witnessbox">Counterexample: difference = <code>0.612</code>, '
     "row = <code>0</code></div></article>"),
    ("a weight entry q_00 never defined", undefined_weight_entries, 0,
     '<article class="claim" id="a.b"><math><msub><mi>q</mi><mi>00</mi></msub></math></article>'),
    ("a vector entry as R(1) q [0]", vector_entries_as_indexing, 0, "<i>R(1) q [0]</i>"),
    ("the frequency written w", frequency_as_w, 0,
     "<math><mi>sin</mi><mo>\u2061</mo><mtext>(</mtext><mi>t</mi><mi>w</mi><mtext>)</mtext></math>"),
    ("a chain row printing one formula twice", a_row_printing_one_formula_twice, 0,
     '<div class="row"><span>=</span><div>\n<math display="block"><mn>1</mn></math>\n'
     '<math display="block"><mn>1</mn></math><div class="why"><i>a trigonometric polynomial</i></div></div></div>'),
    # a matrix whose exact entries are too long to read is shown by its certified decimals
    ("an entry named without the two matrices", boxes_naming_an_entry_without_the_sides, 0,
     '<article class="claim" id="a.b"><div class="witnessbox">Counterexample: <math><mi>X</mi></math>;<br>'
     "entry (0, 0) (2 of 6 differ): left 1, right 0; difference 1</div></article>"),
]
_IDS = [d[0] for d in DEFECTS]


@pytest.mark.parametrize("what, detector, allowed, old", DEFECTS, ids=_IDS)
def test_the_detector_sees_the_old_defect(what, detector, allowed, old):
    assert detector(old) >= 1


@pytest.mark.parametrize("what, detector, allowed, old", DEFECTS, ids=_IDS)
def test_the_fresh_page_is_free_of_it(fresh_report, what, detector, allowed, old):
    page = (fresh_report.folder / "index.html").read_text("utf-8")
    assert detector(page) <= allowed, what


def test_every_claim_of_the_fresh_latex_ends_on_its_statement(fresh_report):
    """The PDF restates each established statement after the derivation's last step, with the end-of-proof mark."""
    tex = (fresh_report.folder / "chapter.tex").read_text("utf-8")
    claims = re.split(r"\\subsection\{\\texorpdfstring", tex)[1:]
    assert len(claims) == len(fresh_report.results)
    ending = re.compile(r"\\hfill\$\\blacksquare\$\\par|it is not established whether")
    unconcluded = [claim[:60] for claim in claims
                   if not ending.search(claim) or claim.rfind(r"\why{") > ending.search(claim).start()]
    assert unconcluded == []


# -- cycle notation ---------------------------------------------------------------------------------------

CYCLES = [
    ([0, 1, 2], r"\mathrm{id}"),
    ([1, 2, 0], r"\text{(0 1 2)}"),
    ([2, 0, 1], r"\text{(0 2 1)}"),
    ([0, 2, 1], r"\text{(1 2)}"),
    ([1, 0, 3, 2], r"\text{(0 1)(2 3)}"),
    ([0], r"\mathrm{id}"),
]


@pytest.mark.parametrize("perm, latex", CYCLES, ids=[str(c[0]) for c in CYCLES])
def test_cycle_notation(perm, latex):
    assert cycle_notation(perm) == latex


@pytest.mark.parametrize("perm", [[1, 2, 0], [2, 0, 3, 1], [1, 0, 2]])
def test_a_cycle_follows_the_permutation_matrix(perm):
    """``(a b ...)`` sends a to b: row a of ``P X`` is row b of ``X`` (``P[a, perm[a]] = 1``)."""
    P = permutation_matrix(perm)
    for cycle in re.findall(r"\(([\d ]+)\)", cycle_notation(perm)):
        members = [int(n) for n in cycle.split()]
        for a, b in zip(members, members[1:] + members[:1]):
            assert P[a, b] == 1


@pytest.mark.parametrize("bad", [[0, 0], "012", [0, 1.5]])
def test_cycle_notation_refuses_a_non_permutation(bad):
    with pytest.raises(ValueError, match="permutation"):
        cycle_notation(bad)


@pytest.mark.parametrize("rule, size, moved", [
    (r"$\pi = \mathrm{id}$", 3, 0),
    (r"$\pi = \text{(1 2)}$", 3, 1),
    (r"$\pi = \text{(0 1 2)}$", 3, 2),
    (r"$T = 2$, $\pi = \text{(0 1)}$", 3, 2),   # the rule's own T, not the group's largest
    (r"$T = 3$, $\pi = \text{(0 1)}$", 3, 1),
    ("no permutation here", 3, 1),
])
def test_how_much_an_instance_moves(rule, size, moved):
    assert _moved(rule, size) == moved


def test_a_group_shows_first_the_instance_that_moves_every_token():
    rules = [rf"row sum is invariant, $\pi = {cycle_notation(p)}$"
             for p in ([0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0])]
    steps = [Item("equal", rule=rule) for rule in rules]
    _telling_first(steps)
    assert steps[0].rule == rules[3]


# -- the sides of a matrix counterexample ----------------------------------------------------------------

def test_small_sides_are_shown_and_long_ones_are_not():
    small = sp.Matrix([[1, 0], [0, 0]]), sp.Matrix([[0, 0], [1, 0]])
    assert _shown_sides(*small) == small
    x = sp.Symbol("x")
    long_entry = sp.Add(*[sp.sin(k * sp.exp(x)) / (k + 1) for k in range(1, 12)]).subs(x, 1)
    assert len(sp.latex(long_entry)) > MAX_EXACT_CHARS
    assert _shown_sides(sp.Matrix([long_entry, 0]), sp.Matrix([0, 0])) is None
    wide = sp.ones(1, MAX_SHOWN_ENTRIES + 1)
    assert _shown_sides(wide, wide * 0) is None


def test_long_sides_are_shown_by_their_certified_decimals():
    x = sp.Symbol("x")
    long_entry = sp.Add(*[sp.sin(k * sp.exp(x)) / (k + 1) for k in range(1, 12)]).subs(x, 1)
    left, right = sp.Matrix([long_entry, -sp.Rational(1, 3)]), sp.Matrix([0, sp.Rational(1, 7000)])
    sides = _decimal_sides(left, right)
    assert sides is not None and all(len(side) == 2 and len(side[0]) == 1 for side in sides)
    assert sides[0][1] == ["\u22120.3333"]
    tex = Counterexample(objects=[], decimal_sides=sides).decimal_sides_tex
    assert tex == (r"\begin{bmatrix}" + sides[0][0][0] + r" \\ -0.3333\end{bmatrix}",
                   r"\begin{bmatrix}0 \\ 1.429 \times 10^{-4}\end{bmatrix}")
    # a symbolic entry has no decimal: no decimal sides, rather than a guess
    assert _decimal_sides(sp.Matrix([x, 0]), sp.Matrix([0, 0])) is None
    assert _decimal_sides(sp.ones(1, MAX_SHOWN_ENTRIES + 1), sp.zeros(1, MAX_SHOWN_ENTRIES + 1)) is None
