"""A model that writes its rotated block out permuted (DeepSeek-V3's ``rope_interleave``: adjacent pairs in,
``[even | odd]`` out): code writing that order is the model's map, code writing the pairs in place gives
the same scores; both are correct, and neither may be declared different.  A wrong frequency or a key
written in another order than the query stays *differs*.

Every case rotates with transformers' own ``DeepseekV3RotaryEmbedding`` (its cos and sin) and differs only
in how it applies them: transformers' two apply functions as they are, DeepSeek's in-place complex form, and
planted faults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from symproof import audit

pytest.importorskip("torch")
pytest.importorskip("transformers")

CONFIGS = Path(__file__).resolve().parents[2] / "derivations" / "configs"
DEEPSEEK = "transformers.models.deepseek_v3.modeling_deepseek_v3"

HEADER = f'''
import json
import torch
from transformers import DeepseekV3Config
from {DEEPSEEK} import DeepseekV3RotaryEmbedding

CONFIG = DeepseekV3Config(**json.loads({(CONFIGS / "deepseek-v3.json").read_text()!r}))
ROTARY = DeepseekV3RotaryEmbedding(CONFIG)


def cos_sin(x, positions):
    return ROTARY(x, positions.reshape(1, -1))  # (1, T, 64), each half the pairs' angles


def in_place(x, cos, sin, sign=1.0):
    """Adjacent pairs (2r, 2r + 1) turned by pair r's angle, written where they were (DeepSeek's own code)."""
    c, s = cos[..., : x.shape[-1] // 2], sign * sin[..., : x.shape[-1] // 2]
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2], out[..., 1::2] = a * c - b * s, a * s + b * c
    return out


def even_odd(x):
    return torch.cat((x[..., 0::2], x[..., 1::2]), -1)
'''

#: name -> (the body of rope(q, k, positions), the verdict, the order the audit says the code writes)
CASES = {
    "transformers' interleave apply": (
        "from {m} import apply_rotary_pos_emb_interleave\n"
        "def rope(q, k, positions):\n"
        "    cos, sin = cos_sin(q, positions)\n"
        "    q, k = apply_rotary_pos_emb_interleave(q[None], k[None], cos, sin)\n"
        "    return q[0], k[0]\n",
        "equivalent", "model"),
    "transformers' plain apply (half pairs)": (
        "from {m} import apply_rotary_pos_emb\n"
        "def rope(q, k, positions):\n"
        "    cos, sin = cos_sin(q, positions)\n"
        "    q, k = apply_rotary_pos_emb(q[None], k[None], cos, sin)\n"
        "    return q[0], k[0]\n",
        "equivalent_after_relayout", "pairs"),
    "in place, as DeepSeek's own code": (
        "def rope(q, k, positions):\n"
        "    cos, sin = cos_sin(q, positions)\n"
        "    return in_place(q, cos[0], sin[0]), in_place(k, cos[0], sin[0])\n",
        "equivalent", "pairs"),
    "the model's order, the sine's sign flipped": (
        "def rope(q, k, positions):\n"
        "    cos, sin = cos_sin(q, positions)\n"
        "    return even_odd(in_place(q, cos[0], sin[0], -1.0)), even_odd(in_place(k, cos[0], sin[0], -1.0))\n",
        "differs", "model"),
    "the query in the model's order, the key in place": (
        "def rope(q, k, positions):\n"
        "    cos, sin = cos_sin(q, positions)\n"
        "    return even_odd(in_place(q, cos[0], sin[0])), in_place(k, cos[0], sin[0])\n",
        "differs", "model"),
}


@pytest.mark.parametrize("case", CASES)
def test_either_order_of_a_correct_rotation_is_equivalent_and_a_fault_is_not(case, tmp_path):
    body, verdict, code_order = CASES[case]
    path = tmp_path / "rope_code.py"
    path.write_text(HEADER + "\n\n" + body.format(m=DEEPSEEK))
    result = audit(f"{path}:rope", CONFIGS / "deepseek-v3.json")
    assert result.verdict == verdict, result.summary()
    assert result.output_order["code"] == code_order, result.summary()
    assert result.output_order["model"] == [*range(0, 64, 2), *range(1, 64, 2)]
    assert "output order: the model writes its rotated block out permuted" in result.summary()
    if "sign" in case:
        assert any(d.what in ("direction", "sign", "frequency") for d in result.differences), result.summary()


def test_transformers_module_with_its_interleave_apply_from_the_command(capsys):
    """The plain command, transformers' module with the apply function its model calls for rope_interleave."""
    from symproof._face._cli import main

    code = main(["audit", f"{DEEPSEEK}:DeepseekV3RotaryEmbedding", "--like", str(CONFIGS / "deepseek-v3.json"),
                 "--apply", "apply_rotary_pos_emb_interleave"])
    out = capsys.readouterr().out
    assert code == 0 and "verdict: equivalent (" in out, out
    assert "the code writes the same order" in out


def test_the_report_says_the_order_the_outputs_were_compared_in(tmp_path, capsys):
    from symproof._face._cli import main

    code = main(["audit", f"{DEEPSEEK}:DeepseekV3RotaryEmbedding", "--like", str(CONFIGS / "deepseek-v3.json"),
                 "--apply", "apply_rotary_pos_emb_interleave", "--report", str(tmp_path / "report")])
    capsys.readouterr()
    assert code == 0
    page = (tmp_path / "report" / "audit.html").read_text()
    section = (tmp_path / "report" / "audit.tex").read_text()
    assert "Output order: the model writes its rotated block out permuted" in page
    assert "Output order: the model writes its rotated block out permuted" in section


def test_a_model_writing_pairs_in_place_has_no_order_line():
    """Llama writes its pairs in place: nothing to say, and the JSON field is null."""
    result = audit("transformers.models.llama.modeling_llama:LlamaRotaryEmbedding", CONFIGS / "llama-3.1-8b.json")
    assert result.verdict == "equivalent", result.summary()
    assert result.output_order is None and result.as_dict()["output_order"] is None
    assert "output order" not in result.summary()


def test_longcat_flash_read_through_transformers_audits_its_own_module():
    """LongCat-Flash has no row: read through transformers, its map writes [even | odd] out, and its module has
    only the interleave apply function: the plain command finds it equivalent."""
    import transformers

    config = transformers.AutoConfig.for_model("longcat_flash").to_dict()
    result = audit("transformers.models.longcat_flash.modeling_longcat_flash:LongcatFlashRotaryEmbedding", config)
    assert result.verdict == "equivalent", result.summary()
    assert result.output_order["code"] == "model", result.summary()
