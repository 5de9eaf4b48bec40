# SPDX-License-Identifier: BSD-3-Clause
"""The generated calibration populations: seeded, shaped as documented."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthrisk.datasets.calibration import panel_data
from synthrisk.metrics.membership import Identification


def test_panel_data_is_seeded_and_has_2_to_6_rows_per_person() -> None:
    a = panel_data(3000, np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, panel_data(3000, np.random.default_rng(1)))
    assert not a.equals(panel_data(3000, np.random.default_rng(2)))
    assert 3000 - 6 <= len(a) <= 3000
    per_person = a.groupby("person_id").size()
    assert per_person.between(2, 6).all()
    assert set(per_person) == {2, 3, 4, 5, 6}
    # each person's rows are consecutive
    assert (a["person_id"].diff().fillna(0) >= 0).all()
    assert a.notna().all().all()


def test_panel_data_repeats_records_across_years() -> None:
    frame = panel_data(6000, np.random.default_rng(0))
    columns = [c for c in frame.columns if c != "person_id"]
    same = frame.groupby("person_id")[columns].nunique().max(axis=1).eq(1)
    assert 0.3 < same.mean() < 0.8  # about half the people never change
    assert frame[columns].duplicated(keep=False).mean() > 0.5
    # coarse: few values per column
    assert frame[columns].nunique().max() <= 10


def test_panel_data_split_by_person_is_recognised_as_a_panel() -> None:
    frame = panel_data(1500, np.random.default_rng(3))
    people = frame["person_id"].unique()
    half = np.isin(frame["person_id"], people[: people.size // 2])
    real = frame[half].reset_index(drop=True)
    holdout = frame[~half].reset_index(drop=True)
    # found without being named: named like an identifier, and its values repeat
    metadata = {"columns": {"person_id": {"sdtype": "id"}}}
    result = Identification().compute(real, holdout, holdout, metadata=metadata, seed=0)
    assert result.breakdown["person_column"] == "person_id"
    assert result.breakdown["training_people"] == people.size // 2
