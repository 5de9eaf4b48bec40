# SPDX-License-Identifier: BSD-3-Clause
"""Worst-case DCR share over column subsets (MOSTLY AI QA's groups)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk import DCRShare
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import make_context
from synthrisk.metrics.membership._column_groups import column_groups
from synthrisk.schema import prepare_tables


def _table(rng: np.random.Generator, n: int, n_cols: int) -> pd.DataFrame:
    return pd.DataFrame({f"c{i}": rng.normal(size=n) for i in range(n_cols)})


def test_groups_cover_the_columns_and_are_seeded() -> None:
    rng = np.random.default_rng(0)
    tables = prepare_tables(
        _table(rng, 200, 12), _table(rng, 200, 12), _table(rng, 200, 12)
    )
    a = column_groups(
        tables,
        make_context(
            "dcr_share", seed=1, working_memory=None, backend=None, progress=False
        ).rng,
    )
    b = column_groups(
        tables,
        make_context(
            "dcr_share", seed=1, working_memory=None, backend=None, progress=False
        ).rng,
    )
    assert a == b
    assert a[0] == [f"c{i}" for i in range(12)]
    assert len(a) == 7
    for start in (1, 4):
        assert sorted(c for group in a[start : start + 3] for c in group) == sorted(
            a[0]
        )
    few = prepare_tables(_table(rng, 50, 5), _table(rng, 50, 5), _table(rng, 50, 5))
    assert column_groups(few, np.random.default_rng(0)) == [[f"c{i}" for i in range(5)]]


def test_worst_case_is_at_least_the_all_columns_share() -> None:
    rng = np.random.default_rng(1)
    real, hold, syn = _table(rng, 400, 12), _table(rng, 400, 12), _table(rng, 400, 12)
    for frame in (
        real,
        hold,
        syn,
    ):  # three strongly correlated columns: one correlated group
        frame["c1"] = frame["c0"] + 0.1 * rng.normal(size=400)
        frame["c2"] = frame["c0"] + 0.1 * rng.normal(size=400)
    # leak those three columns only: the synthetic rows copy them from real rows
    syn[["c0", "c1", "c2"]] = real[["c0", "c1", "c2"]].to_numpy()
    plain = DCRShare(n_permutations=99).compute(real, syn, hold)
    worst = DCRShare(n_permutations=99, column_subsets="worst").compute(real, syn, hold)
    assert worst.score >= plain.score
    assert worst.breakdown["column_subsets"][0]["share"] == pytest.approx(plain.score)
    assert worst.score > 0.8
    assert worst.breakdown["p_value_bonferroni"] == pytest.approx(
        min(1.0, worst.breakdown["p_value"] * 7)
    )
    null = DCRShare(n_permutations=99, column_subsets="worst").compute(
        real, _table(rng, 400, 12), hold
    )
    assert null.breakdown["p_value_bonferroni"] > 0.01


def test_bad_option() -> None:
    with pytest.raises(ParameterError, match="column_subsets"):
        DCRShare(column_subsets="some")
