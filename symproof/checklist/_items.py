"""The chapter's checklist (7.5) as runs of a real model: each item holds, fails with a witness, or does not apply.

Every comparison is of logits, relative to the largest reference logit, in units of the rounding of the
model's dtype (``ModelUnderTest.unit``).  Two tolerances, neither tuned per model:

- **same positions** (batching, caching, packing with reset positions): the two computations differ only in
  the order of floating-point sums, so the bound is ``64 (depth + 1)`` units;
- **shifted positions** (the shift item, packing without the reset): transformers computes the rotary angle
  ``position x inv_freq`` in the dtype of ``inv_freq`` (float32, even in a float64 model), so an angle is off by
  up to ``(largest position + 1)`` of *that* unit; the bound is ``64 (depth + 1) (1 + (p_max + 1) u_angle / u)``
  units.

When two runs differ, the witness names the input, the token, the first layer whose output parts (from the
hidden states, when the model returns them) and the largest difference in units.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field

import torch

from ._model import ModelUnderTest

__all__ = ["Item", "Difference", "ITEMS", "HOLDS", "FAILS", "NOT_APPLICABLE"]

HOLDS, FAILS, NOT_APPLICABLE = "holds", "fails", "not applicable"

#: lengths of the runs: short enough for CI on two cores, long enough for a few positions of each kind
LENGTH = 8
LEFT_PADS = (0, 3, 5)         # pads before each row of the left-padded batch
DOCUMENTS = (3, 5)            # lengths of the documents packed in one row
PREFILL, CHUNK = 3, 2         # the cache item's prefill and chunk lengths
SHIFT = 16                    # the constant added to every position by the shift item
#: the longest regime-change run (tokens) the cache item makes; longer thresholds are reported, not run
REGIME_CAP = 8192


@dataclass
class Difference:
    units: float        # largest |got - ref| / (unit x largest |ref|)
    token: int          # the first token past the tolerance (else the largest difference) in the compared run
    layer: str          # the first layer whose output parts, or why it is not known


@dataclass
class Item:
    name: str
    title: str
    status: str
    summary: str
    tolerance: str = ""
    witness: dict | None = None
    notes: list = field(default_factory=list)
    seconds: float = 0.0  # wall time of the item's runs

    def as_dict(self) -> dict:
        return {"item": self.name, "title": self.title, "status": self.status, "summary": self.summary,
                "tolerance": self.tolerance, "witness": self.witness, "notes": list(self.notes),
                "seconds": round(self.seconds, 2)}


def _same_positions_tolerance(model) -> float:
    return 64.0 * (model.depth + 1)


def _shifted_tolerance(model, largest_position: int) -> float:
    return _same_positions_tolerance(model) * (1 + (largest_position + 1) * model.angle_unit / model.unit)


def _tolerance_text(model, units: float) -> str:
    return f"{units:.3g} units of {model.unit:.3g} ({str(model.dtype).replace('torch.', '')}, depth {model.depth})"


def difference(model, got, ref, got_hidden=None, ref_hidden=None, tolerance=None):
    """The largest difference of ``got`` from ``ref`` (logits, [1, T, V]) and the first layer past ``tolerance``."""
    scale = max(float(ref.abs().max()), torch.finfo(model.dtype).tiny)
    per_token = (got.double() - ref.double()).abs().amax(dim=-1)[0] / (model.unit * scale)
    per_token = torch.nan_to_num(per_token, nan=float("inf"))  # a NaN is a difference, never a pass
    units = float(per_token.max())
    beyond = (per_token > tolerance).nonzero() if tolerance is not None else ()
    token = int(beyond[0]) if len(beyond) else int(per_token.argmax())  # the first token past it: the witness
    layer = "not known (the model returns no hidden states)"
    if got_hidden is not None and ref_hidden is not None and len(got_hidden) == len(ref_hidden):
        layer = "none before the logits"
        for index, (g, r) in enumerate(zip(got_hidden, ref_hidden)):
            if g.shape != r.shape:
                break
            hidden_scale = max(float(r.abs().max()), torch.finfo(model.dtype).tiny)
            gap = torch.nan_to_num((g.double() - r.double()).abs(), nan=float("inf")).max()
            if float(gap) / (model.unit * hidden_scale) > tolerance:
                layer = "the embeddings (before any decoder layer)" if index == 0 else \
                    f"decoder layer {index - 1} (of {len(ref_hidden) - 1})"
                break
    return Difference(units, token, layer)


def _hidden_slice(hidden, row, start, stop):
    return None if hidden is None else tuple(h[row:row + 1, start:stop] for h in hidden)


def _rounding_of_a_shift(model, diff: Difference, largest_position: int) -> str:
    """Say so when a difference is no larger than the rounding of angles at shifted positions."""
    if diff.units <= _shifted_tolerance(model, largest_position):
        return (" (no more than the rounding of shifted angles: the positions used differ from those passed by "
                "a constant per sequence, which a relative model only sees through rounding)")
    return ""


def _fails(model, name, title, summary, tolerance, where: dict, diff: Difference, **extra):
    units = round(diff.units, 1) if diff.units != float("inf") else "NaN or infinite output"
    witness = {**where, "token": diff.token, "first_layer": diff.layer, "units": units,
               "tolerance_units": round(tolerance, 1), **extra}
    return Item(name, title, FAILS, summary, _tolerance_text(model, tolerance), witness)


# -- left padding ---------------------------------------------------------------------------------------------


def left_padding(model) -> Item:
    title = "a left-padded batch, positions from the attention mask, equals each row alone"
    tolerance = _same_positions_tolerance(model)
    rows = [model.tokens(LENGTH - pads, stream=row) for row, pads in enumerate(LEFT_PADS)]
    ids = torch.full((len(rows), LENGTH), model.pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), LENGTH), dtype=torch.long)
    for row, (pads, tokens) in enumerate(zip(LEFT_PADS, rows)):
        ids[row, pads:] = tokens[0]
        mask[row, pads:] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # as generate() numbers them; pads get 0, never read
    alone = [model(tokens) for tokens in rows]

    def worst(run):
        logits, hidden = run
        found = None
        for row, (pads, (ref, ref_hidden)) in enumerate(zip(LEFT_PADS, alone)):
            diff = difference(model, logits[row:row + 1, pads:], ref, _hidden_slice(hidden, row, pads, None),
                              ref_hidden, tolerance)
            if found is None or diff.units > found[2].units:
                found = (row, pads, diff)
        return found

    batched = model(ids, mask=mask, positions=positions)
    control = difference(model, batched[0][:1], alone[0][0], _hidden_slice(batched[1], 0, 0, None), alone[0][1],
                         tolerance)
    coarser = torch.finfo(torch.float32).eps / 2
    notes = []
    if control.units > tolerance and model.unit < coarser:
        # row 0 has no pads: what moves it is the batch, not a position -- the model rounds some of its work
        # (norms, rotations) in float32, so every row is judged in float32's unit
        tolerance *= coarser / model.unit
        notes.append(f"row 0 (no pads) differs from the row alone by {control.units:.3g} units from {control.layer} "
                     f"on: the model computes parts in float32, so the rows are judged in float32's rounding")
    row, pads, diff = worst(batched)
    if diff.units > tolerance:
        item = _fails(model, "left_padding", title,
                      f"row {row} ({pads} pads) differs from the row alone by {diff.units:.3g} units"
                      + _rounding_of_a_shift(model, diff, LENGTH),
                      tolerance, {"input": f"row {row} of a batch of {len(rows)}, {pads} left pads, "
                                           f"position_ids = cumsum(attention_mask) - 1"}, diff)
    else:
        item = Item("left_padding", title, HOLDS,
                    f"every row equals the row alone (largest difference {diff.units:.3g} units)",
                    _tolerance_text(model, tolerance))
    item.notes.extend(notes)
    row, pads, diff = worst(model(ids, mask=mask))
    if diff.units > tolerance:
        item.notes.append(f"without position_ids the model does not derive positions from the attention mask: "
                          f"row {row} ({pads} pads) differs from the row alone by {diff.units:.3g} units from "
                          f"{diff.layer} on (its tokens are numbered by column)"
                          f"{_rounding_of_a_shift(model, diff, LENGTH)}"
                          f"; pass position_ids = cumsum(attention_mask) - 1 as generate() does")
    else:
        item.notes.append("without position_ids every row equals the row alone" + (
            "" if model.angle_unit > model.unit and not notes else
            " (at this rounding a constant offset of a row's positions is invisible, so this does not tell "
            "whether the model derives positions from the mask)"))
    return item


# -- packing --------------------------------------------------------------------------------------------------


def _document_mask(model, lengths) -> torch.Tensor:
    document = torch.cat([torch.full((n,), i) for i, n in enumerate(lengths)])
    total = len(document)
    causal = torch.arange(total)[:, None] >= torch.arange(total)[None, :]
    allowed = causal & (document[:, None] == document[None, :])
    blocked = torch.zeros((1, 1, total, total), dtype=model.dtype)
    return blocked.masked_fill(~allowed, torch.finfo(model.dtype).min)


def packing(model) -> Item:
    title = "documents packed in one row, positions reset and a per-document mask, equal the documents alone"
    docs = [model.tokens(n, stream=10 + i) for i, n in enumerate(DOCUMENTS)]
    ids = torch.cat(docs, dim=1)
    reset = torch.cat([torch.arange(n) for n in DOCUMENTS])[None]
    columns = torch.arange(ids.shape[1])[None]
    alone = [model(d) for d in docs]
    same = _same_positions_tolerance(model)
    shifted = _shifted_tolerance(model, ids.shape[1])

    def worst(run, tolerance):
        logits, hidden = run
        found, start = None, 0
        for index, (n, (ref, ref_hidden)) in enumerate(zip(DOCUMENTS, alone)):
            diff = difference(model, logits[:, start:start + n], ref, _hidden_slice(hidden, 0, start, start + n),
                              ref_hidden, tolerance)
            if found is None or diff.units > found[1].units:
                found = (index, diff)
            start += n
        return found

    try:
        packed = model(ids, mask=_document_mask(model, DOCUMENTS), positions=reset)
    except Exception as err:  # noqa: BLE001 -- a model that refuses a 4-D mask: the item does not apply
        return Item("packing", title, NOT_APPLICABLE,
                    f"the model does not accept a 4-D attention mask ({type(err).__name__}: {err})"[:300])
    index, diff = worst(packed, same)
    where = {"input": f"documents of lengths {list(DOCUMENTS)} packed in one row, positions reset, "
                      f"block-diagonal causal 4-D mask", "document": index}
    if diff.units > same:
        item = _fails(model, "packing", title, f"document {index} differs from the document alone by "
                      f"{diff.units:.3g} units" + _rounding_of_a_shift(model, diff, ids.shape[1]), same, where, diff)
    else:
        item = Item("packing", title, HOLDS, f"every document equals the document alone (largest difference "
                    f"{diff.units:.3g} units)", _tolerance_text(model, same))
    index, diff = worst(model(ids, positions=reset), same)
    item.notes.append(
        f"positions reset without a mask: document {index} differs by {diff.units:.3g} units from {diff.layer} "
        f"on (the model attends across documents)" if diff.units > same else
        "positions reset without a mask: the model finds the documents from the positions (equal)")
    index, diff = worst(model(ids, mask=_document_mask(model, DOCUMENTS), positions=columns), shifted)
    item.notes.append(
        f"per-document mask without the reset: document {index} differs by {diff.units:.3g} units from "
        f"{diff.layer} on (scores depend on absolute positions)" if diff.units > shifted else
        f"per-document mask without the reset: equal up to the rounding of shifted angles ({diff.units:.3g} "
        f"units; scores depend only on relative positions)")
    return item


# -- KV cache -------------------------------------------------------------------------------------------------

#: why transformers' cached and full computations differ by design, per rope type
REGIME_MECHANISMS = {
    "dynamic": "dynamic NTK's grow-only base: transformers recomputes the base from the longest position of each "
               "call (dynamic_rope_update), so keys cached by calls up to the original length keep the original "
               "base while a full forward past it rotates every position with the grown base",
    "longrope": "LongRoPE's factor switch: transformers uses short_factor for calls up to "
                "original_max_position_embeddings and long_factor past it, so keys cached by shorter calls keep "
                "the short factors while a full forward past it rotates every position with the long ones",
}


def _incremental(model, ids, steps):
    """Logits and hidden states of ``ids`` fed through one cache in calls of the lengths ``steps``."""
    cache = model.cache_factory()
    logits, hidden, start = [], [], 0
    for length in steps:
        part, part_hidden = model(ids[:, start:start + length], cache=cache,
                                  positions=torch.arange(start, start + length)[None])
        logits.append(part)
        hidden.append(part_hidden)
        start += length
    joined = None if any(h is None for h in hidden) else tuple(torch.cat(layer, dim=1) for layer in zip(*hidden))
    return torch.cat(logits, dim=1), joined


def _schedule(split, length):
    schedule = [split[0]]
    while sum(schedule) < length:
        schedule.append(min(split[1], length - sum(schedule)))
    return schedule


def kv_cache(model) -> Item:
    title = "prefill then one token at a time, and in chunks, with a DynamicCache, equals the full forward"
    if model.cache_keyword is None:
        return Item("kv_cache", title, NOT_APPLICABLE, "the model's forward takes neither `cache` nor "
                                                       "`past_key_values`")
    tolerance = _same_positions_tolerance(model)
    runs = [("one token at a time", LENGTH, (PREFILL, 1)), ("in chunks", LENGTH, (PREFILL, CHUNK))]
    threshold = model.regime_length()
    notes = []
    if threshold is not None and threshold + 2 <= REGIME_CAP:
        runs.append(("across the regime change", threshold + 2, (threshold, 1)))
    elif threshold is not None:
        notes.append(f"the {model.rope_type} regime change at {threshold} tokens is past the {REGIME_CAP}-token "
                     f"cap of this run: not checked")
    for label, length, split in runs:
        ids = model.tokens(length, stream=20)
        saved = model.rotary_state()
        schedule = _schedule(split, length)
        got, got_hidden = _incremental(model, ids, schedule)  # first: a full forward first would grow the base
        model.restore(saved)
        ref, ref_hidden = model(ids)
        model.restore(saved)
        diff = difference(model, got, ref, got_hidden, ref_hidden, tolerance)
        if diff.units > tolerance:
            calls = f"prefill of {split[0]}, then calls of {split[1]}"
            summary = f"{label}: position {diff.token} differs from the full forward by {diff.units:.3g} units"
            extra = {}
            if label == "across the regime change":
                extra["mechanism"] = REGIME_MECHANISMS[model.rope_type]
                summary += f" ({model.rope_type} regime change at {threshold} tokens; known transformers behaviour)"
            item = _fails(model, "kv_cache", title, summary, tolerance,
                          {"input": f"{length} tokens, {calls}, position_ids passed", "run": label}, diff, **extra)
            item.notes.extend(notes)
            return item
        notes.append(f"{label}: largest difference {diff.units:.3g} units")
    return Item("kv_cache", title, HOLDS, "every step equals the full forward", _tolerance_text(model, tolerance),
                notes=notes)


# -- shift ----------------------------------------------------------------------------------------------------


def shift(model) -> Item:
    title = f"logits unchanged when every position is shifted by {SHIFT}"
    ids = model.tokens(LENGTH, stream=30)
    positions = torch.arange(LENGTH)[None]
    tolerance = _shifted_tolerance(model, LENGTH + SHIFT)
    saved = model.rotary_state()
    ref, ref_hidden = model(ids, positions=positions)
    got, got_hidden = model(ids, positions=positions + SHIFT)
    model.restore(saved)
    diff = difference(model, got, ref, got_hidden, ref_hidden, tolerance)
    text = (f"{_tolerance_text(model, tolerance)}: float{torch.finfo(model.dtype).bits} sums plus angles rounded "
            f"in units of {model.angle_unit:.3g} at positions up to {LENGTH + SHIFT}")
    if diff.units > tolerance:
        item = _fails(model, "shift", title, f"position {diff.token} differs by {diff.units:.3g} units: an "
                      f"absolute component enters at {diff.layer}", tolerance,
                      {"input": f"{LENGTH} tokens at positions 0..{LENGTH - 1} and {SHIFT}..{LENGTH - 1 + SHIFT}"},
                      diff)
        item.tolerance = text
        if model.regime_length() is not None and LENGTH + SHIFT > model.regime_length():
            item.notes.append(f"the shifted run passes the {model.rope_type} regime change at "
                              f"{model.regime_length()} tokens")
        return item
    return Item("shift", title, HOLDS, f"largest difference {diff.units:.3g} units", text)


# -- reload ---------------------------------------------------------------------------------------------------


def _doubled_theta(folder) -> bool:
    """Double the saved config's rope_theta in place; False when it has none."""
    import json
    import os

    path = os.path.join(folder, "config.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    table = data.get("rope_parameters") if isinstance(data.get("rope_parameters"), dict) else data
    tables = table.values() if isinstance(table, dict) and all(isinstance(v, dict) for v in table.values()) \
        and table else [table]
    changed = False
    for entry in tables:
        if isinstance(entry, dict) and isinstance(entry.get("rope_theta"), (int, float)):
            entry["rope_theta"] = entry["rope_theta"] * 2
            changed = True
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    return changed


def _rebuilt_buffers(original, reloaded) -> list:
    """Buffers of the reloaded module that differ from the original's (a table recomputed in another dtype)."""
    theirs = dict(reloaded.named_buffers())
    return [name for name, buffer in original.named_buffers()
            if name in theirs and (theirs[name].shape != buffer.shape or not torch.equal(theirs[name], buffer))]


def reload(model) -> Item:
    title = "save_pretrained then from_pretrained gives bit-identical logits (same dtype and attention)"
    module = model.module
    loader = getattr(type(module), "from_pretrained", None)
    if not hasattr(module, "save_pretrained") or loader is None:
        return Item("reload", title, NOT_APPLICABLE, "the model has no save_pretrained/from_pretrained")
    ids = model.tokens(LENGTH, stream=40)
    ref, ref_hidden = model(ids)
    folder = tempfile.mkdtemp(prefix="symproof-checklist-")
    try:
        module.save_pretrained(folder)
        options = {"dtype": model.dtype}
        if model.attn_implementation:
            options["attn_implementation"] = model.attn_implementation
        again = ModelUnderTest(loader(folder, **options))
        got, got_hidden = again(ids)
        rebuilt = _rebuilt_buffers(module, again.module)
        notes = []
        bare = ModelUnderTest(loader(folder, dtype=model.dtype))
        if model.attn_implementation and bare.attn_implementation != model.attn_implementation:
            units = difference(model, bare(ids)[0], ref).units
            notes.append(f"from_pretrained without attn_implementation comes back {bare.attn_implementation}, not "
                         f"{model.attn_implementation} ({units:.3g} units off): transformers does not save the "
                         f"attention implementation, so pass it again on reload")
        if _doubled_theta(folder):
            changed = ModelUnderTest(loader(folder, **options))(ids)[0]
            units = difference(model, changed, ref).units
            notes.append(f"a reload with rope_theta doubled changes the logits by {units:.3g} units (the comparison "
                         f"sees the rope fields)" if units > 0 else
                         "a reload with rope_theta doubled leaves the logits unchanged: the saved rope_theta is "
                         "not what the model uses")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not torch.equal(got, ref):
        diff = difference(model, got, ref, got_hidden, ref_hidden, 0.0)
        item = _fails(model, "reload", title, f"the reloaded model differs by {diff.units:.3g} units",
                      0.0, {"input": f"{LENGTH} tokens, reloaded with {options}"}, diff)
        item.tolerance = "bit-identical"
        if rebuilt:
            item.witness["buffers_rebuilt_otherwise"] = rebuilt
            item.summary += (f"; buffers not saved and rebuilt otherwise on load: {', '.join(rebuilt[:3])}"
                             f"{' ...' if len(rebuilt) > 3 else ''}")
        item.notes.extend(notes)
        return item
    return Item("reload", title, HOLDS, "the reloaded model's logits are bit-identical", "bit-identical",
                notes=notes)


#: the items, in the chapter's order; the name is the key of ``--only`` and of the JSON
ITEMS = {
    "left_padding": left_padding,
    "packing": packing,
    "kv_cache": kv_cache,
    "shift": shift,
    "reload": reload,
}
