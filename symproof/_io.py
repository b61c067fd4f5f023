"""Writing files: atomically, into a checked folder, recording what was written.

- :func:`atomic_write_bytes`: a reader sees the old file or the new one, never half of one.
- :func:`output_folder`: the folder an option names, created if needed, or one clear error
  (an empty name, a file or a symlink to a file, a device, a folder that cannot be created
  or written to).
- :func:`write_owned_files`: several files written atomically and recorded in the folder's
  manifest (``.symproof-manifest.json``), so that a later run removes the files *it* wrote
  before and no longer writes, and never anything else: a file is removed only when the
  manifest lists it for the same command and its bytes are still the ones written.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from typing import Mapping, Sequence

from ._errors import InvalidInputError

__all__ = ["atomic_write_bytes", "atomic_write_text", "output_folder", "write_owned_files", "MANIFEST_NAME"]

MANIFEST_NAME = ".symproof-manifest.json"
#: a manifest larger than this is not ours (it lists a handful of files)
_MANIFEST_MAX_BYTES = 1 << 20
#: the only names a manifest entry may have: a file of the folder or of one sub-folder, no '..'
_OWNED_NAME = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}/)?[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _why(err: OSError) -> str:
    return (err.strerror or type(err).__name__).lower()


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, option: str | None = None) -> None:
    """Write ``data`` to a temporary sibling of ``path``, then move it over ``path``.

    An ``OSError`` (a full disk, a read-only folder, a name too long) becomes an
    :class:`InvalidInputError` naming ``option`` and the path; nothing is left behind.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.isdir(path) and not os.path.islink(path):
            raise IsADirectoryError(errno.EISDIR, "is a folder, expected a file name", path)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.basename(path)[-64:])
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0600 files; give the result the permissions a plain open() would
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
        tmp = None
    except OSError as err:
        where = f"{option} " if option else ""
        raise InvalidInputError(f"{where}{path}: cannot write the file ({_why(err)})") from None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: str | os.PathLike, text: str, *, option: str | None = None) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8 with ``\\n`` line ends."""
    atomic_write_bytes(path, text.encode("utf-8"), option=option)


def output_folder(folder, option: str) -> str:
    """``folder`` as a usable output folder (created if missing), or an error naming ``option``."""
    if folder is None or not os.fspath(folder):
        raise InvalidInputError(f"{option}: expected a folder name, got an empty string", option=option)
    folder = os.fspath(folder)
    if "\x00" in folder:
        raise InvalidInputError(f"{option}: a folder name cannot contain a NUL character", option=option)
    shown = ascii(folder)
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as err:
            raise InvalidInputError(f"{option} {shown}: cannot create the folder ({_why(err)})") from None
        info = os.stat(folder)
    except OSError as err:
        raise InvalidInputError(f"{option} {shown}: cannot use it as an output folder ({_why(err)})") from None
    if not stat.S_ISDIR(info.st_mode):
        what = "a symlink to a file" if os.path.islink(folder) else (
            "a file" if stat.S_ISREG(info.st_mode) else "not a regular folder (a device or a special file)")
        raise InvalidInputError(f"{option} {shown}: is {what}; expected a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidInputError(f"{option} {shown}: the folder is not writable")
    return folder


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_manifest(folder: str) -> dict:
    """``{group: {relative name: sha256}}``; anything unreadable or malformed counts as empty."""
    path = os.path.join(folder, MANIFEST_NAME)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return {}
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(_MANIFEST_MAX_BYTES + 1)
    except OSError:
        return {}
    finally:
        os.close(fd)
    if len(raw) > _MANIFEST_MAX_BYTES:
        return {}
    try:
        document = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return {}
    groups = document.get("groups") if isinstance(document, dict) else None
    if not isinstance(groups, dict):
        return {}
    return {group: {name: digest for name, digest in entries.items()
                    if isinstance(name, str) and isinstance(digest, str) and _OWNED_NAME.match(name)}
            for group, entries in groups.items() if isinstance(group, str) and isinstance(entries, dict)}


def _remove_if_ours(folder: str, relative: str, digest: str) -> None:
    path = os.path.join(folder, relative)
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > (1 << 30):
            return  # a symlink, a folder, a device: not something we wrote
        with open(path, "rb") as handle:
            if _digest(handle.read()) != digest:
                return  # changed since we wrote it: the user's now
        os.unlink(path)
    except OSError:
        return


def write_owned_files(folder, files: Mapping[str, bytes], *, group: str, option: str,
                      order: Sequence[str] | None = None) -> list:
    """Write ``files`` (``{relative name: bytes}``) into ``folder``; return their paths.

    Each is written atomically (in ``order`` when given), then the folder's
    manifest records them under ``group`` (``"report:chapter"``, ``"export"``...),
    and the files ``group`` recorded on an earlier run but does not write now are
    removed, provided they are unchanged and no other group lists them.
    """
    folder = output_folder(folder, option)
    for relative in files:
        if not _OWNED_NAME.match(relative):
            raise InvalidInputError(f"internal: refusing to write the file name {relative!r}")
    manifest = _read_manifest(folder)
    paths = []
    for relative in (order or sorted(files)):
        path = os.path.join(folder, relative)
        atomic_write_bytes(path, files[relative], option=option)
        paths.append(path)
    previous = manifest.get(group, {})
    manifest[group] = {relative: _digest(data) for relative, data in sorted(files.items())}
    document = {"written_by": "symproof", "note": "files symproof wrote here; a later run removes only these",
                "groups": {g: dict(sorted(entries.items())) for g, entries in sorted(manifest.items())}}
    atomic_write_text(os.path.join(folder, MANIFEST_NAME), json.dumps(document, indent=1) + "\n", option=option)
    kept_elsewhere = {name for g, entries in manifest.items() if g != group for name in entries}
    for relative, digest in sorted(previous.items()):
        if relative not in files and relative not in kept_elsewhere:
            _remove_if_ours(folder, relative, digest)
    return paths


#: the largest input file read (a variant description is a few hundred bytes)
MAX_INPUT_BYTES = 1 << 20


def read_input_file(path, *, error=InvalidInputError, max_bytes: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them, or one clear ``error``.

    Opened without blocking (a FIFO with no writer must not hang) and checked
    to be a regular file before anything is read (``/dev/zero`` never ends);
    the read itself is bounded too, in case the file grows meanwhile.
    """
    source = os.fspath(path)
    shown = ascii(source)[1:-1] if not source.isprintable() else source
    if not source:
        raise error("expected a file name, got an empty string")
    if "\x00" in source:
        raise error(f"{shown}: a file name cannot contain a NUL character")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(source, flags)
    except FileNotFoundError:
        raise error(f"{shown}: no such file") from None
    except PermissionError:
        raise error(f"{shown}: permission denied (the file is not readable)") from None
    except OSError as err:
        reasons = {errno.ELOOP: "too many levels of symbolic links (a symlink loop?)",
                   errno.ENAMETOOLONG: "the file name is too long", errno.ENOTDIR: "a part of the path is not a folder",
                   errno.ENXIO: "not a regular file (a socket or a device without a reader)"}
        raise error(f"{shown}: cannot open the file ({reasons.get(err.errno, _why(err))})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{shown}: is a folder, expected a file")
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else
                    "a character device" if stat.S_ISCHR(info.st_mode) else
                    "a block device" if stat.S_ISBLK(info.st_mode) else
                    "a socket" if stat.S_ISSOCK(info.st_mode) else "a special file")
            raise error(f"{shown}: is {kind}, expected a regular file")
        if info.st_size > max_bytes:
            raise error(f"{shown}: the file has {info.st_size} bytes; at most {max_bytes} are read")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 16, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise error(f"{shown}: the file has more than {max_bytes} bytes; at most {max_bytes} are read")
        return b"".join(chunks)
    except OSError as err:
        raise error(f"{shown}: cannot read the file ({_why(err)})") from None
    finally:
        os.close(fd)
