# SPDX-License-Identifier: BSD-3-Clause
"""Worst-case canaries: inside the domain, unlike every real row, seeded, reported apart."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tests.audit._dp import DPPresence
from tests.audit._generators import population

from synthrisk.audit import AuditResult, audit, craft_canaries
from synthrisk.exceptions import ParameterError


def blurring_copier(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Copies training rows with noise on the numbers: real people blur into their
    neighbours, a canary alone at the domain's edge does not."""
    g = np.random.default_rng(seed)
    out = train.iloc[g.integers(0, len(train), size=n)].reset_index(drop=True)
    return out.assign(
        x=out["x"] + g.normal(scale=0.5, size=n),
        y=out["y"] + g.normal(scale=0.5, size=n),
    )


def copier(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    data = population(120, 7)
    return data.iloc[:40].reset_index(drop=True), data.iloc[40:].reset_index(drop=True)


def test_a_canary_takes_the_extremes_and_the_rarest_category() -> None:
    # hand-made: x spans [1, 5]; category b is the rarest (2 of 8 rows). The records
    # (1, b) and (5, b) are each 0.25 from their nearest row ((3, b): |5-3| / 4 / 2),
    # the farthest any extreme-and-rare combination gets, and 0.5 from each other
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": ["a", "a", "b", "a"]})
    holdout = pd.DataFrame({"x": [2.0, 3.0, 5.0, 1.5], "c": ["a", "b", "a", "a"]})
    canaries = craft_canaries(real, holdout, 2)
    assert sorted(zip(canaries["x"], canaries["c"], strict=True)) == [
        (1.0, "b"),
        (5.0, "b"),
    ]


def test_canaries_stay_inside_the_domain_and_differ_from_every_row(tables) -> None:
    real, holdout = tables
    both = pd.concat([real, holdout], ignore_index=True)
    canaries = craft_canaries(real, holdout, 8, seed=3)
    assert list(canaries.columns) == list(real.columns)
    assert len(canaries) == 8
    for column in ("x", "y"):  # at the observed extremes, never outside them
        assert canaries[column].isin([both[column].min(), both[column].max()]).all()
    rarest = both["c"].value_counts().index[-3:]
    assert canaries["c"].isin(rarest).all()
    as_rows = {tuple(r) for r in both.itertuples(index=False)}
    crafted = [tuple(r) for r in canaries.itertuples(index=False)]
    assert not as_rows & set(crafted)  # no canary is a real or holdout row
    assert len(set(crafted)) == len(crafted)  # nor another canary


def test_canaries_are_deterministic_by_seed(tables) -> None:
    real, holdout = tables
    assert craft_canaries(real, holdout, 5, seed=4).equals(
        craft_canaries(real, holdout, 5, seed=4)
    )


def test_too_many_canaries_is_an_error_that_says_how_many_fit() -> None:
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": ["b", "a", "a"]})
    holdout = pd.DataFrame({"x": [2.0, 1.0], "c": ["a", "a"]})
    # x in {1, 3} times c in {a, b}: (1, a), (3, a) and (1, b) are rows; only (3, b) is new
    assert craft_canaries(real, holdout, 1).values.tolist() == [[3.0, "b"]]
    with pytest.raises(ParameterError, match=r"`n_canaries`.*at most 1"):
        craft_canaries(real, holdout, 2)
    with pytest.raises(ParameterError, match="n_canaries"):
        craft_canaries(real, holdout, 0)


def test_canaries_join_the_audit_as_targets_without_values(tables) -> None:
    real, holdout = tables
    result = audit(
        blurring_copier,
        real,
        holdout,
        n_targets=5,
        n_canaries=5,
        n_runs=40,
        train_size=30,
        attacks=["dcr"],
        seed=1,
    )
    assert [t.source for t in result.targets] == ["vulnerable"] * 5 + ["canary"] * 5
    assert [t.canary for t in result.targets[5:]] == [0, 1, 2, 3, 4]
    assert all(t.row is None for t in result.targets[5:])
    assert all(t.isolation > 0 for t in result.targets[5:])
    # each canary joins about half the runs, like any target
    assert all(8 <= t.n_included <= 32 for t in result.targets)
    assert result.settings["n_canaries"] == 5
    assert result.canaries is not None
    assert result.canaries.n_canaries == 5
    pooled = result.canaries.overall["dcr"]
    assert pooled.n_members + pooled.n_non_members == 5 * result.runs["evaluation"]
    # the natural pool holds the real people only
    natural = result.overall["dcr"]
    assert natural.n_members + natural.n_non_members == 5 * result.runs["evaluation"]
    # the blurred copies hide the real people, not the canaries at the domain's edge
    assert result.canaries.epsilon_lower > 0.5
    assert result.canaries.epsilon_lower >= (result.epsilon_lower_natural or 0.0)
    # the headline is the larger group, each counted at half the error: it never
    # exceeds the larger side-by-side bound (each at the full level)
    assert result.selected_targets == "canaries"
    assert 0 < result.epsilon_lower <= result.canaries.epsilon_lower
    text = result.to_json()
    assert AuditResult.from_dict(json.loads(text)) == result
    # no canary value is written: the canaries are numbered, never shown
    values = craft_canaries(real, holdout, 5, seed=1)
    for x in values["x"]:
        assert repr(float(x))[:8] not in text


def test_a_copier_fails_the_gate_on_the_canaries(tables) -> None:
    real, holdout = tables
    result = audit(
        copier,
        real,
        holdout,
        n_targets=0,
        n_canaries=5,
        n_runs=40,
        train_size=30,
        attacks=["dcr"],
        seed=0,
    )
    assert result.overall == {}  # no real target: the canaries alone
    assert result.epsilon_lower_natural is None
    assert result.selected_targets == "canaries"
    assert result.canaries is not None
    assert result.epsilon_lower == result.canaries.epsilon_lower > 1.0
    verdict = result.verdict(max_epsilon=1.0)
    assert not verdict.passed
    assert "canaries" in verdict.reason


def test_without_canaries_the_result_says_so(tables) -> None:
    real, holdout = tables
    result = audit(
        copier, real, holdout, n_targets=3, n_runs=20, train_size=30, attacks=["dcr"]
    )
    assert result.canaries is None
    assert result.selected_targets == "natural"
    assert result.epsilon_lower == result.epsilon_lower_natural
    data = result.to_dict()
    assert data["canaries"] is None
    assert all(t["canary"] is None for t in data["targets"])


@pytest.mark.parametrize("seed", range(2))
def test_the_canaries_bound_stays_below_the_true_epsilon(tables, seed: int) -> None:
    # the randomized-response presence histogram is ε-DP by construction, and a canary
    # alone in its cell is read as well as ε allows: the bound must still stay below it
    real, holdout = tables
    result = audit(
        DPPresence(1.0),
        real,
        holdout,
        n_targets=5,
        n_canaries=5,
        n_runs=100,
        train_size=30,
        seed=seed,
    )
    assert result.canaries is not None
    assert result.canaries.epsilon_lower <= 1.0
    assert result.epsilon_lower <= 1.0
    assert all(t.epsilon_lower <= 1.0 for t in result.targets)
