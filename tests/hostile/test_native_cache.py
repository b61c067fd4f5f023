"""The exported modules' C kernel loader runs only code it built or checked.

An exported NumPy or torch module compiles its C kernel into a cache folder
under a name anyone can compute, then loads it.  Each case plants a library
whose constructor writes a marker file (and whose entry points leave the
output unwritten, so a loaded plant also gives wrong numbers) where the
loader might look: under the computed name, through a link, in a folder
others can write or another user owns, swapped in after a good build, under
a relative cache root.  Every case runs the exported module in a fresh
interpreter and asserts: the constructor never ran, the numbers are those of
the pure NumPy path, and ``native_status()`` says what happened.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from symproof.kernels import export_kernel

PLANTED_C = r"""
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void planted(void) {
    const char *marker = getenv("PLANTED_MARKER");
    FILE *f = marker ? fopen(marker, "a") : NULL;
    if (f) { fputs("the planted constructor ran\n", f); fclose(f); }
}

#define ENTRY(name) int name(void *x, void *out, void *rows, size_t count, void *pairs, int64_t first, \
                             size_t n_pairs) { return 0; }
ENTRY(rope_f32_apply_with_table) ENTRY(rope_f32_backward_with_table)
ENTRY(rope_f64_apply_with_table) ENTRY(rope_f64_backward_with_table)
"""

# imports the exported module, runs the C path on a large half-pairing array, then the pure path
DRIVER = r"""
import importlib.util, json, sys
import numpy
spec = importlib.util.spec_from_file_location("exported_rope", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.NATIVE_ELEMENTS = 1
x = numpy.random.default_rng(5).standard_normal((2, 4, 33, 16))
got = module.apply(x, numpy.arange(33))
status = module.native_status()
loaded = module._native.get("functions") is not None
module.NATIVE = False
want = module.apply(x, numpy.arange(33))
print(json.dumps({"status": status, "loaded": loaded, "same": bool((got == want).all())}))
"""

TIMEOUT = 180


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The exported NumPy module, the planted library, and the name the loader gives the cached library."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler (gcc or cc): without one the loader never loads anything")
    root = tmp_path_factory.mktemp("native")
    (module,) = export_kernel("rope", "numpy", root / "export", verify=False, head_dim=16, pairing="half")
    (root / "drive.py").write_text(DRIVER)
    (root / "planted.c").write_text(PLANTED_C)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(root / "planted.so"), str(root / "planted.c")], check=True,
                   capture_output=True, timeout=TIMEOUT)
    first = _drive(root, module, {"SYMPROOF_CACHE": str(root / "reference-cache")})
    assert first["loaded"] and first["same"], first
    name = Path(re.search(r"C kernel: (\S+) ", first["status"]).group(1)).name
    return {"root": root, "module": module, "planted": root / "planted.so", "name": name}


def _clean_env(extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SYMPROOF_CACHE", "XDG_CACHE_HOME", "HOME", "SYMPROOF_NATIVE", "CC")}
    env.update(extra)
    return env


def _drive(root, module, env, cwd=None, umask=None):
    command = [sys.executable, str(root / "drive.py"), str(module)]
    if umask is not None:
        command = ["sh", "-c", f"umask {umask:03o} && exec \"$@\"", "sh", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd or root,
                          env=_clean_env({"PYTHONPATH": os.getcwd(), **env}))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _plant(folder, exported, *, record=True, link=False):
    """The planted library under the computed name in ``folder`` (and, with ``record``, its true sha256)."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / exported["name"]
    if link:
        target.symlink_to(exported["planted"])
    else:
        shutil.copyfile(exported["planted"], target)
    if record:
        digest = hashlib.sha256(exported["planted"].read_bytes()).hexdigest()
        (folder / (exported["name"] + ".sha256")).write_text(digest + "\n")
    return target


def _run_case(exported, tmp_path, env, *, cwd=None, umask=None, loaded, words):
    marker = tmp_path / "constructor-ran"
    result = _drive(exported["root"], exported["module"], {"PLANTED_MARKER": str(marker), **env}, cwd=cwd,
                    umask=umask)
    assert not marker.exists(), f"the planted constructor ran: {result}"
    assert result["same"], result  # the numbers are the pure path's, to the bit
    assert result["loaded"] == loaded, result
    for word in words:
        assert word in result["status"], (word, result["status"])
    return result


def _private(path):
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


# -- planted libraries in the cache folder ----------------------------------------------------------


def test_a_library_planted_under_the_computed_name_without_a_record_is_rebuilt(exported, tmp_path):
    cache = _private(tmp_path / "cache")
    _plant(cache, exported, record=False)
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True,
              words=["built with", "has no recorded sha256"])
    # the rebuilt library replaced the plant and is used from the cache afterwards
    assert (cache / exported["name"]).read_bytes() != exported["planted"].read_bytes()
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True,
              words=["checked against its recorded sha256"])


def test_a_library_planted_with_a_wrong_record_is_rebuilt(exported, tmp_path):
    cache = _private(tmp_path / "cache")
    _plant(cache, exported, record=False)
    (cache / (exported["name"] + ".sha256")).write_text("0" * 64 + "\n")
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True,
              words=["does not match the sha256 recorded"])


def test_a_library_swapped_in_after_a_good_build_is_not_loaded(exported, tmp_path):
    cache = _private(tmp_path / "cache")
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True, words=["built with"])
    library = cache / exported["name"]
    good = library.read_bytes()
    library.chmod(0o600)
    library.write_bytes(exported["planted"].read_bytes())
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True,
              words=["does not match the sha256 recorded", "built with"])
    assert library.read_bytes() == good  # rebuilt: the same bytes as the first build (a reproducible build)


@pytest.mark.parametrize("linked", ["library", "record", "both"])
def test_a_link_in_the_cache_is_not_followed(exported, tmp_path, linked):
    cache = _private(tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    _plant(elsewhere, exported)
    for suffix, kind in (("", "library"), (".sha256", "record")):
        if linked in (kind, "both"):
            (cache / (exported["name"] + suffix)).symlink_to(elsewhere / (exported["name"] + suffix))
        else:
            shutil.copyfile(elsewhere / (exported["name"] + suffix), cache / (exported["name"] + suffix))
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=True,
              words=["is a symbolic link (not followed)", "built with"])


def test_a_cache_folder_that_is_a_link_is_not_used(exported, tmp_path):
    planted = tmp_path / "planted-folder"
    _plant(_private(planted), exported)
    (tmp_path / "cache").symlink_to(planted)
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(tmp_path / "cache")}, loaded=False,
              words=["pure numpy", "is a symbolic link (not followed)"])


# -- folders others can write or own ----------------------------------------------------------------


def _shared_group_or_skip(path):
    """Give ``path`` a group others can be in (as root), or skip: a user's own group is private."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a folder a group shared with other users")
    os.chown(path, -1, 100)  # users


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o730, 0o702], ids=lambda mode: f"{mode:o}")
def test_a_cache_folder_others_can_write_is_not_used(exported, tmp_path, mode):
    cache = tmp_path / "cache"
    _plant(cache, exported)
    cache.chmod(mode)
    if mode & 0o020:
        _shared_group_or_skip(cache)
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=False,
              words=["pure numpy", "is writable by others", f"mode {mode:o}"])


def test_a_folder_above_the_cache_others_can_write_is_refused(exported, tmp_path):
    shared = tmp_path / "shared"
    cache = _private(shared / "cache")
    _plant(cache, exported)
    shared.chmod(0o777)  # anyone may rename `cache` and put their own in its place
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=False,
              words=["pure numpy", str(shared), "is writable by others"])


def test_a_folder_writable_by_your_own_private_group_is_accepted(exported, tmp_path):
    """umask 002 systems give each user a group of their own: group-writable is then still private."""
    import grp
    import pwd

    me = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(me.pw_gid)
    others = [u.pw_name for u in pwd.getpwall() if u.pw_gid == me.pw_gid and u.pw_name != me.pw_name]
    if group.gr_name != me.pw_name or set(group.gr_mem) - {me.pw_name} or others:
        pytest.skip(f"your primary group {group.gr_name!r} is not a group of your own")
    above = tmp_path / "above"
    above.mkdir()
    os.chown(above, -1, me.pw_gid)
    above.chmod(0o775)
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(above / "cache")}, loaded=True, words=["built with"])


def test_a_sticky_folder_of_yours_above_the_cache_is_accepted(exported, tmp_path):
    """Like /tmp: others may add entries but never rename or remove yours, so a private folder inside is safe."""
    shared = tmp_path / "sticky"
    shared.mkdir()
    shared.chmod(0o1777)
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(shared / "cache")}, loaded=True, words=["built with"])


def _as_root_or_skip():
    if os.geteuid() != 0:
        pytest.skip("needs root: files owned by another user cannot be made otherwise")


@pytest.mark.parametrize("owned", ["folder", "library"])
def test_a_cache_owned_by_another_user_is_not_trusted(exported, tmp_path, owned):
    _as_root_or_skip()
    cache = _private(tmp_path / "cache")
    planted = [_plant(cache, exported), cache / (exported["name"] + ".sha256")]
    for path in [cache] if owned == "folder" else planted:
        os.chown(path, 65534, 65534)  # nobody
    expected = (["pure numpy", "belongs to another user (uid 65534)"] if owned == "folder"
                else ["belongs to another user (uid 65534)", "built with"])
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": str(cache)}, loaded=owned != "folder", words=expected)


# -- where the cache is -------------------------------------------------------------------------------


@pytest.mark.parametrize("setting, planted_at, words", [
    ({"SYMPROOF_CACHE": "cache"}, "cache", ["SYMPROOF_CACHE='cache' ignored (not an absolute path)"]),
    ({"XDG_CACHE_HOME": "xdg"}, "xdg/symproof", ["XDG_CACHE_HOME='xdg' ignored (not an absolute path)"]),
    ({"HOME": "."}, ".cache/symproof", ["HOME='.' ignored (not an absolute path)"]),
    ({"HOME": "home"}, "home/.cache/symproof", ["HOME='home' ignored (not an absolute path)"]),
    ({"HOME": ""}, ".cache/symproof", ["HOME is empty"]),
    ({}, ".cache/symproof", ["HOME is unset"]),
], ids=["relative-SYMPROOF_CACHE", "relative-XDG_CACHE_HOME", "HOME-dot", "relative-HOME", "empty-HOME",
        "no-HOME"])
def test_a_relative_or_empty_root_never_puts_the_cache_in_the_current_folder(exported, tmp_path, setting,
                                                                               planted_at, words):
    """A cloned repository may ship ``.cache/symproof/rope-<hash>.so`` with a true record beside it."""
    clone = tmp_path / "clone"
    _plant(_private(clone / planted_at), exported)
    result = _run_case(exported, tmp_path, setting, cwd=clone, loaded=False, words=["pure numpy", *words])
    assert "no cache folder" in result["status"], result


def test_a_relative_root_falls_through_to_the_next_absolute_one(exported, tmp_path):
    clone = tmp_path / "clone"
    _plant(_private(clone / "rel"), exported)
    home = tmp_path / "home"
    _run_case(exported, tmp_path, {"SYMPROOF_CACHE": "rel", "HOME": str(home)}, cwd=clone, loaded=True,
              words=[str(home / ".cache" / "symproof"), "built with", "SYMPROOF_CACHE='rel' ignored"])


def test_under_umask_000_every_folder_made_is_private(exported, tmp_path):
    home = tmp_path / "home"
    _run_case(exported, tmp_path, {"HOME": str(home)}, umask=0o000, loaded=True, words=["built with"])
    for folder in (home, home / ".cache", home / ".cache" / "symproof"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for entry in (home / ".cache" / "symproof").iterdir():
        assert stat.S_IMODE(entry.stat().st_mode) & 0o077 == 0, entry


# -- the compiler and the switch ---------------------------------------------------------------------


def test_a_compiler_in_the_current_folder_is_never_run(exported, tmp_path):
    """A relative or empty PATH entry would find a `cc` shipped in the current folder."""
    clone = tmp_path / "clone"
    clone.mkdir()
    marker = tmp_path / "constructor-ran"
    fake = clone / "cc"
    fake.write_text(f"#!/bin/sh\necho ran > {marker}\nexit 1\n")
    fake.chmod(0o755)
    path = os.pathsep.join([".", "", os.environ.get("PATH", os.defpath)])
    _run_case(exported, tmp_path, {"PATH": path, "SYMPROOF_CACHE": str(_private(tmp_path / "cache"))}, cwd=clone,
              loaded=True, words=["built with /"])
    _run_case(exported, tmp_path, {"CC": "./cc", "SYMPROOF_CACHE": str(tmp_path / "cache")}, cwd=clone,
              loaded=False, words=["pure numpy", "CC='./cc' ignored (not an absolute path)"])


@pytest.mark.parametrize("value, on", [
    ("0", False), ("false", False), ("No", False), ("OFF", False), (" off ", False),
    ("1", True), ("true", True), ("YES", True), ("on", True), ("", True),
])
def test_symproof_native_is_read_as_a_boolean(exported, tmp_path, value, on):
    env = {"SYMPROOF_NATIVE": value, "SYMPROOF_CACHE": str(tmp_path / "cache")}
    _run_case(exported, tmp_path, env, loaded=on, words=["built with"] if on else ["NATIVE is off"])


@pytest.mark.parametrize("value", ["maybe", "2", "nope", "truee"])
def test_any_other_symproof_native_is_one_clear_error(exported, value):
    done = subprocess.run([sys.executable, str(exported["root"] / "drive.py"), str(exported["module"])],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          env=_clean_env({"SYMPROOF_NATIVE": value, "PYTHONPATH": os.getcwd()}))
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last == (f"ValueError: SYMPROOF_NATIVE={value!r}: expected one of 1, true, yes, on, 0, false, no, off"), last


def test_the_torch_module_uses_the_same_checks(exported, tmp_path):
    """The torch export carries the same loader: a swapped library is rebuilt there too."""
    pytest.importorskip("torch", reason="PyTorch is not installed; the torch export cannot be run")
    (module,) = export_kernel("rope", "torch", tmp_path / "torch", verify=False, head_dim=16, pairing="half")
    script = tmp_path / "drive_torch.py"
    script.write_text(
        "import importlib.util, json, sys, torch\n"
        "spec = importlib.util.spec_from_file_location('exported_torch', sys.argv[1])\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "x = torch.randn(2, 4, 33, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(3))\n"
        "got = m.apply(x, torch.arange(33)); status = m.native_status()\n"
        "m.NATIVE = False; want = m.apply(x, torch.arange(33))\n"
        "print(json.dumps({'status': status, 'same': bool(torch.allclose(got, want, rtol=0, atol=1e-12))}))\n")
    cache = _private(tmp_path / "cache")
    marker = tmp_path / "constructor-ran"
    env = _clean_env({"PYTHONPATH": os.getcwd(), "SYMPROOF_CACHE": str(cache), "PLANTED_MARKER": str(marker)})

    def run():
        done = subprocess.run([sys.executable, str(script), str(module)], capture_output=True, text=True,
                              timeout=TIMEOUT, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.splitlines()[-1])

    first = run()
    assert first["same"] and "built with" in first["status"], first
    library = Path(re.search(r"C kernel: (\S+) ", first["status"]).group(1))
    library.write_bytes(exported["planted"].read_bytes())
    second = run()
    assert not marker.exists()
    assert second["same"] and "does not match the sha256 recorded" in second["status"], second
