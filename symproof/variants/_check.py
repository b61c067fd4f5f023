"""Which of the chapter's properties a variant keeps: proved, or refuted with a witness.

Each property is a :class:`~symproof.claims.Claim` built here from the
description and run by :func:`~symproof.claims.run_claim`, so a variant's
verdicts are recorded exactly like the chapter's.

Proof strategy (``proof-strategies.md``): a rotary or additive scheme acts
pair by pair, so every property is first stated for ONE generic pair, with a
symbolic frequency ``omega`` (real) and a symbolic pair index ``r`` (a
non-negative integer).  A proof there covers every concrete pair; the concrete
frequency list is then checked to be an instance (every frequency real).  When
the generic statement is not proved, the concrete pairs are tried one by one, every pair (a bias:
every head), equal substituted statements once, as far as the step budget goes (a statement with
``where`` case by case at its conditions, :mod:`._cases`):
a refutation there carries an exact witness *of the described scheme*, never
of some other frequency.

A property that does not hold is information, not an error: its claim is
``refuted`` with the witness, exactly as a false chapter statement would be.

Longer than 600 lines: the properties of the three kinds and the derivation that decides them share
the generic symbols and the witness search; the vocabulary is in _properties, the offsets in
_offset, the decay in _decay.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable, Iterator

import sympy as sp

from .._ground._budget import cpu_time_limit
from .._ground._errors import InvalidInputError, UndefinedExpressionError
from ..claims import Claim, ClaimResult, Proof, run_claim
from ..encodings import rotation, sin_shift, sinusoidal_vector
from ..prover import PROVED, REFUTED, UNKNOWN, Verdict, prove_equal
from ..prover import _budget
from ..prover._witness import evaluate_at, is_certainly_nonzero
from ._decay import decay_statement, derive_decay
from ._formula import mod_as_floor
from ._kernel_file import prepare_targets
from ._mask_kernel import check_kernel_and_mask
from . import _heads_check as heads
from ._properties import (
    _POSITION_NAMES, _VECTORS, D, Property, _direction, _mirror, _residual_at, back, c, h_sym, i, j, j_causal, k0, k1, m,
    omega, q0, q1, r_sym, seq_len_sym, slope_sym, t,
)
from ._spec import Variant
from ._steps import DEFAULT_STEPS, removed_budget

__all__ = ["Property", "properties_of", "check_variant", "PROPERTY_TITLES", "generic_symbols"]

#: pairs spread over the spectrum that are tried first when the generic pair does not decide a property
#: (every pair is tried after them); the cache property tries this many pairs that move most
MAX_CONCRETE_PAIRS = 4

PROPERTY_TITLES = {
    "norm": "norm preservation: ||T_m q|| = ||q||",
    "relative": "the score depends only on the offset j - i",
    "shift": "invariance under a common shift of both positions",
    "direction": "direction sensitivity: offsets D and -D score differently",
    "plain_at_zero": "at offset 0 the score is the plain product q^T k",
    "constant_norm": "constant position-vector norm ||p_t||^2 = d/2",
    "shift_structure": "linear shift structure p_{t+D} = A_D p_t, A_D independent of t",
    "equivalence": "equivalence to a named scheme",
    "cache": "keys cached at one call length stay valid at another",
    "causal_relative": "under a causal softmax, each row depends only on the offsets",
    "decay": "long-term decay: the bias (or RoFormer's bound) falls with the distance to a past key",
    "kernel": "the exported kernel files compute the definition",
    "mask_relative": "the mask depends only on the offset j - i",
    "mask_causal": "the mask hides every key after its query",
    "mask_self": "every query sees its own key (no empty softmax row)",
}


def generic_symbols() -> dict:
    """The symbols of the generic statements, by name (for tests and reports)."""
    return {s.name: s for s in (q0, q1, k0, k1, i, j, c, D, t, m, omega, r_sym, slope_sym)}


# -- the pairwise objects ------------------------------------------------------------------------


def _pair_map(variant: Variant, side: str, position, w, r):
    """The 2x2 map applied to a query (or key) pair at ``position`` (a vector of coordinates, and ``w``
    one frequency per axis, when every pair reads every axis)."""
    angle = variant.pair_angle(position, w)
    # a per-axis file's scale reads no position (refused at load): any coordinate stands for it
    return variant.scale(side, 0 if variant.mixed else position, r) * variant.block_at(
        angle, r, None if variant.mixed else position)


def _positions(variant: Variant) -> tuple:
    """``(i, j, c, D, m, origin)`` of the generic statements: integer symbols, or, when every pair reads
    every axis, column vectors of them (``i_x, i_y``, named after the axes), so that ``j - i`` is the
    offset vector."""
    if not variant.mixed:
        return i, j, c, D, m, sp.Integer(0)
    return tuple(sp.ImmutableMatrix([sp.Symbol(f"{name}_{axis}", integer=True) for axis in variant.axes])
                 for name in ("i", "j", "c", "D", "m")) + (sp.ImmutableMatrix.zeros(len(variant.axes), 1),)


def _frequency_vector(variant: Variant) -> tuple:
    """The generic pair's frequency vector, one real symbol per axis."""
    return tuple(sp.Symbol(f"omega_{axis}", real=True) for axis in variant.axes)


def _rotary_score(variant: Variant, pos_q, pos_k, w, r):
    """One pair's score, plus the head's bias when the file adds one (see _heads: one pair plus the
    bias stands for the head)."""
    q, k = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])
    return sp.expand(((_pair_map(variant, "query", pos_q, w, r) * q).T
                      * (_pair_map(variant, "key", pos_k, w, r) * k))[0] + heads.bias_term(variant, pos_q, pos_k))


def _sin_pair(variant: Variant, position, w):
    vector = sinusoidal_vector(variant.angle_position(position), [w])
    return vector if variant.amplitude is None else variant.amplitude_at(position) * vector


def _additive_product(variant: Variant, a, b, w):
    return (_sin_pair(variant, a, w).T * _sin_pair(variant, b, w))[0]


def _rotary_properties(variant: Variant) -> list:
    if variant.relative is not None:  # ReRoPE, Self-Extend: not a rotation of each token
        from ._offset import offset_properties

        return offset_properties(variant)
    i, j, c, D, m, o = _positions(variant)  # noqa: F811 - vectors when every pair reads every axis
    qn2 = q0**2 + q1**2
    kn2 = k0**2 + k1**2

    def norm_sides(w, r):
        qm = _pair_map(variant, "query", m, w, r) * sp.Matrix([q0, q1])
        km = _pair_map(variant, "key", m, w, r) * sp.Matrix([k0, k1])
        return (sp.ImmutableMatrix([sp.expand((qm.T * qm)[0]), sp.expand((km.T * km)[0])]),
                sp.ImmutableMatrix([qn2, kn2]))

    props = [
        Property("norm", "||M_q(m) q||^2 = ||q||^2 and ||M_k(m) k||^2 = ||k||^2 for every position m",
                 "identity", norm_sides),
        Property("relative", "s(i, j) = s(0, j - i): the score depends only on the offset", "identity",
                 lambda w, r: (_rotary_score(variant, i, j, w, r), _rotary_score(variant, o, j - i, w, r))),
        Property("shift", "s(i + c, j + c) = s(i, j) for every common shift c", "identity",
                 lambda w, r: (_rotary_score(variant, i + c, j + c, w, r), _rotary_score(variant, i, j, w, r))),
        Property("direction", *_direction("s", variant),
                 lambda w, r: (_rotary_score(variant, o, D, w, r),
                               _rotary_score(variant, *_mirror(variant, D, o), w, r))),
        Property("plain_at_zero", "s(i, i) = q^T k: at offset 0 the score is the plain product", "identity",
                 lambda w, r: (_rotary_score(variant, i, i, w, r), q0 * k0 + q1 * k1)),
    ]
    if variant.equivalent_frequencies is not None or variant.equivalent_per_axis is not None:
        props.append(Property("equivalence", f"M_q(m) = R_m with the frequencies of {variant.equivalent_name}"
                              + (" in every head" if variant.per_head else ""), "identity",
                              derive=heads.each_head(_equivalence_rotary) if variant.per_head else _equivalence_rotary))
    if variant.mixed:  # the statements read the same with vectors: say so
        vectors = f" (i, j, c, D, m: integer vectors over the axes {', '.join(variant.axes)})"
        props = [replace(p, statement=p.statement + vectors) for p in props]
        relative, shift = props[1], props[2]
        props[2] = replace(shift, derive=_shift_from_offsets(relative, shift))
    if variant.length_dependent:
        props.append(Property("cache", "a key rotated in a call of length L1 and cached scores as if it were "
                                       "rotated again in a later call of length L2 (for every L1, L2)",
                              "identity", derive=_cache_consistency))
    return props


def _additive_properties(variant: Variant) -> list:
    if variant.vectors is not None:  # a learned table: decided from its exact values
        from ._vectors import vector_properties

        return vector_properties(variant)

    def shift_sides(w, r):
        step = variant.angle_position(D) - variant.angle_position(0)
        if variant.amplitude is not None:  # A_D = (a(D) / a(0)) blockdiag(...), multiplied out by a(0)
            return (variant.amplitude_at(0) * _sin_pair(variant, t + D, w),
                    variant.amplitude_at(D) * sin_shift(step * w) * _sin_pair(variant, t, w))
        return _sin_pair(variant, t + D, w), sin_shift(step * w) * _sin_pair(variant, t, w)

    def norm_sides(w, r):
        norm = sp.expand((_sin_pair(variant, t, w).T * _sin_pair(variant, t, w))[0])
        if variant.amplitude is None:
            return norm, sp.Integer(1)
        return norm, sp.expand((_sin_pair(variant, 0, w).T * _sin_pair(variant, 0, w))[0])

    amplitude = variant.amplitude is not None
    props = [
        Property("constant_norm", "||p_t||^2 = ||p_0||^2 for every position t (p_t = a(t) times the sinusoidal "
                                  "vector)" if amplitude else f"||p_t||^2 = d/2 = {variant.n_pairs} for every position t",
                 "identity", norm_sides),
        Property("shift_structure", "a(0) p_{t+D} = a(D) A_D p_t with A_D = blockdiag(A((g(D) - g(0)) omega_r)), "
                                    "independent of t (g = position transform, a = amplitude)" if amplitude else
                 "p_{t+D} = A_D p_t with A_D = blockdiag(A((g(D) - g(0)) omega_r)), "
                 "independent of t (g = position transform)", "identity", shift_sides),
        Property("relative", "p_i^T p_j = p_0^T p_{j-i}: the product depends only on the offset", "identity",
                 lambda w, r: (_additive_product(variant, i, j, w), _additive_product(variant, 0, j - i, w))),
        Property("shift", "p_{i+c}^T p_{j+c} = p_i^T p_j for every common shift c", "identity",
                 lambda w, r: (_additive_product(variant, i + c, j + c, w), _additive_product(variant, i, j, w))),
        Property("direction", *_direction("p", variant),
                 lambda w, r: (_additive_product(variant, 0, D, w), _additive_product(variant, *_mirror(variant), w))),
    ]
    if variant.equivalent_frequencies is not None:
        props.append(Property("equivalence", f"p_t equals the table of {variant.equivalent_name}",
                              "identity", derive=_equivalence_additive))
    return props


def _bias_properties(variant: Variant) -> list:
    if len(variant.axes) > 1:  # bias.axes (Swin): the same statements over position vectors
        from ._bias_axes import bias_axes_properties

        return bias_axes_properties(variant)
    def bias(a, b):
        return variant.bias_at(a, b, slope_sym, h_sym)

    props = [
        Property("relative", "b(i, j) = b(0, j - i): the bias depends only on the offset", "identity",
                 lambda w, r: (bias(i, j), bias(0, j - i))),
        Property("shift", "b(i + c, j + c) = b(i, j) for every common shift c", "identity",
                 lambda w, r: (bias(i + c, j + c), bias(i, j))),
        Property("direction", *_direction("b", variant), lambda w, r: (bias(0, D), bias(*_mirror(variant)))),
        Property("plain_at_zero", "b(i, i) = 0: at offset 0 the score is the plain content product", "identity",
                 lambda w, r: (bias(i, i), sp.Integer(0))),
        # softmax(z + c) = softmax(z) for a per-row constant c, and a causal row i sees keys j <= i only:
        # the row's weights depend on b(i, j) - b(i, i), which must be a function of i - j alone
        Property("causal_relative", "b(j + t, j) - b(j + t, j + t) = b(t, 0) - b(t, t) for all j, t >= 0: "
                                    "up to a per-row constant (invisible to softmax) the bias of a causal row "
                                    "depends only on the offset", "identity",
                 lambda w, r: (bias(j_causal + back, j_causal) - bias(j_causal + back, j_causal + back),
                               bias(back, 0) - bias(back, back))),
    ]
    if variant.equivalent_bias is not None:
        def difference(a, b):
            return variant.bias_at(a, b, slope_sym, h_sym) - variant.equivalent_bias_at(a, b, slope_sym, h_sym)

        props.append(Property(
            "equivalence", f"b - b' is constant along every causal row (b' = {variant.equivalent_name}): "
                           "the two give the same attention weights under a causal softmax", "identity",
            lambda w, r: (difference(j_causal + back, j_causal), difference(j_causal + back, j_causal + back))))
    return props


def properties_of(variant: Variant, kernel_targets=None) -> list:
    """The properties that apply to ``variant``'s kind, in report order."""
    from ._dense import dense_properties

    builders = {"rotary": _rotary_properties, "additive": _additive_properties, "bias": _bias_properties,
                "dense": dense_properties}
    props = [replace(p, sides=_floor_sides(p.sides)) if p.sides is not None else p
             for p in builders[variant.kind](variant)]
    # a bias over several axes has no causal order along which to decay
    if decay_statement(variant.kind) is not None and not (variant.kind == "bias" and len(variant.axes) > 1):
        derive = _decay_of_a_position_block if variant.kind == "rotary" and variant.block_reads_position \
            else derive_decay
        statement = decay_statement(variant.kind)
        if variant.per_head and variant.bias is not None and derive is derive_decay:
            derive, statement = heads.derive_decay_with_bias, heads.DECAY_WITH_BIAS
        elif variant.per_head and derive is derive_decay:
            derive, statement = heads.each_head(derive_decay), statement + " (in every head)"
        props.append(Property("decay", statement, "identity", derive=derive))
    if variant.mask is not None:  # the mask's own properties: a set of allowed pairs (._mask)
        from ._mask import mask_properties

        props += mask_properties(variant, Property)
    props.append(Property("kernel", "the kernel files --export writes (numpy; torch and C where available) "
                                    "import, run and agree with the exact definition at small, random, large "
                                    "and negative positions", "identity",
                          derive=lambda v, proof: check_kernel_and_mask(v, proof, kernel_targets)))
    return props


def _decay_of_a_position_block(variant: Variant, proof: Proof) -> None:
    """RoFormer's bound is the bound of ``R(x)``; a block that reads the position turns each token by more
    than its angle, so the bound says nothing about it: *unknown*, said so."""
    proof.undecided("check", "B(D + 1) <= B(D) for every D >= 0",
                    "rotation.block reads the position m: RoFormer's bound is for the rotation R(x) by the angle "
                    "alone, and this block turns each token by more than its angle", method="not applicable")


def _floor_sides(sides):
    return lambda *args: tuple(mod_as_floor(side) for side in sides(*args))


# -- deciding one property -----------------------------------------------------------------------


def _instances(variant: Variant) -> list:
    """The indices (pairs, or heads) the generic symbol stands for."""
    return list(range(variant.value_count))


def _valued(variant: Variant, indices) -> list:
    """``(exact value, index)`` for each index (exact values are built only for these)."""
    return [(variant.exact_value(k), k) for k in indices]


def _generic(variant: Variant):
    if variant.mixed:
        return _frequency_vector(variant), r_sym
    return (slope_sym, h_sym) if variant.kind == "bias" else (omega, r_sym)


def _name(variant: Variant) -> str:
    return "head h" if variant.kind == "bias" else "pair r"


def _substituted(expr, value, index, variant):
    sym, idx = _generic(variant)
    mapping = dict(zip(sym, value)) if variant.mixed else {sym: value}
    if idx is not None:
        mapping[idx] = sp.Integer(index)
    return expr.xreplace(mapping)


def _spread(items: list) -> list:
    """First, last and middle items first: a failure at one end of the spectrum shows up early."""
    if len(items) <= MAX_CONCRETE_PAIRS:
        return items
    picks = [0, len(items) - 1, len(items) // 2, len(items) // 4]
    return [items[k] for k in dict.fromkeys(picks)][:MAX_CONCRETE_PAIRS]


def _every_instance(variant: Variant) -> Iterator[tuple]:
    """``(exact value, index)`` of every pair (head), one at a time: a bias's heads in order, a rotary
    file's pairs spread over the spectrum first (:func:`_spread`: a failure at one end shows up early),
    then the others in order.  Each value is built only when it is reached, and each reach is a check
    point of the step budget, so the walk over a wide head stops where the budget does."""
    instances = _instances(variant)
    first = instances if variant.kind == "bias" else _spread(instances)
    chosen = set(first)
    for index in first + [k for k in instances if k not in chosen]:
        _budget.check()
        yield variant.exact_value(index), index


def _scope_notes(variant: Variant, proof: Proof) -> None:
    """Why a statement about one pair is a statement about the whole head (or table)."""
    if variant.kind == "bias":
        return
    if variant.relative is not None:
        from ._offset import OFFSET_NOTE

        proof.note(OFFSET_NOTE)
        return
    proof.note("The map is block diagonal, pair by pair, so the score is a sum of pair scores: a statement "
               "of one generic pair holds for the whole head.")
    if variant.kind == "rotary" and variant.rotated_width < variant.width:
        proof.note(f"Coordinates {variant.rotated_width}..{variant.width - 1} are copied unchanged; they add "
                   "q^T k of the copied part, which depends on no position (the kernel check verifies the copy).")
    if variant.mixed:
        proof.note(f"Every pair rotates with every coordinate of the position ({', '.join(variant.axes)}), by "
                   "the angle sum over the axes a of omega[r][a] * g(m_a) (g = position transform): the generic pair has a symbolic "
                   "frequency vector, positions, shifts and offsets are vectors, and j - i is taken coordinate-wise.")
    elif len(variant.axes) > 1:
        proof.note(f"Each pair rotates with one coordinate of the position ({', '.join(variant.axes)}); "
                   "the generic pair's m is that coordinate, so offsets are taken coordinate-wise.")


def _generic_verdict(variant: Variant, proof: Proof, lhs, rhs):
    """The prover's verdict on the generic statement, or ``None`` when it is undefined for a symbolic head or
    pair (0**P(h): a table entry's sign is not known there) though perhaps defined for every concrete one:
    the instances decide then, each undefined one stopping the claim."""
    try:
        return prove_equal(lhs, rhs)
    except UndefinedExpressionError as err:
        proof.note(f"The generic {_name(variant)} is undefined ({err}); trying the concrete values.")
        return None


def _derive_identity(variant: Variant, prop: Property):
    def derive(proof: Proof):
        _scope_notes(variant, proof)
        sym, _ = _generic(variant)
        lhs, rhs = prop.sides(*_generic(variant))
        generic = _generic_verdict(variant, proof, lhs, rhs)
        if generic is not None and generic.proved:
            proof.record(f"generic {_name(variant)} (symbolic {sym})", generic)
            if variant.length_dependent:
                _every_length_is_an_instance(variant, proof)
                return
            _check_instances(variant, proof, sym)
            return
        if generic is not None:
            proof.note(f"The generic {_name(variant)} is not proved ({generic.status}: "
                       f"{generic.reason or 'witness'}); trying the concrete values.")
        # every head of a bias, every pair of a rotary file (a per-head or per-pair table may break one of
        # many): the property holds when each distinct instance is proved
        seen = set()
        for value, index in _every_instance(variant):
            lhs_c, rhs_c = (_substituted(e, value, index, variant) for e in (lhs, rhs))
            if (lhs_c, rhs_c) in seen:  # the same statement as an earlier instance's, already proved
                continue
            seen.add((lhs_c, rhs_c))
            rule = f"{_name(variant)} = {index} ({sym} = {value})"
            # a relative position's thresholds are past the prover's small points: its screen (cheap)
            # goes first, and the prover's search only when it finds nothing
            offset = prop.key == "relative"
            far = _far_witness(variant, lhs_c, rhs_c, offset) if variant.relative is not None else None
            part = proof.equal(rule, lhs_c, rhs_c) if far is None else None
            if part is not None and part.status == REFUTED and _outside_position(variant, part.witness, offset):
                # the prover's witness lies outside the file's positions: look for one inside
                proof.parts.pop()
                part = None
            if part is None or part.status == UNKNOWN:
                if far is None and variant.relative is None:
                    far = _far_witness(variant, lhs_c, rhs_c, offset)
                if far is not None:
                    if part is not None:
                        proof.parts.pop()
                    witness, residual = far
                    proof.record(f"{rule}, at a small or large position, or one near a threshold of the formula",
                                 Verdict(REFUTED, "witness", lhs_c, rhs_c, witness=witness, residual=residual,
                                         reason="the two sides differ at the witness (certified)"))
                    return
                if _by_cases(variant, proof, rule, lhs_c, rhs_c, replace_last=part is not None, offset=offset):
                    continue
                if part is None:
                    proof.undecided("equal", rule, f"the only witness found lies outside the file's positions "
                                    f"({variant.positions}); none inside was certified", method="witness")
                return
            if part.status != PROVED:
                return
    return derive


#: the position symbols of a statement that range over the integers >= 0 when the file's positions do
#: (a shift c may be negative: it is not one of them)
_NONNEGATIVE_POSITIONS = frozenset({"i", "j", "m", "t", "D"})


def _by_cases(variant: Variant, proof: Proof, rule: str, lhs, rhs, *, replace_last: bool,
              offset: bool = False) -> bool:
    """Prove ``lhs = rhs`` case by case at the conditions of its ``where``s (:mod:`._cases`); on success
    the cases are recorded (in place of the last, undecided, part when ``replace_last``).  ``offset``: the
    statement reads ``s(0, j - i)``, whose offset is a position too: on positions >= 0 the key is
    written ``j = i + u_j`` with ``u_j >= 0`` (exactly the statement's domain, ``0 <= i <= j``)."""
    pair = sp.Tuple(*(sp.ImmutableMatrix(e) if isinstance(e, sp.MatrixBase) else e for e in (lhs, rhs)))
    if not pair.has(sp.Piecewise) or isinstance(lhs, sp.MatrixBase):
        return False
    from ._cases import where_cases

    named = {s.name: s for s in pair.free_symbols}
    domain = ""
    if offset and variant.from_zero and {"i", "j"} <= set(named):
        after = sp.Symbol("u_j", integer=True, nonnegative=True)
        lhs, rhs = (e.xreplace({named["j"]: named["i"] + after}) for e in (lhs, rhs))
        pair, domain = sp.Tuple(lhs, rhs), "; j = i + u_j with u_j >= 0 (the offset j - i is a position)"
    nonnegative = {s for s in pair.free_symbols
                   if variant.from_zero and s.name.split("_", 1)[0] in _NONNEGATIVE_POSITIONS}
    cases = where_cases(lhs, rhs, nonnegative)
    if cases is None:
        return False
    if replace_last:
        proof.parts.pop()
    for label, verdict in cases:
        proof.record(f"{rule}, case {label}", verdict)
    ranges = ", ".join(f"{s} >= 0" for s in sorted(nonnegative, key=str))
    proof.check(f"{rule}: the {len(cases)} cases cover every integer value of the split symbols", True,
                "each where() condition is linear with integer coefficients, so it holds exactly on one side of "
                "an integer cut; the cases are the two sides (the points of a short bounded side one by one)"
                + (f", over {ranges} (the file's positions)" if ranges else "") + domain,
                data=[label for label, _ in cases[:16]])
    return True


#: powers of two the far witness search tries for each position (past the small points of the prover)
FAR_POWERS = tuple(2**k for k in range(3, 21))
#: small positions the far search tries first (0 is every other position's resting value)
SMALL_POSITIONS = (1, 2, 3, 4)
#: most candidate points the far search evaluates for one statement
MAX_FAR_POINTS = 240


def _thresholds(expr) -> list:
    """Positions near the numbers a formula names (``Min(n, 512)``, ``log(m) / log(2048)``): first the
    steps of a ``floor`` or ``ceiling`` that divides a position (``floor(m / 16384)`` steps at 16384), then
    each number's integer neighbours, then the powers of two."""
    expr = sp.sympify(expr)
    near = []
    for step in expr.atoms(sp.floor, sp.ceiling):
        for atom in step.args[0].atoms(sp.Rational):
            if atom.p == 1 and 2 <= atom.q <= 2**20:
                near += [atom.q - 1, atom.q, atom.q + 1]
    for atom in expr.atoms(sp.Number):
        if 2 <= abs(atom) <= 2**20:
            base = int(sp.floor(abs(atom)))
            near += [base - 1, base, base + 1, base + 2]
    return list(dict.fromkeys(near + list(FAR_POWERS)))


def _far_points(positions: list, values: list):
    """The position assignments the far search tries: for every value, one position moved to it with
    the others at 0 or 1; then, for every value, all positions at it, and one at it with the others
    one past it (a statement such as ``s(i, j) = s(0, j - i)`` under ``positions = "nonnegative"``
    needs ``j >= i``, so its witness has both positions large)."""
    for value in values:
        for moved in positions:
            for rest in (0, 1):
                yield {s: sp.Integer(value if s == moved else rest) for s in positions}
    if len(positions) > 1:
        for value in values:
            yield {s: sp.Integer(value) for s in positions}
            for moved in positions:
                yield {s: sp.Integer(value if s == moved else value + 1) for s in positions}


def _far_witness(variant: Variant, lhs, rhs, offset_is_position: bool = False):
    """A certified point where ``lhs != rhs`` at a large position or one near a threshold (the
    prover's own search tries small values only); ``(witness, residual)`` or ``None``.  Under
    ``positions = "nonnegative"`` only points inside that domain are tried (with
    ``offset_is_position``, ``j - i >= 0`` too: it is a position of ``s(0, j - i)``)."""
    if variant.relative is not None:  # thresholds of two positions at once (see _offset)
        from ._offset import offset_witness

        found = offset_witness(variant, lhs, rhs)
        if found is not None and all(_admissible(s, v) for s, v in found[0].items()):
            return found
    pair = (sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs)) if isinstance(lhs, sp.MatrixBase) else (lhs, rhs)
    free = set().union(*(sp.sympify(e).free_symbols for e in pair))
    positions = sorted((s for s in free if _is_position(s.name)), key=lambda s: s.name)
    if not positions:
        return None
    # the small positions first (a table read at 0..7 breaks the shift at s(1, 1) against s(0, 0), where
    # the prover's own points may not evaluate), then the thresholds and the powers of two
    values = list(dict.fromkeys(list(SMALL_POSITIONS) + _thresholds(sp.Tuple(*pair))))
    if variant.last_position is not None:  # a range 0..N: its last positions first (a table's last rows)
        values = [v for v in dict.fromkeys([variant.last_position - k for k in (1, 2, 0)] + values) if v >= 0]
    if not variant.from_zero:
        values = [w for v in values for w in (v, -v)]
    vectors = [v for v in _VECTORS if set(v) & free] or [{}]
    def inside(point) -> bool:  # and every symbol's own range (a causal row's t >= 0 is never negative)
        return not _outside_position(variant, point, offset_is_position) \
            and all(_admissible(s, v) for s, v in point.items())
    tried = 0
    for point in _far_points(positions, values):
        if inside(point):
            for vector in vectors:
                tried += 1
                if tried > MAX_FAR_POINTS:
                    return None
                witness = {**point, **{s: sp.Integer(v) for s, v in vector.items() if s in free}}
                residual = _residual_at(pair, witness)
                if residual is not None:
                    return witness, residual
    return None


def _admissible(symbol, value) -> bool:
    """``value`` respects the sign ``symbol`` is declared with (``t >= 0`` for a causal row's offset)."""
    value = sp.sympify(value)
    if getattr(symbol, "is_nonnegative", None) and not value.is_nonnegative:
        return False
    return not (getattr(symbol, "is_positive", None) and not value.is_positive)


def _check_instances(variant: Variant, proof: Proof, sym) -> None:
    """Every concrete value is a finite real number, so every pair (head) is an instance of the
    generic statement: shown once for the symbolic index when SymPy's assumptions decide it (an
    integer index >= 0), else value by value, exactly."""
    what = f"every concrete {sym} is a finite real number: each {_name(variant)} is an instance"
    index, value = variant.generic_value()
    if value is not None and _real_and_finite(value):
        proof.check(what, True, f"{sym} = {sp.sstr(value)[:200]} is real and finite for every integer "
                                f"{index} >= 0 (assumptions)", data=[str(index), sp.sstr(value)[:200]])
        return
    instances = _valued(variant, _instances(variant))
    real = [v for v, _ in instances if _real_and_finite(v)]
    proof.check(what, len(real) == len(instances), f"{len(real)} of {len(instances)} values checked",
                data=[str(v) for v, _ in instances[:8]])


def _shift_from_offsets(relative: Property, shift: Property):
    """A per-axis file's ``shift``, from the offset form ``s(i, j) = s(0, j - i)`` of the generic pair.

    Stated directly, both sides of the shift hold angles of sums of ``2 A`` atoms (``A`` axes), whose
    expanded products the trig-polynomial tactic needs seconds for at three axes and more than the
    budget at four; the offset form has one such angle.  When it is proved for every pair of position
    vectors, its instances at ``(i + c, j + c)`` and at ``(i, j)`` have the same right-hand side, so the
    shift holds; when it is not (or only where its sides are defined), the shift is decided directly (a
    refutation needs its own witness)."""
    def derive(variant: Variant, proof: Proof):
        sym, _ = _generic(variant)
        generic = prove_equal(*relative.sides(sym, r_sym))
        # proved only where both sides are defined ("defined" certificate), the offset form could miss a
        # point where s(0, j - i) is undefined but both sides of the shift are not: then decide it directly
        conditional = getattr(generic.certificate, "kind", None) == "defined"
        if not generic.proved or conditional:
            proof.note("The offset form s(i, j) = s(0, j - i) is not proved for the generic pair at every "
                       "position; the shift is decided directly.")
            _derive_identity(variant, shift)(proof)
            return
        _scope_notes(variant, proof)
        proof.record(f"generic pair r (symbolic {sym}): s(i, j) = s(0, j - i) for all position vectors i, j",
                     generic)
        i_, j_, c_, *_ = _positions(variant)
        gap = sp.ImmutableMatrix(((j_ + c_) - (i_ + c_)) - (j_ - i_))
        proof.check("hence s(i + c, j + c) = s(0, (j + c) - (i + c)) = s(0, j - i) = s(i, j) for every shift c",
                    gap.is_zero_matrix is True, f"(j + c) - (i + c) - (j - i) = {list(gap)} coordinate by coordinate")
        _check_instances(variant, proof, sym)
    return derive


def _real_and_finite(value) -> bool:
    """A frequency (or every entry of a per-axis frequency vector) is shown real and finite."""
    values = value if isinstance(value, tuple) else (value,)
    return all(v.is_extended_real is True and v.is_finite is True for v in values)


def _derive_sensitivity(variant: Variant, prop: Property):
    def derive(proof: Proof):
        sym, _ = _generic(variant)
        lhs, rhs = prop.sides(*_generic(variant))
        generic = _generic_verdict(variant, proof, lhs, rhs)
        if generic is not None and generic.proved:
            proof.record(f"the two sides are identical for the generic {_name(variant)} (symbolic {sym})",
                         generic)
            proof.check("the sign of the offset is visible", False,
                        "both offsets give the same value for every input, so the direction is invisible")
            return
        # a witness in one pair (head) is a witness for the whole score (the other pairs' inputs at 0): the
        # spread values first, then, unless the two sides are identical in every instance, the others
        spread = _valued(variant, _spread(_instances(variant)))
        for value, index in spread:
            if _differ_at(variant, proof, sym, lhs, rhs, value, index):
                return
        open_index = _same_at_every_instance(variant, proof, lhs, rhs)
        if open_index is None:
            return
        seen = {tuple(_substituted(e, value, index, variant) for e in (lhs, rhs)) for value, index in spread}
        tried = {index for _, index in spread}
        # the first instance not proved identical first: its two sides are the likeliest to differ
        for index in dict.fromkeys([open_index] + _instances(variant)):
            if index in tried:
                continue
            _budget.check()
            value = variant.exact_value(index)
            statement = tuple(_substituted(e, value, index, variant) for e in (lhs, rhs))
            if statement in seen:  # the same statement as an earlier instance's: no witness there
                continue
            seen.add(statement)
            if _differ_at(variant, proof, sym, lhs, rhs, value, index):
                return
        proof.undecided("differ", "a witness of different scores", "no witness found among simple exact points",
                        method="witness")
    return derive


def _differ_at(variant: Variant, proof: Proof, sym, lhs, rhs, value, index) -> bool:
    """Record a certified witness that the two sides differ at the instance ``index`` (inside the file's
    positions); ``False`` (nothing recorded) when none is found."""
    lhs_c, rhs_c = (_substituted(e, value, index, variant) for e in (lhs, rhs))
    part = proof.differ(f"{_name(variant)} = {index}: the two offsets differ ({sym} = {value})", lhs_c, rhs_c)
    if part.status == PROVED and not _outside_position(variant, part.witness, False):
        return True
    proof.parts.pop()
    far = _far_witness(variant, lhs_c, rhs_c)
    if far is not None:
        proof.differ(f"{_name(variant)} = {index}: the two offsets differ ({sym} = {value}), at a small "
                     "or large offset, or one near a threshold of the formula", lhs_c, rhs_c, witness=far[0])
        return True
    return False


def _same_at_every_instance(variant: Variant, proof: Proof, lhs, rhs):
    """Refute a sensitivity when the two sides are proved identical at every concrete value (all-zero
    frequencies, a zero slope): the sign of the offset is invisible in every pair of the scheme.
    Every value is substituted exactly and equal statements are proved once; the walk is bounded by the
    step budget only.  ``None`` when the refutation is recorded, else the first index whose statement
    is not proved identical (nothing recorded)."""
    indices = _instances(variant)
    statements = {}  # the distinct substituted statements, each with its first index
    for index in indices:
        _budget.check()
        value = variant.exact_value(index)
        statements.setdefault(tuple(_substituted(e, value, index, variant) for e in (lhs, rhs)), index)
    kept = len(proof.parts)
    for (lhs_c, rhs_c), index in statements.items():
        if proof.equal(f"{_name(variant)} = {index}: the two offsets give the same value", lhs_c, rhs_c).status \
                != PROVED:
            del proof.parts[kept:]
            return index
    proof.check("the sign of the offset is visible", False,
                f"both offsets give the same value at every one of the {len(indices)} concrete values "
                f"({len(statements)} distinct checked), so the direction is invisible")
    return None


def _reads_length(variant: Variant) -> bool:
    formulas = [variant.base, variant.frequency_formula] + [f for _, f in variant.let]
    return any(f is not None and "seq_len" in f.names for f in formulas)


def _length_cases(variant: Variant) -> list:
    """Call lengths that stand for every length: ``(label, seq_len)``.

    A rule that reads ``seq_len`` is taken at a symbolic length; a short/long switch alone has two
    tables, the one up to the threshold and the one after it.
    """
    if _reads_length(variant):
        return [("every call length seq_len (symbolic, a positive integer)", seq_len_sym)]
    cases = [(f"every call length seq_len <= {variant.length_threshold}", 1)]
    if variant.long_factors:
        cases.append((f"every call length seq_len > {variant.length_threshold}", variant.length_threshold + 1))
    return cases


def _every_length_is_an_instance(variant: Variant, proof: Proof) -> None:
    proof.note("Within one call every position uses the frequencies of that call's length, so a statement of "
               "one call is a statement of the generic pair at frequencies omega_r(seq_len).")
    cases = variant.__dict__.get("_length_instances")
    if cases is None:  # the same for every property: decide it once per variant
        cases = []
        for label, seq_len in _length_cases(variant):
            values = variant.frequencies(seq_len)
            real = sum(1 for v in values if v.is_extended_real is True and v.is_finite is True)
            cases.append((label, real == len(values), f"{real} of {len(values)} frequencies shown real and finite",
                          [str(v) for v in values[:4]]))
        variant.__dict__["_length_instances"] = cases
    for label, passed, detail, data in cases:
        proof.check(f"{label}: every omega_r(seq_len) is a finite real number, so each pair is an instance",
                    passed, detail, data=data)


def _cache_consistency(variant: Variant, proof: Proof) -> None:
    """Keys cached under the frequencies of one call length, queried under those of another."""
    if not _reads_length(variant) and variant.long_factors == variant.frequency_factors:
        proof.check("the frequencies read no call length: one table serves every call", True)
        return
    short_len, long_len = variant.length_threshold, 2 * variant.length_threshold
    # the pairs that move most first (from 40 digits); the witness is then built from exact values
    cached_digits = variant.frequencies_digits(seq_len=short_len)
    current_digits = variant.frequencies_digits(seq_len=long_len)
    proof.note(f"Keys are rotated once, in the call that computes them, and kept in the cache. A key at j cached "
               f"in a call of length {short_len} (frequencies omega_r({short_len})) is then scored against a "
               f"query at i in a call of length {long_len}, whose own keys use omega_r({long_len}).")
    gaps = sorted(range(variant.n_pairs), key=lambda r: -abs(float(cached_digits[r] - current_digits[r])))
    q, k = sp.Matrix([q0, q1]), sp.Matrix([k0, k1])
    witness = {i: sp.Integer(short_len), j: sp.Integer(1), q0: 1, q1: 0, k0: 1, k1: 0}
    for r in gaps[:MAX_CONCRETE_PAIRS]:
        old, new = variant.frequency_at(r, short_len), variant.frequency_at(r, long_len)
        if not is_certainly_nonzero(old - new):
            continue
        query = variant.scale("query", i, r) * variant.block_at(variant.angle_position(i) * new, r, i) * q
        stale = (query.T * variant.scale("key", j, r) * variant.block_at(variant.angle_position(j) * old, r, j) * k)[0]
        fresh = (query.T * variant.scale("key", j, r) * variant.block_at(variant.angle_position(j) * new, r, j) * k)[0]
        residual = evaluate_at(stale, witness) - evaluate_at(fresh, witness)
        if is_certainly_nonzero(residual):
            verdict = Verdict(REFUTED, "witness", stale, fresh, witness=witness, residual=residual,
                              reason=f"pair r = {r}: omega_r({short_len}) = {sp.N(old, 8)} but "
                                     f"omega_r({long_len}) = {sp.N(new, 8)}")
            proof.record(f"pair r = {r}: the cached key's score (left) against the recomputed key's (right), "
                         f"key at j cached at seq_len = {short_len}, query at i at seq_len = {long_len}", verdict)
            return
    proof.undecided("differ", "a pair whose cached and recomputed scores differ",
                    f"no certified difference between seq_len = {short_len} and {long_len}", method="witness")


def _equivalence_rotary(variant: Variant, proof: Proof):
    from sympy.matrices.expressions import BlockDiagMatrix

    ours = variant.frequencies()
    target = variant.equivalent_frequencies_exact()
    proof.note(f"Every pair of the variant against R(m omega'_r), omega' the frequencies of "
               f"{variant.equivalent_name}.")
    position = _positions(variant)[4]
    # the named scheme rotates by the position itself: m * omega', or sum_a m_a omega'_a per axis
    raw = (lambda w: sum((p * wa for p, wa in zip(position, w)), sp.Integer(0))) if variant.mixed \
        else (lambda w: position * w)
    lhs = BlockDiagMatrix(*[_pair_map(variant, "query", position, w, r) for r, w in enumerate(ours)])
    # the named scheme is the rotation R(m omega'): the file's own block on both sides would make a block
    # that is no rotation (R(x) without its minus sign) "equal" to RoPE whenever the frequencies agree
    rhs = BlockDiagMatrix(*[rotation(raw(w)) for w in target])
    proof.equal("queries: every block", mod_as_floor(lhs), rhs)
    lhs_k = BlockDiagMatrix(*[_pair_map(variant, "key", position, w, r) for r, w in enumerate(ours)])
    proof.equal("keys: every block", mod_as_floor(lhs_k), rhs)


def _equivalence_additive(variant: Variant, proof: Proof):
    ours = variant.frequencies()
    target = variant.equivalent_frequencies_exact()
    lhs = mod_as_floor(variant.amplitude_at(t) * sinusoidal_vector(variant.angle_position(t), ours))
    rhs = sinusoidal_vector(t, target)
    proof.equal(f"p_t against the table of {variant.equivalent_name}, pair by pair", lhs, rhs)


def _claim_for(variant: Variant, prop: Property) -> Claim:
    if prop.derive is not None:
        def derive(proof, _derive=prop.derive):
            _derive(variant, proof)
        # the kernel property compares the written files with the definition at finitely many
        # positions: numerical evidence, shown as *tested*, never *proved*
        kind = "tested" if prop.key == "kernel" else ("not-in-general" if prop.kind == "sensitivity" else "identity")
    elif prop.kind == "identity":
        derive, kind = _derive_identity(variant, prop), "identity"
    else:
        derive, kind = _derive_sensitivity(variant, prop), "not-in-general"
    if variant.per_head and prop.derive is None:  # symbolic h first, then head by head (see _heads)
        derive = heads.generic_then_each_head(variant, prop, _derive_identity if kind == "identity"
                                              else _derive_sensitivity, properties_of, _outside_position)
    return Claim(id=f"{variant.name}.{prop.key}", section="variant",
                 title=PROPERTY_TITLES.get(prop.key, prop.key), statement=prop.statement, kind=kind,
                 derive=derive, name=prop.key)


_REMOVED_BUDGET = object()


def check_variant(variant: Variant, only: Iterable[str] | None = None, steps: int | None = DEFAULT_STEPS,
                  kernel_targets: Iterable[str] | None = None, *, time_limit: float | None = None,
                  budget: object = _REMOVED_BUDGET) -> list:
    """Decide every property that applies to ``variant``; one ``ClaimResult`` per property.

    ``status`` is ``"proved"`` when the property holds, ``"refuted"`` (with an
    exact witness where there is one) when it does not, ``"unknown"`` when
    neither could be shown.  ``only`` restricts to some property keys; ``kernel_targets``, the export targets whose files the
    ``kernel`` property writes and runs (default: numpy, torch and C, where available).
    ``steps``: the step budget of each property (prover steps counted at the
    prover's check points; ``None``: no bound); a property that spends it is
    ``"unknown"`` with the budget as its reason, and the next property starts
    with a full one.  The verdicts depend on the variant and ``steps`` only.
    ``time_limit``: seconds of CPU time for each property, a safety stop
    (``None``, the default: none): when one property passes it, the check
    stops with :class:`symproof.TimeLimitExceeded` (its ``results`` holds the
    properties decided before; the stopped one has no verdict).
    """
    import time

    if budget is not _REMOVED_BUDGET:
        raise InvalidInputError(removed_budget("check_variant(budget=...)", "steps=N", "time_limit=SECONDS"))
    steps = _budget.validate_steps(steps)
    time_limit = _budget.validate_timeout(time_limit, "time_limit")
    results = []
    for prop in properties_of(variant, kernel_targets):
        if only and prop.key not in only:
            continue
        claim = _claim_for(variant, prop)
        if prop.key == "kernel":
            prepare_targets(kernel_targets)  # torch's import is the process's, not this property's, cost
        start = time.perf_counter()
        try:
            # each property has the whole budget: one costly property leaves the others theirs
            with cpu_time_limit(time_limit, f"the {prop.key} property of {variant.name}"), \
                    _budget.steps(steps, f"the {prop.key} property") as frame:
                results.append(_within_domain(variant, run_claim(claim)))
        except _budget.StepBudgetExhausted as spent:
            if spent.frame is not frame:
                raise
            results.append(_out_of_budget(claim, steps, time.perf_counter() - start))
        except _budget.TimeLimitExceeded as stop:
            stop.results = tuple(results)
            raise
    return results


def _is_position(name: str) -> bool:
    """A position symbol: ``i``, or one coordinate ``i_x`` of a position vector."""
    return name.split("_", 1)[0] in _POSITION_NAMES


def _negative_position(witness, offset_is_position: bool) -> str:
    """The first position of ``witness`` that is negative (with ``offset_is_position``, as in
    ``s(0, j - i)``, also ``j - i``), or ''."""
    values = {str(k): v for k, v in dict(witness or {}).items()}
    for name in sorted(n for n in values if _is_position(n)):
        if sp.sympify(values[name]).is_negative:
            return f"{name} = {values[name]}"
    for name in sorted(values) if offset_is_position else ():
        key = "j" + name[1:]  # i with j, i_x with j_x
        if name.split("_", 1)[0] == "i" and key in values \
                and (sp.sympify(values[key]) - sp.sympify(values[name])).is_negative:
            return f"{key} - {name} = {sp.sympify(values[key]) - sp.sympify(values[name])}"
    return ""


def _outside_position(variant: Variant, witness, offset_is_position: bool) -> str:
    """Why ``witness`` is outside the file's declared positions ('' when inside, and always on every-integer
    positions): a negative position (see :func:`_negative_position`), or, with a range ``0..N``, a
    position past ``N``.  Every position a
    statement evaluates is one of ``i, j, m, D``, an offset ``j - i <= j``, or one of them plus the shift
    ``c`` or the causal distance ``t`` (``i + c``, ``j + t``): the largest of the first plus ``c`` and ``t``
    bounds them all (conservative, sound)."""
    if not variant.from_zero:
        return ""
    where = _negative_position(witness, offset_is_position)
    if where or variant.last_position is None:
        return where
    values = {str(k): sp.sympify(v) for k, v in dict(witness or {}).items() if _is_position(str(k))}
    # the shift c and the causal distance t are added to another position; every other one stands alone
    added = [v for name, v in values.items() if name.split("_", 1)[0] in ("c", "t")]
    alone = [v for name, v in values.items() if name.split("_", 1)[0] not in ("c", "t")]
    total = max(alone, default=sp.Integer(0)) + sum(added, sp.Integer(0))
    if total > variant.last_position:
        shown = " + ".join(f"{name} = {values[name]}" for name in sorted(values))
        return f"{shown} (positions up to {total})"
    return ""


#: the decay rules read distances D >= 0 without end; a range file's verdict rests on the distances its
#: witnesses name (``at D = 3``, ``B(4) > B(3)``), which must lie inside it
_DISTANCES = re.compile(r"(?:\bat D = |\bB\()(\d+)")


def _decay_outside(variant: Variant, result: ClaimResult) -> str:
    """Why a range file's decay verdict rests on a distance past its last position ('' when it does not):
    a refutation needs ``B(D + 1) > B(D)`` (or a rising bias) at ``D + 1 <= N``; a proof's "for some D"
    needs that ``D <= N``; a proof with no named distance is not trusted over the range."""
    last = variant.last_position
    named = [int(d) for part in result.proof.parts for d in _DISTANCES.findall(part.detail or "")]
    named += [int(v) + 1 for part in result.proof.parts for k, v in dict(part.witness or {}).items() if str(k) == "D"]
    if not named:
        return "the verdict names no distance to check against the file's last position"
    beyond = [d for d in named if d > last]
    if beyond:
        return f"it rests on the distance {max(beyond)}"
    # a rising bias names its query i too: every position of its witness inside 0..N
    where = next((w for part in result.proof.parts for w in [_outside_position(variant, part.witness, False)] if w), "")
    return f"its witness needs the position {where}" if where else ""


def _within_domain(variant: Variant, result: ClaimResult) -> ClaimResult:
    """A file that says ``positions = "nonnegative"`` (or ``"0..N"``) is not refuted (nor shown sensitive)
    by a witness outside its positions: such a verdict becomes unknown, naming the position.  A range
    file's decay verdict is kept only when the distances it rests on are inside the range."""
    if not variant.from_zero or result.status == UNKNOWN or result.claim.name == "kernel":
        return result
    declared = f"positions = \"{variant.positions}\""
    if result.claim.name == "decay" and variant.last_position is not None:
        why = _decay_outside(variant, result)
        if why:
            reason = (f"decided over every distance D >= 0, but the file's {declared} ends at "
                      f"{variant.last_position}: {why}")
            return ClaimResult(result.claim, UNKNOWN, result.seconds, result.proof, reason, result.methods, [])
        return result
    decided_by_witness = result.status == REFUTED or result.claim.kind == "not-in-general"
    if not decided_by_witness:
        return result
    for part in result.proof.parts:
        where = _outside_position(variant, part.witness, result.claim.name == "relative")
        if where:
            inside = "at non-negative positions" if variant.last_position is None else "inside them"
            reason = (f"the witness needs the position {where}, outside the file's {declared}; "
                      f"no witness {inside} was certified")
            return ClaimResult(result.claim, UNKNOWN, result.seconds, result.proof, reason, result.methods, [])
    return result


def _out_of_budget(claim: Claim, steps: int, seconds: float):
    reason = (f"the {claim.name} property: step budget of {steps} steps exhausted, not decided "
              "(symproof check --steps N gives more)")
    return ClaimResult(claim, UNKNOWN, seconds, Proof(claim), reason, ("budget",), [])
