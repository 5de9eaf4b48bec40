# SPDX-License-Identifier: BSD-3-Clause
"""Run a reference library's own test suite against synthrisk's drop-in compat layer.

    python scripts/run_reference_tests.py sdmetrics  PATH/TO/SDMetrics-checkout
    python scripts/run_reference_tests.py anonymeter PATH/TO/anonymeter-checkout
    python scripts/run_reference_tests.py apt        PATH/TO/ai-privacy-toolkit-checkout

``PATH`` is a checkout (or unpacked sdist) of the reference that you provide; its test
code is copied to a temporary directory and never enters this repository. An import hook
answers ``import sdmetrics...`` / ``anonymeter...`` / ``apt...`` with synthrisk's compat
modules (``synthrisk.compat.sdmetrics``, ``synthrisk.compat.anonymeter``,
``synthrisk.compat.apt``): a name the compat layer does not offer imports as a stand-in
that fails when used, so a test of a private helper fails on its own and the other tests
of its file still run. A reference's demo-data loader (``sdmetrics.demos``) is loaded from
the checkout itself: it is a test fixture, not an API under test. Only the test files listed below for each library
run — those that exercise the public API; the script prints, per file, how many tests
passed, failed or errored, and the total. ``--list`` prints the per-test outcomes.
Run with the Python of an environment where synthrisk is installed (with its ``ml`` and
``polars`` extras) and pytest.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

#: test files of each reference's public API (paths inside the checkout)
SUITES: dict[str, dict[str, object]] = {
    "sdmetrics": {
        "package": "sdmetrics",
        "compat": "synthrisk.compat.sdmetrics",
        # the reference's own demo-data loader (a test fixture, not an API under test)
        "data_modules": {"sdmetrics.demos": "sdmetrics/demos.py"},
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
COMPAT = importlib.import_module({compat!r})
CHECKOUT = {checkout!r}
DATA_MODULES = {data_modules!r}


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
            return getattr(COMPAT, name)
        except AttributeError:
            return _Missing(f"{{self.__name__}}.{{name}}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in DATA_MODULES:
            return importlib.util.spec_from_file_location(
                fullname, os.path.join(CHECKOUT, DATA_MODULES[fullname])
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


def run(library: str, checkout: Path, *, show: bool) -> dict[str, tuple[int, int, int]]:
    suite = SUITES[library]
    with tempfile.TemporaryDirectory(prefix=f"synthrisk-{library}-tests-") as tmp:
        root = Path(tmp)
        shutil.copytree(checkout / "tests", root / "tests")
        (root / "conftest.py").write_text(
            CONFTEST.format(
                package=suite["package"],
                compat=suite["compat"],
                checkout=str(checkout),
                data_modules=suite.get("data_modules", {}),
            )
        )
        (root / "pytest.ini").write_text("[pytest]\n")
        files = [f for f in suite["files"] if (root / f).exists()]  # type: ignore[attr-defined]
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", choices=sorted(SUITES))
    parser.add_argument(
        "checkout",
        type=Path,
        help="checkout or unpacked sdist of the reference (has tests/)",
    )
    parser.add_argument(
        "--list", action="store_true", help="print every test's outcome"
    )
    args = parser.parse_args()
    counts = run(args.library, args.checkout.resolve(), show=args.list)
    total = [0, 0, 0]
    print(f"| {args.library} test file | passed | failed | errors |")
    print("| --- | ---: | ---: | ---: |")
    for name, (p, f, e) in counts.items():
        print(f"| {name} | {p} | {f} | {e} |")
        total = [total[0] + p, total[1] + f, total[2] + e]
    print(f"| total | {total[0]} | {total[1]} | {total[2]} |")


if __name__ == "__main__":
    main()
