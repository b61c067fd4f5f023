"""Exported kernels never read a table outside its entries, at any position.

Every exported kernel (numpy, torch, C) of every shipped variant, every test
variant and the table-reading files below is called at positions outside any
table: -1, the length of each table, 10**5, 2**31 - 1 and 2**63 - 1 (as the
float64 the kernels take).  Where the exact definition reads a table outside
its entries at that position (the definition is built exactly there), the
kernel must report the documented error: numpy and torch raise
``PositionOutOfTableError`` (an ``IndexError``) whose one-line message names the
position and the entries; C returns ``{MODULE}_POSITION_OUT_OF_TABLE``.
Elsewhere the kernel must run.  A file that declares its positions ``"0..N"`` reads its tables without a
clip: its kernels refuse every position outside ``0..N`` (also at ``N + 1``), before reading anything:
numpy and torch raise ``PositionOutOfRangeError`` (an ``IndexError``) in one line naming the position and
the range, C returns ``{MODULE}_POSITION_OUT_OF_RANGE``.  The C kernels are compiled with
``-fsanitize=address,undefined`` into a driver run in its own process, so a
read past an array is a failure of the test, not a crash of it.
"""

from __future__ import annotations

import glob
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from symproof._ground._errors import VariantFileError
from symproof.variants._export import _takes_call_length
from symproof.variants._formula import LookupBase
from symproof.variants._spec import load_variant, parse_variant

ROOT = Path(__file__).resolve().parents[2]

#: table-reading files whose kernels can be called outside their tables (positions = "nonnegative":
#: a negative position is outside the declared domain, and the kernel must refuse it, not wrap)
TABLE_FILES = {
    "rotary-transform": '''name = "rotary-transform"
kind = "rotary"
width = 8
pairing = "adjacent"
positions = "nonnegative"
[params]
P = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
[frequencies]
base = "10000"
[position]
transform = "P(Min(m, 15))"
''',
    "rotary-where": '''name = "rotary-where"
kind = "rotary"
width = 4
pairing = "half"
positions = "nonnegative"
[params]
P = [0, 1, 3, 6]
[frequencies]
base = "100"
[position]
transform = "where(m < 4, P(m), m + 2)"
''',
    "rotary-scale": '''name = "rotary-scale"
kind = "rotary"
width = 4
pairing = "adjacent"
positions = "nonnegative"
[params]
S = [1, 0.5, 0.25, 0.125]
[frequencies]
base = "10000"
[scale]
query = "S(Min(m, 3))"
key = "1"
''',
    "additive-transform": '''name = "additive-transform"
kind = "additive"
width = 4
pairing = "adjacent"
positions = "nonnegative"
[params]
P = [0, 2, 4, 6, 8]
[frequencies]
base = "10000"
[position]
transform = "P(Min(m, 4))"
''',
    "bias-table": '''name = "bias-table"
kind = "bias"
positions = "nonnegative"
[params]
w = [0.5, -0.25, 0.75, 1]
[bias]
formula = "w(Min(i, 3)) - w(Min(j, 3))"
heads = 2
slope = "1"
''',
    "relative-table": '''name = "relative-table"
kind = "rotary"
width = 4
pairing = "adjacent"
positions = "nonnegative"
[params]
R = [0, 1, 2, 3, 4, 5, 6, 7]
[frequencies]
base = "10000"
[position]
relative = "R(Min(i, 7)) - R(Min(j, 7))"
''',
    "vectors-clip": '''name = "vectors-clip"
kind = "additive"
width = 2
positions = "nonnegative"
[vectors]
rows = [[0.5, -0.25], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
clip = true
''',
}


#: table-reading files that declare their positions 0..N instead of clipping (a learned absolute table):
#: the kernels must refuse -1, N + 1 and beyond, and read the table everywhere inside
RANGE_FILES = {
    "range-transform": '''name = "range-transform"
kind = "rotary"
width = 8
pairing = "adjacent"
positions = "0..15"
[params]
P = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
[frequencies]
base = "10000"
[position]
transform = "P(m)"
''',
    "range-scale": '''name = "range-scale"
kind = "rotary"
width = 4
pairing = "half"
positions = "0..3"
[params]
S = [1, 0.5, 0.25, 0.125]
[frequencies]
base = "100"
[scale]
query = "S(m)"
key = "S(3 - m)"
''',
    "range-axes": '''name = "range-axes"
kind = "rotary"
width = 8
pairing = "half"
positions = "0..7"
[params]
P = [0, 1, 2, 3, 5, 8, 13, 21]
[frequencies]
base = "100"
[position]
axes = ["row", "col"]
axis = "mod(r, 2)"
transform = "P(m)"
''',
    "range-additive": '''name = "range-additive"
kind = "additive"
width = 4
pairing = "adjacent"
positions = "0..4"
[params]
P = [0, 2, 4, 6, 8]
[frequencies]
base = "10000"
[position]
transform = "P(m)"
''',
    "range-bias": '''name = "range-bias"
kind = "bias"
positions = "0..3"
[params]
w = [0.5, -0.25, 0.75, 1]
[bias]
formula = "w(i) - w(j)"
heads = 2
slope = "1"
''',
    "range-vectors": '''name = "range-vectors"
kind = "additive"
width = 2
positions = "0..3"
[vectors]
rows = [[0.5, -0.25], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
''',
    "range-relative": '''name = "range-relative"
kind = "rotary"
width = 4
pairing = "adjacent"
positions = "0..7"
[params]
R = [0, 1, 2, 3, 4, 5, 6, 7]
[frequencies]
base = "10000"
[position]
relative = "R(i) - R(j)"
''',
}
TABLE_FILES.update(RANGE_FILES)


def _parse(text: str, source: str):
    import tomllib

    return parse_variant(tomllib.loads(text), source=source)


def _variants():
    out = []
    for path in sorted(glob.glob(str(ROOT / "derivations/variants/*.toml"))
                       + glob.glob(str(ROOT / "tests/variants/**/*.toml"), recursive=True)):
        try:
            out.append(pytest.param(load_variant(path), id=Path(path).stem))
        except VariantFileError:
            continue  # a file refused at load has no kernel (the refusals have their own tests)
    for name, text in TABLE_FILES.items():
        out.append(pytest.param(_parse(text, name), id=name))
    return out


VARIANTS = _variants()


def _tables(variant) -> list:
    return [v for v in variant.params.values() if isinstance(v, type) and issubclass(v, LookupBase)]


def outside_positions(variant) -> list:
    """-1, each table's length, 10**5 and the int32 and int64 limits (float64 positions hold them); with a
    declared range 0..N, also N + 1, -2**31 and -2**63."""
    picks = [-1, *(len(t.values) for t in _tables(variant)), 10**5, 2**31 - 1, 2**63 - 1]
    if variant.vectors is not None:  # a learned table: its row count, the first position past it
        picks.insert(1, variant.vectors.rows)
    if variant.last_position is not None:
        picks += [variant.last_position + 1, -(2**31), -(2**63)]
    return list(dict.fromkeys(picks))


def outside_range(variant, point: tuple) -> bool:
    """Whether ``point`` has a position outside the file's declared range 0..N (float64, as the kernels
    take it)."""
    last = variant.last_position
    return last is not None and any(not 0 <= float(p) <= last for p in point)


def reads_outside(variant, build) -> bool:
    """Whether the exact definition reads a table outside its entries when built by ``build()``."""
    try:
        build()
    except VariantFileError as err:
        return "indexed by" in str(err)
    except ValueError as err:
        return "indexed by" in str(err)
    return False


def _exact_builds(variant, point: tuple, sides=("query", "key")) -> list:
    """The builds of every position formula of ``variant`` at ``point`` ((m,) or (i, j)) that a call
    for ``sides`` evaluates."""
    I = sp.Integer
    if variant.kind == "bias" and len(variant.axes) > 1:  # bias.axes: the point is (i coordinates, j coordinates)
        n = len(variant.axes)
        return [lambda h=h: variant.bias_at(tuple(map(I, point[:n])), tuple(map(I, point[n:])), variant.exact_value(h), h)
                for h in range(variant.heads)]
    if variant.vectors is not None:  # a learned table: the row the position reads
        from symproof.variants._vectors import exact_row

        return [lambda: exact_row(variant, point[0])]
    if variant.kind == "bias":
        return [lambda h=h: variant.bias_at(I(point[0]), I(point[1]), variant.exact_value(h), h)
                for h in range(variant.heads)]
    if variant.relative is not None:
        builds = [lambda: variant.relative_at(I(point[0]), I(point[1]))]
        positions = point
    else:
        builds = [lambda: variant.angle_position(I(point[0]))]
        positions = point[:1]
    if variant.kind == "rotary":
        # a file with heads: every head's scales (a table read by the position in one head only would make
        # every head's call expected to refuse; no file here reads one so)
        ones = [variant.head(h) for h in range(variant.heads)] if variant.heads is not None else [variant]
        builds += [lambda one=one, m=m, r=r, side=side: one.scale(side, I(m), r) for one in ones for m in positions
                   for r in range(variant.n_pairs) for side in sides]
    return builds


def expected_error(variant, point: tuple, sides=("query", "key")) -> bool:
    return any(reads_outside(variant, build) for build in _exact_builds(variant, point, sides))


# -- the Python targets -----------------------------------------------------------------------------


def _write(variant, target: str, folder: Path) -> Path:
    from symproof.variants._export import variant_source

    files = variant_source(variant, target)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / next(iter(files))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"bounds_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _as_input(lib: str):
    """Float64 arrays (numpy) or tensors (torch) of a list of numbers."""
    if lib == "numpy":
        return lambda a: np.asarray(a, dtype=np.float64)
    import torch

    return lambda a: torch.as_tensor(np.asarray(a, dtype=np.float64))


def _calls(variant, module, lib, p):
    """The kernel's calls that put position ``p`` in each place a position goes, with the point of the
    definition each one evaluates and the side (query or key, ``None`` for both)."""
    as_array = _as_input(lib)
    if variant.kind == "bias" and len(variant.axes) > 1:  # p on every axis of the query, then of the key
        n = len(variant.axes)
        return [((p,) * n + (0,) * n, None, lambda: module.bias_at(as_array([[p] * n]), as_array([[0] * n]))),
                ((0,) * n + (p,) * n, None, lambda: module.bias_at(as_array([[0] * n]), as_array([[p] * n])))]
    if variant.kind == "bias":
        return [((p, 0), None, lambda: module.bias_at(as_array([p]), as_array([0]))),
                ((0, p), None, lambda: module.bias_at(as_array([0]), as_array([p])))]
    if variant.kind == "additive":
        return [((p,), None, lambda: module.table(as_array([p])))]
    x = as_array(np.ones((1, variant.width)))
    if variant.relative is not None:
        return [((p, 0), None, lambda: module.scores(x, x, as_array([p]), as_array([0]))),
                ((0, p), None, lambda: module.scores(x, x, as_array([0]), as_array([p])))]
    axes = len(variant.axes)
    position = [[p] * axes] if axes > 1 else [p]
    if variant.heads is not None:  # a rotary file with heads: every head (see _exact_builds)
        return [((p,), side, lambda side=side, h=h: module.apply(x, as_array(position), side, head=h))
                for side in ("query", "key") for h in range(variant.heads)]
    return [((p,), side, lambda side=side: module.apply(x, as_array(position), side)) for side in ("query", "key")]


def _exported(variant) -> bool:
    """Variants the ``variant`` family prints (a rule that reads the call length has its own family,
    whose kernel reads no table: its transform is m -> a m)."""
    return not _takes_call_length(variant)


TARGETS = ["numpy", pytest.param("torch", marks=pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed"))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_python_kernels_refuse_positions_outside_their_tables(variant, target, tmp_path):
    if not _exported(variant):
        assert not any(_tables(variant)) or variant.transform is None
        pytest.skip("the call-length family reads no table")
    module = _load(_write(variant, target, tmp_path))
    lib = "numpy" if target == "numpy" else "torch"
    for p in outside_positions(variant):
        for point, side, call in _calls(variant, module, lib, p):
            if outside_range(variant, point):
                with pytest.raises(IndexError) as raised:
                    call()
                message = str(raised.value)
                assert type(raised.value).__name__ == "PositionOutOfRangeError", message
                assert "\n" not in message and f"outside the file's positions 0..{variant.last_position}" in message
                shown = "9.223372036854776e+18" if abs(p) >= 2**63 - 1 else str(p)
                assert shown in message, (message, point)
            elif expected_error(variant, point, ("query", "key") if side is None else (side,)):
                with pytest.raises(IndexError) as raised:
                    call()
                message = str(raised.value)
                assert type(raised.value).__name__ == "PositionOutOfTableError"
                assert "\n" not in message
                assert re.search(r"entries 0\.\.\d+", message), message
                shown = "9.223372036854776e+18" if abs(p) >= 2**63 - 1 else str(p)
                assert shown in message, (message, point)
            else:
                with np.errstate(all="ignore"):
                    call()  # runs; the values are the kernel property's business


def test_every_table_file_is_called_outside_its_table():
    """The error path is exercised: each table file has a position where the kernel must refuse."""
    for name, text in TABLE_FILES.items():
        variant = _parse(text, name)
        point = (-1, 0) if variant.kind == "bias" or variant.relative is not None else (-1,)
        assert expected_error(variant, point), name


def test_an_untaken_where_branch_reads_no_table():
    """``where(m < 4, P(m), m + 2)`` at m = 20: NumPy evaluates both branches, the table read of the
    untaken one must not raise, and the value is the other branch's."""
    variant = _parse(TABLE_FILES["rotary-where"], "where")
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        module = _load(_write(variant, "numpy", Path(folder)))
        assert float(module.transform(np.array([20.0]))[0]) == 22.0
        assert float(module.transform(np.array([2.0]))[0]) == 3.0


# -- C, under AddressSanitizer and UBSan ------------------------------------------------------------


def _c_driver(module: str, variant) -> str:
    """A main() that calls the kernel once per (position list) argument and prints its return code."""
    width, axes = variant.width, len(variant.axes)
    if variant.relative is not None:
        call = (f"double q[{width}], k[{width}], out[1], i = strtod(argv[1], 0), j = strtod(argv[2], 0);\n"
                f"    for (int c = 0; c < {width}; ++c) q[c] = k[c] = 1.0;\n"
                f"    printf(\"%d\\n\", {module}_scores(q, k, &i, &j, out, 1, 1));")
    else:
        head = ", 0" if variant.heads is not None else ""  # a file with heads: head 0 (its bounds: test_heads)
        call = (f"double x[{width}], out[{width}], pos[{axes}];\n"
                f"    for (int c = 0; c < {width}; ++c) x[c] = 1.0;\n"
                f"    for (int c = 0; c < {axes}; ++c) pos[c] = strtod(argv[1], 0);\n"
                f"    printf(\"%d %d\\n\", {module}_apply(x, pos, out, 1, 1{head}), {module}_apply(x, pos, out, 1, 0{head}));")
    return (f'#include <stdio.h>\n#include <stdlib.h>\n#include "{module}.c"\n\n'
            f"int main(int argc, char **argv)\n{{\n    (void)argc;\n    {call}\n    return 0;\n}}\n")


def _compile_sanitized(variant, folder: Path) -> tuple:
    from symproof.variants._export import variant_kernel

    source = _write(variant, "c", folder)
    module = variant_kernel(variant, "c", as_rope=False).module
    (folder / "driver.c").write_text(_c_driver(module, variant), encoding="utf-8")
    done = subprocess.run(["gcc", "-std=c99", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                           "-o", str(folder / "driver"), str(folder / "driver.c"), "-lm"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = source.read_text(encoding="utf-8")
    codes = dict(re.findall(rf"#define {module.upper()}_(\w+) (\d+)", text))
    return folder / "driver", codes


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc on PATH")
C_VARIANTS = [v for v in VARIANTS if v.values[0].kind == "rotary" and _exported(v.values[0])]


@needs_gcc
@pytest.mark.parametrize("variant", C_VARIANTS)
def test_c_kernels_return_the_documented_code_under_sanitizers(variant, tmp_path):
    driver, codes = _compile_sanitized(variant, tmp_path)
    ranged = {} if variant.last_position is None else {"POSITION_OUT_OF_RANGE": "2",
                                                       "LAST_POSITION": None}
    codes.pop("LAST_POSITION", None)
    ranged.pop("LAST_POSITION", None)
    if variant.heads is not None:  # a file with heads: its head code, and the head count
        assert codes.pop("HEADS") == str(variant.heads)
        ranged["HEAD_OUT_OF_RANGE"] = "3"
    assert codes == {"OK": "0", "POSITION_OUT_OF_TABLE": "1", **ranged}
    for p in outside_positions(variant):
        points = [(p, 0), (0, p)] if variant.relative is not None else [(p,)]
        for point in points:
            done = subprocess.run([str(driver), *(repr(float(c)) for c in point)], capture_output=True, text=True,
                                  timeout=60, env={"ASAN_OPTIONS": "detect_leaks=0", "PATH": "/usr/bin:/bin"})
            assert done.returncode == 0 and "runtime error" not in done.stderr, (point, done.stderr[-2000:])
            sides = [("query", "key")] if variant.relative is not None else [("query",), ("key",)]
            want = [codes["POSITION_OUT_OF_RANGE"] if outside_range(variant, point) else
                    codes["POSITION_OUT_OF_TABLE"] if expected_error(variant, point, side) else codes["OK"]
                    for side in sides]
            assert done.stdout.split() == want, (point, done.stdout, want)


# -- the in-process kernel (symproof.variants.build_kernel), which the audit runs -----------------


IN_PROCESS = ["rotary-transform", "rotary-where", "rotary-scale", "additive-transform", "bias-table"]


@pytest.mark.parametrize("name", IN_PROCESS)
def test_in_process_kernel_reads_tables_like_the_exported_one(name, tmp_path):
    """``build_kernel`` reads a table through the same checked read: the exported file's values where
    the position is inside the table, :class:`PositionOutOfRangeError` (an IndexError) where not."""
    from symproof import PositionOutOfRangeError
    from symproof.variants import build_kernel

    variant = _parse(TABLE_FILES[name], name)
    kernel = build_kernel(variant)
    module = _load(_write(variant, "numpy", tmp_path))
    if variant.kind == "bias":
        np.testing.assert_allclose(kernel.bias(6, 9), module.bias(6, 9), rtol=1e-13, atol=0)
        return
    inside = np.array([0.0, 1.0, 3.0, 20.0])
    if variant.kind == "additive":
        ours, theirs, outside = (lambda p: kernel.table(p)), (lambda p: module.table(p)), lambda: kernel.table([-1.0])
    else:
        x = np.linspace(-1, 1, 4 * variant.width).reshape(4, variant.width)
        ours, theirs = (lambda p: kernel.apply(x, p)), (lambda p: module.apply(x, p))
        outside = lambda: kernel.apply(x[:1], np.array([-1.0]))  # noqa: E731
    np.testing.assert_allclose(ours(inside), theirs(inside), rtol=1e-13, atol=1e-15)
    if expected_error(variant, (-1,), ("query",)):
        with pytest.raises(PositionOutOfRangeError, match=r"position m = -1 .* entries 0\.\.\d+"):
            outside()
