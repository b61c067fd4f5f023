"""Offsets in a rotary angle (``[position] relative = rho(i, j)``): ReRoPE, Self-Extend and relatives.

Verdicts are written from the mathematics (comments say why); every refutation's witness is re-checked
here with integer arithmetic written from the papers' definitions, and the exported score kernels are
compared with a direct implementation of each paper's score, computed per (i, j) in this file.
"""

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from symproof import InvalidInputError, VariantFileError
from symproof._face._cli import main
from symproof.variants import FUNCTIONS, Variant, build_kernel, check_variant, load_variant, shipped_variants
from symproof.variants._export import export_variant
from symproof.variants._kernel_file import available_targets

W, G = 16, 4  # a window and a group size small enough for readable witnesses


def _offset(relative, causal=None, **extra):
    position = {"relative": relative, **({} if causal is None else {"causal": causal})}
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, "params": {"w": W, "g": G}, "position": position,
                              **extra})


RE_ROPE = "Min(i - j, w)"
SELF_EXTEND = "where(i - j < w, i - j, floor(i / g) - floor(j / g) + w - floor(w / g))"


def rerope_position(i, j, w=W):
    """Su (2023): the relative position i - j, clipped at the window w."""
    return min(i - j, w)


def self_extend_position(i, j, w=W, g=G):
    """Jin et al. (2024): exact within the neighbour window, grouped (floor division) beyond it, shifted so
    the two meet at the window's edge."""
    return i - j if i - j < w else i // g - j // g + w - w // g


Y, N = "proved", "refuted"
#: decay (RoFormer's bound B(D), x_k(D) = rho(D, 0) omega_k): with frequencies 1 and 1/10 and rho(D, 0) = D below
#: the window, B(D) = (1 + 2 |cos(0.45 D)|) / 2 rises from D = 3 to 4 (|cos 1.8| > |cos 1.35|); a growing scale
#: rises too; rho(D, 0) = 0 (i * j) makes B constant, which does not decay
CASES = {
    # min(i - j, w) is a function of i - j: relative and shift-invariant; rotations keep norms; min(0, w) = 0
    "ReRoPE, causal": (_offset(RE_ROPE, True), dict(norm=Y, relative=Y, shift=Y, plain_at_zero=Y, decay=N)),
    # without the mask, rho(0, 1) = -1 and rho(0, -1) = 1: the sign of the offset shows
    "ReRoPE, every pair": (_offset(RE_ROPE), dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, decay=N)),
    # grouping depends on where i and j fall in their groups: not a function of i - j (witnesses checked below)
    "Self-Extend, causal": (_offset(SELF_EXTEND, True), dict(norm=Y, relative=N, shift=N, plain_at_zero=Y, decay=N)),
    "Self-Extend, every pair": (_offset(SELF_EXTEND), dict(norm=Y, relative=N, shift=N, direction=Y, plain_at_zero=Y, decay=N)),
    "Self-Extend, nonnegative": (_offset(SELF_EXTEND, True, positions="nonnegative"),
                                 dict(norm=Y, relative=N, shift=N, plain_at_zero=Y, decay=N)),
    # half of the head rotated, the rest copied (their q^T k adds no position): ReRoPE's verdicts unchanged
    "ReRoPE, partial rotation": (Variant.from_dict({
        "name": "probe", "kind": "rotary", "width": 8, "rotated_width": 4, "pairing": "adjacent",
        "frequencies": {"base": 100, "denominator": 8}, "params": {"w": W}, "position": {"relative": RE_ROPE}}),
        dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, decay=N)),
    # a product of positions: far past the float64-exact range of i - j, the kernel's allowance follows rho
    "i * j": (_offset("i * j"), dict(norm=Y, relative=N, shift=N, direction=N, plain_at_zero=N, decay=N)),
    # rho = i - j is RoPE itself
    "i - j": (_offset("i - j"), dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, decay=N)),
    # |i - j| is even in the offset: the two signs score alike
    "abs(i - j)": (_offset("abs(i - j)"), dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y, decay=N)),
    # the query's own position: not relative, and nonzero on the diagonal
    "i": (_offset("i", True), dict(norm=Y, relative=N, shift=N, plain_at_zero=N, decay=N)),
    # an xPos-style scale 2^(m/8) on queries and 2^(-m/8) on keys: each side's map stretches, the product
    # 2^((i - j)/8) is still offset-only, and 1 on the diagonal
    "ReRoPE with a scale": (_offset(RE_ROPE, True, scale={"query": "2**(m/8)", "key": "2**(-m/8)"}),
                            dict(norm=N, relative=Y, shift=Y, plain_at_zero=Y, decay=N)),
    # a per-pair phase B(x + r/4) on the query and B(r/4) on the key: B(a + p)^T B(p) = R(-a), it cancels
    "ReRoPE with a phase": (_offset(RE_ROPE, True, rotation={"block": [["cos(x + r/4)", "-sin(x + r/4)"],
                                                                       ["sin(x + r/4)", "cos(x + r/4)"]]}),
                            dict(norm=Y, relative=Y, shift=Y, plain_at_zero=Y, decay=N)),
}


@pytest.fixture(scope="module")
def results():
    return {name: {r.claim.name: r for r in check_variant(variant)}
            for name, (variant, _) in CASES.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_verdicts(results, name):
    got = {key: r.status for key, r in results[name].items() if key != "kernel"}
    assert got == CASES[name][1], {k: results[name][k].reason for k in got}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_kernel_files_agree(results, name):
    assert results[name]["kernel"].status == Y, results[name]["kernel"].reason


POSITION = {RE_ROPE: rerope_position, SELF_EXTEND: self_extend_position, "i": lambda i, j: i}


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if "Self-Extend" in n or n == "i"])
def test_every_witness_is_a_pair_of_positions_the_paper_scores_differently(results, name):
    variant = CASES[name][0]
    rho = POSITION[variant.relative.text]
    for key in ("relative", "shift"):
        part = next(p for p in results[name][key].proof.parts if p.status == N and p.witness)
        witness = {str(s): int(v) for s, v in part.witness.items()}
        if variant.causal:  # the rows of the statement: query j + t, key j (t >= 0); shift c
            j, t, c = witness["j"], witness["t"], witness.get("c", 0)
            assert t >= 0
            assert variant.positions != "nonnegative" or min(j, j + c) >= 0
            sides = ((j + t, j), (t, 0)) if key == "relative" else ((j + t + c, j + c), (j + t, j))
        else:
            i, j, c = witness["i"], witness["j"], witness.get("c", 0)
            sides = ((i, j), (0, j - i)) if key == "relative" else ((i + c, j + c), (i, j))
        assert rho(*sides[0]) != rho(*sides[1]), (key, witness)


def test_a_causal_file_lists_direction_as_not_applicable(capsys):
    path = shipped_variants()["self_extend"]
    assert main(["check", path, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "direction" not in {p["property"] for p in document["properties"]}
    assert [entry["property"] for entry in document["not_applicable"]] == ["direction"]
    assert main(["check", path]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("direction"))
    assert "n/a" in line and "causal" in line


def test_a_file_without_relative_has_no_not_applicable_entry(capsys):
    assert main(["check", shipped_variants()["xpos"], "--json"]) == 0
    assert "not_applicable" not in json.loads(capsys.readouterr().out)


# -- malformed files: one line naming the key -----------------------------------------------------------

ROTARY = 'name = "v"\nkind = "rotary"\nwidth = 4\npairing = "half"\n[params]\nw = 8\n[frequencies]\nbase = 100\n'
ERRORS = {
    "unknown name": ('[position]\nrelative = "Min(i - k, w)"\n', "key 'position.relative'", "unknown name 'k'"),
    "i in the transform": ('[position]\ntransform = "m + i"\n', "key 'position.transform'", "unknown name 'i'"),
    "j in a scale": ('[scale]\nquery = "j"\n', "key 'scale.query'", "unknown name 'j'"),
    "i in the frequencies": ('[position]\nrelative = "i - j"\n', "key 'frequencies.base'", "unknown name 'i'"),
    "with a transform": ('[position]\nrelative = "i - j"\ntransform = "m / 2"\n', "key 'position.relative'",
                         "cannot be combined with position.transform"),
    "with several axes": ('[position]\nrelative = "i - j"\naxes = ["a", "b"]\naxis = "r"\n',
                          "key 'position.relative'", "cannot be combined with position.axes"),
    "with a length rule": ('[position]\nrelative = "i - j"\n[length]\nthreshold = 8\n', "key 'position.relative'",
                           "cannot be combined with length"),
    "with equivalent": ('[position]\nrelative = "i - j"\n[equivalent]\nfrequencies = "1"\n',
                        "key 'position.relative'", "cannot be combined with equivalent"),
    "with per-axis frequencies": ('[position]\nrelative = "i - j"\naxes = ["x"]\n', "key 'position.relative'",
                                  "cannot be combined with frequencies.per_axis"),
    "causal alone": ('[position]\ncausal = true\n', "key 'position.causal'", "applies with position.relative"),
    "causal not a boolean": ('[position]\nrelative = "i - j"\ncausal = "yes"\n', "key 'position.causal'",
                             "expected a boolean"),
    "not real": ('[position]\nrelative = "sqrt(i - j - 5)"\n', "key 'position.relative'", "expected a finite real"),
    "a comparison outside where": ('[position]\nrelative = "i - j < w"\n', "key 'position.relative'",
                                   "compares outside where"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_malformed_offset_files_give_one_line(tmp_path, capsys, case):
    text, where, words = ERRORS[case]
    body = {"i in the frequencies": ROTARY.replace("base = 100", 'base = "100 + i"'),
            "with per-axis frequencies": ROTARY.replace("base = 100", 'rule = "per_axis"\nper_axis = [[0.5], [0.25]]'),
            }.get(case, ROTARY) + text
    path = tmp_path / "v.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(VariantFileError, match=re.escape(words)) as caught:
        load_variant(path)
    assert where in str(caught.value)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and words in err and "Traceback" not in err


@pytest.mark.parametrize("data, words", [
    ({"kind": "additive", "width": 4, "frequencies": {"base": 100}}, "kind = 'rotary' only, not 'additive'"),
    ({"kind": "bias", "bias": {"formula": "0", "heads": 1, "slope": "1"}}, "does not apply to kind = 'bias'"),
])
def test_relative_is_for_rotary_files(data, words):
    with pytest.raises(VariantFileError, match=re.escape(words)):
        Variant.from_dict({"name": "b", **data, "position": {"relative": "i - j"}})


def test_no_per_token_apply():
    with pytest.raises(InvalidInputError, match="scores"):
        build_kernel(_offset(RE_ROPE)).apply(np.zeros((1, 4)), np.array([0]))


# -- the exported score kernels against each paper's score, computed here per (i, j) ----------------------


def reference_scores(q, k, queries, keys, rho, base=10000.0):
    """s[a, b] = q_a . R(rho(i, j)) k_b in HF's rotate_half layout, the way ReRoPE's and Self-Extend's own
    code scores it: the query rotated at the position rho(i, j), the key at position 0 (unrotated)."""
    d = q.shape[-1]
    inv_freq = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
    out = np.empty((len(queries), len(keys)))
    for a, i in enumerate(queries):
        for b, j in enumerate(keys):
            angle = np.concatenate([inv_freq, inv_freq]) * rho(int(i), int(j))
            rotate_half = np.concatenate([-q[a, d // 2:], q[a, : d // 2]])
            out[a, b] = (q[a] * np.cos(angle) + rotate_half * np.sin(angle)) @ k[b]
    return out


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_c(path, module, q, k, queries, keys):
    import ctypes
    import subprocess

    from symproof.variants._kernel_file import compiler

    library = Path(path).with_suffix(".so")
    subprocess.run([compiler(), "-O2", "-shared", "-fPIC", "-o", str(library), str(path), "-lm"], check=True)
    function = getattr(ctypes.CDLL(str(library)), f"{module}_scores")
    pointer = ctypes.POINTER(ctypes.c_double)
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (q, k, queries, keys)]
    out = np.zeros((len(queries), len(keys)))
    function(*(a.ctypes.data_as(pointer) for a in arrays), out.ctypes.data_as(pointer),
             ctypes.c_long(len(queries)), ctypes.c_long(len(keys)))
    return out


SHIPPED = {"rerope": lambda i, j: rerope_position(i, j, 512), "self_extend": lambda i, j: self_extend_position(i, j, 512, 8)}


@pytest.mark.parametrize("target", ["numpy", "torch", "c"])
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_exported_scores_match_the_papers(tmp_path, name, target):
    variant = load_variant(shipped_variants()[name])
    why = dict(available_targets(variant))[target]
    if why:
        pytest.skip(why)
    (path,) = export_variant(variant, tmp_path, target)
    rng = np.random.default_rng(7)
    queries = np.array([0, 5, 511, 512, 513, 519, 1030, 4097, 2**20], dtype=np.float64)
    keys = np.array([0, 1, 7, 8, 500, 1030, 2**20 - 600], dtype=np.float64)
    q, k = rng.standard_normal((len(queries), variant.width)), rng.standard_normal((len(keys), variant.width))
    expected = reference_scores(q, k, queries, keys, SHIPPED[name])
    module = f"symproof_variant_{name}"
    if target == "c":
        got = _run_c(path, module, q, k, queries, keys)
    else:
        got = np.asarray(_load(path, f"{module}_{target}").scores(q, k, queries, keys))
    causal = keys[None, :] <= queries[:, None]
    np.testing.assert_allclose(got[causal], expected[causal], rtol=1e-9, atol=1e-9)
    # and the formula's own value past the query (the caller masks it): the paper's rho there too
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_scores_batch_over_leading_axes(tmp_path):
    variant = load_variant(shipped_variants()["rerope"])
    (path,) = export_variant(variant, tmp_path, "numpy")
    module = _load(path, "rerope_batch")
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 3, 4, 8)), rng.standard_normal((2, 3, 5, 8))
    queries, keys = np.arange(600, 604), np.arange(5)
    got = module.scores(q, k, queries, keys)
    assert got.shape == (2, 3, 4, 5)
    np.testing.assert_allclose(got[1, 2], module.scores(q[1, 2], k[1, 2], queries, keys), rtol=1e-15)


# -- the kernel property is decided on the written score files -------------------------------------------


def _wrong_clip(source):
    # the clip of ReRoPE dropped: plain RoPE, right inside the window and wrong past it
    assert "numpy.minimum(16, i - j)" in source
    return source.replace("numpy.minimum(16, i - j)", "(i - j)")


BROKEN = {"wrong values past the window": (_wrong_clip, "difference"),
          "does not run": (lambda source: source.replace("    rho = relative(i, j)\n", "    rho = 1 / 0\n"),
                           "ZeroDivisionError")}


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_wrong_score_file_refutes_the_kernel_property_and_export_writes_nothing(monkeypatch, tmp_path, capsys, how):
    from symproof._export import _offset as score_export

    edit, words = BROKEN[how]
    original = score_export._python_source
    monkeypatch.setattr(score_export, "_python_source", lambda variant, target: edit(original(variant, target)))
    (result,) = check_variant(_offset(RE_ROPE, True), only={"kernel"}, kernel_targets={"numpy"})
    assert result.status == N and words in result.reason and "\n" not in result.reason
    path = tmp_path / "v.toml"
    path.write_text(ROTARY.replace("w = 8", "w = 16") + '[position]\nrelative = "Min(i - j, w)"\ncausal = true\n',
                    encoding="utf-8")
    out = tmp_path / "out"
    assert main(["check", str(path), "--export", str(out), "--target", "numpy"]) == 1
    assert "nothing written" in capsys.readouterr().err
    assert not list(out.glob("*.py"))


USES = {
    "sin": "m + sin(m)", "cos": "m + cos(m)", "tan": "m + tan(1 / (m**2 + 2))", "exp": "m + exp(-abs(m) / 8)",
    "log": "m + log(abs(m) + 2) + log(abs(m) + 1, 2)", "sqrt": "m + sqrt(abs(m))", "floor": "floor(m / 3)",
    "ceiling": "ceiling(m / 3)", "abs": "abs(m)", "Min": "Min(m, 100, 2 * m)", "Max": "Max(m, -100, 2 * m)",
    "min": "min(m, 7)", "max": "max(m, -7)", "clip": "clip(m, -50, 5000)", "ramp": "m * ramp(m, 2, 9)",
    "where": "where(m < 8, m, 8 + floor((m - 8) / 4))", "sum": "sum(m / k, k, 1, 3)",
    "mod": "m - mod(m, 3) + mod(m / 2, 5 / 2)", "sign": "m + sign(m - 1)",
}


def test_every_allowed_function_has_a_use_here():
    assert set(USES) == set(FUNCTIONS)


@pytest.mark.parametrize("function", sorted(USES))
def test_every_function_prints_in_a_relative_position(function):
    # m = i - j, and floor(i / 3) for the functions that can read the positions themselves
    variant = _offset(re.sub(r"\bm\b", "(i - j)", USES[function]) + " + floor(i / 3) - floor(j / 3)", True,
                      scale={"query": "exp(r / 8)", "key": "1 + r"})
    targets = [t for t, why in available_targets(variant) if not why]
    (result,) = check_variant(variant, only={"kernel"})
    assert result.status == Y, result.reason
    assert [p.data["target"] for p in result.proof.parts if isinstance(p.data, dict) and "target" in p.data] == targets


def test_the_audit_refuses_a_relative_position_as_its_like():
    from symproof import audit

    with pytest.raises(InvalidInputError, match="per-token rotations"):
        audit(lambda x, positions: x, shipped_variants()["rerope"])
