"""Verdicts and named differences for user-style implementations, NumPy and PyTorch (table-driven).

Each row: an implementation style with its parameters, the declared model,
the verdict and the exact set of ``what`` the audit must name.  Every row
runs in both libraries; the implementation is a file in ``tmp_path``, loaded
the way ``symproof audit FILE.py:FUNCTION`` loads it.
"""

from __future__ import annotations

import numpy as np
import pytest

from symproof import Variant, relayout_pairing
from symproof import audit
from symproof._audit import WHATS, load_function, load_like

from audit_implementations import LIBRARIES, RIGHT, TORCH_ONLY, WRONG, library_params


def _audit_case(write_impl, model_file, library, style, params, model):
    params = library_params(library, params)
    path = write_impl(library, style, **params)
    fn = load_function(f"{path}:apply_rope")
    return audit(fn, model_file(model), name=f"{path.name}:apply_rope")


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", RIGHT, ids=[c[0] for c in RIGHT])
def test_right_implementations_are_recognised(case, library, write_impl, model_file):
    name, style, params, model, verdict, whats = case
    result = _audit_case(write_impl, model_file, library, style, params, model)
    assert result.backend == library
    assert result.verdict == verdict, result.summary()
    assert result.exit_code == 0 and result.differences == []
    assert result.max_error is not None and 0 <= result.max_error < 0.05  # float32 angles at 32767: ~1e-3
    if verdict == "equivalent_after_relayout":
        assert result.relayout["call"].startswith("relayout_pairing(")
    else:
        assert result.relayout is None


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("case", WRONG, ids=[c[0] for c in WRONG])
def test_each_bug_is_named_with_a_minimal_input(case, library, write_impl, model_file):
    name, style, params, model, verdict, whats = case
    result = _audit_case(write_impl, model_file, library, style, params, model)
    assert result.verdict == "differs" and result.exit_code == 1, result.summary()
    named = {d.what for d in result.differences}
    assert named == whats, result.summary()
    for diff in result.differences:
        entry = diff.as_dict()
        assert entry["what"] in WHATS
        assert "expected" in entry and "found" in entry and entry["expected"] != entry["found"]
        assert "input" in entry and entry["input"]["position"] in result.as_dict()["positions_probed"]


@pytest.mark.parametrize("case", TORCH_ONLY, ids=[c[0] for c in TORCH_ONLY])
def test_low_precision_angles_in_torch(case, write_impl, model_file):
    name, style, params, model, verdict, whats = case
    result = _audit_case(write_impl, model_file, "torch", style, params, model)
    assert result.verdict == "differs"
    assert {d.what for d in result.differences} == whats, result.summary()
    diff = result.differences[0]
    assert diff.extra["format"] == params["dtype"]
    assert params["dtype"] in diff.found


def test_denominator_root_cause_names_every_pair(write_impl, model_file):
    result = _audit_case(write_impl, model_file, "numpy", "rotate_half", {"rot": 16, "den": 64}, "neox")
    (diff,) = result.differences
    assert (diff.expected, diff.found) == (16, 64)
    assert "denominator 64 where the model says 16" in diff.detail and "base^(-2r/64)" not in diff.detail
    assert "10000^(-2r/64)" in diff.detail


def test_wrong_base_is_reported_as_the_base(write_impl, model_file):
    result = _audit_case(write_impl, model_file, "numpy", "rotate_half", {"base": "500000.0"}, "hf")
    (diff,) = result.differences
    assert diff.expected == "base 10000" and diff.found == "base 500000"


def test_position_offset_input_is_position_zero(write_impl, model_file):
    result = _audit_case(write_impl, model_file, "numpy", "rotate_half", {"offset": 1}, "hf")
    (diff,) = result.differences
    assert diff.position == 0 and diff.extra["offset"] == 1
    # at position 0 the model leaves e_0 alone; the function rotates it by one position's angle
    assert diff.expected_output == {"0": 1}
    assert set(diff.found_output) == {"0", "32"}


def test_missing_scaling_states_both_factors(write_impl, model_file):
    result = _audit_case(write_impl, model_file, "numpy", "rotate_half", {}, "hf_scaled")
    (diff,) = result.differences
    assert diff.expected == 1.25 and diff.found == 1 and "missing" in diff.detail


def test_missing_interpolation_names_the_factor(write_impl, model_file):
    result = _audit_case(write_impl, model_file, "numpy", "rotate_half", {}, "interpolated")
    (diff,) = result.differences
    assert diff.extra["factor"] == 4


def test_relayout_call_really_gives_the_model_scores(write_impl, model_file):
    """The named relayout_pairing call, applied to Wq and Wk, makes the function compute the model's scores."""
    path = write_impl("numpy", "rotate_half")
    fn = load_function(f"{path}:apply_rope")
    variant = load_like(model_file("meta"))
    result = audit(fn, variant)
    assert result.verdict == "equivalent_after_relayout"
    assert result.relayout["call"] == "relayout_pairing(w, n_heads, src='adjacent', dst='half')"
    from symproof.variants import build_kernel

    rng = np.random.default_rng(0)
    n_heads, d, d_model, n = 2, 64, 24, 7
    wq, wk = rng.standard_normal((n_heads * d, d_model)), rng.standard_normal((n_heads * d, d_model))
    tokens = rng.standard_normal((n, d_model))
    positions = np.arange(n) * 37 + 3
    kernel = build_kernel(variant)

    def heads(w, x):
        return (x @ w.T).reshape(n, n_heads, d).transpose(1, 0, 2)  # (H, T, d)

    model_q = kernel.apply(heads(wq, tokens), positions)
    model_k = kernel.apply(heads(wk, tokens), positions)
    user_q = fn(heads(relayout_pairing(wq, n_heads, src="adjacent", dst="half"), tokens), positions)
    user_k = fn(heads(relayout_pairing(wk, n_heads, src="adjacent", dst="half"), tokens), positions)
    np.testing.assert_allclose(user_q @ user_k.transpose(0, 2, 1), model_q @ model_k.transpose(0, 2, 1),
                               rtol=1e-10, atol=1e-9)
    # without the re-layout the scores differ: the verdict is not a plain "equivalent"
    plain_q = fn(heads(wq, tokens), positions)
    plain_k = fn(heads(wk, tokens), positions)
    assert np.abs(plain_q @ plain_k.transpose(0, 2, 1) - model_q @ model_k.transpose(0, 2, 1)).max() > 1e-3


def test_width_256(write_impl, model_file):
    right = _audit_case(write_impl, model_file, "numpy", "rotate_half", {"base": "500000.0"}, "hf256")
    assert right.verdict == "equivalent"
    wrong = _audit_case(write_impl, model_file, "numpy", "rotate_half", {"base": "500000.0", "dtype": "float16"},
                        "hf256")
    assert [d.what for d in wrong.differences] == ["precision"]


def test_library_function_accepts_a_variant_object_and_a_plain_callable(model_file):
    variant = load_like(model_file("hf"))
    assert isinstance(variant, Variant)

    def identity(x, positions):
        return x

    result = audit(identity, variant)
    assert result.verdict == "differs"
    (diff,) = result.differences
    assert diff.what == "rotary_dim" and (diff.expected, diff.found) == (64, 0)
