"""
# 7.5 Where position enters, and consistency

## Main definitions
- `s_ij = x_i^T A x_j + b_{j-i}`: a relative bias added to the content score.
- ALiBi: `b_D = -m |D|` with slope `m > 0`.
- Model position of a token: the number of valid tokens before it (from 0),
  not its storage column; in a packed row, restarted at each document.

## Main statements
- `scheme.relative_bias`: `b_{j-i}` is unchanged by a common shift and by the
  content; under RoPE the offset effect is bilinear in the content.
- `scheme.same_shape_not_same_function`: additive sinusoidal and RoPE give
  different scores on the same input and weights.
- `ids.left_padding`, `ids.packing`, `ids.kv_cache`: position ids that
  match the definition give the unpadded / per-document / full outputs; the
  tempting shortcuts do not. Under RoPE a document offset cancels:
  `R_{i+c}^T R_{j+c} = R_i^T R_j`.
- `config.reload`, `vocab.mapping`: saved definitions reload bit for bit;
  an embedding table is only meaningful with its own id order.

## Notation
`i, j` query and key positions, `c` a common offset (a document's start),
`D = j - i`, `w` a frequency, `q, k` 2-vectors (one rotation pair).

## Implementation notes
Identities are exact (`prove_equal`; block-diagonal rotations are compared
block by block, one generic block with a symbolic frequency).  Padding,
packing, KV-cache and reload statements are about kernels: they are computed
checks on one float64 attention layer with a fixed seed.  Outputs that
should agree are compared, exactly, to a rounding allowance fixed before the
run from the float format and the operation count (`LAYER_ALLOWANCE`: the two
computations sum in different orders); the "does not" halves must differ by
more than `2^FAR_ABOVE` allowances, and name the first entry that does.  What
is shown is the allowance, never the residue (it depends on the CPU's BLAS
kernel); reloads must be bit-identical.

## References
Chapter section 7.5 and its closing checklist.
"""

import dataclasses
import os
import tempfile

import numpy as np
import sympy as sp
from sympy import Abs, Matrix, cos, sin
from sympy.matrices.expressions import MatMul, Transpose

from symproof import InvalidInputError, MaskedRowError, claim, rope_matrix, rotation, sinusoidal_vector
from symproof.kernels import (
    RopeConfig, absolute_attention, apply_position_table, attention, causal_mask, decode_with_cache,
    document_mask, document_positions, embedding_lookup, load_config, load_position_table,
    padding_mask, positions_from_mask, rope_attention, rope_position_table, save_config,
    rope_apply, save_position_table, sinusoidal_table, token_ids,
)
from fractions import Fraction

from symproof.kernels import exact_max_gap, first_index_above, power_of_two, rounding_allowance, stable_digits

#: the longest sequence of this section's layers (keys per softmax)
LONGEST = 8
#: their inputs and weights are standard normal with 4 features: every value stays below 2^MAGNITUDE
#: (checked with each comparison)
MAGNITUDE = 4


def _sequence(values) -> str:
    """A sequence of integers as the chapter writes one, ``(0, 3, 1)`` (not a Python list)."""
    return "(" + ", ".join(str(int(v)) for v in values) + ")"


def _operations(length: int, d_model: int = 4, d_k: int = 4) -> int:
    """Rounded operations along the dependency chain of one output entry: the projection (d_model
    products and sums), the rotation (3), the score (d_k products and sums, the scale), the softmax
    over ``length`` keys (subtract, exp, sum, divide) and the weighted sum (length products and sums)."""
    return 2 * d_model + 3 + 2 * d_k + 1 + 4 * length + 1 + 2 * length


#: agreement expected of two float64 computations of the same value in different orders
LAYER_ALLOWANCE = rounding_allowance("float64", _operations(LONGEST), MAGNITUDE)
#: a "does not" half differs by more than 2^FAR_ABOVE allowances somewhere: far above rounding
FAR_ABOVE = 10

i, j, c = sp.symbols("i j c", integer=True)
w = sp.Symbol("omega", positive=True)
q0, q1, k0, k1 = sp.symbols("q0 q1 k0 k1", real=True)
u0, u1, v0, v1 = sp.symbols("u0 u1 v0 v1", real=True)


def _score(q, k, m_q, m_k, freq=w):
    """``(R(m_q w) q)^T (R(m_k w) k)`` for one rotation pair."""
    return ((rotation(m_q * freq) * q).T * (rotation(m_k * freq) * k))[0]


def _layer(seed: int, d_model: int = 4, d_k: int = 4):
    rng = np.random.default_rng(seed)
    return rng, tuple(rng.standard_normal((d_model, d_k)) for _ in range(3))


def _agree(proof, rule, a, b, allowance=LAYER_ALLOWANCE):
    """``|a - b| <= allowance`` everywhere, decided exactly; the output names the allowance only."""
    gap, size = exact_max_gap(a, b)
    fits = size is not None and size <= 2 ** allowance.magnitude
    passed = fits and gap <= allowance.bound
    if passed:
        detail = f"|difference| \u2264 {allowance.text()} everywhere ({allowance.why()})"
    elif not fits:
        detail = (f"a value is not finite or exceeds {power_of_two(allowance.magnitude)}: the allowance "
                  f"{allowance.text()} does not apply")
    else:
        detail = f"|difference| exceeds the allowance {allowance.text()} ({allowance.why()})"
    proof.check(rule, passed, detail, data={"max_abs_difference": None if gap is None else float(gap)})


def _disagree(proof, rule, a, b, what: str, seed: int, allowance=LAYER_ALLOWANCE):
    """``|a - b| > 2^FAR_ABOVE * allowance`` at some entry: the first such ``what`` is the witness, with
    the digits of its difference that no residue within the allowance can move, and the ``seed`` of the
    normal draws the inputs and weights are made of (``numpy.random.default_rng(seed)``), which fixes them."""
    threshold = allowance.bound * 2 ** FAR_ABOVE
    where = first_index_above(a, b, threshold)
    far = f"|difference| > {power_of_two(allowance.exponent + FAR_ABOVE)} ({power_of_two(FAR_ABOVE)} allowances)"
    witness = None
    if where is not None:
        difference = abs(Fraction(float(np.asarray(a)[where])) - Fraction(float(np.asarray(b)[where])))
        digits = stable_digits(difference, allowance.bound)
        witness = ({"inputs: normal draws of seed": seed, what: where[0]}
                   | ({} if digits is None else {"difference": float(digits)}))
    proof.check(rule, where is not None,
                f"{far} first at {what} {where[0]}, far above rounding" if where is not None else
                f"no entry with {far}", witness=witness)


# -- 7.5.1 where position enters -----------------------------------------------------------------


@claim("scheme.relative_bias", section="7.5", title="A relative bias depends on the offset only",
       statement=r"s_{ij} = x_i^T A x_j + b_{j-i};\ \text{ALiBi } b_D = -m|D|;\ "
                 r"\text{RoPE: offset effect bilinear in content}",
       assumptions=("i, j, c integers", "m > 0", r"\omega > 0"),
       uses=("rope.score_expansion",))
def scheme_relative_bias(proof):
    bias = sp.Function("b")
    A = Matrix(2, 2, sp.symbols("a0:4", real=True))
    x, y = Matrix([q0, q1]), Matrix([k0, k1])
    x2, y2 = Matrix([u0, u1]), Matrix([v0, v1])

    def biased(xi, xj, mi, mj, b=bias):
        return (xi.T * A * xj)[0] + b(mj - mi)

    proof.equal("shift both positions by c: (j + c) - (i + c) = j - i",
                biased(x, y, i + c, j + c), biased(x, y, i, j), shown=(r"s_{i+c,\,j+c}", "s_{ij}"))
    proof.equal("the offset effect s(i, j) - s(i, i) is the same for any content",
                biased(x, y, i, j) - biased(x, y, i, i), biased(x2, y2, i, j) - biased(x2, y2, i, i),
                shown=(r"s_{ij}(x) - s_{ii}(x)", r"s_{ij}(x') - s_{ii}(x')"))

    m = sp.Symbol("m", positive=True)
    alibi = sp.Lambda(sp.Symbol("D"), -m * Abs(sp.Symbol("D")))
    proof.note("ALiBi is the instance b_D = -m |D|.")
    proof.equal("ALiBi: shift both positions by c", biased(x, y, i + c, j + c, alibi), biased(x, y, i, j, alibi),
                shown=(r"s_{i+c,\,j+c}", "s_{ij}"))
    proof.equal("ALiBi is symmetric in the offset", alibi(i - j), alibi(j - i), shown=("b_{i-j}", "b_{j-i}"))
    proof.holds("ALiBi never rewards distance", sp.LessThan(alibi(j - i), 0, evaluate=False))

    q, k = Matrix([q0, q1]), Matrix([k0, k1])
    effect = _score(q, k, i, j) - _score(q, k, i, i)
    D = j - i
    proof.chain(effect, (q0 * k0 + q1 * k1) * (cos(D * w) - 1) + (q1 * k0 - q0 * k1) * sin(D * w),
                r"RoPE offset effect: $s_{ij} - s_{ii} = (q_0k_0 + q_1k_1)(\cos((j-i)\omega) - 1) + (q_1k_0 - q_0k_1)\sin((j-i)\omega)$",
                shown=r"s_{ij} - s_{ii}") \
        .step("R(i omega)^T R(j omega) = R((j-i) omega), and R(0) = I",
              (q.T * rotation(D * w) * k)[0] - q0 * k0 - q1 * k1, shown=r"q^T R((j-i)\omega) k - q^T k") \
        .step("collect the content products", (q0 * k0 + q1 * k1) * (cos(D * w) - 1)
              + (q1 * k0 - q0 * k1) * sin(D * w),
              shown=r"(q_0k_0 + q_1k_1)(\cos((j-i)\omega) - 1) + (q_1k_0 - q_0k_1)\sin((j-i)\omega)")
    proof.equal("RoPE offset effect scales with the content: q -> 2q doubles it",
                _score(2 * q, k, i, j) - _score(2 * q, k, i, i), 2 * effect)
    u, v = Matrix([u0, u1]), Matrix([v0, v1])
    proof.differ("same offset, different contents, different RoPE offset effect",
                 effect, _score(u, v, i, j) - _score(u, v, i, i),
                 witness={q0: 1, q1: 0, k0: 1, k1: 0, u0: 0, u1: 1, v0: 1, v1: 0, i: 0, j: 1, w: 1})


@claim("scheme.same_shape_not_same_function", section="7.5", kind="not-in-general",
       title="Same shapes, different function",
       statement=r"(W_Q(x_i + p_i))^T W_K(x_j + p_j) \ne (R_i W_Q x_i)^T (R_j W_K x_j)",
       uses=("sin.score_expansion", "rope.inner_product"))
def scheme_same_shape_not_same_function(proof):
    WQ = Matrix(2, 2, sp.symbols("wq0:4", real=True))
    WK = Matrix(2, 2, sp.symbols("wk0:4", real=True))
    x, y = Matrix([q0, q1]), Matrix([k0, k1])
    additive = ((WQ * (x + sinusoidal_vector(i, [1]))).T * (WK * (y + sinusoidal_vector(j, [1]))))[0]
    rotary = _score(WQ * x, WK * y, i, j, freq=1)
    identity = dict(zip(WQ, (1, 0, 0, 1))) | dict(zip(WK, (1, 0, 0, 1)))
    proof.note("One pair, frequency 1; both schemes map (x_i, x_j, i, j, W_Q, W_K) to one score.")
    proof.differ("additive sinusoidal vs RoPE, same input and weights", additive, rotary,
                 witness={**identity, q0: 1, q1: 0, k0: 1, k1: 0, i: 0, j: 1})

    rng, weights = _layer(seed=1)
    length = 4
    x_num = rng.standard_normal((length, 4))
    table = sinusoidal_table(length, 4)
    positions = np.arange(length)
    with_sinusoidal = absolute_attention(x_num, weights, positions, table, causal_mask(length))
    with_rope = rope_attention(x_num, weights, positions, causal_mask(length))
    proof.check("both layers give outputs of the same shape", with_sinusoidal.shape == with_rope.shape,
                f"shape {with_sinusoidal.shape} and {with_rope.shape}")
    _disagree(proof, "the outputs differ", with_sinusoidal, with_rope, "row", seed=1)


# -- 7.5.2 position ids ---------------------------------------------------------------------------


@claim("ids.left_padding", section="7.5", title="Positions from the validity mask, not the column",
       statement=r"\mathrm{pos}_t = \#\{s < t : \mathrm{valid}_s\}",
       uses=("rope.shift_invariance",))
def ids_left_padding(proof):
    rng, weights = _layer(seed=2)
    length, n_pad = 5, 2
    tokens = rng.standard_normal((length - n_pad, 4))
    padded = np.concatenate([rng.standard_normal((n_pad, 4)), tokens])  # pad embeddings are junk on purpose
    valid = np.arange(length) >= n_pad
    positions = positions_from_mask(valid)
    proof.check("valid tokens get positions 0, 1, 2 whatever their column",
                np.array_equal(positions[valid], np.arange(length - n_pad)),
                f"positions {_sequence(positions)} for valid {_sequence(valid.astype(int))}")
    proof.raises("a padding query with only padding before it has no key", MaskedRowError,
                 attention, padded, padded, padded, causal_mask(length) & valid[None, :])

    mask = padding_mask(valid)
    table = rng.standard_normal((8, 4))
    models = {
        "RoPE": lambda x, pos, msk: rope_attention(x, weights, pos, msk),
        "learned absolute": lambda x, pos, msk: absolute_attention(x, weights, pos, table, msk),
    }
    for name, model in models.items():
        alone = model(tokens, np.arange(length - n_pad), causal_mask(length - n_pad))
        _agree(proof, f"{name}: padded outputs equal unpadded outputs (positions from the mask)",
               model(padded, positions, mask)[valid], alone)
    alone = models["learned absolute"](tokens, np.arange(length - n_pad), causal_mask(length - n_pad))
    columns = models["learned absolute"](padded, np.arange(length), mask)[valid]
    _disagree(proof, "learned absolute: column indices as positions change the outputs", columns, alone,
              "valid token", seed=2)
    proof.note("Under pure RoPE a common shift of all positions cancels in exact arithmetic "
               "(see ids.packing), so the column shortcut is exposed by absolute positions.")


@claim("ids.packing", section="7.5", title="Packed documents need reset positions and a document mask",
       statement=r"R_{i+c}^T R_{j+c} = R_i^T R_j;\ "
                 r"\text{reset + document mask} = \text{each document alone}",
       uses=("attn.masked_equivariance", "ids.left_padding"))
def ids_packing(proof):
    ws = sp.symbols("w0:4", positive=True)
    offset = MatMul(Transpose(rope_matrix(i + c, ws)), rope_matrix(j + c, ws))
    proof.chain(offset, MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws)), "RoPE, d_k = 8",
                shown=r"R_{i+c}^T R_{j+c}") \
        .step("blockwise R((i+c) omega)^T R((j+c) omega) = R((j-i) omega)", rope_matrix(j - i, ws), shown=r"R_{j-i}") \
        .step("blockwise R((j-i) omega) = R(i omega)^T R(j omega)", MatMul(Transpose(rope_matrix(i, ws)), rope_matrix(j, ws)),
              shown=r"R_i^T R_j")
    q, k = Matrix([q0, q1]), Matrix([k0, k1])
    proof.equal("RoPE: a within-document score ignores the document offset c",
                _score(q, k, i + c, j + c), _score(q, k, i, j))

    def absolute(m_q, m_k):  # additive sinusoidal, one pair of frequency 1, A = I
        return ((q + sinusoidal_vector(m_q, [1])).T * (k + sinusoidal_vector(m_k, [1])))[0]

    proof.differ("additive sinusoidal: the document offset changes the score",
                 absolute(i + c, j + c), absolute(i, j),
                 witness={q0: 1, q1: 0, k0: 0, k1: 0, i: 0, j: 0, c: 1})

    rng, weights = _layer(seed=3)
    lengths = (3, 4)
    docs = np.repeat(np.arange(len(lengths)), lengths)
    row = rng.standard_normal((len(docs), 4))
    table = rng.standard_normal((len(docs), 4))
    starts = np.cumsum((0,) + lengths[:-1])
    running, reset = np.arange(len(docs)), document_positions(docs)
    proof.check("the reset positions restart at each document",
                np.array_equal(reset, np.concatenate([np.arange(n) for n in lengths])),
                f"documents {_sequence(docs)} -> positions {_sequence(reset)}")
    second = int(starts[1])
    proof.check("a document mask alone keeps the running positions", running[second] != reset[second],
                f"first token of document 1 at column {second}: position {running[second]}, not 0",
                witness={"inputs: document lengths": lengths, "column": second, "position": int(running[second]),
                         "difference": int(running[second] - reset[second])})
    models = {
        "RoPE": lambda x_, pos, msk: rope_attention(x_, weights, pos, msk),
        "learned absolute": lambda x_, pos, msk: absolute_attention(x_, weights, pos, table, msk),
    }
    for name, model in models.items():
        alone = np.concatenate([model(row[s:s + n], np.arange(n), causal_mask(n))
                                for s, n in zip(starts, lengths)])
        _agree(proof, f"{name}: reset positions + document mask = each document alone",
               model(row, reset, document_mask(docs)), alone)
        if name == "RoPE":
            _disagree(proof, "RoPE: reset positions alone still attend across documents",
                      model(row, reset, causal_mask(len(docs))), alone, "column", seed=3)
            _agree(proof, "RoPE: document mask alone = each document alone (the offset cancels)",
                   model(row, running, document_mask(docs)), alone)
        else:
            _disagree(proof, "learned absolute: document mask alone reads the wrong position rows",
                      model(row, running, document_mask(docs)), alone, "column", seed=3)


@claim("ids.kv_cache", section="7.5", title="KV-cache decoding rotates each token at its true position",
       statement=r"\text{cached } R_s k_s,\ \text{query } R_t q_t \;\Rightarrow\; \text{incremental} = \text{full}",
       uses=("rope.inner_product",))
def ids_kv_cache(proof):
    q, k = Matrix([q0, q1]), Matrix([k0, k1])
    s = sp.Symbol("s", integer=True)
    proof.equal("true position: the cached score is the full computation's score q^T R((s-t) omega) k",
                _score(q, k, i, s), (q.T * rotation((s - i) * w) * k)[0])
    proof.differ("query renumbered to 0: the score sees s instead of s - t",
                 _score(q, k, 0, s), _score(q, k, i, s),
                 witness={q0: 1, q1: 0, k0: 1, k1: 0, s: 0, i: 1, w: 1})

    rng, weights = _layer(seed=4)
    length = 6
    x = rng.standard_normal((length, 4))
    full = rope_attention(x, weights, np.arange(length), causal_mask(length))
    _agree(proof, "incremental decoding = full causal computation", decode_with_cache(x, weights), full)
    _disagree(proof, "query renumbered to 0 at every step differs",
              decode_with_cache(x, weights, query_positions=np.zeros(length, dtype=int)), full, "step", seed=4)


# -- 7.5.3 definitions that travel -----------------------------------------------------------------


#: config.reload rotates 6 x 8 standard-normal values: each stays below 2^RELOAD_MAGNITUDE (checked)
RELOAD_MAGNITUDE = 3


@claim("config.reload", section="7.5", title="A saved position function reloads bit for bit",
       statement=r"\mathrm{load}(\mathrm{save}(f)) = f \text{ bit for bit}",
       uses=("rope.frequency_denominator",))
def config_reload(proof):
    rng = np.random.default_rng(5)
    length = 6
    configs = (
        RopeConfig(head_dim=8),
        RopeConfig(head_dim=8, rotary_dim=4, denominator=8, pairing="half", position_scale=2.0,
                   base=500000.0, dtype="float32"),
    )
    x = rng.standard_normal((length, 8))
    positions = np.arange(length)
    with tempfile.TemporaryDirectory(prefix="symproof-reload-") as folder:
        for n, config in enumerate(configs):
            label = f"config {n} ({config.pairing}, rotary {config.rotary_dim}/{config.head_dim}, {config.dtype})"
            before = rope_apply(x, positions, config=config)
            path = os.path.join(folder, f"rope-{n}.json")
            save_config(config, path)
            reloaded = load_config(path)
            after = rope_apply(x, positions, config=reloaded)
            proof.check(f"{label}: configuration only, reloaded outputs are bit-identical",
                        reloaded == config and before.dtype == after.dtype and before.tobytes() == after.tobytes(),
                        f"{before.size} values of dtype {before.dtype}, compared as bytes")

            table = rope_position_table(length, config)
            table_path = os.path.join(folder, f"rope-{n}-table.json")
            save_position_table(table_path, config, table)
            table_config, table_back = load_position_table(table_path)
            from_table = apply_position_table(x, positions, table)
            from_reloaded = apply_position_table(x, positions, table_back)
            proof.check(f"{label}: full table, reloaded outputs are bit-identical",
                        table_config == config and from_table.tobytes() == from_reloaded.tobytes(),
                        f"table {table.shape} {table.dtype}; outputs compared as bytes")
            # one rotation: a product and a sum per entry, and the table's own cos/sin
            _agree(proof, f"{label}: the table is the same position function", from_table, before,
                   rounding_allowance(str(before.dtype), 4, RELOAD_MAGNITUDE))

        shifted = dataclasses.replace(configs[0], index_origin=1)
        _disagree(proof, "index origin 1 instead of 0 changes the outputs",
                  rope_apply(x, positions, config=shifted), rope_apply(x, positions, config=configs[0]),
                  "position", seed=5)


@claim("vocab.mapping", section="7.5", kind="not-in-general", title="An embedding table has one id order",
       statement=r"E[\mathrm{id}_B(\tau)] \ne E[\mathrm{id}_A(\tau)];\ \text{tied } E \text{ decodes with the same order}",
       uses=("abs.learned_additive",))
def vocab_mapping(proof):
    model_order = ["<pad>", "the", "cat", "sat", "on", "mat"]
    other_order = sorted(model_order)
    rng = np.random.default_rng(6)
    size = len(model_order)
    table = 6 * np.eye(size, dtype=np.int64) + rng.integers(-1, 2, (size, size))
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    right = embedding_lookup(table, token_ids(tokens, model_order))
    wrong = embedding_lookup(table, token_ids(tokens, other_order))
    bad = [n for n in range(len(tokens)) if not np.array_equal(right[n], wrong[n])]
    first = bad[0] if bad else None
    proof.check("another tokenizer's ids read other tokens' vectors", bool(bad),
                f"{len(bad)} of {len(tokens)} tokens read a wrong row (exact integer table)",
                witness=None if first is None else {
                    "token": tokens[first], "model id": model_order.index(tokens[first]),
                    "other id": other_order.index(tokens[first])})

    def decode(vectors, order):
        return [order[n] for n in np.argmax(vectors @ table.T, axis=-1)]  # tied output embedding

    proof.check("tied embeddings, one id order: every token decodes to itself",
                decode(right, model_order) == tokens, f"decoded {decode(right, model_order)}")
    mixed = decode(right, other_order)
    miss = next((n for n, (a, b) in enumerate(zip(mixed, tokens)) if a != b), None)
    proof.check("tied embeddings read through two orders decode other tokens", miss is not None,
                f"decoded {mixed} for {tokens}",
                witness=None if miss is None else {"token": tokens[miss], "decoded": mixed[miss]})
    proof.raises("an id past the vocabulary is refused", InvalidInputError, embedding_lookup, table, [size])
