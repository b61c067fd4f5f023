"""Deciding the properties of a rotary file with heads (:mod:`._heads` says how, and reads the file)."""

from __future__ import annotations

import sympy as sp

from .._ground._errors import VariantFileError
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
    try:  # a list of values or of per-pair factors has no value at a symbolic pair: value by value then
        generic_values = [variant.frequency_at(r_sym)] + ([variant.slope_at(h_sym)] if variant.bias is not None
                                                          else [])
    except (TypeError, VariantFileError):
        generic_values = []
    if generic_values and all(v.is_extended_real is True and v.is_finite is True for v in generic_values):
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


def generic_then_each_head(variant, prop, make, properties_of, outside):
    """The derivation of an identity (``make`` = the identity deriver) or a sensitivity of a file with heads:
    the generic pair with ``h`` (and the slope) symbolic first; when that does not decide it, each head
    as a one-head file (``make(head, its property)``), the first failing head named (a sensitivity first
    looks for a witness at the head's values).  ``outside(variant, witness, offset)``: why a witness lies
    outside the file's positions ('' when inside)."""
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
            if not identity and _witness_in_head(variant, one, lhs, rhs, head_proof, outside):
                return
            own = next(p for p in properties_of(one) if p.key == prop.key)
            make(one, own)(head_proof)
        each_head(one_head)(variant, proof)
    return derive


def _witness_in_head(variant, one, lhs, rhs, proof: Proof, outside) -> bool:
    """A sensitivity's witness in head ``one`` at its first, last or middle pair, the generic statement
    evaluated at that head's exact values (a witness is exact evaluation, where a proof of equality would need
    the head's own statement); ``False`` (nothing recorded) when none is certified inside the file's
    positions (then the head is decided as a one-head file)."""
    h, n = one.head_index, variant.n_pairs
    for r in dict.fromkeys((0, n - 1, n // 2)):
        value = one.exact_value(r)
        mapping = {omega: value, r_sym: sp.Integer(r), h_sym: sp.Integer(h)}
        if variant.bias is not None:
            mapping[slope_sym] = variant.slope_at(h)
        part = proof.differ(f"pair r = {r}: the two offsets differ (omega = {value})",
                            *(e.xreplace(mapping) for e in (lhs, rhs)))
        if part.status == PROVED and not outside(variant, part.witness, False):
            return True
        proof.parts.pop()
    return False


def _head_key(variant, h: int):
    """Two heads with the same key have the same frequencies, scales and bias (exact expressions)."""
    one = variant.head(h)
    m = sp.Symbol("m", integer=True)
    try:
        frequencies = one.frequency_at(r_sym)
    except (TypeError, VariantFileError):  # a list of values or of factors: the head's exact table
        frequencies = sp.Tuple(*one.frequencies())
    key = [frequencies, one.scale("query", m, r_sym), one.scale("key", m, r_sym)]
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
#: the steps of the decay derivations that say a bound or a bias rises, and that it never falls (constant)
_RISES = ("B(D + 1) <= B(D)", "b(i, i - D - 1) <= b(i, i - D)")
_FALLS = ("B(D) < B(0) for some D", "b(i, i) for some D")


def _status(proof: Proof) -> tuple:
    """``(verdict, first open step)`` of a decay derivation: ``rises`` (a certified rise), ``constant`` (proved
    never to fall, and not to rise: a constant bound, or a bias that falls nowhere in some head while proved
    non-increasing), ``proved``, or ``unknown``."""
    refuted = [p for p in proof.parts if p.status == REFUTED]
    if refuted:
        first = refuted[0]
        if any(r in first.rule for r in _RISES):
            return "rises", first
        rises_proved = any(p.status == PROVED and any(r in p.rule for r in _RISES) for p in proof.parts)
        constant_bound = "the bound is constant" in first.detail
        if any(f in first.rule for f in _FALLS) and (constant_bound or rises_proved):
            return "constant", first
        return "unknown", first
    if proof.parts and all(p.status == PROVED for p in proof.parts):
        return "proved", None
    return "unknown", next((p for p in proof.parts if p.status != PROVED), None)


def derive_decay_with_bias(variant, proof: Proof) -> None:
    """Decay of a score that adds a bias to the rotary score: for every content bound ``C > 0`` the bound
    ``C * B_h(D) + b_h(i, i - D)`` is non-increasing in ``D`` and not constant, in every head.

    Refuted when the bias or a head's bound rises somewhere (for ``C`` small the bias's rise shows, for
    ``C`` large the bound's); proved when both are non-increasing and, in every head, one of them falls (the
    bias decays and every bound decays or is constant, or every bound decays and the bias is non-increasing);
    otherwise unknown, with the parts' verdicts as the reason."""
    bias_proof = Proof(proof.claim)
    derive_decay(bias_part(variant), bias_proof)
    bias = _status(bias_proof)
    heads = []
    for h in range(variant.heads):  # every head (a constant bound in one head does not end the search)
        _budget.check()
        head_proof = Proof(proof.claim)
        derive_decay(variant.head(h), head_proof)
        heads.append((h, *_status(head_proof)))
        if heads[-1][1] == "rises":
            break
    proof.note("The score is the rotary part plus the bias, and |rotary part| <= C * B_h(D) for contents with "
               "max_k |h_(k+1) - h_k| * n <= C (RoFormer's bound), so the score's bound is C * B_h(D) + b_h(i, i - D).")
    label = {"bias": "the bias b_h(i, i - D)", "rotary": "RoFormer's bound B_h(D) of the rotary part"}
    rising = [("bias", "", bias[1])] if bias[0] == "rises" else []
    rising += [("rotary", f"head h = {h}: ", first) for h, verdict, first in heads if verdict == "rises"]
    if rising:
        part, where, first = rising[0]
        which = "small C: the bias's rise" if part == "bias" else "large C: the bound's rise"
        proof.check(f"{label[part]} is non-increasing in D (so the sum is, for every C > 0)", False,
                    f"{where}{first.rule}: {first.detail}; for {which} dominates the sum", witness=first.witness)
        return
    rotary = {verdict for _, verdict, _ in heads}
    if (bias[0] == "proved" and rotary <= {"proved", "constant"}) or (bias[0] == "constant" and rotary == {"proved"}):
        proof.check(f"{label['bias']} is non-increasing in D, in every head", True, f"its decay: {bias[0]}")
        proof.check(f"{label['rotary']} is non-increasing in D, in every head", True,
                    "; ".join(f"head h = {h}: {verdict}" for h, verdict, _ in heads[:8]))
        proof.check("in every head one of them falls, so C * B_h(D) + b_h(i, i - D) is non-increasing and not "
                    "constant for every C > 0", True,
                    "the bias falls in every head" if bias[0] == "proved" else "the bound falls in every head")
        return
    parts = [("bias", bias[0], bias[1])] + [(f"rotary, head h = {h}", verdict, first) for h, verdict, first in heads
                                             if verdict != "proved"][:2]
    reasons = "; ".join(f"{name}: {verdict}" + (f" ({first.rule}: {first.detail})" if first is not None else "")
                        for name, verdict, first in parts)
    proof.undecided("check", "C * B_h(D) + b_h(i, i - D) falls with D for every C > 0",
                    f"neither part rises, and not shown to fall together: {reasons}"[:600], method="not decided")
