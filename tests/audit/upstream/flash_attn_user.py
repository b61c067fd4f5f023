"""A user's file of flash-attn's rotary layer, audited as ``flash_attn_user.py:RotaryEmbedding``.

``flash_attn/`` beside it holds flash-attn 2.8.3's ``layers/rotary.py`` and ``ops/triton/rotary.py`` as the
PyPI sdist ships them (BSD-3-Clause). Two stand-ins make its Triton kernel run on a machine with no GPU; they
are the environment, not the rotary code: Triton's CPU interpreter, and ``torch.cuda.device(None)`` (the
kernel's launch guard) as no device switch.
"""

import contextlib
import os

import torch

os.environ.setdefault("TRITON_INTERPRET", "1")
torch.cuda.device = lambda index: contextlib.nullcontext()

from flash_attn.layers.rotary import RotaryEmbedding  # noqa: E402

__all__ = ["RotaryEmbedding"]
