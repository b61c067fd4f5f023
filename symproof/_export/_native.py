"""The C kernel behind the Python targets: the exported C body, compiled on first use, called through ctypes.

The torch module (contiguous CPU tensors) and the NumPy module (large
contiguous half-pairing arrays) carry the C99 body of the same kernel
(:func:`._rope.rope_c_bodies`, float32 and float64) as string literals and
run it where their own operations would take several passes over ``x``: the
C pass reads ``x`` once and writes ``out`` once, and rows are independent, so
the result does not depend on how they are split over threads.  Compiling
needs a C compiler on the user's machine; without one, or with
``SYMPROOF_NATIVE=0``, every call stays in the library's own path
(``native_status()`` says which runs and why).
"""

from __future__ import annotations

from dataclasses import replace

from ..kernels._symbolic import RopeSpec
from ._rope import rope_c_bodies

__all__ = ["NATIVE", "native_fields"]

#: the loader, formatted into a module that imports ctypes, hashlib, os, shutil, subprocess, tempfile
#: and threading and defines ``DIRECTIONS``; fields: ``c_sources``, ``library`` (the fallback's name)
NATIVE = """# The exported C kernel of the same definitions (``symproof export rope --target c``, float32 and
# float64), behind contiguous CPU arrays: one pass over x where the library's own operations take
# three (half pairing: two products and the add of the swapped halves).  Compiled
# on first use with the system C compiler into a cache folder (SYMPROOF_CACHE, else
# $XDG_CACHE_HOME/symproof or ~/.cache/symproof), keyed by the hash of source, compiler and flags.
# NATIVE = False or SYMPROOF_NATIVE=0 keeps every call in {library}; so does a failed compile
# (native_status() says why).
NATIVE = os.environ.get("SYMPROOF_NATIVE", "1") != "0"
C_SOURCES = {c_sources}
# no -march=native: a cached library may be loaded on another CPU sharing the folder
C_FLAGS = ("-std=c99", "-O3", "-ffp-contract=off", "-shared", "-fPIC")
_native = {{}}
_native_lock = threading.Lock()


def _cache_folder():
    found = os.environ.get("SYMPROOF_CACHE")
    if found:
        return found
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "symproof")


def _compile():
    \"\"\"``(functions, status)``: the C kernel's entry points by (dtype, direction), compiled if not cached.\"\"\"
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None, "pure {library}: no C compiler (cc or gcc) on PATH"
    key = repr((sorted(C_SOURCES.items()), compiler, C_FLAGS)).encode("utf-8")
    folder = _cache_folder()
    library = os.path.join(folder, f"rope-{{hashlib.sha256(key).hexdigest()[:24]}}.so")
    if not os.path.exists(library):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder) as build:
            for name, text in C_SOURCES.items():
                with open(os.path.join(build, name), "w", encoding="utf-8") as handle:
                    handle.write(text)
            sources = [os.path.join(build, name) for name in sorted(C_SOURCES) if name.endswith(".c")]
            built = os.path.join(build, "rope.so")
            done = subprocess.run([compiler, *C_FLAGS, *sources, "-o", built, "-lm"], capture_output=True,
                                  text=True, timeout=300)
            if done.returncode != 0:
                return None, f"pure {library}: {{compiler}} failed: {{(done.stderr or done.stdout).strip()[:300]}}"
            os.replace(built, library)  # atomic: a process loading the library never sees half of it
    lib = ctypes.CDLL(library)
    pointer, functions = ctypes.c_void_p, {{}}
    for dtype, name in (("float32", "rope_f32"), ("float64", "rope_f64")):
        for direction, verb in zip(DIRECTIONS, ("apply", "backward")):
            function = getattr(lib, f"{{name}}_{{verb}}_with_table")
            function.argtypes = [pointer, pointer, pointer, ctypes.c_size_t, pointer, ctypes.c_int64, ctypes.c_size_t]
            function.restype = ctypes.c_int
            functions[dtype, direction] = function
    return functions, f"C kernel: {{library}} (built with {{compiler}})"


def _native_functions():
    if not NATIVE:
        return None
    if "functions" not in _native:
        with _native_lock:
            if "functions" not in _native:
                try:
                    _native["functions"], _native["status"] = _compile()
                except (OSError, subprocess.SubprocessError) as err:
                    _native["functions"], _native["status"] = None, f"pure {library}: {{type(err).__name__}}: {{err}}"
    return _native["functions"]


def native_status():
    \"\"\"Which kernel the calls the C kernel can serve run: the C library's path, or why not.\"\"\"
    if not NATIVE:
        return f"pure {library}: NATIVE is off (SYMPROOF_NATIVE=0)"
    _native_functions()
    return _native["status"]


def _native_run(function, x_at, out_at, rows_at, count, row_bytes, pairs_at, n_pairs, parts):
    \"\"\"``function`` over ``count`` rows, split into ``parts`` calls side by side (ctypes releases
    the GIL; rows are independent, so the split changes no bit).\"\"\"
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
        raise RuntimeError(f"internal: the C kernel returned {{statuses}}")


"""


def native_fields(spec: RopeSpec, library: str) -> dict:
    """The format fields of :data:`NATIVE`: the C files of ``spec`` in float32 and float64 as a literal."""
    sources = {}
    for dtype, name in (("float32", "rope_f32"), ("float64", "rope_f64")):
        typed = replace(spec, config=replace(spec.config, dtype=dtype))
        sources[f"{name}.c"], sources[f"{name}.h"] = rope_c_bodies(typed, name)
    return {"c_sources": _literal(sources), "library": library}


def _literal(sources: dict) -> str:
    """``sources`` as a dict literal, each text one ``ascii`` literal per line (adjacent literals
    concatenate): no line longer than the C source's own, so a listing of the module stays readable."""
    entries = []
    for name, text in sources.items():
        lines = "".join(f"        {ascii(line)}\n" for line in text.splitlines(keepends=True))
        entries.append(f"    {ascii(name)}: (\n{lines}    ),\n")
    return "{\n" + "".join(entries) + "}"
