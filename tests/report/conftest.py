"""Shared fixtures of the report tests: real engine results, including false claims."""

from __future__ import annotations

import os
import shutil

import sympy as sp
import pytest

from symproof import Claim, rotation, run_claim
from symproof.claims import load_claims, run_claims, select_claims

#: the browser the page tests use (Debian's package), else a ``chromium`` on PATH
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def chromium_path():
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


needs_chromium = pytest.mark.skipif(chromium_path() is None, reason="no Chromium at /usr/bin/chromium or on PATH")


def launch_chromium(playwright):
    """A headless Chromium from a ``sync_playwright()`` context."""
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


a, b = sp.symbols("a b", real=True)


def _false_relative(proof):
    proof.note("A wrong sign: the relative rotation taken as R(a - b).")
    proof.chain(rotation(a).T * rotation(b), rotation(a - b), "relative rotation") \
        .step("angle-difference formulas, sign flipped", rotation(a - b))


def _crashing(proof):
    raise RuntimeError("derivation bug")


FALSE_CLAIMS = (
    Claim(id="test.false_relative", section="9.1", title="A false relative rotation",
          statement=r"R(a)^T R(b) = R(a - b)", kind="identity", derive=_false_relative),
    Claim(id="test.crashing", section="9.1", title="A derivation that crashes",
          statement="the derivation raises before recording anything", kind="identity", derive=_crashing),
)


@pytest.fixture(scope="session")
def chapter_results():
    """A few real claims of the chapter, run by the engine."""
    claims = load_claims()
    return run_claims(select_claims(claims, ["rope.relative", "rope.frequency_denominator", "sin.norm"]))


@pytest.fixture(scope="session")
def false_results():
    return [run_claim(c) for c in FALSE_CLAIMS]


@pytest.fixture(scope="session")
def full_chapter_results():
    """Every claim of the chapter, run by the engine (what ``symproof report`` shows)."""
    return run_claims(list(load_claims().values()))
