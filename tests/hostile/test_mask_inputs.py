"""Hostile ``[mask] allowed`` conditions: refused at load in one line, never run, never echoed as code.

A mask condition is parsed as data (comparisons of whitelisted formulas joined by and/or/not); every row
below is code, a construct outside that grammar, or an input meant to cost unbounded time, and must end
``symproof check`` with exit 2 and one line naming the key.  An accepted condition reaches the exported
files only as printed SymPy and as a quoted string (Python) or a comment without ``*/`` (C).
"""

from __future__ import annotations

import ast

import pytest

from symproof.variants import Variant
from symproof.variants._export import variant_source

from .conftest import assert_one_line_error, symproof

HOSTILE = {
    "import": "__import__('os').system('touch PWNED') == 0",
    "attribute": "i.real <= j",
    "lambda": "(lambda: 1)() == 1",
    "subscript": "[i][0] <= j",
    "conditional expression": "(i if j else 0) < 1",
    "walrus": "(x := i) <= j",
    "string": "'a' < 'b'",
    "comment": "j <= i # and everything",
    "non-ascii": "j \u2264 i",
    "newline": "j <= i\nimport os",
    "huge literal": "j <= i + 1e400",
    "huge power": "j <= i + 10**10**10",
    "deep nesting": "(" * 200 + "j <= i" + ")" * 200,
    "too long": " and ".join(["j <= i"] * 80),
    "generator": "all(x < 1 for x in [i])",
    "is": "j is i",
    "in": "j in [i]",
    "bitwise or": "(j <= i) | (j < 2)",
    "star": "j <= *i",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_conditions_are_refused_in_one_line(name, tmp_path):
    path = tmp_path / "masked.toml"
    condition = HOSTILE[name]
    escaped = condition.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    path.write_text('name = "masked"\nkind = "bias"\n[bias]\nformula = "-abs(j - i)"\nheads = 1\nslope = "1"\n'
                    f'[mask]\nallowed = "{escaped}"\n', encoding="utf-8")
    done = symproof("check", path, cwd=tmp_path)
    assert_one_line_error(done, "mask.allowed")
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("target", ["numpy", "torch", "c"])
def test_an_accepted_condition_reaches_the_files_as_data(target):
    variant = Variant.from_dict({"name": "masked", "kind": "rotary", "width": 4, "pairing": "half",
                                 "frequencies": {"base": 100}, "params": {"W": 3},
                                 "mask": {"allowed": "j <= i and not (i - j >= W) or j*1 < 1"}})
    text = next(iter(variant_source(variant, target).values()))
    if target == "c":
        comment = next(line for line in text.splitlines() if "[mask] allowed" in line)
        assert comment.count("*/") == 1 and comment.endswith("*/")
        return
    tree = ast.parse(text)
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"mask_at", "mask_bias"} <= functions and "MASK" in assigned
    mask = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(t, "id", "") == "MASK" for t in node.targets))
    assert mask == variant.mask.text
