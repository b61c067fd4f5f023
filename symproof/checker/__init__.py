"""The independent checker: re-checks the certificates the prover attaches to its proofs.

Nothing here imports the prover's tactics (see :mod:`._check` for the trusted base).
"""

from ._certificate import KINDS, Certificate
from ._check import certificate_holds, check_certificate
from ._interval import certainly_finite, certainly_nonzero, enclose

__all__ = ["Certificate", "KINDS", "check_certificate", "certificate_holds",
           "certainly_finite", "certainly_nonzero", "enclose"]
