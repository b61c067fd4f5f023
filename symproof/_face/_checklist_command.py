"""``symproof checklist PATH``: the chapter's checklist run on a transformers model built from a config
(:mod:`symproof.checklist` does the work; this is the command's reading of its arguments and its output).
"""

from __future__ import annotations

import os
import sys

from .._ground._examples import resolve_example
from ..checklist import build_from_config, checklist
from ..checklist._run import _selected
from ._answer import print_answer

__all__ = ["main_checklist"]


def main_checklist(args) -> int:
    _selected(args.only)  # a mistyped item is refused before the model is built
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # the reload item's loading bars are not the checklist's progress
    import torch

    torch.set_num_threads(1)  # the shrunk model is tiny: on shared cores, threads cost ten times what they save
    path = resolve_example(args.path)
    model = build_from_config(path, attn_implementation=args.attn)
    progress = sys.stderr if sys.stderr.isatty() else None
    source = os.path.join(path, "config.json") if os.path.isdir(path) else path
    result = checklist(model, only=args.only, progress=progress, config=source,
                       name=f"{args.path} ({model.config.model_type}, shrunk, seeded random weights)")
    print_answer(args, result.as_dict, result.summary, default=str)
    return 0 if result.passed else 1
