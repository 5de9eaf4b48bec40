# SPDX-License-Identifier: BSD-3-Clause
"""The reference-test runner's helpers: seeds, outcomes, test sources, environment.

``scripts/run_reference_tests.py`` is imported by path; nothing here touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "run_reference_tests.py"


@pytest.fixture(scope="module")
def rrt() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("run_reference_tests", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


# ------------------------------------------------------------------------- seeds


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_a", ("test_a", None)),
        ("test_a[refseed3]", ("test_a", 3)),
        ("test_num[NumericalLR-refseed12]", ("test_num[NumericalLR]", 12)),
        ("test_num[refseed0-NumericalLR]", ("test_num[NumericalLR]", 0)),
        ("test_x[a-b-refseed7-c]", ("test_x[a-b-c]", 7)),
        ("test_x[notrefseed7]", ("test_x[notrefseed7]", None)),
        ("test_x[-1-refseed2]", ("test_x[-1]", 2)),
    ],
)
def test_split_seed(
    rrt: ModuleType, name: str, expected: tuple[str, int | None]
) -> None:
    assert rrt.split_seed(name) == expected


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_one.TestA" name="test_ok[refseed0]"/>
<testcase classname="tests.test_one.TestA" name="test_ok[refseed1]"/>
<testcase classname="tests.test_one" name="test_num[LR-refseed0]"/>
<testcase classname="tests.test_one" name="test_num[LR-refseed1]">
  <failure message="assert 0.7 &lt;= 0.6">long text</failure></testcase>
<testcase classname="tests.test_one" name="test_skip[refseed0]"><skipped message="no"/></testcase>
<testcase classname="" name="tests.test_two"><error message="collection failure"/></testcase>
</testsuite></testsuites>
"""


def test_junit_outcomes_per_test_and_seed(rrt: ModuleType, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT)
    files = ["tests/test_one.py", "tests/test_two.py"]
    outcomes = rrt.parse_junit(junit, files, [0, 1])
    summary = rrt.summarize(outcomes, [0, 1], files)
    assert set(summary.tests) == {
        ("tests/test_one.py", "TestA::test_ok"),
        ("tests/test_one.py", "test_num[LR]"),
        ("tests/test_two.py", "tests.test_two"),
    }
    # the file that failed to import errs in every run; skipped tests do not count
    assert summary.counts(0) == (2, 0, 1)
    assert summary.counts(1) == (1, 1, 1)
    assert summary.counts(1, "tests/test_one.py") == (1, 1, 0)
    assert summary.spread() == [(1, 2), (0, 1), (1, 1)]
    flaky = {
        (f, t): (passed, first.seed)
        for f, t, passed, first in summary.not_always_passed()
    }
    assert flaky == {
        ("tests/test_one.py", "test_num[LR]"): (1, 1),
        ("tests/test_two.py", "tests.test_two"): (0, 0),
    }
    text = "\n".join(rrt.report_lines(summary, "lib"))
    assert "| total | 3 | 1–2 | 0–1 | 1 |" in text
    assert "2 runs (base seeds 0–1): 1–2 of 3 passed; passed per run: 2, 1" in text
    assert "passed 1 of 2" in text
    assert "assert 0.7 <= 0.6" in text
    record = rrt.summary_json(summary, library="lib")
    num = next(t for t in record["tests"] if t["test"] == "test_num[LR]")
    assert num["outcomes"] == {"0": "passed", "1": "failed"}
    assert record["passed_per_run"] == [2, 1]


def test_one_run_reports_plain_counts(rrt: ModuleType) -> None:
    outcomes = [
        rrt.Outcome("tests/t.py", "test_a", 5, "passed"),
        rrt.Outcome("tests/t.py", "test_b", 5, "failed", "boom"),
    ]
    lines = rrt.report_lines(rrt.summarize(outcomes, [5], ["tests/t.py"]), "lib")
    assert "| total | 2 | 1 | 1 | 0 |" in lines
    assert "  failed           tests/t.py::test_b: boom" in lines
    assert not any("runs (base seeds" in line for line in lines)


SEEDED_TEST = """
import random

import numpy as np


def test_draw():
    values = (random.random(), float(np.random.random()), float(np.random.default_rng().random()))
    print("DRAW", repr(values))
    assert values[1] < 0.5
"""


@pytest.mark.slow  # three pytest sessions
def test_the_conftest_seeds_every_test_per_run(
    rrt: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same base seed gives the same outcome; the seeds spread the draws.

    (``reference=True``: no import hook, which the seeds do not depend on.)
    """
    tree = tmp_path / "checkout"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_confidence.py").write_text(SEEDED_TEST)
    seeds = list(range(8))
    first, files = rrt.run_suite(
        "anonymeter", tree, seeds=seeds, reference=True, one_session=True
    )
    assert files == ["tests/test_confidence.py"]
    assert sorted(o.seed for o in first) == seeds
    assert {o.test for o in first} == {"test_draw"}
    passed = sum(o.outcome == "passed" for o in first)
    assert 0 < passed < len(seeds)  # uniform draws below 0.5: some runs pass, some fail
    # a session of one of the seeds gives that seed's outcome: reproducible
    for seed in (3, 6):
        (single,), _ = rrt.run_suite("anonymeter", tree, seeds=[seed], reference=True)
        assert single.outcome == next(o.outcome for o in first if o.seed == seed)
    assert "not in these test sources" in capsys.readouterr().out


# ------------------------------------------------------------------ test sources


def _tar(path: Path, files: dict[str, bytes], *, top: str = "pkg-1.0") -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}" if top else name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _release(rrt: ModuleType, sdist: Path) -> object:
    return rrt.Release(
        project="pkg",
        distribution="pkg",
        version="1.0",
        sdist_sha256=hashlib.sha256(sdist.read_bytes()).hexdigest(),
        version_file="pkg/__init__.py",
        version_regex=rrt._PY_VERSION,
        archives=("https://example.org/pkg-1.0.tar.gz",),
        from_archive=("tests/", "extra/data.csv"),
        same_in_both=("pkg/",),
    )


SDIST = {
    "pkg/__init__.py": b"__version__ = '1.0'\n",
    "pkg/core.py": b"x = 1\n",
    "tests/test_sdist_only.py": b"",
}
ARCHIVE = {
    "pkg/__init__.py": b"__version__ = '1.0'\n",
    "pkg/core.py": b"x = 1\n",
    "tests/test_a.py": b"def test_a(): pass\n",
    "tests/data/x.csv": b"a\n1\n",
    "extra/data.csv": b"b\n2\n",
}


def test_assemble_release_completes_the_sdist_from_the_archive(
    rrt: ModuleType, tmp_path: Path
) -> None:
    sdist = _tar(tmp_path / "pkg-1.0.tar.gz", SDIST)
    archive = _tar(tmp_path / "tag.tar.gz", ARCHIVE, top="pkg-v1.0")
    release = _release(rrt, sdist)
    dest = tmp_path / "cache" / "pkg-1.0"
    manifest = rrt.assemble_release(release, sdist, archive, dest, archive_source="tag")
    tree = dest / "tree"
    # the archive's tests/ replaces the sdist's; its other listed file is added
    assert sorted(manifest["files"]) == [
        "extra/data.csv",
        "pkg/__init__.py",
        "pkg/core.py",
        "tests/data/x.csv",
        "tests/test_a.py",
    ]
    assert (tree / "tests" / "test_a.py").read_bytes() == ARCHIVE["tests/test_a.py"]
    assert [s["kind"] for s in manifest["sources"]] == ["sdist", "archive"]
    assert rrt.verify_cache(dest) == []
    assert rrt.stated_version(tree, release) == "1.0"
    # the cache check sees a changed, an added and a removed file
    (tree / "tests" / "test_a.py").write_text("def test_a(): assert False\n")
    (tree / "tests" / "new.py").write_text("")
    (tree / "extra" / "data.csv").unlink()
    assert rrt.verify_cache(dest) == [
        "missing: extra/data.csv",
        "not in the release: tests/new.py",
        "changed: tests/test_a.py",
    ]
    assert rrt.tests_digest(tree, "anonymeter") != ""


@pytest.mark.parametrize(
    ("sdist_files", "archive_files", "match"),
    [
        (
            SDIST,
            {**ARCHIVE, "pkg/__init__.py": b"__version__ = '0.9'\n"},
            "states version '0.9'",
        ),
        (
            {**SDIST, "pkg/__init__.py": b"__version__ = '2.0'\n"},
            ARCHIVE,
            "states version '2.0'",
        ),
        (SDIST, {**ARCHIVE, "pkg/core.py": b"x = 2\n"}, "pkg/core.py differs"),
        (
            SDIST,
            {k: v for k, v in ARCHIVE.items() if k != "extra/data.csv"},
            "has no 'extra/data.csv'",
        ),
    ],
)
def test_assemble_release_refuses_sources_of_another_release(
    rrt: ModuleType,
    tmp_path: Path,
    sdist_files: dict[str, bytes],
    archive_files: dict[str, bytes],
    match: str,
) -> None:
    sdist = _tar(tmp_path / "pkg-1.0.tar.gz", sdist_files)
    archive = _tar(tmp_path / "tag.tar.gz", archive_files)
    dest = tmp_path / "cache" / "pkg-1.0"
    dest.mkdir(parents=True)
    (dest / "kept").write_text("a previous, good cache")
    with pytest.raises(rrt.FetchError, match=match):
        rrt.assemble_release(_release(rrt, sdist), sdist, archive, dest)
    # a failed fetch leaves the cache as it was
    assert (dest / "kept").read_text() == "a previous, good cache"
    assert not dest.with_name("pkg-1.0.partial").exists()


def test_assemble_release_checks_the_sdist_sha256(
    rrt: ModuleType, tmp_path: Path
) -> None:
    sdist = _tar(tmp_path / "pkg-1.0.tar.gz", SDIST)
    release = _release(rrt, sdist)
    sdist.write_bytes(sdist.read_bytes() + b"\0")
    with pytest.raises(rrt.FetchError, match=r"is not the published pkg 1\.0 sdist"):
        rrt.assemble_release(release, sdist, None, tmp_path / "cache" / "pkg-1.0")


def test_extract_tar_refuses_unsafe_members(rrt: ModuleType, tmp_path: Path) -> None:
    climbing = _tar(tmp_path / "a.tar.gz", {"../evil.py": b""})
    with pytest.raises(rrt.FetchError, match="unsafe member path"):
        rrt.extract_tar(climbing, tmp_path / "a")
    linked = tmp_path / "b.tar.gz"
    with tarfile.open(linked, "w:gz") as tar:
        info = tarfile.TarInfo("pkg/link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    with pytest.raises(rrt.FetchError, match="links or special files"):
        rrt.extract_tar(linked, tmp_path / "b")
    two_tops = _tar(tmp_path / "c.tar.gz", {"x/a": b"", "y/b": b""}, top="")
    with pytest.raises(rrt.FetchError, match="one top-level folder"):
        rrt.extract_tar(two_tops, tmp_path / "c")
    assert not (tmp_path / "evil.py").exists()


def test_releases_are_the_compat_layers_targets(rrt: ModuleType) -> None:
    assert {k: r.version for k, r in rrt.RELEASES.items()} == {
        "sdmetrics": "0.32.0",
        "anonymeter": "1.1.0",
        "apt": "0.2.1",
    }
    for release in rrt.RELEASES.values():
        assert len(release.sdist_sha256) == 64
        # what the sdist lacks comes from an archive, which the sdist ties down
        assert bool(release.from_archive) == bool(release.archives)
        assert bool(release.from_archive) == bool(release.same_in_both)


# ------------------------------------------------------------------- environment


def test_missing_requirements(rrt: ModuleType) -> None:
    def lacking(*absent: str) -> object:
        return lambda module: module not in absent

    assert (
        rrt.missing_requirements("anonymeter", reference=False, importable=lacking())
        == []
    )
    assert rrt.missing_requirements(
        "apt", reference=False, importable=lacking("matplotlib", "pytest")
    ) == ["pytest>=8", "matplotlib>=3.7"]
    assert rrt.missing_requirements(
        "anonymeter", reference=False, importable=lacking("synthrisk.compat.anonymeter")
    ) == ["-e", f"{rrt.ROOT}[polars]"]
    # the reference's own run needs neither synthrisk nor its extras
    assert (
        rrt.missing_requirements(
            "apt",
            reference=True,
            importable=lacking("matplotlib", "synthrisk.compat.apt"),
        )
        == []
    )


def test_probe_asks_a_fresh_interpreter(rrt: ModuleType) -> None:
    found = rrt.probe(["json", "no_such_module_for_the_probe"])
    assert found["no_such_module_for_the_probe"] is None
    assert Path(found["json"]).name == "__init__.py"


def test_requirements_match_pyproject(rrt: ModuleType) -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for extra, needs in rrt.EXTRAS.items():
        assert sorted(needs.values()) == sorted(project["optional-dependencies"][extra])
    listed = set(project["dependencies"]) | set(project["optional-dependencies"]["dev"])
    assert set(rrt.BASE_NEEDS.values()) <= listed


def test_without_option(rrt: ModuleType) -> None:
    argv = ["sdmetrics", "--venv", "v", "--repeat", "3", "--venv=w", "PATH"]
    assert rrt.without_option(argv, "--venv") == ["sdmetrics", "--repeat", "3", "PATH"]


# ---------------------------------------------------------------------- APT data


def test_apt_data_files(rrt: ModuleType, tmp_path: Path) -> None:
    source = rrt.write_apt_data(tmp_path, None, seed=1)
    assert "12960 attribute combinations" in source
    nursery = (tmp_path / "datasets" / "nursery" / "data").read_text().splitlines()
    assert len(nursery) == 12960 == len(set(nursery))
    assert {line.count(",") for line in nursery} == {8}
    train = (tmp_path / "datasets" / "adult" / "train").read_text().splitlines()
    assert len(train) == 3000
    assert {len(line.split(", ")) for line in train} == {15}
    test = (tmp_path / "datasets" / "adult" / "test").read_text().splitlines()
    assert test[0].startswith("|")
    assert len(test) == 1001
    assert rrt._adult_stand_in(20, 1) == rrt._adult_stand_in(20, 1)
    assert rrt._adult_stand_in(20, 1) != rrt._adult_stand_in(20, 2)
