"""Fixes found by writing the published schemes of ``tests/variants/published/``: one class of problem each.

Each test failed before its fix; the schemes that exposed them are named in the comments.
"""

import pytest
import sympy as sp

from symproof.prover._witness import evaluate_at
from symproof.variants import Variant, check_variant


def _bias(formula, slope="1", heads=1, params=None, positions=None):
    data = {"name": "probe", "kind": "bias", "bias": {"formula": formula, "heads": heads, "slope": slope}}
    if params:
        data["params"] = params
    if positions:
        data["positions"] = positions
    return Variant.from_dict(data)


def _statuses(variant, *keys):
    return {r.claim.name: r.status for r in check_variant(variant, only=set(keys))}


# -- a lookup table as the slope of each head (ALiBi's six published slopes) ----------------------------

def test_a_table_of_slopes_is_read_entry_by_entry():
    # before: lambdify of slopes(h) raised NameError (a traceback) while loading the file
    variant = _bias("-slope * abs(j - i)", slope="slopes(h)", heads=3, params={"slopes": [0.5, 0.25, 0.125]})
    assert [float(v) for v in variant.frequencies_digits()] == [0.5, 0.25, 0.125]
    assert _statuses(variant, "relative", "direction") == {"relative": "proved", "direction": "refuted"}


def test_a_table_of_frequencies_is_read_entry_by_entry():
    variant = Variant.from_dict({"name": "probe", "kind": "rotary", "width": 4, "pairing": "half",
                                 "params": {"T": [1, 0.5]}, "frequencies": {"rule": "formula", "formula": "T(r)"}})
    assert [float(v) for v in variant.frequencies_digits()] == [1.0, 0.5]


# -- a Piecewise is its chosen branch at a witness (T5's causal buckets) --------------------------------

def test_a_branch_not_chosen_need_not_be_defined_at_the_point():
    x = sp.Symbol("x", integer=True)
    expr = sp.Piecewise((x + 1, x < 1), (sp.Min(3, sp.floor(sp.log(x))), True))
    # before: substituting x = 0 into the other branch built Min(3, zoo), which raised
    assert evaluate_at(expr, {x: 0}) == 1
    assert evaluate_at(expr, {x: 8}) == 2
    # a condition undecided at the point leaves the Piecewise to plain substitution
    y = sp.Symbol("y")
    assert evaluate_at(sp.Piecewise((1, y < 1), (2, True)), {x: 0}) == sp.Piecewise((1, y < 1), (2, True))


def test_direction_is_found_through_a_branch_undefined_elsewhere():
    # every offset D != 0 puts one side in the bucket 0 of max(i - j, 0), whose log branch is log(0)
    variant = _bias("T(where(Max(i - j, 0) < 2, Max(i - j, 0), Min(3, floor(log(Max(i - j, 0))))))",
                    params={"T": [0.5, -1, 2, 3]})
    assert _statuses(variant, "direction") == {"direction": "proved"}


# -- witnesses inside positions = "nonnegative" (LogN scaling's query at 2048) --------------------------

def test_far_witness_inside_the_nonnegative_domain():
    # b(i, j) = max(0, i - 100) + (j - i): b(i, i) = max(0, i - 100) differs from b(0, 0) = 0 only
    # once i > 100, and s(0, j - i) is a position only for j >= i, so the witness has i = j large;
    # before: the far search tried (101, 0), outside the domain, and the verdict stayed unknown
    variant = _bias("Max(0, i - 100) + (j - i)", positions="nonnegative")
    (result,) = check_variant(variant, only={"relative"})
    assert result.status == "refuted", result.reason
    (witness,) = [p.witness for p in result.proof.parts if p.witness]
    values = {str(k): v for k, v in witness.items()}
    assert values["j"] >= values["i"] > 100


# -- an exported numpy kernel warns about no branch a where() does not choose (T5's buckets) ------------

def test_numpy_kernel_of_a_where_runs_without_warnings(tmp_path):
    import importlib.util
    import warnings

    import numpy as np

    from symproof.variants._export import export_variant

    # numpy evaluates both branches: log(max(i - j, 0) / 2) is log(0) on the diagonal, where it is not chosen
    variant = _bias("T(where(Max(i - j, 0) < 2, Max(i - j, 0), Min(3, floor(log(Max(i - j, 0) / 2)) + 2)))",
                    params={"T": [0.5, -1, 2, 3]})
    (path,) = export_variant(variant, tmp_path, "numpy")
    spec = importlib.util.spec_from_file_location("probe_where", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = module.bias(3, 3)
    assert np.array_equal(got[0], [[0.5, 0.5, 0.5], [-1, 0.5, 0.5], [2, -1, 0.5]])


# -- the interval evaluator's cost (LogN's shift ran past the default 5-s budget) -----------------------

def _interval_conversions(expr, point):
    from mpmath import iv

    from symproof.checker import _interval

    calls = [0]
    convert = type(iv).convert

    def counting(ctx, value, *args, **kwargs):
        calls[0] += 1
        return convert(ctx, value, *args, **kwargs)

    type(iv).convert = counting
    try:
        assert _interval.value_at(expr, point) is not None
    finally:
        type(iv).convert = convert
    return calls[0]


def test_interval_evaluation_does_not_rebuild_constant_intervals():
    # before: 308 conversions for this sum (0 and 1 rebuilt as intervals at every product, sum and
    # endpoint test); a witness search evaluates thousands of such points
    x, y = sp.symbols("x y", real=True)
    expr = sum(sp.cos(k * x) * sp.sin(y + k) * sp.sqrt(2) * sp.log(3) for k in range(1, 9))
    assert _interval_conversions(expr, {x: sp.Integer(1), y: sp.Rational(1, 2)}) < 120


def test_endpoint_tests_answer_as_the_interval_comparisons_do():
    import itertools

    from mpmath import iv, mpf

    from symproof.checker import _interval

    ends = [-mpf("inf"), -3, -1e-300, 0, 1e-300, 2, mpf("inf")]
    intervals = [iv.mpf([a, b]) for a, b in itertools.product(ends, ends) if a <= b] + [iv.mpf(mpf("nan"))]
    for x in intervals:
        assert _interval._positive(x) == bool(x.a > 0), x
        assert _interval._negative(x) == bool(x.b < 0), x
        assert _interval._is_real((x, x)) == bool(x.a == 0 and x.b == 0), x
