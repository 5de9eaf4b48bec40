# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk.pipeline``: files in, one judged report out, written as JSON and HTML."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthrisk.verdict
from synthrisk.pipeline import evaluate_files, report_file


def _tables(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(3)

    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 90, n),
                "income": rng.normal(50, 10, n).round(1),
                "city": rng.choice(["a", "b", "c"], n),
            }
        )

    paths = {}
    for name, n in (("real", 300), ("synthetic", 300), ("holdout", 300)):
        paths[name] = tmp_path / f"{name}.csv"
        frame(n).to_csv(paths[name], index=False)
    return paths


@pytest.fixture
def judgements(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many results each judgement of a report looked at (one entry per result)."""
    calls: list[int] = []
    plan = synthrisk.verdict._plan

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return plan(*args, **kwargs)

    monkeypatch.setattr(synthrisk.verdict, "_plan", counting)
    return calls


def test_one_run_judges_its_report_once(tmp_path: Path, judgements: list[int]) -> None:
    paths = _tables(tmp_path)
    evaluation = evaluate_files(
        paths["real"],
        paths["synthetic"],
        paths["holdout"],
        metrics=["dcr_share", "identical_match_share"],
        json=tmp_path / "r.json",
        html=tmp_path / "r.html",
        thresholds={"alpha": 0.01},
    )
    # evaluate, the pipeline and the HTML report share the run's one verdict
    assert len(judgements) == len(evaluation.report.results) == 2
    assert evaluation.verdict is evaluation.report.verdict
    assert evaluation.verdict.alpha == 0.01
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["verdict"]["overall"] == evaluation.verdict.overall
    assert evaluation.verdict.overall in (tmp_path / "r.html").read_text()


def test_report_file_judges_again_by_new_thresholds(
    tmp_path: Path, judgements: list[int]
) -> None:
    paths = _tables(tmp_path)
    evaluate_files(
        paths["real"],
        paths["synthetic"],
        paths["holdout"],
        metrics=["dcr_share"],
        json=tmp_path / "r.json",
    )
    judgements.clear()
    again = report_file(
        tmp_path / "r.json", html=tmp_path / "r.html", thresholds={"alpha": 0.2}
    )
    assert len(judgements) == 1
    assert again.verdict.alpha == 0.2
    assert again.report.verdict is again.verdict
