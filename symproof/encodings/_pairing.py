"""Re-lay projection weights between the two RoPE pairings.

A checkpoint trained with one pairing (``adjacent``: pairs ``(2r, 2r+1)``;
``half``: pairs ``(r, r + d_k/2)``) runs unchanged under a routine written for
the other one only if the query/key projections are re-laid first: the output
coordinates of every head are permuted by the fixed permutation ``Q`` of
:func:`pairing_permutation`, so that pair ``r`` of the new layout holds the
coordinates pair ``r`` held in the old one (chapter claim
``rope.pairing_permutation``).  Swapping the routine without re-laying keeps
every shape and silently changes the function.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._ground._errors import InvalidInputError
from ._definitions import PAIRINGS, pairing_permutation

if TYPE_CHECKING:
    import numpy as np

__all__ = ["relayout_pairing"]


def relayout_pairing(w: Any, n_heads: int, src: str = "adjacent", dst: str = "half") -> np.ndarray:
    """Return a copy of the projection ``w`` whose output rows are re-laid from ``src`` to ``dst`` pairing.

    ``w`` has shape ``[n_heads * d_k, d_model]`` (the PyTorch ``Linear.weight``
    layout of a query or key projection) or ``[n_heads * d_k]`` (its bias, which
    must be re-laid the same way).  Within each head, new row ``k`` is old row
    ``Q[k]`` with ``Q = pairing_permutation(d_k, src, dst)``, so that
    ``rope_dst(new_w @ x) == Q rope_src(w @ x)`` per head and attention scores
    are unchanged.  ``relayout_pairing(relayout_pairing(w, h, a, b), h, b, a)``
    gives back ``w``.  Any dtype is kept (float, integer, or ``object`` arrays
    of exact SymPy numbers).
    """
    import numpy as np  # here, not at the top: importing symproof.encodings does not load NumPy

    for name, pairing in (("src", src), ("dst", dst)):
        if pairing not in PAIRINGS:
            raise InvalidInputError(f"unknown {name} pairing {pairing!r}; expected one of {PAIRINGS}",
                                    **{name: pairing})
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise InvalidInputError(f"n_heads must be a positive integer, got {n_heads!r}", n_heads=n_heads)
    array = np.asarray(w)
    if array.ndim not in (1, 2):
        raise InvalidInputError(
            f"w must be a projection matrix [n_heads * d_k, d_model] or a bias [n_heads * d_k], "
            f"got an array of shape {array.shape}",
            shape=array.shape,
        )
    rows = array.shape[0]
    if rows % n_heads:
        raise InvalidInputError(
            f"w has {rows} output rows, which is not divisible by n_heads = {n_heads}; "
            f"expected shape [n_heads * d_k, d_model]",
            shape=array.shape, n_heads=n_heads,
        )
    d_k = rows // n_heads
    if d_k % 2 or d_k == 0:
        raise InvalidInputError(
            f"per-head width d_k = {rows} / {n_heads} = {d_k} must be even and positive: "
            f"RoPE rotates coordinates in pairs",
            shape=array.shape, n_heads=n_heads, d_k=d_k,
        )
    perm = np.asarray(pairing_permutation(d_k, src, dst))
    # head h's rows are the slice h*d_k:(h+1)*d_k; permuting inside each slice only
    order = (np.arange(n_heads)[:, None] * d_k + perm[None, :]).reshape(-1)
    return array[order]  # fancy indexing copies: the caller's weights are never touched
