# SPDX-License-Identifier: BSD-3-Clause
"""Run a reference library's own test suite against synthrisk's drop-in compat layer.

    python scripts/run_reference_tests.py sdmetrics  PATH/TO/SDMetrics-checkout
    python scripts/run_reference_tests.py anonymeter PATH/TO/anonymeter-checkout
    python scripts/run_reference_tests.py apt        PATH/TO/ai-privacy-toolkit-checkout \
        [--adult TRAIN.csv TEST.csv]

``PATH`` is a checkout (or unpacked sdist) of the reference that you provide; its test
code is copied to a temporary directory and never enters this repository. An import hook
answers ``import sdmetrics...`` / ``anonymeter...`` / ``apt...`` with synthrisk's compat
modules (``synthrisk.compat.sdmetrics``, ``synthrisk.compat.anonymeter``,
``synthrisk.compat.apt``): a name the compat layer does not offer imports as a stand-in
that fails when used, so a test of a private helper fails on its own and the other tests
of its file still run.

The references' test fixtures are not APIs under test and are loaded from the checkout
itself: SDMetrics' demo-data loader (``sdmetrics.demos``), and ai-privacy-toolkit's data
loaders (``apt.utils.dataset_utils``) and k-anonymiser (``apt.anonymization``), which its
assessment tests use to make their data. Those loaders download UCI datasets; the script
writes the files they look for into the temporary directory first, so that nothing is
downloaded: Adult from the two CSV files given with ``--adult`` (the 15 UCI columns in
UCI order, with a header row, e.g. the training and control tables of Anonymeter's
example notebook), or else a seeded stand-in table with Adult's columns and categories;
Nursery as the full factorial design of its eight documented attributes (which is what
the UCI file holds) with a made-up, deterministic label. Two shims let the 2023 tests run
on current libraries: scikit-learn's ``OneHotEncoder(sparse=...)`` (renamed
``sparse_output`` in scikit-learn 1.2 and removed in 1.4) is mapped to the new name, and a
missing ``six`` package gets a stand-in whose ``urlretrieve`` refuses to download.

Only the test files listed below for each library run — those that exercise the public
API; the script prints, per file, how many tests passed, failed or errored, and the total.
``--list`` prints the per-test outcomes. ``--reference`` runs the same tests, with the
same data and shims, against the reference library itself (no import hook): run it with
the Python of an environment where the reference is installed, to see which tests fail
there too. Otherwise run it with the Python of an environment where synthrisk is
installed (with its ``ml`` and ``polars`` extras) and pytest.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

#: test files of each reference's public API (paths inside the checkout), and the
#: checkout's own modules that the tests use as fixtures
SUITES: dict[str, dict[str, Any]] = {
    "sdmetrics": {
        "package": "sdmetrics",
        "compat": "synthrisk.compat.sdmetrics",
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

CONFTEST = '''
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

PACKAGE = {package!r}
COMPAT = {compat!r}
CHECKOUT = {checkout!r}
FIXTURE_MODULES = {fixture_modules!r}


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


def run(
    library: str,
    checkout: Path,
    *,
    show: bool,
    reference: bool = False,
    adult: tuple[Path, Path] | None = None,
) -> dict[str, tuple[int, int, int]]:
    suite = SUITES[library]
    with tempfile.TemporaryDirectory(prefix=f"synthrisk-{library}-tests-") as tmp:
        root = Path(tmp)
        shutil.copytree(checkout / "tests", root / "tests")
        (root / "conftest.py").write_text(
            CONFTEST.format(
                package=suite["package"],
                compat=None if reference else suite["compat"],
                checkout=str(checkout),
                fixture_modules=suite["fixture_modules"],
            )
        )
        (root / "pytest.ini").write_text("[pytest]\n")
        if library == "apt":
            print("data:", write_apt_data(root, adult))
        files = [f for f in suite["files"] if (root / f).exists()]
        junit = root / "junit.xml"
        cmd = [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root),
            "--import-mode=prepend", f"--junitxml={junit}", "-W", "ignore::DeprecationWarning", *files,
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, cwd=root, capture_output=True, text=True, check=False
        )
        if show:
            print(proc.stdout[-3000:])
        if not junit.exists():
            sys.exit(proc.stdout[-3000:] + proc.stderr[-3000:])
        return _counts(junit, files, show=show)


def _counts(
    junit: Path, files: list[str], *, show: bool
) -> dict[str, tuple[int, int, int]]:
    counts: dict[str, list[int]] = {f: [0, 0, 0] for f in files}
    outcomes = []
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
            outcome, slot = "failed", 1
        elif case.find("error") is not None:
            outcome, slot = "error", 2
        elif case.find("skipped") is not None:
            continue
        else:
            outcome, slot = "passed", 0
        counts[name][slot] += 1
        detail = case.find("failure") if slot == 1 else case.find("error")
        message = (
            ""
            if detail is None
            else re.sub(r"\s+", " ", detail.get("message", ""))[:160]
        )
        outcomes.append(f"{outcome:7} {classname}::{case.get('name')} {message}")
    if show:
        print("\n".join(outcomes))
    return {f: (c[0], c[1], c[2]) for f, c in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("library", choices=sorted(SUITES))
    parser.add_argument(
        "checkout",
        type=Path,
        help="checkout or unpacked sdist of the reference (has tests/)",
    )
    parser.add_argument(
        "--list", action="store_true", help="print every test's outcome"
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
    args = parser.parse_args()
    counts = run(
        args.library,
        args.checkout.resolve(),
        show=args.list,
        reference=args.reference,
        adult=None
        if args.adult is None
        else (args.adult[0].resolve(), args.adult[1].resolve()),
    )
    total = [0, 0, 0]
    print(f"| {args.library} test file | passed | failed | errors |")
    print("| --- | ---: | ---: | ---: |")
    for name, (p, f, e) in counts.items():
        print(f"| {name} | {p} | {f} | {e} |")
        total = [total[0] + p, total[1] + f, total[2] + e]
    print(f"| total | {total[0]} | {total[1]} | {total[2]} |")


if __name__ == "__main__":
    main()
