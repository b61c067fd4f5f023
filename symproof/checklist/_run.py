"""Run the checklist on a model, and ``symproof checklist PATH``.

Exit codes (those of ``symproof verify``): ``0`` every item holds or does not apply, ``1`` an item fails (its
witness says where), ``2`` the input is invalid (not a config or checkpoint, not a module).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import torch

from .._ground._errors import InvalidInputError, SymproofError
from .._ground._text import did_you_mean, one_line
from ._configured import configured_map
from ._items import FAILS, ITEMS as _RUNS

#: every item, in the chapter's order: the name is the key of ``only=``, ``--only`` and the JSON
ITEMS = {**_RUNS, "configured_map": configured_map}
from ._model import ModelUnderTest

__all__ = ["checklist", "ChecklistResult", "ITEMS"]


@dataclass
class ChecklistResult:
    model: str
    dtype: str
    attn_implementation: str | None
    items: list
    seconds: float
    notes: tuple = ()

    @property
    def passed(self) -> bool:
        return not any(item.status == FAILS for item in self.items)

    def as_dict(self) -> dict:
        return {"model": self.model, "dtype": self.dtype, "attn_implementation": self.attn_implementation,
                "notes": list(self.notes), "passed": self.passed, "seconds": round(self.seconds, 2),
                "items": [item.as_dict() for item in self.items]}

    def summary(self) -> str:
        lines = [f"checklist of {self.model} ({self.dtype}, attention {self.attn_implementation or 'not stated'}):"]
        lines.extend(f"  note: {one_line(note)}" for note in self.notes)
        width = max(len(item.name) for item in self.items) if self.items else 0
        for item in self.items:
            lines.append(f"  {item.name:<{width}}  {item.status:<14}  {one_line(item.summary)}")
            if item.witness:
                lines.extend(f"  {'':<{width}}    {key}: {one_line(value)}" for key, value in item.witness.items())
            if item.tolerance:
                lines.append(f"  {'':<{width}}    tolerance: {one_line(item.tolerance)}")
            lines.extend(f"  {'':<{width}}    note: {one_line(note)}" for note in item.notes)
        lines.append(f"{sum(i.status == FAILS for i in self.items)} of {len(self.items)} items fail "
                     f"({self.seconds:.1f} s)")
        return "\n".join(lines)


def _selected(only) -> list:
    if not only:
        return list(ITEMS)
    unknown = [name for name in only if name not in ITEMS]
    if unknown:
        raise InvalidInputError(f"unknown checklist item {unknown[0]!r}{did_you_mean(unknown[0], ITEMS)} "
                                f"(expected some of: {', '.join(ITEMS)})")
    return list(only)


def checklist(model: "torch.nn.Module", *, only: "Sequence[str] | None" = None,
              cache_factory: "Callable[[], object] | None" = None, config: "str | Mapping | None" = None,
              progress: "TextIO | None" = None, name: str | None = None) -> ChecklistResult:
    """Run the checklist on ``model``, a ``torch.nn.Module`` following the transformers calling convention.

    ``only`` selects items by name (:data:`ITEMS`); ``cache_factory()`` makes the cache of the KV-cache item
    (default: transformers' ``DynamicCache``); ``config`` is the config.json (path or dict) whose rotary map the
    attention layers must receive (default: ``model.config``); ``progress`` is a stream told each item as it
    starts.
    """
    names = _selected(only)
    under_test = ModelUnderTest(model, cache_factory=cache_factory, config_source=config)
    started = time.perf_counter()
    items = []
    for index, item_name in enumerate(names):
        if progress is not None:
            print(f"\r[{index + 1}/{len(names)}] {item_name}...".ljust(40), end="", file=progress, flush=True)
        item_started = time.perf_counter()
        try:
            items.append(ITEMS[item_name](under_test))
            items[-1].seconds = time.perf_counter() - item_started
        except SymproofError:
            raise
        except Exception as err:  # noqa: BLE001 -- the model's own failure, said in one line
            raise InvalidInputError(f"the model raised {type(err).__name__} during the {item_name} item: "
                                    f"{one_line(str(err))[:300]}") from None
    if progress is not None:
        print("\r".ljust(41) + "\r", end="", file=progress, flush=True)
    notes = tuple(n for n in (getattr(model, "symproof_build_note", ""),) if n)
    return ChecklistResult(name or type(model).__name__, str(under_test.dtype).replace("torch.", ""),
                           under_test.attn_implementation, items, time.perf_counter() - started, notes)


