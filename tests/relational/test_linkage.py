# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from synthrisk.datasets.relational import load_bank
from synthrisk.exceptions import ParameterError
from synthrisk.relational import LinkageResult, evaluate_tables, linkage_attack
from synthrisk.relational.linkage import chance_ratio
from synthrisk.stats.exact import fisher_greater_p

META = {
    "columns": {
        "age": {"sdtype": "numerical"},
        "kids.n_rows": {"sdtype": "numerical"},
        "kids.x.mean": {"sdtype": "numerical"},
        "kids.y.mean": {"sdtype": "numerical"},
    }
}
ROOT = ["age"]
CHILD = ["kids.n_rows", "kids.x.mean", "kids.y.mean"]


def _people(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "kids.n_rows": rng.integers(1, 6, n).astype(float),
            "kids.x.mean": rng.normal(size=n),
            "kids.y.mean": rng.normal(size=n),
        }
    )


def _run(
    synthetic: pd.DataFrame, real: pd.DataFrame, holdout: pd.DataFrame
) -> LinkageResult:
    return linkage_attack(
        real, synthetic, holdout, root_columns=ROOT, child_columns=CHILD, metadata=META
    )


def test_linkage_null_links_no_more_training_than_holdout_people() -> None:
    rng = np.random.default_rng(0)
    real, holdout, synthetic = _people(400, rng), _people(200, rng), _people(400, rng)
    result = _run(synthetic, real, holdout)
    assert result.level == "pass"
    assert result.p_value > 0.05
    for attack in result.attacks:
        assert attack.n_training == 400
        assert attack.n_holdout == 200
        assert attack.linked_training / 400 < 0.05


def test_linkage_finds_people_copied_with_their_children() -> None:
    rng = np.random.default_rng(1)
    real, holdout, synthetic = _people(400, rng), _people(200, rng), _people(400, rng)
    synthetic.iloc[:20] = real.iloc[:20].to_numpy()
    result = _run(synthetic, real, holdout)
    by_name = {a.name: a for a in result.attacks}
    assert by_name["root_to_children"].linked_training >= 20
    assert by_name["root_to_children"].linked_holdout == 0
    # exact: Boschloo's p of 20/400 against 0/200 is far below the level
    assert by_name["root_to_children"].p_value < 1e-3
    assert result.level == "fail"
    assert result.method == "westfall_young_min_p"
    # both attacks link the same 20 people: combined by relabelling, they cost one
    # test (Fisher's p of 20/400 against 0/200, 2.6e-4), not Bonferroni's two
    fisher = fisher_greater_p(20, 400, 0, 200)
    assert fisher == pytest.approx(math.comb(400, 20) / math.comb(600, 20))
    fine = linkage_attack(
        real,
        synthetic,
        holdout,
        root_columns=ROOT,
        child_columns=CHILD,
        metadata=META,
        n_resamples=99_999,
    )
    assert [a.linked_training for a in fine.attacks] == [20, 20]
    assert fine.n_resamples == 99_999
    assert 0.7 * fisher < fine.p_value < 1.3 * fisher < 2 * fisher


def test_linkage_finds_children_moved_to_new_parents_by_history_only() -> None:
    rng = np.random.default_rng(2)
    real, holdout, synthetic = _people(400, rng), _people(200, rng), _people(400, rng)
    synthetic.loc[:19, CHILD] = real.loc[:19, CHILD].to_numpy()
    by_name = {a.name: a for a in _run(synthetic, real, holdout).attacks}
    assert by_name["history"].linked_training >= 20
    assert by_name["root_to_children"].linked_training < 10


def test_people_without_children_or_sharing_a_history_are_not_targets() -> None:
    rng = np.random.default_rng(3)
    real, holdout, synthetic = _people(50, rng), _people(30, rng), _people(50, rng)
    real.loc[:4, CHILD] = [0.0, np.nan, np.nan]  # five people without children
    holdout.loc[0, CHILD] = holdout.loc[1, CHILD].to_numpy()  # a shared history
    result = _run(synthetic, real, holdout)
    assert result.attacks[0].n_training == 45
    assert result.attacks[0].n_holdout == 28


def test_linkage_result_round_trips_through_json() -> None:
    rng = np.random.default_rng(4)
    real, holdout, synthetic = _people(60, rng), _people(30, rng), _people(60, rng)
    result = _run(synthetic, real, holdout)
    again = LinkageResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    assert (again.method, again.n_resamples) == ("westfall_young_min_p", 9_999)
    # results written before the method was recorded were combined by Bonferroni
    old = {
        k: v for k, v in result.to_dict().items() if k not in {"method", "n_resamples"}
    }
    assert LinkageResult.from_dict(old).method == "bonferroni"
    attacks = result.to_dict()["attacks"]
    assert isinstance(attacks, list)
    first = attacks[0]
    assert isinstance(first, dict)
    assert first["excess_ci"] is not None


def test_match_ratio_is_what_chance_reaches_unless_given() -> None:
    rng = np.random.default_rng(5)
    real, holdout, synthetic = _people(300, rng), _people(150, rng), _people(300, rng)
    derived = _run(synthetic, real, holdout)
    assert 0 < derived.match_ratio < 0.5
    loose = linkage_attack(
        real,
        synthetic,
        holdout,
        root_columns=ROOT,
        child_columns=CHILD,
        metadata=META,
        match_ratio=0.5,
    )
    assert loose.match_ratio == 0.5
    n_derived = sum(a.linked_training + a.linked_holdout for a in derived.attacks)
    n_loose = sum(a.linked_training + a.linked_holdout for a in loose.attacks)
    assert n_loose > n_derived


def test_chance_ratio_takes_the_low_quantile_of_stranger_ratios() -> None:
    isolation = np.array([1.0, 2.0, 3.0, 0.0, 1.0])
    second = np.array([2.0, 4.0, 3.0, 1.0, np.inf])
    # eligible ratios 0.5, 0.5, 1.0: the lowest, capped at 0.5
    assert chance_ratio(isolation, second, quantile=0.001) == 0.5
    assert chance_ratio(np.array([1.0, 1.0]), np.array([10.0, 5.0])) == 0.1
    assert chance_ratio(np.array([0.0]), np.array([1.0])) == 0.0


def test_linkage_combination_is_seeded() -> None:
    rng = np.random.default_rng(6)
    real, holdout, synthetic = _people(300, rng), _people(100, rng), _people(300, rng)
    synthetic.iloc[:8] = real.iloc[:8].to_numpy()  # a few copies: p near the level

    def run(seed: int) -> LinkageResult:
        return linkage_attack(
            real,
            synthetic,
            holdout,
            root_columns=ROOT,
            child_columns=CHILD,
            metadata=META,
            seed=seed,
            n_resamples=999,
        )

    first = run(1)
    assert json.dumps(first.to_dict()) == json.dumps(run(1).to_dict())
    assert 1 / 1000 < first.p_value < 0.5
    # the attacks are the same for every seed; only the relabellings change
    other = run(2)
    assert other.attacks == first.attacks
    assert other.p_value != first.p_value
    with pytest.raises(ParameterError, match="n_resamples"):
        linkage_attack(
            real,
            synthetic,
            holdout,
            root_columns=ROOT,
            child_columns=CHILD,
            metadata=META,
            n_resamples=0,
        )


def test_strong_leaks_report_bonferronis_share_below_the_resampling() -> None:
    rng = np.random.default_rng(8)
    real, holdout, synthetic = _people(400, rng), _people(200, rng), _people(400, rng)
    synthetic.iloc[:150] = real.iloc[:150].to_numpy()
    result = _run(synthetic, real, holdout)
    fisher = min(
        fisher_greater_p(a.linked_training, 400, a.linked_holdout, 200)
        for a in result.attacks
    )
    # far below 1 / 10,000: Bonferroni over the two attacks on a thousandth of the level
    assert fisher < 1e-20
    assert result.p_value == pytest.approx(2 * fisher / 0.001)


def test_five_percent_whole_copies_of_600_customers_fail_the_linkage() -> None:
    # 480 training and 120 holdout customers, 24 copied with their accounts and
    # transactions: five attacks (three on the whole person, two on the transactions
    # subtree) link largely the same 24 people; Bonferroni over five gave p = 0.0104
    bank = load_bank(n_customers=600, seed=3)
    report = evaluate_tables(
        bank.real,
        bank.synthetic["whole_copies"],
        bank.holdout,
        metadata=bank.metadata,
        table_metrics=[],
    )
    linkage = report.linkage
    assert [a.label for a in linkage.attacks] == [
        "root_to_children",
        "history",
        "row_set",
        "history · transactions",
        "row_set · transactions",
    ]
    smallest = min(a.p_value for a in linkage.attacks)
    assert 5 * smallest > 0.01  # Bonferroni passes ...
    assert linkage.p_value < 0.01  # ... the relabelling does not
    assert linkage.level == "fail"
