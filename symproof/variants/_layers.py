"""Layer patterns: one file describing a model whose layers are of several types.

Llama 4 interleaves NoPE layers (every fourth layer has no rotary embedding, and scales its queries by an
attention temperature) with chunked RoPE layers; Gemma 2 and 3 alternate sliding-window and global
layers, with different RoPE bases.  A layer-pattern file names the types, the order they repeat in, and
describes each type as a complete variant (a sub-table, every key of a variant file but ``name``)::

    name = "llama4-scout"
    title = "Llama 4 Scout's layers"
    positions = "nonnegative"          # optional: the default of every layer type

    [layers]
    pattern = ["rope", "rope", "rope", "nope"]   # repeated over the model's layers
    count = 48                                   # optional: the number of layers (default: the pattern's)

    [layers.rope]
    kind = "rotary"
    ...
    [layers.rope.frequencies]
    base = 500000

    [layers.nope]
    ...

Every property is decided for each layer type on its own (a type's verdict is the verdict of every layer of
that type) and reported under the type's name; the type's variant is named ``{name}-{type}``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Mapping

from .._ground._errors import VariantFileError
from .._ground._io import read_input_text
from .._ground._text import did_you_mean, one_line
from ._spec import Variant, parse_toml, parse_variant

__all__ = ["LayerPattern", "load_layers", "loads_layers", "parse_layers", "check_layers", "load_description",
           "loads_description", "MAX_LAYERS", "LAYER_KEYS"]

#: most layers a pattern may list, and most a model may have
MAX_LAYERS = 1024
#: the most layer types a file may describe
MAX_LAYER_TYPES = 16
#: the top-level keys of a layer-pattern file (a variant's own keys go in the layer types' sub-tables)
LAYER_KEYS = {"name": str, "title": str, "description": str, "positions": str, "layers": dict}
_TYPE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class LayerPattern:
    """A model's layer types (each a :class:`Variant`) and the order of its layers."""

    name: str
    title: str
    source: str
    pattern: tuple  # the types, in the order they repeat
    count: int  # the number of layers
    types: Mapping  # type name -> Variant, in the order of first appearance in the pattern

    def layers_of(self, kind: str) -> list:
        """The indices (from 0) of the layers of type ``kind``."""
        return [k for k in range(self.count) if self.pattern[k % len(self.pattern)] == kind]


def load_description(path: "str | os.PathLike") -> "LayerPattern | Variant":
    """A description file read once: a layer pattern when it has a top-level ``[layers]`` table, else a
    variant (TOML, at most 1 MB)."""
    return loads_description(read_input_text(path, error=VariantFileError), os.fspath(path))


def loads_description(text: str, source: str = "<text>") -> "LayerPattern | Variant":
    """The text of a variant or of a layer-pattern file, parsed once (see :func:`load_description`)."""
    data = parse_toml(text, source)
    return parse_layers(data, source) if "layers" in data else parse_variant(data, source)


def load_layers(path: "str | os.PathLike") -> LayerPattern:
    """Read and validate a layer-pattern file (TOML, at most 1 MB)."""
    return loads_layers(read_input_text(path, error=VariantFileError), os.fspath(path))


def loads_layers(text: str, source: str = "<text>") -> LayerPattern:
    """Validate the text of a layer-pattern file (``source`` names it in errors)."""
    return parse_layers(parse_toml(text, source), source)


def _fail(source: str, key: str, message: str) -> VariantFileError:
    return VariantFileError(f"{source}: key '{key}': {message}")


def parse_layers(data: Mapping, source: str = "<dict>") -> LayerPattern:
    """Validate a layer-pattern document: the pattern, the count, and each layer type as a variant."""
    for key, value in data.items():
        if key not in LAYER_KEYS:
            hint = (" (a variant's keys go in each layer type's sub-table, [layers.TYPE])"
                    if key in ("kind", "width", "pairing", "frequencies", "bias", "mask", "params") else "")
            raise VariantFileError(f"{source}: unknown key '{key}'{did_you_mean(key, LAYER_KEYS)} in a layer-pattern "
                                   f"file; expected one of {sorted(LAYER_KEYS)}{hint}")
        if not isinstance(value, LAYER_KEYS[key]):
            raise _fail(source, key, f"expected {'a table' if LAYER_KEYS[key] is dict else 'a string'}")
    if "name" not in data:
        raise _fail(source, "name", "is required")
    name = data["name"]
    if not _NAME.match(name):
        raise _fail(source, "name", f"expected lower-case letters, digits, '-' or '_', got {name!r}")
    layers = data["layers"]
    pattern = layers.get("pattern")
    if not isinstance(pattern, list) or not 1 <= len(pattern) <= MAX_LAYERS \
            or not all(isinstance(t, str) for t in pattern):
        raise _fail(source, "layers.pattern", f"expected an array of 1 to {MAX_LAYERS} layer type names, e.g. "
                                              "[\"rope\", \"rope\", \"rope\", \"nope\"]")
    described = {k: v for k, v in layers.items() if k not in ("pattern", "count")}
    for kind, table in described.items():
        if not _TYPE.match(kind):
            raise _fail(source, f"layers.{kind}", "a layer type name is a lower-case letter followed by lower-case "
                                                  "letters, digits or '_'")
        if not isinstance(table, dict):
            raise _fail(source, f"layers.{kind}", "expected a table describing the layer type (the keys of a "
                                                  "variant file, without name)")
    if len(described) > MAX_LAYER_TYPES:
        raise _fail(source, "layers", f"describes {len(described)} layer types; at most {MAX_LAYER_TYPES}")
    for kind in pattern:
        if kind not in described:
            raise _fail(source, "layers.pattern", f"names the layer type {kind!r}, which has no [layers.{kind}] "
                                                  f"table{did_you_mean(kind, described)}")
    unused = [k for k in described if k not in pattern]
    if unused:
        raise _fail(source, f"layers.{unused[0]}", "describes a layer type the pattern never names; add it to "
                                                   "layers.pattern or remove the table")
    count = layers.get("count", len(pattern))
    if isinstance(count, bool) or not isinstance(count, int) or not len(pattern) <= count <= MAX_LAYERS:
        raise _fail(source, "layers.count", f"expected the number of layers, an integer from {len(pattern)} (the "
                                            f"pattern's length) to {MAX_LAYERS}, got {count!r}")
    title = data.get("title", name)
    types = {}
    for kind in dict.fromkeys(pattern):
        table = dict(described[kind])
        if "name" in table:
            raise _fail(source, f"layers.{kind}.name", f"a layer type is named by its table; its variant is "
                                                       f"named {name}-{kind}")
        table["name"] = f"{name}-{kind}"
        table.setdefault("title", f"{title}: {kind} layers")
        if "positions" in data:
            table.setdefault("positions", data["positions"])
        types[kind] = parse_variant(table, f"{source} [layers.{kind}]")
    return LayerPattern(name, title, source, tuple(pattern), count, types)


def _layer_list(indices: list) -> str:
    shown = ", ".join(str(k) for k in indices[:6])
    return shown + (f", ... ({len(indices)} layers)" if len(indices) > 6 else "")


def check_layers(layers: LayerPattern, **options) -> list:
    """``[(type, results)]``: :func:`~._check.check_variant` of each layer type (``options`` passed on)."""
    from ._check import check_variant

    return [(kind, check_variant(variant, **options)) for kind, variant in layers.types.items()]


def format_layers(layers: LayerPattern, checked: list, seconds: float) -> str:
    """Each layer type's table, then every property's verdict per layer type."""
    from ._results import _property_key, format_results

    lines = [one_line(f"{layers.title} (layer pattern; {layers.source})"),
             one_line(f"{layers.count} layers, the pattern {', '.join(layers.pattern)} repeated: "
                      + "; ".join(f"{kind} at layers {_layer_list(layers.layers_of(kind))}" for kind in layers.types))]
    for kind, results in checked:
        lines += ["", f"layer type {kind!r}:", format_results(layers.types[kind], results, sum(r.seconds for r in results))]
    keys = list(dict.fromkeys(_property_key(r) for _, results in checked for r in results))
    verdicts = {(kind, _property_key(r)): r.verdict for kind, results in checked for r in results}
    width = max(len(k) for k in keys + ["property"])
    columns = [max(len(kind), 8) for kind, _ in checked]
    lines += ["", "every property, per layer type:",
              (f"{'property':<{width}}  " + "  ".join(f"{kind:<{w}}" for (kind, _), w in zip(checked, columns))).rstrip()]
    for key in keys:
        lines.append(f"{key:<{width}}  " + "  ".join(f"{verdicts.get((kind, key), '-'):<{w}}"
                                                      for (kind, _), w in zip(checked, columns)).rstrip())
    lines.append(f"({seconds:.2f} s)")
    return "\n".join(lines)


def layers_as_dict(layers: LayerPattern, checked: list, seconds: float | None = None) -> dict:
    from ._results import exit_code, results_as_dict

    out = {"layers": {"name": layers.name, "title": layers.title, "source": layers.source,
                      "pattern": list(layers.pattern), "count": layers.count,
                      "types": {kind: {"layers": layers.layers_of(kind), **results_as_dict(layers.types[kind], results)}
                                for kind, results in checked}},
           "exit_code": max(exit_code(results) for _, results in checked)}
    if seconds is not None:
        out["seconds"] = round(seconds, 4)
    return out


def layers_exit_code(checked: list) -> int:
    from ._results import exit_code

    return max(exit_code(results) for _, results in checked)


def variants_of(layers: LayerPattern) -> list:
    """The layer types' variants, in pattern order (for exports: one kernel each)."""
    return [v for v in layers.types.values() if isinstance(v, Variant)]
