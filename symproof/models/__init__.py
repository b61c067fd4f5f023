"""Model configs: a checkpoint's ``config.json`` read as the rotary maps its layers apply.

``load_model(path)`` gives every rotary regime of the model, the layers using
each and the layout of a head (a row of the family table, or a map identified
by running transformers' own attention code on a shrunk model);
``load_model_config(path)`` gives the one :class:`~symproof.variants.Variant`
of a model whose layers all rotate alike.  ``check_model`` proves each regime
with the variant checker, ``scan`` checks many configs, one line each.
"""

from ._check import check_model, export_model, format_model, model_as_dict, model_exit_code
from ._config import load_model, load_model_config
from ._model import ModelRope, Regime
from ._scan import scan

__all__ = ["load_model", "load_model_config", "ModelRope", "Regime", "check_model", "format_model",
           "model_as_dict", "model_exit_code", "export_model", "scan"]
