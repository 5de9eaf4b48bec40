# SPDX-License-Identifier: BSD-3-Clause
"""Product text speaks to users: no internal tracker numbers, no one machine's paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: "issue 6", "issues 2-5", "(issue 4)"; a public project's "issue #35" is a citation
TRACKER = re.compile(r"\bissues? [0-9]+\b|\bissue-[0-9]+\b", re.IGNORECASE)
#: a folder of one machine
MACHINE_PATH = re.compile(r"(?<![\w.])/work/|/home/[a-z]|/Users/[A-Za-z]")
TEXT_SUFFIXES = {".py", ".md", ".j2", ".css", ".yaml", ".yml", ".toml", ".txt"}


def _files() -> list[Path]:
    roots = [
        ROOT / "src",
        ROOT / "docs",
        ROOT / "benchmarks",
        ROOT / "scripts",
        ROOT / "tests",
    ]
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "pyproject.toml"]
    for root in roots:
        files += [
            p
            for p in root.rglob("*")
            if p.suffix in TEXT_SUFFIXES and ".venvs" not in p.parts and p.is_file()
        ]
    return sorted(p for p in files if p.exists() and p != Path(__file__))


def test_the_scan_sees_the_product() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _files()}
    assert "src/synthrisk/report/verdict.py" in names
    assert "benchmarks/RESULTS.md" in names
    assert "README.md" in names


@pytest.mark.parametrize(
    ("pattern", "what"),
    [(TRACKER, "an internal tracker number"), (MACHINE_PATH, "one machine's folder")],
)
def test_no_tracker_numbers_or_machine_paths(
    pattern: re.Pattern[str], what: str
) -> None:
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not found, f"{what} in product text:\n" + "\n".join(found)
