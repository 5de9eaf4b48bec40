# SPDX-License-Identifier: BSD-3-Clause
"""Every column as the secret in turn, the worst column as the headline: the shared steps.

Two attack families have a default run that attacks each usable column in turn, the
attacker knowing the others: Anonymeter-style inference (``inference`` with
``secret=None``) and the ML attackers (``sensitive_fields=None``). Both then report one
entry per column, adjust the columns' holdout p-values for multiplicity with Holm's
step-down correction (:func:`~synthrisk.stats.holdout.holm`) and take the worst column
as the headline. This module holds those steps, so that both families judge their
columns alike:

* :func:`holm_across` adjusts the p-values of the columns that have one; a column
  without a test (None) keeps None;
* :func:`holm_levels_across` gives each column the one-sided level matching its Holm
  step (:func:`~synthrisk.stats.holdout.holm_levels`);
* :func:`worst_column` picks the headline column (the first on ties).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

from synthrisk.stats.holdout import ALPHA, holm, holm_levels

__all__ = ["holm_across", "holm_levels_across", "worst_column"]

#: a p-value, or None where a column has no test
P = TypeVar("P", bound=float | None)


def holm_across(p_values: Mapping[str, P]) -> dict[str, P]:
    """Holm-adjusted p-values across the columns; a column without a p-value keeps None.

    Parameters
    ----------
    p_values : mapping of str to float or None
        Each column's raw one-sided p-value, None where the column has no test.

    Returns
    -------
    dict of str to float or None
        The adjusted p-values, in the order of ``p_values``; the family is the columns
        with a p-value.

    Examples
    --------
    >>> holm_across({"a": 0.01, "b": None, "c": 0.04})
    {'a': 0.02, 'b': None, 'c': 0.04}
    """
    present = {c: p for c, p in p_values.items() if p is not None}
    adjusted = dict(zip(present, holm(list(present.values())), strict=True))
    return {c: cast("P", adjusted.get(c)) for c in p_values}


def holm_levels_across(
    p_values: Mapping[str, float], alpha: float = ALPHA
) -> dict[str, float]:
    """The one-sided level matching each column's Holm decision at family-wise error ``alpha``.

    Parameters
    ----------
    p_values : mapping of str to float
        Each column's raw one-sided p-value.
    alpha : float, default=ALPHA
        Family-wise error rate (the verdict's default, one-sided).

    Returns
    -------
    dict of str to float
        :func:`~synthrisk.stats.holdout.holm_levels` of the columns, by column.

    Examples
    --------
    >>> {c: round(a, 4) for c, a in holm_levels_across({"a": 0.001, "b": 0.04}).items()}
    {'a': 0.025, 'b': 0.05}
    """
    levels = holm_levels(list(p_values.values()), alpha)
    return dict(zip(p_values, levels, strict=True))


def worst_column(
    columns: Iterable[str], key: Callable[[str], Any], *, highest: bool = True
) -> str:
    """The headline column: the one whose ``key`` is the highest (``highest=False``: lowest).

    Parameters
    ----------
    columns : iterable of str
        The candidate columns, in table order (at least one).
    key : callable
        ``key(column)``: how bad the column is, comparable across columns.
    highest : bool, default=True
        Whether the worst column has the highest key (a risk) or the lowest (a
        protection score).

    Returns
    -------
    str
        The worst column; on ties the first in ``columns``.

    Examples
    --------
    >>> worst_column(["a", "b", "c"], {"a": 0.2, "b": 0.5, "c": 0.5}.get)
    'b'
    >>> worst_column(["a", "b"], {"a": 0.2, "b": 0.5}.get, highest=False)
    'a'
    """
    pick = max if highest else min
    return pick(columns, key=key)
