"""rope_matrix / sin_shift_matrix build wide matrices from one evaluated block.

The renamed blocks must be the very expressions block-by-block evaluation gives
(same classes, same argument order, same hash), whatever the angle looks like,
and the shortcut must step aside whenever renaming could change what SymPy does.
"""

import pytest
import sympy as sp
from sympy import BlockDiagMatrix, MatMul, Transpose

from symproof import prove_equal, rope_matrix, rotation, sin_shift, sin_shift_matrix

i, j, c = sp.symbols("i j c", integer=True)
t = sp.Symbol("t", real=True)
ws = sp.symbols("w0:24", positive=True)
m_symbol = sp.Symbol("m", integer=True)
k = sp.Symbol("k", positive=True)  # the assumptions of the frequencies: compared with them by name


def evaluated(block, m, freqs):
    return BlockDiagMatrix(*[block(m * w) for w in freqs])


def same_structure(a, b):
    assert a == b and hash(a) == hash(b)
    for x, y in zip(a.diag, b.diag):
        assert list(x) == list(y)
        assert [sp.srepr(e) for e in x] == [sp.srepr(e) for e in y]


ANGLES = [i, j - i, -i, 2 * i + 1, i + c, sp.Integer(0), sp.Integer(3), i * sp.pi, sp.pi / 2 * i,
          sp.Rational(1, 2) * i, t, -t + 1, i * j, sp.I * i]
FREQUENCY_SETS = {
    "same assumptions": ws,
    "names either side of k": sp.symbols("a z", positive=True),  # a < k < z: renaming a -> z reorders k w
    "mixed assumptions": (sp.Symbol("u", positive=True), sp.Symbol("v", real=True), sp.Symbol("x")),
    "numbers": (1, sp.Rational(1, 100), sp.Integer(10000) ** sp.Rational(-1, 4)),
    "one block": ws[:1],
}


@pytest.mark.parametrize("block, build", [(rotation, rope_matrix), (sin_shift, sin_shift_matrix)],
                         ids=["rope_matrix", "sin_shift_matrix"])
@pytest.mark.parametrize("freqs", FREQUENCY_SETS.values(), ids=FREQUENCY_SETS.keys())
@pytest.mark.parametrize("m", ANGLES + [m_symbol, m_symbol - 1, k, k - i, 1 - k], ids=str)
def test_built_matrix_is_the_evaluated_matrix(block, build, freqs, m):
    same_structure(build(m, freqs), evaluated(block, m, freqs))


def test_a_frequency_inside_the_position_is_evaluated_block_by_block():
    m = i + ws[3]  # renaming w0 -> w3 would also rename part of m
    same_structure(rope_matrix(m, ws[:6]), evaluated(rotation, m, ws[:6]))


def test_repeated_frequencies_are_evaluated_block_by_block():
    freqs = (ws[0], ws[1], ws[0])
    same_structure(rope_matrix(i, freqs), evaluated(rotation, i, freqs))


@pytest.mark.parametrize("width", [2, 64, 512])
def test_wide_relative_rotation_still_proved_and_refuted(width):
    freqs = sp.symbols(f"w0:{width // 2}", positive=True)
    lhs = MatMul(Transpose(rope_matrix(i, freqs)), rope_matrix(j, freqs))
    assert prove_equal(lhs, rope_matrix(j - i, freqs)).proved
    wrong = prove_equal(lhs, rope_matrix(i - j, freqs))
    assert wrong.refuted
