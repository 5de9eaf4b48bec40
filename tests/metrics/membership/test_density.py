# SPDX-License-Identifier: BSD-3-Clause
"""DOMIAS, Monte Carlo and collision membership attacks; TPR at low FPR and ε on the kNN attack."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthrisk import (
    DOMIAS,
    CollisionMembership,
    MembershipKnnProbabilities,
    MonteCarloMembership,
)
from synthrisk.metrics.membership.density import _KDE, _prior_logpdf, numeric_embedding
from synthrisk.schema.encoding import MAX_ONE_HOT_LEVELS
from synthrisk.schema.tables import prepare_tables
from synthrisk.stats.mia import auc_control
from synthrisk.stats.ranking import ranking_scores

DATA = Path(__file__).parents[1] / "data"


def _population(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(0, 1, n),
            "y": rng.normal(0, 1, n),
            "age": rng.integers(18, 80, n).astype(float),
            "job": rng.choice(list("abcd"), n),
        }
    )


@pytest.fixture(scope="module")
def splits() -> tuple[pd.DataFrame, ...]:
    pop = _population(4, 4000)
    return (
        pop.iloc[:1000],
        pop.iloc[1000:2000],
        pop.iloc[2000:3000].reset_index(drop=True),
    )


@pytest.mark.parametrize(
    "metric",
    [DOMIAS(), DOMIAS(density="prior"), MonteCarloMembership(), CollisionMembership()],
    ids=["domias-kde", "domias-prior", "monte-carlo", "collision"],
)
def test_null_generator_has_no_edge_and_copies_do(metric, splits) -> None:  # type: ignore[no-untyped-def]
    real, hold, fresh = splits
    null = metric.compute(real, fresh, hold, seed=1)
    assert null.breakdown["control"]["p_value"] > 0.01
    assert abs(null.score - 0.5) < 0.06
    assert set(null.breakdown["tpr_at_fpr"]) == {"0.001", "0.01"}
    copy = metric.compute(real, real.reset_index(drop=True), hold, seed=1)
    # KDE-based DOMIAS is the weakest of these on copies of mixed data, and still significant
    assert copy.score > 0.55
    assert copy.breakdown["control"]["p_value"] < 1e-4
    assert copy.records["member_score"].table == "real"


def test_same_seed_same_result(splits) -> None:  # type: ignore[no-untyped-def]
    real, hold, fresh = splits
    a = DOMIAS().compute(real, fresh, hold, seed=3).to_dict()
    b = DOMIAS().compute(real, fresh, hold, seed=3).to_dict()
    a.pop("seconds")
    b.pop("seconds")
    assert a == b


def test_kde_guard_handles_singular_covariance() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 2))
    data = np.column_stack(
        [x, x[:, 0] * 2.0, np.ones(300)]
    )  # collinear and constant columns
    kde = _KDE(data)
    assert kde.dropped == 2
    assert np.isfinite(kde.logpdf(data[:5])).all()


def test_auc_control_by_hand() -> None:
    out = auc_control(np.array([3.0, 4.0]), np.array([1.0, 2.0]))
    assert out["real"] == 1.0
    assert out["effect"] == 0.5


def test_knn_attack_reports_low_fpr_and_epsilon(splits) -> None:  # type: ignore[no-untyped-def]
    real, hold, _ = splits
    result = MembershipKnnProbabilities().compute(
        real, real.reset_index(drop=True), hold
    )
    assert result.breakdown["tpr_at_fpr"]["0.01"] > 0.5
    assert result.breakdown["empirical_epsilon"]["epsilon_low"] > 1.0


def test_kde_equals_scipy_gaussian_kde() -> None:
    rng = np.random.default_rng(5)
    mixing = rng.normal(size=(5, 5))
    data = rng.normal(size=(700, 5)) @ mixing
    points = 1.5 * rng.normal(size=(400, 5)) @ mixing
    want = stats.gaussian_kde(data.T).logpdf(points.T)
    for memory in (None, 2**-8):  # one block and many
        got = _KDE(data).logpdf(points, memory)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)


@pytest.mark.parametrize("density", ["kde", "prior"])
def test_goldens_from_synthcity_domias(density: str) -> None:
    # synthcity 0.2.12 DomiasMIAKDE / DomiasMIAPrior: the densities p_G and p_R at the
    # attacked rows (all members, then the first 300 population rows; the reference
    # density is fitted on the last 300), and the AUC of p_G / (p_R + 1e-10)
    goldens = json.loads((DATA / "synthcity_goldens.json").read_text())[
        f"domias_{density}"
    ]
    members, population, syn = (
        pd.read_csv(DATA / f"synthcity_domias_{name}.csv").to_numpy()
        for name in ("members", "population", "synthetic")
    )
    points = np.vstack([members, population[:300]])
    log_g = _KDE(syn).logpdf(points)
    if density == "kde":
        log_r = _KDE(population[-300:]).logpdf(points)
    else:  # synthcity fits the prior on all real rows, members included
        log_r = _prior_logpdf(np.vstack([members, population]), points)
    np.testing.assert_allclose(np.exp(log_g), goldens["p_G"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(np.exp(log_r), goldens["p_R"], rtol=1e-9, atol=0)
    ratio = np.exp(log_g) / (np.exp(log_r) + 1e-10)
    auc = ranking_scores(ratio[: len(members)], ratio[len(members) :]).roc_auc
    assert auc == pytest.approx(goldens["aucroc"], abs=1e-12)
    # synthrisk ranks by the exact log ratio instead
    exact = ranking_scores(
        (log_g - log_r)[: len(members)], (log_g - log_r)[len(members) :]
    )
    assert abs(exact.roc_auc - goldens["aucroc"]) < 0.01


def test_prior_uses_features_with_ten_or_more_values() -> None:
    rng = np.random.default_rng(0)
    reference = np.column_stack(
        [rng.normal(size=200), rng.integers(0, 9, 200), rng.integers(0, 10, 200)]
    ).astype(float)
    points = reference[:5]
    want = stats.norm.logpdf(
        points[:, [0, 2]], reference[:, [0, 2]].mean(0), reference[:, [0, 2]].std(0)
    ).sum(axis=1)
    np.testing.assert_allclose(_prior_logpdf(reference, points), want, rtol=1e-12)


@pytest.mark.parametrize("density", ["kde", "prior"])
def test_goldens_from_the_domias_package(density: str) -> None:
    # domias 0.0.5 evaluate_performance on the same tables: members dataset[:400],
    # non-members dataset[400:800], reference dataset[-200:], the prior fitted on all
    # 1,000 real rows; scores p_G / (p_R + 1e-10)
    goldens = json.loads((DATA / "domias_goldens.json").read_text())[density]
    members, population, syn = (
        pd.read_csv(DATA / f"synthcity_domias_{name}.csv").to_numpy()
        for name in ("members", "population", "synthetic")
    )
    dataset = np.vstack([members, population])
    points = dataset[:800]
    p_g = np.exp(_KDE(syn).logpdf(points))
    if density == "kde":
        p_r = np.exp(_KDE(dataset[-200:]).logpdf(points))
    else:
        p_r = np.exp(_prior_logpdf(dataset, points))
    np.testing.assert_allclose(p_g, goldens["p_G"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(p_g / (p_r + 1e-10), goldens["p_rel"], rtol=1e-9, atol=0)
    ratio = p_g / (p_r + 1e-10)
    assert ranking_scores(ratio[:400], ratio[400:]).roc_auc == pytest.approx(
        goldens["aucroc"], abs=1e-12
    )


def _many_levels(seed: int, n: int, n_levels: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    # a 3,000-level column declared categorical (e-mail-like), and one of 40 levels
    return pd.DataFrame(
        {
            "email": [f"user{v}@example.org" for v in rng.integers(0, n_levels, n)],
            "few": rng.integers(0, 40, n).astype(str),
            "age": rng.integers(18, 90, n),
        }
    )


def test_numeric_embedding_bounds_the_levels_of_a_column() -> None:
    real, synthetic, holdout = (_many_levels(s, 1000, 3000) for s in range(3))
    metadata = {"columns": {"email": {"sdtype": "categorical"}}}
    tables = prepare_tables(real, synthetic, holdout, metadata=metadata)
    data = numeric_embedding(tables, ["real", "synthetic", "holdout"])
    # age, at most MAX_ONE_HOT_LEVELS columns for "email", the 40 levels of "few"
    assert all(block.shape[1] == 1 + 40 + MAX_ONE_HOT_LEVELS for block in data.values())
    emails = pd.concat([real, synthetic, holdout])["email"]
    top = emails.value_counts(sort=False)
    for name, frame in (("real", real), ("synthetic", synthetic), ("holdout", holdout)):
        email = data[name][:, 1 : 1 + MAX_ONE_HOT_LEVELS]
        assert np.array_equal(email.sum(axis=1), np.ones(len(frame)))
        # the "other" column holds the rows of every level but the 99 most frequent
        kept = set(top.sort_values(ascending=False, kind="stable").index[:99])
        np.testing.assert_array_equal(email[:, -1], ~frame["email"].isin(kept))


def test_numeric_embedding_keeps_every_level_of_columns_within_the_bound() -> None:
    real, synthetic, holdout = (_many_levels(s, 300, 60) for s in range(3))
    tables = prepare_tables(real, synthetic, holdout)
    data = numeric_embedding(tables, ["real", "synthetic", "holdout"])
    encoded = tables.encoded("real")
    n_levels = [len(tables.encoder.categories[c]) for c in encoded.categorical_names]
    assert data["real"].shape[1] == 1 + sum(n_levels)
    # one column per level, in code order
    for c, start in ((0, 1), (1, 1 + n_levels[0])):
        block = data["real"][:, start : start + n_levels[c]]
        np.testing.assert_array_equal(block.argmax(axis=1), encoded.codes[:, c])
