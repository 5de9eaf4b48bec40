# SPDX-License-Identifier: BSD-3-Clause
"""Linkability risk.

The 4-row toy and the link-counting cases are ported from Anonymeter's
``tests/test_linkability_evaluator.py`` (The Clear BSD License, Copyright (c) 2022
Anonos IP LLC).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthrisk import LinkabilityRisk, evaluate
from synthrisk.exceptions import ParameterError, SchemaMismatchError
from synthrisk.metrics.attacks.linkability import (
    count_links,
    link_depths,
    linkability_attack,
    random_subsets,
)
from synthrisk.schema import prepare_tables

ORI = pd.DataFrame({"col0": [0, 0, 4, 0], "col1": [0, 1, 9, 4]})
SYN = pd.DataFrame({"col0": [0, 1, 4, 9], "col1": [0, 1, 4, 9]})
AUX = [["col0"], ["col1"]]

TOY = [
    (1, 0, 0.25, (0.25, 0.25)),
    (2, 0, 1.0, (1.0, 1.0)),
    (3, 0, 1.0, (1.0, 1.0)),
    (4, 0, 1.0, (1.0, 1.0)),
    (1, 0.95, 0.3725, (0.045587, 0.699358)),
    (2, 0.95, 0.7551, (0.5102, 1.0)),
]


def people(n: int, seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": np.round(g.normal(0, 1, n), 3),
            "x2": np.round(g.normal(0, 1, n), 3),
            "c1": g.choice(list("abcd"), n),
            "c2": g.choice(list("uvw"), n),
        }
    )


@pytest.mark.parametrize("compat", [None, "anonymeter-1.1"])
@pytest.mark.parametrize(("k", "level", "risk", "ci"), TOY)
def test_toy_risks_equal_anonymeter(
    k: int, level: float, risk: float, ci: tuple, compat: str | None
) -> None:
    out = LinkabilityRisk(
        aux_cols=AUX, n_neighbors=k, confidence_level=level, compat=compat
    ).compute(ORI, SYN)
    assert out.score == pytest.approx(risk, abs=1e-4)
    assert out.ci == pytest.approx(ci, abs=1e-4)
    assert out.breakdown["n_attacks"]["main"] == 4  # type: ignore[index]


@pytest.mark.parametrize(("k", "level", "risk", "ci"), TOY)
def test_fewer_neighbors_are_recounted_without_searching_again(
    k: int, level: float, risk: float, ci: tuple
) -> None:
    tables = prepare_tables(ORI, SYN)
    result = linkability_attack(
        tables, aux_cols=AUX, n_neighbors=4, rng=np.random.default_rng(0)
    )
    got = result.estimate(confidence_level=level, n_neighbors=k).risk()
    assert got.value == pytest.approx(risk, abs=1e-4)
    assert got.ci == pytest.approx(ci, abs=1e-4)


@pytest.mark.parametrize("k", [5, 45])
def test_more_neighbors_than_computed_is_an_error(k: int) -> None:
    tables = prepare_tables(ORI, SYN)
    result = linkability_attack(
        tables, aux_cols=AUX, n_neighbors=4, rng=np.random.default_rng(0)
    )
    with pytest.raises(
        ParameterError,
        match=r"`n_neighbors` must be at most the number of neighbours computed \(4\)",
    ):
        result.estimate(n_neighbors=k)


def test_recount_equals_a_search_with_fewer_neighbors() -> None:
    real, syn, hold = people(300, 1), people(300, 2), people(200, 3)
    tables = prepare_tables(real, syn, hold)
    aux = [["x1", "c1"], ["x2", "c2"]]
    wide = linkability_attack(
        tables, aux_cols=aux, n_neighbors=5, rng=np.random.default_rng(7)
    )
    narrow = linkability_attack(
        tables, aux_cols=aux, n_neighbors=2, rng=np.random.default_rng(7)
    )
    np.testing.assert_array_equal(wide.main_a[:, :2], narrow.main_a)
    np.testing.assert_array_equal(
        wide.links("main", n_neighbors=2), narrow.links("main")
    )
    np.testing.assert_array_equal(
        wide.links("control", n_neighbors=2), narrow.links("control")
    )


@pytest.mark.parametrize(
    ("k", "idx_0", "idx_1", "expected"),
    [
        (1, [[0], [1], [2], [3]], [[4], [5], [6], [7]], [False] * 4),
        (1, [[0], [1], [2], [3]], [[4], [1], [6], [7]], [False, True, False, False]),
        (1, [[0], [1], [6], [3]], [[4], [1], [6], [7]], [False, True, True, False]),
        (1, [[0, 1], [2, 3]], [[1, 0], [3, 2]], [False, False]),
        (2, [[0, 1], [2, 3]], [[1, 0], [3, 2]], [True, True]),
    ],
)
def test_count_links(k: int, idx_0: list, idx_1: list, expected: list) -> None:
    assert count_links(np.array(idx_0), np.array(idx_1), k).tolist() == expected


def test_count_links_with_many_neighbors() -> None:
    a = np.arange(200).reshape(2, 100)
    b = np.stack([np.arange(100, 200), np.arange(300, 400)])
    assert count_links(a, b, 100).tolist() == [False, False]
    b[1, 50] = 150
    assert count_links(a, b, 100).tolist() == [False, True]


def test_link_depths_give_count_links_for_every_k() -> None:
    g = np.random.default_rng(0)
    for n_neighbors in (1, 3, 10):
        a = g.integers(0, 40, size=(500, n_neighbors))
        b = g.integers(0, 40, size=(500, n_neighbors))
        depths = link_depths(a, b)
        for k in range(1, n_neighbors + 1):
            np.testing.assert_array_equal(depths <= k, count_links(a, b, k))
        assert depths.max() <= n_neighbors + 1


def test_equal_targets_are_searched_once_with_the_same_neighbors() -> None:
    """Targets repeating a row get that row's neighbours (one search per distinct row)."""
    g = np.random.default_rng(3)
    ori = pd.DataFrame(
        {"a": g.choice(["x", "y"], 300), "b": g.choice(["u", "v", "w"], 300)}
    )
    ori["n"] = g.integers(0, 4, 300).astype(float)
    ori.loc[g.random(300) < 0.2, "n"] = np.nan
    syn = ori.sample(frac=1.0, random_state=1).reset_index(drop=True)
    tables = prepare_tables(ori, syn, ori.iloc[:100])
    result = linkability_attack(
        tables,
        aux_cols=[["a", "n"], ["b"]],
        n_attacks=100,
        n_neighbors=5,
        rng=np.random.default_rng(0),
    )
    keys = [str(row) for row in ori[["a", "n"]].iloc[result.targets].itertuples(False)]
    first: dict[str, int] = {}
    for position, key in enumerate(keys):
        seen = first.setdefault(key, position)
        np.testing.assert_array_equal(result.main_a[position], result.main_a[seen])
    assert len(first) < len(keys)


@pytest.mark.parametrize(("k", "expected"), [(1, 0.25), (2, 5 / 6), (3, 1.0), (4, 1.0)])
def test_baseline_rate_is_that_of_random_subsets(k: int, expected: float) -> None:
    g = np.random.default_rng(42)
    ori = pd.DataFrame(g.choice(["a", "b"], size=(400, 2)), columns=["c0", "c1"])
    syn = pd.DataFrame(
        [["a", "a"], ["b", "b"], ["a", "a"], ["a", "a"]], columns=["c0", "c1"]
    )
    out = LinkabilityRisk(aux_cols=[["c0"], ["c1"]], n_neighbors=k).compute(ori, syn)
    assert out.breakdown["baseline_rate"]["value"] == pytest.approx(expected, abs=5e-2)  # type: ignore[index]


def test_random_subsets_are_distinct_and_uniform() -> None:
    rng = np.random.default_rng(3)
    for size, population in ((3, 10), (5, 8), (1, 4), (4, 4)):
        subsets = random_subsets(rng, 2000, size, population)
        assert subsets.shape == (2000, size)
        assert all(len(set(row)) == size for row in subsets)
        counts = np.bincount(subsets.ravel(), minlength=population)
        assert counts.min() > 0.8 * counts.mean()
    # expected link rate of two random k-subsets of N: 1 - C(N-k, k) / C(N, k)
    a, b = random_subsets(rng, 20000, 3, 30), random_subsets(rng, 20000, 3, 30)
    assert count_links(a, b, 3).mean() == pytest.approx(
        1 - math.comb(27, 3) / math.comb(30, 3), abs=0.01
    )


def test_ties_do_not_link_halves_through_the_same_row() -> None:
    # every synthetic row is equally near: each half picks a random one, independently
    real = pd.DataFrame({"a": ["x"] * 400, "b": ["y"] * 400})
    syn = pd.DataFrame({"a": ["x"] * 50, "b": ["y"] * 50})
    out = LinkabilityRisk(aux_cols=[["a"], ["b"]]).compute(real, syn)
    rate = out.breakdown["attack_rate"]["value"]  # type: ignore[index]
    assert (
        rate < 0.08
    )  # 1/50 expected; ties to the lowest index would link every target


def test_copy_of_real_gives_high_risk_and_independent_data_none() -> None:
    real, hold = people(400, 4), people(400, 5)
    aux = [["x1", "c1"], ["x2", "c2"]]
    leaky = LinkabilityRisk(aux_cols=aux).compute(real, real.copy(), hold)
    assert leaky.score is not None
    assert leaky.score > 0.9
    safe = LinkabilityRisk(aux_cols=aux).compute(real, people(400, 6), hold)
    assert safe.ci is not None
    assert safe.ci[0] == 0.0


def test_missing_values_run_in_both_modes() -> None:
    real, syn, hold = people(200, 7), people(200, 8), people(200, 9)
    for frame in (real, syn, hold):
        frame.loc[frame.index[::7], "x1"] = np.nan
        frame.loc[frame.index[::5], "c2"] = None
    for compat in (None, "anonymeter-1.1", "anonymeter-1.0"):
        out = LinkabilityRisk(
            aux_cols=[["x1", "c1"], ["x2", "c2"]], n_neighbors=3, compat=compat
        ).compute(real, syn, hold)
        assert out.score is not None


def test_metric_result() -> None:
    real, syn, hold = people(300, 10), people(300, 11), people(150, 12)
    syn.iloc[:100] = real.iloc[:100].to_numpy()
    out = LinkabilityRisk(aux_cols=[["x1", "c1"], ["x2", "c2"]], n_neighbors=3).compute(
        real, syn, hold, seed=2
    )
    b = out.breakdown
    assert out.metric == "linkability"
    assert out.score == b["risk"]
    assert b["n_attacks"] == {
        "main": 150,
        "baseline": 150,
        "control": 150,
    }  # holdout size by default
    assert sorted(b["by_n_neighbors"]) == ["1", "2", "3"]  # type: ignore[arg-type]
    assert b["by_n_neighbors"]["3"]["risk"] == out.score  # type: ignore[index]
    assert b["petsard"]["risk"] == out.score  # type: ignore[index]
    record = out.records["linked_real"]
    assert record.index.size == 150
    assert record.values.sum() == b["n_success"]["main"]  # type: ignore[index]
    assert (
        LinkabilityRisk(aux_cols=[["x1", "c1"], ["x2", "c2"]], n_neighbors=3)
        .compute(real, syn, hold, seed=2)
        .breakdown
        == b
    )


def test_runs_by_default_with_a_seeded_column_split() -> None:
    real, hold = people(50, 13), people(50, 14)
    report = evaluate(
        real,
        real,
        hold,
        metrics={"linkability": {"aux_cols": [["x1"], ["x2"]], "n_attacks": 20}},
    )
    assert report["linkability"].breakdown["n_attacks"]["main"] == 20  # type: ignore[index]
    assert LinkabilityRisk.runs_by_default
    default = evaluate(real, real, hold, metrics=["linkability"], seed=3)["linkability"]
    halves = default.params["aux_cols"]
    usable = list(real.columns)
    assert sorted([*halves[0], *halves[1]], key=usable.index) == usable  # type: ignore[index]
    assert len(halves[0]) == (len(usable) + 1) // 2  # type: ignore[index, arg-type]
    again = evaluate(real, real, hold, metrics=["linkability"], seed=3)["linkability"]
    assert again.params["aux_cols"] == halves  # seeded


# --- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("aux_cols", "match"),
    [
        ("x1", "`aux_cols` must be two lists of column names"),
        ([["x1"]], "`aux_cols` must be two lists of column names"),
        ([["x1"], ["x2"], ["c1"]], "`aux_cols` must be two lists of column names"),
        ([["x1"], []], r"`aux_cols\[1\]` must name at least one column"),
        (
            [["x1", "c1"], ["c1", "x2"]],
            r"`aux_cols` lists must not overlap; both name \['c1'\]",
        ),
        ([["x1", "x1"], ["x2"]], r"`aux_cols\[0\]` names a column more than once"),
        ([["x1"], [1]], r"`aux_cols\[1\]` must be a list of column names"),
    ],
)
def test_bad_aux_cols(aux_cols: object, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        LinkabilityRisk(aux_cols=aux_cols)  # type: ignore[arg-type]


def test_unknown_and_excluded_columns() -> None:
    real = people(30, 15)
    with pytest.raises(
        ParameterError,
        match=r"`aux_cols\[1\]` names columns that are not in the tables: \['nope'\]",
    ):
        LinkabilityRisk(aux_cols=[["x1"], ["nope"]]).compute(real, real)
    with_id = real.assign(person_id=[f"p{i}" for i in range(30)])
    with pytest.raises(
        ParameterError,
        match=r"excluded from the metrics \(id, pii or text\): \['person_id'\]",
    ):
        LinkabilityRisk(aux_cols=[["x1"], ["person_id"]]).compute(with_id, with_id)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"n_attacks": 0}, "`n_attacks`"), ({"n_neighbors": 0}, "`n_neighbors`")],
)
def test_bad_counts(kwargs: dict, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        LinkabilityRisk(aux_cols=AUX, **kwargs)


def test_n_attacks_and_n_neighbors_are_capped_with_warnings() -> None:
    real, syn, hold = people(100, 16), people(8, 17), people(40, 18)
    out = LinkabilityRisk(
        aux_cols=[["x1"], ["x2"]], n_attacks=500, n_neighbors=20
    ).compute(real, syn, hold)
    assert out.breakdown["n_attacks"] == {"main": 100, "baseline": 100, "control": 40}
    assert out.breakdown["n_neighbors"] == 8
    joined = " ".join(out.warnings)
    assert "larger than the real table (100 rows)" in joined
    assert "larger than the holdout table (40 rows)" in joined
    assert "`n_neighbors` (20) is larger than the synthetic table (8 rows)" in joined


def test_holdout_with_different_columns_and_one_row_tables() -> None:
    real = people(20, 19)
    with pytest.raises(SchemaMismatchError):
        LinkabilityRisk(aux_cols=[["x1"], ["x2"]]).compute(
            real, real, real.drop(columns=["c2"])
        )
    one = people(1, 20)
    out = LinkabilityRisk(aux_cols=[["x1"], ["x2"]]).compute(one, one, one)
    assert out.breakdown["n_attacks"] == {"main": 1, "baseline": 1, "control": 1}
