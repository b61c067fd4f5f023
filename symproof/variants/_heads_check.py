"""Deciding the properties of a rotary file with heads (:mod:`._heads` says how, and reads the file)."""

from __future__ import annotations

import sympy as sp

from ..claims import Proof
from ..prover import PROVED, REFUTED, UNKNOWN, prove_equal
from ..prover import _budget
from ._decay import derive_decay
from ._heads import bias_part
from ._properties import h_sym, omega, r_sym, slope_sym

__all__ = ["bias_term", "each_head", "generic_then_each_head", "derive_decay_with_bias", "DECAY_WITH_BIAS"]


def scope_note(variant, proof: Proof) -> None:
    text = (f"The file has {variant.heads} heads; h is the head index, a symbol (an integer >= 0) in the generic "
            "statement, so a proof there holds in every head.")
    if variant.bias is not None:
        text += (" The score adds the head's bias b_h(i, j) to the pair scores: setting the query and key to 0 "
                 "leaves the bias alone, setting every other pair to 0 one pair plus the bias, so the head's "
                 "statement holds exactly when the generic pair-plus-bias statement does.")
    proof.note(text)


def bias_term(variant, pos_q, pos_k):
    """The bias added to the score of the query at ``pos_q`` and the key at ``pos_k`` (0 without a bias):
    the generic head's (symbolic slope and ``h``) for the whole file, head ``h``'s for one head."""
    if variant.bias is None:
        return sp.Integer(0)
    if variant.head_index is None:
        return variant.bias_at(pos_q, pos_k, slope_sym)
    return variant.bias_at(pos_q, pos_k, variant.slope_at(variant.head_index), variant.head_index)


def _every_head_is_an_instance(variant, proof: Proof) -> None:
    """Every head's frequencies (and slope) are finite real numbers: by SymPy's assumptions for symbolic
    ``h`` and ``r`` when they decide it, else value by value."""
    what = "every head's frequencies (and slope) are finite real numbers: each head and pair is an instance"
    generic_values = [variant.frequency_at(r_sym)] + ([variant.slope_at(h_sym)] if variant.bias is not None else [])
    if all(v.is_extended_real is True and v.is_finite is True for v in generic_values):
        proof.check(what, True, "; ".join(sp.sstr(v)[:160] for v in generic_values)
                    + ": real and finite for every integer h, r >= 0 (assumptions)")
        return
    values = []
    for h in range(variant.heads):
        _budget.check()
        values += [variant.head(h).exact_value(r) for r in range(variant.n_pairs)]
        values += [variant.slope_at(h)] if variant.bias is not None else []
    real = [v for v in values if v.is_extended_real is True and v.is_finite is True]
    proof.check(what, len(real) == len(values), f"{len(real)} of {len(values)} values checked",
                data=[str(v) for v in values[:8]])


def generic_then_each_head(variant, prop, make, properties_of):
    """The derivation of an identity (``make`` = the identity deriver) or a sensitivity of a file with heads:
    the generic pair with ``h`` (and the slope) symbolic first; when that does not decide it, each head
    as a one-head file (``make(head, its property)``), the first failing head named."""
    identity = prop.kind == "identity"

    def derive(proof: Proof) -> None:
        scope_note(variant, proof)
        lhs, rhs = prop.sides(omega, r_sym)
        # a statement that reads h itself (RetNet's gamma_h**m) leaves SymPy powers of 1 - 2**(-5 - h) that
        # the prover's canonical form does not merge, and its witness search costs seconds: head by head then
        reads_head = h_sym in sp.Tuple(lhs, rhs).free_symbols
        generic = None if reads_head else prove_equal(lhs, rhs)
        if generic is not None and generic.proved:
            rule = "generic pair r of a generic head h (symbolic omega, h" + (", slope)" if variant.bias is not None
                                                                              else ")")
            proof.record(rule if identity else f"the two sides are identical for the {rule}", generic)
            if identity:
                _every_head_is_an_instance(variant, proof)
            else:
                proof.check("the sign of the offset is visible", False,
                            "both offsets give the same value for every input in every head, so the direction is "
                            "invisible")
            return
        why = "its statement reads h" if generic is None else f"{generic.status}: {generic.reason or 'witness'}"
        proof.note(f"The generic head is not decided ({why}); deciding head by head, each head as a one-head file.")

        def one_head(one, head_proof):
            own = next(p for p in properties_of(one) if p.key == prop.key)
            make(one, own)(head_proof)
        each_head(one_head)(variant, proof)
    return derive


def _head_key(variant, h: int):
    """Two heads with the same key have the same frequencies, scales and bias (exact expressions)."""
    one = variant.head(h)
    m = sp.Symbol("m", integer=True)
    key = [one.frequency_at(r_sym), one.scale("query", m, r_sym), one.scale("key", m, r_sym)]
    if variant.bias is not None:
        key.append(bias_term(one, sp.Symbol("i", integer=True), sp.Symbol("j", integer=True)))
    return tuple(sp.srepr(e) for e in key)


def each_head(derive):
    """``derive(variant, proof)`` run on every head in turn (heads with the same exact definition once);
    each step is labelled with its head, and the first head with a false step ends the derivation."""
    def per_head(variant, proof: Proof) -> None:
        seen: dict = {}
        for h in range(variant.heads):
            _budget.check()
            key = _head_key(variant, h)
            if key in seen:
                proof.check(f"head h = {h}: the same frequencies, scales and bias as head h = {seen[key]}", True)
                continue
            seen[key] = h
            start = len(proof.parts)
            proof.note(f"Head h = {h}.")
            derive(variant.head(h), proof)
            for part in proof.parts[start:]:
                part.rule = f"head h = {h}: {part.rule}"
            if any(part.status == REFUTED for part in proof.parts[start:]):
                return
    return per_head


#: the decay statement of a score that adds a bias to the rotary score
DECAY_WITH_BIAS = ("long-term decay of the score bound: for every bound C > 0 on the contents, C * B_h(D) + "
                   "b_h(i, i - D) (RoFormer's bound plus the bias) is non-increasing in D >= 0 and not constant, "
                   "in every head h")
#: the steps of the decay derivations that say a bound or a bias rises (the others: it is constant)
_RISES = ("B(D + 1) <= B(D)", "b(i, i - D - 1) <= b(i, i - D)")


def derive_decay_with_bias(variant, proof: Proof) -> None:
    """Decay of a score that adds a bias to the rotary score: for every content bound ``C > 0`` the bound
    ``C * B_h(D) + b_h(i, i - D)`` falls with ``D`` in every head.

    Proved when the bias decays (non-increasing, and falling somewhere in every head) and RoFormer's bound
    decays in every head; refuted when one of them rises somewhere (for ``C`` small the bias's rise shows,
    for ``C`` large the bound's); otherwise unknown, with the parts' verdicts as the reason."""
    bias_proof = Proof(proof.claim)
    derive_decay(bias_part(variant), bias_proof)
    rotary_proof = Proof(proof.claim)
    each_head(derive_decay)(variant, rotary_proof)
    parts = {"the bias b_h(i, i - D)": bias_proof, "RoFormer's bound B_h(D) of the rotary part": rotary_proof}
    status = {}
    for label, part_proof in parts.items():
        refuted = [p for p in part_proof.parts if p.status == REFUTED]
        status[label] = (REFUTED if refuted else PROVED if all(p.status == PROVED for p in part_proof.parts)
                         and part_proof.parts else UNKNOWN, refuted[0] if refuted else
                         next((p for p in part_proof.parts if p.status != PROVED), None))
    proof.note("The score is C-bounded rotary part plus bias: |s_h(i, i - D) - b_h(i, i - D)| <= C * B_h(D) for "
               "contents with max_k |h_(k+1) - h_k| * n <= C (RoFormer's bound), so the score's bound is "
               "C * B_h(D) + b_h(i, i - D).")
    for label, (verdict, first) in status.items():
        if verdict == REFUTED and first is not None and any(r in first.rule for r in _RISES):
            which = "small C: the bias's rise" if "bias" in label else "large C: the bound's rise"
            proof.check(f"{label} is non-increasing in D (so the sum is, for every C > 0)", False,
                        f"{first.rule}: {first.detail}; for {which} dominates the sum", witness=first.witness)
            return
    if all(verdict == PROVED for verdict, _ in status.values()):
        for label in parts:
            proof.check(f"{label} is non-increasing in D and falls somewhere, in every head", True,
                        "decided as the decay property of that part alone")
        proof.check("hence C * B_h(D) + b_h(i, i - D) is non-increasing and not constant for every C > 0", True)
        return
    reasons = "; ".join(f"{label}: {verdict}" + (f" ({first.rule}: {first.detail})" if first is not None else "")
                        for label, (verdict, first) in status.items())
    proof.undecided("check", "C * B_h(D) + b_h(i, i - D) falls with D for every C > 0",
                    f"not both parts decay and neither rises: {reasons}"[:600], method="not decided")

