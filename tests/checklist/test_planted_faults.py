"""Each planted fault is found by its item, with a witness; the faithful wrapper passes every item."""

from __future__ import annotations

import pytest

import symproof
from planted import PlantedModel, tiny_llama
from symproof.checklist import FAILS, HOLDS
from symproof.testing import assert_checklist

#: fault -> the item that must find it
FOUND_BY = {
    "columns_under_padding": "left_padding",
    "no_reset_when_packing": "packing",
    "query_at_zero_with_cache": "kv_cache",
    "stale_base_with_cache": "kv_cache",
    "reload_drops_rope_field": "reload",
}


@pytest.mark.parametrize("fault", sorted(FOUND_BY))
def test_a_planted_fault_is_found_with_a_witness(fault):
    result = symproof.checklist(PlantedModel(tiny_llama(), fault), only=[FOUND_BY[fault]])
    (item,) = result.items
    assert item.status == FAILS, item.as_dict()
    assert item.witness["first_layer"] == "decoder layer 0 (of 2)"  # the rotation acts in the first attention
    assert item.witness["units"] > item.witness["tolerance_units"]
    assert not result.passed


def test_the_cache_witness_is_the_first_cached_step():
    result = symproof.checklist(PlantedModel(tiny_llama(), "query_at_zero_with_cache"), only=["kv_cache"])
    witness = result.items[0].witness
    assert witness["token"] == 3  # the prefill is 3 tokens: the first token fed through the cache
    assert witness["run"] == "one token at a time"


def test_the_faithful_wrapper_passes_every_item():
    result = assert_checklist(PlantedModel(tiny_llama()))
    assert [item.status for item in result.items] == [HOLDS] * 6


def test_assert_checklist_fails_with_the_witness():
    with pytest.raises(AssertionError, match="left_padding +fails"):
        assert_checklist(PlantedModel(tiny_llama(), "columns_under_padding"), only=["left_padding"])


def test_symproof_checklist_is_callable_after_the_package_is_imported():
    import symproof.checklist as package

    assert symproof.checklist(PlantedModel(tiny_llama()), only=["shift"]).passed
    assert package(PlantedModel(tiny_llama()), only=["shift"]).passed


def test_a_rotary_module_out_of_step_with_its_config_is_found():
    model = tiny_llama()
    model.config.rope_parameters["factor"] = 4.0  # the config now says 4; the rotary tables were built for 2
    result = symproof.checklist(PlantedModel(model), only=["configured_map"])
    (item,) = result.items
    assert item.status == FAILS, item.as_dict()
    assert item.witness["layer"] == 0 and item.witness["times_tolerance"] > 1


def test_the_configured_map_holds_for_the_faithful_wrapper():
    (item,) = symproof.checklist(PlantedModel(tiny_llama()), only=["configured_map"]).items
    assert item.status == HOLDS, item.as_dict()


class _NanUnderPadding(PlantedModel):
    """What transformers' eager attention does in float64: fully masked pad rows become NaN."""

    def forward(self, input_ids=None, attention_mask=None, **kwargs):
        output = super().forward(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        if attention_mask is not None and attention_mask.ndim == 2 and not bool(attention_mask.all()):
            output.logits = output.logits + float("nan")
        return output


def test_a_nan_output_fails_never_passes():
    (item,) = symproof.checklist(_NanUnderPadding(tiny_llama()), only=["left_padding"]).items
    assert item.status == FAILS
    assert item.witness["units"] == "NaN or infinite output"
