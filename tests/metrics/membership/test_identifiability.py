# SPDX-License-Identifier: BSD-3-Clause
"""ε-identifiability: SynthEval goldens, synthcity's definition, properties."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import NearestNeighbors

from synthrisk import EpsilonIdentifiability

DATA = Path(__file__).parents[1] / "data"
META = {
    "columns": {
        "x": {"sdtype": "numerical"},
        "colour": {"sdtype": "categorical"},
        "y": {"sdtype": "numerical"},
        "size": {"sdtype": "categorical"},
        "count": {"sdtype": "numerical"},
    }
}


def test_goldens_from_syntheval() -> None:
    goldens = json.loads((DATA / "syntheval_goldens.json").read_text())
    real, syn, hold = (
        pd.read_csv(DATA / f"syntheval_{n}.csv")
        for n in ("real", "synthetic", "holdout")
    )
    with_holdout = EpsilonIdentifiability().compute(real, syn, hold, metadata=META)
    assert with_holdout.score == pytest.approx(
        goldens["with_holdout"]["eps_risk"], abs=1e-9
    )
    assert with_holdout.breakdown["priv_loss"] == pytest.approx(
        goldens["with_holdout"]["priv_loss"], abs=1e-9
    )
    without = EpsilonIdentifiability().compute(real, syn, metadata=META)
    assert without.score == pytest.approx(
        goldens["without_holdout"]["eps_risk"], abs=1e-9
    )


def test_synthcity_variant_is_unweighted_euclidean() -> None:
    rng = np.random.default_rng(2)
    real = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    syn = pd.DataFrame(rng.normal(size=(250, 3)), columns=["a", "b", "c"])
    syn.iloc[:30] = real.iloc[:30].to_numpy() + 1e-3
    result = EpsilonIdentifiability(variant="synthcity").compute(real, syn)
    # synthcity's identifiability_score: 2nd neighbour in real vs 1st in synthetic
    inner = NearestNeighbors(n_neighbors=2).fit(real).kneighbors(real)[0][:, 1]
    outer = NearestNeighbors(n_neighbors=1).fit(syn).kneighbors(real)[0][:, 0]
    assert result.score == pytest.approx(np.mean(outer - inner < 0), abs=1e-12)


def test_copies_are_identifiable_and_new_people_are_not_more_than_holdout() -> None:
    rng = np.random.default_rng(8)
    n = 1500
    pop = pd.DataFrame(
        {
            "x": rng.normal(size=3 * n),
            "y": rng.gamma(2.0, 1.0, 3 * n),
            "k": rng.choice(list("abc"), 3 * n),
        }
    )
    real, hold, fresh = (
        pop.iloc[:n],
        pop.iloc[n : 2 * n],
        pop.iloc[2 * n :].reset_index(drop=True),
    )
    copy = EpsilonIdentifiability().compute(real, real.reset_index(drop=True), hold)
    assert (
        copy.score == 1.0
    )  # each copy (distance 0) is closer than any other real record
    noisy = real.reset_index(drop=True).assign(
        x=lambda f: f["x"] + rng.normal(0, 1e-4, n)
    )
    leaky = EpsilonIdentifiability().compute(real, noisy, hold)
    assert leaky.score > 0.9
    assert leaky.breakdown["control"]["p_value"] < 1e-6
    null = EpsilonIdentifiability().compute(real, fresh, hold)
    assert null.breakdown["control"]["p_value"] > 0.01


def test_fast_dcr_variant_properties() -> None:
    rng = np.random.default_rng(9)
    n = 800
    pop = pd.DataFrame(
        {"x": rng.normal(size=3 * n), "k": rng.choice(list("abcdefgh"), 3 * n)}
    )
    real, hold, fresh = (
        pop.iloc[:n],
        pop.iloc[n : 2 * n],
        pop.iloc[2 * n :].reset_index(drop=True),
    )
    noisy = real.reset_index(drop=True).assign(
        x=lambda f: f["x"] + rng.normal(0, 1e-5, n)
    )
    leaky = EpsilonIdentifiability(variant="dcr").compute(real, noisy, hold)
    assert leaky.score > 0.9
    assert leaky.breakdown["control"]["p_value"] < 1e-6
    null = EpsilonIdentifiability(variant="dcr").compute(real, fresh, hold)
    assert null.breakdown["control"]["p_value"] > 0.01
