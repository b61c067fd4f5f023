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


# how a call runs: the C kernel (contiguous CPU tensors), split over threads, or eager torch
# (other devices), with its small-tensor and large-tensor variants
PATHS = {
    "native": {},
    "native-threads": {"NATIVE_PARALLEL_ELEMENTS": 1},
    "torch-few-dispatches": {"NATIVE": False},
    "torch-large-tensor": {"NATIVE": False, "SMALL": 0},  # the path taken above SMALL elements
}


def _take_path(module, path, monkeypatch):
    for constant, value in PATHS[path].items():
        monkeypatch.setattr(module, constant, value)
    if path.startswith("native"):
        if module._native_functions() is None:
            pytest.skip(f"the C kernel is not available here ({module.native_status()})")

        def refuse(*args):  # a contiguous CPU call must not fall back to eager torch
            raise AssertionError("eager torch ran where the C kernel should")
        return refuse
    return None


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CONFIGS)
def test_every_way_of_calling_gives_the_rotation(modules, torch, name, dtype, layout, path, monkeypatch):
    module = modules[name]
    refuse = _take_path(module, path, monkeypatch)
    if refuse is not None:
        monkeypatch.setattr(module, "_rotate_into", refuse)
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
    q_rotated, k_rotated = module.apply_qk(x, 2 * x, positions)
    assert torch.equal(q_rotated, fresh) and torch.equal(k_rotated, module.apply(2 * x, table=rope))
    assert all(torch.equal(a, b) for a, b in zip(module.apply_qk(x, 2 * x, table=rope), (q_rotated, k_rotated)))


# the C kernel and eager torch make the same products; torch may fuse a multiply-add (one rounding
# fewer), so they agree to one rounding of the row's largest entry, not always to the bit
NATIVE_AGAINST_TORCH = {"float64": 2 * np.finfo(np.float64).eps, "float32": 2 * np.finfo(np.float32).eps}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CONFIGS)
def test_the_c_kernel_agrees_with_eager_torch_and_its_thread_split_changes_no_bit(modules, torch, name, dtype,
                                                                                   monkeypatch):
    module = modules[name]
    _take_path(module, "native", monkeypatch)
    x, positions = _data(torch, name, "BHTd-per-sample", dtype, seed=9)
    x = x.repeat(3, 5, 7, 1)  # (6, 15, 35, d): rows enough to split
    positions = positions.repeat(3, 1, 7)
    rope = module.table(positions, x.dtype)
    threads_before = torch.get_num_threads()
    for direction in ("apply", "backward"):
        rotate = getattr(module, direction)
        native = rotate(x, table=rope)  # below NATIVE_PARALLEL_ELEMENTS: one call
        monkeypatch.setattr(module, "NATIVE_PARALLEL_ELEMENTS", 1)
        try:
            for threads in (1, 2, 3):  # the split follows torch's intra-op threads
                torch.set_num_threads(threads)
                assert torch.equal(rotate(x, table=rope), native)
                y = x.clone()
                assert rotate(y, table=rope, out=y) is y and torch.equal(y, native)
        finally:
            torch.set_num_threads(threads_before)
        monkeypatch.setattr(module, "NATIVE_PARALLEL_ELEMENTS", 1 << 18)
        monkeypatch.setattr(module, "NATIVE", False)
        eager = rotate(x, table=rope)
        monkeypatch.setattr(module, "NATIVE", True)
        scale = torch.clamp(x.abs().amax(-1, keepdim=True), min=1.0)
        assert torch.all((native - eager).abs() <= NATIVE_AGAINST_TORCH[dtype] * scale)


def test_without_a_compiler_every_call_runs_in_torch(torch, tmp_path, monkeypatch, load_module):
    """A failing or missing compiler is not an error: the status says why, results stay right."""
    (path,) = export_kernel("rope", "torch", tmp_path, verify=False, **CONFIGS["half"])
    x, positions = _data(torch, "half", "BHTd-per-sample", seed=10)
    want = _reference("half", x.numpy(), positions.numpy())
    failing = tmp_path / "failing-cc"
    failing.write_text("#!/bin/sh\necho no compiling here >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("SYMPROOF_CACHE", str(tmp_path / "cache"))
    for compiler, status in ((str(failing), "failed: no compiling here"), (str(tmp_path / "absent-cc"), "pure torch")):
        monkeypatch.setenv("CC", compiler)
        module = load_module(path, f"exported_torch_no_cc_{len(status)}")
        _close(torch, module.apply(x, positions), want, "float64")
        assert module.native_status().startswith("pure torch") and status in module.native_status()
    monkeypatch.setenv("SYMPROOF_NATIVE", "0")
    module = load_module(path, "exported_torch_native_off")
    assert not module.NATIVE and "NATIVE is off" in module.native_status()
    _close(torch, module.apply(x, positions), want, "float64")


# (ids, distinct rows the table may hold): a decode step's ids, repeated over heads or broadcast
DECODE_IDS = {
    "per-sequence (B, 1, 1)": (lambda t: t.tensor([4000, 4001, 17, 4000]).view(4, 1, 1), 4),
    "expanded over heads (B, H, 1)": (lambda t: t.tensor([4000, 4001, 17, 4000]).view(4, 1, 1).expand(4, 48, 1), 4),
    "one tensor per head (B, H, 1)": (lambda t: t.tensor([4000, 4001, 17, 4000]).view(4, 1, 1).repeat(1, 48, 1), 3),
    "every head its own id": (lambda t: t.arange(4 * 48).view(4, 48, 1) + 3990, 4 * 48),
    "one id for all, written out": (lambda t: t.full((4, 48, 1), 4000), 1),
    "negative and zero ids": (lambda t: t.tensor([-5, 0, -5, 7]).view(4, 1, 1).repeat(1, 48, 1), 3),
}


@pytest.mark.parametrize("path", ["native", "torch-few-dispatches"])
@pytest.mark.parametrize("ids", DECODE_IDS)
@pytest.mark.parametrize("name", CONFIGS)
def test_decode_step_tabulates_each_distinct_id_once(modules, torch, name, ids, path, monkeypatch):
    module = modules[name]
    _take_path(module, path, monkeypatch)
    make, most = DECODE_IDS[ids]
    positions = make(torch)
    rope = module.table(positions, torch.float64)
    assert len(rope.pairs) <= most  # not one row per head
    rng = np.random.default_rng(13)
    q = torch.tensor(rng.standard_normal((4, 48, 1, CONFIGS[name]["head_dim"])))
    k = torch.tensor(rng.standard_normal((4, 48, 1, CONFIGS[name]["head_dim"])))
    full = np.broadcast_to(positions.numpy(), q.shape[:-1])
    got_q, got_k = module.apply_qk(q, k, positions)
    _close(torch, got_q, _reference(name, q.numpy(), full), "float64")
    _close(torch, got_k, _reference(name, k.numpy(), full), "float64")
    assert torch.equal(module.apply_qk(q, k, table=rope)[1], got_k)
    # the gathered cos/sin HF-style callers read are those of every id
    freqs = reference_frequencies(CONFIGS[name].get("rotary_dim", CONFIGS[name]["head_dim"]),
                                  CONFIGS[name].get("base", 10000.0), CONFIGS[name].get("denominator"))
    angles = positions.numpy()[..., None].astype(np.float64) * np.asarray(freqs)
    assert np.allclose(rope.cos.numpy(), np.cos(angles), rtol=0, atol=1e-12)
    assert np.allclose(rope.sin.numpy(), np.sin(angles), rtol=0, atol=1e-12)


def test_apply_qk_records_gradients_for_both(modules, torch):
    module = modules["half"]
    rng = np.random.default_rng(14)
    q = torch.tensor(rng.standard_normal((2, 3, 4, 16)), requires_grad=True)
    k = torch.tensor(rng.standard_normal((2, 1, 4, 16)), requires_grad=True)  # fewer key heads (GQA)
    positions = torch.tensor([[3, 9, 27, 81], [0, 1, 2, 3]]).view(2, 1, 4)
    weight_q, weight_k = torch.randn(q.shape, dtype=q.dtype), torch.randn(k.shape, dtype=k.dtype)
    rotated_q, rotated_k = module.apply_qk(q, k, positions)
    ((rotated_q * weight_q).sum() + (rotated_k * weight_k).sum()).backward()
    assert torch.allclose(q.grad, module.backward(weight_q, positions), rtol=0, atol=1e-12)
    assert torch.allclose(k.grad, module.backward(weight_k, positions), rtol=0, atol=1e-12)


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
    ("qk: k too wide", lambda m, t, x, p: m.apply_qk(x, t.zeros(7, 17, dtype=x.dtype), p), r"k must be .*16\)"),
    ("qk: ids per head of q", lambda m, t, x, p: m.apply_qk(
        t.zeros(2, 4, 7, 16, dtype=x.dtype), t.zeros(2, 2, 7, 16, dtype=x.dtype), t.zeros(2, 4, 7, dtype=t.int64)),
     "do not broadcast"),
    ("qk: no ids", lambda m, t, x, p: m.apply_qk(x, x), "give the position ids or a table"),
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
                   module.apply_(x, table=rope), module.apply(x[:, :, :1], ids[:, :, :1]),
                   *module.apply_qk(x, x[:, :1], ids), *module.apply_qk(x[:, :, :1], x[:, :, :1], ids[:, :, :1])):
        assert result.device == x.device and result.shape[-1] == x.shape[-1]


CUDA_SKIP = "no CUDA device on this machine: the device-agnostic torch path is checked on 'meta' above instead"


@pytest.mark.parametrize("name", CONFIGS)
def test_on_a_cuda_device_it_matches_the_reference(modules, torch, name):
    if not torch.cuda.is_available():
        pytest.skip(CUDA_SKIP)
    module = modules[name]
    x, positions = _data(torch, name, "BHTd-per-sample", "float32", seed=15)
    want = _reference(name, x.to(torch.float64).numpy(), positions.numpy())
    device_x, device_ids = x.to("cuda"), positions.to("cuda")
    rope = module.table(device_ids, device_x.dtype, device_x.device)
    _close(torch, module.apply(device_x, table=rope).cpu(), want, "float32")
    out = torch.empty_like(device_x)
    _close(torch, module.apply(device_x, table=rope, out=out).cpu(), want, "float32")
    _close(torch, module.apply_qk(device_x, device_x, device_ids)[1].cpu(), want, "float32")
    _close(torch, module.apply_(device_x.clone(), table=rope).cpu(), want, "float32")
