# SPDX-License-Identifier: BSD-3-Clause
"""With their default columns, the peers' measures rank 5 % verbatim copies above new people.

A coarse survey table (categorical columns of 2 to 6 levels, age in years, a numeric
income): training, holdout and a synthetic table of new people are drawn from the same
population; the copy table replaces 5 % of the new people with training rows. Every
measure run without column parameters must score the copy table strictly riskier, in
its own direction, on every seed — except ``l_diversity`` and ``t_closeness``, whose
scores are properties of the synthetic table alone (docs/disclosure.md, "Default
columns"): there the test checks the documented arithmetic instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.metrics import METRICS
from synthrisk.results import MetricResult

N_ROWS = 3000
SEEDS = (0, 1, 2)

#: the measures that must rank copies above new people with their default columns
RANKED = (
    "replicated_uniques",
    "disco",
    "apparent_match_distribution",
    "k_anonymity",
    "unique_exact_matches",
    "categorical_cap",
    "categorical_zero_cap",
    "categorical_generalized_cap",
)
#: properties of the synthetic table alone: they cannot rank (documented)
TABLE_ONLY = ("l_diversity", "t_closeness")


def _labels(prefix: str, codes: np.ndarray) -> np.ndarray:
    return np.array([f"{prefix}{c}" for c in codes], dtype=object)


def survey(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """People of one population: 9 categorical columns, age, income, the outcome last."""
    age = rng.integers(18, 90, n)
    edu = np.clip(rng.normal(2 + 0.3 * (age < 40), 1.2, n).round(), 0, 4).astype(int)
    young = age < 30
    marital = np.where(
        young,
        rng.choice(3, n, p=[0.7, 0.25, 0.05]),
        rng.choice(3, n, p=[0.2, 0.6, 0.2]),
    )
    employed = (rng.random(n) < np.where(age > 65, 0.15, 0.75)).astype(int)
    health = np.clip(rng.normal(2.5 - 0.02 * (age - 50), 1, n).round(), 0, 4)
    income = np.round(np.exp(rng.normal(9.8 + 0.15 * edu + 0.4 * employed, 0.6, n)), -1)
    return pd.DataFrame(
        {
            "region": _labels("r", rng.integers(0, 6, n)),
            "sex": _labels("s", rng.integers(0, 2, n)),
            "age": age,
            "race": _labels("race", rng.choice(5, n, p=[0.6, 0.15, 0.12, 0.08, 0.05])),
            "marital": _labels("m", marital),
            "edu": _labels("e", edu),
            "employed": _labels("emp", employed),
            "smoker": _labels("sm", (rng.random(n) < 0.25).astype(int)),
            "tenure": _labels("t", rng.choice(3, n, p=[0.6, 0.35, 0.05])),
            "health": _labels("h", health.astype(int)),
            "income": income.astype(float),
            "outcome": _labels("o", rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])),
        }
    )


def _tables(seed: int) -> tuple[pd.DataFrame, ...]:
    rng = np.random.default_rng(seed)
    real, holdout, new = (survey(rng, N_ROWS) for _ in range(3))
    n_copies = N_ROWS // 20
    copies = new.copy()
    rows = rng.choice(N_ROWS, n_copies, replace=False)
    copied = real.iloc[rng.choice(N_ROWS, n_copies, replace=False)]
    for column in copies.columns:
        values = copies[column].to_numpy(copy=True)
        values[rows] = copied[column].to_numpy()
        copies[column] = values
    return real, holdout, new, copies


@pytest.fixture(scope="module")
def scores() -> dict[int, dict[str, tuple[MetricResult, MetricResult]]]:
    """Per seed and metric: the (new people, copies) results with default columns."""
    metrics = [*RANKED, *TABLE_ONLY]
    out: dict[int, dict[str, tuple[MetricResult, MetricResult]]] = {}
    for seed in SEEDS:
        real, holdout, new, copies = _tables(seed)
        with_new = evaluate(real, new, holdout, metrics=metrics)
        with_copies = evaluate(real, copies, holdout, metrics=metrics)
        out[seed] = {m: (with_new[m], with_copies[m]) for m in metrics}
    return out


@pytest.mark.parametrize("metric_id", RANKED)
def test_default_columns_rank_copies_above_new_people(
    metric_id: str, scores: dict[int, dict[str, tuple[MetricResult, MetricResult]]]
) -> None:
    safer_high = METRICS[metric_id].higher_is_safer
    for seed in SEEDS:
        new, copies = scores[seed][metric_id]
        assert str(new.params["columns_chosen_by"]).startswith(
            ("synthrisk's", "synthpop's")
        )
        a, b = new.score, copies.score
        assert a is not None, (metric_id, seed)
        assert b is not None, (metric_id, seed)
        if safer_high:
            assert b < a, (metric_id, seed, a, b)
        else:
            assert b > a, (metric_id, seed, a, b)


def test_default_columns_follow_the_peers(
    scores: dict[int, dict[str, tuple[MetricResult, MetricResult]]],
) -> None:
    results = {m: pair[0] for m, pair in scores[SEEDS[0]].items()}
    columns = list(survey(np.random.default_rng(0), 5).columns)
    categorical = [c for c in columns if c not in ("age", "income", "outcome")]
    everything_but_outcome = columns[:-1]
    params = {m: r.params for m, r in results.items()}
    assert params["replicated_uniques"]["keys"] == columns  # whole records
    assert params["unique_exact_matches"]["columns"] == columns
    assert params["disco"]["keys"] == everything_but_outcome
    assert params["disco"]["target"] == "outcome"
    for m in ("k_anonymity", *TABLE_ONLY):
        assert params[m]["quasi_identifiers"] == everything_but_outcome
        assert params[m]["sensitive"] == ["outcome"]
    assert params["apparent_match_distribution"]["quasi_identifiers"] == categorical
    for m in ("categorical_cap", "categorical_zero_cap", "categorical_generalized_cap"):
        assert params[m]["key_fields"] == categorical
        assert params[m]["sensitive_fields"] == ["outcome"]


def test_l_diversity_cannot_rank_copies(
    scores: dict[int, dict[str, tuple[MetricResult, MetricResult]]],
) -> None:
    # every other column is a quasi-identifier: income singles out every synthetic
    # record, so every class holds 1 sensitive value (< l = 2) in both tables
    for seed in SEEDS:
        new, copies = scores[seed]["l_diversity"]
        assert new.score == copies.score == 1.0


def test_t_closeness_cannot_rank_copies(
    scores: dict[int, dict[str, tuple[MetricResult, MetricResult]]],
) -> None:
    # singleton classes: a class holding value v is at 1 - p(v) from the table, so
    # t = 1 - (share of the rarest sensitive value), a property of the table alone
    for seed in SEEDS:
        _, _, new_table, copy_table = _tables(seed)
        new, copies = scores[seed]["t_closeness"]
        for result, table in ((new, new_table), (copies, copy_table)):
            rarest = table["outcome"].value_counts(normalize=True).min()
            assert result.score == pytest.approx(1 - rarest)


def test_table_only_scores_ignore_the_real_table() -> None:
    # the score is the same whichever real table the synthetic one is compared with
    real, holdout, _, copies = _tables(SEEDS[0])
    one = evaluate(real, copies, metrics=list(TABLE_ONLY))
    other = evaluate(holdout, copies, metrics=list(TABLE_ONLY))
    for m in TABLE_ONLY:
        assert one[m].score == other[m].score
