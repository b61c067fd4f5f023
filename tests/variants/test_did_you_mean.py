"""A mistyped key or value in a variant description or a model config gets the closest spelling;
a config key HF does not read is accepted, with a note, only when its value cannot change the map."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symproof import VariantFileError
from symproof.models import load_model
from symproof.variants._spec import loads_variant

REPO = Path(__file__).resolve().parents[2]
XPOS = (REPO / "derivations" / "variants" / "xpos.toml").read_text(encoding="utf-8")
QWEN = json.loads((REPO / "derivations" / "configs" / "qwen2.5-7b.json").read_text(encoding="utf-8"))


def _variant_error(text: str) -> str:
    with pytest.raises(VariantFileError) as caught:
        loads_variant(text, "typo.toml")
    return str(caught.value)


# (what is replaced in xpos.toml, by what, the suggestion or None when nothing is close)
VARIANT_TYPOS = [
    ("width = 8", "widht = 8", "did you mean width?"),
    ('pairing = "adjacent"', 'pairng = "adjacent"', "did you mean pairing?"),
    ('rule = "geometric"', 'rul = "geometric"', "did you mean rule?"),
    ('kind = "rotary"', 'kind = "rotray"', "did you mean rotary?"),
    ('pairing = "adjacent"', 'pairing = "adjacnet"', "did you mean adjacent?"),
    ('rule = "geometric"', 'rule = "geometirc"', "did you mean geometric?"),
    ("width = 8", "zzzzqqq = 8", None),
]


@pytest.mark.parametrize("old, new, suggestion", VARIANT_TYPOS, ids=[new for _, new, _ in VARIANT_TYPOS])
def test_a_mistyped_variant_key_or_value_gets_the_closest_spelling(old, new, suggestion):
    assert old in XPOS
    message = _variant_error(XPOS.replace(old, new, 1))
    assert message.startswith("typo.toml: ") and "\n" not in message
    if suggestion is None:
        assert "did you mean" not in message, message
    else:
        assert suggestion in message, message


def _config_error(data: dict) -> str:
    with pytest.raises(VariantFileError) as caught:
        load_model(data)
    return str(caught.value)


# (a change to Qwen2.5-7B's config, the suggestion)
CONFIG_TYPOS = [
    ({"rope_theat": 1e6}, "did you mean rope_theta?"),
    ({"model_type": "qwen_2"}, "did you mean qwen2?"),
    ({"rope_scaling": {"rope_type": "linaer", "factor": 2.0}}, "did you mean linear?"),
    ({"rope_scaling": {"rope_type": "linear", "factr": 2.0}}, "did you mean factor?"),
]


@pytest.mark.parametrize("change, suggestion", CONFIG_TYPOS, ids=[str(c) for c, _ in CONFIG_TYPOS])
def test_a_mistyped_config_key_or_value_gets_the_closest_spelling(change, suggestion):
    message = _config_error({**QWEN, **change})
    assert suggestion in message, message


def _notes(model) -> list:
    return [note for regime in model.regimes for note in regime.variant.notes]


def test_use_mrope_false_in_a_real_qwen2_5_config_is_accepted_with_a_note_naming_it():
    """Qwen2.5's config.json says "use_mrope": false; HF's Qwen2Config does not read the key."""
    plain = load_model(QWEN)
    noted = load_model({**QWEN, "use_mrope": False})
    assert [r.variant.frequency_at(0) for r in noted.regimes] == [r.variant.frequency_at(0) for r in plain.regimes]
    added = [note for note in _notes(noted) if note not in _notes(plain)]
    assert len(added) == 1 and added[0].startswith("use_mrope = false") and "not read" in added[0]
    assert any(note.startswith("use_mrope") for note in noted.notes)


@pytest.mark.parametrize("value", [True, 1, "false", None])
def test_use_mrope_with_any_other_value_is_still_refused(value):
    """Only the value that leaves the map as HF applies it is accepted: anything else may mean a map HF ignores."""
    message = _config_error({**QWEN, "use_mrope": value})
    assert "use_mrope" in message and "refused rather than ignored" in message
