"""
# 7.2 Absolute and sinusoidal positions

## Main definitions
- `omega_r = beta^(-2r/d)`, `p_{t,2r} = sin(t omega_r)`, `p_{t,2r+1} = cos(t omega_r)`.

## Main statements
- `sin.norm`: `||p_t||^2 = d/2` for every `t`, for symbolic even `d`.

## Notation
`t` a position (integer), `d = 2m` the model width, `r` the pair index.

## Implementation notes
Sums over a symbolic range are evaluated summand first: the summand reduces
to 1 modulo `cos^2 + sin^2 = 1`, then `Sum(1, (r, 0, m-1)) = m`.

## References
Chapter section 7.2, equations (7.4)-(7.8).
"""

import sympy as sp
from sympy import Sum, cos, sin

from symproof import claim, frequency

t = sp.Symbol("t", integer=True, nonnegative=True)
r = sp.Symbol("r", integer=True, nonnegative=True)
m = sp.Symbol("m", integer=True, positive=True)
beta = sp.Symbol("beta", positive=True)


@claim("sin.norm", section="7.2", title="Constant norm of the sinusoidal vector",
       statement=r"\|p_t\|_2^2 = d/2")
def sin_norm(proof):
    d = 2 * m
    w = frequency(r, d, beta)
    norm2 = Sum(sin(t * w) ** 2 + cos(t * w) ** 2, (r, 0, m - 1))
    proof.chain(norm2, d / 2, "symbolic width d = 2m") \
        .step("sin^2 + cos^2 = 1 in each summand", Sum(1, (r, 0, m - 1))) \
        .step("a sum of m ones", m)
