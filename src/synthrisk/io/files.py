# SPDX-License-Identifier: BSD-3-Clause
"""Tables and metadata from disk (CSV, Parquet, JSON, YAML) and atomic output files."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from synthrisk._atomic import write_text_atomic, write_texts_atomic
from synthrisk.exceptions import ConfigError, InputError, SynthriskError

if TYPE_CHECKING:
    from synthrisk.report.verdict import Thresholds
    from synthrisk.results import EvaluationReport

__all__ = [
    "add_provenance",
    "read_metadata",
    "read_report",
    "read_table",
    "read_thresholds",
    "sha256_file",
    "write_text_atomic",
    "write_texts_atomic",
]

_CSV = {".csv", ".txt", ".tsv"}
_PARQUET = {".parquet", ".pq"}


def read_table(path: str | os.PathLike[str], *, name: str = "table") -> pd.DataFrame:
    """Read a CSV (comma or tab separated) or Parquet file into a DataFrame.

    Raises
    ------
    InputError
        If the file does not exist, has an unknown extension or cannot be parsed.
    """
    path = Path(path)
    if not path.is_file():
        msg = f"the `{name}` file {str(path)!r} does not exist."
        raise InputError(msg)
    suffix = path.suffix.lower()
    try:
        if suffix in _PARQUET:
            return pd.read_parquet(path)
        if suffix in _CSV:
            return pd.read_csv(
                path, sep="\t" if suffix == ".tsv" else ",", low_memory=False
            )
    except Exception as exc:  # every parser failure becomes one clear message
        msg = f"the `{name}` file {str(path)!r} could not be read as {suffix[1:].upper()}: {exc}"
        raise InputError(msg) from None
    msg = f"the `{name}` file {str(path)!r} has an unsupported extension {suffix!r}; use .csv, .tsv or .parquet."
    raise InputError(msg)


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a metadata file (JSON, or YAML for .yaml/.yml)."""
    path = Path(path)
    if not path.is_file():
        msg = f"the metadata file {str(path)!r} does not exist."
        raise InputError(msg)
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:
        msg = f"the metadata file {str(path)!r} could not be parsed: {exc}"
        raise ConfigError(msg) from None
    if not isinstance(data, dict):
        msg = f"the metadata file {str(path)!r} must hold a mapping with a 'columns' entry."
        raise ConfigError(msg)
    return data


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_thresholds(path: str | os.PathLike[str]) -> Thresholds:
    """Read verdict thresholds from a YAML or JSON file (``{metric: {pass, fail}}``)."""
    from synthrisk.report.verdict import Thresholds

    try:
        data = read_metadata(path)
    except ConfigError as exc:
        msg = (
            str(exc)
            .replace("metadata file", "thresholds file")
            .replace(" with a 'columns' entry", "")
        )
        raise ConfigError(msg) from None
    except SynthriskError as exc:
        msg = str(exc).replace("metadata file", "thresholds file")
        raise type(exc)(msg) from None
    return Thresholds.from_dict(data)


def read_report(path: str | os.PathLike[str]) -> EvaluationReport:
    """Read a JSON report written by synthrisk."""
    from synthrisk.results import EvaluationReport

    path = Path(path)
    if not path.is_file():
        msg = f"the report file {str(path)!r} does not exist."
        raise InputError(msg)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"the report file {str(path)!r} is not valid JSON: {exc}"
        raise InputError(msg) from None
    if not isinstance(data, dict) or "results" not in data:
        msg = f"the report file {str(path)!r} is not a synthrisk JSON report (no 'results')."
        raise InputError(msg)
    try:
        return EvaluationReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        msg = f"the report file {str(path)!r} is not a valid synthrisk JSON report: {exc!r}"
        raise InputError(msg) from None


def add_provenance(
    report: EvaluationReport, files: Mapping[str, str | os.PathLike[str] | None]
) -> EvaluationReport:
    """Record the name and SHA-256 of each input file in ``report.inputs``."""
    inputs = dict(report.inputs)
    for name, path in files.items():
        if path is not None and inputs.get(name) is not None:
            inputs[name] = {
                **inputs[name],
                "file": Path(path).name,
                "sha256": sha256_file(path),
            }
    return dataclasses.replace(report, inputs=inputs)
