"""A config read through transformers is identified once per process: the identification runs the model
(seconds), and one command reads the same config several times (the audit: before the code runs, then
once per regime).  A refusal is kept the same way, and re-raised with the same line."""

from __future__ import annotations

import pytest

from symproof import VariantFileError
from symproof.models import _config


@pytest.fixture
def reads(monkeypatch):
    calls = []

    def fake(data, source, model_type):
        calls.append(model_type)
        if model_type == "refused_type":
            raise VariantFileError(f"{source}: key 'model_type': 'refused_type' did not fit")
        return ("model of", model_type, len(calls))

    monkeypatch.setattr(_config, "_read_through_transformers", fake)
    monkeypatch.setattr(_config, "_IDENTIFIED", {})
    return calls


def test_the_same_config_is_identified_once(reads):
    first = _config.read_through_transformers({"model_type": "new_type", "x": 1}, "a.json", "new_type")
    again = _config.read_through_transformers({"x": 1, "model_type": "new_type"}, "a.json", "new_type")
    assert first is again and reads == ["new_type"]


@pytest.mark.parametrize("other", [
    ({"model_type": "new_type", "x": 2}, "a.json"),   # another value
    ({"model_type": "new_type", "x": 1}, "b.json"),   # another file: its name is in every message
])
def test_another_config_is_identified_again(reads, other):
    _config.read_through_transformers({"model_type": "new_type", "x": 1}, "a.json", "new_type")
    _config.read_through_transformers(*other, "new_type")
    assert len(reads) == 2


def test_a_refusal_is_kept_and_repeated_word_for_word(reads):
    messages = []
    for _ in range(2):
        with pytest.raises(VariantFileError) as caught:
            _config.read_through_transformers({"model_type": "refused_type"}, "r.json", "refused_type")
        messages.append(str(caught.value))
    assert reads == ["refused_type"] and messages[0] == messages[1] and "did not fit" in messages[0]


def test_a_config_that_is_not_json_is_read_every_time(reads):
    data = {"model_type": "new_type", "x": float("nan")}  # a dict given in Python: no canonical text
    _config.read_through_transformers(data, "<config>", "new_type")
    _config.read_through_transformers(data, "<config>", "new_type")
    assert len(reads) == 2


def test_the_memory_is_bounded(reads):
    for k in range(40):
        _config.read_through_transformers({"model_type": "new_type", "k": k}, "a.json", "new_type")
    assert len(_config._IDENTIFIED) <= 16
