# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pandas as pd
import pytest

from synthrisk import DCRBaselineProtection, evaluate
from synthrisk.exceptions import InputError, MissingDependencyError, ParameterError
from synthrisk.report import judge


def _strip_seconds(text: str) -> dict:
    data = json.loads(text)
    for entry in data["results"]:
        entry.pop("seconds")
    return data


def test_default_metrics_with_and_without_holdout(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    with_holdout = evaluate(real, syn, hold)
    needs_holdout = [
        "identification", "vulnerable_people", "dcr_overfitting_protection", "membership_knn_probabilities", "dcr_share",
        "membership_classification", "nndr", "singling_out", "singling_out_univariate",
    ]  # fmt: skip
    # the full assessment: every family, the per-person tests first (no identifier_replay:
    # `user_id` numbers the rows, r0, r1, …, which says nothing about a person;
    # rare_value_replay: a holdout and rare values)
    assert [r.metric for r in with_holdout.results] == [
        "identification", "vulnerable_people", "rare_value_replay", "dcr_baseline_protection", "dcr_overfitting_protection", "disclosure_protection", "singling_out",
        "singling_out_univariate", "linkability", "inference", "membership_knn_probabilities", "dcr_share",
        "membership_classification", "distribution_validation", "nndr", "identical_match_share",
    ]  # fmt: skip
    assert with_holdout.verdict is not None
    without = evaluate(real, syn)
    # skipped metrics stay in the report, in the same order
    # (the rare-key replay tests run by default only with a holdout)
    assert [r.metric for r in without.results] == [
        r.metric for r in with_holdout.results if r.metric != "rare_value_replay"
    ]
    ran = [r.metric for r in without.results if r.status == "ok"]
    assert ran == [
        "dcr_baseline_protection", "disclosure_protection", "linkability", "inference",
        "distribution_validation", "identical_match_share",
    ]  # fmt: skip
    assert without.verdict is not None
    assert without.verdict.overall == "review"
    for metric in needs_holdout:
        result = without[metric]
        assert result.status == "skipped"
        assert result.score is None
        assert result.reason is not None
        assert "needs a holdout table" in result.reason
    # a skipped metric does not count towards the verdict
    verdict = judge(without)
    assert [v.skipped for v in verdict.metrics] == [
        r.status == "skipped" for r in without.results
    ]
    assert (
        verdict.overall
        == judge(
            dataclasses.replace(
                without,
                results=tuple(r for r in without.results if r.status != "skipped"),
            )
        ).overall
    )


def test_same_inputs_and_seed_give_identical_json(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    a = evaluate(*mixed_tables, seed=11).to_json(include_records=True)
    b = evaluate(*mixed_tables, seed=11).to_json(include_records=True)
    assert _strip_seconds(a) == _strip_seconds(b)


def test_metric_streams_do_not_depend_on_the_other_metrics(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    alone = evaluate(*mixed_tables, metrics=["dcr_baseline_protection"])
    together = evaluate(
        *mixed_tables, metrics=["dcr_overfitting_protection", "dcr_baseline_protection"]
    )
    assert (
        alone["dcr_baseline_protection"].breakdown
        == together["dcr_baseline_protection"].breakdown
    )


def test_metrics_as_mapping_and_instances(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    report = evaluate(
        *mixed_tables,
        metrics={"dcr_overfitting_protection": {"num_rows_subsample": 50}},
    )
    assert report["dcr_overfitting_protection"].params["num_rows_subsample"] == 50
    report = evaluate(
        *mixed_tables, metrics=[DCRBaselineProtection(num_rows_subsample=40)]
    )
    assert (
        report["dcr_baseline_protection"].records["synthetic_to_real"].index.size == 40
    )


def test_inputs_and_schema_are_reported(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    data = json.loads(evaluate(*mixed_tables).to_json())
    assert data["inputs"]["real"] == {
        "rows": 120,
        "columns": ["user_id", "num", "count", "cat", "flag", "when"],
    }
    assert data["inputs"]["holdout"]["rows"] == 100
    assert data["schema"]["excluded"] == ["user_id"]
    assert data["schema"]["columns"]["when"]["kind"] == "datetime"


@pytest.mark.parametrize(
    ("metrics", "error", "match"),
    [
        (["nope"], ParameterError, r"unknown metric 'nope'\. Available metrics "),
        (
            {"dcr_baseline_protection": {"k": 1}},
            ParameterError,
            r"metric 'dcr_baseline_protection' has no parameter\(s\) \['k'\]",
        ),
        (
            ["dcr_baseline_protection", "dcr_baseline_protection"],
            ParameterError,
            r"lists \['dcr_baseline_protection'\] more than once",
        ),
        ([3], ParameterError, r"entries must be metric ids or Metric instances"),
    ],
)
def test_bad_metric_selection(
    metrics: object, error: type, match: str, mixed_tables: tuple[pd.DataFrame, ...]
) -> None:
    with pytest.raises(error, match=match):
        evaluate(*mixed_tables, metrics=metrics)  # type: ignore[arg-type]


def test_requested_holdout_metric_without_holdout(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    with pytest.raises(InputError, match="needs a `holdout` table"):
        evaluate(real, syn, metrics=["dcr_overfitting_protection"])


def test_negative_seed_is_rejected(mixed_tables: tuple[pd.DataFrame, ...]) -> None:
    with pytest.raises(ParameterError, match=r"`seed` must be an integer >= 0; got -1"):
        evaluate(*mixed_tables, seed=-1)


def test_missing_optional_dependency_skips_in_a_default_run_only(
    mixed_tables: tuple[pd.DataFrame, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sklearn", None)
    report = evaluate(*mixed_tables)
    result = report["membership_classification"]
    assert result.status == "skipped"
    assert result.reason is not None
    assert "pip install scikit-learn" in result.reason
    assert report["dcr_share"].status == "ok"
    index = [r.metric for r in report.results].index("membership_classification")
    assert json.loads(report.to_json())["results"][index]["status"] == "skipped"
    with pytest.raises(MissingDependencyError, match="pip install scikit-learn"):
        evaluate(*mixed_tables, metrics=["membership_classification"])


def test_a_named_metric_that_cannot_run_is_an_error(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, _ = mixed_tables
    with pytest.raises(InputError, match="needs a `holdout` table"):
        evaluate(real, syn, metrics=["nndr"])


# ------------------------------------------------ few queries, params, raised precision


def _coarse_part(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Four 3-valued columns and one that is rarely anything but "common"."""
    df = pd.DataFrame({c: rng.choice(["x", "y", "z"], n) for c in "abcd"})
    rare = rng.random(n) < 0.03
    df["e"] = np.where(rare, [f"r{i}" for i in rng.integers(0, 30, n)], "common")
    return df


def test_a_null_table_with_few_rare_values_passes_singling_out_as_low_risk() -> None:
    rng = np.random.default_rng(0)
    train, hold, syn = (_coarse_part(rng, 600) for _ in range(3))
    report = evaluate(train, syn, hold, metrics=["singling_out_univariate"], seed=0)
    test = report.results[0].breakdown["holdout_test"]
    assert (test["n"], test["n_requested"]) == (12, 2000)
    assert (test["successes"], test["control_successes"]) == (5.2, 3.0)
    v = report.verdict.metrics[0]
    # excess +0.18 on 12 queries: "too few rows" review before the bound
    assert v.effect == pytest.approx(0.1833, abs=1e-4)
    assert v.level == "pass"
    assert v.reason.startswith("only 12 of the 2,000 singling-out queries asked for")
    assert "low risk" in v.reason


def test_copies_of_rare_value_rows_are_not_passed_by_the_bound() -> None:
    rng = np.random.default_rng(0)
    train, hold, syn = (_coarse_part(rng, 600) for _ in range(3))
    rare = train[train["e"] != "common"]
    leaky = pd.concat([syn[syn["e"] == "common"].iloc[: 600 - len(rare)], rare])
    report = evaluate(
        train, leaky.reset_index(drop=True), hold,
        metrics=["singling_out_univariate", "identification"], seed=0,
    )  # fmt: skip
    assert report.verdict.overall == "fail"
    v = report.verdict.metrics[0]
    assert v.level in ("review", "fail")
    assert "low risk" not in v.reason


def test_params_change_one_metric_of_the_full_assessment() -> None:
    rng = np.random.default_rng(1)
    train, hold, syn = (_coarse_part(rng, 300) for _ in range(3))
    report = evaluate(train, syn, hold, seed=0, params={"inference": {"n_attacks": 40}})
    ids = [r.metric for r in report.results]
    assert ids == [r.metric for r in evaluate(train, syn, hold, seed=0).results]
    assert report["inference"].params["n_attacks"] == 40
    with pytest.raises(ParameterError, match="which is not in this run"):
        evaluate(
            train,
            syn,
            hold,
            metrics=["dcr_share"],
            params={"inference": {"n_attacks": 4}},
        )
    with pytest.raises(ParameterError, match="unknown metric 'inferance'"):
        evaluate(train, syn, hold, params={"inferance": {"n_attacks": 4}})


def test_a_review_that_more_targets_can_decide_is_rerun_on_every_row() -> None:
    def tables(seed: int) -> list[pd.DataFrame]:
        rng = np.random.default_rng(seed)
        return [_coarse_part(rng, 900), _coarse_part(rng, 300), _coarse_part(rng, 300)]

    train, hold, syn = tables(2)  # decided at the default: its numbers do not move
    decided = evaluate(train, syn, hold, metrics=["inference"], seed=0)
    assert decided.verdict.metrics[0].level == "pass"
    assert decided["inference"].params["n_attacks"] == 300
    assert "precision_raised" not in decided["inference"].breakdown
    # the default's excess 0.12, interval [0.0315, 0.2085], straddles 0.09
    train, hold, syn = tables(4)
    report = evaluate(train, syn, hold, metrics=["inference"], seed=0)
    result = report["inference"]
    first = result.breakdown["precision_raised"]
    assert first["params"]["n_attacks"] == 300
    assert first["effect"] == pytest.approx(0.12, abs=1e-4)
    assert result.params["n_attacks"] == "all"
    assert result.breakdown["columns"]["a"]["n_attacks"] == 900  # every training row
    v = report.verdict.metrics[0]
    assert v.level == "review"
    assert "re-run with raised precision" in v.reason
    # the 98 % interval [0.0067, 0.1466] around 0.0767: a holdout about 28 times as large
    assert v.next_step.startswith("a holdout about 28 times as large")
    assert v.reason.endswith("Next step: " + v.next_step)
