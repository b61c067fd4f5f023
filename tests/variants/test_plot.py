"""``symproof check FILE --plot OUT.svg`` and ``symproof.check(..., plot=...)``: the decay curve as an SVG.

The values drawn are certified enclosures: each contains the exact value, computed here by SymPy. The
bytes are the same on every run; the file is written atomically and a symbolic link at its path is
replaced, never followed; a check without ``--plot`` imports neither the drawing code nor matplotlib.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sympy as sp

import symproof
from symproof import InvalidInputError
from symproof.variants import Variant, load_variant
from symproof.variants._plot import decay_enclosures, decay_svg

REPO = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def _bias(formula, slope="2**(-h - 1)", heads=2, **extra):
    return Variant.from_dict({"name": "probe", "kind": "bias",
                              "bias": {"formula": formula, "heads": heads, "slope": slope}, **extra})


def _rotary(**extra):
    data = {"name": "probe", "kind": "rotary", "width": 8, "pairing": "half", "frequencies": {"base": 10000}}
    data.update(extra)
    return Variant.from_dict(data)


@pytest.mark.parametrize("variant, exact", [
    # ALiBi: b(D, 0) = -2^-(h+1) D
    (_bias("-slope * abs(j - i)"), lambda h, d: -sp.Rational(1, 2 ** (h + 1)) * d),
    # a table read by the distance, clipped at its last entry
    (_bias("T(Min(abs(j - i), 2))", slope="1", heads=1, params={"T": [0, -0.5, -2]}),
     lambda h, d: [0, sp.Rational(-1, 2), -2][min(d, 2)]),
    # RoPE: B(0) = (n + 1)/2 with n = 4 pairs
    (_rotary(), None),
])
def test_every_point_encloses_the_exact_value(variant, exact):
    _, curves = decay_enclosures(variant, 16)
    if exact is None:
        (_, points), = curves
        assert points[0][1] <= 2.5 <= points[0][2]
        return
    assert len(curves) == variant.heads
    for h, (_, points) in enumerate(curves):
        for d, lo, hi in points:
            assert lo <= exact(h, d) <= hi and hi - lo < 1e-9, (h, d, lo, hi)


def test_a_distance_without_a_certified_value_is_a_gap(monkeypatch):
    # a loaded file is defined at the distances its load searched, but an enclosure can still fail: the
    # curve stops there and starts again after it, never joining across the missing value
    from symproof.variants import _plot

    points = [(0, 0.0, 0.0), (1, -1.0, -1.0), (2, None, None), (3, -2.0, -2.0), (4, -3.0, -3.0)]
    monkeypatch.setattr(_plot, "decay_enclosures", lambda variant, distance: ("b", [("head 0", points)]))
    svg = _plot.decay_svg(_bias("-slope * abs(j - i)", heads=1), 4)
    assert svg.count("<polyline") == 2


def test_the_svg_is_well_formed_labelled_and_the_same_every_time():
    variant = load_variant(REPO / "derivations" / "variants" / "kerple_log.toml")
    first, second = decay_svg(variant), decay_svg(variant)
    assert first == second
    root = ET.fromstring(first)
    assert root.tag == SVG + "svg"
    assert len(root.findall(SVG + "polyline")) == variant.heads
    assert "certified" in first and "e+" not in first and "nan" not in first.lower()


def test_more_heads_than_curves_say_so():
    variant = _bias("-slope * abs(j - i)", heads=20, slope="1/(h + 1)")
    svg = decay_svg(variant, 4)
    assert svg.count("<polyline") == 16 and "first 16 of 20 heads" in svg


def test_the_command_writes_the_file_and_replaces_a_link(tmp_path):
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me\n")
    out = tmp_path / "decay.svg"
    os.symlink(target, out)
    run = subprocess.run([sys.executable, "-m", "symproof", "check", "alibi", "--plot", str(out)],
                         check=False, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert not out.is_symlink() and target.read_text() == "keep me\n"
    assert out.read_text() == decay_svg(load_variant(REPO / "derivations" / "variants" / "alibi.toml"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_the_python_api_draws_the_same_bytes(tmp_path):
    out = tmp_path / "rope.svg"
    result = symproof.check("linear_interpolation", plot=out)
    assert result.exit_code in (0, 1)
    assert out.read_text() == decay_svg(load_variant(REPO / "derivations" / "variants" / "linear_interpolation.toml"))


@pytest.mark.parametrize("args, words", [
    (["t2t_concatenated", "--plot", "x.svg"], "drawn for rotary and bias files"),
    (["alibi", "--plot", "x.png"], "ending in .svg"),
    (["alibi", "kerple_log", "--plot", "x.svg"], "expected one variant file"),
])
def test_an_unusable_plot_is_refused_in_one_line_before_the_check(args, words, tmp_path):
    run = subprocess.run([sys.executable, "-m", "symproof", "check", *args], check=False, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=tmp_path)
    assert run.returncode == 2 and words in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert not (tmp_path / "x.svg").exists() and run.stdout == ""


def test_a_plot_distance_out_of_range_is_refused():
    with pytest.raises(InvalidInputError, match="expected a whole number"):
        decay_svg(_rotary(), 0)


def test_a_check_without_plot_imports_no_drawing_code():
    code = ("import sys, symproof; symproof.check('alibi'); "
            "print('symproof.variants._plot' in sys.modules, 'matplotlib' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.stdout.split() == ["False", "False"], run.stderr
