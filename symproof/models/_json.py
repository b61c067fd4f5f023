"""A model config's text: read with a size bound, parsed as JSON with finite numbers only.

The one place a ``config.json`` is opened (the model reader, the reader through
transformers and the audit all read configs through it).
"""

from __future__ import annotations

import json
import os
from typing import Mapping

from .._ground._errors import VariantFileError
from .._ground._io import read_input_file, read_input_text

__all__ = ["MAX_CONFIG_BYTES", "is_model_config", "read_config", "loads_config"]


#: largest config file read (published configs are a few kB; LongRoPE's factor lists add ~2 kB)
MAX_CONFIG_BYTES = 1 << 20


def is_model_config(path) -> bool:
    """Whether ``path`` names a model config (``.json``, or text starting with ``{``) rather than TOML."""
    name = os.fspath(path)
    if name.lower().endswith(".json"):
        return True
    if name.lower().endswith(".toml"):
        return False
    try:
        head = read_input_file(name, error=VariantFileError)
    except VariantFileError:
        return False  # not readable as a file: the TOML reader says why, in its own words
    return head.lstrip()[:1] == b"{"


def read_config(source: str) -> Mapping:
    # regular files only, read with a bound: /dev/zero, a FIFO or a huge file never hang or fill memory
    return loads_config(read_input_text(source, error=VariantFileError, max_bytes=MAX_CONFIG_BYTES), source)


def loads_config(text: str, source: str = "<text>") -> Mapping:
    """The parsed JSON of a model config's text (finite numbers only); ``source`` names it in errors."""
    if len(text) > MAX_CONFIG_BYTES:
        raise VariantFileError(f"{source}: more than {MAX_CONFIG_BYTES} characters; a model config is smaller")

    def refuse_constant(name):
        raise ValueError(f"non-finite number {name}")

    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise VariantFileError(f"{source}: not a model config (JSON nested too deeply)") from None
    except ValueError as err:  # JSONDecodeError, huge integers, NaN / Infinity
        raise VariantFileError(f"{source}: not valid JSON ({str(err)[:200]})") from None
    return data
