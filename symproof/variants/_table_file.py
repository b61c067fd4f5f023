"""A table of vectors read into a variant: inline rows, a ``.npy`` file or a safetensors file.

Learned absolute positions (GPT-2's ``wpe``, BERT's position embeddings) are a table with one row per
position and one column per model coordinate.  A file's ``[vectors]`` table gives them::

    [vectors]
    rows = [[0.5, -0.25], [0.125, 1.0]]   # inline, one array per position
    # file = "wpe.npy"                    # or a file beside the TOML file (.npy, or .safetensors with tensor = "...")
    # clip = true                         # positions past the last row read the last row

The file is hostile input like the TOML file: its name is relative to the TOML file's folder and must
stay inside it (no absolute path, no ``..``, no symbolic link that leads out), it is read as a regular
file of bounded size, its header is parsed without pickle (``allow_pickle=False``, a bounded header),
its dtype must be a float (16, 32 or 64 bits; safetensors' BF16 too), its shape must be rows x width,
and a NaN or an infinity is refused naming the file and the row.  Every value is a float64 number,
hence an exact binary rational: :meth:`VectorTable.scaled` gives the integers ``values * 2**shift``
the deciders compute with (exact integer arithmetic, never float closeness).
"""

from __future__ import annotations

import io
import json
import os
import struct
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .._ground._errors import VariantFileError
from .._ground._io import read_input_file

__all__ = ["VectorTable", "read_vectors", "MAX_TABLE_ROWS", "MAX_TABLE_ENTRIES", "MAX_TABLE_BYTES"]

#: the largest table accepted: rows (positions), entries (rows x width) and bytes of its file
MAX_TABLE_ROWS = 65536
MAX_TABLE_ENTRIES = 2**21
MAX_TABLE_BYTES = 32 * 2**20
#: the largest header of a .npy or safetensors file (numpy's own default limit for .npy)
MAX_HEADER_BYTES = 10000
#: the largest safetensors JSON header (a checkpoint of a few hundred tensors)
MAX_SAFETENSORS_HEADER = 2**20
#: file dtypes accepted: every one is exactly a float64 number
_NPY_KINDS = {"f2": "float16", "f4": "float32", "f8": "float64"}
_SAFETENSORS_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "BF16": "bf16"}


@dataclass(frozen=True, eq=False)
class VectorTable:
    """The rows of a learned position table, as float64 (read-only), and where they came from."""

    values: np.ndarray = field(repr=False)
    origin: str  # "inline", "the numpy array", or the file's name as the TOML file wrote it
    clip: bool = False

    @property
    def rows(self) -> int:
        return int(self.values.shape[0])

    @property
    def width(self) -> int:
        return int(self.values.shape[1])

    @property
    def last(self) -> int:
        return self.rows - 1

    def row_of(self, position: int) -> int:
        """The row position ``position`` reads (the last one past the table when clipped)."""
        return min(int(position), self.last) if self.clip else int(position)

    def scaled(self) -> tuple:
        """``(rows of ints, shift)`` with ``values == ints / 2**shift`` exactly (computed once)."""
        cached = self.__dict__.get("_scaled")
        if cached is None:
            ratios = [[float(x).as_integer_ratio() for x in row] for row in self.values.tolist()]
            shift = max((den.bit_length() - 1 for row in ratios for _, den in row), default=0)
            ints = [[num << (shift - (den.bit_length() - 1)) for num, den in row] for row in ratios]
            cached = self.__dict__["_scaled"] = (ints, shift)
        return cached

    def describe(self) -> dict:
        return {"origin": self.origin, "rows": self.rows, "width": self.width, "clip": self.clip}


def _fail(source: str, key: str, message: str) -> VariantFileError:
    return VariantFileError(f"{source}: key '{key}': {message}")


def read_vectors(table: Mapping, source: str, width: int) -> VectorTable:
    """The ``[vectors]`` table of the file ``source`` (its rows inline, or the file it names)."""
    given = [key for key in ("rows", "file") if key in table]
    if len(given) != 1:
        raise _fail(source, "vectors", "expected exactly one of 'rows' (the table inline, one array per position) "
                                       f"or 'file' (a .npy or .safetensors file beside the TOML file), got {given}")
    clip = bool(table.get("clip", False))
    if "tensor" in table and "file" not in table:
        raise _fail(source, "vectors.tensor", "applies with 'file' (a safetensors file) only")
    if "rows" in table:
        values, origin = _inline(table["rows"], source), "inline"
    else:
        values, origin = _from_file(table["file"], table.get("tensor"), source), table["file"]
    return _checked(values, origin, source, width, clip)


def _inline(rows, source: str) -> np.ndarray:
    key = "vectors.rows"
    if not isinstance(rows, list) or not rows:
        raise _fail(source, key, "expected an array of rows (one array of numbers per position)")
    if len(rows) > MAX_TABLE_ROWS:
        raise _fail(source, key, f"has {len(rows)} rows; at most {MAX_TABLE_ROWS} are accepted")
    width = len(rows[0]) if isinstance(rows[0], list) else -1
    for t, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            got = f"{len(row)} numbers" if isinstance(row, list) else type(row).__name__
            raise _fail(source, f"{key}[{t}]", f"expected {max(width, 1)} numbers like row 0, got {got}")
        for a, value in enumerate(row):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _fail(source, f"{key}[{t}][{a}]", f"expected a number, got {type(value).__name__} {value!r}"[:200])
            if isinstance(value, int) and abs(value) > 2**53:
                raise _fail(source, f"{key}[{t}][{a}]", f"expected a float64 number, got the integer {value} "
                                                        "(beyond 2^53 it is not exactly a float64)")
    if len(rows) * width > MAX_TABLE_ENTRIES:
        raise _fail(source, key, f"has {len(rows) * width} entries; at most {MAX_TABLE_ENTRIES} are accepted")
    return np.array(rows, dtype=np.float64)


def _folder_of(source: str) -> str:
    """The folder a table file is read from: the TOML file's, or the working folder for text and dicts."""
    if source.startswith("<") or not os.path.isfile(source):
        return os.getcwd()
    return os.path.dirname(os.path.abspath(source))


def _confined(name, source: str) -> str:
    """The path of ``name`` inside the TOML file's folder, refused when it leads out of it."""
    key = "vectors.file"
    if not isinstance(name, str) or not name or "\x00" in name or not name.isprintable():
        raise _fail(source, key, "expected the name of a file beside the TOML file, e.g. \"wpe.npy\"")
    if os.path.isabs(name) or name.startswith("~"):
        raise _fail(source, key, f"{name!r} is an absolute path; expected a name relative to the TOML file's folder")
    if ".." in name.replace("\\", "/").split("/"):
        raise _fail(source, key, f"{name!r} leaves the TOML file's folder ('..'); expected a file inside it")
    folder = os.path.realpath(_folder_of(source))
    path = os.path.join(folder, name)
    real = os.path.realpath(path)
    if os.path.commonpath([folder, real]) != folder:
        raise _fail(source, key, f"{name!r} is a symbolic link (or passes through one) that leads outside the TOML "
                                 "file's folder; copy the file into the folder")
    if not name.endswith((".npy", ".safetensors")):
        raise _fail(source, key, f"expected a .npy or .safetensors file, got {name!r}")
    return real


def _from_file(name, tensor, source: str) -> np.ndarray:
    path = _confined(name, source)
    raw = read_input_file(path, error=VariantFileError, max_bytes=MAX_TABLE_BYTES)
    where = f"{source}: key 'vectors.file': {name}"
    if name.endswith(".npy"):
        if tensor is not None:
            raise _fail(source, "vectors.tensor", "applies to a .safetensors file; a .npy file holds one array")
        return _npy(raw, where)
    return _safetensors(raw, tensor, where)


def _npy(raw: bytes, where: str) -> np.ndarray:
    """The array of a .npy file, its header read without pickle and held to the bounds first."""
    stream = io.BytesIO(raw)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream, max_header_size=MAX_HEADER_BYTES)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream, max_header_size=MAX_HEADER_BYTES)
        else:
            raise ValueError(f"format version {version} is not known")
    except (ValueError, OSError, SyntaxError, EOFError) as err:
        raise VariantFileError(f"{where}: not a .npy file numpy reads without pickle "
                               f"({' '.join(str(err).split())[:160]})") from None
    if dtype.hasobject or dtype.kind != "f" or f"f{dtype.itemsize}" not in _NPY_KINDS:
        raise VariantFileError(f"{where}: dtype {dtype.str} (pickled objects, integers and complex numbers are refused); "
                               "expected float16, float32 or float64")
    return _shaped(np.frombuffer(raw, dtype=dtype, count=_count(shape, where, raw, stream.tell(), dtype.itemsize),
                                 offset=stream.tell()), shape, fortran, where)


def _count(shape, where: str, raw: bytes, offset: int, itemsize: int) -> int:
    if len(shape) != 2 or min(shape) < 1:
        raise VariantFileError(f"{where}: shape {tuple(shape)}; expected (rows, width): one row per position")
    rows, width = shape
    if rows > MAX_TABLE_ROWS or rows * width > MAX_TABLE_ENTRIES:
        raise VariantFileError(f"{where}: shape {tuple(shape)}; at most {MAX_TABLE_ROWS} rows and "
                               f"{MAX_TABLE_ENTRIES} entries are accepted")
    if len(raw) - offset != rows * width * itemsize:
        raise VariantFileError(f"{where}: the header says {rows} x {width} values ({rows * width * itemsize} bytes) "
                               f"but {len(raw) - offset} bytes follow it (a truncated or padded file)")
    return rows * width


def _shaped(flat: np.ndarray, shape, fortran: bool, where: str) -> np.ndarray:
    return np.asarray(flat.reshape(shape, order="F" if fortran else "C"), dtype=np.float64)


def _safetensors(raw: bytes, tensor, where: str) -> np.ndarray:
    """One tensor of a safetensors file: an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range, then the bytes (the format needs no library to read)."""
    if len(raw) < 8:
        raise VariantFileError(f"{where}: not a safetensors file (shorter than its 8-byte header length)")
    (size,) = struct.unpack("<Q", raw[:8])
    if size > MAX_SAFETENSORS_HEADER or 8 + size > len(raw):
        raise VariantFileError(f"{where}: safetensors header of {size} bytes (at most {MAX_SAFETENSORS_HEADER}, "
                               "and inside the file, are accepted)")
    try:
        header = json.loads(raw[8:8 + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise VariantFileError(f"{where}: the safetensors header is not JSON") from None
    names = sorted(k for k in header if k != "__metadata__") if isinstance(header, dict) else []
    if tensor is None:
        if len(names) != 1:
            raise VariantFileError(f"{where}: holds {len(names)} tensors {names[:8]}; name one with "
                                   "vectors.tensor = \"NAME\"")
        tensor = names[0]
    entry = header.get(tensor) if isinstance(header, dict) else None
    if not isinstance(entry, dict):
        raise VariantFileError(f"{where}: no tensor {str(tensor)[:80]!r}; it holds {names[:8]}")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in _SAFETENSORS_DTYPES:
        raise VariantFileError(f"{where}: tensor {tensor!r} has dtype {str(dtype)[:20]}; expected one of "
                               f"{sorted(_SAFETENSORS_DTYPES)}")
    if (not isinstance(shape, list) or not all(type(s) is int for s in shape) or not isinstance(offsets, list)
            or len(offsets) != 2 or not all(type(o) is int and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
        raise VariantFileError(f"{where}: tensor {tensor!r} has no valid shape and data_offsets")
    start, end = 8 + size + offsets[0], 8 + size + offsets[1]
    if end > len(raw):
        raise VariantFileError(f"{where}: tensor {tensor!r} ends at byte {end}, past the file's {len(raw)} bytes "
                               "(a truncated file)")
    itemsize = 2 if dtype in ("F16", "BF16") else int(_SAFETENSORS_DTYPES[dtype][-1])
    count = _count(shape, where, raw[:end], start, itemsize)
    if dtype == "BF16":  # the top 16 bits of a float32
        half = np.frombuffer(raw, dtype="<u2", count=count, offset=start).astype(np.uint32) << 16
        return _shaped(half.view(np.float32), shape, False, where)  # native uint32 bits, native float32
    return _shaped(np.frombuffer(raw, dtype=_SAFETENSORS_DTYPES[dtype], count=count, offset=start), shape, False, where)


def _checked(values: np.ndarray, origin: str, source: str, width: int, clip: bool) -> VectorTable:
    key = "vectors.rows" if origin == "inline" else "vectors.file"
    shown = "" if origin == "inline" else f" {origin}"
    finite = np.isfinite(values)
    if not finite.all():
        t, a = (int(k) for k in np.argwhere(~finite)[0])
        raise _fail(source, key, f"{shown.strip() or 'the table'}: row {t} (position {t}) column {a} is "
                                 f"{values[t, a]!r}; expected finite numbers")
    if values.shape[1] != width:
        raise _fail(source, key, f"{shown.strip() or 'the table'} has rows of {values.shape[1]} numbers; expected "
                                 f"width = {width} (one number per model coordinate)")
    values = np.array(values, dtype=np.float64)  # a copy of our own, not a view of the file's bytes
    values.setflags(write=False)
    return VectorTable(values, origin, clip)


def parse_vector_fields(reader, data: Mapping, fields: dict) -> None:
    """``[vectors]`` of an additive file into ``fields``: the table, held to the file's declared positions
    (a table of ``N + 1`` rows needs ``positions = "0..N"``, or ``clip = true`` with ``"nonnegative"``), so
    that no position of the file reads past the table."""
    from ._format import position_range_end

    for key, why in (("frequencies", "a learned table has no frequencies (its rows are the encoding)"),
                     ("length", "a learned table does not change with the call length"),
                     ("position", "row t is the vector of position t (position.transform or amplitude would "
                                  "read the table between its rows; scale the values in the file instead)")):
        if key in data:
            raise reader.fail(key, f"does not apply with [vectors]: {why}")
    table = read_vectors(data["vectors"], reader.source, fields["width"])
    positions = fields.get("positions", "integers")
    last = position_range_end(positions)
    rows = f"{table.rows} rows"
    if table.clip:
        if positions != "nonnegative":
            raise reader.fail("vectors.clip", f"a clipped table reads row min(t, {table.last}) at every position t >= 0: "
                                              "declare positions = \"nonnegative\" (top level)"
                                              + (f"; a range 0..{last} reads its rows without a clip" if last else ""))
    elif last is None:
        raise reader.fail("vectors", f"the table has {rows}, so it is defined at positions 0..{table.last} only, "
                                     f"but the file's positions are {positions!r}: declare positions = "
                                     f"\"0..{table.last}\" (top level), or clip = true with positions = "
                                     "\"nonnegative\" (positions past the table read its last row)")
    elif last != table.last:
        raise reader.fail("positions", f"declares 0..{last}, but the table has {rows} (positions 0..{table.last}): "
                                       f"one row per position; declare positions = \"0..{table.last}\"")
    fields.update(vectors=table, rule="list", frequency_values=())
