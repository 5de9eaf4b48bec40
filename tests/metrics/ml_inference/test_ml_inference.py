# SPDX-License-Identifier: BSD-3-Clause
"""SDMetrics' inference metrics and NewRowSynthesis: goldens, holdout control, every-column mode."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import get_metric
from synthrisk.metrics.ml_inference import (
    CategoricalEnsemble,
    CategoricalKNN,
    CategoricalNB,
    NewRowSynthesis,
    NumericalLR,
    NumericalRadiusNearestNeighbor,
    copied_rows,
)
from synthrisk.metrics.ml_inference._cdf import fit_cdf

DATA = Path(__file__).parents[1] / "data"
GOLDENS = json.loads((DATA / "ml_inference_goldens.json").read_text())
CATEGORICAL_IDS = {
    "knn": "categorical_knn",
    "nb": "categorical_nb",
    "svm": "categorical_svm",
    "rf": "categorical_rf",
    "ensemble": "categorical_ensemble",
}
NUMERICAL_IDS = {
    "lr": "numerical_lr",
    "svr": "numerical_svr",
    "radius_nearest_neighbor": "numerical_radius_nearest_neighbor",
    "mlp": "numerical_mlp",
}


#: columns missing in every real row: synthrisk's metrics refuse them (the drop-in scores them)
ALL_MISSING_CASES = ("all_missing_key", "all_missing_sensitive")


def _read_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    return (
        pd.read_csv(DATA / "ml_inference_real.csv"),
        pd.read_csv(DATA / "ml_inference_synthetic.csv"),
    )


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The golden tables without their column missing in every row (refused here)."""
    real, synthetic = _read_tables()
    return real.drop(columns="empty"), synthetic.drop(columns="empty")


def _params(model: str, spec: dict, mode: str) -> dict:
    params = {
        "key_fields": spec["key"],
        "sensitive_fields": spec["sensitive"],
        "mode": mode,
    }
    if model == "ensemble":
        params["attackers"] = ["nb", "knn", "svm"]
    return params


def _score(model_id: str, tables, spec: dict, mode: str, **extra) -> float:
    """The metric's score on the case's columns (``seed=0`` unless given)."""
    model = next(
        k for k, v in {**CATEGORICAL_IDS, **NUMERICAL_IDS}.items() if v == model_id
    )
    columns = [*spec["key"], *spec["sensitive"]]
    seed = extra.pop("seed", 0)
    metric = get_metric(model_id)(**_params(model, spec, mode), **extra)
    real, synthetic = (t[columns] for t in tables)
    # the identifier is a key in one case: SDMetrics reads text as categories
    metadata = {"columns": {c: {"kind": "categorical"} for c in columns if c == "uid"}}
    return metric.compute(real, synthetic, metadata=metadata, seed=seed).score


def assert_matches(got: float, expected: dict) -> None:
    """Equal to 1e-9 where SDMetrics is deterministic; where it is random (``values``, one
    per ``np.random.seed(s)``, s = 0, 1, ...), equal to its seed-0 value (synthrisk's
    ``seed=0`` draws the same stream) and within its seed spread."""
    if "values" in expected:
        values = expected["values"]
        assert got == pytest.approx(values[0], rel=1e-9, abs=1e-9)
        assert min(values) - 1e-9 <= got <= max(values) + 1e-9
    else:
        assert got == pytest.approx(expected["value"], rel=1e-9, abs=1e-9)


def _cases(kind: str, skip: tuple[str, ...] = ()):
    for case, spec in GOLDENS[kind].items():
        if case in skip:
            continue
        for model in spec["scores"]:
            yield pytest.param(case, model, id=f"{case}-{model}")


@pytest.mark.parametrize(
    ("case", "model"), list(_cases("categorical", skip=ALL_MISSING_CASES))
)
def test_categorical_metrics_match_sdmetrics(
    tables, case, model, sdmetrics_on_this_partition
) -> None:
    spec = GOLDENS["categorical"][case]
    if model in ("knn", "ensemble"):
        # on tied keys SDMetrics' KNN keeps the rows NumPy's partition keeps, which
        # depends on the CPU: compare with the run recorded for this machine's partition
        # (tests/compat/test_sdmetrics_ties.py covers the others and the default's rule)
        if sdmetrics_on_this_partition is None:
            pytest.skip("no SDMetrics run recorded for this machine's NumPy partition")
        expected = {"value": sdmetrics_on_this_partition[f"ml_inference_{case}"][model]}
        got = _score(CATEGORICAL_IDS[model], tables, spec, "sdmetrics")
        assert_matches(got, expected)
        return
    got = _score(CATEGORICAL_IDS[model], tables, spec, "sdmetrics")
    assert_matches(got, spec["scores"][model])
    # synthrisk's default: missing equals missing (SDMetrics on the tables with its
    # placeholder written in), otherwise SDMetrics' number
    expected = spec.get("default_scores", spec["scores"])[model]
    assert_matches(_score(CATEGORICAL_IDS[model], tables, spec, "default"), expected)


@pytest.mark.parametrize("case", ALL_MISSING_CASES)
def test_a_column_missing_in_every_real_row_is_refused(case) -> None:
    spec = GOLDENS["categorical"][case]
    assert spec["scores"]["knn"]["value"] == pytest.approx(  # SDMetrics scores it
        {"all_missing_key": 0.5166666666666666, "all_missing_sensitive": 1.0}[case]
    )
    with pytest.raises(InputError, match="entirely missing in the `real` table"):
        _score("categorical_knn", _read_tables(), spec, "default")


@pytest.mark.parametrize(("case", "model"), list(_cases("numerical")))
def test_numerical_metrics_match_sdmetrics(tables, case, model) -> None:
    spec = GOLDENS["numerical"][case]
    got = _score(NUMERICAL_IDS[model], tables, spec, "sdmetrics")
    assert_matches(got, spec["scores"][model])
    if model != "radius_nearest_neighbor":  # the radius guess is fixed by default
        default = _score(NUMERICAL_IDS[model], tables, spec, "default")
        assert_matches(default, spec["scores"][model])


@pytest.mark.parametrize("model", ["rf", "mlp"])
def test_random_models_reproduce_sdmetrics_seed_by_seed(tables, model) -> None:
    kind, case = (
        ("categorical", "basic") if model == "rf" else ("numerical", "two_keys")
    )
    spec = GOLDENS[kind][case]
    values = spec["scores"][model]["values"]
    model_id = {**CATEGORICAL_IDS, **NUMERICAL_IDS}[model]
    for seed in (1, 7):
        got = _score(model_id, tables, spec, "sdmetrics", seed=seed)
        assert got == pytest.approx(values[seed], rel=1e-9, abs=1e-9)


@pytest.mark.parametrize(
    ("case", "model"),
    [(c, m) for c in GOLDENS["numerical_missing"] for m in ("lr", "svr", "mlp")],
)
def test_numerical_default_scores_the_complete_rows(tables, case, model) -> None:
    spec = GOLDENS["numerical_missing"][case]
    assert spec["scores"][model]["error"] == "ValueError"  # SDMetrics: NaN in the model
    with pytest.raises(InputError, match="missing values"):
        _score(NUMERICAL_IDS[model], tables, spec, "sdmetrics")
    complete = spec["complete_rows"]
    columns = [*spec["key"], *spec["sensitive"]]
    result = get_metric(NUMERICAL_IDS[model])(
        **_params(model, spec, "default")
    ).compute(tables[0][columns], tables[1][columns])
    assert result.breakdown["n_scored"]["real"] == complete["n_real"]
    assert any("not scored" in w for w in result.warnings)
    assert_matches(result.score, complete["scores"][model])


@pytest.mark.parametrize("model", list(GOLDENS["model_kwargs"]))
def test_model_kwargs_reach_the_estimator(tables, model, numpy_partition) -> None:
    entry = GOLDENS["model_kwargs"][model]
    assert entry["sdmetrics"]["error"] == "TypeError"  # SDMetrics' attacker takes none
    if model == "knn" and numpy_partition != GOLDENS["numpy_partition"]:
        pytest.skip(
            "SDMetrics' KNN golden was recorded where NumPy partitions ties otherwise; "
            "tests/compat/test_sdmetrics_ties.py compares with scikit-learn run here"
        )
    spec = GOLDENS[entry["kind"]][entry["case"]]
    model_id = {**CATEGORICAL_IDS, **NUMERICAL_IDS}[model]
    got = _score(
        model_id, tables, spec, "sdmetrics", model_kwargs=entry["model_kwargs"]
    )
    assert_matches(got, entry["value"])


@pytest.mark.parametrize("case", list(GOLDENS["radius_model_kwargs"]))
def test_radius_cutoff_matches_sdmetrics(tables, case) -> None:
    entry = GOLDENS["radius_model_kwargs"][case]
    weights = entry["weight_func_kwargs"] or {}
    cutoff = weights.get("cutoff", 0.1)  # InverseCDFCutoff's default
    got = _score(
        "numerical_radius_nearest_neighbor", tables, entry, "sdmetrics", cutoff=cutoff
    )
    assert_matches(got, entry["value"])
    if (
        case == "cutoff_0.02"
    ):  # real rows without a neighbour: SDMetrics' 0/0 guess of 0
        real, synthetic = (t[entry["key"]].to_numpy(float) for t in tables)
        cdfs = [fit_cdf(synthetic[:, j])[0] for j in range(real.shape[1])]
        u_real, u_syn = (
            np.column_stack([cdf(x[:, j]) for j, cdf in enumerate(cdfs)])
            for x in (real, synthetic)
        )
        dist = ((u_real[:, None, :] - u_syn[None, :, :]) ** 2).sum(axis=2)
        assert ((dist < cutoff**2 * real.shape[1]).sum(axis=1) == 0).any()


def test_sdmetrics_failures_are_clear_errors_and_fixed_by_default(tables) -> None:
    real, synthetic = tables
    failures = GOLDENS["failures"]
    assert failures["numerical_missing_values"]["error"] == "ValueError"
    assert failures["categorical_missing_numbers"]["error"] == "TypeError"
    real, synthetic = real[["x2", "sens"]], synthetic[["x2", "sens"]]
    with pytest.raises(InputError, match="placeholder"):
        CategoricalKNN(
            key_fields=["x2"], sensitive_fields=["sens"], mode="sdmetrics"
        ).compute(real, synthetic)
    score = (
        CategoricalKNN(key_fields=["x2"], sensitive_fields=["sens"])
        .compute(real, synthetic)
        .score
    )
    assert 0 <= score <= 1


def test_missing_sensitive_value_counts_as_guessed_by_default() -> None:
    real = pd.DataFrame({"k": ["a", "a", "b", "b"], "s": [None, None, "x", "x"]})
    synthetic = real.copy()
    fixed = CategoricalNB(key_fields=["k"], sensitive_fields=["s"]).compute(
        real, synthetic
    )
    reference = CategoricalNB(
        key_fields=["k"], sensitive_fields=["s"], mode="sdmetrics"
    ).compute(real, synthetic)
    assert fixed.score == 0.0  # every value guessed, missing ones too
    assert reference.score == 0.5  # SDMetrics: NaN never equals its placeholder


def test_radius_attacker_hand_computed() -> None:
    # one key with a uniform-like spread; cutoff 0.3 in CDF space
    synthetic = pd.DataFrame(
        {"k": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "s": [10.0, 10.0, 10.0, 50.0, 50.0, 50.0]}
    )
    real = synthetic.copy()
    cdf, _ = fit_cdf(synthetic["k"].to_numpy())
    u = cdf(synthetic["k"].to_numpy())
    within = (u[:, None] - u[None, :]) ** 2 < 0.3**2
    guess_fixed = within @ synthetic["s"].to_numpy() / within.sum(axis=1)
    guess_ref = synthetic["s"].sum() / within.sum(axis=1)
    loss_cdf, _ = fit_cdf(real["s"].to_numpy())
    s = real["s"].to_numpy()

    def loss(guess: np.ndarray) -> float:
        return float(np.mean((loss_cdf(guess) - loss_cdf(s)) ** 2))

    fixed = NumericalRadiusNearestNeighbor(
        key_fields=["k"], sensitive_fields=["s"]
    ).compute(real, synthetic)
    reference = NumericalRadiusNearestNeighbor(
        key_fields=["k"], sensitive_fields=["s"], mode="sdmetrics"
    ).compute(real, synthetic)
    assert fixed.score == pytest.approx(loss(guess_fixed), abs=1e-12)
    assert reference.score == pytest.approx(loss(guess_ref), abs=1e-12)
    assert fixed.score < reference.score  # the unweighted sum guesses far off


def test_fit_cdf_constant_column_is_a_step() -> None:
    cdf, name = fit_cdf(np.full(5, 3.0))
    assert name == "constant"
    np.testing.assert_array_equal(cdf(np.array([2.0, 3.0, 4.0])), [0.0, 1.0, 1.0])


def _population(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(["a", "b", "c"], n)
    return pd.DataFrame(
        {
            "a": a,
            "b": np.where(
                rng.random(n) < 0.7,
                np.where(a == "a", "u", "v"),
                rng.choice(["u", "v"], n),
            ),
            "c": rng.choice(["x", "y"], n),
            "x": np.round(rng.normal(50, 10, n), 2),
            "y": np.round(rng.normal(0, 100, n), 3),
            "uid": seed * 100_000 + np.arange(n),
        }
    )


def test_holdout_control_flags_a_copy_and_not_new_people() -> None:
    real, holdout, fresh = _population(300, 1), _population(300, 2), _population(300, 3)
    # a unique identifier as the key: a model trained on a copy of the real rows knows them all
    # (naive Bayes memorises; a 5-nearest-neighbour vote among tied one-hot rows does not)
    leak = CategoricalNB(key_fields=["uid"], sensitive_fields=["b"]).compute(
        real, real, holdout
    )
    control = leak.breakdown["control"]
    assert leak.score == 0.0
    assert (
        leak.breakdown["holdout_score"] == 1.0
    )  # holdout identifiers are unseen: never guessed
    assert control["effect"] == pytest.approx(1.0)
    assert control["p_value"] < 1e-6
    safe = CategoricalKNN(key_fields=["a", "c"], sensitive_fields=["b"]).compute(
        real, fresh, holdout
    )
    lo, hi = safe.breakdown["control"]["ci"]
    assert lo < 0.05 < hi - 0.05  # an interval of sampling noise, not of a leak
    assert safe.breakdown["control"]["p_value"] > 0.001


def test_control_block_is_the_shared_one() -> None:
    from synthrisk.stats.control import compare_means, compare_proportions

    real, holdout, fresh = _population(200, 1), _population(200, 2), _population(200, 3)
    params = {"key_fields": ["a", "c"], "sensitive_fields": ["b"]}
    result = CategoricalNB(**params).compute(real, fresh, holdout)
    hits_real = round((1 - result.score) * 200)
    hits_hold = round((1 - result.breakdown["holdout_score"]) * 200)
    expected = compare_proportions(
        hits_real, 200, hits_hold, 200, statistic=CategoricalNB.success_name
    )
    assert result.breakdown["control"] == expected
    numeric = NumericalLR(key_fields=["x"], sensitive_fields=["y"]).compute(
        real, fresh, holdout
    )
    control = numeric.breakdown["control"]
    assert control["real"] == pytest.approx(-numeric.score)
    assert control["holdout"] == pytest.approx(-numeric.breakdown["holdout_score"])
    assert (
        control["test"] == compare_means(np.ones(3), np.ones(3), statistic="")["test"]
    )


def test_every_column_mode_reports_each_column_and_the_worst() -> None:
    real, synthetic, holdout = (
        _population(200, 1),
        _population(200, 4),
        _population(200, 2),
    )
    real, synthetic, holdout = (
        t.drop(columns=["uid", "x", "y"]) for t in (real, synthetic, holdout)
    )
    result = CategoricalNB().compute(real, synthetic, holdout)
    columns = result.breakdown["columns"]
    assert sorted(columns) == ["a", "b", "c"]
    assert columns["b"]["key_fields"] == ["a", "c"]
    for column in columns:
        single = CategoricalNB(
            key_fields=columns[column]["key_fields"], sensitive_fields=[column]
        ).compute(real, synthetic)
        assert columns[column]["score"] == single.score
    assert result.score == min(c["score"] for c in columns.values())
    assert result.breakdown["worst_column"] == min(
        columns, key=lambda c: columns[c]["score"]
    )
    assert result.breakdown["control"]["adjustment"] == "holm"
    json.dumps(result.to_dict())


def test_same_seed_same_result_and_seed_changes_random_models(tables) -> None:
    real, synthetic = tables
    metric = get_metric("categorical_rf")(
        key_fields=["cat_a", "cat_b"], sensitive_fields=["sens"]
    )
    assert (
        metric.compute(real, synthetic, seed=3).score
        == metric.compute(real, synthetic, seed=3).score
    )


def test_ensemble_majority_ties_go_to_the_first_attacker() -> None:
    real = pd.DataFrame({"k": list("abcabcabca"), "s": list("xyxyyxxyxy")})
    synthetic = real.copy()
    first = CategoricalEnsemble(
        key_fields=["k"], sensitive_fields=["s"], attackers=["nb"]
    ).compute(real, synthetic)
    both = CategoricalEnsemble(
        key_fields=["k"], sensitive_fields=["s"], attackers=["nb", "knn"]
    ).compute(real, synthetic)
    assert both.score == first.score  # two attackers disagreeing: the first one's guess


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"key_fields": []}, "at least one column"),
        ({"sensitive_fields": 3}, "list of column names"),
        ({"key_fields": ["a"], "sensitive_fields": ["a"]}, "overlap"),
        ({"mode": "reference"}, "mode"),
        ({"model_kwargs": [1]}, "model_kwargs"),
        ({"confidence_level": 1.0}, "confidence_level"),
    ],
)
def test_parameter_errors(params, match) -> None:
    with pytest.raises(ParameterError, match=match):
        CategoricalKNN(**params)


def test_unknown_or_wrong_kind_columns_are_refused(tables) -> None:
    real, synthetic = tables
    with pytest.raises(ParameterError, match="not a column"):
        CategoricalKNN(key_fields=["nope"], sensitive_fields=["sens"]).compute(
            real, synthetic
        )
    with pytest.raises(ParameterError, match="accepts numerical"):
        NumericalLR(key_fields=["cat_a"], sensitive_fields=["y1"]).compute(
            real, synthetic
        )


# ------------------------------------------------------------------ NewRowSynthesis


def _nrs_metadata() -> dict:
    """The golden metadata without the column missing in every row (in both tables, so
    that leaving it out changes no match)."""
    metadata = json.loads(json.dumps(GOLDENS["new_row_synthesis_metadata"]))
    del metadata["columns"]["empty"]
    return metadata


@pytest.mark.parametrize("tolerance", ["0.01", "0.0", "0.05"])
def test_new_row_synthesis_matches_sdmetrics(tables, tolerance) -> None:
    real, synthetic = tables
    expected = GOLDENS["new_row_synthesis"][tolerance]
    metadata = _nrs_metadata()
    metric = NewRowSynthesis(numerical_match_tolerance=float(tolerance))
    got = metric.compute(real, synthetic, metadata=metadata)
    assert {k: got.breakdown[k] for k in expected["metadata"]} == pytest.approx(
        expected["metadata"], abs=1e-12
    )


def test_new_row_synthesis_sample_lies_in_sdmetrics_spread(tables) -> None:
    real, synthetic = tables
    golden = GOLDENS["new_row_synthesis_sample"]
    values = golden["scores"]["values"]
    metadata = _nrs_metadata()
    metric = NewRowSynthesis(synthetic_sample_size=golden["synthetic_sample_size"])
    for seed in range(3):
        got = metric.compute(real, synthetic, metadata=metadata, seed=seed).score
        assert min(values) <= got <= max(values)


def test_copied_rows_against_brute_force() -> None:
    rng = np.random.default_rng(0)
    real_num = np.round(rng.normal(10, 3, (300, 2)), 1)
    real_num[rng.random((300, 2)) < 0.1] = np.nan
    real_codes = rng.integers(-1, 2, (300, 2))
    pick = rng.integers(0, 300, 200)
    syn_num = real_num[pick] * (1 + rng.choice([0.0, 0.004, 0.02], (200, 1)))
    syn_codes = real_codes[pick].copy()
    syn_codes[rng.random(200) < 0.2, 0] = 5
    got = copied_rows(real_num, real_codes, syn_num, syn_codes, tolerance=0.01)
    expected = np.zeros(200, dtype=bool)
    for i in range(200):
        num_ok = (np.abs(real_num - syn_num[i]) <= np.abs(0.01 * syn_num[i])) | (
            np.isnan(real_num) & np.isnan(syn_num[i])
        )
        expected[i] = (
            num_ok.all(axis=1) & (real_codes == syn_codes[i]).all(axis=1)
        ).any()
    np.testing.assert_array_equal(got, expected)
    assert 0 < got.sum() < 200


def test_new_row_synthesis_holdout_control() -> None:
    real, holdout, fresh = _population(300, 1), _population(300, 2), _population(300, 3)
    real, holdout, fresh = (t.drop(columns="uid") for t in (real, holdout, fresh))
    leaky = pd.concat([fresh.iloc[:200], real.iloc[:100]], ignore_index=True)
    leak = NewRowSynthesis().compute(real, leaky, holdout)
    safe = NewRowSynthesis().compute(real, fresh, holdout)
    # coarse data: new people often share every value with someone; only the excess counts
    assert leak.breakdown["control"]["effect"] > 0.2
    assert leak.breakdown["control"]["p_value"] < 1e-6
    assert safe.breakdown["control"]["p_value"] > 0.01


def test_new_row_synthesis_sample_size_is_seeded(tables) -> None:
    real, synthetic = tables
    metric = NewRowSynthesis(synthetic_sample_size=50)
    a = metric.compute(real, synthetic, seed=1).breakdown
    assert a == metric.compute(real, synthetic, seed=1).breakdown
    assert a["num_new_rows"] + a["num_matched_rows"] == 50


def test_knn_with_too_few_synthetic_rows_is_a_clear_error() -> None:
    real = pd.DataFrame({"k": list("abcab"), "s": list("xyxyx")})
    with pytest.raises(InputError, match="n_neighbors=5"):
        CategoricalKNN(key_fields=["k"], sensitive_fields=["s"]).compute(
            real, real.iloc[:3]
        )
    score = CategoricalKNN(
        key_fields=["k"], sensitive_fields=["s"], model_kwargs={"n_neighbors": 1}
    ).compute(real, real.iloc[:3])
    assert 0 <= score.score <= 1
