# SPDX-License-Identifier: BSD-3-Clause
"""Tables too small for any test to detect a leak: one clear review, never a pass."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.cli.main import main
from synthrisk.stats.exact import excess_greater_p, fewest_people
from synthrisk.verdict import fewest_rows

#: five gating tests: Holm's first step asks for p < 0.05 / 5, which 4 people reach
METRICS = [
    "identification",
    "dcr_share",
    "identical_match_share",
    "rare_value_replay",
    "quasi_identifier_replay",
]


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.normal(5e4, 1e4, n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.choice(list("abcde"), n),
        }
    )


def test_fewest_people_is_where_the_exact_test_first_reaches_the_level() -> None:
    for level in (0.05, 0.05 / 5, 0.05 / 9, 0.05 / 20):
        n = fewest_people(level)
        assert excess_greater_p(n, n, 0, n) < level
        assert excess_greater_p(n - 1, n - 1, 0, n - 1) >= level
    assert fewest_rows(0.05, 9) == 4  # the default run's 9 gating tests
    assert fewest_rows(0.05, 1) == 3


@pytest.mark.parametrize("n", [3, 10])
def test_tiny_tables_read_review_once(n: int) -> None:
    rng = np.random.default_rng(0)
    report = evaluate(
        _table(rng, n), _table(rng, n), _table(rng, n), metrics=METRICS, seed=0
    )
    verdict = report.verdict
    assert verdict is not None
    if n == 3:
        assert verdict.overall == "review"
        assert verdict.reason == (
            "review: too few rows to judge: real 3, synthetic 3, holdout 3; at least 4 "
            "of each are needed for any test to detect a leak (the exact test of people "
            "reaches significance at 0.05 / 5 gating tests only from 4 people on each "
            "side)."
        )
        assert verdict.counts()["pass"] == 0
        assert report.verdict_caveats(width=None) == [f"inputs: {verdict.too_few_rows}"]
        assert verdict.caveats == (f"inputs: {verdict.too_few_rows}",)
        assert "too few rows" in str(report)
        assert str(report).count("at least 4 of each") == 2  # the reason, the caveat
        again = type(report).from_json(report.to_json())
        assert again.verdict is not None
        assert again.verdict.too_few_rows == verdict.too_few_rows
    else:  # 10 rows: enough for a test to detect a leak, judged as usual
        assert not verdict.too_few_rows
        assert "too few rows" not in verdict.reason
        assert "too_few_rows" not in report.to_dict()["verdict"]  # type: ignore[operator]


@pytest.mark.parametrize("n", [3, 10])
def test_tiny_tables_on_the_command_line(
    n: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(1)
    args = []
    for role in ("real", "synthetic", "holdout"):
        path = tmp_path / f"{role}.csv"
        _table(rng, n).to_csv(path, index=False)
        args += [f"--{role}", str(path)]
    metrics = ",".join(METRICS)
    got = main(["evaluate", *args, "--metrics", metrics, "--fail-on", "review"])
    out = capsys.readouterr().out
    if n == 3:  # review, so --fail-on review exits 1
        assert got == 1, out
        assert "too few rows to judge: real 3, synthetic 3, holdout 3" in out
        assert out.count("caveat:") == 1
        assert "│ pass" not in out
    else:  # judged as usual (here dcr_share's wide interval reads review)
        assert got in (0, 1)
        assert "too few rows" not in out
