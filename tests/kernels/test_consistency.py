"""The consistency helpers: lookups, attention, position ids, KV cache, precision table."""

from __future__ import annotations

import numpy as np
import pytest

from symproof import InvalidInputError, MaskedRowError, PositionOutOfRangeError
from symproof.kernels import (
    attention, causal_mask, decode_with_cache, document_mask, document_positions, embedding_lookup,
    finite_precision_table, learned_position_lookup, load_position_table, padding_mask,
    positions_from_mask, rope_attention, round_to_bfloat16, save_position_table, token_ids,
)
from symproof.kernels import RopeConfig
from symproof.kernels._consistency import rope_position_table

TABLE = np.arange(12.0).reshape(4, 3)  # Tmax = 4


# -- lookups ---------------------------------------------------------------------------------------

def test_learned_lookup_reads_rows():
    assert np.array_equal(learned_position_lookup(TABLE, [3, 0]), TABLE[[3, 0]])
    assert np.array_equal(learned_position_lookup(TABLE, np.array([2.0])), TABLE[[2]])


@pytest.mark.parametrize("positions, error, words", [
    ([4], PositionOutOfRangeError, ["position 4", "past the last row 3", "Tmax = 4", "Tmax: 4"]),
    ([0, 1, 9], PositionOutOfRangeError, ["position 9 at index [2]", "Tmax = 4"]),
    ([-1], PositionOutOfRangeError, ["position -1", "negative", "Tmax = 4"]),
    ([2.5], InvalidInputError, ["positions must be integers", "2.5"]),
    ([np.nan], InvalidInputError, ["positions must be integers"]),
    ([True], InvalidInputError, ["dtype bool"]),
    (["a"], InvalidInputError, ["must be integers"]),
])
def test_learned_lookup_refuses_positions_it_has_no_row_for(positions, error, words):
    with pytest.raises(error) as info:
        learned_position_lookup(TABLE, positions)
    for word in words:
        assert word in str(info.value)


def test_learned_lookup_refuses_a_table_that_is_not_2d():
    with pytest.raises(InvalidInputError, match=r"2-D array .* shape \(4,\)"):
        learned_position_lookup(np.zeros(4), [0])


def test_embedding_lookup_errors_name_the_id_and_vocabulary():
    with pytest.raises(InvalidInputError, match=r"id 4 .* vocab_size = 4") as info:
        embedding_lookup(TABLE, [4])
    assert not isinstance(info.value, PositionOutOfRangeError)


@pytest.mark.parametrize("tokens, vocabulary, expected", [
    (["b", "a"], ["a", "b", "c"], [1, 0]),
    (["b", "a"], ["c", "b", "a"], [1, 2]),
])
def test_token_ids_follow_the_vocabulary_order(tokens, vocabulary, expected):
    assert token_ids(tokens, vocabulary).tolist() == expected


@pytest.mark.parametrize("tokens, vocabulary, message", [
    (["z"], ["a", "b"], "token 'z' is not in the vocabulary of 2 tokens"),
    (["a"], ["a", "b", "a"], "lists token 'a' twice"),
])
def test_token_ids_refuse_unknown_tokens_and_ambiguous_orders(tokens, vocabulary, message):
    with pytest.raises(InvalidInputError, match=message):
        token_ids(tokens, vocabulary)


# -- attention ----------------------------------------------------------------------------------

def test_attention_with_equal_scores_averages_the_values():
    v = np.array([[1.0, 0.0], [3.0, 2.0], [5.0, 4.0]])
    out = attention(np.zeros((3, 2)), np.zeros((3, 2)), v, causal_mask(3))
    assert np.allclose(out, [[1, 0], [2, 1], [3, 2]], rtol=0, atol=1e-15)


def test_attention_follows_a_dominant_score():
    q = np.array([[50.0, 0.0]])
    k = np.array([[1.0, 0.0], [-1.0, 0.0]])
    v = np.array([[7.0], [-7.0]])
    assert attention(q, k, v)[0, 0] == pytest.approx(7.0, abs=1e-12)
    assert attention(q, k, v, np.array([[False, True]]))[0, 0] == -7.0


def test_an_all_masked_row_is_named_not_turned_into_nan():
    mask = np.array([[True, False], [False, False]])
    with pytest.raises(MaskedRowError, match=r"attention row 1 has no allowed key") as info:
        attention(np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), mask)
    assert info.value.context["row"] == 1


def test_an_all_masked_row_in_a_batch_names_its_batch_index():
    mask = np.ones((2, 2, 2), dtype=bool)
    mask[1, 0] = False
    with pytest.raises(MaskedRowError, match=r"row 0 .*\[row: 0; batch: \(1,\)\]"):
        attention(np.ones((2, 2, 2)), np.ones((2, 2, 2)), np.ones((2, 2, 2)), mask)


@pytest.mark.parametrize("q, k, v, mask, message", [
    (np.ones((2, 3)), np.ones((2, 2)), np.ones((2, 2)), None, "same width"),
    (np.ones((2, 2)), np.ones((3, 2)), np.ones((2, 2)), None, "same number of positions"),
    (np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), "mask must be boolean"),
    (np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)), np.ones((3, 3), dtype=bool), "does not broadcast"),
    (np.full((2, 2), np.nan), np.ones((2, 2)), np.ones((2, 2)), None, "q must be finite"),
    (np.ones(2), np.ones((2, 2)), np.ones((2, 2)), None, "at least 2-D"),
])
def test_attention_input_errors(q, k, v, mask, message):
    with pytest.raises(InvalidInputError, match=message):
        attention(q, k, v, mask)


# -- position ids -------------------------------------------------------------------------------

@pytest.mark.parametrize("valid, expected", [
    ([0, 0, 1, 1, 1], [0, 0, 0, 1, 2]),  # left padding: first real token at position 0
    ([1, 1, 1, 0, 0], [0, 1, 2, 3, 3]),  # right padding leaves the real tokens at their columns
    ([1, 0, 1, 1], [0, 1, 1, 2]),  # a hole is not counted
    ([[0, 1], [1, 1]], [[0, 0], [0, 1]]),
])
def test_positions_from_mask_count_valid_tokens_before(valid, expected):
    assert positions_from_mask(np.array(valid)).tolist() == expected
    assert positions_from_mask(np.array(valid, dtype=bool)).tolist() == expected


def test_positions_from_mask_refuses_non_boolean_masks():
    with pytest.raises(InvalidInputError, match="valid must be boolean"):
        positions_from_mask(np.array([0, 2, 1]))


def test_padding_mask_lets_padding_queries_see_only_themselves():
    mask = padding_mask(np.array([False, True, True]))
    assert mask.tolist() == [[True, False, False], [False, True, False], [False, True, True]]


@pytest.mark.parametrize("docs, expected", [
    ([0, 0, 1, 1, 1], [0, 1, 0, 1, 2]),
    ([5, 2, 2, 7], [0, 0, 1, 0]),
    ([[0, 1], [3, 3]], [[0, 0], [0, 1]]),
])
def test_document_positions_restart_per_document(docs, expected):
    assert document_positions(np.array(docs)).tolist() == expected


def test_document_mask_is_block_diagonal_and_causal():
    mask = document_mask(np.array([0, 0, 1]))
    assert mask.tolist() == [[True, False, False], [True, True, False], [False, False, True]]
    assert document_mask(np.array([0, 0, 1]), causal=False)[0, 1]


def test_a_document_split_in_two_runs_is_refused():
    with pytest.raises(InvalidInputError, match="document 0 appears in two separate runs of row 0"):
        document_positions(np.array([0, 1, 0]))


# -- KV cache -------------------------------------------------------------------------------------

def _layer(seed=0, length=5):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((length, 4)), tuple(rng.standard_normal((4, 4)) for _ in range(3))


def test_decoding_with_a_cache_equals_the_full_causal_computation():
    x, weights = _layer()
    full = rope_attention(x, weights, np.arange(5), causal_mask(5))
    assert np.max(np.abs(decode_with_cache(x, weights) - full)) < 1e-12


def test_decoding_with_a_renumbered_query_differs_after_the_first_step():
    x, weights = _layer()
    full = rope_attention(x, weights, np.arange(5), causal_mask(5))
    wrong = decode_with_cache(x, weights, query_positions=np.zeros(5, dtype=int))
    gaps = np.max(np.abs(wrong - full), axis=1)
    assert gaps[0] < 1e-12 and np.all(gaps[1:] > 1e-6)


def test_decoding_positions_must_match_the_tokens():
    x, weights = _layer()
    with pytest.raises(InvalidInputError, match=r"query_positions must have shape \(5,\)"):
        decode_with_cache(x, weights, query_positions=[0, 1])


# -- saved tables ---------------------------------------------------------------------------------

def test_a_saved_position_table_reloads_bit_for_bit(tmp_path):
    config = RopeConfig(head_dim=4)
    table = rope_position_table(3, config)
    save_position_table(tmp_path / "t.json", config, table)
    back_config, back = load_position_table(tmp_path / "t.json")
    assert back_config == config and back.tobytes() == table.tobytes()
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]  # no temporary file left behind


def test_a_malformed_table_file_is_refused(tmp_path):
    (tmp_path / "t.json").write_text('{"config": {"head_dim": 4}}')
    with pytest.raises(InvalidInputError, match="not a saved position table"):
        load_position_table(tmp_path / "t.json")


# -- finite precision ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, rounded", [
    (1.0, 1.0),
    (1 + 2**-8, 1.0),  # tie: the even neighbour 1.0
    (1 + 3 * 2**-8, 1 + 2**-6),  # tie: the even neighbour is the upper one
    (1 + 2**-8 + 2**-20, 1 + 2**-7),  # just above the tie rounds up
    (257.0, 256.0),
    (259.0, 260.0),
    (-3.0, -3.0),
    (np.inf, np.inf),
])
def test_bfloat16_rounds_to_nearest_even(value, rounded):
    assert round_to_bfloat16(np.float32(value)) == np.float32(rounded)


def test_bfloat16_keeps_nan():
    assert np.isnan(round_to_bfloat16(np.float32(np.nan)))


def _vectors16(t, d=64):
    omega = (10000.0 ** (-np.arange(0, d, 2) / d)).astype(np.float16)
    angle = np.float16(t) * omega
    return np.concatenate([np.sin(angle), np.cos(angle)])


def test_precision_table_first_repeat_is_a_real_repeat_and_the_first():
    (row,) = finite_precision_table(d=64, dtypes=("float16",))
    t = row["first_equal_t"]
    assert np.array_equal(_vectors16(t), _vectors16(t + 1))
    assert all(not np.array_equal(_vectors16(s), _vectors16(s + 1)) for s in range(t - 50, t))


def test_precision_table_orders_the_dtypes_by_resolution():
    rows = {row["dtype"]: row for row in finite_precision_table(d=64, positions=(10, 1000))}
    firsts = [rows[name]["first_equal_t"] for name in ("bfloat16", "float16", "float32", "float64")]
    assert firsts == sorted(firsts) and len(set(firsts)) == 4
    for name in ("float32", "float16", "bfloat16"):
        assert rows[name]["phase_error"][1] > rows[name]["phase_error"][0] > 0
    assert rows["float64"]["phase_error"][1] < rows["float32"]["phase_error"][1]


def test_precision_table_marks_float16_overflow_as_infinite_error():
    (row,) = finite_precision_table(d=8, dtypes=("float16",), positions=(100_000,))
    assert row["phase_error"] == [float("inf")]


@pytest.mark.parametrize("kwargs, message", [
    ({"dtypes": ("float8",)}, r"unknown dtype\(s\) \['float8'\]"),
    ({"d": 7}, "d must be an even integer"),
    ({"positions": (-1,)}, "non-negative integers"),
    ({"base": 1.0}, "base must be > 1"),
])
def test_precision_table_input_errors(kwargs, message):
    with pytest.raises(InvalidInputError, match=message):
        finite_precision_table(**kwargs)
