"""The ``kernel`` property is decided on the files ``--export`` writes, for every allowed function.

Every function of the formula language's own table (:data:`symproof.variants.FUNCTIONS`) is used
in a tiny variant, whose files are written, imported (numpy, torch), compiled (C) and run against
the exact definition by the property itself: a new function without a printer path fails here.
"""

import re

import pytest

from symproof.variants import FUNCTIONS, Variant, check_variant
from symproof.variants._kernel_file import available_targets, probe_positions

#: a formula in m using each allowed function (the bias variant uses the same text with m = j - i)
USES = {
    "sin": "m + sin(m)", "cos": "m + cos(m)", "tan": "m + tan(1 / (m**2 + 2))",
    "exp": "m + exp(-abs(m) / 8)", "log": "m + log(abs(m) + 2) + log(abs(m) + 1, 2)",
    "sqrt": "m + sqrt(abs(m))", "floor": "floor(m / 3)", "ceiling": "ceiling(m / 3)", "abs": "abs(m)",
    "Min": "Min(m, 100, 2 * m)", "Max": "Max(m, -100, 2 * m)", "min": "min(m, 7)", "max": "max(m, -7)",
    "clip": "clip(m, -50, 5000)", "ramp": "m * ramp(m, 2, 9)", "where": "where(m < 8, m, 8 + (m - 8) / 4)",
    "sum": "sum(m / k, k, 1, 3)",
    # mod's sign is the divisor's (C's fmod and % keep the dividend's): the probes' negative positions see it
    "mod": "m - mod(m, 3) + mod(m / 2, 5 / 2)", "sign": "m + sign(m - 1)",
}


def test_every_allowed_function_has_a_use_here():
    assert set(USES) == set(FUNCTIONS)


def _rotary(formula):
    return Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"base": 100}, "position": {"transform": formula},
                              "scale": {"query": "exp(r / 8)", "key": "1 + r"}})


def _bias(formula):
    return Variant.from_dict({"name": "probe", "kind": "bias", "bias": {
        "formula": "-slope * (" + re.sub(r"\bm\b", "(j - i)", formula) + ")", "heads": 2, "slope": "1 / (h + 1)"}})


def _targets(variant):
    targets = [t for t, why in available_targets(variant) if not why]
    missing = [f"{t}: {why}" for t, why in available_targets(variant) if why]
    if missing:
        pytest.skip("; ".join(missing))
    return targets


@pytest.mark.parametrize("kind", ["rotary", "bias"])
@pytest.mark.parametrize("function", sorted(USES))
def test_written_kernel_of_every_function_runs_and_agrees(function, kind):
    variant = (_rotary if kind == "rotary" else _bias)(USES[function])
    targets = _targets(variant)
    (result,) = check_variant(variant, only={"kernel"})
    assert result.status == "proved", result.reason
    checked = [p.data["target"] for p in result.proof.parts if isinstance(p.data, dict) and "target" in p.data]
    assert checked == targets  # numpy, torch (and C for rotary): each file was written, run and compared


def test_probes_reach_two_to_the_twenty_and_negative_positions_unless_restricted():
    variant = _rotary("m")
    assert {2**20, -(2**20), -1} <= set(probe_positions(variant))
    nonneg = Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                                "positions": "nonnegative", "frequencies": {"base": 100}})
    assert 2**20 in probe_positions(nonneg) and min(probe_positions(nonneg)) == 0


# -- a file that does not import or does not run refutes the property ---------------------------------

BROKEN_BODIES = {
    "does not import": "raise ImportError('deliberately broken')\n",
    "does not run": "def apply(x, positions, side='query'):\n    return 1 / 0\n",
    "wrong values": ("import numpy\n\ndef apply(x, positions, side='query'):\n"
                     "    return numpy.asarray(x, dtype=float) * 2\n"),
}


@pytest.mark.parametrize("how", sorted(BROKEN_BODIES))
def test_a_written_file_that_fails_refutes_the_kernel_property(monkeypatch, how):
    from symproof._export import _variant

    monkeypatch.setattr(_variant, "_python_source", lambda variant, target: BROKEN_BODIES[how])
    (result,) = check_variant(_rotary("m + sin(m)"), only={"kernel"})
    assert result.status == "refuted"
    assert "\n" not in result.reason and "numpy" in result.reason
    expected = {"does not import": "ImportError: deliberately broken", "does not run": "ZeroDivisionError",
                "wrong values": "difference"}[how]
    assert expected in result.reason


def test_export_writes_nothing_when_the_kernel_property_is_not_proved(monkeypatch, tmp_path, capsys):
    from symproof._face._cli import main
    from symproof._export import _variant

    monkeypatch.setattr(_variant, "_python_source", lambda variant, target: BROKEN_BODIES["does not run"])
    path = tmp_path / "v.toml"
    path.write_text('name = "v"\nkind = "rotary"\nwidth = 4\npairing = "half"\n[frequencies]\nbase = 100\n'
                    '[position]\ntransform = "m + sin(m)"\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["check", str(path), "--export", str(out), "--target", "numpy"]) == 1
    err = capsys.readouterr().err
    assert "nothing written" in err and "ZeroDivisionError" in err
    assert not list(out.glob("*.py"))


def test_shipped_exports_that_used_to_break_now_run(tmp_path):
    """T5/FIRE/LogN-style formulas: Min/Max printed as functools.reduce (numpy) and torch.max(512, x)."""
    import importlib.util

    import numpy as np

    from symproof.variants._export import export_variant

    fire = _bias("Min(abs(m), 512)")
    for target in ("numpy", "torch"):
        if target == "torch":
            pytest.importorskip("torch")
        (path,) = export_variant(fire, tmp_path / target, target)
        spec = importlib.util.spec_from_file_location(f"fire_{target}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        got = np.asarray(module.bias(3, 600))
        assert got[0, 0, 599] == -512.0 and got[1, 2, 0] == pytest.approx(-0.5 * 2)


# -- constants are numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [("0", 0.0), ("1", 1.0), ("h - h", 0.0), (1.0, 1.0), (0, 0.0),
                                             ("0.5", 0.5)])
def test_a_constant_slope_is_a_number(value, expected):
    # used to be refused: "gives 0 for head h=0; expected a finite real number"
    variant = Variant.from_dict({"name": "nope", "kind": "bias",
                                 "bias": {"formula": "-slope * abs(j - i)", "heads": 2, "slope": value}})
    assert [float(s) for s in variant.frequencies_digits()] == [expected, expected]


def test_all_zero_frequencies_and_nope_are_expressible_and_decided():
    zero = Variant.from_dict({"name": "zero", "kind": "rotary", "width": 4, "pairing": "half",
                              "frequencies": {"rule": "formula", "formula": "0"}})
    results = {r.claim.name: r.status for r in check_variant(zero)}
    # a rotation by angle 0 is the identity: every property of the plain product, no direction, and a
    # constant decay bound B(D) = (n + 1)/2 (no decay)
    assert results == {"norm": "proved", "relative": "proved", "shift": "proved", "direction": "refuted",
                       "plain_at_zero": "proved", "decay": "refuted", "kernel": "proved"}
    nope = Variant.from_dict({"name": "nope", "kind": "bias",
                              "bias": {"formula": "0", "heads": 1, "slope": "0"}})
    results = {r.claim.name: r.status for r in check_variant(nope)}
    assert results["direction"] == "refuted" and results["relative"] == "proved" and results["kernel"] == "proved"


@pytest.mark.parametrize("extra, expected", [
    ([], {"numpy", "c"}),
    (["--export", "OUT", "--target", "torch"], {"numpy", "c", "torch"}),
])
def test_the_command_runs_the_file_it_exports(monkeypatch, tmp_path, extra, expected):
    """symproof check runs the numpy and C files, and the torch file when --export writes it."""
    from symproof._face._cli import main
    from symproof.variants import _check, shipped_variants

    seen = []
    real = _check.check_variant

    def spy(variant, **options):
        seen.append(options.get("kernel_targets"))
        return real(variant, **options)

    monkeypatch.setattr(_check, "check_variant", spy)
    args = [a.replace("OUT", str(tmp_path / "out")) for a in extra]
    assert main(["check", shipped_variants()["xpos"], *args]) in (0, 1)
    assert seen == [expected]
