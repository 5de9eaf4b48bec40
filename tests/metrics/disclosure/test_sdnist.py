# SPDX-License-Identifier: BSD-3-Clause
"""SDNist's unique exact matches and apparent-match distribution."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import ApparentMatchDistribution, UniqueExactMatches
from synthrisk.exceptions import ParameterError

DATA = Path(__file__).parents[1] / "data"

REAL = pd.DataFrame(
    {
        "a": ["x", "x", "y", "y", "z", "w"],
        "b": [1, 1, 2, 3, 3, 4],
        "c": ["p", "p", "q", "q", "r", None],
    }
)
SYN = pd.DataFrame(
    {
        "a": ["x", "y", "y", "z", "w", "w"],
        "b": [1, 2, 3, 3, 4, 5],
        "c": ["p", "q", "r", "r", None, "s"],
    }
)


def test_unique_exact_matches_by_hand() -> None:
    # real uniques: rows 2, 3, 4, 5 (rows 0 and 1 are equal); in synthetic: rows 2, 4, 5 (missing = missing)
    result = UniqueExactMatches().compute(REAL, SYN)
    assert result.breakdown["n_real_unique"] == 4
    assert result.breakdown["n_matched"] == 3
    assert result.score == pytest.approx(0.75)
    assert result.records["unique_exact_match"].values.tolist() == [0, 0, 1, 0, 1, 1]
    assert result.breakdown["sdnist"]["perc_t_unique_records"] == pytest.approx(400 / 6)


def test_apparent_match_by_hand() -> None:
    # quasi-identifier a: unique in real: z (row 4), w (row 5); in synthetic: x (0), z (3)
    # apparent matches: z only -> columns b, c: b 3 == 3, c r == r -> 1.0
    result = ApparentMatchDistribution(quasi_identifiers=["a"]).compute(REAL, SYN)
    shares = result.records["apparent_match_share"].values
    assert np.isnan(shares[[0, 1, 2, 3, 5]]).all()
    assert shares[4] == 1.0
    assert result.score == 1.0
    assert result.breakdown["n_apparent_matches"] == 1
    # quasi-identifier b: real uniques 2, 4 (rows 2, 5); synthetic uniques 1, 2, 4, 5
    result = ApparentMatchDistribution(quasi_identifiers=["b"]).compute(REAL, SYN)
    shares = result.records["apparent_match_share"].values
    assert shares[2] == 1.0  # y, q == y, q
    assert shares[5] == 1.0  # w, missing == w, missing
    sdnist = ApparentMatchDistribution(
        quasi_identifiers=["b"], missing_matches=False
    ).compute(REAL, SYN)
    assert sdnist.records["apparent_match_share"].values[5] == 0.5
    excluded = ApparentMatchDistribution(
        quasi_identifiers=["b"], exclude_columns=["c"]
    ).compute(REAL, SYN)
    assert excluded.breakdown["compared_columns"] == ["a"]


@pytest.mark.skipif(
    not (DATA / "sdnist_goldens.json").exists(), reason="goldens not recorded"
)
def test_goldens_from_sdnist() -> None:
    goldens = json.loads((DATA / "sdnist_goldens.json").read_text())
    real = pd.read_csv(DATA / "sdnist_real.csv")
    syn = pd.read_csv(DATA / "sdnist_synthetic.csv")
    uem = (
        UniqueExactMatches(missing_is_value=False)
        .compute(real, syn)
        .breakdown["sdnist"]
    )
    expected = goldens["unique_exact_matches"]
    assert uem["t_rec_matched"] == expected["t_rec_matched"]
    assert uem["t_unique_records"] == expected["t_unique_records"]
    assert round(uem["perc_t_rec_matched"], 2) == expected["perc_t_rec_matched"]
    assert round(uem["perc_t_unique_records"], 2) == expected["perc_t_unique_records"]
    for case in goldens["apparent_match"]:
        result = ApparentMatchDistribution(
            quasi_identifiers=case["quasi"],
            exclude_columns=case["exclude"],
            missing_matches=False,
        ).compute(real, syn)
        shares = result.records["apparent_match_share"].values
        got = sorted((shares[np.isfinite(shares)] * 100).tolist())
        assert len(got) == len(case["percents"])
        assert got == pytest.approx(sorted(case["percents"]), abs=1e-9)


def _population(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "sex": rng.choice(["f", "m"], n),
            "zip": rng.integers(0, 40, n),
            "job": rng.choice(list("abcdefgh"), n),
            "income": rng.choice(["low", "mid", "high"], n),
        }
    )


def test_copies_leak_and_new_people_do_not() -> None:
    pop = _population(1, 9000)
    real, hold, fresh = pop.iloc[:3000], pop.iloc[3000:6000], pop.iloc[6000:]
    copy = UniqueExactMatches().compute(real, real, hold)
    assert copy.score == 1.0
    assert copy.breakdown["control"]["p_value"] < 1e-6
    null = UniqueExactMatches().compute(real, fresh, hold)
    assert null.breakdown["control"]["p_value"] > 0.01
    assert null.breakdown["control"]["ci"][0] < 0.05
    qi = ["age", "sex", "zip"]
    amd_copy = ApparentMatchDistribution(quasi_identifiers=qi).compute(real, real, hold)
    assert amd_copy.score == 1.0
    assert amd_copy.breakdown["control"]["p_value"] < 1e-6
    amd_null = ApparentMatchDistribution(quasi_identifiers=qi).compute(
        real, fresh, hold
    )
    assert amd_null.breakdown["control"]["p_value"] > 0.01
    assert not math.isnan(amd_null.score)


def test_equal_sizes_in_the_control() -> None:
    pop = _population(2, 7000)
    real, hold, fresh = pop.iloc[:4000], pop.iloc[4000:5000], pop.iloc[5000:]
    result = UniqueExactMatches(n_repeats=3).compute(real, fresh, hold)
    assert result.breakdown["control"]["p_value"] > 0.01


def test_parameters() -> None:
    with pytest.raises(ParameterError, match="quasi_identifiers"):
        ApparentMatchDistribution(quasi_identifiers=[])
    with pytest.raises(ParameterError, match="not in the tables"):
        ApparentMatchDistribution(quasi_identifiers=["nope"]).compute(REAL, SYN)
    with pytest.raises(ParameterError, match="missing_matches"):
        ApparentMatchDistribution(quasi_identifiers=["a"], missing_matches="yes")
    with pytest.raises(ParameterError, match="not in the tables"):
        UniqueExactMatches(columns=["nope"]).compute(REAL, SYN)
