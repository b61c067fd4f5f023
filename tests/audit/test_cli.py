"""``symproof audit``: verdicts and exit codes through the command, JSON, and one-line errors (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from symproof._face._cli import main

import audit_implementations as cases

ALL_CASES = cases.RIGHT + cases.WRONG


def _run(capsys, *argv):
    code = main(["audit", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("library", cases.LIBRARIES)
@pytest.mark.parametrize("case", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_command_json_verdict_and_exit_code(case, library, write_impl, model_file, capsys):
    name, style, params, model, verdict, whats = case
    path = write_impl(library, style, **cases.library_params(library, params))
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file(model), "--json")
    document = json.loads(out)
    assert document["verdict"] == verdict
    assert code == document["exit_code"] == (0 if verdict != "differs" else 1)
    assert {d["what"] for d in document["differences"]} == whats
    assert document["array_library"] == library
    for diff in document["differences"]:
        assert set(diff) >= {"what", "expected", "found", "detail", "input"}
    if verdict == "equivalent_after_relayout":
        assert "relayout_pairing(w, n_heads" in document["relayout"]["call"]


def test_text_output_names_the_difference_and_the_input(write_impl, model_file, capsys):
    path = write_impl("numpy", "rotate_half", rot=16, den=64)
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("neox"))
    assert code == 1
    assert "verdict: differs" in out
    assert "denominator: expected 16, found 64" in out
    assert "shown by: x = e_1 at position 1" in out


def test_text_output_for_a_relayout(write_impl, model_file, capsys):
    path = write_impl("numpy", "rotate_half")
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("meta"))
    assert code == 0
    assert "equivalent after re-laying the weights" in out
    assert "relayout_pairing(w, n_heads, src='adjacent', dst='half')" in out


def test_head_dim_reads_the_model_at_another_width(write_impl, model_file, capsys):
    path = write_impl("numpy", "rotate_half")
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("hf"), "--head-dim", "128", "--json")
    document = json.loads(out)
    assert code == 0 and document["head_dim"] == 128 and document["verdict"] == "equivalent"


def test_subprocess_end_to_end(write_impl, model_file, tmp_path):
    """The real command in a fresh interpreter: a right torch port and a wrong numpy one."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    right = write_impl("torch", "complex")
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{right}:apply_rope", "--like",
                          str(model_file("hf")), "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["verdict"] == "equivalent_after_relayout"
    wrong = write_impl("numpy", "rotate_half", sign=-1)
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{wrong}:apply_rope", "--like",
                          str(model_file("hf"))], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 1 and "direction" in run.stdout and run.stderr == ""


def test_help_warns_that_the_file_is_run(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "imported, which runs the code in it" in out


# -- invalid input: exit 2, one line, no traceback -------------------------------------------------

BROKEN = {
    "syntax": ("def apply_rope(x, positions)\n    return x\n", "apply_rope", "SyntaxError at line 1"),
    "import-raises": ("raise RuntimeError('no GPU here')\n", "apply_rope", "does not import: RuntimeError: no GPU here"),
    "import-exits": ("import sys\nsys.exit(3)\n", "apply_rope", "does not import: SystemExit"),
    "missing-function": ("def other(x, positions):\n    return x\n", "apply_rope", "defines no 'apply_rope'"),
    "not-callable": ("apply_rope = 3\n", "apply_rope", "is a int, not a function"),
    "function-raises": ("def apply_rope(x, positions):\n    raise ValueError('bad head')\n", "apply_rope",
                        "ValueError: bad head"),
    "wrong-shape": ("def apply_rope(x, positions):\n    return x[..., :-2]\n", "apply_rope", "returned shape"),
    "returns-nan": ("import numpy as np\ndef apply_rope(x, positions):\n    return x * np.nan\n", "apply_rope",
                    "expected finite numbers"),
    "nan-with-warning": ("import numpy as np\ndef apply_rope(x, positions):\n    return x / (x - x)\n", "apply_rope",
                         "expected finite numbers"),
    "returns-none": ("def apply_rope(x, positions):\n    return None\n", "apply_rope", "returned None"),
    "complex-output": ("def apply_rope(x, positions):\n    return x * 1j\n", "apply_rope", "complex values"),
}


@pytest.mark.parametrize("key", sorted(BROKEN))
def test_broken_user_file_exits_2_with_one_line(key, tmp_path, model_file, capsys):
    source, function, message = BROKEN[key]
    path = tmp_path / f"{key.replace('-', '_')}.py"
    path.write_text(source, encoding="utf-8")
    code, out, err = _run(capsys, f"{path}:{function}", "--like", model_file("hf"))
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "__pycache__").exists()  # importing the file leaves nothing next to it


@pytest.mark.parametrize("target, message", [
    ("no_colon.py", "expected FILE.py:NAME"),
    ("file.txt:apply", "neither a .py file nor an importable module"),
    ("file.py:1bad", "a Python name"),
    ("file.py:", "a Python name"),
    ("missing.py:apply_rope", "no such file"),
])
def test_malformed_target_exits_2(target, message, tmp_path, model_file, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, target, "--like", model_file("hf"))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_like_is_refused_before_the_user_code_runs(tmp_path, model_file, capsys):
    marker = tmp_path / "ran"
    path = tmp_path / "user.py"
    path.write_text(f"open({str(marker)!r}, 'w').close()\ndef apply_rope(x, positions):\n    return x\n")
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", tmp_path / "model.yaml")
    assert code == 2 and "--like expects a variant .toml or a model config .json" in err
    assert not marker.exists()
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nkind = "rotary"\nwidth = 5\npairing = "half"\n')
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", bad)
    assert code == 2 and "'width'" in err and not marker.exists()


def test_like_must_be_rotary(tmp_path, capsys):
    from symproof.variants import shipped_variants

    path = tmp_path / "user.py"
    path.write_text("def apply_rope(x, positions):\n    return x\n")
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", shipped_variants()["alibi"])
    assert code == 2 and "compares rotary maps" in err


def test_a_function_that_never_returns_is_stopped(model_file):
    from symproof import InvalidInputError
    from symproof import audit

    def forever(x, positions):
        while True:
            pass

    with pytest.raises(InvalidInputError, match="did not return within 1.8 s .the first call"):
        audit(forever, model_file("hf"), probe_seconds=0.3)


def test_what_the_user_code_prints_does_not_break_the_json(tmp_path, model_file, capsys):
    path = tmp_path / "chatty.py"
    path.write_text(cases.implementation_source("numpy", "rotate_half").replace(
        "def apply_rope(x, positions):\n", "print('loading rope')\n\n\ndef apply_rope(x, positions):\n    print('called')\n"))
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("hf"), "--json")
    assert code == 0 and json.loads(out)["verdict"] == "equivalent"
    assert "loading rope" in err and "called" in err


def test_a_function_that_wants_one_row_of_positions(tmp_path, model_file, capsys):
    """positions of shape (T,) broadcast over the batch are tried when x.shape[:-1] is refused."""
    path = tmp_path / "row.py"
    source = cases.implementation_source("numpy", "rotate_half").replace(
        "    d = x.shape[-1]\n", "    assert np.ndim(positions) == 1, 'positions must be (T,)'\n    d = x.shape[-1]\n", 1)
    path.write_text(source)
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("hf"), "--json")
    document = json.loads(out)
    assert code == 0 and document["positions_passed_as"] == "(T,)"


def test_a_torch_module_instance_is_a_function_too(tmp_path, model_file, capsys):
    pytest.importorskip("torch")
    path = tmp_path / "module.py"
    path.write_text('''
import torch


class Rotary(torch.nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / base ** (torch.arange(0, dim, 2).float() / dim))

    def forward(self, x, positions):
        freqs = positions.float()[..., None] * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * emb.cos().to(x.dtype) + rotated * emb.sin().to(x.dtype)


rope = Rotary(64)
''')
    code, out, err = _run(capsys, f"{path}:rope", "--like", model_file("hf"), "--json")
    document = json.loads(out)
    assert code == 0 and document["verdict"] == "equivalent" and document["array_library"] == "torch"


@pytest.mark.parametrize("value, message", [("7", "even integer"), ("4096", "above 2048")])
def test_head_dim_is_checked_before_anything_runs(value, message, tmp_path, model_file, capsys):
    path = tmp_path / "user.py"
    path.write_text("raise RuntimeError('must not run')\n")
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("hf"), "--head-dim", value)
    assert code == 2 and message in err and "must not run" not in err


def test_a_file_with_a_dataclass_imports_like_a_module(tmp_path, model_file, capsys):
    path = tmp_path / "configured.py"
    source = cases.implementation_source("numpy", "rotate_half").replace(
        "import numpy as np\n", "import numpy as np\nfrom dataclasses import dataclass\n\n\n@dataclass\n"
        "class RopeSettings:\n    base: float = 10000.0\n\n\nSETTINGS = RopeSettings()\n", 1)
    path.write_text(source)
    code, out, err = _run(capsys, f"{path}:apply_rope", "--like", model_file("hf"))
    assert code == 0, err


def test_warnings_of_the_user_code_do_not_add_lines_to_the_error(tmp_path, model_file):
    """In a fresh interpreter (pytest captures warnings itself): exit 2 with exactly one line on stderr."""
    path = tmp_path / "divides.py"
    path.write_text("def apply_rope(x, positions):\n    return x / (x - x)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "symproof", "audit", f"{path}:apply_rope", "--like",
                          str(model_file("hf"))], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "expected finite numbers" in run.stderr
