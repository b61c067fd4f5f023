"""A checkout's committed outputs (listed by sha256 in SHA256SUMS) are replaced by a new run; nothing else is."""

from __future__ import annotations

import hashlib
import os

import pytest

from symproof import InvalidInputError
from symproof._ground._io import MANIFEST_NAME, write_owned_files

GROUP = "report:chapter"
LIST = "SHA256SUMS"
FIRST = {"chapter.tex": b"tex from the pinned versions\n", "figures/plot.svg": b"<svg/>\n"}


def _write(out, files, **options):
    regenerated: list = []
    write_owned_files(out, files, group=GROUP, option="--out", published=LIST, regenerated=regenerated, **options)
    return regenerated


@pytest.fixture
def checkout(tmp_path):
    """A folder as a fresh clone has it: the committed outputs and their list, no manifest."""
    out = tmp_path / "reports"
    _write(out, FIRST)
    os.remove(out / MANIFEST_NAME)
    return out


def test_the_list_is_sha256sum_format_of_every_file(checkout):
    lines = (checkout / LIST).read_text("ascii").splitlines()
    assert lines == [f"{hashlib.sha256(FIRST[n]).hexdigest()}  {n}" for n in sorted(FIRST)]


def test_a_listed_file_is_replaced_and_named_when_it_changes(checkout):
    newer = {**FIRST, "chapter.tex": b"tex from a newer SymPy\n"}
    assert _write(checkout, newer) == ["chapter.tex"]
    assert (checkout / "chapter.tex").read_bytes() == newer["chapter.tex"]
    assert hashlib.sha256(newer["chapter.tex"]).hexdigest() in (checkout / LIST).read_text()
    assert _write(checkout, newer) == []  # the next run: nothing changed


@pytest.mark.parametrize("case", ["edited by the user", "not listed"])
def test_an_edited_or_unlisted_file_stays_protected(checkout, case):
    if case == "edited by the user":
        (checkout / "chapter.tex").write_bytes(b"my own notes\n")
        victim = checkout / "chapter.tex"
    else:
        victim = checkout / "figures" / "mine.svg"
        victim.write_bytes(b"my figure\n")
    before = victim.read_bytes()
    with pytest.raises(InvalidInputError) as caught:
        _write(checkout, {**FIRST, "chapter.tex": b"new\n", "figures/mine.svg": b"new\n"})
    assert victim.name in str(caught.value) and "\n" not in str(caught.value)
    assert victim.read_bytes() == before


@pytest.mark.parametrize("content", [b"my checksums, not symproof's\n", b"", b"\xff\xfe",
                                     b"0" * 64 + b"  ../../etc/passwd\n", b"0" * 64 + b"  SHA256SUMS\n"])
def test_a_list_not_in_the_format_vouches_for_nothing_and_is_protected(checkout, content):
    (checkout / LIST).write_bytes(content)
    with pytest.raises(InvalidInputError):
        _write(checkout, {**FIRST, "chapter.tex": b"new\n"})
    assert (checkout / LIST).read_bytes() == content
    assert (checkout / "chapter.tex").read_bytes() == FIRST["chapter.tex"]


def test_without_a_list_nothing_changes_for_other_writers(tmp_path):
    out = tmp_path / "out"
    write_owned_files(out, {"kernel.py": b"k"}, group="export:x", option="--out")
    assert not (out / LIST).exists()
