"""``python -m synthrisk`` is the ``synthrisk`` command."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_runs_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "synthrisk", "metrics", "identification"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "identification" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "synthrisk", "metrics", "no_such_metric"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2
    assert "no_such_metric" in bad.stderr
