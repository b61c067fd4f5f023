"""The verdicts-under-load benchmark compares what it should: a changed answer is reported, a timing is not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_variants.py"


@pytest.fixture
def bench():
    spec = importlib.util.spec_from_file_location("bench_variants", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_timings_are_left_out(bench):
    answer = {"seconds": 1.5, "properties": [{"verdict": "proved", "seconds": 0.2, "witness": None}]}
    assert bench.without_timings(answer) == {"properties": [{"verdict": "proved", "witness": None}]}


@pytest.mark.parametrize(("loaded_answer", "expected_exit"), [
    ({"verdict": "proved"}, 0),
    ({"verdict": "unknown"}, 1),  # a verdict that changed under load is the failure the script exists for
])
def test_a_changed_verdict_under_load_fails_the_run(bench, monkeypatch, capsys, tmp_path, loaded_answer, expected_exit):
    calls = []

    def fake_check(path):
        calls.append(path)
        answer = {"verdict": "proved"} if len(calls) <= 2 else loaded_answer
        return 1.0, 0, answer

    monkeypatch.setattr(bench, "check", fake_check)
    file = tmp_path / "scheme.toml"
    assert bench.main([str(file), "--runs", "2", "--load", "1"]) == expected_exit
    out = capsys.readouterr().out
    assert ("1 of 1 files gave identical verdicts" in out) == (expected_exit == 0)
    assert ("scheme.toml: idle" in out) == (expected_exit == 1)
