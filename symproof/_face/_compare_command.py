"""``symproof compare A B``: whether two rotary maps (variant files, model configs, shipped examples) are
the same function; the verdict and its evidence come from :mod:`symproof.variants._compare`.

Exit codes: ``0`` -- decided (``equal``, or ``differ`` with its witness); ``1`` -- ``unknown``;
``2`` -- an input that cannot be read (the error names it).
"""

from __future__ import annotations


from .._ground._errors import InvalidInputError
from .._ground._examples import resolve_example
from .._ground._text import one_line
from ..models import load_model
from ..models._json import is_model_config
from ..variants._compare import compare_variants
from ..variants._spec import load_variant
from ._answer import print_answer

__all__ = ["main_compare", "load_rotary_map"]


def load_rotary_map(argument: str):
    """The variant a file, a config or an example name describes (a config: its one rotary map)."""
    path = resolve_example(argument)
    if not is_model_config(path):
        return load_variant(path)
    model = load_model(path)
    if not model.plain:
        raise InvalidInputError(f"{argument}: the model has {len(model.regimes)} regime(s), an offset, a permuted "
                                "output or M-RoPE sections; compare reads a model whose layers all apply one "
                                "rotary map to the whole head")
    return model.regimes[0].checked  # the scores: a query scale its attention applies (Ministral 3) included


def main_compare(args) -> int:
    left, right = (load_rotary_map(name) for name in (args.left, args.right))
    comparison = compare_variants(left, right)
    print_answer(args, comparison.as_dict,
                 lambda: "\n".join(one_line(line) for line in comparison.summary().splitlines()))
    return comparison.exit_code
