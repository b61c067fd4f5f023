"""A declared model whose position transform reads a ``[params]`` table is audited, not crashed on.

The audit evaluates the model's transform in NumPy; a table read must be evaluated as the kernels read it
(checked), with or without a declared range of positions.  Each row: the model's position lines, the
implementation's table, the verdict.
"""

from __future__ import annotations

import pytest

from symproof import audit
from symproof._audit import load_function

TABLE = list(range(0, 32, 2))  # P(k) = 2k: a learned-looking table of 16 positions

MODEL = """\
name = "ptable"
kind = "rotary"
width = 4
pairing = "adjacent"
{positions}
[params]
P = {table}
[frequencies]
rule = "geometric"
base = 10000
[position]
transform = "{transform}"
"""

IMPLEMENTATION = """\
import numpy as np

TABLE = np.array({table}, dtype=np.float64)


def rope(x, positions, base=10000.0):
    d = x.shape[-1]
    inv = base ** (-np.arange(0, d, 2) / d)
    index = np.clip(np.asarray(positions), 0, len(TABLE) - 1)
    ang = TABLE[index][:, None] * inv[None, :]
    c, s = np.cos(ang), np.sin(ang)
    out = x.copy()
    out[..., 0::2] = x[..., 0::2] * c - x[..., 1::2] * s
    out[..., 1::2] = x[..., 0::2] * s + x[..., 1::2] * c
    return out
"""

CASES = [
    # (id, positions line, transform, the implementation's table, verdict)
    ("range, same table", 'positions = "0..15"', "P(m)", TABLE, "equivalent"),
    ("range, another table", 'positions = "0..15"', "P(m)", [t + (k == 5) for k, t in enumerate(TABLE)],
     "differs"),
    ("clip, same table", "", "P(clip(m, 0, 15))", TABLE, "equivalent"),
    ("clip, another table", "", "P(clip(m, 0, 15))", TABLE[::-1], "differs"),
]


@pytest.mark.parametrize(("positions", "transform", "table", "verdict"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_a_table_in_the_transform_is_audited(tmp_path, positions, transform, table, verdict):
    model = tmp_path / "ptable.toml"
    model.write_text(MODEL.format(positions=positions, table=TABLE, transform=transform), encoding="utf-8")
    code = tmp_path / "my_rope.py"
    code.write_text(IMPLEMENTATION.format(table=list(table)), encoding="utf-8")
    result = audit(load_function(f"{code}:rope"), str(model), name="my_rope.py:rope")
    assert result.verdict == verdict, result.summary()
