import pytest

from symproof import load_claims


@pytest.fixture(scope="session")
def claims():
    """Every registered claim of the chapter, by ID."""
    return load_claims()
