"""A learned table's file (``[vectors] file = ...``) is hostile input: each bad file is one line, exit 2.

The file must stay inside the TOML file's folder (no absolute path, no ``..``, no symbolic link leading
out), be a regular file of bounded size, hold a 2-D float array under a bounded header, without pickle,
with the promised number of bytes and finite values.  A pickled payload is never run.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from .conftest import assert_one_line_error, symproof

TOML = 'name = "t"\nkind = "additive"\nwidth = {width}\npositions = "0..{last}"\n[vectors]\nfile = "{name}"\n'


def _toml(folder: Path, name: str, width: int = 4, last: int = 3) -> Path:
    path = folder / "t.toml"
    path.write_text(TOML.format(width=width, last=last, name=name), encoding="utf-8")
    return path


def _npy_bytes(array: np.ndarray) -> bytes:
    import io

    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=True)
    return stream.getvalue()


def _good() -> np.ndarray:
    return np.arange(16, dtype=np.float32).reshape(4, 4) / 4


class _Payload:
    """Unpickling this creates the marker file: the test fails if it exists afterwards."""

    marker = ""

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_a_good_file_loads(tmp_path):
    np.save(tmp_path / "wpe.npy", _good())
    done = symproof("check", _toml(tmp_path, "wpe.npy"))
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr


def test_a_symlink_out_of_the_folder_is_refused(tmp_path):
    outside, inside = tmp_path / "outside", tmp_path / "inside"
    outside.mkdir(), inside.mkdir()
    np.save(outside / "wpe.npy", _good())
    os.symlink(outside / "wpe.npy", inside / "wpe.npy")
    assert_one_line_error(symproof("check", _toml(inside, "wpe.npy")), "vectors.file", "symbolic link", "outside")


def test_a_symlinked_folder_out_of_the_folder_is_refused(tmp_path):
    outside, inside = tmp_path / "outside", tmp_path / "inside"
    outside.mkdir(), inside.mkdir()
    np.save(outside / "wpe.npy", _good())
    os.symlink(outside, inside / "weights")
    assert_one_line_error(symproof("check", _toml(inside, "weights/wpe.npy")), "vectors.file", "outside")


@pytest.mark.parametrize("name, words", [
    ("/etc/passwd.npy", ["absolute path"]),
    ("../wpe.npy", ["'..'"]),
    ("sub/../../wpe.npy", ["'..'"]),
    ("~/wpe.npy", ["absolute path"]),
    ("wpe.pkl", ["expected a .npy or .safetensors file"]),
    ("missing.npy", ["no such file"]),
])
def test_paths_outside_the_folder_or_not_a_table_are_refused(tmp_path, name, words):
    np.save(tmp_path / "wpe.npy", _good())
    assert_one_line_error(symproof("check", _toml(tmp_path, name)), *words)


def test_a_pickled_npy_is_refused_and_never_unpickled(tmp_path):
    _Payload.marker = str(tmp_path / "unpickled")
    array = np.empty((4, 4), dtype=object)
    array[:] = 0.5
    array[0, 0] = _Payload()
    (tmp_path / "wpe.npy").write_bytes(_npy_bytes(array))
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "pickled objects")
    assert not (tmp_path / "unpickled").exists()


@pytest.mark.parametrize("dtype", ["int64", "complex128", "bool", "<U4"])
def test_a_table_that_is_not_floats_is_refused(tmp_path, dtype):
    np.save(tmp_path / "wpe.npy", np.ones((4, 4), dtype=dtype))
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "dtype",
                          "expected float16, float32 or float64")


def test_a_huge_header_is_refused(tmp_path):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }" + " " * 200_000 + "\n"
    raw = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header.encode() + _good().tobytes()
    (tmp_path / "wpe.npy").write_bytes(raw)
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "not a .npy file")


def test_a_truncated_file_is_refused(tmp_path):
    (tmp_path / "wpe.npy").write_bytes(_npy_bytes(_good())[:-5])
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "truncated")


def test_a_header_promising_a_huge_table_is_refused_before_reading(tmp_path):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10000000, 4), }"
    header += " " * (63 - len(header) % 64) + "\n"
    raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\x00" * 128
    (tmp_path / "wpe.npy").write_bytes(raw)
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "at most 65536 rows")


def test_a_file_past_the_size_bound_is_refused(tmp_path):
    path = tmp_path / "wpe.npy"
    path.write_bytes(_npy_bytes(_good()))
    with open(path, "r+b") as handle:
        handle.truncate(40 * 2**20)  # sparse: no disk used
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy")


def test_a_fifo_does_not_hang(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    os.mkfifo(tmp_path / "wpe.npy")
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy"), timeout=60), "wpe.npy")


@pytest.mark.parametrize("shape", [(16,), (2, 2, 4)])
def test_a_table_that_is_not_rows_by_width_is_refused(tmp_path, shape):
    np.save(tmp_path / "wpe.npy", np.ones(shape, dtype=np.float32))
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "expected (rows, width)")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_value_that_is_not_finite_is_refused_naming_the_row(tmp_path, bad):
    rows = _good()
    rows[2, 1] = bad
    np.save(tmp_path / "wpe.npy", rows)
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy")), "wpe.npy", "row 2", "expected finite")


def test_a_table_wider_than_the_file_says_is_refused(tmp_path):
    np.save(tmp_path / "wpe.npy", _good())
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy", width=8)), "wpe.npy", "width = 8")


def test_rows_other_than_the_declared_positions_are_refused(tmp_path):
    np.save(tmp_path / "wpe.npy", _good())
    assert_one_line_error(symproof("check", _toml(tmp_path, "wpe.npy", last=7)), "'positions'", "0..7",
                          'positions = "0..3"')


def _safetensors(header: dict | bytes, data: bytes = b"") -> bytes:
    import json

    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.mark.parametrize("content, words", [
    (struct.pack("<Q", 2**62) + b"{}", ["safetensors header"]),
    (_safetensors(b"{not json"), ["not JSON"]),
    (_safetensors({"a": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}, b"\x00" * 10), ["truncated"]),
    (_safetensors({"a": {"dtype": "I64", "shape": [4, 4], "data_offsets": [0, 128]}}, b"\x00" * 128), ["dtype I64"]),
    (_safetensors({"a": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]},
                   "b": {"dtype": "F32", "shape": [4, 4], "data_offsets": [64, 128]}}, b"\x00" * 128),
     ["2 tensors", "vectors.tensor"]),
    (b"\x01", ["not a safetensors file"]),
])
def test_bad_safetensors_files_are_refused(tmp_path, content, words):
    (tmp_path / "m.safetensors").write_bytes(content)
    assert_one_line_error(symproof("check", _toml(tmp_path, "m.safetensors")), "m.safetensors", *words)
