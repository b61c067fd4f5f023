"""``symproof check CONFIG.json``: every rotary regime of a model config, proved and reported per layer group.

A model whose layers differ (Gemma 3's sliding and full layers, SmolLM3's and
Llama 4's NoPE layers, Cohere2, ModernBERT) is several rotary maps; each is
checked as the :class:`Variant` it is and printed under the layers that use
it.  A NoPE regime has no rotation to check: it is reported as the identity.
A model with M-RoPE sections (Qwen2-VL) is checked on text positions, where
the three axes are equal and the map is the regime's plain RoPE; the notes
say which pairs follow which axis.  The export is one module with every regime
(:mod:`symproof._export._model`).
"""

from __future__ import annotations

from .._ground._errors import InvalidInputError
from .._export import Kernel, check_target_name, kernel_files, module_name, write_kernel
from .._ground._provenance import call_length_provenance
from .._ground._text import one_line
from ..variants._check import DEFAULT_STEPS, check_variant
from ._config import with_model_notes
from ._model import ModelRope, attention_scaling

__all__ = ["check_model", "format_model", "model_as_dict", "model_exit_code", "model_kernel", "export_model",
           "check_model_target"]


def check_model(model: ModelRope, steps: int | None = DEFAULT_STEPS, time_limit: float | None = None) -> list:
    """``[(regime, results)]``: the verdicts of every rotary regime (NoPE regimes: no results); ``steps``
    and ``time_limit`` as for :func:`~symproof.variants.check_variant`, for each property."""
    return [(r, [] if r.checked is None else check_variant(r.checked, steps=steps, time_limit=time_limit))
            for r in model.regimes]


def model_exit_code(checked) -> int:
    from ..variants._results import exit_code

    return max([exit_code(results) for _, results in checked if results] + [0])


def _layers(regime, model) -> str:
    from ._model import _ranges

    count = len(model.layer_regimes)
    if not count:
        return "every layer"
    return f"layers {_ranges(regime.layers)} ({len(regime.layers)} of {count})"


def format_model(model: ModelRope, checked, seconds: float) -> str:
    """The text ``symproof check`` prints for a model config."""
    from ..variants._results import format_results

    if model.plain:  # one map over the whole head: the variant's own table, as before regimes existed
        regime, results = checked[0]
        return format_results(with_model_notes(model, regime.checked), results, seconds)
    lines = [f"{model.model_type} config: {len(model.regimes)} rotary regime(s) ({model.source})"]
    lines += [f"  {note}" for note in model.notes]
    for regime, results in checked:
        lines.append(f"regime {regime.name}: {_layers(regime, model)}")
        if regime.variant is None:
            lines.append("  NoPE: these layers apply no positional encoding (apply is the identity)")
            continue
        table = format_results(regime.checked, results, 0.0).splitlines()
        lines += ["  " + line for line in table[:-1]]
        lines.append("  " + table[-1].rsplit(" (", 1)[0])
    lines.append(f"({seconds:.2f} s)")
    return "\n".join(one_line(line) for line in lines)


def model_as_dict(model: ModelRope, checked, seconds: float | None = None) -> dict:
    """The JSON document ``symproof check --json`` prints for a model config."""
    from ..variants._results import results_as_dict

    if model.plain:
        regime, results = checked[0]
        return results_as_dict(with_model_notes(model, regime.checked), results, seconds)
    out = {"model_type": model.model_type, "source": model.source, "head_width": model.head_width,
           "rotary_offset": model.offset, "notes": list(model.notes),
           "mrope_section": None if model.mrope_section is None else list(model.mrope_section),
           "layer_regimes": list(model.layer_regimes), "regimes": [], "exit_code": model_exit_code(checked)}
    if model.regime_widths:
        out["head_widths"] = dict(model.regime_widths)
    for regime, results in checked:
        entry = {"regime": regime.name, "layers": list(regime.layers), "nope": regime.variant is None}
        if regime.variant is not None:
            entry.update(results_as_dict(regime.checked, results))
            entry.pop("exit_code", None)
        out["regimes"].append(entry)
    if seconds is not None:
        out["seconds"] = round(seconds, 4)
    return out


def check_model_target(model: ModelRope, target: str) -> None:
    from .._export._model import supports

    check_target_name(target)
    why = supports(model, target)
    if why:
        raise InvalidInputError(f"{model.source}: no kernel can be exported for {model.name!r} with --target "
                                f"{target}: {why}", target=target)


def _provenance(model: ModelRope, target: str) -> list:
    from .._export._call_length import reads_length

    if model.plain:
        variant = model.regimes[0].variant
        return call_length_provenance(variant, target, attention_scaling(variant), reads_length(variant))
    lines = []
    for regime in model.regimes:
        if regime.variant is None:
            lines.append(f"Regime {regime.name!r} ({_layers(regime, model)}): NoPE, apply returns x unchanged.")
            continue
        variant = regime.variant
        part = call_length_provenance(variant, target, attention_scaling(variant), reads_length(variant))
        if not lines:
            lines.append(part[0])
            widths = (f"head widths {', '.join(f'{n} {w}' for n, w in model.regime_widths)} (HEAD_WIDTHS)"
                      if model.regime_widths else f"head width {model.head_width}")
            lines.append(f"Model: {model.model_type}, {widths}; REGIMES and LAYER_REGIMES "
                         "name the rotary map of each decoder layer.")
            lines += [f"  {note}" for note in model.notes]
        lines.append(f"Regime {regime.name!r} ({_layers(regime, model)}):")
        lines += part[1:]
    return lines


def model_kernel(model: ModelRope, target: str) -> Kernel:
    check_model_target(model, target)
    name = model.regimes[0].variant.name if model.plain else model.name
    return Kernel("model", model, module_name("symproof_rope_", name), tuple(_provenance(model, target)))


def model_source(model: ModelRope, target: str) -> dict:
    """``{file name: text}`` of the exported module for ``target``."""
    return kernel_files(model_kernel(model, target), target)


def export_model(model: ModelRope, folder, target: str = "numpy", *, option: str = "--export") -> list:
    """Write the model's module for ``target`` into ``folder``; return the paths written."""
    return write_kernel(model_kernel(model, target), target, folder, option=option)
