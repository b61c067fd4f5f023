"""
# 7.3 Rotary position embedding (RoPE)

## Main definitions
- `R(th) = [[cos th, -sin th], [sin th, cos th]]`, the rotation of one pair (7.13).
- `omega_r = beta^(-2r/d_k)`, `R_m = blockdiag(R(m omega_0), ..., R(m omega_{d_k/2-1}))`,
  the rotation of a head at position `m` (7.19): block diagonal, not diagonal.
- `R'_m = blockdiag(R^{(d_r)}_m, I_{d_k - d_r})`: only the first `d_r` coordinates rotate (7.21).
- Adjacent pairing rotates `(2r, 2r+1)`, half-split pairing `(r, r + d/2)`;
  `Q = pairing_permutation(d, "adjacent", "half")` maps one layout to the other.
- `rope_algorithm_7_1`: Algorithm 7.1 of the chapter, the plain loop.

## Main statements
- `rope.rotation`: `R(th) z = (z0 cos th - z1 sin th, z0 sin th + z1 cos th)`; the sign and
  the order of the pair are part of the definition.
- `rope.orthogonal`: `R(th)^T R(th) = I`, `det R(th) = 1`, `||R(th) z|| = ||z||`.
- `rope.compose`: `R(a) R(b) = R(a + b)`.
- `rope.relative`: `R(a)^T R(b) = R(b - a)`.
- `rope.inner_product`: `(R(i w) q)^T (R(j w) k) = q^T R((j-i) w) k`.
- `rope.score_expansion`: `q^T R(D w) k = (q0 k0 + q1 k1) cos(D w) + (q1 k0 - q0 k1) sin(D w)`.
- `rope.shift_invariance`: a common shift of both positions leaves the score unchanged.
- `rope.block_relative`: `R_i^T R_j = R_{j-i}` for symbolic `d_k` and concrete `d_k`.
- `rope.frequency_denominator`: `d_r` or `d_k` in the exponent gives different frequencies.
- `rope.partial`: the score splits into a rotated relative part and a plain content part.
- `rope.pairing_permutation`: `rope_half(Q z) = Q rope_adj(z)`; re-laid weights give the same scores.
- `rope.algorithm_7_1`: the loop equals `R'_m` block by block; the in-place variant does not.
- `rope.example`: the chapter's numbers, exactly.

## Notation
`a, b, th` real angles; `z = (z0, z1)`, `q`, `k` real vectors; `i, j, m` integer
positions, `D = j - i` the offset, `c` a common shift; `w`, `omega_r` frequencies.

## Implementation notes
Every step is checked by `prove_equal`: 2x2 products are compared entry by entry in
the canonical form modulo `cos^2 + sin^2 = 1`.  Block-diagonal products are built
unevaluated (`MatMul(Transpose(A), B)`) so that the blockwise tactic compares
them block by block and proves blocks that differ only in their own frequency
symbol once, as one generic block.  For symbolic `d_k` the statement rests on two
checked facts: products of block-diagonal matrices act block by block (checked on
blocks with symbolic entries), and the generic block with the symbolic
frequency `beta^(-2r/d_k)` satisfies the 2x2 identity.  Concrete widths are then
checked through the block structure with one frequency symbol per block (the
identity holds for every choice of frequencies, the chapter's `beta^(-2r/d_k)`
being one); building evaluated powers `10000^(-r/2048)` would cost more than the
whole check and prove nothing more.

## References
Chapter section 7.3, equations (7.13), (7.19)-(7.21), Algorithm 7.1.
"""

import sympy as sp
from sympy import ImmutableMatrix, Matrix, cos, sin, sqrt
from sympy.matrices.expressions import BlockDiagMatrix, MatMul, Transpose

from symproof import claim, frequencies, frequency, pairing_permutation, relayout_pairing, rope_matrix, rotation
from symproof.encodings import pair_indices

a, b, th = sp.symbols("a b theta", real=True)
z0, z1 = sp.symbols("z0 z1", real=True)
q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
i, j, m, c, D = sp.symbols("i j m c D", integer=True)
w, w2 = sp.symbols("omega omega'", positive=True)
beta = sp.Symbol("beta", positive=True)
r = sp.Symbol("r", integer=True, nonnegative=True)
d_k = sp.Symbol("d_k", integer=True, positive=True)

q, k, z = Matrix([q0, q1]), Matrix([k0, k1]), Matrix([z0, z1])

#: widths at which `rope.block_relative` is checked through the block structure on every run
#: of the claim; the wider ones are checked by the test suite through the same
#: `block_relative_sides`, because building three matrices of 2048 rotation blocks is seconds
#: of SymPy object construction (the blockwise comparison itself proves one generic block)
CONCRETE_WIDTHS = (8, 64)
TESTED_WIDTHS = (512, 4096)


def score(i_pos, j_pos, freq, q_vec=q, k_vec=k):
    """The RoPE score of one pair: `(R(i w) q)^T (R(j w) k)`, multiplied out."""
    return ((rotation(i_pos * freq) * q_vec).T * (rotation(j_pos * freq) * k_vec))[0]


def relative_form(offset, freq, q_vec=q, k_vec=k):
    """`q^T R(D w) k`, multiplied out."""
    return (q_vec.T * rotation(offset * freq) * k_vec)[0]


def frequency_symbols(n_pairs: int, name: str = "omega"):
    """One positive frequency symbol per rotation pair."""
    return sp.symbols(f"{name}_0:{n_pairs}", positive=True)


def block_relative_sides(width: int, freqs=None):
    """`(R_i^T R_j, R_{j-i})` at a concrete width, the product left unevaluated for the blockwise tactic."""
    freqs = frequency_symbols(width // 2) if freqs is None else freqs
    return MatMul(Transpose(rope_matrix(i, freqs)), rope_matrix(j, freqs)), rope_matrix(j - i, freqs)


def rotate_pairs(vec, position, freqs, pairing="adjacent"):
    """RoPE of one vector: pair `r` of the layout rotated by `position * freqs[r]`; the
    coordinates after the `2 len(freqs)` rotated ones are copied."""
    out = list(vec)
    for (first, second), freq in zip(pair_indices(2 * len(freqs), pairing), freqs):
        out[first], out[second] = (rotation(position * freq) * Matrix([vec[first], vec[second]]))
    return Matrix(out)


def partial_rope_matrix(position, freqs, width):
    """`R'_m = blockdiag(R(m omega_0), ..., R(m omega_{d_r/2-1}), I_{width - d_r})`."""
    blocks = [rotation(position * freq) for freq in freqs]
    rest = width - 2 * len(freqs)
    if rest:
        blocks.append(ImmutableMatrix(sp.eye(rest)))
    return BlockDiagMatrix(*blocks)


def dense(block_diagonal) -> ImmutableMatrix:
    """The explicit matrix of a `BlockDiagMatrix`, assembled from its blocks (`as_explicit`
    reads it entry by entry, ~10x slower)."""
    return ImmutableMatrix(sp.diag(*block_diagonal.diag))


def rope_algorithm_7_1(Z, I, d_r, freqs):
    """Algorithm 7.1 (adjacent pairing), as written: `Z[b][t][:]` of width `d_k`, positions `I[b][t]`."""
    out = [[[None] * len(row) for row in sample] for sample in Z]  # every entry is written below
    for bb, sample in enumerate(Z):
        for t, row in enumerate(sample):
            position = I[bb][t]
            for rr in range(d_r // 2):
                angle = position * freqs[rr]
                cc, ss = cos(angle), sin(angle)
                first, second = row[2 * rr], row[2 * rr + 1]  # keep the originals
                out[bb][t][2 * rr] = first * cc - second * ss
                out[bb][t][2 * rr + 1] = first * ss + second * cc
            for col in range(d_r, len(row)):
                out[bb][t][col] = row[col]
    return out


def rope_algorithm_7_1_in_place(Z, I, d_r, freqs):
    """The faulty variant: rotates `Z` in place and reuses the updated first component."""
    Z = [[list(row) for row in sample] for sample in Z]
    for bb, sample in enumerate(Z):
        for t, row in enumerate(sample):
            position = I[bb][t]
            for rr in range(d_r // 2):
                angle = position * freqs[rr]
                cc, ss = cos(angle), sin(angle)
                row[2 * rr] = row[2 * rr] * cc - row[2 * rr + 1] * ss
                row[2 * rr + 1] = row[2 * rr] * ss + row[2 * rr + 1] * cc
    return Z


@claim("rope.rotation", section="7.3", title="The rotation of one pair",
       statement=r"R(\theta) z = (z_0\cos\theta - z_1\sin\theta,\ z_0\sin\theta + z_1\cos\theta)",
       equations=("7.13",))
def rope_rotation(proof):
    R = rotation(th)
    proof.chain(R * z, Matrix([z0 * cos(th) - z1 * sin(th), z0 * sin(th) + z1 * cos(th)]), shown=r"R(\theta) z") \
        .step("the definition of R (7.13)", R * z,
              shown=r"\begin{bmatrix}\cos\theta & -\sin\theta \\ \sin\theta & \cos\theta\end{bmatrix}"
                    r"\begin{bmatrix} z_0 \\ z_1 \end{bmatrix}") \
        .step("multiply the 2x2 block by the pair",
              Matrix([z0 * cos(th) - z1 * sin(th), z0 * sin(th) + z1 * cos(th)]),
              shown=r"(z_0\cos\theta - z_1\sin\theta,\ z_0\sin\theta + z_1\cos\theta)")
    proof.differ("the components mix: the first output depends on z1", sp.diff((R * z)[0], z1), 0,
                 witness={th: 1})
    no_minus = Matrix([[cos(th), sin(th)], [sin(th), cos(th)]])
    proof.differ("dropping the minus sign changes the function", R * z, no_minus * z,
                 witness={th: 1, z0: 0, z1: 1})
    swap = Matrix([[0, 1], [1, 0]])
    proof.note("Swapping the pair: the routine reads (z1, z0) as its pair and writes back in that order.")
    proof.differ("swapping the pair changes the function", R * z, swap * R * swap * z,
                 witness={th: 1, z0: 0, z1: 1})


@claim("rope.orthogonal", section="7.3", title="A rotation is orthogonal with determinant 1",
       statement=r"R(\theta)^T R(\theta) = I,\ \det R(\theta) = 1,\ \|R(\theta) z\| = \|z\|",
       uses=("rope.rotation",))
def rope_orthogonal(proof):
    R = rotation(th)
    proof.chain(R.T * R, sp.eye(2), "orthogonality", shown=r"R(\theta)^T R(\theta)") \
        .step("multiply out the entries", Matrix([[cos(th)**2 + sin(th)**2, 0], [0, sin(th)**2 + cos(th)**2]]),
              shown=r"\begin{bmatrix}\cos^2\theta + \sin^2\theta & \cos\theta\sin\theta - \sin\theta\cos\theta \\ "
                    r"\sin\theta\cos\theta - \cos\theta\sin\theta & \sin^2\theta + \cos^2\theta\end{bmatrix}") \
        .step("cos^2 + sin^2 = 1", sp.eye(2), shown="I")
    proof.chain(R.det(), 1, "determinant", shown=r"\det R(\theta)").step("cos^2 + sin^2 = 1", sp.Integer(1), shown="1")
    rz = R * z
    proof.chain(sp.sqrt((rz.T * rz)[0]), sp.sqrt((z.T * z)[0]), "norm", shown=r"\|R(\theta) z\|") \
        .step("expand the squared components",
              sp.sqrt(z0**2 * (cos(th)**2 + sin(th)**2) + z1**2 * (sin(th)**2 + cos(th)**2))) \
        .step("cos^2 + sin^2 = 1", sp.sqrt(z0**2 + z1**2), shown=r"\|z\|")


@claim("rope.compose", section="7.3", title="Rotations compose by adding angles",
       statement=r"R(a) R(b) = R(a + b)",
       uses=("rope.rotation",))
def rope_compose(proof):
    proof.chain(rotation(a) * rotation(b), rotation(a + b), shown="R(a) R(b)") \
        .step("entry products", shown=r"\left[\sum_k R(a)_{ik} R(b)_{kj}\right]_{ij}", expr=Matrix([
            [cos(a) * cos(b) - sin(a) * sin(b), -cos(a) * sin(b) - sin(a) * cos(b)],
            [sin(a) * cos(b) + cos(a) * sin(b), -sin(a) * sin(b) + cos(a) * cos(b)],
        ])) \
        .step("angle-sum formulas", rotation(a + b), shown="R(a + b)")


@claim("rope.relative", section="7.3", title="Relative rotation",
       statement=r"R(a)^T R(b) = R(b - a)",
       uses=("rope.orthogonal", "rope.compose"))
def rope_relative(proof):
    proof.chain(rotation(a).T * rotation(b), rotation(b - a), shown="R(a)^T R(b)") \
        .step("entry products", shown=r"\left[\sum_k R(a)_{ki} R(b)_{kj}\right]_{ij}", expr=Matrix([
            [cos(a) * cos(b) + sin(a) * sin(b), -cos(a) * sin(b) + sin(a) * cos(b)],
            [-sin(a) * cos(b) + cos(a) * sin(b), sin(a) * sin(b) + cos(a) * cos(b)],
        ])) \
        .step("angle-difference formulas", rotation(b - a), shown="R(b - a)")


@claim("rope.inner_product", section="7.3", title="The rotated inner product depends on j - i",
       statement=r"(R(i\omega) q)^T (R(j\omega) k) = q^T R((j-i)\omega) k",
       uses=("rope.relative",))
def rope_inner_product(proof):
    # the products are kept unevaluated, so that each row is the statement's product of a row vector, 2x2
    # rotations and a column vector (the prover multiplies them out entry by entry)
    qm, km = ImmutableMatrix(q), ImmutableMatrix(k)
    rot = lambda angle: ImmutableMatrix(rotation(angle))  # noqa: E731
    lhs = MatMul(Transpose(MatMul(rot(i * w), qm)), MatMul(rot(j * w), km))
    rhs = MatMul(qm.T, rot((j - i) * w), km)
    proof.chain(lhs, rhs, shown=r"(R(i\omega) q)^T (R(j\omega) k)") \
        .step("transpose of a product: (R q)^T = q^T R^T", MatMul(qm.T, rot(i * w).T, rot(j * w), km),
              shown=r"q^T R(i\omega)^T R(j\omega) k") \
        .step("rope.relative: R(i omega)^T R(j omega) = R((j - i) omega)", rhs, shown=r"q^T R((j-i)\omega) k")


@claim("rope.score_expansion", section="7.3", title="The score as a cosine term and a sine term",
       statement=r"q^T R(D\omega) k = (q_0k_0 + q_1k_1)\cos(D\omega) + (q_1k_0 - q_0k_1)\sin(D\omega)",
       uses=("rope.inner_product",))
def rope_score_expansion(proof):
    x = D * w
    expanded = (q0 * k0 + q1 * k1) * cos(x) + (q1 * k0 - q0 * k1) * sin(x)
    proof.chain(relative_form(D, w), expanded, shown=r"q^T R(D\omega) k") \
        .step("expand the 2x2 product", q0 * (k0 * cos(x) - k1 * sin(x)) + q1 * (k0 * sin(x) + k1 * cos(x))) \
        .step("group the cos and sin terms", expanded,
              shown=r"(q_0k_0 + q_1k_1)\cos(D\omega) + (q_1k_0 - q_0k_1)\sin(D\omega)")
    proof.equal("at D = 0 the score is the plain product q^T k", expanded.subs(D, 0), (q.T * k)[0],
                shown=(r"(q_0k_0 + q_1k_1)\cos 0 + (q_1k_0 - q_0k_1)\sin 0", "q^T k"))
    proof.equal("D -> -D keeps the cosine term and flips the sine term", expanded.subs(D, -D),
                (q0 * k0 + q1 * k1) * cos(x) - (q1 * k0 - q0 * k1) * sin(x),
                shown=(r"q^T R(-D\omega) k", r"(q_0k_0 + q_1k_1)\cos(D\omega) - (q_1k_0 - q_0k_1)\sin(D\omega)"))
    proof.differ("so the direction of the offset is visible", expanded, expanded.subs(D, -D),
                 witness={q0: 0, q1: 1, k0: 1, k1: 0, D: 1, w: 1})


@claim("rope.shift_invariance", section="7.3", title="A common shift leaves the score unchanged",
       statement=r"(R((i+c)\omega) q)^T (R((j+c)\omega) k) = (R(i\omega) q)^T (R(j\omega) k)",
       uses=("rope.inner_product",))
def rope_shift_invariance(proof):
    proof.chain(score(i + c, j + c, w), score(i, j, w), shown=r"(R((i+c)\omega) q)^T (R((j+c)\omega) k)") \
        .step("rope.inner_product at positions i + c, j + c", relative_form((j + c) - (i + c), w),
              shown=r"q^T R(((j+c)-(i+c))\omega) k") \
        .step("rope.inner_product backwards: (j + c) - (i + c) = j - i", score(i, j, w),
              shown=r"(R(i\omega) q)^T (R(j\omega) k)")
    proof.note("The guarantee is about the positions only: content, visibility and frequencies "
               "are outside it.")
    proof.differ("changing the frequency changes the score", score(i, j, w), score(i, j, w2),
                 witness={i: 0, j: 1, q0: 1, q1: 0, k0: 1, k1: 0, w: 1, w2: 2})


@claim("rope.block_relative", section="7.3", title="Block-diagonal RoPE is relative",
       statement=r"R_i^T R_j = R_{j-i},\ (R_i q)^T (R_j k) = q^T R_{j-i} k",
       assumptions=(r"\omega_r = \beta^{-2r/d_k}",), equations=("7.19", "7.20"),
       uses=("rope.relative",))
def rope_block_relative(proof):
    proof.note("Block lemma: a product of block-diagonal matrices with matching blocks is the "
               "block-diagonal matrix of the block products. Checked on dense matrices with "
               "symbolic entries: a 2x2 block next to a 2x2 block, and next to a 4x4 block.")
    for rest in (2, 4):
        A0, B0 = (ImmutableMatrix(2, 2, sp.symbols(f"{n}0_0:4")) for n in "AB")
        A1, B1 = (ImmutableMatrix(rest, rest, sp.symbols(f"{n}1_0:{rest * rest}")) for n in "AB")
        dense_a = ImmutableMatrix(BlockDiagMatrix(A0, A1).as_explicit())
        dense_b = ImmutableMatrix(BlockDiagMatrix(B0, B1).as_explicit())
        proof.equal(f"block lemma (blocks 2 and {rest}): blockdiag(A)^T blockdiag(B) = blockdiag(A_r^T B_r)",
                    dense_a.T * dense_b, ImmutableMatrix(BlockDiagMatrix(A0.T * B0, A1.T * B1).as_explicit()),
                    shown=(r"\operatorname{blockdiag}(A_0, A_1)^T \operatorname{blockdiag}(B_0, B_1)",
                           r"\operatorname{blockdiag}(A_0^T B_0, A_1^T B_1)"))

    omega_r = frequency(r, d_k, beta)
    proof.note("One generic block: pair r of a head of symbolic width d_k, frequency "
               "omega_r = beta^(-2r/d_k), r and d_k symbolic.")
    proof.chain(rotation(i * omega_r).T * rotation(j * omega_r), rotation((j - i) * omega_r),
                r"generic block: $R(i\omega_r)^T R(j\omega_r) = R((j-i)\omega_r)$",
                shown=r"R(i\omega_r)^T R(j\omega_r)") \
        .step("entry products", shown=r"\left[\sum_k R(i\omega_r)_{ki} R(j\omega_r)_{kj}\right]_{ij}", expr=Matrix([
            [cos(i * omega_r) * cos(j * omega_r) + sin(i * omega_r) * sin(j * omega_r),
             -cos(i * omega_r) * sin(j * omega_r) + sin(i * omega_r) * cos(j * omega_r)],
            [-sin(i * omega_r) * cos(j * omega_r) + cos(i * omega_r) * sin(j * omega_r),
             sin(i * omega_r) * sin(j * omega_r) + cos(i * omega_r) * cos(j * omega_r)],
        ])) \
        .step("angle-difference formulas", rotation((j - i) * omega_r), shown=r"R((j-i)\omega_r)")
    proof.chain(score(i, j, omega_r), relative_form(j - i, omega_r),
                r"generic pair of the score: $(R(i\omega_r) q)^T (R(j\omega_r) k) = q^T R((j-i)\omega_r) k$",
                shown=r"(R(i\omega_r) q)^T (R(j\omega_r) k)") \
        .step("transpose of a product", (q.T * rotation(i * omega_r).T * rotation(j * omega_r) * k)[0],
              shown=r"q^T R(i\omega_r)^T R(j\omega_r) k") \
        .step("generic block", relative_form(j - i, omega_r), shown=r"q^T R((j-i)\omega_r) k")
    proof.note("With the block lemma, R_i^T R_j = blockdiag(R(i omega_r)^T R(j omega_r)) = R_{j-i}, and the "
               "score (R_i q)^T (R_j k) = q^T R_i^T R_j k is the sum over r of the generic pair.")
    proof.holds("every frequency is a positive real, so each block is an instance of the generic block",
                sp.StrictGreaterThan(omega_r, 0, evaluate=False))

    for width in CONCRETE_WIDTHS:
        proof.equal(f"d_k = {width}: blockwise, {width // 2} blocks", *block_relative_sides(width))
    proof.equal("d_k = 4 with the exact frequencies 1 and 1/100", *block_relative_sides(4, frequencies(4)))
    proof.note(f"Widths checked concretely: $d_k = {', '.join(map(str, CONCRETE_WIDTHS))}$ and 4 on every run; "
               f"$d_k = {' and '.join(map(str, TESTED_WIDTHS))}$ the same way by the test suite "
               "(tests/derivations/test_sec7_3.py). Every other width is covered by the symbolic-width "
               "proof above: the generic block with symbolic $d_k$ and $r$, and the block lemma.")


@claim("rope.frequency_denominator", section="7.3", kind="not-in-general",
       title="The frequency denominator is part of the definition",
       statement=r"\beta^{-2r/d_r} \ne \beta^{-2r/d_k} \text{ for } r \ge 1,\ d_r < d_k",
       uses=("sin.definition", "rope.block_relative"))
def rope_frequency_denominator(proof):
    r1 = sp.Symbol("r", integer=True, positive=True)
    d_r, gap = sp.symbols("d_r e", integer=True, positive=True)
    g = sp.Symbol("g", positive=True)
    base = 1 + g  # beta > 1
    exponent = -2 * r1 / d_r + 2 * r1 / (d_r + gap)
    proof.note("Write d_k = d_r + e with e >= 1 and beta = 1 + g with g > 0. The ratio of the two "
               "frequencies is beta^x with x the difference of the exponents.")
    proof.equal("ratio of frequencies: beta^(-2r/d_r) / beta^(-2r/d_k) = beta^x",
                frequency(r1, d_r, base) / frequency(r1, d_r + gap, base), base**exponent)
    proof.equal("x = -2 r e / (d_r d_k)", exponent, -2 * r1 * gap / (d_r * (d_r + gap)))
    proof.holds(r"$x < 0$ for every $r \ge 1$ and $d_r < d_k$",
                sp.StrictLessThan(-2 * r1 * gap / (d_r * (d_r + gap)), 0, evaluate=False))
    proof.holds(r"the log of the ratio, $x \log\beta$, is $< 0$ for $\beta > 1$: every frequency with $r \ge 1$ differs",
                sp.StrictLessThan(-2 * r1 * gap / (d_r * (d_r + gap)) * sp.log(base), 0, evaluate=False))
    proof.equal("r = 0 is the one frequency they share", frequency(0, d_r, beta), frequency(0, d_r + gap, beta),
                shown=(r"\beta^{-2 \cdot 0/d_r}", r"\beta^{-2 \cdot 0/d_k}"))

    small, large = 32, 128
    proof.note(f"Concretely: d_r = {small} rotated coordinates in a head of d_k = {large}.")
    for rr in (1, 2, small // 2 - 1):
        proof.differ(f"r = {rr}: exponent with d_r vs d_k", frequency(r1, small), frequency(r1, large),
                     witness={r1: rr})
    table_r, table_k = frequencies(small), frequencies(small, denominator=large)
    shapes = {name: (len(table), partial_rope_matrix(m, table, large).shape)
              for name, table in (("d_r", table_r), ("d_k", table_k))}
    proof.check("every tensor shape stays the same: d_r / 2 frequencies either way, and R'_m is "
                "d_k x d_k either way",
                shapes["d_r"] == shapes["d_k"] == (small // 2, (large, large)),
                detail=f"(table length, R'_m shape) with exponent d_r: {shapes['d_r']}, with d_k: {shapes['d_k']}")


@claim("rope.partial", section="7.3", title="Rotating only the first d_r coordinates",
       statement=r"(R'_i q)^T (R'_j k) = q_{<d_r}^T R^{(d_r)}_{j-i} k_{<d_r} + q_{\ge d_r}^T k_{\ge d_r}",
       equations=("7.21",),
       uses=("rope.block_relative",))
def rope_partial(proof):
    width, rotated = 6, 4
    freqs = frequency_symbols(rotated // 2)
    qv = Matrix(sp.symbols(f"q0:{width}", real=True))
    kv = Matrix(sp.symbols(f"k0:{width}", real=True))
    proof.note(f"d_k = {width}, d_r = {rotated}, one symbolic frequency per rotated pair.")
    proof.equal("blockwise: R'_i^T R'_j = R'_{j-i} (the identity block gives I^T I = I)",
                MatMul(Transpose(partial_rope_matrix(i, freqs, width)), partial_rope_matrix(j, freqs, width)),
                partial_rope_matrix(j - i, freqs, width))
    rot_i, rot_j = dense(partial_rope_matrix(i, freqs, width)), dense(partial_rope_matrix(j, freqs, width))
    lhs = ((rot_i * qv).T * (rot_j * kv))[0]
    head, tail = slice(0, rotated), slice(rotated, width)
    relative = (qv[head, :].T * dense(rope_matrix(j - i, freqs)) * kv[head, :])[0]
    content = (qv[tail, :].T * kv[tail, :])[0]
    proof.chain(lhs, relative + content, shown=r"(R'_i q)^T (R'_j k)") \
        .step("transpose of a product", (qv.T * rot_i.T * rot_j * kv)[0], shown=r"q^T R'^T_i R'_j k") \
        .step("R'_i^T R'_j = R'_{j-i}", (qv.T * dense(partial_rope_matrix(j - i, freqs, width)) * kv)[0],
              shown=r"q^T R'_{j-i} k") \
        .step("split the coordinates at d_r", relative + content,
              shown=r"q_{<d_r}^T R^{(d_r)}_{j-i} k_{<d_r} + q_{\ge d_r}^T k_{\ge d_r}")
    only_unrotated = {**{s: 0 for s in (*qv, *kv)}, qv[rotated]: 1, kv[rotated]: 1, i: 0, j: 0,
                      **{f: 1 for f in freqs}}
    proof.differ("the unrotated coordinates carry no position: dropping them changes the score",
                 lhs, relative, witness=only_unrotated)


@claim("rope.pairing_permutation", section="7.3", title="Adjacent and half-split pairing differ by one permutation",
       statement=r"\mathrm{rope}_{half}(Q z) = Q\,\mathrm{rope}_{adj}(z)",
       uses=("rope.block_relative",))
def rope_pairing_permutation(proof):
    import numpy as np

    width = 8
    freqs = frequencies(width)
    perm = pairing_permutation(width, "adjacent", "half")
    Q = Matrix(width, width, lambda row, col: int(perm[row] == col))
    zv = Matrix(sp.symbols(f"z0:{width}", real=True))
    images = ", ".join(str(int(v)) for v in perm)
    proof.note(f"Q for d_k = {width}: coordinate k of the half-split layout is the coordinate of the adjacent "
               f"one that entry k of ({images}) names.")
    proof.equal("Q is a permutation: Q^T Q = I", Q.T * Q, sp.eye(width), shown=("Q^T Q", "I"))
    proof.equal(f"rope_half(Q z) = Q rope_adj(z), d_k = {width}, symbolic z and position",
                rotate_pairs(Q * zv, m, freqs, "half"), Q * rotate_pairs(zv, m, freqs, "adjacent"),
                shown=(r"\mathrm{rope}_{half}(Q z)", r"Q\,\mathrm{rope}_{adj}(z)"))

    heads, head_width, d_model = 2, 4, 3
    head_freqs = frequencies(head_width)
    w_q = np.array([[sp.Rational(row * d_model + col - 5, 3) for col in range(d_model)]
                    for row in range(heads * head_width)], dtype=object)
    w_k = np.array([[sp.Integer((row * 7 + col * 3) % 5 - 2) for col in range(d_model)]
                    for row in range(heads * head_width)], dtype=object)
    x_i, x_j = Matrix([1, -2, sp.Rational(1, 2)]), Matrix([3, 0, -1])
    relaid_q, relaid_k = (relayout_pairing(weights, heads, "adjacent", "half") for weights in (w_q, w_k))

    def scores(wq, wk, pairing):
        out = []
        for h in range(heads):
            rows = slice(h * head_width, (h + 1) * head_width)
            query = rotate_pairs(Matrix(wq[rows]) * x_i, i, head_freqs, pairing)
            key = rotate_pairs(Matrix(wk[rows]) * x_j, j, head_freqs, pairing)
            out.append((query.T * key)[0])
        return Matrix(out)

    proof.note(f"{heads} heads of width {head_width}, d_model = {d_model}, exact rational weights and "
               "inputs, symbolic positions i, j.")
    adjacent = scores(w_q, w_k, "adjacent")
    proof.equal("half-split RoPE on weights re-laid by relayout_pairing = adjacent RoPE on the originals",
                scores(relaid_q, relaid_k, "half"), adjacent,
                shown=(r"s_{half}(Q W_Q, Q W_K)", r"s_{adj}(W_Q, W_K)"))
    proof.differ("swapping the routine without re-laying the weights changes the scores",
                 scores(w_q, w_k, "half"), adjacent, witness={i: 1, j: 0})


@claim("rope.algorithm_7_1", section="7.3", title="Algorithm 7.1 computes R_m block by block",
       statement=r"\mathrm{Alg.\,7.1}(Z, I)[b, t] = R'_{I[b,t]} Z[b, t]",
       uses=("rope.block_relative", "rope.partial"))
def rope_algorithm_7_1_claim(proof):
    samples, length, width, rotated = 1, 2, 6, 4
    freqs = frequency_symbols(rotated // 2)
    Z = [[list(sp.symbols(f"z{bb}{t}_0:{width}", real=True)) for t in range(length)] for bb in range(samples)]
    I = [[sp.Symbol(f"m{bb}{t}", integer=True) for t in range(length)] for bb in range(samples)]
    out = rope_algorithm_7_1(Z, I, rotated, freqs)
    faulty = rope_algorithm_7_1_in_place(Z, I, rotated, freqs)
    proof.note(f"B = {samples}, T = {length}, d_k = {width}, d_r = {rotated}: symbolic inputs, "
               "positions and frequencies.")
    for bb in range(samples):
        for t in range(length):
            zv, result = Matrix(Z[bb][t]), Matrix(out[bb][t])
            proof.equal(f"b = {bb}, t = {t}: loop output = R'_m z",
                        result, dense(partial_rope_matrix(I[bb][t], freqs, width)) * zv,
                        shown=(r"\mathrm{Alg.\,7.1}(Z, I)[b, t]", r"R'_{I[b,t]} Z[b, t]"))
            for rr in range(rotated // 2):
                proof.equal(f"b = {bb}, t = {t}: pair {rr}: sum of squares preserved",
                            result[2 * rr]**2 + result[2 * rr + 1]**2, zv[2 * rr]**2 + zv[2 * rr + 1]**2)
            proof.equal(f"b = {bb}, t = {t}: coordinates >= d_r copied", result[rotated:, :], zv[rotated:, :],
                        shown=(r"\mathrm{Alg.\,7.1}(Z, I)[b, t]_{\ge d_r}", r"Z[b, t]_{\ge d_r}"))
    first_pair_only = {**{s: 0 for s in Z[0][0]}, Z[0][0][0]: 1, I[0][0]: 1, **{f: 1 for f in freqs}}
    proof.differ("the in-place variant reusing the updated first component differs",
                 Matrix(faulty[0][0]), Matrix(out[0][0]), witness=first_pair_only)
    proof.note("Cost: O(B T d_r) time (one cos/sin pair and four products per pair), O(B T d_k) output, "
               "O(d_r) for the frequency table. Multi-head: the same routine per head.")


@claim("rope.example", section="7.3", kind="numeric", title="A worked example",
       statement=r"q = (1, 2),\ k = (3, -1),\ \omega = 1,\ i = 1,\ j = 3:\ "
                 r"\widetilde q_i^{\mathsf T}\widetilde k_j = \cos 2 + 7 \sin 2 \approx 5.948935",
       uses=("rope.inner_product", "rope.score_expansion", "rope.shift_invariance"))
def rope_example(proof):
    """The chapter's calculation, line by line in its order; every number is the exact value's, checked."""
    qe, ke, freq, i_at, j_at = Matrix([1, 2]), Matrix([3, -1]), 1, 1, 3
    calc = proof.calculation((r"q = (1, 2)^{\mathsf T}", r"k = (3, -1)^{\mathsf T}", r"\omega = 1", "i = 1", "j = 3"),
                             "angles in radians")
    rq, rk = rotation(i_at * freq) * qe, rotation(j_at * freq) * ke
    calc.line("rotate the query", (r"\widetilde q_i", r"R(i\omega)\,q", r"R(1)\,q"), rq, ("-1.142640", "1.922076"))
    # the chapter cuts the last entry after six decimals (1.41335252... prints as 1.413352): checked as cut
    calc.line("rotate the key", (r"\widetilde k_j", r"R(j\omega)\,k", r"R(3)\,k"), rk, ("-2.828857", "1.413352"),
              rounding=("nearest", "truncated"))
    direct = (rq.T * rk)[0]
    calc.line("multiply directly", (r"\widetilde q_i^{\mathsf T}\widetilde k_j",), direct, "5.948935")
    offset = j_at - i_at
    calc.line("the offset", (r"\Delta", "j - i"), sp.Integer(offset), "2")
    calc.line("the plain product", (r"q^{\mathsf T} k", r"1 \cdot 3 + 2 \cdot (-1)"), (qe.T * ke)[0], "1")
    calc.line("the cross term", (r"q_1 k_0 - q_0 k_1", r"2 \cdot 3 - 1 \cdot (-1)"), qe[1] * ke[0] - qe[0] * ke[1], "7")
    via_offset = relative_form(offset, freq, qe, ke)
    calc.line("the same score through the offset (rope.score_expansion)",
              (r"q^{\mathsf T} R(\Delta\omega)\,k", r"(q^{\mathsf T} k) \cos\Delta + (q_1 k_0 - q_0 k_1) \sin\Delta"),
              via_offset, "5.948935", equals=(r"\widetilde q_i^{\mathsf T}\widetilde k_j", direct))
    calc.line(r"scaled as an attention score of width $2$",
              (r"\widetilde q_i^{\mathsf T}\widetilde k_j / \sqrt{2}",), via_offset / sqrt(2), "4.206532")
    calc.line(r"both positions shifted to $i' = 6$, $j' = 8$ (rope.shift_invariance)",
              (r"\widetilde q_{i'}^{\mathsf T}\widetilde k_{j'}", r"(R(6)\,q)^{\mathsf T} R(8)\,k"),
              score(6, 8, freq, qe, ke), "5.948935", equals=(r"\widetilde q_i^{\mathsf T}\widetilde k_j", direct),
              show_value=False)
    calc.line(r"the key moved to $j = 1$, so $\Delta = 0$",
              (r"(R(1)\,q)^{\mathsf T} R(1)\,k",), score(1, 1, freq, qe, ke), "1")
