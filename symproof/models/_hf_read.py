"""A model type with no row in the family table, read through transformers' own code.

When transformers is installed, a config whose ``model_type`` has no row of
:data:`._families.FAMILIES` is not refused outright: its text model is built
from the config with the sizes that do not enter the position map shrunk (two
attention heads of the config's own head width, a small MLP, vocabulary and
expert count; layer count, head width, rope parameters and layer pattern kept),
run once in float64, and every call of the modeling module's
``apply_rotary*`` function is recorded per decoder layer.  For each call the
recorder feeds HF's own function the basis vectors of the head, so what is
recorded is the linear map HF applies at each position, bit for bit.

Each layer's map is then identified, exactly:

- structure: which coordinates mix (pairs), whether pairs are ``(r, r + w/2)``
  (half) or ``(2r, 2r+1)`` (adjacent), every pair block ``[[c, -s], [s, c]]``
  bit for bit, the rotated width ``w`` at the start of the head and the other
  coordinates copied (exactly 1 on the diagonal, 0 elsewhere);
- frequencies and scaling: the recorded ``c, s`` of every pair at every probed
  position equal, to the last bit of float64, the cos and sin HF's reference
  rotary path (``StableLmRotaryEmbedding``, which reads every rope type and the
  partial factor, and which the family table's ``stablelm`` row is tested
  against) gives for the candidate row: the config's rope table, width ``w``;
- NoPE: a layer with no call, only where the config states a per-layer
  pattern and some other layer rotates.

HF computes its angles in float32, so the engine's exact frequencies rounded
to float64 cannot be compared bit for bit with HF's (about one pair in three
differs in the last float32 bit); the comparison is therefore with HF's own
reference path for the candidate, whose row the engine has proved and tested.
A model whose rotary class takes multi-axis (M-RoPE) positions is run again
with those positions replaced, one axis at a time and then mixed, and each
pair's axis is identified as well (:mod:`._hf_axes`).  Anything that does not
fit (a block that is not a rotation, a rotated block not at the start of the
head, a length-dependent rope type, an M-RoPE layout the engine's bands cannot
express, an inline rotation the recorder cannot see) is a refusal naming the
layer and what did not fit.  The identified regimes are read by the same reader as a
row's (:class:`._model_config._Reader`), so they go through the same proofs
and exports.

Longer than 600 lines: building, running and recording a shrunk transformers model is one procedure
whose steps share the recorder and the shrinking rules.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import sys
from typing import Mapping

from .._ground._errors import VariantFileError
from ._hf_axes import AXIS_NAMES, describe, drive, multi_axis_modules, pair_axes, substituting

__all__ = ["transformers_available", "identified_row"]

#: positions probed: distinct, beyond common trained lengths, and a count no head width shares
PROBE_POSITIONS = (0, 1, 2, 3, 7, 100, 4097, 40000, 65537)
#: rope types whose map does not depend on the call length: one call identifies them
LENGTH_FREE = ("default", "linear", "yarn", "llama3", "proportional")
#: the modeling module functions recorded: HF's rotary application helpers
_APPLY = re.compile(r"^_?apply_(rotary|rope)")
#: functions that rotate inline, outside an apply helper: seen in a layer, it cannot be read
_INLINE = re.compile(r"^(rotate_half|rotate_every_two|_rotate_half)$")
#: HF's query scale of Llama 4's attention, reused by Ministral 3 and Mistral 4 (``llama_4_scaling_beta``): the
#: attention multiplies the rotated query by what it returns, ``1 + beta log(1 + floor(m / L))``
_QUERY_SCALE = re.compile(r"^get_llama_4_attn_scale$")
#: config keys that state a per-layer pattern, under which a layer without rotation is NoPE by design
_LAYER_PATTERN_KEY = re.compile(r"no_?rope|nope|use_rope|rope_layers|layer_types|sliding_window_pattern|cross_attention_layers|block_types|"
                                r"attn_every|interval")
#: the most parameters a shrunk model may have (float64: 8 bytes each)
MAX_PARAMETERS = 40_000_000
#: shrunk sizes (they never enter the position map); keys absent from a config class are not added
_SHRINK = {"intermediate_size": 32, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32,
           "ffn_hidden_size": 32, "vocab_size": 512, "num_experts": 4, "n_routed_experts": 4,
           "num_local_experts": 4, "moe_num_experts": 4, "num_experts_per_tok": 2, "moe_k": 2, "moe_topk": 2,
           "top_k": 2, "n_group": 1, "topk_group": 1, "kv_lora_rank": 16, "q_lora_rank": 16, "o_lora_rank": 16, "n_shared_experts": 1,
           "num_shared_experts": 1, "linear_num_key_heads": 2, "linear_num_value_heads": 2,
           "linear_key_head_dim": 16, "linear_value_head_dim": 16, "mamba_n_heads": 2, "mamba_d_head": 16,
           "mamba_d_state": 16, "ssm_state_size": 16, "mamba_expand": 1,
           "vocab_size_per_layer_input": 512, "hidden_size_per_layer_input": 16, "index_n_heads": 2,
           "linear_num_heads": 2, "linear_head_dim": 16}

#: config keys read as sizes that never enter the position map (shrunk when not in _SHRINK), unless _KEEP matches
_SIZE = re.compile(r"(^|_)(ffn|mlp|expert|intermediate|lru|moe)\w*_(dim|size|width)$|vocab_size$")
_VOCAB = re.compile(r"vocab_size$")
_KEEP = re.compile(r"head|rope|rotary|position|window|^hidden_size$")  # hidden_size itself is set from the head
#: config keys read as expert counts (a router's width, never a position size), shrunk to 4 when not in _SHRINK
_EXPERTS = re.compile(r"(^|_)(num|n)_\w*experts$|(^|_)experts?_num$")
#: config keys read as the experts a token is routed to (a router's top-k), filled with 2 when left None
_TOP_K = re.compile(r"^(top_?k|num_experts_per_tok)(_experts)?$")
#: inputs some text models' forward needs besides token ids or hidden states, none of them entering the
#: rotary map (every rotary call is recorded and compared, whatever the inputs): (parameter of a module's
#: forward, what is passed). Tried only when the model does not run without them.
_EXTRA_INPUTS = (
    ("encoder_hidden_states", "states"),  # a decoder's cross-attention source (T5Gemma 2's decoder)
    ("t_cond", "condition"),  # a time conditioning of the norms (Voxtral Realtime)
    ("num_patches", "count"),  # how many inputs are image patches (DeepSeek-OCR-2's encoder), patches (BLT's)
    ("patch_ids", "patch ids"),  # the patch of each token (BLT's local encoder)
    ("patch_embeds", "global states"),  # the global model's patch states (BLT's local decoder)
)


def transformers_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None


def _fail(source: str, model_type: str, what: str) -> VariantFileError:
    """What did not fit; the caller says which config and model type (see :func:`read_through_transformers`)."""
    return VariantFileError(what[:300])


@dataclasses.dataclass(frozen=True)
class LayerMap:
    """The identified rotary map of one decoder layer (``width`` 0: NoPE)."""

    width: int
    pairing: str | None = None
    table: str = "{}"  # the rope table of the candidate, as sorted JSON
    partial: float = 1.0
    output_order: tuple | None = None  # the head's coordinates as written out after the rotation (see _LAYOUTS)
    axes: tuple | None = None  # M-RoPE: the position axis each rotated pair follows (see _hf_axes)
    head: int = 0  # the layer's head width (a config may set it per layer); 0: NoPE
    negated: bool = False  # every pair turns by -m omega_r (nanochat's rotate_half gives (x2, -x1))
    #: ``(beta, L)``: the layer's attention multiplies the rotated query by HF's get_llama_4_attn_scale(m, beta, L)
    query_scale: tuple | None = None


@dataclasses.dataclass(frozen=True)
class Identified:
    model_type: str
    text_type: str
    class_name: str
    version: str
    head: int
    data: dict  # the text config as HF resolved it (to_dict)
    layers: tuple  # LayerMap per decoder layer
    recorded: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)  # layer: (T, d, d) maps
    axis_count: int = 0  # M-RoPE: rows of position ids HF's rotary class takes (0: one position per token)
    #: M-RoPE: layer: [(rows of position ids (axes, T), (T, d, d) map)] recorded with substituted positions
    axis_runs: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    #: sizes the class defaults leave None that HF's own code uses, filled to build the model: (key, value)
    filled: tuple = ()
    #: what the identification set aside, for the output (a sparse-attention indexer's own rotation)
    notes: tuple = ()


def _hf_config(data: Mapping, source: str, model_type: str):
    import transformers

    kwargs = {k: v for k, v in data.items() if k not in ("model_type", "architectures", "transformers_version")}
    try:
        config = transformers.AutoConfig.for_model(model_type, **kwargs)
    except Exception as err:  # noqa: BLE001 -- any failure of HF's config class is this config's refusal
        raise _fail(source, model_type, f"HF's config class refused it ({type(err).__name__}: "
                                        f"{str(err).splitlines()[0][:160] if str(err) else ''})") from None
    text = config.get_text_config(decoder=True)
    return config, text


def _head_width(text) -> int | None:
    head = getattr(text, "head_dim", None)
    if isinstance(head, int) and head > 0:
        return head
    hidden, heads = getattr(text, "hidden_size", None), getattr(text, "num_attention_heads", None)
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        return hidden // heads
    return None


def _global(text):
    """``text`` itself, or for a heterogeneous config (HF's ``per_layer_config``) a copy with its per-layer
    overrides taken off, so that its global values read as before (HF raises on reading them globally)."""
    if not getattr(text, "per_layer_attributes", None):
        return text
    plain = text.__class__.from_dict(text.to_dict())
    plain.per_layer_config = None
    return plain


def _layer_heads(text, count: int) -> list | None:
    """The head width of each decoder layer of a config whose head width is set per layer, else None."""
    if not getattr(text, "per_layer_attributes", None):
        return None
    return [_head_width(text.per_layer_config[i]) for i in range(count)]


def _shrunk(text, head: int, stated=frozenset()):
    overrides = _overrides(text)
    small = text.__class__.from_dict(text.to_dict())
    if overrides:
        small.per_layer_config = None  # the global values are shrunk first, then each layer's overrides
    heads = 2
    small.num_attention_heads = heads
    if getattr(small, "num_key_value_heads", None) is not None:
        plain = _global(text)
        small.num_key_value_heads = 1 if plain.num_key_value_heads != plain.num_attention_heads else heads
    # head counts given one per layer (Laguna): two query heads and one or two key-value heads, as above
    queries = getattr(small, "num_attention_heads_per_layer", None)
    keys = getattr(small, "num_key_value_heads_per_layer", None)
    if isinstance(queries, list) and all(type(v) is int for v in queries):
        small.num_attention_heads_per_layer = [heads] * len(queries)
        if isinstance(keys, list) and len(keys) == len(queries) and all(type(v) is int for v in keys):
            small.num_key_value_heads_per_layer = [1 if k != q else heads for k, q in zip(keys, queries)]
    if hasattr(small, "hidden_size"):
        small.hidden_size = heads * head
    # a head_dim the config leaves out and its class leaves None is the width the reading takes (hidden_size /
    # num_attention_heads, as _head_width); a head_dim stated None stays None, as HF would build it
    if getattr(small, "head_dim", None) is not None or (hasattr(small, "head_dim") and "head_dim" not in stated):
        small.head_dim = head
    # the sizes the table names, then any other size the config class names as an MLP, expert, recurrence or
    # vocabulary size (a name never given to a head, rope or position size)
    sizes = {**{k: 32 if _VOCAB.search(k) is None else 512 for k in small.to_dict() if _SIZE.search(k)
                and not _KEEP.search(k)}, **{k: 4 for k in small.to_dict() if _EXPERTS.search(k)}, **_SHRINK}
    for key, value in sizes.items():
        current = getattr(small, key, None)
        if isinstance(current, int) and not isinstance(current, bool) and current > value:
            setattr(small, key, value)
        elif isinstance(current, list) and current and all(type(v) is int for v in current):  # one per layer
            setattr(small, key, [min(v, value) for v in current])
    _agree_mamba(small)
    vocab = getattr(small, "vocab_size", None)
    for key in small.to_dict():
        if key.endswith("token_id") and isinstance(vocab, int) and isinstance(getattr(small, key, None), int) \
                and getattr(small, key) >= vocab:
            setattr(small, key, 0)
    if overrides:
        globals_ = _global(text)
        small.per_layer_config = {layer: _shrunk_layer(values, sizes, heads, globals_)
                                  for layer, values in overrides.items()}
    small.use_cache = False
    # the grouped-matmul experts take no float64; the eager loop computes the same thing
    with contextlib.suppress(Exception):
        small._experts_implementation = "eager"
    return small


def _overrides(text) -> dict:
    """``{layer: {attribute: value}}``: what HF's ``per_layer_config`` sets per layer (empty for most configs)."""
    if not getattr(text, "per_layer_attributes", None):
        return {}
    import copy

    return {int(layer): copy.deepcopy(values) for layer, values in text._heterogeneity_spec.per_layer_overrides.items()}


def _shrunk_layer(values: dict, sizes: dict, heads: int, text) -> dict:
    """One layer's overrides shrunk by the rules of :func:`_shrunk`: two query heads and one or two key-value
    heads, the sizes that never enter the position map; its head width (``head_dim``, ``qk_*_head_dim``),
    rope parameters and window kept."""
    out = dict(values)
    queries = values.get("num_attention_heads", getattr(text, "num_attention_heads", None))
    if "num_attention_heads" in out:
        out["num_attention_heads"] = heads
    if "num_key_value_heads" in out and isinstance(out["num_key_value_heads"], int):
        out["num_key_value_heads"] = 1 if out["num_key_value_heads"] != queries else heads
    for key, value in sizes.items():
        current = out.get(key)
        if isinstance(current, int) and not isinstance(current, bool) and current > value:
            out[key] = value
        elif isinstance(current, list) and current and all(type(v) is int for v in current):
            out[key] = [min(v, value) for v in current]
    return out


def _agree_mamba(small):
    """A Mamba-2 mixer splits its inner width (``mamba_d_ssm``, else ``mamba_expand * hidden_size``) into
    ``mamba_n_heads`` heads of ``mamba_d_head``: after shrinking, the three must agree again (Bamba, Falcon-H1,
    GraniteMoeHybrid), else HF's forward fails on a reshape; they never enter the position map."""
    heads, width = getattr(small, "mamba_n_heads", None), getattr(small, "mamba_d_head", None)
    if not (isinstance(heads, int) and isinstance(width, int)):
        return
    if isinstance(getattr(small, "mamba_d_ssm", None), int):
        small.mamba_d_ssm = heads * width
    elif isinstance(getattr(small, "mamba_expand", None), (int, float)) and isinstance(small.hidden_size, int):
        small.mamba_d_head = max(1, int(small.mamba_expand * small.hidden_size) // heads)


class _Recorder:
    """Patches a modeling module's apply helpers; records each call's per-position linear map."""

    def __init__(self, module, torch):
        self.module, self.torch = module, torch
        self.layer = None
        self.calls: dict = {}
        self.inline: set = set()
        self.scales: dict = {}  # layer: [(position ids, beta, L)] of each call of HF's query-scale function
        self.callers: dict = {}  # layer: the class name of the module that made each recorded call, in order
        self.depth = 0

    def clear(self):
        """Forget the calls of an earlier forward."""
        for recorded in (self.calls, self.inline, self.scales, self.callers):
            recorded.clear()

    def _probe(self, original, args, kwargs):
        torch = self.torch
        tensors = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
        if not tensors:
            return None
        q = args[tensors[0]]
        width = q.shape[-1]
        axis = [i for i, n in enumerate(q.shape[:-1]) if n == len(PROBE_POSITIONS)]
        if len(axis) != 1:
            return None
        if q.shape[0] != 1 or axis[0] == 0:
            return None
        # basis vector e_j in batch row j: HF's cos and sin (batch 1) broadcast over the rows
        probe = torch.zeros((width,) + tuple(q.shape[1:]), dtype=q.dtype)
        for j in range(width):
            probe[j, ..., j] = 1
        call = list(args)
        call[tensors[0]] = probe
        if len(tensors) > 1 and args[tensors[1]].shape == q.shape:
            call[tensors[1]] = probe
        try:
            out = original(*call, **kwargs)
        except Exception:  # noqa: BLE001 -- the helper does not broadcast a batch: not probed
            return None
        out_q = out[0] if isinstance(out, tuple) else out
        if not isinstance(out_q, torch.Tensor) or out_q.shape != probe.shape:
            return None
        if isinstance(out, tuple) and len(out) > 1 and isinstance(out[1], torch.Tensor) \
                and out[1].shape == out_q.shape and not torch.equal(out[1], out_q):
            return "the query and the key are rotated differently"
        # (j, positions, heads, i): output coordinate i of e_j at each position and head
        moved = out_q.movedim(axis[0], 1).reshape(width, len(PROBE_POSITIONS), -1, width)
        if not bool((moved == moved[:, :, :1]).all()):
            return "the heads of one layer are rotated differently"
        return moved[:, :, 0].permute(1, 2, 0).to(torch.float64)  # (positions, i, j)

    @contextlib.contextmanager
    def patched(self):
        saved = {}
        for name, value in list(vars(self.module).items()):
            if callable(value) and not isinstance(value, type) and _APPLY.match(name):
                saved[name] = value
                setattr(self.module, name, self._wrap(name, value))
            elif callable(value) and not isinstance(value, type) and _INLINE.match(name):
                saved[name] = value
                setattr(self.module, name, self._watch(value))
            elif callable(value) and not isinstance(value, type) and _QUERY_SCALE.match(name):
                saved[name] = value
                setattr(self.module, name, self._scale(value))
        try:
            yield bool([n for n in saved if _APPLY.match(n)])
        finally:
            for name, value in saved.items():
                setattr(self.module, name, value)

    def _wrap(self, name, original):
        def recorded(*args, **kwargs):
            caller = type(sys._getframe(1).f_locals.get("self")).__name__  # the module whose forward called it
            self.depth += 1
            try:
                out = original(*args, **kwargs)
            finally:
                self.depth -= 1
            if self.depth == 0 and self.layer is not None:
                self.depth += 1
                try:
                    with self.torch.no_grad():
                        self.calls.setdefault(self.layer, []).append((name, self._probe(original, args, kwargs)))
                        self.callers.setdefault(self.layer, []).append(caller)
                finally:
                    self.depth -= 1
            return out

        return recorded

    def _scale(self, original):
        import inspect

        signature = inspect.signature(original)

        def scaled(*args, **kwargs):
            if self.layer is not None:
                # (position ids, beta, length), however the attention passes them
                positions, beta, length = (list(signature.bind(*args, **kwargs).arguments.values()) + [None] * 3)[:3]
                shown = positions.detach().clone() if isinstance(positions, self.torch.Tensor) else positions
                self.scales.setdefault(self.layer, []).append((shown, beta, length))
            return original(*args, **kwargs)

        return scaled

    def _watch(self, original):
        def watched(*args, **kwargs):
            if self.depth == 0 and self.layer is not None:
                self.inline.add(self.layer)
            return original(*args, **kwargs)

        return watched


def _decoder_layers(model, count):
    """The modules whose forward is one decoder layer, in order: a list of ``count`` decoder layers, else the
    attention modules numbered ``layer_idx = 0..count - 1`` each once (LongCat-Flash: two attention sublayers
    per decoder layer, ``num_hidden_layers`` counting both), else None."""
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == count:
            return list(module)
    numbered = {}
    for module in model.modules():
        index = getattr(module, "layer_idx", None)
        if type(index) is int and re.search(r"Attention|MLA", type(module).__name__):
            numbered.setdefault(index, []).append(module)
    if sorted(numbered) == list(range(count)) and all(len(found) == 1 for found in numbered.values()):
        return [numbered[k][0] for k in range(count)]
    return None


#: class-name endings of a modeling module's models, most preferred first: the bare text model, then a head
_MODEL_ENDINGS = ("TextModel", "Model", "ForCausalLM", "ForConditionalGeneration")


def _builders(config, transformers) -> list:
    """What can build a model of ``config``: the auto classes, then the classes of the config's modeling module
    whose ``config_class`` is exactly the config's class (a sub-config of a composite model, e.g. a talker or
    an encoder's text part, is registered with no auto class but has its own model class)."""
    import importlib
    import inspect

    found = [transformers.AutoModel, transformers.AutoModelForCausalLM]
    try:
        modeling = importlib.import_module(type(config).__module__.replace(".configuration_", ".modeling_"))
    except ImportError:
        return found
    own = [c for _, c in inspect.getmembers(modeling, inspect.isclass)
           if c.__module__ == modeling.__name__ and getattr(c, "config_class", None) is type(config)
           and issubclass(c, transformers.PreTrainedModel) and not c.__name__.endswith("PreTrainedModel")]
    rank = {c: next((k for k, e in enumerate(_MODEL_ENDINGS) if c.__name__.endswith(e)), len(_MODEL_ENDINGS))
            for c in own}
    return found + [_Direct(c) for c in sorted(own, key=lambda c: (rank[c], c.__name__))]


class _Direct:
    """A model class built from its config as an auto class builds it (``from_config``)."""

    def __init__(self, cls):
        self.cls = cls

    def from_config(self, config, dtype):
        return self.cls._from_config(config, dtype=dtype)


def _learned_rotary(model) -> str:
    """A rotary class of ``model`` with parameters (Mistral Large 4's LeRoPE ``alpha``), as ``"Name (alpha)"``,
    else ``""``: its map depends on the checkpoint's weights, which a model built from the config does not have
    (they are initialised to give the plain map), so the recorded map is not the model's."""
    for sub in model.modules():
        if type(sub).__name__.endswith("RotaryEmbedding"):
            learned = [name for name, _ in sub.named_parameters()]
            if learned:
                return f"{type(sub).__name__} ({', '.join(learned[:3])})"
    return ""


def _unset_sizes(small) -> dict:
    """The sizes that never enter the position map (as :func:`_shrunk` reads them) the config leaves ``None``,
    with the value the shrinking gives such a size."""
    out = {}
    for key, value in small.to_dict().items():
        if value is not None:
            continue
        if key in _SHRINK:
            out[key] = _SHRINK[key]
        elif _EXPERTS.search(key):
            out[key] = 4
        elif _TOP_K.search(key):
            out[key] = 2
        elif _SIZE.search(key) and not _KEEP.search(key):
            out[key] = 512 if _VOCAB.search(key) else 32
    return out


def _build(small, source: str, model_type: str):
    """``(model or None, errors)``: the shrunk text model built by the first builder that can, its parameters
    counted on the meta device first (a size the shrinking does not know must not fill memory)."""
    import torch
    import transformers

    builders = _builders(small, transformers)
    params = 0
    for auto in builders:
        try:
            with torch.device("meta"):
                sized = auto.from_config(small, dtype=torch.float64)
            params = sum(p.numel() for p in sized.parameters())
            del sized
            break
        except Exception:  # noqa: BLE001 -- the real build below says why
            params = 0
    if params > MAX_PARAMETERS:
        raise _fail(source, model_type, f"the shrunk text model still has {params} parameters (more than "
                                        f"{MAX_PARAMETERS}): a size it keeps is not one the reading knows to shrink")
    # the text model (AutoModel); a text config only a causal-LM head is registered for: that model; a text
    # config no auto class is registered for: the modeling module's own model class for it
    model, errors = None, []
    for auto in builders:
        try:
            with torch.random.fork_rng():
                torch.manual_seed(0)
                model = auto.from_config(small, dtype=torch.float64)
            break
        except Exception as err:  # noqa: BLE001 -- any failure of HF's own build is this config's refusal
            errors.append(f"{type(err).__name__}: {str(err).splitlines()[0][:120] if str(err) else ''}")
    return model, errors


def _run(text, head: int, source: str, model_type: str, stated=frozenset(), fill: bool = False):
    """Build the shrunk model and record one forward; when HF's own build or forward fails and the class
    defaults leave a size None that never enters the position map, once more with it filled."""
    try:
        return _run_once(text, head, source, model_type, stated, fill)
    except _Unfilled:
        return _run_once(text, head, source, model_type, stated, True)


class _Unfilled(Exception):
    """HF's forward failed on a model built with sizes left None that the shrinking can fill."""


def _run_once(text, head: int, source: str, model_type: str, stated, fill: bool):
    import importlib

    import torch

    small = _shrunk(text, head, stated)
    count = getattr(small, "num_hidden_layers", None)
    if not isinstance(count, int) or count < 1:
        raise _fail(source, model_type, "the text config has no num_hidden_layers")
    filled: tuple = ()
    unset = _unset_sizes(small)
    model, errors = (None, []) if fill and unset else _build(small, source, model_type)
    if model is None and unset:
        # HF's class defaults leave a size its own code uses None (Dots1's n_routed_experts): filled as the
        # shrinking sets it, since it never enters the position map; the output names it
        for key, value in unset.items():
            setattr(small, key, value)
        model, _ = _build(small, source, model_type)  # still failing: the class defaults' error says why
        filled = tuple(unset.items())
    if model is None:
        # the config's own model class (the last builders) says why it fails; an auto class only that it has none
        raise _fail(source, model_type, f"HF could not build the text model ({errors[-1]})")
    model.eval()
    module = importlib.import_module(type(model).__module__)
    multi_axis = multi_axis_modules(model)
    learned = _learned_rotary(model)
    if learned:
        raise _fail(source, model_type, f"HF's {learned} has learned parameters: the rotary map depends on the "
                                        "checkpoint's weights, not only on the config")
    layers = _decoder_layers(model, count)
    if layers is None:
        raise _fail(source, model_type, f"no list of {count} decoder layers in {type(model).__name__}, nor {count} "
                                        f"attention modules numbered layer_idx 0..{count - 1}")
    recorder = _Recorder(module, torch)
    for index, layer in enumerate(layers):
        def enter(_module, _args, index=index):
            recorder.layer = index

        def leave(_module, _args, _out):
            recorder.layer = None

        layer.register_forward_pre_hook(enter)
        layer.register_forward_hook(leave)
    T = len(PROBE_POSITIONS)
    ids = torch.arange(1, T + 1).reshape(1, T) % small.vocab_size
    positions = torch.tensor([PROBE_POSITIONS])
    numbering = _Numbering([m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")
                            and all(m is not a for a in multi_axis)], positions, torch)
    with recorder.patched() as found, torch.no_grad(), substituting(multi_axis) as substitute, numbering.patched():
        if not found:
            raise _fail(source, model_type, f"{module.__name__} has no apply_rotary* function to record")
        # token ids, else hidden states (an encoder or a depth decoder takes inputs_embeds only): the rotary
        # map does not depend on what is rotated, since the recorder feeds the apply function basis vectors
        hidden = getattr(small, "hidden_size", None)
        inputs = [{"input_ids": ids}]
        if isinstance(hidden, int):
            inputs.append({"inputs_embeds": torch.randn((1, T, hidden), dtype=torch.float64,
                                                        generator=torch.Generator().manual_seed(0))})
        extra = _extra_inputs(model, hidden, T, torch, getattr(small, "hidden_size_global", None))
        inputs += [{**given, **extra} for given in inputs if extra]
        # each input set with the position ids given; then, for a forward that takes none (Dia's encoder numbers
        # its tokens itself), without them, the single-axis rotary classes given the probed positions instead
        calls = [(given, {"position_ids": positions}) for given in inputs] + [(given, {}) for given in inputs]

        def forward():
            numbering.substitute = "position_ids" not in passed or numbering.renumbered
            model(**given, **passed, use_cache=False)

        first = None
        for given, passed in calls:
            recorder.clear()
            numbering.received.clear()
            try:
                forward()
                first = None
                break
            except Exception as err:  # noqa: BLE001
                first = first or err
        if first is not None and unset and not filled:
            raise _Unfilled()
        if first is not None:
            raise _fail(source, model_type, f"HF's forward failed on the shrunk model ({type(first).__name__}: "
                                            f"{str(first).splitlines()[0][:160] if str(first) else ''})") from None
        if "position_ids" in passed and numbering.ignored():
            # the forward took the position ids and gave its rotary classes others (CSM's depth decoder: 0..T-1)
            numbering.renumbered = True
            recorder.clear()
            forward()
        # M-RoPE: the same forward with the position ids of the multi-axis classes replaced, one axis at a time
        axes = (0, [])
        if substitute is not None:
            axes = drive(substitute, forward, recorder, PROBE_POSITIONS, lambda what: _fail(source, model_type, what))
    numbered = "position_ids" not in passed or numbering.renumbered
    return (type(model).__name__, count, recorder, axes, filled, tuple(k for k in given if k in dict(_EXTRA_INPUTS)),
            numbered)


class _Numbering:
    """The ``forward`` of single-axis rotary modules wrapped: the position ids they receive recorded and, while
    ``substitute`` is set, replaced by the probed ``positions`` (for a model that numbers its tokens itself)."""

    def __init__(self, modules, positions, torch):
        self.modules, self.positions, self.torch = modules, positions, torch
        self.received: list = []
        self.substitute = False
        self.renumbered = False

    def ignored(self) -> bool:
        """Whether a rotary class received position ids of the probed length other than the probed ones."""
        return any(p.shape[-1] == self.positions.shape[-1] and not bool((p == self.positions).all())
                   for p in self.received)

    def patched(self):
        from ._hf_axes import forwards_wrapped

        return forwards_wrapped(self.modules, self._wrap, self)

    def _wrap(self, _module, original):
        def forward(x, *args, **kwargs):
            key = "position_ids" if "position_ids" in kwargs else None
            given = kwargs[key] if key else (args[0] if args else None)
            if isinstance(given, self.torch.Tensor) and given.ndim == 2:
                self.received.append(given.detach().clone())
                if self.substitute and given.shape[-1] == self.positions.shape[-1]:
                    replaced = self.positions.to(given.device, given.dtype).expand(given.shape)
                    if key:
                        kwargs[key] = replaced
                    else:
                        args = (replaced,) + tuple(args[1:])
            return original(x, *args, **kwargs)

        return forward



def _extra_inputs(model, hidden, length: int, torch, global_width=None) -> dict:
    """The inputs of :data:`_EXTRA_INPUTS` that a forward of ``model`` or of one of its modules names, with
    random values (a fixed seed: every run is the same); ``global_width`` the width of a global model's states
    (BLT's ``hidden_size_global``)."""
    import inspect

    named = set()
    for sub in model.modules():
        with contextlib.suppress(TypeError, ValueError):
            named |= set(inspect.signature(sub.forward).parameters)
    random = torch.Generator().manual_seed(1)
    patches = max(1, length // 2)
    values = {"count": lambda: patches,
              "patch ids": lambda: torch.clamp(torch.arange(length) // 2, max=patches - 1)[None]}
    if isinstance(global_width, int):
        values["global states"] = lambda: torch.randn((1, patches, global_width), dtype=torch.float64,
                                                      generator=random)
    if isinstance(hidden, int):
        values["states"] = lambda: torch.randn((1, 5, hidden), dtype=torch.float64, generator=random)
        values["condition"] = lambda: torch.randn((1, 1, hidden), dtype=torch.float64, generator=random)
    return {name: values[kind]() for name, kind in _EXTRA_INPUTS if name in named and kind in values}


def _same_map(a, b) -> bool:
    """Whether two recorded calls are the same linear map, bit for bit (a call not probed is never the same)."""
    import torch

    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


#: how a rotated block of width w may be laid out: (pairing, the output order of the rotated coordinates or None).
#: "adjacent, out [even | odd]" is DeepSeek-V3's apply_rotary_pos_emb_interleave (multi-head latent attention):
#: adjacent pairs (2r, 2r+1) rotated, written out as [even | odd], which the family table's rows read as
#: rope_interleave (ModelRope.output_order)
_LAYOUTS = (("half", None), ("adjacent", None),
            ("adjacent", lambda w: tuple(range(0, w, 2)) + tuple(range(1, w, 2))))


def _structure(maps, layer: int, fail):
    """``(rotated width, pairing, output order or None)`` of a recorded map, each pair block checked to be a
    rotation, bit for bit (with an output order: of the map with its output rows put back in rotated order)."""
    import torch

    T, width, _ = maps.shape
    eye = torch.eye(width, dtype=torch.float64)
    moving = [i for i in range(width) if not (torch.equal(maps[:, i, :], eye[i].expand(T, width))
                                              and torch.equal(maps[:, :, i], eye[:, i].expand(T, width)))]
    w = len(moving)
    if w == 0:
        return 0, None, None
    k = w // 2
    if w % 2 == 0 and k < width // 2 and moving == list(range(k)) + list(range(width // 2, width // 2 + k)):
        # pairs (r, r + width/2) of the whole head for r < k only (HF's proportional rope): the whole head is the
        # rotated block, its other pairs turning at frequency 0 (identity blocks, checked below as rotations)
        w = width
    elif moving != list(range(w)) or w % 2:
        raise fail(f"layer {layer}: the coordinates that move ({_short(moving)}) are not an even block at the "
                   "start of the head")
    partners = {"half": lambda a: a + w // 2 if a < w // 2 else a - w // 2, "adjacent": lambda a: a ^ 1}
    for pairing, ordering in _LAYOUTS:
        order = None if ordering is None else ordering(w) + tuple(range(w, width))
        # output row k is rotated coordinate order[k]: row a of the rotation is output row order.index(a)
        rotation = maps if order is None else maps[:, [order.index(a) for a in range(width)], :]
        partner = partners[pairing]
        mask = torch.zeros((width, width), dtype=torch.bool)
        for a in range(w):
            mask[a, a] = mask[a, partner(a)] = True
        mask[w:, w:] = torch.eye(width - w, dtype=torch.bool)
        if bool((rotation[:, ~mask] == 0).all()):
            firsts = range(w // 2) if pairing == "half" else range(0, w, 2)
            for a in firsts:
                b = partner(a)
                if not (torch.equal(rotation[:, a, a], rotation[:, b, b])
                        and torch.equal(rotation[:, b, a], -rotation[:, a, b])):
                    raise fail(f"layer {layer}: the block of coordinates {a}, {b} is not a rotation "
                               "[[c, -s], [s, c]]")
            return w, pairing, order
    raise fail(f"layer {layer}: the rotated coordinates 0..{w - 1} are paired neither (r, r + w/2) nor (2r, 2r+1), "
               "nor (2r, 2r+1) written out as [even | odd]")


def _short(items) -> str:
    shown = ", ".join(str(i) for i in items[:8])
    return shown + (", ..." if len(items) > 8 else "")


def _tables(text):
    """``{layer type or None: rope table}`` as HF resolved the config (flat, or nested by layer type)."""
    rope = getattr(text, "rope_parameters", None)
    if not isinstance(rope, Mapping) or not rope:
        return None
    # nested by layer type; a type whose table is None has no rotation (Beam's full-attention layers: NoPE)
    if all(isinstance(v, Mapping) or v is None for v in rope.values()) and any(isinstance(v, Mapping)
                                                                               for v in rope.values()):
        return {k: dict(v) for k, v in rope.items() if v is not None}
    return {None: dict(rope)}


#: rope-table keys of M-RoPE, read from the recorded maps (the axis of each pair), not by the reference path
_MROPE_KEYS = ("mrope_section", "mrope_interleaved")
#: rope-table keys no rotary init function reads (see _reference)
_NOT_ROPE = ("llama_4_scaling_beta", "max_position_embeddings")


def _reference(table: dict, head: int, text, layer: int, fail, multi_axis: bool = False):
    """HF's reference cos and sin, ``(T, w/2)`` each, for the candidate row (rope table, head width)."""
    import torch
    from transformers.models.stablelm import configuration_stablelm, modeling_stablelm

    rope_type = table.get("rope_type", table.get("type", "default"))
    if rope_type not in LENGTH_FREE:
        raise fail(f"layer {layer}: rope_type {rope_type!r} depends on the call length (or has no reference "
                   f"row); one recorded call cannot identify it (identified: {', '.join(LENGTH_FREE)})")
    if not multi_axis and (table.get("mrope_section") is not None or table.get("mrope_interleaved")):
        raise fail(f"layer {layer}: the rope table has M-RoPE sections (multi-axis positions) but no rotary class "
                   "of the model takes multi-axis positions; which axis a pair follows is not identified")
    partial = table.get("partial_rotary_factor", getattr(text, "partial_rotary_factor", None))
    partial = 1.0 if partial is None else partial
    # the keys only an attention reads (llama_4_scaling_beta) and the copied max_position_embeddings are no rope
    # parameters: HF's reference path would warn about them, not read them
    params = {k: v for k, v in table.items() if k not in _MROPE_KEYS + _NOT_ROPE and k != "type"}
    params.update(rope_type=rope_type, partial_rotary_factor=partial)
    try:
        config = configuration_stablelm.StableLmConfig(
            hidden_size=head, num_attention_heads=1, num_key_value_heads=1,
            max_position_embeddings=getattr(text, "max_position_embeddings", 2048) or 2048, rope_parameters=params)
        rotary = modeling_stablelm.StableLmRotaryEmbedding(config)
    except Exception as err:  # noqa: BLE001
        raise fail(f"layer {layer}: the rope table {str(table)[:80]} is not one HF's reference path "
                   f"reads ({type(err).__name__})") from None
    x = torch.zeros((1, 1), dtype=torch.float64)
    cos, sin = rotary(x, torch.tensor([PROBE_POSITIONS]))
    half = cos.shape[-1] // 2
    return cos[0, :, :half], sin[0, :, :half], partial


def _per_layer(text) -> str:
    """The attributes a heterogeneous config sets per layer, with their values, as ``"head_dim (256, 512)"``; ``""``
    for a config with one value each (reading them globally, HF raises AmbiguousGlobalPerLayerAttributeError)."""
    names = sorted(getattr(text, "per_layer_attributes", None) or ())
    if not names:
        return ""
    layers = text.per_layer_config
    shown = []
    for name in names:
        values = sorted({repr(getattr(layers[i], name, None)) for i in range(len(layers))})
        shown.append(f"{name} ({', '.join(values[:4])}{', ...' if len(values) > 4 else ''})")
    return ", ".join(shown)


def identify(data: Mapping, source: str, model_type: str) -> Identified:
    import torch
    import transformers

    _config, text = _hf_config(data, source, model_type)
    text_type = getattr(text, "model_type", model_type) or model_type

    def fail(what):
        return _fail(source, model_type, what)

    # a heterogeneous config (HF's per_layer_config: Gemma 4's head width, Dots3's head counts, NeoMME's
    # window): each layer is shrunk, built and identified from its own config, HF's per_layer_config[layer]
    varying = _per_layer(text)
    head = _head_width(_global(text))
    if head is None or head < 2:
        raise fail("the text config gives no head width (head_dim, or hidden_size and num_attention_heads)")
    tables = _tables(text)
    if tables is None:
        raise fail("the text config has no rope_parameters: not a rotary model HF's config class describes")
    inner = data.get("text_config")
    stated = set(data) | (set(inner) if isinstance(inner, Mapping) else set())
    class_name, count, recorder, (axis_count, axis_runs), filled, given, numbered = _run(
        text, head, source, model_type, stated)
    layer_heads = _layer_heads(text, count)
    if layer_heads is not None and any(h is None or h < 2 for h in layer_heads):
        raise fail(f"the per-layer config ({varying}) gives a layer no head width")
    if axis_count and axis_count != len(AXIS_NAMES):
        raise fail(f"HF's multi-axis rotary class takes {axis_count} rows of position ids (one per axis); the "
                   f"engine's M-RoPE form has {len(AXIS_NAMES)} axes ({', '.join(AXIS_NAMES)})")
    rotating = {layer for layer, calls in recorder.calls.items() if calls}
    for rows, calls in axis_runs:  # the layers that rotate do not depend on the positions given
        if {layer for layer, c in calls.items() if c} != rotating:
            raise fail(f"with the position ids of the multi-axis rotary class replaced ({_short(rows[0])} on the "
                       "first axis), other layers apply a rotation than on text positions")
    layer_types = getattr(text, "layer_types", None)
    pattern = any(_LAYER_PATTERN_KEY.search(k) for k in text.to_dict())
    maps, recorded_maps, axis_maps, notes = [], {}, {}, []
    for layer in range(count):
        calls = recorder.calls.get(layer, [])
        if layer in recorder.inline:
            raise fail(f"layer {layer}: rotates inline (rotate_half outside an apply function); not recorded")
        if not calls:
            if recorder.scales.get(layer):
                raise fail(f"layer {layer} applies no rotation but its attention scales the query "
                           "(get_llama_4_attn_scale); a NoPE layer with a query scale is not read")
            maps.append(LayerMap(0))
            continue
        # the query and the key rotated by separate calls (Gemma 3n): one map if every call recorded the same
        if len(calls) > 1 and all(_same_map(calls[0][1], other) for _, other in calls[1:]):
            calls = calls[:1]
        elif len(calls) > 1:
            calls = _attention_call(calls, recorder.callers.get(layer, []), layer, notes)
        if len(calls) != 1:
            raise fail(f"layer {layer}: {len(calls)} rotary applications in one layer ({calls[0][0]}) that do not "
                       "record the same map; expected one")
        name, recorded = calls[0]
        if recorded is None:
            raise fail(f"layer {layer}: {name} was called without a (..., positions, head) tensor to probe")
        if isinstance(recorded, str):
            raise fail(f"layer {layer}: {recorded}")
        layer_text = text if layer_heads is None else text.per_layer_config[layer]
        layer_head = head if layer_heads is None else layer_heads[layer]
        rope_part = getattr(layer_text, "qk_rope_head_dim", None)
        if recorded.shape[-1] == rope_part and isinstance(getattr(layer_text, "qk_nope_head_dim", None), int):
            layer_head = rope_part  # multi-head latent attention: the apply function gets the [nope | rope] rope part
        if recorded.shape[-1] != layer_head:
            raise fail(f"layer {layer}: {name} receives {recorded.shape[-1]} of the head's {layer_head} coordinates; "
                       "where that block sits in the head is not identified")
        width, pairing, order = _structure(recorded, layer, fail)
        if width == 0:
            raise fail(f"layer {layer}: {name} leaves every coordinate unchanged")
        layer_type = layer_types[layer] if isinstance(layer_types, list) and len(layer_types) == count else None
        own = tables if layer_heads is None else (_tables(layer_text) or {})
        table = own.get(layer_type) if layer_type in own else own.get(None)
        if table is None:
            raise fail(f"layer {layer}: no rope table for layer type {layer_type!r}")
        cos, sin, partial = _reference(table, layer_head, layer_text, layer, fail, bool(axis_count))
        whole = _head_width(layer_text)
        if cos.shape[-1] != width // 2 and layer_head == rope_part and width == rope_part and whole != rope_part:
            # MLA whose rotary class takes its partial factor of head_dim (Dots3: int(256 * 0.25) = 64, the
            # qk_rope_head_dim): the whole rope part rotates, at the frequencies of that width (checked below)
            cos, sin, partial = _reference(table, whole, layer_text, layer, fail, bool(axis_count))
            if cos.shape[-1] == width // 2:
                table, partial = {k: v for k, v in table.items() if k != "partial_rotary_factor"}, 1.0
        if cos.shape[-1] != width // 2:
            raise fail(f"layer {layer}: {width} coordinates rotate, the rope table and partial factor {partial} "
                       f"give {2 * cos.shape[-1]}")
        firsts = list(range(width // 2)) if pairing == "half" else list(range(0, width, 2))
        seconds = [a + width // 2 for a in firsts] if pairing == "half" else [a + 1 for a in firsts]
        rotation = recorded if order is None else recorded[:, [order.index(a) for a in range(layer_head)], :]
        c = rotation[:, firsts, firsts]
        s = rotation[:, seconds, firsts]
        # a rotation by the negative angle (nanochat): every sin exactly the reference's negated, some not 0
        negated = bool((c == cos).all()) and bool((s == -sin).all()) and bool((sin != 0).any())
        for got, want, what in ((c, cos, "cos"), (-s if negated else s, sin, "sin")):
            if not bool((got == want).all()):
                t, r = [int(v) for v in (got != want).nonzero()[0]]
                other = next((k for k in range(want.shape[1]) if torch.equal(got[:, r], want[:, k])), None)
                hint = "" if other is None else (f" (it is pair {other}'s: HF permutes the frequencies across pairs, "
                                                 "which no row of the engine expresses)")
                raise fail(f"layer {layer}: pair {r} at position {PROBE_POSITIONS[t]}: {what} {float(got[t, r])!r} "
                           f"is not HF's reference {float(want[t, r])!r} for rope table {str(table)[:80]}{hint}")
        axes = None
        if axis_count:
            axes = pair_axes(layer, axis_count, [(rows, calls) for rows, calls in axis_runs], width, pairing, order,
                             cos, sin, PROBE_POSITIONS, fail)
            axis_maps[layer] = [(rows, _one(calls.get(layer))) for rows, calls in axis_runs]
        scale = _query_scale(recorder.scales.get(layer, []), table, layer, fail)
        table = {k: v for k, v in table.items() if k not in _MROPE_KEYS}  # read as the recorded axes
        maps.append(LayerMap(width, pairing, json.dumps(table, sort_keys=True, default=str), partial, order, axes,
                             layer_head, negated, scale))
        recorded_maps[layer] = recorded.numpy()
    if all(m.width == 0 for m in maps):
        raise fail("no decoder layer called a rotary apply function on the probed forward")
    if any(m.width == 0 for m in maps) and not pattern:
        nope = [i for i, m in enumerate(maps) if m.width == 0]
        raise fail(f"layers {_short(nope)} apply no rotation and the config states no per-layer pattern; "
                   "refused rather than read as NoPE")
    if numbered:
        notes.append(f"HF's {class_name} numbers its tokens itself (its rotary classes were not given the position "
                     "ids of the forward): they were given the probed positions, so the map identified is the one "
                     "its rotary classes apply at each position")
    if given:
        notes.append(f"HF's forward needs {', '.join(given)} besides the token ids: given random values (inputs of "
                     "the attention or norms, not of the rotary map; every rotary call was recorded and compared)")
    return Identified(model_type, text_type, class_name, transformers.__version__, head, text.to_dict(),
                      tuple(maps), recorded_maps, axis_count, axis_maps, filled, tuple(dict.fromkeys(notes)))


#: modules whose rotation only chooses which keys a query attends (DeepSeek-V3.2's sparse-attention indexer): a
#: layer's other call, from its attention module, is the scores' rotation
_INDEXER = re.compile(r"Indexer$")


def _attention_call(calls, callers, layer: int, notes: list):
    """The one call of a layer's attention module among calls that record different maps, when every other call
    is an indexer's (its rotation scores keys for selection, not the attention's scores), with a note; else the
    calls unchanged (refused by the caller)."""
    if len(callers) != len(calls):
        return calls
    attention = [k for k, c in enumerate(callers) if c.endswith("Attention")]
    others = [c for k, c in enumerate(callers) if k not in attention]
    if len(attention) != 1 or not others or not all(_INDEXER.search(c) for c in others):
        return calls
    (kept,) = attention
    by = sorted({f"{c} ({calls[k][0]})" for k, c in enumerate(callers) if k != kept})
    notes.append(f"{', '.join(by)} rotates its own queries and keys to choose which keys each query attends (sparse "
                 "attention): a content-dependent key selection, not a rotation of the scores; what is read and "
                 f"checked is the attention's rotation ({calls[kept][0]}, from {callers[kept]})")
    return [calls[kept]]


def _query_scale(calls, table: dict, layer: int, fail):
    """``(beta, L)`` when the layer's attention calls HF's ``get_llama_4_attn_scale`` once, at the layer's
    positions, with the rope table's ``llama_4_scaling_beta`` and ``original_max_position_embeddings``; None
    when it does not call it and the table sets no beta; else a refusal naming what differs."""
    import torch

    beta, length = table.get("llama_4_scaling_beta"), table.get("original_max_position_embeddings")
    if not calls:
        if beta is not None:
            raise fail(f"layer {layer}: the rope table sets llama_4_scaling_beta = {str(beta)[:20]} but the layer's "
                       "attention does not call HF's get_llama_4_attn_scale: a key the model may not read, refused")
        return None
    if len(calls) != 1:
        raise fail(f"layer {layer}: {len(calls)} calls of HF's get_llama_4_attn_scale in one layer; expected one")
    positions, got_beta, got_length = calls[0]
    if not isinstance(positions, torch.Tensor) or positions.tolist() != [list(PROBE_POSITIONS)]:
        raise fail(f"layer {layer}: HF's get_llama_4_attn_scale was called with other positions than the layer's")
    if (got_beta, got_length) != (beta, length):
        raise fail(f"layer {layer}: HF's get_llama_4_attn_scale was called with beta {str(got_beta)[:20]} and length "
                   f"{str(got_length)[:20]}, not the rope table's llama_4_scaling_beta and "
                   "original_max_position_embeddings")
    for value in (beta, length):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise fail(f"layer {layer}: llama_4_scaling_beta and original_max_position_embeddings must be numbers, "
                       f"got {str(value)[:20]}")
    if length <= 0:
        raise fail(f"layer {layer}: original_max_position_embeddings {length} divides the position; expected > 0")
    return beta, length


def _one(calls):
    """The map of a layer's first recorded call as numpy (pair_axes checked the others record the same)."""
    return calls[0][1].numpy()


def identified_row(identified: Identified) -> str:
    """The family-table row(s) the identification amounts to, as Python source."""
    rows = []
    for m in dict.fromkeys(m for m in identified.layers if m.width):
        interleave = ", rope_interleave=True" if m.output_order is not None else ""
        mrope = "" if m.axes is None else f"; M-RoPE {describe(m.axes)}"
        unstated = ("every pair turns by the negative angle" if m.negated else
                    "its attention scales the rotated query (llama_4_scaling_beta)" if m.query_scale else "")
        if unstated:
            rows.append(f"    # {identified.text_type}: {unstated}, which no field of a row states")
            continue
        # a proportional table's factor counts turning pairs of the whole head: a row rotating the whole head
        whole = json.loads(m.table).get("rope_type") == "proportional"
        partial = "" if whole else f', partial="partial_rotary_factor", default_partial={m.partial!r}'
        rows.append(f'    "{identified.text_type}": _row("{identified.class_name}", pairing="{m.pairing}"{interleave}'
                    f'{partial}),  # rotated width {m.width} of {m.head or identified.head}{mrope}')
    return "\n".join(rows)


def main(argv=None) -> int:
    """``python -m symproof.models._hf_read CONFIG.json``: the family-table row a config's type is read as."""
    import sys

    from ._json import read_config

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m symproof.models._hf_read CONFIG.json", file=sys.stderr)
        return 2
    if not transformers_available():
        print("python -m symproof.models._hf_read: needs transformers and torch installed", file=sys.stderr)
        return 2
    import transformers

    transformers.logging.set_verbosity_error()  # HF's warnings about its own class defaults are not the user's
    try:
        data = read_config(args[0])
        model_type = data.get("model_type") if isinstance(data, Mapping) else None
        if not isinstance(model_type, str):
            raise VariantFileError(f"{args[0]}: key 'model_type': expected a model type name")
        print(identified_row(identify(data, args[0], model_type)))
    except Exception as err:  # noqa: BLE001 -- one line, whatever HF raised
        print(f"{args[0]}: {str(err).splitlines()[0] if str(err) else type(err).__name__}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
