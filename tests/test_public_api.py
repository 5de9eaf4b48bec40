# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import importlib

import synthrisk


def test_all_is_unique_sorted_and_importable() -> None:
    names = synthrisk.__all__
    assert len(names) == len(set(names))
    assert all(hasattr(synthrisk, name) for name in names)
    assert not any(name.startswith("_") for name in names if name != "__version__")


def test_metric_classes_are_listed_in_report_order() -> None:
    exported = [
        name
        for name in synthrisk.__all__
        if isinstance(getattr(synthrisk, name), type)
        and issubclass(getattr(synthrisk, name), synthrisk.Metric)
        and name != "Metric"
    ]
    registered = [cls.__name__ for cls in synthrisk.METRICS.values()]
    assert len(exported) > 30
    assert exported == [name for name in registered if name in exported]


def test_subpackages_export_what_they_list() -> None:
    for module in (
        "synthrisk.schema",
        "synthrisk.neighbors",
        "synthrisk.metrics",
        "synthrisk.io",
        "synthrisk.datasets",
        "synthrisk.audit",
    ):
        mod = importlib.import_module(module)
        assert all(hasattr(mod, name) for name in mod.__all__), module


def test_every_error_is_a_synthrisk_error_and_a_builtin() -> None:
    for name in ("InputError", "SchemaMismatchError", "ParameterError", "ConfigError"):
        cls = getattr(synthrisk, name)
        assert issubclass(cls, synthrisk.SynthriskError)
        assert issubclass(cls, ValueError)
    assert issubclass(synthrisk.MissingDependencyError, ImportError)


def test_report_module_does_not_import_metrics() -> None:
    # dependency direction: results never import metric code
    from pathlib import Path

    import synthrisk.results as results

    source = Path(results.__file__).read_text(encoding="utf-8")
    assert "synthrisk.metrics" not in source


def test_the_audit_subpackage_is_not_shadowed_by_its_function() -> None:
    # ``import synthrisk.audit.attacks as m`` walks attributes: ``synthrisk.audit`` must be
    # the subpackage even after ``import synthrisk``
    import subprocess
    import sys

    code = (
        "import synthrisk\n"
        "import synthrisk.audit.attacks as m\n"
        "import synthrisk.audit\n"
        "assert m.__name__ == 'synthrisk.audit.attacks'\n"
        "assert synthrisk.audit.audit is synthrisk.run_audit\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    import synthrisk.audit.attacks as attacks

    assert attacks.ATTACKS == synthrisk.audit.ATTACKS
    assert callable(synthrisk.run_audit)
