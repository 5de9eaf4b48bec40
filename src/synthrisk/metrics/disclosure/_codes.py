# SPDX-License-Identifier: BSD-3-Clause
"""CAP preprocessing: the known and sensitive columns of both tables as integer codes.

SDMetrics 0.32's rules: continuous columns binned on equal-width bins of the real
values (right-closed, outer edges open), missing values one category per column (or
never equal), the random-guess baseline ``1 - 1 / prod(n_unique_real(sensitive))``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal, cast, get_args

import numpy as np
import pandas as pd

import synthrisk.metrics._params as _params
from synthrisk._typing import FloatArray, IntArray
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context
from synthrisk.metrics.disclosure._kernels import CapMethod, cap_probabilities
from synthrisk.schema.keys import discretize
from synthrisk.schema.tables import Tables

__all__ = [
    "AttackCodes",
    "MissingRule",
    "NatBinning",
    "attack_codes",
    "cap_method",
    "check_binnable",
    "column_list",
    "exact_datetime",
    "identifier_like",
    "many_numeric_values",
    "no_real_value",
]

NatBinning = Literal["missing", "sdmetrics"]
MissingRule = Literal["category", "never_equal"]

_MANY_VALUES = 20


# ------------------------------------------------------------------ column encoding


@dataclasses.dataclass(frozen=True)
class AttackCodes:
    """Integer codes of the known and sensitive columns of both tables.

    Attributes
    ----------
    real_keys, synthetic_keys : ndarray of shape (n, n_known)
    real_sensitive, synthetic_sensitive : ndarray of shape (n, n_sensitive)
        Non-negative int64 codes shared between the two tables, column by column;
        missing values already turned into codes.
    baseline : float
        ``1 - 1 / prod(n distinct real values)`` over the sensitive columns.
    """

    real_keys: IntArray
    synthetic_keys: IntArray
    real_sensitive: IntArray
    synthetic_sensitive: IntArray
    baseline: float

    def probabilities(
        self,
        method: CapMethod,
        context: Context,
        real_rows: IntArray | None = None,
        synthetic_rows: IntArray | None = None,
    ) -> FloatArray:
        """:func:`cap_probabilities` on all rows or on the given row positions."""
        rk, rs = self.real_keys, self.real_sensitive
        sk, ss = self.synthetic_keys, self.synthetic_sensitive
        if real_rows is not None:
            rk, rs = rk[real_rows], rs[real_rows]
        if synthetic_rows is not None:
            sk, ss = sk[synthetic_rows], ss[synthetic_rows]
        return cap_probabilities(
            rk,
            rs,
            sk,
            ss,
            method=method,
            backend=context.backend,
            working_memory=context.working_memory,
        )


def column_list(value: Any, *, name: str, allow_empty: bool = False) -> list[str]:
    """``value`` as a list of column names (one name is a one-item list), else raise."""
    if allow_empty:
        return _params.column_list(allow_empty=True)(value, name)
    return _params.column_list()(value, name)


def cap_method(computation_method: Any, computation: Any) -> CapMethod:
    """Normalise ``computation_method`` (case-insensitive) and its alias ``computation``."""
    allowed = get_args(CapMethod)
    values = {}
    for name, value in (
        ("computation_method", computation_method),
        ("computation", computation),
    ):
        if value is None:
            continue
        if not isinstance(value, str) or value.lower() not in allowed:
            msg = f"`{name}` must be one of {list(allowed)}; got {value!r}."
            raise ParameterError(msg)
        values[name] = value.lower()
    if len(set(values.values())) > 1:
        msg = (
            f"`computation_method` ({computation_method!r}) and its alias `computation` "
            f"({computation!r}) disagree; give only one of them."
        )
        raise ParameterError(msg)
    return cast("CapMethod", next(iter(values.values()), "cap"))


def check_binnable(tables: Tables, names: Sequence[str]) -> None:
    for column in names:
        kind = tables.schema[column].kind
        if kind in ("categorical", "boolean"):
            msg = (
                f"`continuous_column_names` lists {column!r}, a {kind} column; only numerical and "
                "datetime columns can be binned. Remove it from the list (it is then matched exactly)."
            )
            raise ParameterError(msg)


def _numeric_values(
    tables: Tables, column: str, nat_binning: NatBinning
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Values to bin: float64 (numbers) or int64 ns (datetimes), plus missing masks."""
    kind = tables.schema[column].kind
    real, syn = tables.real[column], tables.synthetic[column]
    if kind == "datetime":
        r_ns = real.to_numpy(dtype="datetime64[ns]").view(np.int64)
        s_ns = syn.to_numpy(dtype="datetime64[ns]").view(np.int64)
        if nat_binning == "sdmetrics":
            # NaT read as the smallest int64, as pandas.to_numeric does
            return r_ns, s_ns, None, None
        return r_ns, s_ns, real.isna().to_numpy(), syn.isna().to_numpy()
    if kind == "numerical":
        return (
            real.to_numpy(dtype=np.float64),
            syn.to_numpy(dtype=np.float64),
            None,
            None,
        )
    # an id / pii / text column the user asked to bin: its raw values must be numbers
    try:
        r = pd.to_numeric(pd.Series(real.to_numpy(dtype=object)), errors="raise")
        s = pd.to_numeric(pd.Series(syn.to_numpy(dtype=object)), errors="raise")
        return (
            r.to_numpy(dtype=np.float64, na_value=np.nan),
            s.to_numpy(dtype=np.float64, na_value=np.nan),
            None,
            None,
        )
    except (TypeError, ValueError):
        msg = (
            f"`continuous_column_names` lists {column!r}, whose values are not numbers or dates; "
            "only numerical and datetime columns can be binned."
        )
        raise ParameterError(msg) from None


def _exact_codes(tables: Tables, column: str) -> tuple[IntArray, IntArray]:
    """Codes for exact matching, shared by both tables; -1 for missing values."""
    kind = tables.schema[column].kind
    real, syn = tables.real[column], tables.synthetic[column]
    n_real = len(real)
    if kind == "numerical":
        stacked: np.ndarray = np.concatenate(
            [real.to_numpy(dtype=np.float64), syn.to_numpy(dtype=np.float64)]
        )
        codes = pd.factorize(stacked)[0]
    elif kind == "datetime":
        r_ns = real.to_numpy(dtype="datetime64[ns]").view(np.int64)
        s_ns = syn.to_numpy(dtype="datetime64[ns]").view(np.int64)
        codes = pd.factorize(np.concatenate([r_ns, s_ns]))[0]
        codes[np.concatenate([real.isna().to_numpy(), syn.isna().to_numpy()])] = -1
    else:
        stacked = np.concatenate(
            [real.to_numpy(dtype=object), syn.to_numpy(dtype=object)]
        )
        codes = pd.factorize(stacked)[0]
    codes = codes.astype(np.int64, copy=False)
    return codes[:n_real], codes[n_real:]


def _fill_missing(
    real: IntArray, synthetic: IntArray, rule: MissingRule
) -> tuple[IntArray, IntArray]:
    """Turn code -1 into one extra category, or into codes equal to nothing."""
    top = max(int(real.max(initial=-1)), int(synthetic.max(initial=-1))) + 1
    real, synthetic = real.copy(), synthetic.copy()
    r_missing, s_missing = real < 0, synthetic < 0
    if rule == "category":
        real[r_missing] = top
        synthetic[s_missing] = top
    else:
        n_r = int(r_missing.sum())
        real[r_missing] = top + np.arange(n_r)
        synthetic[s_missing] = top + n_r + np.arange(int(s_missing.sum()))
    return real, synthetic


# ------------------------------------------------------------- caveats of the codes
# one home for each caveat, shared by the in-memory and the partitioned encodings


def no_real_value(column: str, context: Context, *, strict_types: bool) -> None:
    """A binned column without any real value: raise (strict) or warn."""
    if strict_types:
        msg = (
            f"continuous column {column!r} has no value in the real table, so it has no bins "
            "(SDMetrics 0.32 fails here with 'Bin edges must be unique'); strict_types=True."
        )
        raise ParameterError(msg)
    context.warn(
        f"continuous column {column!r} has no value in the real table: its real rows all fall "
        "in the missing-value category and its synthetic values in a single bin."
    )


def exact_datetime(column: str, context: Context, *, strict_types: bool) -> None:
    """A datetime column matched on exact timestamps: raise (strict) or warn."""
    if strict_types:
        msg = (
            f"datetime column {column!r} is not in `continuous_column_names`; SDMetrics 0.32 "
            "raises a TypeError here (strict_types=True). List it as continuous to bin it."
        )
        raise ParameterError(msg)
    context.warn(
        f"datetime column {column!r} is matched on exact timestamps; listing it in "
        "`continuous_column_names` (binned dates) is probably what you meant."
    )


def identifier_like(
    column: str, n_distinct: int, n_rows: int, context: Context
) -> None:
    """Warn when a known column matched exactly has about one value per real row."""
    if n_distinct > max(_MANY_VALUES, 0.5 * n_rows):
        context.warn(
            f"known column {column!r} has {n_distinct} distinct values in {n_rows} real "
            "rows and behaves like an identifier: real rows match synthetic rows only where "
            "both tables share a value."
        )


def many_numeric_values(
    column: str, n_distinct: int, n_bins: int, context: Context, *, numeric_hint: str
) -> None:
    """Warn when a numerical known column matched exactly has many distinct values."""
    if n_distinct > max(_MANY_VALUES, n_bins):
        context.warn(
            f"known column {column!r} is numerical with {n_distinct} distinct real values and is "
            f"matched exactly, which makes it close to an identifier; {numeric_hint}."
        )


def attack_codes(
    tables: Tables,
    known: Sequence[str],
    sensitive: Sequence[str],
    context: Context,
    *,
    continuous: Sequence[str] = (),
    n_bins: int = 10,
    nat_binning: NatBinning = "missing",
    missing: MissingRule = "category",
    strict_types: bool = False,
    numeric_hint: str = "list it in `continuous_column_names` to bin it",
) -> AttackCodes:
    """Encode the known and sensitive columns for the CAP kernels (SDMetrics' preprocessing).

    Continuous columns are binned with :func:`discretize`; every other column is matched
    on exact values. Missing values become one category per column
    (``missing="category"``) or never equal anything (``"never_equal"``). Caveats
    (datetimes matched exactly, numeric columns with many values matched exactly, binned
    columns with no real value) are recorded with ``context.warn``; with
    ``strict_types=True`` the cases where SDMetrics 0.32 raises raise a
    :class:`~synthrisk.exceptions.ParameterError` instead.
    """
    binned = set(continuous)
    encoded: dict[str, tuple[IntArray, IntArray]] = {}
    for column in dict.fromkeys([*known, *sensitive]):
        kind = tables.schema[column].kind
        if column in binned:
            r_vals, s_vals, r_miss, s_miss = _numeric_values(
                tables, column, nat_binning
            )
            present = r_vals if r_miss is None else r_vals[~r_miss]
            if (
                present.dtype.kind == "f" and np.isnan(present).all()
            ) or present.size == 0:
                no_real_value(column, context, strict_types=strict_types)
            r_codes, s_codes = discretize(
                r_vals, s_vals, n_bins, real_missing=r_miss, synthetic_missing=s_miss
            )
        else:
            if kind == "datetime":
                exact_datetime(column, context, strict_types=strict_types)
            r_codes, s_codes = _exact_codes(tables, column)
            if kind not in ("numerical", "datetime") and column in known:
                n_distinct = len(pd.unique(r_codes[r_codes >= 0]))
                identifier_like(column, n_distinct, r_codes.shape[0], context)
            if kind == "numerical" and column in known:
                n_distinct = len(pd.unique(r_codes[r_codes >= 0]))
                many_numeric_values(
                    column, n_distinct, n_bins, context, numeric_hint=numeric_hint
                )
        encoded[column] = _fill_missing(r_codes, s_codes, missing)
    n_distinct_product = 1
    for column in sensitive:
        n_distinct_product *= len(pd.unique(encoded[column][0]))
    baseline = 1 - float(1 / n_distinct_product)

    def stack(names: Sequence[str], side: int) -> IntArray:
        return np.ascontiguousarray(
            np.column_stack([encoded[c][side] for c in names]), dtype=np.int64
        )

    return AttackCodes(
        real_keys=stack(known, 0),
        synthetic_keys=stack(known, 1),
        real_sensitive=stack(sensitive, 0),
        synthetic_sensitive=stack(sensitive, 1),
        baseline=baseline,
    )


# ------------------------------------------------------------- scores and intervals
