# SPDX-License-Identifier: BSD-3-Clause
"""Inference risk.

Toy cases are ported from Anonymeter's ``tests/test_inference_evaluator.py`` (The
Clear BSD License, Copyright (c) 2022 Anonos IP LLC); the guess-evaluation golden is
recorded from Anonymeter 1.1 by ``scripts/record_goldens_anonymeter.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import InferenceRisk, evaluate
from synthrisk.exceptions import ParameterError, SchemaMismatchError
from synthrisk.metrics.attacks.inference import inference_attack, inference_success
from synthrisk.schema import prepare_tables

GOLDENS = json.loads(
    (Path(__file__).parents[1] / "data" / "anonymeter_goldens.json").read_text()
)
NAN = np.nan


def people(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    x = np.round(g.normal(0, 1, n), 4)
    return pd.DataFrame(
        {
            "x": x,
            "y": np.round(g.normal(0, 1, n), 4),
            "group": g.choice(list("abc"), n),
            "secret": np.where(g.random(n) < 0.5, "yes", "no"),
            "amount": np.round(g.lognormal(3, 1, n), 1),
        }
    )


@pytest.mark.parametrize(
    "case", GOLDENS["inference_guesses"], ids=lambda c: f"regression={c['regression']}"
)
def test_anonymeter_rule_equals_anonymeter(case: dict) -> None:
    g = np.array(case["guesses"], dtype=float)
    s = np.array(case["secrets"], dtype=float)
    got = inference_success(g, s, regression=case["regression"], rule="anonymeter")
    assert got.tolist() == case["success"]


@pytest.mark.parametrize(
    ("guesses", "secrets", "expected"),
    [
        ((0.0, 1.0), (0.0, 1.0), (True, True)),
        ((NAN, 1.0), (NAN, 1.0), (True, True)),
        ((NAN, NAN), (NAN, NAN), (True, True)),
        ((NAN, 1.0), (0.0, NAN), (False, False)),
        ((0.0, 1.0), (0.0, 2.0), (True, False)),
        ((1.0, 0.0), (2.0, 0.0), (False, True)),
    ],
)
def test_exact_guesses(guesses: tuple, secrets: tuple, expected: tuple) -> None:
    got = inference_success(np.array(guesses), np.array(secrets), regression=False)
    assert tuple(got.tolist()) == expected


@pytest.mark.parametrize(
    ("guesses", "secrets", "closeness", "expected"),
    [
        ((1.0, 1.0), (1.05, 1.06), 0.05, (True, False)),
        ((1.0, 1.0), (1.05, 1.06), 0.06, (True, True)),
        ((1.0, NAN), (1.05, NAN), 0.06, (True, True)),
        ((1.0, NAN), (NAN, 1.06), 0.06, (False, False)),
        ((1.0, 1.0), (1.05, 1.06), 0.04, (False, False)),
        ((1.0, 1.0), (1.25, 1.26), 0.2, (False, False)),
        ((1.0, 1.0), (1.26, 1.25), 0.25, (False, True)),
    ],
)
def test_anonymeter_closeness_is_relative_to_the_guess(
    guesses: tuple, secrets: tuple, closeness: float, expected: tuple
) -> None:
    got = inference_success(
        np.array(guesses),
        np.array(secrets),
        regression=True,
        closeness=closeness,
        rule="anonymeter",
    )
    assert tuple(got.tolist()) == expected


def test_fixed_closeness_is_relative_to_the_true_value() -> None:
    g = np.array([-5.0, 1.0, 0.0, 100.0, 95.0])
    s = np.array([3.0, 1.04, 0.0, 95.0, 100.0])
    assert inference_success(g, s, regression=True, rule="anonymeter").tolist() == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert inference_success(g, s, regression=True).tolist() == [
        False,
        True,
        True,
        False,
        True,
    ]
    assert inference_success(g, s, regression=True, scale=200.0).tolist() == [
        True,
        True,
        True,
        True,
        True,
    ]


@pytest.mark.parametrize("compat", [None, "anonymeter-1.1", "anonymeter-1.0"])
@pytest.mark.parametrize(
    ("syn", "expected"),
    [
        ([["a", "b"], ["c", "d"]], 1.0),
        ([["a", "b"], ["c", "e"]], 0.5),
        ([["a", "h"], ["c", "g"]], 0.0),
    ],
)
def test_toy_rates(syn: list, expected: float, compat: str | None) -> None:
    ori = pd.DataFrame([["a", "b"], ["c", "d"]], columns=["c0", "c1"])
    out = InferenceRisk(
        secret="c1", aux_cols=["c0"], n_attacks=2, confidence_level=0, compat=compat
    ).compute(ori, pd.DataFrame(syn, columns=["c0", "c1"]), ori)
    assert out.breakdown["attack_rate"] == {"value": expected, "error": 0.0}
    assert out.breakdown["control_rate"] == {"value": expected, "error": 0.0}
    if (
        expected == 1.0
    ):  # a control attack that always succeeds leaves no room for a residual
        assert out.score is None
        assert out.ci is None
        assert any("succeeded every time" in w for w in out.warnings)


@pytest.mark.parametrize("secret", ["group", "secret", "amount"])
def test_copy_of_real_leaks_every_secret(secret: str) -> None:
    real = people(60, 1)
    out = InferenceRisk(secret=secret, aux_cols=["x", "y"], confidence_level=0).compute(
        real, real, real
    )
    assert out.breakdown["attack_rate"] == {"value": 1.0, "error": 0.0}


def test_copy_of_real_gives_high_risk_and_independent_data_none() -> None:
    real, hold = people(500, 2), people(500, 3)
    leaky = InferenceRisk(secret="secret", aux_cols=["x", "y", "group"]).compute(
        real, real.copy(), hold
    )
    assert leaky.score is not None
    assert leaky.score > 0.8
    safe = InferenceRisk(secret="secret", aux_cols=["x", "y", "group"]).compute(
        real, people(500, 4), hold
    )
    assert safe.ci is not None
    assert safe.ci[0] == 0.0


def test_baseline_is_aligned_by_position_but_collapses_in_anonymeter_11() -> None:
    real, syn, hold = people(2000, 5), people(2000, 6), people(500, 7)
    fixed = InferenceRisk(secret="secret", aux_cols=["x"]).compute(real, syn, hold)
    buggy = InferenceRisk(
        secret="secret", aux_cols=["x"], compat="anonymeter-1.1"
    ).compute(real, syn, hold)
    old = InferenceRisk(
        secret="secret", aux_cols=["x"], compat="anonymeter-1.0"
    ).compute(real, syn, hold)
    assert fixed.breakdown["baseline_rate"]["value"] == pytest.approx(0.5, abs=0.06)  # type: ignore[index]
    assert old.breakdown["baseline_rate"]["value"] == pytest.approx(0.5, abs=0.06)  # type: ignore[index]
    # 1.1 re-aligns the guesses by label: only a quarter of the 500 targets get one
    assert buggy.breakdown["baseline_rate"]["value"] == pytest.approx(0.125, abs=0.05)  # type: ignore[index]
    assert buggy.breakdown["n_attacks"]["baseline"] == 500  # type: ignore[index]


def test_regression_follows_the_column_kind_unless_compat() -> None:
    real, syn, hold = people(300, 8), people(300, 9), people(300, 10)
    tables = prepare_tables(real, syn, hold)
    rng = np.random.default_rng(0)
    assert inference_attack(tables, secret="amount", aux_cols=["x"], rng=rng).regression
    assert not inference_attack(
        tables, secret="amount", aux_cols=["x"], compat="anonymeter-1.1", rng=rng
    ).regression
    assert inference_attack(
        tables, secret="amount", aux_cols=["x"], compat="anonymeter-1.0", rng=rng
    ).regression
    assert not inference_attack(
        tables, secret="secret", aux_cols=["x"], rng=rng
    ).regression
    exact = InferenceRisk(secret="amount", aux_cols=["x"], regression=False).compute(
        real, syn, hold
    )
    tolerant = InferenceRisk(secret="amount", aux_cols=["x"]).compute(real, syn, hold)
    assert exact.breakdown["regression"] is False
    assert tolerant.breakdown["regression"] is True
    assert (
        tolerant.breakdown["n_success"]["main"] > exact.breakdown["n_success"]["main"]
    )  # type: ignore[index]


def test_datetime_secret_closeness_uses_the_range() -> None:
    g = np.random.default_rng(11)
    frame = pd.DataFrame(
        {
            "x": g.normal(0, 1, 200),
            "when": pd.Timestamp("2000-01-01")
            + pd.to_timedelta(g.integers(0, 3650, 200), unit="D"),
        }
    )
    out = InferenceRisk(secret="when", confidence_level=0).compute(frame, frame, frame)
    assert out.breakdown["regression"] is True
    assert out.breakdown["attack_rate"]["value"] == 1.0  # type: ignore[index]


def test_groups_per_secret_value() -> None:
    real, syn, hold = people(400, 12), people(400, 13), people(300, 14)
    syn.iloc[:200] = real.iloc[:200].to_numpy()
    tables = prepare_tables(real, syn, hold)
    result = inference_attack(
        tables, secret="group", aux_cols=["x", "y"], rng=np.random.default_rng(1)
    )
    groups = result.groups()
    assert sorted(result.group_labels[v] for v in groups) == ["a", "b", "c"]
    assert sum(g.n_attacks for g in groups.values()) == result.main_success.size
    assert sum(g.n_success for g in groups.values()) == result.main_success.sum()
    assert sum(g.n_control_attacks for g in groups.values()) == 300  # type: ignore[misc]
    buggy = inference_attack(
        tables,
        secret="group",
        aux_cols=["x", "y"],
        n_attacks=100,
        compat="anonymeter-1.1",
        rng=np.random.default_rng(1),
    )
    sizes = hold["group"].value_counts()
    for value, est in buggy.groups().items():
        assert (
            est.n_control_attacks == sizes[buggy.group_labels[value]]
        )  # every holdout row of the group
    out = InferenceRisk(secret="group", aux_cols=["x", "y"]).compute(real, syn, hold)
    assert sorted(out.breakdown["groups"]) == ["a", "b", "c"]  # type: ignore[arg-type]
    assert (
        InferenceRisk(secret="x", aux_cols=["y"])
        .compute(real, syn, hold)
        .breakdown["groups"]
        is None
    )


def test_aux_cols_default_to_every_other_column_and_results_repeat() -> None:
    real, syn, hold = people(200, 15), people(200, 16), people(100, 17)
    out = InferenceRisk(secret="secret").compute(real, syn, hold, seed=3)
    assert out.params["aux_cols"] == ["x", "y", "group", "amount"]
    assert out.breakdown["aux_cols"] == ["x", "y", "group", "amount"]
    assert out.metric == "inference"
    assert out.score == out.breakdown["risk"]
    assert out.breakdown["petsard"]["risk_CI_top"] == out.ci[1]  # type: ignore[index]
    assert (
        InferenceRisk(secret="secret").compute(real, syn, hold, seed=3).breakdown
        == out.breakdown
    )
    record = out.records["inferred_real"]
    assert record.values.sum() == out.breakdown["n_success"]["main"]  # type: ignore[index]


def test_runs_by_default_on_every_column() -> None:
    real, hold = people(50, 18), people(50, 19)
    report = evaluate(
        real, real, hold, metrics={"inference": {"secret": "secret", "n_attacks": 30}}
    )
    assert report["inference"].breakdown["n_attacks"]["main"] == 30  # type: ignore[index]
    assert InferenceRisk.runs_by_default
    every = evaluate(real, real, hold, metrics={"inference": {"n_attacks": 30}})[
        "inference"
    ]
    columns = every.breakdown["columns"]
    assert set(columns) == set(real.columns)  # type: ignore[arg-type]
    assert every.breakdown["secret"] == every.breakdown["worst_column"]
    assert every.params["secret"] is None


# --- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"secret": ["a", "b"]}, "`secret` must be a single column name"),
        (
            {"secret": "s", "aux_cols": ["x", "s"]},
            r"`secret` \('s'\) must not be one of `aux_cols`",
        ),
        ({"secret": "s", "aux_cols": []}, "`aux_cols` must name at least one column"),
        ({"secret": "s", "aux_cols": [1]}, "`aux_cols` must be a list of column names"),
        ({"secret": "s", "n_attacks": 0}, "`n_attacks` must be an integer >= 1"),
        ({"secret": "s", "closeness": 0}, "`closeness` must be a positive number"),
        (
            {"secret": "s", "regression": "yes"},
            "`regression` must be True, False or None",
        ),
        ({"secret": "s", "compat": "1.0"}, "`compat` must be one of"),
    ],
)
def test_bad_parameters(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        InferenceRisk(**kwargs)


def test_bad_columns() -> None:
    real = people(30, 20)
    with pytest.raises(
        ParameterError,
        match=r"`secret` names columns that are not in the tables: \['nope'\]",
    ):
        InferenceRisk(secret="nope").compute(real, real)
    with pytest.raises(
        ParameterError,
        match=r"`aux_cols` names columns that are not in the tables: \['nope'\]",
    ):
        InferenceRisk(secret="secret", aux_cols=["x", "nope"]).compute(real, real)
    with pytest.raises(
        ParameterError, match="`regression=True` needs a numerical or datetime `secret`"
    ):
        InferenceRisk(secret="secret", regression=True).compute(real, real)
    only = real[["secret"]]
    with pytest.raises(ParameterError, match="`aux_cols` would be empty"):
        InferenceRisk(secret="secret").compute(only, only)
    with_id = real.assign(person_id=[f"p{i}" for i in range(30)])
    with pytest.raises(
        ParameterError, match=r"`secret` names columns excluded from the metrics"
    ):
        InferenceRisk(secret="person_id").compute(with_id, with_id)


def test_n_attacks_capped_with_warnings_and_small_tables() -> None:
    real, syn, hold = people(80, 21), people(60, 22), people(40, 23)
    out = InferenceRisk(secret="secret", n_attacks=1000).compute(real, syn, hold)
    assert out.breakdown["n_attacks"] == {"main": 80, "baseline": 60, "control": 40}
    assert any("larger than the holdout table (40 rows)" in w for w in out.warnings)
    old = InferenceRisk(
        secret="secret", n_attacks=1000, compat="anonymeter-1.0"
    ).compute(real, syn, hold)
    assert old.breakdown["n_attacks"] == {"main": 80, "baseline": 60, "control": 40}
    assert any("larger than the synthetic table (60 rows)" in w for w in old.warnings)
    with pytest.raises(SchemaMismatchError):
        InferenceRisk(secret="secret").compute(real, syn, hold.drop(columns=["y"]))
    one = people(1, 24)
    out = InferenceRisk(secret="secret").compute(one, one, one)
    assert out.breakdown["n_attacks"] == {"main": 1, "baseline": 1, "control": 1}


# --- the holdout test of a named secret ---------------------------------------------


def test_a_named_secret_gates_like_every_column() -> None:
    # the demo's inference (secret income, 6 known columns) on a small demo population
    from synthrisk.datasets import load_demo
    from synthrisk.datasets.demo import demo_metrics

    demo = load_demo(n_rows=2000, seed=0)
    params = demo_metrics()["inference"]
    levels = {}
    for name, syn in demo.synthetic.items():
        report = evaluate(
            demo.real,
            syn,
            demo.holdout,
            metadata=demo.metadata,
            metrics={"inference": params},
            seed=0,
        )
        result = report["inference"]
        test = result.breakdown["holdout_test"]
        # the every-column default's test: training people's success minus holdout
        # people's, on the attacked targets of each side
        n_success = result.breakdown["n_success"]
        n_attacks = result.breakdown["n_attacks"]
        assert test["effect"] == pytest.approx(  # type: ignore[index]
            n_success["main"] / n_attacks["main"]  # type: ignore[index, operator]
            - n_success["control"] / n_attacks["control"]  # type: ignore[index, operator]
        )
        assert test["statistic"] == (  # type: ignore[index]
            "share of training people whose 'income' was guessed minus the same for holdout people"
        )
        v = report.verdict["inference"]  # type: ignore[index]
        assert v.gating
        assert v.tolerance == 0.09
        levels[name] = v.level
    assert levels == {
        "leaky": "fail",
        "partial": "fail",
        "isolated_copies": "pass",  # a handful of copies moves no average
        "fresh": "pass",
        "independent": "pass",
    }


def test_several_named_secrets_each_gate_and_share_holms_correction() -> None:
    from synthrisk import EvaluationReport
    from synthrisk.verdict import judge

    real, hold = people(400, 30), people(400, 31)
    leaky = real.copy()
    results = tuple(
        InferenceRisk(secret=secret, aux_cols=["x", "y"]).compute(
            real, leaky, hold, seed=0
        )
        for secret in ("secret", "group")
    )
    p = [float(r.breakdown["holdout_test"]["p_value"]) for r in results]  # type: ignore[index]
    verdict = judge(EvaluationReport("0.1.0", 0, {"holdout": {"rows": 400}}, results))
    assert [v.gating for v in verdict.metrics] == [True, True]
    assert [v.level for v in verdict.metrics] == ["fail", "fail"]
    smaller = min(p)
    assert min(v.p_adjusted for v in verdict.metrics) == pytest.approx(  # type: ignore[type-var]
        min(1.0, 2 * smaller)
    )
    # without a holdout there is no control attack and no test
    alone = InferenceRisk(secret="secret").compute(real, leaky)
    assert "holdout_test" not in alone.breakdown


# --- `closeness` (formerly `tolerance`) ------------------------------------------------


def test_tolerance_is_a_deprecated_alias_of_closeness() -> None:
    from synthrisk import SynthriskDeprecationWarning, SynthriskWarning

    with pytest.warns(
        SynthriskDeprecationWarning,
        match=r"the parameter `tolerance` was renamed `closeness`.*removed in synthrisk 0\.2\.0",
    ) as caught:
        old = InferenceRisk(secret="amount", tolerance=0.2)
    assert caught[0].filename == __file__  # points at the caller
    assert issubclass(SynthriskDeprecationWarning, SynthriskWarning)
    assert issubclass(SynthriskDeprecationWarning, FutureWarning)  # shown by default
    assert old.closeness == 0.2
    assert old.params["closeness"] == 0.2
    assert "tolerance" not in old.params
    with pytest.warns(SynthriskDeprecationWarning):
        built = InferenceRisk.from_params({"secret": "amount", "tolerance": 0.2})
    assert built.params == old.params
    with pytest.raises(ParameterError, match="give `closeness` only"):
        InferenceRisk(secret="amount", tolerance=0.2, closeness=0.1)
    real, syn, hold = people(300, 8), people(300, 9), people(300, 10)
    new = evaluate(
        real, syn, hold, metrics={"inference": {"secret": "amount", "closeness": 0.2}}
    )
    with pytest.warns(SynthriskDeprecationWarning):
        renamed = evaluate(
            real,
            syn,
            hold,
            metrics={"inference": {"secret": "amount", "tolerance": 0.2}},
        )
    assert renamed["inference"].breakdown == new["inference"].breakdown
    assert renamed["inference"].params == new["inference"].params
    looser = InferenceRisk(secret="amount", closeness=0.5).compute(real, syn, hold)
    assert (
        looser.breakdown["n_success"]["main"]  # type: ignore[index]
        > new["inference"].breakdown["n_success"]["main"]  # type: ignore[index]
    )


@pytest.mark.parametrize("secret", ["secret", None])
def test_intervals_at_level_0_still_give_a_verdict(secret: str | None) -> None:
    # confidence_level=0 makes every interval the point itself: the verdict's interval
    # then has no width to rescale, and still agrees with the test
    real, hold = people(200, 40), people(200, 41)
    report = evaluate(
        real,
        real.copy(),
        hold,
        metrics={"inference": {"secret": secret, "confidence_level": 0}},
    )
    v = report.verdict["inference"]  # type: ignore[index]
    assert v.level == "fail"
    assert v.ci is not None
    assert v.ci[0] > 0.09
