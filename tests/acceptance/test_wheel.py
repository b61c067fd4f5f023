"""The wheel: the shipped examples inside the symproof namespace, no top-level ``derivations``, usable by name."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return {**env, **extra}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(REPO), "-w", str(out)],
                           capture_output=True, text=True, timeout=900, env=_env())
    assert build.returncode == 0, build.stderr[-3000:]
    (path,) = out.glob("symproof-*.whl")
    return path


@pytest.mark.slow
def test_the_wheel_ships_the_examples_inside_symproof_and_no_top_level_derivations(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names}
    assert top == {"symproof", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}, top
    for relative in ("variants/xpos.toml", "configs/llama-3.1-8b.json", "layers/gemma3_layers.toml", "sec7_3_rope.py",
                     "__init__.py"):
        assert f"symproof/_derivations/{relative}" in names
    shipped = {n.split("/")[-1] for n in names if n.startswith("symproof/_derivations/variants/")}
    # the variant files and the tables they read (learned_absolute.npy)
    assert shipped == {p.name for p in (REPO / "derivations" / "variants").iterdir() if p.suffix in (".toml", ".npy")}
    assert "learned_absolute.npy" in shipped
    # the package's __init__ is the folder's own, not the checkout's stand-in
    init = zipfile.ZipFile(wheel).read("symproof/_derivations/__init__.py")
    assert init == (REPO / "derivations" / "__init__.py").read_bytes()


@pytest.mark.slow
def test_installed_from_the_wheel_examples_work_by_name_in_an_unrelated_folder(wheel, tmp_path):
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                              str(wheel)], capture_output=True, text=True, timeout=600, env=_env())
    assert install.returncode == 0, install.stderr[-3000:]
    assert not (site / "derivations").exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _env(PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import symproof._derivations as d; print(d.__file__)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert Path(where.stdout.strip()).is_relative_to(site), where.stdout + where.stderr
    top_level = subprocess.run([sys.executable, "-c", "import derivations"], cwd=elsewhere, env=env,
                               capture_output=True, text=True, timeout=300)
    assert "ModuleNotFoundError" in top_level.stderr
    for name, first_words in (("xpos", "xPos"), ("llama-3.1-8b", "llama config, rope_type llama3"),
                              ("learned_absolute", "Learned absolute positions")):
        done = subprocess.run([str(site / "bin" / "symproof"), "check", name], cwd=elsewhere, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode in (0, 1), done.stderr[-2000:]
        assert done.stdout.startswith(first_words) and str(site) in done.stdout.splitlines()[0]
    listed = subprocess.run([str(site / "bin" / "symproof"), "examples"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and "xpos" in listed.stdout.split()


def test_an_installed_symproof_sees_the_examples_from_any_folder(tmp_path):
    """An editable install (the README's second command) or a wheel: the examples are found outside the clone."""
    done = subprocess.run([sys.executable, "-c", "from symproof._ground._examples import shipped_examples as s; "
                           "import symproof.claims as c; print(len(s()), len(c.load_claims()))"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    if "No module named 'symproof'" in done.stderr:
        pytest.skip("symproof is not installed in this Python (the tests run from a checkout)")
    assert done.returncode == 0, done.stderr[-2000:]
    examples, claims = map(int, done.stdout.split())
    shipped = [path for folder, pattern in (("variants", "*.toml"), ("configs", "*.json"), ("layers", "*.toml"))
               for path in (REPO / "derivations" / folder).glob(pattern)]
    assert examples == len(shipped) and claims >= 40
