# SPDX-License-Identifier: BSD-3-Clause
"""Run a reference library's own test suite against synthrisk's drop-in compat layer.

    python scripts/run_reference_tests.py sdmetrics            # SDMetrics 0.32.0's tests
    python scripts/run_reference_tests.py anonymeter           # Anonymeter 1.1.0's tests
    python scripts/run_reference_tests.py apt [--adult TRAIN.csv TEST.csv]  # ai-privacy-toolkit 0.2.1's
    python scripts/run_reference_tests.py sdmetrics --repeat 20     # 20 seeds: the spread
    python scripts/run_reference_tests.py sdmetrics PATH            # the tests of a checkout

**Environment.** The script runs the tests with the Python that runs it. It first checks
that this Python can import synthrisk's compat module and what the tests need (pytest,
numpy, pandas, scikit-learn, SciPy, and synthrisk's ``report`` extra for
ai-privacy-toolkit's tests, its ``polars`` extra for Anonymeter's), and installs what is
missing with pip, printing the command (synthrisk itself as ``pip install -e .[...]`` of
this repository). ``--no-install`` only reports what is missing; ``--venv DIR`` creates
(or reuses) a virtual environment there and runs the script with its Python, e.g.
``--venv benchmarks/.venvs/reference-tests`` (``benchmarks/.venvs/`` is git-ignored).

**Test sources.** Without a ``PATH`` the script uses the tests of the exact release that
the compat layer targets (see ``RELEASES``): the release's sdist from PyPI (its sha256 is
pinned here), completed with what the sdist leaves out from the GitHub archive of the
release's tag — all of SDMetrics' tests (its sdist has none), Anonymeter's
``tests/fixtures.py``, ``tests/__init__.py`` and ``tests/datasets/``. The archive must
state the same version and hold the same bytes as the sdist where both have a file (the
version file, the package code the tests exercise, the shared test files). The result is
cached under ``benchmarks/.venvs/reference-sources/`` (``--cache``) with the sha256 of
every file, checked at each later run. Where GitHub cannot be reached, download the
archive elsewhere and pass it with ``--archive FILE``. A ``PATH`` (a checkout or unpacked
sdist with ``tests/``) overrides all this; the script then prints the version the
checkout states. Every run prints a digest of the test files it ran.

**Seeds.** Several of the references' tests draw random data without a seed, so an
unseeded run's result varies. The runner seeds Python's ``random`` and numpy's global
generator before every test, from a base seed (``--seed``, default 0) and the test's id,
so a run is reproducible (an unseeded ``numpy.random.default_rng()`` takes its seed from
that global generator). ``--repeat N`` runs the suite with the base seeds
``seed, …, seed + N - 1``, one pytest session each (run ``k`` is the run of ``--seed k``),
and reports per test in how many runs it passed, and the smallest and largest totals;
``--one-session`` runs them all in one session, which is faster, but there a test module's
own state (such as a generator it makes at import) carries over between the seeds.

**Import hook.** Every ``import sdmetrics…`` / ``anonymeter…`` / ``apt…`` is answered by
synthrisk's compat module (``synthrisk.compat.sdmetrics``, ``synthrisk.compat.anonymeter``,
``synthrisk.compat.apt``): a name the compat layer does not offer imports as a stand-in
that fails when used, so a test of a private helper fails on its own and the other tests
of its file still run. ``--reference`` runs the same tests, with the same seeds, data and
shims, against the reference library itself (no import hook): run it with the Python of
an environment where the reference is installed.

**Fixtures and data.** The references' test fixtures are not APIs under test and are
loaded from the test sources: SDMetrics' demo-data loader (``sdmetrics.demos``), and
ai-privacy-toolkit's data loaders (``apt.utils.dataset_utils``) and k-anonymiser
(``apt.anonymization``), which its assessment tests use to make their data. Those loaders
download UCI datasets; the script writes the files they look for into the temporary
directory first, so that nothing is downloaded: Adult from the two CSV files given with
``--adult`` (the 15 UCI columns in UCI order, with a header row, e.g. the training and
control tables of Anonymeter's example notebook), or else a seeded stand-in table with
Adult's columns and categories; Nursery as the full factorial design of its eight
documented attributes (which is what the UCI file holds) with a made-up, deterministic
label. Two shims let the 2023 tests run on current libraries: scikit-learn's
``OneHotEncoder(sparse=...)`` (renamed ``sparse_output`` in scikit-learn 1.2 and removed
in 1.4) is mapped to the new name, and a missing ``six`` package gets a stand-in whose
``urlretrieve`` refuses to download.

Only the test files listed in ``SUITES`` run — those that exercise the public API. The
script prints, per file, how many tests passed, failed or errored, and every test that
did not pass in some run; ``--list`` prints every test, ``--json FILE`` writes the
outcomes per test and seed.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import importlib.metadata
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = ROOT / "benchmarks" / ".venvs" / "reference-sources"

# --------------------------------------------------------------------- the suites

#: test files of each reference's public API (paths inside the test sources), the
#: sources' own modules that the tests use as fixtures, and the synthrisk extras that the
#: compat layer needs for them
SUITES: dict[str, dict[str, Any]] = {
    "sdmetrics": {
        "package": "sdmetrics",
        "compat": "synthrisk.compat.sdmetrics",
        "extras": (),
        "fixture_modules": {"sdmetrics.demos": "sdmetrics/demos.py"},
        "files": [
            "tests/integration/single_table/privacy/test_privacy.py",
            "tests/integration/single_table/privacy/test_disclosure_protection.py",
            "tests/integration/single_table/privacy/test_dcr_baseline_protection.py",
            "tests/integration/single_table/privacy/test_dcr_overfitting_protection.py",
            "tests/unit/single_table/privacy/test_cap.py",
            "tests/unit/single_table/test_new_row_synthesis.py",
        ],
    },
    "anonymeter": {
        "package": "anonymeter",
        "compat": "synthrisk.compat.anonymeter",
        "extras": ("polars",),
        "fixture_modules": {},
        "files": [
            "tests/test_singling_out_evaluator.py",
            "tests/test_linkability_evaluator.py",
            "tests/test_inference_evaluator.py",
            "tests/test_sklearn_inference_model.py",
            "tests/test_confidence.py",
        ],
    },
    "apt": {
        "package": "apt",
        "compat": "synthrisk.compat.apt",
        # the assessment manager's plots (matplotlib) and reports
        "extras": ("report",),
        "fixture_modules": {
            "apt.utils.dataset_utils": "apt/utils/dataset_utils.py",
            "apt.anonymization": "apt/anonymization/__init__.py",
            "apt.anonymization.anonymizer": "apt/anonymization/anonymizer.py",
        },
        "files": [
            "tests/test_data_assessment_short_test.py",
            "tests/test_data_assessment.py",
        ],
    },
}


@dataclasses.dataclass(frozen=True)
class Release:
    """Where the tests of one reference release come from.

    ``same_in_both`` lists files (or folders, ending in ``/``) that must hold the same
    bytes in the sdist and in the tag's archive: they tie the archive to the release.
    """

    project: str  # the PyPI name
    distribution: str  # the installed distribution (``--reference``)
    version: str
    sdist_sha256: str
    version_file: str  # path inside the sources that states the version
    version_regex: str  # its first group is the version
    archives: tuple[str, ...] = ()  # the tag's archive, tried in order
    from_archive: tuple[str, ...] = ()  # what the sdist lacks (folders end in "/")
    same_in_both: tuple[str, ...] = ()


_PY_VERSION = r"""__version__ = ['"]([^'"]+)['"]"""
#: the releases the compat layers target (sha256 of the sdists as published on PyPI)
RELEASES: dict[str, Release] = {
    "sdmetrics": Release(
        project="sdmetrics",
        distribution="sdmetrics",
        version="0.32.0",
        sdist_sha256="a5ace74bf6659337d479de1ee7b0cec5834cab64ebbe5901d1724380169559ef",
        version_file="sdmetrics/__init__.py",
        version_regex=_PY_VERSION,
        archives=(
            "https://codeload.github.com/sdv-dev/SDMetrics/tar.gz/refs/tags/v0.32.0",
        ),
        from_archive=("tests/",),
        same_in_both=(
            "sdmetrics/__init__.py",
            "sdmetrics/demos.py",
            "sdmetrics/single_table/privacy/",
            "sdmetrics/single_table/new_row_synthesis.py",
        ),
    ),
    "anonymeter": Release(
        project="anonymeter",
        distribution="anonymeter",
        version="1.1.0",
        sdist_sha256="da5bc0b33cefcd69ae84659e312639cc7410a66d8b55c3598c997fbc197b5984",
        version_file="pyproject.toml",
        version_regex=r'(?m)^version = "([^"]+)"',
        # the repository's tags are v0.0.2, v1.0.0, ...
        archives=(
            "https://codeload.github.com/statice/anonymeter/tar.gz/refs/tags/v1.1.0",
            "https://codeload.github.com/statice/anonymeter/tar.gz/refs/tags/1.1.0",
        ),
        from_archive=("tests/fixtures.py", "tests/__init__.py", "tests/datasets/"),
        same_in_both=("pyproject.toml", "src/anonymeter/", "tests/"),
    ),
    # the sdist holds the tests and the fixture modules (the same bytes as tag v0.2.1)
    "apt": Release(
        project="ai-privacy-toolkit",
        distribution="ai-privacy-toolkit",
        version="0.2.1",
        sdist_sha256="83d33baaeff01e155a509a5a2e5810e944efcda60781d4d6dd48180745c94c1c",
        version_file="apt/__init__.py",
        version_regex=_PY_VERSION,
    ),
}

# ------------------------------------------------------------------- environment

#: import name -> pip requirement, for every suite
BASE_NEEDS = {
    "pytest": "pytest>=8",
    "numpy": "numpy>=1.25",
    "pandas": "pandas>=2.0",
    "sklearn": "scikit-learn>=1.3",
    "scipy": "scipy>=1.10",
}
#: synthrisk's extras (pyproject.toml's optional dependencies): import name -> requirement
EXTRAS: dict[str, dict[str, str]] = {
    "report": {"jinja2": "jinja2>=3.1", "matplotlib": "matplotlib>=3.7"},
    "polars": {"polars": "polars>=0.20"},
}


_PROBE = """
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = getattr(importlib.import_module(name), "__file__", None) or "?"
    except ImportError:
        found[name] = None
print(json.dumps(found))
"""


def probe(modules: Sequence[str]) -> dict[str, str | None]:
    """Where a fresh interpreter (as pytest will be) imports each module from (None: it cannot)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        sys.exit(f"could not check this Python's packages:\n{proc.stderr[-2000:]}")
    found: dict[str, str | None] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def missing_requirements(
    library: str, *, reference: bool, importable: Callable[[str], bool]
) -> list[str]:
    """The ``pip install`` arguments for what the test run of ``library`` lacks.

    synthrisk counts as missing when its compat module does not import (synthrisk absent,
    or one of its own dependencies); it is then installed from this repository, editable,
    with the suite's extras.
    """
    suite = SUITES[library]
    needs = dict(BASE_NEEDS)
    if not reference:
        for extra in suite["extras"]:
            needs.update(EXTRAS[extra])
    args = [req for module, req in needs.items() if not importable(module)]
    if not reference and not importable(suite["compat"]):
        extras = ",".join(suite["extras"])
        args += ["-e", f"{ROOT}[{extras}]" if extras else str(ROOT)]
    return args


def _modules(library: str, *, reference: bool) -> list[str]:
    suite = SUITES[library]
    names = [*BASE_NEEDS, *(m for extra in suite["extras"] for m in EXTRAS[extra])]
    return names if reference else [*names, suite["compat"], "synthrisk"]


def ensure_environment(library: str, *, reference: bool, install: bool) -> None:
    """Install (or, with ``install=False``, name) what the test run lacks; exit on failure."""
    found = probe(_modules(library, reference=reference))
    missing = missing_requirements(
        library, reference=reference, importable=lambda m: found.get(m) is not None
    )
    if missing:
        command = [sys.executable, "-m", "pip", "install", *missing]
        if not install:
            sys.exit(
                f"this Python lacks what the {library} tests need; install it with\n  "
                + " ".join(command)
            )
        print("installing:", " ".join(command), flush=True)
        if subprocess.run(command, check=False).returncode != 0:
            sys.exit(
                "pip could not install into this Python; run the script with "
                "--venv benchmarks/.venvs/reference-tests to use a dedicated environment"
            )
        found = probe(_modules(library, reference=reference))
        still = missing_requirements(
            library, reference=reference, importable=lambda m: found.get(m) is not None
        )
        if still:
            sys.exit(f"still missing after pip install: {' '.join(still)}")
    if reference:
        release = RELEASES[library]
        try:
            installed = importlib.metadata.version(release.distribution)
        except importlib.metadata.PackageNotFoundError:
            sys.exit(
                f"--reference runs the installed {release.project}; this Python has none "
                f"(install {release.project}=={release.version} in it)"
            )
        note = (
            ""
            if installed == release.version
            else f" (the target is {release.version})"
        )
        print(f"reference: {release.project} {installed}{note}")
        return
    origin = Path(found["synthrisk"] or "").resolve()
    where = (
        f"{origin.parent.relative_to(ROOT)}/"
        if origin.is_relative_to(ROOT)
        else f"{origin.parent} (not this repository's src/)"
    )
    print(f"synthrisk from {where}")


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def without_option(argv: Sequence[str], option: str) -> list[str]:
    """``argv`` less ``option VALUE`` / ``option=VALUE``."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(option + "="):
            out.append(arg)
    return out


def rerun_in_venv(venv: Path, argv: Sequence[str]) -> int:
    """Create ``venv`` if needed and run this script with its Python, less ``--venv``."""
    python = venv_python(venv)
    if not python.exists():
        print(f"creating a virtual environment in {venv}", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    command = [
        str(python),
        str(Path(__file__).resolve()),
        *without_option(argv, "--venv"),
    ]
    return subprocess.run(command, check=False).returncode


# ------------------------------------------------------------------- test sources


class FetchError(Exception):
    """The test sources could not be fetched or did not pass their checks."""


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def extract_tar(archive: Path, into: Path) -> None:
    """Extract the regular files of a tar archive, less its top-level folder.

    Links, devices and members whose path is absolute or climbs out with ``..`` are
    refused (an archive from the network is not trusted).
    """
    with tarfile.open(archive, "r:*") as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        odd = [m.name for m in tar.getmembers() if not (m.isfile() or m.isdir())]
        if odd:
            msg = f"{archive.name}: holds links or special files ({', '.join(odd[:3])})"
            raise FetchError(msg)
        tops = {m.name.split("/", 1)[0] for m in members}
        if len(tops) != 1:
            msg = f"{archive.name}: expected one top-level folder, found {sorted(tops)[:5]}"
            raise FetchError(msg)
        for member in members:
            parts = Path(member.name).parts[1:]
            if member.name.startswith("/") or ".." in parts:
                msg = f"{archive.name}: unsafe member path {member.name!r}"
                raise FetchError(msg)
            if not parts or member.isdir():
                continue
            target = into.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                continue
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out)


def stated_version(tree: Path, release: Release) -> str | None:
    """The version that the sources' version file states (None if it states none)."""
    path = tree / release.version_file
    if not path.is_file():
        return None
    match = re.search(release.version_regex, path.read_text(encoding="utf-8"))
    return match.group(1) if match else None


def _check_version(tree: Path, release: Release, what: str) -> None:
    found = stated_version(tree, release)
    if found != release.version:
        msg = (
            f"{what}: {release.version_file} states version {found!r}, "
            f"expected {release.version!r}"
        )
        raise FetchError(msg)


def _files_under(tree: Path, path: str) -> list[str]:
    """Relative paths of the files at ``path`` (a folder when it ends in ``/``)."""
    if not path.endswith("/"):
        return [path] if (tree / path).is_file() else []
    return sorted(
        p.relative_to(tree).as_posix() for p in (tree / path).rglob("*") if p.is_file()
    )


def _check_same(sdist: Path, archive: Path, paths: Iterable[str], what: str) -> None:
    for path in paths:
        shared = sorted(
            set(_files_under(sdist, path)) & set(_files_under(archive, path))
        )
        if not shared:
            msg = f"{what}: neither holds {path!r} in both the sdist and the archive"
            raise FetchError(msg)
        for name in shared:
            if (sdist / name).read_bytes() != (archive / name).read_bytes():
                msg = f"{what}: {name} differs from the release's sdist"
                raise FetchError(msg)


def tree_files(tree: Path) -> dict[str, str]:
    """sha256 of every file under ``tree``, by relative path."""
    return {
        p.relative_to(tree).as_posix(): sha256_file(p)
        for p in sorted(tree.rglob("*"))
        if p.is_file()
    }


def assemble_release(
    release: Release,
    sdist: Path,
    archive: Path | None,
    dest: Path,
    *,
    archive_source: str = "",
) -> dict[str, Any]:
    """Unpack the sdist into ``dest/tree``, add what it lacks from the archive, check both.

    Writes ``dest/SOURCES.json`` (the sources and the sha256 of every file) and returns
    it. ``dest`` is replaced only once everything has passed its checks.
    """
    digest = sha256_file(sdist)
    if digest != release.sdist_sha256:
        msg = (
            f"{sdist.name}: sha256 {digest} is not the published "
            f"{release.project} {release.version} sdist's ({release.sdist_sha256})"
        )
        raise FetchError(msg)
    work = dest.with_name(dest.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    tree = work / "tree"
    tree.mkdir(parents=True)
    try:
        extract_tar(sdist, tree)
        _check_version(tree, release, sdist.name)
        sources: list[dict[str, str]] = [
            {"kind": "sdist", "file": sdist.name, "sha256": digest}
        ]
        if release.from_archive:
            if archive is None:
                msg = (
                    f"{release.project} {release.version}: the tag's archive is needed"
                )
                raise FetchError(msg)
            what = archive_source or archive.name
            with tempfile.TemporaryDirectory(prefix="reference-archive-") as tmp:
                unpacked = Path(tmp)
                extract_tar(archive, unpacked)
                _check_version(unpacked, release, what)
                _check_same(tree, unpacked, release.same_in_both, what)
                for path in release.from_archive:
                    if not _files_under(unpacked, path):
                        msg = f"{what}: has no {path!r}"
                        raise FetchError(msg)
                    target = tree / path
                    if path.endswith("/"):
                        shutil.rmtree(target, ignore_errors=True)
                        shutil.copytree(unpacked / path, target)
                    else:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(unpacked / path, target)
            sources.append(
                {"kind": "archive", "source": what, "sha256": sha256_file(archive)}
            )
        manifest = {
            "project": release.project,
            "version": release.version,
            "sources": sources,
            "files": tree_files(tree),
        }
        (work / "SOURCES.json").write_text(json.dumps(manifest, indent=1) + "\n")
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(dest, ignore_errors=True)
    work.rename(dest)
    return manifest


def verify_cache(dest: Path) -> list[str]:
    """What is wrong with a cached ``dest`` (empty when every file has its recorded sha256)."""
    manifest_path = dest / "SOURCES.json"
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing"]
    recorded = json.loads(manifest_path.read_text())["files"]
    found = tree_files(dest / "tree")
    problems = [f"missing: {name}" for name in sorted(set(recorded) - set(found))]
    problems += [
        f"not in the release: {name}" for name in sorted(set(found) - set(recorded))
    ]
    problems += [
        f"changed: {name}"
        for name in sorted(set(found) & set(recorded))
        if found[name] != recorded[name]
    ]
    return problems


def download_sdist(release: Release, into: Path) -> Path:
    """``pip download`` the release's sdist (pip's index settings apply)."""
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        "--dest", str(into), f"{release.project}=={release.version}",
    ]  # fmt: skip
    print("fetching: pip", " ".join(command[3:]), flush=True)
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    found = sorted(into.glob("*.tar.gz"))
    if proc.returncode != 0 or not found:
        msg = f"pip could not download the {release.project} {release.version} sdist:\n{proc.stderr[-2000:]}"
        raise FetchError(msg)
    return found[0]


def download_archive(release: Release, into: Path) -> tuple[Path, str]:
    """Download the first of the release's tag archives that exists."""
    errors = []
    for url in release.archives:
        print("fetching:", url, flush=True)
        target = into / "archive.tar.gz"
        try:
            with (
                urllib.request.urlopen(url, timeout=120) as response,
                target.open("wb") as out,
            ):
                shutil.copyfileobj(response, out)
        except (urllib.error.URLError, OSError) as error:
            errors.append(f"{url}: {error}")
            continue
        return target, url
    msg = (
        f"could not download the {release.project} {release.version} tag's archive "
        f"({'; '.join(errors)}). Download it elsewhere and pass it with --archive FILE, "
        "or pass a checkout of the release as PATH."
    )
    raise FetchError(msg)


def fetch_release(
    library: str, cache: Path, *, archive: Path | None = None, refresh: bool = False
) -> Path:
    """The test sources of the release that ``library``'s compat layer targets (cached)."""
    release = RELEASES[library]
    dest = cache / f"{library}-{release.version}"
    if not refresh and dest.exists():
        problems = verify_cache(dest)
        if not problems:
            print(f"test sources: {_shown(dest)} (cached, every file checked)")
            return dest / "tree"
        print(
            f"test sources: {_shown(dest)} fails its check ({problems[0]}); fetching again"
        )
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reference-fetch-") as tmp:
        sdist = download_sdist(release, Path(tmp))
        archive_file, source = None, ""
        if release.from_archive:
            if archive is not None:
                archive_file, source = archive, archive.name
            else:
                archive_file, source = download_archive(release, Path(tmp))
        manifest = assemble_release(
            release, sdist, archive_file, dest, archive_source=source
        )
    for item in manifest["sources"]:
        print(
            f"  {item['kind']}: {item.get('file') or item.get('source')} sha256 {item['sha256']}"
        )
    print(f"test sources: {_shown(dest)} ({len(manifest['files'])} files, checked)")
    return dest / "tree"


def _shown(path: Path) -> str:
    """``path`` relative to the repository where it lies inside it."""
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def tests_digest(tree: Path, library: str) -> str:
    """sha256 over the test folder and the fixture modules: which tests ran."""
    suite = SUITES[library]
    names = _files_under(tree, "tests/") + [
        p for p in suite["fixture_modules"].values() if (tree / p).is_file()
    ]
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{sha256_file(tree / name)}  {name}\n".encode())
    return digest.hexdigest()


# ------------------------------------------------------------------------ conftest

#: the id that the runner's seed parameter adds to every test
SEED_ID = "refseed"

CONFTEST = '''
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import random
import sys
import types
import zlib

import numpy as np
import pytest

PACKAGE = {package!r}
COMPAT = {compat!r}
CHECKOUT = {checkout!r}
FIXTURE_MODULES = {fixture_modules!r}
SEEDS = {seeds!r}
SEED_ID = {seed_id!r}


# ---- seeds: every test runs once per base seed, with random and numpy's global
# generator seeded from the base seed and the test's id
def pytest_generate_tests(metafunc):
    if "_reference_seed" in metafunc.fixturenames:
        metafunc.parametrize(
            "_reference_seed", SEEDS, indirect=True, ids=[f"{{SEED_ID}}{{s}}" for s in SEEDS]
        )


@pytest.fixture(autouse=True)
def _reference_seed(request):
    base = getattr(request, "param", SEEDS[0])
    key = request.node.nodeid.replace(f"{{SEED_ID}}{{base}}", "")
    seed = zlib.crc32(f"{{base}}:{{key}}".encode())
    random.seed(seed)
    np.random.seed(seed)
    return base


_default_rng = np.random.default_rng


def _seeded_default_rng(seed=None):
    """An unseeded ``default_rng()`` takes its seed from numpy's seeded global generator."""
    if seed is None:
        seed = int(np.random.randint(0, 2**31 - 1))
    return _default_rng(seed)


np.random.default_rng = _seeded_default_rng


# ---- shims for 2023 test code on current libraries (not part of any API under test)
import sklearn.preprocessing as _preprocessing

_OneHotEncoder = _preprocessing.OneHotEncoder


def _one_hot_encoder(*args, sparse=None, **kwargs):
    """scikit-learn < 1.2's ``sparse=`` is ``sparse_output=`` since (removed in 1.4)."""
    if sparse is not None:
        kwargs.setdefault("sparse_output", sparse)
    return _OneHotEncoder(*args, **kwargs)


_preprocessing.OneHotEncoder = _one_hot_encoder

try:
    import six  # noqa: F401
except ImportError:  # the data loaders import it for a download that never happens
    def _no_download(url, *args, **kwargs):
        raise RuntimeError(f"the reference-test runner provides the data files; refusing to download {{url}}")

    for _name in ("six", "six.moves", "six.moves.urllib", "six.moves.urllib.request"):
        sys.modules[_name] = types.ModuleType(_name)
    sys.modules["six.moves.urllib.request"].urlretrieve = _no_download


# ---- the import hook: reference modules answered by the compat module
if COMPAT is not None:
    COMPAT_MODULE = importlib.import_module(COMPAT)

    class _Missing:
        """A name the compat layer does not offer: importing works, using it fails the test."""

        def __init__(self, name):
            self._name = name

        def _fail(self, *args, **kwargs):
            raise AttributeError(f"synthrisk's compat layer has no {{self._name!r}}")

        __call__ = _fail

        def __getattr__(self, attr):
            if attr.startswith("__"):
                raise AttributeError(attr)
            self._fail()

    class _Alias(types.ModuleType):
        """A reference module answered by the compat module."""

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            try:
                return getattr(COMPAT_MODULE, name)
            except AttributeError:
                return _Missing(f"{{self.__name__}}.{{name}}")

    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname in FIXTURE_MODULES:  # the reference's own fixture code
                location = os.path.join(CHECKOUT, FIXTURE_MODULES[fullname])
                package = [os.path.dirname(location)] if location.endswith("__init__.py") else None
                return importlib.util.spec_from_file_location(
                    fullname, location, submodule_search_locations=package
                )
            if fullname == PACKAGE or fullname.startswith(PACKAGE + "."):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            module = _Alias(spec.name)
            module.__path__ = []
            return module

        def exec_module(self, module):
            return None

    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _Finder())
'''

# ----------------------------------------------------------------- APT's datasets

#: UCI Adult's columns, in the order of ``adult.data``
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "label",
)  # fmt: skip
_EDUCATION = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
)  # fmt: skip
_ADULT_CATEGORIES = {
    "workclass": ("Private", "Self-emp-not-inc", "Local-gov", "State-gov", "?", "Federal-gov"),
    "marital-status": ("Married-civ-spouse", "Never-married", "Divorced", "Separated", "Widowed"),
    "occupation": (
        "Prof-specialty", "Craft-repair", "Exec-managerial", "Adm-clerical", "Sales",
        "Other-service", "Machine-op-inspct", "?", "Transport-moving",
    ),
    "relationship": ("Husband", "Not-in-family", "Own-child", "Unmarried", "Wife"),
    "race": ("White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"),
    "sex": ("Male", "Female"),
    "native-country": ("United-States", "Mexico", "?", "Philippines", "Germany", "Canada", "India"),
}  # fmt: skip
#: Nursery's attributes and their values (UCI ``nursery.names``)
NURSERY = {
    "parents": ("usual", "pretentious", "great_pret"),
    "has_nurs": ("proper", "less_proper", "improper", "critical", "very_crit"),
    "form": ("complete", "completed", "incomplete", "foster"),
    "children": ("1", "2", "3", "more"),
    "housing": ("convenient", "less_conv", "critical"),
    "finance": ("convenient", "inconv"),
    "social": ("nonprob", "slightly_prob", "problematic"),
    "health": ("recommended", "priority", "not_recom"),
}


def _adult_stand_in(n_rows: int, seed: int) -> list[list[str]]:
    """Rows with Adult's columns and categories (a seeded stand-in, not the real data)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_rows):
        education = int(rng.integers(3, len(_EDUCATION)))
        married = rng.random() < 0.5
        row = {
            "age": int(rng.integers(17, 80)),
            "fnlwgt": int(rng.integers(20_000, 500_000)),
            "education": _EDUCATION[education],
            "education-num": education + 1,
            "capital-gain": int(
                rng.choice([0, 0, 0, 0, 0, 0, 0, 0, 2174, 7688, 15024])
            ),
            "capital-loss": int(rng.choice([0, 0, 0, 0, 0, 0, 0, 0, 0, 1902])),
            "hours-per-week": int(np.clip(rng.normal(40, 11), 1, 99)),
        }
        for column, values in _ADULT_CATEGORIES.items():
            row[column] = str(rng.choice(values))
        if married:
            row["marital-status"] = "Married-civ-spouse"
            row["relationship"] = "Husband" if row["sex"] == "Male" else "Wife"
        rich = education >= 12 or (married and rng.random() < 0.3)
        row["label"] = ">50K" if rich and rng.random() < 0.7 else "<=50K"
        rows.append([str(row[c]) for c in ADULT_COLUMNS])
    return rows


def _read_adult(path: Path) -> list[list[str]]:
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    if len(header) != len(ADULT_COLUMNS):
        sys.exit(
            f"{path}: Adult needs the {len(ADULT_COLUMNS)} UCI columns in UCI order "
            f"({', '.join(ADULT_COLUMNS)}) and a header row; got {len(header)} columns."
        )
    return [[value.strip() for value in row] for row in body if row]


def _nursery_label(values: tuple[str, ...]) -> str:
    """A deterministic stand-in for Nursery's label (the real one comes from an expert model)."""
    if values[7] == "not_recom":
        return "not_recom"
    points = sum(
        NURSERY[name].index(value) for name, value in zip(NURSERY, values, strict=True)
    )
    return "very_recom" if points <= 4 else "priority" if points <= 10 else "spec_prior"


def write_apt_data(root: Path, adult: tuple[Path, Path] | None, seed: int = 0) -> str:
    """Write the files APT's loaders read (``datasets/adult/{train,test}``, ``datasets/nursery/data``)."""
    (root / "datasets" / "adult").mkdir(parents=True)
    (root / "datasets" / "nursery").mkdir(parents=True)
    if adult is None:
        train, test = _adult_stand_in(3000, seed), _adult_stand_in(1000, seed + 1)
        source = "a seeded stand-in for Adult (3,000 + 1,000 rows)"
    else:
        train, test = _read_adult(adult[0]), _read_adult(adult[1])
        source = f"Adult from {adult[0].name} ({len(train)} rows) and {adult[1].name} ({len(test)} rows)"
    (root / "datasets" / "adult" / "train").write_text(
        "".join(", ".join(row) + "\n" for row in train)
    )
    # adult.test starts with a line that the loader drops
    (root / "datasets" / "adult" / "test").write_text(
        "|1x3 Cross validator\n" + "".join(", ".join(row) + "\n" for row in test)
    )
    nursery = [
        [*values, _nursery_label(values)]
        for values in itertools.product(*NURSERY.values())
    ]
    (root / "datasets" / "nursery" / "data").write_text(
        "".join(",".join(row) + "\n" for row in nursery)
    )
    return source + f"; Nursery's {len(nursery)} attribute combinations"


# ------------------------------------------------------------------------- runner


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One test in one run."""

    file: str
    test: str  # ``Class::name[params]``, less the seed's id
    seed: int
    outcome: str  # passed / failed / error
    message: str = ""


def split_seed(name: str) -> tuple[str, int | None]:
    """A test's name less the runner's seed id, and that seed (None without one)."""
    match = re.fullmatch(r"(?P<head>.*?)\[(?P<ids>.*)\]", name, flags=re.DOTALL)
    if match is None:
        return name, None
    head, ids = match["head"], match["ids"]
    found = list(re.finditer(rf"(?:^|-){SEED_ID}(\d+)(?=-|$)", ids))
    if not found:
        return name, None
    last = found[-1]
    before, after = ids[: last.start()], ids[last.end() :]
    rest = before + (after if before else after.removeprefix("-"))
    return (f"{head}[{rest}]" if rest else head), int(last.group(1))


def parse_junit(
    junit: Path, files: Sequence[str], seeds: Sequence[int]
) -> list[Outcome]:
    """The outcomes in a JUnit XML report (skipped tests left out).

    A test without the seed id (a file that failed to import) counts once per seed.
    """
    outcomes: list[Outcome] = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        classname = case.get("classname", "")
        path = classname.replace(".", "/")
        name = next((f for f in files if path.startswith(f[:-3])), None)
        if name is None:  # collection error of a whole file
            name = next(
                (
                    f
                    for f in files
                    if f[:-3].replace("/", ".")
                    in classname + "." + case.get("name", "")
                ),
                files[0],
            )
        if case.find("failure") is not None:
            outcome, detail = "failed", case.find("failure")
        elif case.find("error") is not None:
            outcome, detail = "error", case.find("error")
        elif case.find("skipped") is not None:
            continue
        else:
            outcome, detail = "passed", None
        message = (
            ""
            if detail is None
            else re.sub(r"\s+", " ", detail.get("message", ""))[:200]
        )
        test, seed = split_seed(case.get("name", ""))
        inner = classname[len(name[:-3].replace("/", ".")) :].lstrip(".")
        test = f"{inner}::{test}" if inner else test
        for s in seeds if seed is None else [seed]:
            outcomes.append(Outcome(name, test, s, outcome, message))
    return outcomes


def run_suite(
    library: str,
    tree: Path,
    *,
    seeds: Sequence[int],
    reference: bool = False,
    adult: tuple[Path, Path] | None = None,
    keyword: str | None = None,
    one_session: bool = False,
) -> tuple[list[Outcome], list[str]]:
    """Run the suite's test files once per seed; the outcomes and the files run.

    Each seed gets its own pytest session, so that run ``k`` of ``--repeat`` is the run
    of ``--seed k``; with ``one_session`` all seeds run in one session (faster, but a test
    module's own state, such as a generator it creates at import, carries over from one
    seed's tests to the next).
    """
    suite = SUITES[library]
    with tempfile.TemporaryDirectory(prefix=f"synthrisk-{library}-tests-") as tmp:
        root = Path(tmp)
        shutil.copytree(tree / "tests", root / "tests")
        # the repositories have it; the sdists leave it out
        (root / "tests" / "__init__.py").touch()
        (root / "pytest.ini").write_text("[pytest]\n")
        if library == "apt":
            print("data:", write_apt_data(root, adult))
        files = [f for f in suite["files"] if (root / f).exists()]
        for absent in sorted(set(suite["files"]) - set(files)):
            print(f"not in these test sources: {absent}")
        if not files:
            sys.exit("none of the suite's test files is in these test sources")
        sessions = [list(seeds)] if one_session else [[seed] for seed in seeds]
        outcomes: list[Outcome] = []
        for number, session in enumerate(sessions, 1):
            (root / "conftest.py").write_text(
                CONFTEST.format(
                    package=suite["package"],
                    compat=None if reference else suite["compat"],
                    checkout=str(tree),
                    fixture_modules=suite["fixture_modules"],
                    seeds=session,
                    seed_id=SEED_ID,
                )
            )
            junit = root / f"junit-{number}.xml"
            cmd = [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
                "--import-mode=prepend", f"--junitxml={junit}", "-W", "ignore::DeprecationWarning",
                *(["-k", keyword] if keyword else []), *files,
            ]  # fmt: skip
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            start = time.perf_counter()
            proc = subprocess.run(
                cmd, cwd=root, capture_output=True, text=True, check=False, env=env
            )
            last = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
            label = (
                f"seed {session[0]}"
                if len(session) == 1
                else f"seeds {session[0]}–{session[-1]}"
            )
            print(
                f"pytest ({label}): {last[0]} ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
            if not junit.exists():
                sys.exit(proc.stdout[-3000:] + proc.stderr[-3000:])
            outcomes += parse_junit(junit, files, session)
        return outcomes, files


# ------------------------------------------------------------------------ report


@dataclasses.dataclass
class Summary:
    """The outcomes of several runs, per test and per run."""

    seeds: list[int]
    files: list[str]
    #: (file, test) -> seed -> outcome
    tests: dict[tuple[str, str], dict[int, Outcome]]

    def counts(self, seed: int, file: str | None = None) -> tuple[int, int, int]:
        """Passed, failed and errors in the run with ``seed`` (of one file, or all)."""
        tally = {"passed": 0, "failed": 0, "error": 0}
        for (name, _), runs in self.tests.items():
            if (file is None or name == file) and seed in runs:
                tally[runs[seed].outcome] += 1
        return tally["passed"], tally["failed"], tally["error"]

    def spread(self, file: str | None = None) -> list[tuple[int, int]]:
        """(min, max) over the runs of passed, failed and errors."""
        per_run = [self.counts(seed, file) for seed in self.seeds]
        return [
            (min(c[i] for c in per_run), max(c[i] for c in per_run)) for i in range(3)
        ]

    def n_tests(self, file: str | None = None) -> int:
        return sum(1 for name, _ in self.tests if file is None or name == file)

    def not_always_passed(self) -> list[tuple[str, str, int, Outcome]]:
        """(file, test, runs passed, first outcome that was not a pass)."""
        out = []
        for (file, test), runs in self.tests.items():
            bad = [
                runs[s] for s in self.seeds if s in runs and runs[s].outcome != "passed"
            ]
            if bad:
                passed = sum(1 for o in runs.values() if o.outcome == "passed")
                out.append((file, test, passed, bad[0]))
        return out


def summarize(
    outcomes: Iterable[Outcome], seeds: Sequence[int], files: Sequence[str]
) -> Summary:
    tests: dict[tuple[str, str], dict[int, Outcome]] = {}
    for o in outcomes:
        tests.setdefault((o.file, o.test), {})[o.seed] = o
    return Summary(list(seeds), list(files), tests)


def _span(pair: tuple[int, int]) -> str:
    low, high = pair
    return str(low) if low == high else f"{low}–{high}"


def report_lines(
    summary: Summary, library: str, *, every_test: bool = False
) -> list[str]:
    """The Markdown table per file, and the tests that did not pass in every run."""
    runs = len(summary.seeds)
    lines = [
        f"| {library} test file | tests | passed | failed | errors |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for file in [*summary.files, None]:
        if file is not None and summary.n_tests(file) == 0:  # all deselected (-k)
            continue
        p, f, e = (_span(s) for s in summary.spread(file))
        name = "total" if file is None else file
        lines.append(f"| {name} | {summary.n_tests(file)} | {p} | {f} | {e} |")
    if runs > 1:
        totals = [summary.counts(seed)[0] for seed in summary.seeds]
        lines.append(
            f"\n{runs} runs (base seeds {summary.seeds[0]}–{summary.seeds[-1]}): "
            f"{_span((min(totals), max(totals)))} of {summary.n_tests()} passed; "
            f"passed per run: {', '.join(map(str, totals))}"
        )
    bad = summary.not_always_passed()
    if bad:
        lines.append(
            "\ntests that did not pass in every run:"
            if runs > 1
            else "\ntests that did not pass:"
        )
    for file, test, passed, first in bad:
        tally = f"passed {passed} of {runs}" if runs > 1 else first.outcome
        seed = f" (e.g. seed {first.seed})" if runs > 1 else ""
        lines.append(f"  {tally:16} {file}::{test}{seed}: {first.message}")
    if every_test:
        lines.append("\nevery test:")
        for (file, test), results in summary.tests.items():
            passed = sum(1 for o in results.values() if o.outcome == "passed")
            lines.append(f"  passed {passed} of {len(results)}  {file}::{test}")
    return lines


def summary_json(summary: Summary, **context: Any) -> dict[str, Any]:
    return {
        **context,
        "seeds": summary.seeds,
        "passed_per_run": [summary.counts(seed)[0] for seed in summary.seeds],
        "tests": [
            {
                "file": file,
                "test": test,
                "runs": len(results),
                "passed": sum(1 for o in results.values() if o.outcome == "passed"),
                "outcomes": {str(s): o.outcome for s, o in sorted(results.items())},
                "messages": sorted({o.message for o in results.values() if o.message}),
            }
            for (file, test), results in summary.tests.items()
        ],
    }


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").splitlines()[0], allow_abbrev=False
    )
    parser.add_argument("library", choices=sorted(SUITES))
    parser.add_argument(
        "checkout",
        type=Path,
        nargs="?",
        help="a checkout or unpacked sdist with tests/ (default: fetch the target release's)",
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run with N base seeds (default 1)",
    )
    parser.add_argument(
        "--one-session",
        action="store_true",
        help="run the --repeat seeds in one pytest session (faster; module state carries over)",
    )
    parser.add_argument(
        "-k", dest="keyword", help="pytest's -k: only the tests it selects"
    )
    parser.add_argument(
        "--list", action="store_true", help="print every test's outcome"
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help="write the outcomes per test and seed"
    )
    parser.add_argument(
        "--reference",
        action="store_true",
        help="run against the installed reference library itself (no import hook)",
    )
    parser.add_argument(
        "--adult",
        nargs=2,
        type=Path,
        metavar=("TRAIN_CSV", "TEST_CSV"),
        help="apt: Adult's training and test rows (15 UCI columns, header row) instead of a stand-in",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="where fetched test sources are kept",
    )
    parser.add_argument(
        "--refresh", action="store_true", help="fetch the test sources again"
    )
    parser.add_argument(
        "--archive",
        type=Path,
        metavar="FILE",
        help="the tag's .tar.gz archive, downloaded elsewhere (where GitHub is out of reach)",
    )
    parser.add_argument(
        "--fetch-only",
        action="store_true",
        help="fetch and check the test sources, run nothing",
    )
    parser.add_argument(
        "--no-install", action="store_true", help="do not pip install what is missing"
    )
    parser.add_argument(
        "--venv",
        type=Path,
        metavar="DIR",
        help="run in a virtual environment there (created if missing)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat needs a positive number")
    if args.venv is not None:
        sys.exit(rerun_in_venv(args.venv.resolve(), argv))

    if not args.fetch_only:
        ensure_environment(
            args.library, reference=args.reference, install=not args.no_install
        )
    release = RELEASES[args.library]
    try:
        if args.checkout is None:
            tree = fetch_release(
                args.library,
                args.cache.resolve(),
                archive=args.archive,
                refresh=args.refresh,
            )
        else:
            tree = args.checkout.resolve()
            if not (tree / "tests").is_dir():
                sys.exit(f"{tree} has no tests/ folder")
            found = stated_version(tree, release)
            note = (
                ""
                if found == release.version
                else f"; the compat layer targets {release.version}"
            )
            print(f"test sources: {tree} (states version {found or 'none'}{note})")
    except FetchError as error:
        sys.exit(f"test sources: {error}")
    digest = tests_digest(tree, args.library)
    print(f"tests sha256: {digest[:16]}")
    if args.fetch_only:
        return
    seeds = list(range(args.seed, args.seed + args.repeat))
    outcomes, files = run_suite(
        args.library,
        tree,
        seeds=seeds,
        reference=args.reference,
        adult=None
        if args.adult is None
        else (args.adult[0].resolve(), args.adult[1].resolve()),
        keyword=args.keyword,
        one_session=args.one_session,
    )
    summary = summarize(outcomes, seeds, files)
    print("\n".join(report_lines(summary, args.library, every_test=args.list)))
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                summary_json(
                    summary,
                    library=args.library,
                    reference=args.reference,
                    tests_sha256=digest,
                ),
                indent=1,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
