"""Fixtures of the audit tests; the implementations and cases live in ``audit_implementations.py``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # so that the test modules can import audit_implementations

from audit_implementations import MODELS, implementation_source  # noqa: E402


@pytest.fixture
def write_impl(tmp_path):
    """``write_impl(library, style, name=..., **params)`` -> path of the implementation file."""
    counter = iter(range(10_000))

    def write(library: str, style: str, name: str | None = None, **params):
        if library == "torch":
            pytest.importorskip("torch")
        path = tmp_path / f"{name or 'impl'}_{library}_{next(counter)}.py"
        path.write_text(implementation_source(library, style, **params), encoding="utf-8")
        return path

    return write


@pytest.fixture
def model_file(tmp_path):
    """``model_file(key)`` -> path of the variant TOML of :data:`MODELS`."""

    def write(key: str):
        path = tmp_path / f"{key}.toml"
        if not path.exists():
            path.write_text(MODELS[key], encoding="utf-8")
        return path

    return write
