# SPDX-License-Identifier: BSD-3-Clause
"""People of related tables: whose row is each row, and a split that keeps people whole.

A person is a row of the root table with every row below it: their children, their
children's children, and so on, found through the foreign keys
(:meth:`RelationalMetadata.links`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from synthrisk._rng import as_generator
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError
from synthrisk.relational.metadata import (
    RelationalMetadata,
    check_tables,
    expand_sequences,
    load_metadata,
)

__all__ = ["person_of_rows", "split_people"]


def person_of_rows(
    tables: Mapping[str, pd.DataFrame], metadata: RelationalMetadata
) -> dict[str, pd.Series]:
    """The person (root primary key) of every row of the root table and the tables below it.

    Parameters
    ----------
    tables : dict of str to DataFrame
        One side's checked tables (see :func:`check_tables`).
    metadata : RelationalMetadata
        Multi-table metadata (sequential metadata expanded).

    Returns
    -------
    dict of str to Series
        For the root and each table below it, a Series aligned with the table's index
        holding the root key of each row's person. Tables outside the root's tree are
        absent.
    """
    root = metadata.tables[metadata.root]
    assert root.primary_key is not None  # checked by load_metadata
    keys = tables[metadata.root][root.primary_key]
    out: dict[str, pd.Series] = {
        metadata.root: pd.Series(keys.to_numpy(), index=keys.index)
    }
    for child, rel in metadata.links().items():
        parent_person = out[rel.parent]
        parent_keys = tables[rel.parent][rel.parent_key]
        lookup = pd.Series(parent_person.to_numpy(), index=parent_keys.to_numpy())
        foreign = tables[child][rel.child_key]
        out[child] = pd.Series(
            lookup.reindex(foreign.to_numpy()).to_numpy(), index=foreign.index
        )
    return out


def split_people(
    tables: Mapping[str, pd.DataFrame],
    metadata: Mapping[str, Any] | str | os.PathLike[str] | RelationalMetadata,
    holdout_share: float = 0.2,
    seed: int = 0,
    *,
    root: str | None = None,
) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """Split real related tables into a training part and a holdout part, by person.

    Every person (a root row with all the rows below it) lands on one side with all
    their rows; a random ``holdout_share`` of the people (rounded, at least one on each
    side) goes to the holdout. Tables outside the root's tree are copied to both sides.
    Train the generator on the first part only, and pass the second as ``holdout``.

    Parameters
    ----------
    tables : dict of str to DataFrame
        The real tables, by name (never modified).
    metadata : dict, path or RelationalMetadata
        Multi-table metadata, or sequential metadata (see :func:`load_metadata`).
    holdout_share : float, default=0.2
        Share of the people in the holdout, in (0, 1).
    seed : int, default=0
        Seed of the random choice of people.
    root : str, default=None
        The table whose rows are people (None: the table without a parent).

    Returns
    -------
    (dict of str to DataFrame, dict of str to DataFrame)
        The training tables and the holdout tables, rows in their original order.

    Raises
    ------
    ParameterError
        ``holdout_share`` is not in (0, 1), or there are fewer than two people.
    KeyIntegrityError
        Keys that do not hold together (see :func:`check_tables`).

    Examples
    --------
    >>> from synthrisk.datasets.relational import load_bank
    >>> bank = load_bank(n_customers=50, seed=1)
    >>> train, holdout = split_people(bank.real, bank.metadata, holdout_share=0.2, seed=0)
    >>> len(train["customers"]), len(holdout["customers"])
    (32, 8)
    """
    if (
        isinstance(holdout_share, bool)
        or not isinstance(holdout_share, (int, float))
        or not 0 < holdout_share < 1
    ):
        msg = f"`holdout_share` must be a number in (0, 1); got {holdout_share!r}."
        raise ParameterError(msg)
    seed = check_int(seed, name="seed", minimum=0)
    meta = load_metadata(metadata, root=root)
    expanded, meta_x = expand_sequences({"real": tables}, meta)
    real = expanded["real"]
    assert real is not None
    check_tables({"real": real}, meta_x)
    person = person_of_rows(real, meta_x)
    ids = person[meta_x.root].to_numpy()
    n = ids.size
    if n < 2:
        msg = f"there are {n} people in the root table {meta_x.root!r}; a split needs at least two."
        raise ParameterError(msg)
    n_holdout = min(max(round(holdout_share * n), 1), n - 1)
    rng = as_generator(seed)
    chosen = ids[rng.permutation(n)[:n_holdout]]
    train_out: dict[str, pd.DataFrame] = {}
    hold_out: dict[str, pd.DataFrame] = {}
    if meta.sequence is not None:
        # the user's one sequence table, split by its key
        name, frame = next(iter(tables.items()))
        in_holdout = frame[meta.sequence.key].isin(chosen).to_numpy()
        return {name: frame[~in_holdout]}, {name: frame[in_holdout]}
    for name, frame in tables.items():
        if name in person:
            in_holdout = person[name].isin(chosen).to_numpy()
            train_out[name] = frame[~in_holdout]
            hold_out[name] = frame[in_holdout]
        else:
            train_out[name] = frame
            hold_out[name] = frame
    return train_out, hold_out
