"""Fixtures that load exported kernels the way a user would: import the .py file, compile the .c with gcc."""

from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess

import numpy as np
import pytest

CC = shutil.which("gcc") or shutil.which("cc")


def import_module_from(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CompiledRope:
    """ctypes wrapper around an exported C kernel: broadcasts positions to one id per row."""

    def __init__(self, c_path, name, dtype, flags=("-O3", "-march=native")):
        so_path = str(c_path)[:-2] + ".so"
        subprocess.run([CC, "-std=c99", "-Wall", "-Werror", "-shared", "-fPIC", *flags, str(c_path), "-o", so_path, "-lm"],
                       check=True, capture_output=True, text=True)
        self.lib = ctypes.CDLL(so_path)
        self.dtype = np.dtype(dtype)
        pointer = ctypes.c_void_p
        for verb in ("apply", "backward"):
            func = getattr(self.lib, f"{name}_{verb}")
            func.argtypes = [pointer, pointer, pointer, ctypes.c_size_t]
            func.restype = ctypes.c_int
            setattr(self, f"_{verb}", func)
        self.table = getattr(self.lib, f"{name}_table")
        self.table.argtypes = [ctypes.c_int64, ctypes.c_size_t, pointer]
        self.with_table = getattr(self.lib, f"{name}_apply_with_table")
        self.with_table.argtypes = [pointer, pointer, pointer, ctypes.c_size_t, pointer, ctypes.c_int64, ctypes.c_size_t]
        self.with_table.restype = ctypes.c_int

    def _run(self, func, x, positions):
        x = np.ascontiguousarray(x, dtype=self.dtype)
        ids = np.ascontiguousarray(np.broadcast_to(positions, x.shape[:-1]), dtype=np.int64)
        out = np.empty_like(x)
        status = func(x.ctypes.data, out.ctypes.data, ids.ctypes.data, ids.size)
        if status != 0:
            raise RuntimeError(f"C kernel returned {status}")
        return out

    def apply(self, x, positions):
        return self._run(self._apply, x, positions)

    def backward(self, g, positions):
        return self._run(self._backward, g, positions)


@pytest.fixture(scope="session", autouse=True)
def _native_cache(tmp_path_factory):
    """The exported torch module compiles its C kernel into a cache folder: a private one per test run."""
    saved = os.environ.get("SYMPROOF_CACHE")
    os.environ["SYMPROOF_CACHE"] = str(tmp_path_factory.mktemp("native-cache"))
    yield
    if saved is None:
        os.environ.pop("SYMPROOF_CACHE", None)
    else:
        os.environ["SYMPROOF_CACHE"] = saved


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed; the torch export target cannot be run")


@pytest.fixture(scope="session")
def compile_rope():
    if CC is None:
        pytest.skip("no C compiler (gcc/cc) on PATH; the C export target cannot be compiled")
    return CompiledRope


@pytest.fixture(scope="session")
def load_module():
    return import_module_from
