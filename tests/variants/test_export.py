"""Exported variant kernels compute what the in-process generated kernel computes."""

import ctypes
import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

from symproof import InvalidInputError
from symproof.variants import build_kernel, load_variant, shipped_variants
from symproof.variants._export import export_variant

ROTARY = ["xpos", "yarn", "axial_2d", "broken_sign", "linear_interpolation", "half_split", "partial_rotation",
          "dynamic_ntk", "longrope_switch", "rope_mixed"]


def _load_module(path):
    spec = importlib.util.spec_from_file_location("exported_variant", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(variant):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, variant.width))
    if len(variant.axes) > 1:
        return x, np.array([[0, 5], [3, 1], [40, 9]])
    return x, np.array([0, 5, 40])


@pytest.mark.parametrize("name", ROTARY)
@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_python_targets_match_generated_kernel(tmp_path, name, target):
    if target == "torch":
        pytest.importorskip("torch")
    variant = load_variant(shipped_variants()[name])
    (path,) = [p for p in export_variant(variant, tmp_path, target) if p.endswith(".py")]
    module = _load_module(path)
    x, positions = _inputs(variant)
    expected = build_kernel(variant).apply(x, positions, "query")
    if hasattr(module, "PAIRS"):  # printed here from the variant's definition
        got = module.apply(x, positions, "query")
    elif target == "numpy":  # plain RoPE: exported by symproof.kernels with explicit frequencies
        got = module.apply(x, positions)
    else:
        import torch

        got = module.apply(torch.tensor(x), torch.tensor(positions))
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_additive_and_bias_exports(tmp_path, target):
    if target == "torch":
        pytest.importorskip("torch")
    table = load_variant(shipped_variants()["t2t_concatenated"])
    (path,) = export_variant(table, tmp_path, target)
    got = _load_module(path).table(np.arange(6))
    np.testing.assert_allclose(np.asarray(got), build_kernel(table).table(np.arange(6)), rtol=0, atol=1e-12)
    alibi = load_variant(shipped_variants()["alibi"])
    (path,) = export_variant(alibi, tmp_path, target)
    got = _load_module(path).bias(4, 7)
    np.testing.assert_allclose(np.asarray(got), build_kernel(alibi).bias(4, 7), rtol=0, atol=1e-12)


def test_c_target_refuses_non_rotary(tmp_path):
    with pytest.raises(InvalidInputError, match="rotary"):
        export_variant(load_variant(shipped_variants()["alibi"]), tmp_path, "c")


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.parametrize("name", ["xpos", "axial_2d", "yarn", "rope_mixed"])
def test_c_target_compiles_and_matches(tmp_path, name):
    variant = load_variant(shipped_variants()[name])
    (source,) = export_variant(variant, tmp_path, "c")
    library = tmp_path / "variant.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(library), source, "-lm"], check=True)
    func = getattr(ctypes.CDLL(str(library)), f"symproof_variant_{variant.name.replace('-', '_')}_apply")
    x, positions = _inputs(variant)
    positions = np.ascontiguousarray(positions.reshape(len(x), -1), dtype=np.float64)
    out = np.zeros_like(x)
    pointer = ctypes.POINTER(ctypes.c_double)
    func(x.ctypes.data_as(pointer), positions.ctypes.data_as(pointer), out.ctypes.data_as(pointer),
         ctypes.c_long(len(x)), ctypes.c_int(0))
    np.testing.assert_allclose(out, build_kernel(variant).apply(x, positions.squeeze(-1) if len(variant.axes) == 1
                                                                else positions, "key"), rtol=1e-12, atol=1e-12)


def test_call_length_rule_with_a_position_scale_is_refused_before_the_check(tmp_path, capsys):
    from symproof._face._cli import main

    path = tmp_path / "scaled.toml"
    path.write_text('name = "scaled"\nkind = "rotary"\nwidth = 4\npairing = "half"\n'
                    '[frequencies]\nbase = "10000 * Max(seq_len / 8, 1)"\n[length]\nthreshold = 8\n'
                    '[scale]\nquery = "2**(m/8)"\nkey = "2**(-m/8)"\n', encoding="utf-8")
    assert main(["check", str(path), "--export", str(tmp_path), "--target", "numpy"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "per-position scale" in captured.err and not list(tmp_path.glob("*.py"))
