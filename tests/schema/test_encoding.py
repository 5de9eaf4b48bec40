# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd

from synthrisk.schema import prepare_tables


def test_codes_are_shared_across_tables_and_missing_is_minus_one() -> None:
    real = pd.DataFrame({"c": ["a", "b", None], "n": [1.0, 2.0, 3.0]})
    syn = pd.DataFrame({"c": ["b", "z", "a"], "n": [1.0, np.nan, 3.0]})
    tables = prepare_tables(real, syn)
    r, s = tables.encoded("real"), tables.encoded("synthetic")
    assert r.codes[:, 0].tolist() == [0, 1, -1]
    assert s.codes[:, 0].tolist() == [1, 2, 0]
    assert np.isnan(s.numeric[1, 0])


def test_mixed_python_types_follow_python_equality() -> None:
    # 1 and 1.0 are equal (as in SDMetrics), '1' is not
    real = pd.DataFrame({"c": pd.Series([1, "1", 2.0], dtype=object)})
    syn = pd.DataFrame({"c": pd.Series([1.0, 2, "x"], dtype=object)})
    tables = prepare_tables(
        real, syn, metadata={"columns": {"c": {"sdtype": "categorical"}}}
    )
    r, s = tables.encoded("real").codes[:, 0], tables.encoded("synthetic").codes[:, 0]
    assert s[0] == r[0]
    assert s[1] == r[2]
    assert s[2] not in r


def test_datetimes_are_seconds_from_a_common_origin() -> None:
    real = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2020-01-02", None])})
    syn = pd.DataFrame(
        {
            "t": pd.to_datetime(
                ["2019-12-31 12:00", "2020-01-01 00:00", "2020-01-03 00:00"]
            )
        }
    )
    tables = prepare_tables(real, syn)
    np.testing.assert_array_equal(
        tables.encoded("real").numeric[:2, 0], [43200.0, 129600.0]
    )
    assert np.isnan(tables.encoded("real").numeric[2, 0])
    np.testing.assert_array_equal(
        tables.encoded("synthetic").numeric[:, 0], [0.0, 43200.0, 216000.0]
    )


def test_select_and_take() -> None:
    real = pd.DataFrame(
        {"a": [1.0, 2.0, 3.0], "b": ["x", "y", "x"], "c": [5.0, 6.0, 7.0]}
    )
    enc = prepare_tables(real, real).encoded("real")
    sub = enc.select(["c", "b"]).take(np.array([2, 0]))
    assert sub.numeric_names == ("c",)
    assert sub.categorical_names == ("b",)
    assert sub.numeric[:, 0].tolist() == [7.0, 5.0]
    assert sub.codes[:, 0].tolist() == [0, 0]


def test_selected_tables_share_the_encoding() -> None:
    """``Tables.select`` restricts the encoding; it does not refit it on the subset."""
    real = pd.DataFrame(
        {
            "when": pd.to_datetime(["2020-01-02", "2021-03-04", None]),
            "first": pd.to_datetime(["1999-12-31", "2000-01-01", "2000-01-02"]),
            "colour": ["red", "blue", None],
            "size": [1.5, None, 3.0],
        }
    )
    synthetic = real.assign(colour=["green", "red", "red"])
    tables = prepare_tables(real, synthetic, real.iloc[:2])
    sub = tables.select(["colour", "when"])
    assert [spec.name for spec in sub.schema.columns] == ["when", "colour"]
    assert sub.encoder.time_origin == tables.encoder.time_origin  # from "first"
    assert sub.encoder.numeric_names == ("when",)
    assert list(sub.encoder.categories["colour"]) == ["red", "blue", "green"]
    for name in ("real", "synthetic", "holdout"):
        want = tables.encoded(name).select(["when", "colour"])
        got = sub.encoded(name)
        np.testing.assert_array_equal(got.numeric, want.numeric)
        np.testing.assert_array_equal(got.codes, want.codes)
        assert got.numeric_names == ("when",)
        # the restricted encoder encodes the subset's frames to the same arrays
        again = sub.encoder.transform(sub.table(name))
        np.testing.assert_array_equal(again.numeric, want.numeric)
        np.testing.assert_array_equal(again.codes, want.codes)
    assert list(tables.real.columns) == ["when", "first", "colour", "size"]
