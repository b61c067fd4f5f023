"""A checkpoint's ``config.json``, read the way HF transformers reads it, as a :class:`Variant`.

Users do not start from a description file: they have the config published
with a checkpoint, and the bugs they hit are convention bugs (rotate-half
against interleaved pairs, the partial width in the exponent, misread YaRN or
Llama-3 factors, dynamic NTK caches, LongRoPE's short/long switch).  This
module turns such a config into the same :class:`Variant` a description file
gives, following HF transformers 5.x key by key:

- ``rope_parameters`` (new) or ``rope_scaling`` (legacy; it wins when both are
  set, as in HF), with ``rope_type`` or the legacy ``type``;
- ``rope_theta`` inside the rope parameters, else at top level (GPT-NeoX:
  ``rotary_emb_base``; GPT-J: always 10000);
- the rotated width ``int(head_dim * partial_rotary_factor)`` (GPT-NeoX:
  ``rotary_pct``; GPT-J: ``rotary_dim``), ``head_dim`` else
  ``hidden_size // num_attention_heads`` (GPT-J: ``n_embd // n_head``);
- ``original_max_position_embeddings`` at top level first (HF gives it
  priority), else inside the scaling, else ``max_position_embeddings``.

The config is turned into the description-file document and validated by
:func:`parse_variant`, so a config and a TOML file go through one definition.
Every choice the family makes (pairing, rotated width, fixed base) is kept in
``Variant.notes`` and printed with the verdicts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from dataclasses import dataclass
from typing import Mapping

import sympy as sp

from .._errors import VariantFileError
from .._io import read_input_file
from ._formula import parse_formula
from ._spec import MAX_LENGTH, MAX_WIDTH, Variant, parse_variant

__all__ = ["load_model_config", "parse_model_config", "is_model_config", "FAMILIES", "ROPE_TYPES",
           "MAX_CONFIG_BYTES", "attention_scaling", "scaling_note"]

#: largest config file read (published configs are a few kB; LongRoPE's factor lists add ~2 kB)
MAX_CONFIG_BYTES = 1 << 20
#: the rope types read (HF's ROPE_INIT_FUNCTIONS, plus "default")
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
_MAX_NUMBER = 1e12
_MAX_HEADS = 4096
_MAX_HIDDEN = 1 << 20


@dataclass(frozen=True)
class Family:
    """How one HF model family applies RoPE."""

    pairing: str
    how: str  # the HF code that decides the pairing
    partial: str  # where the rotated width comes from: "none", "factor", "rotary_pct", "rotary_dim"
    default_partial: float = 1.0
    scaling: bool = True  # whether the family reads rope scaling at all


_HALF = "rotate_half, half pairs (r, r + d/2)"
FAMILIES = {
    "llama": Family("half", _HALF, "none"),
    "mistral": Family("half", _HALF, "none"),
    "qwen2": Family("half", _HALF, "none"),
    "gemma": Family("half", _HALF, "none"),
    "gpt_neox": Family("half", _HALF, "rotary_pct", 0.25),
    "phi": Family("half", _HALF, "factor", 0.5),
    "phi3": Family("half", _HALF, "factor", 1.0),
    "gptj": Family("adjacent", "rotate_every_two, adjacent pairs (2r, 2r+1)", "rotary_dim", scaling=False),
}


def is_model_config(path) -> bool:
    """Whether ``path`` names a model config (``.json``, or text starting with ``{``) rather than TOML."""
    name = os.fspath(path)
    if name.lower().endswith(".json"):
        return True
    if name.lower().endswith(".toml"):
        return False
    try:
        head = read_input_file(name, error=VariantFileError)
    except VariantFileError:
        return False  # not readable as a file: the TOML reader says why, in its own words
    return head.lstrip()[:1] == b"{"


def _read(source: str) -> Mapping:
    # regular files only, read with a bound: /dev/zero, a FIFO or a huge file never hang or fill memory
    raw = read_input_file(source, error=VariantFileError, max_bytes=MAX_CONFIG_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise VariantFileError(f"{source}: not UTF-8 text ({err.reason})") from None

    def refuse_constant(name):
        raise ValueError(f"non-finite number {name}")

    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise VariantFileError(f"{source}: not a model config (JSON nested too deeply)") from None
    except ValueError as err:  # JSONDecodeError, huge integers, NaN / Infinity
        raise VariantFileError(f"{source}: not valid JSON ({str(err)[:200]})") from None
    return data


def load_model_config(path_or_dict) -> Variant:
    """The :class:`Variant` of a model config: a ``config.json`` path or the parsed dict."""
    if isinstance(path_or_dict, Mapping):
        return parse_model_config(path_or_dict, "<config>")
    source = os.fspath(path_or_dict)
    return parse_model_config(_read(source), source)


# -- typed access --------------------------------------------------------------------------------


class _Config:
    """Typed look-ups that name the file and key in every error."""

    def __init__(self, data: Mapping, source: str):
        self.data, self.source = data, source

    def fail(self, key: str, message: str) -> VariantFileError:
        return VariantFileError(f"{self.source}: key '{key}': {message}")

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


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")[:64]
    return slug if slug and slug[0].isalnum() else "model-config"


def _rope_table(cfg: _Config, family: Family):
    """HF: ``rope_scaling or rope_parameters``; per-layer tables are not read."""
    data = cfg.data
    key = "rope_scaling" if data.get("rope_scaling") else "rope_parameters"
    table = data.get(key) or {}
    if not isinstance(table, Mapping):
        raise cfg.fail(key, f"expected an object of rope parameters, got {type(table).__name__}")
    if any(isinstance(v, Mapping) for v in table.values()):
        raise cfg.fail(key, "per-layer rope parameters (one table per layer type) are not supported; expected "
                            "one table with rope_type and its parameters")
    return key, table


def parse_model_config(data: Mapping, source: str = "<config>") -> Variant:
    """Validate a parsed config (HF ``config.json`` shape) into a rotary :class:`Variant`."""
    if not isinstance(data, Mapping):
        raise VariantFileError(f"{source}: expected a JSON object of config keys, got {type(data).__name__}")
    cfg = _Config(data, source)
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in FAMILIES:
        shown = repr(model_type)[:60] if model_type is not None else "missing"
        raise cfg.fail("model_type", f"{shown} is not a supported family; supported: {', '.join(FAMILIES)}")
    family = FAMILIES[model_type]
    where, rope = _rope_table(cfg, family)
    prefix = f"{where}."
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    type_key = prefix + ("rope_type" if "rope_type" in rope else "type")
    if not isinstance(rope_type, str):
        raise cfg.fail(type_key, f"expected a rope type name ({', '.join(ROPE_TYPES)}), got {type(rope_type).__name__}")
    if model_type == "phi3" and rope_type in ("su", "yarn"):
        rope_type = "longrope"  # HF's Phi3Config renames both
    if rope_type not in ROPE_TYPES:
        raise cfg.fail(type_key, f"rope type {str(rope_type)[:40]!r} is not supported; supported: "
                                 f"{', '.join(ROPE_TYPES)}")
    if not family.scaling and rope_type != "default":
        raise cfg.fail(type_key, f"HF's {model_type} reads no rope scaling; expected no {where} "
                                 f"(got rope type {rope_type!r})")

    notes = []
    head_dim, hidden_note = _head_dim(cfg, model_type)
    rotary_dim, width_note = _rotary_dim(cfg, family, model_type, rope, prefix, rope_type, head_dim)
    if rotary_dim < 2 or rotary_dim % 2:
        raise cfg.fail("partial_rotary_factor", f"gives a rotated width of {rotary_dim} of head_dim {head_dim}; "
                                                "expected an even width >= 2")
    theta, theta_note = _theta(cfg, model_type, rope, prefix)
    notes.append(f"{model_type}: {family.how}; {width_note} ({hidden_note})")
    notes.append(theta_note)

    doc: dict = {"name": _slug(os.path.splitext(os.path.basename(source))[0] if source != "<config>"
                               else model_type),
                 "kind": "rotary", "width": head_dim, "rotated_width": rotary_dim, "pairing": family.pairing,
                 "params": {"theta": theta}}
    attention = _frequencies(cfg, doc, rope, prefix, rope_type, notes, rotary_dim)
    doc["title"] = (f"{model_type} config, rope_type {rope_type} (head_dim {head_dim}, rotated {rotary_dim}, "
                    f"{family.pairing} pairs)")
    if rotary_dim < head_dim and doc["frequencies"]["rule"] == "geometric":
        doc["frequencies"]["denominator"] = rotary_dim  # HF: the exponent's width is the rotated width
    if attention is not None:
        doc["attention"] = {"factor": attention}
    variant = parse_variant(doc, source)
    notes.append(scaling_note(variant))
    noted = dataclasses.replace(variant, notes=tuple(notes))
    # the notes change no value: keep the tables computed while validating
    noted.__dict__.update({k: v for k, v in variant.__dict__.items() if k.startswith("_")})
    return noted


def attention_scaling(variant: Variant) -> sp.Expr:
    """The exact factor HF multiplies cos and sin by (1 when the variant has none)."""
    return sp.Integer(1) if variant.factor is None else variant.factor.build(variant.width_env())


def scaling_note(variant: Variant) -> str:
    scaling = attention_scaling(variant)
    if scaling == 1:
        return "attention scaling 1: apply does not scale"
    return (f"attention scaling {sp.N(scaling, 10)}: HF multiplies cos and sin by it, so apply multiplies the "
            "rotated coordinates by it")


def _head_dim(cfg: _Config, model_type: str):
    data = cfg.data
    if model_type == "gptj":
        hidden = cfg.count(data, "n_embd", "", _MAX_HIDDEN) or cfg.count(data, "hidden_size", "", _MAX_HIDDEN)
        heads = cfg.count(data, "n_head", "", _MAX_HEADS) or cfg.count(data, "num_attention_heads", "", _MAX_HEADS)
        names = "n_embd // n_head"
        if hidden is None or heads is None:
            raise cfg.fail("n_embd", "n_embd and n_head are required (GPT-J's head_dim is n_embd // n_head)")
    else:
        explicit = cfg.count(data, "head_dim", "", MAX_WIDTH)
        if explicit:
            return explicit, "head_dim"
        if model_type == "gemma" and "head_dim" not in data:
            return 256, "GemmaConfig's default head_dim 256, not hidden_size // num_attention_heads"
        hidden = cfg.count(data, "hidden_size", "", _MAX_HIDDEN)
        heads = cfg.count(data, "num_attention_heads", "", _MAX_HEADS)
        names = "hidden_size // num_attention_heads"
        if hidden is None or heads is None:
            raise cfg.fail("head_dim", "head_dim, or hidden_size and num_attention_heads, are required")
    head_dim = hidden // heads
    if not 2 <= head_dim <= MAX_WIDTH:
        raise cfg.fail(names.split(" ")[0], f"gives head_dim {head_dim}; expected 2 to {MAX_WIDTH}")
    return head_dim, f"head_dim = {names} = {hidden} // {heads}"


def _rotary_dim(cfg, family, model_type, rope, prefix, rope_type, head_dim):
    data = cfg.data
    if family.partial == "rotary_dim":
        if "rotary_dim" in data and data["rotary_dim"] is None:
            raise cfg.fail("rotary_dim", "is null; HF's GPT-J then rotates with the model width's frequencies "
                                         "(not per head); expected the rotated width")
        dim = cfg.count(data, "rotary_dim", "", MAX_WIDTH) or 64
        if dim > head_dim:
            raise cfg.fail("rotary_dim", f"expected at most head_dim {head_dim}, got {dim}")
        return dim, f"first rotary_dim = {dim} of {head_dim} coordinates, exponent denominator {dim}"
    factor_key = "rotary_pct" if family.partial == "rotary_pct" else "partial_rotary_factor"
    value, key = None, None
    for table, where, name in ((rope, prefix, "partial_rotary_factor"), (data, "", factor_key)):
        value = cfg.number(table, name, where, low=0.0, high=1.0)
        if value is not None:
            key = where + name
            break
    if family.partial == "none":
        if value is not None and value != 1:
            raise cfg.fail(key, f"HF's {model_type} rotates the whole head (its apply_rotary_pos_emb has no "
                                f"pass-through part); expected 1, got {value}")
        return head_dim, f"whole head ({head_dim} coordinates)"
    shown = key
    if value is None:
        value, key, shown = family.default_partial, factor_key, f"{factor_key}, HF default"
    dim = int(head_dim * value)  # HF's own float arithmetic and truncation
    return dim, (f"first int(head_dim * {key.split('.')[-1]}) = int({head_dim} * {value}) = {dim} coordinates "
                 f"({shown}), exponent denominator {dim}")


def _theta(cfg, model_type, rope, prefix):
    data = cfg.data
    if model_type == "gptj":
        return 10000, "base 10000 (fixed in HF's GPT-J)"
    order = [(rope, prefix, "rope_theta")]
    order.append((data, "", "rotary_emb_base" if model_type == "gpt_neox" else "rope_theta"))
    for table, where, name in order:
        value = cfg.number(table, name, where, low=1.0)
        if value is not None:
            return value, f"base {value:g} ({where}{name})"
    return 10000, "base 10000 (HF default_theta)"


def _positions(cfg: _Config, key: str) -> int | None:
    name = "n_positions" if "n_positions" in cfg.data and key == "max_position_embeddings" else key
    value = cfg.count(cfg.data, name, "", MAX_LENGTH)
    return value or None


def _frequencies(cfg, doc, rope, prefix, rope_type, notes, rotary_dim):
    """Fill ``doc`` with the frequency rule of ``rope_type``; return the attention factor formula or None."""
    params = doc["params"]
    pairs = rotary_dim // 2
    if rope_type == "default":
        doc["frequencies"] = {"rule": "geometric", "base": "theta"}
        notes.append("rope_type default: omega_r = theta^(-2r/d)")
        return None
    factor = cfg.number(rope, "factor", prefix)
    max_pos = _positions(cfg, "max_position_embeddings")
    original = None
    if rope_type in ("yarn", "longrope", "llama3"):
        # HF's standardize_rope_params (run again by every rope init function) moves a top-level value in
        top = _positions(cfg, "original_max_position_embeddings")
        inner = cfg.count(rope, "original_max_position_embeddings", prefix, MAX_LENGTH) or None
        original = top or inner or max_pos
        if original is None:
            raise cfg.fail(prefix + "original_max_position_embeddings",
                           f"is required for rope_type {rope_type!r} (or max_position_embeddings)")
        source = ("top level" if top else prefix.rstrip(".") if inner else "max_position_embeddings")
        notes.append(f"original_max_position_embeddings {original} ({source})")
        params["L0"] = original
    if rope_type in ("linear", "dynamic", "llama3") and factor is None:
        raise cfg.fail(prefix + "factor", f"is required for rope_type {rope_type!r}")

    if rope_type == "linear":
        params["factor"] = factor
        doc["frequencies"] = {"rule": "formula", "formula": "theta**(-2*r/d) / factor"}
        notes.append(f"rope_type linear: every frequency divided by factor {factor:g}")
        return None
    if rope_type == "dynamic":
        if max_pos is None:
            raise cfg.fail("max_position_embeddings", "is required for rope_type 'dynamic' (the length the base "
                                                      "starts to grow at)")
        params.update(factor=factor, L=max_pos)
        doc["frequencies"] = {"rule": "geometric",
                              "base": "theta * Max(factor * seq_len / L - (factor - 1), 1)**(d / (d - 2))"}
        doc["length"] = {"threshold": max_pos}
        notes.append(f"rope_type dynamic: base grows with the call length seq_len = max position id + 1 once "
                     f"seq_len > max_position_embeddings {max_pos} (factor {factor:g})")
        return None
    if rope_type == "llama3":
        low = cfg.number(rope, "low_freq_factor", prefix)
        high = cfg.number(rope, "high_freq_factor", prefix)
        for key, value in (("low_freq_factor", low), ("high_freq_factor", high)):
            if value is None:
                raise cfg.fail(prefix + key, "is required for rope_type 'llama3'")
        if not low < high:
            raise cfg.fail(prefix + "high_freq_factor", f"expected > low_freq_factor {low:g}, got {high:g}")
        params.update(factor=factor, low_freq_factor=low, high_freq_factor=high)
        doc["frequencies"] = {"rule": "formula", "formula": "omega * ((1 - smooth) / factor + smooth)",
                              "let": {"omega": "theta**(-2*r/d)", "wavelength": "2 * pi / omega",
                                      "smooth": "ramp(L0 / wavelength, low_freq_factor, high_freq_factor)"}}
        notes.append(f"rope_type llama3: factor {factor:g}, low_freq_factor {low:g}, high_freq_factor {high:g}")
        return None
    if factor is None:
        if max_pos is None:
            raise cfg.fail(prefix + "factor", f"is required for rope_type {rope_type!r} (or max_position_embeddings)")
        factor = max_pos / original  # HF: the ratio when the config gives no factor
        notes.append(f"factor = max_position_embeddings / original = {max_pos} / {original}")
    params["factor"] = factor
    attention = cfg.number(rope, "attention_factor", prefix)
    if rope_type == "yarn":
        return _yarn(cfg, doc, rope, prefix, notes, rotary_dim, factor, attention)
    # longrope
    short = cfg.factors(rope, "short_factor", prefix, pairs)
    long = cfg.factors(rope, "long_factor", prefix, pairs)
    doc["frequencies"] = {"rule": "geometric", "base": "theta", "factors": short}
    doc["length"] = {"threshold": original, "long_factors": long}
    notes.append(f"rope_type longrope: short_factor while seq_len <= {original}, long_factor after")
    if attention is not None:
        return attention
    if factor <= 1:
        return None
    return "sqrt(1 + log(factor) / log(L0))"


def _yarn(cfg, doc, rope, prefix, notes, rotary_dim, factor, attention):
    params = doc["params"]
    beta_fast = cfg.number(rope, "beta_fast", prefix) or 32  # HF: `or`, so 0 means the default too
    beta_slow = cfg.number(rope, "beta_slow", prefix) or 1
    truncate = rope.get("truncate", True)
    if not isinstance(truncate, bool):
        raise cfg.fail(prefix + "truncate", f"expected true or false, got {truncate!r}"[:200])
    params.update(beta_fast=beta_fast, beta_slow=beta_slow)
    d = rotary_dim
    low = f"{d} * log(L0 / (beta_fast * 2 * pi)) / (2 * log(theta))"
    high = f"{d} * log(L0 / (beta_slow * 2 * pi)) / (2 * log(theta))"
    if truncate:
        low, high = f"floor({low})", f"ceiling({high})"
    low, high = f"Max({low}, 0)", f"Min({high}, {d - 1})"
    # HF adds 0.001 to the top of the ramp when both ends meet
    exact = {name: parse_formula(value, names=set(), where=f"{cfg.source}: {name}").build({})
             for name, value in params.items() if name in ("theta", "L0", "beta_fast", "beta_slow")}
    exact.update({name: parse_formula(text, names=set(exact), where=f"{cfg.source}: yarn ramp").build(exact)
                  for name, text in (("low", low), ("high", high))})
    if exact["low"] == exact["high"]:
        high = f"{high} + 1/1000"
    params.update(low=low, high=high)
    doc["frequencies"] = {"rule": "formula",
                          "formula": "omega * (1 - ramp(r, low, high)) + omega / factor * ramp(r, low, high)",
                          "let": {"omega": "theta**(-2*r/d)"}}
    notes.append(f"rope_type yarn: factor {factor:g}, beta_fast {beta_fast:g}, beta_slow {beta_slow:g}, "
                 f"{'truncated' if truncate else 'untruncated'} ramp over pairs "
                 f"{sp.N(exact['low'], 6)}..{sp.N(exact['high'], 6)}")
    if attention is not None:
        return attention
    mscale = cfg.number(rope, "mscale", prefix, low=0.0, strict_low=False)
    mscale_all_dim = cfg.number(rope, "mscale_all_dim", prefix, low=0.0, strict_low=False)
    if factor <= 1:
        return None
    if mscale and mscale_all_dim:
        params.update(mscale=mscale, mscale_all_dim=mscale_all_dim)
        return "(0.1 * mscale * log(factor) + 1) / (0.1 * mscale_all_dim * log(factor) + 1)"
    return "0.1 * log(factor) + 1"
