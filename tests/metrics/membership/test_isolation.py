# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import InputError
from synthrisk.metrics import make_context
from synthrisk.metrics.membership.isolation import isolated_training_people
from synthrisk.schema.tables import prepare_tables


def _context():  # type: ignore[no-untyped-def]
    return make_context(
        "self_test", seed=0, working_memory=None, backend=None, progress=False
    )


def test_isolated_training_people_by_hand() -> None:
    """One numeric column (range 100): isolation is the gap to the nearest other person."""
    real = pd.DataFrame({"x": [0.0, 10.0, 30.0, 60.0, 61.0, 61.0]})
    holdout = pd.DataFrame({"x": [100.0, 32.0, 8.0]})
    synthetic = pd.DataFrame({"x": [5.0, 50.0]})
    tables = prepare_tables(real, synthetic, holdout)
    found = isolated_training_people(tables, context=_context())
    # gaps: 0 -> 8, 10 -> 2 (holdout 8), 30 -> 2 (holdout 32), 60 -> 1; the two 61s share
    # a record (isolation 0): they identify no one and are not candidates
    assert found.rows.tolist() == [0, 1, 2, 3]
    np.testing.assert_allclose(found.isolation * 100, [8, 2, 2, 1])
    assert found.n_people == 6
    assert found.person_column is None


def test_a_person_of_several_rows_is_copied_from_their_most_isolated_row() -> None:
    real = pd.DataFrame(
        {
            "person_id": [1, 1, 2, 2, 3, 3],
            "x": [0.0, 50.0, 10.0, 12.0, 30.0, 31.0],
        }
    )
    holdout = pd.DataFrame({"person_id": [7, 8], "x": [100.0, 45.0]})
    tables = prepare_tables(real, real.iloc[:2], holdout)
    found = isolated_training_people(tables, context=_context())
    assert found.person_column == "person_id"
    assert found.n_people == 3
    # the nearest *other* person of each row (one's own rows do not count):
    # person 1: row 0 -> 10 (person 2), row 1 -> 5 (holdout 45): row 0, isolation 10;
    # person 2: row 2 -> 10 (person 1), row 3 -> 12 (person 1): row 3, isolation 12;
    # person 3: row 4 -> 15 (holdout 45), row 5 -> 14: row 4, isolation 15
    assert found.rows.tolist() == [4, 3, 0]
    np.testing.assert_allclose(found.isolation * 100, [15, 12, 10])


def test_isolated_training_people_need_a_holdout() -> None:
    real = pd.DataFrame({"x": [0.0, 1.0, 2.0]})
    tables = prepare_tables(real, real)
    with pytest.raises(InputError, match="need a holdout table"):
        isolated_training_people(tables, context=_context())


def _dcr_isolation(frame: pd.DataFrame, numeric: list[str]) -> np.ndarray:
    """Brute force: each row's DCR distance to the nearest other row (no missing values)."""
    ranges = {c: frame[c].max() - frame[c].min() for c in numeric}
    terms = []
    for c in frame.columns:
        values = frame[c].to_numpy()
        if c in numeric:
            diff = np.abs(values[:, None] - values[None, :]).astype(float)
            terms.append(np.minimum(diff / ranges[c], 1.0))
        else:
            terms.append((values[:, None] != values[None, :]).astype(float))
    d = np.mean(terms, axis=0)
    np.fill_diagonal(d, np.inf)
    return np.asarray(d.min(axis=1))


def test_isolation_without_missing_values_is_the_dcr_distance(
    rng: np.random.Generator,
) -> None:
    # the rule for missing cells changes nothing where none is missing: the ranking
    # and the isolation are the DCR distance's, as before it
    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 90, n).astype(float),
                "income": rng.lognormal(8, 1, n).round(0),
                "city": rng.choice(list("abcdefgh"), n),
                "sex": rng.choice(["f", "m"], n),
            }
        )

    real, holdout, synthetic = table(150), table(150), table(150)
    found = isolated_training_people(
        prepare_tables(real, synthetic, holdout), context=_context()
    )
    pool = pd.concat([real, holdout], ignore_index=True)
    expected = _dcr_isolation(pool, ["age", "income"])[:150]
    eligible = np.flatnonzero(expected > 0)
    order = eligible[np.argsort(-expected[eligible], kind="stable")]
    assert found.rows.tolist() == order.tolist()
    np.testing.assert_allclose(found.isolation, expected[order], rtol=1e-12)


def test_people_with_missing_cells_are_not_the_most_isolated() -> None:
    # 10 % of cells missing: before the rule, every one of the 75 most isolated
    # training people (top 5 %) had a missing cell, against 64 % of all of them
    from synthrisk.datasets import load_demo

    demo = load_demo(n_rows=3000, seed=0)
    g = np.random.default_rng(1)

    def holes(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.drop(columns=["person_id"])
        mask = g.random(frame.shape) < 0.10
        for j, column in enumerate(frame.columns):
            frame.loc[mask[:, j], column] = np.nan
        return frame

    real, holdout = holes(demo.real), holes(demo.holdout)
    synthetic = holes(demo.synthetic["partial"])
    found = isolated_training_people(
        prepare_tables(real, synthetic, holdout), context=_context()
    )
    with_missing = real.isna().any(axis=1).to_numpy()
    top = found.rows[: int(0.05 * found.n_people)]
    assert top.size == 75
    share, top_share = with_missing.mean(), with_missing[top].mean()
    assert share == pytest.approx(0.639, abs=1e-3)
    # measured 0.44: not over-represented (0.64 of the people, 1.00 before the rule)
    assert top_share <= share
    assert top_share == pytest.approx(0.44, abs=0.01)


def test_a_missing_cell_reads_as_the_columns_typical_value() -> None:
    # x: range 100, median 30; c: most frequent 'a'. Row 3 misses x, row 4 misses c.
    real = pd.DataFrame(
        {"x": [0.0, 30.0, 100.0, np.nan, 30.0], "c": ["a", "b", "a", "b", None]}
    )
    holdout = pd.DataFrame({"x": [30.0, 60.0], "c": ["a", "a"]})
    tables = prepare_tables(real, real.iloc[:2], holdout)
    found = isolated_training_people(tables, context=_context())
    # row 3 reads (30, 'b'): the same record as row 1, so neither is a candidate;
    # row 4 reads (30, 'a'): holdout row 0's record. Left: row 0 (nearest: 30 away in
    # x over 2 columns: 0.15) and row 2 (nearest: holdout 60, 0.2)
    assert found.rows.tolist() == [2, 0]
    np.testing.assert_allclose(found.isolation, [0.2, 0.15])
