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
import math
import os
import re
import stat
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from synthrisk._atomic import write_text_atomic, write_texts_atomic
from synthrisk.exceptions import ConfigError, InputError, ParameterError, SynthriskError

if TYPE_CHECKING:
    from synthrisk._typing import JSONValue
    from synthrisk.report.verdict import Thresholds
    from synthrisk.results import EvaluationReport

__all__ = [
    "add_provenance",
    "read_metadata",
    "read_report",
    "read_table",
    "read_table_with_notes",
    "read_thresholds",
    "sha256_file",
    "table_bytes",
    "table_format",
    "write_text_atomic",
    "write_texts_atomic",
]

_CSV = {".csv": ",", ".txt": ",", ".tsv": "\t", ".tab": "\t"}
_PARQUET = {".parquet", ".pq"}
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz"}
#: separators tried when a file's header lacks the one its extension says
_SEPARATORS = (",", ";", "\t", "|")
_SAMPLE_BYTES = 1 << 16
#: what a file's first bytes say it is, whatever its name says
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bz2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),  # an empty archive
    (b"PAR1", "parquet"),
    (b"PARE", "parquet"),  # an encrypted footer
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "xls"),  # Excel 97-2003 (OLE2)
)
#: byte-order marks, longest first (UTF-32's starts with UTF-16's)
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: files that archivers and desktops add next to the table in a .zip
_ZIP_JUNK = re.compile(
    r"(^|/)(__MACOSX/|\.|~\$|Thumbs\.db$|desktop\.ini$)", re.IGNORECASE
)
#: a first line ``sep=;`` (Excel's hint of the separator)
_SEP_LINE = re.compile(r"sep=(.)\s*")
#: a column pandas named because its header cell was empty
_UNNAMED = re.compile(r"Unnamed: \d+")
_SPACES = "\u00a0\u202f "
#: numbers written with a decimal comma (1,5 or 1.234,5 or 1 234,5)
_DECIMAL_COMMA = re.compile(rf"[+-]?(\d{{1,3}}([.{_SPACES}]\d{{3}})+|\d+)(,\d+)?")
#: numbers written with thousands separators and a decimal point (1,234.5)
_THOUSANDS_COMMA = re.compile(r"[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?")


def read_table(
    path: str | os.PathLike[str],
    *,
    name: str = "table",
    encoding: str | None = None,
    na_values: Mapping[str, list[str]] | None = None,
) -> pd.DataFrame:
    """Read a CSV, TSV or Parquet file into a DataFrame.

    CSV and TSV files may be compressed (``.csv.gz``, ``.csv.bz2``, ``.csv.zip`` with
    one table inside, ``.csv.xz``); a file's first bytes decide, so a gzip file named
    ``.csv`` or a Parquet file named ``.csv`` is read as what it is. Text is UTF-8 by
    default; a byte-order mark (UTF-8, UTF-16, UTF-32) decides the encoding of its
    file, and UTF-16 without one is recognised; ``encoding`` names another one. A
    file whose header lacks the separator its extension says (comma for ``.csv``,
    tab for ``.tsv``) but has semicolons, commas, tabs or pipes is read with that
    separator, as is one whose first line is Excel's ``sep=;``. Rows that end with
    one separator too many, and columns without a header or any value (trailing
    separators), are ignored. Text columns that hold only numbers written with a
    decimal comma (``1,5``, in files separated by ``;``) or with thousands
    separators (``1,234.5``) are read as numbers.

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
        If the file does not exist, has an unknown extension, is a spreadsheet,
        cannot be decoded or parsed, is empty or holds only a header, or repeats a
        column name.
    ParameterError
        If ``encoding`` is not a known text encoding.
    """
    return read_table_with_notes(
        path, name=name, encoding=encoding, na_values=na_values
    )[0]


def read_table_with_notes(
    path: str | os.PathLike[str],
    *,
    name: str = "table",
    encoding: str | None = None,
    na_values: Mapping[str, list[str]] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """:func:`read_table`, with notes on what was recognised (for the report)."""
    path = Path(path)
    where = f"the `{name}` file {str(path)!r}"
    try:
        mode = path.stat().st_mode
    except OSError as exc:  # missing, or a name the system refuses (too long, ...)
        what = (
            "does not exist"
            if isinstance(exc, FileNotFoundError)
            else f"cannot be read ({exc.strerror or exc})"
        )
        msg = f"{where} {what}."
        raise InputError(msg) from None
    if not stat.S_ISREG(mode):
        what = (
            "a folder"
            if stat.S_ISDIR(mode)
            else "not a regular file (a pipe or a device)"
        )
        msg = f"{where} is {what}; give the path of a CSV, TSV or Parquet file."
        raise InputError(msg)
    fmt, compression = _file_format(path, where)
    notes: list[str] = []
    content = _sniff(path, where)
    if content == "xls":
        raise _spreadsheet_error(where, "an Excel 97-2003 workbook (.xls)")
    if content == "parquet" and fmt != "parquet":
        notes.append(f"{where} is a Parquet file despite its name; read as Parquet.")
        fmt, compression = "parquet", None
    elif fmt == "parquet" and content is None:
        msg = f"{where} is not a Parquet file (it does not start with Parquet's 'PAR1' mark); if it holds CSV text, name it .csv."
        raise InputError(msg)
    elif fmt == "parquet" and content in ("gzip", "bz2", "xz", "zip"):
        msg = f"{where} is a {content} archive, not a Parquet file; Parquet compresses its columns itself, so decompress it first (or name it .csv.{_suffix(content)} if it holds CSV)."
        raise InputError(msg)
    elif fmt != "parquet" and content != compression:
        if content is not None:
            notes.append(
                f"{where} is {content}-compressed despite its name; read as such."
            )
        elif compression is not None:
            notes.append(
                f"{where} is not {compression}-compressed; read as plain text."
            )
        compression = content
    if fmt == "parquet":
        frame = _read_parquet(path, where)
    else:
        frame, csv_notes = _read_csv(
            path,
            where,
            sep=_CSV[fmt],
            compression=compression,
            encoding=encoding,
            na_values=na_values,
        )
        notes += csv_notes
    if frame.shape[1] == 0:
        msg = f"{where} has no columns."
        raise InputError(msg)
    if len(frame) == 0:
        msg = (
            f"{where} has a header row ({len(frame.columns)} columns) but no data rows; "
            "every table needs at least one row."
        )
        raise InputError(msg)
    # notes go into the report, which is shared: the file's name, not its folders
    short = f"the `{name}` file {path.name!r}"
    return frame, [note.replace(where, short, 1) for note in notes]


def _suffix(compression: str) -> str:
    return {"gzip": "gz"}.get(compression, compression)


def _spreadsheet_error(where: str, what: str) -> InputError:
    msg = (
        f"{where} is {what}, not a CSV file; save it as CSV from the spreadsheet "
        "program (in Excel: Save As, 'CSV UTF-8') or as Parquet."
    )
    return InputError(msg)


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
    if suffix in (".xlsx", ".xlsm", ".xls", ".ods"):
        raise _spreadsheet_error(where, f"a spreadsheet ({suffix})")
    shown = "".join(path.suffixes[-2:]) or "(none)"
    msg = (
        f"{where} has an unsupported extension {shown!r}; use .csv, .tsv or .parquet "
        "(CSV and TSV may be compressed: .csv.gz, .csv.bz2, .csv.zip, .csv.xz)."
    )
    raise InputError(msg)


def _sniff(path: Path, where: str) -> str | None:
    """What the first bytes of ``path`` say it is (a compression, parquet, xls), if anything."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        msg = f"{where} could not be read: {exc.strerror or exc}."
        raise InputError(msg) from None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            if kind == "zip" and _is_spreadsheet(path):
                raise _spreadsheet_error(where, "a spreadsheet (.xlsx or .ods)")
            return kind
    return None


def _is_spreadsheet(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
    return "[Content_Types].xml" in names or "content.xml" in names


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


def _zip_member(archive: zipfile.ZipFile) -> str:
    """The one table in a .zip (folders and archivers' extra files aside)."""
    members = [
        m for m in archive.namelist() if not m.endswith("/") and not _ZIP_JUNK.search(m)
    ]
    if len(members) != 1:
        shown = f": {members[:5]}" if members else ""
        msg = f"holds {len(members)} files{shown}; a .zip table must hold exactly one."
        raise ValueError(msg)
    return members[0]


def _open_binary(path: Path, compression: str | None) -> IO[bytes] | io.BufferedIOBase:
    if compression == "gzip":
        return gzip.open(path, "rb")
    if compression == "bz2":
        return bz2.open(path, "rb")
    if compression == "xz":
        return lzma.open(path, "rb")
    if compression == "zip":
        archive = zipfile.ZipFile(path)
        try:
            return archive.open(_zip_member(archive))
        except BaseException:
            archive.close()
            raise
    return open(path, "rb")


def _decode_error(where: str, encoding: str, exc: UnicodeDecodeError) -> InputError:
    byte = exc.object[exc.start : exc.start + 1].hex()
    msg = (
        f"{where} is not valid {encoding} text (byte 0x{byte} at position {exc.start} cannot be decoded); "
        "give its encoding with `--encoding` (for example latin-1, cp1252 or utf-16)."
    )
    return InputError(msg)


def _utf16_without_bom(raw: bytes) -> str | None:
    """``utf-16-le`` / ``utf-16-be`` when ``raw`` looks like UTF-16 text without a BOM.

    Text of Latin script in UTF-16 has a zero byte in every other position; 8-bit
    text has none (or a stray one).
    """
    head = raw[: 1 << 12]
    head = head[: len(head) // 2 * 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    share_even, share_odd = even.count(0) / len(even), odd.count(0) / len(odd)
    if share_odd >= 0.5 and share_even <= 0.05:
        return "utf-16-le"
    if share_even >= 0.5 and share_odd <= 0.05:
        return "utf-16-be"
    return None


def _codec(
    raw: bytes, encoding: str | None, where: str, notes: list[str]
) -> tuple[str, str]:
    """The codec to decode ``raw`` with, and its name for messages."""
    asked = None
    if encoding is not None:
        try:
            asked = codecs.lookup(encoding).name
        except (LookupError, TypeError):
            msg = f"`encoding` {encoding!r} is not a known text encoding; use a Python codec name such as utf-8, latin-1, cp1252 or utf-16."
            raise ParameterError(msg) from None
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            name = codec.removesuffix("-sig")
            if asked is not None and not asked.startswith(name):
                notes.append(
                    f"{where} starts with a {name.upper()} byte-order mark; read as "
                    f"{name.upper()}, not {encoding}."
                )
            return codec, name.upper()
    if asked in (None, "utf-16"):
        utf16 = _utf16_without_bom(raw)
        if utf16 is not None:
            if asked is None:
                notes.append(
                    f"{where} is UTF-16 text without a byte-order mark; read as {utf16.upper()}."
                )
            return utf16, utf16.upper()
        if asked is not None:
            msg = (
                f"{where} is not UTF-16 text (it has no byte-order mark and reads as 8-bit "
                "text); leave out `--encoding` for UTF-8, or give the file's encoding (e.g. latin-1)."
            )
            raise InputError(msg)
    if asked is None or asked == "utf-8":
        return "utf-8-sig", "UTF-8"
    return asked, str(encoding)


def _read_csv(
    path: Path,
    where: str,
    *,
    sep: str,
    compression: str | None,
    encoding: str | None,
    na_values: Mapping[str, list[str]] | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    notes: list[str] = []
    try:
        with _open_binary(path, compression) as handle:
            raw = handle.read(_SAMPLE_BYTES)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, lzma.LZMAError) as exc:
        msg = f"{where} could not be read ({compression or 'uncompressed'}): {exc}"
        raise InputError(msg) from None
    codec, shown = _codec(raw, encoding, where, notes)
    try:
        sample = raw.decode(codec)
    except UnicodeDecodeError as exc:
        if exc.end < len(raw) - 4:  # not just a character cut at the sample's end
            raise _decode_error(where, shown, exc) from None
        sample = raw[: exc.start].decode(codec, errors="ignore")
    sample = sample.lstrip("\ufeff")
    if not sample.strip():
        msg = f"{where} is empty: it has no header row and no data."
        raise InputError(msg)
    lines = sample.splitlines()
    skiprows = 0
    first = next(i for i, line in enumerate(lines) if line.strip())
    excel_sep = _SEP_LINE.fullmatch(lines[first])
    if excel_sep is not None:
        sep, skiprows = excel_sep.group(1), first + 1
        first += 1
    # pandas skips blank lines above the header, so do we
    lines = [line for line in lines[first:] if line.strip()] or [""]
    header_line = lines[0]
    if sep not in header_line:
        counts = {s: header_line.count(s) for s in _SEPARATORS if s != sep}
        best = max(counts, key=lambda s: counts[s])
        if counts[best]:
            sep = best
    try:
        header = next(csv.reader(io.StringIO("\n".join(lines)), delimiter=sep), [])
    except csv.Error:  # a huge or malformed header cell: pandas says what is wrong
        header = []
    _check_unique_names([h.strip() for h in header if h.strip()], where)
    options: dict[str, Any] = {
        "sep": sep,
        "encoding": codec,
        "low_memory": False,
        "skiprows": skiprows,
        "na_values": None if not na_values else dict(na_values),
    }
    kind = "TSV" if sep == "\t" else "CSV"
    frame = _parse_csv(path, where, compression, shown, kind, options)
    if not isinstance(frame.index, pd.RangeIndex):
        # pandas takes the first columns as the row index when the rows have more
        # fields than the header: harmless when the extra fields are empty (a
        # separator at the end of each row), a shifted table otherwise
        extra = frame.index.nlevels
        if not frame.iloc[:, -extra:].isna().all().all():
            n_names = len(frame.columns)
            comment = (
                " (it looks like a comment: remove it)"
                if header_line.lstrip().startswith("#")
                else ""
            )
            msg = (
                f"{where} has rows of {n_names + extra} fields but its header line "
                f"{header_line[:60]!r} names {n_names} column{'s' * (n_names != 1)}{comment}; "
                "the first line must be the header, naming every column."
            )
            raise InputError(msg)
        frame = _parse_csv(
            path, where, compression, shown, kind, {**options, "index_col": False}
        )
        notes.append(
            f"{where}: its rows end with a separator too many; the empty last field was ignored."
        )
    empty = [
        c for c in frame.columns if _UNNAMED.fullmatch(str(c)) and frame[c].isna().all()
    ]
    if empty and len(empty) < frame.shape[1]:
        frame = frame.drop(columns=empty)
        notes.append(
            f"{where}: {len(empty)} column(s) without a header or any value (trailing "
            "separators) were ignored."
        )
    frame, converted = _numbers_from_text(frame, sep)
    if converted:
        notes.append(
            f"{where}: columns {converted} hold numbers written with a decimal comma or "
            "thousands separators; read as numbers."
        )
    return frame, notes


def _parse_csv(
    path: Path,
    where: str,
    compression: str | None,
    shown: str,
    kind: str,
    options: dict[str, Any],
) -> pd.DataFrame:
    try:
        with _open_binary(path, compression) as handle, warnings.catch_warnings():
            # index_col=False drops the empty last field of each row (checked above)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            return pd.read_csv(handle, **options)
    except UnicodeDecodeError as exc:
        raise _decode_error(where, shown, exc) from None
    except pd.errors.EmptyDataError:
        msg = f"{where} is empty: it has no header row and no data."
        raise InputError(msg) from None
    except Exception as exc:  # every parser failure becomes one clear message
        msg = f"{where} could not be read as {kind}: {exc}"
        raise InputError(msg) from None


def _numbers_from_text(frame: pd.DataFrame, sep: str) -> tuple[pd.DataFrame, list[str]]:
    """Text columns that hold only numbers with a decimal comma or thousands separators.

    In a file separated by ``;`` a comma is a decimal comma (``1,5``; thousands
    ``1.234,5``); in one separated by ``,`` a comma inside a quoted number separates
    thousands (``"1,234.5"``). With other separators a column is converted only when
    one reading fits all its values.
    """
    converted: dict[str, pd.Series] = {}
    for column in frame.columns:
        series = frame[column]
        if not (series.dtype == object or pd.api.types.is_string_dtype(series.dtype)):
            continue
        values = series.dropna()
        # a string column holds only strings; an object column is checked value by
        # value (iterating an Arrow-backed string column in Python is slow)
        if not len(values) or (
            not isinstance(series.dtype, pd.StringDtype)
            and not all(isinstance(v, str) for v in values)
        ):
            continue
        text = values.str.strip()
        if not text.str.contains(",", regex=False).any():
            continue
        decimal = sep != "," and bool(text.str.fullmatch(_DECIMAL_COMMA.pattern).all())
        thousands = sep != ";" and bool(
            text.str.fullmatch(_THOUSANDS_COMMA.pattern).all()
        )
        if decimal == thousands:  # neither reading, or both (ambiguous)
            continue
        if decimal:
            text = text.str.replace(f"[.{_SPACES}]", "", regex=True).str.replace(
                ",", ".", regex=False
            )
        else:
            text = text.str.replace(",", "", regex=False)
        numbers = pd.Series(np.nan, index=series.index, dtype="float64")
        numbers[text.index] = text.astype("float64")
        converted[str(column)] = numbers
    if not converted:
        return frame, []
    return frame.assign(**converted), list(converted)


def _check_unique_names(names: list[str], where: str) -> None:
    seen: set[str] = set()
    dupes = sorted({n for n in names if n in seen or seen.add(n)})  # type: ignore[func-returns-value]
    if dupes:
        msg = f"{where} has duplicated column names {dupes}; rename them so that every column has its own name."
        raise InputError(msg)


def table_format(
    path: str | os.PathLike[str], *, like: str | os.PathLike[str] | None = None
) -> tuple[str, str | None]:
    """The format a table written to ``path`` gets: ``(format, compression)``.

    The format is ``"parquet"`` or a CSV extension (``.csv``, ``.tsv``, ...); the
    compression ``gzip``, ``bz2``, ``xz``, ``zip`` or None. ``path``'s name decides
    (``out.parquet``, ``out.csv.gz``); a name without any extension takes the format
    of ``like`` (the input it was made from).

    Raises
    ------
    InputError
        ``path``'s extension is not a table format, or it has none and ``like``
        says none either.
    """
    for candidate in (path, like):
        if candidate is None:
            continue
        suffixes = [s.lower() for s in Path(candidate).suffixes]
        if not suffixes:
            continue
        compression = _COMPRESSION.get(suffixes[-1])
        base = suffixes[-2] if compression and len(suffixes) > 1 else suffixes[-1]
        if base in _PARQUET and compression is None:
            return "parquet", None
        if base in _CSV:
            return base, compression
        break  # the first name with an extension decides
    msg = (
        f"cannot tell which table format to write {str(path)!r} in: name it .csv, .tsv "
        "(optionally with .gz, .bz2, .xz or .zip) or .parquet."
    )
    raise InputError(msg)


def table_bytes(
    frame: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    like: str | os.PathLike[str] | None = None,
) -> bytes:
    """``frame`` as the bytes of a table file named ``path`` (see :func:`table_format`).

    CSV and TSV are written in UTF-8 without the index, compressed as the name says
    (a ``.zip`` holds one member, the name without ``.zip``; gzip output carries no
    time stamp, so the same table gives the same bytes); Parquet without the index.
    The bytes are for an all-or-nothing write (:func:`write_texts_atomic`).
    """
    fmt, compression = table_format(path, like=like)
    if fmt == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        return buffer.getvalue()
    data = frame.to_csv(index=False, sep=_CSV[fmt], lineterminator="\n").encode("utf-8")
    if compression == "gzip":
        return gzip.compress(data, mtime=0)
    if compression == "bz2":
        return bz2.compress(data)
    if compression == "xz":
        return lzma.compress(data)
    if compression == "zip":
        buffer = io.BytesIO()
        member = Path(path).name
        member = member[: -len(".zip")] if member.lower().endswith(".zip") else member
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(
                zipfile.ZipInfo(member, (1980, 1, 1, 0, 0, 0)),
                data,
                compress_type=zipfile.ZIP_DEFLATED,
            )
        return buffer.getvalue()
    return data


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
    except UnicodeDecodeError as exc:
        msg = f"the metadata file {str(path)!r} is not UTF-8 text (byte {exc.start}); save it as UTF-8."
        raise ConfigError(msg) from None
    except Exception as exc:
        from synthrisk.io.run_file import yaml_error_text

        msg = f"the metadata file {str(path)!r} could not be parsed: {yaml_error_text(exc)}"
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
    problem = _report_problem(data)
    if problem is None:
        try:
            return EvaluationReport.from_dict(data)
        except InputError:
            raise
        except Exception as exc:  # whatever else a damaged file holds
            problem = repr(exc)
    msg = f"the report file {str(path)!r} is not a valid synthrisk JSON report: {problem}."
    raise InputError(msg)


def _is_number(value: Any) -> bool:
    """A finite number (synthrisk writes NaN as null: a NaN in a report is damage)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _report_problem(data: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a JSON report, or None."""
    top: dict[str, tuple[type | tuple[type, ...], bool]] = {
        "synthrisk_version": (str, True),
        "seed": (int, True),
        "inputs": (dict, False),
        "results": (list, True),
        "schema": (dict, False),
        "warnings": (list, False),
        "verdict": (dict, False),
    }
    for key, (kind, required) in top.items():
        if key not in data:
            if required:
                return f"it has no {key!r}"
            continue
        if data[key] is not None and not isinstance(data[key], kind):
            return f"{key!r} is {type(data[key]).__name__}, not {getattr(kind, '__name__', kind)}"
    if not all(isinstance(w, str) for w in data.get("warnings") or ()):
        return "'warnings' must hold text"
    if not all(
        v is None or isinstance(v, dict) for v in (data.get("inputs") or {}).values()
    ):
        return "'inputs' must map table names to mappings"
    for i, result in enumerate(data["results"]):
        where = f"results[{i}]"
        if not isinstance(result, dict):
            return f"{where} is {type(result).__name__}, not a mapping"
        if not isinstance(result.get("metric"), str):
            return f"{where} has no metric name"
        score = result.get("score")
        if score is not None and not _is_number(score):
            return f"{where} has a score that is not a finite number: {score!r}"
        ci = result.get("ci")
        if ci is not None and not (
            isinstance(ci, list) and len(ci) == 2 and all(_is_number(v) for v in ci)
        ):
            return f"{where} has an interval that is not two numbers: {ci!r}"
        for key in ("breakdown", "params", "records"):
            if result.get(key) is not None and not isinstance(result[key], dict):
                return f"{where}.{key} is {type(result[key]).__name__}, not a mapping"
        if not all(isinstance(w, str) for w in result.get("warnings") or ()):
            return f"{where}.warnings must hold text"
    return None


def add_provenance(
    report: EvaluationReport, files: Mapping[str, str | os.PathLike[str] | None]
) -> EvaluationReport:
    """Record the name and SHA-256 of each input file in ``report.inputs``."""
    inputs = dict(report.inputs)
    for name, path in files.items():
        if path is not None and inputs.get(name) is not None:
            inputs[name] = {
                **cast("Mapping[str, JSONValue]", inputs[name]),
                "file": Path(path).name,
                "sha256": sha256_file(path),
            }
    return dataclasses.replace(report, inputs=inputs)
