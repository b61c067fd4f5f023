"""Rotary files with heads: ``h`` in frequencies and scales, and a bias added to the rotary score.

Verdicts are written from the mathematics (each row says why), never copied from a run; the refusals
name the key and the fix in one line; the exported kernels take the head index and refuse one outside
``0..HEADS-1`` in every target.
"""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from symproof import VariantFileError
from symproof.variants import Variant, check_variant
from symproof.variants._export import variant_source
from symproof.variants._kernel_file import compiler


def _rotary(**extra) -> dict:
    data = {"name": "probe", "kind": "rotary", "width": 4, "pairing": "half", "heads": 4,
            "frequencies": {"base": 100}}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):  # merged; a None entry removed
            data[key] = {k: v for k, v in {**data[key], **value}.items() if v is not None}
        elif value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


ALIBI = {"formula": "-slope * abs(j - i)", "slope": "2**(-8*(h + 1)/heads)"}

# -- what the file may say, and what it may not -----------------------------------------------------

REFUSED = {
    "heads on a bias file": ({"name": "p", "kind": "bias", "heads": 2,
                              "bias": {"formula": "0", "heads": 2, "slope": "1"}}, "key 'heads': applies to kind = 'rotary'"),
    "no heads": (_rotary(heads=0), "key 'heads': expected a head count between 1 and 1024, got 0"),
    "too many heads": (_rotary(heads=1025), "expected a head count between 1 and 1024, got 1025"),
    "a bias without heads": (_rotary(heads=None, bias=ALIBI), "key 'bias': in a rotary file needs the head count"),
    "the heads counted twice": (_rotary(bias={**ALIBI, "heads": 4}), "key 'bias.heads': a rotary file counts its heads once"),
    "a bias without a slope": (_rotary(bias={"formula": "-abs(j - i)"}), "key 'bias.slope': is required"),
    "h without heads": (_rotary(heads=None, frequencies={"base": "100 * 2**h"}), "'h'"),
    "h in the transform": (_rotary(position={"transform": "m * (h + 1)"}), "'h'"),
    # a list of values is one table for every head: a per-head list is a formula (where, a table read by h)
    "h in a list of values": (_rotary(frequencies={"rule": "list", "values": ["h", 1], "base": None}), "'h'"),
    "h in the attention factor": (_rotary(attention={"factor": "h + 1"}), "'h'"),
    "heads with a relative position": (_rotary(position={"relative": "Min(i - j, 8)"}),
                                       "key 'heads': cannot be combined with position.relative"),
    "heads with a length rule": (_rotary(length={"threshold": 64}), "key 'heads': cannot be combined with length"),
    "a bias with an equivalent": (_rotary(bias=ALIBI, equivalent={"name": "RoPE", "frequencies": "100**(-2*r/d)"}),
                                  "key 'equivalent': compares the rotations with a named RoPE"),
    "a table read by h past its end": (_rotary(params={"b": [100, 200]}, frequencies={"base": "b(h)"}),
                                       "key 'frequencies.base'"),
    "a slope table read by h past its end": (_rotary(params={"s": [1, 2]}, bias={"formula": "-slope * abs(j - i)",
                                                                                 "slope": "s(h)"}), "key 'bias.slope'"),
    # head 3 is not among the heads checked in full (0, 1, 2, 4, 6, 7 of 8): built anyway, and refused
    "a scale undefined in one head": (_rotary(heads=8, scale={"query": "log(where(h == 3, 0, h + 1)) * m + 1"}),
                                      "key 'scale.query'"),
    "more instances than the bound": (_rotary(width=8192, heads=64), "(head, pair) instances; at most 65536"),
}


#: refusals that must name the head at fault
NAMES_THE_HEAD = {"a table read by h past its end": 2, "a slope table read by h past its end": 2,
                  "a scale undefined in one head": 3}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_in_one_line_naming_the_key(name):
    data, expected = REFUSED[name]
    with pytest.raises(VariantFileError) as error:
        Variant.from_dict(data)
    message = str(error.value)
    assert expected in message and "\n" not in message, message
    if name in NAMES_THE_HEAD:
        assert f"(head h = {NAMES_THE_HEAD[name]}, of 0..{data['heads'] - 1})" in message, message


def test_whole_file_refuses_a_frequency_table_without_a_head():
    variant = Variant.from_dict(_rotary(frequencies={"base": "100 * 2**h"}))
    with pytest.raises(VariantFileError, match=r"per head: take one head with variant.head\(h\)"):
        variant.frequencies()
    assert [str(w) for w in variant.head(1).frequencies()] == ["1", "sqrt(2)/20"]  # 200**(-2r/4) = 200**(-1/2) at r = 1


# -- verdicts, from the mathematics -------------------------------------------------------------------

Y, N = "proved", "refuted"

VERDICTS = {
    # RoPE at a base that differs per head is RoPE in each head: every property RoPE has
    "per-head bases": (_rotary(frequencies={"base": "100 * 2**h"}),
                       dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {}),
    # gamma_h^i gamma_h^(-j) = gamma_h^(i - j): offset-only in every head, norms scaled, cancels at i = j
    "per-head decay (RetNet)": (_rotary(scale={"query": "(1 - 2**(-5 - h))**m", "key": "(1 - 2**(-5 - h))**(-m)"}),
                                dict(norm=N, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {"norm": "head h = 0"}),
    # a scale 2^m on the queries of head 2 alone: that head's score reads i, not only j - i
    "one head's query scale": (_rotary(scale={"query": "where(h == 2, 2**m, 1)"}),
                               dict(norm=N, relative=N, shift=N, direction=Y, plain_at_zero=N),
                               {"norm": "head h = 2", "relative": "head h = 2", "shift": "head h = 2"}),
    # head 1 rotates by nothing: its score is q^T k at every offset, the sign invisible there
    "one head without rotation": (_rotary(frequencies={"rule": "formula", "formula": "where(h == 1, 0, 100**(-2*r/d))",
                                                       "base": None}),
                                  dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y),
                                  {"direction": "head h = 1"}),
    # RoPE plus -slope |j - i|: both offset-only, the bias even and 0 at offset 0, RoPE's sine odd
    "RoPE plus ALiBi": (_rotary(bias=ALIBI), dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {}),
    # a bias -slope * j reads the key's position itself: b(1, 1) != b(0, 0)
    "RoPE plus a key bias": (_rotary(bias={"formula": "-slope * j", "slope": "1"}),
                             dict(norm=Y, relative=N, shift=N, direction=Y, plain_at_zero=N), {}),
    # NoPE (every frequency 0) plus ALiBi: the score is q^T k - slope |j - i|, even in the offset
    "NoPE plus ALiBi": (_rotary(frequencies={"rule": "formula", "formula": "0", "base": None}, bias=ALIBI),
                        dict(norm=Y, relative=Y, shift=Y, direction=N, plain_at_zero=Y), {}),
    # one list of frequencies for every head, and per-pair factors: RoPE plus ALiBi in every head (the
    # frequencies have no value at a symbolic pair: checked value by value)
    "a list plus ALiBi": (_rotary(frequencies={"rule": "list", "values": [1, "1/10"], "base": None}, bias=ALIBI),
                          dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {}),
    "factors plus ALiBi": (_rotary(frequencies={"factors": [1, 2]}, bias=ALIBI),
                           dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {}),
    # a bias that reads the head index itself: -(h + 1) |j - i| is offset-only in every head
    "a bias in h": (_rotary(bias={"formula": "-(h + 1) * abs(j - i)", "slope": "1"}),
                    dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y), {}),
}


@pytest.fixture(scope="module")
def verdicts():
    return {name: {r.claim.name: r for r in check_variant(Variant.from_dict(data), kernel_targets=["numpy"])}
            for name, (data, _, _) in VERDICTS.items()}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_verdicts_from_the_mathematics(verdicts, name):
    _, expected, _ = VERDICTS[name]
    got = {key: verdicts[name][key].status for key in expected}
    assert got == expected, {k: verdicts[name][k].reason for k in got if got[k] != expected[k]}


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_a_failing_head_is_named(verdicts, name):
    _, _, named = VERDICTS[name]
    for key, head in named.items():
        assert head in verdicts[name][key].reason, verdicts[name][key].reason


@pytest.mark.parametrize("name", sorted(VERDICTS))
def test_the_kernel_of_every_head_agrees(verdicts, name):
    kernel = verdicts[name]["kernel"]
    assert kernel.status == "proved", kernel.reason


# -- exported kernels take the head index, and refuse one outside the heads ---------------------------

RETNET = _rotary(scale={"query": "(1 - 2**(-5 - h))**m", "key": "(1 - 2**(-5 - h))**(-m)"}, bias=ALIBI)


def _module(target: str):
    namespace: dict = {}
    (text,) = variant_source(Variant.from_dict(RETNET), target).values()
    exec(compile(text, f"<{target} kernel>", "exec"), namespace)  # noqa: S102 - symproof's own generated file
    return namespace


BAD_HEADS = (-1, 4, 2**31, -(2**63), 1.0, 1.5, True, "0", None)


@pytest.mark.parametrize("target", ["numpy", "torch"])
@pytest.mark.parametrize("head", BAD_HEADS, ids=repr)
def test_python_kernels_refuse_a_head_outside_the_heads(target, head):
    module = _module(target)
    with pytest.raises(IndexError, match=r"is outside the file's heads 0\.\.3: pass an integer head index"):
        module["apply"](np.ones((2, 4)), np.arange(2.0), "query", head=head)


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_python_kernels_need_the_head(target):
    with pytest.raises(TypeError, match="head"):
        _module(target)["apply"](np.ones((2, 4)), np.arange(2.0), "query")


@pytest.mark.parametrize("target", ["numpy", "torch"])
def test_python_kernels_give_each_head_its_own_scale(target):
    apply = _module(target)["apply"]
    x = np.ones((1, 4))
    rows = [np.asarray(apply(x, np.array([3.0]), "query", head=h)) for h in range(4)]
    for h, row in enumerate(rows):  # at m = 3 every pair is scaled by gamma_h^3
        norm = np.linalg.norm(row)
        assert norm == pytest.approx(2.0 * (1 - 2.0 ** (-5 - h)) ** 3, rel=1e-12)
    bias = np.asarray(_module(target)["bias"](3, 3))
    assert bias.shape == (4, 3, 3) and bias[1, 2, 0] == pytest.approx(-2 * 2 ** (-4))


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
def test_c_kernel_refuses_a_head_outside_the_heads(tmp_path):
    (name, text), = variant_source(Variant.from_dict(RETNET), "c").items()
    source = tmp_path / name
    source.write_text(text)
    library = tmp_path / "k.so"
    subprocess.run([compiler(), "-shared", "-fPIC", "-O1", "-o", str(library), str(source), "-lm"], check=True)
    function = getattr(ctypes.CDLL(str(library)), name[:-2] + "_apply")
    function.restype = ctypes.c_int
    x, out, pos = np.ones(4), np.full(4, 7.0), np.array([3.0])
    pointer = ctypes.POINTER(ctypes.c_double)

    def call(head):
        return function(x.ctypes.data_as(pointer), pos.ctypes.data_as(pointer), out.ctypes.data_as(pointer),
                        ctypes.c_long(1), ctypes.c_int(1), ctypes.c_int(head))

    for head in (-1, 4, 2**31 - 1, -(2**31)):
        out[:] = 7.0
        assert call(head) == 3 and np.all(out == 7.0)  # HEAD_OUT_OF_RANGE, nothing written
    assert call(3) == 0 and np.linalg.norm(out) == pytest.approx(2.0 * (1 - 2.0 ** -8) ** 3, rel=1e-12)
