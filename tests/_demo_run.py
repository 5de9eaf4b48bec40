# SPDX-License-Identifier: BSD-3-Clause
"""One run of ``synthrisk demo`` shared by the tests that read its output (``demo_run``)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class DemoRun:
    """A ``synthrisk demo --rows 600`` run: its output folder and what it printed."""

    out: Path
    printed: str


def run_demo(out: Path) -> DemoRun:
    """Run the demo into ``out`` and keep its standard output."""
    from synthrisk.cli.main import main

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["demo", "--out", str(out), "--rows", "600"])
    assert code == 0
    return DemoRun(out, printed.getvalue())
