# SPDX-License-Identifier: BSD-3-Clause
"""Extreme finite values (1e160, -1e160, 1e300, 1e-300) never end a run.

Every metric either gives a finite number or says why it has none (skipped or
undefined, with a reason); the report serialises (JSON refuses NaN and infinities).
A column whose range itself overflows (-1.7e308 to 1.7e308) is refused up front with
an :class:`~synthrisk.exceptions.InputError` that says how to rescale it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from synthrisk import evaluate
from synthrisk.exceptions import InputError
from synthrisk.metrics.membership.density import (
    MAX_RANGES_OUTSIDE,
    numeric_embedding,
)
from synthrisk.results import EvaluationReport, MetricResult
from synthrisk.schema.tables import prepare_tables

EXTREMES = (1e160, -1e160, 1e300, -1e300, 1e-300, -1e-300)


def _table(g: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": g.integers(18, 90, n).astype(float),
            "income": g.lognormal(10, 1, n),
            "tiny": g.normal(0, 1e-300, n),
            "city": g.choice(list("abcdef"), n),
            "sex": g.choice(["f", "m"], n),
        }
    )


def _tables(n: int = 300) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    g = np.random.default_rng(7)
    return _table(g, n), _table(g, n), _table(g, n)


def _finite_or_explained(result: MetricResult) -> None:
    if result.status != "ok":
        assert result.score is None, result
        assert result.reason, result
        return
    assert result.score is not None
    assert math.isfinite(result.score), result
    if result.ci is not None:
        assert all(math.isfinite(v) for v in result.ci), result


def test_numeric_embedding_clips_values_far_outside_the_real_range() -> None:
    real, synthetic, holdout = _tables(50)
    synthetic.loc[0, "income"] = 1e160
    synthetic.loc[1, "income"] = -1e160
    tables = prepare_tables(real, synthetic, holdout)
    out = numeric_embedding(tables, ["real", "synthetic", "holdout"])
    syn = out["synthetic"]
    assert np.isfinite(syn).all()
    assert syn.max() == 1.0 + MAX_RANGES_OUTSIDE
    assert syn.min() == -MAX_RANGES_OUTSIDE
    # the real and holdout rows are untouched by the clip: min-max within [0, 1]
    assert out["real"].min() >= 0.0
    assert out["real"].max() <= 1.0


@pytest.mark.parametrize("metric", ["vulnerable_people", "domias"])
def test_density_metrics_survive_a_synthetic_value_of_1e160(metric: str) -> None:
    # the user's report: "array must not contain infs or NaNs" from the density fit
    real, synthetic, holdout = _tables()
    synthetic.loc[3, "income"] = 1e160
    params = {"strata": [0.5]} if metric == "vulnerable_people" else {}
    report = evaluate(real, synthetic, holdout, metrics={metric: params}, workers=1)
    (result,) = report.results
    assert result.status == "ok"
    assert result.score is not None
    assert 0.3 < result.score < 0.7


def test_default_evaluation_with_extreme_values_in_every_table() -> None:
    real, synthetic, holdout = _tables()
    for row, value in enumerate(EXTREMES):
        synthetic.loc[row, "income" if abs(value) > 1 else "tiny"] = value
        real.loc[row + 10, "income" if abs(value) > 1 else "tiny"] = value
    synthetic.loc[20, "age"] = 1e300
    real.loc[21, "age"] = -1e160
    report = evaluate(
        real,
        synthetic,
        holdout,
        workers=1,
        # the vulnerable people's strata, so that the density estimate runs here too
        params={"vulnerable_people": {"strata": [0.5]}},
    )
    by_id = {r.metric: r for r in report.results}
    assert by_id["vulnerable_people"].status == "ok"
    assert len(by_id) >= 14
    for result in report.results:
        _finite_or_explained(result)
    again = EvaluationReport.from_json(report.to_json())
    assert [r.status for r in again.results] == [r.status for r in report.results]


def test_a_column_whose_range_overflows_is_refused_with_the_remedy() -> None:
    real, synthetic, holdout = _tables(50)
    real.loc[0, "income"] = 1.7e308
    synthetic.loc[0, "income"] = -1.7e308
    with pytest.raises(InputError, match=r"'income' spans more than the floating"):
        evaluate(real, synthetic, holdout, metrics=["dcr_share"], workers=1)


@settings(
    max_examples=4,
    derandomize=True,
    deadline=None,
    database=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["real", "synthetic", "holdout"]),
            st.sampled_from(["age", "income", "tiny"]),
            st.integers(0, 119),
            st.sampled_from([*EXTREMES, 1e20, 8e307, -8e307, 5e-324]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_evaluate_fuzzed_extreme_values(
    cells: list[tuple[str, str, int, float]],
) -> None:
    frames = dict(zip(("real", "synthetic", "holdout"), _tables(120), strict=True))
    for table, column, row, value in cells:
        frames[table].loc[row, column] = value
    refused = None
    try:
        report = evaluate(
            frames["real"],
            frames["synthetic"],
            frames["holdout"],
            metrics={
                "vulnerable_people": {"strata": [0.5]},
                "domias": None,
                "identification": None,
                "dcr_share": None,
                "nndr": None,
                "inference": {"n_attacks": 50},
                "membership_classification": None,
            },
            workers=1,
        )
    except InputError as exc:
        refused = str(exc)
    if refused is not None:
        # only a range that itself overflows (8e307 against -8e307) is refused
        assert "spans more than the floating-point range" in refused
        return
    for result in report.results:
        _finite_or_explained(result)
    report.to_json()
