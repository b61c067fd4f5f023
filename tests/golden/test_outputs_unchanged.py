"""The JSON verdicts and exported kernels of the shipped examples are the recorded ones, byte for byte.

A refactoring (moving modules between packages, say) must not change what
symproof writes; ``snapshot.py --write`` records a deliberate change.
"""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("golden_snapshot", Path(__file__).with_name("snapshot.py"))
snapshot = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(snapshot)


@pytest.mark.slow
def test_outputs_match_the_recorded_digests():
    golden = snapshot.read_golden()
    digests = snapshot.outputs()
    assert golden, "tests/golden/outputs.sha256 is empty"
    changed = snapshot.changed_outputs(golden, digests)
    assert changed == [], f"outputs differ from tests/golden/outputs.sha256 (run snapshot.py --write if meant): {changed}"
