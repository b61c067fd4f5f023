"""``symproof audit --report DIR``: the comparison table, the plot, atomic writes that touch nothing else."""

from __future__ import annotations

import os
import shutil

import pytest

from symproof import audit
from symproof._audit import load_function
from symproof.report._audit import FILES, PDF_NAME, angle_error_figure, comparison_rows
from symproof._face._cli import main
from symproof._ground._io import MANIFEST_NAME


@pytest.fixture
def denominator_bug(write_impl, model_file):
    path = write_impl("numpy", "rotate_half", rot=16, den=64)
    return path, model_file("neox")


def test_report_files_are_written_next_to_existing_ones(denominator_bug, tmp_path, capsys):
    path, model = denominator_bug
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    for _ in range(2):  # the second run replaces the older report it wrote
        assert main(["audit", f"{path}:apply_rope", "--like", str(model), "--report", str(out)]) == 1
    assert (out / "notes.txt").read_text() == "mine"  # never touched
    # no temporary file left; the manifest records what the audit wrote; the PDF only where pdflatex exists
    pdf = (PDF_NAME,) if shutil.which("pdflatex") else ()
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES + pdf + ("notes.txt", MANIFEST_NAME))
    page = (out / "audit.html").read_text()
    assert "<td>denominator</td>" in page and "<td>16</td><td>64</td><td>differs</td>" in page
    assert '<img src="audit_angle_error.png"' in page
    assert (out / "audit_angle_error.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "audit_angle_error.pdf").read_bytes()[:5] == b"%PDF-"
    tex = (out / "audit.tex").read_text()
    assert tex.startswith("\\section{Audit of") and "denominator & width D in base" in tex
    assert "report written to" in capsys.readouterr().err


@pytest.mark.parametrize("force", [False, True])
def test_a_users_own_audit_html_is_kept_unless_forced(denominator_bug, tmp_path, capsys, force):
    """Refused before the user's code runs (one line, exit 2), or replaced with --force."""
    path, model = denominator_bug
    out = tmp_path / "out"
    out.mkdir()
    (out / "audit.html").write_text("the user's own page")
    code = main(["audit", f"{path}:apply_rope", "--like", str(model), "--report", str(out)]
                + ["--force"] * force)
    captured = capsys.readouterr()
    if force:
        assert code == 1 and "<td>denominator</td>" in (out / "audit.html").read_text()
    else:
        assert code == 2 and captured.out == ""  # the function was not even probed
        assert (out / "audit.html").read_text() == "the user's own page" and os.listdir(out) == ["audit.html"]
        (line,) = captured.err.splitlines()
        assert "audit.html" in line and "--force" in line


def test_table_has_one_row_per_what(denominator_bug):
    path, model = denominator_bug
    result = audit(load_function(f"{path}:apply_rope"), model)
    rows = comparison_rows(result)
    assert [r[0] for r in rows] == ["pairing", "frequency", "denominator", "direction", "position_offset",
                                    "rotary_dim", "scaling", "precision", "nonlinear", "stateful"]
    verdicts = {r[0]: r[4] for r in rows}
    assert verdicts.pop("denominator") == "differs" and set(verdicts.values()) == {"same"}


def test_plot_axes_are_labelled_with_units(denominator_bug):
    path, model = denominator_bug
    result = audit(load_function(f"{path}:apply_rope"), model)
    (ax,) = angle_error_figure(result).axes
    assert ax.get_xlabel() == "position m (tokens)" and ax.get_ylabel() == "|angle error| (rad)"
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.lines) >= 2  # pairs and the tolerance


def test_text_from_the_inputs_is_escaped(tmp_path, model_file):
    path = tmp_path / "evil.py"
    path.write_text("def apply_rope(x, positions):\n    return x\n")
    variant_text = model_file("hf").read_text().replace('name = "hf-llama"',
                                                        'name = "evil"\ntitle = "<script>alert(1)</script> & \\\\input"')
    like = tmp_path / "evil.toml"
    like.write_text(variant_text)
    out = tmp_path / "report"
    assert main(["audit", f"{path}:apply_rope", "--like", str(like), "--report", str(out)]) == 1
    page = (out / "audit.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "\\input" not in (out / "audit.tex").read_text()


def test_report_path_that_is_a_file_is_refused(denominator_bug, tmp_path, capsys):
    path, model = denominator_bug
    target = tmp_path / "taken"
    target.write_text("x")
    assert main(["audit", f"{path}:apply_rope", "--like", str(model), "--report", str(target)]) == 2
    captured = capsys.readouterr()
    assert "expected a folder" in captured.err and captured.out == "" and target.read_text() == "x"
