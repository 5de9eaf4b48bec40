# SPDX-License-Identifier: BSD-3-Clause
"""APT 0.2.1's numbers to 1e-12 on data full of duplicates and ties.

Goldens recorded by ``scripts/record_goldens_apt_ties.py``. On these tables the exact
arithmetic of synthrisk's native metrics gives other numbers (the last test shows it):
only scikit-learn's rounding, which ``synthrisk.compat.apt`` and ``mode="apt"``
reproduce, gives APT's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.compat.apt import (
    ArrayDataset,
    DatasetAttackConfigMembershipKnnProbabilities,
    DatasetAttackMembershipKnnProbabilities,
    DatasetAttackWholeDatasetKnnDistance,
)
from synthrisk.metrics import DCRShare, MembershipKnnProbabilities

DATA = Path(__file__).parent / "data" / "apt_ties"
GOLDENS = json.loads((DATA / "goldens.json").read_text(encoding="utf-8"))
CASES = sorted(GOLDENS["cases"])
TOL = 1e-12


def _frames(case: str) -> dict[str, pd.DataFrame]:
    return {
        n: pd.read_csv(DATA / f"{case}_{n}.csv")
        for n in ("members", "non_members", "synthetic")
    }


def _datasets(case: str) -> list[ArrayDataset]:
    frames = _frames(case)
    return [
        ArrayDataset(frames[n].to_numpy())
        for n in ("members", "non_members", "synthetic")
    ]


def test_the_cases_are_full_of_ties() -> None:
    for case in CASES:
        assert GOLDENS["cases"][case]["share"]["ties"] >= 50, case
    algorithms = {GOLDENS["cases"][c]["share"]["algorithm"] for c in CASES}
    assert algorithms == {"brute", "kd_tree"}


@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("case", CASES)
def test_compat_knn_probabilities(case: str, k: int) -> None:
    golden = GOLDENS["cases"][case][f"knn_k{k}"]
    score = DatasetAttackMembershipKnnProbabilities(
        *_datasets(case),
        DatasetAttackConfigMembershipKnnProbabilities(k=k),
        "golden",
        [],
    ).assess_privacy()
    assert abs(score.roc_auc_score - golden["roc_auc_score"]) <= TOL
    assert abs(score.average_precision_score - golden["average_precision_score"]) <= TOL
    np.testing.assert_allclose(
        score.result.member_probabilities,
        golden["member_probabilities"],
        rtol=0,
        atol=TOL,
    )
    np.testing.assert_allclose(
        score.result.non_member_probabilities, golden["non_member_probabilities"],
        rtol=0, atol=TOL,
    )  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_compat_share(case: str) -> None:
    golden = GOLDENS["cases"][case]["share"]
    attack = DatasetAttackWholeDatasetKnnDistance(
        *_datasets(case), dataset_name="golden"
    )
    d_members, d_non_members = attack.calculate_distances()
    np.testing.assert_array_equal(d_members.ravel(), golden["distances_members"])
    np.testing.assert_array_equal(
        d_non_members.ravel(), golden["distances_non_members"]
    )
    assert abs(attack.assess_privacy().share - golden["share"]) <= TOL


@pytest.mark.parametrize("case", CASES)
def test_native_metrics_in_apt_mode(case: str) -> None:
    frames = _frames(case)
    tables = (frames["members"], frames["synthetic"], frames["non_members"])
    golden = GOLDENS["cases"][case]
    knn = MembershipKnnProbabilities(k=5, mode="apt").compute(*tables)
    assert abs(knn.score - golden["knn_k5"]["roc_auc_score"]) <= TOL
    ap = knn.breakdown["average_precision_score"]
    assert abs(ap - golden["knn_k5"]["average_precision_score"]) <= TOL
    share = DCRShare(mode="apt", n_permutations=0).compute(*tables)
    assert abs(share.score - golden["share"]["share"]) <= TOL


def test_exact_arithmetic_gives_other_numbers_on_ties() -> None:
    """The goldens can fail: exact differences break the ties differently."""
    differs = []
    for case in CASES:
        frames = _frames(case)
        tables = (frames["members"], frames["synthetic"], frames["non_members"])
        exact = DCRShare(distance="euclidean", n_permutations=0).compute(*tables)
        differs.append(
            exact.breakdown["share"] != GOLDENS["cases"][case]["share"]["share"]
        )
    assert any(differs)
