"""The Triton export target: generated from the same definitions, checked against the references.

Without a GPU the kernel runs in Triton's interpreter (``TRITON_INTERPRET=1``, set before the
exported module is imported, since ``triton.jit`` reads it then).  Every test that runs the
kernel needs ``triton`` (the ``test`` extra); the generated text is checked without it."""

import ast
import importlib.util
import os

import numpy as np
import pytest

from symproof import InvalidInputError
from symproof._export import Kernel, kernel_files
from symproof.kernels import export_kernel, kernel_sources
from symproof.kernels._reference import ROPE_REFERENCES, reference_frequencies

CONFIGS = {
    "adjacent": dict(head_dim=16, pairing="adjacent"),
    "half": dict(head_dim=16, pairing="half"),
    "partial-adjacent": dict(head_dim=24, rotary_dim=16, denominator=24, pairing="adjacent"),
    "partial-half-base": dict(head_dim=24, rotary_dim=8, denominator=8, pairing="half", base=500.0),
    "odd-pair-count": dict(head_dim=12, pairing="half"),  # 6 pairs: the kernel's block of pairs is masked
}
# (x shape, positions shape): HF's (B, H, T, d) with ids shared or per sample, and (T, d)
LAYOUTS = {"BHTd-shared": ((2, 3, 5), (5,)), "BHTd-per-sample": ((2, 3, 5), (2, 1, 5)), "Td": ((37,), (37,))}
BOUNDS = {"float64": 1e-12, "float32": 4 * np.finfo(np.float32).eps, "float16": 2.0 ** -8}
TRITON_SKIP = "triton is not installed (pip install -e .[test]): the Triton export is only generated and parsed"


def _triton_or_skip():
    if importlib.util.find_spec("triton") is None:
        pytest.skip(TRITON_SKIP)


@pytest.fixture(scope="module")
def modules(tmp_path_factory, torch, load_module):
    _triton_or_skip()
    saved = os.environ.get("TRITON_INTERPRET")
    # read by triton.jit when the module is imported, and by parts of triton loaded at the first launch
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        loaded = {}
        for name, options in CONFIGS.items():
            (path,) = export_kernel("rope", "triton", tmp_path_factory.mktemp(name), verify=False, **options)
            loaded[name] = load_module(path, f"exported_triton_{name.replace('-', '_')}")
        yield loaded
    finally:
        if saved is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved


def _reference(name, x, positions, transpose=False):
    options = CONFIGS[name]
    rotary = options.get("rotary_dim", options["head_dim"])
    freqs = reference_frequencies(rotary, options.get("base", 10000.0), options.get("denominator"))
    return ROPE_REFERENCES["loop"](x, positions, freqs, rotary_dim=rotary, pairing=options["pairing"],
                                   transpose=transpose)


def _data(torch, name, layout, dtype="float64", seed=0):
    lead, ids_shape = LAYOUTS[layout]
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(lead + (CONFIGS[name]["head_dim"],))
    return torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(rng.integers(0, 4000, ids_shape))


def _close(torch, got, want, dtype):
    x = got.to(torch.float64).numpy()
    scale = np.maximum(np.max(np.abs(want), axis=-1, keepdims=True), 1.0)
    assert np.all(np.abs(x - want) <= BOUNDS[dtype] * scale), float(np.max(np.abs(x - want)))


@pytest.mark.parametrize("name", CONFIGS)
def test_generated_text_parses_and_is_printed_from_the_definitions(name):
    (text,) = kernel_sources("rope", "triton", verify=False, **CONFIGS[name]).values()
    tree = ast.parse(text)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"table", "apply", "apply_", "apply_qk", "backward", "_rope_kernel"} <= functions
    assert "@triton.jit" in text and "c*x_a - s*x_b" in text  # the forward update, as SymPy prints it
    half = CONFIGS[name].get("rotary_dim", CONFIGS[name]["head_dim"]) // 2
    pairs = f"r, r + {half}" if CONFIGS[name]["pairing"] == "half" else "2*r, 2*r + 1"
    assert f"at_a, at_b = {pairs}" in text


def test_only_plain_rope_has_a_triton_target():
    for family in ("variant", "call-length"):
        with pytest.raises(InvalidInputError, match="the triton target exports plain RoPE only"):
            kernel_files(Kernel(family, None, "m", ()), "triton")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CONFIGS)
def test_every_way_of_calling_gives_the_rotation(modules, torch, name, dtype, layout):
    module = modules[name]
    x, positions = _data(torch, name, layout, dtype)
    inputs = x.to(torch.float64).numpy()
    want = _reference(name, inputs, positions.numpy())
    fresh = module.apply(x, positions)
    assert fresh.dtype == x.dtype and fresh.shape == x.shape
    _close(torch, fresh, want, dtype)
    rope = module.table(positions, x.dtype)
    assert torch.equal(module.apply(x, table=rope), fresh)
    out = torch.full_like(x, float("nan"))
    assert module.apply(x, table=rope, out=out) is out and torch.equal(out, fresh)
    y = x.clone()
    assert module.apply_(y, table=rope) is y and torch.equal(y, fresh)
    back = _reference(name, inputs, positions.numpy(), transpose=True)
    _close(torch, module.backward(x, positions), back, dtype)
    g = x.clone()
    _close(torch, module.backward(g, table=rope, out=g), back, dtype)
    q_rotated, k_rotated = module.apply_qk(x, 2 * x, table=rope)
    assert torch.equal(q_rotated, fresh)
    _close(torch, k_rotated, _reference(name, 2 * inputs, positions.numpy()), dtype)


@pytest.mark.parametrize("name", ["half", "partial-adjacent"])
def test_float16_and_strided_tensors(modules, torch, name):
    module = modules[name]
    x, positions = _data(torch, name, "BHTd-per-sample", "float16", seed=1)
    _close(torch, module.apply(x, positions), _reference(name, x.to(torch.float64).numpy(), positions.numpy()),
           "float16")
    x, positions = _data(torch, name, "BHTd-shared", seed=2)
    seen = x.transpose(1, 2).contiguous().transpose(1, 2)  # stored (B, T, H, d), seen as (B, H, T, d)
    out = torch.empty_like(seen)
    module.apply(seen, positions, out=out)
    _close(torch, out, _reference(name, x.numpy(), positions.numpy()), "float64")
    wide = torch.zeros(x.shape[:-1] + (2 * x.shape[-1],), dtype=x.dtype)
    wide[..., ::2] = x  # every other entry: no unit stride along the row
    _close(torch, module.apply(wide[..., ::2], positions), _reference(name, x.numpy(), positions.numpy()), "float64")


@pytest.mark.parametrize("name", ["adjacent", "partial-half-base"])
def test_autograd_gives_the_transposed_rotation(modules, torch, name):
    module = modules[name]
    x, positions = _data(torch, name, "BHTd-per-sample", seed=3)
    weight = torch.randn(x.shape, dtype=x.dtype)
    leaf = x.clone().requires_grad_(True)
    (module.apply(leaf, positions) * weight).sum().backward()
    assert torch.allclose(leaf.grad, module.backward(weight, positions), rtol=0, atol=1e-12)


@pytest.mark.parametrize("off", ["0", "off", "false", "no"])
def test_a_cpu_tensor_outside_the_interpreter_is_refused(torch, tmp_path, monkeypatch, load_module, off):
    """Outside the interpreter as Triton reads TRITON_INTERPRET (``off`` is off, not a non-empty "on")."""
    _triton_or_skip()
    monkeypatch.setenv("TRITON_INTERPRET", off)
    (path,) = export_kernel("rope", "triton", tmp_path, verify=False, **CONFIGS["half"])
    module = load_module(path, f"exported_triton_no_interpreter_{off}")
    assert not module.INTERPRETED
    x, positions = _data(torch, "half", "Td")
    with pytest.raises(ValueError, match="runs on a GPU tensor, or on the CPU in Triton's interpreter"):
        module.apply(x, positions)
