# SPDX-License-Identifier: BSD-3-Clause
"""The results table at 80 and 120 columns: labels, people as counts, nothing cut."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from synthrisk._format import format_level
from synthrisk.cli._console import demo_table, results_table
from synthrisk.report import judge, render_html
from synthrisk.results import EvaluationReport, MetricResult

#: a count of people and its interval: whole, then one decimal at most
PEOPLE = r"\+3804 \[\+\d+(\.\d)?, \+\d+(\.\d)?\]"

_INPUTS = {
    name: {"rows": 10000, "columns": ["a", "b"]}
    for name in ("real", "synthetic", "holdout")
}


def _report() -> EvaluationReport:
    def test(effect: float, p: float, **more: object) -> dict[str, object]:
        return {"effect": effect, "ci": [effect - 0.01, effect + 0.01], "p_value": p,
                "n": 1000, **more}  # fmt: skip

    people = {
        "effect": 3804.0,
        "ci": [3683.248, 3925.823],
        "p_value": 1e-30,
        "n": 10000,
        "unit": "people",
        "mde_level": 0.005,
    }
    results = (
        MetricResult("identification", 0.38, {"holdout_test": people}, higher_is_safer=False),
        MetricResult("dcr_baseline_protection", 0.14, {"holdout_test": test(0.2, 1e-9)}),
        MetricResult("membership_knn_probabilities", 0.65, {"holdout_test": test(0.15, 1e-9)},
                     higher_is_safer=False, warnings=("a warning",)),
        MetricResult("dcr_overfitting_protection", 0.55, {}),
        MetricResult("singling_out_univariate", 0.09, {"holdout_test": test(0.01, 0.3)}),
    )  # fmt: skip
    report = EvaluationReport("0.1.0", 0, _INPUTS, results)
    return EvaluationReport("0.1.0", 0, _INPUTS, results, verdict=judge(report))


def _table_text(report: EvaluationReport, width: int) -> str:
    out = Console(width=width, file=io.StringIO(), highlight=False)
    assert report.verdict is not None
    out.print(results_table(report, report.verdict, width=width))
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize("width", [80, 120])
def test_results_table_fits_without_cutting_metric_ids(width: int) -> None:
    report = _report()
    text = _table_text(report, width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    for result in report.results:  # each metric id whole, on one line with its row
        assert any(result.metric in line for line in lines)
    # each interval on the line of its metric, with its own (Holm-adjusted) level
    share = next(line for line in lines if "membership_knn_probabilities" in line)
    verdict = report.verdict
    assert verdict is not None
    v = next(v for v in verdict.metrics if v.metric == "membership_knn_probabilities")
    assert f"[+0.140, +0.160] ({format_level(v.ci_level)})" in share
    assert "(96.67 %)" in text  # the first of three Holm steps: 1 - 0.1 / 3
    assert "95 %]" not in text
    assert "[95" not in text
    assert "(level)" in text
    # people are counted in whole people, the interval with one decimal at most
    people = next(line for line in lines if "identification" in line)
    assert re.search(PEOPLE.replace(" ", r"[ │]+", 1), people)
    assert "3804.000" not in text
    assert ("score" in text) == (width >= 100)


@pytest.mark.parametrize("width", [80, 120])
def test_demo_table_keeps_metric_ids_and_their_arrows_whole(width: int) -> None:
    names = ("leaky", "partial", "isolated_copies", "fresh", "independent")
    report = _report()
    out = Console(width=width, file=io.StringIO(), highlight=False)
    out.print(demo_table(dict.fromkeys(names, report), width=width))
    text = out.file.getvalue()  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    assert "…" not in text
    for result in report.results:  # the id and its arrow on the line of its scores
        arrow = "↑" if result.higher_is_safer else "↓"
        row = next(line for line in lines if f" {result.metric} " in line)
        assert f"{result.metric} {arrow}" in row
        assert row.count(f"{result.score:.3f}") == len(names)
    # a long version name folds at its underscore, never inside a word, and only
    # where the whole names do not fit
    assert any(line.rstrip().endswith("isolated_") for line in lines) == (width < 100)
    assert ("isolated_copies" in text) == (width >= 100)
    assert "independent" in text


@pytest.mark.parametrize("width", [80, 120])
def test_plain_text_summary_fits_without_cutting_metric_ids(width: int) -> None:
    report = _report()
    lines = report.summary_lines(width=width)
    assert max(len(line) for line in lines) <= width
    text = "\n".join(lines)
    for result in report.results:
        assert any(
            line.split()[1:2] == [result.metric] for line in lines if line.strip()
        )
    assert "excess [interval] (level)" in text
    # the inputs line wraps, never cut: every table's size is there
    inputs = " ".join(
        lines[1 : next(i for i, x in enumerate(lines) if x.startswith("verdict"))]
    )
    assert "…" not in inputs
    for name in ("real", "synthetic", "holdout"):
        assert f"{name} 10000 × 2" in inputs
    assert "[95 %]" not in text
    assert re.search(PEOPLE + r" \(96\.67 %\)", text)
    assert "(level): the two-sided level of each interval" in text


def test_html_labels_levels_people_and_breakdown_keys() -> None:
    html = render_html(_report())
    assert "[95 %]" not in html
    assert "excess over holdout [interval] (level)" in html
    assert re.search(
        r'\+3804</span> <span class="nowrap small">\[\+\d+(\.\d)?, \+\d+(\.\d)?\]', html
    )
    assert "3804.000" not in html
    # breakdown keys in words, the raw key in the title
    assert (
        '<td class="key" title="holdout_test.mde_level">holdout test › level of the '
        "smallest detectable excess</td>"
    ) in html
    assert "holdout_test › mde_level" not in html


def test_old_reports_without_a_unit_read_people_from_the_test() -> None:
    report = _report()
    data = report.to_dict()
    for entry in data["verdict"]["metrics"]:  # type: ignore[index,union-attr]
        entry.pop("unit")  # type: ignore[union-attr]
    again = EvaluationReport.from_dict(data)
    assert again.verdict is not None
    assert again.verdict.metrics[0].unit == "people"
    assert again.verdict.metrics[1].unit == ""
