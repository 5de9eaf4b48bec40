# SPDX-License-Identifier: BSD-3-Clause
"""Tables and metadata from disk (CSV, Parquet, JSON, YAML) and atomic output files."""

from __future__ import annotations

import bz2
import codecs
import csv
import dataclasses
import gzip
import hashlib
import io
import json
import lzma
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from synthrisk._atomic import write_text_atomic, write_texts_atomic
from synthrisk.exceptions import ConfigError, InputError, ParameterError, SynthriskError

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

_CSV = {".csv": ",", ".txt": ",", ".tsv": "\t", ".tab": "\t"}
_PARQUET = {".parquet", ".pq"}
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz"}
#: separators tried when a file's header lacks the one its extension says
_SEPARATORS = (",", ";", "\t", "|")
_SAMPLE_BYTES = 1 << 16
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def read_table(
    path: str | os.PathLike[str],
    *,
    name: str = "table",
    encoding: str | None = None,
    na_values: Mapping[str, list[str]] | None = None,
) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet file into a DataFrame.

    CSV and TSV files may be compressed (``.csv.gz``, ``.csv.bz2``, ``.csv.zip`` with
    one file inside, ``.csv.xz``). Text is UTF-8 by default (a byte-order mark is
    dropped; UTF-16 with a byte-order mark is recognised); ``encoding`` names another
    one. A file whose header lacks the separator its extension says (comma for
    ``.csv``, tab for ``.tsv``) but has semicolons, commas, tabs or pipes is read with
    that separator.

    Parameters
    ----------
    path : path
        The file.
    name : str, default="table"
        The table's role (``real``, ``synthetic``, ``holdout``), used in messages.
    encoding : str, default=None
        Text encoding of CSV / TSV files (Python's codec names: ``latin-1``,
        ``cp1252``, ``utf-16``, ...); None means UTF-8.
    na_values : dict of str to list of str, default=None
        Extra markers of missing values by column (CSV / TSV only).

    Raises
    ------
    InputError
        If the file does not exist, has an unknown extension, cannot be decoded or
        parsed, is empty or holds only a header, or repeats a column name.
    ParameterError
        If ``encoding`` is not a known text encoding.
    """
    path = Path(path)
    where = f"the `{name}` file {str(path)!r}"
    if not path.is_file():
        msg = f"{where} does not exist."
        raise InputError(msg)
    fmt, compression = _file_format(path, where)
    if fmt == "parquet":
        frame = _read_parquet(path, where)
    else:
        frame = _read_csv(
            path,
            where,
            sep=_CSV[fmt],
            compression=compression,
            encoding=encoding,
            na_values=na_values,
        )
    if len(frame) == 0:
        msg = (
            f"{where} has a header row ({len(frame.columns)} columns) but no data rows; "
            "every table needs at least one row."
        )
        raise InputError(msg)
    return frame


def _file_format(path: Path, where: str) -> tuple[str, str | None]:
    """The format (a key of ``_CSV`` or ``parquet``) and compression of ``path``."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = _COMPRESSION.get(suffixes[-1]) if suffixes else None
    if compression is not None:
        suffixes = suffixes[:-1]
    suffix = suffixes[-1] if suffixes else ""
    if suffix in _CSV:
        return suffix, compression
    if suffix in _PARQUET and compression is None:
        return "parquet", None
    if suffix in _PARQUET:
        msg = f"{where} is a compressed Parquet file; Parquet compresses its columns itself, so decompress it first."
        raise InputError(msg)
    shown = "".join(path.suffixes[-2:]) or "(none)"
    msg = (
        f"{where} has an unsupported extension {shown!r}; use .csv, .tsv or .parquet "
        "(CSV and TSV may be compressed: .csv.gz, .csv.bz2, .csv.zip, .csv.xz)."
    )
    raise InputError(msg)


def _read_parquet(path: Path, where: str) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        names = [str(n) for n in pq.read_schema(path).names]
    except Exception as exc:  # not a Parquet file: one clear message
        msg = f"{where} could not be read as Parquet: {exc}"
        raise InputError(msg) from None
    _check_unique_names(names, where)
    try:
        return pd.read_parquet(path)
    except Exception as exc:
        msg = f"{where} could not be read as Parquet: {exc}"
        raise InputError(msg) from None


def _open_binary(path: Path, compression: str | None) -> IO[bytes] | io.BufferedIOBase:
    if compression == "gzip":
        return gzip.open(path, "rb")
    if compression == "bz2":
        return bz2.open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    if compression == "zip":
        archive = zipfile.ZipFile(path)
        members = [m for m in archive.namelist() if not m.endswith("/")]
        if len(members) != 1:
            archive.close()
            msg = f"holds {len(members)} files; a .zip table must hold exactly one."
            raise ValueError(msg)
        return archive.open(members[0])
    return open(path, "rb")


def _decode_error(where: str, encoding: str, exc: UnicodeDecodeError) -> InputError:
    byte = exc.object[exc.start : exc.start + 1].hex()
    msg = (
        f"{where} is not valid {encoding} text (byte 0x{byte} at position {exc.start} cannot be decoded); "
        "give its encoding with `--encoding` (for example latin-1, cp1252 or utf-16)."
    )
    return InputError(msg)


def _read_csv(
    path: Path,
    where: str,
    *,
    sep: str,
    compression: str | None,
    encoding: str | None,
    na_values: Mapping[str, list[str]] | None = None,
) -> pd.DataFrame:
    if encoding is not None:
        try:
            codec = codecs.lookup(encoding).name
        except (LookupError, TypeError):
            msg = f"`encoding` {encoding!r} is not a known text encoding; use a Python codec name such as utf-8, latin-1, cp1252 or utf-16."
            raise ParameterError(msg) from None
    else:
        codec = "utf-8"
    try:
        with _open_binary(path, compression) as handle:
            raw = handle.read(_SAMPLE_BYTES)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as exc:
        msg = f"{where} could not be read ({compression or 'uncompressed'}): {exc}"
        raise InputError(msg) from None
    if encoding is None and raw.startswith(_UTF16_BOMS):
        codec = "utf-16"
    if codec == "utf-8":
        codec = "utf-8-sig"  # drops a byte-order mark
    shown = "UTF-8" if codec == "utf-8-sig" else codec
    try:
        sample = raw.decode(codec)
    except UnicodeDecodeError as exc:
        if exc.end < len(raw) - 4:  # not just a character cut at the sample's end
            raise _decode_error(where, shown, exc) from None
        sample = raw[: exc.start].decode(codec, errors="ignore")
    if not sample.strip():
        msg = f"{where} is empty: it has no header row and no data."
        raise InputError(msg)
    header_line = sample.lstrip("\ufeff").splitlines()[0]
    if sep not in header_line:
        counts = {s: header_line.count(s) for s in _SEPARATORS if s != sep}
        best = max(counts, key=lambda s: counts[s])
        if counts[best]:
            sep = best
    header: list[str] = next(csv.reader(io.StringIO(header_line), delimiter=sep), [])
    _check_unique_names([h.strip() for h in header], where)
    try:
        with _open_binary(path, compression) as handle:
            return pd.read_csv(
                handle,
                sep=sep,
                encoding=codec,
                low_memory=False,
                na_values=None if not na_values else dict(na_values),
            )
    except UnicodeDecodeError as exc:
        raise _decode_error(where, shown, exc) from None
    except pd.errors.EmptyDataError:
        msg = f"{where} is empty: it has no header row and no data."
        raise InputError(msg) from None
    except Exception as exc:  # every parser failure becomes one clear message
        kind = "TSV" if sep == "\t" else "CSV"
        msg = f"{where} could not be read as {kind}: {exc}"
        raise InputError(msg) from None


def _check_unique_names(names: list[str], where: str) -> None:
    seen: set[str] = set()
    dupes = sorted({n for n in names if n in seen or seen.add(n)})  # type: ignore[func-returns-value]
    if dupes:
        msg = f"{where} has duplicated column names {dupes}; rename them so that every column has its own name."
        raise InputError(msg)


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a metadata file (JSON, or YAML for .yaml/.yml)."""
    path = Path(path)
    if not path.is_file():
        msg = f"the metadata file {str(path)!r} does not exist."
        raise InputError(msg)
    try:
        text = path.read_text(encoding="utf-8-sig")
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
        data = json.loads(path.read_text(encoding="utf-8-sig"))
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
