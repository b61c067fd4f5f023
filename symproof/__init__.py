"""symproof: machine-checked mathematics of position in transformers.

The public surface is re-exported here; everything else lives in private
modules and may change.
"""

__version__ = "0.1.0"  # first, so that submodules can name the version in what they write

from ._interrupt import quiet_interrupt_while_starting

quiet_interrupt_while_starting()  # the command line only: Ctrl-C while SymPy loads is one line, exit 130

from ._errors import (
    CertificateError, InvalidInputError, MaskedRowError, PositionOutOfRangeError, SymproofError,
    UndefinedExpressionError, VariantFileError,
)
from .checker import Certificate, check_certificate
from .claims import Claim, ClaimResult, Proof, claim, load_claims, run_claim, run_claims, select_claims
from .encodings import (
    frequencies, frequency, pairing_permutation, rope_matrix, rotation, sin_shift, sin_shift_matrix,
    sinusoidal_vector,
)
from .encodings import relayout_pairing
from .kernels import RopeConfig, export_kernel, load_config, rope_apply, save_config, sinusoidal_table
from .prover import Step, Verdict, find_witness, prove_equal

# Loaded on first use (PEP 562): `symproof verify` and `symproof report` need neither the variant
# reader nor the auditor, and importing them is about a tenth of a cold command's start.
_LAZY = {
    "Variant": "variants", "check_variant": "variants", "load_model_config": "variants", "load_model": "variants",
    "load_variant": "variants", "AuditResult": "_audit", "audit": "_audit",
    "checklist": "checklist",
}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'symproof' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "SymproofError", "InvalidInputError", "UndefinedExpressionError", "PositionOutOfRangeError",
    "MaskedRowError", "VariantFileError", "CertificateError",
    "prove_equal", "Verdict", "Step", "find_witness", "Certificate", "check_certificate",
    "claim", "Claim", "Proof", "ClaimResult", "load_claims", "select_claims", "run_claim", "run_claims",
    "rotation", "sin_shift", "rope_matrix", "sin_shift_matrix", "sinusoidal_vector", "frequencies",
    "frequency", "pairing_permutation", "relayout_pairing",
    "RopeConfig", "save_config", "load_config", "rope_apply", "sinusoidal_table", "export_kernel",
    "Variant", "load_variant", "check_variant", "load_model_config", "load_model",
    "audit", "AuditResult",
]
