# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk evaluate-tables``: related tables in folders, judged per person, reports written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.cli.main import main
from synthrisk.datasets.relational import load_bank


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = load_bank(400, copy_share=0.1, seed=0)
    root = tmp_path_factory.mktemp("bank")
    sides = {"real": data.real, "holdout": data.holdout, **{
        f"synthetic_{name}": tables for name, tables in data.synthetic.items()
    }}  # fmt: skip
    for side, tables in sides.items():
        (root / side).mkdir()
        for name, frame in tables.items():
            frame.to_csv(root / side / f"{name}.csv", index=False)
    (root / "metadata.json").write_text(json.dumps(data.metadata))
    return root


def _run(bank: Path, scenario: str, out: Path, *extra: str) -> int:
    return main(
        [
            "evaluate-tables",
            "--real", str(bank / "real"),
            "--synthetic", str(bank / f"synthetic_{scenario}"),
            "--holdout", str(bank / "holdout"),
            "--metadata", str(bank / "metadata.json"),
            "--json", str(out / "report.json"),
            "--html", str(out / "report.html"),
            "--quiet",
            *extra,
        ]
    )  # fmt: skip


def test_whole_copies_of_people_fail_the_gate(bank: Path, tmp_path: Path) -> None:
    assert _run(bank, "whole_copies", tmp_path, "--fail-on", "fail") == 1
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] == "fail"
    page = (tmp_path / "report.html").read_text()
    # the person-level verdict first, then the linkage attack, then each table
    assert page.index('id="release-verdict"') < page.index('id="linkage"')
    assert page.index('id="linkage"') < page.index('id="people"')
    assert page.index('id="people"') < page.index('id="table-customers"')
    assert '<span class="badge fail">fail</span>' in page


def test_quiet_still_prints_the_person_level_verdict(
    bank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(bank, "whole_copies", tmp_path) == 0
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "report.json").read_text())
    assert out.startswith(f"verdict: {data['verdict'].upper()}\n  {data['reason']}")
    # progress and the details stay silent: no linkage lines, no files written
    assert "linkage:" not in out
    assert "written to" not in out


def test_new_people_do_not_fail(bank: Path, tmp_path: Path) -> None:
    assert _run(bank, "null", tmp_path, "--fail-on", "fail") == 0
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] in ("pass", "review")


def test_a_missing_folder_is_a_usage_error(
    bank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(bank, "no_such_scenario", tmp_path) == 2
    assert "synthrisk: error:" in capsys.readouterr().err
    assert not (tmp_path / "report.json").exists()


def test_metric_choice_table_people_and_backend(bank: Path, tmp_path: Path) -> None:
    code = _run(
        bank, "whole_copies", tmp_path,
        "--metrics", "identification,dcr_share", "--table-metrics", "none",
        "--table-people", "50", "--backend", "numpy", "--working-memory", "64",
    )  # fmt: skip
    assert code == 0
    data = json.loads((tmp_path / "report.json").read_text())
    assert [r["metric"] for r in data["people"]["results"]] == [
        "identification",
        "dcr_share",
    ]
    assert data["tables"] == {}
    assert data["verdict"] == "fail"
    # the per-table metrics on a sample of 50 people per side, said in the warnings
    assert _run(
        bank, "null", tmp_path, "--metrics", "dcr_share",
        "--table-metrics", "identical_match_share", "--table-people", "50",
    ) == 0  # fmt: skip
    data = json.loads((tmp_path / "report.json").read_text())
    assert set(data["tables"]) == {"customers", "accounts", "transactions"}
    assert any("50" in w and "people" in w for w in data["warnings"])
    # all: every person's rows, no sampling warning
    assert _run(
        bank, "null", tmp_path, "--metrics", "dcr_share",
        "--table-metrics", "identical_match_share", "--table-people", "all",
    ) == 0  # fmt: skip
    data = json.loads((tmp_path / "report.json").read_text())
    assert not any("sample" in w for w in data["warnings"])


def test_progress_lines_name_each_level(
    bank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "evaluate-tables",
            "--real", str(bank / "real"),
            "--synthetic", str(bank / "synthetic_null"),
            "--holdout", str(bank / "holdout"),
            "--metadata", str(bank / "metadata.json"),
            "--json", str(tmp_path / "report.json"),
            "--metrics", "identification",
            "--table-metrics", "identical_match_share",
        ]
    )  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().err.splitlines()
    # standard error is not a terminal here: one line per finished metric, by level
    assert any(line.startswith("people · [1/1] identification  ") for line in lines)
    assert any(line.startswith("linkage attack (p-value)  ") for line in lines)
    for table in ("customers", "accounts", "transactions"):
        assert any(
            line.startswith(f"table '{table}' · [1/1] identical_match_share  ")
            for line in lines
        ), lines
    # --quiet: none of them
    assert _run(bank, "null", tmp_path, "--metrics", "identification") == 0
    assert "people · " not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--table-people", "5", "`--table-people` must be a whole number of people"),
        ("--table-people", "many", "got 'many'"),
        ("--table-metrics", ",", "`--table-metrics` names no metric"),
    ],
)
def test_bad_tables_options_are_usage_errors(
    bank: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    option: str,
    value: str,
    message: str,
) -> None:
    assert _run(bank, "null", tmp_path, option, value) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "report.json").exists()


def _yaml(bank: Path, scenario: str, out: Path, extra: str = "") -> Path:
    path = out / "tables.yaml"
    path.write_text(
        "version: 1\n"
        "tables:\n"
        f"  real: {bank / 'real'}\n"
        f"  synthetic: {bank / f'synthetic_{scenario}'}\n"
        f"  holdout: {bank / 'holdout'}\n"
        f"  metadata: {bank / 'metadata.json'}\n"
        "table_metrics: []\n"
        "report: {json: out/tables.json, html: out/tables.html}\n" + extra
    )
    return path


def test_run_file_of_related_tables_gates_on_the_person_level(
    bank: Path, tmp_path: Path
) -> None:
    path = _yaml(bank, "whole_copies", tmp_path, "gate: fail\n")
    assert main(["run", str(path), "--quiet"]) == 1
    data = json.loads((tmp_path / "out" / "tables.json").read_text())
    assert data["kind"] == "multi_table"
    assert data["verdict"] == "fail"
    assert data["tables"] == {}  # table_metrics: [] skips the tables
    assert 'id="linkage"' in (tmp_path / "out" / "tables.html").read_text()
    # no gate in the file, none on the command line: the run does not gate
    path = _yaml(bank, "whole_copies", tmp_path)
    assert main(["run", str(path), "--quiet"]) == 0
    assert main(["run", str(path), "--quiet", "--fail-on", "fail"]) == 1


def test_run_file_of_related_tables_null_passes_the_gate(
    bank: Path, tmp_path: Path
) -> None:
    path = _yaml(bank, "null", tmp_path, "gate: fail\nseed: 1\n")
    assert main(["run", str(path), "--quiet"]) == 0
    data = json.loads((tmp_path / "out" / "tables.json").read_text())
    assert data["seed"] == 1
    assert data["verdict"] in ("pass", "review")


def test_run_file_of_related_tables_bad_key_is_a_usage_error(
    bank: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _yaml(bank, "null", tmp_path, "fail_on: fail\n")
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown keys ['fail_on']" in err
    assert "'gate'" in err
    assert not (tmp_path / "out").exists()


def test_multi_table_demo_writes_data_reports_and_a_run_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--multi-table", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "child_copies: verdict FAIL" in printed
    for side in ("real", "holdout", "synthetic_null", "synthetic_child_copies"):
        assert sorted(p.name for p in (out / "data" / side).iterdir()) == [
            "accounts.csv",
            "customers.csv",
            "transactions.csv",
        ]
    verdicts = {
        version: json.loads((out / "reports" / f"{version}.json").read_text())
        for version in ("null", "whole_copies", "child_copies")
    }
    assert verdicts["null"]["verdict"] != "fail"
    assert verdicts["whole_copies"]["verdict"] == "fail"
    # the taught version: every customer row is new, the people are exposed
    child = json.loads((out / "report.json").read_text())
    assert child == verdicts["child_copies"]
    assert child["verdict"] == "fail"
    assert child["table_verdicts"]["customers"] != "fail"
    assert child["linkage"]["level"] == "fail"
    assert (out / "report.html").read_text().count('id="linkage"') == 1
    # the run file it writes evaluates the taught version again, and gates
    assert main(["run", str(out / "tables.yaml"), "--quiet"]) == 1
    rerun = json.loads((out / "rerun" / "tables.json").read_text())
    assert rerun["verdict"] == "fail"


def test_multi_table_demo_without_the_report_extra_writes_json_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import synthrisk.pipeline as pipeline

    monkeypatch.setattr(pipeline, "is_available", lambda name: False)
    out = tmp_path / "demo"
    assert main(["demo", "--multi-table", "--rows", "200", "--out", str(out)]) == 0
    assert "no HTML report" in capsys.readouterr().out
    assert (out / "report.json").is_file()
    assert not (out / "report.html").exists()
    assert not list((out / "reports").glob("*.html"))


def test_dates_as_text_in_csv_files_of_every_table(tmp_path: Path) -> None:
    # ISO dates in the root table (by content), day-first dates by the metadata's
    # `datetime_format` in a child, timestamps with a time as the child's sequence index
    rng = np.random.default_rng(3)

    def side(n: int, first: int) -> dict[str, pd.DataFrame]:
        ids = np.arange(first, first + n)
        born = pd.Timestamp("1950-01-01") + pd.to_timedelta(
            rng.integers(0, 20_000, n), "D"
        )
        owner = np.repeat(ids, 3)
        when = pd.Timestamp("2021-01-01") + pd.to_timedelta(
            rng.integers(0, 60 * 24 * 30, owner.size), "min"
        )
        opened = pd.Timestamp("2019-01-01") + pd.to_timedelta(
            rng.integers(0, 700, owner.size), "D"
        )
        return {
            "customers": pd.DataFrame(
                {"customer_id": ids, "born": born.strftime("%Y-%m-%d"),
                 "region": rng.choice(["n", "s"], n)}
            ),
            "visits": pd.DataFrame(
                {"visit_id": np.arange(owner.size) + 10 * first, "customer_id": owner,
                 "at": when.strftime("%Y-%m-%d %H:%M:%S"),
                 "opened": opened.strftime("%d/%m/%Y"),
                 "cost": rng.gamma(2.0, 30.0, owner.size).round(2)}
            ),
        }  # fmt: skip

    metadata = {
        "tables": {
            "customers": {
                "primary_key": "customer_id",
                "columns": {"customer_id": {"sdtype": "id"}, "region": {"sdtype": "categorical"}},
            },
            "visits": {
                "primary_key": "visit_id",
                "sequence_index": "at",
                "columns": {
                    "visit_id": {"sdtype": "id"},
                    "customer_id": {"sdtype": "id"},
                    "at": {"sdtype": "datetime"},
                    "opened": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"},
                    "cost": {"sdtype": "numerical"},
                },
            },
        },
        "relationships": [
            {"parent_table_name": "customers", "parent_primary_key": "customer_id",
             "child_table_name": "visits", "child_foreign_key": "customer_id"}
        ],
    }  # fmt: skip
    sides = {
        "real": side(60, 0),
        "synthetic_new": side(60, 1_000),
        "holdout": side(20, 2_000),
    }
    for name, tables in sides.items():
        (tmp_path / name).mkdir()
        for table, frame in tables.items():
            frame.to_csv(tmp_path / name / f"{table}.csv", index=False)
    (tmp_path / "metadata.json").write_text(json.dumps(metadata))
    out = tmp_path / "out"
    out.mkdir()
    assert _run(tmp_path, "new", out) == 0
    data = json.loads((out / "report.json").read_text())
    assert data["verdict"] in ("pass", "review")
    assert "born" in data["features"]["root"]
    assert {"visits.opened.mean", "visits.span_days"} <= set(
        data["features"]["children"]
    )
    assert (out / "report.html").read_text().count("Overall:") == 1


def test_the_page_shows_one_verdict_and_its_parts(bank: Path, tmp_path: Path) -> None:
    assert _run(bank, "child_copies", tmp_path, "--table-metrics", "dcr_share") == 0
    page = (tmp_path / "report.html").read_text()
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["verdict"] == "fail"
    # one "Overall", the release's; the person level and each table are its parts
    assert page.count("Overall:") == 1
    assert page.count('<div class="big">') == 1
    assert page.index("Overall:") < page.index('<ul class="parts">')
    people = data["people"]["verdict"]["overall"]
    assert (
        f'<div class="part-verdict">Person-level tests: <span class="badge {people}">'
        in page
    )
    assert '<div class="part-verdict">Table customers: <span class="badge' in page
    assert 'class="sr part"' in page
    assert "<h1>synthrisk privacy report</h1>" not in page  # no nested page title
