"""Census: which rotary text-model types of the installed transformers ``symproof check`` accepts.

A model type counts as rotary when a ``modeling_*.py`` of its folder defines a
``*RotaryEmbedding`` class or an ``apply_rotary*`` function.  Each type is read
from its config class's defaults (``{"model_type": T}``, as ``AutoConfig.for_model``
builds it).  An accepted type is then compared with HF: for a type read
through transformers, the exported numpy kernel applied to the basis vectors
at the probed positions against the maps recorded from HF's own forward (for an M-RoPE type also at the
multi-axis positions its rotary class was driven with, one axis alone and all mixed)
(within float32-angle accuracy, as the family tests bound it); for a type with
a row, the family tests do that comparison.  One JSON line per type, then a
summary.  Usage: ``python benchmarks/families_census.py OUT.jsonl [TYPES...]``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import sys
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def rotary_types():
    import transformers
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES, model_type_to_module_name

    root = os.path.dirname(transformers.models.__file__)
    out = []
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        folder = os.path.join(root, model_type_to_module_name(model_type))
        if not os.path.isdir(folder):
            continue
        text = ""
        for name in os.listdir(folder):
            if name.startswith("modeling_") and name.endswith(".py") and "_tf_" not in name and "_flax_" not in name:
                with open(os.path.join(folder, name), encoding="utf-8") as handle:
                    text += handle.read()
        if re.search(r"class \w*RotaryEmbedding\b|def _?apply_rotary", text):
            out.append(model_type)
    return out


def text_model(model_type):
    """``""`` when the type's config class describes a rotary text model, else why not."""
    import transformers

    try:
        config = transformers.AutoConfig.for_model(model_type)
        text = config.get_text_config(decoder=True)
    except Exception as err:  # noqa: BLE001
        return f"HF's own config class fails on its defaults ({type(err).__name__})"
    missing = [k for k in ("vocab_size", "num_hidden_layers", "rope_parameters") if getattr(text, k, None) is None]
    return f"not a rotary text model (its text config has no {', '.join(missing)})" if missing else ""


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def compare(identified, model, folder):
    """Largest excess of |ours - HF's recorded| over the float32-angle bound, over every rotating layer."""
    from symproof.models._hf_read import PROBE_POSITIONS
    from symproof.models._check import export_model

    (path,) = export_model(model, folder, "numpy")
    spec = importlib.util.spec_from_file_location(f"census_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    T = len(PROBE_POSITIONS)

    def basis(d):  # (d, T, d): e_j at every probed position; a config may set the head width per layer
        return (np.broadcast_to(np.eye(d)[:, None, :], (d, T, d)).copy(),
                np.broadcast_to(np.array(PROBE_POSITIONS)[None], (d, T)).copy())

    worst = -np.inf
    regimes = getattr(module, "LAYER_REGIMES", None)
    for layer, maps in identified.recorded.items():
        d = maps.shape[-1]
        x, positions = basis(d)
        ours = module.apply(x, positions, regime=regimes[layer]) if regimes else module.apply(x, positions)
        theirs = np.transpose(maps, (2, 0, 1))  # (j, t, i)
        bound = (8 * np.abs(np.array(PROBE_POSITIONS, dtype=float))[None, :, None] + 8) * 2.0 ** -24 * 2
        worst = max(worst, float(np.max(np.abs(ours - theirs) - bound)))
    # M-RoPE: the maps recorded with each axis alone and with the axes mixed, as (3, rows) positions
    for layer, runs in identified.axis_runs.items():
        for rows, maps in runs:
            d = maps.shape[-1]
            x, _ = basis(d)
            axes = np.broadcast_to(np.array(rows)[:, None, :], (len(rows), d, T)).copy()
            ours = module.apply(x, axes, regime=regimes[layer]) if regimes else module.apply(x, axes)
            theirs = np.transpose(maps, (2, 0, 1))
            bound = (8 * np.abs(np.array(rows, dtype=float)).max(axis=0)[None, :, None] + 8) * 2.0 ** -24 * 2
            worst = max(worst, float(np.max(np.abs(ours - theirs) - bound)))
    return worst


def main():
    out_path = sys.argv[1]
    import transformers

    transformers.logging.set_verbosity_error()
    from symproof.models._families import FAMILIES, TEXT_CONFIGS
    from symproof import VariantFileError
    from symproof.models._hf_read import identify
    from symproof.models._config import load_model, model_from_identified

    types = sys.argv[2:] or rotary_types()
    # the budget is CPU time (SIGPROF counts the process's CPU time): a type is not refused because other
    # processes share the cores
    signal.signal(signal.SIGPROF, _alarm)
    counts = {}
    with open(out_path, "w", encoding="utf-8") as out, tempfile.TemporaryDirectory() as tmp:
        for k, model_type in enumerate(types):
            start = time.time()
            entry = {"model_type": model_type}
            signal.setitimer(signal.ITIMER_PROF, 150)
            try:
                kind = text_model(model_type)
                if kind:
                    entry.update(verdict="excluded", why=kind)
                elif model_type in FAMILIES or model_type in TEXT_CONFIGS:
                    model = load_model({"model_type": model_type})
                    entry.update(verdict="accepted", via="row", regimes=list(model.names))
                else:
                    try:
                        identified = identify({"model_type": model_type}, "<config>", model_type)
                        model = model_from_identified(identified, "<config>")
                    except Exception as err:  # noqa: BLE001 -- as read_through_transformers refuses it
                        raise VariantFileError(f"{type(err).__name__}: {str(err)[:280]}") from None
                    excess = compare(identified, model, os.path.join(tmp, str(k)))
                    entry.update(verdict="accepted" if excess <= 0 else "WRONG", via="transformers",
                                 regimes=list(model.names), excess=excess, text_type=identified.text_type)
                    if identified.axis_count:
                        entry["mrope_section"] = list(model.mrope_section)
            except Timeout:
                entry.update(verdict="refused", why="timeout (150 CPU s)")
            except Exception as err:  # noqa: BLE001 -- the census records every outcome
                entry.update(verdict="refused" if type(err).__name__ == "VariantFileError" else "error",
                             why=f"{type(err).__name__}: {str(err)[:300]}")
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            entry["seconds"] = round(time.time() - start, 1)
            counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
            out.write(json.dumps(entry) + "\n")
            out.flush()
        summary = {"types": len(types), **counts, "transformers": transformers.__version__}
        out.write(json.dumps({"summary": summary}) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
