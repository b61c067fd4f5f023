"""What an audit compares: the user's function (``FILE.py:FUNCTION``) and the declared model.

Importing ``FILE.py`` runs the code in it -- that is the only way to obtain the
function -- so the file is imported exactly once, with its own folder on
``sys.path`` for the duration (so that it can import its siblings) and without
writing ``__pycache__`` next to it.  Nothing else from the file is run: the
auditor only calls ``FUNCTION``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Mapping

from .._ground._errors import InvalidInputError, SymproofError, VariantFileError
from .._ground._io import read_input_file
from .._ground._text import printable
from ..models import load_model_config
from ..variants import Variant, load_variant, parse_variant
from ..models._json import read_config as read_config_json
from ..models._config import parse_model, parse_model_config
from ._runner import RunnerError, import_file, split_target

__all__ = ["load_function", "load_like", "model_reading", "Reading", "MAX_AUDIT_WIDTH"]

#: the audit probes d basis vectors at every position: widths above this are refused
MAX_AUDIT_WIDTH = 2048


def load_function(target: str):
    """Import ``FILE.py`` (running its code, afresh at every call) and return its ``FUNCTION``, in this
    process; the command line runs the code in a child instead (:mod:`._runner`, whose loader this is)."""
    try:
        path, name = split_target(target)
        if not path.endswith(".py"):
            raise RunnerError(f"expected FILE.py:FUNCTION with a .py file, got {target!r}")
        module = import_file(path, in_child=False)
    except RunnerError as err:
        raise InvalidInputError(str(err)) from None
    if not hasattr(module, name):
        defined = sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("_")
                         and getattr(v, "__module__", None) == module.__name__)
        raise InvalidInputError(f"{path} defines no {name!r}; functions defined there: {defined or 'none'}")
    function = getattr(module, name)
    if not callable(function):
        raise InvalidInputError(f"{path}: {name!r} is a {type(function).__name__}, not a function")
    return function


def _load_toml_dict(path: str) -> dict:
    """The TOML document at ``path``, read by the bounded reader (a FIFO, /dev/zero or a folder is one line)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    raw = read_input_file(path, error=VariantFileError)
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise VariantFileError(f"{printable(path)}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except (tomllib.TOMLDecodeError, ValueError, RecursionError) as err:
        raise VariantFileError(f"{printable(path)}: not valid TOML ({str(err)[:200]})") from None


def _config_at_head_dim(data, source: str, head_dim: int, regime: str | None = None) -> Variant:
    """The config's variant with its head width replaced by ``head_dim`` (``--head-dim``).

    Families read the width from different keys: ``head_dim`` for most, ``n_embd // n_head`` for GPT-J,
    so the override is written where the family reads it, and the result is checked to have that width.
    """
    if not isinstance(data, Mapping):
        raise VariantFileError(f"{source}: expected a JSON object of config keys, got {type(data).__name__}")
    data = dict(data)
    data["head_dim"] = head_dim
    heads = data.get("n_head", data.get("num_attention_heads"))
    if data.get("model_type") == "gptj" and isinstance(heads, int) and not isinstance(heads, bool) and heads > 0:
        data["n_embd"] = head_dim * heads
    try:
        variant = parse_model_config(data, source, regime)
    except VariantFileError as err:
        raise VariantFileError(f"{err.message} (reading the config at --head-dim {head_dim})") from None
    if variant.width != head_dim:
        raise InvalidInputError(f"{source}: --head-dim {head_dim} cannot be applied: the config still gives "
                                f"head width {variant.width}")
    return variant


def load_like(like, head_dim: int | None = None, regime: str | None = None, axes: bool = False) -> Variant:
    """The declared model as a :class:`Variant`.

    ``like`` is a :class:`Variant`, a variant TOML path, a model ``config.json``
    path, or a config as a dict.  ``head_dim`` overrides the head width (the
    TOML ``width``, the config's ``head_dim``); ``regime`` names one rotary
    regime of a config whose layers use several (``--regime``); ``axes`` admits
    a multi-axis model (the audit compares those per axis).
    """
    if regime is not None and (not isinstance(regime, str) or not regime.strip()):
        raise InvalidInputError(f"--regime expects the name of one of the config's rotary regimes, got {regime!r}")
    if regime is not None and not (isinstance(like, Mapping) or (isinstance(like, (str, os.PathLike))
                                                                 and os.fspath(like).endswith(".json"))):
        raise InvalidInputError(f"--regime {printable(regime)!s}: only a model config.json has regimes; "
                                f"--like names {printable(str(like))[:80]}")
    try:
        return _load_like(like, head_dim, regime, axes)
    except VariantFileError as err:
        if regime is None and "expected regime= one of them" in err.message:
            # the same choice, named by the audit's own option
            raise VariantFileError(err.message.replace(
                "expected regime= one of them",
                "pass --regime NAME, the regime this code implements (a rotary module taking layer_type is "
                "called with that layer type)")) from None
        raise


def _load_like(like, head_dim: int | None, regime: str | None, axes: bool) -> Variant:
    if head_dim is not None and (isinstance(head_dim, bool) or not isinstance(head_dim, int)
                                 or head_dim < 2 or head_dim % 2):
        raise InvalidInputError(f"--head-dim must be an even integer >= 2, got {head_dim!r}")
    if head_dim is not None and head_dim > MAX_AUDIT_WIDTH:
        raise InvalidInputError(f"--head-dim {head_dim} is above {MAX_AUDIT_WIDTH}, the widest head the audit probes")
    if isinstance(like, Variant):
        if head_dim is not None and head_dim != like.width:
            raise InvalidInputError(f"head_dim={head_dim} differs from the variant's width {like.width}; "
                                    "pass the variant's file to re-read it at another width")
        variant = like
    elif isinstance(like, Mapping):
        variant = (load_model_config(like, regime) if head_dim is None
                   else _config_at_head_dim(like, "<config>", head_dim, regime))
    elif isinstance(like, (str, os.PathLike)):
        path = os.fspath(like)
        if path.endswith(".toml"):
            if head_dim is None:
                variant = load_variant(path)
            else:
                data = _load_toml_dict(path)
                if isinstance(data.get("rotated_width"), int) and data["rotated_width"] > head_dim:
                    raise InvalidInputError(f"{path}: rotated_width {data['rotated_width']} > --head-dim {head_dim}")
                data["width"] = head_dim
                variant = parse_variant(data, path)
        elif path.endswith(".json"):
            if head_dim is None:
                variant = load_model_config(path, regime)
            else:  # the reader's own checks (size, UTF-8, JSON, finite numbers), then the width replaced
                variant = _config_at_head_dim(read_config_json(path), path, head_dim, regime)
        else:
            raise InvalidInputError(f"--like expects a variant .toml or a model config .json, got {path!r}")
    else:
        raise InvalidInputError(f"like must be a Variant, a .toml/.json path or a config dict, "
                                f"got {type(like).__name__}")
    if not isinstance(variant, Variant):
        raise SymproofError(f"the model reader returned {type(variant).__name__}, not a Variant")
    if variant.kind != "rotary":
        raise InvalidInputError(f"{variant.source}: the audit compares rotary maps; {variant.name!r} is "
                                f"{variant.kind}", kind=variant.kind)
    if len(variant.axes) != 1 and not axes:  # the audit itself compares multi-axis models per axis (._axes)
        raise InvalidInputError(f"{variant.source}: the audit handles one position axis; {variant.name!r} has "
                                f"{len(variant.axes)} ({', '.join(variant.axes)})")
    if variant.relative is not None:
        raise InvalidInputError(f"{variant.source}: the audit compares per-token rotations; {variant.name!r} rotates "
                                "by a relative position (position.relative), a function of each query and key pair")
    return variant


@dataclass(frozen=True)
class Reading:
    """What the declared model does beyond the rotary map the audit compares (a config's, read as
    ``symproof check`` reads it)."""

    #: ``out[i] = rotated[order[i]]``: the model writes its rotated block out permuted (DeepSeek-V3's
    #: ``rope_interleave``, LongCat-Flash: adjacent pairs in, ``[even | odd]`` out), else None
    output_order: tuple | None = None
    #: the factor the model's attention multiplies the rotated query by (Ministral 3), stated, else None
    query_scale: str | None = None


def model_reading(config: Mapping, source: str, variant: Variant, head_dim: int | None = None,
                  regime: str | None = None) -> Reading:
    """The :class:`Reading` of the model config ``config`` (read from ``source``, as :func:`load_like` read it)
    for the audit of ``variant``, its regime ``regime``."""
    data = dict(config)
    if head_dim is not None:
        data["head_dim"] = head_dim  # as _config_at_head_dim reads it
    model = parse_model(data, source)
    order = model.output_order
    if order is not None and sorted(order) != list(range(variant.width)):
        raise InvalidInputError(f"{source}: the model writes its rotated block of {len(order)} coordinates out "
                                f"permuted, and the audited head has {variant.width}: audit it at the model's own "
                                "width (without --head-dim)")
    scaled = None
    if regime is not None or len(model.regimes) == 1:
        attention = model.regime(regime).attention
        if attention is not None and attention.query_scale is not None:
            scale = attention.query_scale  # a formula of the variant language, validated when it was read
            values = ", ".join(f"{name} = {attention.params[name]}" for name in sorted(scale.names)
                               if name in attention.params)
            scaled = f"{scale.text} at its position m" + (f" ({values})" if values else "")
    return Reading(None if order is None else tuple(int(i) for i in order), scaled)
