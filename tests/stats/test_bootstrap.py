# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics import DCRBaselineProtection, DCRShare, DisclosureProtection
from synthrisk.stats.bootstrap import (
    bootstrap_interval,
    bootstrap_medians,
    percentile_interval,
)


def test_percentile_interval_at_95_is_the_2_5_and_97_5_percentiles() -> None:
    replicates = np.arange(200, dtype=np.float64)
    low, high = percentile_interval(replicates)
    assert (low, high) == tuple(np.percentile(replicates, [2.5, 97.5]))


def test_percentile_interval_needs_enough_finite_replicates() -> None:
    replicates = np.full(200, np.nan)
    replicates[:99] = 1.0
    assert percentile_interval(replicates) is None
    replicates[99] = 1.0
    assert percentile_interval(replicates) == (1.0, 1.0)


def test_bootstrap_interval_matches_a_hand_written_loop() -> None:
    values = np.random.default_rng(0).random(50)
    got = bootstrap_interval(np.mean, values, rng=np.random.default_rng(1))
    rng = np.random.default_rng(1)
    means = [values[rng.integers(0, 50, 50)].mean() for _ in range(200)]
    assert got == tuple(np.percentile(means, [2.5, 97.5]))
    assert bootstrap_interval(np.mean, values[:1], rng=rng) is None


def test_bootstrap_interval_narrows_with_the_confidence_level() -> None:
    values = np.random.default_rng(0).random(100)
    wide = bootstrap_interval(np.mean, values, rng=np.random.default_rng(2))
    narrow = bootstrap_interval(
        np.mean, values, rng=np.random.default_rng(2), confidence_level=0.5
    )
    assert wide is not None
    assert narrow is not None
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_bad_confidence_level_is_the_house_message() -> None:
    with pytest.raises(
        ParameterError, match=r"`confidence_level` must be a number in \[0, 1\)"
    ):
        percentile_interval(np.zeros(200), confidence_level=1.0)


def _frames() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(5)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "x": rng.normal(size=n),
                "c": rng.choice(list("abc"), n),
                "s": rng.choice(list("uv"), n),
            }
        )

    return table(120), table(120), table(80)


@pytest.mark.parametrize(
    "make",
    [
        lambda level: DCRBaselineProtection(confidence_level=level),
        lambda level: DCRShare(confidence_level=level, n_permutations=0),
        lambda level: DisclosureProtection(
            known_column_names=["c"],
            sensitive_column_names=["s"],
            confidence_level=level,
        ),
    ],
)
def test_bootstrapped_metrics_take_a_confidence_level(make: object) -> None:
    real, synthetic, holdout = _frames()
    wide = make(0.95).compute(real, synthetic, holdout, seed=1)  # type: ignore[operator]
    narrow = make(0.5).compute(real, synthetic, holdout, seed=1)  # type: ignore[operator]
    assert wide.score == narrow.score
    assert wide.ci is not None
    assert narrow.ci is not None
    assert wide.ci[0] <= narrow.ci[0] <= narrow.ci[1] <= wide.ci[1]
    assert narrow.params["confidence_level"] == 0.5


@pytest.mark.parametrize(("n1", "n2"), [(2, 3), (101, 100), (1000, 999)])
def test_bootstrap_medians_are_numpy_medians_of_bootstrap_intervals_resamples(
    n1: int, n2: int
) -> None:
    # ties (coarse values), even and odd sizes, infinities, one sample with a NaN:
    # the same draws in the same order, the same medians bit for bit
    rng = np.random.default_rng(5)
    a = np.round(rng.random(n1), 1)
    b = np.round(rng.random(n2) * 3, 2)
    b[0] = np.inf
    for second in (b, np.where(np.arange(n2) == 1, np.nan, b)):
        seen: list[tuple[float, float]] = []

        def record(
            x: np.ndarray, y: np.ndarray, seen: list[tuple[float, float]] = seen
        ) -> float:
            seen.append((float(np.median(x)), float(np.median(y))))
            return 0.0

        bootstrap_interval(record, a, second, rng=np.random.default_rng(11))
        got = bootstrap_medians(a, second, rng=np.random.default_rng(11))
        assert got is not None
        want = np.array(seen)
        np.testing.assert_array_equal(got[0], want[:, 0])
        np.testing.assert_array_equal(got[1], want[:, 1])
    assert bootstrap_medians(a, b[:1], rng=rng) is None


def test_dcr_baseline_interval_equals_the_bootstrap_of_its_ratio() -> None:
    from synthrisk.metrics.dcr import _protection_interval, _protection_ratio

    rng = np.random.default_rng(3)
    d_syn = np.round(rng.random(500), 2)
    d_rand = np.round(rng.random(400), 2)
    d_rand[:300] = 0.0  # many resamples with a random median of 0: NaN replicates
    for level in (0.9, 0.95):
        want = bootstrap_interval(
            _protection_ratio,
            d_syn,
            d_rand,
            rng=np.random.default_rng(1),
            confidence_level=level,
        )
        got = _protection_interval(d_syn, d_rand, np.random.default_rng(1), level)
        assert got == want
