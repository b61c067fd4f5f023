"""No false verdicts: right implementations over a grid of conventions are never `differs`, near misses are
never `equivalent`, and formula-defined models (Llama-3 scaling, NTK base) are audited from their exact
frequencies."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from symproof import audit
from symproof._audit import load_function

from audit_implementations import implementation_source


def _variant_toml(width, pairing, base, rotated=None, denominator=None, extra=""):
    lines = [f'name = "grid"', 'kind = "rotary"', f"width = {width}", f'pairing = "{pairing}"']
    if rotated is not None:
        lines.append(f"rotated_width = {rotated}")
    lines += ["", "[frequencies]", 'rule = "geometric"', f"base = {base}"]
    if denominator is not None:
        lines.append(f"denominator = {denominator}")
    return "\n".join(lines) + "\n" + extra


def _audit_source(tmp_path, source, toml, name="impl"):
    impl = tmp_path / f"{name}.py"
    impl.write_text(source)
    like = tmp_path / f"{name}.toml"
    like.write_text(toml)
    return audit(load_function(f"{impl}:apply_rope"), like)


GRID = [(w, base, style, partial, dtype)
        for w in (2, 8, 32, 128, 256)
        for base in (100, 10000, 1000000)
        for style, dtype in (("rotate_half", "float64"), ("rotate_half", "float32"), ("every_two", "float64"))
        for partial in ("full", "rot-denominator", "head-denominator")
        if not (partial != "full" and w < 8)]


@pytest.mark.parametrize("width, base, style, partial, dtype", GRID)
def test_right_implementation_over_a_grid_is_equivalent(width, base, style, partial, dtype, tmp_path):
    pairing = "half" if style == "rotate_half" else "adjacent"
    if partial == "full":
        params, toml = {}, _variant_toml(width, pairing, base)
    else:
        rot = width // 4 if width // 4 % 2 == 0 else width // 2
        den = rot if partial == "rot-denominator" else width
        params, toml = {"rot": rot, "den": den}, _variant_toml(width, pairing, base, rot, den)
    source = implementation_source("numpy", style, base=float(base), dtype=dtype, **params)
    result = _audit_source(tmp_path, source, toml)
    assert result.verdict == "equivalent", result.summary()


NEAR_MISSES = [
    ("base 10000 vs 10001", {"base": 10001.0}, "frequency"),
    ("scale 1.001", {"scale": 1.001}, "scaling"),
    ("offset -1", {"offset": -1}, "position_offset"),
    ("offset 3", {"offset": 3}, "position_offset"),
    ("positions / 2", {"pscale": 2}, "frequency"),
    ("float16 angles", {"dtype": "float16"}, "precision"),
]


@pytest.mark.parametrize("width", [2, 8, 64])
@pytest.mark.parametrize("label, params, what", NEAR_MISSES, ids=[n[0] for n in NEAR_MISSES])
def test_near_misses_are_never_equivalent(label, params, what, width, tmp_path):
    source = implementation_source("numpy", "rotate_half", **params)
    result = _audit_source(tmp_path, source, _variant_toml(width, "half", 10000))
    if width == 2 and "base" in params:
        # one pair, frequency base^0 = 1 whatever the base: the two functions are the same
        assert result.verdict == "equivalent"
        return
    assert result.verdict == "differs" and result.exit_code == 1
    assert [d.what for d in result.differences] == [what], result.summary()


def test_a_random_orthogonal_map_is_not_a_rotary_map(tmp_path):
    source = """
import numpy as np

Q = np.linalg.qr(np.random.default_rng(1).standard_normal((16, 16)))[0]


def apply_rope(x, positions):
    return x @ Q.T
"""
    result = _audit_source(tmp_path, source, _variant_toml(16, "half", 10000))
    assert result.verdict == "differs"
    assert [d.what for d in result.differences] == ["pairing"]
    assert "mix together" in result.differences[0].found


def test_rotation_without_partner_term_is_named(tmp_path):
    """``x * cos`` alone: every coordinate scales with position but mixes with no partner."""
    source = implementation_source("numpy", "rotate_half", post="x * cos")
    result = _audit_source(tmp_path, source, _variant_toml(8, "half", 10000))
    assert [d.what for d in result.differences] == ["pairing"]
    assert "without mixing with a partner" in result.differences[0].found


LLAMA3 = """name = "llama3"
kind = "rotary"
width = 128
pairing = "adjacent"

[params]
base = 500000
factor = 8
low_freq_factor = 1
high_freq_factor = 4
L = 8192

[frequencies]
rule = "formula"
formula = "omega * ((1 - smooth) / factor + smooth)"

[frequencies.let]
omega = "base**(-2*r/d)"
wavelength = "2 * pi / omega"
smooth = "ramp(L / wavelength, low_freq_factor, high_freq_factor)"
"""

LLAMA3_IMPL = """
import math
import numpy as np

SCALED = $scaled


def apply_scaling(freqs):
    scale_factor, low_freq_factor, high_freq_factor, old_context_len = 8, 1, 4, 8192
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    new_freqs = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_freq_wavelen:
            new_freqs.append(freq)
        elif wavelen > low_freq_wavelen:
            new_freqs.append(freq / scale_factor)
        else:
            smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            new_freqs.append((1 - smooth) * freq / scale_factor + smooth * freq)
    return np.array(new_freqs)


def apply_rope(x, positions):
    d = x.shape[-1]
    freqs = 1.0 / (500000.0 ** (np.arange(0, d, 2)[: d // 2] / d))
    if SCALED:
        freqs = apply_scaling(freqs)
    angles = np.asarray(positions)[..., None] * freqs
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * angles)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out
"""


def test_llama3_scaling_is_audited_from_the_formula(tmp_path):
    right = _audit_source(tmp_path, LLAMA3_IMPL.replace("$scaled", "True"), LLAMA3, "right")
    assert right.verdict == "equivalent", right.summary()
    wrong = _audit_source(tmp_path, LLAMA3_IMPL.replace("$scaled", "False"), LLAMA3, "wrong")
    (diff,) = wrong.differences
    assert diff.what == "frequency"
    listed = {p["pair"] for p in diff.extra["pairs"]}
    # only the long-wavelength pairs are scaled by Llama-3: the fast ones match, the slow ones differ
    assert 0 not in listed and min(listed) > 20
    for pair in diff.extra["pairs"]:
        omega = 500000.0 ** (-2 * pair["pair"] / 128)
        assert math.isclose(pair["found"], omega, rel_tol=1e-5)


def test_ntk_base_forgotten_is_the_base(tmp_path):
    toml = """name = "ntk"
kind = "rotary"
width = 64
pairing = "half"

[params]
s = 4

[frequencies]
rule = "geometric"
base = "10000 * s**(d / (d - 2))"
"""
    result = _audit_source(tmp_path, implementation_source("numpy", "rotate_half"), toml)
    (diff,) = result.differences
    assert diff.what == "frequency" and diff.found == "base 10000"
    assert diff.expected.startswith("base 10000 * s**(d / (d - 2)) = 4")
    ntk_base = 10000 * 4 ** (64 / 62)
    right = _audit_source(tmp_path, implementation_source("numpy", "rotate_half", base=repr(ntk_base)), toml, "r")
    assert right.verdict == "equivalent"


COMBINED = [
    ("half port with flipped sign", "rotate_half", {"sign": -1}, "meta", ["pairing", "direction"]),
    ("adjacent partial with head-width denominator", "every_two", {"rot": 16, "den": 64}, "neox",
     ["pairing", "denominator"]),
    ("wider rotation, head-width denominator", "rotate_half", {"rot": 32, "den": 64}, "neox",
     ["rotary_dim", "denominator"]),
    ("offset and float16 angles", "rotate_half", {"offset": 1, "dtype": "float16"}, "hf",
     ["position_offset", "precision"]),
    ("extra scale and wrong base", "rotate_half", {"scale": 1.1, "base": "500000.0"}, "hf", ["scaling", "frequency"]),
    ("offset and flipped sign", "rotate_half", {"offset": 1, "sign": -1}, "hf", ["position_offset", "direction"]),
]


@pytest.mark.parametrize("label, style, params, model, whats", COMBINED, ids=[c[0] for c in COMBINED])
def test_two_bugs_at_once_are_both_named(label, style, params, model, whats, tmp_path):
    from audit_implementations import MODELS

    result = _audit_source(tmp_path, implementation_source("numpy", style, **params), MODELS[model])
    assert [d.what for d in result.differences] == whats, result.summary()


def test_positions_ignored_is_named(tmp_path):
    source = implementation_source("numpy", "rotate_half").replace(
        "np.asarray(positions)", "np.broadcast_to(np.arange(np.shape(positions)[-1]), np.shape(positions))")
    result = _audit_source(tmp_path, source, _variant_toml(64, "half", 10000))
    (diff,) = result.differences
    assert diff.what == "position_offset" and "positions ignored" in diff.found
    assert diff.position == 16  # the first probed position that is not its own index


@pytest.mark.parametrize("library, fmt", [("numpy", "float16"), ("torch", "float16"), ("torch", "bfloat16")])
def test_values_rounded_to_low_precision_are_precision(library, fmt, tmp_path):
    """x cast to a 16-bit type inside: errors of that format's size that do not grow with position."""
    if library == "torch":
        pytest.importorskip("torch")
        source = implementation_source("torch", "rotate_half", dtype="float32").replace(
            "def apply_rope(x, positions):\n", f"def apply_rope(x, positions):\n    x0 = x\n    x = x.to(torch.{fmt})\n"
        ).replace("return out", "return out.to(x0.dtype)")
    else:
        source = implementation_source("numpy", "rotate_half").replace(
            "np.cos(emb).astype(x.dtype)", "np.cos(emb).astype(np.float16).astype(x.dtype)").replace(
            "np.sin(emb).astype(x.dtype)", "np.sin(emb).astype(np.float16).astype(x.dtype)")
    result = _audit_source(tmp_path, source, _variant_toml(64, "half", 10000))
    (diff,) = result.differences
    assert diff.what == "precision" and diff.found == f"values rounded to {fmt}"


def _random_map(kind: str, d: int, rng):
    """A linear map of width d that is not the declared RoPE, drawn from ``kind``."""
    perm, c, m = rng.permutation(d), rng.uniform(0.5, 2.0), rng.standard_normal((d, d))
    thetas = rng.uniform(0.01, 1.5, d // 2)
    half = d // 2

    def fn(x, positions):
        pos = np.broadcast_to(np.asarray(positions, dtype=np.float64), x.shape[:-1])
        if kind == "permutation":
            return x[..., perm]
        if kind == "dense":
            return x @ m.T
        if kind == "scaled":
            return c * x
        if kind == "diagonal":
            return x * np.cos(pos[..., None] * np.linspace(0.1, 1.0, d))
        out = x.copy()
        pairs = [(perm[2 * r], perm[2 * r + 1]) for r in range(half)] if kind == "shuffled-pairs" else \
            [(r, r + half) for r in range(half)]
        for r, (a, b) in enumerate(pairs):
            angle = pos * thetas[r]
            cos, sin = np.cos(angle), np.sin(angle)
            if kind == "reflection":
                out[..., a], out[..., b] = cos * x[..., a] + sin * x[..., b], sin * x[..., a] - cos * x[..., b]
            else:
                out[..., a], out[..., b] = cos * x[..., a] - sin * x[..., b], sin * x[..., a] + cos * x[..., b]
        return out

    return fn


KINDS = ("permutation", "dense", "scaled", "diagonal", "shuffled-pairs", "random-frequencies", "reflection")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", KINDS)
def test_random_linear_maps_differ_with_named_differences(kind, seed, tmp_path):
    from symproof._audit import WHATS, load_like

    rng = np.random.default_rng(seed)
    d = (8, 16)[seed % 2]
    pairing = ("half", "adjacent")[seed // 2 % 2]
    like = tmp_path / "model.toml"
    like.write_text(_variant_toml(d, pairing, 10000))
    result = audit(_random_map(kind, d, rng), load_like(like))
    assert result.verdict == "differs" and result.differences
    assert {diff.what for diff in result.differences} <= set(WHATS)
    assert json.loads(json.dumps(result.as_dict()))["verdict"] == "differs"
