# SPDX-License-Identifier: BSD-3-Clause
"""A second matrix of odd-but-real inputs through the command line.

Spreadsheet exports (semicolons, decimal commas, ``sep=`` lines, trailing
separators), encodings without a byte-order mark, files whose content is not what
their name says, archives as desktops make them, Parquet's less common types, dates
in several formats or beyond the nanosecond range, names and values that are markup,
malformed metadata, thresholds, run files and reports, and output paths that point at
the inputs, at folders or at standard output.

Each case ends in a report (exit 0 or 1) or in one line ``synthrisk: error: …`` (exit
2) naming what is wrong; inputs are never modified and the files written get the
umask's permissions. Reading cases run two fast metrics and check that the tables read
the same as the plain CSV files; cases about values run the default assessment.
"""

from __future__ import annotations

import datetime
import decimal
import gzip
import hashlib
import json
import os
import re
import shutil
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthrisk.cli import main

N_REAL, N_SYN, N_HOLD = 30, 30, 20


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(8, 1, n), 2),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["Zürich", "Genève", "Bern", "Basel"], n),
            "joined": pd.date_range("2020-01-01", periods=n, freq="D").strftime(
                "%Y-%m-%d"
            ),
        }
    )


REAL, SYN, HOLD = _table(N_REAL, 11), _table(N_SYN, 12), _table(N_HOLD, 13)
TABLES = {"real": REAL, "synthetic": SYN, "holdout": HOLD}
#: two metrics that run on any table: reading cases compare their scores with plain CSV
FAST = ["--metrics", "dcr_baseline_protection,identical_match_share"]

Writer = Callable[[Path], Any]
#: a case builds its files in a folder; returns {role: path} (and "--option": value)
Build = Callable[[Path], dict[str, Any]]


def _csv(
    folder: Path,
    transform: Callable[[str, pd.DataFrame], Any] | None = None,
    *,
    suffix: str = ".csv",
    **options: Any,
) -> dict[str, Any]:
    """The three tables as files; ``transform(role, frame)`` returns a frame, bytes or str."""
    paths: dict[str, Any] = {}
    for role, frame in TABLES.items():
        path = folder / f"{role}{suffix}"
        content = frame if transform is None else transform(role, frame)
        if isinstance(content, pd.DataFrame):
            content.to_csv(path, index=False, **options)
        else:
            path.write_bytes(
                content if isinstance(content, bytes) else content.encode("utf-8")
            )
        paths[role] = path
    return paths


def _parquet(folder: Path, transform: Callable[[pd.DataFrame], Any]) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for role, frame in TABLES.items():
        path = folder / f"{role}.parquet"
        table = transform(frame)
        if isinstance(table, pa.Table):
            pq.write_table(table, path)
        else:
            table.to_parquet(path)
        paths[role] = path
    return paths


def _one(
    role: str, make: Callable[[pd.DataFrame], Any]
) -> Callable[[str, pd.DataFrame], Any]:
    """A transform that changes one table only."""
    return lambda r, frame: make(frame) if r == role else frame


def _excel_eu(role: str, frame: pd.DataFrame) -> bytes:
    text = frame.to_csv(index=False, sep=";", decimal=",", lineterminator="\r\n")
    return text.encode("utf-8-sig")


def _german_thousands(role: str, frame: pd.DataFrame) -> str:
    def german(v: float) -> str:
        return f"{v:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".")

    return frame.assign(income=[german(v) for v in frame["income"]]).to_csv(
        index=False, sep=";"
    )


def _trailing_separator(header_too: bool) -> Callable[[str, pd.DataFrame], str]:
    def write(role: str, frame: pd.DataFrame) -> str:
        header, *rows = frame.to_csv(index=False).splitlines()
        return (
            "\n".join([header + ("," if header_too else ""), *(r + "," for r in rows)])
            + "\n"
        )

    return write


def _zip_as_a_mac_makes_it(folder: Path) -> dict[str, Any]:
    paths = _csv(folder)
    path = folder / "real.csv.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("real/", "")
        archive.writestr("real/real.csv", REAL.to_csv(index=False))
        archive.writestr("__MACOSX/real/._real.csv", b"\x00\x05\x16\x07")
        archive.writestr("real/.DS_Store", b"\x00\x00\x00\x01Bud1")
    return {**paths, "real": path}


def _renamed(role: str, name: str, write: Writer) -> Build:
    def build(folder: Path) -> dict[str, Any]:
        paths = _csv(folder)
        path = folder / name
        write(path)
        return {**paths, role: path}

    return build


def _xlsx(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")


def _dates(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(joined=pd.to_datetime(frame["joined"]))


def _far_dates(frame: pd.DataFrame) -> pa.Table:
    ends = [
        datetime.datetime(9999, 12, 31) if i % 5 == 0 else datetime.datetime(2021, 6, 1)
        for i in range(len(frame))
    ]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.append_column("valid_to", pa.array(ends, pa.timestamp("us")))


def _markup(frame: pd.DataFrame) -> pd.DataFrame:
    names = {
        "city": "<script>alert(1)</script>",
        "sex": "[bold red]sex[/]",
        "age": "âge 🎂",
        "income": "cost ($) $x^$",
    }
    return frame.assign(
        city="<b>" + frame["city"] + "</b>",
        sex=frame["sex"].map({"F": "[/]", "M": "</script>"}),
    ).rename(columns=names)


def _with(option: str, value: str | dict[str, Any], name: str = "extra.json") -> Build:
    """Plain tables and a file (JSON for dicts, else text) passed with ``option``."""

    def build(folder: Path) -> dict[str, Any]:
        path = folder / name
        path.write_text(value if isinstance(value, str) else json.dumps(value))
        return {**_csv(folder), option: path}

    return build


def _plain(folder: Path) -> dict[str, Any]:
    return _csv(folder)


READ, VALUES = "read", "values"
#: name -> (build, extra arguments, READ / VALUES (a report) or an error regex)
CASES: dict[str, tuple[Build, list[str], str]] = {
    # ------------------------------------------------------------ spreadsheet exports
    "excel_semicolons_decimal_commas_crlf_bom": (lambda f: _csv(f, _excel_eu), [], READ),
    "excel_sep_line": (lambda f: _csv(f, _one("real", lambda t: "sep=,\n" + t.to_csv(index=False))), [], READ),
    "thousands_dots_decimal_commas": (lambda f: _csv(f, _german_thousands), [], READ),
    "quoted_thousands_commas": (lambda f: _csv(f, _one("synthetic", lambda t: t.assign(income=[f"{v:,.2f}" for v in t["income"]]))), [], READ),
    "tsv_with_decimal_commas": (lambda f: _csv(f, suffix=".tsv", sep="\t", decimal=","), [], READ),
    "trailing_separator_in_rows": (lambda f: _csv(f, _trailing_separator(header_too=False)), [], READ),
    "trailing_separator_everywhere": (lambda f: _csv(f, _trailing_separator(header_too=True)), [], READ),
    "old_mac_line_endings": (lambda f: _csv(f, _one("holdout", lambda t: t.to_csv(index=False).replace("\n", "\r"))), [], READ),
    "quoted_line_breaks": (lambda f: _csv(f, _one("real", lambda t: t.assign(city=t["city"] + "\nNord"))), [], VALUES),
    "comment_line_above_the_header": (
        lambda f: _csv(f, _one("real", lambda t: "# exported 2024-01-01 by X\n" + t.to_csv(index=False))),
        [],
        r"the `real` file .* has rows of 5 fields but its header line '# exported .*' names 1 column \(it looks like a comment: remove it\)",
    ),
    # ------------------------------------------------------------ encodings
    "utf16_le_without_bom": (lambda f: _csv(f, _one("real", lambda t: t.to_csv(index=False).encode("utf-16-le"))), [], READ),
    "utf16_be_without_bom": (lambda f: _csv(f, _one("synthetic", lambda t: t.to_csv(index=False).encode("utf-16-be"))), [], READ),
    "bom_file_among_latin1_files": (
        lambda f: _csv(f, lambda r, t: t.to_csv(index=False).encode("utf-8-sig" if r == "real" else "latin-1")),
        ["--encoding", "latin-1"],
        READ,
    ),
    "cp1252_euro_sign": (lambda f: _csv(f, lambda r, t: t.assign(city=t["city"] + " €").to_csv(index=False).encode("cp1252")), ["--encoding", "cp1252"], VALUES),
    "utf16_option_on_utf8_file": (_plain, ["--encoding", "utf-16"], r"the `real` file .* is not UTF-16 text .*leave out `--encoding`"),
    "latin1_after_the_first_64_kib": (
        lambda f: _csv(f, _one("holdout", lambda t: pd.concat([t] * 200).to_csv(index=False).encode("utf-8") + "Genève,1\n".encode("latin-1"))),
        [],
        r"the `holdout` file .* is not valid UTF-8 text \(byte 0xe8 at position \d{5,} cannot be decoded\); give its encoding with `--encoding`",
    ),
    # ------------------------------------------------------------ content vs. name
    "gzip_named_csv": (_renamed("real", "real.csv", lambda p: p.write_bytes(gzip.compress(REAL.to_csv(index=False).encode()))), [], READ),
    "plain_text_named_csv_gz": (_renamed("synthetic", "synthetic.csv.gz", lambda p: SYN.to_csv(p, index=False, compression=None)), [], READ),
    "parquet_named_csv": (_renamed("holdout", "holdout.csv", lambda p: HOLD.to_parquet(p)), [], READ),
    "uppercase_extensions": (_renamed("synthetic", "SYNTHETIC.CSV.GZ", lambda p: p.write_bytes(gzip.compress(SYN.to_csv(index=False).encode()))), [], READ),
    "brackets_and_spaces_in_the_name": (_renamed("real", "real [2024] (final).csv", lambda p: REAL.to_csv(p, index=False)), [], READ),
    "zip_as_a_mac_makes_it": (_zip_as_a_mac_makes_it, [], READ),
    "xlsx_named_csv": (_renamed("real", "real.csv", _xlsx), [], r"the `real` file .* is a spreadsheet \(.xlsx or .ods\), not a CSV file; save it as CSV"),
    "xls_workbook": (_renamed("real", "real.xls", lambda p: p.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512))), [], r"is a spreadsheet \(.xls\), not a CSV file"),
    "empty_zip": (_renamed("real", "real.csv.zip", lambda p: zipfile.ZipFile(p, "w").close()), [], r"could not be read \(zip\): holds 0 files"),
    "header_only_without_newline": (lambda f: _csv(f, _one("holdout", lambda t: ",".join(t.columns))), [], r"the `holdout` file .* has a header row \(5 columns\) but no data rows"),
    # ------------------------------------------------------------ Parquet types
    "parquet_decimals": (lambda f: _parquet(f, lambda t: t.assign(income=[decimal.Decimal(f"{v:.2f}") for v in t["income"]])), [], READ),
    "parquet_date32": (lambda f: _parquet(f, lambda t: pa.Table.from_pandas(t.assign(joined=pd.to_datetime(t["joined"]).dt.date), preserve_index=False)), [], READ),
    "parquet_time_zones": (lambda f: _parquet(f, lambda t: _dates(t).assign(joined=lambda x: x["joined"].dt.tz_localize("UTC"))), [], READ),
    "parquet_dates_beyond_2262": (
        lambda f: _parquet(f, _far_dates),
        [],
        r"column 'valid_to' of the `real` table has dates outside the range synthrisk handles \(years 1678 to 2261\): \['9999-12-31[^']*'\]",
    ),
    # ------------------------------------------------------------ values
    "date_placeholder_9999_in_csv": (
        lambda f: _csv(f, _one("synthetic", lambda t: t.assign(joined=np.where(t.index % 3, t["joined"], "9999-12-31")))),
        [],
        r"column 'joined' of the `synthetic` table has dates outside the range .*replace them with missing values",
    ),
    "dates_in_another_format_per_table": (
        lambda f: _csv(f, lambda r, t: t if r == "real" else t.assign(joined=pd.to_datetime(t["joined"]).dt.strftime("%d/%m/%Y" if r == "synthetic" else "%m/%d/%Y %H:%M"))),
        [],
        VALUES,
    ),
    "date_column_missing_in_synthetic_only": (lambda f: _csv(f, _one("synthetic", lambda t: t.assign(joined=None))), [], VALUES),
    "booleans_as_words_and_digits": (
        lambda f: _csv(f, lambda r, t: t.assign(member={"real": np.where(t.index % 2, "True", "False"), "synthetic": t.index % 2, "holdout": np.where(t.index % 3, "yes", "no")}[r])),
        [],
        VALUES,
    ),
    "text_in_real_numbers_in_synthetic": (
        lambda f: _csv(f, lambda r, t: t.assign(code=[f"c{i % 4}" for i in range(len(t))] if r != "synthetic" else t.index % 4)),
        [],
        VALUES,
    ),
    "huge_and_subnormal_magnitudes": (lambda f: _csv(f, lambda r, t: t.assign(income=t["income"] * 1e300, tiny=t["age"] * 1e-320)), [], VALUES),
    "markup_and_emoji_in_names_and_values": (lambda f: _csv(f, lambda r, t: _markup(t)), ["--include-values"], VALUES),
    "row_index_saved_in_real_only": (lambda f: _csv(f, lambda r, t: t.to_csv(index=r == "real")), [], READ),
    "files_without_a_header_row": (
        lambda f: _csv(f, lambda r, t: t.to_csv(index=False, header=False) if r != "real" else t),
        [],
        r"The `synthetic` table has columns named like values \('\d+'\): does its file lack a header row\?",
    ),
    "names_differing_in_case_and_spaces": (
        lambda f: _csv(f, _one("synthetic", lambda t: t.rename(columns={"age": "Age", "sex": "sex "}))),
        [],
        r"only in `synthetic`: \['Age', 'sex '\]\)\. Pass tables with the same columns\. The names 'age' / 'Age', 'sex' / 'sex ' differ only in upper/lower case or spaces",
    ),
    # ------------------------------------------------------------ metadata, thresholds
    "metadata_composite_primary_key": (_with("--metadata", {"columns": {}, "primary_key": ["age", "sex"]}), [], r"`metadata` primary_key must be one column name; got \['age', 'sex'\]"),
    "metadata_sdtype_not_a_string": (_with("--metadata", {"columns": {"age": {"sdtype": ["numerical"]}}}), [], r"`metadata` column 'age': 'sdtype' must be a string"),
    "metadata_yaml_indented_with_tabs": (_with("--metadata", "columns:\n\tage: {sdtype: numerical}\n", "meta.yaml"), [], r"could not be parsed: found character '\\t' that cannot start any token \(line 2, column 1\); YAML indents with spaces, not tabs"),
    "thresholds_unfinished_yaml": (_with("--thresholds", "nndr: {pass: 0.5, fail: [\n", "t.yaml"), [], r"the thresholds file .* could not be parsed: expected the node content, but found '<stream end>' \(line 2, column 1\)"),
    # ------------------------------------------------------------ options and outputs
    "metrics_only_commas": (_plain, ["--metrics", ",,"], r"`--metrics` names no metric \(got ',,'\)"),
    "metrics_in_capitals": (_plain, ["--metrics", " DCR_Baseline_Protection, Identical_Match_Share "], READ),
    "json_over_the_synthetic_input": (_plain, ["--json", "{synthetic}"], r"the `--json` output .* is the `synthetic` input file; writing it would overwrite the input"),
    "html_over_the_metadata": (_with("--metadata", {"columns": {}}), ["--html", "{--metadata}"], r"the `--html` output .* is the `metadata` input file"),
    "json_and_html_to_one_file": (_plain, ["--json", "{out}/r.out", "--html", "{out}/r.out"], r"two outputs would be written to the same file"),
    "output_is_a_folder": (_plain, ["--json", "{out}"], r"cannot write .*: it is a folder; give a file name such as"),
    "output_name_too_long": (_plain, ["--json", "{out}/" + "r" * 300 + ".json"], r"cannot write .*: File name too long"),
    "input_name_too_long": (lambda f: {**_csv(f), "real": f / ("r" * 300 + ".csv")}, [], r"the `real` file .* cannot be read \(File name too long\)"),
    "named_pipe_as_input": (_renamed("holdout", "holdout_pipe.csv", lambda p: os.mkfifo(p)), [], r"the `holdout` file .* is not a regular file \(a pipe or a device\)"),
}  # fmt: skip


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _run(
    folder: Path, build: Build, extra: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str, Path, dict[Path, str]]:
    inputs = folder / "in"
    inputs.mkdir(parents=True)
    built = build(inputs)
    out = folder / "out"
    out.mkdir()
    args = ["evaluate"]
    for key, path in built.items():
        args += [f"--{key}" if not key.startswith("--") else key, str(path)]
    named = {"out": str(out), **{k: str(v) for k, v in built.items()}}
    extra = [a.format(**named) if a.startswith("{") else a for a in extra]
    if "--json" not in extra:
        args += ["--json", str(out / "report.json"), "--html", str(out / "report.html")]
    hashes = {
        p: _digest(p) for p in inputs.rglob("*") if p.is_file() and not p.is_fifo()
    }
    code = main([*args, "--quiet", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, out, hashes


@pytest.fixture(scope="module")
def plain_scores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("plain")
    paths = _csv(folder)
    out = folder / "report.json"
    args = [a for role, p in paths.items() for a in (f"--{role}", str(p))]
    assert main(["evaluate", *args, "--json", str(out), "--quiet", *FAST]) == 0
    return _summary(json.loads(out.read_text(encoding="utf-8")))


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "scores": {r["metric"]: r["score"] for r in data["results"]},
        "kinds": {c: v["kind"] for c, v in data["schema"]["columns"].items()},
        "rows": {n: (v or {}).get("rows") for n, v in data["inputs"].items()},
    }


@pytest.mark.parametrize("case", list(CASES))
def test_every_odd_input_ends_in_a_report_or_one_clear_line(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    umask_022: None,
    plain_scores: dict[str, Any],
) -> None:
    build, extra, expected = CASES[case]
    if expected == READ and "--metrics" not in extra:
        extra = [*extra, *FAST]
    code, out, err, out_dir, hashes = _run(tmp_path, build, extra, capsys)
    assert "Traceback" not in out + err
    assert {path: _digest(path) for path in hashes} == hashes  # inputs unchanged
    if expected not in (READ, VALUES):
        assert code == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("synthrisk: error: "), err
        assert re.search(expected, lines[0]), lines[0]
        assert not out_dir.exists() or not any(out_dir.iterdir())
        return
    assert code in (0, 1), err
    assert err == "", err  # no warning of any library leaks out
    written = sorted(out_dir.iterdir())
    assert [p.name for p in written] == ["report.html", "report.json"]
    for path in written:
        assert path.stat().st_mode & 0o777 == 0o644, path
    data = json.loads((out_dir / "report.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        assert result["status"] in ("ok", "undefined", "skipped"), result
        assert result["status"] == "ok" or result["reason"]
    if expected == READ:
        assert _summary(data) == plain_scores
    _CHECKS.get(case, lambda data, html: None)(
        data, (out_dir / "report.html").read_text(encoding="utf-8")
    )


def _notes(data: dict[str, Any]) -> str:
    return "\n".join(data["warnings"])


def _check_decimal_commas(data: dict[str, Any], html: str) -> None:
    for role in ("real", "synthetic", "holdout"):
        assert (
            f"the `{role}` file '{role}.csv': columns ['income'] hold numbers written with "
            "a decimal comma or thousands separators; read as numbers."
        ) in data["warnings"]
    assert "/in/" not in _notes(data)  # no folder of this machine in the report


def _check_utf16(data: dict[str, Any], html: str) -> None:
    assert "is UTF-16 text without a byte-order mark" in _notes(data)


def _check_content(data: dict[str, Any], html: str) -> None:
    assert "despite its name" in _notes(data) or "is not gzip-compressed" in _notes(
        data
    )


def _check_dates_per_table(data: dict[str, Any], html: str) -> None:
    notes = _notes(data)
    assert (
        "column 'joined' holds dates as '%d/%m/%Y' in the `synthetic` table and as 'ISO8601'"
        in notes
    )
    assert "as '%m/%d/%Y %H:%M' in the `holdout` table" in notes


def _check_markup(data: dict[str, Any], html: str) -> None:
    assert "<script" not in html  # the report has no script, and no name adds one
    assert "</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "âge 🎂" in data["inputs"]["real"]["columns"]


def _check_missing_dates(data: dict[str, Any], html: str) -> None:
    assert data["schema"]["columns"]["joined"]["kind"] == "datetime"
    assert "column 'joined' is entirely missing in the `synthetic` table" in _notes(
        data
    )


def _check_row_index(data: dict[str, Any], html: str) -> None:
    assert any(
        w.startswith(
            "column 'Unnamed: 0' has no header and is only in the `real` table"
        )
        for w in data["warnings"]
    )


_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "row_index_saved_in_real_only": _check_row_index,
    "excel_semicolons_decimal_commas_crlf_bom": _check_decimal_commas,
    "thousands_dots_decimal_commas": _check_decimal_commas,
    "utf16_le_without_bom": _check_utf16,
    "utf16_be_without_bom": _check_utf16,
    "gzip_named_csv": _check_content,
    "plain_text_named_csv_gz": _check_content,
    "parquet_named_csv": _check_content,
    "dates_in_another_format_per_table": _check_dates_per_table,
    "markup_and_emoji_in_names_and_values": _check_markup,
    "date_column_missing_in_synthetic_only": _check_missing_dates,
}


def test_reports_can_go_to_standard_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json -`` prints the JSON report (and nothing else) on standard output."""
    paths = _csv(tmp_path)
    args = [a for role, p in paths.items() for a in (f"--{role}", str(p))]
    assert main(["evaluate", *args, "--json", "-", *FAST]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [r["metric"] for r in data["results"]] == FAST[1].split(",")
    assert (
        main(
            [
                "evaluate",
                *args,
                "--html",
                "-",
                "--json",
                str(tmp_path / "r.json"),
                *FAST,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("<!DOCTYPE html>")
    assert out.rstrip().endswith("</html>")
    assert json.loads((tmp_path / "r.json").read_text())["results"]
    assert main(["evaluate", *args, "--json", "-", "--html", "-", *FAST]) == 2
    assert "only one output can go to standard output" in capsys.readouterr().err


def test_report_never_overwrites_its_own_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _csv(tmp_path)
    report = tmp_path / "r.json"
    args = [a for role, p in paths.items() for a in (f"--{role}", str(p))]
    assert main(["evaluate", *args, "--json", str(report), "--quiet", *FAST]) == 0
    before = _digest(report)
    assert main(["report", str(report), "--html", str(report), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synthrisk: error: the `--html` output ")
    assert "is the `report` input file" in err
    assert _digest(report) == before


REPORT_DAMAGE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "result_is_null": lambda d: d["results"].__setitem__(0, None),
    "results_is_a_mapping": lambda d: d.__setitem__("results", {"a": 1}),
    "result_without_metric": lambda d: d["results"][0].pop("metric"),
    "score_is_text": lambda d: d["results"][0].__setitem__("score", "high"),
    "unknown_status": lambda d: d["results"][0].__setitem__("status", "maybe"),
    "interval_of_one_number": lambda d: d["results"][0].__setitem__("ci", [1]),
    "inputs_is_a_list": lambda d: d.__setitem__("inputs", [1, 2]),
    "warnings_is_text": lambda d: d.__setitem__("warnings", "oops"),
    "schema_is_text": lambda d: d.__setitem__("schema", "x"),
    "verdict_is_text": lambda d: d.__setitem__("verdict", "fail"),
    "score_is_nan": lambda d: d["results"][0].__setitem__("score", float("nan")),
    "truncated": lambda d: None,
}


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("saved")
    paths = _csv(folder)
    args = [a for role, p in paths.items() for a in (f"--{role}", str(p))]
    out = folder / "r.json"
    assert main(["evaluate", *args, "--json", str(out), "--quiet", *FAST]) == 0
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("damage", list(REPORT_DAMAGE))
def test_a_damaged_report_is_one_clear_line(
    damage: str,
    saved_report: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = json.loads(saved_report)
    REPORT_DAMAGE[damage](data)
    text = (
        saved_report[: len(saved_report) // 2]
        if damage == "truncated"
        else json.dumps(data)
    )
    path = tmp_path / "r.json"
    path.write_text(text)
    code = main(["report", str(path), "--html", str(tmp_path / "r.html"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith(f"synthrisk: error: the report file {str(path)!r} is not "), (
        err
    )
    assert not (tmp_path / "r.html").exists()


def test_folder_and_bracket_names_do_not_start_a_cluster(tmp_path: Path) -> None:
    """A file whose name has brackets is a file, not a glob pattern of a dataset."""
    from synthrisk.io.dataset import is_dataset

    path = tmp_path / "real [2024].csv"
    path.write_text("a\n1\n")
    assert not is_dataset(path)
    assert is_dataset(tmp_path / "part-*.parquet")
    shutil.rmtree(tmp_path)


def test_warnings_are_one_line_each_and_never_break_the_error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib
    import warnings

    from synthrisk.exceptions import InputError, SynthriskWarning

    cli = importlib.import_module("synthrisk.cli.main")  # the module, not the function

    def run(args: Any) -> int:
        warnings.warn("a caveat\nover two lines", SynthriskWarning, stacklevel=1)
        warnings.warn("a library's remark", RuntimeWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli, "_dispatch", run)
    assert main(["metrics"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "synthrisk: warning: a caveat over two lines",
        "synthrisk: warning: RuntimeWarning: a library's remark",
    ]

    def fail(args: Any) -> int:
        warnings.warn("a caveat", SynthriskWarning, stacklevel=1)
        msg = "a message\n  quoting a parser"
        raise InputError(msg)

    monkeypatch.setattr(cli, "_dispatch", fail)
    assert main(["metrics"]) == 2
    assert capsys.readouterr().err == "synthrisk: error: a message quoting a parser\n"
