# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json

import pytest

from synthrisk.datasets.relational import load_bank
from synthrisk.relational import MultiTableReport, evaluate_tables


@pytest.fixture(scope="module")
def report() -> MultiTableReport:
    bank = load_bank(n_customers=150, seed=4)
    return evaluate_tables(
        bank.real,
        bank.synthetic["whole_copies"],
        bank.holdout,
        metadata=bank.metadata,
        metrics=["identification", "dcr_share"],
        table_metrics=["identical_match_share"],
    )


def test_to_dict_puts_the_person_level_verdict_first(report: MultiTableReport) -> None:
    data = report.to_dict()
    keys = list(data)
    assert keys[:2] == ["verdict", "reason"]
    assert data["verdict"] == report.verdict
    assert data["table_verdicts"] == report.table_verdicts
    assert set(data["tables"]) == {"customers", "accounts", "transactions"}  # type: ignore[arg-type]
    people = data["people"]
    assert isinstance(people, dict)
    results = people["results"]
    assert isinstance(results, list)
    assert [r["metric"] for r in results] == ["identification", "dcr_share"]


def test_json_round_trip(report: MultiTableReport) -> None:
    text = report.to_json()
    assert "NaN" not in text
    again = MultiTableReport.from_json(text)
    assert again.to_dict() == json.loads(text)
    assert again.verdict == report.verdict
    assert again.linkage == report.linkage
    assert again.table_verdicts == report.table_verdicts


def test_repr_names_the_verdict_and_tables(report: MultiTableReport) -> None:
    text = repr(report)
    assert text.startswith(
        f"MultiTableReport(verdict={report.verdict!r}, root='customers'"
    )
    assert "'transactions'" in text


def test_print_shows_the_verdict_and_each_level(report: MultiTableReport) -> None:
    lines = str(report).splitlines()
    assert lines[1] == f"verdict: {report.verdict.upper()}"
    assert lines[3].startswith("person level: identification ")
    assert any(line.startswith("  root_to_children: ") for line in lines)
    assert lines[-1].startswith("tables: customers ")
