"""What a model config is read as: its rotary regimes, the layers using each, the layout of a head.

:class:`ModelRope` is the model's map, :class:`Regime` one rotary map and its
layers (a :class:`~symproof.variants.Variant`, or NoPE); the helpers below
print them (layer ranges, M-RoPE bands, the attention-scaling note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp

from .._ground._errors import VariantFileError
from ..variants._spec import Variant

__all__ = ["ModelRope", "Regime", "attention_scaling", "scaling_note", "cfg_number_text"]


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")[:64]
    return slug if slug and slug[0].isalnum() else "model-config"


@dataclass(frozen=True)
class Regime:
    """One rotary map of a model and the decoder layers that use it (``variant`` None: NoPE, the identity)."""

    name: str
    layers: tuple
    variant: Variant | None
    layer_type: str | None = None  # the HF layer_types value the regime was read for, if any
    #: the scores the attention computes when it does more than rotate (Ministral 3's query scale): the rotation
    #: followed by it, the variant whose properties are decided; None: the rotation is the whole position map
    attention: Variant | None = None

    @property
    def checked(self) -> Variant | None:
        """The variant whose properties are the regime's: the attention's when it scales, else the rotation."""
        return self.attention if self.attention is not None else self.variant


@dataclass(frozen=True)
class ModelRope:
    """A model config read as HF transformers reads it: its rotary regimes and how a head is laid out.

    ``head_width``: coordinates of a query/key head; the rotary block is ``[offset, offset + w)`` of it
    (``w`` the regime variant's width; DeepSeek: after ``qk_nope_head_dim`` copied coordinates);
    ``output_order``: HF's permutation of the rotated block after the rotation (DeepSeek-V3's
    ``rope_interleave``: adjacent pairs in, ``[even | odd]`` out), else None; ``mrope_section``: the
    t, h, w bands of pairs (Qwen2-VL), else None; ``layer_regimes``: one regime name per decoder layer;
    ``regime_widths``: ``((regime, head width), ...)`` when the head width differs per regime (Gemma 4's
    per-layer ``head_dim``; ``head_width`` is then the rotating regimes' largest), else ``()``."""

    model_type: str
    source: str
    name: str
    head_width: int
    offset: int
    output_order: tuple | None
    mrope_section: tuple | None
    regimes: tuple
    layer_regimes: tuple
    notes: tuple = ()
    regime_widths: tuple = ()

    def notes_beyond(self, variant) -> tuple:
        """The model's notes ``variant`` (one of its regimes) lacks: class defaults filled in, facts of the family,
        how the type was identified; all but the layer list, which a regime's own output states."""
        return tuple(n for n in self.notes if n not in variant.notes and not n.startswith(LAYERS_NOTE))

    def width_of(self, name: str) -> int:
        """The head width of regime ``name``'s layers."""
        return dict(self.regime_widths).get(name, self.head_width)

    @property
    def names(self) -> tuple:
        return tuple(r.name for r in self.regimes)

    def regime(self, name: str | None = None) -> Regime:
        """The regime ``name``; ``None`` when there is only one."""
        if name is None:
            if len(self.regimes) != 1:
                raise VariantFileError(f"{self.source}: the {self.model_type} config has {len(self.regimes)} rotary "
                                       f"regimes ({', '.join(self.names)}); expected regime= one of them")
            return self.regimes[0]
        for r in self.regimes:
            if r.name == name:
                return r
        raise VariantFileError(f"{self.source}: no regime {str(name)[:40]!r}; expected one of {', '.join(self.names)}")

    @property
    def plain(self) -> bool:
        """Whether one regime's variant alone is the whole map (no offset, permutation, M-RoPE or NoPE)."""
        return (len(self.regimes) == 1 and self.regimes[0].variant is not None and self.offset == 0
                and self.output_order is None and self.mrope_section is None)


#: how the note listing each regime's layers starts
LAYERS_NOTE = "layers: "

_HALF_HOW = "rotate_half, half pairs (r, r + d/2)"

def _bands(section):
    lo = 0
    for k, size in enumerate(section):
        yield "thw"[k % 3], lo, lo + size
        lo += size


def _ranges(layers) -> str:
    """Layer indices as ``0-4, 6, 8-9``."""
    if not layers:
        return "none"
    out, start, last = [], layers[0], layers[0]
    for i in list(layers[1:]) + [None]:
        if i is not None and i == last + 1:
            last = i
            continue
        out.append(f"{start}" if start == last else f"{start}-{last}")
        if i is not None:
            start = last = i
    return ", ".join(out)


def attention_scaling(variant: Variant) -> sp.Expr:
    """The exact factor HF multiplies cos and sin by (1 when the variant has none)."""
    return variant.attention_scaling()


def scaling_note(variant: Variant) -> str:
    scaling = attention_scaling(variant)
    if scaling == 1:
        return "attention scaling 1: apply does not scale"
    return (f"attention scaling {sp.N(scaling, 10)}: HF multiplies cos and sin by it, so apply multiplies the "
            "rotated coordinates by it")


def cfg_number_text(value) -> str:
    return "?" if value is None else f"{value:g}"
