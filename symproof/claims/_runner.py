"""Discover the chapter's claims and run their derivations."""

from __future__ import annotations

import fnmatch
import importlib
import pkgutil
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable, Iterable

from .._ground import _display
from .._ground._errors import CertificateError, InvalidInputError, SymproofError
from .._ground._text import did_you_mean
from ..checker import check_certificate
from ..prover import PROVED, REFUTED, UNKNOWN
from ._claim import Claim, Proof, registered_claims

__all__ = ["ClaimResult", "MEASURED", "verdict_label", "load_claims", "select_claims", "run_claim", "run_claims", "recheck_certificates",
           "DERIVATIONS_PACKAGE"]

#: the package whose modules hold the chapter's derivations (one per section)
DERIVATIONS_PACKAGE = "symproof._derivations"


#: the verdict shown for a measured claim whose measurements all passed: it is not a proof
MEASURED = "measured"
#: the verdict shown for a claim checked numerically at finitely many points (a variant's generated
#: kernel against its exact definition) that passed: evidence, printed with what was tested, not a proof
TESTED = "tested"


def verdict_label(status: str, kind: str) -> str:
    return kind if status == PROVED and kind in (MEASURED, TESTED) else status


@dataclass
class ClaimResult:
    claim: Claim
    status: str
    seconds: float
    proof: Proof
    reason: str = ""
    methods: tuple = ()
    witnesses: list = field(default_factory=list)
    #: proved equality steps whose certificate the independent checker re-checked and accepted
    certificates: int = 0
    #: of those re-checked, how many the checker rejected (each makes its step unknown)
    rejected: int = 0

    @property
    def id(self) -> str:
        return self.claim.id

    @property
    def verdict(self) -> str:
        """What a reader is told: *measured* (*tested*) for a passed claim whose kind is a measurement
        (a table of numbers) or a test at finitely many points, neither a proof; else the status."""
        return verdict_label(self.status, self.claim.kind)

    @property
    def method(self) -> str:
        return ", ".join(self.methods)

    @property
    def witness_text(self) -> str | None:
        return "; ".join(self.witnesses) if self.witnesses else None

    def _repr_html_(self) -> str:
        """Jupyter's view: the formula, the verdict, the witness (shown by the face, see symproof._ground._display)."""
        return _display.show(self, "html")

    def _repr_markdown_(self) -> str:
        return _display.show(self, "markdown")

    def __repr__(self) -> str:
        """One line (the claim, the proof and the witnesses are attributes)."""
        detail = f" ({self.method})" if self.method else ""
        if self.witness_text and self.status != "proved":
            detail += f", witness {self.witness_text}"
        text = " ".join(f"<ClaimResult {self.id}: {self.verdict}{detail}>".split())
        return text if len(text) <= 200 else text[:196] + "...>"

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "section": self.claim.section,
            "kind": self.claim.kind,
            "verdict": self.status,
            "method": self.method,
            "seconds": round(self.seconds, 4),
            "witness": self.witness_text,
            "reason": self.reason or None,
            "steps": len(self.proof.parts),
            "certificates": {"checked": self.certificates + self.rejected, "accepted": self.certificates},
        }


def load_claims(package: str = DERIVATIONS_PACKAGE) -> dict:
    """Import every module of ``package`` (which registers its claims); return them by ID."""
    root = importlib.import_module(package)
    for info in pkgutil.iter_modules(root.__path__):
        if not info.ispkg and not info.name.startswith("_"):
            importlib.import_module(f"{package}.{info.name}")
    claims = dict(sorted(registered_claims().items(), key=lambda kv: _order(kv[1])))
    for c in claims.values():
        unknown = [u for u in c.uses if u not in claims]
        if unknown:
            raise InvalidInputError(f"claim {c.id!r} ({c.module}): uses names no registered claim: "
                                    f"{', '.join(unknown)}")
    return claims


def _order(claim: Claim):
    return (tuple(int(x) for x in claim.section.split(".") if x.isdigit()), claim.module, _position(claim))


def _position(claim: Claim) -> int:
    code = getattr(claim.derive, "__code__", None)
    return code.co_firstlineno if code else 0


def select_claims(claims: dict, patterns: Iterable[str] | None) -> list:
    """Claims whose ID matches any pattern (exact ID or glob); all claims when none is given."""
    patterns = list(patterns or [])
    if not patterns:
        return list(claims.values())
    chosen, seen = [], set()
    for pattern in patterns:
        matches = [c for cid, c in claims.items() if fnmatch.fnmatchcase(cid, pattern)]
        if not matches:
            raise InvalidInputError(
                f"no claim matches {pattern!r}; known IDs start with "
                f"{sorted({cid.split('.')[0] + '.*' for cid in claims})}{did_you_mean(pattern, claims)}",
                pattern=pattern,
            )
        for c in matches:
            if c.id not in seen:
                seen.add(c.id)
                chosen.append(c)
    return chosen


def run_claim(claim: Claim) -> ClaimResult:
    """Run one derivation and turn its parts into a verdict."""
    proof = Proof(claim)
    start = time.perf_counter()
    error = ""
    try:
        claim.derive(proof)
    except SymproofError as err:
        error = f"{type(err).__name__}: {err.with_context(claim=claim.id)}"
    except Exception as err:  # a bug in a derivation must show up as a verdict, not a crash
        frame = traceback.extract_tb(err.__traceback__)[-1]
        error = f"{type(err).__name__} in {frame.filename}:{frame.lineno}: {err}"
    accepted, rejected = recheck_certificates(proof)
    seconds = time.perf_counter() - start
    status, reason = _verdict(proof, error)
    methods = tuple(dict.fromkeys(p.method.split(" (")[0] for p in proof.parts if p.method))
    witnesses = [p.witness_text for p in proof.parts if p.witness is not None]
    return ClaimResult(claim, status, seconds, proof, reason, methods, witnesses, accepted, rejected)


def recheck_certificates(proof: Proof):
    """Re-check the certificate of every proved equality step with the independent checker.

    A step whose certificate is missing or rejected is not proved: it becomes unknown
    and says why.  Returns ``(accepted, rejected)``.
    """
    accepted = rejected = 0
    for part in proof.parts:
        if part.kind != "equal" or part.status != PROVED:
            continue
        certificate = getattr(part.verdict, "certificate", None)
        try:
            if certificate is None:
                raise CertificateError("the proof carries no certificate")
            check_certificate(certificate)
        except CertificateError as err:
            rejected += 1
            part.status = UNKNOWN
            part.detail = f"certificate rejected by the checker: {err}"
            continue
        accepted += 1
    return accepted, rejected


def _verdict(proof: Proof, error: str):
    if error:
        return UNKNOWN, error
    if not proof.parts:
        return UNKNOWN, "the derivation recorded no checked step"
    refuted = [p for p in proof.parts if p.status == REFUTED]
    if refuted:
        first = refuted[0]
        return REFUTED, f"step '{first.rule}' is false" + (f": {first.detail}" if first.detail else "")
    open_parts = [p for p in proof.parts if p.status != PROVED]
    if open_parts:
        first = open_parts[0]
        return UNKNOWN, f"step '{first.rule}' is not decided" + (f": {first.detail}" if first.detail else "")
    unclosed = [c for c in proof.chains if not c.closed]
    if unclosed:
        return UNKNOWN, f"chain {unclosed[0].label or unclosed[0].index} stops before reaching its right-hand side"
    return PROVED, ""


def run_claims(claims: Iterable[Claim], progress: Callable[[int, int, Claim], None] | None = None) -> list:
    claims = list(claims)
    results = []
    for k, c in enumerate(claims):
        if progress:
            progress(k, len(claims), c)
        results.append(run_claim(c))
    return results
