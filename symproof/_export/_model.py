"""Model bodies: the dispatcher's ``model`` family, one module for every rotary regime of a model config.

A model config read by :func:`symproof.models._config.load_model` is a
:class:`~symproof.models.ModelRope`: one or more rotary
regimes (Gemma 3's sliding and full layers, SmolLM3's NoPE layers, ...), the
regime of each decoder layer, and where the rotated block sits in a head.  The
exported module states all of it:

- ``REGIMES``: the regime names; ``LAYER_REGIMES``: one name per decoder layer;
- ``query_scale(positions, regime=None)`` (a model whose attention scales the rotated query: Ministral 3's
  ``llama_4_scaling_beta``): the factor at each position, 1 in a regime whose attention does not scale;
  a negative or non-integer position (where ``log(1 + floor(m / L))`` is no position's) is a ``ValueError``;
- ``apply(x, positions, regime=None, seq_len=None)``: ``x`` is ``(..., HEAD_WIDTH)`` (a model whose head
  width differs per layer, Gemma 4's: ``(..., HEAD_WIDTHS[regime])``);
  ``regime`` is required when there are several; a NoPE regime returns ``x``;
  the rotated block ``[ROTARY_OFFSET, ROTARY_OFFSET + width)`` is rotated as
  the regime's kernel does (frequencies of the call, pairing, attention scaling)
  and, where HF writes it out permuted (DeepSeek-V3's ``rope_interleave``),
  permuted by ``OUTPUT_ORDER``; with ``MROPE_SECTION`` (Qwen2-VL) ``positions``
  may be ``(3, *x.shape[:-1])`` (t, h, w), pair ``r`` reading the axis of its band.

Each regime's frequencies are printed by the call-length body generator
(:func:`symproof._export._call_length.python_frequencies`) inside a function of
its own, so the regimes' tables never share a name.  Nothing from the input
file is printed but numbers and names the reader validated (regime names are
HF's layer type names or ``rope``/``nope``, printed as string literals).
"""

from __future__ import annotations

import sympy as sp

from ..encodings import pair_indices
from . import file_name
from ._call_length import python_frequencies

__all__ = ["bodies", "supports"]


def supports(model, target: str) -> str:
    """Why ``model`` cannot be exported for ``target`` ("" when it can)."""
    from ._call_length import supports as regime_supports

    if target == "c" and not model.plain:
        return ("the C target exports one rotary map over the start of the head; this model has "
                f"{_what(model)}: use --target numpy or torch")
    if target == "c" and _scaled(model):
        return ("the attention scales the rotated query per position, which the numpy and torch targets export "
                "(query_scale) and the C target does not: use --target numpy or torch")
    for regime in model.regimes:
        if regime.variant is not None:
            why = regime_supports(regime.variant)
            if why:
                return f"regime {regime.name}: {why}"
    return ""


def _what(model) -> str:
    parts = []
    if len(model.regimes) > 1:
        parts.append(f"{len(model.regimes)} regimes")
    if any(r.variant is None for r in model.regimes):
        parts.append("NoPE layers")
    if model.offset:
        parts.append(f"its rotated block at offset {model.offset}")
    if model.output_order is not None:
        parts.append("a permuted output")
    if model.mrope_section is not None:
        parts.append("M-RoPE sections")
    return ", ".join(parts)


def bodies(model, module: str, target: str) -> dict:
    if target == "c":  # one plain regime: the call-length C body, as for a variant
        from ._call_length import bodies as regime_bodies

        return regime_bodies(model.regimes[0].variant, module, target)
    return {file_name(module, target): _python_source(model, target)}


def _scaled(model) -> list:
    """``[(index, regime)]`` of the regimes whose attention scales the rotated query per position."""
    return [(k, r) for k, r in enumerate(model.regimes)
            if r.attention is not None and r.attention.query_scale is not None]


_M = sp.Symbol("m", integer=True, nonnegative=True)

#: the generated functions' first lines: ``regime`` resolved (required when there are several) and checked
_REGIME_CHECK = ("    if regime is None:",
                 "        if len(REGIMES) != 1:",
                 "            raise ValueError(f'regime is required: one of {REGIMES}')",
                 "        regime = REGIMES[0]",
                 "    if regime not in _MAPS:",
                 "        raise ValueError(f'unknown regime {regime!r}; expected one of {REGIMES}')")

#: per target: the positions as float64, then the floor, every and isfinite functions query_scale's guard uses
_SCALE_GUARD = {"numpy": ("numpy.asarray(positions, dtype=numpy.float64)", "numpy.floor", "numpy.all",
                          "numpy.isfinite"),
                "torch": ("torch.as_tensor(positions, dtype=torch.float64)", "torch.floor", "torch.all",
                          "torch.isfinite")}


def _query_scale_source(model, target: str) -> list:
    """``query_scale(positions, regime=None)`` and each scaled regime's formula, printed from the exact
    definition the properties were decided on (the attention variant's ``scale.query``)."""
    from ._printers import NumPyKernelPrinter, numbers_as_floats, torch_printer

    scaled = _scaled(model)
    if not scaled:
        return []
    printer = NumPyKernelPrinter() if target == "numpy" else torch_printer()
    array, floor, every, finite = _SCALE_GUARD[target]
    lines, table = [], []
    for index, regime in scaled:
        variant = regime.attention
        expr = variant.query_scale.build({**variant.width_env(), "m": _M})
        code = printer.doprint(numbers_as_floats(expr) if target == "torch" else expr)
        lines += ["", "", f"def _query_scale_{index}(m):", f"    return {code} + 0 * m"]
        table.append(f"    {regime.name!r}: _query_scale_{index},")
    lines += ["", "", "_QUERY_SCALES = {"] + table + ["}"]
    lines += ["", "", "def query_scale(positions, regime=None):",
              '    """The factor HF multiplies the rotated query by in its attention, at each position (the key is not',
              '    scaled); 1 in a regime whose attention does not scale. Positions are integers >= 0."""',
              *_REGIME_CHECK,
              f"    m = {array}",
              f"    if not bool({every}({finite}(m) & (m >= 0) & (m == {floor}(m)))):",
              "        raise ValueError('query_scale takes finite integer positions >= 0 (below 0, "
              "log(1 + floor(m / L)) is not a position scale)')",
              "    if regime not in _QUERY_SCALES:",
              "        return m * 0 + 1",
              "    return _QUERY_SCALES[regime](m)"]
    return lines


def _regime_factory(index: int, variant) -> list:
    pairs = pair_indices(variant.rotated_width, variant.pairing)
    lines = [f"def _regime_{index}():",
             "    # the tables of one regime, closed over by its frequencies()",
             f"    WIDTH = {variant.width}",
             f"    ATTENTION_SCALING = {float(sp.N(variant.attention_scaling(), 20))!r}",
             f"    FIRST = [{', '.join(str(p[0]) for p in pairs)}]",
             f"    SECOND = [{', '.join(str(p[1]) for p in pairs)}]"]
    lines += [("    " + line) if line else "" for line in python_frequencies(variant)]
    lines += ["    return frequencies, FIRST, SECOND, ATTENTION_SCALING, WIDTH"]
    return lines


def _python_source(model, target: str) -> str:
    lib = "numpy" if target == "numpy" else "torch"
    regimes = model.regimes
    table = []
    lines = ["", "import math", f"import {lib}", "",
             f"REGIMES = ({''.join(repr(r.name) + ', ' for r in regimes)})",
             f"LAYER_REGIMES = ({''.join(repr(n) + ', ' for n in model.layer_regimes)})",
             f"HEAD_WIDTH = {model.head_width}"]
    if model.regime_widths:  # regime names are HF's layer type names or rope-k, validated; widths integers
        lines.append(f"HEAD_WIDTHS = {dict(model.regime_widths)!r}  # the head width of each regime's layers")
    lines += [f"ROTARY_OFFSET = {model.offset}",
              f"OUTPUT_ORDER = {None if model.output_order is None else list(model.output_order)!r}",
              f"MROPE_SECTION = {None if model.mrope_section is None else tuple(model.mrope_section)!r}"]
    if model.mrope_section is not None:
        axes = [k % 3 for k, size in enumerate(model.mrope_section) for _ in range(size)]
        lines.append(f"PAIR_AXIS = [{', '.join(map(str, axes))}]  # 0: t, 1: h, 2: w")
    for index, regime in enumerate(regimes):
        if regime.variant is None:
            table.append(f"    {regime.name!r}: None,  # NoPE: the identity")
            continue
        lines += ["", ""] + _regime_factory(index, regime.variant)
        table.append(f"    {regime.name!r}: _regime_{index}(),")
    lines += ["", "", "_MAPS = {"] + table + ["}"]
    lines += ["", "", "def apply(x, positions, regime=None, seq_len=None):",
              '    """Rotate x (..., HEAD_WIDTH) at integer positions as HF does in the layers of `regime` (one of',
              "    REGIMES; required when there are several); seq_len defaults to max(positions) + 1.",
              "    With MROPE_SECTION, positions may also be (3, *x.shape[:-1]): t, h, w.\"\"\"",
              *_REGIME_CHECK]
    lines += _python_apply(target, bool(model.regime_widths))
    lines += _query_scale_source(model, target)
    return "\n".join(lines) + "\n"


def _python_apply(target: str, per_regime: bool = False) -> list:
    if target == "numpy":
        asarray, as_index, copy = ("numpy.asarray(x, dtype=numpy.float64)",
                                   "numpy.asarray(positions, dtype=numpy.float64)", "x.copy()")
        tensor = "numpy.asarray({}, dtype=numpy.float64)"
        broadcast, stack, peak = "numpy.broadcast_to({}, {})", "numpy.stack", "int(pos.max()) + 1 if pos.size else 1"
        take = "numpy.moveaxis(pos[PAIR_AXIS], 0, -1)"
        cos, sin = "numpy.cos", "numpy.sin"
    else:
        asarray = "torch.as_tensor(x, dtype=torch.float64)"
        as_index = "torch.as_tensor(positions, dtype=torch.float64, device=x.device)"
        copy = "x.clone()"
        tensor = "torch.tensor({}, dtype=torch.float64, device=x.device)"
        broadcast, stack = "{}.expand({})", "torch.stack"
        peak = "int(pos.max().item()) + 1 if pos.numel() else 1"
        take = "torch.movedim(pos[PAIR_AXIS], 0, -1)"
        cos, sin = "torch.cos", "torch.sin"
    if per_regime:  # the head width differs per layer: x of the regime's own width (a NoPE regime: any)
        width_check = ["    if regime in HEAD_WIDTHS and x.shape[-1] != HEAD_WIDTHS[regime]:",
                       "        raise ValueError(f'x must end with HEAD_WIDTHS[{regime!r}] = {HEAD_WIDTHS[regime]} "
                       "coordinates, got shape {tuple(x.shape)}')"]
    else:
        width_check = ["    if x.shape[-1] != HEAD_WIDTH:",
                       "        raise ValueError(f'x must end with HEAD_WIDTH = {HEAD_WIDTH} coordinates, got shape "
                       "{tuple(x.shape)}')"]
    return [f"    x = {asarray}"] + width_check + [
            "    spec = _MAPS[regime]",
            "    if spec is None:",
            f"        return {copy}",
            "    frequencies, first, second, scaling, width = spec",
            f"    pos = {as_index}",
            "    rows = tuple(x.shape[:-1])",
            "    if MROPE_SECTION is not None and tuple(pos.shape) == (3,) + rows:",
            "        axes = pos",
            "    else:",
            f"        pos = {broadcast.format('pos', 'rows')}",
            f"        axes = {stack}([pos, pos, pos]) if MROPE_SECTION is not None else None",
            "    if axes is not None:",
            "        pos = axes",
            "    if seq_len is None:",
            f"        seq_len = {peak}",
            f"    w = {tensor.format('frequencies(seq_len)')}",
            "    if axes is not None:",
            f"        angle = {take.replace('pos[', 'axes[')} * w",
            "    else:",
            "        angle = pos[..., None] * w",
            f"    c, s = {cos}(angle) * scaling, {sin}(angle) * scaling",
            "    block = x[..., ROTARY_OFFSET:ROTARY_OFFSET + width]",
            "    a, b = block[..., first], block[..., second]",
            f"    rotated = {copy.replace('x.', 'block.')}",
            "    rotated[..., first] = a * c - b * s",
            "    rotated[..., second] = a * s + b * c",
            "    if OUTPUT_ORDER is not None:",
            "        rotated = rotated[..., OUTPUT_ORDER]",
            f"    out = {copy}",
            "    out[..., ROTARY_OFFSET:ROTARY_OFFSET + width] = rotated",
            "    return out"]
