"""The symbolic definitions of the chapter, shared by the proofs and the kernels.

Conventions (chapter.md): positions are integers from 0; vectors are columns;
frequencies ``omega_r = base**(-2 r / D)`` for ``r = 0 .. D/2 - 1`` where ``D``
is the *denominator* width the scheme states; pairing is ``adjacent``
``(2r, 2r+1)`` unless ``half`` ``(r, r + D/2)`` is asked for.
"""

from __future__ import annotations

from typing import Any, Sequence

import sympy as sp
from sympy import ImmutableMatrix, cos, sin
from sympy.core.function import Application
from sympy.core.operations import AssocOp
from sympy.matrices.expressions import BlockDiagMatrix
from sympy.polys.matrices import DomainMatrix
from sympy.polys.matrices.sdm import SDM

from .._ground._errors import InvalidInputError

__all__ = [
    "DEFAULT_BASE", "PAIRINGS", "check_width", "frequency", "frequencies", "rotation", "sin_shift",
    "rope_matrix", "sin_shift_matrix", "sinusoidal_vector", "pairing_permutation", "pair_indices",
]

DEFAULT_BASE = 10000
PAIRINGS = ("adjacent", "half")


def check_width(width, name: str = "width", *, minimum: int = 2) -> int:
    """``width`` as an even integer ``>= minimum``, or a clear error."""
    if isinstance(width, bool) or not isinstance(width, (int, sp.Integer)):
        raise InvalidInputError(f"{name} must be an even integer, got {type(width).__name__} {width!r}")
    width = int(width)
    if width < minimum or width % 2:
        raise InvalidInputError(
            f"{name} must be an even integer >= {minimum} (dimensions are used in pairs), got {width}",
            **{name: width},
        )
    return width


def _check_pairing(pairing: str) -> str:
    if pairing not in PAIRINGS:
        raise InvalidInputError(f"unknown pairing {pairing!r}; expected one of {PAIRINGS}", pairing=pairing)
    return pairing


def frequency(r: Any, denominator: Any, base: Any = DEFAULT_BASE) -> sp.Expr:
    """``omega_r = base**(-2 r / denominator)`` (symbolic or exact)."""
    return sp.Pow(sp.sympify(base), -2 * sp.sympify(r) / sp.sympify(denominator))


def frequencies(width: int, *, base: Any = DEFAULT_BASE, denominator: int | None = None) -> list:
    """Exact frequencies of the ``width / 2`` pairs; ``denominator`` defaults to ``width``."""
    width = check_width(width)
    denominator = width if denominator is None else check_width(denominator, "denominator")
    return [frequency(r, denominator, base) for r in range(width // 2)]


def rotation(theta: Any) -> ImmutableMatrix:
    """``R(theta) = [[cos, -sin], [sin, cos]]`` (counter-clockwise)."""
    c, s = cos(theta), sin(theta)
    return ImmutableMatrix([[c, -s], [s, c]])


def sin_shift(x: Any) -> ImmutableMatrix:
    """``A(x) = [[cos x, sin x], [-sin x, cos x]] = R(x)^T``: the shift in (sin, cos) order."""
    c, s = cos(x), sin(x)
    return ImmutableMatrix([[c, s], [-s, c]])


def rope_matrix(m: Any, freqs: Sequence) -> BlockDiagMatrix:
    """``R_m = blockdiag(R(m omega_0), ..., R(m omega_{n-1}))`` (adjacent pairing)."""
    return BlockDiagMatrix(*_blocks(rotation, m, freqs))


def sin_shift_matrix(offset: Any, freqs: Sequence) -> BlockDiagMatrix:
    """``A_offset = blockdiag(A(offset omega_r))``: ``p_{t+offset} = A_offset p_t``."""
    return BlockDiagMatrix(*_blocks(sin_shift, offset, freqs))


def _blocks(block, m, freqs) -> list:
    """``[block(m w) for w in freqs]``, the same expressions, built from one evaluated block.

    Evaluating ``cos(m w)`` is most of the cost of a wide matrix (about 0.7 ms a block:
    ``cos.eval`` asks a dozen questions of ``m w``).  When the frequencies are symbols
    that SymPy cannot tell apart -- the same assumptions, absent from ``m``, ordered the
    same way against every other symbol of the block -- evaluation commutes with renaming
    one into another, so the block is evaluated once for ``freqs[0]`` and the others are
    that block with the symbol renamed, rebuilt node by node without evaluating again.
    Anything else (numbers, mixed assumptions) is evaluated block by block.
    """
    freqs = list(freqs)
    if len(freqs) < 2 or not all(type(w) is sp.Symbol for w in freqs) or len(set(freqs)) != len(freqs):
        return [block(m * w) for w in freqs]
    first = freqs[0]
    if sp.sympify(m).has(*freqs) or any(w.assumptions0 != first.assumptions0 for w in freqs):
        return [block(m * w) for w in freqs]
    generic = block(m * first)
    if not generic.has(first):  # m = 0 and the like: every block is this one
        return [generic] * len(freqs)
    others = generic.free_symbols - {first}
    order = [first.compare(s) for s in others]
    renamer = _Renamer(generic, first)
    return [generic] + [renamer(w) if [w.compare(s) for s in others] == order else block(m * w)
                        for w in freqs[1:]]


class _Renamer:
    """Copies of an evaluated matrix with one symbol renamed, rebuilding only the nodes
    that contain it, each exactly as evaluation built it (same class, same argument order).

    The nodes to rebuild are listed once, children first, so a copy is one pass over a
    short list (five nodes for a rotation block) with no tree walk and no hashing."""

    def __init__(self, matrix: ImmutableMatrix, symbol):
        self.matrix = matrix
        slots = {symbol: _Rebuilt(0)}  # node -> its index in the list of rebuilt values (0: the symbol)
        self.plan = []  # (node, argument sources): a _Rebuilt is a rebuilt value, anything else is kept

        def visit(node):
            if not isinstance(node, sp.Basic):
                return node
            if node in slots:
                return slots[node]
            sources = [visit(a) for a in node.args]
            if not any(isinstance(x, _Rebuilt) for x in sources):
                return node
            self.plan.append((node, tuple(sources)))
            slots[node] = _Rebuilt(len(self.plan))
            return slots[node]

        rep = matrix._rep.to_sparse().rep  # {row: {col: entry}}: structural zeros stay absent
        self.cells = [(r, c, visit(e)) for r, row in rep.items() for c, e in row.items()]

    def __call__(self, new) -> ImmutableMatrix:
        values = [new]
        for node, sources in self.plan:
            values.append(_same_node(node, tuple(values[x] if isinstance(x, _Rebuilt) else x for x in sources)))
        cells = {}
        for r, c, source in self.cells:
            cells.setdefault(r, {})[c] = values[source] if isinstance(source, _Rebuilt) else source
        rep = self.matrix._rep
        entries = DomainMatrix.from_rep(SDM(cells, rep.shape, rep.domain))
        return type(self.matrix)._fromrep(entries if rep.rep.fmt == "sparse" else entries.to_dense())


class _Rebuilt(int):
    """The index of a rebuilt node in a :class:`_Renamer` plan (not an entry that is an int)."""


def _same_node(node, args):
    """A node of ``node``'s class with ``args``, built as evaluation built ``node``, without evaluating."""
    if isinstance(node, AssocOp):
        return node.func._from_args(args, node.is_commutative)
    if isinstance(node, Application):  # what Application.__new__ does once eval has returned None
        copy = sp.Basic.__new__(node.func, *args)
        copy.nargs = node.nargs
        return copy
    return node.func(*args, evaluate=False)


def sinusoidal_vector(t: Any, freqs: Sequence) -> ImmutableMatrix:
    """``p_t`` interleaved: ``p_{t,2r} = sin(t omega_r)``, ``p_{t,2r+1} = cos(t omega_r)``."""
    entries = []
    for w in freqs:
        entries += [sin(t * w), cos(t * w)]
    return ImmutableMatrix(entries)


def pair_indices(width: int, pairing: str = "adjacent") -> list:
    """The coordinate pairs ``(a, b)`` rotated together, pair ``r`` at position ``r``."""
    width, pairing = check_width(width), _check_pairing(pairing)
    half = width // 2
    if pairing == "adjacent":
        return [(2 * r, 2 * r + 1) for r in range(half)]
    return [(r, r + half) for r in range(half)]


def pairing_permutation(width: int, src: str = "adjacent", dst: str = "half") -> list:
    """Index map ``Q`` with ``z_dst = z_src[Q]``: coordinate ``k`` of the ``dst`` layout
    is coordinate ``Q[k]`` of the ``src`` layout (pair ``r`` keeps its role)."""
    src_pairs, dst_pairs = pair_indices(width, src), pair_indices(width, dst)
    perm = [0] * width
    for (sa, sb), (da, db) in zip(src_pairs, dst_pairs):
        perm[da], perm[db] = sa, sb
    return perm
