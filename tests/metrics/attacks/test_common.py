# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the Anonymeter-style attacks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.attacks._common import (
    attack_neighbors,
    attack_outcome,
    attack_sizes,
    cap_attacks,
    check_compat,
    check_not_excluded,
    datetimes_as_categories,
    gower_neighbors,
    shared_scale,
)
from synthrisk.neighbors import nearest_neighbors
from synthrisk.results import RecordScores
from synthrisk.schema import prepare_tables
from synthrisk.stats.intervals import estimate_attack

DATA = Path(__file__).parents[1] / "data"
GOLDENS = json.loads((DATA / "anonymeter_goldens.json").read_text())


def test_gower_distances_equal_anonymeter_mixed_type_kneighbors() -> None:
    golden = GOLDENS["knn"]
    syn = pd.read_csv(DATA / golden["synthetic"])
    query = pd.read_csv(DATA / golden["query"])
    metadata = {"columns": {"num": {"kind": "numerical"}, "count": {"kind": "numerical"},
                            "cat": {"kind": "categorical"}, "day": {"kind": "datetime"}}}  # fmt: skip
    tables = prepare_tables(query, syn, metadata=metadata)
    q, r = datetimes_as_categories(
        [tables.encoded("real"), tables.encoded("synthetic")], ["day"]
    )
    assert q.categorical_names == ("cat", "day")
    nn = nearest_neighbors(
        q, r, k=golden["k"], distance="gower", missing="anonymeter", backend="numpy"
    )
    expected = np.array(
        [[np.nan if d is None else d for d in row] for row in golden["distances"]]
    )
    np.testing.assert_allclose(nn.distances, expected, rtol=0, atol=1e-12)
    # targets with a missing `num` only reach synthetic rows missing it too (at cost 1)
    missing = query["num"].isna().to_numpy()
    assert missing.any()
    other = nearest_neighbors(
        q, r, k=golden["k"], distance="gower", missing="mismatch", backend="numpy"
    )
    assert not np.allclose(other.distances[missing], expected[missing])


def test_datetimes_as_categories_shares_codes_and_gives_missing_its_own_code() -> None:
    frame = pd.DataFrame(
        {
            "when": pd.to_datetime(["2020-01-01", "2020-01-02", None]),
            "x": [1.0, 2.0, 3.0],
        }
    )
    other = pd.DataFrame(
        {
            "when": pd.to_datetime(["2020-01-02", "2020-01-05", "2020-01-01"]),
            "x": [1.0, 2.0, 3.0],
        }
    )
    tables = prepare_tables(frame, other)
    a, b = datetimes_as_categories(
        [tables.encoded("real"), tables.encoded("synthetic")], ["when"]
    )
    assert a.numeric_names == ("x",)
    assert a.categorical_names[-1] == "when"
    assert a.codes[:, -1].tolist() == [0, 1, 3]
    assert b.codes[:, -1].tolist() == [1, 2, 0]
    same = datetimes_as_categories([tables.encoded("real")], [])
    assert same[0] is tables.encoded("real")


def test_shared_scale_is_the_range_over_all_tables() -> None:
    real = pd.DataFrame({"x": [0.0, 5.0], "c": ["a", "b"]})
    syn = pd.DataFrame({"x": [2.0, 12.0], "c": ["a", "b"]})
    hold = pd.DataFrame({"x": [-3.0, np.nan], "c": ["a", "b"]})
    tables = prepare_tables(real, syn, hold)
    assert shared_scale(tables, ["x", "c"]).tolist() == [15.0]
    assert shared_scale(tables, ["c"]).size == 0


def test_gower_neighbors_break_ties_at_random() -> None:
    reference = prepare_tables(
        pd.DataFrame({"c": ["a"] * 50}), pd.DataFrame({"c": ["a"] * 50})
    ).encoded("real")
    query = reference.take(np.zeros(400, dtype=np.int64))
    rng = np.random.default_rng(0)
    picks = gower_neighbors(
        query,
        reference,
        k=1,
        rng=rng,
        context=Context(),
        scale=None,
        missing="mismatch",
        description="",
    )
    assert (
        len(np.unique(picks)) == 1
    )  # one permutation per search: identical queries agree
    draws = [
        gower_neighbors(reference.take(np.array([0])), reference, k=3, rng=rng,
                        context=Context(), scale=None, missing="mismatch", description="")[0]
        for _ in range(300)
    ]  # fmt: skip
    counts = np.bincount(np.concatenate(draws), minlength=50)
    assert counts.min() > 0  # every tied row gets picked
    assert counts.max() < 60  # ... roughly uniformly (mean 18)
    assert all(len(set(d)) == 3 for d in draws)


def test_check_compat() -> None:
    assert check_compat(None) is None
    assert check_compat("anonymeter-1.0") == "anonymeter-1.0"
    with pytest.raises(
        ParameterError,
        match=r"`compat` must be one of \[None, 'anonymeter-1.0', 'anonymeter-1.1'\]",
    ):
        check_compat("1.1")


def test_cap_attacks_records_a_warning() -> None:
    warnings: list[str] = []
    assert cap_attacks(5, 10, table="holdout", warnings=warnings) == 5
    assert warnings == []
    assert cap_attacks(50, 10, table="holdout", warnings=warnings) == 10
    assert warnings == [
        "`n_attacks` (50) is larger than the holdout table (10 rows); 10 holdout rows were attacked instead."
    ]


def test_attack_sizes_default_to_the_holdout_and_cap_to_each_table() -> None:
    real = pd.DataFrame({"x": np.arange(10.0)})
    tables = prepare_tables(real, real, real.iloc[:4])
    warnings: list[str] = []
    assert attack_sizes(tables, None, warnings=warnings) == (4, 4, 4)
    assert warnings == []
    assert attack_sizes(tables, 6, warnings=warnings) == (6, 6, 4)
    assert warnings == [
        "`n_attacks` (6) is larger than the holdout table (4 rows); 4 holdout rows were attacked instead."
    ]
    no_holdout = prepare_tables(real, real)
    assert attack_sizes(no_holdout, None, warnings=[]) == (10, 10, None)
    assert attack_sizes(no_holdout, 12, warnings=[]) == (12, 10, None)


def test_attack_outcome_breakdown_order_warnings_and_undefined_risk() -> None:
    records = {"r": RecordScores("real", np.arange(2), np.ones(2), "")}
    context = Context()
    estimate = estimate_attack(n_success=30, n_attacks=100, n_baseline=5, n_control=10)
    outcome = attack_outcome(
        estimate,
        context,
        attack="test attack",
        details={"mode": "x"},
        records=records,
        run_warnings=["from the run"],
        value_keys=("mode",),
    )
    risk = estimate.risk()
    assert outcome.score == risk.value
    assert outcome.ci == risk.ci
    assert list(outcome.breakdown) == [*estimate.to_dict(), "petsard", "mode"]
    assert outcome.records is records
    assert outcome.value_keys == ("mode",)
    assert context.warnings == ["from the run"]
    # a control attack that always succeeds: the risk is undefined, and said so
    always = estimate_attack(
        n_success=3, n_attacks=3, n_baseline=0, n_control=3, confidence_level=0
    )
    undefined = attack_outcome(
        always, context, attack="test attack", details={}, records={}
    )
    assert undefined.score is None
    assert undefined.ci is None
    assert "the control test attack succeeded every time" in context.warnings[-1]


def test_check_not_excluded_names_the_option_and_the_columns() -> None:
    frame = pd.DataFrame({"person_id": [1, 2, 3], "x": [1.0, 2.0, 3.0]})
    tables = prepare_tables(
        frame, frame, metadata={"columns": {"person_id": {"kind": "id"}}}
    )
    check_not_excluded(tables, ["x", "unknown"], name="aux_cols")
    with pytest.raises(
        ParameterError,
        match=r"`aux_cols\[1\]` names columns excluded from the metrics \(id, pii or text\): "
        r"\['person_id'\]\. Leave them out\.$",
    ):
        check_not_excluded(
            tables, ["person_id", "x"], name="aux_cols[1]", remedy="Leave them out."
        )


def test_attack_neighbors_compat_compares_datetimes_as_categories() -> None:
    days = pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-09"])
    tables = prepare_tables(
        pd.DataFrame({"day": days[[0]]}), pd.DataFrame({"day": days[[2, 1]]})
    )
    query, reference = tables.encoded("real"), tables.encoded("synthetic")

    def nearest(compat: str | None, seed: int) -> tuple[int, ...]:
        rows = attack_neighbors(
            tables,
            query,
            reference,
            k=2,
            compat=compat,
            rng=np.random.default_rng(seed),
            context=Context(),
            description="",
        )
        return tuple(rows[0].tolist())

    # synthrisk's distance: the day one day away is nearer than the one eight days away
    assert {nearest(None, seed) for seed in range(20)} == {(1, 0)}
    # Anonymeter's: two different days are equally far (categories), ties at random
    assert {nearest("anonymeter-1.1", seed) for seed in range(20)} == {(0, 1), (1, 0)}
