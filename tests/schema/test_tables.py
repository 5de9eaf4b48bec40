# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.exceptions import InputError, SchemaMismatchError
from synthrisk.schema import prepare_tables


def test_prepare_tables_never_modifies_inputs(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    copies = [t.copy(deep=True) for t in mixed_tables]
    tables = prepare_tables(real, syn, hold)
    tables.encoded("real")
    for before, after in zip(copies, mixed_tables, strict=False):
        pd.testing.assert_frame_equal(before, after)
    assert tables.schema["user_id"].kind == "id"
    assert [c.name for c in tables.schema.excluded] == ["user_id"]


def test_prepare_tables_normalises_dtypes(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    tables = prepare_tables(*mixed_tables)
    real = tables.real
    assert real["num"].dtype == np.float64
    assert real["count"].dtype == np.float64
    assert str(real["when"].dtype) == "datetime64[ns]"
    assert real["cat"].dtype == object
    assert real["flag"].isna().sum() == mixed_tables[0]["flag"].isna().sum()


def test_polars_and_pyarrow_inputs_match_pandas(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    real, syn, _ = mixed_tables
    reference = prepare_tables(real, syn).encoded("synthetic")
    for converted in (
        pl.from_pandas(syn),
        pa.Table.from_pandas(syn, preserve_index=False),
    ):
        got = prepare_tables(real, converted).encoded("synthetic")
        np.testing.assert_array_equal(got.numeric, reference.numeric)
        np.testing.assert_array_equal(got.codes, reference.codes)


def test_mismatched_columns_list_the_differences() -> None:
    real = pd.DataFrame({"a": [1], "b": [2]})
    syn = pd.DataFrame({"a": [1], "c": [2]})
    with pytest.raises(
        SchemaMismatchError,
        match=r"only in `real`: \['b'\]; only in `synthetic`: \['c'\]",
    ):
        prepare_tables(real, syn)


def test_holdout_with_other_columns_is_rejected() -> None:
    real = pd.DataFrame({"a": [1.0, 2.0]})
    with pytest.raises(
        SchemaMismatchError, match="`real` and `holdout` tables have different columns"
    ):
        prepare_tables(real, real, pd.DataFrame({"b": [1.0]}))


@pytest.mark.parametrize(
    ("real", "syn", "match"),
    [
        (
            pd.DataFrame({"a": []}),
            pd.DataFrame({"a": [1]}),
            r"the `real` table is empty",
        ),
        (
            pd.DataFrame({"a": [1]}),
            pd.DataFrame(),
            r"the `synthetic` table has no columns",
        ),
        (
            pd.DataFrame({"a": [np.nan, np.nan], "b": [1, 2]}),
            pd.DataFrame({"a": [1.0, 2], "b": [1, 2]}),
            r"column 'a' is entirely missing in the `real` table",
        ),
        (
            pd.DataFrame({"a": [1.0, np.inf]}),
            pd.DataFrame({"a": [1.0, 2]}),
            r"column 'a' of the `real` table has 1 infinite value",
        ),
        (
            pd.DataFrame({"a": [1 + 2j, 3j]}),
            pd.DataFrame({"a": [1j, 2j]}),
            r"complex numbers",
        ),
        (
            pd.DataFrame({"a": [[1], [2]]}),
            pd.DataFrame({"a": [[1], [2]]}),
            r"nested or complex values \(list\)",
        ),
        ("not a table", pd.DataFrame({"a": [1]}), r"`real` must be a pandas DataFrame"),
    ],
)
def test_bad_tables_raise_input_errors(
    real: object, syn: pd.DataFrame, match: str
) -> None:
    with pytest.raises(InputError, match=match):
        prepare_tables(real, syn)


def test_datetime_strings_parse_with_the_given_format() -> None:
    real = pd.DataFrame({"d": ["01/02/2020", "03/04/2020", None]})
    meta = {"columns": {"d": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"}}}
    tables = prepare_tables(real, real, metadata=meta)
    assert tables.real["d"].tolist()[:2] == [
        pd.Timestamp("2020-02-01"),
        pd.Timestamp("2020-04-03"),
    ]
    assert pd.isna(tables.real["d"].iloc[2])


def test_unparsable_datetime_strings_are_rejected() -> None:
    real = pd.DataFrame({"d": ["2020-01-02", "yesterday"]})
    meta = {"columns": {"d": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"}}}
    with pytest.raises(
        InputError,
        match=r"column 'd' of the `real` table holds values that do not parse as dates with format '%Y-%m-%d': \['yesterday'\]",
    ):
        prepare_tables(real, real, metadata=meta)


def test_ambiguous_datetime_strings_ask_for_a_format() -> None:
    real = pd.DataFrame({"d": ["01/02/2020", "03/04/2020"]})
    with pytest.raises(InputError, match=r"give the 'datetime_format' in the metadata"):
        prepare_tables(real, real, metadata={"columns": {"d": {"sdtype": "datetime"}}})


def test_unambiguous_datetime_strings_are_inferred() -> None:
    real = pd.DataFrame({"d": ["13/02/2020", "25/04/2020"]})
    tables = prepare_tables(
        real, real, metadata={"columns": {"d": {"sdtype": "datetime"}}}
    )
    assert tables.schema["d"].datetime_format == "%d/%m/%Y"
    assert tables.real["d"].iloc[0] == pd.Timestamp("2020-02-13")


def test_numerical_column_with_text_is_rejected() -> None:
    real = pd.DataFrame({"a": ["1", "x"]})
    with pytest.raises(
        InputError,
        match=r"column 'a' of the `real` table is declared numerical \(metadata\) but holds values that are not numbers",
    ):
        prepare_tables(real, real, metadata={"columns": {"a": {"sdtype": "numerical"}}})


def test_an_inferred_kind_is_called_inferred_not_declared() -> None:
    real = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "z"]})
    synthetic = pd.DataFrame({"a": ["1", "unknown", "3"], "b": ["x", "y", "z"]})
    with pytest.raises(InputError) as caught:
        prepare_tables(real, synthetic)
    message = str(caught.value)
    assert message.startswith(
        "column 'a' of the `synthetic` table is inferred numerical (from the `real` "
        "table's values) but holds values that are not numbers"
    )
    assert "declared" not in message.split(";")[0]
    assert "declare it categorical in the metadata (`--metadata`" in message
    # with metadata for another column only, 'a' is still inferred
    with pytest.raises(InputError, match="is inferred numerical"):
        prepare_tables(
            real, synthetic, metadata={"columns": {"b": {"sdtype": "categorical"}}}
        )


def test_high_cardinality_categorical_gets_a_note() -> None:
    n = 2000
    real = pd.DataFrame(
        {"code": [f"c{i % 1500}" for i in range(n)], "x": np.arange(n) % 3}
    )
    tables = prepare_tables(real, real)
    assert any("behaves like an identifier" in note for note in tables.notes)


def test_timezone_aware_datetimes_are_converted_to_utc() -> None:
    real = pd.DataFrame(
        {"t": pd.to_datetime(["2020-01-01 12:00"]).tz_localize("Europe/Paris")}
    )
    tables = prepare_tables(real, real)
    assert tables.real["t"].iloc[0] == pd.Timestamp("2020-01-01 11:00")


def test_with_synthetic_reuses_the_encoding_of_real_and_holdout() -> None:
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": ["a", "b", "c"]})
    synthetic = pd.DataFrame({"x": [1.5, 2.5], "c": ["b", "d"]})
    tables = prepare_tables(real, synthetic, real.iloc[:2])
    replaced = tables.synthetic.copy()
    replaced.loc[0, "c"] = "a"
    other = tables.with_synthetic(replaced)
    assert other.encoder is tables.encoder
    assert other.encoded("real") is tables.encoded("real")
    assert other.encoded("holdout") is tables.encoded("holdout")
    assert other.encoded("synthetic").codes[:, 0].tolist() == [
        tables.encoder.categories["c"].get_loc("a"),
        tables.encoder.categories["c"].get_loc("d"),
    ]
    assert tables.synthetic.loc[0, "c"] == "b"  # the original is not modified


def test_with_synthetic_refuses_other_columns_and_unknown_categories() -> None:
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0], "c": ["a", "b", "c"]})
    tables = prepare_tables(real, real, real)
    with pytest.raises(InputError, match="must have the synthetic table's columns"):
        tables.with_synthetic(tables.synthetic[["c", "x"]])
    unknown = tables.synthetic.copy()
    unknown.loc[1, "c"] = "zz"
    with pytest.raises(InputError, match=r"column 'c' .* 1 value\(s\) the encoding"):
        tables.with_synthetic(unknown)


def test_parse_dates_reads_each_side_as_prepare_tables_does() -> None:
    from synthrisk.schema import parse_dates

    real = pd.DataFrame(
        {
            "key": ["2021-01-01", "2021-01-02"],  # skipped: never parsed
            "iso": ["2021-03-04", "2021-03-05"],  # no metadata: ISO by content
            "dmy": ["04/03/2021", "13/03/2021"],  # the metadata's format
            "stamp": ["2021-03-04 10:15:00", "2021-03-04 23:59:59"],
            "word": ["a", "b"],
        },
        index=[7, 3],
    )
    synthetic = real.assign(stamp=["03/14/2021 10:15", "03/15/2021 09:00"])
    columns = {
        "dmy": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"},
        "stamp": {"sdtype": "datetime"},  # each side in its own format
    }
    out = parse_dates(
        {"real": real, "synthetic": synthetic}, columns, table="t", skip=["key"]
    )
    got = out["real"]
    assert got.index.tolist() == [7, 3]  # the row index is kept
    assert got["key"].tolist() == ["2021-01-01", "2021-01-02"]
    assert got["iso"].tolist() == [
        pd.Timestamp("2021-03-04"),
        pd.Timestamp("2021-03-05"),
    ]
    assert got["dmy"].tolist() == [
        pd.Timestamp("2021-03-04"),
        pd.Timestamp("2021-03-13"),
    ]
    assert got["stamp"].iloc[1] == pd.Timestamp("2021-03-04 23:59:59")
    assert out["synthetic"]["stamp"].iloc[0] == pd.Timestamp("2021-03-14 10:15")
    assert got["word"].tolist() == ["a", "b"]
    assert real["iso"].tolist()[0] == "2021-03-04"  # the input is not modified
    with pytest.raises(InputError, match=r"column 'dmy' of the synthetic table 't'"):
        parse_dates(
            {"real": real, "synthetic": synthetic.assign(dmy=["2021-13-45", "x"])},
            columns,
            table="t",
        )
