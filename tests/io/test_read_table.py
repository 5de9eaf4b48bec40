# SPDX-License-Identifier: BSD-3-Clause
"""read_table on files as spreadsheets, exporters and archivers write them."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import InputError
from synthrisk.io.files import read_table, read_table_with_notes

FRAME = pd.DataFrame(
    {
        "age": [31, 45, 27],
        "income": [1234.5, 20.25, 0.5],
        "city": ["Zürich", "Genève", "Bern"],
    }
)


def _write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def _read(path: Path, **options: str) -> tuple[pd.DataFrame, list[str]]:
    return read_table_with_notes(path, name="real", **options)


@pytest.mark.parametrize(
    ("text", "sep_name"),
    [
        # Excel in European locales: semicolons, decimal comma, thousands dots, CRLF, BOM
        (
            "\ufeffage;income;city\r\n31;1.234,5;Zürich\r\n45;20,25;Genève\r\n27;0,5;Bern\r\n",
            ";",
        ),
        # a quoted number with thousands commas in a comma-separated file
        ('age,income,city\n31,"1,234.5",Zürich\n45,20.25,Genève\n27,0.5,Bern\n', ","),
        # Excel's `sep=` hint on the first line
        (
            "sep=;\nage;income;city\n31;1234,5;Zürich\n45;20,25;Genève\n27;0,5;Bern\n",
            ";",
        ),
        # French spaces as thousands separators (narrow no-break space)
        (
            "age;income;city\n31;1\u202f234,5;Zürich\n45;20,25;Genève\n27;0,5;Bern\n",
            ";",
        ),
    ],
)
def test_numbers_with_decimal_commas_and_thousands_separators_are_numbers(
    tmp_path: Path, text: str, sep_name: str
) -> None:
    frame, notes = _read(_write(tmp_path / "t.csv", text))
    pd.testing.assert_frame_equal(frame, FRAME)
    assert len(notes) == 1
    assert "columns ['income'] hold numbers written with a decimal comma" in notes[0]


def test_the_notes_the_readme_promises(tmp_path: Path) -> None:
    # README: the report notes columns read as numbers from decimal commas or thousands
    # separators (and ignored trailing separators); the separator itself gets no note
    for text in (
        "age;income;city\n31;1234.5;Zürich\n45;20.25;Genève\n27;0.5;Bern\n",
        "sep=;\nage;income;city\n31;1234.5;Zürich\n45;20.25;Genève\n27;0.5;Bern\n",
        "age|income|city\n31|1234.5|Zürich\n45|20.25|Genève\n27|0.5|Bern\n",
    ):
        frame, notes = _read(_write(tmp_path / "plain.csv", text))
        pd.testing.assert_frame_equal(frame, FRAME)
        assert notes == []
    text = "age;income;city\n31;1234,5;Zürich\n45;20,25;Genève\n27;0,5;Bern\n"
    frame, notes = _read(_write(tmp_path / "comma.csv", text))
    pd.testing.assert_frame_equal(frame, FRAME)
    assert len(notes) == 1
    assert "columns ['income'] hold numbers written with a decimal comma" in notes[0]


def test_ambiguous_or_mixed_number_text_stays_text(tmp_path: Path) -> None:
    # in a tab-separated file "1,234" reads both as 1.234 and as 1234: left as text
    frame, notes = _read(_write(tmp_path / "t.tsv", "a\tb\n1,234\tx\n5,678\ty\n"))
    assert frame["a"].tolist() == ["1,234", "5,678"]
    assert not notes
    # a value that is not a number keeps the whole column as text
    frame, _ = _read(_write(tmp_path / "u.csv", "a;b\n1,5;x\nunknown;y\n"))
    assert frame["a"].tolist() == ["1,5", "unknown"]
    # a one-digit group after the comma is not a thousands separator
    frame, _ = _read(_write(tmp_path / "v.csv", 'a,b\n"1,5",x\n"2,5",y\n'))
    assert frame["a"].tolist() == ["1,5", "2,5"]


def test_trailing_separators_are_ignored(tmp_path: Path) -> None:
    body = "31,1234.5,Zürich,\n45,20.25,Genève,\n27,0.5,Bern,\n"
    for header in ("age,income,city\n", "age,income,city,\n"):
        frame, notes = _read(_write(tmp_path / "t.csv", header + body))
        pd.testing.assert_frame_equal(frame, FRAME)
        assert len(notes) == 1
        assert "separator" in notes[0]


def test_rows_longer_than_the_header_are_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", "# exported by X\n1,2,3\n4,5,6\n")
    with pytest.raises(
        InputError,
        match=r"rows of 3 fields but its header line '# exported by X' names 1 column \(it looks like a comment: remove it\)",
    ):
        read_table(path, name="real")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_byte_order_mark_is_recognised(
    tmp_path: Path, codec: str
) -> None:
    path = _write(tmp_path / "t.csv", FRAME.to_csv(index=False).encode(codec))
    frame, notes = _read(path)
    pd.testing.assert_frame_equal(frame, FRAME)
    assert notes == [
        f"the `real` file 't.csv' is UTF-16 text without a byte-order mark; read as {codec.upper()}."
    ]


def test_a_byte_order_mark_wins_over_the_encoding_option(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", FRAME.to_csv(index=False).encode("utf-8-sig"))
    frame, notes = _read(path, encoding="latin-1")
    pd.testing.assert_frame_equal(frame, FRAME)
    assert "UTF-8 byte-order mark; read as UTF-8, not latin-1" in notes[0]
    with pytest.raises(InputError, match="is not UTF-16 text"):
        read_table(_write(tmp_path / "u.csv", "a,b\n1,2\n"), encoding="utf-16")


def test_content_decides_over_the_name(tmp_path: Path) -> None:
    gz = _write(tmp_path / "gz.csv", gzip.compress(FRAME.to_csv(index=False).encode()))
    plain = _write(tmp_path / "plain.csv.gz", FRAME.to_csv(index=False))
    parquet = tmp_path / "pq.csv"
    FRAME.to_parquet(parquet)
    for path, note in (
        (gz, "is gzip-compressed despite its name"),
        (plain, "is not gzip-compressed"),
        (parquet, "is a Parquet file despite its name"),
    ):
        frame, notes = _read(path)
        pd.testing.assert_frame_equal(frame, FRAME)
        assert note in notes[0], notes
    xlsx = tmp_path / "book.csv"
    with zipfile.ZipFile(xlsx, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    xls = _write(tmp_path / "old.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100))
    for path, what in ((xlsx, "a spreadsheet"), (xls, "an Excel 97-2003 workbook")):
        with pytest.raises(
            InputError, match=f"is {what}.* not a CSV file; save it as CSV"
        ):
            read_table(path)
    with pytest.raises(InputError, match="is a spreadsheet"):
        read_table(_write(tmp_path / "t.xlsx", b"PK"))


def test_zip_with_a_folder_and_archiver_files(tmp_path: Path) -> None:
    path = tmp_path / "t.csv.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data/", "")
        archive.writestr("data/real.csv", FRAME.to_csv(index=False))
        archive.writestr("__MACOSX/data/._real.csv", b"\x00\x05\x16\x07")
        archive.writestr("data/.DS_Store", b"\x00\x00\x00\x01Bud1")
    pd.testing.assert_frame_equal(read_table(path), FRAME)
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("data/other.csv", "a\n1\n")
    with pytest.raises(
        InputError, match=r"holds 2 files: \['data/real.csv', 'data/other.csv'\]"
    ):
        read_table(path)


def test_empty_header_cells_are_not_duplicates(tmp_path: Path) -> None:
    frame = read_table(_write(tmp_path / "t.csv", "a,,\n1,2,3\n4,5,6\n"))
    assert list(frame.columns) == ["a", "Unnamed: 1", "Unnamed: 2"]
    with pytest.raises(InputError, match=r"duplicated column names \['a'\]"):
        read_table(_write(tmp_path / "u.csv", "a, a\n1,2\n"))


def test_a_huge_header_cell_is_no_internal_error(tmp_path: Path) -> None:
    name = "h" * 200_000
    frame = read_table(_write(tmp_path / "t.csv", f'"{name}",b\n1,2\n'))
    assert list(frame.columns) == [name, "b"]
    assert frame.to_numpy().tolist() == [[1, 2]]


def test_a_folder_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "t.csv").mkdir()
    with pytest.raises(
        InputError, match="is a folder; give the path of a CSV, TSV or Parquet file"
    ):
        read_table(tmp_path / "t.csv")


def test_no_columns_or_no_rows(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"has a header row \(2 columns\) but no data rows"
    ):
        read_table(_write(tmp_path / "t.csv", "a,b"))
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": np.array([], dtype=float)}).to_parquet(path)
    with pytest.raises(
        InputError, match=r"has a header row \(1 columns\) but no data rows"
    ):
        read_table(path)
