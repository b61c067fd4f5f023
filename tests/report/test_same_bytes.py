"""The same bytes on every CPU: no floating-point residue computed at run time reaches an output.

Two float computations of one value differ in their last bits from one BLAS or sin/cos kernel to
another (an AVX-512 machine gets other kernels).  So the reports and ``verify --json`` show what was
proved about a residue (a power-of-two allowance), never the residue.  These tests move every
numerical result the claims compute by a few units in the last place and demand the very same bytes,
and scan the chapter's outputs for a float that no source file states.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

import numpy as np

import symproof.kernels as kernels_module
import symproof.report._figures as figures_module
from symproof.claims import load_claims, run_claims, select_claims
from symproof.report import render_report

REPO = Path(__file__).resolve().parents[2]

#: every claim whose derivation compares floating-point kernel outputs
NUMERIC_CLAIMS = ["scheme.same_shape_not_same_function", "ids.*", "config.reload", "sin.finite_precision"]
#: the kernels those derivations call, by the name they import them under
#: the float evaluations the figures plot (numpy's sin/cos: their last bits depend on the CPU)
NUDGED_FIGURE_DATA = ["_sinusoidal_table", "_rope_score", "_rope_score_gradient"]
NUDGED_KERNELS = ["rope_attention", "absolute_attention", "decode_with_cache", "rope_apply", "apply_position_table"]


def _nudge_array(values, ulps_at_most: int):
    """``values`` moved up by 1..ulps_at_most units in the last place, by an amount fixed by their bytes:
    equal inputs stay equal (a bit-for-bit reload must stay bit for bit), any other residue moves."""
    array = np.asarray(values)
    if array.dtype.kind != "f":
        return values
    steps = 1 + zlib.crc32(array.tobytes()) % ulps_at_most
    for _ in range(steps):
        array = np.nextafter(array, np.inf).astype(array.dtype)
    return array


def _nudged(func, ulps_at_most):
    def wrapper(*args, **kwargs):
        return _nudge_array(func(*args, **kwargs), ulps_at_most)
    return wrapper


def _nudged_precision_table(func, ulps_at_most):
    def wrapper(*args, **kwargs):
        rows = func(*args, **kwargs)
        for row in rows:
            row["phase_error"] = [float(_nudge_array(np.float64(e), ulps_at_most)) if np.isfinite(e) and e > 0 else e
                                  for e in row["phase_error"]]
        return rows
    return wrapper


def _perturb(monkeypatch, ulps_at_most: int) -> None:
    section = __import__("symproof._derivations.sec7_5_consistency", fromlist=["_"])
    for name in NUDGED_KERNELS:
        monkeypatch.setattr(section, name, _nudged(getattr(section, name), ulps_at_most))
    monkeypatch.setattr(kernels_module, "finite_precision_table",
                        _nudged_precision_table(kernels_module.finite_precision_table, ulps_at_most))
    for name in NUDGED_FIGURE_DATA:
        monkeypatch.setattr(figures_module, name, _nudged(getattr(figures_module, name), ulps_at_most))


def _run():
    return run_claims(select_claims(load_claims(), NUMERIC_CLAIMS))


def _verify_json(results) -> str:
    """``symproof verify --json`` of ``results``, wall times left out (they are not residues and are
    never the same twice)."""
    return json.dumps([{k: v for k, v in r.as_dict().items() if k != "seconds"} for r in results], indent=2)


def _files(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _residues(results) -> list:
    return [p.data.get("max_abs_difference") for r in results for p in r.proof.parts
            if isinstance(p.data, dict) and "max_abs_difference" in p.data]


def test_residues_moved_by_a_few_ulps_leave_every_output_byte_identical(tmp_path, monkeypatch):
    plain = _run()
    render_report(plain, tmp_path / "plain", figures="all", pdf=False)
    with monkeypatch.context() as patch:
        _perturb(patch, ulps_at_most=4)
        nudged = _run()
        render_report(nudged, tmp_path / "nudged", figures="all", pdf=False)
    assert all(r.status == "proved" for r in plain + nudged), [(r.id, r.reason) for r in plain + nudged]
    # the perturbation reached the residues (else this test could not fail) ...
    assert _residues(plain) != _residues(nudged)
    # ... and no output shows it
    assert _verify_json(nudged) == _verify_json(plain)
    before, after = _files(tmp_path / "plain"), _files(tmp_path / "nudged")
    assert sorted(after) == sorted(before)
    changed = [name for name in before if before[name] != after[name]]
    assert not changed, f"these outputs show a residue: {changed}"


def test_a_residue_past_its_allowance_still_fails_the_claim(monkeypatch):
    """The printed allowance is a check, not a label: a residue of 2^-30 is far past it."""
    section = __import__("symproof._derivations.sec7_5_consistency", fromlist=["_"])
    decode = section.decode_with_cache
    monkeypatch.setattr(section, "decode_with_cache", lambda *a, **k: decode(*a, **k) + 2.0 ** -30)
    (result,) = run_claims(select_claims(load_claims(), ["ids.kv_cache"]))
    assert result.status == "refuted", result.status
    assert "exceeds the allowance 2\u207b\u2074\u00b9" in result.reason  # 2⁻⁴¹


# --------------------------------------------------------------------------- no float the sources do not state

#: a decimal fraction or a number in exponent notation (TeX writes ``1e-{}12``: the braces are dropped first)
FLOAT_TOKEN = re.compile(r"(?<![\w.])-?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)(?![\w.])")
#: a float literal in a source file (``1.41335252...`` included: a statement may trail off)
SOURCE_TOKEN = re.compile(r"\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+")
#: a certified decimal of an exact value, as the reports print it (``≈ 0.7311``), or a witness's difference to the
#: digits no residue within the allowance can move (``difference = 3.05``)
#: (a minus sign is typeset: ``−`` on the page, ``\ensuremath{-}`` in TeX, ``|exact − (−0.41)| = 3.3 × 10⁻⁷`` around a
#: difference, whose mantissa TeX writes in ``\ensuremath{...}``: the prefix is looked for in the 80 characters
#: before a token)
_MINUS = r"(?:[-−]|\\ensuremath\{-\})"
_BAR = r"(?:\||\\textbar)"
CERTIFIED = re.compile(rf"(?:(?:&asymp;|≈|\\approx)\s*\$?\s*{_MINUS}?|{_BAR}exact {_MINUS} \(?{_MINUS}?[\d.]+\)?{_BAR} = "
                       r"(?:\\ensuremath\{)?|difference(?: =|:) (?:\\texttt\{|<code>)?)$")


def _source_tokens() -> set:
    """Every float literal the code, the derivations and the report templates state."""
    tokens = set()
    for folder in (REPO / "symproof", REPO / "derivations"):
        for path in folder.rglob("*"):
            if path.suffix in (".py", ".j2", ".toml", ".json") and path.is_file():
                tokens.update(SOURCE_TOKEN.findall(path.read_text("utf-8", errors="replace")))
    return tokens


def unstated_floats(text: str, stated: set) -> list:
    """Float tokens in ``text`` that are neither a literal of the sources nor a certified decimal."""
    text = text.replace("{}", "")
    found = []
    for match in FLOAT_TOKEN.finditer(text):
        token = match.group(0)
        if token in stated or token.lstrip("-") in stated or CERTIFIED.search(text[max(0, match.start() - 80):match.start()]):
            continue
        found.append((token, text[max(0, match.start() - 60):match.end() + 20]))
    return found


def _without_listings(text: str) -> str:
    """The generated kernels' sources hold float64 literals of exact constants (rounded once, from
    30 digits): code, not a measurement; they are left out of the scan.  So are the figures' drawing
    coordinates (the page's inline ``<svg>``, the LaTeX ``picture`` that places the PDF's labels): positions
    on a canvas, rounded to a hundredth of a point, not numbers the text states; and the matrices of
    certified decimals a counterexample box shows after its ``≈``."""
    text = re.sub(r"<svg\b.*?</svg>", "", text, flags=re.S)
    # a matrix of certified decimals (a counterexample's sides whose exact entries are too long): every entry
    # is certified like a single "≈ 0.7311", the mark standing before the matrix
    text = re.sub(r"&asymp; <math><mo>\[</mo><mtable>.*?</mtable><mo>\]</mo></math>", "", text, flags=re.S)
    text = re.sub(r"\\approx \\begin\{bmatrix\}.*?\\end\{bmatrix\}", "", text, flags=re.S)
    # a certified enclosure of a printed number's exact value ("exact in [0.84147098, 0.84147099]", or in a
    # worked calculation "(q_i)_0 ∈ [−1.14263967, −1.14263966]"): its ends are the engine's rational bounds,
    # whose decimals decide the printed digits (Proof.digits), not a float's
    text = re.sub(r"exact (?:in \[[^\]]*\]|= [-−\d.{}\\a-z]+)", "", text)
    text = re.sub(r"\\in \[[^\]]*\]", "", text)
    # ... and the digits that enclosure rounds to, beside digits the chapter cut ("cut after 6 decimals, 1.413352
    # (rounded, 1.413353)"): both ends of the enclosure round to them
    text = re.sub(r"\(rounded, (?:\$[^$]*\$|<math>.*?</math>)\)", "", text, flags=re.S)
    text = re.sub(r"<mo>(?:\u2208|&#8712;)</mo>(?:(?!</math>).)*?\]", "", text, flags=re.S)
    text = re.sub(r"\\begin\{picture\}.*?\\end\{picture\}", "", text, flags=re.S)
    text = re.sub(r"\\begin\{Verbatim\}.*?\\end\{Verbatim\}", "", text, flags=re.S)
    text = re.sub(r"\\begin\{lstlisting\}.*?\\end\{lstlisting\}", "", text, flags=re.S)
    return re.sub(r"<pre[^>]*>.*?</pre>", "", text, flags=re.S)


def test_the_scan_finds_a_raw_residue():
    stated = _source_tokens()
    assert unstated_floats("max |difference| = 8.88e-{}16 (tolerance 1e-12)", stated)[0][0] == "8.88e-16"
    short = next(f"{k / 100:.2f}" for k in range(101, 1000) if f"{k / 100:.2f}" not in stated)  # as :.3g prints
    assert unstated_floats(f"max |difference| = {short} at row 2", stated)[0][0] == short
    assert not unstated_floats(r"right $\frac{e}{1 + e}$ $\approx 0.7311$; at 0.5", stated | {"0.5"})


def test_no_output_shows_a_float_that_no_source_states(full_chapter_results, tmp_path):
    from symproof.kernels import kernel_listings

    written = render_report(full_chapter_results, tmp_path, figures="all", pdf=False,
                            extra_listings=kernel_listings(full_chapter_results))
    stated = _source_tokens()
    outputs = {"chapter.tex": Path(written["tex"]).read_text("utf-8"),
               "index.html": Path(written["html"]).read_text("utf-8"),
               "verify --json": _verify_json(full_chapter_results)}
    found = {name: unstated_floats(_without_listings(text), stated) for name, text in outputs.items()}
    assert not any(found.values()), found
