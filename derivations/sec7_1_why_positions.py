"""
# 7.1 Why positions must be represented

## Main definitions
- A permutation `pi` of `0 .. T-1` acts on the rows of `X` (T x d, one token per row) through
  `P[i, pi(i)] = 1`, so `(P X)[i] = X[pi(i)]`.
- Position-free self-attention `F(X; M) = softmax_rows(X W_Q (X W_K)^T / sqrt(d_k) + M) X W_V`
  with an additive mask `M` (0 allowed, -oo forbidden); `symproof.encodings.self_attention`.

## Main statements
- `perm.orthogonal`: `P^T P = I`.
- `perm.equivariance_vs_invariance`: `1^T P X = 1^T X`, `(P X) W = P (X W)`; neither property implies the other.
- `perm.bag_of_tokens`: an invariant summary cannot tell "A helps B" from "B helps A".
- `attn.equivariance`: `F(P X) = P F(X)`.
- `attn.masked_equivariance`: `F(P X; P M P^T) = P F(X; M)`; an all-forbidden row is undefined.
- `attn.causal_mask_breaks_equivariance`: `P L P^T != L` and `F(P X; L) != P F(X; L)` in general.
- `attn.additive_positions_break_equivariance`: `P X + P_pos != P (X + P_pos)` in general.

## Notation
`T` the number of tokens, `d` the width, `d_k` the key width, `x_ij`, `q_ij`, `k_ij`, `v_ij` the
entries of `X`, `W_Q`, `W_K`, `W_V` (real symbols), `1` the all-ones column.

## Implementation notes
For small `T` every statement is checked for *every* permutation with fully symbolic inputs:
`F(P X)` and `P F(X)` are built the same way, without simplification, and SymPy keeps sums in a
canonical order, so equal quantities are equal trees (structural comparison, no `simplify`).
General `T` follows from the index argument, whose lemmas are each proved at a representative size
(`T = 3`, a cycle with no fixed point): `P^T P = I`, `(P X) W = P (X W)`, the scores become
`P S P^T`, a row-wise map commutes with a row permutation, and `(P A P^T)(P V) = P A V`.
A mask holds `-oo`, and `0 * (-oo)` is undefined, so masks are permuted by indices; the index form
is proved equal to `P M P^T` for every finite `M`.

## References
Chapter section 7.1, equations (7.1), (7.2).
"""

from itertools import permutations

import sympy as sp
from sympy import KroneckerDelta, Matrix, Sum

from symproof import MaskedRowError, claim, sinusoidal_vector
from symproof.encodings import (
    causal_mask, cycle_notation, permutation_matrix, permute_rows_and_columns, self_attention, softmax_rows,
)

#: the representative size of the general-T lemmas, and a permutation without a fixed point
LEMMA_SIZE = 3
LEMMA_PERMUTATION = (1, 2, 0)


def symbol_matrix(name: str, rows: int, cols: int) -> Matrix:
    """A matrix of real symbols ``name{i}{j}`` (short names keep witnesses paste-able)."""
    return Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}{i}{j}", real=True))


def ones(size: int) -> Matrix:
    return Matrix([1] * size)


def attention_weights(d: int = 2, d_k: int = 2):
    """Symbolic ``W_Q``, ``W_K`` (d x d_k) and ``W_V`` (d x d), shared by every token."""
    return symbol_matrix("q", d, d_k), symbol_matrix("k", d, d_k), symbol_matrix("v", d, d)


#: what the entries of the symbolic weights are called in the formulas (a reader meets q_00 before any definition)
WEIGHT_ENTRIES = r"Entries: $q_{ij}, k_{ij}, v_{ij}$ of $W_Q, W_K, W_V$."


def all_permutations(T: int):
    return [list(p) for p in permutations(range(T))]


def summary_in_first_row(X: Matrix) -> Matrix:
    """An invariant map with the shape of ``X``: the column sums in row 0, zeros elsewhere."""
    return Matrix.vstack((ones(X.rows).T * X), sp.zeros(X.rows - 1, X.cols))


# -- perm.orthogonal ------------------------------------------------------------------------------


@claim("perm.orthogonal", section="7.1", title="A permutation matrix is orthogonal",
       statement=r"P^T P = I \text{ for every permutation matrix } P",
       equations=("P^T P = I",))
def perm_orthogonal(proof):
    for T in range(1, 5):
        mats = [permutation_matrix(p) for p in all_permutations(T)]
        proof.equal(f"$P^T P = I$ for all {len(mats)} permutation matrices of size $T = {T}$ (stacked)",
                    Matrix.vstack(*[P.T * P for P in mats]), Matrix.vstack(*[sp.eye(T)] * len(mats)),
                    shown=(rf"\begin{{bmatrix}} P_1^T P_1 \\ \vdots \\ P_{{{len(mats)}}}^T P_{{{len(mats)}}} \end{{bmatrix}}",
                           rf"\begin{{bmatrix}} I_{T} \\ \vdots \\ I_{T} \end{{bmatrix}}"))
    proof.note(r"General $T$, the index argument: $(P^T P)_{ij} = \sum_k P_{ki} P_{kj} = \sum_k [\pi(k) = i]\,[\pi(k) = j]$; "
               r"$\pi$ is a bijection of $\{0, \ldots, T-1\}$, so reindexing $l = \pi(k)$ gives "
               r"$\sum_l \delta_{li} \delta_{lj}$. Both indices lie in $\{0, \ldots, T-1\}$: on the diagonal write "
               r"$T = i + 1 + u$; off it, by symmetry of $P^T P$ take $j = i + 1 + v$ and $T = j + 1 + u$ "
               r"($u, v \ge 0$ free).")
    i, l, u, v = sp.symbols("i l u v", integer=True, nonnegative=True)
    proof.equal("diagonal: sum_l delta_li^2 = 1 (one l hits i)",
                Sum(KroneckerDelta(l, i) ** 2, (l, 0, i + u)), 1)
    j = i + 1 + v
    proof.equal("off the diagonal: sum_l delta_li delta_lj = 0 (no l equals both)",
                Sum(KroneckerDelta(l, i) * KroneckerDelta(l, j), (l, 0, j + u)), 0)


# -- perm.equivariance_vs_invariance ---------------------------------------------------------------


@claim("perm.equivariance_vs_invariance", section="7.1", kind="not-in-general",
       title="Invariant and equivariant maps",
       statement=r"g(PX) = g(X) \text{ for } g(X) = 1^T X;\ F(PX) = P F(X) \text{ for } F(X) = XW;"
                 r"\ \text{neither implies the other}",
       equations=("1^T P X = 1^T X", "(P X) W = P (X W)"),
       uses=("perm.orthogonal",))
def perm_equivariance_vs_invariance(proof):
    T, d = 3, 2
    X, W = symbol_matrix("x", T, d), symbol_matrix("w", d, d)
    perms = all_permutations(T)
    for p in perms:
        P = permutation_matrix(p)
        proof.equal(f"row sum is invariant, $\\pi = {cycle_notation(p)}$", ones(T).T * (P * X), ones(T).T * X,
                    shown=(r"\mathbf{1}^T (P X)", r"\mathbf{1}^T X"))
    for p in perms:
        P = permutation_matrix(p)
        proof.equal(f"row-wise map is equivariant, $\\pi = {cycle_notation(p)}$", (P * X) * W, P * (X * W),
                    shown=("(P X) W", "P (X W)"))
    proof.note("General T: 1^T P = 1^T because every column of P holds exactly one 1, and "
               "(P X) W = P (X W) is associativity of the matrix product.")
    P = permutation_matrix([1, 0, 2])
    proof.note("Invariant but not equivariant: G(X) puts the column sums in row 0 and zeros elsewhere.")
    proof.equal("G is invariant", summary_in_first_row(P * X), summary_in_first_row(X), shown=("G(PX)", "G(X)"))
    zero = {s: 0 for s in X.free_symbols | W.free_symbols}
    proof.differ("G is not equivariant, $\\pi = " + cycle_notation([1, 0, 2]) + "$",
                 summary_in_first_row(P * X), P * summary_in_first_row(X), shown=("G(PX)", "P G(X)"),
                 witness={**zero, sp.Symbol("x00", real=True): 1})
    proof.differ("$F(X) = XW$ is equivariant but not invariant, $\\pi = " + cycle_notation([1, 0, 2]) + "$",
                 (P * X) * W, X * W, shown=("F(PX)", "F(X)"),
                 witness={**zero, sp.Symbol("x00", real=True): 1, sp.Symbol("w00", real=True): 1})


# -- perm.bag_of_tokens ------------------------------------------------------------------------------


@claim("perm.bag_of_tokens", section="7.1", title="An invariant summary sees a bag of tokens",
       statement=r"g(X_{A\,helps\,B}) = g(X_{B\,helps\,A}) \text{ for every invariant } g",
       equations=("X_{BA} = P X_{AB}",),
       uses=("perm.equivariance_vs_invariance",))
def perm_bag_of_tokens(proof):
    d = 1  # one coordinate per token is enough: the argument never looks inside a row
    a, h, b = (Matrix([[sp.Symbol(f"{name}{c}", real=True) for c in range(d)]]) for name in ("a", "h", "b"))
    A_helps_B, B_helps_A = Matrix.vstack(a, h, b), Matrix.vstack(b, h, a)
    P = permutation_matrix([2, 1, 0])
    proof.equal("the two sentences are one permutation apart", P * A_helps_B, B_helps_A,
                shown=(r"P X_{AB}", r"X_{BA}"))
    proof.note("Hence g(X_BA) = g(P X_AB) = g(X_AB) for every invariant g; instances follow.")
    W_Q, W_K, W_V = attention_weights(d, d)
    proof.note(WEIGHT_ENTRIES)
    summaries = {
        r"sum pooling $\mathbf{1}^T X$": lambda X: ones(3).T * X,
        "max pooling (column-wise max)": lambda X: Matrix([[sp.Max(*X[:, c]) for c in range(d)]]),
        r"mean of position-free attention $\mathbf{1}^T F(X) / T$":
            lambda X: ones(3).T * self_attention(X, W_Q, W_K, W_V) / 3,
    }
    for name, g in summaries.items():
        proof.equal(f"{name} gives both orders the same value", g(B_helps_A), g(A_helps_B),
                    shown=(r"g(X_{BA})", r"g(X_{AB})"))
    zero = {s: 0 for s in A_helps_B.free_symbols}
    proof.differ("a summary that reads the first token (it knows positions) tells them apart",
                 B_helps_A[0, :], A_helps_B[0, :], shown=(r"(X_{BA})_{0}", r"(X_{AB})_{0}"),
                 witness={**zero, sp.Symbol("a0", real=True): 1})


# -- attn.equivariance ----------------------------------------------------------------------------------


def equivariance_for_all_permutations(proof, T: int, masks: dict) -> None:
    """``F(P X; P M P^T) = P F(X; M)`` for every permutation, symbolic ``X`` (T x 2) and weights."""
    X = symbol_matrix("x", T, 2)
    W = attention_weights()
    for mask_name, M in masks.items():
        F_X = self_attention(X, *W, mask=M)
        for p in all_permutations(T):
            P = permutation_matrix(p)
            PMPt = None if M is None else permute_rows_and_columns(M, p)
            label = "" if M is None else f", mask {mask_name} permuted along"
            shown = ("F(PX)", "P F(X)") if M is None else ("F(PX;\\, P M P^T)", "P F(X;\\, M)")
            proof.equal(f"$T = {T}$, $\\pi = {cycle_notation(p)}${label}", self_attention(P * X, *W, mask=PMPt), P * F_X,
                        shown=shown)


def lemma_chain(proof, mask=None) -> None:
    """The general-T argument, each lemma checked at the representative size with symbolic inputs."""
    T, perm = LEMMA_SIZE, list(LEMMA_PERMUTATION)
    P = permutation_matrix(perm)
    X = symbol_matrix("x", T, 2)
    W_Q, W_K, W_V = attention_weights()
    S = symbol_matrix("s", T, T)
    A, V = symbol_matrix("a", T, T), symbol_matrix("y", T, 2)
    proof.note(f"Lemma chain at T = {T}, $\\pi = {cycle_notation(perm)}$ (no fixed point), symbolic X, W_*, S, A, V. Each lemma "
               "holds for every T by the index argument: P^T P = I (perm.orthogonal), and a row-wise "
               "map commutes with a row permutation, because the softmax normalises row i over that "
               "row's own entries, and row i of P S P^T is row pi(i) of S with its entries reordered by "
               "pi — a sum does not depend on the order of its terms.")
    proof.equal("L1: associativity of the matrix product", (P * X) * W_Q, P * (X * W_Q), shown=("(P X) W_Q", "P (X W_Q)"))
    scores = (X * W_Q) * (X * W_K).T / sp.sqrt(2)
    proof.equal("L2: the scores of $P X$ are $P S P^T$", ((P * X) * W_Q) * ((P * X) * W_K).T / sp.sqrt(2),
                P * scores * P.T, shown=(r"(P X W_Q)(P X W_K)^T / \sqrt{d_k}", r"P S P^T"))
    M = None if mask is None else mask
    PMPt = None if mask is None else permute_rows_and_columns(mask, perm)
    proof.equal("L3: the softmax normalises each row over that row's own entries"
                + ("" if mask is None else " (the mask permuted along)"),
                softmax_rows(P * S * P.T, PMPt), P * softmax_rows(S, M) * P.T,
                shown=(r"\operatorname{softmax}_{\mathrm{rows}}(P S P^T)", r"P \operatorname{softmax}_{\mathrm{rows}}(S) P^T"))
    proof.equal("L4: by $P^T P = I$", (P * A * P.T) * (P * V), P * (A * V), shown=(r"(P A P^T)(P V)", "P A V"))
    F_PX = self_attention(P * X, W_Q, W_K, W_V, mask=PMPt)
    soft = r"\operatorname{softmax}_{\mathrm{rows}}"
    # the chain's ends are the statement's sides: with a mask, the mask permuted along on the left
    left, right = ("F(PX)", "P F(X)") if mask is None else (r"F(PX;\, P M P^T)", r"P F(X;\, M)")
    proof.chain(F_PX, P * self_attention(X, W_Q, W_K, W_V, mask=M), shown=left) \
        .step("L1, L2: scores $P S P^T$, values $P (X W_V)$", softmax_rows(P * scores * P.T, PMPt) * (P * (X * W_V)),
              shown=soft + r"(P S P^T)\, P X W_V") \
        .step("L3: the softmax commutes with the permutation", (P * softmax_rows(scores, M) * P.T) * (P * (X * W_V)),
              shown=r"P\, " + soft + r"(S)\, P^T P X W_V") \
        .step("L4: $P^T P = I$", P * (softmax_rows(scores, M) * (X * W_V)), shown=r"P\, " + soft + r"(S)\, X W_V = " + right)


@claim("attn.equivariance", section="7.1", title="Position-free attention is permutation-equivariant",
       statement=r"F(PX) = P F(X),\ F(X) = \mathrm{softmax_{rows}}(X W_Q (X W_K)^T / \sqrt{d_k}) X W_V",
       equations=("7.1",),
       uses=("perm.orthogonal", "perm.equivariance_vs_invariance"))
def attn_equivariance(proof):
    proof.note(WEIGHT_ENTRIES)
    for T in (2, 3):
        equivariance_for_all_permutations(proof, T, {"none": None})
    lemma_chain(proof)


# -- attn.masked_equivariance -------------------------------------------------------------------------


def masks_for(T: int) -> dict:
    """The masks checked at length ``T``: causal, a sparse pattern, a symbolic finite bias."""
    L = causal_mask(T)
    pattern = sp.ImmutableMatrix(T, T, lambda i, j: 0 if (i + 2 * j) % 3 != 1 or i == j else -sp.oo)
    return {
        "causal L": L,
        "sparse pattern": pattern,
        "symbolic finite bias B": symbol_matrix("m", T, T),
    }


@claim("attn.masked_equivariance", section="7.1",
       title="Masked attention is equivariant when the mask is permuted with the content",
       statement=r"F(PX; PMP^T) = P F(X; M);\ \text{an all-forbidden row is undefined}",
       equations=("7.2",),
       uses=("attn.equivariance",))
def attn_masked_equivariance(proof):
    proof.note(WEIGHT_ENTRIES)
    M = symbol_matrix("m", 3, 3)
    for p in all_permutations(3):
        proof.equal(f"permuting by indices is $P M P^T$ for every finite $M$, $\\pi = {cycle_notation(p)}$",
                    permute_rows_and_columns(M, p), permutation_matrix(p) * M * permutation_matrix(p).T,
                    shown=(r"\left(M_{\pi(i)\pi(j)}\right)_{ij}", "P M P^T"))
    for T in (2, 3):
        equivariance_for_all_permutations(proof, T, masks_for(T))
    lemma_chain(proof, mask=causal_mask(LEMMA_SIZE))
    blocked = sp.ImmutableMatrix([[0, -sp.oo], [-sp.oo, -sp.oo]])
    S = symbol_matrix("s", 2, 2)
    proof.raises("a row with every position forbidden has no softmax", MaskedRowError, softmax_rows, S, blocked)
    X = symbol_matrix("x", 2, 2)
    proof.raises("attention refuses an all-forbidden row", MaskedRowError, self_attention, X,
                 *attention_weights(), mask=blocked)
    try:
        softmax_rows(S, blocked)
    except MaskedRowError as err:
        proof.check("the error names the row", "row 1" in str(err) and err.context.get("row") == 1, str(err))


# -- attn.causal_mask_breaks_equivariance ----------------------------------------------------------------


def visibility(mask) -> sp.ImmutableMatrix:
    """``exp(M)`` entrywise: 1 where a position is allowed, 0 where it is forbidden."""
    return sp.ImmutableMatrix(mask.rows, mask.cols, lambda i, j: sp.exp(mask[i, j]))


@claim("attn.causal_mask_breaks_equivariance", section="7.1", kind="not-in-general",
       title="A fixed causal mask breaks permutation equivariance",
       statement=r"P L P^T \ne L,\ F(PX; L) \ne P F(X; L) \text{ in general}",
       uses=("attn.masked_equivariance",))
def attn_causal_mask_breaks_equivariance(proof):
    swap = [1, 0]
    L = causal_mask(2)
    proof.note(f"$\\pi = {cycle_notation(swap)}$ (swap the two tokens), T = 2. " + WEIGHT_ENTRIES)
    proof.differ("the causal mask does not move with the tokens (compared as visibility patterns $e^M$)",
                 visibility(permute_rows_and_columns(L, swap)), visibility(L), witness={},
                 shown=(r"e^{P L P^T}", r"e^{L}"))
    P = permutation_matrix(swap)
    X = symbol_matrix("x", 2, 1)
    W = attention_weights(1, 1)
    witness = {sp.Symbol(n, real=True): value for n, value in
               (("x00", 0), ("x10", 1), ("q00", 1), ("k00", 1), ("v00", 1))}
    proof.differ("the fixed mask does not move with the tokens",
                 self_attention(P * X, *W, mask=L), P * self_attention(X, *W, mask=L), witness=witness,
                 shown=("F(PX;\\, L)", "P F(X;\\, L)"))


# -- attn.additive_positions_break_equivariance ---------------------------------------------------------


@claim("attn.additive_positions_break_equivariance", section="7.1", kind="not-in-general",
       title="Added positions stay put when tokens move",
       statement=r"P X + P_{pos} \ne P (X + P_{pos});\ F(PX + P_{pos}) \ne P F(X + P_{pos})",
       uses=("attn.equivariance",))
def attn_additive_positions_break_equivariance(proof):
    T, d = 2, 2
    P = permutation_matrix([1, 0])
    positions = Matrix.vstack(*[sinusoidal_vector(t, [1]).T for t in range(T)])
    proof.note("P_pos: sinusoidal rows p_t = (sin t, cos t) (frequency 1), t = 0, 1: "
               f"$P_{{pos}} = {sp.latex(positions, mat_delim='[')}$; $\\pi = {cycle_notation([1, 0])}$. " + WEIGHT_ENTRIES)
    X = symbol_matrix("x", T, d)
    W = attention_weights(d)
    zero = {s: 0 for s in X.free_symbols}
    proof.differ("the positions stay put when the tokens move", P * X + positions, P * (X + positions), witness=zero,
                 shown=(r"P X + P_{\mathrm{pos}}", r"P (X + P_{\mathrm{pos}})"))
    identity = {s: (1 if str(s)[1] == str(s)[2] else 0) for w in W for s in w.free_symbols}
    proof.differ("attention on $X + P_{\\mathrm{pos}}$ is not equivariant ($X = 0$, $W_Q = W_K = W_V = I$)",
                 self_attention(P * X + positions, *W), P * self_attention(X + positions, *W),
                 shown=(r"F(P X + P_{\mathrm{pos}})", r"P F(X + P_{\mathrm{pos}})"),
                 witness={**zero, **identity})
    proof.note("Each token's position row moved with it would restore equivariance: "
               "P (X + P_pos) is the input of P F(X + P_pos).")
