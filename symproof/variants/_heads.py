"""Rotary files with heads: per-head rotary parameters (``h`` in frequencies and scales) and a bias added
to the rotary score (RoPE plus ALiBi in one head).

A rotary file that says ``heads = N`` (top level) may read the head index ``h`` (0..N-1) and the head
count ``heads`` in its ``[frequencies]`` and ``[scale]`` formulas (per-head bases, RetNet's per-head
decay ``gamma_h**(i - j)``), and may add a ``[bias]`` (``formula`` in ``i, j, slope, h, heads`` and
``slope`` in ``h, heads``, as in a bias file): the score of head ``h`` is then
``s_h(i, j) = sum_r (M_q(i) q_r)^T (M_k(j) k_r) + b_h(i, j)``.

How the properties are decided (:mod:`._heads_check`; this module reads and validates the file, and
loads without the prover): when the statement of one generic pair does not read ``h`` (the frequency
``omega`` and, with a bias, the slope are symbols), it is proved once for every head; otherwise, or when
that proof fails, each head is decided as a one-head file (:meth:`~._spec.Variant.head`: its generic pair,
then its pairs one by one, exactly as a file without heads), and a refutation names the head and pair of
its witness.  (SymPy writes ``(1 - 2**(-5 - h))**(-j)`` as ``2**(h*j) * 32**j / (32*2**h - 1)**j``, which
the prover's canonical form does not merge back: a statement that reads ``h`` is not tried symbolically.)

Load-time checks: every head's frequencies (numerically), scales and slope are built, and a value that is
not a number (``log(h - 5)`` in head 5) or a table read by ``h`` past its end is refused naming the head;
the search for positions where a formula is undefined (:mod:`._domain`) runs in the sampled heads
(both ends, the middle and the quarters).

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
from ._format import MAX_HEADS, _names, sample_indices

__all__ = ["MAX_HEAD_PAIRS", "parse_heads", "parse_rotary_bias", "validate_heads", "bias_part"]

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
    reader.head_keys = ("frequencies.base", "frequencies.formula", "frequencies.let.", "scale.")


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
        one = variant.head(h)
        try:
            if h in sample_indices(heads):
                validate_one(reader, one)
            else:
                one.frequencies_digits()
            m, r = sp.Symbol("m", integer=True), sp.Symbol("r", integer=True, nonnegative=True)
            for side in ("query", "key"):
                if one.scale(side, m, r).has(sp.zoo, sp.nan, sp.oo, -sp.oo):
                    raise reader.fail(f"scale.{side}", "is not a finite number for every position")
        except VariantFileError as err:
            raise VariantFileError(f"{err} (head h = {h}, of 0..{heads - 1})") from None
    if variant.bias is not None:
        part = bias_part(variant)
        for h in range(heads):  # exactly, head by head: a slope table read by h past its end names the head
            try:
                part.exact_value(h)
            except (VariantFileError, ValueError) as err:
                raise VariantFileError(f"{variant.source}: key 'bias.slope': {str(err).split(': ', 1)[-1]} "
                                       f"(head h = {h}, of 0..{heads - 1})") from None
        part.frequencies_digits()  # every head's slope, numerically: a non-real slope fails here, naming its head
        for h in sample_indices(heads):
            if part.exact_value(h).is_extended_real is not True:
                raise reader.fail("bias.slope", f"gives {part.exact_value(h)} for head h={h}; expected a real number")
        i, j = sp.symbols("i j", integer=True)
        part.bias_at(i, j, part.exact_value(0), 0)
        check_defined(part)
