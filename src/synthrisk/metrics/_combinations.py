# SPDX-License-Identifier: BSD-3-Clause
"""Exact codes of column combinations shared by the real, synthetic and holdout tables.

Statistical-disclosure measures (synthpop, SDNist, the k-anonymity family) look at
records as *equivalence classes*: the records that agree on every value of a set of
columns (keys, quasi-identifiers); the membership measures use the same ids for exact
row matches. This module gives every distinct combination one integer id over all
tables; a missing value is a value of its own, as synthpop's ``"Missing"`` level.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthrisk._typing import IntArray
from synthrisk.schema.tables import Tables

__all__ = ["combination_codes", "present_tables"]


def present_tables(tables: Tables) -> list[str]:
    """Names of the tables that were given, in the order real, synthetic, holdout."""
    names = ["real", "synthetic"]
    if tables.holdout is not None:
        names.append("holdout")
    return names


def combination_codes(
    tables: Tables, columns: Sequence[str], names: Sequence[str] | None = None
) -> tuple[dict[str, IntArray], int]:
    """Integer id of each row's combination of values of ``columns``, shared by the tables.

    Parameters
    ----------
    tables : Tables
        Validated tables.
    columns : sequence of str
        The columns whose values form the combination (at least one).
    names : sequence of str, default=None
        Which tables to encode (default: every table that was given).

    Returns
    -------
    codes : dict of str to ndarray of shape (n_rows,)
        int64 ids in ``0 .. n_combinations - 1``; equal ids mean equal values
        (missing equal to missing).
    n_combinations : int
        Number of distinct combinations over those tables.
    """
    names = list(present_tables(tables) if names is None else names)
    frames = [tables.table(name)[list(columns)] for name in names]
    sizes = [len(f) for f in frames]
    stacked = pd.concat(frames, ignore_index=True)
    combined = np.zeros(len(stacked), dtype=np.int64)
    n_seen = 1
    for column in columns:
        codes, uniques = pd.factorize(stacked[column], use_na_sentinel=True)
        codes = codes.astype(np.int64)
        codes[codes < 0] = len(uniques)
        # mixed radix, compacted after each column so the ids never overflow
        combined = combined * (len(uniques) + 1) + codes
        _, combined = np.unique(combined, return_inverse=True)
        combined = np.asarray(combined, dtype=np.int64).ravel()
        n_seen = int(combined.max()) + 1 if combined.size else 0
    n_combinations = n_seen if combined.size else 0
    out, start = {}, 0
    for name, size in zip(names, sizes, strict=True):
        out[name] = combined[start : start + size]
        start += size
    return out, n_combinations
