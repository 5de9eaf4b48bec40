# SPDX-License-Identifier: BSD-3-Clause
"""ε-identifiability (ADS-GAN): real records closer to a synthetic record than to any other real record.

Yoon, Drumright & van der Schaar (2020), "Anonymization through data synthesis using
generative adversarial networks (ADS-GAN)", IEEE JBHI 24(8): a real record ``x`` is
*identifiable* when its nearest synthetic record is closer than its nearest other real
record, ``d(x, S) < d(x, R \\ {x})``; the ε-identifiability risk is the share of such real
records. Two peers compute it differently:

* SynthEval's ``eps_risk`` (``metric_epsilon_identifiability.py``): columns weighted by
  ``1 / entropy`` of the real column (rounded values; min-max scaled numbers, label
  encoded categories), SynthEval's weighted Gower distance; with a holdout,
  ``priv_loss`` = risk on real − the holdout's count divided by the *real* table's size.
* synthcity's ``identifiability_score``: the entropy weights are computed and then
  overwritten with 1, so plain Euclidean distance on the numeric (pre-encoded) data.

The holdout control of synthrisk compares the real table with the holdout at equal
sizes (the nearest *other* record of a smaller table is farther, which inflates the
risk), per record, with a test.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk.exceptions import InputError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, integer, option
from synthrisk.metrics._threat import SYNTHETIC_ONLY, TRAINING, ThreatModel
from synthrisk.metrics.membership._columns import with_columns
from synthrisk.metrics.membership._space import (
    Data,
    Space,
    concat_rows,
    n_rows,
    numeric_matrix,
    take_rows,
)
from synthrisk.neighbors import Neighbors, nearest_neighbors
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import compare_proportions, wilson_bounds

__all__ = ["EpsilonIdentifiability", "entropy_weights"]

VARIANTS = ("syntheval", "synthcity", "dcr")


def _entropy(values: np.ndarray) -> float:
    _, counts = np.unique(values, return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def entropy_weights(
    numeric: FloatArray, codes: IntArray
) -> tuple[FloatArray, FloatArray]:
    """SynthEval's weights ``1 / (H + 1e-16)``, ``H`` the entropy of the rounded real column."""
    w_num = np.array(
        [
            1.0 / (_entropy(np.round(numeric[:, j])) + 1e-16)
            for j in range(numeric.shape[1])
        ]
    )
    w_cat = np.array(
        [1.0 / (_entropy(codes[:, j]) + 1e-16) for j in range(codes.shape[1])]
    )
    return w_num, w_cat


@dataclasses.dataclass(frozen=True)
class _Searcher:
    """The tables of one variant in its distance, and how to search them.

    ``cap`` is SynthEval's quirk: it finds the nearest *other* record by adding 1 to
    the diagonal of the distance matrix, so that distance is never above 1.
    """

    arrays: dict[str, Data]
    #: ``search(query, reference, k, what, radius)``: the k nearest reference rows;
    #: with ``radius`` (one per query row) the search may leave out rows farther away
    search: Callable[[Data, Data, int, str, FloatArray | None], Neighbors]
    cap: float = math.inf


def _syntheval_searcher(
    tables: Tables, names: list[str], context: Context
) -> _Searcher:
    """SynthEval's weighted Gower distance on the mixed-type engine.

    ``d(x, y) = (Σ_num w_j |x_j - y_j| + n_cat Σ_cat w_c [x_c != y_c] / Σ w_cat) / Σ w``
    on numbers min-max scaled over every table: the engine sums the per-column terms
    with weights ``w_j`` and ``n_cat w_c / Σ w_cat`` and the sum is divided by ``Σ w``.
    The numeric columns are searched heaviest first, so that a row that cannot be
    nearer is abandoned after as few terms as possible (SynthEval's entropy weights
    often make one column dominate: ``fnlwgt`` carries 58 % of Adult's).
    """
    encoded = {name: tables.encoded(name) for name in names}
    stacked = np.vstack([encoded[name].numeric for name in names])
    n_num = stacked.shape[1]
    lo = np.nanmin(stacked, axis=0) if n_num else np.zeros(0)
    span = (np.nanmax(stacked, axis=0) - lo) if n_num else np.zeros(0)
    span = np.where((span == 0) | np.isnan(span), 1.0, span)
    real = encoded["real"]
    w_num, w_cat = entropy_weights((real.numeric - lo) / span, real.codes)
    heavy_first = np.argsort(-w_num, kind="stable")
    scaled: dict[str, Data] = {
        name: dataclasses.replace(
            table,
            numeric=np.ascontiguousarray(((table.numeric - lo) / span)[:, heavy_first]),
            numeric_names=tuple(table.numeric_names[j] for j in heavy_first),
        )
        for name, table in encoded.items()
    }
    total = float(w_num.sum() + w_cat.sum())
    cat = w_cat * (w_cat.size / w_cat.sum()) if w_cat.size else w_cat
    weights = np.concatenate([w_num[heavy_first], cat])
    backend = "numba" if context.backend == "torch" else context.backend

    def search(
        query: Data, reference: Data, k: int, what: str, radius: FloatArray | None
    ) -> Neighbors:
        # the engine sums before SynthEval's division: widen the radius for rounding
        bound = None if radius is None else radius * total * (1 + 1e-9)
        with context.progress.task(what, n_rows(query)) as advance:
            found = nearest_neighbors(
                query,
                reference,
                k=k,
                distance="gower",
                scale=np.ones(n_num),
                weights=weights,
                backend=backend,
                working_memory=context.working_memory,
                progress=advance,
                max_distance=bound,
            )
        return Neighbors(distances=found.distances / total, indices=found.indices)

    return _Searcher(scaled, search, cap=1.0)


def _synthcity_searcher(
    tables: Tables, names: list[str], context: Context
) -> _Searcher:
    """synthcity's search itself: scikit-learn's ``NearestNeighbors`` (Euclidean).

    scikit-learn picks a KD-tree up to 15 columns and brute force above, each with its
    own rounding; searching as synthcity does gives its numbers bit for bit, and the
    KD-tree is far faster than brute force on few columns.
    """
    from sklearn.neighbors import NearestNeighbors

    arrays: dict[str, Data] = {name: numeric_matrix(tables, name) for name in names}

    def search(
        query: Data, reference: Data, k: int, what: str, radius: FloatArray | None
    ) -> Neighbors:
        with context.progress.task(what, n_rows(query)) as advance:
            fitted = NearestNeighbors(n_neighbors=k).fit(reference)
            distances, indices = fitted.kneighbors(query)
            advance(n_rows(query))
        return Neighbors(distances=distances, indices=indices)

    return _Searcher(arrays, search)


def _dcr_searcher(tables: Tables, names: list[str], context: Context) -> _Searcher:
    """synthrisk's mixed-type ``dcr`` distance on the shared engine."""
    space = Space.for_tables(tables, "dcr")
    arrays = {name: space.data(tables, name) for name in names}
    backend = "numba" if context.backend in ("torch", "dask") else context.backend

    def search(
        query: Data, reference: Data, k: int, what: str, radius: FloatArray | None
    ) -> Neighbors:
        if radius is None:
            return space.search(
                query, reference, k=k, context=context, description=what
            )
        with context.progress.task(what, n_rows(query)) as advance:
            return nearest_neighbors(
                query,
                reference,
                k=k,
                distance="dcr",
                scale=space.scale,
                backend=backend,
                working_memory=context.working_memory,
                progress=advance,
                max_distance=radius,
            )

    return _Searcher(arrays, search)


_SEARCHERS = {
    "syntheval": _syntheval_searcher,
    "synthcity": _synthcity_searcher,
    "dcr": _dcr_searcher,
}


@dataclasses.dataclass(frozen=True)
class _Closer:
    """For each row of one side, the other rows of that side as close as its synthetic row.

    ``rows``/``mask``: the row positions in its k-list at most ``to_syn`` away (itself
    excluded); ``complete``: the list holds every such row (its last slot is farther or
    empty), else there may be more.
    """

    rows: IntArray
    mask: np.ndarray
    complete: np.ndarray

    @classmethod
    def from_search(cls, own: Neighbors, to_syn: FloatArray) -> _Closer:
        self_rows = np.arange(own.indices.shape[0])[:, None]
        mask = (own.distances <= to_syn[:, None]) & (own.indices != self_rows)
        complete = ~(own.distances[:, -1] <= to_syn)
        return cls(own.indices, mask, complete)

    def identifiable(self, rows: IntArray, in_sample: np.ndarray) -> np.ndarray:
        """Per sampled row: no other *sampled* row as close (-1: the list cannot tell)."""
        hit = (self.mask[rows] & in_sample[self.rows[rows]]).any(axis=1)
        out = np.where(hit, 0, 1)
        return np.where(~hit & ~self.complete[rows], -1, out)


@register
class EpsilonIdentifiability(Metric):
    """ε-identifiability risk: share of real records whose nearest synthetic record is closer than any other real record.

    ``variant="syntheval"`` (default) reproduces SynthEval's ``eps_risk``: entropy
    weights and SynthEval's weighted Gower distance on min-max scaled numbers and
    categories (every column type). ``variant="synthcity"`` reproduces synthcity's
    ``identifiability_score``: unweighted Euclidean distance on pre-encoded numeric
    columns. With a holdout, the same share for holdout records (the real table sampled
    to the holdout's size, ``n_repeats`` times) is the control in
    ``breakdown["control"]``, and SynthEval's ``priv_loss`` is in the breakdown.

    Parameters
    ----------
    variant : {"syntheval", "synthcity", "dcr"}, default="syntheval"
        Whose distance and weights; ``"dcr"`` is synthrisk's unweighted mixed-type
        distance (no peer's numbers, but much faster on tables with many categories:
        SynthEval's weighting needs a one-hot embedding).
    n_repeats : int, default=10
        Equal-size samples of the larger of real and holdout for the control.
    """

    id = "epsilon_identifiability"
    report_order = 205
    attack = (
        "An attacker holding the synthetic table finds, for a real person, a synthetic record closer to "
        "them than any other real person is: the synthetic record identifies them."
    )
    threat_model = ThreatModel(
        attacker_holds=SYNTHETIC_ONLY,
        target=TRAINING,
        meaning=(
            "share of real records whose nearest synthetic record is closer than their nearest other real record (ε-identifiability): 0 = no one identifiable"
        ),
        compared=("columns",),
    )
    higher_is_safer = False
    runs_by_default = False

    variant: Param[str] = Param(
        option(VARIANTS),
        "syntheval",
        "Whose distance and weights (a peer's or synthrisk's).",
    )
    n_repeats: Param[int] = Param(
        integer(minimum=1), 10, "Equal-size samples of the larger of real and holdout."
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        names = ["real", "synthetic"] + (
            ["holdout"] if tables.holdout is not None else []
        )
        variant = self.variant
        searcher = _SEARCHERS[variant](tables, names, context)
        arrays = searcher.arrays
        real, syn = arrays["real"], arrays["synthetic"]
        n_r = n_rows(real)
        if n_r < 2:
            msg = f"`epsilon_identifiability` needs at least 2 real rows (the nearest *other* real row); got {n_r}."
            raise InputError(msg)
        hold = arrays.get("holdout")
        n_h = n_rows(hold) if hold is not None else 0
        m = min(n_r, n_h)
        if hold is not None and n_h >= 2:
            # one search: real and holdout rows share most category combinations
            both = searcher.search(
                concat_rows(real, hold), syn, 1, "real and holdout → synthetic", None
            ).distances[:, 0]
            d_syn, d_hold = both[:n_r], both[n_r:]
        else:
            d_syn = searcher.search(real, syn, 1, "real → synthetic", None).distances[
                :, 0
            ]
        # one search of each side against itself, bounded by the distance to the
        # synthetic table, serves the full-size flags and the equal-size samples
        own_r = searcher.search(
            real, real, self._k_inner(n_r, m), "real → other real rows", d_syn
        )
        closer_r = _Closer.from_search(own_r, d_syn)
        flags = (d_syn < searcher.cap) & ~closer_r.mask.any(axis=1)
        n_id = int(flags.sum())
        breakdown: dict[str, JSONValue] = {
            "eps_risk": n_id / n_r,
            "n_identifiable": n_id,
            "n_real": n_r,
            "n_synthetic": n_rows(syn),
            "variant": variant,
        }
        records = {
            "identifiable": RecordScores(
                "real",
                np.arange(n_r),
                flags.astype(np.float64),
                "1 if the real record's nearest synthetic record is closer than its nearest other real record",
            ),
            "distance_to_synthetic": RecordScores(
                "real",
                np.arange(n_r),
                d_syn,
                "distance of the real record to its nearest synthetic record",
            ),
        }
        if hold is not None and n_h >= 2:
            own_h = searcher.search(
                hold,
                hold,
                self._k_inner(n_h, m),
                "holdout → other holdout rows",
                d_hold,
            )
            closer_h = _Closer.from_search(own_h, d_hold)
            hold_flags = (d_hold < searcher.cap) & ~closer_h.mask.any(axis=1)
            # SynthEval divides the holdout's count by the real table's size
            breakdown["priv_loss"] = n_id / n_r - float(hold_flags.sum()) / n_r
            repeats = self.n_repeats
            x_r, x_h = float(n_id), float(hold_flags.sum())
            if n_r > n_h:
                x_r = self._equal_size(
                    real, d_syn, closer_r, m, repeats, searcher, context
                )
            elif n_h > n_r:
                x_h = self._equal_size(
                    hold, d_hold, closer_h, m, repeats, searcher, context
                )
            breakdown["eps_risk_holdout"] = float(hold_flags.mean())
            breakdown["control"] = compare_proportions(
                x_r, m, x_h, m, statistic="eps_risk (equal-size samples)"
            )
            records["identifiable_holdout"] = RecordScores(
                "holdout",
                np.arange(n_h),
                hold_flags.astype(np.float64),
                "1 if the holdout record's nearest synthetic record is closer than its nearest other holdout record",
            )
        outcome = Outcome(
            score=n_id / n_r,
            breakdown=breakdown,
            ci=wilson_bounds(n_id, n_r, 1.959963984540054),
            records=records,
        )
        return with_columns(outcome, self, tables)

    @staticmethod
    def _k_inner(n: int, m: int) -> int:
        """Neighbours to keep per row: 2 (itself and the nearest other row), more when
        the table is sampled down to ``m`` rows for the control, so that a sampled
        row's nearest other *sampled* row is in its list in all but about 1 % of cases."""
        if m >= n or m < 2:
            return min(2, n)
        miss = 1.0 - (m - 1) / (n - 1)
        k = math.ceil(math.log(0.01) / math.log(miss)) + 1 if miss > 0 else 2
        return int(min(max(k, 2), 64, n))

    @staticmethod
    def _equal_size(
        side: Data,
        to_syn: FloatArray,
        closer: _Closer,
        m: int,
        repeats: int,
        searcher: _Searcher,
        context: Context,
    ) -> float:
        """Mean number of identifiable rows over ``repeats`` samples of ``m`` rows."""
        n = n_rows(side)
        total = 0.0
        for _ in range(repeats):
            rows = np.sort(context.rng.choice(n, size=m, replace=False))
            in_sample = np.zeros(n, dtype=bool)
            in_sample[rows] = True
            flags = closer.identifiable(rows, in_sample).astype(np.float64)
            unknown = flags < 0
            if unknown.any():
                # rare: every row of the k-list is as close and none was drawn
                inner = searcher.search(
                    take_rows(side, rows[unknown]),
                    take_rows(side, rows),
                    2,
                    "nearest other sampled row",
                    None,
                ).distances[:, 1]
                flags[unknown] = to_syn[rows[unknown]] < inner
            flags *= to_syn[rows] < searcher.cap
            total += float(flags.sum())
        return total / repeats
