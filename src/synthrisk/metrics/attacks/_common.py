# SPDX-License-Identifier: BSD-3-Clause
"""Pieces shared by the three Anonymeter-style attacks (singling out, linkability, inference).

* the ``compat`` option (``None`` = synthrisk's fixed behaviour, or the Anonymeter
  version whose behaviour to reproduce);
* validation of ``n_attacks`` and ``confidence_level`` and capping of ``n_attacks`` to
  the size of a table;
* the result breakdown (rates, risk, counts, PETsARD's view);
* nearest-neighbour search with Anonymeter's Gower variant and **random tie-breaking**:
  the reference rows are shuffled (seeded) before the search, so that among equally
  near rows the winner is uniformly random. The engine itself gives ties to the lowest
  position, which would make the two halves of a linkability attack pick the *same*
  synthetic row whenever their tied sets overlap (a min-hash effect that inflates the
  linkability rate); Anonymeter's numba quicksort picks an arbitrary tied row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context
from synthrisk.neighbors import nearest_neighbors
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.tables import Tables
from synthrisk.stats.intervals import (
    AttackEstimate,
    PrivacyRisk,
    check_confidence_level,
)

__all__ = [
    "Compat",
    "attack_breakdown",
    "cap_attacks",
    "check_compat",
    "check_confidence_level",
    "check_n_attacks",
    "datetimes_as_categories",
    "gower_neighbors",
    "score_and_ci",
    "shared_scale",
]

Compat = Literal["anonymeter-1.0", "anonymeter-1.1"]
COMPAT_OPTIONS: tuple[str | None, ...] = (None, *get_args(Compat))


def check_compat(value: Any) -> str | None:
    """Return ``value`` if it is None, ``"anonymeter-1.0"`` or ``"anonymeter-1.1"``."""
    if value is not None and (
        not isinstance(value, str) or value not in COMPAT_OPTIONS
    ):
        msg = (
            f"`compat` must be one of {list(COMPAT_OPTIONS)}; got {value!r}. "
            "None (the default) fixes Anonymeter's known bugs; a version string reproduces that version."
        )
        raise ParameterError(msg)
    return value


def check_n_attacks(value: Any, *, allow_none: bool) -> int | None:
    """Validate ``n_attacks`` (an integer >= 1, or None where allowed)."""
    return check_int(value, name="n_attacks", minimum=1, allow_none=allow_none)


def cap_attacks(
    n_requested: int, n_available: int, *, table: str, warnings: list[str]
) -> int:
    """``min(n_requested, n_available)``, recording a warning when it caps."""
    if n_requested > n_available:
        warnings.append(
            f"`n_attacks` ({n_requested}) is larger than the {table} table ({n_available} rows); "
            f"{n_available} {table} rows were attacked instead."
        )
        return n_available
    return n_requested


def attack_breakdown(
    estimate: AttackEstimate, **extra: JSONValue
) -> dict[str, JSONValue]:
    """Breakdown of an attack result: risk, rates, counts, PETsARD's view, then ``extra``."""
    out = estimate.to_dict()
    out["petsard"] = estimate.petsard()
    out.update(extra)
    return out


def score_and_ci(risk: PrivacyRisk) -> tuple[float | None, tuple[float, float] | None]:
    """The metric's ``score`` and ``ci`` from a risk (None where it is undefined)."""
    if math.isnan(risk.value):
        return None, None
    return risk.value, (risk.ci[0], risk.ci[1])


def shared_scale(tables: Tables, columns: Sequence[str]) -> FloatArray:
    """Range of each numeric column among ``columns`` over real ∪ synthetic ∪ holdout.

    synthrisk's default scale for the Gower distance: the same for the main and the
    control attack. (Anonymeter uses the range over the synthetic rows and the sampled
    targets, which differs between the two attacks and between runs.)
    """
    blocks = [
        tables.encoded(name).select(list(columns)).numeric
        for name in ("real", "synthetic", "holdout")
        if getattr(tables, name) is not None
    ]
    stacked = np.vstack(blocks)
    if stacked.shape[1] == 0:
        return np.zeros(0)
    # validation guarantees no column is entirely missing in a table
    return np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0)


def datetimes_as_categories(
    frames: Sequence[EncodedTable], datetime_names: Sequence[str]
) -> list[EncodedTable]:
    """Move datetime columns from the numeric block to category codes (Anonymeter's typing).

    Anonymeter label-encodes every non-number column, datetimes included, so two dates
    are either equal (distance 0) or not (distance 1). Codes are shared by ``frames``;
    a missing date is its own code, as with Anonymeter's label encoder.
    """
    frames = list(frames)
    if not frames:
        return frames
    moved = [
        i
        for i, name in enumerate(frames[0].numeric_names)
        if name in set(datetime_names)
    ]
    if not moved:
        return frames
    keep = [i for i in range(len(frames[0].numeric_names)) if i not in moved]
    new_codes = []
    for i in moved:
        stacked = np.concatenate([f.numeric[:, i] for f in frames])
        uniques = np.unique(stacked[~np.isnan(stacked)])
        per_frame = []
        for f in frames:
            col = f.numeric[:, i]
            codes = np.searchsorted(uniques, col).astype(np.int64)
            codes[np.isnan(col)] = len(uniques)
            per_frame.append(codes)
        new_codes.append(per_frame)
    out = []
    for j, f in enumerate(frames):
        extra = (
            np.column_stack([codes[j] for codes in new_codes])
            if new_codes
            else np.empty((f.n_rows, 0))
        )
        out.append(
            EncodedTable(
                numeric=np.ascontiguousarray(f.numeric[:, keep]),
                codes=np.ascontiguousarray(
                    np.hstack([f.codes, extra.astype(np.int64)])
                ),
                numeric_names=tuple(f.numeric_names[i] for i in keep),
                categorical_names=f.categorical_names
                + tuple(f.numeric_names[i] for i in moved),
            )
        )
    return out


def gower_neighbors(
    query: EncodedTable,
    reference: EncodedTable,
    *,
    k: int,
    rng: np.random.Generator,
    context: Context,
    scale: FloatArray | None,
    missing: Literal["mismatch", "anonymeter"],
    description: str,
) -> IntArray:
    """k nearest reference rows (Gower variant of Anonymeter), ties broken uniformly at random.

    Returns
    -------
    ndarray of shape (n_query, k)
        Row positions in ``reference``, nearest first.
    """
    perm = rng.permutation(reference.n_rows)
    with context.progress.task(description, query.n_rows) as advance:
        nn = nearest_neighbors(
            query,
            reference.take(perm),
            k=k,
            distance="gower",
            backend=context.backend,
            working_memory=context.working_memory,
            scale=scale,
            missing=missing,
            progress=advance,
        )
    return perm[nn.indices]
