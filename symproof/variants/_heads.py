"""Rotary files with heads: per-head rotary parameters (``h`` in frequencies and scales) and a bias added
to the rotary score (RoPE plus ALiBi in one head).

A rotary file that says ``heads = N`` (top level) may read the head index ``h`` (0..N-1) and the head
count ``heads`` in its ``[frequencies]`` and ``[scale]`` formulas (per-head bases, RetNet's per-head
decay ``gamma_h**(i - j)``), and may add a ``[bias]`` (``formula`` in ``i, j, slope, h, heads`` and
``slope`` in ``h, heads``, as in a bias file): the score of head ``h`` is then
``s_h(i, j) = sum_r (M_q(i) q_r)^T (M_k(j) k_r) + b_h(i, j)``.

How the properties are decided (one rule for every head, the bias path's rule): the statements are
those of one generic pair, with the head index ``h`` a symbol (an integer >= 0) beside the frequency
``omega`` and, with a bias, the slope; a proof there covers every head.  Otherwise each ``(head, pair)``
instance is tried with its exact values, and a refutation names the head and pair of its witness.

Why one generic pair plus the bias stands for the whole head: every statement quantifies over the
query and key, so setting them to 0 leaves the bias alone and setting every other pair to 0 leaves
one pair plus the bias; the head's statement holds exactly when each pair-plus-bias statement does,
and a witness for one pair (the others at 0) is a witness for the head.

``decay`` and ``equivalence`` read whole frequency tables, so they are decided head by head on
:meth:`~._spec.Variant.head` (a head proved in each head is proved; the first failing head is named);
with a bias, ``decay`` is the fall of the bound ``C * B_h(D) + b_h(i, i - D)`` for every content bound
``C > 0`` (:func:`derive_decay_with_bias`).
"""

from __future__ import annotations

import sympy as sp

from .._ground._errors import VariantFileError
from ..claims import Proof
from ..prover import PROVED, REFUTED, UNKNOWN, prove_equal
from ..prover import _budget
from ._decay import derive_decay
from ._format import MAX_HEADS, _names, sample_indices
from ._properties import h_sym, omega, r_sym, slope_sym

__all__ = ["MAX_HEAD_PAIRS", "parse_heads", "parse_rotary_bias", "validate_heads", "bias_part", "bias_term",
           "each_head", "generic_then_each_head", "derive_decay_with_bias", "DECAY_WITH_BIAS"]

#: most (head, pair) instances of a file with heads: each is an exact value the deciders may build
MAX_HEAD_PAIRS = 2**16
#: what a rotary file with heads or a bias cannot (yet) be combined with, and why
_EXCLUDES = {
    "position.relative": "a relative position has its own score kernel, which reads no head",
    "frequencies.per_axis": "per-axis frequency vectors read a position vector; write one file per head",
    "length": "frequencies that read the call length are not read per head",
}


def parse_heads(reader, data, fields) -> None:
    """Top-level ``heads``: a rotary file's head count; its frequencies, scales and bias may read ``h``."""
    if "heads" not in data:
        return
    kind, heads = fields["kind"], data["heads"]
    if kind != "rotary":
        where = "a bias file states bias.heads" if kind == "bias" else "an additive table is the same in every head"
        raise reader.fail("heads", f"applies to kind = 'rotary' only ({where})")
    if not 1 <= heads <= MAX_HEADS:
        raise reader.fail("heads", f"expected a head count between 1 and {MAX_HEADS}, got {heads}")
    fields["heads"] = heads
    reader.head_tables = frozenset({"frequencies", "scale"})


def parse_rotary_bias(reader, data, fields) -> None:
    """``[bias]`` in a rotary file (needs ``heads``), and what heads cannot be combined with."""
    table = data.get("bias")
    present = {"position.relative": fields.get("relative") is not None,
               "frequencies.per_axis": fields.get("rule") == "per_axis",
               "length": fields.get("length_threshold") is not None}
    if fields.get("heads") is not None or table is not None:
        key = "heads" if fields.get("heads") is not None else "bias"
        for other, why in _EXCLUDES.items():
            if present[other]:
                raise reader.fail(key, f"cannot be combined with {other} ({why})")
    if table is None:
        return
    if fields.get("heads") is None:
        raise reader.fail("bias", "in a rotary file needs the head count: write heads = N at the top level "
                                  "(the bias is per head, and h may then be read by the rotary formulas too)")
    if "heads" in table:
        raise reader.fail("bias.heads", f"a rotary file counts its heads once, at the top level (heads = "
                                        f"{fields['heads']}); remove bias.heads")
    for key in ("formula", "slope"):
        if key not in table:
            raise reader.fail(f"bias.{key}", "is required (write slope = \"1\" when the formula reads no slope)")
    if len(fields["axes"]) > 1:
        raise reader.fail("bias", f"reads one query and one key position, but a position has {len(fields['axes'])} "
                                  f"coordinates {list(fields['axes'])}")
    if "equivalent" in data:
        raise reader.fail("equivalent", "compares the rotations with a named RoPE, but this file's score adds a "
                                        "bias: remove [equivalent] (compare the two files with symproof compare)")
    params = fields["params"]
    fields["bias"] = reader.formula(table["formula"], "bias.formula", _names("bias.formula", params))
    fields["slope"] = reader.formula(table["slope"], "bias.slope", _names("bias.slope", params))


def bias_part(variant):
    """The bias of a rotary file with a bias, as a bias file (every head): what its bias is decided and
    exported as."""
    cached = variant.__dict__.get("_bias_part")
    if cached is None:
        cached = variant.__dict__["_bias_part"] = type(variant)(
            name=variant.name, kind="bias", title=variant.title, params=variant.params, bias=variant.bias,
            heads=variant.heads, slope=variant.slope, positions=variant.positions, source=variant.source)
    return cached


def validate_heads(reader, variant, validate_one) -> None:
    """Load-time checks of a file with heads: the sampled heads fully (``validate_one``, the checks of a
    one-head file), every head's frequencies numerically and its scales and slope built exactly (a
    table read by ``h`` outside its entries is refused, naming the head), the bias at every head."""
    from ._domain import check_defined

    heads = variant.heads
    if heads * variant.n_pairs > MAX_HEAD_PAIRS:
        raise reader.fail("heads", f"{heads} heads of {variant.n_pairs} pairs are {heads * variant.n_pairs} "
                                   f"(head, pair) instances; at most {MAX_HEAD_PAIRS} are accepted")
    for h in range(heads):
        _budget.check()
        one = variant.head(h)
        try:
            if h in sample_indices(heads):
                validate_one(reader, one)
            else:
                one.frequencies_digits()
            m, r = sp.Symbol("m", integer=True), sp.Symbol("r", integer=True, nonnegative=True)
            for side in ("query", "key"):
                one.scale(side, m, r)
        except VariantFileError as err:
            raise VariantFileError(f"{err} (head h = {h}, of 0..{heads - 1})") from None
    if variant.bias is not None:
        part = bias_part(variant)
        part.frequencies_digits()  # every head's slope, numerically: a non-real slope fails here, naming its head
        for h in sample_indices(heads):
            if part.exact_value(h).is_extended_real is not True:
                raise reader.fail("bias.slope", f"gives {part.exact_value(h)} for head h={h}; expected a real number")
        i, j = sp.symbols("i j", integer=True)
        part.bias_at(i, j, part.exact_value(0), 0)
        check_defined(part)


# -- deciding ---------------------------------------------------------------------------------------


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

