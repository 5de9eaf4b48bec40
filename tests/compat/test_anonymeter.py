# SPDX-License-Identifier: BSD-3-Clause
"""The Anonymeter drop-in layer.

Expected values are ported from Anonymeter's tests (The Clear BSD License, Copyright
(c) 2022 Anonos IP LLC).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.compat.anonymeter import (
    EvaluationResults,
    InferenceEvaluator,
    LinkabilityEvaluator,
    SinglingOutEvaluator,
    SuccessRate,
    evaluation_results,
)
from synthrisk.exceptions import UnreliableEstimateWarning

ORI = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
SYN = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})


def census(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": g.integers(18, 90, n),
            "hours": g.integers(10, 60, n),
            "job": g.choice([f"j{i}" for i in range(10)], n),
            "sex": g.choice(["F", "M"], n),
            "income": g.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]),
        }
    )


@pytest.mark.parametrize("n_attacks", [4, None])
@pytest.mark.parametrize(
    ("k", "level", "risk", "ci"),
    [
        (1, 0, 0.25, (0.25, 0.25)),
        (2, 0, 1, (1.0, 1.0)),
        (1, 0.95, 0.3725, (0.045587, 0.699358)),
        (2, 0.95, 0.7551, (0.5102, 1.0)),
    ],
)
def test_linkability_evaluator(
    n_attacks: int | None, k: int, level: float, risk: float, ci: tuple
) -> None:
    evaluator = LinkabilityEvaluator(
        ori=ORI,
        syn=SYN,
        n_attacks=n_attacks,
        n_neighbors=k,
        aux_cols=(["col0"], ["col1"]),
    )
    evaluator.evaluate(n_jobs=1)
    value, got_ci = evaluator.risk(confidence_level=level)
    assert value == pytest.approx(risk, abs=1e-4)
    assert got_ci == pytest.approx(ci, abs=1e-4)
    wide = LinkabilityEvaluator(
        ori=ORI,
        syn=SYN,
        n_attacks=n_attacks,
        n_neighbors=4,
        aux_cols=(["col0"], ["col1"]),
    ).evaluate()
    assert wide.risk(confidence_level=level, n_neighbors=k).value == pytest.approx(
        risk, abs=1e-4
    )


@pytest.mark.parametrize(
    ("k", "fails"), [(1, False), (4, False), (5, True), (45, True)]
)
def test_linkability_more_neighbors_than_computed(k: int, fails: bool) -> None:
    evaluator = LinkabilityEvaluator(
        ori=ORI, syn=SYN, n_attacks=4, n_neighbors=4, aux_cols=(["col0"], ["col1"])
    ).evaluate()
    if fails:
        with pytest.raises(ValueError, match="`n_neighbors` must be at most"):
            evaluator.risk(n_neighbors=k)
    else:
        evaluator.risk(n_neighbors=k)


def test_not_evaluated_raises_runtime_error() -> None:
    with pytest.raises(RuntimeError, match="wasn't evaluated yet"):
        LinkabilityEvaluator(ori=ORI, syn=SYN, aux_cols=(["col0"], ["col1"])).risk()
    with pytest.raises(RuntimeError, match="wasn't evaluated yet"):
        SinglingOutEvaluator(ori=ORI, syn=SYN).risk()
    with pytest.raises(RuntimeError, match="wasn't evaluated yet"):
        InferenceEvaluator(ori=ORI, syn=SYN, aux_cols=["col0"], secret="col1").results()


@pytest.mark.filterwarnings(
    "ignore:the attack succeeded no more often:synthrisk.exceptions.UnreliableEstimateWarning"
)
def test_linkability_caps_n_attacks_to_the_control_set() -> None:
    ori, syn, control = census(200, 1), census(200, 2), census(50, 3)
    ev = LinkabilityEvaluator(
        ori=ori,
        syn=syn,
        aux_cols=(["age", "job"], ["hours", "sex"]),
        n_attacks=100,
        control=control,
    )
    with pytest.warns(UnreliableEstimateWarning, match="larger than the holdout table"):
        ev.evaluate()
    results = ev.results()
    assert (results.n_attacks_ori, results.n_attacks_control) == (100, 50)


@pytest.mark.parametrize(
    ("syn", "expected"),
    [
        ([["a", "b"], ["c", "d"]], 1.0),
        ([["a", "b"], ["c", "e"]], 0.5),
        ([["a", "h"], ["c", "g"]], 0.0),
    ],
)
def test_inference_evaluator_rates(syn: list, expected: float) -> None:
    ori = pd.DataFrame([["a", "b"], ["c", "d"]], columns=["c0", "c1"])
    ev = InferenceEvaluator(
        ori=ori,
        syn=pd.DataFrame(syn, columns=["c0", "c1"]),
        control=ori,
        aux_cols=["c0"],
        secret="c1",
        n_attacks=2,
    )
    ev.evaluate(n_jobs=1)
    with pytest.warns(
        UnreliableEstimateWarning
    ):  # 1.1's collapsed baseline can tie the attack on 2 rows
        results = ev.results(confidence_level=0)
    assert results.attack_rate == (expected, 0)
    assert results.control_rate == (expected, 0)


def test_inference_leaks_and_groups() -> None:
    ori = census(300, 4).drop_duplicates(subset=["age", "hours", "job"])
    ev = InferenceEvaluator(
        ori=ori,
        syn=ori,
        control=ori,
        aux_cols=["age", "hours", "job"],
        secret="income",
        n_attacks=len(ori),
    )
    ev.evaluate(n_jobs=1)
    with pytest.warns(UnreliableEstimateWarning):  # attack and control are both perfect
        results = ev.results(confidence_level=0)
    assert results.attack_rate == (1, 0)
    assert results.control_rate == (1, 0)
    groups = ev.risk_for_groups(confidence_level=0)
    assert sorted(groups) == ["<=50K", ">50K"]
    for result in groups.values():
        assert isinstance(result, EvaluationResults)
        assert result.attack_rate == (1, 0)
        assert result.control_rate == (1, 0)
    assert sum(g.n_attacks_ori for g in groups.values()) == len(ori)


@pytest.mark.filterwarnings(
    "ignore:the attack succeeded no more often:synthrisk.exceptions.UnreliableEstimateWarning"
)
def test_inference_secret_checks_and_custom_model() -> None:
    ori, syn, control = census(300, 5), census(300, 6), census(200, 7)
    with pytest.raises(ValueError, match="secret must be a single column name"):
        InferenceEvaluator(ori=ori, syn=syn, aux_cols=["age"], secret=["income", "sex"])  # type: ignore[arg-type]
    with pytest.raises(
        ValueError, match="secret column 'salary' not found in ori dataframe"
    ):
        InferenceEvaluator(ori=ori, syn=syn, aux_cols=["age"], secret="salary")

    class AlwaysRich:
        def predict(self, x: pd.DataFrame) -> pd.Series:
            return pd.Series([">50K"] * len(x), index=x.index)

    ev = InferenceEvaluator(
        ori=ori,
        syn=syn,
        control=control,
        aux_cols=["age"],
        secret="income",
        n_attacks=200,
        inference_model=AlwaysRich(),
        seed=0,
    )
    ev.evaluate()
    results = ev.results(confidence_level=0)
    assert results.n_success == (ori.loc[ev.attack.targets, "income"] == ">50K").sum()
    assert results.control_rate is not None


def test_inference_regression_default_is_exact_in_11_and_automatic_in_10() -> None:
    ori, syn = census(200, 8), census(200, 9)
    v11 = InferenceEvaluator(
        ori=ori, syn=syn, aux_cols=["job"], secret="age", n_attacks=100, seed=1
    ).evaluate()
    assert not v11.attack.regression
    v10 = InferenceEvaluator(
        ori=ori,
        syn=syn,
        aux_cols=["job"],
        secret="age",
        n_attacks=100,
        seed=1,
        regression=None,
        compat="anonymeter-1.0",
    ).evaluate()
    assert v10.attack.regression


def test_singling_out_evaluator() -> None:
    ori, syn, control = census(400, 10), census(400, 11), census(300, 12)
    syn.iloc[:200] = ori.iloc[:200].to_numpy()
    ev = SinglingOutEvaluator(
        ori=ori, syn=syn, control=control, n_attacks=100, seed=3
    ).evaluate(mode="multivariate")
    queries = ev.queries(as_strings=True)
    assert all(isinstance(q, str) for q in queries)
    results = ev.results()
    assert results.n_success == len(queries)
    assert results.n_attacks_ori == 100
    assert ev.attack.control_correction == pytest.approx(ev.attack.control_correction)
    risk = ev.risk()
    assert 0 <= risk.ci[0] <= risk.value <= risk.ci[1] <= 1
    again = SinglingOutEvaluator(
        ori=ori, syn=syn, control=control, n_attacks=100, seed=3
    ).evaluate()
    assert again.queries(as_strings=True) == queries
    assert ev.risk(baseline=True) == results.risk(baseline=True)
    assert len(ev.queries(baseline=True)) == results.n_baseline
    with pytest.raises(ValueError, match="mode must be either"):
        ev.evaluate(mode="bivariate")


@pytest.mark.filterwarnings(
    "ignore:the attack succeeded no more often:synthrisk.exceptions.UnreliableEstimateWarning"
)
def test_singling_out_evaluator_univariate_warns_when_short() -> None:
    df = pd.DataFrame({"col1": ["a", "b", "c", "d"], "col2": [2, 1, 3, None]})
    ev = SinglingOutEvaluator(ori=df, syn=df, n_attacks=20, seed=0)
    with pytest.warns(UnreliableEstimateWarning, match="only 10 of the requested 20"):
        ev.evaluate(mode="univariate")
    assert sorted(ev.queries(as_strings=True)) == sorted(
        [f"col1 == '{v}'" for v in "abcd"]
        + [
            "col2 == 1",
            "col2 == 2",
            "col2 == 3",
            "col2 <= 1",
            "col2 >= 3",
            "col2 IS NULL",
        ]
    )
    assert ev.results().n_attacks_ori == 20  # Anonymeter's denominator


def test_evaluation_results_confidence() -> None:
    results = evaluation_results(
        n_attacks=100, n_success=100, n_baseline=0, confidence_level=0.95
    )
    assert results.attack_rate == SuccessRate(
        value=0.9815032508965071, error=0.01849674910349284
    )
    assert results.baseline_rate == SuccessRate(
        value=0.01849674910349284, error=0.01849674910349284
    )
    results = evaluation_results(
        n_attacks=100, n_success=100, n_baseline=0, confidence_level=0.68
    )
    assert results.attack_rate == SuccessRate(
        value=0.9951036894831882, error=0.004896310516811869
    )
    assert results.control_rate is None
    assert results.n_attacks_control == -1
    simple = evaluation_results(
        n_attacks=(111, 100, 50),
        n_success=84,
        n_baseline=42,
        n_control=10,
        confidence_level=0,
    )
    assert simple.attack_rate.value == 84 / 111
    assert simple.risk().value == pytest.approx((84 / 111 - 0.2) / 0.8)


def test_evaluation_results_warns_baseline() -> None:
    with pytest.warns(
        UserWarning, match="no more often than the random-guessing baseline"
    ):
        evaluation_results(n_attacks=100, n_success=49, n_baseline=50)


def test_evaluation_results_takes_anonymeter_arguments() -> None:
    from synthrisk.compat.anonymeter import EvaluationResults

    results = EvaluationResults(
        n_attacks=100,
        n_success=23,
        n_baseline=11,
        n_control=None,
        confidence_level=0.95,
    )
    assert results.attack_rate == SuccessRate(
        value=0.23998824451588613, error=0.08155558571285167
    )
    assert results.risk(baseline=True) == results.baseline_rate.to_risk()
    with pytest.warns(UserWarning, match="control attack succeeded every time"):
        EvaluationResults(
            n_attacks=100, n_success=49, n_baseline=0, n_control=100, confidence_level=0
        )
    with pytest.raises(ValueError, match="confidence"):
        EvaluationResults(
            n_attacks=100, n_success=49, n_baseline=0, confidence_level=1.2
        )
    with pytest.raises(ValueError, match="tuple of three"):
        EvaluationResults(n_attacks=(1, 2), n_success=1, n_baseline=0)  # type: ignore[arg-type]


def test_singling_out_queries_are_polars_expressions() -> None:
    pl = pytest.importorskip("polars")
    ori, syn = census(300, 10), census(300, 11)
    syn.iloc[:150] = ori.iloc[:150].to_numpy()
    ev = SinglingOutEvaluator(ori=ori, syn=syn, n_attacks=50, seed=3).evaluate()
    expressions = ev.queries()
    assert expressions
    assert all(isinstance(q, pl.Expr) for q in expressions)
    for q in expressions:
        assert len(ev._syn.filter(q)) >= 1
        assert len(ev._ori.filter(q)) == 1


def test_empty_tables_fail_at_risk_not_construction() -> None:
    ev = SinglingOutEvaluator(ori=pd.DataFrame(), syn=pd.DataFrame())
    with pytest.raises(RuntimeError, match="evaluate"):
        ev.risk()


def test_sklearn_inference_predictor() -> None:
    pytest.importorskip("sklearn")
    from sklearn.tree import DecisionTreeClassifier

    from synthrisk.compat.anonymeter import SklearnInferencePredictor

    x = pd.DataFrame({"a": [0, 1, 0, 1]}, index=[5, 6, 7, 8])
    model = DecisionTreeClassifier(random_state=0).fit(x, ["u", "v", "u", "v"])
    guesses = SklearnInferencePredictor(model).predict(x)
    assert list(guesses.index) == [5, 6, 7, 8]
    assert list(guesses) == ["u", "v", "u", "v"]
    with pytest.raises(ValueError, match="classifier or regressor"):
        SklearnInferencePredictor(object())


def test_evaluate_inference_guesses_and_probability_integral() -> None:
    from scipy import integrate

    from synthrisk.compat.anonymeter import (
        evaluate_inference_guesses,
        singling_out_probability_integral,
    )

    guesses = pd.Series(["a", None, "b", "c"])
    secrets = pd.Series(["a", None, "c", None])
    assert evaluate_inference_guesses(guesses, secrets, regression=False).tolist() == [
        True,
        True,
        False,
        False,
    ]
    g, s = pd.Series([-5.0, 1.0, 100.0]), pd.Series([3.0, 1.04, 110.0])
    assert evaluate_inference_guesses(g, s, regression=True).tolist() == [
        True,
        True,
        False,
    ]
    with pytest.raises(RuntimeError, match="indices"):
        evaluate_inference_guesses(g, s.set_axis([5, 6, 7]), regression=True)
    expected, _ = integrate.quad(lambda w: 50 * w * (1 - w) ** 49, 0.001, 0.2)
    assert singling_out_probability_integral(50, 0.001, 0.2) == pytest.approx(expected)
    with pytest.raises(ValueError, match="w_max"):
        singling_out_probability_integral(50, 0.3, 0.2)
