"""Reports and exports remove only what they wrote: a user's files next to them stay."""

from __future__ import annotations

import json

import pytest

from symproof._ground._io import MANIFEST_NAME, write_owned_files
from symproof.report import render_report
from symproof.report._figures import FIGURES
from symproof.variants import shipped_variants

from .conftest import symproof


def test_check_report_keeps_a_users_own_figure(tmp_path):
    report = tmp_path / "report"
    (report / "figures").mkdir(parents=True)
    own = report / "figures" / "my-plot.pdf"
    own.write_bytes(b"%PDF-1.4 the user's own figure")
    notes = report / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    for _ in range(2):  # the second run has an earlier report to clean up after
        done = symproof("check", shipped_variants()["xpos"], "--report", report)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Traceback" not in done.stderr
    assert own.read_bytes() == b"%PDF-1.4 the user's own figure"
    assert notes.read_text(encoding="utf-8") == "mine"
    assert (report / "index.html").exists()
    manifest = json.loads((report / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert "index.html" in manifest["groups"]["report:variant"]
    assert "figures/my-plot.pdf" not in json.dumps(manifest)


def test_stale_figures_are_removed_but_only_ours(tmp_path):
    """A figure this report wrote and no longer shows goes; the user's, and an edited one of ours, stay."""
    from symproof.claims import load_claims, run_claim

    results = [run_claim(load_claims()[cid]) for cid in ("rope.relative", "sin.shift_matrix")]
    render_report(results, tmp_path, figures="all", pdf=False)
    written = sorted(p.name for p in (tmp_path / "figures").glob("*.pdf"))
    assert len(written) == len(FIGURES) >= 2
    own = tmp_path / "figures" / "mine.pdf"
    own.write_bytes(b"user")
    edited = tmp_path / "figures" / written[0]
    edited.write_bytes(edited.read_bytes() + b"% edited by hand")
    render_report(results, tmp_path, figures=[], pdf=False)
    left = sorted(p.name for p in (tmp_path / "figures").glob("*.pdf"))
    assert left == sorted(["mine.pdf", written[0]])


@pytest.mark.parametrize("entry", ["../outside.txt", "/etc/hostname", "figures/../../outside.txt",
                                   "a/b/c.txt", "figures/.hidden"])
def test_a_forged_manifest_cannot_delete_outside_its_folder(tmp_path, entry):
    folder = tmp_path / "out"
    folder.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep", encoding="utf-8")
    import hashlib

    forged = {"groups": {"g": {entry: hashlib.sha256(b"keep").hexdigest()}}}
    (folder / MANIFEST_NAME).write_text(json.dumps(forged), encoding="utf-8")
    write_owned_files(folder, {"new.txt": b"x"}, group="g", option="--out")
    assert outside.read_text(encoding="utf-8") == "keep"


def test_a_symlink_in_place_of_our_file_is_not_followed_on_removal(tmp_path):
    folder = tmp_path / "out"
    write_owned_files(folder, {"a.txt": b"ours"}, group="g", option="--out")
    target = tmp_path / "target.txt"
    target.write_bytes(b"ours")
    (folder / "a.txt").unlink()
    (folder / "a.txt").symlink_to(target)
    write_owned_files(folder, {"b.txt": b"new"}, group="g", option="--out")
    assert target.read_bytes() == b"ours" and (folder / "a.txt").is_symlink()


def test_two_exports_into_one_folder_keep_each_other(tmp_path):
    for target in ("numpy", "c", "numpy"):
        done = symproof("check", shipped_variants()["xpos"], "--export", tmp_path, "--target", target)
        assert done.returncode == 0, done.stderr[-3000:]
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([MANIFEST_NAME, "symproof_variant_xpos.py", "symproof_variant_xpos.c"])
