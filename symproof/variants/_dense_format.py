"""Reading a ``kind = "dense"`` file (LieRE, STRING; the properties are in :mod:`._dense`): ``width``,
``[position] axes`` and ``[dense] generator`` / ``generators`` into exact sympy matrices."""

from __future__ import annotations

from typing import Mapping

import sympy as sp

from ._format import MAX_AXES, _IDENT

__all__ = ["parse_dense", "generators_text", "MAX_DENSE_WIDTH"]

#: the widest generator accepted: the exact checks and enclosures multiply width x width rational matrices
MAX_DENSE_WIDTH = 32
#: the position keys a dense file may use (no transform, axis, relative position)
_POSITION_KEYS = ("axes",)


def parse_dense(reader, data: Mapping, fields: dict) -> None:
    """Read ``width``, ``[position] axes`` and ``[dense]`` into ``fields`` (``generators``, ``axes``, ``width``)."""
    for key in ("pairing", "rotated_width"):
        if key in data:
            raise reader.fail(key, "does not apply to kind = 'dense' (the generator acts on the whole head)")
    position = data.get("position", {})
    for key in position:
        if key not in _POSITION_KEYS:
            raise reader.fail(f"position.{key}", "does not apply to kind = 'dense': the rotation is exp(sum_a m_a A_a) "
                                                 "of the positions themselves (scale a generator instead of the position)")
    axes = position.get("axes", ["m"])
    if not axes or len(axes) > MAX_AXES or not all(isinstance(a, str) and _IDENT.match(a) for a in axes):
        raise reader.fail("position.axes", f"expected 1 to {MAX_AXES} coordinate names, got {axes!r}")
    if len(set(axes)) != len(axes):
        raise reader.fail("position.axes", f"names must differ, got {axes!r}")
    table = data.get("dense", {})
    if ("generator" in table) == ("generators" in table):
        raise reader.fail("dense.generator", "state exactly one of dense.generator (one axis: a square matrix) and "
                                             "dense.generators (one matrix per position axis, in the order of "
                                             "position.axes)")
    if "generator" in table:
        if len(axes) > 1:
            raise reader.fail("dense.generator", f"with {len(axes)} position axes write dense.generators, one matrix "
                                                 "per axis")
        matrices, key = [table["generator"]], "dense.generator"
    else:
        matrices, key = table["generators"], "dense.generators"
        if len(matrices) != len(axes):
            raise reader.fail(key, f"expected one matrix per position axis ({len(axes)}: {list(axes)}), "
                                   f"got {len(matrices)}")
    if "width" not in data:
        raise reader.fail("width", "is required for kind = 'dense' (the generator is width x width)")
    width = data["width"]
    if not 1 <= width <= MAX_DENSE_WIDTH:
        raise reader.fail("width", f"expected an integer between 1 and {MAX_DENSE_WIDTH} for kind = 'dense', "
                                   f"got {width}")
    generators = []
    for a, rows in enumerate(matrices):
        where = key if key == "dense.generator" else f"{key}[{a}]"
        generators.append(_matrix(reader, where, rows, width, fields["params"]))
    fields.update(width=width, axes=tuple(axes), generators=tuple(generators))


def _matrix(reader, key: str, rows, width: int, params) -> sp.ImmutableMatrix:
    if not (isinstance(rows, list) and len(rows) == width
            and all(isinstance(row, list) and len(row) == width for row in rows)):
        raise reader.fail(key, f"expected a {width} x {width} matrix (width = {width}): {width} rows of {width} "
                               "numbers or formula strings")
    entries = []
    for a, row in enumerate(rows):
        for b, value in enumerate(row):
            where = f"{key}[{a}][{b}]"
            formula = reader.formula(value, where, set(params))
            number = formula.build(dict(params))
            if not (number.is_number and number.is_extended_real is True and number.is_finite is True):
                raise reader.fail(where, f"expected a finite real number, got {number}")
            entries.append(number)
    return sp.ImmutableMatrix(width, width, entries)


def generators_text(variant) -> list:
    """The generators as rows of text (for ``describe`` and the kernel header)."""
    return [[[str(x) for x in g.row(a)] for a in range(g.rows)] for g in variant.generators]
