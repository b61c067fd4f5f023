"""Describe a new position scheme in a short file; symproof says which properties it keeps.

``load_variant(path)`` reads a TOML description into a :class:`Variant`;
``check_variant(variant)`` proves or refutes each property that applies, one
``ClaimResult`` per property.  Model configs are :mod:`symproof.models`; the
command ``symproof check`` is :mod:`symproof._face._check_command`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

#: public name -> the private module defining it, imported on first use (PEP 562): reading a file, or
#: refusing it, does not pay for the checker, the prover and the kernels
_LAZY = {
    **dict.fromkeys(("DEFAULT_STEPS", "PROPERTY_TITLES", "Property", "check_variant", "properties_of"), "_check"),
    **dict.fromkeys(("FUNCTIONS", "Formula", "clip", "parse_formula", "ramp"), "_formula"),
    **dict.fromkeys(("VariantKernel", "build_kernel"), "_kernel"),
    **dict.fromkeys(("results_as_dict", "shipped_variants"), "_results"),
    **dict.fromkeys(("KINDS", "Variant", "load_variant", "parse_variant"), "_spec"),
    **dict.fromkeys(("LayerPattern", "load_layers", "parse_layers", "check_layers"), "_layers"),
}

__all__ = [
    "Variant", "load_variant", "parse_variant", "KINDS",
    "check_variant", "DEFAULT_STEPS", "properties_of", "Property", "PROPERTY_TITLES",
    "Formula", "parse_formula", "FUNCTIONS", "clip", "ramp",
    "VariantKernel", "build_kernel",
    "results_as_dict", "shipped_variants",
    "LayerPattern", "load_layers", "parse_layers", "check_layers",
]

if TYPE_CHECKING:  # what type checkers and editors see; at run time the names load lazily
    from ._check import DEFAULT_STEPS, PROPERTY_TITLES, Property, check_variant, properties_of
    from ._formula import FUNCTIONS, Formula, clip, parse_formula, ramp
    from ._kernel import VariantKernel, build_kernel
    from ._results import results_as_dict, shipped_variants
    from ._spec import KINDS, Variant, load_variant, parse_variant
    from ._layers import LayerPattern, check_layers, load_layers, parse_layers

#: names that lived here until 0.1 and moved up (model configs are their own package now): still found
#: here, with a DeprecationWarning, until 0.3 (``symproof.load_model`` is the public name)
_MOVED = {"load_model": "symproof.models", "load_model_config": "symproof.models"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys
    import warnings

    warnings.warn(f"symproof.variants.{name} moved to {_MOVED[name]}.{name}; the old name goes in 0.3",
                  DeprecationWarning, stacklevel=2)
    # the package that holds the name now is above this one: it is reached through the modules
    # already imported (``import symproof`` always ran), never imported from here
    root = sys.modules[__name__.rpartition(".")[0]]
    return getattr(root, name)



def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
