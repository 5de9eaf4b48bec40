# SPDX-License-Identifier: BSD-3-Clause
"""The per-person identification test: hand-computed geometry, copies caught, new people pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.datasets.calibration import coarse_data, continuous_data
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import get_metric
from synthrisk.metrics.membership import Identification
from synthrisk.metrics.membership._people import (
    Geometry,
    People,
    _other_people,
    find_person_column,
    isolation_rank,
    near_threshold,
    stratum,
    tied_stratum,
)
from synthrisk.metrics.membership.identification import IdentificationParts
from synthrisk.schema.tables import prepare_tables
from synthrisk.stats.exact import excess_greater_p


def _thirds(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, ...]:
    order = np.random.default_rng(seed).permutation(len(frame))
    n = len(frame) // 3
    return tuple(
        frame.iloc[order[i * n : (i + 1) * n]].reset_index(drop=True) for i in range(3)
    )


def test_geometry_by_hand() -> None:
    """One numeric column: isolation, ratio and the near threshold, computed by hand."""
    real = pd.DataFrame({"x": [0.0, 10.0, 30.0, 60.0]})
    holdout = pd.DataFrame({"x": [100.0, 101.0, 70.0, 40.0]})
    # 30 copied exactly; 60 copied to within 0.5; 100.2 lies near 100 and 101
    synthetic = pd.DataFrame({"x": [30.0, 60.5, 100.2, 5.0]})
    result = Identification(near_quantile=0.49).compute(
        real, synthetic, holdout, seed=0
    )
    iso = result.records["isolation"]
    # the dcr distance of one numeric column: |x - y| / range (range 101)
    np.testing.assert_allclose(iso.values * 101, [10, 10, 10, 10], atol=1e-9)
    b = result.breakdown
    # nearest / second-nearest stranger in the pool: 0: 10/30, 10: 10/20, 30: 10/20
    # (40 is nearer than 10), 60: 10/20, 100: 1/30, 101: 1/31, 70: 10/30, 40: 10/20;
    # the lower 0.49 quantile of the 8 ratios is the 4th smallest, 1/3
    ratios = sorted([1 / 3, 0.5, 0.5, 0.5, 1 / 30, 1 / 31, 1 / 3, 0.5])
    assert ratios[3] == pytest.approx(1 / 3)
    assert b["near_threshold"] == pytest.approx(1 / 3)
    # 30: exact copy (ratio 0); 60: 0.5 / 10 = 0.05 <= 1/3; 0 and 10: 5 / 10 > 1/3
    identified = {tuple(e["rows"]): e for e in b["identified"]}
    assert set(identified) == {(2,), (3,)}
    assert identified[(2,)]["exact"]
    assert identified[(3,)]["ratio"] == pytest.approx(0.05)
    assert b["identified_training"] == 2
    # holdout 100 (isolation 1): 100.2 at 0.2 -> ratio 0.2 <= 1/3: chance finds them too
    assert b["identified_holdout"] == 1
    assert result.score == pytest.approx(0.5)


def test_nearest_other_person_skips_ones_own_rows() -> None:
    person = np.array([0, 0, 1, 2])
    distances = np.array(
        [[0.0, 0.1, 0.5], [0.0, 0.1, 0.4], [0.0, 0.4, 0.5], [0.0, 0.5, 0.9]]
    )
    indices = np.array([[0, 1, 2], [1, 0, 2], [2, 1, 0], [3, 0, 2]])
    first, second = _other_people(distances, indices, person)
    np.testing.assert_allclose(first, [0.5, 0.4, 0.4, 0.5])
    # row 0's neighbours hold one other person only; row 3: persons 0 then 1
    np.testing.assert_allclose(second, [np.inf, np.inf, np.inf, 0.9])


def test_near_threshold_is_capped_and_zero_without_strangers() -> None:
    geo = Geometry(
        isolation=np.array([1.0, 2.0]),
        second=np.array([1.0, 2.0]),
        to_synthetic=np.zeros(2),
        synthetic_row=np.zeros(2, dtype=np.int64),
    )
    assert near_threshold(geo, 0.5) == 0.5  # ratios of 1 capped at 0.5
    lonely = Geometry(
        np.array([0.0]), np.array([np.inf]), np.zeros(1), np.zeros(1, dtype=np.int64)
    )
    assert near_threshold(lonely, 0.001) == 0.0


def test_a_copy_of_the_training_table_identifies_every_unique_person() -> None:
    real, holdout, _ = _thirds(continuous_data(1500, np.random.default_rng(0)), 1)
    result = Identification().compute(real, real.copy(), holdout, seed=0)
    b = result.breakdown
    assert b["identified_training"] == b["training_people"]
    assert b["exact_training"] == b["training_people"]
    test = b["holdout_test"]
    assert test["p_value"] < 1e-100
    assert test["effect"] == pytest.approx(len(real), abs=5)


@pytest.mark.parametrize("make", [coarse_data, continuous_data])
def test_new_people_are_not_identified_beyond_chance(make) -> None:
    real, holdout, fresh = _thirds(make(3000, np.random.default_rng(3)), 3)
    test = (
        Identification().compute(real, fresh, holdout, seed=0).breakdown["holdout_test"]
    )
    assert test["p_value"] > 0.05
    assert test["decision"] == "significance"
    assert test["mde"] is not None
    assert test["mde"] <= 10


@pytest.mark.parametrize("make", [coarse_data, continuous_data])
def test_four_copies_of_the_most_isolated_training_people_are_caught(make) -> None:
    """0.2 % verbatim copies of the most isolated people: invisible to averages, not here."""
    real, holdout, fresh = _thirds(make(6000, np.random.default_rng(4)), 4)
    isolation = (
        Identification().compute(real, fresh, holdout, seed=0).records["isolation"]
    )
    most = np.argsort(-isolation.values, kind="stable")[:4]
    synthetic = pd.concat([fresh.iloc[4:], real.iloc[most]], ignore_index=True)
    result = Identification().compute(real, synthetic, holdout, seed=0)
    test = result.breakdown["holdout_test"]
    assert test["p_value"] < 1e-3
    assert test["component"].startswith("most isolated")
    listed = {r for entry in result.breakdown["identified"] for r in entry["rows"]}
    assert set(most.tolist()) <= listed
    # no value of a real record is in the breakdown: rows, ratios, isolation only
    assert set(result.breakdown["identified"][0]) == {
        "rows",
        "synthetic_rows",
        "ratio",
        "exact",
        "isolation",
    }
    # each copied person is paired with the synthetic row that copies them, exact first
    planted = len(synthetic) - 4
    pairs = {
        entry["rows"][0]: entry["synthetic_rows"]
        for entry in result.breakdown["identified"]
        if entry["exact"]
    }
    for i, row in enumerate(most.tolist()):
        assert planted + i in pairs[row]
    exact = [entry["exact"] for entry in result.breakdown["identified"]]
    assert exact == sorted(exact, reverse=True)
    assert set(range(planted, planted + 4)) <= set(
        result.records["copying_rows"].index.tolist()
    )


def test_panel_people_are_judged_as_people() -> None:
    """Several identical yearly rows of one person: unique as a person, and one copy finds them."""
    rng = np.random.default_rng(5)
    n = 400

    def panel(first_id: int) -> pd.DataFrame:
        base = pd.DataFrame(
            {
                "person_id": np.arange(first_id, first_id + n),
                "age": rng.integers(20, 80, n),
                "income": rng.normal(3000, 800, n).round(0),
                "region": rng.choice(list("abcd"), n),
            }
        )
        return pd.concat([base, base], ignore_index=True)  # two identical years

    real, holdout = panel(0), panel(10_000)
    synthetic = panel(20_000).iloc[:n]  # a generator's own person ids
    tables = prepare_tables(real, synthetic, holdout)
    assert find_person_column(tables) == "person_id"
    null = Identification().compute(real, synthetic, holdout, seed=0).breakdown
    assert null["person_column"] == "person_id"
    assert null["training_people"] == n
    # without the person key every record has an identical twin: nobody is unique
    rows_only = Identification(person=None).compute(real, synthetic, holdout, seed=0)
    assert rows_only.breakdown["unique_records"] < 0.01
    copied = pd.concat(
        [synthetic.iloc[20:], real.iloc[:20]],
        ignore_index=True,
    )
    found = Identification().compute(real, copied, holdout, seed=0).breakdown
    assert found["identified_training"] >= 20
    # five parts, Bonferroni: one row of each of 20 people is a strong signal
    assert found["holdout_test"]["p_value"] < 2e-3
    # whole people copied under the generator's own ids: their history is reproduced
    whole = real[real["person_id"] < 20].copy()
    whole["person_id"] += 30_000
    histories = pd.concat([synthetic.iloc[40:], whole], ignore_index=True)
    test = (
        Identification()
        .compute(real, histories, holdout, seed=0)
        .breakdown["holdout_test"]
    )
    part = {c["part"]: c for c in test["components"]}["whole histories"]
    # (a history another real person shares by chance is left out of both counts)
    assert part["training"][0] == 20
    assert n - 5 <= part["training"][1] <= n
    assert part["holdout"][0] == 0
    assert test["p_value"] < 1e-5


def _panel_with_long_histories(seed: int) -> tuple[pd.DataFrame, ...]:
    """People with 1 to 30 rows (most with one or two), a person's rows close together."""
    rng = np.random.default_rng(seed)

    def side(first_id: int, n: int) -> pd.DataFrame:
        counts = np.minimum(rng.zipf(2.0, n), 30)
        owner = np.repeat(np.arange(n), counts)
        m = owner.size
        frame = pd.DataFrame(
            {
                "person_id": first_id + owner,
                "age": rng.integers(20, 80, n)[owner],
                "amount": (rng.integers(0, 300, n)[owner] + rng.integers(0, 3, m))
                * 1.0,
                "kind": rng.choice(list("ab"), m),
            }
        )
        frame.loc[rng.random(m) < 0.05, "amount"] = np.nan
        return frame

    return side(0, 150), side(10_000, 120), side(20_000, 150)


@pytest.mark.parametrize("seed", [0, 1])
def test_short_first_isolation_search_gives_the_full_searchs_numbers(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows searched with FIRST_K neighbours, long lists only where needed: same results."""
    import json

    from synthrisk import evaluate
    from synthrisk.metrics.membership import _people

    real, holdout, synthetic = _panel_with_long_histories(seed)
    metrics = {
        "identification": {"person": "person_id"},
        "vulnerable_people": {"person": "person_id", "strata": [0.2, 0.4]},
    }

    def results() -> list[dict[str, object]]:
        report = evaluate(real, synthetic, holdout, metrics=metrics, seed=seed)
        out = json.loads(report.to_json())["results"]
        for result in out:
            result.pop("seconds", None)
        return out

    short = results()
    # every row's first list too short for two other people: all searched again
    monkeypatch.setattr(_people, "FIRST_K", 1)
    again = results()
    monkeypatch.setattr(_people, "FIRST_K", 10**6)  # the full k for every row
    full = results()
    assert short == full
    assert again == full


def test_a_person_on_both_sides_is_refused() -> None:
    real = pd.DataFrame({"person_id": [1, 1, 2, 2], "x": [1.0, 2.0, 3.0, 4.0]})
    holdout = pd.DataFrame({"person_id": [2, 3], "x": [5.0, 6.0]})
    with pytest.raises(InputError, match="both the training and the holdout"):
        Identification(person="person_id").compute(real, real, holdout)


def test_parameters_are_checked() -> None:
    with pytest.raises(ParameterError, match="strata"):
        Identification(strata=[0.0])
    with pytest.raises(ParameterError, match="person"):
        Identification(person=3)
    with pytest.raises(ParameterError, match="not a column"):
        Identification(person="nope").compute(
            pd.DataFrame({"x": [1.0, 2.0]}),
            pd.DataFrame({"x": [1.0, 2.0]}),
            pd.DataFrame({"x": [3.0, 4.0]}),
        )


def test_registered_and_in_the_default_run() -> None:
    cls = get_metric("identification")
    assert cls is Identification
    assert cls.runs_by_default
    assert cls.requires_holdout


def _mirrored_panel(*, tied: bool) -> tuple[IdentificationParts, np.ndarray]:
    """400 training and 100 holdout people, each holdout person the twin of four training ones.

    Profile ``j`` (0 to 99) has ``1 + j // 10`` rows, all with isolation ``(j + 1) / 1000``
    (the longer the history, the more isolated), exactly copied when ``j >= 90``: the
    longest histories are copied by chance, as coarse records with many rows are.
    ``tied``: every profile of the top 2 % of people shares one isolation. Returns the
    counts and the pooled isolation of each person.
    """
    profiles = np.r_[np.repeat(np.arange(100), 4), np.arange(100)]
    if tied:
        iso_of = np.where(np.arange(100) >= 98, 0.5, (np.arange(100) + 1) / 1000)
    else:
        iso_of = (np.arange(100) + 1) / 1000
    rows = 1 + profiles // 10
    person = np.repeat(np.arange(profiles.size), rows)
    row_profile = profiles[person]
    people = People(
        person=person,
        n_train=400,
        n_holdout=100,
        n_real_rows=int(rows[:400].sum()),
        column="person",
        max_rows=int(rows.max()),
    )
    geo = Geometry(
        isolation=iso_of[row_profile],
        second=np.full(person.size, 1.0),
        to_synthetic=np.where(row_profile >= 90, 0.0, 1.0),
        synthetic_row=np.zeros(person.size, dtype=np.int64),
    )
    parts = IdentificationParts(people, geo, 0.1, (0.01, 0.05), 0.2)
    return parts, iso_of[profiles]


def test_several_rows_a_person_compare_with_the_same_holdout_stratum() -> None:
    """A history's length raises both its isolation and its chance of an exact copy.

    The holdout people are the training people's twins, so a fair comparison finds no
    excess. The most isolated 20 % of holdout people (the control of one-row people)
    are copied less often than the most isolated 5 %: against it, chance copies of
    long histories looked like memorised people.
    """
    parts, isolation = _mirrored_panel(tied=False)
    assert parts.several_rows
    components = {c["part"]: c for c in parts.parts()}
    five = components["most isolated 5%, exact copies"]
    # 5 % of 500 people: profiles 95 to 99, 4 training people and 1 holdout person each
    assert five["training"] == [20, 20]
    assert five["holdout"] == [5, 5]
    assert five["p_value"] == 1.0
    one = components["most isolated 1%, exact copies"]
    assert (one["training"], one["holdout"]) == ([4, 4], [1, 1])
    # the old control: the most isolated 20 % of holdout people, profiles 80 to 99,
    # half of them copied
    eligible = isolation > 0
    rank = isolation_rank(isolation)
    wide = stratum(rank, 0.2, eligible) & ~parts.training
    assert (int((parts.exact & wide).sum()), int(wide.sum())) == (10, 20)
    assert excess_greater_p(20, 20, 10, 20) < 1e-3


def test_a_tie_at_the_cut_takes_both_sides_alike() -> None:
    """Ties broken by position put training people (first) before any holdout person."""
    parts, isolation = _mirrored_panel(tied=True)
    eligible = isolation > 0
    # 1 % of 500 people is 5; the 10 people of profiles 98 and 99 share the largest
    # isolation: all of them are in, training and holdout alike
    top = tied_stratum(isolation, 0.01, eligible)
    assert (int(top[:400].sum()), int(top[400:].sum())) == (8, 2)
    by_position = stratum(isolation_rank(isolation), 0.01, eligible)
    assert (int(by_position[:400].sum()), int(by_position[400:].sum())) == (5, 0)
    one = {c["part"]: c for c in parts.parts()}["most isolated 1%, exact copies"]
    assert (one["training"], one["holdout"]) == ([8, 8], [2, 2])
