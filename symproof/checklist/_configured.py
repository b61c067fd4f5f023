"""Checklist item 6: the rotary tables reached inside the attention layers are the map `symproof check` reads.

The (cos, sin) each attention layer receives (its ``position_embeddings`` argument, caught by a forward
pre-hook) are compared, per layer and per layer type, with ``scale * cos(p * w_r)`` and ``scale * sin(p * w_r)``
where ``w_r`` are the frequencies ``symproof check`` reads from the same config (its float64 kernel at the
call length) and ``scale`` its attention scaling.  Positions run up to the longest call before the map changes
with the call length, so that the low frequencies are seen at large angles.  Tolerance per entry: transformers
computes ``inv_freq`` and ``p * inv_freq`` in float32 (a few roundings each), so an angle is off by up to
``16 p w_r u32``, plus ``8 u32`` for cos/sin.
"""

from __future__ import annotations

import inspect
import re

import torch

from .._ground._errors import SymproofError
from ._items import FAILS, HOLDS, NOT_APPLICABLE, Item

__all__ = ["configured_map", "PROBE_POSITIONS"]

#: positions probed (those below the model's regime or length limit): small ones, then powers of two less one
PROBE_POSITIONS = (0, 1, 2, 3, 7, 31, 127, 511, 2047, 8191, 32767)
_LAYER_INDEX = re.compile(r"(?:^|\.)(\d+)(?:\.|$)")
_U32 = torch.finfo(torch.float32).eps / 2


def _why_not_compared(rope, variant) -> str | None:
    if variant.mixed or len(variant.axes) != 1:
        return "positions on several axes (M-RoPE)"
    if variant.relative is not None or variant.query_scale is not None or variant.key_scale is not None:
        return "a rule beyond a frequency table (relative transform or position-dependent scale)"
    if not variant.standard_block:
        return "a rotation block other than the standard one"
    return None


def _attention_modules(module):
    for name, child in module.named_modules():
        if "Attention" in type(child).__name__ and "position_embeddings" in inspect.signature(child.forward).parameters:
            found = _LAYER_INDEX.findall(name)
            yield (int(found[-1]) if found else 0), name, child


def _captured_tables(model, positions):
    tables = {}
    hooks = []
    for layer, _name, child in _attention_modules(model.module):
        def grab(_module, args, kwargs, layer=layer):
            tables.setdefault(layer, kwargs.get("position_embeddings"))
        hooks.append(child.register_forward_pre_hook(grab, with_kwargs=True))
    saved = model.rotary_state()
    try:
        model(model.tokens(len(positions), stream=50), positions=torch.tensor([positions]))
    finally:
        for hook in hooks:
            hook.remove()
        model.restore(saved)
    return tables


def _per_coordinate(frequencies, width: int, layout: str):
    from ..encodings._definitions import pair_indices

    per_coordinate = torch.empty(width, dtype=torch.float64)
    for r, (a, b) in enumerate(pair_indices(width, layout)):
        per_coordinate[a] = per_coordinate[b] = frequencies[r]
    return per_coordinate


def _compared(model, cos, sin, p, per_coordinate, scale):
    """(largest difference / tolerance, which table, (row, coordinate), used, proved, frequency) of one layout."""
    angle = p * per_coordinate
    bound = scale * (16 * p * per_coordinate * _U32 + 8 * _U32) + 4 * model.unit * scale
    worst = None
    for name, got, proved in (("cos", cos, scale * torch.cos(angle)), ("sin", sin, scale * torch.sin(angle))):
        ratio = (got - proved).abs() / bound
        at = divmod(int(ratio.argmax()), ratio.shape[-1])
        if worst is None or float(ratio.max()) > worst[0]:
            worst = (float(ratio.max()), name, at, float(got[at]), float(proved[at]), float(per_coordinate[at[1]]))
    return worst


def _pairing_of(rope, layer: int) -> str:
    return rope.regime(rope.layer_regimes[layer]).variant.pairing


def configured_map(model) -> Item:
    from ..models import load_model
    from ..variants import build_kernel
    from ..models._model import _ranges as layer_ranges, attention_scaling

    title = "the rotary tables reached inside attention equal the map symproof check reads from the config"
    source = model.config_source
    if source is None:
        if model.config is None or not hasattr(model.config, "to_dict"):
            return Item("configured_map", title, NOT_APPLICABLE, "the model has no transformers config to read")
        source = {k: v for k, v in model.config.to_dict().items() if not k.startswith("_")}
    try:
        rope = load_model(source)
    except SymproofError as err:
        return Item("configured_map", title, NOT_APPLICABLE, f"symproof check does not read this config: {err}"[:400])
    limit = model.regime_length() or int(getattr(model.config, "max_position_embeddings", 0) or 8192)
    positions = [p for p in PROBE_POSITIONS if p < limit]
    tables = _captured_tables(model, positions)
    if not tables:
        return Item("configured_map", title, NOT_APPLICABLE,
                    "no attention layer takes position_embeddings (the transformers convention)")
    notes, compared, worst, nope_with_table, missing, not_compared, relaid = [], 0, None, [], [], {}, {}
    p = torch.tensor(positions, dtype=torch.float64)[:, None]
    for layer in sorted(tables):
        regime = rope.regime(rope.layer_regimes[layer]) if layer < len(rope.layer_regimes) else None
        variant = None if regime is None else regime.variant
        table = tables[layer]
        if variant is None:
            if table is not None:  # transformers hands the table to every layer; a NoPE layer leaves it unused
                nope_with_table.append(layer)
            continue
        if table is None:
            missing.append(layer)
            continue
        why = _why_not_compared(rope, variant)
        frequencies = torch.tensor(build_kernel(variant).frequencies_at(seq_len=max(positions) + 1),
                                   dtype=torch.float64)
        if isinstance(table, torch.Tensor) and table.is_complex():  # freqs_cis: one complex number per pair
            cos, sin = table[0].real.double(), table[0].imag.double()
            layouts = {"one entry per pair": frequencies}
        elif isinstance(table, (tuple, list)) and len(table) == 2:
            cos, sin = (t[0].double() for t in table)
            if positions[0] == 0 and bool((cos[0] == 0).all()) and not bool((sin[0] == 0).all()):
                cos, sin = sin, cos  # at position 0 sin is 0: GPT-J passes (sin, cos)
            # the table's layout is how apply reads it, not necessarily the pairing (GLM builds a half-layout
            # table and re-lays it for adjacent pairs): both are tried, and a layout other than the pairing said
            layouts = {f"{layout} pairs": _per_coordinate(frequencies, variant.rotated_width, layout)
                       for layout in dict.fromkeys((variant.pairing, "half", "adjacent"))}
            if cos.shape[-1] == len(frequencies):  # GPT-OSS: apply reads one cos/sin per pair
                layouts = {"one entry per pair": frequencies}
        else:
            cos = sin = None
            why = why or f"the layer receives a {type(table).__name__}, neither (cos, sin) nor a complex table"
        if why is None and cos.shape[-1] != len(next(iter(layouts.values()))):
            why = f"the table is {cos.shape[-1]} wide where symproof rotates {variant.rotated_width} coordinates"
        if why:
            not_compared.setdefault(why, []).append(layer)
            continue
        scale = float(attention_scaling(variant))
        found = min((_compared(model, cos, sin, p, per_coordinate, scale) + (layout,)
                     for layout, per_coordinate in layouts.items()), key=lambda f: f[0])
        if found[-1] != next(iter(layouts)):
            relaid.setdefault(found[-1], []).append(layer)
        ratio, name, (row, coordinate), got, proved, frequency, _layout = found
        if worst is None or ratio > worst[0]:
            worst = (ratio, layer, name, positions[row], coordinate, got, proved, frequency)
        compared += 1
    notes.extend(f"layers {layer_ranges(layers)}: not compared ({why})" for why, layers in not_compared.items())
    notes.extend(f"layers {layer_ranges(layers)}: the table is laid out as {layout}, not as the {variant_pairing} "
                 f"pairs rotated (apply re-lays it; `symproof audit` checks the pairing)"
                 for layout, layers in relaid.items() for variant_pairing in [_pairing_of(rope, layers[0])])
    if nope_with_table:
        notes.append(f"layers {layer_ranges(nope_with_table)}: symproof reads NoPE; they receive a table too "
                     f"(transformers passes it to every layer; whether a layer applies it is not seen by this item)")
    if missing:
        notes.append(f"layers {layer_ranges(missing)}: symproof reads a rotary map but they receive no table")
    if compared == 0 and not missing:
        return Item("configured_map", title, NOT_APPLICABLE, "no layer's table could be compared", notes=notes)
    if worst is None:
        return Item("configured_map", title, FAILS, notes[-1], notes=notes[:-1])
    ratio, layer, name, position, coordinate, got, proved, frequency = worst
    tolerance = ("per entry: scale (16 p w u32 + 8 u32) + 4 u (inv_freq and p w in float32, a few roundings each; "
                 "cos/sin rounding; the model's dtype)")
    if missing:
        return Item("configured_map", title, FAILS, notes[-1], tolerance, {"layers": missing}, notes[:-1])
    if ratio > 1:
        witness = {"input": f"positions {positions}", "layer": layer, "table": name, "position": position,
                   "coordinate": coordinate, "used": got, "proved": proved, "proved_frequency": frequency,
                   "times_tolerance": round(ratio, 1)}
        return Item("configured_map", title, FAILS, f"layer {layer}: {name} at position {position}, coordinate "
                    f"{coordinate} is {got:.9g} where the config's map gives {proved:.9g}", tolerance, witness, notes)
    return Item("configured_map", title, HOLDS, f"{compared} layers' tables equal the config's map (largest "
                f"difference {ratio:.2g} of the tolerance, positions up to {max(positions)})", tolerance,
                notes=notes)
