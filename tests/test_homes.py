# SPDX-License-Identifier: BSD-3-Clause
"""Every module of ``src/synthrisk`` has its tests' home, or says where it is tested.

The home of ``src/synthrisk/metrics/attacks/_queries.py`` is
``tests/metrics/attacks/test_queries.py`` (a leading underscore dropped). A module tested
through another module's tests has a line in ``elsewhere.txt`` of its tests' folder:
``_queries.py: tests/metrics/attacks/test_singling_out.py (why)``, naming the test files
that cover it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "synthrisk"
TESTS = ROOT / "tests"


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p.name != "__init__.py")


def _home(module: Path) -> Path:
    rel = module.relative_to(SRC)
    return TESTS / rel.parent / f"test_{rel.stem.lstrip('_')}.py"


def _elsewhere() -> dict[Path, str]:
    """Module path -> the line that says where it is tested."""
    found: dict[Path, str] = {}
    for listing in TESTS.rglob("elsewhere.txt"):
        folder = listing.parent.relative_to(TESTS)
        for line in listing.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            name, _, reason = line.partition(":")
            found[SRC / folder / name.strip()] = reason.strip()
    return found


def test_every_module_has_a_home_or_says_where_it_is_tested() -> None:
    elsewhere = _elsewhere()
    homeless = [
        str(m.relative_to(SRC))
        for m in _modules()
        if not _home(m).is_file() and m not in elsewhere
    ]
    assert not homeless, homeless


def test_every_elsewhere_line_is_needed_and_true() -> None:
    problems = []
    for module, reason in _elsewhere().items():
        where = module.relative_to(SRC)
        if not module.is_file():
            problems.append(f"{where}: no such module")
        elif _home(module).is_file():
            problems.append(
                f"{where}: has its own home {_home(module).relative_to(ROOT)}"
            )
        named = re.findall(r"tests/[\w/]+\.py", reason)
        if not named:
            problems.append(f"{where}: names no test file")
        problems += [
            f"{where}: {n} does not exist" for n in named if not (ROOT / n).is_file()
        ]
    assert not problems, problems
