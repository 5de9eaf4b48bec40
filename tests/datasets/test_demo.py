# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import pandas as pd

from synthrisk import evaluate
from synthrisk.datasets import demo_metrics, load_demo


def test_demo_is_reproducible_and_has_every_kind() -> None:
    a, b = load_demo(n_rows=400, seed=3), load_demo(n_rows=400, seed=3)
    pd.testing.assert_frame_equal(a.real, b.real)
    pd.testing.assert_frame_equal(a.synthetic["partial"], b.synthetic["partial"])
    assert len(a.real) == len(a.holdout) == 200
    assert a.real.isna().any().sum() >= 4  # missing values in several columns
    assert not load_demo(n_rows=400, seed=4).real.equals(a.real)


def test_leaky_scores_worse_than_independent() -> None:
    demo = load_demo(n_rows=2000, seed=0)
    scores = {
        name: evaluate(
            demo.real, demo.synthetic[name], demo.holdout, metadata=demo.metadata
        )
        for name in ("leaky", "partial", "fresh", "independent")
    }
    for metric in ("dcr_baseline_protection", "dcr_overfitting_protection"):
        leaky = scores["leaky"][metric].score
        partial = scores["partial"][metric].score
        independent = scores["independent"][metric].score
        assert leaky is not None
        assert partial is not None
        assert independent is not None
        assert leaky < partial < independent, metric
    assert scores["leaky"]["dcr_overfitting_protection"].score == 0.0
    assert scores["fresh"]["dcr_overfitting_protection"].score > 0.8  # type: ignore[operator]


def test_isolated_copies_is_fresh_with_a_few_verbatim_copies_of_isolated_people() -> (
    None
):
    demo = load_demo(n_rows=2000, seed=0)
    fresh, copies = demo.synthetic["fresh"], demo.synthetic["isolated_copies"]
    assert copies.dtypes.equals(fresh.dtypes)
    pd.testing.assert_series_equal(copies["person_id"], fresh["person_id"])
    columns = [c for c in fresh.columns if c != "person_id"]
    changed = ~((copies == fresh) | (copies.isna() & fresh.isna()))[columns].all(axis=1)
    assert changed.sum() == 5  # 0.2 % of 1,000 rows, at least 5

    # each changed row is a real record that no other real or holdout person shares
    def records(frame: pd.DataFrame) -> pd.Series:
        return pd.util.hash_pandas_object(frame[columns], index=False)

    counts = records(pd.concat([demo.real, demo.holdout])).value_counts()
    copied = records(copies[changed])
    assert set(copied) <= set(records(demo.real))
    assert (counts[copied] == 1).all()
    assert copied.is_unique


def test_isolated_copies_fail_through_identification_only() -> None:
    """A handful of copied people: every average-based test passes, identification fails."""
    demo = load_demo(n_rows=2000, seed=0)
    report = evaluate(
        demo.real,
        demo.synthetic["isolated_copies"],
        demo.holdout,
        metadata=demo.metadata,
        metrics=demo_metrics(),
        seed=0,
    )
    verdict = report.verdict
    assert verdict is not None
    assert verdict.overall == "fail"
    levels = {v.metric: v.level for v in verdict.metrics if v.gating}
    assert levels.pop("identification") == "fail"
    assert set(levels.values()) == {"pass"}, levels
    found = report["identification"].breakdown
    # the 5 copies, exactly; at most one new person lands near a training person by
    # chance (a missing cell reads as the column's typical value in the isolation geometry)
    assert found["exact_training"] == 5
    assert 5 <= found["identified_training"] <= 6
    assert found["identified_holdout"] == 0
