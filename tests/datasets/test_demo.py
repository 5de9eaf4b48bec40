# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import pandas as pd

from synthrisk import evaluate
from synthrisk.datasets import load_demo


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
        name: evaluate(demo.real, frame, demo.holdout, metadata=demo.metadata)
        for name, frame in demo.synthetic.items()
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
