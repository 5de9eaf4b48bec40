# SPDX-License-Identifier: BSD-3-Clause
"""Properties of the release verdict on small generated data: a null generator passes, copies fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.datasets.calibration import equicorrelated_normal

METRICS = ["dcr_share", "identical_match_share", "membership_knn_probabilities"]


def population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    z = equicorrelated_normal(rng, n, 3, 0.5)
    frame = pd.DataFrame(
        {
            "a": np.round(50 + 10 * z[:, 0], 1),
            "b": np.round(100 + 15 * z[:, 1], 1),
            "c": np.round(5 + z[:, 2], 2),
            "g": rng.choice(["x", "y", "z"], n),
        }
    )
    frame.loc[rng.random(n) < 0.05, "c"] = np.nan
    return frame


def thirds(seed: int, n: int = 2400) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    frame = population(n, rng)
    order = rng.permutation(n)
    k = n // 3
    parts = [
        frame.iloc[order[i * k : (i + 1) * k]].reset_index(drop=True) for i in range(3)
    ]
    return parts[0], parts[1], parts[2]


@pytest.mark.parametrize("seed", [0, 1])
def test_new_people_from_the_same_population_pass(seed: int) -> None:
    # 2,000 rows a side: fewer leave the DCR share's interval wider than its tolerance
    real, holdout, synthetic = thirds(seed, n=6000)
    report = evaluate(real, synthetic, holdout, metrics=METRICS, seed=seed)
    assert report.verdict is not None
    assert report.verdict.overall == "pass", report.verdict.reason
    for v in report.verdict.metrics:
        assert v.gating
        assert v.ci is not None
        assert v.ci[0] <= 0.0 + 0.05  # no material excess


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_copies_of_training_rows_fail(seed: int) -> None:
    real, holdout, synthetic = thirds(seed)
    rng = np.random.default_rng(100 + seed)
    n_copy = len(synthetic) // 10
    copies = real.iloc[rng.choice(len(real), n_copy, replace=False)]
    leaky = pd.concat([synthetic.iloc[n_copy:], copies], ignore_index=True)
    report = evaluate(real, leaky, holdout, metrics=METRICS, seed=seed)
    assert report.verdict is not None
    assert report.verdict.overall == "fail"
    ims = report.verdict["identical_match_share"]
    assert ims.level == "fail"
    # every copy is of a row no other real person shares: the excess is the copy share
    assert ims.effect == pytest.approx(0.1, abs=0.01)


def test_without_a_holdout_the_verdict_is_review() -> None:
    real, _, synthetic = thirds(0)
    report = evaluate(real, synthetic, metrics=["identical_match_share"])
    assert report.verdict is not None
    assert report.verdict.overall == "review"
    assert report.verdict.metrics[0].level == "info"


def test_the_verdict_is_in_the_json_and_the_frame() -> None:
    real, holdout, synthetic = thirds(0, n=6000)
    report = evaluate(real, synthetic, holdout, metrics=METRICS, seed=0)
    from synthrisk import EvaluationReport

    back = EvaluationReport.from_json(report.to_json())
    assert back.verdict == report.verdict
    frame = report.to_frame()
    assert list(frame.index) == METRICS
    assert set(frame["level"]) == {"pass"}
    assert frame["gating"].all()
