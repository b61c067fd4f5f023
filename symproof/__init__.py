"""symproof: machine-checked mathematics of position in transformers.

The public surface is re-exported here; everything else lives in private
modules and may change.

Importing the package loads nothing but this file and two small ones (the version and the
notebook-display registry, :mod:`symproof._ground._display`): every public name, and every
public submodule, is imported on first use (PEP 562), so that ``import symproof``
costs no more than ``import sympy`` does later, and ``symproof --version`` needs
neither.  Importing symproof never touches signals, the environment or the
working folder; the command line's Ctrl-C handling lives in ``symproof._face._cli``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._ground import _display
from ._ground._version import __version__  # the one place the version is written: symproof/_ground/_version.py


def _notebook_view(result: object, format: str) -> str:
    """Results show in Jupyter through the face's printers (registered here, since every import of a
    symproof module imports this package first; the prover never imports the face)."""
    from ._face._notebook import render

    return render(result, format)


_display.register(_notebook_view)

#: public name -> the submodule defining it, imported on first use
_LAZY = {
    **dict.fromkeys(("CertificateError", "InvalidInputError", "MaskedRowError", "PositionOutOfRangeError",
                     "SymproofError", "UndefinedExpressionError", "VariantFileError"), "_ground._errors"),
    **dict.fromkeys(("Certificate", "check_certificate"), "checker"),
    **dict.fromkeys(("Claim", "ClaimResult", "Proof", "claim", "load_claims", "run_claim", "run_claims",
                     "select_claims"), "claims"),
    **dict.fromkeys(("frequencies", "frequency", "pairing_permutation", "relayout_pairing", "rope_matrix",
                     "rotation", "sin_shift", "sin_shift_matrix", "sinusoidal_vector"), "encodings"),
    **dict.fromkeys(("RopeConfig", "export_kernel", "load_config", "rope_apply", "save_config",
                     "sinusoidal_table"), "kernels"),
    **dict.fromkeys(("Step", "Verdict", "find_witness", "prove_equal"), "prover"),
    **dict.fromkeys(("Variant", "check_variant", "load_variant"), "variants"),
    **dict.fromkeys(("load_model", "load_model_config"), "models"),
    **dict.fromkeys(("AuditResult", "audit"), "_audit"),
    "TimeLimitExceeded": "_ground._budget",
    "checklist": "checklist",
    **dict.fromkeys(("verify", "VerifyResult", "check", "CheckResult", "export", "ExportResult"), "_face._api"),
}

#: public submodules, also reachable as attributes without importing them first (``symproof.claims``)
_SUBMODULES = frozenset({"checker", "claims", "encodings", "kernels", "models", "prover", "report", "testing",
                         "variants"})

if TYPE_CHECKING:  # what type checkers and editors see; at run time the names load lazily
    from . import checker, claims, encodings, kernels, models, prover, report, testing, variants
    from ._face._api import CheckResult, ExportResult, VerifyResult, check, export, verify
    from ._audit import AuditResult, audit
    from ._ground._budget import TimeLimitExceeded
    from ._ground._errors import (
        CertificateError, InvalidInputError, MaskedRowError, PositionOutOfRangeError, SymproofError,
        UndefinedExpressionError, VariantFileError,
    )
    from .checker import Certificate, check_certificate
    from .claims import Claim, ClaimResult, Proof, claim, load_claims, run_claim, run_claims, select_claims
    from .encodings import (
        frequencies, frequency, pairing_permutation, relayout_pairing, rope_matrix, rotation, sin_shift,
        sin_shift_matrix, sinusoidal_vector,
    )
    from .kernels import RopeConfig, export_kernel, load_config, rope_apply, save_config, sinusoidal_table
    from .prover import Step, Verdict, find_witness, prove_equal
    from .models import load_model, load_model_config
    from .variants import Variant, check_variant, load_variant


def __getattr__(name: str) -> Any:
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)  # the import system binds it as an attribute
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'symproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)


__all__ = [
    "verify", "VerifyResult", "check", "CheckResult", "export", "ExportResult",
    "SymproofError", "InvalidInputError", "UndefinedExpressionError", "PositionOutOfRangeError",
    "MaskedRowError", "VariantFileError", "CertificateError", "TimeLimitExceeded",
    "prove_equal", "Verdict", "Step", "find_witness", "Certificate", "check_certificate",
    "claim", "Claim", "Proof", "ClaimResult", "load_claims", "select_claims", "run_claim", "run_claims",
    "rotation", "sin_shift", "rope_matrix", "sin_shift_matrix", "sinusoidal_vector", "frequencies",
    "frequency", "pairing_permutation", "relayout_pairing",
    "RopeConfig", "save_config", "load_config", "rope_apply", "sinusoidal_table", "export_kernel",
    "Variant", "load_variant", "check_variant", "load_model_config", "load_model",
    "audit", "AuditResult",
]
