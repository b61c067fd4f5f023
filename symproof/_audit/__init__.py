"""Audit a user's own RoPE implementation against a declared model.

``audit(fn, like)`` probes ``fn(x, positions)`` with basis vectors and says
whether it is the declared rotary map (``equivalent``), the same map once the
query/key weights are re-laid (``equivalent_after_relayout``), or what differs
(``differs``, each difference named with a minimal input).  The command
``symproof audit FILE.py:FUNCTION --like VARIANT.toml|CONFIG.json`` is
:mod:`symproof._face._audit_command`.  The package is private: the
public names are ``symproof.audit`` and ``symproof.AuditResult``.
"""

from ._audit import MAX_AUDIT_WIDTH, POSITIONS, VERDICTS, AuditResult, audit
from ._diagnose import WHATS, Difference
from ._load import load_function, load_like

__all__ = ["audit", "AuditResult", "Difference", "VERDICTS", "WHATS", "POSITIONS", "MAX_AUDIT_WIDTH",
           "load_function", "load_like"]
