"""Fixtures of the checklist tests: tiny configs of real transformers families, and the planted-fault model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))  # so that the test modules can import planted

#: tiny configs of three families whose rotary code differs (rotate_half, GQA, partial rotation), 2 layers each
TINY = {
    "llama": {"model_type": "llama", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
              "max_position_embeddings": 64, "rope_theta": 10000.0},
    "qwen2": {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
              "max_position_embeddings": 64, "rope_theta": 1000000.0},
    "gpt_neox": {"model_type": "gpt_neox", "hidden_size": 64, "intermediate_size": 64, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "vocab_size": 128, "max_position_embeddings": 64,
                 "rotary_pct": 0.25, "rotary_emb_base": 10000},
}


@pytest.fixture
def write_config(tmp_path):
    """``write_config(data)`` -> path of a config.json holding ``data``."""
    counter = iter(range(1000))

    def write(data: dict) -> str:
        folder = tmp_path / f"model{next(counter)}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
        return str(folder / "config.json")

    return write
