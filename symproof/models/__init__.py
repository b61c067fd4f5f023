"""Model configs: a checkpoint's ``config.json`` read as the rotary maps its layers apply.

``load_model(path)`` gives every rotary regime of the model, the layers using
each and the layout of a head (a row of the family table, or a map identified
by running transformers' own attention code on a shrunk model);
``load_model_config(path)`` gives the one :class:`~symproof.variants.Variant`
of a model whose layers all rotate alike.  ``check_model`` proves each regime
with the variant checker, ``scan`` checks many configs, one line each.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: public name -> the private module defining it, imported on first use (PEP 562): telling a config
#: from a variant file (``._json``) does not pay for the family table and the checker
_LAZY = {
    **dict.fromkeys(("check_model", "export_model", "format_model", "model_as_dict", "model_exit_code"), "_check"),
    **dict.fromkeys(("load_model", "load_model_config"), "_config"),
    **dict.fromkeys(("ModelRope", "Regime"), "_model"),
    "scan": "_scan",
}

__all__ = ["load_model", "load_model_config", "ModelRope", "Regime", "check_model", "format_model",
           "model_as_dict", "model_exit_code", "export_model", "scan"]

if TYPE_CHECKING:  # what type checkers and editors see; at run time the names load lazily
    from ._check import check_model, export_model, format_model, model_as_dict, model_exit_code
    from ._config import load_model, load_model_config
    from ._model import ModelRope, Regime
    from ._scan import scan


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
