"""Layer-pattern files: the layers of each type against transformers' own configs, verdicts per layer type,
refusals, and the command's per-type answer.

Which layer is of which type is compared with what Hugging Face's config classes compute for the model
(``Llama4TextConfig.no_rope_layers`` / ``layer_types``, ``Gemma3TextConfig.layer_types``), not with our
reading of the pattern.  Verdicts are written from the mathematics (comments say why).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from symproof import VariantFileError
from symproof._ground._examples import resolve_example
from symproof.variants._layers import check_layers, load_layers, parse_layers

REPO = Path(__file__).resolve().parents[2]
transformers = pytest.importorskip("transformers")


def test_llama4_layer_types_are_hugging_faces():
    layers = load_layers(resolve_example("llama4_layers"))
    config = transformers.Llama4TextConfig(num_hidden_layers=layers.count)
    # no_rope_layers[k] is 1 where layer k uses RoPE (HF's name), and those layers use chunked attention
    assert layers.layers_of("rope") == [k for k, uses in enumerate(config.no_rope_layers) if uses]
    assert layers.layers_of("nope") == [k for k, uses in enumerate(config.no_rope_layers) if not uses]
    assert layers.layers_of("rope") == [k for k, t in enumerate(config.layer_types) if t == "chunked_attention"]
    chunk = config.attention_chunk_size
    assert layers.types["rope"].params["C"] == chunk and layers.types["nope"].params["F"] == config.floor_scale


def test_gemma3_layer_types_are_hugging_faces():
    layers = load_layers(resolve_example("gemma3_layers"))
    config = transformers.Gemma3TextConfig(num_hidden_layers=layers.count)
    assert layers.layers_of("local") == [k for k, t in enumerate(config.layer_types) if t == "sliding_attention"]
    assert layers.layers_of("global") == [k for k, t in enumerate(config.layer_types) if t == "full_attention"]


Y, N = "proved", "refuted"

#: example -> layer type -> expected verdicts (the properties not listed are not pinned here)
VERDICTS = {
    "llama4_layers": {
        # RoPE: offset-only scores; Llama 4's chunks depend on where the query sits, not only on the offset
        "rope": dict(norm=Y, relative=Y, shift=Y, plain_at_zero=Y, mask_relative=N, mask_causal=Y, mask_self=Y),
        # no rotation, but the temperature scales the query by a function of its position: norms change past
        # m + 1 = 8192, and the score is no longer a function of the offset; the causal mask is offset-only.
        # RoFormer's bound with the query at D scales with the temperature: it rises where the step is,
        # from D = 8190 to D = 8191 (a threshold the formula names only as the reciprocal 1/8192)
        "nope": dict(norm=N, relative=N, shift=N, plain_at_zero=N, decay=N, mask_relative=Y, mask_causal=Y,
                     mask_self=Y),
    },
    "gemma3_layers": {
        # RoPE at two bases (and a linear transform m / 8 at the global layers): every RoPE property; both
        # masks read only the offset
        "local": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, mask_relative=Y, mask_causal=Y),
        "global": dict(norm=Y, relative=Y, shift=Y, direction=Y, plain_at_zero=Y, mask_relative=Y, mask_causal=Y),
    },
}


@pytest.fixture(scope="module")
def checked():
    return {name: dict(check_layers(load_layers(resolve_example(name)), kernel_targets={"numpy"}))
            for name in VERDICTS}


@pytest.mark.parametrize("name, kind", [(n, k) for n, types in VERDICTS.items() for k in types])
def test_each_layer_type_gets_its_own_verdicts(checked, name, kind):
    got = {r.claim.name: r.status for r in checked[name][kind]}
    assert {k: got[k] for k in VERDICTS[name][kind]} == VERDICTS[name][kind]
    assert got["kernel"] == "proved"


def test_every_layer_type_is_a_variant_named_after_it():
    layers = load_layers(resolve_example("gemma3_layers"))
    assert [v.name for v in layers.types.values()] == ["gemma3_layers-local", "gemma3_layers-global"]
    assert all(v.positions == "nonnegative" for v in layers.types.values())  # the file's default


def _doc(**layers) -> dict:
    rope = {"kind": "rotary", "width": 4, "pairing": "half", "frequencies": {"base": 100}}
    return {"name": "pattern", "layers": {"pattern": ["a", "b"], "a": rope, "b": dict(rope), **layers}}


REFUSED = {
    "a type without a table": (dict(pattern=["a", "c"]), "layers.pattern", "no [layers.c] table"),
    "an unused table": (dict(pattern=["a"]), "layers.b", "never names"),
    "an empty pattern": (dict(pattern=[]), "layers.pattern", "1 to 1024"),
    "a pattern of numbers": (dict(pattern=[1, 2]), "layers.pattern", "layer type names"),
    "too few layers": (dict(count=1), "layers.count", "from 2"),
    "too many layers": (dict(count=10**6), "layers.count", "to 1024"),
    "a boolean count": (dict(count=True), "layers.count", "the number of layers"),
    "a type that is not a table": (dict(b=3), "layers.b", "expected a table"),
    "a bad type name": ({"pattern": ["a", "B-x"], "B-x": {}}, "layers.B-x", "lower-case letter"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_patterns_are_refused_naming_the_key(name):
    changes, key, expected = REFUSED[name]
    data = _doc()
    data["layers"].update(changes)
    with pytest.raises(VariantFileError) as err:
        parse_layers(data, "p.toml")
    assert f"key '{key}'" in str(err.value) and expected in str(err.value), str(err.value)


def test_a_bad_layer_type_is_refused_naming_its_table():
    data = _doc()
    data["layers"]["b"]["width"] = 3
    with pytest.raises(VariantFileError, match=r"p.toml \[layers.b\]: key 'width'"):
        parse_layers(data, "p.toml")


def test_a_variant_key_at_the_top_says_where_it_goes():
    data = _doc()
    data["kind"] = "rotary"
    with pytest.raises(VariantFileError, match=r"sub-table, \[layers.TYPE\]"):
        parse_layers(data, "p.toml")


def _run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "symproof", *args], capture_output=True, text=True, cwd=cwd,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}, timeout=600)


def test_the_command_names_every_verdict_by_layer_type(tmp_path):
    done = _run("check", "gemma3_layers", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["layers"]
    assert list(data["types"]) == ["local", "global"] and data["count"] == 34
    for kind, entry in data["types"].items():
        assert entry["layers"] == load_layers(resolve_example("gemma3_layers")).layers_of(kind)
        assert {p["property"] for p in entry["properties"]} >= {"relative", "mask_relative", "kernel"}
    table = _run("check", "gemma3_layers", cwd=tmp_path).stdout
    assert "every property, per layer type:" in table and "layer type 'global':" in table


@pytest.mark.parametrize("option", ["--plot=out.svg", "--report=out"])
def test_options_for_one_variant_are_refused_for_a_pattern(option, tmp_path):
    done = _run("check", "gemma3_layers", option, cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "layer-pattern file" in done.stderr


def test_export_writes_one_kernel_per_layer_type(tmp_path):
    done = _run("check", "gemma3_layers", "--export", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("*.py")) == [
        "symproof_variant_gemma3_layers_global.py", "symproof_variant_gemma3_layers_local.py"]
