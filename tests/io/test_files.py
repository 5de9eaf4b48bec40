# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pandas as pd
import pytest

from synthrisk.exceptions import ConfigError, InputError
from synthrisk.io import read_metadata, read_table, sha256_file, write_text_atomic


def test_read_csv_and_parquet(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    assert read_table(tmp_path / "t.csv")["a"].tolist() == [1, 2]
    assert read_table(tmp_path / "t.parquet")["b"].tolist()[0] == "x"


def test_missing_file_and_bad_extension(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"the `real` file '.*nope.csv' does not exist"
    ):
        read_table(tmp_path / "nope.csv", name="real")
    (tmp_path / "t.dat").write_text("x")
    with pytest.raises(InputError, match=r"unsupported extension '.dat'"):
        read_table(tmp_path / "t.dat")


def test_unparsable_parquet(tmp_path: Path) -> None:
    (tmp_path / "t.parquet").write_text("not parquet")
    with pytest.raises(InputError, match=r"is not a Parquet file"):
        read_table(tmp_path / "t.parquet")
    (tmp_path / "u.parquet").write_bytes(b"PAR1" + bytes(20))  # a damaged one
    with pytest.raises(InputError, match=r"could not be read as Parquet"):
        read_table(tmp_path / "u.parquet")


def test_metadata_json_and_yaml(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text('{"columns": {"a": {"sdtype": "numerical"}}}')
    (tmp_path / "m.yaml").write_text("columns:\n  a: {sdtype: numerical}\n")
    assert read_metadata(tmp_path / "m.json") == read_metadata(tmp_path / "m.yaml")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ConfigError, match="could not be parsed"):
        read_metadata(tmp_path / "bad.json")


def test_atomic_write_creates_folders_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.json"
    write_text_atomic(target, "{}")
    assert target.read_text() == "{}"
    assert os.listdir(target.parent) == ["out.json"]
    assert sha256_file(target) == hashlib.sha256(b"{}").hexdigest()


def test_atomic_write_to_unwritable_place(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(InputError, match="cannot write"):
        write_text_atomic(blocker / "out.json", "{}")


@pytest.fixture
def umask():
    """Run a test under a given umask and restore the previous one afterwards."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_umask(value: int) -> None:
        os.umask(value)

    yield set_umask
    os.umask(previous)


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
@pytest.mark.parametrize(
    ("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)]
)
def test_atomic_write_respects_the_umask(
    tmp_path: Path, umask, mask: int, mode: int
) -> None:
    umask(mask)
    target = tmp_path / "report.html"
    write_text_atomic(target, "<html>")
    assert target.stat().st_mode & 0o777 == mode
    # bytes are written as they are, with the same permissions
    png = tmp_path / "plot.png"
    write_text_atomic(png, b"\x89PNG\r\n")
    assert png.read_bytes() == b"\x89PNG\r\n"
    assert png.stat().st_mode & 0o777 == mode


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(
    tmp_path: Path, umask
) -> None:
    umask(0o022)
    target = tmp_path / "report.json"
    target.write_text("old")
    target.chmod(0o640)
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640


def test_table_format_follows_the_name_then_the_input(tmp_path: Path) -> None:
    from synthrisk.io.files import table_bytes, table_format

    assert table_format("out.parquet") == ("parquet", None)
    assert table_format("out.tsv.gz") == (".tsv", "gzip")
    assert table_format("filtered", like="syn.csv.bz2") == (".csv", "bz2")
    with pytest.raises(InputError, match="cannot tell which table format"):
        table_format("out.xlsx", like="syn.csv")
    frame = pd.DataFrame({"a": [1.5, 0.1 + 0.2], "b": ["x", "y,z"]})
    for name in ("t.csv", "t.tsv", "t.csv.gz", "t.csv.zip", "t.csv.xz", "t.parquet"):
        path = tmp_path / name
        path.write_bytes(table_bytes(frame, path))
        pd.testing.assert_frame_equal(read_table(path), frame, check_dtype=False)
    assert table_bytes(frame, "a.csv.gz") == table_bytes(frame, "a.csv.gz")
