# SPDX-License-Identifier: BSD-3-Clause
"""TPR at low FPR and the Clopper–Pearson empirical ε."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from synthrisk.stats.mia import clopper_pearson, empirical_epsilon, tpr_at_fpr


def test_tpr_at_fpr_by_hand() -> None:
    members = np.array([10.0, 9.0, 8.0, 1.0])
    non_members = np.array([7.0] + [0.0] * 999)
    out = tpr_at_fpr(members, non_members, fprs=(0.0, 0.001, 0.5))
    assert out["0.0"] == 0.75  # threshold 8: no non-member above
    assert (
        out["0.001"] == 1.0
    )  # one false positive (7) allowed: threshold 1 catches every member
    assert out["0.5"] == 1.0


def test_clopper_pearson_matches_scipy() -> None:
    for k, n in [(0, 10), (3, 10), (10, 10), (57, 400)]:
        low, high = clopper_pearson(np.array([k]), np.array([n]), 0.95)
        ci = stats.binomtest(k, n, p=max(k / n, 1e-9) if k < n else 0.5).proportion_ci(
            0.95
        )
        assert low[0] == pytest.approx(ci.low, abs=1e-12)
        assert high[0] == pytest.approx(ci.high, abs=1e-12)


def test_empirical_epsilon_of_a_perfect_and_a_useless_attack() -> None:
    rng = np.random.default_rng(0)
    perfect = empirical_epsilon(rng.normal(10, 1, 2000), rng.normal(0, 1, 2000), seed=1)
    # TPR ≈ 1 and FPR = 0 on 1800 test rows: the bound is log(TPR_low / FPR_high) with FPR_high ≈ 3.7/n
    assert perfect["epsilon_low"] is not None
    assert perfect["epsilon_low"] > 5.0
    useless = empirical_epsilon(rng.normal(0, 1, 2000), rng.normal(0, 1, 2000), seed=1)
    assert useless["epsilon_low"] == pytest.approx(0.0, abs=0.15)


def test_empirical_epsilon_recovers_a_known_ratio() -> None:
    # a randomised-response-like attack with TPR = e^1 * FPR at one threshold
    n = 200_000
    rng = np.random.default_rng(3)
    fpr = 0.05
    members = (rng.random(n) < fpr * math.e).astype(float)
    non_members = (rng.random(n) < fpr).astype(float)
    out = empirical_epsilon(members, non_members, seed=0)
    assert out["epsilon_low"] < 1.0 < out["epsilon_high"]
    assert out["epsilon_low"] > 0.9


def _brute_tpr_at_fpr(
    members: np.ndarray, non_members: np.ndarray, target: float
) -> float:
    """Every threshold (the scores and inf) tried: the definition."""
    best = 0.0
    for t in np.r_[members, non_members, np.inf]:
        if np.mean(non_members >= t) <= target + 1e-15:
            best = max(best, float(np.mean(members >= t)))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_tpr_at_fpr_equals_every_threshold_tried(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n = rng.integers(1, 60, 2)
    levels = rng.integers(2, 12)  # ties within and across the two sides
    members = rng.integers(0, levels, m).astype(float) + (seed % 2) * rng.random(m)
    non_members = rng.integers(0, levels, n).astype(float)
    targets = (0.0, 0.001, 0.01, 1 / n, 2 / n, 0.3, 1.0)
    got = tpr_at_fpr(members, non_members, fprs=targets)
    for target in targets:
        assert got[str(target)] == _brute_tpr_at_fpr(members, non_members, target)


def _epsilon_pooled_and_shuffled(
    member: np.ndarray, non_member: np.ndarray, seed: int
) -> dict[str, object]:
    """TAPAS' procedure as written first: every record pooled, shuffled and split."""
    from synthrisk.stats.mia import _bounds_of_counts

    def _epsilon_bounds(
        pos: np.ndarray,
        neg: np.ndarray,
        thresholds: np.ndarray,
        level: float,
        inverse: bool,
    ) -> tuple[np.ndarray, np.ndarray]:
        if inverse:
            pos, neg, thresholds = -neg, -pos, -thresholds
        p, q = np.sort(pos), np.sort(neg)
        tp = p.size - np.searchsorted(p, thresholds, side="left")
        fp = q.size - np.searchsorted(q, thresholds, side="left")
        return _bounds_of_counts(tp, p.size, fp, q.size, level)

    scores = np.r_[member, non_member]
    labels = np.r_[np.ones(member.size, bool), np.zeros(non_member.size, bool)]
    order = np.random.default_rng(seed).permutation(scores.size)
    scores, labels = scores[order], labels[order]
    split = int(0.1 * scores.size)
    val_s, val_l = scores[:split], labels[:split]
    best: tuple[float, float | None, bool] = (-1.0, None, False)
    if val_l.any() and (~val_l).any():
        thresholds = np.unique(val_s)
        for inverse in (False, True):
            low, _ = _epsilon_bounds(
                val_s[val_l], val_s[~val_l], thresholds, 0.9, inverse
            )
            low = np.where(np.isnan(low), -1.0, low)
            i = int(np.argmax(low))
            if low[i] > best[0]:
                best = (float(low[i]), float(thresholds[i]), inverse)
    if best[1] is None:
        return {"threshold": None}
    test_s, test_l = scores[split:], labels[split:]
    low, high = _epsilon_bounds(
        test_s[test_l], test_s[~test_l], np.array([best[1]]), 0.95, best[2]
    )
    return {
        "epsilon_low": float(low[0]) if math.isfinite(low[0]) else None,
        "epsilon_high": float(high[0]) if math.isfinite(high[0]) else None,
        "threshold": best[1],
        "inverse": best[2],
    }


@pytest.mark.parametrize("block", [1, 3, 1 << 16])
@pytest.mark.parametrize("case", range(12))
def test_empirical_epsilon_counts_the_test_rows_without_pooling_them(
    monkeypatch: pytest.MonkeyPatch, case: int, block: int
) -> None:
    # the test rows' counts are the whole sides' less the validation rows': the same
    # bounds as pooling, shuffling and splitting every record (ties, both directions,
    # missing scores)
    rng = np.random.default_rng(case)
    m, n = (int(v) for v in rng.integers(20, 400, 2))
    if case % 3 == 0:  # members score low: the inverse direction wins
        member, non_member = rng.normal(-1, 1, m), rng.normal(0, 1, n)
    elif case % 3 == 1:  # few distinct scores, ties across the sides
        member = rng.integers(0, 4, m).astype(float)
        non_member = rng.integers(0, 3, n).astype(float)
    else:
        member, non_member = rng.normal(0.5, 1, m), rng.normal(0, 1, n)
    if case >= 9:
        member[rng.integers(0, m, 3)] = np.nan
    import synthrisk.stats.mia as mia

    want = _epsilon_pooled_and_shuffled(member, non_member, seed=case)
    monkeypatch.setattr(mia, "_THRESHOLD_BLOCK", block)
    got = empirical_epsilon(member, non_member, seed=case)
    assert got["threshold"] == want["threshold"]
    if want["threshold"] is not None:
        assert got["epsilon_low"] == want["epsilon_low"]
        assert got["epsilon_high"] == want["epsilon_high"]
        assert (got["direction"] == "score <= threshold is non-member") == want[
            "inverse"
        ]
        assert got["n_test"] == m + n - int(0.1 * (m + n))
