"""Exported bias kernels never return an inf or a nan as a bias.

A formula whose float64 evaluation overflows (HyPE's sinh written with exp overflows before the value does;
a steep exponential is beyond float64 itself) makes the numpy and torch kernels raise a one-line
``FloatingPointError`` naming the head and the positions, where they used to return ``inf`` with, at most, a
numpy warning. The ``kernel`` property compares them at every probed position, the large and negative ones
included, and a refusal only counts as right where the exact value is beyond float64.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from symproof._face._cli import main

HYPE = '''name = "hype"
kind = "bias"
[params]
tau = 1
mu = -0.015625
[bias]
formula = "-tau * (exp(mu * (j - i)) - exp(-mu * (j - i))) / 2"
heads = 1
slope = "1"
'''

# (file, a pair (i, j) whose exact value fits float64, a pair where the kernel must refuse, what the refusal names)
CASES = [
    # exp(45427 / 64) overflows although sinh(45427 / 64) ~ 9.1e307 fits: the formula as written overflows
    (HYPE, (0, 100), (0, 45427), "at query position 0, key position 45427 is not finite in float64"),
    (HYPE, (5, 3), (0, 2**20), "at query position 0, key position 1048576 is not finite in float64"),
]


def _kernel(tmp_path, text, target, code=0):
    path = tmp_path / "variant.toml"
    path.write_text(text)
    out = tmp_path / f"out_{target}"
    assert main(["check", str(path), "--export", str(out), "--target", target, "--json"]) == code
    (file,) = out.glob("*.py")
    spec = importlib.util.spec_from_file_location(f"overflow_{target}_{abs(hash(str(tmp_path)))}", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("target", ["numpy", "torch"])
@pytest.mark.parametrize("text, fine, refused, words", CASES)
def test_a_bias_beyond_float64_is_refused_in_one_line(tmp_path, capsys, target, text, fine, refused, words):
    if target == "torch":
        pytest.importorskip("torch")
    module = _kernel(tmp_path, text, target)
    document = json.loads(capsys.readouterr().out.split("\nkernel written to")[0])
    (kernel,) = [p for p in document["properties"] if p["property"] == "kernel"]
    assert kernel["verdict"] == "tested" and {-(2**20), 2**20} <= set(kernel["tested"]["positions"]), kernel
    value = np.asarray(module.bias_at([fine[0]], [fine[1]]))
    assert np.isfinite(value).all()
    with pytest.raises(FloatingPointError) as info:
        module.bias_at([refused[0], 1], [refused[1], 2])
    assert words in str(info.value) and "\n" not in str(info.value)


TWO_HEADS = '''name = "two-heads"
kind = "bias"
[params]
P = [0.5, -1]
[bias]
formula = "-abs(j - i)**P(h)"
heads = 2
slope = "1"
'''


def test_a_pair_one_head_cannot_give_is_refused_for_every_head(tmp_path, capsys):
    """Head 1's |0|**-1 is undefined at i = j: the kernel refuses the pair (every head), the property counts
    that refusal as right (the definition is undefined there) and compares head 0 elsewhere."""
    module = _kernel(tmp_path, TWO_HEADS, "numpy", code=1)  # exit 1: plain_at_zero is undefined, unknown
    document = json.loads(capsys.readouterr().out.split("\nkernel written to")[0])
    (kernel,) = [p for p in document["properties"] if p["property"] == "kernel"]
    assert kernel["verdict"] == "tested", kernel
    with pytest.raises(FloatingPointError, match="the bias of head 1 at query position 3, key position 3"):
        module.bias_at([3], [3])
    np.testing.assert_allclose(module.bias_at([3], [1])[:, 0, 0], [-(2**0.5), -0.5], rtol=1e-15)
