# SPDX-License-Identifier: BSD-3-Clause
"""Vulnerable people: the tail test by hand, Tarone's count, leaks caught, new people pass."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthrisk import evaluate
from synthrisk.datasets.calibration import coarse_data, continuous_data
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import METRICS
from synthrisk.metrics.membership import VulnerablePeople
from synthrisk.metrics.membership.vulnerable import tail_test, tarone_count


def _thirds(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, ...]:
    order = np.random.default_rng(seed).permutation(len(frame))
    n = len(frame) // 3
    return tuple(
        frame.iloc[order[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(3)
    )


def test_tail_test_by_hand() -> None:
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    training = np.array([True, True, False, False, True, False])
    # the top third: two people, both training; P(X >= 2), X ~ H(6, 3, 2) = C(3,2)/C(6,2)
    out = tail_test(scores, training, 1 / 3)
    assert out["top"] == 2
    assert out["training_in_top"] == 2
    assert out["expected"] == pytest.approx(1.0)
    assert out["excess"] == pytest.approx(1.0)
    assert out["p_value"] == pytest.approx(3 / 15)
    assert out["min_p_value"] == pytest.approx(3 / 15)
    # the whole stratum: nothing to learn, p = 1
    assert tail_test(scores, training, 0.99)["p_value"] == pytest.approx(1.0)


def test_tail_test_takes_ties_whole() -> None:
    scores = np.array([1.0, 1.0, 1.0, 0.0])
    training = np.array([True, False, True, False])
    out = tail_test(scores, training, 0.25)
    assert out["top"] == 3  # the cut falls in a tie: all three tied people are in
    assert out["training_in_top"] == 2
    assert out["p_value"] == pytest.approx(stats.hypergeom.sf(1, 4, 2, 3))


def test_tail_test_is_exact_under_exchangeable_labels() -> None:
    """Shuffled labels: the p-value is super-uniform (P(p <= a) <= a)."""
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=60), 1)  # with ties
    p = np.array(
        [
            tail_test(scores, rng.permutation(np.arange(60) < 25), 0.1)["p_value"]
            for _ in range(4000)
        ]
    )
    for a in (0.01, 0.05, 0.2):
        assert (p <= a).mean() <= a + 0.01


@pytest.mark.parametrize(
    ("min_p", "expected"),
    [
        ([1e-5, 0.5, 0.5, 0.5], 1),  # one test can be significant: count it alone
        ([1e-4, 1e-4, 0.003, 0.9], 2),  # at 0.005 / 2 two can be
        ([1e-9] * 5, 5),
        ([0.9, 0.9], 1),  # none can: at least one
    ],
)
def test_tarone_count(min_p: list[float], expected: int) -> None:
    assert tarone_count(min_p, 0.005) == expected


@pytest.mark.parametrize("make", [coarse_data, continuous_data])
def test_new_people_pass(make) -> None:
    real, holdout, fresh = _thirds(make(4500, np.random.default_rng(5)), 5)
    result = VulnerablePeople().compute(real, fresh, holdout, seed=0)
    test = result.breakdown["holdout_test"]
    assert test["p_value"] > 0.01
    assert test["decision"] == "significance"
    assert test["unit"] == "people"
    # every stratum is attacked by the four attacks, with low-FPR rates and bounds
    strata = result.breakdown["strata"]
    assert [s["stratum"] for s in strata] == ["most isolated 1%", "most isolated 5%"]
    for entry in strata:
        assert list(entry["attacks"]) == ["dcr", "gan_leaks", "monte_carlo", "domias"]
        for block in entry["attacks"].values():
            for fpr in ("0.001", "0.01"):
                rate = block["tpr_at_fpr"][fpr]
                assert rate["ci"][0] <= rate["tpr"] <= rate["ci"][1]
    assert "privacy onion" in result.breakdown["note"]


def _near_copies_of_the_isolated(
    real: pd.DataFrame, synthetic: pd.DataFrame, share: float, noise: float
) -> pd.DataFrame:
    """``share`` of the synthetic rows replaced by noisy copies of the most isolated real rows.

    Isolation and noise on the numeric columns; the copies keep the category.
    """
    numeric = real.select_dtypes("number")
    z = (numeric - numeric.mean()) / numeric.std()
    # isolation by brute force on standardised columns (missing values -> 0)
    x = z.fillna(0.0).to_numpy()
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))
    np.fill_diagonal(d, np.inf)
    isolated = np.argsort(-d.min(axis=1))[: round(share * len(synthetic))]
    rng = np.random.default_rng(1)
    copies = real.iloc[isolated].reset_index(drop=True)
    moved = (
        rng.normal(0, noise, (len(copies), numeric.shape[1])) * numeric.std().to_numpy()
    )
    copies[numeric.columns] = copies[numeric.columns] + moved
    out = synthetic.copy()
    out.iloc[: len(copies)] = copies[out.columns].to_numpy()
    return out


def test_noisy_copies_of_isolated_training_people_fail() -> None:
    real, holdout, fresh = _thirds(continuous_data(4500, np.random.default_rng(2)), 2)
    real = real.fillna(real.mean(numeric_only=True))
    # the holdout filled too: with missing cells in the holdout only, its people were
    # the most isolated (a missing cell counted a whole range apart) and the strata
    # held few training people besides the copies (p 2e-9, 11 people in excess, before
    # the isolation geometry read missing cells as typical values)
    hold = holdout.fillna(holdout.mean(numeric_only=True))
    leaky = _near_copies_of_the_isolated(real, fresh, 0.02, 0.1)
    result = VulnerablePeople().compute(real, leaky, hold, seed=0)
    test = result.breakdown["holdout_test"]
    # measured: p 0.0031, 6.1 training people in excess, interval [3.0, 6.1]
    assert test["p_value"] < 0.01
    assert test["effect"] > 5
    assert test["ci"][0] > 0
    # the same copies of holdout people are no excess of training people
    mirrored = _near_copies_of_the_isolated(hold, fresh, 0.02, 0.1)
    control = VulnerablePeople().compute(real, mirrored, hold, seed=0)
    assert control.breakdown["holdout_test"]["p_value"] == pytest.approx(1.0)


def test_a_copy_of_the_training_table_fails_every_attack() -> None:
    real, holdout, _ = _thirds(continuous_data(3000, np.random.default_rng(4)), 4)
    result = VulnerablePeople(attacks=["dcr", "monte_carlo"]).compute(
        real, real.copy(), holdout, seed=0
    )
    for entry in result.breakdown["strata"]:
        dcr = entry["attacks"]["dcr"]
        assert dcr["auc"]["real"] == pytest.approx(1.0)
        # every training person of the stratum is flagged at FPR 0.1 % (no holdout
        # person is at distance 0): TPR 1, its exact lower bound below it
        rate = dcr["tpr_at_fpr"]["0.001"]
        assert rate["tpr"] == pytest.approx(1.0)
        n = entry["training_people"]
        assert rate["ci"][0] == pytest.approx(
            0.025 ** (1 / n)
        )  # Clopper–Pearson, k = n
        # Monte Carlo counts copies within the stratum's median distance: near 1
        assert entry["attacks"]["monte_carlo"]["auc"]["real"] > 0.95
    assert result.breakdown["holdout_test"]["p_value"] < 1e-20


def test_same_seed_same_result() -> None:
    real, holdout, fresh = _thirds(coarse_data(1800, np.random.default_rng(7)), 7)
    a = VulnerablePeople().compute(real, fresh, holdout, seed=3)
    b = VulnerablePeople().compute(real, fresh, holdout, seed=3)
    assert json.dumps(a.breakdown, sort_keys=True, default=str) == json.dumps(
        b.breakdown, sort_keys=True, default=str
    )


def test_too_few_people_is_a_clear_error_and_a_skip_in_a_default_run() -> None:
    real, holdout, fresh = _thirds(continuous_data(150, np.random.default_rng(1)), 1)
    with pytest.raises(InputError, match="cannot be tested at this size"):
        VulnerablePeople().compute(real, fresh, holdout, seed=0)
    report = evaluate(real, fresh, holdout, metrics=None, seed=0)
    result = report["vulnerable_people"]
    assert result.status == "skipped"
    assert "cannot be tested at this size" in (result.reason or "")


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="attacks"):
        VulnerablePeople(attacks=["nope"])
    with pytest.raises(ParameterError, match="tails"):
        VulnerablePeople(tails=[1.5])


def test_registered_gating_and_in_the_default_run() -> None:
    cls = METRICS["vulnerable_people"]
    assert cls.runs_by_default
    assert cls.requires_holdout
    from synthrisk.verdict import DEFAULT_TOLERANCES

    tolerance = DEFAULT_TOLERANCES["vulnerable_people"]
    assert tolerance.value == 0
    assert tolerance.decision == "significance"


def test_detectable_tail_by_brute_force() -> None:
    from synthrisk.metrics.membership.vulnerable import _detectable_tail

    # four of forty, every one training: p = C(20,4)/C(40,4) = 0.053, never below 0.05
    assert _detectable_tail(40, 20, 4, 0.05) is None
    n, n_train, m, level = 400, 200, 40, 0.005
    k = _detectable_tail(n, n_train, m, level)
    assert k is not None

    def power(extra: int) -> float:
        counts = np.arange(0, m + 1)
        weights = stats.hypergeom.pmf(counts, n, n_train, m)
        shifted = np.minimum(counts + extra, m)
        return float(
            weights[stats.hypergeom.sf(shifted - 1, n, n_train, m) < level].sum()
        )

    assert power(k) >= 0.8
    assert power(k - 1) < 0.8
