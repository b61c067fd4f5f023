"""Section 7.5: every claim is proved, and each check fails when its kernel is wrong."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest

from symproof import run_claim

IDS = ["scheme.relative_bias", "scheme.same_shape_not_same_function", "ids.left_padding", "ids.packing",
       "ids.kv_cache", "config.reload", "vocab.mapping"]


@pytest.fixture
def section():
    return importlib.import_module("symproof._derivations.sec7_5_consistency")


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_is_proved(claims, claim_id):
    result = run_claim(claims[claim_id])
    assert result.status == "proved", result.reason
    assert result.proof.parts, "a proof must record checked steps"


@pytest.mark.parametrize("claim_id, witness_words", [
    ("ids.left_padding", ["valid token"]),
    ("ids.packing", ["column", "c: 1"]),
    ("ids.kv_cache", ["step", "i: 1"]),
    ("config.reload", ["position"]),
    ("vocab.mapping", ["token", "decoded"]),
    ("scheme.same_shape_not_same_function", ["row", "wq0: 1"]),
    ("scheme.relative_bias", ["u1: 1"]),
])
def test_not_in_general_halves_carry_witnesses(claims, claim_id, witness_words):
    text = run_claim(claims[claim_id]).witness_text
    for word in witness_words:
        assert word in text


def _column_positions(valid):
    return np.arange(np.asarray(valid).shape[-1])


def _running_positions(docs):
    return np.arange(np.asarray(docs).shape[-1])


def _cache_with_renumbered_query(x, weights, positions=None, *, query_positions=None, **rope):
    from symproof.kernels import decode_with_cache
    return decode_with_cache(x, weights, positions, query_positions=np.zeros(len(x), dtype=int), **rope)


def _load_with_origin_one(path):
    from symproof.kernels import load_config
    return dataclasses.replace(load_config(path), index_origin=1)


def _ids_ignoring_the_order(tokens, vocabulary):
    fixed = ["<pad>", "the", "cat", "sat", "on", "mat"]
    return np.array([fixed.index(t) for t in tokens])


@pytest.mark.parametrize("claim_id, name, broken", [
    ("ids.left_padding", "positions_from_mask", _column_positions),
    ("ids.packing", "document_positions", _running_positions),
    ("ids.kv_cache", "decode_with_cache", _cache_with_renumbered_query),
    ("config.reload", "load_config", _load_with_origin_one),
    ("vocab.mapping", "token_ids", _ids_ignoring_the_order),
])
def test_a_wrong_kernel_makes_the_claim_fail(claims, section, monkeypatch, claim_id, name, broken):
    monkeypatch.setattr(section, name, broken)
    result = run_claim(claims[claim_id])
    assert result.status == "refuted", (result.status, result.reason)


def test_a_wrong_attention_mask_is_caught(claims, section, monkeypatch):
    real = section.document_mask
    monkeypatch.setattr(section, "document_mask", lambda docs, causal=True: np.ones_like(real(docs), dtype=bool))
    assert run_claim(claims["ids.packing"]).status == "refuted"


def test_the_offset_proof_fails_for_a_rotation_that_is_not_relative(claims, section, monkeypatch):
    import sympy as sp
    from symproof import rotation

    # angles m^2 w: R_{i+c}^T R_{j+c} rotates by ((j+c)^2 - (i+c)^2) w, which depends on c
    monkeypatch.setattr(section, "rope_matrix",
                        lambda m, freqs: sp.BlockDiagMatrix(*[rotation(m**2 * f) for f in freqs]))
    result = run_claim(claims["ids.packing"])
    assert result.status == "refuted", result.reason
    assert "R((i+c) omega)^T R((j+c) omega)" in result.reason
