"""Numerical kernels generated from the symbolic definitions, references, and export."""

from ._config import RopeConfig, atomic_write_text, load_config, save_config

__all__ = ["RopeConfig", "atomic_write_text", "load_config", "save_config"]
