"""The exported C header links from C++: compiled as C++ by g++ (extern "C" guards), the C file by gcc."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import symproof

GXX = shutil.which("g++")
CC = shutil.which("gcc") or shutil.which("cc")
needs_gxx = pytest.mark.skipif(GXX is None or CC is None, reason="needs g++ and a C compiler")

# a C++ caller: the rotated rows of a few basis-like rows, printed exactly
CALLER = r"""
#include <cstdio>
#include <cstdint>
#include <vector>
#include "symproof_rope.h"

int main() {
    const size_t rows = 3, width = SYMPROOF_ROPE_HEAD_DIM;
    std::vector<TYPE> x(rows * width), out(rows * width);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<TYPE>(static_cast<int>(i % 7) - 3) / 4;
    const int64_t positions[] = {0, 5, 1000};
    if (symproof_rope_apply(x.data(), out.data(), positions, rows) != SYMPROOF_ROPE_OK) return 3;
    for (TYPE v : out) std::printf("%.17g\n", static_cast<double>(v));
    return 0;
}
"""

# (export options, the C type of an element)
CONFIGS = [
    (dict(head_dim=8), "double"),
    (dict(head_dim=8, pairing="half"), "double"),
    (dict(head_dim=12, rotary_dim=8, denominator=8), "double"),
    (dict(head_dim=8, dtype="float32"), "float"),
]


def _run(command, cwd):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout


@needs_gxx
@pytest.mark.parametrize("options, ctype", CONFIGS, ids=[str(o) for o, _ in CONFIGS])
def test_the_header_compiles_as_cpp_and_the_kernel_links_from_cpp(tmp_path, options, ctype):
    result = symproof.export("rope", target="c", out=tmp_path, **options)
    assert sorted(p.rsplit("/", 1)[-1] for p in result.paths) == ["symproof_rope.c", "symproof_rope.h"]
    # the header alone, as C++, with every warning an error
    _run([GXX, "-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only", "-x", "c++",
          "symproof_rope.h"], tmp_path)
    _run([CC, "-std=c99", "-O1", "-c", "symproof_rope.c", "-o", "rope.o"], tmp_path)
    (tmp_path / "caller.cpp").write_text(CALLER, encoding="utf-8")
    _run([GXX, "-std=c++11", "-Wall", "-Werror", f"-DTYPE={ctype}", "caller.cpp", "rope.o", "-lm", "-o", "caller"],
         tmp_path)
    printed = np.array([float(v) for v in _run([str(tmp_path / "caller")], tmp_path).split()])
    width = options["head_dim"]
    x = ((np.arange(3 * width) % 7) - 3).reshape(3, width) / 4
    reference = symproof.rope_apply(x.astype(np.float32 if ctype == "float" else np.float64), np.array([0, 5, 1000]),
                                    **{k: v for k, v in options.items() if k != "dtype"})
    tolerance = 1e-5 if ctype == "float" else 1e-12
    np.testing.assert_allclose(printed, reference.reshape(-1), rtol=tolerance, atol=tolerance)


def test_a_header_without_the_guards_would_not_link_from_cpp(tmp_path):
    """The test above can fail: the same C file declared without extern "C" leaves C++ symbols unresolved."""
    if GXX is None or CC is None:
        pytest.skip("needs g++ and a C compiler")
    symproof.export("rope", target="c", out=tmp_path, head_dim=8)
    header = (tmp_path / "symproof_rope.h").read_text(encoding="utf-8")
    unguarded = header.replace('extern "C" {', "").replace("#ifdef __cplusplus\n}\n#endif", "")
    assert unguarded != header
    (tmp_path / "symproof_rope.h").write_text(unguarded, encoding="utf-8")  # symproof's manifest is not consulted
    _run([CC, "-std=c99", "-c", "symproof_rope.c", "-o", "rope.o"], tmp_path)
    (tmp_path / "caller.cpp").write_text(CALLER, encoding="utf-8")
    done = subprocess.run([GXX, "-DTYPE=double", "caller.cpp", "rope.o", "-lm", "-o", "caller"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "undefined reference" in done.stderr
