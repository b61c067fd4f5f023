"""
# 7.4 RoPE gradients

## Main definitions
- `q~ = R_i q`: the rotated query at a fixed position `i` with fixed frequencies.
- `s(w) = q^T R(D w) k`: the score of one pair as a function of its frequency.
- `R'(x) = dR/dx = [[-sin x, -cos x], [cos x, -sin x]]`.

## Main statements
- `grad.rotation_backward`: `dL/dq = R_i^T dL/dq~`, and the gradient keeps its norm.
- `grad.frequency`: `ds/dw = D q^T R'(D w) k`, linear in the offset `D`.
- `grad.score_not_monotone`: `q = k = (1, 0)` gives `s = cos(D w)`, which falls and rises
  again: RoPE scores do not decay with distance in general.

## Notation
`i` a fixed position, `w`, `omega_r` frequencies, `D = j - i` the offset, `q, k` real
vectors, `L` a scalar loss, `g = dL/dq~` the upstream gradient.

## Implementation notes
Derivatives are taken by SymPy's `diff` on the definitions, never written by hand:
the loss is an undefined function `L(q~)`, so the chain rule SymPy applies is the
general one, and its partial derivatives `dL/dq~_b` are then named `g_b`.  Every
rewrite after that is a `prove_equal` step.

## References
Chapter section 7.4.
"""

import sympy as sp
from sympy import ImmutableMatrix, Matrix, cos, pi, sin

from symproof import claim, rope_matrix, rotation

q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
i, D = sp.symbols("i D", integer=True)
w = sp.Symbol("omega", positive=True)

q, k = Matrix([q0, q1]), Matrix([k0, k1])


def relative_score(offset, freq, q_vec=q, k_vec=k):
    """`s = q^T R(D w) k`, multiplied out."""
    return (q_vec.T * rotation(offset * freq) * k_vec)[0]


def name_upstream_gradient(expr, loss, upstream):
    """Replace SymPy's `Subs(Derivative(L(..), xi), xi, q~_b)` by the upstream gradient `g_b`."""
    def as_upstream(node):
        derivative = node.expr
        (variable,) = derivative.variables
        return upstream[derivative.expr.args.index(variable)]

    return expr.replace(lambda node: isinstance(node, sp.Subs) and node.expr.has(loss), as_upstream)


@claim("grad.rotation_backward", section="7.4", title="The backward pass of a rotation is its transpose",
       statement=r"\frac{\partial L}{\partial q} = R_i^T g,\ \left\|\frac{\partial L}{\partial q}\right\| = \|g\|",
       assumptions=("fixed position i and frequencies; the rotation alone, not the whole attention",),
       uses=("rope.orthogonal", "rope.block_relative"))
def grad_rotation_backward(proof):
    width = 4
    freqs = sp.symbols(f"omega_0:{width // 2}", positive=True)
    qv = Matrix(sp.symbols(f"q0:{width}", real=True))
    g = Matrix(sp.symbols(f"g0:{width}", real=True))
    R = ImmutableMatrix(sp.diag(*rope_matrix(i, freqs).diag))
    rotated = R * qv
    loss = sp.Function("L")
    proof.note(f"d_k = {width}, symbolic q, position i and frequencies; L is any differentiable loss "
               "of the rotated query, g_b = dL/dq~_b at q~ = R_i q.")
    by_diff = Matrix([name_upstream_gradient(sp.diff(loss(*rotated), v), loss, g) for v in qv])
    jacobian = rotated.jacobian(qv)
    proof.chain(by_diff, R.T * g, "dL/dq by diff", shown=r"\frac{\partial L}{\partial q}") \
        .step("chain rule: dL/dq_a = sum_b g_b dq~_b/dq_a = J^T g", jacobian.T * g, shown="J^T g") \
        .step("the map q -> R_i q is linear: J = R_i", R.T * g, shown="R_i^T g")
    proof.equal("the Jacobian computed by diff is R_i", jacobian, R,
                shown=(r"J = \partial \tilde q / \partial q", "R_i"))
    upstream = R.T * g
    # the squared norm as a sum of squares, unexpanded: it then prints in one line
    proof.chain(sp.sqrt(sp.Add(*[entry**2 for entry in upstream])), sp.sqrt((g.T * g)[0]), "norm",
                shown=r"\left\|\frac{\partial L}{\partial q}\right\|") \
        .step("||R_i^T g||^2 = g^T R_i R_i^T g", sp.sqrt((g.T * (R * R.T) * g)[0]),
              shown=r"\sqrt{g^T R_i R_i^T g}") \
        .step("R_i R_i^T = I (rope.orthogonal, block by block)", sp.sqrt((g.T * g)[0]), shown=r"\|g\|")
    proof.note("This is the rotation's own backward pass only: through the attention scores the "
               "gradient also depends on the other positions.")


@claim("grad.frequency", section="7.4", title="The frequency gradient grows with the offset",
       statement=r"\frac{ds}{d\omega} = D\, q^T R'(D\omega) k = D\left(-(q_0k_0 + q_1k_1)\sin(D\omega) "
                 r"+ (q_1k_0 - q_0k_1)\cos(D\omega)\right)",
       uses=("rope.score_expansion",))
def grad_frequency(proof):
    x = sp.Symbol("x", real=True)
    derivative_of_rotation = rotation(x).diff(x)
    proof.equal("R'(x) by diff: [[-sin x, -cos x], [cos x, -sin x]]", derivative_of_rotation,
                Matrix([[-sin(x), -cos(x)], [cos(x), -sin(x)]]),
                shown=(r"\frac{d}{dx} R(x)", r"\begin{bmatrix}-\sin x & -\cos x \\ \cos x & -\sin x\end{bmatrix}"))
    score = relative_score(D, w)
    expanded = D * (-(q0 * k0 + q1 * k1) * sin(D * w) + (q1 * k0 - q0 * k1) * cos(D * w))
    proof.chain(sp.diff(score, w), expanded, r"$ds/d\omega$ by diff", shown=r"\frac{ds}{d\omega}") \
        .step(r"chain rule: $\frac{d}{d\omega} R(D\omega) = D\, R'(D\omega)$",
              D * (q.T * derivative_of_rotation.subs(x, D * w) * k)[0], shown=r"D\, q^T R'(D\omega) k") \
        .step("expand the 2x2 product and group the sin and cos terms", expanded,
              shown=r"D\left(-(q_0k_0 + q_1k_1)\sin(D\omega) + (q_1k_0 - q_0k_1)\cos(D\omega)\right)")
    proof.note("The factor in brackets is bounded by ||q|| ||k||, while the prefactor D grows with "
               "the offset: far pairs move fastest when a frequency is trained.")


@claim("grad.score_not_monotone", section="7.4", kind="not-in-general",
       title="RoPE scores do not decay monotonically with distance",
       statement=r"q = k = (1, 0):\ s(D) = \cos(D\omega)",
       uses=("rope.score_expansion",))
def grad_score_not_monotone(proof):
    unit = Matrix([1, 0])
    s = relative_score(D, w, unit, unit)
    proof.equal("$q = k = (1, 0)$ gives $s = \\cos(D\\omega)$", s, cos(D * w),
                shown=(r"q^T R(D\omega)\, k\,\big|_{q = k = (1, 0)}", r"\cos(D\omega)"))
    near, far, farther = 0, 3, 6
    at = {w: 1}
    proof.note(f"With $\\omega = 1$ (the first RoPE frequency, $\\beta^0$) and offsets $D = {near}, {far}, {farther}$.")

    def score_at(offset):
        """``s`` at ``D = offset``, the cosine left unevaluated so that a report shows ``cos 3 < cos 0``."""
        return s.func(*[arg.xreplace({**at, D: sp.Integer(offset)}) for arg in s.args], evaluate=False)

    s_near, s_far, s_farther = (score_at(d) for d in (near, far, farther))
    offsets = sp.Tuple(near, far, farther)
    proof.holds(f"the score falls from $D = {near}$ to $D = {far}$", sp.StrictLessThan(s_far, s_near, evaluate=False),
                witness={w: 1, D: offsets})
    proof.holds(f"and rises again from $D = {far}$ to $D = {farther}$: the farther key scores higher",
                sp.StrictGreaterThan(s_farther, s_far, evaluate=False), witness={w: 1, D: offsets})
    proof.holds("within one period", sp.StrictLessThan(sp.Integer(farther) * at[w], 2 * pi, evaluate=False))
    slope = sp.diff(s, D)
    proof.equal("by diff", slope, -w * sin(D * w), shown=(r"\frac{ds}{dD}", r"-\omega \sin(D\omega)"))
    proof.holds(r"$\frac{ds}{dD} > 0$ at $D = 4$ ($\omega = 1$): the score grows with distance there",
                sp.StrictGreaterThan(slope.subs({**at, D: 4}), 0, evaluate=False), witness={w: 1, D: 4})
