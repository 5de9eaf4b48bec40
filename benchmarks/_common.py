# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the benchmark scripts: reference venvs, child processes, Adult data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENVS = ROOT / "benchmarks" / ".venvs"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "adults"
REF_VENVS_SCRIPT = ROOT.parent / "shared" / "tools" / "ref-venvs.sh"

ADULT_NUMERIC = [
    "age",
    "fnlwgt",
    "education_num",
    "capital_gain",
    "capital_loss",
    "hr_per_week",
]
ADULT_COLUMNS = [
    "age", "type_employer", "fnlwgt", "education", "education_num", "marital", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hr_per_week", "country", "income",
]  # fmt: skip


def adult_metadata() -> dict[str, Any]:
    """SDMetrics metadata of the Adult files."""
    return {
        "columns": {
            c: {"sdtype": "numerical" if c in ADULT_NUMERIC else "categorical"}
            for c in ADULT_COLUMNS
        }
    }


def reference_python(venv: Path | None, name: str) -> Path:
    """Python of a reference venv; builds the venvs with ../shared/tools/ref-venvs.sh when missing."""
    venv = DEFAULT_VENVS / name if venv is None else venv
    python = venv / "bin" / "python"
    if not python.exists():
        if not REF_VENVS_SCRIPT.exists():
            sys.exit(
                f"{python} does not exist and {REF_VENVS_SCRIPT} is not there to build it."
            )
        print(
            f"building reference venvs in {venv.parent} (a few minutes) ...", flush=True
        )
        subprocess.run(["bash", str(REF_VENVS_SCRIPT), str(venv.parent)], check=True)
    return python


def run_child(
    python: Path | str,
    code: str,
    payload: dict[str, Any],
    *,
    timeout: float | None = None,
) -> dict[str, Any]:
    """Run ``code`` in a child process; it reads ``PAYLOAD`` and prints one JSON line last."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(payload, handle)
        payload_path = handle.name
    try:
        env = dict(os.environ)
        env["PAYLOAD"] = payload_path
        proc = subprocess.run(
            [str(python), "-c", code],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    finally:
        Path(payload_path).unlink(missing_ok=True)
    if proc.returncode != 0:
        msg = f"child failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        raise RuntimeError(msg)
    return json.loads(proc.stdout.strip().splitlines()[-1])
