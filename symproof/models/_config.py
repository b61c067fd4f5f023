"""A checkpoint's ``config.json``, read the way HF transformers 5.24 reads it: its rotary regimes.

Users do not start from a description file: they have the config published
with a checkpoint, and the bugs they hit are convention bugs (rotate-half
against interleaved pairs, the partial width in the exponent, misread YaRN or
Llama-3 factors, dynamic NTK caches, LongRoPE's short/long switch, layers that
rotate differently).  What differs between families is one row of data each
(:mod:`._families`); this reader follows a row key by key:

- ``rope_parameters`` (new) or ``rope_scaling`` (legacy; it wins when both are
  set, as in HF), with ``rope_type`` or the legacy ``type``; Gemma 3 and
  ModernBERT: one table per layer type (legacy ``rope_scaling`` updates the
  full layers' table, ModernBERT's both);
- ``rope_theta`` inside the rope parameters, else the row's top-level keys,
  else the config class's ``default_theta``;
- the rotated width ``int(head_dim * partial_rotary_factor)`` with the row's
  key and default, the head width by the row's rule, the rotated block at the
  start of the head or (DeepSeek) after ``qk_nope_head_dim`` copied coordinates;
- ``original_max_position_embeddings`` at top level first (HF gives it
  priority), else inside the scaling, else ``max_position_embeddings``;
- the layer pattern (``layer_types``, ``sliding_window_pattern``,
  ``global_attn_every_n_layers``, ``no_rope_layers``, ``no_rope_layer_interval``)
  as each config class derives it: layers sharing one rotary map are one regime.

A key that looks like it changes the rotary map and that the row does not read
is refused (one line naming it), never ignored; so is a key of a rope table
that HF does not read for its rope type.  Each regime's map is turned into the
description-file document and validated by :func:`parse_variant`, so a config
and a TOML file go through one definition.  Every choice (pairing, rotated
width, base, defaults taken) is kept in ``Variant.notes`` / ``ModelRope.notes``
and printed with the verdicts.

Longer than 600 lines: the reader follows a family row key by key in one class (_Reader); the parts
that stand alone are their own modules (_json, _rules, _model, _families).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Mapping


from .._ground._errors import VariantFileError
from .._ground._text import did_you_mean
from ._families import (CLASS_DEFAULT_KEYS, CLASS_DEFAULTS, COMMON_READS, FAMILIES, HEAD_KEYS, INERT_UNREAD, LAYER_PATTERN,
                        LAYER_THETA, MROPE, MROPE_DEFAULT, READ_BY_ATTENTION, ROPE_LIKE, TABLE_KEYS, TEXT_CONFIGS, Family)
from ._json import read_config
from ._model import _HALF_HOW, LAYERS_NOTE, ModelRope, Regime, _bands, _ranges, _slug, scaling_note
from ._rules import _frequencies, _positions
from ..variants._spec import MAX_WIDTH, Variant, parse_variant

__all__ = ["load_model", "load_model_config", "parse_model", "parse_model_config", "model_from_identified",
           "read_through_transformers", "reads_through_transformers", "FAMILIES", "ROPE_TYPES"]

#: the rope types read (HF's ROPE_INIT_FUNCTIONS, plus "default")
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")
_MAX_NUMBER = 1e12
_MAX_HEADS = 4096
_MAX_HIDDEN = 1 << 20


def load_model_config(path_or_dict: str | os.PathLike | Mapping, regime: str | None = None) -> Variant:
    """The :class:`Variant` of a model config: a ``config.json`` path or the parsed dict.

    A model whose layers use several rotary maps (Gemma 3, ModernBERT, SmolLM3, Llama 4, Cohere2) needs
    ``regime=`` (a name of :func:`load_model`'s regimes); the variant of a DeepSeek config is its rotated
    block (``qk_rope_head_dim``), the variant of a Qwen2-VL config its text positions.  :func:`load_model`
    gives the whole model: every regime, the layers using each, the layout of a head."""
    if isinstance(path_or_dict, Mapping):
        return parse_model_config(path_or_dict, "<config>", regime)
    source = os.fspath(path_or_dict)
    return parse_model_config(read_config(source), source, regime)


# -- typed access --------------------------------------------------------------------------------


class _Config:
    """Typed look-ups that name the file and key in every error."""

    def __init__(self, data: Mapping, source: str, prefix: str = ""):
        # prefix: where ``data`` sits in the file ("text_config." for a multimodal config's text model)
        self.data, self.source, self.prefix = data, source, prefix

    def fail(self, key: str, message: str) -> VariantFileError:
        full = key if key.startswith(self.prefix) else self.prefix + key
        return VariantFileError(f"{self.source}: key '{full}': {message}")

    def number(self, table: Mapping, key: str, where: str, *, low=0.0, high=_MAX_NUMBER, strict_low=True,
               integer=False):
        value = table.get(key)
        if value is None:
            return None
        full = f"{where}{key}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(full, f"expected {'an integer' if integer else 'a number'}, got {value!r}"[:200])
        if integer and not (isinstance(value, int) or float(value).is_integer()):
            raise self.fail(full, f"expected an integer, got {value!r}")
        # compare before any float conversion: JSON integers may have thousands of digits
        if value > high or value < low or (strict_low and value == low) or not math.isfinite(value):
            bound = f"{'>' if strict_low else '>='} {low:g} and <= {high:g}"
            raise self.fail(full, f"expected a number {bound}, got {value!r}"[:200])
        return int(value) if integer else value

    def count(self, table: Mapping, key: str, where: str, high: int):
        return self.number(table, key, where, low=0, high=high, integer=True)

    def factors(self, table: Mapping, key: str, where: str, pairs: int) -> list:
        value = table.get(key)
        full = f"{where}{key}"
        if not isinstance(value, list):
            raise self.fail(full, f"expected a list of {pairs} positive numbers (one per rotated pair), got "
                                  f"{type(value).__name__}")
        if len(value) != pairs:
            raise self.fail(full, f"expected {pairs} numbers (rotary width / 2), got {len(value)}")
        for k in range(len(value)):
            item = value[k]
            if isinstance(item, bool) or not isinstance(item, (int, float)) or not 0 < item <= _MAX_NUMBER \
                    or not math.isfinite(item):
                raise self.fail(f"{full}[{k}]", f"expected a positive number, got {item!r}"[:200])
        return list(value)


def load_model(path_or_dict: str | os.PathLike | Mapping) -> ModelRope:
    """Every rotary regime of a model config (a ``config.json`` path or the parsed dict)."""
    if isinstance(path_or_dict, Mapping):
        return parse_model(path_or_dict, "<config>")
    source = os.fspath(path_or_dict)
    return parse_model(read_config(source), source)


def reads_through_transformers(path_or_dict) -> bool:
    """Whether the config's model type has no row and would be read through transformers (which takes
    seconds: importing it and running the shrunk model), so a caller can give the load a larger budget."""
    try:
        data = path_or_dict if isinstance(path_or_dict, Mapping) else read_config(os.fspath(path_or_dict))
    except VariantFileError:
        return False
    model_type = data.get("model_type") if isinstance(data, Mapping) else None
    if not isinstance(model_type, str) or model_type in FAMILIES or model_type in TEXT_CONFIGS:
        return False
    from ._hf_read import transformers_available

    return transformers_available()


def parse_model_config(data: Mapping, source: str = "<config>", regime: str | None = None) -> Variant:
    """The :class:`Variant` of one regime of a parsed config (see :func:`load_model_config`)."""
    model = parse_model(data, source)
    chosen = model.regime(regime)
    if chosen.variant is None:
        raise VariantFileError(f"{source}: regime {chosen.name!r} has no positional encoding (NoPE layers): no "
                               "rotary map to read")
    return with_model_notes(model, chosen.variant)


def with_model_notes(model: ModelRope, variant: Variant) -> Variant:
    """``variant``, a regime of ``model``, with the model's notes it lacks after its own: what the config
    left to defaults or the family states is said wherever the variant is printed."""
    return _noted(variant, model.notes_beyond(variant))


def _text_config(cfg: _Config, model_type: str):
    """``(data, model_type, where)`` of the text model a wrapper config describes (Qwen2-VL, Gemma 3, Llama 4)."""
    data = cfg.data
    text_type, top_level_ok = TEXT_CONFIGS[model_type]
    text = data.get("text_config")
    if text is None:
        if not top_level_ok:
            # HF's wrapper builds its text model from the text config class's defaults (read below, each named)
            return {}, text_type, "text_config."
        return data, text_type, ""
    if not isinstance(text, Mapping):
        raise cfg.fail("text_config", f"expected an object of the text model's keys, got {type(text).__name__}")
    inner = text.get("model_type", text_type)
    # HF reads the text model's keys from text_config; a rope key also set at top level must say the same
    for key, value in data.items():
        if key != "text_config" and ROPE_LIKE.search(key) and key in text and _same(text[key]) != _same(value):
            raise cfg.fail(key, f"differs from text_config.{key}; HF reads text_config's ({str(text[key])[:60]}), "
                                "expected the same value or no top-level key")
    return text, inner, "text_config."


def _same(value):
    """A rope table as HF resolves it (``type`` or ``rope_type``, Qwen2-VL's ``mrope`` = ``default``), for
    comparing a top-level copy with ``text_config``'s; other values as they are."""
    if not isinstance(value, Mapping):
        return value
    kind = value.get("rope_type", value.get("type", "default"))
    return {**{k: v for k, v in value.items() if k not in ("type", "rope_type")},
            "rope_type": "default" if kind == "mrope" else kind}


def parse_model(data: Mapping, source: str = "<config>") -> ModelRope:
    """Validate a parsed config (HF ``config.json`` shape) into its rotary regimes."""
    if not isinstance(data, Mapping):
        raise VariantFileError(f"{source}: expected a JSON object of config keys, got {type(data).__name__}")
    cfg = _Config(data, source)
    model_type = data.get("model_type")
    where = ""
    if isinstance(model_type, str) and model_type in TEXT_CONFIGS:
        text, model_type, where = _text_config(cfg, model_type)
        cfg = _Config(text, source, where)
    if isinstance(model_type, str) and model_type not in FAMILIES and where == "":
        from ._hf_read import transformers_available

        if transformers_available():
            return read_through_transformers(data, source, model_type)
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        shown = repr(model_type)[:60] if model_type is not None else "missing"
        supported = sorted(set(FAMILIES) | set(TEXT_CONFIGS))
        hint = did_you_mean(model_type, supported) if isinstance(model_type, str) else ""
        raise cfg.fail("model_type", f"{shown} is not a supported family; supported: {', '.join(supported)}{hint}")
    family = FAMILIES[model_type]
    unread_notes = _refuse_unread_keys(cfg, family, model_type)
    # a size the config leaves out is the config class's default, as in HF
    aliases = _GPTJ_ALIASES if family.head == "gptj" else {}
    absent = {k: v for k, v in zip(CLASS_DEFAULT_KEYS, CLASS_DEFAULTS[model_type])
              if k not in cfg.data and aliases.get(k) not in cfg.data}
    reader = _Reader(_Config({**absent, **cfg.data}, cfg.source, cfg.prefix), family, model_type)
    model = reader.model()
    if absent:
        note = (f"absent from the config, HF's {model_type} config class defaults: "
                + ", ".join(f"{k} {v}" for k, v in absent.items()))
        if where and data.get("text_config") is None:
            note = (f"no text_config: HF's {data['model_type']} builds its text model from the {model_type} config "
                    f"class's defaults ({', '.join(f'{k} {v}' for k, v in absent.items())})")
        model = dataclasses.replace(model, notes=(note,) + model.notes)
    if unread_notes:  # in the model's notes and in each regime's table, which a one-regime model prints
        regimes = tuple(r if r.variant is None else dataclasses.replace(r, variant=_noted(r.variant, unread_notes))
                        for r in model.regimes)
        model = dataclasses.replace(model, regimes=regimes, notes=tuple(unread_notes) + model.notes)
    return model


def _noted(variant: Variant, notes, first: bool = False) -> Variant:
    """``variant`` with ``notes`` after its own (``first``: before); the notes change no value: the tables
    computed while validating are kept."""
    ordered = tuple(notes) + tuple(variant.notes) if first else tuple(variant.notes) + tuple(notes)
    noted = dataclasses.replace(variant, notes=ordered)
    noted.__dict__.update({k: v for k, v in variant.__dict__.items() if k.startswith("_")})
    return noted


#: GPT-J's config names for the sizes (its attribute_map)
_GPTJ_ALIASES = {"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer",
                 "max_position_embeddings": "n_positions"}


def _reads(family: Family) -> frozenset:
    keys = COMMON_READS | set(family.theta) | HEAD_KEYS[family.head] | family.reads
    return keys | ({family.partial} if family.partial else set())


def _refuse_unread_keys(cfg: _Config, family: Family, model_type: str) -> list:
    """A key that looks like it changes the rotary map and that this family's row does not read: exit 2,
    unless its value is the one that cannot change the map (:data:`INERT_UNREAD`); the notes saying so."""
    known = _reads(family)
    notes = []
    for key in cfg.data:
        if isinstance(key, str) and ROPE_LIKE.search(key) and key not in known:
            value = cfg.data[key]
            written = dict(family.written).get(key)
            if written is not None:
                notes.append(f"{cfg.prefix}{key} = {json.dumps(value)[:40]}: {written}; it cannot change the map")
                continue
            if key in INERT_UNREAD and value is INERT_UNREAD[key]:
                notes.append(f"{cfg.prefix}{key} = {json.dumps(value)}: not read by HF's {model_type}; this value "
                             "leaves the rotary map as HF applies it")
                continue
            inert = (f"; {key} is accepted as {json.dumps(INERT_UNREAD[key])} only, the value that cannot change "
                     "the map" if key in INERT_UNREAD else "")
            raise cfg.fail(key, f"is a rope/position key HF's {model_type} reading here does not follow; refused "
                                f"rather than ignored (this family reads: {', '.join(sorted(known))}){inert}"
                                f"{did_you_mean(key, known)}")
    return notes


class _Reader:
    """One config of one family, read key by key as HF does."""

    def __init__(self, cfg: _Config, family: Family, model_type: str):
        self.cfg, self.family, self.model_type = cfg, family, model_type
        self.data = cfg.data

    # -- the parts every regime shares ------------------------------------------------------------------

    def model(self) -> ModelRope:
        cfg, family, data = self.cfg, self.family, self.data
        if "rotary" in family.reads and data.get("rotary", True) is not True:
            raise cfg.fail("rotary", f"HF's {self.model_type} always rotates (it does not read this key); expected "
                                     f"true or no key, got {data.get('rotary')!r}"[:200])
        if "alibi" in family.reads and data.get("alibi"):
            raise cfg.fail("alibi", f"is true: HF's {self.model_type} then adds ALiBi biases and applies no rotary "
                                    "embedding; expected a rotary model (alibi false)")
        notes = list(family.notes)
        head, hidden_note = self.head_dim()
        offset, head_width = 0, head
        if family.head == "mla":
            nope = self.cfg.count(data, "qk_nope_head_dim", "", MAX_WIDTH)
            nope = 128 if nope is None else nope  # DeepseekV*Config's default
            offset, head_width = nope, nope + head
            notes.append(f"{self.model_type}: the query/key head is qk_nope_head_dim = {nope} copied coordinates, "
                         f"then qk_rope_head_dim = {head} rotated ones (HF splits [nope | rope]); apply takes the "
                         f"whole head of {head_width}")
        pairing, how, order = family.pairing, family.how, None
        if family.rope_interleave is not None:
            interleave = data.get("rope_interleave", family.rope_interleave)
            if not isinstance(interleave, bool):
                raise cfg.fail("rope_interleave", f"expected true or false, got {interleave!r}"[:200])
            if interleave:
                pairing = "adjacent"
                how = ("rope_interleave: adjacent pairs (2r, 2r+1) rotated, written out as [even | odd] "
                       "(apply_rotary_pos_emb_interleave)")
            else:
                how = "rope_interleave false: " + _HALF_HOW
        names, layer_types, kinds = self.layers()
        mrope = self.mrope_section(head) if self.model_type in MROPE else None
        regimes, seen = [], {}
        for name in names:
            layer_type = layer_types.get(name)
            variant = None if kinds[name] == "nope" else self.variant(head, pairing, how, hidden_note, layer_type,
                                                                       len(names) > 1 and name)
            key = None if variant is None else json.dumps(
                {k: v for k, v in variant.describe().items() if k not in ("name", "title", "source")},
                sort_keys=True, default=str)
            layers = tuple(i for i, n in enumerate(self.layer_names) if n == name)
            if key in seen and variant is not None:  # layers of another type with the same map: one regime
                index = seen[key]
                merged = regimes[index]
                regimes[index] = dataclasses.replace(merged, layers=tuple(sorted(merged.layers + layers)))
                self.layer_names = [merged.name if n == name else n for n in self.layer_names]
                continue
            seen[key] = len(regimes)
            regimes.append(Regime(name, layers, variant, layer_type))
        if len(regimes) == 1 and regimes[0].variant is not None and regimes[0].name != "rope":
            regimes[0] = dataclasses.replace(regimes[0], name="rope",
                                             variant=dataclasses.replace(regimes[0].variant, name=self.stem))
            self.layer_names = ["rope"] * len(self.layer_names)
        if order is None and pairing == "adjacent" and family.rope_interleave:
            order = tuple(range(0, head, 2)) + tuple(range(1, head, 2))
        if mrope is not None:
            notes.append(f"mrope_section {list(mrope)}: " + "; ".join(
                f"pairs {lo}..{hi - 1} follow the {axis} position" for axis, lo, hi in _bands(mrope))
                + " (coordinates r and r + d/2 of pair r); text positions (t = h = w) give every pair the same "
                  "position, so on text the map is the regime's plain RoPE, which is what is checked")
        if len(self.layer_names):
            notes.append(LAYERS_NOTE + "; ".join(f"{r.name}: {_ranges(r.layers)}" for r in regimes))
        return ModelRope(self.model_type, cfg.source, self.stem, head_width, offset, order, mrope, tuple(regimes),
                         tuple(self.layer_names), tuple(notes))

    @property
    def stem(self) -> str:
        source = self.cfg.source
        return _slug(os.path.splitext(os.path.basename(source))[0] if source != "<config>" else self.model_type)

    def head_dim(self):
        cfg, data, family = self.cfg, self.data, self.family
        if family.head == "gptj":
            hidden = cfg.count(data, "n_embd", "", _MAX_HIDDEN) or cfg.count(data, "hidden_size", "", _MAX_HIDDEN)
            heads = cfg.count(data, "n_head", "", _MAX_HEADS) or cfg.count(data, "num_attention_heads", "",
                                                                           _MAX_HEADS)
            names = "n_embd // n_head"
            if hidden is None or heads is None:
                raise cfg.fail("n_embd", "n_embd and n_head are required (GPT-J's head_dim is n_embd // n_head)")
        elif family.head == "mla":
            rope = cfg.count(data, "qk_rope_head_dim", "", MAX_WIDTH)
            rope = 64 if rope is None else rope  # DeepseekV*Config's default; HF sets head_dim to it
            if rope < 2 or rope % 2:
                raise cfg.fail("qk_rope_head_dim", f"expected an even width >= 2, got {rope}")
            return rope, f"head_dim = qk_rope_head_dim = {rope}, as HF sets it"
        else:
            explicit = cfg.count(data, "head_dim", "", MAX_WIDTH)
            if family.head == "explicit" and explicit:
                return explicit, "head_dim"
            if family.head == "explicit" and "head_dim" not in data and family.default_head_dim:
                return family.default_head_dim, (f"{self.model_type} config class default head_dim "
                                                 f"{family.default_head_dim}, not hidden_size // num_attention_heads")
            hidden = cfg.count(data, "hidden_size", "", _MAX_HIDDEN)
            heads = cfg.count(data, "num_attention_heads", "", _MAX_HEADS)
            names = "hidden_size // num_attention_heads"
            if hidden is None or heads is None:
                raise cfg.fail("head_dim", "head_dim, or hidden_size and num_attention_heads, are required")
            if family.head == "derived" and explicit and explicit != hidden // heads:
                raise cfg.fail("head_dim", f"HF's {self.model_type} uses hidden_size // num_attention_heads = "
                                           f"{hidden // heads} as the head width, not head_dim; expected "
                                           f"{hidden // heads} or no head_dim, got {explicit}")
        head_dim = hidden // heads
        if not 2 <= head_dim <= MAX_WIDTH:
            raise cfg.fail(names.split(" ")[0], f"gives head_dim {head_dim}; expected 2 to {MAX_WIDTH}")
        return head_dim, f"head_dim = {names} = {hidden} // {heads}"

    def layer_count(self, required: bool):
        key = "n_layer" if self.family.head == "gptj" and "n_layer" in self.data else "num_hidden_layers"
        count = self.cfg.count(self.data, key, "", 100000)
        if count is None and required:
            raise self.cfg.fail(key, f"is required: HF's {self.model_type} derives its per-layer rotary pattern "
                                     "from the number of layers")
        return count

    def layer_type_list(self, count, allowed):
        value = self.data.get("layer_types")
        if value is None:
            return None
        if not isinstance(value, list) or any(not isinstance(v, str) for v in value):
            raise self.cfg.fail("layer_types", "expected a list of layer type names, one per layer")
        if count is not None and len(value) != count:
            raise self.cfg.fail("layer_types", f"expected {count} entries (num_hidden_layers), got {len(value)}")
        for v in value:
            if allowed is not None and v not in allowed:
                raise self.cfg.fail("layer_types", f"expected each of {', '.join(allowed)}, got {v[:40]!r}")
        return value

    def layers(self):
        """``(regime names, {regime: layer type}, {regime: "rope" | "nope"})``; sets ``self.layer_names``."""
        rule = self.family.layers
        cfg, data = self.cfg, self.data
        if rule is None or rule == "shared":
            count = self.layer_count(False)
            if rule == "shared" or "layer_types" in data:
                types = self.layer_type_list(count, None)
                count = len(types) if types is not None and count is None else count
            self.layer_names = ["rope"] * (count or 0)
            return ["rope"], {}, {"rope": "rope"}
        count = self.layer_count(True)
        if rule == "no_rope":
            value = data.get("no_rope_layers")
            interval = cfg.count(data, "no_rope_layer_interval", "", 100000)
            interval = 4 if interval is None else interval
            if value is None or (not value and self.model_type == "llama4_text"):  # Llama 4: `if no_rope_layers`
                if interval < 1:
                    raise cfg.fail("no_rope_layer_interval", f"expected an integer >= 1, got {interval}")
                uses = [int((i + 1) % interval != 0) for i in range(count)]
            else:
                if not isinstance(value, list) or len(value) != count or any(
                        isinstance(v, bool) or v not in (0, 1) for v in value):
                    raise cfg.fail("no_rope_layers", f"expected {count} entries (one per layer) of 1 (rotary) or 0 "
                                                     "(NoPE)")
                uses = list(value)
            self.layer_type_list(count, None)  # validated; the NoPE pattern decides the rotary regimes
            self.layer_names = ["rope" if u else "nope" for u in uses]
            names = [n for n in ("rope", "nope") if n in self.layer_names]
            return names, {}, {"rope": "rope", "nope": "nope"}
        key, default = LAYER_PATTERN[rule]
        given = self.layer_type_list(count, ("sliding_attention", "full_attention"))
        n = cfg.count(data, key, "", 100000)
        n = default if n is None else n
        if n < 1:
            raise cfg.fail(key, f"expected an integer >= 1, got {n}")
        if rule == "modernbert":
            types = ["sliding_attention" if i % n else "full_attention" for i in range(count)]
        else:
            types = ["sliding_attention" if (i + 1) % n else "full_attention" for i in range(count)]
        if given is not None:
            # HF follows layer_types and ignores the pattern; saved configs carry both: they must agree
            if key in data and given != types:
                raise cfg.fail(key, "gives another layer pattern than layer_types, which HF follows; expected "
                                    "the two to agree or one of them")
            types = given
        self.layer_names = list(types)
        names = [t for t in ("sliding_attention", "full_attention") if t in types]
        kinds = {t: "rope" for t in names}
        if rule == "cohere2" and "full_attention" in kinds:
            kinds["full_attention"] = "nope"  # Cohere2Attention rotates only when sliding_window is set
        return names, {t: t for t in names}, kinds

    def mrope_section(self, head):
        table = self.flat_table()[1]
        value = table.get("mrope_section")
        if value is None:
            value = list(MROPE_DEFAULT)
        where = self.cfg.prefix + self.flat_table()[0] + ".mrope_section"
        if not isinstance(value, list) or not value or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value):
            raise VariantFileError(f"{self.cfg.source}: key '{where}': expected a list of non-negative integers")
        if sum(value) != head // 2:
            raise VariantFileError(f"{self.cfg.source}: key '{where}': expected sections summing to head_dim / 2 = "
                                   f"{head // 2} (one per rotated pair), got {sum(value)}")
        return tuple(value)

    # -- the rope table of a regime ----------------------------------------------------------------------

    def flat_table(self):
        """HF: ``rope_scaling or rope_parameters`` (flat: one table for every layer)."""
        cfg, data = self.cfg, self.data
        key = "rope_scaling" if data.get("rope_scaling") else "rope_parameters"
        table = data.get(key) or {}
        if not isinstance(table, Mapping):
            raise cfg.fail(key, f"expected an object of rope parameters, got {type(table).__name__}")
        return key, table

    def table(self, layer_type):
        """``(where, table)`` of the regime of ``layer_type`` (None: the one flat table)."""
        cfg, data = self.cfg, self.data
        if layer_type is None or self.family.layers not in LAYER_THETA:
            key, table = self.flat_table()
            if any(isinstance(v, Mapping) for v in table.values()):
                raise cfg.fail(key, f"per-layer rope parameters (one table per layer type) are not read by HF's "
                                    f"{self.model_type}; expected one table with rope_type and its parameters")
            return key, table
        # Gemma 3 / ModernBERT: rope_parameters nested by layer type; legacy rope_scaling updates the full
        # layers' table (ModernBERT: both)
        nested = data.get("rope_parameters")
        if nested is not None:
            if not isinstance(nested, Mapping) or any(k not in ("sliding_attention", "full_attention")
                                                      for k in nested):
                raise cfg.fail("rope_parameters", f"HF's {self.model_type} reads rope_parameters nested by layer "
                                                  "type (sliding_attention, full_attention); expected that shape")
            table = nested.get(layer_type) or {}
            if not isinstance(table, Mapping):
                raise cfg.fail(f"rope_parameters.{layer_type}", "expected an object of rope parameters")
            where = f"rope_parameters.{layer_type}"
        else:
            table, where = {}, "rope_parameters"
        legacy = data.get("rope_scaling")
        if legacy is not None and not isinstance(legacy, Mapping):
            raise cfg.fail("rope_scaling", f"expected an object of rope parameters, got {type(legacy).__name__}")
        if legacy and LAYER_THETA[self.family.layers][layer_type][2]:
            table, where = {**table, **legacy}, "rope_scaling"
        return where, table

    def variant(self, head, pairing, how, hidden_note, layer_type, regime_name, negated=False, query_scale=None,
                with_scale=False) -> Variant:
        """The regime's rotation (``with_scale``: followed by the attention's query scale ``query_scale`` =
        ``(beta, L)``, which identification saw the attention apply: HF's ``get_llama_4_attn_scale``)."""
        cfg, family, model_type = self.cfg, self.family, self.model_type
        where, rope = self.table(layer_type)
        prefix = cfg.prefix + where + "."
        rope_type = rope.get("rope_type", rope.get("type", "default"))
        type_key = prefix + ("rope_type" if "rope_type" in rope else "type")
        if not isinstance(rope_type, str):
            raise cfg.fail(type_key, f"expected a rope type name ({', '.join(ROPE_TYPES)}), got "
                                     f"{type(rope_type).__name__}")
        if model_type == "phi3" and rope_type in ("su", "yarn"):
            rope_type = "longrope"  # HF's Phi3Config renames both
        if model_type in MROPE and rope_type == "mrope":
            rope_type = "default"  # HF's Qwen2-VL text config: mrope is the default frequencies, by band
        if rope_type not in ROPE_TYPES:
            raise cfg.fail(type_key, f"rope type {str(rope_type)[:40]!r} is not supported; supported: "
                                     f"{', '.join(ROPE_TYPES)}{did_you_mean(rope_type, ROPE_TYPES)}")
        if not family.scaling and rope_type != "default":
            raise cfg.fail(type_key, f"HF's {model_type} reads no rope scaling; expected no {where} "
                                     f"(got rope type {rope_type!r})")
        if family.refused_types and rope_type != "default":
            raise cfg.fail(type_key, f"{family.refused_types}, so rope_type {rope_type!r} is refused rather than "
                                     "read wrong")
        allowed = TABLE_KEYS["default"] | TABLE_KEYS.get(rope_type, set())
        if model_type in MROPE:
            allowed = allowed | {"mrope_section"}
        for key in rope:
            if key in READ_BY_ATTENTION and query_scale is not None:
                continue  # identification saw the attention read it
            if key == "max_position_embeddings" and rope[key] == _positions(cfg, "max_position_embeddings"):
                continue  # the copy Ministral 3's and Mistral 4's config classes write; noted below
            if key in READ_BY_ATTENTION and rope[key] is not None:
                raise cfg.fail(prefix + key, f"{READ_BY_ATTENTION[key].format(model_type=model_type)}; refused")
            if key not in allowed:
                raise cfg.fail(prefix + str(key)[:60], f"is not a parameter HF reads for rope_type {rope_type!r}; "
                                                       f"refused rather than ignored (expected some of "
                                                       f"{', '.join(sorted(allowed))}){did_you_mean(key, allowed)}")
        notes = []
        if "max_position_embeddings" in rope:
            notes.append(f"{prefix}max_position_embeddings = {rope['max_position_embeddings']}: the top-level value, "
                         "copied into the table by HF's config class; HF's rope functions read the top-level one")
        turning = None  # proportional: (turning pairs, the partial factor that counts them)
        if rope_type == "proportional":
            rotary_dim, turning, width_note = self.proportional_width(rope, prefix, head)
        else:
            rotary_dim, width_note = self.rotary_dim(rope, prefix, head)
        exponent_width = rotary_dim
        if rotary_dim % 2 and family.odd_width and 3 <= rotary_dim < head:
            if rope_type != "default":
                raise cfg.fail(prefix + "rope_type", f"{rope_type!r} with an odd rotated width {rotary_dim}: HF then "
                                                     f"rotates {rotary_dim + 1} coordinates, which only the default "
                                                     "rule is read with; expected an even width or rope_type default")
            rotary_dim += 1
            width_note += (f"; odd, so HF's {rotary_dim // 2} frequencies theta^(-2r/{exponent_width}) give cos and "
                           f"sin of {rotary_dim} coordinates and apply rotates that many (cos.shape[-1])")
        if rotary_dim < 2 or rotary_dim % 2:
            raise cfg.fail(family.partial or "partial_rotary_factor",
                           f"gives a rotated width of {rotary_dim} of head_dim {head}; expected an even width >= 2")
        theta, theta_note = self.theta(rope, prefix, layer_type)
        label = f"{model_type}" + (f" {regime_name}" if regime_name else "")
        notes.append(f"{label}: {how}; {width_note} ({hidden_note})")
        notes.append(theta_note)
        stem = self.stem + (f"-{regime_name}" if regime_name else "")
        doc: dict = {"name": _slug(stem), "kind": "rotary", "width": head, "rotated_width": rotary_dim,
                     "pairing": pairing, "params": {"theta": theta}}
        attention = _frequencies(cfg, doc, rope, prefix, rope_type, notes, rotary_dim, turning)
        doc["title"] = (f"{model_type} config{' ' + regime_name if regime_name else ''}, rope_type {rope_type} "
                        f"(head_dim {head}, rotated {rotary_dim}, {pairing} pairs)")
        if rotary_dim < head and doc["frequencies"]["rule"] == "geometric":
            doc["frequencies"]["denominator"] = exponent_width  # HF: the exponent's width is int(head * factor)
        if negated:
            _negate(cfg, doc, type_key, notes)
        if query_scale is not None:
            _scale_query(doc, query_scale, prefix, notes, with_scale)
        if attention is not None:
            doc["attention"] = {"factor": attention}
        variant = parse_variant(doc, cfg.source)
        notes.append(scaling_note(variant))
        noted = dataclasses.replace(variant, notes=tuple(notes))
        # the notes change no value: keep the tables computed while validating
        noted.__dict__.update({k: v for k, v in variant.__dict__.items() if k.startswith("_")})
        return noted

    def proportional_width(self, rope, prefix, head_dim):
        """HF's ``proportional`` rope: cos and sin span the whole head, pairs ``(r, r + d/2)``; its partial factor
        sets how many pairs turn (the others have frequency 0), not which coordinates are rotated."""
        cfg, family = self.cfg, self.family
        if family.partial is not None:
            raise cfg.fail(prefix + "rope_type", f"'proportional' gives cos and sin for the whole head, and HF's "
                                                 f"{self.model_type} rotates only the part its {family.partial} "
                                                 "slices off; refused rather than read wrong")
        value, key = None, "partial_rotary_factor, HF default 1.0"
        for table, where in ((rope, prefix), (self.data, cfg.prefix)):
            value = cfg.number(table, "partial_rotary_factor", where if table is rope else "", low=0.0, high=1.0)
            if value is not None:
                key = where + "partial_rotary_factor"
                break
        value = 1.0 if value is None else value
        turning = int(value * head_dim // 2)  # HF's own float arithmetic and truncation
        if turning < 1:
            raise cfg.fail(key.split(",")[0], f"gives int({value} * {head_dim} // 2) = 0 turning pairs: "
                                              "the proportional map turns nothing; expected at least one pair")
        return head_dim, (turning, value), (f"whole head ({head_dim} coordinates), the first int({value} * "
                                            f"{head_dim} // 2) = {turning} of its {head_dim // 2} pairs turning "
                                            f"({key}), exponent denominator {head_dim}")

    def rotary_dim(self, rope, prefix, head_dim):
        cfg, data, family, model_type = self.cfg, self.data, self.family, self.model_type
        if family.partial == "rotary_dim":
            if "rotary_dim" in data and data["rotary_dim"] is None:
                raise cfg.fail("rotary_dim", "is null; HF's GPT-J then rotates with the model width's frequencies "
                                             "(not per head); expected the rotated width")
            dim = cfg.count(data, "rotary_dim", "", MAX_WIDTH) or 64
            if dim > head_dim:
                raise cfg.fail("rotary_dim", f"expected at most head_dim {head_dim}, got {dim}")
            return dim, f"first rotary_dim = {dim} of {head_dim} coordinates, exponent denominator {dim}"
        factor_key = family.partial or "partial_rotary_factor"
        value, key = None, None
        for table, where, name in ((rope, prefix, "partial_rotary_factor"), (data, cfg.prefix, factor_key)):
            value = cfg.number(table, name, where if table is rope else "", low=0.0, high=1.0)
            if value is not None:
                key = where + name
                break
        if family.partial is None:
            if value is not None and value != 1:
                raise VariantFileError(f"{cfg.source}: key '{key}': HF's {model_type} rotates the whole "
                                       f"{'rotary block' if family.head == 'mla' else 'head'} (its "
                                       f"apply_rotary_pos_emb has no pass-through part); expected 1, got {value}")
            return head_dim, f"whole {'rotary block' if family.head == 'mla' else 'head'} ({head_dim} coordinates)"
        shown = key
        if value is None:
            value, key, shown = family.default_partial, factor_key, f"{factor_key}, HF default"
        dim = int(head_dim * value)  # HF's own float arithmetic and truncation
        return dim, (f"first int(head_dim * {key.split('.')[-1]}) = int({head_dim} * {value}) = {dim} coordinates "
                     f"({shown}), exponent denominator {dim}")

    def theta(self, rope, prefix, layer_type):
        cfg, data, family = self.cfg, self.data, self.family
        if family.head == "gptj":
            return 10000, "base 10000 (fixed in HF's GPT-J)"
        keys, default = family.theta, family.default_theta
        if layer_type is not None and family.layers in LAYER_THETA:
            keys, default, _ = LAYER_THETA[family.layers][layer_type]
        value = cfg.number(rope, "rope_theta", prefix, low=1.0)
        if value is not None:
            return value, f"base {value:g} ({prefix}rope_theta)"
        for name in keys:
            value = cfg.number(data, name, "", low=1.0)
            if value is not None:
                return value, f"base {value:g} ({cfg.prefix}{name})"
        return default, f"base {default:g} (HF's {self.model_type} default_theta)"


def _scale_query(doc, query_scale, prefix, notes, with_scale) -> None:
    """The attention's query scale (Ministral 3, Mistral 4: ``llama_4_scaling_beta``), noted; ``with_scale``:
    also in ``doc``, so that the properties are those of the scores the attention computes."""
    beta, length = query_scale
    said = ("HF's attention multiplies the rotated query by 1 + beta log(1 + floor(m / L)) at its position m "
            f"({prefix}llama_4_scaling_beta = {beta:g}, L = {prefix}original_max_position_embeddings = {length:g})")
    if not with_scale:
        notes.append(said + ": not part of apply, which is the rotation (an exported module gives the factor as "
                            "query_scale(positions)); symproof check decides the properties with it")
        return
    doc["params"].update(scaling_beta=beta, scaling_length=length)
    doc["scale"] = {"query": "1 + scaling_beta * log(1 + floor(m / scaling_length))"}
    doc["positions"] = "nonnegative"  # HF's position ids; the scale's log(0) at m <= -L is no position
    doc["title"] += ", with the attention's query scale"
    notes.append(said + ": the properties below are those of the scores, rotation and scale, at positions m >= 0")


def _negate(cfg, doc, type_key, notes) -> None:
    """The frequencies of ``doc`` negated: HF turns every pair by the negative angle (nanochat's rotate_half)."""
    rule = doc["frequencies"]
    if rule["rule"] == "formula":
        rule["formula"] = f"-({rule['formula']})"
    elif rule["rule"] == "geometric" and set(rule) <= {"rule", "base", "denominator"}:
        doc["frequencies"] = {"rule": "formula",
                              "formula": f"-(({rule['base']})**(-2*r/{rule.get('denominator', 'd')}))"}
    else:
        raise cfg.fail(type_key, "HF turns every pair by the negative angle, and this rope type's frequencies "
                                 "are not a formula the reading can negate; refused rather than read wrong")
    notes.append("every pair turns by the negative angle -m omega_r (HF's rotate_half here gives (x2, -x1)): "
                 "the frequencies are negated")


def model_from_identified(identified, source: str) -> ModelRope:
    """The :class:`ModelRope` of a model type identified through transformers (:mod:`._hf_read`): each
    distinct layer map is read by the same reader as a row's, from the rope table HF resolved."""
    text = identified.data
    origin = (f"read through transformers {identified.version}'s `{identified.class_name}` ({identified.model_type} "
              "has no row in the family table): each layer's rotation recorded from HF's forward and identified "
              "exactly")
    distinct = list(dict.fromkeys(m for m in identified.layers if m.width))
    # one output order for the model (ModelRope.output_order): layers written out differently are not one model
    orders = {m.output_order for m in distinct}
    if len(orders) > 1:
        raise VariantFileError("the rotating layers write their rotated coordinates out in different orders; "
                               "a model has one output order")
    (order,) = orders
    mrope, mrope_note = _identified_axes(distinct)
    names = {m: "rope" if len(distinct) == 1 else f"rope-{k + 1}" for k, m in enumerate(distinct)}
    layer_names = [names[m] if m.width else "nope" for m in identified.layers]
    regimes = []
    for m in distinct:
        table = json.loads(m.table)
        # a proportional table's partial factor counts turning pairs of the whole head (recorded so), not a slice
        whole = table.get("rope_type", table.get("type")) == "proportional"
        family = Family(identified.class_name, pairing=m.pairing,
                        how=_HALF_HOW if m.pairing == "half" else "adjacent pairs (2r, 2r+1), as recorded" + (
                            "" if order is None else ", written out as [even | odd]"),
                        partial=None if whole else "partial_rotary_factor", default_partial=1.0,
                        odd_width=True)  # the width recorded is compared with the reading's below
        head = m.head or identified.head
        data = {"head_dim": head, "rope_parameters": table, "partial_rotary_factor": m.partial,
                "max_position_embeddings": text.get("max_position_embeddings") or 2048}
        reader = _Reader(_Config(data, source), family, identified.text_type)
        reader.layer_names = layer_names
        variant = reader.variant(head, m.pairing, family.how, "head_dim as HF resolved it", None,
                                 len(distinct) > 1 and names[m], negated=m.negated, query_scale=m.query_scale)
        attention = None
        if m.query_scale is not None:
            scored = reader.variant(head, m.pairing, family.how, "head_dim as HF resolved it", None,
                                    len(distinct) > 1 and names[m], negated=m.negated, query_scale=m.query_scale,
                                    with_scale=True)
            attention = _noted(scored, (origin,), first=True)
        if variant.rotated_width != m.width or variant.pairing != m.pairing:
            raise VariantFileError(f"HF rotates {m.width} coordinates ({m.pairing} pairs), the reader of the rope "
                                   f"table gives {variant.rotated_width} ({variant.pairing}); refused")
        variant = _noted(variant, (origin,), first=True)
        layers = tuple(i for i, n in enumerate(layer_names) if n == names[m])
        regimes.append(Regime(names[m], layers, variant, attention=attention))
    if "nope" in layer_names:
        regimes.append(Regime("nope", tuple(i for i, n in enumerate(layer_names) if n == "nope"), None))
    notes = (origin, LAYERS_NOTE + "; ".join(f"{r.name}: {_ranges(r.layers)}" for r in regimes)) + mrope_note
    notes += tuple(identified.notes)
    if identified.filled:
        notes += ("filled to build the model: " + ", ".join(f"{k} = {v}" for k, v in identified.filled)
                  + " (None in the config, used by HF's own code; a size that never enters the position map, "
                    "filled as the shrinking sets it)",)
    nope = text.get("qk_nope_head_dim")
    if isinstance(nope, int) and text.get("qk_rope_head_dim") in {m.head or identified.head for m in distinct}:
        notes += (f"multi-head latent attention: the head read is the qk_rope_head_dim = {text['qk_rope_head_dim']} "
                  f"coordinates HF's attention passes to its apply function; the qk_nope_head_dim = {nope} "
                  "others of each query/key head are not rotated, and apply takes the rotated part only",)
    stem = _slug(os.path.splitext(os.path.basename(source))[0] if source != "<config>" else identified.model_type)
    widths = {names[m]: m.head or identified.head for m in distinct}
    regime_widths: tuple = ()
    head_width = identified.head
    if len(set(widths.values())) > 1:  # the config sets the head width per layer (HF's per_layer_config)
        regime_widths = tuple(widths.items())
        head_width = max(widths.values())
        notes += ("head width per layer (HF's per_layer_config): " + "; ".join(
            f"{name}: {width}" for name, width in regime_widths) + "; apply takes x of the regime's head width",)
    elif widths:
        head_width = next(iter(widths.values()))
    return ModelRope(identified.text_type, source, stem, head_width, 0, order, mrope, tuple(regimes),
                     tuple(layer_names), notes, regime_widths)


def _identified_axes(distinct):
    """The M-RoPE bands of the rotating layers identified through transformers (one for the model), and the
    note saying what they are, or ``(None, ())``."""
    from ._hf_axes import describe, sections

    axes = {m.axes for m in distinct}
    if axes == {None}:
        return None, ()
    if len(axes) > 1:
        raise VariantFileError("the rotating layers follow the M-RoPE position axes differently; a model has one "
                               "assignment of pairs to axes")
    (pair_axes,) = axes
    section = sections(pair_axes)
    expanded = tuple(k % 3 for k, size in enumerate(section) for _ in range(size))
    if expanded != pair_axes:  # the bands are the engine's form of the recorded axes, exactly
        raise VariantFileError("the M-RoPE bands do not give back the recorded axis of every pair")
    return section, (
        "M-RoPE, identified by driving HF's rotary class with position ids that vary along one axis (t, h, w) at "
        f"a time, then along all three at once: {describe(pair_axes)}; pair r turns at its own frequency by the "
        "position of its axis (the engine's M-RoPE bands: mrope_section "
        f"{list(section) if len(section) <= 6 else f'of {len(section)} bands'}, band k following axis k mod 3)",
        "on text (t = h = w = the token's position) every pair turns by the token's position: the map is the "
        "regime's plain RoPE, which is what is checked; apply also takes positions (3, ...) as t, h, w")


#: identifications made in this process, by the config's canonical JSON text (the model is run: seconds each;
#: one command reads the same config several times, the audit once per regime and before the code runs)
_IDENTIFIED: dict = {}


def read_through_transformers(data: Mapping, source: str, model_type: str):
    """The :class:`ModelRope` of a config whose model type has no row, identified through transformers."""
    try:
        key = (json.dumps(data, sort_keys=True, allow_nan=False), source, model_type)
    except (TypeError, ValueError):
        key = None  # not JSON (a dict given in Python): read every time
    if key is not None and key in _IDENTIFIED:
        found = _IDENTIFIED[key]
        if isinstance(found, VariantFileError):
            raise VariantFileError(found.message) from None
        return found
    try:
        found = _read_through_transformers(data, source, model_type)
    except VariantFileError as err:  # the refusal is as costly to reach as a model: kept the same way
        found = err
    if key is not None:
        if len(_IDENTIFIED) >= 16:
            _IDENTIFIED.pop(next(iter(_IDENTIFIED)))
        _IDENTIFIED[key] = found
    if isinstance(found, VariantFileError):
        raise VariantFileError(found.message) from None
    return found


def _read_through_transformers(data: Mapping, source: str, model_type: str):
    import transformers

    from ._hf_read import identify


    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()  # HF's warnings about its own class defaults are not the user's
    try:
        return model_from_identified(identify(data, source, model_type), source)
    except Exception as err:  # noqa: BLE001 -- whatever HF's code raises on this config is its one-line refusal
        reason = str(err).splitlines()[0][:300] if str(err) else ""
        if not isinstance(err, VariantFileError):
            reason = f"transformers raised {type(err).__name__}: {reason}"
        reason = reason[len(source) + 2:] if reason.startswith(f"{source}: ") else reason
        supported = ", ".join(sorted(set(FAMILIES) | set(TEXT_CONFIGS)))
        raise VariantFileError(f"{source}: key 'model_type': {str(model_type)[:60]!r} has no row in the family "
                               f"table (supported: {supported}), and reading it through transformers "
                               f"{transformers.__version__} did not identify its rotary map: {reason}"
                               f"{did_you_mean(model_type, set(FAMILIES) | set(TEXT_CONFIGS))}") from None
    finally:
        transformers.logging.set_verbosity(verbosity)
