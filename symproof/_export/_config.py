"""The configuration that defines a position function, saved and reloaded as JSON.

A position function is fully determined by these fields; a saved
configuration reloaded anywhere gives bit-identical outputs.  Every field is
explicit — in particular the frequency ``denominator`` for partial rotation is
stated, never guessed from ``rotary_dim`` or ``head_dim``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields

from .._ground._errors import InvalidInputError
from .._ground._io import atomic_write_text
from ..encodings import PAIRINGS, check_width

__all__ = ["RopeConfig", "save_config", "load_config", "atomic_write_text"]

_DTYPES = ("float64", "float32")


@dataclass(frozen=True)
class RopeConfig:
    """RoPE as the chapter defines it, with every convention a field."""

    head_dim: int
    rotary_dim: int | None = None  # defaults to head_dim
    base: float = 10000.0
    denominator: int | None = None  # width in the frequency exponent; required for partial rotation
    pairing: str = "adjacent"
    index_origin: int = 0  # positions are counted from this value
    position_scale: float = 1.0  # m -> m / position_scale (linear interpolation)
    dtype: str = "float64"

    def __post_init__(self):
        check_width(self.head_dim, "head_dim")
        rotary = self.head_dim if self.rotary_dim is None else self.rotary_dim
        check_width(rotary, "rotary_dim")
        if rotary > self.head_dim:
            raise InvalidInputError(
                f"rotary_dim must be <= head_dim, got rotary_dim={rotary} > head_dim={self.head_dim}")
        object.__setattr__(self, "rotary_dim", rotary)
        if self.denominator is None:
            if rotary != self.head_dim:
                raise InvalidInputError(
                    "partial rotation needs an explicit frequency denominator: "
                    f"denominator={rotary} (rotary_dim) or denominator={self.head_dim} (head_dim); "
                    "the two give different frequencies with identical shapes",
                    head_dim=self.head_dim, rotary_dim=rotary)
            object.__setattr__(self, "denominator", rotary)
        if isinstance(self.denominator, bool) or not isinstance(self.denominator, int) or self.denominator < 1:
            raise InvalidInputError(f"denominator must be a positive integer (the width in the exponent "
                                    f"base^(-2r/denominator)), got {self.denominator!r}")
        if self.pairing not in PAIRINGS:
            raise InvalidInputError(f"unknown pairing {self.pairing!r}; expected one of {PAIRINGS}")
        if not self.base > 1:
            raise InvalidInputError(f"base must be > 1, got {self.base!r}")
        if not self.position_scale > 0:
            raise InvalidInputError(f"position_scale must be > 0, got {self.position_scale!r}")
        if self.dtype not in _DTYPES:
            raise InvalidInputError(f"dtype must be one of {_DTYPES}, got {self.dtype!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RopeConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInputError(f"unknown RopeConfig field(s) {unknown}; expected some of {sorted(known)}")
        return cls(**data)


def save_config(config: RopeConfig, path: str | os.PathLike) -> None:
    atomic_write_text(path, json.dumps(config.to_dict(), indent=2, sort_keys=True) + "\n")


def load_config(path: str | os.PathLike) -> RopeConfig:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as err:
        raise InvalidInputError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path}: expected a JSON object of RopeConfig fields")
    return RopeConfig.from_dict(data)
