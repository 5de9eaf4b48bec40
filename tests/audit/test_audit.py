# SPDX-License-Identifier: BSD-3-Clause
"""The audit on generators whose answer is known, and its parameters."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pandas as pd
import pytest
from tests.audit._generators import Copier, Flaky, KnownEpsilon, population

import synthrisk
from synthrisk.audit import ATTACKS, audit
from synthrisk.exceptions import InputError, ParameterError

N_REAL, N_HOLDOUT, TRAIN = 60, 240, 40
TARGETS = list(range(10))


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = population(N_REAL + N_HOLDOUT, 7)
    return data.iloc[:N_REAL].reset_index(drop=True), data.iloc[N_REAL:].reset_index(
        drop=True
    )


def _known(tables: tuple[pd.DataFrame, pd.DataFrame], epsilon: float, **kw: object):
    real, holdout = tables
    mechanism = KnownEpsilon(real.iloc[TARGETS], epsilon)
    options: dict[str, object] = {
        "n_targets": 0,
        "target_rows": TARGETS,
        "train_size": TRAIN,
        "attacks": ["dcr", "knn"],
    }
    options.update(kw)
    return audit(mechanism, real, holdout, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_known_epsilon_bound_never_exceeds_epsilon(tables, seed: int) -> None:
    result = _known(tables, 1.0, n_runs=120, seed=seed)
    assert 0.0 < result.epsilon_lower <= 1.0
    assert result.epsilon_lower_one_run is not None
    assert 0.0 < result.epsilon_lower_one_run <= 1.0
    assert result.best_attack in ("dcr", "knn")
    # the insertion test is the best test: TPR / FPR = e, AUC = (1 + TPR - FPR) / 2
    assert result.overall["dcr"].auc == pytest.approx(0.731, abs=0.06)


def test_known_epsilon_bound_approaches_epsilon_as_runs_grow(tables) -> None:
    # one audit of 30 runs (150 evaluation guesses) lands anywhere in a wide interval
    # (0.49 to 1.01 over seeds 0-4, a 95 % bound exceeding ε by chance once): compare
    # their median
    few = float(
        np.median(
            [_known(tables, 1.0, n_runs=30, seed=s).epsilon_lower for s in range(5)]
        )
    )
    many_runs = _known(tables, 1.0, n_runs=300, seed=3)
    many = many_runs.epsilon_lower
    assert few < many <= 1.0
    assert many > 0.65
    one_run = many_runs.epsilon_lower_one_run
    assert one_run is not None
    assert 0.65 < one_run <= 1.0


def test_known_epsilon_per_target_bounds_are_valid(tables) -> None:
    result = _known(tables, 2.0, n_runs=120, seed=4)
    assert [t.row for t in result.targets] == TARGETS
    assert all(t.source == "named" for t in result.targets)
    assert all(t.epsilon_lower <= 2.0 for t in result.targets)
    assert result.epsilon_lower <= 2.0
    assert max(t.epsilon_lower for t in result.targets) > 0


def test_copier_is_detected_and_the_bound_grows_with_p(tables) -> None:
    real, holdout = tables
    bounds = []
    for p in (0.3, 1.0):
        # 100 runs: the six attacks share the confidence, 60 runs leave p = 0.3 near 0
        result = audit(
            Copier(p), real, holdout, n_targets=8, n_runs=100, train_size=TRAIN, seed=5
        )
        bounds.append(result.epsilon_lower)
        assert result.overall["dcr"].auc is not None
        assert result.overall["dcr"].auc > 0.53
    assert 0.5 < bounds[0] < bounds[1] - 0.5


def test_null_generator_gives_no_bound(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.0), real, holdout, n_targets=8, n_runs=80, train_size=TRAIN, seed=6
    )
    assert result.epsilon_lower == 0.0
    assert result.epsilon_lower_one_run == 0.0
    assert result.best_attack is None
    for attack in ATTACKS:
        auc = result.overall[attack].auc
        assert auc is not None
        assert abs(auc - 0.5) < 0.1, (attack, auc)
    assert result.verdict(0.0).passed


def test_targets_are_the_most_isolated_then_the_named_rows(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.5),
        real,
        holdout,
        n_targets=3,
        target_rows=[5, 7],
        n_runs=8,
        train_size=TRAIN,
        attacks=["dcr"],
    )
    rows = [t.row for t in result.targets]
    sources = [t.source for t in result.targets]
    isolation = [t.isolation for t in result.targets[:3]]
    assert isolation == sorted(isolation, reverse=True)
    assert sources[:3] == ["vulnerable"] * 3
    assert set(rows[3:]) == {5, 7} - set(rows[:3])
    assert all(s == "named" for s in sources[3:])


def test_same_seed_same_result(tables) -> None:
    real, holdout = tables

    def numbers(result: synthrisk.AuditResult) -> str:
        data = result.to_dict()
        data.pop("runs")
        return json.dumps(data, sort_keys=True)

    first = audit(Copier(0.5), real, holdout, n_targets=4, n_runs=12, train_size=TRAIN)
    again = audit(Copier(0.5), real, holdout, n_targets=4, n_runs=12, train_size=TRAIN)
    other = audit(
        Copier(0.5), real, holdout, n_targets=4, n_runs=12, train_size=TRAIN, seed=1
    )
    assert numbers(first) == numbers(again)
    assert numbers(first) != numbers(other)


def test_parallel_runs_equal_serial_runs(tables) -> None:
    real, holdout = tables
    kw = {"n_targets": 4, "n_runs": 8, "train_size": TRAIN, "attacks": ["dcr", "knn"]}
    serial = audit(Copier(0.5), real, holdout, **kw)  # type: ignore[arg-type]
    parallel = audit(Copier(0.5), real, holdout, n_jobs=2, **kw)  # type: ignore[arg-type]
    assert serial.to_dict()["overall"] == parallel.to_dict()["overall"]
    assert serial.to_dict()["targets"] == parallel.to_dict()["targets"]


def test_a_crashing_generator_is_retried_then_reported(tables) -> None:
    real, holdout = tables
    kw = {"n_targets": 3, "n_runs": 10, "train_size": TRAIN, "attacks": ["dcr"]}
    flaky = audit(Flaky(once=True), real, holdout, **kw)  # type: ignore[arg-type]
    assert flaky.runs["failed"] == 0
    assert flaky.runs["retried"] == len(flaky.retries) > 0
    broken = audit(Flaky(once=False), real, holdout, **kw)  # type: ignore[arg-type]
    # retried counts the runs whose retry succeeded: those that failed twice are failed
    assert broken.runs["failed"] > 0
    assert broken.runs["retried"] == len(broken.retries)
    assert {f.run for f in broken.retries}.isdisjoint(f.run for f in broken.failures)
    assert broken.runs["completed"] + broken.runs["failed"] == 10
    assert all("crash on seed" in f.error for f in broken.failures)
    assert json.loads(broken.to_json())["failures"][0]["run"] == broken.failures[0].run


def test_budget_stops_early_with_the_runs_done(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.5),
        real,
        holdout,
        n_targets=3,
        n_runs=10_000,
        train_size=TRAIN,
        attacks=["dcr"],
        max_seconds=1.0,
    )
    assert 0 < result.n_runs < 10_000
    assert "budget" in str(result.runs["stopped_early"])


def test_progress_is_called_after_each_run(tables) -> None:
    real, holdout = tables
    seen: list[tuple[int, int]] = []
    audit(
        Copier(0.5),
        real,
        holdout,
        n_targets=2,
        n_runs=5,
        train_size=TRAIN,
        attacks=["dcr"],
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(i, 5) for i in range(1, 6)]


def test_the_result_states_its_threat_model_and_settings(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.5), real, holdout, n_targets=2, n_runs=6, train_size=TRAIN, delta=1e-3
    )
    data = json.loads(result.to_json())
    assert set(data["threat_model"]) == {
        "attacker_knows",
        "attacker_holds",
        "targets",
        "game",
        "guarantee",
    }
    assert data["settings"]["delta"] == 1e-3
    assert data["settings"]["attack_confidence_level"] == pytest.approx(
        1 - 0.05 / len(ATTACKS)
    )
    assert data["runs"]["completed"] == 6
    assert data["runs"]["selection"] + data["runs"]["evaluation"] == 6
    # row numbers, never values
    assert str(real.loc[0, "x"]) not in result.to_json()
    assert math.isfinite(data["runs"]["audit_seconds"])
    again = synthrisk.AuditResult.from_dict(data)
    assert again.to_json() == result.to_json()


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"n_runs": 2}, ParameterError, "`n_runs` must be an integer >= 4"),
        ({"attacks": ["dcr", "lira"]}, ParameterError, "`attacks` must be one of"),
        ({"attacks": []}, ParameterError, "`attacks` must name at least one"),
        ({"classifier": "svm"}, ParameterError, "`classifier` must be one of"),
        ({"delta": 1.5}, ParameterError, "`delta` must be a number strictly between"),
        ({"confidence_level": 1.0}, ParameterError, "`confidence_level` must be"),
        ({"target_rows": [500]}, ParameterError, "`target_rows` names row 500"),
        ({"n_targets": 0}, ParameterError, "no target to audit"),
        ({"train_size": 10_000}, InputError, "`train_size` must be between 1 and"),
        ({"max_seconds": 0}, ParameterError, "`max_seconds` must be a positive"),
    ],
)
def test_audit_rejects_bad_parameters(tables, kw, error, match) -> None:
    real, holdout = tables
    with pytest.raises(error, match=match):
        audit(Copier(0.5), real, holdout, **kw)


def test_audit_rejects_a_generator_that_is_not_one() -> None:
    with pytest.raises(ParameterError, match="`generator` must be a callable"):
        audit(42, population(10, 0), population(20, 1))


def test_audit_is_exported_at_the_top_level_as_run_audit() -> None:
    assert synthrisk.run_audit is audit
    assert "run_audit" in synthrisk.__all__
    assert "audit" not in synthrisk.__all__
    # ``synthrisk.audit`` is the subpackage, with the function inside it
    assert isinstance(synthrisk.audit, types.ModuleType)
    assert synthrisk.audit.audit is audit


class _BadOutputs:
    """Drops a column on run seeds divisible by 3, writes text into `x` on seeds = 1 mod 3."""

    def __call__(self, train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        out = train.sample(n, replace=True, random_state=seed).reset_index(drop=True)
        if seed % 3 == 0:
            return out.drop(columns=["y"])
        if seed % 3 == 1:
            out["x"] = out["x"].astype(object)
            out.loc[0, "x"] = "not a number"
        return out


def test_unusable_outputs_fail_only_their_own_runs(tables) -> None:
    real, holdout = tables
    result = audit(
        _BadOutputs(),
        real,
        holdout,
        n_targets=3,
        n_runs=20,
        train_size=TRAIN,
        attacks=["dcr"],
    )
    errors = [f.error for f in result.failures]
    assert any("lacks the columns ['y']" in e for e in errors)
    assert any("cannot be read as the training table's columns" in e for e in errors)
    assert 0 < result.n_runs < 20
    assert result.n_runs + len(result.failures) == 20
    assert [f.run for f in result.failures] == sorted(f.run for f in result.failures)


def test_a_budget_spent_before_the_first_run_gives_an_empty_audit(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.5), real, holdout, n_targets=3, train_size=TRAIN, max_seconds=1e-9
    )
    assert result.n_runs == 0
    assert result.epsilon_lower == 0.0
    assert result.best_attack is None
    assert all(b.auc is None for b in result.overall.values())
    assert "after 0 of 200 runs" in str(result.runs["stopped_early"])
    verdict = result.verdict(10.0)
    assert not verdict.passed
    assert "no evaluation run" in verdict.reason


def test_the_new_attacks_join_the_maximum_with_bonferroni(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(1.0), real, holdout, n_targets=6, n_runs=60, train_size=TRAIN, seed=2
    )
    assert result.settings["attacks"] == list(ATTACKS)
    assert {"dcr_diff", "gen_lra"} <= set(result.overall)
    assert str(result.settings["multiplicity"]).endswith(
        f"Bonferroni over {len(ATTACKS)} attack(s)"
    )
    assert result.settings["attack_confidence_level"] == pytest.approx(1 - 0.05 / 6)
    # a copier is found by both: the output holds the member's record itself
    for attack in ("dcr_diff", "gen_lra"):
        auc = result.overall[attack].auc
        assert auc is not None
        assert auc > 0.65
    assert result.bounds["clopper_pearson"] == max(
        b.epsilon_lower for b in result.overall.values()
    )
    # the headline is the one test chosen on the selection runs
    assert result.epsilon_lower == result.bounds["selected"]
    assert result.best_attack == result.bounds["selected_attack"]
    assert result.bounds["selected_method"] in ("guesses", "clopper_pearson")
    assert result.epsilon_lower > 1
    # dcr_diff is a fixed shift of dcr per target: the same per-target results
    for target in result.targets:
        assert (
            target.attacks["dcr_diff"].epsilon_lower
            == target.attacks["dcr"].epsilon_lower
        )
        assert target.attacks["dcr_diff"].auc == target.attacks["dcr"].auc
    # only gen_lra: the bound holds at the full confidence
    alone = audit(
        Copier(1.0), real, holdout, n_targets=6, n_runs=60, train_size=TRAIN, seed=2,
        attacks=["gen_lra"],
    )  # fmt: skip
    assert alone.settings["attack_confidence_level"] == pytest.approx(0.95)
    assert alone.overall["gen_lra"].auc == result.overall["gen_lra"].auc
    assert (
        alone.overall["gen_lra"].epsilon_lower
        >= result.overall["gen_lra"].epsilon_lower
    )


def test_roc_curves_are_stored_overall_and_per_target(tables) -> None:
    real, holdout = tables
    result = audit(
        Copier(0.5), real, holdout, n_targets=3, n_runs=40, train_size=TRAIN,
        attacks=["dcr", "gen_lra"],
    )  # fmt: skip
    data = json.loads(result.to_json())
    for attack in ("dcr", "gen_lra"):
        roc = data["overall"][attack]["roc"]
        assert len(roc["fpr"]) == len(roc["tpr"]) <= 101
        assert roc["fpr"][0] == roc["tpr"][0] == 0.0
        assert roc["fpr"][-1] == roc["tpr"][-1] == 1.0
        # the curve's area is the reported AUC (pooled scores, every vertex kept)
        area = sum(
            (f1 - f0) * (t0 + t1) / 2
            for f0, f1, t0, t1 in zip(
                roc["fpr"], roc["fpr"][1:], roc["tpr"], roc["tpr"][1:], strict=False
            )
        )
        assert area == pytest.approx(data["overall"][attack]["auc"], abs=0.03)
        for target in data["targets"]:
            curve = target["attacks"][attack]["roc"]
            assert len(curve["fpr"]) <= 21  # at most the evaluation runs + 1
    again = synthrisk.AuditResult.from_dict(data)
    assert again.overall["dcr"].roc == result.overall["dcr"].roc
