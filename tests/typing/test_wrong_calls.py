# SPDX-License-Identifier: BSD-3-Clause
"""mypy rejects every marked call of ``wrong_calls.py``, and only those.

Each line of ``wrong_calls.py`` that ends with ``# E: <code>`` must get a mypy error with
that error code; any other error is a failure too (the unmarked lines are calls that must
type-check). mypy runs with the project's settings (``pyproject.toml``: strict) on the
``src`` of this checkout; the test is skipped where mypy is not installed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).with_name("wrong_calls.py")
_MARK = re.compile(r"#\s*E:\s*([a-z-]+(?:\s*,\s*[a-z-]+)*)\s*$")
_ERROR = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<text>.*?)(?:\s+\[(?P<code>[a-z-]+)\])?$"
)


def _expected() -> dict[int, set[str]]:
    lines = CASES.read_text(encoding="utf-8").splitlines()
    out: dict[int, set[str]] = {}
    for number, line in enumerate(lines, start=1):
        match = _MARK.search(line)
        if match:
            out[number] = {code.strip() for code in match.group(1).split(",")}
    return out


def _mypy_errors() -> dict[int, set[str]]:
    env = dict(os.environ, MYPYPATH=str(ROOT / "src"))
    command = [
        sys.executable, "-m", "mypy",
        "--config-file", str(ROOT / "pyproject.toml"),
        "--no-error-summary", "--no-pretty", "--show-error-codes",
        str(CASES),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1):  # 2: mypy itself failed (a crash, bad options)
        pytest.fail(f"mypy failed:\n{done.stdout}\n{done.stderr}")
    found: dict[int, set[str]] = {}
    for line in done.stdout.splitlines():
        match = _ERROR.match(line)
        if match is None:
            continue
        if Path(match["path"]).resolve() != CASES:
            pytest.fail(f"mypy reports an error outside the cases: {line}")
        found.setdefault(int(match["line"]), set()).add(match["code"] or "?")
    return found


def test_mypy_rejects_the_marked_calls_and_only_those() -> None:
    expected, found = _expected(), _mypy_errors()
    assert len(expected) >= 15, "the cases file lost its markers"
    missed = {
        n: codes for n, codes in expected.items() if not codes <= found.get(n, set())
    }
    unexpected = {n: codes for n, codes in found.items() if n not in expected}
    lines = CASES.read_text(encoding="utf-8").splitlines()
    report = [
        f"accepted, should be rejected ({sorted(c)}): {n}: {lines[n - 1].strip()}"
        for n, c in sorted(missed.items())
    ]
    report += [
        f"rejected ({sorted(c)}), should be accepted: {n}: {lines[n - 1].strip()}"
        for n, c in sorted(unexpected.items())
    ]
    assert not report, "\n".join(report)
