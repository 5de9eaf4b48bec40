# SPDX-License-Identifier: BSD-3-Clause
"""Tables and metadata from disk (CSV, Parquet, JSON, YAML) and atomic output files."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from synthrisk.exceptions import ConfigError, InputError

__all__ = ["read_metadata", "read_table", "sha256_file", "write_text_atomic"]

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


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temporary file + rename), creating folders.

    Raises
    ------
    InputError
        If the folder cannot be created or written.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
        )
    except OSError as exc:
        msg = f"cannot write {str(path)!r}: {exc.strerror or exc}."
        raise InputError(msg) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
