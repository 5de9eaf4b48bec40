# SPDX-License-Identifier: BSD-3-Clause
"""Shared invariants of every registered metric (scikit-learn's ``test_common`` idea).

A new metric gets these checks by registering itself; one that needs parameters must
add an example to ``EXAMPLE_PARAMS`` (the test below fails until it does).
"""

from __future__ import annotations

import inspect
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import InputError, ParameterError, SynthriskError
from synthrisk.metrics import METRICS, InferenceRisk, Metric, register
from synthrisk.metrics._params import NOT_A_PARAM, Param
from synthrisk.results import MetricResult, ThreatModel, to_jsonable

#: parameters that make each metric runnable on ``_tables()``; metrics that run by
#: default are tested with their defaults (plus the speed-ups listed here)
EXAMPLE_PARAMS: dict[str, dict[str, Any]] = {
    "disclosure_protection": {
        "known_column_names": ["city", "sex"],
        "sensitive_column_names": ["band"],
    },
    "disclosure_protection_estimate": {
        "known_column_names": ["city", "sex"],
        "sensitive_column_names": ["band"],
        "num_rows_subsample": 30,
        "num_iterations": 2,
    },
    "categorical_cap": {"key_fields": ["city", "sex"], "sensitive_fields": ["band"]},
    "categorical_zero_cap": {
        "key_fields": ["city", "sex"],
        "sensitive_fields": ["band"],
    },
    "categorical_generalized_cap": {
        "key_fields": ["city", "sex"],
        "sensitive_fields": ["band"],
    },
    "replicated_uniques": {"keys": ["city", "sex", "band"]},
    "disco": {"keys": ["city", "sex"], "target": "band"},
    "unique_exact_matches": {},
    "apparent_match_distribution": {"quasi_identifiers": ["city", "sex"]},
    "k_anonymity": {"quasi_identifiers": ["city", "sex"], "sensitive": ["band"]},
    "l_diversity": {"quasi_identifiers": ["city", "sex"], "sensitive": ["band"]},
    "t_closeness": {"quasi_identifiers": ["city", "sex"], "sensitive": ["band"]},
    # run with no parameters: the attacker-known columns found by name (age, city, sex)
    "reidentification_risk": {},
    "sdc_risk": {},
    "domias": {"max_fit_rows": 30},
    # the example tables hold 100 people: the most isolated 20 % and 40 % of them
    "vulnerable_people": {"strata": [0.2, 0.4], "max_fit_rows": 30},
    "monte_carlo_membership": {},
    "collision_membership": {},
    "epsilon_identifiability": {},
    "singling_out": {"n_attacks": 20},
    "linkability": {"aux_cols": [["age", "city"], ["sex", "band"]], "n_attacks": 20},
    "inference": {"secret": "band", "n_attacks": 20},
    "new_row_synthesis": {},
    "categorical_knn": {"key_fields": ["city", "sex"], "sensitive_fields": ["band"]},
    "categorical_nb": {"key_fields": ["city", "sex"], "sensitive_fields": ["band"]},
    "categorical_rf": {"key_fields": ["city", "sex"], "sensitive_fields": ["band"]},
    "categorical_svm": {"key_fields": ["city", "sex"], "sensitive_fields": ["band"]},
    "categorical_ensemble": {
        "key_fields": ["city", "sex"],
        "sensitive_fields": ["band"],
    },
    "numerical_lr": {"key_fields": ["age"], "sensitive_fields": ["income"]},
    "numerical_mlp": {"key_fields": ["age"], "sensitive_fields": ["income"]},
    "numerical_svr": {"key_fields": ["age"], "sensitive_fields": ["income"]},
    "numerical_radius_nearest_neighbor": {
        "key_fields": ["age"],
        "sensitive_fields": ["income"],
    },
    "membership_classification": {"n_repeats": 2},
    "dcr_share": {"n_permutations": 19},
}

IDS = sorted(METRICS)


def _table(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": rng.lognormal(10, 0.5, n).round(0),
            "city": rng.choice(["Ghent", "Lyon", "Porto"], n),
            "sex": rng.choice(["F", "M"], n),
            "band": rng.choice(["low", "mid", "high"], n),
        }
    )


def _tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tiny real, synthetic and holdout tables (a few synthetic rows copy real ones)."""
    rng = np.random.default_rng(7)
    real, holdout = _table(rng, 60), _table(rng, 40)
    synthetic = pd.concat([_table(rng, 45), real.iloc[:5]], ignore_index=True)
    return real, synthetic, holdout


def _metric(metric_id: str) -> Metric:
    return METRICS[metric_id].from_params(EXAMPLE_PARAMS.get(metric_id, {}))


def _json(result: MetricResult) -> dict[str, Any]:
    data = result.to_dict(include_records=True)
    data.pop("seconds", None)
    return data


@pytest.mark.parametrize("metric_id", IDS)
def test_metric_has_an_example(metric_id: str) -> None:
    cls = METRICS[metric_id]
    assert cls.id == metric_id
    assert cls.attack, f"{metric_id}: describe the attack in one sentence"
    assert cls.runs_by_default or metric_id in EXAMPLE_PARAMS, (
        f"{metric_id} needs parameters: add an example to EXAMPLE_PARAMS"
    )


@pytest.mark.parametrize("metric_id", IDS)
def test_metric_declares_its_threat_model(metric_id: str) -> None:
    cls = METRICS[metric_id]
    declared = vars(cls).get("threat_model")
    assert isinstance(declared, ThreatModel), (
        f"{metric_id}: declare `threat_model = ThreatModel(...)` on the class"
    )
    for text in (declared.attacker_holds, declared.target, declared.meaning):
        assert text.strip()
        assert "\n" not in text
        assert len(text) <= 300, f"{metric_id}: one line, please"
    assert declared.columns is None  # the columns belong to a run
    # the parameters it reads the columns from exist (``columns`` of the membership
    # attacks is recorded by the run, see the round-trip test)
    for name in (*declared.known, *declared.guessed, *declared.compared):
        assert name in cls.param_names() or name == "columns", (metric_id, name)


def test_registering_a_metric_without_a_threat_model_fails_and_says_how() -> None:
    class NoThreat(Metric):
        id = "no_threat_model_metric"

        def _compute(self, tables: Any, context: Any) -> Any:
            raise AssertionError

    before = dict(METRICS)
    with pytest.raises(
        TypeError,
        match=r"metric 'no_threat_model_metric' \(NoThreat\) declares no threat model\. "
        r"Add the class attribute `threat_model = ThreatModel\(attacker_holds=\.\.\., "
        r"target=\.\.\., meaning=\.\.\.\)`",
    ):
        register(NoThreat)

    class QuietInference(InferenceRisk):
        id = "quiet_inference"

    with pytest.raises(
        TypeError,
        match=r"declares no threat model of its own \(it would inherit InferenceRisk's: "
        r"write `threat_model = InferenceRisk\.threat_model`",
    ):
        register(QuietInference)
    assert before == METRICS


@pytest.mark.parametrize("metric_id", IDS)
def test_unknown_parameter_gets_the_house_message(metric_id: str) -> None:
    with pytest.raises(
        ParameterError,
        match=rf"metric '{metric_id}' has no parameter\(s\) \['no_such_option'\]; "
        r"allowed parameters: \[",
    ):
        METRICS[metric_id].from_params({"no_such_option": 1})


@pytest.mark.parametrize("metric_id", IDS)
def test_same_seed_same_json_and_json_round_trips(metric_id: str) -> None:
    real, synthetic, holdout = _tables()
    first = _metric(metric_id).compute(real, synthetic, holdout, seed=3)
    second = _metric(metric_id).compute(real, synthetic, holdout, seed=3)
    assert json.dumps(_json(first), sort_keys=True) == json.dumps(
        _json(second), sort_keys=True
    )
    text = json.dumps(first.to_dict(include_records=True), allow_nan=False)
    again = MetricResult.from_dict(json.loads(text))
    assert _json(again) == _json(first)
    # the threat model travels with the result, naming the columns the run used
    declared = METRICS[metric_id].threat_model
    assert declared is not None
    threat = _json(first)["threat_model"]
    assert threat["meaning"] == declared.meaning
    assert threat["attacker_holds"] == declared.attacker_holds
    named = [
        first.params.get(name)
        for name in (*declared.known, *declared.guessed, *declared.compared)
    ]
    if any(named) or (declared.unset_means_all and declared.guessed):
        assert threat["columns"], metric_id
    else:
        assert threat["columns"] is None, metric_id
    for value in named:
        for column in value if isinstance(value, list) else [value]:
            if isinstance(column, str):
                assert column in threat["columns"], (metric_id, column)


@pytest.mark.parametrize("metric_id", IDS)
def test_score_in_range_or_none_with_a_reason_inputs_unchanged(metric_id: str) -> None:
    real, synthetic, holdout = _tables()
    copies = [t.copy(deep=True) for t in (real, synthetic, holdout)]
    result = _metric(metric_id).compute(real, synthetic, holdout, seed=0)
    assert result.metric == metric_id
    if result.score is None:
        assert result.warnings, f"{metric_id}: a score of None needs a reason"
    else:
        assert math.isfinite(result.score)
        assert 0.0 <= result.score <= 1.0, (metric_id, result.score)
    if result.ci is not None:
        assert result.ci[0] <= result.ci[1]
    for before, after in zip(copies, (real, synthetic, holdout), strict=True):
        pd.testing.assert_frame_equal(before, after)


@pytest.mark.parametrize("metric_id", IDS)
def test_tiny_tables_without_holdout(metric_id: str) -> None:
    real, synthetic, _ = _tables()
    metric = _metric(metric_id)
    if metric.requires_holdout:
        with pytest.raises(InputError, match="holdout"):
            metric.compute(real, synthetic)
        return
    try:
        result = metric.compute(real, synthetic, seed=0)
    except SynthriskError as exc:  # may not apply: then it must say why
        reason = str(exc)
    else:
        reason = "ran"
        assert result.score is None or 0.0 <= result.score <= 1.0
    assert reason


def test_registry_follows_each_class_report_order() -> None:
    orders = [cls.report_order for cls in METRICS.values()]
    assert orders == sorted(orders)


# ------------------------------------------------------------ declared parameters


def _declared(cls: type[Metric]) -> dict[str, Param[Any]]:
    """The ``Param`` class attributes over the MRO, base first (an independent oracle)."""
    out: dict[str, Param[Any]] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Param):
                out[name] = value
            elif value is NOT_A_PARAM:
                out.pop(name)
    return out


#: every (metric, declared parameter) pair
PAIRS = [
    (metric_id, name) for metric_id in IDS for name in _declared(METRICS[metric_id])
]


class _Odd:
    """A value of no type any parameter accepts."""

    def __repr__(self) -> str:
        return "<odd>"


@pytest.mark.parametrize("metric_id", IDS)
def test_param_names_are_the_declarations_and_the_signature(metric_id: str) -> None:
    cls = METRICS[metric_id]
    declared = _declared(cls)
    assert cls.param_names() == list(declared)
    signature = inspect.signature(cls)
    assert list(signature.parameters) == list(declared)
    for name, parameter in signature.parameters.items():
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY
        assert parameter.default == declared[name].default
        assert declared[name].doc, f"{metric_id}.{name}: give the parameter a doc line"


@pytest.mark.parametrize("metric_id", IDS)
def test_class_body_annotations_are_the_parameters(metric_id: str) -> None:
    """Type checkers read a metric's annotated class attributes as its ``__init__``.

    ``Metric`` is a ``dataclass_transform`` (PEP 681): an unannotated ``Param`` is not
    checked (mypy refuses it as an argument), and an annotated attribute that is not a
    ``Param`` would be an argument that the real ``__init__`` refuses.
    """
    cls = METRICS[metric_id]
    bodies = cls.__mro__[: cls.__mro__.index(Metric)]
    annotated: set[str] = set()
    for klass in bodies:
        for name, annotation in inspect.get_annotations(klass).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            assert isinstance(vars(klass).get(name), Param), (
                f"{klass.__name__}.{name}: an annotation in a metric's class body declares "
                "a parameter; annotate a derived attribute where _check_params sets it "
                "(self.x: T = ...), or as ClassVar"
            )
            assert str(annotation).startswith("Param["), (klass.__name__, name)
            annotated.add(name)
    missing = sorted(set(_declared(cls)) - annotated)
    assert not missing, (
        f"{cls.__name__}: annotate the parameters {missing} "
        "(`name: Param[T] = Param(...)`) so that type checkers check their arguments"
    )


@pytest.mark.parametrize("metric_id", IDS)
def test_defaults_build_and_params_follow_the_declarations(metric_id: str) -> None:
    cls = METRICS[metric_id]
    if cls.runs_by_default:  # the default run builds it with its defaults
        assert cls().params == cls.from_params({}).params
    metric = _metric(metric_id)
    reported = [n for n, p in _declared(cls).items() if p.reported]
    assert list(metric.params) == reported
    for name in reported:  # the typed attribute is what the JSON reports
        assert to_jsonable(getattr(metric, name)) == metric.params[name]


@pytest.mark.parametrize("metric_id", IDS)
def test_repr_round_trips_through_from_params(metric_id: str) -> None:
    metric = _metric(metric_id)
    again = METRICS[metric_id].from_params(metric.params)
    assert again.params == metric.params
    assert repr(again) == repr(metric)
    assert json.loads(json.dumps(again.params, allow_nan=False)) == metric.params


@pytest.mark.parametrize(("metric_id", "name"), PAIRS)
def test_wrong_typed_value_names_the_parameter(metric_id: str, name: str) -> None:
    params = {**EXAMPLE_PARAMS.get(metric_id, {}), name: _Odd()}
    with pytest.raises(ParameterError, match=rf"`{name}`[^;]*; got <odd>"):
        METRICS[metric_id].from_params(params)
