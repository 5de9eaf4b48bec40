# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk import (
    CategoricalCAP,
    CategoricalGeneralizedCAP,
    CategoricalZeroCAP,
    DisclosureProtection,
    DisclosureProtectionEstimate,
    evaluate,
)
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.disclosure._cap import estimate_iterations, estimate_mean
from synthrisk.metrics.disclosure._codes import attack_codes
from synthrisk.metrics.disclosure._kernels import (
    cap_probabilities,
    cap_protection,
    generalized_cap_counts,
)
from synthrisk.schema import prepare_tables
from synthrisk.schema.keys import bin_edges, discretize, tuple_ids

DATA = Path(__file__).parents[1] / "data"
GOLDENS = json.loads((DATA / "disclosure_goldens.json").read_text())
METHODS = ("cap", "zero_cap", "generalized_cap")
LEGACY = {
    "cap": CategoricalCAP,
    "zero_cap": CategoricalZeroCAP,
    "generalized_cap": CategoricalGeneralizedCAP,
}


def _load(name: str) -> pd.DataFrame:
    frame = pd.read_csv(DATA / GOLDENS["files"][name])
    for column in GOLDENS["datetime_columns"]:
        frame[column] = pd.to_datetime(frame[column], format="ISO8601")
    return frame


@pytest.fixture(scope="module")
def golden_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    return _load("real"), _load("synthetic")


def _metric(case: dict[str, Any], method: str) -> DisclosureProtection:
    return DisclosureProtection(
        known_column_names=case["known"], sensitive_column_names=case["sensitive"], computation_method=method,
        continuous_column_names=case.get("continuous"), num_discrete_bins=case.get("bins", 10),
        **case.get("synthrisk", {}),
    )  # fmt: skip


def _assert_same(got: float | None, expected: float | None) -> None:
    if expected is None:
        assert got is None or math.isnan(got)
    else:
        assert got is not None
        assert abs(got - expected) <= 1e-12, (got, expected)


# ------------------------------------------------------------------ golden values


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["cases"]))
def test_disclosure_protection_equals_sdmetrics(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    case = GOLDENS["cases"][name]
    expected = case["results"][method]
    result = _metric(case, method).compute(*golden_tables)
    for key in ("score", "cap_protection", "baseline_protection"):
        _assert_same(result.breakdown[key], expected[key])  # type: ignore[arg-type]
    _assert_same(result.score, expected["score"])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["rows"]))
def test_per_row_probabilities_equal_sdmetrics_attackers(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    expected = np.array(
        [np.nan if p is None else p for p in GOLDENS["rows"][name][method]]
    )
    record = (
        _metric(GOLDENS["cases"][name], method)
        .compute(*golden_tables)
        .records["guess_probability"]
    )
    assert record.table == "real"
    np.testing.assert_array_equal(record.index, np.arange(len(expected)))
    np.testing.assert_allclose(record.values, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["estimate"]))
def test_estimate_replayed_on_sdmetrics_subsamples_equals_sdmetrics(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    case, spec = GOLDENS["cases"][name], GOLDENS["estimate"][name]["results"][method]
    tables = prepare_tables(*golden_tables)
    context = Context()
    codes = attack_codes(
        tables, case["known"], case["sensitive"], context,
        continuous=case.get("continuous") or (), n_bins=case.get("bins", 10),
    )  # fmt: skip
    samples = [(np.array(r), np.array(s)) for r, s in spec["samples"]]
    caps, _ = estimate_iterations(codes, samples, method, context)
    mean_cap = estimate_mean(caps)
    _assert_same(mean_cap, spec["cap_protection"])
    _assert_same(codes.baseline, spec["baseline_protection"])
    _assert_same(min(mean_cap / codes.baseline, 1.0), spec["score"])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(GOLDENS["legacy"]))
def test_legacy_categorical_cap_equals_sdmetrics(
    name: str, method: str, golden_tables: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    case = GOLDENS["legacy"][name]
    if name == "legacy_object_nan" and method == "generalized_cap":
        pytest.skip(
            "SDMetrics matches object NaN in the key lookup but not in the Hamming distance (documented)"
        )
    metric = LEGACY[method](
        key_fields=case["key"],
        sensitive_fields=case["sensitive"],
        missing=case["missing"],
    )
    result = metric.compute(*golden_tables)
    _assert_same(result.breakdown["score"], case["results"][method])  # type: ignore[arg-type]


def test_nat_collapse_is_opt_in(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    case = GOLDENS["cases"]["nat_collapse"]
    fixed = DisclosureProtection(
        known_column_names=case["known"], sensitive_column_names=case["sensitive"],
        continuous_column_names=case["continuous"], num_discrete_bins=case["bins"],
    ).compute(*golden_tables)  # fmt: skip
    assert fixed.params["nat_binning"] == "missing"
    assert fixed.breakdown["cap_protection"] != pytest.approx(
        case["results"]["cap"]["cap_protection"]
    )


# ----------------------------------------------------------- hand-computed examples


def test_generalized_cap_pools_every_nearest_key_weighted_by_rows() -> None:
    # real (a, b) -> x; synthetic (a, q) -> x once and (z, b) -> y three times: both at distance 1
    real = pd.DataFrame({"k1": ["a"], "k2": ["b"], "s": ["x"]})
    syn = pd.DataFrame(
        {
            "k1": ["a", "z", "z", "z"],
            "k2": ["q", "b", "b", "b"],
            "s": ["x", "y", "y", "y"],
        }
    )
    result = CategoricalGeneralizedCAP(
        key_fields=["k1", "k2"], sensitive_fields=["s"]
    ).compute(real, syn)
    assert result.score == 0.75
    np.testing.assert_array_equal(result.records["guess_probability"].values, [0.25])
    assert math.isnan(
        CategoricalCAP(key_fields=["k1", "k2"], sensitive_fields=["s"])
        .compute(real, syn)
        .breakdown["score"]
    )  # type: ignore[arg-type]
    assert (
        CategoricalZeroCAP(key_fields=["k1", "k2"], sensitive_fields=["s"])
        .compute(real, syn)
        .score
        == 1.0
    )


def test_exact_match_is_the_only_key_kept_by_generalized_cap() -> None:
    real = pd.DataFrame({"k1": ["a"], "k2": ["b"], "s": ["x"]})
    syn = pd.DataFrame(
        {"k1": ["a", "a", "z"], "k2": ["b", "q", "b"], "s": ["x", "y", "y"]}
    )
    result = CategoricalGeneralizedCAP(
        key_fields=["k1", "k2"], sensitive_fields=["s"]
    ).compute(real, syn)
    assert result.score == 0.0


def test_documented_example_scores_0_825() -> None:
    # three real rows, 9 of 20 synthetic votes right for each: CAP 0.45, protection 0.55;
    # three sensitive values: baseline 2/3; score 0.55 / (2/3) = 0.825
    real = pd.DataFrame({"key": ["k1", "k2", "k3"], "s": ["p", "q", "r"]})
    rows = []
    for key, right, wrong in (("k1", "p", "q"), ("k2", "q", "r"), ("k3", "r", "p")):
        rows += [(key, right)] * 9 + [(key, wrong)] * 11
    syn = pd.DataFrame(rows, columns=["key", "s"])
    result = DisclosureProtection(
        known_column_names=["key"], sensitive_column_names=["s"]
    ).compute(real, syn)
    assert result.breakdown["cap_protection"] == pytest.approx(0.55, abs=1e-15)
    assert result.breakdown["baseline_protection"] == pytest.approx(2 / 3, abs=1e-15)
    assert result.score == pytest.approx(0.825, abs=1e-12)


def test_baseline_counts_the_missing_category_and_multiplies_columns() -> None:
    real = pd.DataFrame(
        {"k": list("aaaa"), "s1": ["x", "y", "x", "y"], "s2": ["p", "q", "r", None]}
    )
    syn = real.copy()
    result = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s1", "s2"]
    ).compute(real, syn)
    assert result.breakdown["baseline_protection"] == 0.875


def test_multi_column_sensitive_is_matched_as_a_whole_tuple() -> None:
    real = pd.DataFrame({"k": ["a"], "s1": ["x"], "s2": ["p"]})
    syn = pd.DataFrame(
        {
            "k": ["a", "a", "a", "a"],
            "s1": ["x", "x", "y", "x"],
            "s2": ["p", "q", "p", "q"],
        }
    )
    p = (
        CategoricalCAP(key_fields=["k"], sensitive_fields=["s1", "s2"])
        .compute(real, syn)
        .records["guess_probability"]
    )
    np.testing.assert_array_equal(p.values, [0.25])  # not 0.75 x 0.5 or per-column


def test_no_overlap_gives_undefined_cap_and_full_zero_cap_protection() -> None:
    real = pd.DataFrame({"k": ["a", "b"], "s": ["x", "y"]})
    syn = pd.DataFrame({"k": ["c", "d"], "s": ["x", "y"]})
    cap = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s"]
    ).compute(real, syn)
    assert cap.score is None
    assert math.isnan(cap.breakdown["cap_protection"])  # type: ignore[arg-type]
    assert any("plain CAP scores no row" in w for w in cap.warnings)
    zero = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s"], computation="zero_cap"
    ).compute(real, syn)
    assert zero.score == 1.0
    assert zero.breakdown["cap_protection"] == 1.0


def test_constant_sensitive_column_gives_undefined_score_with_warning() -> None:
    real = pd.DataFrame({"k": ["a", "b"], "s": ["x", "x"]})
    result = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s"]
    ).compute(real, real)
    assert result.score is None
    assert result.breakdown["baseline_protection"] == 0.0
    assert result.ci is None
    assert any("baseline protection 0" in w for w in result.warnings)


def test_int_and_float_keys_match_but_strings_do_not() -> None:
    real = pd.DataFrame({"k": [1, 2], "s": ["x", "y"]})
    syn_float = pd.DataFrame({"k": [1.0, 2.0], "s": ["x", "x"]})
    result = CategoricalCAP(key_fields=["k"], sensitive_fields=["s"]).compute(
        real, syn_float
    )
    np.testing.assert_array_equal(
        result.records["guess_probability"].values, [1.0, 0.0]
    )
    syn_str = pd.DataFrame({"k": ["1", "z"], "s": ["x", "x"]})
    as_str = CategoricalCAP(key_fields=["k"], sensitive_fields=["s"]).compute(
        real.astype({"k": object}).assign(k=[1, 2]),
        syn_str,
        metadata={"columns": {"k": {"kind": "categorical"}}},
    )
    assert as_str.score is None  # 1 (int) never equals '1' (str)


def test_missing_values_are_one_category_or_never_equal() -> None:
    real = pd.DataFrame({"k": [np.nan, 1.0], "s": ["x", "y"]})
    syn = pd.DataFrame({"k": [np.nan, 1.0], "s": ["x", "y"]})
    category = CategoricalCAP(key_fields=["k"], sensitive_fields=["s"]).compute(
        real, syn
    )
    np.testing.assert_array_equal(
        category.records["guess_probability"].values, [1.0, 1.0]
    )
    never = CategoricalCAP(
        key_fields=["k"], sensitive_fields=["s"], missing="never_equal"
    ).compute(real, syn)
    np.testing.assert_array_equal(
        never.records["guess_probability"].values, [np.nan, 1.0]
    )


def test_pandas_category_columns_work_and_equal_object_columns() -> None:
    real = pd.DataFrame({"k": ["a", "b", "a", None], "s": ["x", "y", "y", "x"]})
    syn = pd.DataFrame({"k": ["a", "b", None, "b"], "s": ["x", "x", "x", "y"]})
    as_object = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s"]
    ).compute(real, syn)
    as_category = DisclosureProtection(
        known_column_names=["k"], sensitive_column_names=["s"]
    ).compute(real.astype("category"), syn.astype("category"))
    assert as_category.breakdown == as_object.breakdown


def test_datetime_key_not_listed_as_continuous_is_matched_exactly_with_a_warning() -> (
    None
):
    real = pd.DataFrame(
        {"d": pd.to_datetime(["2020-01-01", "2020-01-02"]), "s": ["x", "y"]}
    )
    syn = pd.DataFrame(
        {"d": pd.to_datetime(["2020-01-01", "2020-01-05"]), "s": ["x", "y"]}
    )
    result = CategoricalCAP(key_fields=["d"], sensitive_fields=["s"]).compute(real, syn)
    np.testing.assert_array_equal(
        result.records["guess_probability"].values, [1.0, np.nan]
    )
    assert any("matched on exact timestamps" in w for w in result.warnings)
    with pytest.raises(
        ParameterError, match=r"datetime column 'd' is not in `continuous_column_names`"
    ):
        DisclosureProtection(
            known_column_names=["d"], sensitive_column_names=["s"], strict_types=True
        ).compute(real, syn)


def test_numeric_key_with_many_values_warns() -> None:
    g = np.random.default_rng(0)
    real = pd.DataFrame(
        {"income": g.normal(5e4, 1e4, 200).round(), "s": g.choice(["x", "y"], 200)}
    )
    result = DisclosureProtection(
        known_column_names=["income"], sensitive_column_names=["s"]
    ).compute(real, real)
    assert any(
        "known column 'income' is numerical with 199 distinct" in w
        for w in result.warnings
    )
    binned = DisclosureProtection(
        known_column_names=["income"],
        sensitive_column_names=["s"],
        continuous_column_names=["income"],
    ).compute(real, real)
    assert not binned.warnings


def test_id_column_without_values_can_be_binned_with_a_warning() -> None:
    real = pd.DataFrame({"v": [np.nan, np.nan, np.nan], "s": ["x", "y", "x"]})
    syn = pd.DataFrame({"v": [1.0, np.nan, 3.0], "s": ["x", "y", "y"]})
    metadata = {"columns": {"v": {"kind": "id"}, "s": {"kind": "categorical"}}}
    metric = DisclosureProtection(
        known_column_names=["v"],
        sensitive_column_names=["s"],
        continuous_column_names=["v"],
    )
    result = metric.compute(real, syn, metadata=metadata)
    # real rows are all 'missing'; synthetic (1, x) and (3, y) share bin 0, (NaN, y) is missing
    np.testing.assert_array_equal(
        result.records["guess_probability"].values, [0.0, 1.0, 0.0]
    )
    assert any("has no value in the real table" in w for w in result.warnings)
    strict = DisclosureProtection(
        known_column_names=["v"],
        sensitive_column_names=["s"],
        continuous_column_names=["v"],
        strict_types=True,
    )
    with pytest.raises(ParameterError, match="has no value in the real table"):
        strict.compute(real, syn, metadata=metadata)


# --------------------------------------------------------------------------- binning


def test_bins_are_right_closed_with_open_outer_edges() -> None:
    real = np.array([0.0, 10.0, 5.0, 2.5])
    real_codes, syn_codes = discretize(
        real, np.array([5.0, -100.0, 1000.0, np.nan, 7.5]), 4
    )
    np.testing.assert_array_equal(
        real_codes, [0, 3, 1, 0]
    )  # 5.0 on an interior edge: lower bin
    np.testing.assert_array_equal(syn_codes, [1, 0, 3, -1, 2])
    edges = bin_edges(real, 4)
    assert edges is not None
    np.testing.assert_allclose(edges, [-0.01, 2.5, 5.0, 7.5, 10.0])


def test_constant_real_column_is_widened_like_pandas() -> None:
    real_codes, syn_codes = discretize(
        np.array([5.0, 5.0]), np.array([5.0, 4.0, 6.0, 5.004]), 4
    )
    np.testing.assert_array_equal(real_codes, [1, 1])
    np.testing.assert_array_equal(syn_codes, [1, 0, 3, 3])
    np.testing.assert_allclose(bin_edges(np.array([0.0]), 2), [-0.001, 0.0, 0.001])  # type: ignore[arg-type]


def test_binning_matches_pandas_cut() -> None:
    g = np.random.default_rng(3)
    values = g.normal(0, 1, 500)
    values[::17] = np.nan
    labels, edges = pd.cut(values, 7, labels=False, retbins=True)
    codes, _ = discretize(values, values, 7)
    np.testing.assert_array_equal(codes, np.where(np.isnan(labels), -1, labels))
    np.testing.assert_array_equal(bin_edges(values, 7), edges)


def test_nat_is_missing_by_default_and_collapses_dates_as_sdmetrics_on_request() -> (
    None
):
    dates = pd.Series(pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", None]))
    real = pd.DataFrame({"d": dates, "s": ["x", "y", "x", "y"]})
    tables = prepare_tables(real, real)
    fixed = attack_codes(tables, ["d"], ["s"], Context(), continuous=["d"], n_bins=4)
    np.testing.assert_array_equal(
        fixed.real_keys[:, 0], [0, 2, 3, 4]
    )  # 4 = the missing category
    collapsed = attack_codes(
        tables,
        ["d"],
        ["s"],
        Context(),
        continuous=["d"],
        n_bins=4,
        nat_binning="sdmetrics",
    )
    np.testing.assert_array_equal(
        collapsed.real_keys[:, 0], [3, 3, 3, 4]
    )  # SDMetrics: ['3','3','3',NaN]
    np.testing.assert_array_equal(
        collapsed.synthetic_keys[:, 0], [3, 3, 3, 0]
    )  # synthetic NaT -> '0'


# --------------------------------------------------------------------------- kernels


def _naive_cap(
    real_k: np.ndarray,
    real_s: np.ndarray,
    syn_k: np.ndarray,
    syn_s: np.ndarray,
    method: str,
) -> np.ndarray:
    """SDMetrics' attackers, literally: a dict of synthetic keys and a Hamming scan."""
    groups: dict[tuple, list[tuple]] = {}
    for k, s in zip(map(tuple, syn_k), map(tuple, syn_s), strict=True):
        groups.setdefault(k, []).append(s)
    out = []
    for k, s in zip(map(tuple, real_k), map(tuple, real_s), strict=True):
        if method == "generalized_cap":
            dist = {
                key: sum(a != b for a, b in zip(k, key, strict=True)) for key in groups
            }
            best = min(dist.values())
            pool = [
                v for key, votes in groups.items() if dist[key] == best for v in votes
            ]
            out.append(pool.count(s) / len(pool))
        elif k in groups:
            out.append(groups[k].count(s) / len(groups[k]))
        else:
            out.append(0.0 if method == "zero_cap" else np.nan)
    return np.array(out)


@pytest.mark.parametrize(
    ("backend", "search"),
    [("numpy", "scan"), ("numba", "scan"), ("numpy", "masks"), ("numba", "auto")],
)
@pytest.mark.parametrize("method", METHODS)
def test_kernel_equals_naive_attacker(
    method: str, backend: str, search: str, rng: np.random.Generator
) -> None:
    # (1, 6): the nearest keys differ in every column; (6, 9): keys 2-5 columns away
    for n_keys, cardinality in ((1, 6), (3, 4), (5, 3), (6, 9)):
        real_k = rng.integers(0, cardinality, (70, n_keys))
        syn_k = rng.integers(0, cardinality, (50, n_keys))
        real_s, syn_s = rng.integers(0, 3, (70, 2)), rng.integers(0, 3, (50, 2))
        got = cap_probabilities(
            real_k, real_s, syn_k, syn_s, method=method, backend=backend, search=search
        )  # type: ignore[arg-type]
        np.testing.assert_allclose(
            got, _naive_cap(real_k, real_s, syn_k, syn_s, method), rtol=0, atol=1e-15
        )


def test_mask_search_equals_scan_on_a_larger_sparse_key_space(
    rng: np.random.Generator,
) -> None:
    real_k, syn_k = rng.integers(0, 12, (3000, 6)), rng.integers(0, 12, (2500, 6))
    real_s, syn_s = rng.integers(0, 4, (3000, 1)), rng.integers(0, 4, (2500, 1))
    args = (real_k, real_s, syn_k, syn_s)
    scan = cap_probabilities(*args, method="generalized_cap", search="scan")
    for search in ("masks", "auto"):
        got = cap_probabilities(*args, method="generalized_cap", search=search)  # type: ignore[arg-type]
        np.testing.assert_array_equal(got, scan)


def test_numba_and_blocked_numpy_search_agree(rng: np.random.Generator) -> None:
    real_k, syn_k = rng.integers(0, 5, (400, 4)), rng.integers(0, 5, (300, 4))
    real_s, syn_s = rng.integers(0, 7, (400, 1)), rng.integers(0, 7, (300, 1))
    kwargs: dict[str, Any] = {"method": "generalized_cap"}
    blocked = cap_probabilities(
        real_k, real_s, syn_k, syn_s, backend="numpy", working_memory=2**-12, **kwargs
    )
    numba = cap_probabilities(real_k, real_s, syn_k, syn_s, backend="numba", **kwargs)
    np.testing.assert_array_equal(blocked, numba)


def test_generalized_counts_rejects_unknown_backend() -> None:
    empty = np.zeros((1, 1), dtype=np.int64)
    with pytest.raises(ParameterError, match=r"`backend` must be one of"):
        generalized_cap_counts(
            empty, empty, *([np.zeros(1, dtype=np.int64)] * 6), 1, backend="gpu"
        )


def test_tuple_ids_survive_huge_cardinalities() -> None:
    big = 2**40
    real = np.array([[big, 1, big], [0, 0, 0], [big, 1, big]])
    syn = np.array([[big, 1, big], [big, 0, big]])
    r, s, n = tuple_ids(real, syn)
    assert n == 3
    assert r[0] == r[2] == s[0]
    assert len({int(r[1]), int(s[1]), int(r[0])}) == 3


def test_cap_protection_sums_left_to_right_and_skips_nan() -> None:
    assert (
        cap_protection(np.array([0.1, np.nan, 0.2, 0.3]))
        == 1.0 - ((0.1 + 0.2) + 0.3) / 3
    )
    assert math.isnan(cap_protection(np.array([np.nan])))


# ------------------------------------------------------- records, intervals, estimate


def test_records_ci_and_json(golden_tables: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    case = GOLDENS["cases"]["binned"]
    result = _metric(case, "zero_cap").compute(*golden_tables, seed=4)
    assert result.ci is not None
    assert result.ci[0] < result.score < result.ci[1]  # type: ignore[operator]
    again = _metric(case, "zero_cap").compute(*golden_tables, seed=4)
    assert again.ci == result.ci
    p = result.records["guess_probability"].values
    summary = result.breakdown["real_rows"]
    assert summary == {
        "total": 300, "scored": 300, "guessed_p_ge_0.5": int((p >= 0.5).sum()), "guessed_p_ge_0.9": int((p >= 0.9).sum())
    }  # fmt: skip
    data = result.to_dict(include_records=True)
    assert data["ci"] == list(result.ci)
    record = data["records"]["guess_probability"]  # type: ignore[index]
    assert set(record) == {"table", "description", "index", "values"}
    assert record["index"] == list(range(300))
    assert "records" not in result.to_dict()
    text = json.dumps(data)
    assert "r17" not in text  # no record values, only positions and probabilities
    assert "2020-" not in text


def test_estimate_is_seeded_and_averages_cap_before_dividing(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    metric = DisclosureProtectionEstimate(
        known_column_names=["cat_a", "flag"],
        sensitive_column_names=["sens1"],
        num_rows_subsample=80,
        num_iterations=5,
    )
    a, b = (
        metric.compute(*golden_tables, seed=1),
        metric.compute(*golden_tables, seed=1),
    )
    other = metric.compute(*golden_tables, seed=2)
    assert a.breakdown == b.breakdown
    assert a.breakdown["cap_protection"] != other.breakdown["cap_protection"]
    caps = a.breakdown["cap_protection_per_iteration"]
    assert len(caps) == 5  # type: ignore[arg-type]
    assert a.breakdown["cap_protection"] == estimate_mean(caps)  # type: ignore[arg-type]
    assert a.score == min(estimate_mean(caps) / 0.75, 1.0)  # type: ignore[arg-type]
    assert a.ci is not None
    record = a.records["guess_probability"]
    assert 80 <= record.index.size <= 300
    assert np.all(np.diff(record.index) > 0)


def test_estimate_takes_the_options_of_disclosure_protection() -> None:
    names = DisclosureProtectionEstimate.param_names()
    assert names == [
        *DisclosureProtection.param_names(),
        "num_rows_subsample",
        "num_iterations",
    ]
    metric = DisclosureProtectionEstimate.from_params(
        {
            "known_column_names": ["k"],
            "sensitive_column_names": ["s"],
            "num_iterations": 3,
        }
    )
    plain = DisclosureProtection(known_column_names=["k"], sensitive_column_names=["s"])
    assert metric.params == {
        **plain.params,
        "num_rows_subsample": None,
        "num_iterations": 3,
    }
    with pytest.raises(ParameterError, match="`num_discrete_bins` must be an integer"):
        DisclosureProtectionEstimate(
            known_column_names=["k"], sensitive_column_names=["s"], num_discrete_bins=0
        )


def test_estimate_default_subsample_fits_small_tables() -> None:
    # SDMetrics' 1000 rows, at most the larger table: 40 rows here, recorded
    real = pd.DataFrame({"k": list("abab" * 10), "s": list("xyyx" * 10)})
    syn = real.iloc[:30]
    metric = DisclosureProtectionEstimate(
        known_column_names=["k"], sensitive_column_names=["s"], num_iterations=2
    )
    result = metric.compute(real, syn)
    assert result.params["num_rows_subsample"] == 40
    exact = DisclosureProtection(known_column_names=["k"], sensitive_column_names=["s"])
    assert result.score == pytest.approx(exact.compute(real, syn).score)
    big = pd.concat([real] * 30, ignore_index=True)
    assert metric.compute(big, big).params["num_rows_subsample"] == 1000


def test_estimate_subsample_larger_than_one_table_warns() -> None:
    real = pd.DataFrame({"k": list("abab" * 10), "s": list("xyyx" * 10)})
    syn = real.iloc[:20]
    metric = DisclosureProtectionEstimate(
        known_column_names=["k"], sensitive_column_names=["s"], num_rows_subsample=30
    )
    result = metric.compute(real, syn)
    assert any(
        "larger than the synthetic table (20 rows)" in w for w in result.warnings
    )


def test_mean_of_cap_then_divide_differs_from_mean_of_clipped_scores() -> None:
    # two iterations with CAP 0.9 and 0.3, baseline 0.5: min(0.6 / 0.5, 1) = 1, not (1 + 0.6) / 2
    assert min(estimate_mean([0.9, 0.3]) / 0.5, 1.0) == 1.0


def test_disclosure_metrics_need_parameters_and_run_in_evaluate(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    real, syn = golden_tables
    report = evaluate(real, syn)
    # the default run uses synthrisk's default columns, recorded in the parameters
    default = report["disclosure_protection"]
    assert default.params["columns_chosen_by"].startswith("synthrisk's default")
    assert len(default.params["known_column_names"]) == 3  # type: ignore[arg-type]
    params = {
        "known_column_names": ["cat_a", "flag"],
        "sensitive_column_names": ["sens1"],
    }
    report = evaluate(
        real,
        syn,
        metrics={
            "disclosure_protection": params,
            "categorical_cap": {"key_fields": ["cat_b"], "sensitive_fields": ["sens2"]},
        },
    )
    expected = GOLDENS["cases"]["basic"]["results"]["cap"]["score"]
    assert report["disclosure_protection"].score == pytest.approx(expected, abs=1e-12)
    assert report["categorical_cap"].params == {
        "key_fields": ["cat_b"],
        "sensitive_fields": ["sens2"],
        "missing": "category",
        "strict_types": False,
        "confidence_level": 0.95,
    }


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"known_column_names": None},
            r"`known_column_names` must name at least one column; got None",
        ),
        (
            {"known_column_names": [], "sensitive_column_names": ["s"]},
            r"`known_column_names` must name at least one column; got an empty list",
        ),
        (
            {"known_column_names": ["k"], "sensitive_column_names": []},
            r"`sensitive_column_names` must name at least one column",
        ),
        (
            {"num_discrete_bins": 0},
            r"`num_discrete_bins` must be an integer >= 1; got 0",
        ),
        (
            {"num_discrete_bins": 2.5},
            r"`num_discrete_bins` must be an integer; got 2.5",
        ),
        (
            {"num_discrete_bins": True},
            r"`num_discrete_bins` must be an integer; got True",
        ),
        (
            {"computation_method": "tcap"},
            r"`computation_method` must be one of \['cap', 'zero_cap', 'generalized_cap'\]; got 'tcap'",
        ),
        ({"computation": 3}, r"`computation` must be one of"),
        (
            {"computation_method": "cap", "computation": "zero_cap"},
            r"`computation_method` \('cap'\) and its alias `computation` \('zero_cap'\) disagree",
        ),
        (
            {"nat_binning": "drop"},
            r"`nat_binning` must be one of \['missing', 'sdmetrics'\]",
        ),
    ],
)
def test_bad_parameters(kwargs: dict[str, Any], match: str) -> None:
    full = {"known_column_names": ["k"], "sensitive_column_names": ["s"], **kwargs}
    with pytest.raises(ParameterError, match=match):
        DisclosureProtection(**full)


def test_method_is_case_insensitive() -> None:
    metric = DisclosureProtection(
        known_column_names=["k"],
        sensitive_column_names=["s"],
        computation_method="Zero_CAP",
    )
    assert metric.params["computation_method"] == "zero_cap"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"num_rows_subsample": 0},
            r"`num_rows_subsample` must be an integer >= 1; got 0",
        ),
        (
            {"num_rows_subsample": 2.5},
            r"`num_rows_subsample` must be an integer or None; got 2.5",
        ),
        ({"num_iterations": 0}, r"`num_iterations` must be an integer >= 1; got 0"),
    ],
)
def test_bad_estimate_parameters(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        DisclosureProtectionEstimate(
            known_column_names=["k"], sensitive_column_names=["s"], **kwargs
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"known_column_names": ["nope"]},
            r"`known_column_names` names columns that are not in the tables: \['nope'\]",
        ),
        (
            {"sensitive_column_names": ["s", "zz"]},
            r"`sensitive_column_names` names columns that are not in the tables: \['zz'\]",
        ),
        (
            {"continuous_column_names": ["yy"]},
            r"`continuous_column_names` names columns that are not in the tables: \['yy'\]",
        ),
        (
            {"continuous_column_names": ["k"]},
            r"`continuous_column_names` lists 'k', a categorical column",
        ),
        (
            {"continuous_column_names": ["b"]},
            r"`continuous_column_names` lists 'b', a boolean column",
        ),
    ],
)
def test_bad_columns(kwargs: dict[str, Any], match: str) -> None:
    table = pd.DataFrame({"k": ["a", "b"], "b": [True, False], "s": ["x", "y"]})
    full = {"known_column_names": ["k"], "sensitive_column_names": ["s"], **kwargs}
    with pytest.raises(ParameterError, match=match):
        DisclosureProtection(**full).compute(table, table)


def test_id_column_with_text_cannot_be_binned() -> None:
    table = pd.DataFrame({"k": ["a", "b"], "name": ["ann", "bob"], "s": ["x", "y"]})
    metric = DisclosureProtection(
        known_column_names=["name"],
        sensitive_column_names=["s"],
        continuous_column_names=["name"],
    )
    with pytest.raises(
        ParameterError,
        match=r"`continuous_column_names` lists 'name', whose values are not numbers",
    ):
        metric.compute(table, table, metadata={"columns": {"name": {"kind": "text"}}})


def test_legacy_bad_parameters() -> None:
    with pytest.raises(
        ParameterError,
        match=r"`key_fields` must name at least one column; got an empty list",
    ):
        CategoricalCAP(key_fields=[], sensitive_fields=["s"])
    with pytest.raises(
        ParameterError, match=r"`missing` must be one of \['category', 'never_equal'\]"
    ):
        CategoricalCAP(key_fields=["k"], sensitive_fields=["s"], missing="drop")
    table = pd.DataFrame({"k": ["a"], "s": ["x"]})
    with pytest.raises(
        ParameterError,
        match=r"`sensitive_fields` names columns that are not in the tables: \['t'\]",
    ):
        CategoricalCAP(key_fields=["k"], sensitive_fields=["t"]).compute(table, table)


def test_subsample_larger_than_both_tables_is_a_clear_error() -> None:
    table = pd.DataFrame({"k": ["a", "b"] * 5, "s": ["x", "y"] * 5})
    metric = DisclosureProtectionEstimate(
        known_column_names=["k"], sensitive_column_names=["s"], num_rows_subsample=50
    )
    with pytest.raises(
        ParameterError,
        match=r"`num_rows_subsample` \(50\) is larger than both the real \(10 rows\)",
    ):
        metric.compute(table, table)


def test_identifier_like_known_column_warns(
    golden_tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    metric = DisclosureProtection(
        known_column_names=["uid", "cat_a"],
        sensitive_column_names=["sens2"],
        computation_method="generalized_cap",
    )
    result = metric.compute(*golden_tables)
    assert any(
        "known column 'uid' has 300 distinct values in 300 real rows" in w
        for w in result.warnings
    )
