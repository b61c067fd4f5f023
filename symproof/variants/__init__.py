"""Describe a new position scheme in a short file; symproof says which properties it keeps.

``load_variant(path)`` reads a TOML description into a :class:`Variant`;
``load_model_config(path)`` reads a checkpoint's ``config.json`` into one (``load_model(path)``: every
rotary regime of the model, the layers using each, the layout of a head);
``check_variant(variant)`` proves or refutes each property that applies, one
``ClaimResult`` per property; ``main_check(args)`` is ``symproof check``.
"""

from ._check import DEFAULT_STEPS, PROPERTY_TITLES, Property, check_variant, properties_of
from ._formula import FUNCTIONS, Formula, clip, parse_formula, ramp
from ._kernel import VariantKernel, build_kernel
from ._main import main_check, results_as_dict, shipped_variants
from ._model_config import load_model, load_model_config
from ._spec import KINDS, Variant, load_variant, parse_variant

__all__ = [
    "Variant", "load_variant", "parse_variant", "KINDS",
    "check_variant", "DEFAULT_STEPS", "properties_of", "Property", "PROPERTY_TITLES",
    "Formula", "parse_formula", "FUNCTIONS", "clip", "ramp",
    "VariantKernel", "build_kernel",
    "main_check", "results_as_dict", "shipped_variants", "load_model_config",
    "load_model",
]
