"""The version, written in one place: ``pyproject.toml`` reads it from this file's text."""

__version__ = "0.1.0"
