"""render_report: what the files show, determinism, atomic writes, and the committed reports/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import symproof.report._report as report_module
from symproof import InvalidInputError
from symproof._ground._io import MANIFEST_NAME
from symproof.report import build_document, render_html, render_latex, render_report
from symproof.report._figures import FIGURES
from symproof.report._html import _prose as prose, compact_html

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "reports"


def _render(results, out, **options):
    options.setdefault("pdf", False)
    return render_report(results, out, **options)


def test_every_claim_has_its_anchor_statement_and_verdict(chapter_results, tmp_path):
    paths = _render(chapter_results, tmp_path)
    html = Path(paths["html"]).read_text("utf-8")
    tex = Path(paths["tex"]).read_text("utf-8")
    claim_ids = frozenset(r.id for r in chapter_results)
    # a step folded into a group of instances shows what sets it apart from the first (``r = 2``)
    groups = [item for c in build_document(chapter_results, title="t").claims for item in c.items
              if item.kind == "group"]
    folded = {step.rule: text for group in groups for step, text in zip(group.steps[1:], group.instances)}
    assert folded
    for result in chapter_results:
        assert f'id="{result.id}"' in html
        assert f'<span class="badge {result.status}">{result.status}</span>' in html
        assert f"\\hypertarget{{claim:{result.id.replace('_', '-')}}}" in tex
        for part in result.proof.parts:
            assert compact_html(str(prose(folded.get(part.rule, part.rule), claim_ids))) in html


def test_a_refuted_step_and_its_witness_are_shown_not_hidden(false_results, tmp_path):
    paths = _render(false_results, tmp_path)
    html = Path(paths["html"]).read_text("utf-8")
    false, crashing = false_results
    assert false.status == "refuted" and crashing.status == "unknown"
    assert '<span class="badge refuted">refuted</span>' in html
    assert '<span class="badge unknown">unknown</span>' in html
    assert "<strong>1</strong> refuted" in html and "<strong>1</strong> unknown" in html
    assert "<strong>0</strong> proved" in html
    assert '<span class="witness">' in html
    assert "derivation bug" in html
    tex = Path(paths["tex"]).read_text("utf-8")
    assert r"\verdict{refuted}" in tex and r"\verdict{unknown}" in tex


def test_the_report_copies_verdicts_and_never_recomputes_them(false_results):
    # flip the engine's verdict: the page must follow the record, not re-prove the claim
    forged = [r for r in false_results if r.status == "refuted"][0]
    original = forged.status
    forged.status = "proved"
    try:
        html = render_html(build_document([forged], title="t"))
    finally:
        forged.status = original
    assert '<span class="badge proved">proved</span>' in html


def test_two_renders_are_byte_identical(chapter_results, tmp_path):
    first = _render(chapter_results, tmp_path / "one", figures="all")
    second = _render(chapter_results, tmp_path / "two", figures="all")
    for key in ("html", "tex"):
        assert Path(first[key]).read_bytes() == Path(second[key]).read_bytes()
    for a, b in zip(first["figures"], second["figures"]):
        assert Path(a).read_bytes() == Path(b).read_bytes()


def test_times_appear_only_when_asked(chapter_results, tmp_path):
    without = Path(_render(chapter_results, tmp_path / "a")["html"]).read_text("utf-8")
    with_times = Path(_render(chapter_results, tmp_path / "b", include_times=True,
                              total_seconds=1.25)["html"]).read_text("utf-8")
    assert "1.25</strong> s" in with_times and "1.25</strong> s" not in without
    assert "reproducible byte for byte" in without


def test_a_failure_while_rendering_leaves_the_previous_reports_intact(chapter_results, tmp_path, monkeypatch):
    _render(chapter_results, tmp_path, figures="all")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def broken(document):
        raise RuntimeError("interrupted while rendering")

    # the figures and the LaTeX are rendered by now; the failure comes before anything is written
    monkeypatch.setattr(report_module, "render_html", broken)
    with pytest.raises(RuntimeError, match="interrupted"):
        _render(chapter_results[:1], tmp_path, figures=[])
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before


def test_figures_of_an_earlier_run_are_removed(chapter_results, tmp_path):
    _render(chapter_results, tmp_path, figures="all")
    assert len(list((tmp_path / "figures").glob("*.pdf"))) == len(FIGURES)
    # the page carries its figures inline: no SVG files beside it
    assert list((tmp_path / "figures").glob("*.svg")) == []
    _render(chapter_results, tmp_path, figures=[])
    assert list((tmp_path / "figures").glob("*.pdf")) == [] and list((tmp_path / "figures").glob("*.svg")) == []


def test_listings_and_named_sections(false_results, tmp_path):
    source = "def f(x):\n    return x < 1 and x > 0  # <b>not markup</b> \u03c9\n"
    paths = _render(false_results, tmp_path, sections={"9.1": "Made-up section"},
                    extra_listings=[("Generated kernel", "python", source)], tex_name="variant")
    html = Path(paths["html"]).read_text("utf-8")
    assert "9.1 Made-up section" in html
    assert "&lt;b&gt;not markup&lt;/b&gt;" in html and "<b>not markup</b>" not in html
    assert Path(paths["tex"]).name == "variant.tex"
    assert "[U+03C9]" in Path(paths["tex"]).read_text("utf-8")


def test_a_listing_with_a_file_name_is_written_beside_the_page_and_linked(false_results, tmp_path):
    source = "int f(void) { return 1; }  /* <b>not markup</b> */\n" * 50
    paths = _render(false_results, tmp_path, extra_listings=[("Kernel", "c", source, "kernel.c")])
    written = tmp_path / "listings" / "kernel.c"
    assert written.read_text("utf-8") == source and paths["listings"] == [str(written)]
    html = Path(paths["html"]).read_text("utf-8")
    assert '<a href="listings/kernel.c">' in html and "50 lines" in html
    assert "not markup" not in html  # linked, not inlined
    assert "not markup" in Path(paths["tex"]).read_text("utf-8")  # the PDF prints it in full


@pytest.mark.parametrize("file_name", ["../kernel.c", "sub/kernel.c", "", ".hidden", "a\\b.c", "k" * 101])
def test_a_listing_file_name_must_be_a_plain_name(false_results, tmp_path, file_name):
    with pytest.raises(InvalidInputError, match="plain file name"):
        _render(false_results, tmp_path, extra_listings=[("Kernel", "c", "x\n", file_name)])
    assert not (tmp_path / "listings").exists()


def test_latex_of_prose_escapes_specials(false_results):
    text = render_latex(build_document(false_results, title="100% of #1 & {more} under_score ~ ^"))
    assert r"100\% of \#1 \& \{more\} under\_score \textasciitilde{} \textasciicircum{}" in text


def _unpinned_printers() -> list:
    """The packages whose installed version is not the one ``.ci/constraints.txt`` pins (the printers
    the committed reports/ were written with): another SymPy or matplotlib writes other bytes."""
    from importlib.metadata import PackageNotFoundError, version

    differ = []
    for line in (REPO / ".ci" / "constraints.txt").read_text("utf-8").splitlines():
        if line.startswith("# test-only"):
            break  # the rest pins what the tests compare against, not what writes reports/
        name, _, pinned = line.split("#")[0].strip().partition("==")
        if not pinned:
            continue
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            differ.append(f"{name} {installed} (pinned {pinned})")
    return differ


def test_committed_reports_are_what_the_command_writes(tmp_path):
    """``reports/`` must be regenerated (``symproof report``) whenever claims or the report code change.

    A CI test: byte for byte only under the versions CI pins; elsewhere ``symproof report`` replaces the
    committed files and says which changed (SHA256SUMS)."""
    if not (COMMITTED / "index.html").exists():
        pytest.skip("reports/ has not been generated in this checkout")
    unpinned = _unpinned_printers()
    if unpinned:
        pytest.skip("not the versions reports/ was written with: " + ", ".join(unpinned))
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    run = subprocess.run([sys.executable, "-m", "symproof", "report", "--out", str(tmp_path)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stderr
    produced = {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".pdf"
                or p.parent.name == "figures"} - {Path(MANIFEST_NAME)}
    committed = {p.relative_to(COMMITTED) for p in COMMITTED.rglob("*") if p.is_file() and p.suffix != ".pdf"
                 or p.parent.name == "figures"} - {Path(".gitignore"), Path(MANIFEST_NAME)}
    assert produced == committed, "reports/ is stale: run `symproof report` and commit reports/"
    for relative in sorted(produced):
        assert (tmp_path / relative).read_bytes() == (COMMITTED / relative).read_bytes(), (
            f"reports/{relative} is stale: run `symproof report` and commit reports/")


# (markup in, compacted markup out): rows that change no layout go, rows an operator's form or stretch
# depends on stay; attributes that change no layout go, and the text stays the same
COMPACTED = [
    ("row around one token", '<math><mrow><mi>x</mi></mrow></math>', "<math><mi>x</mi></math>"),
    ("row alone in math", '<math display="block"><mrow><mo>-</mo><mi>x</mi></mrow></math>',
     '<math display="block"><mo>-</mo><mi>x</mi></math>'),
    ("operands only", "<math><mi>a</mi><mo>=</mo><mrow><mi>b</mi><msub><mi>c</mi><mn>1</mn></msub></mrow></math>",
     "<math><mi>a</mi><mo>=</mo><mi>b</mi><msub><mi>c</mi><mn>1</mn></msub></math>"),
    ("infix between operands", "<math><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mo>=</mo><mi>c</mi></math>",
     "<math><mi>a</mi><mo>+</mo><mi>b</mi><mo>=</mo><mi>c</mi></math>"),
    ("leading minus stays prefix", "<math><mi>a</mi><mo>=</mo><mrow><mo>-</mo><mi>b</mi></mrow></math>",
     "<math><mi>a</mi><mo>=</mo><mrow><mo>-</mo><mi>b</mi></mrow></math>"),
    ("fences keep their row", "<math><mi>f</mi><mrow><mo>(</mo><mi>x</mi><mo>)</mo></mrow><mo>+</mo><mi>y</mi></math>",
     "<math><mi>f</mi><mrow><mo>(</mo><mi>x</mi><mo>)</mo></mrow><mo>+</mo><mi>y</mi></math>"),
    ("stretchy operator inside keeps its row",
     "<math><mi>a</mi><mrow><mi>b</mi><mo>|</mo><mi>c</mi></mrow><mfrac><mi>d</mi><mi>e</mi></mfrac></math>",
     "<math><mi>a</mi><mrow><mi>b</mi><mo>|</mo><mi>c</mi></mrow><mfrac><mi>d</mi><mi>e</mi></mfrac></math>"),
    ("a script's row is its only child", "<math><msub><mi>x</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub></math>",
     "<math><msub><mi>x</mi><mrow><mi>i</mi><mi>j</mi></mrow></msub></math>"),
    ("attributes and text kept", '<math><mrow><mo stretchy="false">(</mo><mtext>a &lt; b</mtext>'
     '<mo stretchy="false">)</mo></mrow></math>',
     '<math><mtext>(a &lt; b)</mtext></math>'),  # neighbouring texts are one run
    # a fence that does not stretch is laid out as its glyph, which text is too (in fewer bytes); a bar is not
    # a fence of every form (its infix form has spacing), so it stays an operator
    ("a non-stretching bar keeps its attribute", '<math><mi>m</mi><mo stretchy="false">|</mo><mi>D</mi>'
     '<mo stretchy="false">|</mo></math>',
     '<math><mi>m</mi><mo stretchy="false">|</mo><mi>D</mi><mo stretchy="false">|</mo></math>'),
    ("an upright word is one identifier (upright by default)",
     '<math><mi mathvariant="normal">s</mi><mi mathvariant="normal">o</mi><mi mathvariant="normal">f</mi>'
     '<mi mathvariant="normal">t</mi><mo stretchy="false">(</mo><mi>x</mi><mo stretchy="false">)</mo></math>',
     '<math><mi>soft</mi><mtext>(</mtext><mi>x</mi><mtext>)</mtext></math>'),
    ("an upright letter alone stays upright", '<math><mi mathvariant="normal">d</mi><mi>x</mi></math>',
     '<math><mi mathvariant="normal">d</mi><mi>x</mi></math>'),
    ("an upright word named by the printer", '<math><mi mathvariant="normal">model_id</mi></math>',
     "<math><mi>model_id</mi></math>"),
    ("fence changes no layout",
     '<math><mi>f</mi><mrow><mo fence="true">(</mo><mi>x</mi><mo fence="false" stretchy="false">\u2016</mo>'
     '<mo fence="true">)</mo></mrow></math>',
     '<math><mi>f</mi><mrow><mo>(</mo><mi>x</mi><mo stretchy="false">\u2016</mo><mo>)</mo></mrow></math>'),
    ("a fence's stretch and form by its place go",
     '<math><mi>D</mi><mrow><mo stretchy="true" form="prefix">(</mo><mi>x</mi><mo stretchy="true" form="postfix">)</mo>'
     '</mrow></math>', "<math><mi>D</mi><mrow><mo>(</mo><mi>x</mi><mo>)</mo></mrow></math>"),
    ("a fence's form against its place stays",
     '<math><mrow><mi>a</mi><mo form="prefix">(</mo><mi>x</mi><mo stretchy="true" form="prefix">)</mo></mrow></math>',
     '<math><mi>a</mi><mo form="prefix">(</mo><mi>x</mi><mo stretchy="true" form="prefix">)</mo></math>'),
    ("quotes in text are characters, in attributes references",
     '<p title="a &#34;b&#34;">say &#34;c&#34; &#39;d&#39; &lt;e&gt;</p>',
     '<p title="a &#34;b&#34;">say "c" \'d\' &lt;e&gt;</p>'),
]


@pytest.mark.parametrize("what, mathml, compacted", COMPACTED, ids=[c[0] for c in COMPACTED])
def test_compacted_mathml_keeps_every_row_that_shapes_layout(what, mathml, compacted):
    assert compact_html(mathml) == compacted


def test_a_fresh_checkouts_reports_are_regenerated_and_named_not_refused(tmp_path):
    """A clone has reports/ and SHA256SUMS but no manifest; its files came from other printer versions:
    `symproof report` replaces them and names each that changed; a file the user edited stays refused."""
    import hashlib

    out = tmp_path / "reports"
    command = [sys.executable, "-m", "symproof", "report", "--only", "rope.relative", "--no-pdf", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assert subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600).returncode == 0
    (out / MANIFEST_NAME).unlink()  # as a clone has it
    # the committed chapter.tex came from another SymPy: other bytes, listed as such
    tex = out / "chapter.tex"
    tex.write_bytes(tex.read_bytes() + b"% written by another printer\n")
    listed = (out / "SHA256SUMS").read_text("ascii").splitlines()
    listed = [f"{hashlib.sha256(tex.read_bytes()).hexdigest()}  chapter.tex" if line.endswith("  chapter.tex")
              else line for line in listed]
    (out / "SHA256SUMS").write_text("\n".join(listed) + "\n", encoding="ascii")
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert f"{out / 'chapter.tex'}: regenerated, differs from the committed version" in run.stdout
    assert "index.html: regenerated" not in run.stdout  # unchanged files are not named
    assert b"another printer" not in tex.read_bytes()
    # the user's own edit of an output is still theirs
    (out / MANIFEST_NAME).unlink()
    tex.write_bytes(tex.read_bytes() + b"% my note\n")
    run = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2 and "chapter.tex" in run.stderr and "--force" in run.stderr
    assert tex.read_bytes().endswith(b"% my note\n")
