# SPDX-License-Identifier: BSD-3-Clause
"""Person features of how long and how rare a person's rows are, table by table.

Averaged summaries (:class:`~synthrisk.relational.features.PersonFeatures`) make a long
history of rare codes look typical: its means and shares sit among everyone else's.
Two features per table ``T`` below the root describe the rows themselves, so that a
person with a long, rare history is far from every other real person (isolated) in
the distance of the person-level metrics:

* ``T.n_rows.log`` — ``log(1 + n)`` of the person's ``n`` rows in ``T``;
* ``T.code_bits`` — the information of the codes of the person's rows in ``T``: for
  each of their rows and each categorical column of ``T`` (codes with many levels
  included), ``-log2`` of the share of the real rows of ``T`` holding that value
  (a value no real row holds counts as one in ``N + 1``), summed (to 10⁻⁶, so that
  the order of the rows never changes it). Fifteen admissions
  with rare diagnoses carry hundreds of bits; one common admission a few.

The shares are fitted on the real rows (training and holdout pooled) and applied the
same way on every side, so a verbatim copy of a person has their features exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from synthrisk.relational.features import PersonFeatures

__all__ = ["RowRarity"]

_MISSING = "\x00missing"


def _text(values: pd.Series) -> np.ndarray:
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    text = np.array([str(u) for u in uniques] + [_MISSING], dtype=object)
    return text[codes]  # -1 (missing) -> the missing marker


@dataclasses.dataclass(frozen=True)
class RowRarity:
    """Bits of each value of each categorical column, per table, fitted on the real rows.

    Build it with :meth:`fit`, then :meth:`transform` each side; ``metadata`` holds the
    feature columns (all numerical).
    """

    tables: tuple[str, ...]
    bits: Mapping[
        str, Mapping[str, Mapping[str, float]]
    ]  # table -> column -> value -> bits
    unseen: Mapping[str, float]  # table -> bits of a value no real row holds

    @classmethod
    def fit(
        cls,
        sides: Mapping[str, Mapping[str, pd.DataFrame]],
        plan: PersonFeatures,
    ) -> RowRarity:
        """Count each value's share of the real rows (every side in ``sides`` pooled)."""
        frames = list(sides.values())
        bits: dict[str, dict[str, dict[str, float]]] = {}
        unseen: dict[str, float] = {}
        names = []
        for table in plan.plans:
            names.append(table.name)
            pooled = pd.concat([f[table.name] for f in frames], ignore_index=True)
            n = len(pooled)
            unseen[table.name] = float(np.log2(n + 1))
            per_column: dict[str, dict[str, float]] = {}
            for column, kind in table.ordered:
                if kind != "categorical" or column not in pooled.columns:
                    continue
                counts = pd.Series(_text(pooled[column])).value_counts()
                per_column[column] = {
                    str(k): float(np.log2(n / v)) for k, v in counts.items()
                }
            bits[table.name] = per_column
        return cls(tuple(names), bits, unseen)

    @property
    def metadata(self) -> dict[str, dict[str, Any]]:
        """The feature columns, as single-table metadata columns."""
        out: dict[str, dict[str, Any]] = {}
        for name in self.tables:
            out[f"{name}.n_rows.log"] = {"sdtype": "numerical"}
            if self.bits[name]:
                out[f"{name}.code_bits"] = {"sdtype": "numerical"}
        return out

    def transform(
        self,
        tables: Mapping[str, pd.DataFrame],
        person: Mapping[str, pd.Series],
        root: str,
    ) -> pd.DataFrame:
        """One side's features: one row per root row, in the root's order.

        Parameters
        ----------
        tables : dict of str to DataFrame
            One side's tables (never modified).
        person : dict of str to Series
            Each row's person (:func:`~synthrisk.relational.people.person_of_rows`).
        root : str
            The root table.

        Returns
        -------
        DataFrame
            Indexed like :meth:`PersonFeatures.transform`'s output (the root key as
            text), the columns of :attr:`metadata`.
        """
        ids = person[root].astype(str).to_numpy()
        index = pd.Index(ids)
        n = ids.size
        out: dict[str, np.ndarray] = {}
        for name in self.tables:
            frame = tables[name]
            position = index.get_indexer(person[name].astype(str).to_numpy())
            ok = position >= 0
            counts = np.bincount(position[ok], minlength=n).astype(np.float64)
            out[f"{name}.n_rows.log"] = np.log1p(counts)
            if not self.bits[name]:
                continue
            row_bits = np.zeros(len(frame))
            for column, table in self.bits[name].items():
                if column not in frame.columns:
                    row_bits += self.unseen[name]
                    continue
                values = pd.Series(_text(frame[column]))
                row_bits += (
                    values.map(table).fillna(self.unseen[name]).to_numpy(np.float64)
                )
            # rounded, so that the order of a person's rows never changes their sum
            out[f"{name}.code_bits"] = np.round(
                np.bincount(position[ok], weights=row_bits[ok], minlength=n), 6
            )
        return pd.DataFrame(out, index=pd.Index(ids, name="person"))
