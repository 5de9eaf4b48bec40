# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import DCRBaselineProtection, DCROverfittingProtection, evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.dcr import dcr, random_baseline_table
from synthrisk.schema import prepare_tables

DATA = Path(__file__).parent / "data"
GOLDENS = json.loads((DATA / "dcr_goldens.json").read_text())


def _case(name: str) -> tuple[dict[str, pd.DataFrame], dict]:
    case = GOLDENS["cases"][name]
    frames = {table: pd.read_csv(DATA / path) for table, path in case["files"].items()}
    return frames, case


@pytest.mark.parametrize("name", sorted(GOLDENS["cases"]))
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_per_row_dcr_equals_sdmetrics(name: str, backend: str) -> None:
    frames, case = _case(name)
    tables = prepare_tables(
        frames["real"],
        frames["synthetic"],
        frames["holdout"],
        metadata=case["metadata"],
    )
    context = Context(backend=backend)
    got_real = dcr(tables.encoded("synthetic"), tables.encoded("real"), context)
    got_hold = dcr(tables.encoded("synthetic"), tables.encoded("holdout"), context)
    np.testing.assert_allclose(
        got_real, case["dcr_synthetic_to_real"], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        got_hold, case["dcr_synthetic_to_holdout"], rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("name", sorted(GOLDENS["cases"]))
def test_scores_equal_sdmetrics(name: str) -> None:
    frames, case = _case(name)
    base = DCRBaselineProtection().compute(
        frames["real"], frames["synthetic"], metadata=case["metadata"]
    )
    over = DCROverfittingProtection().compute(
        frames["real"],
        frames["synthetic"],
        frames["holdout"],
        metadata=case["metadata"],
    )
    synthetic_median = base.breakdown["median_DCR_to_real_data"]["synthetic_data"]  # type: ignore[index]
    assert synthetic_median == pytest.approx(
        case["median_dcr_synthetic_to_real"], abs=1e-9
    )
    assert over.score == pytest.approx(case["overfitting"]["score"], abs=1e-9)
    shares = over.breakdown["synthetic_data_percentages"]
    assert shares["closer_to_training"] == pytest.approx(
        case["overfitting"]["closer_to_training"], abs=1e-9
    )  # type: ignore[index]
    assert shares["closer_to_holdout"] == pytest.approx(
        case["overfitting"]["closer_to_holdout"], abs=1e-9
    )  # type: ignore[index]


def test_breakdown_keys_are_sdmetrics_keys(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    base = DCRBaselineProtection().compute(real, syn)
    over = DCROverfittingProtection().compute(real, syn, hold)
    assert set(base.breakdown) == {"score", "median_DCR_to_real_data"}
    assert set(base.breakdown["median_DCR_to_real_data"]) == {
        "synthetic_data",
        "random_data_baseline",
    }  # type: ignore[arg-type]
    assert set(over.breakdown) == {"score", "synthetic_data_percentages"}
    assert set(over.breakdown["synthetic_data_percentages"]) == {
        "closer_to_training",
        "closer_to_holdout",
    }  # type: ignore[arg-type]


def test_copy_of_real_scores_zero(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    real, _, hold = mixed_tables
    assert DCRBaselineProtection().compute(real, real).score == 0.0
    over = DCROverfittingProtection().compute(real, real, hold)
    assert over.score == 0.0
    assert over.breakdown["synthetic_data_percentages"]["closer_to_training"] == 1.0  # type: ignore[index]


def test_copy_of_holdout_scores_one(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    real, _, hold = mixed_tables
    assert DCROverfittingProtection().compute(real, hold, hold).score == 1.0


def test_training_equal_to_holdout_scores_one_because_ties_count_as_holdout() -> None:
    real = pd.DataFrame({"n": [0.0, 10.0, 3.0]})
    assert DCROverfittingProtection().compute(real, real, real).score == 1.0


def test_overfitting_normalises_each_reference_by_its_own_range() -> None:
    # sdmetrics.md §6: training {0, 10}, holdout {0, 100}, synthetic 5 → d_tr 0.5, d_ho 0.05 → score 1
    real, hold, syn = (
        pd.DataFrame({"n": [0.0, 10.0]}),
        pd.DataFrame({"n": [0.0, 100.0]}),
        pd.DataFrame({"n": [5.0]}),
    )
    result = DCROverfittingProtection().compute(real, syn, hold)
    assert result.score == 1.0
    np.testing.assert_allclose(result.records["synthetic_to_real"].values, [0.5])
    np.testing.assert_allclose(result.records["synthetic_to_holdout"].values, [0.05])
    # with one common unit (the real table's ranges) the row is equally close: a tie → holdout
    same_units = DCROverfittingProtection(range_source="real").compute(real, syn, hold)
    np.testing.assert_allclose(same_units.records["synthetic_to_holdout"].values, [0.5])


def test_baseline_score_by_hand() -> None:
    # real {0, 10}; synthetic {1, 9}: DCRs 0.1, 0.1 → median 0.1. Random integers on [0, 10].
    real, syn = pd.DataFrame({"n": [0, 10]}), pd.DataFrame({"n": [1, 9]})
    result = DCRBaselineProtection().compute(real, syn, seed=3)
    rand_dcr = result.records["random_to_real"].values
    expected_rand = float(np.median(rand_dcr))
    assert result.breakdown["median_DCR_to_real_data"][
        "synthetic_data"
    ] == pytest.approx(0.1)  # type: ignore[index]
    assert result.breakdown["median_DCR_to_real_data"][
        "random_data_baseline"
    ] == pytest.approx(expected_rand)  # type: ignore[index]
    assert result.score == pytest.approx(min(0.1 / expected_rand, 1.0))
    # random rows are integers inside the real range, so DCRs are multiples of 0.1 up to 0.5
    assert set(np.round(rand_dcr * 10).tolist()) <= {0, 1, 2, 3, 4, 5}


def test_tiny_domain_gives_undefined_score_with_a_warning() -> None:
    real = pd.DataFrame({"c": ["a", "b"] * 10})
    result = DCRBaselineProtection().compute(real, real)
    assert result.score is None
    assert any("undefined" in w for w in result.warnings)
    assert (
        json.loads(evaluate(real, real, metrics=["dcr_baseline_protection"]).to_json())[
            "results"
        ][0]["score"]
        is None
    )


def test_same_seed_same_numbers_other_seed_other_baseline(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    a = DCRBaselineProtection().compute(real, syn, seed=5)
    b = DCRBaselineProtection().compute(real, syn, seed=5)
    c = DCRBaselineProtection().compute(real, syn, seed=6)
    assert a.breakdown == b.breakdown
    assert a.ci == b.ci
    assert a.breakdown != c.breakdown


def test_random_baseline_respects_domain_and_missing_share(
    rng: np.random.Generator,
) -> None:
    n = 2000
    real = pd.DataFrame(
        {
            "i": rng.integers(3, 8, n),
            "f": np.where(rng.random(n) < 0.25, np.nan, rng.uniform(-1, 1, n)),
            "c": rng.choice(["a", "b", "c"], n, p=[0.8, 0.1, 0.1]),
        }
    )
    tables = prepare_tables(real, real)
    random = random_baseline_table(tables, 5000, np.random.default_rng(0))
    ints = random.numeric[:, 0]
    assert set(np.unique(ints)) == {3.0, 4.0, 5.0, 6.0, 7.0}
    floats = random.numeric[:, 1]
    assert 0.22 < np.isnan(floats).mean() < 0.28
    assert np.nanmin(floats) >= real["f"].min()
    assert np.nanmax(floats) <= real["f"].max()
    # categories are uniform over the distinct values (SDMetrics), not frequency-weighted
    shares = np.bincount(random.codes[:, 0]) / 5000
    np.testing.assert_allclose(shares, [1 / 3] * 3, atol=0.03)


def test_subsample_keeps_the_full_real_reference_by_default() -> None:
    # one memorised synthetic row among far ones: only a full reference catches the copy
    real = pd.DataFrame({"n": np.arange(0.0, 1000.0, 1.0)})
    syn = pd.DataFrame({"n": np.arange(0.0, 1000.0, 1.0) + 0.5})
    full = DCRBaselineProtection(num_rows_subsample=100, num_iterations=3).compute(
        real, syn
    )
    sampled = DCRBaselineProtection(
        num_rows_subsample=100, num_iterations=3, subsample_real=True
    ).compute(real, syn)
    full_median = full.breakdown["median_DCR_to_real_data"]["synthetic_data"]  # type: ignore[index]
    sampled_median = sampled.breakdown["median_DCR_to_real_data"]["synthetic_data"]  # type: ignore[index]
    assert full_median == pytest.approx(0.5 / 999)
    assert (
        sampled_median > 5 * full_median
    )  # SDMetrics #934: sampling the reference inflates DCRs
    assert full.params["num_rows_subsample"] == 100


def test_subsample_larger_than_synthetic_warns_and_runs_once(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _hold = mixed_tables
    result = DCRBaselineProtection(num_rows_subsample=10_000, num_iterations=3).compute(
        real, syn
    )
    assert result.params["num_rows_subsample"] is None
    assert result.params["num_iterations"] == 1
    assert any("subsampling was disabled" in w for w in result.warnings)


def test_small_holdout_warns(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    real, syn, hold = mixed_tables
    result = DCROverfittingProtection().compute(real, syn, hold.head(10))
    assert any("less than half the size" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_iterations": 3}, r"`num_iterations` > 1 needs `num_rows_subsample`"),
        (
            {"num_rows_subsample": 0},
            r"`num_rows_subsample` must be an integer >= 1; got 0",
        ),
        (
            {"num_rows_subsample": 2.5},
            r"`num_rows_subsample` must be an integer or None; got 2.5",
        ),
        ({"num_iterations": None}, r"`num_iterations` must be an integer; got None"),
    ],
)
def test_bad_subsample_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        DCRBaselineProtection(**kwargs)


def test_subsample_real_larger_than_real_is_a_clear_error(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    with pytest.raises(
        ParameterError,
        match=r"`num_rows_subsample` \(100\) is larger than the real table \(50 rows\)",
    ):
        DCRBaselineProtection(num_rows_subsample=100, subsample_real=True).compute(
            real.head(50), pd.concat([syn] * 2)
        )


def test_overfitting_needs_a_holdout(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    real, syn, _ = mixed_tables
    with pytest.raises(
        InputError, match=r"metric 'dcr_overfitting_protection' needs a `holdout` table"
    ):
        DCROverfittingProtection().compute(real, syn)


def test_records_hold_row_positions_and_dcrs(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    result = DCRBaselineProtection().compute(real, syn)
    rec = result.records["synthetic_to_real"]
    assert rec.table == "synthetic"
    np.testing.assert_array_equal(rec.index, np.arange(len(syn)))
    assert np.median(rec.values) == pytest.approx(
        result.breakdown["median_DCR_to_real_data"]["synthetic_data"]
    )  # type: ignore[index]
    low, high = result.ci  # type: ignore[misc]
    assert low <= result.score <= high  # type: ignore[operator]


def test_both_dcr_metrics_share_the_synthetic_to_real_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # by default both metrics search every synthetic row against the whole real
    # table with the real ranges: one run searches once, with the same results as
    # each metric alone; a subsample is searched anew
    import synthrisk.metrics.dcr as dcr_module

    rng = np.random.default_rng(11)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame({"x": rng.normal(size=n), "c": rng.choice(list("abc"), n)})

    real, synthetic, holdout = table(300), table(250), table(200)
    calls: list[tuple[int, int]] = []
    original = dcr_module.dcr

    def spy(query, reference, context, **kw):  # type: ignore[no-untyped-def]
        calls.append((query.n_rows, reference.n_rows))
        return original(query, reference, context, **kw)

    monkeypatch.setattr(dcr_module, "dcr", spy)
    ids = ["dcr_baseline_protection", "dcr_overfitting_protection"]
    alone = [evaluate(real, synthetic, holdout, metrics=[m]) for m in ids]
    separate = sorted(calls)
    calls.clear()
    report = evaluate(real, synthetic, holdout, metrics=ids)
    # the synthetic -> real search (250 x 300) runs once instead of twice
    assert separate.count((250, 300)) == calls.count((250, 300)) + 1
    assert len(calls) == len(separate) - 1
    for metric, single in zip(ids, alone, strict=True):
        assert report[metric].score == single[metric].score
        assert report[metric].breakdown == single[metric].breakdown
    calls.clear()
    evaluate(
        real,
        synthetic,
        holdout,
        metrics={
            "dcr_baseline_protection": {},
            "dcr_overfitting_protection": {"num_rows_subsample": 100},
        },
    )
    assert (100, 300) in calls  # a subsample: a search of its own
    assert calls.count((250, 300)) == separate.count((250, 300)) - 1
