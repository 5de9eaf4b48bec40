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


def _readme() -> str:
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def test_readme_lists_exactly_the_metrics_of_the_default_run() -> None:
    from synthrisk.metrics import METRICS

    text = _readme()
    listed = text[
        text.index("<!-- default-run -->") : text.index("<!-- /default-run -->")
    ]
    default = [m for m, cls in METRICS.items() if cls.runs_by_default]
    assert re.findall(r"`([a-z_]+)`", listed) == default
    assert f"runs the {_NUMBERS[len(default)]} metrics below" in text
    assert "every family above" not in text
    # the others are named as running only when asked for
    rest = text[text.index("<!-- /default-run -->") :].split("The **verdict**")[0]
    for metric_id, cls in METRICS.items():
        if not cls.runs_by_default:
            family = metric_id.startswith(("categorical_", "numerical_"))
            assert family or f"`{metric_id}`" in rest, metric_id


_NUMBERS = {
    12: "twelve",
    13: "thirteen",
    14: "fourteen",
    15: "fifteen",
    16: "sixteen",
    17: "seventeen",
    18: "eighteen",
    19: "nineteen",
    20: "twenty",
    21: "twenty-one",
    22: "twenty-two",
}


def test_readme_says_what_make_test_runs_and_installs() -> None:
    text = _readme()
    assert "runs the whole test suite" not in text
    assert "(not the few `slow` tests)" in text
    assert "`make test-slow`" in text
    assert "`make test` installs nothing outside `.venv`" in text
    assert "`make chromium` installs Debian's `chromium`" in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_rule = next(line for line in makefile.splitlines() if line.startswith("test:"))
    # chromium (apt-get) only when CI asks for it; otherwise a note
    assert (
        "$(if $(filter 1,$(SYNTHRISK_REQUIRE_CHROMIUM)),chromium,chromium-note)"
        in test_rule
    )
    assert "test-slow:" in makefile
    assert "pytest -m slow" in makefile
    # the suite runs on every core (pytest-xdist), and one process stays one option away
    assert "$(PYTEST_PARALLEL)" in test_rule or "$(PYTEST_PARALLEL)" in makefile
    assert "-n $(PYTEST_WORKERS) --maxprocesses 4" in makefile
    assert "`make test PYTEST_WORKERS=0`" in text
    assert "SYNTHRISK_REQUIRE_CHROMIUM=1" in (ROOT / ".ci" / "run").read_text()


def test_docs_state_the_real_gate_rule() -> None:
    # the gate compares the overall verdict (gating metrics only), not every metric
    for path in (
        ROOT / "README.md",
        ROOT / "docs" / "report.md",
        ROOT / "docs" / "petsard.md",
    ):
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert "unless every metric passes" not in text, path
        assert "unless none fails" not in text, path
    report = " ".join((ROOT / "docs" / "report.md").read_text(encoding="utf-8").split())
    assert "exit with code **1** unless the **overall verdict** is `pass`" in report


def test_readme_notes_claim_matches_the_reader() -> None:
    text = _readme()
    assert "each such reading is a note" not in text
    assert "the separator itself is recognised without a note" in text


def test_no_third_party_cache_is_committed() -> None:
    import shutil
    import subprocess

    assert "workspace/" in (ROOT / ".gitignore").read_text().splitlines()
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "workspace"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert tracked == ""


def test_docs_say_the_verdict_is_not_an_oracle() -> None:
    verdict = (ROOT / "docs" / "verdict.md").read_text(encoding="utf-8")
    assert "\n## Not an oracle\n" in verdict
    section = " ".join(
        verdict.split("\n## Not an oracle\n")[1].split("\n## ")[0].split()
    )
    assert "must not drive a loop that regenerates or tunes a generator" in section
    assert "ReconSyn" in section
    assert "arXiv:2312.05114" in section
    assert "not a licence to search" in section
    readme = _readme()
    assert "is **not an oracle**" in readme
    assert "arXiv:2312.05114" in readme


def test_report_docs_describe_the_threat_model_json() -> None:
    from synthrisk.results import ThreatModel

    text = " ".join((ROOT / "docs" / "report.md").read_text(encoding="utf-8").split())
    assert '"threat_model": {' in text
    assert "### Threat model of every number" in (
        ROOT / "docs" / "report.md"
    ).read_text(encoding="utf-8")
    keys = ThreatModel("a", "b", "c").to_dict()
    for key in keys:
        assert f"| `{key}` |" in text, key
