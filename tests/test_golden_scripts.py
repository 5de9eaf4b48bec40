# SPDX-License-Identifier: BSD-3-Clause
"""The golden-recording scripts leave no third-party cache in the repository."""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_child_runs_in_a_temporary_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    reference = _load("_reference")
    calls: list[dict[str, Any]] = []

    def run(argv: list[str], **options: Any) -> None:
        calls.append({"argv": argv, **options})
        assert Path(options["cwd"]).is_dir()  # exists while the child runs

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["record.py", "--ref-venv", "venv"])
    reference.main("scripts/record.py", lambda: None, package="synthcity")
    (call,) = calls
    cwd = Path(call["cwd"])
    assert not cwd.exists()  # removed afterwards, with whatever the library cached
    assert ROOT not in cwd.parents
    assert tmp_path not in cwd.parents
    # paths given relative to where the script was started still work from there
    assert call["argv"][0] == str(tmp_path / "venv" / "bin" / "python")
    assert call["argv"][1] == str(tmp_path / "scripts" / "record.py")


def test_synthcity_metrics_get_a_temporary_workspace() -> None:
    tree = ast.parse((SCRIPTS / "record_goldens_synthcity.py").read_text())
    built = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("IdentifiabilityScore", "cls")
    ]
    assert len(built) == 2
    for call in built:
        assert [k.arg for k in call.keywords] == ["workspace"], ast.dump(call)
