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
