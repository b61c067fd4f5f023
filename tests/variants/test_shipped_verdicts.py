"""Every shipped variant gets the verdicts its mathematics dictates.

The expectations are written from the mathematics (comments say why), not
copied from a run: a wrong prover or a wrong description makes them fail.
"""

import pytest

from symproof.variants import check_variant, load_variant, shipped_variants

Y, N = "proved", "refuted"

EXPECTED = {
    # m -> m/s is linear, so R(i w/s)^T R(j w/s) = R((j-i) w/s): everything RoPE has, and it is
    # RoPE at frequencies w/s
    "linear_interpolation": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, equivalence=Y),
    # only the frequencies change: every RoPE property survives
    "ntk_scaled_base": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    "llama3": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # the factor 0.1 ln 16 + 1 != 1 scales q and k: norms and the D = 0 score change, offsets still rule
    "yarn": dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=N),
    # zeta^(i/B) zeta^(-j/B) = zeta^((i-j)/B): offset-only, but |zeta^(m/B) q| != |q|; at i = j the
    # factors cancel
    "xpos": dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # -m |j - i| is a function of the offset, even in it, and 0 at offset 0
    "alibi": dict(relative=Y, shift=Y, direction=N, plain_at_zero=Y, causal_relative=Y),
    # slope * j is slope * i away from -slope * (i - j): a per-row constant, so not relative as a raw bias
    # (b(1, 0) = 0 but b(0, -1) = -slope), yet equal under a causal softmax; b(0, D) = slope D is odd in D
    "bloom_alibi": dict(relative=N, shift=N, direction=Y, plain_at_zero=N, causal_relative=Y, equivalence=Y),
    # within a call plain RoPE at frequencies omega(seq_len); a key cached at seq_len = L is rotated at the
    # old base, and the base changes once seq_len > L
    "dynamic_ntk": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, cache=N),
    # per-pair divisors keep every pair a rotation; the attention factor != 1 scales norms and the
    # offset-0 score; short and long factors differ, so a key cached at 4096 is stale at 8192
    "longrope_switch": dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=N, cache=N),
    "partial_rotation": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    "half_split": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # sum_r cos((j - i) w_r) is even in the offset: direction is invisible to p_i^T p_j
    "t2t_concatenated": dict(constant_norm=Y, shift_structure=Y, relative=Y, shift=Y, direction=N, equivalence=Y),
    "axial_2d": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # [[cos, sin], [sin, cos]] has determinant cos 2x: not orthogonal, not a group action
    "broken_sign": dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N),
    # sum_k cos((j - i) w_k) - 64: a function of the offset, even in it (cos), and cos(0) * 64 - 64 = 0
    "sandwich": dict(relative=Y, shift=Y, direction=N, plain_at_zero=Y, causal_relative=Y),
    # a table of the bucket of j - i: offset-only; buckets 16+ are for keys after the query, so the sign
    # shows (learned(1) != learned(17)); offset 0 is bucket 0, whose learned value 0.5 != 0
    "t5_buckets": dict(relative=Y, shift=Y, direction=Y, plain_at_zero=N, causal_relative=Y),
    # -slope log(1 + (h + 1)|j - i|): offset-only and even, log(1) = 0 at offset 0, for every head
    "kerple_log": dict(relative=Y, shift=Y, direction=N, plain_at_zero=Y, causal_relative=Y),
    # R(a + phi_r)^T R(b + phi_r) = R(b - a): the phases cancel, everything RoPE has survives
    "phase_offset": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # every rotation is the identity: the plain product everywhere, and no sign of the offset
    "nope": dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y),
    # pair r rotates by omega_r . m, linear in the position vector: R(omega_r . i)^T R(omega_r . j) =
    # R(omega_r . (j - i)), so everything RoPE has survives, with offsets as vectors
    "rope_mixed": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # a table of clip(j - i, -4, 4): offset-only; learned(5) = 0.2 != learned(3) = 0.1 shows the sign;
    # learned(4) = 0.4 != 0 at offset 0
    "shaw": dict(relative=Y, shift=Y, direction=Y, plain_at_zero=N, causal_relative=Y),
    # min(i - j, w) is a function of the offset; the query's rotation keeps norms; min(0, w) = 0.
    # Causal: direction does not apply (listed as n/a, not among the verdicts)
    "rerope": dict(norm=Y, relative=Y, shift=Y, plain_at_zero=Y),
    # grouped positions floor(i/g) - floor(j/g) depend on where i and j sit in their groups
    "self_extend": dict(norm=Y, relative=N, shift=N, plain_at_zero=Y),
    # past the key's chunk the relative position reads j mod s, where the key sits in its chunk; in the
    # key's chunk it is (i mod s) - (j mod s) = i - j, 0 on the diagonal
    "dual_chunk": dict(norm=Y, relative=N, shift=N, plain_at_zero=Y),
    # exp of skew-symmetric generators is orthogonal; commuting ones give exp(-X_i) exp(X_j) = exp(X_j - X_i),
    # a function of the offset vector; A_y != 0, so R(D) != R(-D) = R(D)^T somewhere
    "string_2d": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # skew-symmetric but [A_y, A_x] != 0: exp(-A_y) exp(A_x) != exp(A_x - A_y) (Baker-Campbell-Hausdorff: they
    # differ by -[A_y, A_x]/2 at second order), so offsets alone do not fix the score; norms are still kept
    "liere_2d": dict(norm=Y, relative=N, shift=N, direction=Y, plain_at_zero=Y),
    # a table of the offset vector (dy, dx) alone: relative and shift-invariant; entries of (dy, dx) and (-dy, -dx)
    # differ, so the direction shows; the entry of offset (0, 0) is not 0
    "swin_window": dict(relative=Y, shift=Y, direction=Y, plain_at_zero=N),
    # gamma_h^i gamma_h^(-j) = gamma_h^(i - j) in every head: offset-only, the sine shows the sign, and at
    # i = j the factors cancel; but gamma_h^m != 1 scales the norms
    "retnet": dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # RoPE's score plus -slope_h |j - i|: both offset-only, the bias even and 0 at offset 0, RoPE's sine odd
    "rope_alibi": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y),
    # a table of 16 random rows (width 8): their norms differ, so neither the norm nor p_i^T p_j depends on
    # the offset alone; 15 successive steps in 8 dimensions leave the rank of [p_t | p_(t+1)] above that of
    # p_t (no one matrix steps every row); a dot product is symmetric; row 0 is not sin 0, cos 0 = (0, 1, ...)
    "learned_absolute": dict(constant_norm=N, shift_structure=N, relative=N, shift=N, direction=N, equivalence=N),
    # alpha PE(t) with a constant alpha: alpha^2 (sin^2 + cos^2) is constant, alpha cancels from the shift
    # structure and enters every product as alpha^2; cos is even; alpha = 1/4 != 1, so not the table itself
    "scaled_sinusoidal": dict(constant_norm=Y, shift_structure=Y, relative=Y, shift=Y, direction=N, equivalence=N),
    # RoPE's verdicts for the score; the mask keeps the first S keys at every offset, so shifting a pair past
    # them hides a key the unshifted pair sees; j <= i hides every later key; the diagonal is kept
    "streaming_llm": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y,
                          mask_relative=N, mask_causal=Y, mask_self=Y),
    # j <= i and i - j < W read only the offset: every mask property holds
    "sliding_window": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y,
                           mask_relative=Y, mask_causal=Y, mask_self=Y),
}


def test_every_shipped_variant_has_expectations():
    assert set(shipped_variants()) == set(EXPECTED)


@pytest.fixture(scope="module")
def results():
    out = {}
    for name, path in shipped_variants().items():
        out[name] = {r.claim.name: r for r in check_variant(load_variant(path))}
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_verdicts(results, name):
    got = {key: r.status for key, r in results[name].items() if key not in ("kernel", "decay")}
    assert got == EXPECTED[name], {k: results[name][k].reason for k in got if got[k] != EXPECTED[name].get(k)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_generated_kernel_agrees_with_definition(results, name):
    kernel = results[name]["kernel"]
    # the files agree with the definition at the probed positions: evidence, shown as tested (a pass)
    assert kernel.status == "proved" and kernel.verdict == "tested", kernel.reason


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_refutations_carry_exact_witnesses_of_the_scheme(results, name):
    for key, r in results[name].items():
        if r.status == "refuted" and r.claim.kind == "identity" and key not in ("kernel", "decay"):
            assert r.witnesses, f"{name}.{key} refuted without a witness"
            assert "omega" not in r.witness_text, "witness must fix the scheme's own frequency"


def test_broken_sign_norm_witness_is_a_real_counterexample(results):
    import sympy as sp

    from symproof.variants._check import generic_symbols

    part = next(p for p in results["broken_sign"]["norm"].proof.parts if p.status == "refuted")
    s = generic_symbols()
    residual = (part.before - part.after).xreplace(part.witness)
    assert any(sp.nsimplify(e) != 0 for e in residual)
    assert set(part.witness) >= {s["m"], s["q0"], s["q1"]}
