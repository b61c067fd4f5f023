"""False claims about attention masks: never proved.

Each row is a mask and a mask property whose statement is false for the condition as written; the verdict
must be *refuted* (pinned, so a regression to *unknown* shows), and its witness must break the statement
when the condition is evaluated again by Python's own integer arithmetic (a lambda written from the paper,
not the checker's evaluator).  True rows (controls) must never be refuted.
"""

from __future__ import annotations

import pytest

from symproof.variants import Variant, check_variant


def _masked(condition: str, params: dict, positions: str) -> Variant:
    return Variant.from_dict({"name": "probe", "kind": "bias", "params": params, "positions": positions,
                              "bias": {"formula": "0", "heads": 1, "slope": "1"}, "mask": {"allowed": condition}})


#: name -> (condition, params, positions, the property that is false, the same condition in Python)
FALSE = {
    # StreamingLLM's sinks stay visible at any offset: not a function of j - i
    "sinks are relative": ("j <= i and (i - j < W or j < S)", {"S": 4, "W": 8}, "nonnegative", "mask_relative",
                           lambda i, j: j <= i and (i - j < 8 or j < 4)),
    # "and" binds tighter than "or": the sinks become visible to earlier queries too
    "sinks without parentheses are causal": ("j <= i and i - j < W or j < S", {"S": 4, "W": 8}, "nonnegative",
                                             "mask_causal", lambda i, j: (j <= i and i - j < 8) or j < 4),
    # Llama 4's chunks: which chunk a token is in depends on its position, not only on the offset
    "chunks are relative": ("j <= i and floor(i / C) == floor(j / C)", {"C": 8192}, "nonnegative", "mask_relative",
                            lambda i, j: j <= i and i // 8192 == j // 8192),
    # an off-by-one window that excludes the query itself: the diagonal is masked, row 0 is empty
    "a window without the diagonal sees itself": ("j < i and i - j <= W", {"W": 4}, "nonnegative", "mask_self",
                                                  lambda i, j: j < i and i - j <= 4),
    # a window on both sides is not causal
    "a two-sided window is causal": ("abs(i - j) < W", {"W": 2}, "integers", "mask_causal",
                                     lambda i, j: abs(i - j) < 2),
    # the dilated window (Longformer-style) keeps every second key: offset-only, but the query itself is
    # dropped when the dilation test reads i + 1
    "dilated, shifted by one, sees itself": ("j <= i and mod(i + 1 - j, 2) == 0", {}, "nonnegative", "mask_self",
                                             lambda i, j: j <= i and (i + 1 - j) % 2 == 0),
    # a window far from the origin only: A(0, 0) is false but A(100, 100) is true
    "a warm-up cut is relative": ("j <= i and i >= 16", {}, "nonnegative", "mask_relative",
                                  lambda i, j: j <= i and i >= 16),
}

#: true statements the checker must not refute (and, where the proof method covers them, proves)
TRUE = {
    "causal is relative": ("j <= i", {}, "integers", "mask_relative"),
    "sliding window is causal": ("j <= i and i - j < W", {"W": 4096}, "integers", "mask_causal"),
    "sinks with parentheses are causal": ("j <= i and (i - j < W or j < S)", {"S": 4, "W": 8}, "nonnegative",
                                          "mask_causal"),
    "chunks see themselves": ("j <= i and floor(i / C) == floor(j / C)", {"C": 8}, "nonnegative", "mask_self"),
    "dilated is relative": ("j <= i and mod(i - j, 2) == 0", {}, "integers", "mask_relative"),
}


def _breaks(prop: str, python, witness: dict) -> bool:
    w = {str(k): int(v) for k, v in witness.items()}
    if prop == "mask_relative":
        return python(w["i"], w["j"]) != python(w["i"] + w["c"], w["j"] + w["c"])
    if prop == "mask_causal":
        return w["j"] > w["i"] and python(w["i"], w["j"])
    return not python(w["i"], w["i"])


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_mask_claims_are_refuted_with_a_witness_that_breaks_them(name):
    condition, params, positions, prop, python = FALSE[name]
    result, = check_variant(_masked(condition, params, positions), only={prop})
    assert result.status == "refuted", result.reason
    part = next(p for p in result.proof.parts if p.status == "refuted")
    assert part.witness and _breaks(prop, python, part.witness), part.witness
    if positions == "nonnegative":
        assert all(int(v) >= 0 for k, v in part.witness.items() if str(k) in "ij")


@pytest.mark.parametrize("name", sorted(TRUE))
def test_true_mask_claims_are_not_refuted(name):
    condition, params, positions, prop = TRUE[name]
    result, = check_variant(_masked(condition, params, positions), only={prop})
    assert result.status != "refuted", result.proof.parts[-1].detail
