"""Audit a user's own RoPE implementation against a declared model.

``audit(fn, like)`` probes ``fn(x, positions)`` with basis vectors and says
whether it is the declared rotary map (``equivalent``), the same map once the
query/key weights are re-laid (``equivalent_after_relayout``), or what differs
(``differs``, each difference named with a minimal input).  ``main_audit`` is
``symproof audit FILE.py:FUNCTION --like VARIANT.toml|CONFIG.json``.  The package is private: the
public names are ``symproof.audit`` and ``symproof.AuditResult``.
"""

from ._audit import MAX_AUDIT_WIDTH, POSITIONS, VERDICTS, AuditResult, audit
from ._diagnose import WHATS, Difference
from ._load import load_function, load_like
from ._main import main_audit

__all__ = ["audit", "AuditResult", "Difference", "VERDICTS", "WHATS", "POSITIONS", "MAX_AUDIT_WIDTH",
           "load_function", "load_like", "main_audit"]
