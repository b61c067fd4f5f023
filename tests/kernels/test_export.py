"""Exported kernels, run as a user runs them: numpy module imported from disk, C compiled with
the system compiler and called through ctypes, torch module against real PyTorch."""

import os
import subprocess
import sys

import numpy as np
import pytest

from symproof._ground._io import MANIFEST_NAME
from symproof import InvalidInputError
from symproof.kernels import RopeConfig, export_kernel, kernel_sources
from symproof.kernels._reference import reference_frequencies, rope_loop

CONFIGS = [
    pytest.param(dict(head_dim=8, pairing="adjacent"), id="adjacent"),
    pytest.param(dict(head_dim=8, pairing="half"), id="half"),
    pytest.param(dict(head_dim=12, rotary_dim=8, denominator=12, pairing="adjacent"), id="partial-adjacent"),
    pytest.param(dict(head_dim=12, rotary_dim=4, denominator=4, pairing="half", base=500.0), id="partial-half-base"),
]


def _expected(options, x, positions, transpose=False):
    rotary = options.get("rotary_dim", options["head_dim"])
    freqs = reference_frequencies(rotary, options.get("base", 10000.0), options.get("denominator"))
    return rope_loop(x, positions, freqs, rotary_dim=rotary, pairing=options["pairing"], transpose=transpose)


def _data(options, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((2, 5, options["head_dim"])), rng.integers(0, 4000, (2, 5))


@pytest.mark.parametrize("options", CONFIGS)
def test_numpy_export_imports_only_numpy_and_the_standard_library_and_matches(tmp_path, options, load_module):
    (path,) = export_kernel("rope", "numpy", tmp_path, verify=False, **options)
    text = open(path).read()
    imports = {line.split()[1] for line in text.splitlines() if line.startswith(("import ", "from "))}
    assert "numpy" in imports and imports - {"numpy"} <= sys.stdlib_module_names
    module = load_module(path, f"exported_{abs(hash(path))}")
    x, positions = _data(options)
    np.testing.assert_allclose(module.apply(x, positions), _expected(options, x, positions), rtol=0, atol=1e-12)
    np.testing.assert_allclose(module.backward(x, positions), _expected(options, x, positions, True), rtol=0, atol=1e-12)


@pytest.mark.parametrize("calls", [
    [[0], [2**31]],  # a far position after a near one: the table must not span both
    [[-1], [10**6], [4 * 10**6], [2**40]],
    [list(range(100)), [100], [101], [2**31 - 1]],  # a decoding loop, then a jump
])
def test_the_numpy_table_cache_stays_bounded_whatever_the_positions(tmp_path, load_module, calls):
    """The cached table of angles grows with head-room for nearby positions, but never spans more than its
    limit or the current call's own positions: a call at 2**31 after one at 0 used to tabulate 2**31 rows."""
    (path,) = export_kernel("rope", "numpy", tmp_path, verify=False, head_dim=8, pairing="half")
    module = load_module(path, f"exported_cache_{abs(hash(path))}")
    x = np.ones((1, 8))
    for positions in calls:
        p = np.array(positions)
        got = module.apply(np.ones((p.size, 8)), p)
        np.testing.assert_allclose(got, _expected(dict(head_dim=8, pairing="half"), np.ones((p.size, 8)), p),
                                   rtol=0, atol=1e-12 * (1 + float(np.abs(p).max())))
        first, last = module._cache["range"][:2]
        assert last - first + 1 <= max(module.TABLE_SPAN_LIMIT, 2 * (int(p.max()) - int(p.min()) + 1))
    assert module.apply(x, np.array([5])).shape == (1, 8)


@pytest.mark.parametrize("dtype, atol", [("float64", 1e-12), ("float32", 1e-5)])
@pytest.mark.parametrize("options", CONFIGS)
def test_c_export_compiles_and_matches(tmp_path, options, dtype, atol, compile_rope):
    c_path, h_path = export_kernel("rope", "c", tmp_path, verify=False, dtype=dtype, **options)
    assert h_path.endswith(".h") and '#include "symproof_rope.h"' in open(c_path).read()
    kernel = compile_rope(c_path, "symproof_rope", dtype)
    x, positions = _data(options, seed=1)
    x = x.astype(dtype)
    want = _expected(options, x.astype(np.float64), positions)
    np.testing.assert_allclose(kernel.apply(x, positions), want, rtol=0, atol=atol)
    np.testing.assert_allclose(kernel.backward(x, positions), _expected(options, x.astype(np.float64), positions, True),
                               rtol=0, atol=atol)


def test_c_kernel_reports_position_outside_its_table(tmp_path, compile_rope):
    (c_path, _) = export_kernel("rope", "c", tmp_path, verify=False, head_dim=4)
    kernel = compile_rope(c_path, "symproof_rope", "float64")
    table = np.empty((3, 2, 2))
    kernel.table(0, 3, table.ctypes.data)
    x, out, ids = np.ones((1, 4)), np.empty((1, 4)), np.array([3], dtype=np.int64)
    status = kernel.with_table(x.ctypes.data, out.ctypes.data, ids.ctypes.data, 1, table.ctypes.data, 0, 3)
    assert status == 1  # SYMPROOF_ROPE_POSITION_OUT_OF_TABLE


@pytest.mark.parametrize("options", CONFIGS)
def test_torch_export_matches_on_real_torch(tmp_path, options, torch, load_module):
    (path,) = export_kernel("rope", "torch", tmp_path, verify=False, **options)
    module = load_module(path, f"exported_torch_{abs(hash(path))}")
    x, positions = _data(options, seed=2)
    got = module.apply(torch.tensor(x), torch.tensor(positions)).numpy()
    np.testing.assert_allclose(got, _expected(options, x, positions), rtol=0, atol=1e-12)
    back = module.backward(torch.tensor(x), torch.tensor(positions)).numpy()
    np.testing.assert_allclose(back, _expected(options, x, positions, True), rtol=0, atol=1e-12)


def test_torch_export_broadcasts_per_sample_positions(tmp_path, torch, load_module):
    (path,) = export_kernel("rope", "torch", tmp_path, verify=False, head_dim=8)
    module = load_module(path, "exported_torch_broadcast")
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 8))  # (B, H, T, d)
    positions = np.array([[[0, 1, 2, 3]], [[0, 0, 1, 2]]])  # (B, 1, T): left padding in sample 1
    got = module.apply(torch.tensor(x), torch.tensor(positions)).numpy()
    np.testing.assert_allclose(got, _expected(dict(head_dim=8, pairing="adjacent"), x, positions), atol=1e-12)


def test_header_names_definition_configuration_and_claims(tmp_path):
    config = RopeConfig(head_dim=8, rotary_dim=4, denominator=8, pairing="half")
    paths = export_kernel("rope", "c", tmp_path, config=config, verify=True)
    for path in paths:
        head = open(path).read().split("*/")[0]
        assert "rope_matrix" in head and '"denominator": 8' in head and '"pairing": "half"' in head
        assert "Claims verified for it: rope.rotation" in head
        assert "(refuted)" not in head and "(unknown)" not in head


@pytest.mark.parametrize("kernel, target, message", [
    ("alibi", "numpy", r"unknown kernel 'alibi'; expected one of \('rope',\)"),
    ("rope", "rust", r"unknown target 'rust'; expected one of \('numpy', 'c', 'torch', 'triton'\)"),
])
def test_unknown_kernel_or_target(tmp_path, kernel, target, message):
    with pytest.raises(InvalidInputError, match=message):
        export_kernel(kernel, target, tmp_path, verify=False, head_dim=8)
    assert os.listdir(tmp_path) == []


def test_export_leaves_no_temporary_files(tmp_path):
    export_kernel("rope", "c", tmp_path, verify=False, head_dim=8)
    # the files, and the manifest that records them (a later run removes only what it lists)
    assert sorted(os.listdir(tmp_path)) == [MANIFEST_NAME, "symproof_rope.c", "symproof_rope.h"]


def test_command_line_export(tmp_path):
    run = subprocess.run([sys.executable, "-m", "symproof", "export", "rope", "--target", "numpy", "--out",
                          str(tmp_path), "--head-dim", "16", "--rotary-dim", "8", "--denominator", "16"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "symproof_rope.py")
    missing = subprocess.run([sys.executable, "-m", "symproof", "export", "rope", "--target", "numpy", "--out",
                              str(tmp_path), "--head-dim", "16", "--rotary-dim", "8"], capture_output=True, text=True)
    assert missing.returncode == 2 and "explicit frequency denominator" in missing.stderr


# -- listings for the chapter report ---------------------------------------------------------------


def _results_of_kernel_claims():
    from symproof import load_claims, run_claims
    from symproof.kernels._export import KERNEL_CLAIMS

    claims = load_claims()
    return run_claims([claims[cid] for cid in KERNEL_CLAIMS["rope"]])


def test_report_listings_carry_the_verdicts_of_the_run_they_come_from():
    from symproof.kernels import kernel_listings
    from symproof.kernels._export import KERNEL_CLAIMS

    listings = kernel_listings(_results_of_kernel_claims())
    assert [language for _, language, _, _, _ in listings] == ["python", "c", "c"]
    assert [file_name for *_, file_name, _ in listings] == ["symproof_rope.py", "symproof_rope.h", "symproof_rope.c"]
    assert listings[1][0].startswith("symproof_rope.h")
    for _, _, source, _, rests_on in listings:
        assert "rope.block_relative (proved)" in source
        assert rests_on == tuple(KERNEL_CLAIMS["rope"])  # what the report links each kernel to


def test_no_listings_when_a_kernel_claim_is_not_proved_or_missing():
    from symproof.kernels import kernel_listings

    results = _results_of_kernel_claims()
    results[0].status = "refuted"
    assert kernel_listings(results) == []
    assert kernel_listings(results[1:]) == []


@pytest.mark.parametrize("target", ["numpy", "torch", "triton", "c"])
def test_exported_lines_stay_short_enough_to_list(target):
    """The report lists exported kernels in LaTeX, where one very long line (the C sources a
    Python module carries, as a single literal) stops pdflatex: every line stays readable."""
    for text in kernel_sources("rope", target, verify=False, head_dim=128, pairing="half").values():
        assert max(len(line) for line in text.splitlines()) <= 200
