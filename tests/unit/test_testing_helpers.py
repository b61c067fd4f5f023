"""symproof.testing in a user's pytest run: the failure shows the user's line and the diagnosis, not the helper."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

USER_TEST = '''
from symproof.testing import assert_rope_matches


def test_our_rope():
    assert_rope_matches("no_such_file.py:rope", "xpos")  # THE USER'S LINE
'''


def test_a_failing_assert_rope_matches_hides_its_own_frame(tmp_path):
    (tmp_path / "test_user.py").write_text(USER_TEST, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "THE USER'S LINE" in done.stdout and "could not be audited" in done.stdout, done.stdout[-3000:]
    # the helper's own source (its docstring, its raise) is not in the traceback pytest prints
    assert "symproof/testing.py" not in done.stdout and "def assert_rope_matches" not in done.stdout, \
        done.stdout[-3000:]
