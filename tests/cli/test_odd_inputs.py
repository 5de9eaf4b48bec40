# SPDX-License-Identifier: BSD-3-Clause
"""The command line on files as users have them.

Every case ends in a report (exit 0 or 1) or in one line ``synthrisk: error: …`` (exit
2): never an internal error (exit 3) or a traceback. Inputs are never modified, and the
files written are readable by others (their mode follows the umask).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.cli import main

N_REAL, N_SYN, N_HOLD = 40, 40, 24


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": np.round(rng.lognormal(10, 1, n), 2),
            "sex": rng.choice(["F", "M"], n),
            "city": rng.choice(["Zürich", "Genève", "Bern", "Basel"], n),
            "joined": pd.date_range("2020-01-01", periods=n, freq="D").strftime(
                "%Y-%m-%d"
            ),
        }
    )


REAL, SYN, HOLD = _table(N_REAL, 1), _table(N_SYN, 2), _table(N_HOLD, 3)

Writer = Callable[[Path], Any]


def csv(frame: pd.DataFrame, **options: Any) -> Writer:
    return lambda path: frame.to_csv(path, index=False, **options)


def text(content: str, encoding: str = "utf-8") -> Writer:
    return lambda path: path.write_bytes(content.encode(encoding))


def compressed(frame: pd.DataFrame, opener: Callable[..., Any]) -> Writer:
    def write(path: Path) -> None:
        with opener(path, "wb") as handle:
            handle.write(frame.to_csv(index=False).encode("utf-8"))

    return write


def zipped(*frames: pd.DataFrame) -> Writer:
    def write(path: Path) -> None:
        with zipfile.ZipFile(path, "w") as archive:
            for i, frame in enumerate(frames):
                archive.writestr(f"table{i}.csv", frame.to_csv(index=False))

    return write


def parquet(frame: pd.DataFrame) -> Writer:
    return lambda path: frame.to_parquet(path)


def _nullable(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.astype(
        {"age": "Int64", "sex": "category", "city": "string", "income": "Float64"}
    )
    out["member"] = pd.array([i % 3 == 0 for i in range(len(out))], dtype="boolean")
    out.loc[out.index % 5 == 0, ["age", "income", "member"]] = pd.NA
    return out


def _wide(frame: pd.DataFrame, seed: int, n_extra: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    extra = pd.DataFrame(
        rng.normal(size=(len(frame), n_extra)).round(3),
        columns=[f"x{i}" for i in range(n_extra)],
    )
    return pd.concat([frame, extra], axis=1)


def _standard(**tables: Writer) -> dict[str, tuple[str, Writer]]:
    files = {
        "real": ("real.csv", csv(REAL)),
        "synthetic": ("synthetic.csv", csv(SYN)),
        "holdout": ("holdout.csv", csv(HOLD)),
    }
    for name, writer in tables.items():
        files[name] = (files[name][0], writer)
    return files


REPORT = "report"

#: name -> (files {role: (file name, writer)}, extra arguments, REPORT or error regex)
CASES: dict[str, tuple[dict[str, tuple[str, Writer]], list[str], str]] = {
    "plain": (_standard(), [], REPORT),
    "compressed": (
        {
            "real": ("real.csv.gz", compressed(REAL, gzip.open)),
            "synthetic": ("synthetic.csv.bz2", compressed(SYN, bz2.open)),
            "holdout": ("holdout.csv.zip", zipped(HOLD)),
        },
        [],
        REPORT,
    ),
    "xz_and_tsv": (
        {
            "real": ("real.tsv", csv(REAL, sep="\t")),
            "synthetic": ("synthetic.csv.xz", compressed(SYN, lzma.open)),
            "holdout": ("holdout.tsv.gz", compressed(HOLD, gzip.open)),
        },
        [],
        REPORT,
    ),
    "semicolons_and_crlf": (
        _standard(
            real=csv(REAL, sep=";"), synthetic=csv(SYN, lineterminator="\r\n")
        ),
        [],
        REPORT,
    ),
    "byte_order_mark": (_standard(real=csv(REAL, encoding="utf-8-sig")), [], REPORT),
    "utf16_with_bom": (_standard(synthetic=csv(SYN, encoding="utf-16")), [], REPORT),
    "latin1_without_option": (
        _standard(real=csv(REAL, encoding="latin-1")),
        [],
        r"the `real` file .* is not valid UTF-8 text .*--encoding",
    ),
    "latin1_with_option": (
        _standard(
            real=csv(REAL, encoding="latin-1"),
            synthetic=csv(SYN, encoding="latin-1"),
            holdout=csv(HOLD, encoding="latin-1"),
        ),
        ["--encoding", "latin-1"],
        REPORT,
    ),
    "unknown_encoding": (_standard(), ["--encoding", "klingon"], r"not a known text encoding"),
    "empty_file": (_standard(real=text("")), [], r"the `real` file .* is empty"),
    "header_only": (
        _standard(holdout=csv(HOLD.iloc[:0])),
        [],
        r"the `holdout` file .* has a header row \(5 columns\) but no data rows",
    ),
    "duplicate_columns": (
        _standard(synthetic=text("age,sex,age\n30,F,31\n40,M,41\n")),
        [],
        r"the `synthetic` file .* has duplicated column names \['age'\]",
    ),
    "columns_in_another_order": (
        _standard(synthetic=csv(SYN[SYN.columns[::-1]]), holdout=csv(HOLD[["city", *HOLD.columns[:3], "joined"]])),
        [],
        REPORT,
    ),
    "int_in_real_float_in_synthetic": (
        _standard(synthetic=csv(SYN.assign(age=SYN["age"] + 0.5))),
        [],
        REPORT,
    ),
    "all_unique_string_column": (
        _standard(
            real=csv(REAL.assign(name=[f"person {i}" for i in range(N_REAL)])),
            synthetic=csv(SYN.assign(name=[f"synth {i}" for i in range(N_SYN)])),
            holdout=csv(HOLD.assign(name=[f"other {i}" for i in range(N_HOLD)])),
        ),
        [],
        REPORT,
    ),
    "saved_row_index": (
        _standard(
            real=lambda p: REAL.to_csv(p),
            synthetic=lambda p: SYN.to_csv(p),
            holdout=lambda p: HOLD.to_csv(p),
        ),
        [],
        REPORT,
    ),
    "column_missing_in_synthetic_only": (
        _standard(synthetic=csv(SYN.assign(income=np.nan, city=None))),
        [],
        REPORT,
    ),
    "parquet_nullable_dtypes": (
        {
            "real": ("real.parquet", parquet(_nullable(REAL))),
            "synthetic": ("synthetic.parquet", parquet(_nullable(SYN))),
            "holdout": ("holdout.csv", csv(_nullable(HOLD))),
        },
        [],
        REPORT,
    ),
    "huge_magnitudes": (
        _standard(
            real=csv(REAL.assign(income=REAL["income"] * 1e300)),
            synthetic=csv(SYN.assign(income=SYN["income"] * 1e300)),
            holdout=csv(HOLD.assign(income=HOLD["income"] * 1e300)),
        ),
        [],
        REPORT,
    ),
    "range_beyond_float64": (
        _standard(
            real=csv(REAL.assign(income=np.where(REAL.index % 2, 1e308, -1e308))),
        ),
        [],
        r"column 'income' spans more than the floating-point range",
    ),
    "wide_table": (
        _standard(
            real=csv(_wide(REAL, 1)), synthetic=csv(_wide(SYN, 2)), holdout=csv(_wide(HOLD, 3))
        ),
        [],
        REPORT,
    ),
    "one_row_each": (
        _standard(real=csv(REAL.iloc[:1]), synthetic=csv(SYN.iloc[:1]), holdout=csv(HOLD.iloc[:1])),
        [],
        REPORT,
    ),
    "single_column": (
        _standard(real=csv(REAL[["sex"]]), synthetic=csv(SYN[["sex"]]), holdout=csv(HOLD[["sex"]])),
        [],
        REPORT,
    ),
    "constant_columns": (
        _standard(
            real=csv(REAL.assign(sex="F", age=30)),
            synthetic=csv(SYN.assign(sex="F", age=30)),
            holdout=csv(HOLD.assign(sex="F", age=30)),
        ),
        [],
        REPORT,
    ),
    "exact_copy": (_standard(synthetic=csv(REAL)), [], REPORT),
    "named_metric_that_cannot_run": (
        _standard(real=csv(REAL.iloc[:1]), holdout=csv(HOLD.iloc[:1])),
        ["--metrics", "nndr"],
        r"`nndr` needs at least 2 rows",
    ),
    "unknown_metric": (_standard(), ["--metrics", "nope"], r"unknown metric 'nope'"),
    "working_memory_zero": (_standard(), ["--working-memory", "0"], r"`working_memory` must be a positive number of MiB; got 0"),
    "working_memory_negative": (_standard(), ["--working-memory", "-5"], r"`working_memory` must be a positive number"),
    "working_memory_nan": (_standard(), ["--working-memory", "nan"], r"`working_memory` must be a positive number"),
    "negative_seed": (_standard(), ["--seed", "-1"], r"`seed` must be an integer >= 0"),
    "top_n_zero": (_standard(), ["--top-n", "0"], r"`--top-n` must be an integer >= 1"),
    "different_columns": (
        _standard(synthetic=csv(SYN.drop(columns="city"))),
        [],
        r"the `real` and `synthetic` tables have different columns \(only in `real`: \['city'\]\)",
    ),
    "infinite_values": (
        _standard(synthetic=csv(SYN.assign(income=np.inf))),
        [],
        r"column 'income' of the `synthetic` table has \d+ infinite value",
    ),
    "unsupported_extension": (
        {**_standard(), "real": ("real.dat", text("a,b\n1,2\n"))},
        [],
        r"unsupported extension '.dat'",
    ),
    "workbook": (
        {**_standard(), "real": ("real.xlsx", text("a,b\n1,2\n"))},
        [],
        r"the `real` file .* is a spreadsheet \(.xlsx\), not a CSV file; save it as CSV",
    ),
    "zip_with_two_tables": (
        {**_standard(), "real": ("real.csv.zip", zipped(REAL, REAL))},
        [],
        r"holds 2 files: \['table0.csv', 'table1.csv'\]; a .zip table must hold exactly one",
    ),
    "not_gzip": (  # read as what it is, with a note
        {**_standard(), "real": ("real.csv.gz", text(REAL.to_csv(index=False)))},
        [],
        REPORT,
    ),
    "truncated_gzip": (
        {**_standard(), "real": ("real.csv.gz", lambda p: p.write_bytes(gzip.compress(REAL.to_csv(index=False).encode())[:-12]))},
        [],
        r"the `real` file .* could not be read \(gzip\): Compressed file ended before the end-of-stream marker",
    ),
    "parquet_that_is_not": (
        {**_standard(), "holdout": ("holdout.parquet", text("a,b\n1,2\n"))},
        [],
        r"is not a Parquet file \(it does not start with Parquet.s .PAR1. mark\); if it holds CSV text, name it .csv",
    ),
    "missing_file": (
        {**_standard(), "holdout": ("holdout.csv", lambda p: None)},
        [],
        r"the `holdout` file .* does not exist",
    ),
}  # fmt: skip


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def umask_022() -> Any:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _write_inputs(
    folder: Path, files: dict[str, tuple[str, Writer]]
) -> tuple[list[str], dict[Path, str]]:
    args, hashes = [], {}
    for role, (name, writer) in files.items():
        path = folder / name
        writer(path)
        args += [f"--{role}", str(path)]
        if path.exists():
            hashes[path] = _digest(path)
    return args, hashes


@pytest.mark.parametrize("case", list(CASES))
def test_every_case_ends_in_a_report_or_one_clear_line(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    umask_022: None,
) -> None:
    files, extra, expected = CASES[case]
    inputs = tmp_path / "in"
    inputs.mkdir()
    args, hashes = _write_inputs(inputs, files)
    out = tmp_path / "out" / "nested"
    code = main(
        ["evaluate", *args, "--json", str(out / "report.json"), "--html", str(out / "report.html"), "--quiet", *extra]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    # inputs are never modified
    assert {path: _digest(path) for path in hashes} == hashes
    if expected != REPORT:
        assert code == 2, captured.err
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, captured.err
        assert lines[0].startswith("synthrisk: error: ")
        assert re.search(expected, lines[0]), lines[0]
        assert not out.exists() or not any(out.iterdir())
        return
    assert code in (0, 1), captured.err
    assert captured.err == ""  # no warning of any library leaks out
    written = sorted(p.name for p in out.iterdir())
    assert written == ["report.html", "report.json"]  # no temporary files left
    for path in out.iterdir():
        assert path.stat().st_mode & 0o777 == 0o644, path
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    for result in data["results"]:
        assert result["status"] in ("ok", "undefined", "skipped")
        if result["status"] == "ok":
            assert result["score"] is not None
            assert np.isfinite(result["score"])
        else:
            assert result["score"] is None
            assert result["reason"]
    _CHECKS.get(case, lambda data, err: None)(data, captured.out)


def _scores(data: dict[str, Any]) -> dict[str, Any]:
    return {r["metric"]: r["score"] for r in data["results"]}


def _check_bom(data: dict[str, Any], out: str) -> None:
    assert data["inputs"]["real"]["columns"] == list(REAL.columns)


def _check_unique_strings(data: dict[str, Any], out: str) -> None:
    assert data["schema"]["excluded"] == ["name"]
    assert any("column 'name' (" in w and "left out of" in w for w in data["warnings"])


def _check_row_index(data: dict[str, Any], out: str) -> None:
    assert data["schema"]["excluded"] == ["Unnamed: 0"]
    assert data["schema"]["columns"]["Unnamed: 0"]["kind"] == "id"


def _check_missing_in_synthetic(data: dict[str, Any], out: str) -> None:
    assert any(
        "'income' is entirely missing in the `synthetic`" in w for w in data["warnings"]
    )
    # every metric ran; the CAP attack's default known columns include the missing one,
    # so no real row's key occurs in the synthetic table (missing never matches); the
    # vulnerable-people test needs more people than these few rows hold
    by_metric = {r["metric"]: r for r in data["results"]}
    vulnerable = by_metric.pop("vulnerable_people")
    assert vulnerable["status"] == "skipped"
    assert "at this size" in vulnerable["reason"]
    assert all(r["status"] in ("ok", "undefined") for r in by_metric.values())
    assert [m for m, r in by_metric.items() if r["status"] != "ok"] in (
        [],
        ["disclosure_protection"],
    )


def _check_nullable(data: dict[str, Any], out: str) -> None:
    kinds = {c: v["kind"] for c, v in data["schema"]["columns"].items()}
    assert kinds == {
        "age": "numerical", "income": "numerical", "sex": "categorical", "city": "categorical",
        "joined": "datetime", "member": "boolean",
    }  # fmt: skip


def _check_one_row(data: dict[str, Any], out: str) -> None:
    status = {r["metric"]: r["status"] for r in data["results"]}
    assert status["nndr"] == "skipped"
    assert status["membership_classification"] == "skipped"


def _check_single_column(data: dict[str, Any], out: str) -> None:
    singling = next(r for r in data["results"] if r["metric"] == "singling_out")
    assert singling["status"] == "skipped"
    assert "usable columns" in singling["reason"]


def _check_not_gzip(data: dict[str, Any], out: str) -> None:
    assert (
        "the `real` file 'real.csv.gz' is not gzip-compressed; read as plain text."
        in data["warnings"]
    )


_CHECKS: dict[str, Callable[[dict[str, Any], str], None]] = {
    "not_gzip": _check_not_gzip,
    "byte_order_mark": _check_bom,
    "utf16_with_bom": _check_bom,
    "all_unique_string_column": _check_unique_strings,
    "saved_row_index": _check_row_index,
    "column_missing_in_synthetic_only": _check_missing_in_synthetic,
    "parquet_nullable_dtypes": _check_nullable,
    "one_row_each": _check_one_row,
    "single_column": _check_single_column,
}


def _report_of(
    folder: Path, files: dict[str, tuple[str, Writer]], *extra: str
) -> dict[str, Any]:
    folder.mkdir()
    args, _ = _write_inputs(folder, files)
    out = folder / "report.json"
    assert main(["evaluate", *args, "--json", str(out), "--quiet", *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_format_order_and_scale_do_not_change_the_numbers(tmp_path: Path) -> None:
    """The same data as CSV, compressed, reordered or scaled by 1e300 gives the same scores."""
    plain = _scores(_report_of(tmp_path / "plain", CASES["plain"][0]))
    for case in (
        "compressed",
        "xz_and_tsv",
        "semicolons_and_crlf",
        "byte_order_mark",
        "columns_in_another_order",
    ):
        assert _scores(_report_of(tmp_path / case, CASES[case][0])) == plain, case
    huge = _scores(_report_of(tmp_path / "huge", CASES["huge_magnitudes"][0]))
    # metrics skipped at this size have no score, in both runs
    assert {m for m, v in huge.items() if v is None} == {
        m for m, v in plain.items() if v is None
    }
    assert {m: v for m, v in huge.items() if v is not None} == pytest.approx(
        {m: v for m, v in plain.items() if v is not None}, rel=1e-9
    )


def test_outputs_keep_the_mode_of_the_files_they_replace(
    tmp_path: Path, umask_022: None
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    args, _ = _write_inputs(folder, CASES["plain"][0])
    out = tmp_path / "report.json"
    out.write_text("old")
    out.chmod(0o640)
    assert (
        main(
            [
                "evaluate",
                *args,
                "--json",
                str(out),
                "--quiet",
                "--metrics",
                "identical_match_share",
            ]
        )
        == 0
    )
    assert out.stat().st_mode & 0o777 == 0o640
    assert (
        json.loads(out.read_text())["results"][0]["metric"] == "identical_match_share"
    )


def test_the_installed_command_prints_one_line_and_no_traceback(tmp_path: Path) -> None:
    """The real process: an input error is one line on stderr and exit code 2."""
    command = Path(sys.executable).with_name("synthrisk")
    if not command.exists():
        pytest.skip("the synthrisk command is not installed next to this Python")
    args, _ = _write_inputs(tmp_path, CASES["latin1_without_option"][0])
    done = subprocess.run(
        [str(command), "evaluate", *args, "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("synthrisk: error: the `real` file ")
    assert "Traceback" not in done.stderr


def test_the_results_table_shows_skipped_metrics_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, _ = _write_inputs(tmp_path, CASES["one_row_each"][0])
    assert main(["evaluate", *args]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "│ nndr " in line)
    assert "skipped" in row
    assert (
        "nndr skipped: `nndr` needs at least 2 rows in the real and holdout tables"
        in out
    )


def test_metadata_and_run_files_with_a_byte_order_mark_or_another_encoding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, _ = _write_inputs(tmp_path, CASES["plain"][0])
    metadata = tmp_path / "metadata.json"
    metadata.write_text(
        json.dumps({"columns": {"sex": {"sdtype": "categorical"}}}),
        encoding="utf-8-sig",
    )
    code = main(["evaluate", *args, "--metadata", str(metadata), "--quiet", "--metrics", "identical_match_share"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    run = tmp_path / "run.yaml"
    run.write_bytes("version: 1\ndata: {real: réal.csv}\n".encode("latin-1"))
    assert main(["run", str(run), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synthrisk: error: ")
    assert "not UTF-8 text" in err
    assert err.count("\n") == 1
