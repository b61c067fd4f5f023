"""How each HF transformers 5.24 model type applies RoPE: one row of data per ``model_type``.

The reader (:mod:`._model_config`) is generic; everything that differs between
families is a field of a :class:`Family` row, taken from that family's
``configuration_<family>.py`` and ``modeling_<family>.py``:

- ``theta``: the top-level keys HF takes the base from, in priority order, and
  ``default_theta`` (the config class's ``default_theta`` when no key is set);
- ``partial``: the top-level key of partial rotation (``partial_rotary_factor``,
  GPT-NeoX's ``rotary_pct``, GPT-J's ``rotary_dim``) and ``default_partial``,
  HF's value when the key is absent (Persimmon 0.5, StableLM 0.25, ...); a row
  without ``partial`` rotates the whole head and refuses a factor below 1;
- ``head``: the head-width rule: ``"explicit"`` (``head_dim``, else the class
  default ``default_head_dim``, else ``hidden_size // num_attention_heads``),
  ``"derived"`` (always ``hidden_size // num_attention_heads``: HF overwrites
  or has no ``head_dim``), ``"mla"`` (DeepSeek: ``qk_rope_head_dim`` rotated
  after ``qk_nope_head_dim`` copied coordinates), ``"gptj"`` (``n_embd // n_head``);
- ``pairing``: ``"half"`` (rotate_half, pairs ``(r, r + d/2)``) or
  ``"adjacent"`` (rotate_every_two / complex pairs ``(2r, 2r+1)``);
- ``layers``: how the decoder layers map to rotary regimes (``None``: one map
  for every layer; see :data:`LAYER_RULES`);
- ``reads``: further position-related keys the family reads or knows to leave
  the rotary map unchanged (attention masks, window sizes); every other key that
  looks rope-related (:data:`ROPE_LIKE`) is refused, never ignored.

A new family is one row here plus a test against HF's own rotary module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Family", "FAMILIES", "ROPE_LIKE", "COMMON_READS", "LAYER_RULES", "TEXT_CONFIGS", "TABLE_KEYS", "HEAD_KEYS",
           "LAYER_THETA", "LAYER_PATTERN", "MROPE", "MROPE_DEFAULT", "CLASS_DEFAULTS",
           "CLASS_DEFAULT_KEYS", "family_table"]

#: a top-level key whose name says it may change the rotary map in some HF family
ROPE_LIKE = re.compile(r"rope|rotary|nope|theta|partial|layer_types|sliding_window_pattern|position|base_freq|"
                       r"alibi|attn_every|temperature_tuning|floor_scale|attn_scale|mscale")

#: rope-looking keys that no row reads, with the value that says their feature is off: that value is
#: the map HF applies anyway, so a config giving it is read (with a note naming the key), any other
#: value refused.  Qwen2.5's own config.json has "use_mrope": false (HF's Qwen2Config does not read it).
INERT_UNREAD = {"use_mrope": False}

#: keys every row reads (the rope table, the lengths)
COMMON_READS = frozenset({"rope_scaling", "rope_parameters", "max_position_embeddings",
                          "original_max_position_embeddings", "partial_rotary_factor"})

#: keys of a rope table HF reads, per rope type (HF's ``_validate_<type>_rope_parameters``)
TABLE_KEYS = {
    "default": {"rope_type", "type", "rope_theta", "partial_rotary_factor"},
    "linear": {"factor"}, "dynamic": {"factor"},
    "yarn": {"factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale",
             "mscale_all_dim", "truncate"},
    "longrope": {"short_factor", "long_factor", "original_max_position_embeddings", "attention_factor", "factor"},
    "llama3": {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"},
    "proportional": {"factor"},
}

#: keys of a rope table that no rotation reads but some attention does, with what that attention does: a row's
#: config setting one is refused with this (the row's attention does not read it); a type read through
#: transformers reads it where identification sees the attention apply it
READ_BY_ATTENTION = {
    "llama_4_scaling_beta": "scales the rotated query by 1 + beta log(1 + floor(m / original_max_position_embeddings)) "
                            "in the attention of HF's ministral3 and mistral4 (read through transformers), not in "
                            "HF's {model_type}",
}

_HALF = "rotate_half, half pairs (r, r + d/2)"
_ADJ = "adjacent pairs (2r, 2r+1)"
#: the attention-mask keys of sliding-window families: they choose which keys a query sees, not the rotation
_WINDOWS = frozenset({"layer_types", "sliding_window", "use_sliding_window", "max_window_layers"})


@dataclass(frozen=True)
class Family:
    """How one HF model type applies RoPE (see the module docstring for each field)."""

    rotary: str  # HF's rotary embedding class in modeling_<module>.py
    module: str = ""  # transformers.models.<module> ("" = the model type)
    pairing: str = "half"
    how: str = _HALF  # the HF code that decides the pairing
    theta: tuple = ("rope_theta",)
    default_theta: float = 10000.0
    partial: str | None = None
    default_partial: float = 1.0
    #: HF's apply rotates as many coordinates as cos has (``rotary_dim = cos.shape[-1]``): an odd
    #: ``int(head * factor)`` gives ``(w + 1) / 2`` frequencies of exponent width ``w``, so ``w + 1`` rotate
    odd_width: bool = False
    head: str = "explicit"
    default_head_dim: int | None = None
    scaling: bool = True  # whether the family reads rope scaling at all
    refused_types: str = ""  # why rope types other than default are refused ("" = none are)
    layers: str | None = None
    rope_interleave: bool | None = None  # reads rope_interleave (this default): adjacent in, [even | odd] out
    reads: frozenset = field(default_factory=frozenset)
    notes: tuple = ()  # facts about the family a reader should see with the verdicts
    #: ``(key, why)``: keys HF's own config class writes (save_pretrained) but never reads back, so no value of
    #: theirs can change the map: a note, not a refusal
    written: tuple = ()

    @property
    def place(self) -> str:
        """Where the rotated coordinates sit in the head: at the start, or at the end (DeepSeek)."""
        return "end" if self.head == "mla" else "start"


def _row(rotary, **kwargs) -> Family:
    return Family(rotary, **kwargs)


_LLAMA_LIKE = dict(reads=_WINDOWS)
_MLA_SOFTMAX = ("deepseek: with rope scaling and mscale_all_dim, HF also multiplies the softmax scale by "
                "(0.1 * mscale_all_dim * ln(factor) + 1)^2 (yarn_apply_mscale): one constant for every position, "
                "not part of apply")

FAMILIES: dict = {
    "llama": _row("LlamaRotaryEmbedding"),
    "mistral": _row("MistralRotaryEmbedding", reads=_WINDOWS),
    "mixtral": _row("MixtralRotaryEmbedding", default_theta=1e6, reads=_WINDOWS),
    "qwen2": _row("Qwen2RotaryEmbedding", **_LLAMA_LIKE),
    "qwen2_moe": _row("Qwen2MoeRotaryEmbedding", **_LLAMA_LIKE),
    "qwen3": _row("Qwen3RotaryEmbedding", default_head_dim=128, **_LLAMA_LIKE),
    "qwen3_moe": _row("Qwen3MoeRotaryEmbedding", **_LLAMA_LIKE),
    "gemma": _row("GemmaRotaryEmbedding", default_head_dim=256),
    "gemma2": _row("Gemma2RotaryEmbedding", default_head_dim=256, layers="shared", reads=_WINDOWS,
                   notes=("gemma2: sliding and full layers alternate but share one rotary map",)),
    "gemma3_text": _row("Gemma3RotaryEmbedding", module="gemma3", default_theta=1e6, default_head_dim=256,
                        layers="gemma3", reads=_WINDOWS | {"rope_local_base_freq", "sliding_window_pattern"},
                        written=(("_sliding_window_pattern",
                                  "written by HF's Gemma3TextConfig (save_pretrained) as its copy of the pattern and "
                                  "overwritten when the config is read back (layer_types, else "
                                  "sliding_window_pattern, decides the layers)"),)),
    "cohere": _row("CohereRotaryEmbedding", pairing="adjacent",
                   how="repeat_interleave cos/sin with an every-other rotate_half, " + _ADJ, default_theta=5e5),
    "cohere2": _row("Cohere2RotaryEmbedding", pairing="adjacent",
                    how="repeat_interleave cos/sin with an every-other rotate_half, " + _ADJ, head="derived",
                    layers="cohere2", reads=_WINDOWS | {"sliding_window_pattern"}),
    "glm": _row("GlmRotaryEmbedding", pairing="adjacent",
                how="first half of cos/sin repeat_interleaved, every-other rotate_half, " + _ADJ,
                partial="partial_rotary_factor", default_partial=0.5, default_head_dim=128, odd_width=True),
    "glm4": _row("Glm4RotaryEmbedding", pairing="adjacent",
                 how="first half of cos/sin repeat_interleaved, every-other rotate_half, " + _ADJ,
                 partial="partial_rotary_factor", default_partial=0.5, default_head_dim=128, odd_width=True),
    "deepseek_v2": _row("DeepseekV2RotaryEmbedding", pairing="adjacent",
                        how="complex multiplication of view_as_complex pairs, " + _ADJ, head="mla",
                        reads=frozenset({"v_head_dim"}), notes=(_MLA_SOFTMAX,)),
    "deepseek_v3": _row("DeepseekV3RotaryEmbedding", head="mla", rope_interleave=True,
                        reads=frozenset({"v_head_dim", "rope_interleave"}), notes=(_MLA_SOFTMAX,)),
    "phi": _row("PhiRotaryEmbedding", partial="partial_rotary_factor", default_partial=0.5),
    "phi3": _row("Phi3RotaryEmbedding", partial="partial_rotary_factor", reads=_WINDOWS, odd_width=True),
    "phimoe": _row("PhimoeRotaryEmbedding", default_theta=1e6, reads=_WINDOWS,
                   refused_types="HF's phimoe recomputes its frequencies from the short factors on every call and "
                                 "switches the attention scaling between short_mscale and long_mscale with the call "
                                 "length; symproof's rotary definitions cannot state that switch"),
    "stablelm": _row("StableLmRotaryEmbedding", partial="partial_rotary_factor", default_partial=0.25),
    "falcon": _row("FalconRotaryEmbedding", head="derived", reads=frozenset({"alibi"})),
    "starcoder2": _row("Starcoder2RotaryEmbedding", reads=_WINDOWS),
    "olmo": _row("OlmoRotaryEmbedding"),
    "olmo2": _row("Olmo2RotaryEmbedding"),
    "granite": _row("GraniteRotaryEmbedding"),
    "granitemoe": _row("GraniteMoeRotaryEmbedding"),
    "llama4_text": _row("Llama4TextRotaryEmbedding", module="llama4", pairing="adjacent",
                        how="complex multiplication of view_as_complex pairs, " + _ADJ, default_theta=5e5,
                        default_head_dim=128, layers="no_rope",
                        reads=frozenset({"no_rope_layers", "no_rope_layer_interval", "layer_types",
                                         "attention_chunk_size", "attn_temperature_tuning", "floor_scale",
                                         "attn_scale"}),
                        notes=("llama4_text: with attn_temperature_tuning, HF's NoPE layers multiply the query "
                               "(only) by log1p(floor((m + 1) / floor_scale)) * attn_scale + 1: a per-position "
                               "scale, not a rotation, and not part of apply; rotary layers rotate, then L2-norm "
                               "q and k (use_qk_norm), which keeps the rotation",)),
    "smollm3": _row("SmolLM3RotaryEmbedding", default_theta=2e6, layers="no_rope",
                    reads=_WINDOWS | {"no_rope_layers", "no_rope_layer_interval"}),
    "gpt_neox": _row("GPTNeoXRotaryEmbedding", theta=("rotary_emb_base",), partial="rotary_pct",
                     default_partial=0.25, odd_width=True),
    "gptj": _row("GPTJRotaryEmbedding", pairing="adjacent", how="rotate_every_two, " + _ADJ, theta=(),
                 partial="rotary_dim", head="gptj", scaling=False, reads=frozenset({"n_positions", "rotary"})),
    "persimmon": _row("PersimmonRotaryEmbedding", partial="partial_rotary_factor", default_partial=0.5),
    "nemotron": _row("NemotronRotaryEmbedding", partial="partial_rotary_factor", default_partial=0.5),
    "gpt_oss": _row("GptOssRotaryEmbedding", how="chunk into halves, (first, second) pairs (r, r + d/2)",
                    default_theta=150000.0, default_head_dim=64, layers="shared", reads=_WINDOWS,
                    notes=("gpt_oss: sliding and full layers alternate but share one rotary map",)),
    "modernbert": _row("ModernBertRotaryEmbedding", theta=(), head="derived", layers="modernbert",
                       reads=_WINDOWS | {"global_rope_theta", "local_rope_theta", "global_attn_every_n_layers",
                                         "local_attention", "position_embedding_type"},
                       notes=("modernbert: HF's ModernBERT rotates in every layer; it does not read "
                              "position_embedding_type (published configs say 'absolute')",)),
    "qwen2_vl_text": _row("Qwen2VLRotaryEmbedding", module="qwen2_vl", default_theta=1e6, reads=_WINDOWS),
    "qwen2_5_vl_text": _row("Qwen2_5_VLRotaryEmbedding", module="qwen2_5_vl", default_theta=1e6, reads=_WINDOWS),
}

#: multimodal / wrapper model types: the text model is read from ``text_config`` (its own model_type, else
#: this one); ``True`` when HF builds the text config from the top-level keys if ``text_config`` is absent
TEXT_CONFIGS = {"qwen2_vl": ("qwen2_vl_text", True), "qwen2_5_vl": ("qwen2_5_vl_text", True),
                "gemma3": ("gemma3_text", False), "llama4": ("llama4_text", False)}

#: the multimodal RoPE (M-RoPE) families: mrope_section splits the pairs into t, h, w bands
MROPE = frozenset({"qwen2_vl_text", "qwen2_5_vl_text"})
#: HF's mrope_section when the rope table gives none (Qwen2VLRotaryEmbedding)
MROPE_DEFAULT = (16, 24, 24)

#: the per-layer rules (``Family.layers``): what the layer pattern is derived from
LAYER_RULES = {
    "shared": "layer_types (or the alternating default); every layer type has the same rotary map",
    "gemma3": "layer_types, else sliding_window_pattern (default 6): layer i is full_attention when (i + 1) % "
              "pattern == 0; sliding layers at rope_local_base_freq, full layers at rope_theta with the scaling",
    "cohere2": "layer_types, else sliding_window_pattern (default 4): sliding layers rotate, full_attention "
               "layers have no positional encoding (NoPE)",
    "modernbert": "layer_types, else global_attn_every_n_layers (default 3): layer i is full_attention when "
                  "i % n == 0; full layers at global_rope_theta, sliding layers at local_rope_theta",
    "no_rope": "no_rope_layers (1 = rotary, 0 = NoPE), else one NoPE layer every no_rope_layer_interval "
               "(default 4) layers",
}

#: the keys each head-width rule reads
HEAD_KEYS = {"explicit": frozenset({"head_dim"}), "derived": frozenset({"head_dim"}),
             "mla": frozenset({"qk_rope_head_dim", "qk_nope_head_dim", "head_dim"}),
             "gptj": frozenset({"n_embd", "n_head"})}
#: per layer type of the per-layer-theta rules: (theta keys, default theta, whether legacy rope_scaling applies)
LAYER_THETA = {
    "gemma3": {"full_attention": (("rope_theta",), 1e6, True),
               "sliding_attention": (("rope_local_base_freq",), 1e4, False)},
    "modernbert": {"full_attention": (("global_rope_theta",), 160000.0, True),
                   "sliding_attention": (("local_rope_theta",), 1e4, True)},
}
#: the layer-pattern default of each rule: (key, default, which layer types it yields)
LAYER_PATTERN = {"gemma3": ("sliding_window_pattern", 6), "cohere2": ("sliding_window_pattern", 4),
                 "modernbert": ("global_attn_every_n_layers", 3)}


#: HF's config class defaults of the sizes the reader needs, used when a config leaves a key out
#: (``<Family>Config()`` of transformers 5.24: hidden_size, num_attention_heads, num_hidden_layers,
#: max_position_embeddings)
CLASS_DEFAULTS = {
    'llama': (4096, 32, 32, 2048),
    'mistral': (4096, 32, 32, 131072),
    'mixtral': (4096, 32, 32, 131072),
    'qwen2': (4096, 32, 32, 32768),
    'qwen2_moe': (2048, 16, 24, 32768),
    'qwen3': (4096, 32, 32, 32768),
    'qwen3_moe': (2048, 32, 24, 32768),
    'gemma': (3072, 16, 28, 8192),
    'gemma2': (2304, 8, 26, 8192),
    'gemma3_text': (2304, 8, 26, 131072),
    'cohere': (8192, 64, 40, 8192),
    'cohere2': (8192, 64, 40, 8192),
    'glm': (4096, 32, 40, 131072),
    'glm4': (4096, 32, 40, 131072),
    'deepseek_v2': (4096, 32, 32, 2048),
    'deepseek_v3': (7168, 128, 61, 4096),
    'phi': (2048, 32, 24, 2048),
    'phi3': (3072, 32, 32, 4096),
    'phimoe': (4096, 32, 32, 131072),
    'stablelm': (2560, 32, 32, 4096),
    'falcon': (4544, 71, 32, 2048),
    'starcoder2': (3072, 24, 30, 4096),
    'olmo': (4096, 32, 32, 2048),
    'olmo2': (4096, 32, 32, 2048),
    'granite': (4096, 32, 32, 2048),
    'granitemoe': (4096, 32, 32, 2048),
    'llama4_text': (5120, 40, 48, 131072),
    'smollm3': (2048, 16, 36, 32768),
    'gpt_neox': (6144, 64, 44, 2048),
    'gptj': (4096, 16, 28, 2048),
    'persimmon': (4096, 64, 36, 16384),
    'nemotron': (6144, 48, 32, 4096),
    'gpt_oss': (2880, 64, 36, 131072),
    'modernbert': (768, 12, 22, 8192),
    'qwen2_vl_text': (8192, 64, 80, 32768),
    'qwen2_5_vl_text': (8192, 64, 80, 32768),
}
CLASS_DEFAULT_KEYS = ("hidden_size", "num_attention_heads", "num_hidden_layers", "max_position_embeddings")

def _width_rule(family: Family) -> str:
    if family.head == "mla":
        return "qk_rope_head_dim (default 64), after qk_nope_head_dim (default 128)"
    if family.head == "gptj":
        return "n_embd // n_head"
    if family.head == "derived":
        return "hidden_size // num_attention_heads (always)"
    if family.default_head_dim:
        return f"head_dim (default {family.default_head_dim})"
    return "head_dim, else hidden_size // num_attention_heads"


def _pairing_rule(family: Family) -> str:
    if family.rope_interleave is not None:
        return "rope_interleave (default true): adjacent pairs in, evens then odds out; false: half"
    return family.pairing


def _theta_rule(family: Family) -> str:
    if family.layers in LAYER_THETA:
        return "; ".join(f"{t.split('_')[0]}: {' / '.join(keys)} (default {default:g})"
                         for t, (keys, default, _) in LAYER_THETA[family.layers].items())
    if not family.theta:
        return "10000 (fixed)"
    return f"{' / '.join(family.theta)} (default {family.default_theta:g})"


def _partial_rule(family: Family) -> str:
    if family.partial is None:
        return "whole head"
    if family.partial == "rotary_dim":
        return "rotary_dim (default 64)"
    return f"{family.partial} (default {family.default_partial:g})"


def family_table() -> str:
    """The README's table of supported model types, generated from :data:`FAMILIES`."""
    wrappers = {}
    for outer, (inner, _) in TEXT_CONFIGS.items():
        wrappers.setdefault(inner, []).append(outer)
    rows = ["| model_type | theta (rope_theta in the rope table first) | partial rotation | head width | pairing "
            "| rotated part | rope scaling | layers |",
            "|---|---|---|---|---|---|---|---|"]
    for name in sorted(FAMILIES):
        family = FAMILIES[name]
        shown = f"`{name}`" + "".join(f" (and `{w}`'s text_config)" for w in wrappers.get(name, []))
        if name in MROPE:
            shown += ", M-RoPE mrope_section (default 16, 24, 24)"
        layers = "one map" if family.layers is None else LAYER_RULES[family.layers].split(";")[0]
        rows.append(f"| {shown} | {_theta_rule(family)} | {_partial_rule(family)} | {_width_rule(family)} "
                    f"| {_pairing_rule(family)} | {'end of the head' if family.place == 'end' else 'start'} "
                    f"| {'default only (' + family.refused_types.split(';')[0] + ')' if family.refused_types else 'yes' if family.scaling else 'no'} "
                    f"| {layers} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(family_table())
