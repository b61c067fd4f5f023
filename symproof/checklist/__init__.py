"""The chapter's checklist (7.5) run on a real model: left padding, packing, KV cache, shift, reload, map.

``symproof.checklist(model)`` runs it on a ``torch.nn.Module`` following the transformers calling convention;
``symproof checklist PATH`` builds a transformers model from a ``config.json`` (or a checkpoint folder's) with
small seeded random weights and runs it.  Each item holds, fails with a minimal witness, or does not apply.
"""

import sys as _sys
import types as _types

from ._items import FAILS, HOLDS, NOT_APPLICABLE, Item
from ._model import ModelUnderTest, build_from_config
from ._run import ITEMS, ChecklistResult, checklist

__all__ = ["checklist", "ChecklistResult", "Item", "ITEMS", "HOLDS", "FAILS", "NOT_APPLICABLE",
           "ModelUnderTest", "build_from_config"]


class _CallableModule(_types.ModuleType):
    """``symproof.checklist(model)`` works whether the name is the function or, once imported, this package."""

    def __call__(self, model, **options):
        return checklist(model, **options)


_sys.modules[__name__].__class__ = _CallableModule
