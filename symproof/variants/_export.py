"""``symproof check FILE --export DIR --target numpy|c|torch``: the variant's kernel as source.

Description files (TOML) and model configs (``config.json``) both arrive here
as a :class:`Variant`; this module only decides which kernel family it is and
what its provenance says, then hands it to :mod:`symproof._export` (the one
dispatcher, header and writer every exported kernel goes through):

- a rule that reads the call length (model configs, dynamic NTK, LongRoPE's
  switch): the ``call-length`` family, whose ``apply`` takes ``seq_len`` and
  applies the attention scaling as HF does;
- plain RoPE once its linear position transform is folded into the
  frequencies (interpolation, NTK, Llama-3, partial, half-split): the ``rope``
  family, the tuned kernels of ``symproof export rope`` at those explicit
  frequencies, with the RoPE claims re-run and recorded as that command does;
- every other variant (scales, factors, custom blocks, several axes, additive
  tables, biases): the ``variant`` family, printed from its exact definition.
"""

from __future__ import annotations

import functools

from .._ground._errors import InvalidInputError
from .._export import TARGETS, Kernel, check_target_name, kernel_files, module_name, write_kernel
from .._ground._provenance import call_length_provenance, plain_variant_provenance, variant_provenance
from ._kernel import plain_rope_factor
from ._spec import Variant

__all__ = ["export_variant", "variant_source", "variant_kernel", "check_target", "TARGETS"]

#: up to this many pairs the exported header lists the exact frequencies; beyond, 30 digits of each
#: (building thousands of exact values costs seconds, and a float64 table needs 17 digits)
_EXACT_HEADER_PAIRS = 64


def check_target(variant: Variant, target: str) -> None:
    """Refuse a target that cannot be exported for ``variant``."""
    check_target_name(target)
    if target == "c" and variant.kind not in ("rotary", "dense"):
        raise InvalidInputError(f"--target c exports rotary and dense variants; {variant.name!r} is {variant.kind} "
                                "(use --target numpy or torch)", target="c")
    if _takes_call_length(variant):
        from .._export._call_length import supports

        why = supports(variant)
        if why:
            raise InvalidInputError(f"{variant.source}: no kernel taking the call length can be exported for "
                                    f"{variant.name!r}: {why}", target=target)


def _takes_call_length(variant: Variant) -> bool:
    """Model configs and rules that read the call length get the kernel whose ``apply`` takes
    ``seq_len`` as HF does and applies the attention scaling as HF does; a config's scores with the
    attention's per-position query scale (Ministral 3) are the variant family's, whose kernels take the side."""
    scaled = variant.query_scale is not None or variant.key_scale is not None
    return variant.length_dependent or (bool(variant.notes) and not scaled)


def _frequencies_for_export(variant: Variant) -> list:
    if variant.n_pairs <= _EXACT_HEADER_PAIRS:
        return variant.frequencies()
    return variant.frequencies_digits(30)


def variant_kernel(variant: Variant, target: str, *, as_rope: bool = True) -> Kernel:
    """The :class:`~symproof._export.Kernel` of ``variant`` for ``target``.

    ``as_rope=False`` prints a plain-RoPE variant from its definition (the ``variant`` family), as a
    report lists it, instead of re-running the RoPE claims for the tuned kernel."""
    check_target(variant, target)
    if _takes_call_length(variant):
        from .._export._call_length import reads_length

        return Kernel("call-length", variant, module_name("symproof_rope_", variant.name),
                      tuple(call_length_provenance(variant, target, variant.attention_scaling(),
                                                   reads_length(variant))))
    name = module_name("symproof_variant_", variant.name)
    if variant.kind == "dense":  # exp(sum_a m_a A_a): scaling and squaring, in its own family
        return Kernel("dense", variant, name, tuple(variant_provenance(variant, target)))
    if variant.kind == "bias" and len(variant.axes) > 1:  # Swin: position vectors, in their own family
        return Kernel("bias-axes", variant, name, tuple(variant_provenance(variant, target)))
    # a declared range 0..N: the variant family, whose kernels refuse the positions past it
    # (a file with heads: the variant family, whose kernels take the head index; a mask: the variant family
    # too, which prints it -- the tuned RoPE bodies have none)
    a = (plain_rope_factor(variant) if as_rope and variant.last_position is None and not variant.per_head
         and variant.mask is None else None)
    if a is None:
        return Kernel("variant", variant, name, tuple(variant_provenance(variant, target)))
    from .._export._symbolic import rope_spec

    spec = rope_spec(head_dim=variant.width, rotary_dim=variant.rotated_width, denominator=variant.freq_denominator,
                     pairing=variant.pairing, freqs=[a * w for w in _frequencies_for_export(variant)])
    return Kernel("rope", spec, name, tuple(plain_variant_provenance(variant, spec, target, _rope_claims())))


@functools.lru_cache(maxsize=None)
def _rope_claims() -> tuple:
    """The RoPE claims' verdicts, run once per process: the same for every plain-RoPE variant and
    target (the kernel check writes three targets, ``--export`` then one)."""
    from ..kernels._export import verified_claims

    return tuple(verified_claims("rope"))


def variant_source(variant: Variant, target: str, *, as_rope: bool = False) -> dict:
    """``{file name: text}`` of the standalone kernel for ``target`` (see :func:`variant_kernel`)."""
    return kernel_files(variant_kernel(variant, target, as_rope=as_rope), target)


def export_variant(variant: Variant, folder, target: str = "numpy", *, option: str = "--export") -> list:
    """Write the variant's kernel for ``target`` into ``folder``; return the paths written."""
    return write_kernel(variant_kernel(variant, target), target, folder, option=option)
