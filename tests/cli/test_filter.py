# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk filter`` and ``synthrisk evaluate --filtered-out``: files in, filtered table out."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests.test_filtering import planted_tables

from synthrisk.cli import main

METRICS = "identification,dcr_share"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("filter")
    real, synthetic, holdout, targets = planted_tables()
    paths = {
        "real": folder / "real.csv",
        "synthetic": folder / "syn.csv",
        "holdout": folder / "holdout.parquet",
    }
    real.to_csv(paths["real"], index=False)
    synthetic.to_csv(paths["synthetic"], index=False)
    holdout.to_parquet(paths["holdout"])
    (folder / "targets.json").write_text(json.dumps(targets))
    return paths


def _inputs(files: dict[str, Path]) -> list[str]:
    return [
        "--real", str(files["real"]), "--synthetic", str(files["synthetic"]),
        "--holdout", str(files["holdout"]), "--metrics", METRICS,
    ]  # fmt: skip


def test_filter_writes_the_table_and_the_report(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "filtered.csv", tmp_path / "filter.json"
    code = main(["filter", *_inputs(files), "--out", str(out), "--json", str(report), "--quiet"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    data = json.loads(report.read_text())
    removed = data["removed_rows"]
    targets = json.loads((files["synthetic"].parent / "targets.json").read_text())
    assert set(targets) <= set(removed)
    synthetic = pd.read_csv(files["synthetic"])
    filtered = pd.read_csv(out)
    keep = [i for i in range(len(synthetic)) if i not in set(removed)]
    pd.testing.assert_frame_equal(filtered, synthetic.iloc[keep].reset_index(drop=True))
    assert f"Removed {len(removed)} of {len(synthetic)} synthetic rows" in printed
    assert "Verdict before → after:" in printed
    assert "privacy onion" in printed
    comparison = data["comparison"]
    assert comparison["overall"]["before"] == data["before"]["verdict"]["overall"]
    assert comparison["overall"]["after"] == data["after"]["verdict"]["overall"]
    assert data["before"]["inputs"]["synthetic"]["file"] == "syn.csv"


def test_filter_gates_on_the_verdict_after_filtering(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "filtered.parquet"
    code = main(["filter", *_inputs(files), "--out", str(out), "--fail-on", "fail", "--quiet"])  # fmt: skip
    report = tmp_path / "after.json"
    assert code == 0, capsys.readouterr().err
    assert pd.read_parquet(out).shape[0] < pd.read_csv(files["synthetic"]).shape[0]
    # the strict policy fails any copied person: the chance near copies of a
    # filtered table may remain, and then the gate fails after filtering too
    code = main(["filter", *_inputs(files), "--out", str(out), "--json", str(report), "--policy", "strict", "--fail-on", "review", "--quiet"])  # fmt: skip
    after = json.loads(report.read_text())["after"]["verdict"]
    assert after["policy"] == "strict"
    assert code == (1 if after["overall"] in ("review", "fail") else 0)


def test_filter_refuses_bad_input_with_exit_code_2(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "filtered.csv"
    missing = ["filter", "--real", str(files["real"]), "--synthetic", str(files["synthetic"]), "--out", str(out)]  # fmt: skip
    assert main(missing) == 2  # no --holdout
    assert "--holdout" in capsys.readouterr().err
    over = ["filter", *_inputs(files), "--out", str(files["synthetic"])]
    assert main(over) == 2  # would overwrite the synthetic input
    assert "overwrite the input" in capsys.readouterr().err
    sheet = tmp_path / "filtered.xlsx"
    assert main(["filter", *_inputs(files), "--out", str(sheet)]) == 2
    assert "cannot tell which table format" in capsys.readouterr().err
    assert not out.exists()
    assert not sheet.exists()


def test_evaluate_filtered_out_writes_the_table_without_reassessing(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "filtered.csv.gz", tmp_path / "report.json"
    code = main(["evaluate", *_inputs(files), "--metrics", "dcr_share", "--filtered-out", str(out), "--json", str(report), "--include-records", "--policy", "strict", "--quiet"])  # fmt: skip
    printed = capsys.readouterr().out
    data = json.loads(report.read_text())
    assert code == 0  # no --fail-on: the strict policy's fail does not gate
    assert data["verdict"]["policy"] == "strict"
    # identification was added to run the filter
    ids = [r["metric"] for r in data["results"]]
    assert "identification" in ids
    copying = next(r for r in data["results"] if r["metric"] == "identification")
    removed = copying["records"]["copying_rows"]["index"]
    synthetic = pd.read_csv(files["synthetic"])
    filtered = pd.read_csv(out)
    assert len(filtered) == len(synthetic) - len(removed)
    keep = [i for i in range(len(synthetic)) if i not in set(removed)]
    pd.testing.assert_frame_equal(filtered, synthetic.iloc[keep].reset_index(drop=True))
    assert f"without the {len(removed)} rows that copy a training person" in printed
    assert "synthrisk filter" in printed


def test_evaluate_filtered_out_needs_a_holdout(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["evaluate", "--real", str(files["real"]), "--synthetic", str(files["synthetic"]), "--metrics", "dcr_baseline_protection", "--filtered-out", str(tmp_path / "f.csv")]  # fmt: skip
    assert main(args) == 2
    assert "needs a holdout table" in capsys.readouterr().err
