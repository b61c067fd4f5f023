"""The chapter's own words a report shows around the claims: each section's introduction and Algorithm 7.1.

Data only, in one place, restated from the chapter (``chapter.md``, and the original text for the
algorithm's steps): prose with ``$...$`` math, read by both the HTML and the LaTeX renderers.  Nothing
here is evidence; the claims below each introduction are.
"""

from __future__ import annotations

__all__ = ["ALGORITHM_7_1", "SECTION_INTROS"]

#: a short introduction per chapter section, what the section sets out to show
SECTION_INTROS = {
    "7.1": (
        "Self-attention without positions treats a sequence as a bag of tokens: permuting the rows of the input "
        "$X$ permutes the rows of the output the same way (equivariance), and any invariant summary cannot tell "
        "“A helps B” from “B helps A”. This section proves that, for every permutation $P$, including the "
        "masked case where the mask must be permuted with the content, and shows by witnesses that a fixed "
        "causal mask or added positions break it."
    ),
    "7.2": (
        "The first remedy adds a position vector $p_t$ to each token embedding: a learned table, or the "
        "sinusoidal code $p_{t,2r} = \\sin(t\\omega_r)$, $p_{t,2r+1} = \\cos(t\\omega_r)$ with "
        "$\\omega_r = \\beta^{-2r/d}$. This section checks the definition and its $d = 4$ table, the constant "
        "norm $\\|p_t\\|^2 = d/2$, the shift $p_{t+D} = A_D p_t$ by a block rotation independent of $t$, and "
        "that the full attention score is still not a function of $j - i$ alone; it ends on what finite "
        "precision does to large positions."
    ),
    "7.3": (
        "Rotary position embedding rotates each query and key pair by an angle proportional to its position: "
        "$R(\\theta) = [[\\cos\\theta, -\\sin\\theta], [\\sin\\theta, \\cos\\theta]]$. Since "
        "$R(a)^T R(b) = R(b - a)$, the score of $R_i q$ and $R_j k$ depends on the positions only through "
        "$j - i$. This section proves the rotation's properties, the block form $R_i^T R_j = R_{j-i}$, partial "
        "rotation, the two pairings and the fixed permutation between them, Algorithm 7.1, and the worked "
        "example."
    ),
    "7.4": (
        "Gradients through the rotation: backward through $R_i$ is $R_i^T$, which keeps the gradient's norm; "
        "the derivative of a score with respect to a frequency grows linearly with the offset $D = j - i$; and a "
        "RoPE score does not decay monotonically with distance (a witness where a farther key scores higher)."
    ),
    "7.5": (
        "Where position enters decides what a model computes: a relative bias adds to the score, RoPE "
        "multiplies content, and two schemes with identical shapes are different functions. The rest is "
        "consistency: position ids from the validity mask under left padding, positions reset together with a "
        "document mask when packing, cached keys at their own positions, a configuration that reloads "
        "bit-identically, and one token-to-id order."
    ),
}

#: Algorithm 7.1 (adjacent pairing) as the chapter states it
ALGORITHM_7_1 = {
    "title": "Algorithm 7.1: RoPE pair by pair",
    "claim": "rope.algorithm_7_1",
    "section": "7.3",
    "inputs": (
        "a query or key tensor $Z$ of shape $B \\times T \\times d_k$",
        "integer positions $I$ of shape $B \\times T$",
        "an even rotated width $d_r \\le d_k$",
        "frequencies $\\omega_0, \\dots, \\omega_{d_r/2-1}$",
    ),
    "output": "a tensor $\\tilde Z$ of the same shape; the two original components $a, b$ are kept until both "
              "are written",
    "steps": (
        "For each sample $b_0$ and column $t = 0, \\dots, T-1$, read the position $m = I_{b_0 t}$.",
        "For each pair $r = 0, \\dots, d_r/2 - 1$: $\\theta = m\\omega_r$, $c = \\cos\\theta$, "
        "$s = \\sin\\theta$; keep $a = Z_{b_0,t,2r}$ and $b = Z_{b_0,t,2r+1}$.",
        "Write $\\tilde Z_{b_0,t,2r} = ac - bs$ and $\\tilde Z_{b_0,t,2r+1} = as + bc$; never use the "
        "already updated first component in place of $a$.",
        "Copy coordinates $d_r, \\dots, d_k - 1$ unchanged; stop when every sample, column and pair is done.",
    ),
    "invariant": "each pair's sum of squares is the same before and after the rotation; the coordinates that "
                 "are not rotated are unchanged. Cost $O(B T d_r)$ time, $O(B T d_k)$ output, $O(d_r)$ "
                 "frequencies; multi-head: the same routine per head.",
}
