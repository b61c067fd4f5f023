"""How every command prints its answer: ``--json`` as one JSON object, else the table a person reads."""

from __future__ import annotations

import json
from typing import Any, Callable


def print_answer(args: Any, data: Callable[[], object], table: Callable[[], str], *,
                 default: Callable[[object], object] | None = None) -> None:
    """Print ``data()`` as indented JSON when ``args.json`` is set, else ``table()`` (only the one asked for
    is built).  ``default``: how JSON writes a value it cannot hold (``str`` for a checklist's numbers)."""
    if getattr(args, "json", False):
        print(json.dumps(data(), indent=2, default=default))
    else:
        print(table())
