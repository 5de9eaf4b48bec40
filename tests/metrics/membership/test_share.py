# SPDX-License-Identifier: BSD-3-Clause
"""Membership metrics: hand-computed values, APT goldens (mode="apt"), properties, bad input."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics.membership import _share_lists as share_module
from synthrisk.metrics.membership._holdout import copy_test
from synthrisk.metrics.membership.knn import (
    MembershipKnnProbabilities,
    parzen_probabilities,
)
from synthrisk.metrics.membership.nndr import NNDR
from synthrisk.metrics.membership.share import DCRShare, IdenticalMatchShare
from synthrisk.results import EvaluationReport

APT_DATA = Path(__file__).parents[2] / "compat" / "data" / "apt"
GOLDENS = json.loads((APT_DATA / "goldens.json").read_text(encoding="utf-8"))


def _apt_tables(case: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    members, non_members, synthetic = (
        pd.read_csv(APT_DATA / f"{case}_{n}.csv")
        for n in ("members", "non_members", "synthetic")
    )
    return members, synthetic, non_members  # real, synthetic, holdout


def _mixed(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.normal(40, 10, n).round(1),
            "income": rng.lognormal(10, 1, n),
            "city": rng.choice(["Ghent", "Lyon", "Porto", "Turku"], n),
            "member": rng.random(n) < 0.3,
        }
    )


@pytest.fixture
def population() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Real and holdout of 300 rows each, and an independent synthetic draw."""
    rng = np.random.default_rng(12)
    return _mixed(rng, 300), _mixed(rng, 300), _mixed(rng, 300)


# --------------------------------------------------------------------------- small kernels


def test_parzen_probabilities_by_hand() -> None:
    d = np.array([[0.0, 1.0], [2.0, 4.0]])
    np.testing.assert_allclose(
        parzen_probabilities(d),
        [(1 + math.exp(-1)) / 2, (math.exp(-2) + math.exp(-4)) / 2],
    )
    np.testing.assert_allclose(
        parzen_probabilities(d, bandwidth=2.0),
        [(1 + math.exp(-0.5)) / 2, (math.exp(-1) + math.exp(-2)) / 2],
    )


# --------------------------------------------------------------------------- kNN probabilities


def test_knn_probabilities_hand_computed() -> None:
    real = pd.DataFrame({"x": [0.0, 10.0]})
    holdout = pd.DataFrame({"x": [5.0]})
    synthetic = pd.DataFrame({"x": [0.0, 1.0]})
    result = MembershipKnnProbabilities(k=1, mode="apt").compute(
        real, synthetic, holdout
    )
    # members: d = 0 and 9 -> p = 1, e^-9; non-member: d = 4 -> e^-4
    np.testing.assert_allclose(result.records["real"].values, [1.0, math.exp(-9)])
    np.testing.assert_allclose(result.records["holdout"].values, [math.exp(-4)])
    assert result.score == pytest.approx(0.5)
    assert result.breakdown["average_precision_score"] == pytest.approx(
        0.5 + 0.5 * 2 / 3
    )
    assert result.breakdown["average_precision_baseline"] == pytest.approx(2 / 3)
    assert result.breakdown["roc_curve"] == {
        "fpr": [0.0, 0.0, 1.0, 1.0],
        "tpr": [0.0, 0.5, 0.5, 1.0],
    }


@pytest.mark.parametrize("case", ["mixed", "gaussian"])
@pytest.mark.parametrize("k", [5, 3])
def test_knn_probabilities_apt_mode_matches_goldens(case: str, k: int) -> None:
    golden = GOLDENS["cases"][case][f"knn_k{k}"]
    result = MembershipKnnProbabilities(k=k, mode="apt").compute(*_apt_tables(case))
    assert result.score == pytest.approx(golden["roc_auc_score"], abs=1e-9)
    assert result.breakdown["average_precision_score"] == pytest.approx(
        golden["average_precision_score"], abs=1e-9
    )
    np.testing.assert_allclose(
        result.records["real"].values, golden["member_probabilities"], rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(
        result.records["holdout"].values,
        golden["non_member_probabilities"],
        rtol=0,
        atol=1e-9,
    )


def test_bandwidth_default_depends_on_mode() -> None:
    assert MembershipKnnProbabilities().params["bandwidth"] == "median"
    assert MembershipKnnProbabilities(mode="apt").params["bandwidth"] == 1.0
    assert MembershipKnnProbabilities(bandwidth=0.5).params["bandwidth"] == 0.5


def test_knn_probabilities_copy_is_recognised(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, _, holdout = population
    copy = real.sample(frac=1.0, random_state=0).reset_index(drop=True)
    result = MembershipKnnProbabilities().compute(real, copy, holdout)
    assert result.score > 0.95
    # APT's unit width blurs the DCR distances (all in [0, 1]) into a weak attack
    weak = MembershipKnnProbabilities(bandwidth=1.0).compute(real, copy, holdout)
    assert weak.score < 0.8
    assert result.ci is not None
    assert result.ci[0] > 0.9


def test_knn_probabilities_independent_is_a_coin(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    result = MembershipKnnProbabilities().compute(real, synthetic, holdout)
    assert abs(result.score - 0.5) < 0.06
    assert result.ci[0] < 0.5 < result.ci[1]


def test_median_bandwidth_is_scale_free_but_unit_bandwidth_is_not() -> None:
    rng = np.random.default_rng(5)
    real = pd.DataFrame(rng.normal(size=(150, 3)), columns=list("abc"))
    holdout = pd.DataFrame(rng.normal(size=(150, 3)), columns=list("abc"))
    synthetic = pd.concat(
        [real.iloc[:50] + rng.normal(0, 0.2, (50, 3)), holdout.iloc[:0]],
        ignore_index=True,
    )
    synthetic = pd.concat(
        [synthetic, pd.DataFrame(rng.normal(size=(100, 3)), columns=list("abc"))],
        ignore_index=True,
    )

    def auc(scale: float, bandwidth: float | str) -> float:
        metric = MembershipKnnProbabilities(mode="apt", bandwidth=bandwidth)
        return metric.compute(real * scale, synthetic * scale, holdout * scale).score

    assert auc(1, "median") == pytest.approx(auc(1000, "median"), abs=1e-12)
    assert abs(auc(1, 1.0) - auc(1000, 1.0)) > 0.01


def test_unit_bandwidth_underflow_is_warned() -> None:
    rng = np.random.default_rng(6)
    real, holdout, synthetic = (
        pd.DataFrame(rng.normal(size=(60, 2)) * 1000, columns=["a", "b"])
        for _ in range(3)
    )
    result = MembershipKnnProbabilities(mode="apt").compute(real, synthetic, holdout)
    assert any("underflow" in w for w in result.warnings)


# --------------------------------------------------------------------------- DCR share


def test_dcr_share_hand_computed_with_ties() -> None:
    real = pd.DataFrame({"x": [0.0, 10.0]})
    holdout = pd.DataFrame({"x": [0.0, 20.0, 30.0]})
    synthetic = pd.DataFrame(
        {"x": [0.0, 9.0, 25.0]}
    )  # tie, closer to real, closer to holdout
    result = DCRShare(mode="apt", n_permutations=0).compute(real, synthetic, holdout)
    assert result.score == pytest.approx(1 / 3 + 2 / 5 * 1 / 3)
    assert result.breakdown["share_ties_half"] == pytest.approx(0.5)
    assert result.breakdown["synthetic_data_percentages"] == pytest.approx(
        {"closer_to_real": 1 / 3, "closer_to_holdout": 1 / 3, "tied": 1 / 3}
    )
    np.testing.assert_allclose(result.records["closer_to_real"].values, [0.4, 1.0, 0.0])


def test_dcr_share_repeated_synthetic_rows_keep_their_own_outcomes() -> None:
    # identical synthetic rows are searched once; every row still gets its outcome
    real = pd.DataFrame({"x": [0.0, 10.0, 40.0], "c": ["a", "b", "a"]})
    holdout = pd.DataFrame({"x": [1.0, 20.0, 30.0], "c": ["a", "b", "b"]})
    synthetic = pd.DataFrame(
        {
            "x": [25.0, 0.0, 9.0, 0.0, 25.0, 0.0, 40.0],
            "c": ["b", "a", "b", "a", "b", "a", "a"],
        }
    )
    result = DCRShare(n_permutations=199).compute(real, synthetic, holdout, seed=3)
    # holdout 25 / b; real 0 / a; real 10 / b; ...; real 40 / a
    np.testing.assert_array_equal(
        result.records["closer_to_real"].values, [0, 1, 1, 1, 0, 1, 1]
    )
    distances = result.records["distance_to_real_or_holdout"].values
    assert distances[1] == distances[3] == distances[5] == 0.0
    assert distances[0] == distances[4] > 0
    # the same rows in another order give the same share and p-value
    shuffled = synthetic.iloc[[6, 2, 0, 5, 1, 4, 3]].reset_index(drop=True)
    again = DCRShare(n_permutations=199).compute(real, shuffled, holdout, seed=3)
    assert again.score == result.score
    assert again.breakdown["p_value"] == result.breakdown["p_value"]


@pytest.mark.parametrize(("n_real", "n_holdout"), [(600, 600), (900, 300), (200, 700)])
def test_dcr_share_distinct_pool_search_equals_the_plain_search(
    monkeypatch: pytest.MonkeyPatch, n_real: int, n_holdout: int
) -> None:
    # coarse rows (many exact repeats in the pool): searching distinct pool rows and
    # expanding each into its copies gives every number of the row-by-row search
    rng = np.random.default_rng(7)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "a": rng.integers(0, 4, n),
                "b": rng.choice(["x", "y", "z"], n),
                "e": rng.integers(0, 25, n).astype(float),
            }
        )

    real, holdout, synthetic = table(n_real), table(n_holdout), table(400)
    synthetic.iloc[:40] = real.iloc[:40].to_numpy()

    def run(share: float) -> dict:
        monkeypatch.setattr(share_module, "_DISTINCT_POOL_SHARE", share)
        result = DCRShare(n_permutations=99, n_repeats=3).compute(
            real, synthetic, holdout, seed=5
        )
        return {
            "score": result.score,
            "breakdown": result.breakdown,
            "rows": result.records["closer_to_real"].values.tolist(),
        }

    plain, distinct = run(0.0), run(1.0)
    assert distinct == plain
    assert 0 < plain["breakdown"]["synthetic_data_percentages"]["tied"] < 1


def test_dcr_share_tie_sets_beyond_the_list_cap_stay_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 1,500 identical pool rows "a" and 105 "b", lists capped at 64 rows here: the
    # comparisons a capped list leaves open are searched directly
    monkeypatch.setattr(share_module, "_MAX_TIE_LIST", 64)
    real = pd.DataFrame({"c": ["a"] * 900 + ["b"] * 100})
    holdout = pd.DataFrame({"c": ["a"] * 600 + ["b"] * 5})
    synthetic = pd.DataFrame({"c": ["a"] * 30 + ["b"] * 10})
    result = DCRShare(n_permutations=99, n_repeats=4).compute(
        real, synthetic, holdout, seed=1
    )
    # every synthetic row has both sides at distance 0: all tied, whatever the subsample
    assert result.breakdown["synthetic_data_percentages"]["tied"] == 1.0
    assert result.score == 0.5
    assert result.breakdown["p_value"] == 1.0


@pytest.mark.parametrize("case", ["mixed", "gaussian"])
def test_dcr_share_apt_mode_matches_goldens(case: str) -> None:
    result = DCRShare(mode="apt", n_permutations=99).compute(*_apt_tables(case))
    assert result.score == pytest.approx(
        GOLDENS["cases"][case]["share"]["share"], abs=1e-9
    )
    assert result.breakdown["share"] == result.score


def test_dcr_share_copy_is_near_one_with_tiny_p_value(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, _, holdout = population
    result = DCRShare().compute(real, real.copy(), holdout)
    assert result.score > 0.95
    assert result.breakdown["p_value"] == pytest.approx(1 / 1000)


def test_dcr_share_independent_is_half_and_not_significant(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    result = DCRShare().compute(real, synthetic, holdout)
    assert abs(result.score - 0.5) < 0.06
    assert result.breakdown["p_value"] > 0.05
    assert result.ci[0] < 0.5 < result.ci[1]


def test_dcr_share_small_holdout_is_corrected_and_warned() -> None:
    rng = np.random.default_rng(21)
    real, holdout, synthetic = _mixed(rng, 800), _mixed(rng, 200), _mixed(rng, 400)
    result = DCRShare(n_repeats=5).compute(real, synthetic, holdout, seed=3)
    # APT's share sits near n_real / (n_real + n_holdout) = 0.8, the corrected one near 0.5
    assert abs(result.breakdown["share"] - 0.8) < 0.06
    assert abs(result.score - 0.5) < 0.06
    assert (
        result.breakdown["expected_share_no_memorisation"]["size_corrected_share"]
        == 0.5
    )
    assert abs(result.breakdown["expected_share_no_memorisation"]["share"] - 0.8) < 0.01
    assert result.breakdown["p_value"] > 0.05
    assert any("much smaller" in w for w in result.warnings)
    again = DCRShare(n_repeats=5).compute(real, synthetic, holdout, seed=3)
    assert again.score == result.score
    assert again.breakdown["p_value"] == result.breakdown["p_value"]


def test_dcr_share_test_quotes_numbers_on_the_scale_of_its_score() -> None:
    # a 4:1 training / holdout split (Anonymeter's Adult files are 39,032 / 9,758):
    # the full-table share sits near 0.8 without memorisation, the score near 0.5
    from synthrisk.verdict import judge_result

    rng = np.random.default_rng(21)
    real, holdout = _mixed(rng, 800), _mixed(rng, 200)
    for synthetic, leaks in ((_mixed(rng, 400), False), (real.iloc[:400], True)):
        result = DCRShare().compute(real, synthetic, holdout, seed=3)
        test = result.breakdown["holdout_test"]
        # the excess is estimate - control on the score's equal-size scale
        assert test["control"] == 0.5
        assert test["estimate"] == pytest.approx(0.5 + test["effect"])
        if leaks:
            # every synthetic row copies a training row: all closer to the training side
            assert test["estimate"] == pytest.approx(1.0, abs=0.01)
        else:
            assert abs(test["estimate"] - result.score) < 0.06
        # the full-table numbers are kept, named for what they are
        assert abs(test["share_full_tables"] - (1.0 if leaks else 0.8)) < 0.06
        assert abs(test["expected_full_tables"] - 0.8) < 0.01
        reason = judge_result(result).reason
        full = f"{test['share_full_tables']:.4g} vs {test['expected_full_tables']:.4g} by chance"
        assert full in reason
        assert "where 80 % of the real rows are training rows" in reason
        assert (
            f"{test['estimate']:.4g} of synthetic rows closer to training rows in equal-size units vs 0.5"
            in reason
        )
        assert (
            f"the score, {result.score:.4g}, compares equal-size subsamples" in reason
        )
        assert "on training rows vs" not in reason
    # APT's share is the score in mode="apt": quoted with its own value by chance
    numbers = pd.DataFrame(rng.normal(size=(1400, 2)), columns=["a", "b"])
    apt = DCRShare(mode="apt").compute(
        numbers.iloc[:800], numbers.iloc[1000:], numbers.iloc[800:1000], seed=3
    )
    expected = apt.breakdown["expected_share_no_memorisation"]["share"]
    assert abs(apt.score - 0.8) < 0.06
    assert (
        f"the score, APT's share on the full tables, {apt.score:.4g} vs {expected:.4g} by chance"
        in judge_result(apt).reason
    )
    # at equal sizes the full-table share is the score: nothing to rescale
    same = DCRShare().compute(real.iloc[:200], synthetic, holdout, seed=3)
    test = same.breakdown["holdout_test"]
    assert test["estimate"] == pytest.approx(same.score)
    assert test["estimate"] == test["share_full_tables"]
    assert "compared" not in test


def test_dcr_share_size_correction_matches_direct_subsample_search() -> None:
    """The pooled-list shortcut equals comparing against each subsample directly."""
    rng = np.random.default_rng(4)
    values = rng.integers(0, 4, size=(260, 2)).astype(float)  # many exact ties
    real = pd.DataFrame(values[:180], columns=["a", "b"])
    holdout = pd.DataFrame(values[180:], columns=["a", "b"])
    synthetic = pd.DataFrame(
        rng.integers(0, 4, size=(50, 2)).astype(float), columns=["a", "b"]
    )
    result = DCRShare(mode="apt", n_repeats=3, n_permutations=0).compute(
        real, synthetic, holdout, seed=9
    )
    # recompute by brute force with the metric's own random stream
    from synthrisk.metrics._base import make_context

    rng2 = make_context(
        "dcr_share", seed=9, working_memory=None, backend=None, progress=False
    ).rng
    syn = synthetic.to_numpy()
    dist = np.sqrt(((syn[:, None, :] - values[None, :, :]) ** 2).sum(-1))
    a_full, b_full = dist[:, :180].min(1), dist[:, 180:].min(1)
    expected_apt = np.mean(a_full < b_full) + 180 / 260 * np.mean(a_full == b_full)
    assert result.score == pytest.approx(expected_apt)
    corrected = np.zeros(len(syn))
    for _ in range(3):
        keep = np.sort(rng2.choice(180, size=80, replace=False))
        a = dist[:, keep].min(1)
        corrected += (a < b_full) + 0.5 * (a == b_full)
    assert result.breakdown["size_corrected_share"] == pytest.approx(
        np.mean(corrected / 3)
    )


def test_dcr_share_permutation_null_is_centred_on_size_ratio() -> None:
    rng = np.random.default_rng(8)
    real = pd.DataFrame(rng.normal(size=(300, 2)), columns=["a", "b"])
    holdout = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a", "b"])
    synthetic = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    result = DCRShare(n_permutations=400).compute(real, synthetic, holdout)
    assert result.breakdown["expected_share_no_memorisation"]["share"] == pytest.approx(
        0.75, abs=0.01
    )


# --------------------------------------------------------------------------- NNDR and IMS


def test_nndr_hand_computed() -> None:
    real = pd.DataFrame({"x": [0.0, 1.0]})
    holdout = pd.DataFrame({"x": [0.0, 3.0]})
    synthetic = pd.DataFrame({"x": [0.0]})
    result = NNDR(rank=1, distance="euclidean").compute(real, synthetic, holdout)
    eps = 1e-8
    assert result.breakdown["nndr_training"] == pytest.approx(eps / (1 + eps))
    assert result.breakdown["nndr_holdout"] == pytest.approx(eps / (3 + eps))
    assert result.score == pytest.approx((3 + eps) / (1 + eps))


def test_nndr_copy_vs_independent(population: tuple[pd.DataFrame, ...]) -> None:
    real, synthetic, holdout = population
    copied = NNDR().compute(real, real.copy(), holdout)
    assert copied.breakdown["nndr_training"] < 1e-6
    assert copied.score < 0.01
    fresh = NNDR().compute(real, synthetic, holdout)
    assert 0.3 < fresh.score < 3.0


def test_nndr_few_synthetic_rows_warns(population: tuple[pd.DataFrame, ...]) -> None:
    real, synthetic, holdout = population
    result = NNDR().compute(real, synthetic.iloc[:4], holdout)
    assert result.breakdown["rank"] == 4
    assert any("fewer than rank=10" in w for w in result.warnings)


def test_identical_match_share_exact_rows_including_missing() -> None:
    real = pd.DataFrame({"x": [1.0, np.nan, 0.0], "c": ["a", "b", None]})
    holdout = pd.DataFrame({"x": [1.0, 5.0], "c": ["a", "b"]})
    synthetic = pd.DataFrame(
        {"x": [1.0, np.nan, -0.0, 2.0], "c": ["a", "b", None, "a"]}
    )
    result = IdenticalMatchShare().compute(real, synthetic, holdout)
    assert result.score == pytest.approx(0.75)
    assert result.breakdown["n_matches"] == 3
    assert result.breakdown["identical_match_share_holdout"] == pytest.approx(0.25)
    assert result.breakdown["holdout_rows_matching_real"] == pytest.approx(0.5)
    np.testing.assert_array_equal(result.records["matches_real"].values, [1, 1, 1, 0])


def test_identical_match_share_tolerance_and_properties(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    assert IdenticalMatchShare().compute(real, real.copy(), holdout).score == 1.0
    assert IdenticalMatchShare().compute(real, synthetic, holdout).score == 0.0
    nudged = real.copy()
    nudged["income"] += 1e-9
    assert IdenticalMatchShare().compute(real, nudged).score == 0.0
    assert IdenticalMatchShare(tolerance=1e-6).compute(real, nudged).score == 1.0


def test_copy_test_hand_computed() -> None:
    # training people 0..3 (records 0, 1, 2, 2), holdout people 4, 5 (records 3, 4);
    # the synthetic table holds records 0 and 1 (two unique training people) and two new ones
    test = copy_test(np.array([0, 1, 5, 6]), np.array([0, 1, 2, 2]), np.array([3, 4]))
    # h = [1, 1, 0, 0, 0, 0]; T = 2, E[T] = 4/6 * 2; scale (1 - 2/3) * 4 synthetic rows
    assert test["effect"] == pytest.approx((2 - 4 / 3) / (4 / 3))  # 0.5: two copies / 4
    variance = 4 * 2 / (6 * 5) * (2 * (2 / 3) ** 2 + 4 * (1 / 3) ** 2)
    se = math.sqrt(variance) / (4 / 3)
    assert test["ci"] == pytest.approx([0.5 - 1.959964 * se, 0.5 + 1.959964 * se])
    assert test["chance"] == pytest.approx(2 / 3 * 2 / 4)
    assert test["estimate"] == pytest.approx(0.5)  # 2 of 4 training people found
    assert test["control"] == 0.0
    # a record shared by two training people counts 1/2 for each of them
    shared = copy_test(np.array([2, 7]), np.array([0, 1, 2, 2]), np.array([3, 4]))
    assert shared["estimate"] == pytest.approx(1 / 4)


def test_copy_test_moments_equal_every_relabelling() -> None:
    # the mean and variance are those of all C(10, 6) assignments of the pooled people
    rng = np.random.default_rng(3)
    pooled = rng.integers(0, 5, 10)
    syn = np.array([0, 1, 1, 3, 9])
    n_a = 6
    test = copy_test(syn, pooled[:n_a], pooled[n_a:])
    values = []
    for members in itertools.combinations(range(10), n_a):
        rest = np.setdiff1d(np.arange(10), members)
        relabelled = copy_test(syn, pooled[list(members)], pooled[rest])
        values.append(relabelled["effect"])
    values = np.asarray(values)
    assert values.mean() == pytest.approx(0.0, abs=1e-12)
    se = (test["ci"][1] - test["effect"]) / 1.959963984540054
    assert se == pytest.approx(values.std(ddof=0), rel=1e-9)
    assert se > 0


def test_copy_test_counts_each_copy_of_a_unique_person() -> None:
    # continuous rows never coincide: k copies of training people give exactly k / n_s
    rng = np.random.default_rng(0)
    real = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300)})
    holdout = pd.DataFrame({"x": rng.normal(size=100), "y": rng.normal(size=100)})
    fresh = pd.DataFrame({"x": rng.normal(size=200), "y": rng.normal(size=200)})
    synthetic = pd.concat([fresh.iloc[:190], real.iloc[:10]], ignore_index=True)
    test = (
        IdenticalMatchShare()
        .compute(real, synthetic, holdout)
        .breakdown["holdout_test"]
    )
    assert test["effect"] == pytest.approx(10 / 200)
    assert test["chance"] == pytest.approx(0.75 * 10 / 200)
    null = IdenticalMatchShare().compute(real, fresh, holdout).breakdown["holdout_test"]
    assert null["effect"] == 0.0
    assert null["ci"] == [0.0, 0.0]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("metric", [MembershipKnnProbabilities(), DCRShare(), NNDR()])
def test_holdout_is_required(
    metric: object, population: tuple[pd.DataFrame, ...]
) -> None:
    real, synthetic, _ = population
    with pytest.raises(InputError, match="needs a `holdout` table"):
        metric.compute(real, synthetic)  # type: ignore[attr-defined]


def test_fewer_synthetic_rows_than_k(population: tuple[pd.DataFrame, ...]) -> None:
    real, synthetic, holdout = population
    with pytest.raises(InputError, match=r"has 4 row\(s\), fewer than k=5 neighbours"):
        MembershipKnnProbabilities().compute(real, synthetic.iloc[:4], holdout)


def test_apt_mode_needs_numeric_complete_columns(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    with pytest.raises(
        InputError, match="column 'city' is categorical, but Euclidean distance"
    ):
        DCRShare(mode="apt").compute(real, synthetic, holdout)
    numeric = real[["age", "income"]].copy()
    numeric.loc[3, "age"] = np.nan
    with pytest.raises(
        InputError, match=r"column 'age' of the `real` table has 1 missing value\(s\)"
    ):
        MembershipKnnProbabilities(mode="apt").compute(
            numeric, synthetic[["age", "income"]], holdout[["age", "income"]]
        )


def test_boolean_columns_count_as_numbers_in_apt_mode(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    cols = ["age", "member"]
    as_float = MembershipKnnProbabilities(mode="apt").compute(
        real[cols].astype(float),
        synthetic[cols].astype(float),
        holdout[cols].astype(float),
    )
    as_bool = MembershipKnnProbabilities(mode="apt").compute(
        real[cols], synthetic[cols], holdout[cols]
    )
    assert as_bool.score == as_float.score


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            lambda: MembershipKnnProbabilities(bandwidth=0),
            "`bandwidth` must be a positive finite number, 'median' or None",
        ),
        (
            lambda: MembershipKnnProbabilities(bandwidth="mean"),
            r"`bandwidth` must be one of \['median'\]",
        ),
        (lambda: MembershipKnnProbabilities(k=0), "`k` must be an integer >= 1"),
        (
            lambda: DCRShare(mode="apt", distance="dcr"),
            "`mode='apt'` uses Euclidean distance",
        ),
        (lambda: DCRShare(mode="sdv"), r"`mode` must be one of \['default', 'apt'\]"),
        (
            lambda: DCRShare(n_permutations=-1),
            "`n_permutations` must be an integer >= 0",
        ),
        (lambda: NNDR(distance="cosine"), "`distance` must be one of"),
        (
            lambda: IdenticalMatchShare(tolerance=-1),
            "`tolerance` must be a number >= 0",
        ),
    ],
)
def test_bad_parameters(factory: object, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        factory()  # type: ignore[operator]


# --------------------------------------------------------------------------- in a report


def test_family_runs_in_evaluate_and_round_trips_json(
    population: tuple[pd.DataFrame, ...],
) -> None:
    real, synthetic, holdout = population
    ids = ["membership_knn_probabilities", "dcr_share", "nndr", "identical_match_share"]
    report = evaluate(real, synthetic, holdout, metrics=ids, seed=1)
    again = EvaluationReport.from_json(report.to_json())
    assert [r.metric for r in again.results] == ids
    assert (
        again["dcr_share"].breakdown["p_value"]
        == report["dcr_share"].breakdown["p_value"]
    )
    assert (
        len(report["membership_knn_probabilities"].breakdown["roc_curve"]["fpr"]) <= 201
    )
