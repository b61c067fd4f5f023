"""
# 7.3 Rotary position embedding (RoPE)

## Main definitions
- `R(th) = [[cos th, -sin th], [sin th, cos th]]`, the rotation of one pair.
- `R_m = blockdiag(R(m omega_0), ..., R(m omega_{d_k/2-1}))`, the rotation of a head.

## Main statements
- `rope.orthogonal`: `R(th)^T R(th) = I`, `det R(th) = 1`, `||R(th) z|| = ||z||`.
- `rope.relative`: `R(a)^T R(b) = R(b - a)`.
- `rope.frequency_denominator`: the width in the frequency exponent is part of the definition.

## Notation
`a, b, th` are real angles; `z = (z0, z1)` a real pair.

## Implementation notes
Every step is checked by `prove_equal`: products of 2x2 blocks are compared
entry by entry in the canonical form modulo `cos^2 + sin^2 = 1`.

## References
Chapter section 7.3, equations (7.13), (7.19)-(7.21).
"""

import sympy as sp
from sympy import Matrix, cos, sin

from symproof import claim, frequency, rotation

a, b, th = sp.symbols("a b theta", real=True)
z0, z1 = sp.symbols("z0 z1", real=True)


@claim("rope.orthogonal", section="7.3", title="A rotation is orthogonal with determinant 1",
       statement=r"R(\theta)^T R(\theta) = I,\ \det R(\theta) = 1,\ \|R(\theta) z\| = \|z\|")
def rope_orthogonal(proof):
    R = rotation(th)
    proof.chain(R.T * R, sp.eye(2), "orthogonality") \
        .step("multiply out the entries", Matrix([[cos(th)**2 + sin(th)**2, 0], [0, sin(th)**2 + cos(th)**2]])) \
        .step("cos^2 + sin^2 = 1", sp.eye(2))
    proof.chain(R.det(), 1, "determinant").step("cos^2 + sin^2 = 1", sp.Integer(1))
    z = Matrix([z0, z1])
    rz = R * z
    proof.chain((rz.T * rz)[0], (z.T * z)[0], "norm") \
        .step("expand the squared components",
              z0**2 * (cos(th)**2 + sin(th)**2) + z1**2 * (sin(th)**2 + cos(th)**2)) \
        .step("cos^2 + sin^2 = 1", z0**2 + z1**2)


@claim("rope.relative", section="7.3", title="Relative rotation",
       statement=r"R(a)^T R(b) = R(b - a)")
def rope_relative(proof):
    proof.chain(rotation(a).T * rotation(b), rotation(b - a)) \
        .step("entry products", Matrix([
            [cos(a) * cos(b) + sin(a) * sin(b), -cos(a) * sin(b) + sin(a) * cos(b)],
            [-sin(a) * cos(b) + cos(a) * sin(b), sin(a) * sin(b) + cos(a) * cos(b)],
        ])) \
        .step("angle-difference formulas", rotation(b - a))


@claim("rope.frequency_denominator", section="7.3", kind="not-in-general",
       title="The frequency denominator is part of the definition",
       statement=r"\beta^{-2r/d_r} \ne \beta^{-2r/d_k} \text{ for } r \ge 1,\ d_r < d_k")
def rope_frequency_denominator(proof):
    r = sp.Symbol("r", integer=True, positive=True)
    d_r, d_k = 32, 128
    proof.note(f"Rotated width d_r = {d_r} inside a head of width d_k = {d_k}: same shapes either way.")
    proof.differ("exponent with d_r vs d_k", frequency(r, d_r), frequency(r, d_k), witness={r: 1})
