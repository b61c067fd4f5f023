"""The engine's plain text as a textbook sets it: signs, exponents, arrows and tactic phrases.

Each table is (what the engine wrote, what the page shows, what the PDF's source holds); the counts read a
freshly rendered report, outside its MathML, where the engine's text lands (details, tables, rules).
"""

from __future__ import annotations

import re

import pytest

from symproof.report._html import typeset_text as html_text
from symproof.report._latex import typeset_text as tex_text
from symproof.report._typeset import TACTIC_PHRASES, tactic_phrase

NUMBERS = [
    ("|exact - -1.142640| = 3.3625e-7 (must be < 1/2000000)",
     "|exact \u2212 (\u22121.142640)| = 3.3625\u00a0\u00d7\u00a010\u207b\u2077 (must be &lt; 1/2000000)",
     r"\textbar{}exact \ensuremath{-} (\ensuremath{-}1.142640)\textbar{} = \ensuremath{3.3625\times 10^{-7}}"
     r" (must be \textless{} 1/2000000)"),
    ("|exact - 0.841471| = 1.5192e-8",
     "|exact \u2212 0.841471| = 1.5192\u00a0\u00d7\u00a010\u207b\u2078",
     r"\textbar{}exact \ensuremath{-} 0.841471\textbar{} = \ensuremath{1.5192\times 10^{-8}}"),
    ("4.1667e-10", "4.1667\u00a0\u00d7\u00a010\u207b\u00b9\u2070", r"\ensuremath{4.1667\times 10^{-10}}"),
    ("1e5", "1\u00a0\u00d7\u00a010\u2075", r"\ensuremath{1\times 10^{5}}"),
    ("5.2078E-7", "5.2078\u00a0\u00d7\u00a010\u207b\u2077", r"\ensuremath{5.2078\times 10^{-7}}"),
    ("position -1 has no entry", "position \u22121 has no entry", r"position \ensuremath{-}1 has no entry"),
    ("[-1, 2]", "[\u22121, 2]", r"[\ensuremath{-}1, 2]"),
    ("-0.416147", "\u22120.416147", r"\ensuremath{-}0.416147"),
    ("depends only on j - i", "depends only on j \u2212 i", r"depends only on j \ensuremath{-} i"),
    # a hyphen inside a word or a name, an option's dashes, a dash between words: not a minus
    ("float32 x-1 2-4 --max", "float32 x-1 2-4 --max", r"float32 x-{}1 2-{}4 -{}-{}max"),
    ("left - right", "left - right", r"left -{} right"),
    ("rope.rel_2 v1.2.3", "rope.rel_2 v1.2.3", r"rope.rel\_2 v1.2.3"),
    ("0.841471 1/2000000", "0.841471 1/2000000", "0.841471 1/2000000"),
]

RELATIONS = [
    ("width >= 2", "width \u2265 2", r"width \ensuremath{\geq} 2"),
    ("rotary_dim <= head_dim", "rotary_dim \u2264 head_dim", r"rotary\_dim \ensuremath{\leq} head\_dim"),
    ("t = 1 -> t = 10", "t = 1 \u2192 t = 10", r"t = 1 \ensuremath{\to} t = 10"),
    # a Python comparison reads as an equation or an inequation
    ("p_t == p_(t+1) at t = 2048", "<i>p</i><sub><i>t</i></sub> = <i>p</i><sub><i>t+1</i></sub> at t = 2048",
     r"\ensuremath{p_{t}} = \ensuremath{p_{t+1}} at t = 2048"),
    # a script as a program spells it reads as a script
    ("p_9007199254740992 at 2^53, d_r", "<i>p</i><sub>9007199254740992</sub> at 2<sup>53</sup>, <i>d</i><sub><i>r</i></sub>",
     r"\ensuremath{p_{9007199254740992}} at \ensuremath{2^{53}}, \ensuremath{d_{r}}"),
    ("model_id, vocab_size, head_dim", "model_id, vocab_size, head_dim", r"model\_id, vocab\_size, head\_dim"),
    ("t = 0 .. 256", "t = 0, \u2026, 256", r"t = 0, \ldots, 256"),
    ("norm != 1", "norm \u2260 1", r"norm \ensuremath{\neq} 1"),
]

TACTICS = [
    ("structural", "identical sides"),
    ("trig-polynomial", "a trigonometric polynomial"),
    ("entrywise (trig-polynomial)", "entry by entry, each a trigonometric polynomial"),
    ("entrywise (structural)", "entry by entry, each identical on both sides"),
    ("entrywise (structural, trig-polynomial)",
     "entry by entry, each identical on both sides or a trigonometric polynomial"),
    ("blockwise", "block by block"),
    ("summand-first", "summand by summand"),
    ("an unknown tag", "an unknown tag"),
]

VERDICTS = [
    ("proved by structural", "proved: identical sides"),
    ("proved by entrywise (trig-polynomial)", "proved: entry by entry, each a trigonometric polynomial"),
]


@pytest.mark.parametrize("text, html, tex", NUMBERS + RELATIONS)
def test_plain_text_is_typeset_alike_in_both_formats(text, html, tex):
    assert str(html_text(text)) == html
    assert tex_text(text) == tex


@pytest.mark.parametrize("tag, phrase", TACTICS)
def test_a_tactic_tag_reads_as_a_phrase(tag, phrase):
    assert tactic_phrase(tag) == phrase


def test_every_tactic_of_the_prover_has_a_phrase():
    from symproof.prover._prove import TACTICS as PROVER_TACTICS

    assert set(PROVER_TACTICS) <= set(TACTIC_PHRASES)


@pytest.mark.parametrize("text, shown", VERDICTS)
def test_a_verdict_names_its_tactic_by_its_phrase(text, shown):
    assert str(html_text(text)) == shown
    assert tex_text(text) == shown


# -- counts over a freshly rendered report: each defect as the old code printed it --------------------------

def _page_text(fresh_report) -> str:
    """The page's text outside math, style and listings: where the engine's own words are printed."""
    page = (fresh_report.folder / "index.html").read_text("utf-8")
    for element in ("math", "style", "pre"):
        page = re.sub(rf"<{element}\b.*?</{element}>", "", page, flags=re.S)
    return " ".join(re.findall(r">([^<>]*)<", page))


DEFECTS = {
    # 3.3625e-7, 5.2078E-7
    "scientific notation": re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+]?\d+\b"),
    # an ASCII hyphen before a number standing alone: position -1, |exact - -0.41|
    "hyphen as a minus": re.compile(r"(?:^|(?<=[\s(\[|=,]))-(?=\d)|(?<=\w) - (?=-?\d)"),
    ">=, <=, ->": re.compile(r"&gt;=|&lt;=|-&gt;"),
}
#: a tactic's tag where the page names how a step was proved: after a step, in a verdict, in a claim's header
_TAGS = r"(?:structural|trig-polynomial|summand-first|entrywise|blockwise|witness|assumptions)"
TACTIC_TAG = re.compile(rf"<small>\({_TAGS}\b|\bproved by [a-z]|\u00b7 (?:[a-z-]+, )*{_TAGS}\b")


@pytest.mark.parametrize("defect", DEFECTS)
def test_the_fresh_page_prints_no_machine_text(fresh_report, defect):
    found = DEFECTS[defect].findall(_page_text(fresh_report))
    assert found == [], f"{len(found)} of {defect}: {found[:5]}"


def test_the_fresh_page_names_no_tactic_by_its_tag(fresh_report):
    found = TACTIC_TAG.findall((fresh_report.folder / "index.html").read_text("utf-8"))
    assert found == [], f"{len(found)} tactic tags: {found[:5]}"


TEX_DEFECTS = {
    "scientific notation": re.compile(r"(?<![\w.{])\d+(?:\.\d+)?[eE](?:-\{\})?\d"),
    "hyphen as a minus": re.compile(r"[ (\[|=]-\{\}\d"),
    ">=, <=, ->": re.compile(r"\\textgreater\{\}=|\\textless\{\}=|-\{\}\\textgreater\{\}"),
    "a tactic tag": re.compile(rf"\\method\{{{_TAGS}|\$\\cdot\$ (?:[a-z-]+, )*{_TAGS}\b"),
}


@pytest.mark.parametrize("defect", TEX_DEFECTS)
def test_the_fresh_latex_prints_no_machine_text(fresh_report, defect):
    tex = (fresh_report.folder / "chapter.tex").read_text("utf-8")
    body = re.sub(r"\\begin\{lstlisting\}.*?\\end\{lstlisting\}", "", tex.split(r"\begin{document}", 1)[1], flags=re.S)
    found = TEX_DEFECTS[defect].findall(body)
    assert found == [], f"{len(found)} of {defect}: {found[:5]}"
