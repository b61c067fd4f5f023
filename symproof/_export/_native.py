"""The C kernel behind the Python targets: the exported C body, compiled on first use, called through ctypes.

The torch module (contiguous CPU tensors) and the NumPy module (large
contiguous half-pairing arrays) carry the C99 body of the same kernel
(:func:`._rope_c.rope_c_bodies`, float32 and float64) as string literals and
run it where their own operations would take several passes over ``x``: the
C pass reads ``x`` once and writes ``out`` once, and rows are independent, so
the result does not depend on how they are split over threads.  Compiling
needs a C compiler on the user's machine; without one, or with
``SYMPROOF_NATIVE=0``, every call stays in the library's own path
(``native_status()`` says which runs and why).

Loading a shared library runs its constructors, so the loader (:data:`LOADER`,
emitted into the module; standard library only, no user input in its text)
loads only bytes it built itself or checked: the cache folder must be yours,
private (made 0700 with every missing parent, whatever the umask) and reached
through folders that only you or root can change (a sticky folder owned by
root or you, such as ``/tmp``, is accepted above it); only absolute roots count
(a relative or empty ``SYMPROOF_CACHE``, ``XDG_CACHE_HOME`` or ``HOME`` is
ignored, as the XDG base-directory specification says); no link inside the
cache is followed; a cached library is used only when its bytes match the
sha256 recorded beside it at build time (that file passes the same checks),
and the checked bytes themselves are what is loaded (copied into a fresh
private folder, so nothing can be swapped in between the check and
``dlopen``).  Anything else means a rebuild, or the pure path, and
``native_status()`` says which and why.
"""

from __future__ import annotations

from dataclasses import replace

from ._symbolic import RopeSpec
from ._rope_c import rope_c_bodies

__all__ = ["NATIVE", "native_fields", "TRUE_WORDS", "FALSE_WORDS"]

#: the words a boolean environment value (``SYMPROOF_NATIVE``) may be, any case; anything else is refused
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")

# The loader as it is emitted (plain Python: the braces are doubled for ``str.format`` below).  It
# runs in a module that imports ctypes, hashlib, os, stat, subprocess, tempfile and threading and
# defines ``DIRECTIONS``, ``C_SOURCES``, ``C_FLAGS`` and ``PURE``.
LOADER = '''
def _flag(name, default):
    """A boolean environment value: TRUE_WORDS or FALSE_WORDS in any case; unset or empty: ``default``."""
    text = os.environ.get(name, "").strip().lower()
    if not text:
        return default
    if text in TRUE_WORDS or text in FALSE_WORDS:
        return text in TRUE_WORDS
    raise ValueError(f"{name}={os.environ[name]!r}: expected one of {', '.join(TRUE_WORDS + FALSE_WORDS)}")


NATIVE = _flag("SYMPROOF_NATIVE", True)
_native = {}
_native_lock = threading.Lock()
# a cached library larger than this is not read (the kernel is a few tens of kilobytes)
LIBRARY_LIMIT = 1 << 26


class _Untrusted(Exception):
    """A path the loader will not use; the message says why (it ends up in native_status())."""


def _cache_folder():
    """``(folder or None, notes)``: the first absolute root among SYMPROOF_CACHE, XDG_CACHE_HOME and
    HOME, and a note for each one ignored (a relative root would put the cache under the current folder)."""
    notes = []
    for name, below in (("SYMPROOF_CACHE", ()), ("XDG_CACHE_HOME", ("symproof",)), ("HOME", (".cache", "symproof"))):
        value = os.environ.get(name)
        if value and os.path.isabs(value):
            return os.path.join(value, *below), notes
        if value or name == "HOME":
            notes.append(f"{name}={value!r} ignored (not an absolute path)" if value
                         else f"HOME is {'empty' if value == '' else 'unset'}")
    return None, notes


def _private_group(gid):
    """Whether only you can be in group ``gid``: a user private group (named like you, no other
    member, nobody else's primary group), as umask 002 systems give each user."""
    try:
        import grp
        import pwd

        me = pwd.getpwuid(os.geteuid()).pw_name
        group = grp.getgrgid(gid)
        if group.gr_name != me or any(member != me for member in group.gr_mem):
            return False
        return all(user.pw_gid != gid or user.pw_name == me for user in pwd.getpwall())
    except (ImportError, KeyError, OSError):
        return False


def _check(info, where, mine):
    """Refuse a folder or file others could change: owned by another user (root too, where ``mine``), or
    writable by others or by a group others can be in (above the cache, a sticky folder of root's or
    yours is fine, like /tmp)."""
    uid = os.geteuid()
    if info.st_uid != uid and (mine or info.st_uid != 0):
        raise _Untrusted(f"{where} belongs to another user (uid {info.st_uid})")
    if not mine and info.st_mode & stat.S_ISVTX and stat.S_ISDIR(info.st_mode):
        return
    if info.st_mode & 0o002 or (info.st_mode & 0o020 and not _private_group(info.st_gid)):
        raise _Untrusted(f"{where} is writable by others (mode {stat.S_IMODE(info.st_mode):o})")


def _refusal(name, folder_fd, where, err, kind):
    """Why ``name`` could not be opened: a link (never followed), another kind of entry, or the error."""
    try:
        found = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
    except OSError:
        return f"{where}: {err.strerror or err}"
    if stat.S_ISLNK(found):
        return f"{where} is a symbolic link (not followed)"
    if kind == "folder" and not stat.S_ISDIR(found):
        return f"{where} is not a folder"
    return f"{where}: {err.strerror or err}"


def _open_folder(folder):
    """``(descriptor, path)`` of the cache folder, made (0700, with every missing parent) if need be;
    every folder from / down is checked, and none is entered through a link (links above the cache
    folder's name are resolved once, before the walk)."""
    if not hasattr(os, "O_NOFOLLOW") or os.open not in os.supports_dir_fd:
        raise _Untrusted("this system cannot open files without following links")
    parent, name = os.path.split(os.path.normpath(folder))
    path = os.path.join(os.path.realpath(parent), name)
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW
    parts = [part for part in path.split("/") if part]
    fd, where = os.open("/", flags), "/"
    try:
        _check(os.fstat(fd), where, mine=not parts)
        for depth, part in enumerate(parts):
            where, made = os.path.join(where, part), False
            try:
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    try:
                        os.mkdir(part, 0o700, dir_fd=fd)
                        made = True
                    except FileExistsError:  # made meanwhile by another process: checked like any other
                        pass
                    child = os.open(part, flags, dir_fd=fd)
            except OSError as err:
                raise _Untrusted(_refusal(part, fd, where, err, "folder")) from None
            os.close(fd)
            fd = child
            if made:
                os.fchmod(fd, 0o700)  # mkdir's mode passes through the umask: 0700 whatever it is
            _check(os.fstat(fd), where, mine=depth == len(parts) - 1)
    except BaseException:
        os.close(fd)
        raise
    return fd, path


def _read_checked(folder_fd, name, limit):
    """The bytes of ``name`` in the cache folder: a regular file of yours that others cannot write,
    opened without following a link."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=folder_fd)
    except FileNotFoundError:
        raise
    except OSError as err:
        raise _Untrusted(_refusal(name, folder_fd, name, err, "file")) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Untrusted(f"{name} is not a regular file")
        _check(info, name, mine=True)
        if info.st_size > limit:
            raise _Untrusted(f"{name} is larger than {limit} bytes")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        raise _Untrusted(f"{name} is larger than {limit} bytes")
    finally:
        os.close(fd)


def _cached(folder_fd, name):
    """``(bytes or None, note)``: the cached library if it and its recorded sha256 pass the checks and agree."""
    try:
        library = _read_checked(folder_fd, name, LIBRARY_LIMIT)
    except FileNotFoundError:
        return None, None
    except (_Untrusted, OSError) as err:
        return None, f"rebuilt: the cached {name} was not used ({err})"
    try:
        recorded = _read_checked(folder_fd, name + ".sha256", 128).decode("ascii", "replace").strip()
    except FileNotFoundError:
        return None, f"rebuilt: the cached {name} has no recorded sha256"
    except (_Untrusted, OSError) as err:
        return None, f"rebuilt: the cached {name} was not used ({err})"
    if hashlib.sha256(library).hexdigest() != recorded:
        return None, f"rebuilt: the cached {name} does not match the sha256 recorded when it was built"
    return library, None


def _write_new(folder_fd, name, data, mode):
    """Write ``data`` to a new file ``name`` (never an existing one, never through a link)."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=folder_fd)
    try:
        os.fchmod(fd, mode)  # the umask must not take the owner's own bits away (or hand others any)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _store(folder_fd, name, library):
    """Put the library and its sha256 in the cache, each by an atomic rename of a fresh file."""
    digest = (hashlib.sha256(library).hexdigest() + "\\n").encode("ascii")
    for target, data in ((name, library), (name + ".sha256", digest)):
        fresh = f".{target}.{os.urandom(8).hex()}.tmp"
        _write_new(folder_fd, fresh, data, 0o600)
        os.replace(fresh, target, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)


def _build(folder, compiler):
    """The compiled library's bytes (built in a fresh private folder), or a string saying why not."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".build-") as build:
        os.chmod(build, 0o700)
        for name, text in C_SOURCES.items():
            with open(os.path.join(build, name), "x", encoding="utf-8") as handle:
                handle.write(text)
        sources = [name for name in sorted(C_SOURCES) if name.endswith(".c")]
        # relative names, run inside the folder: the library does not carry a temporary path
        done = subprocess.run([compiler, *C_FLAGS, *sources, "-o", "rope.so", "-lm"], cwd=build,
                              capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            return f"{compiler} failed: {(done.stderr or done.stdout).strip()[:300]}"
        with open(os.path.join(build, "rope.so"), "rb") as handle:
            return handle.read()


def _load(folder, library):
    """dlopen exactly these bytes: written to a fresh private folder first, so nothing else can be loaded."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".load-") as private:
        os.chmod(private, 0o700)
        fd = os.open(private, os.O_RDONLY)
        try:
            _write_new(fd, "rope.so", library, 0o700)
        finally:
            os.close(fd)
        return ctypes.CDLL(os.path.join(private, "rope.so"))


def _compiler():
    """``(compiler or None, note)``: CC if absolute, else cc or gcc from the absolute folders of PATH only
    (a relative or empty entry would run a compiler shipped in the current folder)."""
    named = os.environ.get("CC", "").strip()
    if os.sep in named:
        return (named, None) if os.path.isabs(named) else (None, f"CC={named!r} ignored (not an absolute path)")
    for candidate in [named] if named else ["cc", "gcc"]:
        for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
            path = os.path.join(entry, candidate)
            if os.path.isabs(entry) and os.path.isfile(path) and os.access(path, os.X_OK):
                return path, None
    return None, f"no C compiler ({named or 'cc or gcc'}) in the absolute folders of PATH"


def _compile():
    """``(functions, status)``: the C kernel's entry points by (dtype, direction), or None and why not."""
    compiler, why = _compiler()
    if compiler is None:
        return None, f"{PURE}: {why}"
    folder, notes = _cache_folder()
    if folder is None:
        return None, f"{PURE}: no cache folder to build in ({'; '.join(notes)})"
    key = repr((sorted(C_SOURCES.items()), compiler, C_FLAGS)).encode("utf-8")
    name = f"rope-{hashlib.sha256(key).hexdigest()[:24]}.so"
    try:
        folder_fd, folder = _open_folder(folder)
    except (_Untrusted, OSError) as err:
        return None, f"{PURE}: the cache folder {folder} is not used: {err}"
    try:
        library, note = _cached(folder_fd, name)
        notes += [note] if note else []
        how = f"checked against its recorded sha256; compiled with {compiler}"
        if library is None:
            library = _build(folder, compiler)
            if isinstance(library, str):
                return None, f"{PURE}: {library}"
            how = f"built with {compiler}"
            try:
                _store(folder_fd, name, library)
            except OSError as err:
                notes.append(f"not cached: {err}")
        lib = _load(folder, library)
    finally:
        os.close(folder_fd)
    pointer, functions = ctypes.c_void_p, {}
    for dtype, prefix in (("float32", "rope_f32"), ("float64", "rope_f64")):
        for direction, verb in zip(DIRECTIONS, ("apply", "backward")):
            function = getattr(lib, f"{prefix}_{verb}_with_table")
            function.argtypes = [pointer, pointer, pointer, ctypes.c_size_t, pointer, ctypes.c_int64, ctypes.c_size_t]
            function.restype = ctypes.c_int
            functions[dtype, direction] = function
    return functions, f"C kernel: {os.path.join(folder, name)} ({'; '.join([how] + notes)})"


def _native_functions():
    if not NATIVE:
        return None
    if "functions" not in _native:
        with _native_lock:
            if "functions" not in _native:
                try:
                    _native["functions"], _native["status"] = _compile()
                except (OSError, subprocess.SubprocessError, AttributeError) as err:
                    _native["functions"], _native["status"] = None, f"{PURE}: {type(err).__name__}: {err}"
    return _native["functions"]


def native_status():
    """Which kernel the calls the C kernel can serve run: the C library's path and how it was
    checked, or why not."""
    if not NATIVE:
        return f"{PURE}: NATIVE is off (set to False, or SYMPROOF_NATIVE is 0, false, no or off)"
    _native_functions()
    return _native["status"]


def _native_run(function, x_at, out_at, rows_at, count, row_bytes, pairs_at, n_pairs, parts):
    """``function`` over ``count`` rows, split into ``parts`` calls side by side (ctypes releases
    the GIL; rows are independent, so the split changes no bit)."""
    cuts = [count * k // parts for k in range(parts + 1)]

    def run(part):
        first, size = cuts[part], cuts[part + 1] - cuts[part]
        return function(x_at + first * row_bytes, out_at + first * row_bytes, rows_at + 8 * first, size,
                        pairs_at, 0, n_pairs)

    if parts == 1:
        statuses = [run(0)]
    else:
        pool = _native.get("pool")
        if pool is None or pool._max_workers < parts - 1:
            from concurrent.futures import ThreadPoolExecutor

            pool = _native["pool"] = ThreadPoolExecutor(parts - 1, thread_name_prefix="rope")
        pending = [pool.submit(run, part) for part in range(1, parts)]
        statuses = [run(0)] + [job.result() for job in pending]
    if any(statuses):  # the row ids index the table by construction: this would be a bug, not bad input
        raise RuntimeError(f"internal: the C kernel returned {statuses}")


'''

#: the loader, formatted into a module that imports ctypes, hashlib, os, stat, subprocess, tempfile and
#: threading and defines ``DIRECTIONS``; fields: ``c_sources``, ``library`` (the fallback's name)
NATIVE = """# The exported C kernel of the same definitions (``symproof export rope --target c``, float32 and
# float64), behind contiguous CPU arrays: one pass over x where the library's own operations take
# three (half pairing: two products and the add of the swapped halves).  Compiled on first use
# with the system C compiler into a private cache folder (SYMPROOF_CACHE, else
# $XDG_CACHE_HOME/symproof or $HOME/.cache/symproof; absolute paths only), keyed by the hash of
# source, compiler and flags.  Loading a library runs its code, so only what this module built or
# checked is loaded: the folder and every folder above it yours or root's and not writable by
# others, no link followed, the library's bytes matching the sha256 recorded at build time.
# NATIVE = False or SYMPROOF_NATIVE=0 (false, no, off) keeps every call in {library}; so does a
# failed check or compile (native_status() says why).
TRUE_WORDS = {true_words}
FALSE_WORDS = {false_words}
PURE = "pure {library}"
C_SOURCES = {c_sources}
# no -march=native: a cached library may be loaded on another CPU sharing the folder
C_FLAGS = ("-std=c99", "-O3", "-ffp-contract=off", "-shared", "-fPIC")
""" + LOADER.replace("{", "{{").replace("}", "}}")


def native_fields(spec: RopeSpec, library: str) -> dict:
    """The format fields of :data:`NATIVE`: the C files of ``spec`` in float32 and float64 as a literal."""
    sources = {}
    for dtype, name in (("float32", "rope_f32"), ("float64", "rope_f64")):
        typed = replace(spec, config=replace(spec.config, dtype=dtype))
        sources[f"{name}.c"], sources[f"{name}.h"] = rope_c_bodies(typed, name)
    return {"c_sources": _literal(sources), "library": library, "true_words": repr(TRUE_WORDS),
            "false_words": repr(FALSE_WORDS)}


def _literal(sources: dict) -> str:
    """``sources`` as a dict literal, each text one ``ascii`` literal per line (adjacent literals
    concatenate): no line longer than the C source's own, so a listing of the module stays readable."""
    entries = []
    for name, text in sources.items():
        lines = "".join(f"        {ascii(line)}\n" for line in text.splitlines(keepends=True))
        entries.append(f"    {ascii(name)}: (\n{lines}    ),\n")
    return "{\n" + "".join(entries) + "}"
