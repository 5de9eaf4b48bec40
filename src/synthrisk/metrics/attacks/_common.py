# SPDX-License-Identifier: BSD-3-Clause
"""Pieces shared by the three Anonymeter-style attacks (singling out, linkability, inference).

* the ``compat`` option (``None`` = synthrisk's fixed behaviour, or the Anonymeter
  version whose behaviour to reproduce);
* validation of ``n_attacks`` and of the attacked columns, and capping of
  ``n_attacks`` to the size of a table;
* the metric's outcome (risk, rates, counts, PETsARD's view, caveats);
* nearest-neighbour search with Anonymeter's Gower variant and **random tie-breaking**:
  the reference rows are shuffled (seeded) before the search, so that among equally
  near rows the winner is uniformly random. The engine itself gives ties to the lowest
  position, which would make the two halves of a linkability attack pick the *same*
  synthetic row whenever their tied sets overlap (a min-hash effect that inflates the
  linkability rate); Anonymeter's numba quicksort picks an arbitrary tied row.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_int
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Outcome
from synthrisk.metrics._params import Param, confidence, custom, integer
from synthrisk.metrics.attacks._partitioned import (
    datetime_codes,
    move_datetimes,
    n_rows,
    numeric_bounds,
    on_cluster,
)
from synthrisk.neighbors import nearest_neighbors
from synthrisk.results import RecordScores
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.partitioned import PartitionedTable
from synthrisk.schema.tables import TABLE_NAMES, Tables
from synthrisk.stats.intervals import AttackEstimate

__all__ = [
    "ALL_TARGETS",
    "COMPAT",
    "CONFIDENCE_LEVEL",
    "N_ATTACKS",
    "Compat",
    "attack_neighbors",
    "attack_outcome",
    "attack_sizes",
    "cap_attacks",
    "check_attacks",
    "check_compat",
    "check_not_excluded",
    "datetimes_as_categories",
    "default_attacks",
    "gower_neighbors",
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


#: the ``compat`` parameter of the Anonymeter-family metrics
COMPAT: Param[str | None, Compat | None] = Param(
    custom(lambda value, name: check_compat(value), f"one of {list(COMPAT_OPTIONS)}"),
    None,
    "None fixes Anonymeter's known bugs; a version string reproduces that version.",
)
#: the ``confidence_level`` parameter of the Anonymeter-family metrics
CONFIDENCE_LEVEL: Param[float] = Param(
    confidence(), 0.95, "Confidence level of the intervals."
)
#: the ``n_attacks`` parameter of linkability and inference
#: targets per side of an attack with ``n_attacks="all"``: every real and holdout row, up to this many
ALL_TARGETS = 10_000

N_ATTACKS: Param[int | None] = Param(
    integer(minimum=1, allow_none=True),
    None,
    "Targets per attack; None = the holdout's size.",
)


def check_not_excluded(
    tables: Tables,
    columns: Sequence[str],
    *,
    name: str,
    remedy: str = "Give them another kind in the metadata.",
) -> None:
    """Refuse ``columns`` (the option ``name``) that the tables exclude from the metrics."""
    usable = {c.name for c in tables.schema.modelable}
    excluded = [c for c in columns if c in tables.schema.names and c not in usable]
    if excluded:
        msg = f"`{name}` names columns excluded from the metrics (id, pii or text): {excluded}. {remedy}"
        raise ParameterError(msg)


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


def default_attacks(tables: Tables) -> int:
    """Targets per attack by default: the holdout's size (the real table's without one)."""
    return n_rows(tables, "real" if tables.holdout is None else "holdout")


def check_attacks(value: Any, name: str) -> int | str | None:
    """An ``n_attacks`` value: an integer >= 1, None, or ``"all"`` (every row, up to :data:`ALL_TARGETS`)."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return "all"
    if isinstance(value, str):
        msg = (
            f'`{name}` must be an integer >= 1, "all" (every training and holdout row, up to '
            f"{ALL_TARGETS:,} each) or None (the holdout's size); got {value!r}."
        )
        raise ParameterError(msg)
    return check_int(value, name=name, minimum=1, allow_none=True)


def attack_sizes(
    tables: Tables, n_attacks: int | str | None, *, warnings: list[str]
) -> tuple[int, int, int | None]:
    """Targets requested, and those of the main and the control attack.

    ``n_attacks`` (None: :func:`default_attacks`) is capped, with a warning, to the
    size of the real table and of the holdout; the control count is None without a
    holdout. ``"all"`` attacks every real row and every holdout row, up to
    :data:`ALL_TARGETS` each (no warning: the sides then differ by design).
    """
    if n_attacks == "all":
        n_main = min(n_rows(tables, "real"), ALL_TARGETS)
        n_hold = (
            None
            if tables.holdout is None
            else min(n_rows(tables, "holdout"), ALL_TARGETS)
        )
        return n_main, n_main, n_hold
    assert not isinstance(n_attacks, str)
    requested = default_attacks(tables) if n_attacks is None else n_attacks
    n_main = cap_attacks(
        requested, n_rows(tables, "real"), table="real", warnings=warnings
    )
    n_control = (
        None
        if tables.holdout is None
        else cap_attacks(
            requested, n_rows(tables, "holdout"), table="holdout", warnings=warnings
        )
    )
    return requested, n_main, n_control


def attack_outcome(
    estimate: AttackEstimate,
    context: Context,
    *,
    attack: str,
    details: Mapping[str, JSONValue],
    records: dict[str, RecordScores],
    run_warnings: Sequence[str] = (),
    params: dict[str, JSONValue] | None = None,
    value_keys: tuple[str, ...] = (),
) -> Outcome:
    """The outcome of an attack metric.

    ``run_warnings`` (the run's caveats) and the estimate's caveats about ``attack``
    become the result's warnings; ``score`` and ``ci`` are the risk and its interval
    (None where the risk is undefined); the breakdown holds the risk, rates and counts,
    PETsARD's view, then ``details``.
    """
    for message in (*run_warnings, *estimate.warnings(attack=attack)):
        context.warn(message)
    risk = estimate.risk()
    breakdown = estimate.to_dict()
    breakdown["petsard"] = estimate.petsard()
    breakdown.update(details)
    undefined = math.isnan(risk.value)
    return Outcome(
        score=None if undefined else risk.value,
        breakdown=breakdown,
        ci=None if undefined else (risk.ci[0], risk.ci[1]),
        records=records,
        params=params,
        value_keys=value_keys,
    )


def shared_scale(tables: Tables, columns: Sequence[str]) -> FloatArray:
    """Range of each numeric column among ``columns`` over real ∪ synthetic ∪ holdout.

    synthrisk's default scale for the Gower distance: the same for the main and the
    control attack. (Anonymeter uses the range over the synthetic rows and the sampled
    targets, which differs between the two attacks and between runs.) Partitioned
    tables give it from their reduced domains.
    """
    if on_cluster(tables.encoded("real")):
        names = [name for name in TABLE_NAMES if getattr(tables, name) is not None]
        bounds = [numeric_bounds(tables.encoded(name), columns) for name in names]
        lo = functools.reduce(np.fmin, [b[0] for b in bounds])
        hi = functools.reduce(np.fmax, [b[1] for b in bounds])
        return hi - lo
    ranges = tables.derived(("shared numeric ranges",), lambda: _every_range(tables))
    return np.array([ranges[name] for name in columns if name in ranges], dtype=float)


def _every_range(tables: Tables) -> dict[str, float]:
    """:func:`shared_scale` of every numeric column, by name (computed once per run)."""
    blocks = [
        tables.encoded(name).numeric
        for name in ("real", "synthetic", "holdout")
        if getattr(tables, name) is not None
    ]
    stacked = np.vstack(blocks)
    names = tables.encoded("real").numeric_names
    if stacked.shape[1] == 0:
        return {}
    # validation guarantees no column is entirely missing in a table
    ranges = np.nanmax(stacked, axis=0) - np.nanmin(stacked, axis=0)
    return dict(zip(names, ranges.tolist(), strict=True))


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
        new_codes.append([datetime_codes(f.numeric[:, i], uniques) for f in frames])
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
    reference: EncodedTable | PartitionedTable,
    *,
    k: int,
    rng: np.random.Generator,
    context: Context,
    scale: FloatArray | None,
    missing: Literal["mismatch", "anonymeter"],
    description: str,
) -> IntArray:
    """k nearest reference rows (Gower variant of Anonymeter), ties broken uniformly at random.

    A partitioned ``reference`` stays on its cluster (the same neighbours).

    Returns
    -------
    ndarray of shape (n_query, k)
        Row positions in ``reference``, nearest first.
    """
    perm = rng.permutation(reference.n_rows)
    with context.progress.task(description, query.n_rows) as advance:
        if on_cluster(reference):
            # the reference stays on the cluster: searched in the order of perm
            indices = nearest_neighbors(
                query,
                reference,
                k=k,
                distance="gower",
                scale=scale,
                working_memory=context.working_memory,
                progress=advance,
                missing=missing,
                order=perm,
            ).indices
            return perm[indices]
        assert isinstance(reference, EncodedTable)
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


def attack_neighbors(
    tables: Tables,
    query: EncodedTable,
    reference: EncodedTable | PartitionedTable,
    *,
    k: int,
    compat: str | None,
    rng: np.random.Generator,
    context: Context,
    description: str,
) -> IntArray:
    """:func:`gower_neighbors` with the distance of an attack.

    Without ``compat``, numeric ranges are those of all the tables
    (:func:`shared_scale`) and a missing value differs from every value; with it,
    Anonymeter's distance (datetimes compared as categories, ranges of the rows
    compared, its rule for missing values).
    """
    scale: FloatArray | None = None
    missing: Literal["mismatch", "anonymeter"] = "anonymeter"
    if compat is None:
        scale, missing = shared_scale(tables, query.numeric_names), "mismatch"
    else:
        datetime_names = [
            c.name for c in tables.schema.modelable if c.kind == "datetime"
        ]
        if on_cluster(reference):
            query, reference = move_datetimes(query, reference, datetime_names)
        else:
            assert isinstance(reference, EncodedTable)
            query, reference = datetimes_as_categories(
                [query, reference], datetime_names
            )
    return gower_neighbors(
        query,
        reference,
        k=k,
        rng=rng,
        context=context,
        scale=scale,
        missing=missing,
        description=description,
    )
