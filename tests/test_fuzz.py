# SPDX-License-Identifier: BSD-3-Clause
"""Property-based fuzzing of input handling with hypothesis.

Random mixed-type tables (every column kind, missing values, constant and
single-category columns, duplicated rows, tiny and empty sides, with and without a
holdout) go through the schema, a default evaluation and every registered metric. The
outcome is always a result in range (or one explicitly skipped or undefined, with a
reason) or a :class:`SynthriskError`: never another exception, and the inputs are
never modified.

The examples are derandomized (the same ones run every time, so the suite is not
flaky); set ``SYNTHRISK_FUZZ_EXAMPLES`` to run more, with fresh random ones.
"""

from __future__ import annotations

import csv
import dataclasses
import decimal
import gzip
import inspect
import io
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from synthrisk import evaluate
from synthrisk.exceptions import SynthriskError
from synthrisk.io.files import read_table_with_notes
from synthrisk.metrics import METRICS
from synthrisk.results import STATUSES, EvaluationReport, MetricResult
from synthrisk.schema.tables import prepare_tables

_MORE = int(os.environ.get("SYNTHRISK_FUZZ_EXAMPLES", "0"))


def _settings(examples: int) -> settings:
    return settings(
        max_examples=_MORE or examples,
        derandomize=not _MORE,
        deadline=None,
        database=None,
        # no shrinking: a failing example is small already, and shrinking whole
        # evaluations takes minutes
        phases=(Phase.explicit, Phase.reuse, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


KINDS = (
    "small_int",  # few distinct integers: behaves like a category
    "wide_int",
    "float",
    "huge_float",  # magnitudes up to 1e300
    "category",
    "single_category",
    "boolean",
    "date",
    "constant_number",
    "unique_string",
    # what Parquet files and other tools hand over
    "decimal",  # decimal.Decimal objects
    "date_object",  # datetime.date objects (Parquet date32)
    "zoned_timestamp",  # time-zone-aware timestamps
    "far_date",  # now and then 9999-12-31, beyond nanosecond timestamps
    "mixed_int_str",  # numbers and text in one column
    "typed_by_side",  # text digits in the real table, numbers in the others
    "date_format_by_side",  # ISO 8601 in the real table, day/month/year in the others
)


@dataclasses.dataclass(frozen=True)
class Spec:
    kinds: tuple[str, ...]
    missing: tuple[float, ...]
    n_real: int
    n_synthetic: int
    n_holdout: int | None
    copies: int  # synthetic rows that copy real rows exactly
    seed: int


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    n_cols = draw(st.integers(1, 4))
    kinds = tuple(draw(st.sampled_from(KINDS)) for _ in range(n_cols))
    missing = tuple(draw(st.sampled_from((0.0, 0.0, 0.0, 0.3, 1.0))) for _ in kinds)
    # mostly a few rows; now and then an empty side
    n_real = draw(st.integers(-1, 14).map(lambda n: max(n, 0)))
    n_synthetic = draw(st.integers(-1, 14).map(lambda n: max(n, 0)))
    n_holdout = draw(st.one_of(st.none(), st.integers(-1, 10).map(lambda n: max(n, 0))))
    copies = draw(st.integers(0, 3))
    seed = draw(st.integers(0, 2**16))
    return Spec(kinds, missing, n_real, n_synthetic, n_holdout, copies, seed)


def _column(kind: str, n: int, rng: np.random.Generator, side: int) -> list[Any]:
    if kind == "small_int":
        return rng.integers(0, 3, n).tolist()
    if kind == "wide_int":
        return rng.integers(-(10**9), 10**9, n).tolist()
    if kind == "float":
        return np.round(rng.normal(0, 100, n), 3).tolist()
    if kind == "huge_float":
        return (rng.normal(0, 1, n) * 1e300).tolist()
    if kind == "category":
        return rng.choice(["a", "b", "c", "d"], n).tolist()
    if kind == "single_category":
        return ["only"] * n
    if kind == "boolean":
        return rng.choice([True, False], n).tolist()
    if kind == "date":
        days = rng.integers(0, 60, n)
        return [
            str(pd.Timestamp("2021-01-01") + pd.Timedelta(days=int(d)))[:10]
            for d in days
        ]
    if kind == "constant_number":
        return [7.0] * n
    if kind == "decimal":
        return [decimal.Decimal(f"{v:.2f}") for v in rng.normal(0, 100, n)]
    if kind in ("date_object", "zoned_timestamp", "far_date", "date_format_by_side"):
        days = [
            pd.Timestamp("2021-01-01") + pd.Timedelta(days=int(d))
            for d in rng.integers(0, 60, n)
        ]
        if kind == "date_object":
            return [d.date() for d in days]
        if kind == "zoned_timestamp":
            return [d.tz_localize("Europe/Zurich") for d in days]
        if kind == "far_date":
            return ["9999-12-31" if rng.random() < 0.1 else str(d.date()) for d in days]
        return [d.strftime("%Y-%m-%d" if side == 0 else "%d/%m/%Y") for d in days]
    if kind == "mixed_int_str":
        return [int(v) if v % 2 else f"x{v}" for v in rng.integers(0, 6, n)]
    if kind == "typed_by_side":
        values = rng.integers(0, 4, n).tolist()
        return [str(v) for v in values] if side == 0 else values
    return [f"id-{side}-{i}" for i in range(n)]  # unique_string


def _frame(spec: Spec, n: int, side: int) -> pd.DataFrame:
    rng = np.random.default_rng([spec.seed, side])
    data = {}
    for j, (kind, share) in enumerate(zip(spec.kinds, spec.missing, strict=True)):
        values = pd.Series(_column(kind, n, rng, side), dtype=object)
        if share:
            values[rng.random(n) < share] = None
        data[f"c{j}_{kind}"] = values
    return pd.DataFrame(data, index=pd.RangeIndex(n))


def tables(spec: Spec) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    real = _frame(spec, spec.n_real, 0)
    synthetic = _frame(spec, spec.n_synthetic, 1)
    if spec.copies and spec.n_real and spec.n_synthetic:
        k = min(spec.copies, spec.n_real, spec.n_synthetic)
        synthetic.iloc[:k] = real.iloc[:k].to_numpy()
    holdout = None if spec.n_holdout is None else _frame(spec, spec.n_holdout, 2)
    # pandas picks dtypes as a reader would (numbers as numbers, None as missing)
    return (
        real.infer_objects(),
        synthetic.infer_objects(),
        None if holdout is None else holdout.infer_objects(),
    )


#: scores that are ratios, not shares: finite and >= 0 but not bounded by 1
UNBOUNDED = frozenset({"nndr", "membership_classification"})

#: what ran, per metric and status, across all examples (printed at the end);
#: "refused" counts a SynthriskError
SEEN: dict[str, dict[str, int]] = {}


def _refused(metric: str) -> None:
    SEEN.setdefault(metric, {}).setdefault("refused", 0)
    SEEN[metric]["refused"] += 1


def _check_result(result: MetricResult) -> None:
    assert result.status in STATUSES
    SEEN.setdefault(result.metric, {}).setdefault(result.status, 0)
    SEEN[result.metric][result.status] += 1
    if result.status != "ok":
        assert result.score is None
        assert result.reason
        return
    score = result.score
    assert score is not None
    assert math.isfinite(score), result
    assert score >= -1e-12, result
    if result.metric not in UNBOUNDED:
        assert score <= 1 + 1e-12, result
    if result.ci is not None:
        low, high = result.ci
        assert math.isfinite(low), result
        assert math.isfinite(high), result
        assert low <= high + 1e-12, result


def _unchanged(
    before: list[pd.DataFrame | None], after: list[pd.DataFrame | None]
) -> None:
    for a, b in zip(before, after, strict=True):
        if a is None:
            assert b is None
        else:
            pd.testing.assert_frame_equal(a, b)


@_settings(200)
@given(specs())
def test_schema_accepts_or_refuses_clearly(spec: Spec) -> None:
    real, synthetic, holdout = tables(spec)
    copies = [f if f is None else f.copy() for f in (real, synthetic, holdout)]
    try:
        prepared = prepare_tables(real, synthetic, holdout)
    except SynthriskError:
        return
    finally:
        _unchanged(copies, [real, synthetic, holdout])
    assert prepared.schema.modelable
    assert len(prepared.real) == spec.n_real
    for name in ("real", "synthetic", "holdout"):
        frame = getattr(prepared, name)
        if frame is not None:
            encoded = prepared.encoded(name)
            assert encoded.n_rows == len(frame)
            assert not np.isinf(encoded.numeric).any()


@_settings(80)
@given(specs())
def test_default_evaluation_reports_or_refuses_clearly(spec: Spec) -> None:
    real, synthetic, holdout = tables(spec)
    copies = [f if f is None else f.copy() for f in (real, synthetic, holdout)]
    try:
        report = evaluate(real, synthetic, holdout, seed=spec.seed % 7)
    except SynthriskError:
        _refused("(default evaluation)")
        return
    finally:
        _unchanged(copies, [real, synthetic, holdout])
    # every default metric, but those with nothing to examine in these tables (the
    # replay metrics without identifier or free-text columns) are left out
    prepared = prepare_tables(real, synthetic, holdout)
    assert [r.metric for r in report.results] == [
        m
        for m, cls in METRICS.items()
        if cls.runs_by_default and cls.applies_by_default(prepared)
    ]
    for result in report.results:
        _check_result(result)
    again = EvaluationReport.from_json(report.to_json())
    assert [r.status for r in again.results] == [r.status for r in report.results]


def _required(cls: type) -> list[str]:
    sig = inspect.signature(cls.__init__)
    return [
        p.name
        for p in sig.parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
        and p.default is inspect.Parameter.empty
    ]


def _params(metric_id: str, columns: list[str]) -> dict[str, Any]:
    """Parameters naming columns of the tables, for metrics that need some."""
    first, last = columns[:-1] or columns[:1], columns[-1]
    half = max(1, len(columns) // 2)
    by_name: dict[str, Any] = {
        "known_column_names": first, "sensitive_column_names": [last],
        "key_fields": first, "sensitive_fields": [last], "keys": first, "target": last,
        "secret": last, "aux_cols": first, "columns": columns, "quasi_identifiers": columns,
    }  # fmt: skip
    cls = METRICS[metric_id]
    params = {name: by_name[name] for name in _required(cls) if name in by_name}
    if metric_id == "linkability":
        params["aux_cols"] = [columns[:half], columns[half:] or columns[:half]]
    if "n_attacks" in cls.param_names():
        params["n_attacks"] = 20
    return params


#: examples fuzzing found, kept so that they always run
FOUND = (
    # numbers and text in one categorical column: the ML attackers sorted its levels
    (
        Spec(("mixed_int_str", "mixed_int_str"), (0.0, 0.0), 10, 4, 4, 0, 2923),
        "categorical_knn",
    ),
    (Spec(("mixed_int_str", "category"), (0.3, 0.0), 10, 6, 4, 0, 7), "categorical_rf"),
)


@_settings(200)
@given(specs(), st.sampled_from(sorted(METRICS)))
@example(*FOUND[0])
@example(*FOUND[1])
def test_every_metric_reports_or_refuses_clearly(spec: Spec, metric_id: str) -> None:
    real, synthetic, holdout = tables(spec)
    try:
        prepared = prepare_tables(real, synthetic, holdout)
    except SynthriskError:
        _refused("(schema)")
        return
    columns = [c.name for c in prepared.schema.modelable]
    try:
        metric = METRICS[metric_id].from_params(_params(metric_id, columns))
        report = evaluate(real, synthetic, holdout, metrics=[metric], seed=1)
    except SynthriskError:
        _refused(metric_id)
        return
    (result,) = report.results
    _check_result(result)


#: cells a spreadsheet or an exporter writes: numbers in several notations, dates,
#: booleans, missing markers, quotes, separators and line breaks inside cells, markup
CELLS = (
    "1", "-2", "3.5", "1,5", "1.234,5", "1 234,5", "1,234.5", "1e300", "-1e308", "1e400",
    "inf", "nan", "NA", "", " ", "?", "True", "false", "yes", "2021-03-04", "04/03/2021",
    "9999-12-31", "Zürich", "Genève", "é€", "🎂", "<script>", "[bold]", '"a,b"', '"x\ny"',
    '"q""uote"', "a;b", "\t", "0x1F", "00123",
)  # fmt: skip
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "cp1252", "latin-1")


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, str, str | None]:
    """Bytes of a CSV-like file, its extension and the --encoding a user might give."""
    sep = draw(st.sampled_from([",", ";", "\t", "|"]))
    n_cols = draw(st.integers(1, 4))
    names = draw(
        st.lists(
            st.sampled_from(["a", "b", "c", "A", "a ", "", "id", "Unnamed: 0", "é"]),
            min_size=n_cols,
            max_size=n_cols,
            unique=draw(st.integers(0, 9)) > 0,  # now and then a repeated name
        )
    )
    ragged = draw(st.integers(0, 4)) == 0  # now and then rows longer or shorter
    rows = [
        [
            draw(st.sampled_from(CELLS))
            for _ in range(
                n_cols + (draw(st.sampled_from([0, 1, -1])) if ragged else 0)
            )
        ]
        for _ in range(draw(st.sampled_from([0, 1, 2, 3, 5, 8])))
    ]
    trailing = draw(st.sampled_from(["", "", sep]))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    if draw(st.integers(0, 3)):  # mostly as a CSV writer quotes cells
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=sep, lineterminator=trailing + newline).writerows(
            [names, *rows]
        )
        lines = buffer.getvalue().split(newline)[:-1]
    else:  # and as a hand-made export joins them
        lines = [sep.join(row) + trailing for row in [names, *rows]]
    if draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from([f"sep={sep}", "# comment", ""])))
    text = newline.join(lines) + draw(st.sampled_from(["", newline]))
    encoding = draw(st.sampled_from(ENCODINGS))
    data = text.encode(encoding, errors="replace")
    suffix = draw(st.sampled_from([".csv", ".tsv", ".txt", ".csv.gz"]))
    # .csv.gz files, and now and then a gzip file named .csv
    if suffix == ".csv.gz" or draw(st.integers(0, 9)) == 0:
        data = gzip.compress(data, mtime=0)
    given = draw(st.sampled_from([None, None, encoding, "latin-1", "utf-16"]))
    return data, suffix, given


@_settings(300)
@given(csv_files())
def test_any_csv_file_reads_or_is_refused_clearly(
    file: tuple[bytes, str, str | None],
) -> None:
    """Whatever the bytes, the reader returns a table or a SynthriskError, and the schema
    then accepts the table (read twice, as real and synthetic) or refuses it clearly."""
    data, suffix, encoding = file
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"t{suffix}"
        path.write_bytes(data)
        try:
            frame, notes = read_table_with_notes(path, name="real", encoding=encoding)
        except SynthriskError:
            _refused("(read_table)")
            return
        finally:
            assert path.read_bytes() == data  # never modified
    assert len(frame) >= 1
    assert frame.shape[1] >= 1
    assert all(isinstance(note, str) and folder not in note for note in notes)
    try:
        prepared = prepare_tables(frame, frame.copy())
    except SynthriskError:
        _refused("(schema of a file)")
        return
    SEEN.setdefault("(file read)", {}).setdefault("ok", 0)
    SEEN["(file read)"]["ok"] += 1
    assert len(prepared.real) == len(frame)


@pytest.fixture(scope="module", autouse=True)
def _summary() -> Any:
    yield
    if SEEN:
        lines = [f"{m}: {dict(sorted(c.items()))}" for m, c in sorted(SEEN.items())]
        print("\nfuzz outcomes by metric and status:\n  " + "\n  ".join(lines))
