"""The exported PyTorch module as a model uses it: a table built once per forward and shared by
layers, out= and in-place application, autograd, both pairings, partial rotation, every float dtype."""

import numpy as np
import pytest

from symproof.kernels import export_kernel
from symproof.kernels._reference import ROPE_REFERENCES, reference_frequencies

CONFIGS = {
    "adjacent": dict(head_dim=16, pairing="adjacent"),
    "half": dict(head_dim=16, pairing="half"),
    "partial-adjacent": dict(head_dim=24, rotary_dim=16, denominator=24, pairing="adjacent"),
    "partial-half-base": dict(head_dim=24, rotary_dim=8, denominator=8, pairing="half", base=500.0),
}
# (x shape, positions shape): HF's (B, H, T, d) with ids shared or per sample, and (T, d)
LAYOUTS = {"BHTd-shared": ((2, 3, 5), (5,)), "BHTd-per-sample": ((2, 3, 5), (2, 1, 5)), "Td": ((7,), (7,))}
# float32 inputs, angles in float64 rounded once: a few roundings of the row's largest entry
BOUNDS = {"float64": 1e-12, "float32": 4 * np.finfo(np.float32).eps, "bfloat16": 2.0 ** -6, "float16": 2.0 ** -8}


@pytest.fixture(scope="module")
def modules(tmp_path_factory, torch, load_module):
    loaded = {}
    for name, options in CONFIGS.items():
        (path,) = export_kernel("rope", "torch", tmp_path_factory.mktemp(name), verify=False, **options)
        loaded[name] = load_module(path, f"exported_torch_{name.replace('-', '_')}")
    return loaded


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
    positions = rng.integers(0, 4000, ids_shape)
    return torch.tensor(x).to(getattr(torch, dtype)), torch.tensor(positions)


def _close(torch, got, want, dtype):
    x = got.to(torch.float64).numpy()
    scale = np.maximum(np.max(np.abs(want), axis=-1, keepdims=True), 1.0)
    assert np.all(np.abs(x - want) <= BOUNDS[dtype] * scale), float(np.max(np.abs(x - want)))


@pytest.mark.parametrize("path", ["few-dispatches", "large-tensor"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CONFIGS)
def test_every_way_of_calling_gives_the_rotation(modules, torch, name, dtype, layout, path, monkeypatch):
    module = modules[name]
    if path == "large-tensor":  # the path taken above SMALL elements, on these small inputs
        monkeypatch.setattr(module, "SMALL", 0)
    x, positions = _data(torch, name, layout, dtype)
    inputs = x.to(torch.float64).numpy()
    want = _reference(name, inputs, positions.numpy())
    fresh = module.apply(x, positions)
    assert fresh.dtype == x.dtype and fresh.shape == x.shape
    _close(torch, fresh, want, dtype)
    rope = module.table(positions, x.dtype)
    assert torch.equal(module.apply(x, table=rope), fresh)
    assert torch.equal(module.apply(x, positions, table=rope), fresh)
    out = torch.full_like(x, float("nan"))
    assert module.apply(x, table=rope, out=out) is out and torch.equal(out, fresh)
    y = x.clone()
    assert module.apply_(y, table=rope) is y
    _close(torch, y, want, dtype)  # in place: the same products, one addition not fused
    z = x.clone()
    assert module.apply(z, positions, out=z) is z and torch.equal(z, y)
    rotary = CONFIGS[name].get("rotary_dim", CONFIGS[name]["head_dim"])
    assert torch.equal(fresh[..., rotary:], x[..., rotary:]) and torch.equal(y[..., rotary:], x[..., rotary:])
    back = _reference(name, inputs, positions.numpy(), transpose=True)
    _close(torch, module.backward(x, positions), back, dtype)
    _close(torch, module.backward(x, table=rope), back, dtype)
    g = x.clone()
    _close(torch, module.backward(g, table=rope, out=g), back, dtype)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", CONFIGS)
def test_low_precision_dtypes(modules, torch, name, dtype):
    x, positions = _data(torch, name, "BHTd-per-sample", dtype, seed=1)
    want = _reference(name, x.to(torch.float64).numpy(), positions.numpy())
    got = modules[name].apply(x, positions)
    assert got.dtype == x.dtype
    _close(torch, got, want, dtype)
    y = x.clone()
    _close(torch, modules[name].apply_(y, positions), want, dtype)


@pytest.mark.parametrize("name", CONFIGS)
def test_one_table_serves_every_layer(modules, torch, name):
    module = modules[name]
    q, positions = _data(torch, name, "BHTd-shared", "float32", seed=2)
    k, _ = _data(torch, name, "BHTd-shared", "float32", seed=3)
    rope = module.table(positions, torch.float32)
    for layer_input in (q, k, q * 2):
        assert torch.equal(module.apply(layer_input, table=rope), module.apply(layer_input, positions))


@pytest.mark.parametrize("name", CONFIGS)
def test_non_contiguous_input_and_output(modules, torch, name):
    module = modules[name]
    x, positions = _data(torch, name, "BHTd-shared", seed=4)
    bthd = x.transpose(1, 2).contiguous()  # stored (B, T, H, d), seen as (B, H, T, d)
    seen = bthd.transpose(1, 2)
    out = torch.empty_like(bthd).transpose(1, 2)
    module.apply(seen, positions, out=out)
    _close(torch, out, _reference(name, x.numpy(), positions.numpy()), "float64")
    odd = torch.empty(x.shape[:-1] + (x.shape[-1] + 1,), dtype=x.dtype)[..., 1:]  # odd storage offset
    odd.copy_(x)
    _close(torch, module.apply(odd, positions), _reference(name, x.numpy(), positions.numpy()), "float64")


@pytest.mark.parametrize("name", CONFIGS)
def test_autograd_gives_the_transposed_rotation(modules, torch, name):
    module = modules[name]
    x, positions = _data(torch, name, "BHTd-per-sample", seed=5)
    weight = torch.randn(x.shape, dtype=x.dtype)
    leaf = x.clone().requires_grad_(True)
    (module.apply(leaf, positions) * weight).sum().backward()
    assert torch.allclose(leaf.grad, module.backward(weight, positions), rtol=0, atol=1e-12)
    small = torch.randn((2, 3, CONFIGS[name]["head_dim"]), dtype=torch.float64, requires_grad=True)
    rope = module.table(torch.tensor([3, 70, 2000]), torch.float64)
    assert torch.autograd.gradcheck(lambda v: module.apply(v, table=rope), (small,))
    assert torch.autograd.gradgradcheck(lambda v: module.apply(v, table=rope), (small,))


def test_matches_hf_rotate_half_formula(modules, torch):
    """HF's ``q * cos + rotate_half(q) * sin`` with cos/sin duplicated over both halves."""
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    x, positions = _data(torch, "half", "BHTd-per-sample", seed=6)
    rope = modules["half"].table(positions, torch.float64)
    cos, sin = (torch.cat((t, t), dim=-1) for t in (rope.cos, rope.sin))
    want = x * cos + llama.rotate_half(x) * sin
    assert torch.allclose(modules["half"].apply(x, table=rope), want, rtol=0, atol=1e-12)


def test_a_wrong_pairing_is_caught(modules, torch):
    x, positions = _data(torch, "half", "BHTd-shared", seed=7)
    got = modules["adjacent"].apply(x, positions).numpy()
    assert np.max(np.abs(got - _reference("half", x.numpy(), positions.numpy()))) > 1e-3


ERRORS = [
    ("float ids", lambda m, t, x, p: m.apply(x, p.to(t.float64)), "positions must be integers"),
    ("no ids", lambda m, t, x, p: m.apply(x), "give the position ids or a table"),
    ("not a table", lambda m, t, x, p: m.apply(x, table=(p, p)), "table must be a RopeTable"),
    ("table dtype", lambda m, t, x, p: m.apply(x, table=m.table(p, t.float32)), "build it with table"),
    ("other ids", lambda m, t, x, p: m.apply(x, p + 1, table=m.table(p, t.float64)), "positions differ"),
    ("ids shape", lambda m, t, x, p: m.apply(x, t.zeros(4, dtype=t.int64)), "do not broadcast"),
    ("width", lambda m, t, x, p: m.apply(x[..., :8], p), r"shape \(\.\.\., T, 16\)"),
    ("out shape", lambda m, t, x, p: m.apply(x, p, out=t.empty(3)), "out must be a tensor of shape"),
    ("out overlaps", lambda m, t, x, p: m.apply(x[:6], p[:6], out=x[1:]), "shares memory"),
    ("out with grad", lambda m, t, x, p: m.apply(x.requires_grad_(True), p, out=t.empty_like(x)), "cannot record"),
    ("table dtype kind", lambda m, t, x, p: m.table(p, t.int32), "floating dtype"),
]


@pytest.mark.parametrize("call, message", [(c, m) for _, c, m in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_input_names_what_was_expected(modules, torch, call, message):
    x, positions = _data(torch, "adjacent", "Td", seed=8)
    with pytest.raises(ValueError, match=message):
        call(modules["adjacent"], torch, x, positions)


@pytest.mark.parametrize("name", CONFIGS)
def test_nothing_is_tied_to_the_cpu(modules, torch, name):
    """On the ``meta`` device (shapes only, no data) every tensor the module makes must follow x:
    a hard-coded CPU tensor would raise here, as it would on CUDA."""
    module = modules[name]
    x = torch.empty((2, 3, 5, CONFIGS[name]["head_dim"]), device="meta")
    ids = torch.zeros((2, 1, 5), dtype=torch.int64, device="meta")
    rope = module.table(ids, x.dtype, x.device)
    assert rope.device == x.device
    for result in (module.apply(x, table=rope), module.apply(x, ids), module.backward(x, table=rope),
                   module.apply_(x, table=rope), module.apply(x[:, :, :1], ids[:, :, :1])):
        assert result.device == x.device and result.shape[-1] == x.shape[-1]
