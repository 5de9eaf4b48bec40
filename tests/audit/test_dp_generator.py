# SPDX-License-Identifier: BSD-3-Clause
"""The audit on a differentially private generator: its bound never refutes the true ε."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.audit._dp import DPHistogram
from tests.audit._generators import population

from synthrisk.audit import audit

N_REAL, N_HOLDOUT, TRAIN = 60, 240, 40


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = population(N_REAL + N_HOLDOUT, 7)
    return data.iloc[:N_REAL].reset_index(drop=True), data.iloc[N_REAL:].reset_index(
        drop=True
    )


def test_dp_histogram_is_a_proper_generator(tables) -> None:
    real, _ = tables
    out = DPHistogram(1.0)(real, 50, 3)
    assert list(out.columns) == ["x", "y", "c"]
    assert len(out) == 50
    assert out.equals(DPHistogram(1.0)(real, 50, 3))  # seeded
    # no output row is a training row: its values are drawn inside the cells
    assert not out["x"].isin(real["x"]).any()


@pytest.mark.parametrize("seed", range(3))
def test_epsilon_one_bound_stays_at_or_below_one(tables, seed: int) -> None:
    real, holdout = tables
    result = audit(
        DPHistogram(1.0),
        real,
        holdout,
        n_targets=10,
        n_runs=100,
        train_size=TRAIN,
        seed=seed,
    )
    assert result.n_runs == 100
    assert 0.0 <= result.epsilon_lower <= 1.0
    assert all(t.epsilon_lower <= 1.0 for t in result.targets)


def test_a_larger_epsilon_is_seen_but_not_exceeded(tables) -> None:
    # the same mechanism at ε = 4 leaks enough for the attacks to see it: the audit is
    # not vacuous, and its bound still stays at or below the true ε
    real, holdout = tables
    result = audit(
        DPHistogram(4.0),
        real,
        holdout,
        n_targets=10,
        n_runs=200,
        train_size=TRAIN,
        seed=0,
    )
    assert 0.2 < result.epsilon_lower <= 4.0
    assert max(r.auc for r in result.overall.values()) > 0.6
