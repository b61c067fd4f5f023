"""Helpers for a user's own test suite: ``assert_rope_matches`` fails a pytest test with the audit's diagnosis.

::

    from .testing import assert_rope_matches

    def test_our_rope_is_llama_3():
        assert_rope_matches("our_model/rope.py:precompute_freqs_cis", "config.json")

    def test_our_model_keeps_positions():
        assert_checklist(our_model)  # left padding, packing, KV cache, shift, reload

``target`` and ``like`` are those of :func:`symproof.audit`, and so are the
keyword arguments naming the convention (``apply=``, ``table=``, ``call=``,
``layout=``, ``dtype=``, ``seq_len=``, ``head_dim=``, ``probe_seconds=``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

    from .checklist import ChecklistResult

__all__ = ["assert_rope_matches", "assert_checklist"]


def assert_rope_matches(target, like, *, relayout_ok: bool = True, **convention):
    """Audit ``target`` against ``like``; raise ``AssertionError`` with the diagnosis unless it matches.

    ``equivalent_after_relayout`` (the same model once Wq/Wk are re-laid) passes unless ``relayout_ok`` is
    false.  Code that cannot be audited (it raises, hangs, returns NaN, no calling convention fits) fails
    too, with that one line.  Returns the :class:`~symproof.AuditResult` when it matches.
    """
    __tracebackhide__ = True  # pytest shows the user's failing line and the diagnosis, not this helper
    from ._audit import audit
    from ._ground._errors import InvalidInputError

    try:
        result = audit(target, like, **convention)
    except InvalidInputError as err:
        raise AssertionError(f"the rotary code could not be audited: {err}") from None
    if result.verdict == "equivalent" or (relayout_ok and result.verdict == "equivalent_after_relayout"):
        return result
    raise AssertionError("the rotary code is not the declared model\n" + result.summary())


def assert_checklist(model: "torch.nn.Module", **options: Any) -> "ChecklistResult":
    """Run the chapter's checklist on ``model``; raise ``AssertionError`` with every failing item's witness.

    ``model`` is a ``torch.nn.Module`` following the transformers calling convention; ``options`` are those
    of :func:`symproof.checklist` (``only=``, ``cache_factory=``).  Returns the result when no item fails.
    """
    __tracebackhide__ = True
    from .checklist import checklist

    result = checklist(model, **options)
    if result.passed:
        return result
    raise AssertionError("the model fails the checklist\n" + result.summary())
