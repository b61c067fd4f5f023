"""``[mask] allowed``: the exported masks against Hugging Face's own mask functions, and the mask
properties by purpose.

The references are ``transformers.masking_utils``' mask functions (causal, sliding window, Llama 4's
chunks), evaluated by torch on index grids, never our generator; StreamingLLM's sinks are HF's causal
and sliding-window functions joined with HF's ``or_masks``/``and_masks`` to "the key is one of the
first S".  Verdicts are written from the mathematics (the comments say why).
"""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess

import numpy as np
import pytest
import torch

from symproof import VariantFileError
from symproof.variants import Variant, check_variant
from symproof.variants._export import variant_source
from symproof.variants._mask import allowed_at

mu = pytest.importorskip("transformers.masking_utils")

N = 24  # positions 0..N-1 on both sides


def _sinks(S: int, W: int):
    def sink(batch_idx, head_idx, q_idx, kv_idx):
        return kv_idx < S
    return mu.or_masks(mu.sliding_window_causal_mask_function(W), mu.and_masks(mu.causal_mask_function, sink))


#: name -> (condition, params, HF's mask function (batch, head, q_idx, kv_idx) -> bool)
REFERENCES = {
    "causal": ("j <= i", {}, mu.causal_mask_function),
    "sliding window": ("j <= i and i - j < W", {"W": 5}, mu.sliding_window_causal_mask_function(5)),
    "sliding window, chained": ("0 <= i - j < W", {"W": 3}, mu.sliding_window_causal_mask_function(3)),
    "llama 4 chunks": ("j <= i and floor(i / C) == floor(j / C)", {"C": 4},
                       mu.chunked_causal_mask_function(4, torch.tensor([0]))),
    "llama 4 chunks, mod": ("j <= i and i - mod(i, C) == j - mod(j, C)", {"C": 8},
                            mu.chunked_causal_mask_function(8, torch.tensor([0]))),
    "streaming sinks": ("j <= i and (i - j < W or j < S)", {"S": 2, "W": 3}, _sinks(2, 3)),
}


def _reference(function) -> np.ndarray:
    q = torch.arange(N)[:, None]
    k = torch.arange(N)[None, :]
    return np.asarray(function(0, 0, q, k).expand(N, N), dtype=bool)


def _rotary(condition: str, params: dict, **extra) -> Variant:
    return Variant.from_dict({"name": "masked", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, "params": params, "mask": {"allowed": condition},
                              **extra})


def _bias(condition: str, params: dict, **extra) -> Variant:
    return Variant.from_dict({"name": "masked", "kind": "bias", "params": params, "mask": {"allowed": condition},
                              "bias": {"formula": "-slope * abs(j - i)", "heads": 2, "slope": "1 / (h + 1)"},
                              **extra})


def _python_mask(variant, target, tmp_path):
    files = variant_source(variant, target)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    path = tmp_path / next(iter(files))
    spec = importlib.util.spec_from_file_location(f"masked_{target}_{id(variant)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _c_mask(variant, tmp_path):
    files = variant_source(variant, "c")
    source = tmp_path / next(iter(files))
    source.write_text(next(iter(files.values())))
    library = tmp_path / "mask.so"
    subprocess.run([shutil.which("cc") or "gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source), "-lm"],
                   check=True)
    return ctypes.CDLL(str(library)), source.stem


def _c_call(library, module, entry, queries, keys, dtype, pointer):
    q = np.ascontiguousarray(queries, dtype=np.float64)
    k = np.ascontiguousarray(keys, dtype=np.float64)
    out = np.zeros((len(q), len(k)), dtype=dtype)
    function = getattr(library, f"{module}_{entry}")
    function.restype = ctypes.c_int
    double_p = ctypes.POINTER(ctypes.c_double)
    status = function(q.ctypes.data_as(double_p), k.ctypes.data_as(double_p), ctypes.c_long(len(q)),
                      ctypes.c_long(len(k)), out.ctypes.data_as(ctypes.POINTER(pointer)))
    return status, out


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_the_exact_mask_is_hugging_faces(name):
    condition, params, function = REFERENCES[name]
    variant = _bias(condition, params)
    ours = np.array([[allowed_at(variant, i, j) for j in range(N)] for i in range(N)])
    assert (ours == _reference(function)).all()


@pytest.mark.parametrize("target", ["numpy", "torch"])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_python_kernels_give_hugging_faces_mask(name, target, tmp_path):
    condition, params, function = REFERENCES[name]
    module = _python_mask(_bias(condition, params), target, tmp_path)
    positions = np.arange(N, dtype=np.float64)
    allowed = np.asarray(module.mask_at(positions, positions))
    additive = np.asarray(module.mask_bias(positions, positions))
    expected = _reference(function)
    assert allowed.dtype == bool and (allowed == expected).all()
    # the additive form is exactly 0 where allowed, -inf elsewhere (no NaN, no large negative stand-in)
    assert (additive[expected] == 0.0).all() and np.isneginf(additive[~expected]).all()


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_c_kernel_gives_hugging_faces_mask(name, tmp_path):
    condition, params, function = REFERENCES[name]
    library, module = _c_mask(_rotary(condition, params), tmp_path)
    positions = np.arange(N)
    status, allowed = _c_call(library, module, "mask_at", positions, positions, np.uint8, ctypes.c_ubyte)
    assert status == 0 and (allowed.astype(bool) == _reference(function)).all()
    status, additive = _c_call(library, module, "mask_bias", positions, positions, np.float64, ctypes.c_double)
    expected = _reference(function)
    assert status == 0 and (additive[expected] == 0.0).all() and np.isneginf(additive[~expected]).all()


def test_a_masked_softmax_matches_torchs_own_causal_attention(tmp_path):
    """The additive mask in torch's softmax gives what torch's scaled_dot_product_attention(is_causal=True) gives."""
    module = _python_mask(_bias("j <= i", {}), "torch", tmp_path)
    positions = torch.arange(N, dtype=torch.float64)
    q, k, v = (torch.randn(N, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(s)) for s in (1, 2, 3))
    ours = torch.softmax(q @ k.T / 2 + module.mask_bias(positions, positions), dim=-1) @ v
    theirs = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=True)[0]
    assert torch.allclose(ours, theirs, atol=1e-12)


Y, N_ = "proved", "refuted"

#: condition, params, positions -> the three mask verdicts, from the mathematics
VERDICTS = {
    # j <= i reads only j - i, hides every later key, keeps the diagonal
    "causal": ("j <= i", {}, "integers", dict(mask_relative=Y, mask_causal=Y, mask_self=Y)),
    # both comparisons read only i - j
    "sliding window": ("j <= i and i - j < W", {"W": 4}, "integers", dict(mask_relative=Y, mask_causal=Y, mask_self=Y)),
    # a key j < S stays visible whatever its offset: shifting both positions past S hides it
    "sinks": ("j <= i and (i - j < W or j < S)", {"S": 2, "W": 4}, "nonnegative",
              dict(mask_relative=N_, mask_causal=Y, mask_self=Y)),
    # without the parentheses, "or j < S" admits the sinks after the query too (j = 1 > i = 0)
    "sinks, precedence slip": ("j <= i and i - j < W or j < S", {"S": 2, "W": 4}, "nonnegative",
                               dict(mask_relative=N_, mask_causal=N_, mask_self=Y)),
    # the chunk a position falls in depends on the position, not only on the offset (i = 3, j = 3 vs 4, 4)
    "chunks": ("j <= i and floor(i / C) == floor(j / C)", {"C": 4}, "integers",
               dict(mask_relative=N_, mask_causal=Y, mask_self=Y)),
    # strictly earlier keys: the first query sees nothing, and no query sees itself
    "strictly earlier": ("j < i", {}, "nonnegative", dict(mask_relative=Y, mask_causal=Y, mask_self=N_)),
    # a bidirectional window: offset-only, sees later keys, keeps the diagonal
    "bidirectional window": ("abs(i - j) < W", {"W": 3}, "integers", dict(mask_relative=Y, mask_causal=N_, mask_self=Y)),
    # an absolute cut: keys past position 8 are hidden
    "absolute cut": ("j <= i and j < 8", {}, "nonnegative", dict(mask_relative=N_, mask_causal=Y, mask_self=N_)),
    # inside a declared range 0..15 the same sink mask, its witness inside the range
    "sinks in a range": ("j <= i and (i - j < W or j < S)", {"S": 2, "W": 4}, "0..15",
                         dict(mask_relative=N_, mask_causal=Y, mask_self=Y)),
}


@pytest.mark.parametrize("kind", ["bias", "rotary"])
@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_mask_verdicts(name, kind):
    condition, params, positions, expected = VERDICTS[name]
    variant = (_bias if kind == "bias" else _rotary)(condition, params, positions=positions)
    results = {r.claim.name: r for r in check_variant(variant, only=set(expected))}
    got = {key: r.status for key, r in results.items()}
    assert got == expected, {k: results[k].reason for k in got}
    for r in results.values():
        if r.status == "refuted":
            part = next(p for p in r.proof.parts if p.status == "refuted")
            values = {str(s): int(v) for s, v in part.witness.items()}
            # every position of the witness inside the file's positions
            for position in _positions_of(r.claim.name, values):
                assert variant.last_position is None or 0 <= position <= variant.last_position
                assert not variant.from_zero or position >= 0


def _positions_of(prop: str, w: dict) -> list:
    if prop == "mask_relative":
        return [w["i"], w["j"], w["i"] + w["c"], w["j"] + w["c"]]
    return [w[k] for k in ("i", "j") if k in w]


def test_the_score_properties_are_those_of_the_unmasked_score():
    """A mask adds its own three properties; it changes none of the score's verdicts."""
    plain = {r.claim.name: r.status for r in check_variant(Variant.from_dict(
        {"name": "plain", "kind": "bias", "bias": {"formula": "-slope * abs(j - i)", "heads": 2, "slope": "1"}}))}
    masked = {r.claim.name: r.status for r in check_variant(_bias("j <= i", {}))}
    assert {k: v for k, v in masked.items() if not k.startswith("mask_")} == plain
    assert [k for k in masked if k.startswith("mask_")] == ["mask_relative", "mask_causal", "mask_self"]


def test_the_kernel_property_checks_the_mask():
    result = next(r for r in check_variant(_rotary("j <= i and (i - j < W or j < S)", {"S": 2, "W": 4},
                                                   positions="nonnegative"), only={"kernel"}))
    assert result.status == "proved"
    assert any("mask_at and mask_bias" in p.rule and p.status == "proved" for p in result.proof.parts)


def test_a_range_file_refuses_positions_outside_it_in_every_target(tmp_path):
    variant = _bias("j <= i", {}, positions="0..15")
    for target in ("numpy", "torch"):
        module = _python_mask(variant, target, tmp_path)
        for bad in (-1, 16, 10**5, 2**31, 2**63):
            with pytest.raises(IndexError, match="outside the file's positions"):
                module.mask_at(np.array([bad], dtype=np.float64), np.array([0.0]))
            with pytest.raises(IndexError, match="outside the file's positions"):
                module.mask_bias(np.array([0.0]), np.array([bad], dtype=np.float64))
    if shutil.which("cc") or shutil.which("gcc"):
        library, module = _c_mask(_rotary("j <= i", {}, positions="0..15"), tmp_path)
        for bad in (-1.0, 16.0, 1e5, float(2**63), float("nan"), 0.5):
            status, _ = _c_call(library, module, "mask_at", [bad], [0.0], np.uint8, ctypes.c_ubyte)
            assert status == 2
            status, _ = _c_call(library, module, "mask_bias", [0.0], [bad], np.float64, ctypes.c_double)
            assert status == 2


REFUSED = {
    "not a comparison": ("i - j", "is not a comparison"),
    "a number": ("1", "is not a comparison"),
    "unknown name": ("k <= i", "unknown name 'k'"),
    "dangling and": ("j <= i and", "is not a condition"),
    "the key position's slope": ("slope < 1", "unknown name 'slope'"),
    "empty": ("  ", "is empty"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_conditions_are_refused_in_one_line_naming_the_key(name):
    text, expected = REFUSED[name]
    with pytest.raises(VariantFileError) as err:
        _bias(text, {})
    message = str(err.value)
    assert "mask.allowed" in message and expected in message and "\n" not in message


@pytest.mark.parametrize("extra, expected", [
    ({"kind": "additive", "width": 4, "frequencies": {"base": 100}}, "does not apply to kind = 'additive'"),
    ({"mask": {}}, "is required in [mask]"),
    ({"mask": {"allowed": 3}}, "expected a string"),
    ({"mask": {"allowed": "j <= i", "window": 3}}, "unknown key 'mask.window'"),
])
def test_misplaced_masks_are_refused(extra, expected):
    data = {"name": "m", "kind": "rotary", "width": 4, "pairing": "half", "frequencies": {"base": 100},
            "mask": {"allowed": "j <= i"}}
    data.update(extra)
    if data["kind"] == "additive":
        data.pop("pairing")
    with pytest.raises(VariantFileError, match="mask"):
        try:
            Variant.from_dict(data)
        except VariantFileError as err:
            assert expected in str(err), str(err)
            raise


@pytest.mark.parametrize("condition, everywhere", [("i == i", True), ("i < i", False), ("0 < 1 or j <= i", True)])
def test_a_condition_sympy_decides_is_a_constant_mask_in_every_target(condition, everywhere, tmp_path):
    """SymPy decides ``i == i`` to True when the condition is built: every target must print a constant
    (C99 has no ``true`` without stdbool.h; torch.logical_and takes no Python bool)."""
    variant = _rotary(condition, {})
    result, = check_variant(variant, only={"kernel"}, kernel_targets={"numpy", "torch", "c"})
    assert result.status == "proved", result.reason
    module = _python_mask(variant, "numpy", tmp_path)
    assert (np.asarray(module.mask_at(np.arange(4.0), np.arange(5.0))) == everywhere).all()
