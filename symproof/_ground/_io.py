"""Writing files: atomically, into a checked folder, recording what was written.

- :func:`atomic_write_bytes`: a reader sees the old file or the new one, never half of one.
- :func:`output_folder`: the folder an option names, created if needed, or one clear error
  (an empty name, a file or a symlink to a file, a device, a folder that cannot be created
  or written to).
- :func:`write_owned_files`: several files written atomically into a folder that is trusted
  for nothing: no symlink inside it is followed, no file the writer did not write is replaced
  (unless forced) or removed, and its manifest (``.symproof-manifest.json``) is evidence, not
  authority: a file is removed only when the manifest lists it for the same command and it is
  still, by size, modification time and sha256, the regular file the writer wrote.  A writer may
  also publish the list of its files by sha256 (``SHA256SUMS``, committed with them: a checkout has
  no manifest); a later run replaces a file whose bytes are still exactly the listed ones.  That list
  vouches only for those very bytes, never removes anything, and a file edited since, or not listed,
  stays protected; whoever forges it must know the victim's bytes exactly.
- :func:`check_owned_files`: the same refusals, before the work that produces the files.

The owned-files writer recovers from a run cut off anywhere (Ctrl-C, SIGTERM, SIGKILL, a full
disk): each file is recorded in the manifest *before* it is put in place, so a file in the folder
is never one the manifest does not know; runs into one folder take turns (the folder is locked with
``flock`` while its manifest is read and written); a run removes the temporary files a killed run
left behind (its own naming pattern, and only when the process that made them is gone).

Longer than 600 lines: every rule about writing files (regular files only, no symlink followed,
atomic replace, the manifest of owned files, recovery from a cut-off run) is in this one module, so
that no write path can bypass one of them.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from typing import Mapping, Sequence

from ._errors import InvalidInputError

try:
    import fcntl
except ImportError:  # no flock on this platform: runs into one folder are not serialised
    fcntl = None

__all__ = ["atomic_write_bytes", "atomic_write_text", "output_folder", "write_owned_files", "check_owned_files",
           "MANIFEST_NAME", "MAX_OUTPUT_BYTES", "published_list"]


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


# --------------------------------------------------------------------------- the owned-files writer
#
# An output folder may have been prepared by someone else: its manifest forged, a sub-folder or a
# file replaced by a symlink to the user's thesis, a FIFO or a folder in place of an output, the
# user's own file under an output's name.  So nothing inside the folder is trusted:
#
# - the folder is opened once and every operation is relative to that descriptor (``dir_fd``),
#   with ``O_NOFOLLOW``: no component inside it is ever followed, whatever is swapped in meanwhile
#   (the folder itself may be a symlink: the user named it);
# - a file is written to a temporary file beside it, then ``os.replace``-d in, and only after its
#   destination is checked again (``lstat``) to be what the plan found there;
# - the manifest is evidence, never authority: a file counts as ours only if the manifest lists it
#   and it is, by ``lstat``, a regular file of the recorded size and modification time (ns), and
#   only then is it read, in bounded chunks, to compare its sha256.

MANIFEST_NAME = ".symproof-manifest.json"
#: a manifest larger than this is not ours (it lists a handful of files)
_MANIFEST_MAX_BYTES = 1 << 20
#: the largest file the writer writes, and so the largest it ever reads back to hash
MAX_OUTPUT_BYTES = 64 << 20
#: the only names an output or a manifest entry may have: a file of the folder or of one
#: sub-folder; no '..', no leading dot (the manifest, temporary files), no absolute path
_OWNED_NAME = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}/)?[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: a temporary file of the writer: ``.tmp-<pid of the writing process>-<12 hex digits>-<name>``
_TEMPORARY = re.compile(r"^\.tmp-([1-9][0-9]{0,9})-[0-9a-f]{12}-")
#: the manifest group that records a run's files before they are put in place (``pending:<group>``)
_PENDING = "pending:"
#: how long a run waits for another run writing into the same folder, in seconds
LOCK_WAIT = 120.0
_CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_FLAGS = _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
#: can every operation be relative to the folder's descriptor? (Linux, macOS, the BSDs: yes)
_AT = all(f in os.supports_dir_fd for f in (os.open, os.stat, os.mkdir, os.unlink, os.rename, os.readlink)) \
    and os.stat in os.supports_follow_symlinks and bool(_NOFOLLOW)

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _shown(path: str) -> str:
    return path if path.isprintable() else ascii(path)[1:-1]


def _identity(info) -> tuple | None:
    return None if info is None else (info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns)


class _Folder:
    """A folder opened once; its entries are looked at and changed relative to it, never followed."""

    def __init__(self, path: str, shown: str, option: str, fd: int | None):
        self.path, self.shown, self.option, self.fd = path, shown, option, fd
        self.lock_fd = None  # where the folder has no descriptor of its own: the one its lock is held on

    @classmethod
    def open_root(cls, folder: str, option: str) -> "_Folder":
        try:
            # the user named this folder: a symlink here is theirs to give (it is followed, once)
            fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)) \
                if _AT else None
        except OSError as err:
            raise InvalidInputError(f"{option} {_shown(folder)}: cannot open the folder ({_why(err)})") from None
        return cls(os.path.realpath(folder), folder, option, fd)

    def close(self) -> None:
        for fd in (self.fd, self.lock_fd):
            if fd is not None:
                os.close(fd)  # which releases the lock
        self.fd = self.lock_fd = None

    def refuse(self, name: str, what: str) -> InvalidInputError:
        return InvalidInputError(f"{self.option} {_shown(os.path.join(self.shown, name))}: {what}")

    # every call names an entry of this folder, never a path: '/' cannot reach another folder
    def _at(self, name: str):
        if "/" in name or name in ("", ".", ".."):
            raise InvalidInputError(f"internal: {name!r} is not a name inside a folder")
        if self.fd is not None:
            return name, {"dir_fd": self.fd}
        # no descriptor-relative calls on this platform: check, at each call, that the folder is
        # still where it was resolved (no component of it swapped for a symlink)
        if os.path.realpath(self.path) != self.path:
            raise self.refuse(name, "the folder was moved or replaced by a symlink while symproof wrote into it")
        return os.path.join(self.path, name), {}

    def lstat(self, name: str):
        where, at = self._at(name)
        try:
            return os.stat(where, follow_symlinks=False, **at)
        except FileNotFoundError:
            return None

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        where, at = self._at(name)
        return os.open(where, flags | _OPEN_FLAGS, mode, **at)

    def child(self, name: str, *, create: bool) -> "_Folder | None":
        """The sub-folder ``name`` (made when ``create``), or ``None`` when it is missing and not made.

        A symlink, a file or anything else in its place is refused, naming it."""
        info = self.lstat(name)
        if info is None and create:
            where, at = self._at(name)
            try:
                os.mkdir(where, 0o777, **at)
            except FileExistsError:
                pass
            except OSError as err:
                raise self.refuse(name, f"cannot create the folder ({_why(err)})") from None
            info = self.lstat(name)
        if info is None:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise self.refuse(name, f"is a symlink (to {_shown(self.readlink(name))}); symproof never writes "
                                    "into a symlinked sub-folder of an output folder (remove the link)")
        if not stat.S_ISDIR(info.st_mode):
            raise self.refuse(name, f"is {_kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else 'a file'}; "
                                    "expected a folder (symproof writes its files there)")
        sub = os.path.join(self.shown, name)
        if self.fd is None:
            return _Folder(os.path.join(self.path, name), sub, self.option, None)
        try:
            fd = self.open(name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:  # swapped for a symlink or a file since the lstat: O_NOFOLLOW refused it
            raise self.refuse(name, "was replaced (by a symlink or a file) while symproof wrote into it") from None
        if _identity(os.fstat(fd))[:2] != _identity(info)[:2]:
            os.close(fd)
            raise self.refuse(name, "was replaced while symproof wrote into it")
        return _Folder(os.path.join(self.path, name), sub, self.option, fd)

    def readlink(self, name: str) -> str:
        where, at = self._at(name)
        try:
            return os.readlink(where, **at)
        except OSError:
            return "?"

    def sha256(self, name: str, info) -> str | None:
        """The sha256 of the regular file ``name`` found as ``info`` (its lstat), read in chunks; ``None``
        when it is not that file any more, or larger than any output (then it is not read at all)."""
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_OUTPUT_BYTES:
            return None
        try:
            fd = self.open(name, os.O_RDONLY)
        except OSError:
            return None
        try:
            if _identity(os.fstat(fd))[:4] != _identity(info)[:4]:
                return None
            digest, left = hashlib.sha256(), info.st_size + 1
            while left > 0:
                chunk = os.read(fd, min(_CHUNK, left))
                if not chunk:
                    break
                digest.update(chunk)
                left -= len(chunk)
            return digest.hexdigest() if left == 1 else None  # it grew or shrank while read: not ours
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes, expected, before_placing=None) -> tuple:
        """Write ``data`` to a temporary file here, then replace ``name`` with it, provided ``name`` is
        still what the plan saw (``expected``: its identity, ``None`` for absent); its evidence and
        identity.  ``before_placing(evidence)`` runs once the bytes are on disk, before the replace:
        the evidence (size, modification time, sha256) is the placed file's, which keeps the inode."""
        tmp = None
        try:
            for _ in range(100):
                candidate = f".tmp-{os.getpid()}-{os.urandom(6).hex()}-{name[-64:]}"
                try:
                    # mode 0666: the umask then gives the permissions a plain open() would
                    fd = self.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
                except FileExistsError:
                    continue
                tmp = candidate
                break
            else:
                raise self.refuse(name, "cannot create a temporary file beside it")
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                mine = os.fstat(fd)
            finally:
                os.close(fd)
            evidence = {"size": mine.st_size, "mtime_ns": mine.st_mtime_ns, "sha256": _digest(data)}
            if before_placing is not None:
                before_placing(evidence)
            if _identity(self.lstat(name)) != expected:
                raise self.refuse(name, "changed while symproof was writing (nothing replaced)")
            (src, at), (dst, _) = self._at(tmp), self._at(name)
            os.replace(src, dst, **({"src_dir_fd": self.fd, "dst_dir_fd": self.fd} if at else {}))
            tmp = None
        except OSError as err:
            raise self.refuse(name, f"cannot write the file ({_why(err)})") from None
        finally:
            if tmp is not None:
                self.unlink(tmp)
        return evidence, _identity(mine)

    def sweep(self) -> list:
        """Remove the temporary files here that a writer killed before it could (its naming pattern,
        a regular file, made by a process that is gone); their names.  Called with the folder locked,
        so no live writer is between making one and placing it."""
        try:
            names = os.listdir(self.fd if self.fd is not None else self.path)
        except OSError:
            return []
        removed = []
        for name in names:
            match = _TEMPORARY.match(name)
            if match is None or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
                continue
            info = self.lstat(name)
            if info is not None and stat.S_ISREG(info.st_mode):
                self.unlink(name)
                removed.append(name)
        return removed

    def lock(self, *, exclusive: bool) -> None:
        """Wait (at most :data:`LOCK_WAIT` seconds) until no other run holds this folder, then hold it until
        :meth:`close`.  Where ``flock`` is not supported (some network file systems) runs are not serialised."""
        if fcntl is None:
            return
        fd = self.fd if self.fd is not None else os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        if self.fd is None:
            self.lock_fd = fd
        mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, mode)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InvalidInputError(f"{self.option} {_shown(self.shown)}: another symproof run has been "
                                            f"writing into this folder for more than {LOCK_WAIT:g} s; wait for it "
                                            "to end, or end it") from None
                time.sleep(0.05)
            except OSError:
                return

    def unlink(self, name: str) -> None:
        where, at = self._at(name)
        try:
            os.unlink(where, **at)
        except OSError:
            pass


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or not a pid at all): not ours to judge
    return True


def _entry(value) -> dict | None:
    """A manifest entry as the writer records it, or ``None`` (it then proves nothing)."""
    if not isinstance(value, dict):
        return None
    size, mtime, digest = value.get("size"), value.get("mtime_ns"), value.get("sha256")
    if type(size) is not int or type(mtime) is not int or not isinstance(digest, str):
        return None
    if not 0 <= size <= MAX_OUTPUT_BYTES or not _SHA256.match(digest):
        return None
    return {"size": size, "mtime_ns": mtime, "sha256": digest}


def _read_manifest(root: _Folder) -> dict:
    """``{group: {relative name: entry}}``; anything unreadable, oversized or malformed counts as empty."""
    try:
        fd = root.open(MANIFEST_NAME, os.O_RDONLY)
    except OSError:
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MANIFEST_MAX_BYTES:
            return {}  # the size is checked before anything is read
        raw = os.read(fd, _MANIFEST_MAX_BYTES + 1)
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
    manifest = {}
    for group, entries in groups.items():
        if isinstance(group, str) and len(group) <= 256 and isinstance(entries, dict):
            kept = {name: _entry(value) for name, value in entries.items()
                    if isinstance(name, str) and _OWNED_NAME.match(name)}
            kept = {name: entry for name, entry in kept.items() if entry is not None}
            if kept:
                manifest[group] = kept
    return manifest


_PUBLISHED_LINE = re.compile(r"^([0-9a-f]{64})  (\S+)$")


def published_list(files: Mapping[str, bytes]) -> bytes:
    """``files`` by sha256, one ``<sha256>  <name>`` line each, sorted: what ``sha256sum`` writes (and
    ``sha256sum -c`` checks); no time, size or path of this machine, so a checkout can commit it."""
    return "".join(f"{_digest(files[name])}  {name}\n" for name in sorted(files)).encode("ascii")


def _read_published(root: _Folder, name: str) -> dict | None:
    """The published list ``name`` of ``root`` as ``{relative name: sha256}``; ``None`` when it is missing,
    not a regular file, oversized or not entirely in that format (then it vouches for nothing, and a
    file of that name is the user's, protected as any other)."""
    try:
        fd = root.open(name, os.O_RDONLY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MANIFEST_MAX_BYTES:
            return None
        raw = os.read(fd, _MANIFEST_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        lines = raw.decode("ascii").splitlines()
    except UnicodeDecodeError:
        return None
    listed = {}
    for line in lines:
        match = _PUBLISHED_LINE.match(line)
        if not match or not _OWNED_NAME.match(match.group(2)) or match.group(2) == name:
            return None
        listed[match.group(2)] = match.group(1)
    return listed or None


def _split(relative: str) -> tuple:
    sub, _, base = relative.rpartition("/")
    return sub, base


def _evidenced(folder: _Folder, base: str, info, entries) -> bool:
    """Is ``base`` (found as ``info``) a file the writer wrote, by one of the manifest ``entries``?

    Size and modification time are compared first, from ``lstat``: only a regular file that matches
    them is read, to compare its sha256."""
    if info is None or not stat.S_ISREG(info.st_mode):
        return False
    matching = [e for e in entries if e["size"] == info.st_size and e["mtime_ns"] == info.st_mtime_ns]
    return bool(matching) and folder.sha256(base, info) in {e["sha256"] for e in matching}


class _Writer:
    """One run of :func:`write_owned_files`: the folder, its manifest, and the plan checked before writing."""

    def __init__(self, folder: str, option: str, force: bool, published: str | None = None, *,
                 exclusive: bool = False):
        self.root = _Folder.open_root(folder, option)
        try:
            self.root.lock(exclusive=exclusive)
        except BaseException:
            self.root.close()
            raise
        self.force = force
        self.manifest = _read_manifest(self.root)
        self.manifest_expected = None  # the manifest's identity as this run last saw or wrote it
        self.pending = _PENDING  # the group a file is recorded in before it is placed (``pending:<group>``)
        self.subs = {"": self.root}
        #: the committed list of the folder's outputs (name -> sha256), or None when there is none
        self.published = _read_published(self.root, published) if published else None
        #: outputs replaced because the published list vouched for them, whose bytes change
        self.regenerated: list = []

    def close(self) -> None:
        for sub in self.subs.values():
            if sub is not None:
                sub.close()

    def folder(self, sub: str, *, create: bool) -> _Folder | None:
        if sub not in self.subs or (create and self.subs[sub] is None):
            self.subs[sub] = self.root.child(sub, create=create)
        return self.subs[sub]

    def entries(self, relative: str) -> list:
        return [entries[relative] for entries in self.manifest.values() if relative in entries]

    def sweep(self, subs) -> None:
        """Remove a killed run's temporary files from the folder and the sub-folders ``subs``."""
        for sub in sorted(set(subs) | {""}):
            try:
                folder = self.folder(sub, create=False)
            except InvalidInputError:
                continue  # a symlinked sub-folder: refused when written to, never swept
            if folder is not None:
                folder.sweep()

    def check(self, relative: str, data: bytes | None, *, any_file: bool = False):
        """The identity of what is at ``relative`` now if it may be replaced (``None``: nothing is
        there), else the one-line refusal naming it.  ``data``: the new bytes (``None``: not known
        yet); ``any_file``: any regular file may be replaced (the manifest; or a check before the
        bytes exist, the file being judged when writing)."""
        sub, base = _split(relative)
        folder = self.folder(sub, create=False)
        info = folder.lstat(base) if folder is not None else None
        if info is None:
            return None
        if stat.S_ISLNK(info.st_mode):
            raise folder.refuse(base, f"is a symlink (to {_shown(folder.readlink(base))}); symproof never writes "
                                      "through or over a symlink in an output folder (remove it)")
        if not stat.S_ISREG(info.st_mode):
            raise folder.refuse(base, f"is {_kind(info.st_mode)}; expected a regular file symproof wrote there "
                                      "(move it away)")
        if any_file or self.force or _evidenced(folder, base, info, self.entries(relative)):
            return _identity(info)
        if self.published and relative in self.published and folder.sha256(base, info) == self.published[relative]:
            # the very bytes an earlier run published here (a checkout's committed outputs): symproof's own
            if data is not None and _digest(data) != self.published[relative]:
                self.regenerated.append(relative)
            return _identity(info)
        if data is not None and info.st_size == len(data) and folder.sha256(base, info) == _digest(data):
            return _identity(info)  # the very bytes about to be written: replacing it changes nothing
        raise folder.refuse(base, f"a file of this name is already there and symproof did not write it (not listed "
                                  f"in {MANIFEST_NAME}, or changed since); rerun with --force to replace it")

    def save_manifest(self) -> None:
        document = {"written_by": "symproof", "format": 2,
                    "note": "files symproof wrote here, with their size, mtime and sha256; a later run removes "
                            "only files that still match; a 'pending:' group lists the files of a run that "
                            "had not finished",
                    "groups": {g: dict(sorted(entries.items())) for g, entries in sorted(self.manifest.items())
                               if entries}}
        text = json.dumps(document, indent=1) + "\n"
        _, self.manifest_expected = self.root.write(MANIFEST_NAME, text.encode("utf-8"), self.manifest_expected)

    def write(self, relative: str, data: bytes, expected) -> dict:
        """Write one file; its evidence is in the manifest group :attr:`pending` before the file is in place."""
        def record(evidence):
            self.manifest.setdefault(self.pending, {})[relative] = evidence
            self.save_manifest()

        sub, base = _split(relative)
        evidence, _ = self.folder(sub, create=True).write(base, data, expected, before_placing=record)
        return evidence

    def remove_if_ours(self, relative: str, entries: list) -> None:
        """Remove ``relative`` if it is still exactly a file recorded by one of ``entries``; else leave it."""
        sub, base = _split(relative)
        try:
            folder = self.folder(sub, create=False)
        except InvalidInputError:
            return  # a symlinked or replaced sub-folder: nothing in it is ours to remove
        info = folder.lstat(base) if folder is not None else None
        if _evidenced(folder, base, info, entries) and _identity(folder.lstat(base)) == _identity(info):
            folder.unlink(base)


def write_owned_files(folder, files: Mapping[str, bytes], *, group: str, option: str,
                      order: Sequence[str] | None = None, force: bool = False, published: str | None = None,
                      unpublished: Sequence[str] = (), regenerated: list | None = None) -> list:
    """Write ``files`` (``{relative name: bytes}``) into ``folder``; return their paths.

    Every destination is checked before anything is written, and again at the moment it is
    replaced: a symlink (file or sub-folder), a folder, a FIFO or a device in its place is
    refused, and so is a regular file the manifest does not show the writer wrote (unless
    ``force``; a file with exactly the new bytes is not a loss and is replaced).  Each file is
    written atomically (in ``order`` when given), then the manifest records it under ``group``
    (``"report:chapter"``, ``"export:..."``) with its size, modification time and sha256; the
    files ``group`` recorded on an earlier run and does not write now are removed if no other
    group lists them and they are still, by that evidence, the files it wrote.

    ``published``: also write the list of ``files`` by sha256 under that name (``SHA256SUMS``, the
    format of ``sha256sum``), last: it is committed with them, and a later run in a checkout, which
    has no manifest, replaces a file whose bytes are still the ones listed there (a file not listed,
    or edited since, stays protected); such a file whose new bytes differ is appended to
    ``regenerated``.  ``unpublished``: files left out of that list (one whose bytes depend on the
    machine's tools, a PDF).
    """
    folder = output_folder(folder, option)
    names = list(order or sorted(files))
    if sorted(names) != sorted(files):
        raise InvalidInputError("internal: the write order must name every file once")
    if published:
        files = {**files, published: published_list({k: v for k, v in files.items() if k not in unpublished})}
        names.append(published)
    for relative in names:
        if not _OWNED_NAME.match(relative):
            raise InvalidInputError(f"internal: refusing to write the file name {relative!r}")
        if len(files[relative]) > MAX_OUTPUT_BYTES:
            raise InvalidInputError(f"internal: {relative} has {len(files[relative])} bytes, more than an output "
                                    f"may have ({MAX_OUTPUT_BYTES})")
    writer = _Writer(folder, option, force, published, exclusive=True)
    try:
        writer.sweep(_split(relative)[0] for relative in names)
        plan = {relative: writer.check(relative, files[relative], any_file=relative == published
                                       and writer.published is not None) for relative in names}
        writer.manifest_expected = writer.check(MANIFEST_NAME, None, any_file=True)
        manifest = writer.manifest
        pending = writer.pending = _PENDING + group
        # what this group wrote before: on its last complete run, and on a run cut off since
        previous = {}
        for entries in (manifest.get(group, {}), manifest.get(pending, {})):
            for relative, entry in entries.items():
                previous.setdefault(relative, []).append(entry)
        written = {}
        try:
            for relative in names:
                written[relative] = writer.write(relative, files[relative], plan[relative])
                for name, entries in manifest.items():  # every group that lists it now lists what is there
                    if relative in entries and name != pending:
                        entries[relative] = written[relative]
        except BaseException:
            # stopped half-way (a swap caught at writing, a full disk, Ctrl-C, SIGTERM): what was written
            # is recorded as the group's; the pending group keeps the file that may have been placed as
            # the run stopped (the next run of the group tidies it), and if even this cannot be saved,
            # the pending group on disk still lists every file placed
            if written:
                manifest[group] = {**manifest.get(group, {}), **written}
                manifest[pending] = {r: e for r, e in manifest.get(pending, {}).items() if r not in written}
                try:
                    writer.save_manifest()
                except (InvalidInputError, KeyboardInterrupt):
                    pass
            raise
        manifest[group] = written
        manifest.pop(pending, None)
        writer.save_manifest()
        kept_elsewhere = {name for g, entries in manifest.items() if g != group for name in entries}
        for relative, entries in sorted(previous.items()):
            if relative not in files and relative not in kept_elsewhere:
                writer.remove_if_ours(relative, entries)
        if regenerated is not None:
            regenerated.extend(writer.regenerated)
    finally:
        writer.close()
    return [os.path.join(folder, relative) for relative in names]


def check_owned_files(folder, names: Sequence[str], *, option: str, folders: Sequence[str] = (),
                      unlisted: bool = False, force: bool = False) -> None:
    """Refuse now, before any work, what :func:`write_owned_files` will refuse whatever it writes to
    ``names``: a symlinked sub-folder, a symlink, a folder or a special file in their place.  (A
    regular file it did not write is judged when writing: it may hold the very bytes to come.)
    ``folders``: sub-folders the files may go in, checked even when no name is known yet.
    ``unlisted``: refuse now, too, a regular file it did not write (unless ``force``): for a command
    whose work should not even start then (an audit runs the user's code)."""
    writer = _Writer(output_folder(folder, option), option, force)
    try:
        for sub in folders:
            writer.folder(sub, create=False)
        for relative in names:
            if _OWNED_NAME.match(relative):
                writer.check(relative, None, any_file=not unlisted)
        writer.check(MANIFEST_NAME, None, any_file=True)
    finally:
        writer.close()


#: the largest input file read (a variant description is a few hundred bytes)
MAX_INPUT_BYTES = 1 << 20


def read_input_text(path, *, error=InvalidInputError, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """:func:`read_input_file`'s bytes as UTF-8 text, or one ``error`` naming the file and the first bad byte."""
    raw = read_input_file(path, error=error, max_bytes=max_bytes)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{os.fspath(path)}: not UTF-8 text ({err.reason} at byte {err.start})") from None


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
