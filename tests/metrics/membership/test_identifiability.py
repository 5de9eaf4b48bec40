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


@pytest.mark.parametrize("width", [5, 20])
def test_goldens_from_synthcity(width: int) -> None:
    # synthcity 0.2.12 IdentifiabilityScore: scikit-learn's KD-tree (5 columns) and
    # brute force (20 columns), each with its own rounding
    goldens = json.loads((DATA / "synthcity_goldens.json").read_text())
    real = pd.read_csv(DATA / f"synthcity_identifiability_{width}_real.csv")
    syn = pd.read_csv(DATA / f"synthcity_identifiability_{width}_synthetic.csv")
    result = EpsilonIdentifiability(variant="synthcity").compute(real, syn)
    assert result.score == pytest.approx(goldens[f"identifiability_{width}"], abs=1e-9)


def _naive_control(
    real: pd.DataFrame, syn: pd.DataFrame, hold: pd.DataFrame, seed: int, repeats: int
) -> float:
    """The equal-size control written out: sample, search the sample, count."""
    from synthrisk.metrics._base import make_context
    from synthrisk.metrics.membership._space import Space
    from synthrisk.schema import prepare_tables

    tables = prepare_tables(real, syn, hold)
    space = Space.for_tables(tables, "dcr")
    context = make_context(
        "epsilon_identifiability",
        seed=seed,
        working_memory=None,
        backend=None,
        progress=False,
    )
    r, s = tables.encoded("real"), tables.encoded("synthetic")
    d_syn = space.search(r, s, k=1, context=context, description="").distances[:, 0]
    m = len(hold)
    total = 0.0
    for _ in range(repeats):
        rows = np.sort(context.rng.choice(len(real), size=m, replace=False))
        sample = r.take(rows)
        inner = space.search(sample, sample, k=2, context=context, description="")
        total += float((d_syn[rows] < inner.distances[:, 1]).sum())
    return total / repeats


def test_equal_size_control_reuses_one_search_exactly() -> None:
    # a real table four times the holdout: the control samples it down 8 times; the
    # k-lists of one search must give what searching every sample gives
    rng = np.random.default_rng(12)
    n = 1200
    pop = pd.DataFrame(
        {
            "x": np.round(rng.normal(size=6 * n), 1),
            "k": rng.choice(list("abcd"), 6 * n),
            "j": rng.choice(list("xyz"), 6 * n),
        }
    )
    real = pop.iloc[: 4 * n].reset_index(drop=True)
    hold = pop.iloc[4 * n : 5 * n].reset_index(drop=True)
    syn = pop.iloc[5 * n :].reset_index(drop=True)
    result = EpsilonIdentifiability(variant="dcr", n_repeats=8).compute(
        real, syn, hold, seed=4
    )
    want = _naive_control(real, syn, hold, seed=4, repeats=8)
    assert result.breakdown["control"]["real"] == pytest.approx(want / n, abs=1e-12)


def test_syntheval_caps_the_nearest_other_record_at_one() -> None:
    # SynthEval finds the nearest *other* record by adding 1 to the diagonal of its
    # distance matrix, so that distance is never above 1. Four real records distinct
    # in four categorical columns: equal weights 1 / log 4, every real pair at
    # distance log 4 = 1.386; the synthetic record shares one value with the first
    # real record: distance 3 log 4 / 4 = 1.040, below 1.386 but not below 1.
    # SynthEval 1.7.3 gives eps_risk 0.0 on these tables.
    real = pd.DataFrame(
        {"a": list("pqrs"), "b": list("tuvw"), "c": list("ABCD"), "d": list("EFGH")}
    )
    syn = pd.DataFrame({"a": ["p"], "b": ["z"], "c": ["Z"], "d": ["Y"]})
    result = EpsilonIdentifiability().compute(real, syn)
    d_syn = result.records["distance_to_synthetic"].values
    assert d_syn[0] == pytest.approx(3 * np.log(4) / 4, abs=1e-12)
    assert result.score == 0.0
    # synthrisk's own distance has no such cap
    assert EpsilonIdentifiability(variant="dcr").compute(real, syn).score == 0.25


def test_synthcity_variant_properties() -> None:
    rng = np.random.default_rng(3)
    n = 900
    pop = pd.DataFrame(rng.normal(size=(3 * n, 3)), columns=["a", "b", "c"])
    real, hold = pop.iloc[:n], pop.iloc[n : 2 * n]
    fresh = pop.iloc[2 * n :].reset_index(drop=True)
    leaky = EpsilonIdentifiability(variant="synthcity").compute(
        real, real.reset_index(drop=True) + 1e-6, hold
    )
    assert leaky.score == 1.0
    assert leaky.breakdown["control"]["p_value"] < 1e-6
    null = EpsilonIdentifiability(variant="synthcity").compute(real, fresh, hold)
    assert null.breakdown["control"]["p_value"] > 0.01
