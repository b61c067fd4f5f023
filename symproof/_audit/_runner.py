"""The user's rotary code as one map ``(x, positions) -> x``: its calling convention found, not written.

Real code is rarely ``fn(x, positions)``.  :data:`CONVENTIONS` is the table
of calling conventions the audit knows, tried in order; each row says which
roles the user's code plays (an *apply* function, a *rotary module* that
makes ``cos, sin``, a *table* builder giving ``freqs_cis`` or ``(cos, sin)``,
a whole ``nn.Module``), how it is called, in which layouts and how positions
are passed.  A row is tried only when the signatures fit, then by a trial
call whose output must have the input's shape; the errors of the rows that
did not fit are kept, so that one clear line can list what was tried.  A row is
accepted only when its trial calls are linear in ``x`` and a constant multiple
of ``x`` at position 0 (:func:`_not_a_rotation`).

Every parameter of what the audit builds (a class, a table builder) is filled
from the declared model by the role its name says (:func:`fill_parameters`:
the base, each parameter of the scaling rule, a scaling object, a precision,
a length) or listed as left at its default; a default about scaling or length
while the model has such a value refuses the audit (:class:`DefaultRefused`).

This module needs nothing but the standard library and NumPy: it is run as a
script in the child process that imports the user's code (``_child.py``),
and imported in-process when :func:`symproof.audit` is given a Python object.

Longer than 600 lines: run by path as that child's whole program, it cannot import a sibling module
(importing symproof there would let a folder of the user's shadow it), so the convention table, the
parameter filling and the message framing it needs live in this one file, in that order.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import struct
import sys
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["CONVENTIONS", "LAYOUTS", "Session", "RunnerError", "load_target", "serve"]

#: how the canonical probe ``x`` of shape (N, T, d) is handed to the code (N samples, T positions, one head)
LAYOUTS = {
    "td": "(..., T, D)",
    "bhtd": "(B, H, T, D)",
    "bthd": "(B, T, H, D)",
    "tbhd": "(T, B, H, D)",
    "flat": "(num_tokens, heads * D)",
    "vector": "(D,) one token per call",
    "qkv": "(B, T, 3, H, D): q, k, v packed",
}

# parameter names by role (signature inspection)
_X = ("x", "t", "q", "xq", "query", "input", "inputs", "tensor", "hidden_states", "vec", "qk")
_K = ("k", "xk", "key")
_POS = ("positions", "position_ids", "input_pos", "pos_ids", "pos", "position", "positions_ids", "token_positions",
        "seqpos")
_OFFSET = ("offset", "start_pos", "start", "start_index_pos", "seq_start", "past_len", "cache_position",
           "seqlen_offset", "seqlen_offsets")
_COS, _SIN = ("cos", "cos_cached", "freqs_cos", "cos_emb"), ("sin", "sin_cached", "freqs_sin", "sin_emb")
_FREQS = ("freqs_cis", "freqs", "rope_cache", "freqs_cis_", "rotary_emb", "cis", "sincos", "cos_sin")
_DIM = ("dim", "n_elem", "d", "embed_dim", "rotary_dim", "rot_dim", "head_dim", "head_size", "dims", "embedding_dims",
        "dim_model")
_LEN = ("end", "seq_len", "max_seq_len", "max_position_embeddings", "max_position", "max_len",
        "max_positions", "seqlen", "n_positions", "max_seq_length", "length", "max_sequence_length")
_BASE = ("theta", "base", "rope_theta", "rotary_base", "rope_base", "freq_base")


#: extra parameters an apply may require, filled from the declared model (llama2.c's head_size...)
_FILLED = ("head_size", "head_dim", "dim", "rotary_dim", "rot_dim", "n_elem", "theta", "base", "rope_theta",
           "kv_dim", "position_ids")
#: a table's size an apply function may require (EasyLM's apply_rotary_emb(xq, xk, position_ids, max_pos)):
#: filled with the rows of the table the audit's positions need (never a length the model's rule reads)
_APPLY_TABLE_LEN = ("max_pos", "max_position", "max_positions", "max_seq_len", "max_len", "max_seq_length")


#: said after a MemoryError of the audited code (set when the child starts under a memory limit)
_memory_note = ""


class CallTimeout(BaseException):
    """Raised into the user's code by an in-process time limit: never taken for the code's own failure."""


class RunnerError(Exception):
    """A convention does not fit, or the code cannot be called; the message is one line."""


def _described(value) -> str:
    """``torch.Tensor of shape (4, 64), float64``: what a ``--call`` expression was given, for its errors."""
    kind = f"{type(value).__module__.split('.')[0]}.{type(value).__name__}"
    shape = getattr(value, "shape", None)
    return f"{kind} of shape {tuple(shape)}, {getattr(value, 'dtype', '?')}" if shape is not None else kind


def _one_line(err: BaseException, limit: int = 200) -> str:
    text = " ".join(str(err).split())
    name = type(err).__name__
    return (f"{name}: {text[:limit]}" if text else name) + (_memory_note if isinstance(err, MemoryError) else "")


# -- loading the target ---------------------------------------------------------------------------


_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def split_target(target: str) -> tuple:
    """``"file.py:Name.method"`` or ``"pkg.module:Name"`` -> ``(where, dotted name)``, or a clear error."""
    if not isinstance(target, str) or ":" not in target:
        raise RunnerError(f"expected FILE.py:NAME or package.module:NAME (e.g. my_rope.py:apply_rope), got {target!r}")
    where, name = target.rsplit(":", 1)
    if not where:
        raise RunnerError(f"expected FILE.py:NAME or package.module:NAME, got {target!r}")
    if not _NAME.match(name):
        raise RunnerError(f"expected NAME to be a Python name (a function, a class or Class.method), got {name!r}")
    if not where.endswith(".py") and not _NAME.match(where):
        raise RunnerError(f"expected FILE.py:NAME with a .py file, or an importable module name, got {target!r}")
    return where, name


def import_file(path: str, *, in_child: bool = True):
    """Import the user's ``FILE.py`` (running its code) with its folder on ``sys.path`` and no
    ``__pycache__`` left beside it; any failure is one :class:`RunnerError` line.

    In the audit's child (``in_child``) the file is imported once, a ``KeyboardInterrupt`` it
    raises is the code's failure, and its folder stays on ``sys.path`` (a function that imports a
    sibling lazily still finds it).  In the caller's own process it is imported afresh, a
    ``KeyboardInterrupt`` is the user's Ctrl-C and goes through, and ``sys.path`` is restored."""
    if not os.path.isfile(path):
        raise RunnerError(f"{path}: no such file")
    import hashlib

    module_name = "symproof_audited_" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]
    if in_child and module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise RunnerError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    saved_bytecode, saved_path = sys.dont_write_bytecode, list(sys.path)
    sys.dont_write_bytecode = True  # never leave __pycache__ in the user's folder
    sys.path.insert(0, folder)
    sys.modules[module_name] = module  # as any import does: dataclasses, pickle and typing look it up
    try:
        spec.loader.exec_module(module)
    except SyntaxError as err:
        sys.modules.pop(module_name, None)
        raise RunnerError(f"{path} does not import: SyntaxError at line {err.lineno}: {err.msg}") from None
    except BaseException as err:  # the user's code may raise anything, SystemExit and KeyboardInterrupt included
        sys.modules.pop(module_name, None)
        if not in_child and isinstance(err, KeyboardInterrupt):
            raise
        raise RunnerError(f"{path} does not import: {_one_line(err)}") from None
    finally:
        sys.dont_write_bytecode = saved_bytecode
        sys.path[:] = saved_path + ([folder] if in_child else [])
    return module


def load_target(target: str) -> tuple:
    """``(object, module)``: the named function, class, method or object, and the module it lives in."""
    where, name = split_target(target)
    if where.endswith(".py"):
        module = import_file(where)
    else:
        try:
            module = importlib.import_module(where)
        except BaseException as err:
            raise RunnerError(f"{where}: neither a .py file nor an importable module (importing it raised "
                              f"{_one_line(err)})") from None
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            defined = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                             and getattr(v, "__module__", None) == module.__name__)
            raise RunnerError(f"{where} defines no {name!r}; names defined there: "
                              f"{', '.join(defined[:20]) or 'none'}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise RunnerError(f"{where}: {name!r} is a {type(obj).__name__}, not a function, a class or a module")
    return obj, module


# -- arrays ---------------------------------------------------------------------------------------


def _library_of(module) -> list:
    """The array libraries to try, the module's own first (torch, jax, numpy)."""
    names = {getattr(v, "__name__", "").split(".")[0] for v in list(vars(module).values())} if module else set()
    text = ""
    try:
        text = inspect.getsource(module) if module is not None else ""
    except (OSError, TypeError):
        pass
    order = []
    if "torch" in names or "import torch" in text:
        order.append("torch")
    if "jax" in names or "import jax" in text:
        order.append("jax")
    order.append("numpy")
    if "torch" not in order and "torch" in sys.modules:
        order.append("torch")
    return order


_DTYPES = ("float64", "float32", "float16", "bfloat16")


class Arrays:
    """Conversions between NumPy float64 and the library the code takes."""

    def __init__(self, name: str, dtype: str = "float64"):
        self.name, self.dtype = name, dtype
        if name == "torch":
            import torch

            self.torch = torch
        if name == "jax":
            import jax
            import jax.numpy as jnp

            if dtype == "float64":
                jax.config.update("jax_enable_x64", True)
            self.jnp = jnp

    def values(self, x: np.ndarray):
        if self.name == "torch":
            return self.torch.from_numpy(np.ascontiguousarray(x)).to(getattr(self.torch, self.dtype))
        if self.name == "jax":
            return self.jnp.asarray(x, dtype=self.dtype)
        if self.dtype == "bfloat16":
            raise RunnerError("NumPy has no bfloat16; --dtype bfloat16 needs torch or jax code")
        return np.array(x, dtype=self.dtype)

    def ints(self, p: np.ndarray):
        if self.name == "torch":
            return self.torch.from_numpy(np.ascontiguousarray(p, dtype=np.int64))
        if self.name == "jax":
            return self.jnp.asarray(p)
        return np.array(p, dtype=np.int64)

    def gather(self, table, positions: np.ndarray):
        """Rows ``positions`` of a table the code built (``table[positions]``)."""
        if isinstance(table, (tuple, list)):
            return type(table)(self.gather(t, positions) for t in table)
        n = _length(table)
        if n is not None and positions.size and int(positions.max()) >= n:
            raise IndexError(f"position {int(positions.max())} is beyond the table's {n} rows")
        return table[self.ints(positions)]

    def __getattr__(self, name):
        if name == "torch":  # code given numpy arrays may still return torch tensors
            import torch

            self.torch = torch
            return torch
        raise AttributeError(name)

    def numpy(self, y) -> np.ndarray:
        module = type(y).__module__
        if module.startswith("torch"):
            y = y.detach().cpu()
            if y.is_complex():
                raise RunnerError("returned complex values; expected a real array")
            return y.to(self.torch.float64).numpy()
        if module.startswith("jax"):
            y = np.asarray(y)
        y = np.asarray(y)
        if np.iscomplexobj(y):
            raise RunnerError("returned complex values; expected a real array")
        if y.dtype.kind not in "fiub" and y.dtype.name != "bfloat16":
            raise RunnerError(f"returned {y.dtype} values, not numbers")
        return y.astype(np.float64)


def _length(table):
    shape = getattr(table, "shape", None)
    if shape is not None and len(shape) >= 1:
        try:
            return int(shape[0])
        except (TypeError, ValueError):
            return None
    return None


# -- signatures -----------------------------------------------------------------------------------


def _params(fn) -> list:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return _script_params(fn)
    if inspect.isclass(fn) and params and all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        # a metaclass's __call__(*args, **kwargs) hides the class's own (flax nnx): read its __init__
        init = getattr(fn, "__init__", None)
        if inspect.isfunction(init):
            params = list(inspect.signature(init).parameters.values())[1:]
    return params


def _script_params(fn) -> list:
    """The parameters of a TorchScript function (``@torch.jit.script``: ChatGLM's apply), which Python's
    ``inspect`` cannot read, from its schema; ``[]`` for any other object without a signature."""
    schema = getattr(fn, "schema", None) if type(fn).__name__ == "ScriptFunction" else None
    if schema is None:
        return []
    P = inspect.Parameter
    return [P(a.name, P.KEYWORD_ONLY if a.kwarg_only else P.POSITIONAL_OR_KEYWORD,
              default=a.default_value if a.has_default_value() else P.empty) for a in schema.arguments]


def _is_function(value) -> bool:
    """A Python function, or a TorchScript one (``@torch.jit.script``)."""
    return inspect.isfunction(value) or type(value).__name__ == "ScriptFunction"


def _fn_name(fn, default: str = "fn") -> str:
    """A function's name (a TorchScript function's own ``name``: its ``__name__`` is its class's)."""
    if type(fn).__name__ == "ScriptFunction":
        return str(getattr(fn, "name", default))
    return getattr(fn, "__name__", default)


def _names(fn) -> list:
    return [p.name for p in _params(fn) if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _required(fn) -> list:
    return [p.name for p in _params(fn) if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                                p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _has(fn, names) -> str | None:
    """The first parameter of ``fn`` named one of ``names``."""
    for n in _names(fn):
        if n.lower() in names:
            return n
    return None


def _call_of(obj):
    """What calling ``obj`` runs: ``forward`` for an ``nn.Module``, ``__call__`` for an object."""
    forward = getattr(obj, "forward", None)
    if forward is not None and callable(forward) and type(obj).__module__ != "builtins" and not inspect.isroutine(obj):
        return forward
    return obj


# -- instances from the declared model -------------------------------------------------------------


@dataclass
class Hints:
    """What the declared model says, for building the user's modules and tables (from the parent)."""

    head_dim: int
    rotated_dim: int
    pairing: str
    base: float | None = None
    max_position: int | None = None
    config: dict | None = None
    heads: int = 1
    scaling_factor: float | None = None
    rope: dict | None = None  # the model's rope values by role (rule, factor, original length...): hints_of
    seq_len: int | None = None  # the call length audited (--seq-len)
    probe_end: int | None = None  # the largest position probed + 1 (a table of these rows holds every probe)
    layer_type: str | None = None  # the HF layer type of the audited regime (--regime), for layer_type=
    axes_dim: list | None = None  # a multi-axis model's width of each axis's block, in axis order (or None)
    #: the model's order of the rotated block's outputs when it writes them permuted (DeepSeek-V3), or None
    output_order: list | None = None

    @classmethod
    def of(cls, data: dict) -> "Hints":
        return cls(**{k: data.get(k) for k in ("head_dim", "rotated_dim", "pairing", "base", "max_position",
                                                 "config", "scaling_factor", "rope", "seq_len", "probe_end",
                                                 "layer_type", "axes_dim", "output_order")}
                   | {"heads": 1})


def _config_dict(h: Hints) -> dict:
    """A transformers-style config for a module built from the declared model (``--like X.toml``)."""
    if h.config is not None:
        return dict(h.config)
    heads = 4
    data = {"head_dim": h.head_dim, "hidden_size": h.head_dim * heads, "num_attention_heads": heads,
            "num_key_value_heads": heads, "n_head": heads, "n_embd": h.head_dim * heads,
            "max_position_embeddings": h.max_position or 32768, "rotary_dim": h.rotated_dim}
    base = h.base if h.base is not None else 10000.0
    data["rope_theta"] = base
    data["rope_parameters"] = {"rope_type": "default", "rope_theta": base}
    if h.rotated_dim != h.head_dim:
        frac = h.rotated_dim / h.head_dim
        data.update(partial_rotary_factor=frac, rotary_pct=frac)
        data["rope_parameters"]["partial_rotary_factor"] = frac
    return data


def _config_class(cls, param):
    annotation = param.annotation
    if isinstance(annotation, str):  # from __future__ import annotations
        scope = getattr(sys.modules.get(cls.__module__), "__dict__", {})
        annotation = scope.get(annotation.split(".")[-1].strip("'\""))
    return annotation if inspect.isclass(annotation) else None


def _build_config(cls, param, h: Hints):
    """The config object a module's ``config`` parameter takes: the declared config as transformers builds it
    (its text part for a multimodal one, as its text model passes it) when the parameter takes a transformers
    config, whatever class it is annotated with (transformers' modules share annotations across models: the
    Qwen3-Omni talker's code predictor passes its own config where the annotation names the whole model's);
    else the class the parameter is annotated with, built from the config's keys (the text model's first)."""
    data = _config_dict(h)
    config_cls = _config_class(cls, param)
    if data.get("model_type") and (config_cls is None or _is_transformers_config(config_cls)):
        from transformers import AutoConfig

        rest = dict(data)
        try:
            return _text_config(AutoConfig.for_model(rest.pop("model_type"), **rest)), []
        except Exception:  # noqa: BLE001 - transformers refuses it as a whole: the annotated class is tried below
            if config_cls is None:
                raise
    if config_cls is None:
        raise RunnerError(f"{cls.__name__} takes a config whose class is not annotated; pass --like CONFIG.json "
                          "with a model_type")
    if isinstance(data.get("text_config"), dict):  # another class than the model's: the text model's keys win
        data = {**{k: v for k, v in data.items() if k != "text_config"}, **data["text_config"]}
    data.pop("model_type", None)
    if _is_dataclass(config_cls) and not _is_transformers_config(config_cls):  # (transformers' are dataclasses too)
        return _dataclass_config(config_cls, h, data)
    return _text_config(config_cls(**data)), []


def _config_text(config, left) -> str:
    """How a built config is shown: a transformers config as taken from ``--like``, a project's dataclass by
    the fields filled (``left``: those left at their defaults, listed with the other defaults)."""
    import dataclasses

    if not _is_dataclass(config) or isinstance(config, type) or _is_transformers_config(type(config)):
        return f"<{type(config).__name__} from --like>"
    unfilled = {entry.split(": ", 1)[1].split("=")[0] for entry in left}
    filled = [f"{f.name}={_shown_value(getattr(config, f.name))}" for f in dataclasses.fields(config)
              if f.init and f.name not in unfilled]
    return f"{type(config).__name__}({', '.join(filled)})"


def _dataclass_config(config_cls, h: "Hints", data: dict):
    """A project's own config dataclass (OLMo's ``ModelConfig``): each field filled as a parameter of that name
    would be (the base, the length, the head width, one head and the model width it makes), else from the
    config's key of that name, else left at its default (the config.json's other keys are not its fields)."""
    import dataclasses

    values, left = {}, []
    for field in dataclasses.fields(config_cls):
        if not field.init:
            continue
        default = field.default if field.default is not dataclasses.MISSING else inspect.Parameter.empty
        param = inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=default)
        value = _model_value(param, h, "float64", "build")
        if value is not _UNFILLED:
            values[field.name] = value
        elif field.name in data:
            values[field.name] = data[field.name]
        elif default is not inspect.Parameter.empty:
            left.append(f"{config_cls.__name__}: {field.name}={_shown_value(default)}")
            refusal = _default_refusal(param, h, config_cls.__name__, "builds")
            if refusal:
                raise DefaultRefused(f"cannot build {config_cls.__name__} without an assumption: {refusal}")
    return config_cls(**values), left


def _is_transformers_config(config_cls) -> bool:
    return any(base.__module__.startswith("transformers.") and base.__name__ in ("PretrainedConfig", "PreTrainedConfig")
               for base in getattr(config_cls, "__mro__", ()))


def _text_config(config):
    """A multimodal config's text part (Qwen2-VL's ``text_config``, Qwen2.5-Omni's
    ``thinker_config.text_config``): what its text model builds the rotary module from (the length, the base
    and the M-RoPE sections are the text model's).  transformers' own ``get_text_config(decoder=True)`` says
    which, as the model reader asks it (:mod:`symproof.models._hf_read`)."""
    finder = getattr(config, "get_text_config", None)
    if callable(finder):
        try:
            text = finder(decoder=True)
        except (TypeError, ValueError):  # an older transformers' signature, or several candidates
            text = None
        if text is not None and not isinstance(text, dict):
            return text
    text = getattr(config, "text_config", None)
    return text if text is not None and not isinstance(text, dict) else config


# -- every parameter filled from the model or named ------------------------------------------------

#: parameter names (lower case) by the model value that fills them; ``rope`` keys of :class:`Hints`
_ROPE_ROLES = {
    "factor": ("scaling_factor", "factor", "scale_factor", "rope_scaling_factor", "rope_factor",
               "rotary_scaling_factor", "dynamic_scale_factor"),
    "linear_factor": ("condense_ratio", "interpolate_factor", "interpolation_factor", "seq_len_interpolation_factor",
                      "position_interpolation_factor", "rope_condense_ratio", "linear_factor",
                      "rope_linear_scaling_factor", "linear_scaling_factor", "linear_scale"),
    # xformers' use_dynamic_scaling is Llama 3's rule, its parameters named dynamic_*
    "low_freq_factor": ("low_freq_factor", "dynamic_low_freq_factor"),
    "high_freq_factor": ("high_freq_factor", "dynamic_high_freq_factor"),
    "original_max_position": ("original_max_position_embeddings", "old_context_len", "original_max_seq_len",
                              "original_context_len", "original_max_position", "orig_max_position",
                              "original_seq_len", "dynamic_old_context_len"),
    "beta_fast": ("beta_fast",),
    "beta_slow": ("beta_slow",),
    "mscale": ("mscale",),
    "mscale_all_dim": ("mscale_all_dim",),
    "short_factor": ("short_factor", "short_factors", "rescale_factors_short"),
    "long_factor": ("long_factor", "long_factors", "rescale_factors_long"),
    "longrope_mscale": ("short_mscale", "long_mscale"),
    "extrapolation_factor": ("extrapolation_factor",),
    "attn_factor": ("attn_factor",),
    "scaled": ("use_scaled", "use_scaled_rope", "scaled", "use_rope_scaling", "rope_scaled", "use_dynamic_scaling"),
    "rope_scaling": ("rope_scaling", "rope_scaling_args", "rope_scaling_config", "scaling_args", "scaling_config",
                     "extra_config", "rope_parameters"),
}
_ROLE_OF = {name: role for role, names in _ROPE_ROLES.items() for name in names}
#: length parameters that size a table (not a property of the model, like max_position_embeddings)
_TABLE_LEN = ("end", "seq_len", "max_seq_len", "seqlen", "length", "max_len", "max_seq_length")
_BASES = _BASE + ("base_frequency", "rotary_emb_base", "rope_freq_base", "rotary_emb_base_freq", "temperature")
_DTYPE_NAMES = ("dtype", "precision", "rope_dtype", "cache_dtype", "compute_dtype", "freqs_dtype", "fprop_dtype")
#: the whole head's width (the rotated part is a fraction of it, given separately)
_HEAD = ("head_size", "head_dim", "kv_channels", "head_dims")
#: the number of attention heads (one: every layout the audit probes carries a single head)
_HEAD_COUNT = ("num_heads", "n_heads", "n_head", "num_attention_heads", "nheads", "n_heads_q")
#: the model's hidden width, which a config dataclass divides by its head count (OLMo's d_model // n_heads)
_MODEL_WIDTH = ("d_model", "hidden_size", "n_embd", "d_embed", "model_dim")
#: the rotated fraction of the head: rotated width / head width
_PROPORTION = ("rotary_percent", "rotary_pct", "rope_proportion", "partial_rotary_factor", "rotary_fraction",
               "rope_pct")
#: a geometric rule written as timescales min * (max / min)^(2i/d) (MaxText): min 1, max the base
_TIMESCALE = {"min_timescale": "one", "max_timescale": "base"}
#: where the code runs, not what it computes: one CPU process (shown in the call like every value filled)
_PLACEMENT = {"mesh": None, "use_cpu_initialization": True, "use_cpu_init": True}
#: what a parameter's name says it concerns (words of its lower-case name), when the audit cannot fill it
_CONCERNS = (
    ("scaling", ("scal", "factor", "ratio", "interpol", "extrapol", "mscale", "beta_", "ntk", "yarn", "longrope",
                 "rope_type", "condense")),
    ("precision", ("dtype", "precision", "fp16", "bf16", "half", "fp32")),
    ("length", ("max_position", "max_seq", "seq_len", "context_len", "max_len", "original_max", "block_size",
                "max_length")),
)
#: the fields of a scaling-arguments object (torchtitan's RoPEScalingArgs) by role
_FIELD_ROLES = dict(_ROLE_OF, theta="base", rope_theta="base", base="base")


class DefaultRefused(RunnerError):
    """A parameter about scaling, precision or length left at its default while the model has such a value."""


@dataclass
class Filling:
    """The keyword arguments of one callable filled from the model, and what was left at its default."""

    kwargs: dict
    shown: list
    defaults: list
    refusals: list


def _concern(param) -> str | None:
    name = param.name.lower()
    annotation = param.annotation if param.annotation is not param.empty else ""
    text = f"{name} {annotation if isinstance(annotation, str) else getattr(annotation, '__name__', annotation)}"
    default = param.default
    if type(default).__module__.startswith("torch") and type(default).__name__ == "dtype":
        return "precision"
    for concern, words in _CONCERNS:
        if any(w in text.lower() for w in words):
            return concern
    if _is_dataclass(default) and any(f in _FIELD_ROLES for f in _field_names(default)):
        return "scaling"
    return None


def _is_dataclass(value) -> bool:
    import dataclasses

    return dataclasses.is_dataclass(value)


def _field_names(obj) -> list:
    import dataclasses

    return [f.name for f in dataclasses.fields(obj)]


def _is_dtype_param(param) -> bool:
    default, annotation = param.default, param.annotation
    if type(default).__module__.startswith("torch") and type(default).__name__ == "dtype":
        return True
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    return "dtype" in str(text).lower() or (param.default is param.empty and param.name.lower() == "dtype")


def _torch_dtype(name: str):
    import torch

    return getattr(torch, name)


def _dtype_of(param, name: str):
    """The dtype ``name`` in the library the parameter's default or annotation is of (torch, else JAX's)."""
    default = param.default
    text = f"{getattr(type(default), '__module__', '')} {getattr(default, '__module__', '')} {param.annotation}"
    if "torch" not in text and ("jax" in text or "ml_dtypes" in text or "numpy" in text) and "jax" in sys.modules:
        return getattr(sys.modules["jax"].numpy, name)
    return _torch_dtype(name)


def _scaling_object(param, h: "Hints"):
    """The model's scaling for a parameter taking it as one object: ``None`` (no scaling), the HF-style dict,
    or the parameter's own dataclass (its default's class, or its annotation) rebuilt from the model's values;
    ``_UNFILLED`` when the model's scaling cannot be written in that form."""
    rope = h.rope or {}
    if not rope.get("known"):
        return _UNFILLED
    if not rope.get("scaled"):
        return None
    cls = type(param.default) if _is_dataclass(param.default) else _config_class_of(param)
    if cls is not None and _is_dataclass(cls):
        values = {}
        for name in _field_names(cls):
            role = _FIELD_ROLES.get(name.lower())
            if role is None:
                continue
            value = h.base if role == "base" else rope.get(role)
            if value is None:
                return _UNFILLED
            values[name] = value
        return cls(**values) if values else _UNFILLED
    return dict(rope["rope_scaling"]) if rope.get("rope_scaling") else _UNFILLED


def _config_class_of(param):
    annotation = param.annotation
    if annotation is param.empty:
        return None
    for arg in (annotation, *getattr(annotation, "__args__", ())):
        if inspect.isclass(arg) and _is_dataclass(arg):
            return arg
    return None


class _Unfilled:
    def __repr__(self):
        return "<unfilled>"


_UNFILLED = _Unfilled()


def _model_value(param, h: "Hints", dtype: str, where: str):
    """The model's value for ``param`` (by its name, its default's type or its annotation), or ``_UNFILLED``."""
    name = param.name.lower()
    rope = h.rope or {}
    required = param.default is param.empty
    if name in _HEAD:
        return h.head_dim
    if name in _AXES_DIM:
        return list(h.axes_dim) if h.axes_dim else _UNFILLED
    if name in _HEAD_COUNT:  # the probes' layouts carry one head: a module reshaping by it sees what it is given
        return h.heads
    if name in _MODEL_WIDTH:  # the width of the model's hidden states: its heads (one, as probed) times their width
        return h.head_dim * h.heads
    if name in _PROPORTION:  # a proportional rule's factor counts turning pairs; else the rotated fraction
        return rope["proportion"] if "proportion" in rope else h.rotated_dim / h.head_dim
    if name in _TIMESCALE:
        if h.base is None:
            return _UNFILLED
        return 1 if _TIMESCALE[name] == "one" else float(h.base)
    if name in _PLACEMENT:
        return _PLACEMENT[name]
    if name in _DIM:
        return h.rotated_dim
    if name in _BASES:
        if h.base is not None:
            return float(h.base)
        return 10000.0 if required else _UNFILLED
    # a code with no separate original length whose rule reads it (vLLM's YaRN) takes the original there
    if name in _LEN and rope.get("length_is_original") and rope.get("original_max_position") \
            and where == "no-original":
        return int(rope["original_max_position"])
    rows = _table_rows(h) if _is_table_length(name) else None  # a table's or a cache's size (cache_max_seq_len)
    if rows is not None:
        return rows
    if name in _LEN:
        if h.max_position is not None:
            return int(h.max_position)
        return 32768 if required else _UNFILLED
    if name == "is_neox_style":
        return h.pairing == "half"
    if name == "rotate_half" and isinstance(param.default, bool):  # timm: the half layout instead of adjacent pairs
        return h.pairing == "half"
    if name == "in_pixels" and isinstance(param.default, bool):
        # timm: True means positions rescaled to [-1, 1] with linear pixel bands; the model's are integer positions
        return False
    if name == "interleaved" and where != "apply":
        return h.pairing == "adjacent"
    if name in _DTYPE_NAMES and (_is_dtype_param(param) or required):
        return _dtype_of(param, dtype)
    role = _ROLE_OF.get(name)
    if role == "rope_scaling" and isinstance(param.default, bool):  # a switch (Megatron's rope_scaling=False)
        return bool(rope["scaled"]) if rope.get("known") else _UNFILLED
    if role == "rope_scaling":
        return _scaling_object(param, h)
    if role == "scaled":
        return bool(rope["scaled"]) if rope.get("known") else _UNFILLED
    if role == "factor" and h.scaling_factor is not None:
        return float(h.scaling_factor)
    if role is not None and rope.get(role) is not None:
        return rope[role]
    return _UNFILLED


def fill_parameters(fn, h: "Hints", dtype: str, skip=(), owner: str = "", where: str = "build") -> Filling:
    """Every parameter of ``fn`` beyond ``skip``: filled from the model, or listed at its default; a default
    about scaling, precision or length while the model has such a value is a refusal (the audit would
    otherwise compare the code with a value the model does not have)."""
    params = [p for p in _params(fn) if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
              and p.name != "self" and p.name not in skip]
    names = {p.name.lower() for p in params}
    place = "no-original" if not names & set(_ROPE_ROLES["original_max_position"]) else where
    # a linear factor with a parameter of its own (litgpt's condense_ratio) is not passed again as an object
    own_linear = (h.rope or {}).get("rule") == "linear" and bool(names & set(_ROPE_ROLES["linear_factor"]))
    out = Filling({}, [], [], [])
    for p in params:
        if own_linear and _ROLE_OF.get(p.name.lower()) == "rope_scaling":
            value = None
        else:
            value = _model_value(p, h, dtype, place if where == "build" else where)
        if value is not _UNFILLED:
            out.kwargs[p.name] = value
            out.shown.append(f"{p.name}={_shown_value(value)}")
            if _is_table_length(p.name.lower()) and isinstance(value, int) and value < (h.max_position or 0):
                out.shown[-1] += (f" (rows for the positions probed: max_position_embeddings {h.max_position} "
                                  f"would exceed {MAX_TABLE_ROWS} rows)")
            continue
        if p.default is p.empty:
            container = _empty_container(fn, p)
            if container is not None:  # a cache the code fills itself (OLMo's BufferCache): given empty
                out.kwargs[p.name] = container
                out.shown.append(f"{p.name}={type(container).__name__}()")
                continue
            raise RunnerError(f"cannot call {owner or getattr(fn, '__name__', 'the code')}: no value for its "
                              f"parameter {p.name!r} from the declared model")
        out.defaults.append(f"{owner}: {p.name}={_shown_value(p.default)}" if owner else
                            f"{p.name}={_shown_value(p.default)}")
        refusal = _default_refusal(p, h, owner, "builds") if where == "build" else None
        if refusal:
            out.refusals.append(refusal)
    return out


def _empty_container(fn, param):
    """An empty instance of a required parameter's annotated class when that class is a mapping the code fills
    itself (a cache: OLMo's ``BufferCache(dict)``), else ``None``."""
    annotation = param.annotation
    if isinstance(annotation, str):  # from __future__ import annotations
        module = sys.modules.get(getattr(fn, "__module__", ""))
        annotation = getattr(module, annotation.split("[")[0].split(".")[-1].strip("'\""), None)
    if not (inspect.isclass(annotation) and issubclass(annotation, dict)):
        return None
    try:
        return annotation()
    except Exception:  # noqa: BLE001 -- a mapping that needs arguments is not an empty cache
        return None


def _default_refusal(p, h: "Hints", owner: str, verb: str) -> str | None:
    """Why leaving ``p`` at its default would audit another model (a parameter about scaling, precision or
    length while the model has such a value), or None."""
    concern = _concern(p)
    has = _model_has(concern, h)
    if concern == "length" and p.default == h.max_position:
        has = None  # the default is the model's own length: nothing to pass
    if _ROLE_OF.get(p.name.lower()) and not (h.rope or {}).get("scaled"):
        has = None  # a scaling rule's own parameter (an original length) while the model has no scaling rule
    if not (concern and has):
        return None
    # a switch left off while the model scales: the value to pass is plain
    value = "True" if p.default is False and concern == "scaling" else "<the model's value>"
    return (f"{owner or 'the code'}'s parameter {p.name} is left at its default {_shown_value(p.default)}, but it "
            f"concerns {concern} and the model has {has}: the audit would compare the code at a value the model "
            f"does not have; pass {p.name} yourself with --call (an expression in x and positions that {verb} "
            f"{owner or 'the code'} with {p.name}={value})")


#: the most rows a table-sizing parameter is given from max_position_embeddings: beyond, the positions probed
#: (Llama 4's 10485760 rows of 128 float64 angles would take 10 GB for 18 positions)
MAX_TABLE_ROWS = 1 << 17


def _is_table_length(name: str) -> bool:
    """Whether a parameter named ``name`` sizes a table or a cache (not a property of the model)."""
    return name in _TABLE_LEN or ("cache" in name and any(w in name for w in ("len", "size", "seq", "position")))


def _table_rows(h: "Hints") -> int | None:
    """The rows a table-sizing parameter is given: ``--seq-len`` beyond the trained length, the model's
    length, or, when that is beyond :data:`MAX_TABLE_ROWS`, the positions probed."""
    if h.seq_len and h.seq_len > (h.max_position or 0):
        return int(h.seq_len)  # a table for the calls audited (--seq-len beyond the trained length)
    if h.max_position is None:
        return None
    if h.max_position > MAX_TABLE_ROWS and h.probe_end is not None:
        return max(int(h.probe_end), MAX_TABLE_ROWS)
    return int(h.max_position)


def _model_has(concern: str | None, h: "Hints") -> str | None:
    rope = h.rope or {}
    if concern == "scaling" and rope.get("scaled"):
        return rope.get("description") or "a scaling rule"
    if concern == "length" and h.max_position is not None:
        return f"max_position_embeddings {h.max_position}"
    if concern == "precision":
        return None  # every precision parameter the audit recognises is filled with the dtype it audits
    return None


def _shown_value(value) -> str:
    if type(value).__module__.startswith("torch") and type(value).__name__ == "dtype":
        return str(value)
    if inspect.isclass(value) and value.__module__.startswith("jax"):
        return f"jax.numpy.{value.__name__}"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def instantiate(cls, h: Hints, hints_used: list, dtype: str = "float32"):
    """``cls`` built from the declared model: a ``config`` parameter, or every parameter by its role
    (:func:`fill_parameters`); returns ``(instance, filling)``."""
    config: dict = {}
    config_left: list = []
    for p in _params(cls):
        name = p.name.lower()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and (
                name == "config" or name.endswith("_config") and name not in _ROLE_OF):
            config[p.name], left = _build_config(cls, p, h)
            config_left += left
            hints_used.append(f"{p.name}={_config_text(config[p.name], left)}")
    # a linen module's own fields parent and name place it in a tree of modules: not the rotary's parameters
    framework = ("parent", "name") if _is_linen_class(cls) else ()
    filling = fill_parameters(cls, h, dtype, skip=tuple(config) + framework, owner=cls.__name__)
    filling.defaults[:0] = config_left  # a config dataclass's fields left at their defaults, listed as the others
    hints_used += filling.shown
    kwargs = {**config, **filling.kwargs}
    try:
        return cls(**kwargs), filling
    except RunnerError:
        raise
    except Exception as err:
        raise RunnerError(f"{cls.__name__}({', '.join(kwargs)}) raised {_one_line(err)}") from None


def _bound_of(obj) -> int | None:
    """The largest position count a built object holds tables for (a cache's rows, max_seq_len)."""
    bounds = []
    for attr in ("max_seq_len", "max_position_embeddings", "max_positions", "max_len", "max_seq_len_cached"):
        value = getattr(obj, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            bounds.append(value)
    for attr in ("cache", "cos_sin_cache", "freqs_cis", "cos_cached", "sin_cached", "_cos_cached", "rope_cache"):
        table = getattr(obj, attr, None)
        shape = getattr(table, "shape", None)
        if shape is None or callable(table) or len(shape) < 1:
            continue
        dims = [int(v) for v in shape]
        while len(dims) > 2 and dims[0] == 1:  # (1, 1, positions, d): transformers' old cos_cached
            dims = dims[1:]
        if dims[0] > 1:
            bounds.append(dims[0])
    return min(bounds) if bounds else None


# -- the conventions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Convention:
    """A row of :data:`CONVENTIONS`: ``roles`` the code plays, how ``apply`` is called, in which layouts."""

    name: str
    call: str  # shown in the output: how the code is called
    entry: str  # the role of the named target: "apply" | "module" | "maker" | "table" | "expr"
    args: tuple  # the apply's arguments in order: x, k, positions, cos, sin, freqs, offset, position(scalar)
    layouts: tuple
    positions: str = "shared"  # shared (T,) | full x.shape[:-1] | contiguous (one call per position) | scalar
    needs: str | None = None  # "rotary" (a module making cos, sin) | "table" (a builder) | None
    returns: str = "x"  # x | qk | inplace
    split: bool = False  # the caller rotates x[..., :r] only (r from the cos table) and keeps the rest (HF partial)
    batch_rows: bool = False  # the table's rows are given a leading batch axis: cos[positions][None] (litgpt)
    # multi-axis positions (T, A): "leading" passes them as (A, B, T) position ids (Qwen2-VL's M-RoPE),
    # "ids" as (T, A) ids to a module making the tables (Flux); such rows are tried only for a multi-axis model
    axes: str | None = None


#: the calling conventions of real code, tried in this order (the first whose trial call fits is used)
CONVENTIONS = (
    Convention("expression", "--call EXPR, in x and positions", "expr", ("x", "positions"), ("td",)),
    Convention("x-positions-full", "fn(x, positions) with positions of x.shape[:-1]", "apply", ("x", "positions"),
               ("td", "bthd", "bhtd"), positions="full"),
    Convention("x-positions", "fn(x, positions)", "apply", ("x", "positions"), ("td", "bhtd", "bthd", "tbhd"),
               positions="shared"),
    Convention("qk-positions-full", "fn(q, k, positions) -> (q, k), positions of q.shape[:-1]", "apply",
               ("x", "k", "positions"), ("td", "bthd", "bhtd"), positions="full", returns="qk"),
    Convention("qk-positions", "fn(q, k, positions) -> (q, k)", "apply", ("x", "k", "positions"),
               ("td", "bhtd", "bthd", "tbhd"), positions="shared", returns="qk"),
    Convention("vllm", "forward_native(positions, query, key) -> (query, key), flattened tokens", "module",
               ("positions", "x", "k"), ("flat",), positions="full", returns="qk"),
    Convention("hf-rotary", "rotary(x, position_ids) -> (cos, sin); apply(q, k, cos, sin)", "apply",
               ("x", "k", "cos", "sin"), ("bhtd", "bthd", "td"), needs="rotary", returns="qk"),
    Convention("hf-rotary-partial", "rotary(x, position_ids) -> (cos, sin); apply(q[..., :r], k[..., :r], cos, "
               "sin), the rest of q, k kept (partial rotary)", "apply", ("x", "k", "cos", "sin"),
               ("bhtd", "bthd", "td"), needs="rotary", returns="qk", split=True),
    Convention("neox-offset", "rotary(x, seq_len=n) -> whole (cos, sin) tables; apply(q, k, cos, sin, offset=start) "
               "with q (T, B, H, D): contiguous positions, one call per position (GPT-NeoX)", "apply",
               ("x", "k", "cos", "sin", "offset"), ("tbhd",), positions="contiguous", needs="rotary", returns="qk"),
    Convention("hf-rotary-cis", "rotary(x, position_ids) -> freqs_cis (complex); apply(xq, xk, freqs_cis) "
               "(Llama 4: q (B, T, H, D); DeepSeek-V2: q (B, H, T, D))", "apply", ("x", "k", "freqs"),
               ("bthd", "bhtd"), needs="rotary", returns="qk"),
    Convention("rotary-x", "rotary(x, position_ids) -> (cos, sin); apply(x, cos, sin)", "apply",
               ("x", "cos", "sin"), ("bthd", "bhtd", "td"), needs="rotary"),
    Convention("rotary-x-partial", "rotary(x, position_ids) -> (cos, sin); apply(x[..., :r], cos, sin), the rest "
               "kept (partial rotary)", "apply", ("x", "cos", "sin"), ("bthd", "bhtd", "td"), needs="rotary",
               split=True),
    Convention("angles-module", "freqs = module(positions); apply(freqs, x)", "apply", ("freqs", "x"),
               ("td", "bhtd", "bthd"), needs="angles"),
    Convention("angles-scale-module", "freqs, scale = module(positions); apply(x, freqs, scale) (x-transformers: "
               "the scale 1 unless xpos)", "apply", ("x", "freqs", "scale"), ("td", "bhtd"), needs="angles"),
    Convention("table-freqs-qk", "table = build(dim, end, theta); apply(xq, xk, table[positions])", "apply",
               ("x", "k", "freqs"), ("bthd", "bhtd", "td", "tbhd"), needs="table", returns="qk"),
    Convention("table-freqs", "table = build(dim, end, theta); apply(x, table[positions])", "apply",
               ("x", "freqs"), ("bthd", "bhtd", "td", "tbhd"), needs="table"),
    Convention("table-cos-sin-qk", "cos, sin = build(dim, end, theta); apply(q, k, cos[positions], sin[positions])",
               "apply", ("x", "k", "cos", "sin"), ("bthd", "bhtd", "td"), needs="table", returns="qk"),
    Convention("table-cos-sin", "cos, sin = build(dim, end, theta); apply(x, cos[positions], sin[positions])",
               "apply", ("x", "cos", "sin"), ("bthd", "bhtd", "td"), needs="table"),
    Convention("table-cos-sin-batch", "cos, sin = build(dim, end, theta); apply(x, cos[positions][None], "
               "sin[positions][None]): tables with a batch axis (B, T, D)", "apply", ("x", "cos", "sin"),
               ("bhtd", "td", "bthd"), needs="table", batch_rows=True),
    Convention("length-module", "freqs = module(n) (angles of positions 0..n-1); apply(x, freqs[positions])", "apply",
               ("x", "freqs"), ("tbhd", "bthd", "bhtd", "td"), needs="length"),
    Convention("positions-table", "freqs = build(dim, <positions keyword>=positions, theta); apply(x, freqs)",
               "apply", ("x", "freqs"), ("bhtd", "bthd", "td"), needs="positions-table"),
    Convention("table-cos-sin-partial", "cos, sin = build(dim, end, theta); apply(x[..., :r], cos[positions], "
               "sin[positions]), the rest kept", "apply", ("x", "cos", "sin"), ("bthd", "bhtd", "td"),
               needs="table", split=True),
    Convention("module-positions", "module(x, <positions keyword>=positions)", "module", ("x", "positions"),
               ("bthd", "td", "bhtd", "tbhd"), positions="full"),
    Convention("module-positions-shared", "module(x, <positions keyword>=positions), positions (T,)", "module",
               ("x", "positions"), ("td", "bthd", "bhtd"), positions="shared"),
    Convention("module-qk-positions", "module(q, k, positions) -> (q, k)", "module", ("x", "k", "positions"),
               ("bhtd", "bthd", "td"), positions="full", returns="qk"),
    Convention("module-qk-implicit", "module(q, k) -> (q, k), positions 0..T-1 implicit: the probes placed at their "
               "positions in a longer call", "module", ("x", "k"), ("td", "bhtd", "bthd"), positions="prefix",
               returns="qk"),
    Convention("module-implicit", "module(x), positions 0..T-1 implicit: the probes placed at their positions in a "
               "longer call", "module", ("x",), ("td", "bhtd", "bthd"), positions="prefix"),
    Convention("module-offset", "module(x, offset=start): contiguous positions, one call per position", "module",
               ("x", "offset"), ("td", "bthd", "bhtd"), positions="contiguous"),
    Convention("module-qk-offset", "module(q, k, offset=start) -> (q, k): contiguous positions, one call per "
               "position (xformers' historical RotaryEmbedding, open_lm)", "module", ("x", "k", "offset"),
               ("bthd", "td", "bhtd"), positions="contiguous", returns="qk"),
    Convention("module-qkv-offset", "module(qkv, seqlen_offset=start) -> qkv, q, k, v packed as (B, T, 3, H, D), "
               "tables built by a method of the module: contiguous positions, one call per position (flash-attn)",
               "module", ("x", "offset"), ("qkv",), positions="contiguous", returns="qkv"),
    Convention("offset", "fn(x, start_pos): contiguous positions, one call per position", "apply", ("x", "offset"),
               ("td", "bthd", "bhtd"), positions="contiguous"),
    Convention("qk-offset", "fn(q, k, offset) -> (q, k): contiguous positions, one call per position", "apply",
               ("x", "k", "offset"), ("td", "bthd", "bhtd"), positions="contiguous", returns="qk"),
    Convention("vector-position", "fn(vec, pos): one token vector per call (a C-style loop)", "apply",
               ("x", "position"), ("vector",), positions="scalar"),
    Convention("vector-qk-position", "fn(q, k, pos): one token per call, rotated in place (llama2.c)", "apply",
               ("x", "k", "position"), ("vector",), positions="scalar", returns="qk"),
    Convention("axes-position-ids", "rotary(x, position_ids of (A, B, T)) -> (cos, sin); apply(q, k, cos, sin): one "
               "row of position ids per axis (Qwen2-VL's M-RoPE)", "apply", ("x", "k", "cos", "sin"),
               ("bhtd", "bthd", "td"), needs="rotary", returns="qk", axes="leading"),
    Convention("axes-grid-table", "sin, cos = build(feat_shape=(H, W), dim, temperature): the tables of a whole grid, "
               "row h * W + w; apply(x, sin[rows], cos[rows]) (timm's axial ViT rotary)", "apply", ("x", "cos", "sin"),
               ("bthd", "bhtd", "td"), needs="grid", axes="grid"),
    Convention("axes-ids-module", "freqs = module(ids of (T, A)); apply(x, freqs): one column of ids per axis "
               "(Flux's EmbedND / FluxPosEmbed)", "apply", ("x", "freqs"), ("bhtd", "bthd", "td"), needs="ids",
               axes="ids"),
)
#: parameter names (lower case) that take the width of each axis's block (Flux's axes_dim = [16, 56, 56])
_AXES_DIM = ("axes_dim", "axes_dims", "axes_dimensions", "axis_dims")
#: parameter names (lower case) of a builder's grid shape: it makes the tables of every cell of an (H, W) grid
_GRID = ("feat_shape", "grid_shape", "grid_size", "grid_hw", "hw_shape")


def _to_layout(x: np.ndarray, layout: str) -> np.ndarray:
    n, t, d = x.shape
    return {"td": lambda: x, "bhtd": lambda: x[:, None], "bthd": lambda: x[:, :, None],
            "qkv": lambda: np.stack([x, x, x], axis=2)[:, :, :, None],
            "tbhd": lambda: np.transpose(x, (1, 0, 2))[:, :, None], "flat": lambda: x.reshape(n * t, d),
            "vector": lambda: x.reshape(n * t * d)}[layout]()


def _from_layout(y: np.ndarray, layout: str, shape: tuple) -> np.ndarray:
    n, t, d = shape
    want = _to_layout(np.empty(shape), layout).shape
    if layout == "vector":
        return np.asarray(y).reshape(shape) if np.size(y) == n * t * d else _bad_shape(y, want)
    if y.shape != want:
        raise RunnerError(f"returned shape {tuple(y.shape)} for an input of shape {want}; expected the input's shape")
    if layout == "tbhd":
        return np.transpose(y[:, :, 0], (1, 0, 2))
    return y.reshape(shape)


def _bad_shape(y, want):
    raise RunnerError(f"returned shape {tuple(np.shape(y))} for an input of shape {want}; expected the input's shape")


def _positions_for(layout: str, positions: np.ndarray, n: int) -> np.ndarray:
    """Positions in the form a ``full`` convention takes: the shape of x without its last axis."""
    t = len(positions)
    return {"td": lambda: np.broadcast_to(positions, (n, t)), "bthd": lambda: np.broadcast_to(positions, (n, t)),
            "bhtd": lambda: np.broadcast_to(positions, (n, 1, t)),
            "tbhd": lambda: np.broadcast_to(positions[:, None], (t, n)),
            "flat": lambda: np.broadcast_to(positions, (n, t)).reshape(n * t)}[layout]().copy()


class _Attempt:
    """One convention bound to the user's objects: ``run(x, positions)`` gives ``(q_out, k_out or None)``."""

    def __init__(self, session: "Session", row: Convention, layout: str, apply, maker=None, table=None,
                 keyword=None, shown=""):
        self.s, self.row, self.layout = session, row, layout
        self.apply, self.maker, self.table, self.keyword, self.shown = apply, maker, table, keyword, shown

    def describe(self) -> dict:
        call = self.shown or self.row.call
        extra = self._fill() if self.row.entry != "expr" else {}
        # what the apply is given beyond the row's arguments, from the model (Gemma's base_frequency), and the
        # position ids an apply gathering rows of whole tables takes (transformers before 4.38)
        given = [f"{k}={'positions' if k == 'position_ids' else _shown_value(v)}" for k, v in extra.items()]
        if self.row.entry != "expr":
            given = [f"{name}={self.row.args[i]} (keyword-only)" for i, name in self._keyword_only().items()] + given
        if given:
            call += " with " + ", ".join(given)
        return {"name": self.row.name, "call": call, "layout": self.layout,
                "layout_shape": LAYOUTS[self.layout],
                "positions": {"leading": "(A, B, T) position ids", "ids": "(T, A) ids",
                              "grid": "cells of an (H, W) grid"}.get(self.row.axes or "",
                                                                                        self.row.positions),
                "returns": {"x": "x", "qk": "(q, k): both audited", "inplace": "x rotated in place",
                            "qkv": "qkv: q and k audited, v checked unchanged"}[self.row.returns]}

    def run(self, x: np.ndarray, positions: np.ndarray):
        if self.row.positions == "scalar":
            return self._per_vector(x, positions)
        if self.row.positions == "contiguous":
            return self._per_position(x, positions)
        if self.row.positions == "prefix":
            return self._in_prefix(x, positions)
        return self._call(x, positions)

    def _in_prefix(self, x, positions):
        """Code that numbers its tokens 0..T-1 itself (ESM): each probe row placed at its position in a call of
        length max + 1, the other rows zero (the map is per token); repeated positions in separate calls, the
        samples in chunks that keep a call below 2**22 numbers."""
        n, _, d = x.shape
        length = int(positions.max()) + 1
        q, k = np.empty_like(x), (np.empty_like(x) if self.row.returns == "qk" else None)
        groups: list = []
        for t, p in enumerate(positions):
            group = next((g for g in groups if int(p) not in g), None)
            if group is None:
                group = {}
                groups.append(group)
            group[int(p)] = t
        chunk = max(1, (1 << 22) // max(1, length * d))
        for group in groups:
            ts, ps = list(group.values()), list(group.keys())
            for b in range(0, n, chunk):
                full = np.zeros((min(chunk, n - b), length, d))
                full[:, ps] = x[b:b + chunk, ts]
                qo, ko = self._call(full, np.arange(length))
                q[b:b + chunk, ts] = qo[:, ps]
                if k is not None:
                    k[b:b + chunk, ts] = ko[:, ps]
        return q, k

    def _per_position(self, x, positions):
        outs = [self._call(x[:, t:t + 1], positions[t:t + 1]) for t in range(x.shape[1])]
        q = np.concatenate([o[0] for o in outs], axis=1)
        k = None if outs[0][1] is None else np.concatenate([o[1] for o in outs], axis=1)
        return q, k

    def _per_vector(self, x, positions):
        q, k = np.empty_like(x), (np.empty_like(x) if self.row.returns == "qk" else None)
        for t in range(x.shape[1]):
            for b in range(x.shape[0]):
                qo, ko = self._call(x[b:b + 1, t:t + 1], positions[t:t + 1])
                q[b, t] = qo[0, 0]
                if k is not None:
                    k[b, t] = ko[0, 0]
        return q, k

    def _roles(self):
        """The row's roles in the order of the apply's parameters (``apply(tensor, sin, cos)`` for GPT-J)."""
        roles = list(self.row.args)
        names = [n.lower() for n in _names(self.apply) if n != "self"][:len(roles)]
        if "cos" in roles and "sin" in roles and len(names) == len(roles):
            i, j = roles.index("cos"), roles.index("sin")
            if names[i] in _SIN and names[j] in _COS:
                roles[i], roles[j] = "sin", "cos"
        return roles

    def _arg(self, role: str, xin, kin, positions, n, rows):
        A = self.s.arrays
        if role == "x":
            return xin
        if role == "k":
            return kin
        if role == "positions":
            pos = positions if self.row.positions == "shared" else _positions_for(self.layout, positions, n)
            return A.ints(pos)
        if role in ("offset", "position"):
            return int(positions[0])
        if role == "freqs":
            return rows[0] if "scale" in self.row.args else rows
        if role == "scale":  # x-transformers: the module's (freqs, scale), the scale 1 unless xpos
            return rows[1]
        if role in ("cos", "sin"):
            if not isinstance(rows, (tuple, list)) or len(rows) != 2:
                raise RunnerError("the table is not a pair (cos, sin)")
            return rows[0] if role == "cos" else rows[1]
        raise RunnerError(f"internal: unknown role {role}")

    def _rows(self, positions, xin):
        rows = self._rows_of(positions, xin)
        if self.row.batch_rows:  # (T, D) -> (1, T, D): a batch axis the apply requires
            rows = type(rows)(r[None] for r in rows) if isinstance(rows, (tuple, list)) else rows[None]
        return rows

    def _rows_of(self, positions, xin):
        if self.row.needs == "length":  # Megatron: module(n) -> the angles of positions 0..n-1, rows gathered
            table = self.maker(int(positions.max()) + 1)
            shape = getattr(table, "shape", ())
            if len(shape) >= 3 and shape[0] == 1 and shape[1] > 1:
                # Qwen's (1, n, 1, D): positions on the second axis, the batch axis kept for the apply to broadcast
                return self.s.arrays.gather(table[0], positions)[None]
            return self.s.arrays.gather(table, positions)
        if self.row.needs == "positions-table":  # diffusers: build(dim, pos=positions) -> rows of those positions
            return self.maker(self.s.arrays.ints(positions))
        if self.row.needs == "grid":  # timm: each position vector's row in the tables of the smallest grid holding it
            return self._ordered(self._grid_rows(positions), positions)
        if self.row.needs == "ids":  # Flux: module(ids of (T, A)) -> the tables of those positions
            return self.maker(self.s.arrays.ints(positions))
        if self.row.needs == "angles":  # rotary-embedding-torch: module(positions) -> angles of every coordinate
            out = self.maker(self.s.arrays.values(positions.astype(np.float64)))
            if ("scale" in self.row.args) != (isinstance(out, (tuple, list)) and len(out) == 2):
                raise RunnerError(f"the module returned {type(out).__name__}; expected "
                                  + ("(freqs, scale)" if "scale" in self.row.args else "the angles"))
            return out
        if self.maker is not None:  # a rotary module: rotary(x, position_ids) -> (cos, sin)
            names = [n.lower() for n in _names(getattr(self.maker, "forward", self.maker))]
            if _makes_whole_tables(self.maker):
                # transformers before 4.38: rotary(x, seq_len=) gives whole tables, apply(..., position_ids) gathers
                self.full_tables = True
                out = self.maker(xin, seq_len=int(positions.max()) + 1)
                if not isinstance(out, (tuple, list)) or len(out) != 2:
                    raise RunnerError(f"the rotary module returned {type(out).__name__}, not (cos, sin)")
                return tuple(out)
            # (1, T) position ids; multi-axis positions (T, A) as (A, 1, T), one row per axis (Qwen2-VL)
            pos = self.s.arrays.ints(positions.T[:, None, :] if self.row.axes == "leading" else positions[None, :])
            out = self.maker(xin, pos, **self._layer_type(names))
            if "freqs" in self.row.args:  # one table, complex e^(i m omega) (Llama 4): given to the apply as made
                if isinstance(out, (tuple, list)) or not getattr(out, "is_complex", lambda: False)():
                    raise RunnerError(f"the rotary module returned {type(out).__name__}, not one complex table")
                return out
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise RunnerError(f"the rotary module returned {type(out).__name__}, not (cos, sin)")
            return self._ordered(tuple(out), positions)
        rows = self.s.arrays.gather(self.table, positions)
        return self._ordered(rows, positions) if isinstance(rows, tuple) else rows

    def _layer_type(self, names) -> dict:
        """HF's per-layer-type rotary module (Gemma 3, ModernBERT: ``forward(x, position_ids, layer_type)``) is
        called with the layer type of the audited regime (``--regime``); never with a guessed one."""
        if "layer_type" not in names:
            return {}
        chosen = self.s.hints.layer_type
        if chosen is None:
            raise RunnerError("the rotary module takes layer_type (one rotary map per layer type) and the model "
                              "names no single layer type for it; pass --regime NAME (the config's regimes)")
        self.s.layer_type_passed = chosen
        return {"layer_type": chosen}

    def _grid_rows(self, positions):
        """The rows of ``positions`` (T, A): position ``p`` is the last cell of a grid of shape ``p + 1`` (row-major,
        as the code numbers its tokens), so no grid is larger than one position needs."""
        A = self.s.arrays
        parts: list = []
        for p in positions:
            shape = tuple(int(v) + 1 for v in p)
            table = self.maker(shape)
            rows = A.gather(table, np.array([int(np.prod(shape)) - 1]))
            parts.append(rows if isinstance(rows, (tuple, list)) else (rows,))
        joined = []
        for k in range(len(parts[0])):
            pieces = [part[k] for part in parts]
            if A.name == "torch":
                joined.append(A.torch.cat(pieces, dim=0))
            elif A.name == "jax":
                joined.append(A.jnp.concatenate(pieces, axis=0))
            else:
                joined.append(np.concatenate(pieces, axis=0))
        return tuple(joined) if len(joined) > 1 else joined[0]

    def _ordered(self, pair, positions):
        """``(cos, sin)`` whichever order the code returns them in: cos is the one equal to 1 at position 0."""
        if getattr(self, "swap", None) is None and len(positions) and not np.any(positions[0]):
            first = self.s.arrays.numpy(pair[0]).reshape(-1, *np.shape(self.s.arrays.numpy(pair[0]))[-1:])
            second = self.s.arrays.numpy(pair[1]).reshape(first.shape[0], -1) if first.size else first
            t0 = 0
            self.swap = bool(np.allclose(second[t0:t0 + 1], 1.0) and not np.allclose(first[t0:t0 + 1], 1.0))
        return (pair[1], pair[0]) if getattr(self, "swap", False) else pair

    def _keyword_only(self) -> dict:
        """``{index: name}``: the row's arguments the apply takes by keyword only (``fn(x, *, seqpos)``)."""
        if self.keyword is not None or self.row.entry == "expr":
            return {}
        params = [p for p in _params(self.apply) if p.name != "self"
                  and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        return {i: params[i].name for i in range(min(len(self.row.args), len(params)))
                if params[i].kind == params[i].KEYWORD_ONLY}

    def _fill(self):
        """Required parameters beyond the row's, filled from the declared model (``head_size``...)."""
        h = self.s.hints
        extra = {}
        for name in _required(self.apply)[len(self.row.args):]:
            key = name.lower()
            if key == "self":
                continue
            if key in ("head_size", "head_dim", "kv_dim"):
                extra[name] = h.head_dim
            elif key in _DIM:
                extra[name] = h.rotated_dim
            elif key in _BASES:
                extra[name] = float(h.base if h.base is not None else 10000.0)
            elif key in _APPLY_TABLE_LEN:
                extra[name] = _table_rows(h) or h.probe_end or 32768
        # an apply's own rule parameters with defaults (Gemma's scale_factor, rope_proportion): the model's values
        positional = set([n for n in _names(self.apply) if n != "self"][:len(self.row.args)])
        for p in _params(self.apply):
            key = p.name.lower()
            if p.name in extra or p.name in positional or p.default is p.empty:
                continue
            if key in ("half", "rotate_half") and isinstance(p.default, bool):  # timm's apply: the pairing's layout
                extra[p.name] = h.pairing == "half"
                continue
            if not (key in _PROPORTION or key in _BASES or _ROLE_OF.get(key) not in (None, "rope_scaling")):
                continue
            value = _model_value(p, h, self.s.fill_dtype, "apply")
            if value is not _UNFILLED:
                extra[p.name] = value
        if getattr(self, "full_tables", False) and "position_ids" in _names(self.apply):
            extra["position_ids"] = self.s.arrays.ints(self._positions[None, :])
        return extra

    def _defaulted(self) -> list:
        """The parameters of the apply this convention's call leaves at their defaults."""
        passed = set(_names(self.apply)[:len(self.row.args) + (1 if _names(self.apply)[:1] == ["self"] else 0)])
        passed |= set(self.s.extra_kwargs(self.apply, self.layout)) | set(self._fill())
        if self.keyword:
            passed.add(self.keyword)
        return [p for p in _params(self.apply) if p.name not in passed and p.name != "self"
                and p.default is not p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def _owner(self) -> str:
        return getattr(self.apply, "__qualname__", _fn_name(self.apply, ""))

    def left_at_default(self) -> list:
        """The parameters of the apply this convention's call leaves at their defaults (``NAME=VALUE``)."""
        return [f"{self._owner()}: {p.name}={_shown_value(p.default)}" for p in self._defaulted()]

    def default_refusals(self) -> list:
        """The apply's parameters about scaling, precision or length left at a default the model does not have."""
        refusals = [_default_refusal(p, self.s.hints, self._owner(), "calls") for p in self._defaulted()]
        return [r for r in refusals if r]

    def _call(self, x, positions):
        n, d = x.shape[0], x.shape[-1]
        A = self.s.arrays
        xl = _to_layout(x, self.layout)
        xin = A.values(xl)
        kin = A.values(xl) if "k" in self.row.args else None
        rows = None
        if any(r in ("freqs", "cos", "sin") for r in self.row.args):
            rows = self._rows(positions, xin)
        keep = None
        if self.row.split:  # partial rotary: the caller splits off the coordinates the table covers
            r = self._split_width(rows, d)
            keep = (xin[..., r:], None if kin is None else kin[..., r:])
            xin, kin = xin[..., :r], None if kin is None else kin[..., :r]
        self._positions = positions
        args = [self._arg(role, xin, kin, positions, n, rows) for role in self._roles()]
        kwargs = dict(self.s.extra_kwargs(self.apply, self.layout))
        for index, name in sorted(self._keyword_only().items(), reverse=True):  # xformers' _slow_rope(x, *, seqpos)
            kwargs[name] = args.pop(index)
        kwargs.update(self._fill())
        if self.keyword is not None:  # positions passed under the name the code uses
            kwargs[self.keyword] = args.pop(self.row.args.index("positions" if "positions" in self.row.args
                                                                else "offset"))
        v_before = A.numpy(xin[:, :, 2]).copy() if self.row.returns == "qkv" else None
        out = self.apply(*args, **kwargs)
        if out is None and not (self.layout == "vector" and self.row.returns == "qk"):  # in place: llama2.c only
            raise RunnerError("returned None; expected the rotated x (an array of the input's shape)")
        if self.row.returns == "qkv":  # packed: q and k rotated, v kept
            if getattr(out, "shape", None) is None or tuple(out.shape) != tuple(xl.shape):
                raise RunnerError(f"returned {type(out).__name__}; expected the packed qkv of shape {xl.shape}")
            qn = _from_layout(A.numpy(out[:, :, 0]), "bthd", x.shape)
            kn = _from_layout(A.numpy(out[:, :, 1]), "bthd", x.shape)
            if not np.array_equal(A.numpy(out[:, :, 2]), v_before):
                raise RunnerError("changed v in the packed qkv; a rotary map rotates q and k only")
            return qn, kn
        if self.row.returns == "qk" or (isinstance(out, (tuple, list)) and len(out) == 2 and "k" in self.row.args):
            if out is None:  # rotated in place (llama2.c's loop)
                out = (xin, kin)
            if not isinstance(out, (tuple, list)) or len(out) < 2:
                raise RunnerError(f"returned {type(out).__name__}; expected (q, k)")
            q, k = out[0], out[1]
        else:
            if out is None:
                out = xin
            if isinstance(out, (tuple, list)):
                raise RunnerError(f"returned a {type(out).__name__} of {len(out)}; expected the rotated x")
            q, k = out, None
        if keep is not None:
            q = self._joined(q, keep[0])
            k = None if k is None else self._joined(k, keep[1])
        qn = _from_layout(A.numpy(q), self.layout, x.shape)
        kn = None if k is None else _from_layout(A.numpy(k), self.layout, x.shape)
        return qn, kn

    def _split_width(self, rows, d):
        cos = rows[0] if isinstance(rows, (tuple, list)) else rows
        r = int(cos.shape[-1])
        if getattr(self, "split_double", False):
            r *= 2
        if not 0 < r < d:
            raise RunnerError(f"the table covers {r} of the {d} coordinates: nothing to split")
        return r

    def _joined(self, rotated, kept):
        if self.s.arrays.name == "torch":
            return self.s.arrays.torch.cat([rotated, kept.to(rotated.dtype)], dim=-1)
        if self.s.arrays.name == "jax":
            return self.s.arrays.jnp.concatenate([rotated, kept], axis=-1)
        return np.concatenate([np.asarray(rotated), np.asarray(kept)], axis=-1)


class Session:
    """The user's code and the convention found for it."""

    def __init__(self, target, options: dict):
        self.options = options
        self.hints = Hints.of(options["hints"])
        self.used: list = []
        if isinstance(target, str):
            self.obj, self.module = load_target(target)
            self.label = target
        else:
            self.obj = target
            self.module = sys.modules.get(getattr(_call_of(target), "__module__", None) or "", None)
            self.label = getattr(target, "__qualname__", None) or type(target).__name__
        self.dtype = options.get("dtype") or "float64"
        # the dtype a precision parameter of the code is filled with: the activations' (float32 unless --dtype)
        self.fill_dtype = options.get("dtype") or "float32"
        self.fillings: dict = {}  # id(built object) -> (the object, its Filling)
        self.attempt = None
        self.arrays = None
        self.tried: list = []
        self.built: dict = {}
        self.bound = None
        self.range_note = None

    # -- resolving roles -------------------------------------------------------------------------
    def _lookup(self, name):
        if name is None:
            return None
        obj = self.module
        for part in name.split("."):
            if obj is None or not hasattr(obj, part):
                raise RunnerError(f"{name!r} is not defined next to the target "
                                  f"({getattr(self.module, '__name__', '?')})")
            obj = getattr(obj, part)
        return obj

    def _scope(self):
        return vars(self.module) if self.module is not None else {}

    def _discover(self, kind: str):
        """A rotary module class or a table builder defined in the target's module (when not named)."""
        exclude = {id(self.obj)}
        found = []
        for key, value in list(self._scope().items()):
            if id(value) in exclude or key.startswith("__"):
                continue
            if kind == "rotary" and inspect.isclass(value) and key.lower().endswith(("rotaryembedding",
                                                                                      "rotaryembeddings",
                                                                                      "rotaryemb")):
                found.append((key, value))
            if kind == "table" and inspect.isfunction(value) and (
                    "freqs" in key.lower() or "cos_sin" in key.lower() or "rope_cache" in key.lower()
                    or key.lower().startswith(("precompute", "build_rope", "rope_init", "compute_freqs"))
                    or "rotary_pos_emb" in key.lower() and not key.lower().startswith("apply")):
                found.append((key, value))
            if kind == "apply" and _is_function(value) and key.lower().startswith(("apply_rotary", "apply_rope",
                                                                                      "apply_rot_embed")):
                found.append((key, value))
            if kind == "ids" and inspect.isclass(value) and _takes_ids(value):
                found.append((key, value))
        # the family's own first (LlamaRotaryEmbedding next to a Llama target), then the plain name
        prefix = getattr(self.obj, "__name__", "").lower()[:4]
        found.sort(key=lambda kv: (not kv[0].lower().startswith(prefix), "dynamic" in kv[0].lower(),
                                   "scaling" in kv[0].lower(), len(kv[0])))
        return found

    def _instance(self, cls_or_obj):
        if inspect.isclass(cls_or_obj):
            used: list = []
            with _default_dtype(self.options.get("dtype")):
                inst, filling = instantiate(cls_or_obj, self.hints, used, self.fill_dtype)
            self.used += used
            if _is_linen(inst):
                inst = _LinenApplied(inst)
            self.built[id(inst)] = f"{cls_or_obj.__name__}({', '.join(used)})"
            self.fillings[id(inst)] = (inst, filling)  # the object kept: its id stays its own
        else:
            inst = _LinenApplied(cls_or_obj) if _is_linen(cls_or_obj) else cls_or_obj
        self._float(inst)
        return inst

    def built_text(self, inst, fallback: str) -> str:
        return self.built.get(id(inst), fallback)

    def _float(self, inst):
        """With --cast-module, a torch module cast whole to --dtype (``module.to(dtype)``: its float32
        buffers rounded too); otherwise left as built, as the standard loading path leaves it."""
        to = getattr(inst, "to", None)
        if to is not None and hasattr(inst, "parameters") and self.options.get("cast_module") \
                and self.dtype != "float64":
            import torch

            to(getattr(torch, self.dtype))

    def _build_table(self, builder):
        name = getattr(builder, "__name__", "build")
        filling = fill_parameters(builder, self.hints, self.fill_dtype, owner=name)
        table = builder(**filling.kwargs)
        self.used.append(f"{name}({', '.join(filling.shown)})")
        self.fillings[id(table)] = (table, filling)
        return table

    # -- finding the convention ------------------------------------------------------------------
    def extra_kwargs(self, fn, layout):
        """Keyword arguments a convention's call adds: HF's ``unsqueeze_dim`` for the layout."""
        names = _names(fn)
        extra = {}
        if "unsqueeze_dim" in names:
            extra["unsqueeze_dim"] = {"bhtd": 1, "bthd": 2, "td": 0, "tbhd": 2}.get(layout, 1)
        if "interleaved" in names and self.options.get("interleaved") is not None:
            extra["interleaved"] = self.options["interleaved"]
        return extra

    def _candidates(self):
        """Attempts to try, in the order of :data:`CONVENTIONS`, each bound to the user's objects."""
        o = self.options
        layouts_forced = (o["layout"],) if o.get("layout") else None
        obj = self.obj
        named_apply = self._lookup(o.get("apply"))
        named_table = self._lookup(o.get("table"))
        for row in CONVENTIONS:
            if (row.entry == "expr") != bool(o.get("call")):
                continue
            if row.entry != "expr" and bool(row.axes) != bool(o.get("axes")):
                continue  # multi-axis rows for a multi-axis model only, and only them
            layouts = layouts_forced or row.layouts
            if layouts_forced and o["layout"] not in row.layouts and row.entry != "expr":
                if not (o["layout"] in ("bthd", "bhtd", "tbhd", "td") and row.layouts[0] != "vector"
                        and row.layouts[0] != "flat"):
                    continue
            for attempt in self._bind(row, obj, named_apply, named_table):
                for layout in layouts:
                    yield _Attempt(self, row, layout, *attempt)
                    if row.split:  # GPT-J's sin, cos cover half the rotated width (repeated twice by the apply)
                        twice = _Attempt(self, row, layout, *attempt)
                        twice.split_double = True
                        yield twice

    def _bind(self, row, obj, named_apply, named_table):
        """Zero or more ``(apply, maker, table, keyword, shown)`` for ``row`` (signature inspection)."""
        if row.entry == "expr":
            yield (self._expression(), None, None, None, f"--call {self.options['call']}")
            return
        if row.entry == "module":
            if not (inspect.isclass(obj) or hasattr(obj, "forward") or _is_bound_method_of_class(obj)):
                return
            if row.name == "vllm":
                cls = obj if inspect.isclass(obj) else None
                method = getattr(obj, "forward_native", None) if cls is None else None
                if _is_bound_method_of_class(obj) and obj.__name__ == "forward_native":
                    bound = self._module_callable(obj)
                    if bound is not None:
                        yield (bound, None, None, None, f"{obj.__qualname__.split('.')[0]}"
                                                        f"({', '.join(self.used[-6:])}).forward_native(positions, "
                                                        "query, key)")
                elif cls is not None and hasattr(cls, "forward_native"):
                    inst = self._instance(cls)
                    yield (inst.forward_native, None, None, None, f"{self.built_text(inst, cls.__name__)}"
                                                                  ".forward_native(positions, query, key)")
                elif cls is not None and [n.lower() for n in _names(getattr(cls, "forward", cls))][1:2] == ["positions"]:
                    # a vLLM module with no forward_native (Phi3LongRoPEScaledRotaryEmbedding): forward is native
                    inst = self._instance(cls)
                    yield (inst.forward, None, None, None, f"{self.built_text(inst, cls.__name__)}"
                                                           "(positions, query, key)")
                elif method is not None:
                    yield (method, None, None, None, "forward_native(positions, query, key)")
                return
            fn = self._module_callable(obj)
            if fn is None:
                return
            target = fn
            names = [n.lower() for n in _names(getattr(target, "forward", target))]
            sig_of = getattr(target, "forward", target)
            if "positions" in row.args:
                keyword = _has(sig_of, _POS)
                if keyword is None or [n for n in _names(sig_of) if n != "self"][:1] == [keyword]:
                    return  # positions first: vLLM's row
                if row.name == "module-qk-positions" and not _has(sig_of, _K):
                    return
                if row.name != "module-qk-positions" and _has(sig_of, _K) and _required_count(sig_of) > 2:
                    return
                yield (target, None, None, keyword, self._called(obj, target, f"x, {keyword}=positions")
                       if row.name != "module-qk-positions" else self._called(obj, target, f"q, k, {keyword}"))
            elif "offset" in row.args:
                keyword = _has(sig_of, _OFFSET)
                if keyword is None:
                    return
                if ("k" in row.args) != bool(_has(sig_of, _K) and _required_count(sig_of) >= 2):
                    return  # a key is given to code that takes one (and requires both), and only to it
                if "k" in row.args:
                    yield (target, None, None, keyword, self._called(obj, target, f"q, k, {keyword}=start"))
                    return
                if (row.layouts == ("qkv",)) != ([n for n in _names(sig_of) if n != "self"][:1] == ["qkv"]):
                    return  # a packed qkv is given to code that names it so, and only to it
                packed = "qkv" if row.layouts == ("qkv",) else "x"
                yield (target, None, None, keyword, self._called(obj, target, f"{packed}, {keyword}=start"))
            else:  # no positions passed: the code numbers the tokens itself
                if _has(sig_of, _POS) or _has(sig_of, _OFFSET):
                    return
                if "k" in row.args:
                    if _required_count(sig_of) != 2 or not _has(sig_of, _K):
                        return
                    yield (target, None, None, None, self._called(obj, target, "q, k"))
                    return
                if _required_count(sig_of) != 1 or _has(sig_of, _K):
                    return
                yield (target, None, None, None, self._called(obj, target, "x"))
            return
        # an apply function: the target itself, or a named/discovered apply when the target is a maker/table
        applies = []
        if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj) or (
                callable(obj) and not inspect.isclass(obj) and not hasattr(obj, "forward")):
            applies.append(("target", obj))
        if named_apply is not None:
            applies.insert(0, ("named", named_apply))
        elif row.needs:  # the target may be the table builder: the apply next to it
            applies += [("found", v) for _, v in self._discover("apply") if v is not obj]
        for how, fn in applies:
            if not _fits(fn, row):
                continue
            name = _fn_name(fn)
            if row.needs is None:
                if fn is not obj:
                    continue
                yield (fn, None, None, None, "")
            elif row.needs in ("rotary", "angles", "length", "ids"):
                makers = []
                if inspect.isclass(obj) or hasattr(obj, "forward"):
                    makers.append(obj)
                if named_table is not None:
                    makers.insert(0, named_table)
                if not makers:
                    makers = [v for _, v in self._discover("ids" if row.needs == "ids" else "rotary")]
                for maker in makers:
                    if not (inspect.isclass(maker) or hasattr(maker, "forward")):
                        continue
                    if fn is not obj and maker is not obj and named_apply is None and named_table is None:
                        continue  # the named target must be one of the pieces called
                    if row.needs == "length" and not _takes_length(maker):
                        continue
                    inst = self._instance(maker)
                    mname = maker.__name__ if inspect.isclass(maker) else type(maker).__name__
                    made = self.built_text(inst, mname)
                    if row.needs == "ids" and not _takes_ids(maker):
                        continue
                    if row.needs == "angles" and "scale" in row.args:
                        yield (fn, inst, None, None, f"freqs, scale = {made}(positions); {name}(x, freqs, scale)")
                    elif row.needs == "angles":
                        yield (fn, inst, None, None, f"freqs = {made}(positions); {name}(freqs, x)")
                    elif row.needs == "ids":
                        yield (fn, inst, None, None, f"freqs = {made}(ids of (T, {self.options['axes']})); "
                                                     f"{name}(x, freqs)")
                    elif row.needs == "length":
                        yield (fn, inst, None, None, f"freqs = {made}(n); {name}(x, freqs[positions])")
                    else:
                        takes = ("seq_len=n" if row.positions == "contiguous" or _makes_whole_tables(maker)
                                 else "position_ids")
                        made_of = "freqs_cis" if "freqs" in row.args else "cos, sin"
                        yield (fn, inst, None, None, f"{made}(x, {takes}) -> {made_of}; "
                                                     f"{name}({', '.join(self_args(row))}{_extra_text(fn)})")
            else:
                builders = []
                if named_table is not None:
                    builders.append(named_table)
                elif inspect.isfunction(obj) and obj is not fn:
                    builders.append(obj)
                else:
                    builders = [v for _, v in self._discover("table") if v is not fn]
                for builder in builders:
                    if inspect.isclass(builder):
                        continue
                    if fn is not obj and builder is not obj and named_apply is None and named_table is None:
                        continue  # the named target must be one of the pieces called
                    grid = _has(builder, _GRID)
                    if (row.needs == "grid") != (grid is not None):
                        continue
                    if grid is not None:
                        maker, text = self._grid_builder(builder, grid)
                        yield (fn, maker, None, None, f"{text}; {name}({', '.join(_arg_text(row))})")
                        continue
                    keyword = _has(builder, _POS)
                    if (row.needs == "positions-table") != (keyword is not None):
                        continue
                    if keyword is not None:
                        maker, text = self._positions_builder(builder, keyword, fn)
                        yield (fn, maker, None, None, f"{text}; {name}(x, freqs)")
                        continue
                    table = self._build_table(builder)
                    shape = _table_kind(table)
                    if (row.name.startswith("table-cos-sin")) != (shape == "pair"):
                        continue
                    yield (fn, None, table, None, f"{self.used[-1]}; {name}({', '.join(_arg_text(row))})")

    def _positions_builder(self, builder, keyword, apply):
        """``positions -> rows`` of a builder that takes the positions (diffusers' ``get_1d_rotary_pos_embed(dim,
        pos)``): its other parameters filled from the model; a switch the apply takes too (``use_real``) given the
        apply's default, so the table is of the form the apply reads."""
        name = getattr(builder, "__name__", "build")
        filling = fill_parameters(builder, self.hints, self.fill_dtype, skip=(keyword,), owner=name)
        shared = {p.name: p.default for p in _params(apply) if isinstance(p.default, bool)}
        for p in _params(builder):
            if p.name in shared and p.name not in filling.kwargs and isinstance(p.default, bool):
                filling.kwargs[p.name] = shared[p.name]
                filling.shown.append(f"{p.name}={shared[p.name]!r} (as {getattr(apply, '__name__', 'the apply')} "
                                     "reads it)")
                filling.defaults = [d for d in filling.defaults if not d.endswith(f": {p.name}={p.default!r}")]
        kwargs = dict(filling.kwargs)
        text = f"freqs = {name}({keyword}=positions, {', '.join(filling.shown)})"
        self.used.append(text)

        def maker(positions):
            return builder(**kwargs, **{keyword: positions})

        self.fillings[id(maker)] = (maker, filling)
        return maker, text

    def _grid_builder(self, builder, keyword):
        """``shape -> tables`` of a builder making the tables of a whole grid (timm's ``build_rotary_pos_embed(
        feat_shape, ...)``): its other parameters filled from the model."""
        name = getattr(builder, "__name__", "build")
        filling = fill_parameters(builder, self.hints, self.fill_dtype, skip=(keyword,), owner=name)
        kwargs = dict(filling.kwargs)
        text = f"{name}({keyword}=(H, W), {', '.join(filling.shown)}) -> tables of the H * W cells"
        self.used.append(text)

        def maker(shape):
            return builder(**kwargs, **{keyword: list(shape)})

        self.fillings[id(maker)] = (maker, filling)
        return maker, text

    def _module_callable(self, obj):
        """A callable module: ``Class`` instantiated from the model, an instance, or ``Class.method``."""
        if inspect.isclass(obj):
            return self._instance(obj)
        qual = getattr(obj, "__qualname__", "")
        if inspect.isfunction(obj) and "." in qual and _names(obj)[:1] == ["self"]:
            cls = self._lookup(qual.rsplit(".", 1)[0]) if self.module is not None else None
            if inspect.isclass(cls):
                return getattr(self._instance(cls), obj.__name__)
            return None
        if hasattr(obj, "forward") and not inspect.isroutine(obj):
            self._float(obj)
            return obj
        if inspect.ismethod(obj):
            return obj
        return None

    def _called(self, obj, target, arguments: str) -> str:
        """How a module is called, for "called as": ``Module(...)(arguments)``, or a linen module's
        ``apply`` with the variables its ``init`` made."""
        shown = self._shown_module(obj)
        if isinstance(target, _LinenApplied):
            return f"{shown}.apply(variables, {arguments}) with variables = init(PRNGKey(0), {arguments})"
        return f"{shown}({arguments})"

    def _shown_module(self, obj):
        if inspect.isclass(obj):
            return next((t for t in self.built.values() if t.startswith(obj.__name__ + "(")), obj.__name__)
        return getattr(obj, "__qualname__", type(obj).__name__)

    def _expression(self):
        source = self.options["call"]
        try:
            code = compile(source, "<--call>", "eval")
        except SyntaxError as err:
            raise RunnerError(f"--call {source!r} is not a Python expression ({err.msg})") from None
        scope = dict(self._scope())

        def run(x, positions):
            # x and positions are globals of the expression, as names typed at a module's top level are: a
            # lambda or a comprehension inside it sees them (locals would hide them from both)
            try:
                return eval(code, {**scope, "x": x, "positions": positions})  # noqa: S307 - the user's own
            except RunnerError:
                raise
            except Exception as err:  # noqa: BLE001 - the user's expression, named with what it was given
                raise RunnerError(f"--call raised {_one_line(err, 100)} (x: {_described(x)}; positions: "
                                  f"{_described(positions)})") from None

        return run

    def setup(self, x: np.ndarray, positions: np.ndarray) -> dict:
        """Find the convention (trial calls on ``x`` at small ``positions``); return what was found."""
        libraries = [self.options["library"]] if self.options.get("library") else _library_of(self.module)
        errors = []
        fallback = mapped = None
        for library in libraries:
            try:
                self.arrays = Arrays(library, self.dtype)
            except ImportError:
                continue
            except RunnerError as err:
                errors.append(f"{library}: {err}")
                continue
            try:
                for attempt in self._candidates():
                    try:
                        with _quiet():
                            q, k = attempt.run(x, positions)
                    except DefaultRefused:
                        raise
                    except RunnerError as err:
                        errors.append((attempt.row.name, library, str(err)[:240]))
                        continue
                    except CallTimeout:
                        raise
                    except BaseException as err:  # noqa: BLE001 - a wrong convention's attempt
                        errors.append((attempt.row.name, library, f"raised {_one_line(err, 100)}"))
                        continue
                    if not np.isfinite(q).all() and np.isfinite(x).all():
                        errors.append((attempt.row.name, library, "returned non-finite values; expected finite numbers"))
                        continue
                    try:
                        with _quiet():
                            problem = _inconsistent(attempt, x, positions, q)
                    except CallTimeout:
                        raise
                    except BaseException as err:  # noqa: BLE001
                        problem = f"a second trial call raised {_one_line(err, 100)}"
                    if not problem:
                        try:
                            with _quiet():
                                problem = _not_a_rotation(attempt, x, positions, q, self.dtype,
                                                           self.hints.output_order)
                        except CallTimeout:
                            raise
                        except BaseException as err:  # noqa: BLE001
                            problem = f"a trial call of the acceptance checks raised {_one_line(err, 100)}"
                        if problem:  # the outputs fit the shapes and the order: preferred to an order failure
                            errors.append((attempt.row.name, library, problem))
                            mapped = mapped or (attempt, library, k, problem)
                            continue
                    if problem:
                        # kept as a fallback: code that really depends on token order (positions ignored) is
                        # audited as it is when no other convention fits
                        errors.append((attempt.row.name, library, problem))
                        fallback = fallback or (attempt, library, k, problem)
                        continue
                    return self._accept(attempt, library, k)
            except DefaultRefused:
                raise
            except RunnerError as err:  # a role could not be built (a class, a table)
                errors.append(("building", library, str(err)[:200]))
            except CallTimeout:
                raise
            except BaseException as err:  # noqa: BLE001
                errors.append(("building", library, f"building the code's objects raised {_one_line(err, 160)}"))
        fallback = mapped or fallback  # nonlinear code is audited as it is (the verdict names it nonlinear)
        if fallback is not None:
            info = self._accept(fallback[0], fallback[1], fallback[2])
            info["note"] = f"no convention passed every trial; used the first whose outputs fit: {fallback[3]}"
            return info
        first: dict = {}
        for row, library, text in errors:  # one line per convention: its first failure (other layouts alike)
            first.setdefault((row, library), text)
        shown = "; ".join(f"{row} ({library}): {text}" for (row, library), text in list(first.items())[:10])
        more = f" (and {len(first) - 10} more)" if len(first) > 10 else ""
        shown = shown or f"none: no row of the table fits {_signature_problem(self.obj)}"
        raise RunnerError(f"no calling convention fits {self.label}: tried {shown}{more}; name the pieces with "
                          "--apply/--table, or give --call EXPR")

    def _accept(self, attempt, library, k) -> dict:
        fillings = [self.fillings[id(obj)][1] for obj in self._pieces(attempt) if id(obj) in self.fillings]
        refusals = [r for f in fillings for r in f.refusals] + (
            attempt.default_refusals() if attempt.row.entry != "expr" else [])
        if refusals:
            raise DefaultRefused(f"cannot audit {self.label} without an assumption: {refusals[0]}")
        self.attempt = attempt
        self.arrays = attempt.s.arrays if attempt.s.arrays.name == library else Arrays(library, self.dtype)
        info = attempt.describe()
        info["array_library"] = library
        info["built"] = list(self.used)
        if getattr(self, "layer_type_passed", None) is not None:
            info["layer_type"] = self.layer_type_passed
            passed = f"layer_type={self.layer_type_passed!r}"
            info["call"] = (info["call"].replace("position_ids)", f"position_ids, {passed})", 1)
                            if "position_ids)" in info["call"] else f"{info['call']} [{passed}]")
        info["key"] = k is not None
        info["bound"], info["bound_source"] = self._bound(attempt)
        info["table_rows"] = self.table_rows(attempt)
        info["left_at_default"] = [d for f in fillings for d in f.defaults] + (
            attempt.left_at_default() if attempt.row.entry != "expr" else [])
        return info

    @staticmethod
    def _pieces(attempt) -> list:
        """The objects the attempt built from the model: a module (or the one a method is bound to), a table."""
        pieces = [attempt.maker, attempt.apply, getattr(attempt.apply, "__self__", None), attempt.table]
        return [p for p in pieces if p is not None]

    def _bound(self, attempt) -> tuple:
        """``(bound, where it comes from)``: the model's range (its config's max_position_embeddings unless
        --seq-len goes beyond it).  The code's own tables are no bound: a cache grows when called longer
        (``max_seq_len_cached``), and a fixed table says so by failing; see :meth:`table_rows`."""
        if self.hints.max_position and self.options["hints"].get("bound_by_config", True):
            return self.hints.max_position, "max_position_embeddings of the config"
        return None, None

    @staticmethod
    def table_rows(attempt) -> int | None:
        """The fewest rows the code's tables hold now: where to look first when a long call fails."""
        rows = []
        for obj in (attempt.maker, attempt.apply, getattr(attempt.apply, "__self__", None)):
            if obj is not None and not inspect.isfunction(obj):
                rows.append(_bound_of(obj))
        if attempt.table is not None:
            t = attempt.table[0] if isinstance(attempt.table, (tuple, list)) else attempt.table
            rows.append(_length(t))
        rows = [r for r in rows if r]
        return min(rows) if rows else None

    def call(self, x: np.ndarray, positions: np.ndarray, repeat: bool = False):
        """``(q, k | None, stateful)``: the rotated x (and key) for the found convention."""
        with _quiet():
            q, k = self.attempt.run(x, positions)
            if not repeat:
                return q, k, False
            q2, k2 = self.attempt.run(x, positions)
        same = _same(q, q2) and (k is None or _same(k, k2))
        return q, k, not same


def _inconsistent(attempt, x, positions, q) -> str | None:
    """Why this convention's outputs cannot be the code's map, or None: a map of (x_t, p_t) per token does not
    care about the order of the tokens or the other samples (a wrong layout broadcasts across them)."""
    back, _ = attempt.run(x[:, ::-1].copy(), positions[::-1].copy())
    if not _close(back[:, ::-1], q):
        return "outputs change with the order of the positions (a layout that mixes tokens)"
    one, _ = attempt.run(x[:1].copy(), positions)
    if not _close(one, q[:1]):
        return "outputs change with the other samples of the batch (a layout that mixes samples)"
    return None


#: how far a trial output may be from what a linear map predicts, by the activations' dtype (rounding)
_TRIAL_REL = {"float64": 1e-6, "float32": 1e-4, "float16": 3e-2, "bfloat16": 6e-2}


def _not_a_rotation(attempt, x, positions, q, dtype: str, order=None) -> str | None:
    """Why this convention's calls cannot be the code's rotary map, or None: a rotary map is linear in x
    (a wrong convention that passes positions where the code takes a length or an axis is not), and at
    position 0 it is the same multiple of every x (the identity, times the model's constant scale), or of x
    in the model's output ``order`` (DeepSeek-V3's ``[even | odd]``: the identity written out permuted)."""
    rel = _TRIAL_REL.get(dtype, 1e-4)
    twice, _ = attempt.run(2.0 * x, positions)
    if not _close(twice, 2.0 * q, rel):
        return "outputs are not linear in x (T(2 x) != 2 T(x)): the positions reach a parameter that is not one"
    swapped = x[::-1].copy()
    other, _ = attempt.run(swapped, positions)
    both, _ = attempt.run(x + swapped, positions)
    if not _close(both, q + other, rel):
        return "outputs are not linear in x (T(x + y) != T(x) + T(y))"
    zero = [t for t, p in enumerate(positions) if not np.any(p)]  # position 0 (every axis 0)
    if zero:
        t = zero[0]
        xs, ys = x[:, t].reshape(-1), q[:, t].reshape(-1)
        written = [x[:, t]] + ([x[:, t][..., list(order)]] if order is not None else [])
        if not any(_close(q[:, t], float(np.dot(w.reshape(-1), ys) / max(np.dot(xs, xs), 1e-300)) * w, rel)
                   for w in written):
            return "at position 0 the output is not a constant multiple of x (a rotary map is the identity there)"
    return None


def _close(a, b, rel: float = 1e-5) -> bool:
    if a.shape != b.shape:
        return False
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    return bool(np.all(np.abs(a - b) <= rel * scale))


def _same(a, b) -> bool:
    scale = max(1.0, float(np.nanmax(np.abs(a))) if a.size else 1.0)
    return bool(np.array_equal(np.isnan(a), np.isnan(b)) and np.nanmax(np.abs(a - b), initial=0.0) <= 1e-9 * scale)


def _is_linen_class(cls) -> bool:
    """A flax linen module class (found by its bases, without importing flax)."""
    return any(c.__name__ == "Module" and c.__module__.startswith("flax.linen") for c in cls.__mro__)


def _is_linen(obj) -> bool:
    """A flax linen module instance: it runs only inside ``apply``."""
    return not inspect.isclass(obj) and _is_linen_class(type(obj))


class _LinenApplied:
    """A flax linen module called as linen modules are: ``module.apply(variables, *args)``, the variables
    made by ``module.init(PRNGKey(0), *args)`` (deterministic) once per shape of the arguments; called
    directly, a linen module raises.  Its signature is the module's ``__call__``'s."""

    def __init__(self, module):
        self.module = module
        self.__signature__ = inspect.signature(module.__call__)
        self._variables: dict = {}

    def __call__(self, *args, **kwargs):
        import jax

        key = tuple((getattr(a, "shape", None), str(getattr(a, "dtype", type(a).__name__)))
                    for a in (*args, *kwargs.values()))
        if key not in self._variables:
            self._variables[key] = self.module.init(jax.random.PRNGKey(0), *args, **kwargs)
        return self.module.apply(self._variables[key], *args, **kwargs)


def _is_bound_method_of_class(obj) -> bool:
    return inspect.isfunction(obj) and "." in getattr(obj, "__qualname__", "") and _names(obj)[:1] == ["self"]


def _takes_length(maker) -> bool:
    """A module whose call takes a length first (Megatron's ``forward(max_seq_len, offset=0)``)."""
    names = [n.lower() for n in _names(getattr(maker, "forward", maker)) if n != "self"]
    return bool(names) and names[0] in _LEN


def _takes_ids(maker) -> bool:
    """A module making the tables of multi-axis ids: built with per-axis widths (``axes_dim``) and called on ids."""
    init = maker.__init__ if inspect.isclass(maker) else getattr(type(maker), "__init__", None)
    forward = getattr(maker, "forward", None)
    if init is None or forward is None:
        return False
    takes = [n.lower() for n in _names(forward) if n != "self"]
    return bool(_has(init, _AXES_DIM)) and takes[:1] in (["ids"], ["pos"], ["positions"], ["position_ids"])


def _required_count(fn) -> int:
    return len([n for n in _required(fn) if n != "self"])


def self_args(row) -> list:
    prefix = {"x": "q" if "k" in row.args else "x", "k": "k", "cos": "cos", "sin": "sin"}
    text = [prefix.get(r, r) for r in row.args]
    return [f"{t}[..., :r]" if row.split and t in ("q", "k", "x") else t for t in text]


def _makes_whole_tables(maker) -> bool:
    """A rotary module of transformers before 4.38: ``forward(x, seq_len)`` gives the whole tables of positions
    ``0..n-1`` (no position ids), which the apply function gathers by ``position_ids``."""
    names = [n.lower() for n in _names(getattr(maker, "forward", maker))]
    return "seq_len" in names and not set(names) & set(_POS)


def _extra_text(fn) -> str:
    return ", unsqueeze_dim" if "unsqueeze_dim" in _names(fn) else ""


def _arg_text(row) -> list:
    rows = "[None]" if row.batch_rows else ""
    return [{"x": "x", "k": "k", "freqs": f"table[positions]{rows}", "cos": f"cos[positions]{rows}",
             "sin": f"sin[positions]{rows}"}[r] for r in row.args]


def _table_kind(table) -> str:
    if isinstance(table, (tuple, list)) and len(table) == 2:
        return "pair"
    return "array" if getattr(table, "shape", None) is not None else "other"


def _signature_problem(obj) -> str:
    """The target's signature, as the rows read it, and the required parameters none of them fills."""
    if inspect.isclass(obj) and not hasattr(obj, "forward") and not _is_linen_class(obj):
        calls = " (a Keras layer's call is not read)" if hasattr(obj, "call") else ""
        return f"the class: {obj.__name__} has no forward method to call{calls}"
    fn = getattr(obj, "forward", obj)
    params = [p for p in _params(fn) if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not params:
        calls = " (a Keras layer's call is not read)" if hasattr(obj, "call") else ""
        return f"the signature: {_fn_name(fn, type(obj).__name__)} names no parameter Python can read{calls}"
    known = set(_POS + _K + _OFFSET + _COS + _SIN + _FREQS + _FILLED + _BASES + _APPLY_TABLE_LEN + _DIM + _LEN
                + _HEAD + _HEAD_COUNT + _PROPORTION + tuple(_ROLE_OF))
    unknown = [p.name for p in params[1:] if p.default is p.empty and p.name.lower() not in known]
    text = ", ".join(("*, " if p.kind == p.KEYWORD_ONLY and i == next(
        j for j, q in enumerate(params) if q.kind == q.KEYWORD_ONLY) else "") + p.name
        + ("" if p.default is p.empty else "=...") for i, p in enumerate(params))
    what = "the forward method" if fn is not obj else "the signature"
    if unknown:
        return f"{what} ({text}): no row fills its required {', '.join(unknown)}"
    return f"{what} ({text}): no row takes its arguments in this order"


def _fits(fn, row) -> bool:
    """Does ``fn``'s signature take ``row``'s arguments (names where they say something)?"""
    names = [n.lower() for n in _names(fn)]
    if names[:1] == ["self"]:
        names = names[1:]
    required = [n.lower() for n in _required(fn) if n != "self"]
    n_args = len(row.args)
    if len(names) < n_args and not any(p.kind == p.VAR_POSITIONAL for p in _params(fn)):
        return False
    if len([n for n in required[n_args:] if n not in _FILLED + _BASES + _APPLY_TABLE_LEN]) > 0:
        return False
    head = names[:n_args]
    for role, name in zip(row.args, head):
        if role == "k" and (name in _POS or name in _COS or name in _FREQS or name in _OFFSET):
            return False
        if role in ("positions",) and (name in _K or name in _COS or name in _FREQS or name in _OFFSET):
            return False
        if role == "positions" and row.name == "vllm" and name not in _POS:
            return False
        if role == "offset" and name not in _OFFSET:
            return False
        if role == "scale" and name not in ("scale", "xpos_scale", "scales"):
            return False
        if role == "position" and name not in _POS + _OFFSET:
            return False
        if role in ("cos", "freqs") and (name in _K or name in _POS):
            return False
        if role == "cos" and name in _FREQS:
            return False
        if role == "freqs" and (name in _COS or name in _SIN):
            return False
        if role == "x" and (name in _POS or name in _OFFSET or name in _FREQS or name in _COS or name in _SIN
                            or name in _DIM or name in _LEN or name in _BASE):
            return False
    return True


class _default_dtype:
    """torch's default dtype set to the model's while its modules are built, as ``from_pretrained(dtype=...)``
    does: tensors made without a dtype take it, buffers computed with an explicit ``.float()`` (HF's
    ``inv_freq``) stay float32."""

    def __init__(self, dtype: str | None):
        self.dtype, self.saved = dtype, None

    def __enter__(self):
        torch = sys.modules.get("torch")
        if torch is not None and self.dtype in ("float16", "bfloat16", "float32"):
            self.saved = torch.get_default_dtype()
            torch.set_default_dtype(getattr(torch, self.dtype))
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            sys.modules["torch"].set_default_dtype(self.saved)
        return False


class _quiet:
    """Warnings of a trial call are not the audit's business (the parent reports on the numbers)."""

    def __enter__(self):
        self.w = warnings.catch_warnings()
        self.w.__enter__()
        warnings.simplefilter("ignore")
        self.e = np.errstate(all="ignore")
        self.e.__enter__()

    def __exit__(self, *exc):
        self.e.__exit__(*exc)
        self.w.__exit__(*exc)
        return False


# -- the child process: framed messages on two pipes ----------------------------------------------

MAGIC = b"SPA1"


def write_message(fd: int, header: dict, arrays=()) -> None:
    blobs = []
    for a in arrays:
        buf = io.BytesIO()
        np.save(buf, np.ascontiguousarray(a), allow_pickle=False)
        blobs.append(buf.getvalue())
    header = dict(header, sizes=[len(b) for b in blobs])
    raw = json.dumps(header).encode("utf-8")
    data = MAGIC + struct.pack(">Q", len(raw)) + raw + b"".join(blobs)
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def decode_arrays(header: dict, blob: bytes) -> list:
    out, start = [], 0
    for size in header.get("sizes", []):
        out.append(np.load(io.BytesIO(blob[start:start + size]), allow_pickle=False))
        start += size
    return out


def _serve_one(session_box: list, header: dict, arrays: list) -> tuple:
    op = header.get("op")
    if op == "setup":
        session = Session(header["target"], header["options"])
        session_box[:] = [session]
        info = session.setup(arrays[0], arrays[1])
        return {"ok": True, "info": info}, []
    session = session_box[0]
    if op == "call":
        with _quiet():
            q, k, stateful = session.call(arrays[0], arrays[1], repeat=header.get("repeat", False))
        return {"ok": True, "key": k is not None, "stateful": stateful}, [q] + ([k] if k is not None else [])
    raise RunnerError(f"internal: unknown request {op!r}")


def serve(read_fd: int, write_fd: int) -> None:
    """Answer the parent's requests until it closes the pipe (or kills this process)."""
    box: list = []
    while True:
        try:
            head = _read_exact(read_fd, 12)
        except EOFError:
            return
        if head[:4] != MAGIC:
            return
        (size,) = struct.unpack(">Q", head[4:])
        header = json.loads(_read_exact(read_fd, size))
        blob = _read_exact(read_fd, sum(header.get("sizes", [])))
        arrays = decode_arrays(header, blob)
        try:
            reply, out = _serve_one(box, header, arrays)
        except RunnerError as err:
            reply, out = {"ok": False, "error": str(err), "kind": "convention"}, []
        except BaseException as err:  # noqa: BLE001 - KeyboardInterrupt and SystemExit are the function's failures
            reply, out = {"ok": False, "error": _one_line(err), "kind": "raised",
                          "index_error": isinstance(err, IndexError) or "out of range" in str(err)
                          or "out of bounds" in str(err)}, []
        write_message(write_fd, reply, out)


#: the child's watcher: a process in its group that kills the group when the audit's end of the lifeline closes
_WATCHER = "import os, signal, sys\nwhile os.read(int(sys.argv[1]), 4096):\n    pass\nos.killpg(0, signal.SIGKILL)\n"
_watcher = None


def _die_with_parent(lifeline: int, parent: int) -> None:
    """End this process, and every process of its group, when the audit ends however it ends: the
    kernel kills this one when the parent dies (Linux), and a watcher in the group kills the group."""
    import signal
    import subprocess

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before that took effect
        os._exit(1)
    # -I -S: the watcher's interpreter reads nothing from the current folder or the environment; kept
    # referenced, so that no "still running" warning is printed when the object would be collected
    global _watcher
    _watcher = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHER, str(lifeline)], pass_fds=(lifeline,),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(lifeline)


def _limit_memory(limit: int) -> None:
    """The address-space limit of this process and what it starts (RLIMIT_AS), where the system has one."""
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    except (ImportError, OSError, ValueError):
        pass


def _flush_and_exit(code: int) -> None:
    """``os._exit`` after flushing what the user's code printed (Python's streams and C's stdio)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass
    os._exit(code)


if __name__ == "__main__":
    # run as a script: argv is (requests fd, replies fd, lifeline fd, the parent's pid, memory limit in
    # bytes or 0, the folder a package.module target is imported from or ""); this module's imports
    # (json, inspect, numpy...) are done by now, before any folder of the user's is on sys.path
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    fds = [int(v) for v in sys.argv[1:3]]
    _die_with_parent(int(sys.argv[3]), int(sys.argv[4]))
    if int(sys.argv[5]):
        _limit_memory(int(sys.argv[5]))
        _memory_note = (f" (under a memory limit of {int(sys.argv[5]) / 2**30:.3g} GiB; SYMPROOF_AUDIT_MEMORY "
                        "changes it)")
    if sys.argv[6]:
        sys.path.insert(0, sys.argv[6])
    serve(fds[0], fds[1])
    _flush_and_exit(0)
