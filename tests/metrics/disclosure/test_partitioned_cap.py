# SPDX-License-Identifier: BSD-3-Clause
"""disclosure_protection on tables partitioned on a Dask cluster: every row, and the
report (per-row probabilities included) of the in-memory run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics.disclosure._partition_tasks import (
    build_index,
    lookup,
    recover_ns,
)

pytest.importorskip("distributed")

pytestmark = pytest.mark.dask

DATA = Path(__file__).parents[1] / "data"
GOLDENS = json.loads((DATA / "disclosure_goldens.json").read_text())


def _load(name: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / GOLDENS["files"][name])
    for column in GOLDENS["datetime_columns"]:
        frame[column] = pd.to_datetime(frame[column], format="ISO8601")
    return frame


@pytest.fixture(scope="module")
def golden_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    frames = []
    for name in ("real", "synthetic"):
        frame = _load(name).drop(columns="uid")  # an id: not encoded on a cluster
        # True / False / NaN objects: dask would turn them into strings
        frames.append(frame.astype({"flag_na": "boolean"}))
    real, syn = frames
    # the last 100 real rows as a holdout (never seen by the generator)
    return real.iloc[:200].reset_index(drop=True), syn, real.iloc[200:]


def _records(report: Any) -> np.ndarray:
    (result,) = report.results
    return np.asarray(result.records["guess_probability"].values)


def test_default_columns_on_mixed_tables(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    report = check_partitioned(mixed_tables, ["disclosure_protection"])
    (result,) = report.results
    # synthrisk's default columns, chosen from counts made on the cluster
    assert result.params["known_column_names"] == ["num", "count", "cat"]
    assert result.params["continuous_column_names"] == ["num", "count"]
    assert result.breakdown["real_rows"]["total"] == 120
    assert result.breakdown["real_rows"]["scored"] == 38
    assert result.score == pytest.approx(0.736842105263158, abs=1e-15)
    assert result.breakdown["holdout_test"]["n"] == 36


@pytest.mark.parametrize(
    ("method", "nat_binning"),
    [("generalized_cap", "missing"), ("zero_cap", "sdmetrics")],
)
def test_chosen_numeric_and_date_columns(
    check_partitioned: Callable[..., Any],
    mixed_tables: tuple,
    method: str,
    nat_binning: str,
) -> None:
    # a binned date and a number matched exactly as known columns, a binned number
    # and a boolean as the sensitive tuple
    metric = {
        "disclosure_protection": {
            "known_column_names": ["when", "count", "cat"],
            "sensitive_column_names": ["num", "flag"],
            "continuous_column_names": ["when", "num"],
            "num_discrete_bins": 4,
            "computation_method": method,
            "nat_binning": nat_binning,
        }
    }
    report = check_partitioned(mixed_tables, metric)
    p = _records(report)
    assert p.shape == (120,)
    assert not np.isnan(p).any()  # both methods score every row
    if method == "zero_cap":
        assert (p == 0).sum() > 0


def test_coarse_categorical_copies(check_partitioned: Callable[..., Any]) -> None:
    # three coarse categorical columns; 100 of the 110 synthetic rows copy real rows
    g = np.random.default_rng(7)
    real = pd.DataFrame(
        {
            "sex": g.choice(["f", "m"], 150),
            "region": g.choice(["n", "s", "e", "w"], 150),
            "age": g.choice(["young", "mid", "old"], 150),
            "diagnosis": g.choice(["x", "y", "z"], 150),
        }
    )
    real.loc[g.random(150) < 0.1, "region"] = None
    copies = real.sample(100, random_state=1)
    fresh = pd.DataFrame({c: g.choice(real[c].dropna().unique(), 10) for c in real})
    syn = pd.concat([copies, fresh], ignore_index=True)
    holdout = pd.DataFrame({c: g.choice(real[c].dropna().unique(), 70) for c in real})
    metric = {
        "disclosure_protection": {
            "known_column_names": ["sex", "region", "age"],
            "sensitive_column_names": ["diagnosis"],
            "computation_method": "generalized_cap",
        }
    }
    with_holdout = check_partitioned((real, syn, holdout), metric)
    without = check_partitioned((real, syn, None), metric)
    (a,), (b,) = with_holdout.results, without.results
    assert a.score == b.score
    assert "holdout_test" not in b.breakdown
    test = a.breakdown["holdout_test"]
    assert test["n"] == 70
    # the generator copied training rows: they are guessed better than holdout rows
    assert test["effect"] == pytest.approx(0.11321201814058962, abs=1e-12)
    assert test["p_value"] < 0.001
    assert a.score == pytest.approx(0.8491893939393939, abs=1e-12)
    assert a.breakdown["baseline_protection"] == pytest.approx(2 / 3)


def test_exact_matches_and_their_caveats(
    check_partitioned: Callable[..., Any], mixed_tables: tuple
) -> None:
    # a near-identifier category, a number and a date matched exactly as known
    # columns; a number matched exactly as the sensitive column
    g = np.random.default_rng(5)
    frames = [
        f.assign(postcode=[f"p{i}" for i in g.integers(0, 200, len(f))])
        for f in mixed_tables
    ]
    metric = {
        "disclosure_protection": {
            "known_column_names": ["postcode", "num", "when"],
            "sensitive_column_names": ["count"],
            "computation_method": "generalized_cap",
        }
    }
    report = check_partitioned(tuple(frames), metric)
    (result,) = report.results
    warnings = " ".join(result.warnings)
    assert "'postcode' has 91 distinct values in 120 real rows" in warnings
    assert "'num' is numerical with 102 distinct real values" in warnings
    assert "datetime column 'when' is matched on exact timestamps" in warnings
    # 9 counts (0 to 8), none missing
    assert result.breakdown["baseline_protection"] == pytest.approx(8 / 9)


def test_strict_types_raises_as_in_memory(
    dask_client: Any, mixed_tables: tuple
) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from synthrisk import evaluate
    from synthrisk.cluster import evaluate_dataset

    metric = {
        "disclosure_protection": {
            "known_column_names": ["when", "cat"],
            "sensitive_column_names": ["flag"],
            "strict_types": True,
        }
    }
    with pytest.raises(ParameterError) as in_memory:
        evaluate(*mixed_tables, metrics=metric)
    parts = [dd.from_pandas(f, npartitions=3) for f in mixed_tables]
    with pytest.raises(ParameterError, match="datetime column 'when' is not in") as got:
        evaluate_dataset(*parts, metrics=metric, client=dask_client, sample_rows=5)
    assert str(got.value) == str(in_memory.value)


@pytest.mark.parametrize(
    "case",
    ["multi_sensitive", "binned", "exact_float_nan", "nat_collapse", "constant_binned"],
)
def test_golden_cases(
    check_partitioned: Callable[..., Any], golden_tables: tuple, case: str
) -> None:
    spec = GOLDENS["cases"][case]
    params = {
        "known_column_names": spec["known"],
        "sensitive_column_names": spec["sensitive"],
        "continuous_column_names": spec.get("continuous"),
        "num_discrete_bins": spec.get("bins", 10),
        "computation_method": "generalized_cap",
        **spec.get("synthrisk", {}),
    }
    check_partitioned(golden_tables, {"disclosure_protection": params})


def test_estimate_runs_on_a_sample(dask_client: Any, mixed_tables: tuple) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from synthrisk.cluster import evaluate_dataset

    parts = [dd.from_pandas(f, npartitions=3) for f in mixed_tables]
    metric = {
        "disclosure_protection_estimate": {
            "known_column_names": ["cat", "count"],
            "sensitive_column_names": ["flag"],
            "num_rows_subsample": 50,
        }
    }
    report = evaluate_dataset(
        *parts, metrics=metric, seed=3, client=dask_client, sample_rows=60
    )
    (result,) = report.results
    assert any("seeded random sample" in w for w in result.warnings)
    # 60 of the 120 real rows were drawn
    assert result.breakdown["real_rows"]["total"] == 60


def test_identifier_column_is_refused(dask_client: Any, mixed_tables: tuple) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from synthrisk.cluster import evaluate_dataset

    parts = [dd.from_pandas(f, npartitions=3) for f in mixed_tables]
    metric = {
        "disclosure_protection": {
            "known_column_names": ["user_id", "cat"],
            "sensitive_column_names": ["flag"],
        }
    }
    with pytest.raises(ParameterError, match=r"'user_id' has kind 'id'.*'categorical'"):
        evaluate_dataset(*parts, metrics=metric, client=dask_client, sample_rows=5)


# ------------------------------------------------------------------- helpers


def test_recover_ns_is_exact_for_usual_precisions() -> None:
    origin = pd.Timestamp("1900-03-04 05:06:07").value
    g = np.random.default_rng(1)
    year = 365 * 86400
    cases = {
        "whole seconds, 140 years": g.integers(0, 140 * year, 2000) * 10**9,
        "whole milliseconds, 290 years": g.integers(0, 290 * year * 10**3, 2000)
        * 10**6,
        "whole microseconds, 40 years": g.integers(0, 40 * year * 10**6, 2000) * 1000,
        "any nanosecond, 40 days": g.integers(0, 40 * 86400 * 10**9, 2000),
    }
    for case, delta in cases.items():
        seconds = delta.astype(np.float64) / 1e9  # the encoder's rule
        got = recover_ns(seconds, origin)
        np.testing.assert_array_equal(got, origin + delta, err_msg=case)


def test_tuple_index_finds_exactly_the_indexed_rows() -> None:
    g = np.random.default_rng(2)
    rows = g.integers(0, 5, size=(60, 3))  # some of the 125 tuples, some twice
    index, ids = build_index(rows, (5, 5, 5))
    distinct = np.unique(rows, axis=0)
    assert index.size == distinct.shape[0]
    # equal ids exactly where rows are equal
    np.testing.assert_array_equal(
        ids[:, None] == ids[None, :], (rows[:, None] == rows[None, :]).all(axis=2)
    )
    queries = g.integers(0, 6, size=(200, 3))
    got = lookup(np.minimum(queries, 4), index.stages, index.radix)
    known = {tuple(r): i for r, i in zip(rows.tolist(), ids.tolist(), strict=True)}
    expected = [known.get(tuple(q), -1) for q in np.minimum(queries, 4).tolist()]
    np.testing.assert_array_equal(got, expected)
    assert (got == -1).sum() > 50
    assert (got >= 0).sum() > 50


def test_time_origin_is_the_encoders(dask_client: Any, mixed_tables: tuple) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from synthrisk.metrics.disclosure._cap_partitioned import time_origin
    from synthrisk.schema import prepare_tables
    from synthrisk.schema.partitioned import prepare_partitioned

    real, syn, holdout = (f.copy() for f in mixed_tables)
    # the earliest date, to the microsecond, in the holdout's last partition
    holdout.loc[80, "when"] = pd.Timestamp("2020-06-01 12:34:56.789012")
    frames = (real, syn, holdout)
    parts = [dd.from_pandas(f, npartitions=3) for f in frames]
    tables = prepare_partitioned(*parts, client=dask_client)
    expected = prepare_tables(*frames).encoder.time_origin
    assert expected == pd.Timestamp("2020-06-01 12:34:56.789012").value
    assert time_origin(tables) == expected
