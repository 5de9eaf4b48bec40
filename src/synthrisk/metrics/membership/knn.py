# SPDX-License-Identifier: BSD-3-Clause
"""kNN membership probabilities: GAN-Leaks' Parzen-window attack, holdout as non-members.

:class:`MembershipKnnProbabilities` follows IBM ai-privacy-toolkit (APT) 0.2.1
``DatasetAttackMembershipKnnProbabilities``: ROC AUC, average precision *and its
no-skill baseline*, DeLong interval, ROC points, and an optional kernel bandwidth.

Distances: see :mod:`synthrisk.metrics.membership._space` (mixed-type ``dcr`` distance
by default, Euclidean on pre-encoded numeric columns with ``mode="apt"``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from synthrisk._validation import check_option
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, custom, integer, option
from synthrisk.metrics._threat import FULL_RECORD, MEMBERS, ThreatModel
from synthrisk.metrics.membership._space import (
    DISTANCES,
    MODES,
    Space,
    n_rows,
    real_to_synthetic,
    resolve_distance,
)
from synthrisk.results import RecordScores
from synthrisk.schema.partitioned import is_partitioned
from synthrisk.schema.tables import Tables
from synthrisk.stats.mia import attack_summary, auc_control
from synthrisk.stats.ranking import auc_delong_interval, ranking_summary

__all__ = ["MembershipKnnProbabilities", "parzen_probabilities"]


def parzen_probabilities(
    distances: np.ndarray, *, bandwidth: float = 1.0
) -> np.ndarray:
    """GAN-Leaks' Parzen-window score of each query row: ``mean_j exp(-d_j / bandwidth)``.

    Parameters
    ----------
    distances : ndarray of shape (n_query, k)
        Distances to the k nearest synthetic rows.
    bandwidth : float, default=1.0
        Kernel width in distance units; APT fixes it at 1.

    Returns
    -------
    ndarray of shape (n_query,)
        Higher means "more likely a training row".
    """
    return np.asarray(np.average(np.exp(-np.asarray(distances) / bandwidth), axis=1))


def _check_bandwidth(bandwidth: Any, name: str) -> float | str | None:
    if bandwidth is None:
        return None
    if isinstance(bandwidth, str):
        return check_option(bandwidth, name=name, allowed=("median",))
    if (
        isinstance(bandwidth, bool)
        or not isinstance(bandwidth, (int, float))
        or not bandwidth > 0
        or math.isinf(bandwidth)
    ):
        msg = f"`bandwidth` must be a positive finite number, 'median' or None; got {bandwidth!r}."
        raise ParameterError(msg)
    return float(bandwidth)


@register
class MembershipKnnProbabilities(Metric):
    """GAN-Leaks membership attack: real rows with crowded synthetic neighbourhoods are members.

    Every real row (a member, label 1) and every holdout row (a non-member, label 0)
    gets the score ``mean_j exp(-d_j / bandwidth)`` over its ``k`` nearest synthetic
    rows; the score is the ROC AUC of that ranking (0.5 = no better than a coin, 1 =
    members perfectly recognised). Average precision is reported beside its no-skill
    baseline, the member share. IBM ai-privacy-toolkit 0.2.1
    ``DatasetAttackMembershipKnnProbabilities`` (equal to 1e-9 with ``mode="apt"``).

    Parameters
    ----------
    k : int, default=5
        Synthetic neighbours per row; the synthetic table needs at least ``k`` rows.
    bandwidth : float, "median" or None, default=None
        Width of the exponential kernel in distance units. ``"median"`` uses the
        median distance of the real and holdout rows to their nearest synthetic row,
        which makes the score scale-free; 1 is APT's fixed width, which makes it depend
        on the units of the data. None means ``"median"``, and 1 with ``mode="apt"``.
    mode : {"default", "apt"}, default="default"
        ``"apt"`` takes the columns as pre-encoded numbers and uses Euclidean
        distance, as APT does.
    distance : {"dcr", "gower", "euclidean"} or None, default=None
        Distance in the default mode (None = ``"dcr"``, the mixed-type distance).
    """

    id = "membership_knn_probabilities"
    shares = "real people and synthetic rows"
    cost = 0.5
    report_order = 150
    attack = (
        "An attacker holding the synthetic table guesses that a real person was in the training data "
        "when many synthetic rows sit close to their record."
    )
    threat_model = ThreatModel(
        attacker_holds=FULL_RECORD,
        target=MEMBERS,
        meaning=(
            "ROC AUC of telling training people from holdout people by how many synthetic rows sit close to their record: 0.5 = a coin toss, 1 = always right"
        ),
    )
    higher_is_safer = False
    requires_holdout = True

    k: Param[int] = Param(integer(minimum=1), 5, "Synthetic neighbours per row.")
    bandwidth: Param[float | str | None] = Param(
        custom(_check_bandwidth, "a positive finite number, 'median' or None"),
        None,
        "Width of the kernel; None: 'median', and 1 with mode='apt'.",
    )
    mode: Param[str] = Param(
        option(MODES), "default", "'apt': pre-encoded numbers, Euclidean distance."
    )
    distance: Param[str | None] = Param(
        option(DISTANCES, allow_none=True), None, "Distance; None: the mode's."
    )

    runs_partitioned = True

    def _check_params(self) -> None:
        self._replace_param("distance", resolve_distance(self.distance, self.mode))
        if self.bandwidth is None:
            self._replace_param("bandwidth", 1.0 if self.mode == "apt" else "median")

    def supports_partitioned(self) -> bool:
        """The default mode with the ``dcr`` distance runs on every row."""
        return self.mode == "default" and self.distance == "dcr"

    def _bandwidth(
        self, nearest: np.ndarray, everything: Any, context: Context
    ) -> float:
        """The kernel width: the parameter, or the median distance to the nearest row.

        ``everything`` (called only when that median is 0) gives every distance.
        """
        width = self.bandwidth  # a number or "median" (None is resolved when built)
        if isinstance(width, str) or width is None:
            width = _median_bandwidth(nearest, everything)
            if width is None:
                context.warn(
                    "every real and holdout row has exact copies among its nearest synthetic rows, so the "
                    "median bandwidth is 0; bandwidth 1 was used instead."
                )
                width = 1.0
        return float(width)

    def _probabilities(
        self,
        space: Space,
        real: Any,
        holdout: Any,
        syn: Any,
        context: Context,
        tables: Tables | None = None,
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Parzen probabilities of the real and holdout rows, and the bandwidth."""
        k = self.k
        shared = (
            None
            if tables is None
            else real_to_synthetic(tables, space, k=k, context=context)
        )
        if shared is not None and shared[1] is not None:
            # the search identification of this run uses too
            d_real, d_hold = shared[0].distances, shared[1].distances
        else:
            d_real = space.search(
                real, syn, k=k, context=context, description="kNN real → synthetic"
            ).distances
            d_hold = space.search(
                holdout,
                syn,
                k=k,
                context=context,
                description="kNN holdout → synthetic",
            ).distances
        bandwidth = self._bandwidth(
            np.r_[d_real[:, 0], d_hold[:, 0]],
            lambda: np.r_[d_real.ravel(), d_hold.ravel()],
            context,
        )
        p_real = parzen_probabilities(d_real, bandwidth=bandwidth)
        p_hold = parzen_probabilities(d_hold, bandwidth=bandwidth)
        return p_real, p_hold, bandwidth

    def _partitioned_probabilities(
        self, space: Space, real: Any, holdout: Any, syn: Any, context: Context
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """:meth:`_probabilities` on a cluster: the distances stay on the workers.

        The nearest distances come back for the median bandwidth, then every
        partition's probabilities; all distances only when that median is 0.
        """
        from synthrisk.neighbors import map_neighbors

        kept = []
        for query, what in ((real, "real"), (holdout, "holdout")):
            with context.progress.task(
                f"kNN {what} → synthetic", n_rows(query)
            ) as advance:
                kept.append(
                    map_neighbors(
                        query,
                        syn,
                        _distances,
                        k=self.k,
                        scale=space.scale,
                        working_memory=context.working_memory,
                        progress=advance,
                        keep=True,
                    )
                )
        client = syn.client
        sizes = [n_rows(real), n_rows(holdout)]
        try:

            def each(func: Any, *args: Any) -> np.ndarray:
                """``func`` of every partition's distances, real then holdout, in one array."""
                futures = [
                    client.submit(func, part, *args, pure=False)
                    for parts in kept
                    for part in parts
                ]
                return _fill(futures, sum(sizes))

            bandwidth = self._bandwidth(
                each(_nearest_column),
                lambda: np.concatenate(
                    [np.ravel(part.result()) for parts in kept for part in parts]
                ),
                context,
            )
            probabilities = each(_parzen_task, bandwidth)
        finally:
            for parts in kept:
                for part in parts:
                    part.release()
        return probabilities[: sizes[0]], probabilities[sizes[0] :], bandwidth

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        k = self.k
        space = Space.for_tables(tables, str(self.distance), self.mode)
        real, holdout, syn = (
            space.data(tables, name) for name in ("real", "holdout", "synthetic")
        )
        if n_rows(syn) < k:
            msg = (
                f"the `synthetic` table has {n_rows(syn)} row(s), fewer than k={k} neighbours; "
                f"lower `k` (metric {self.id!r}) or pass more synthetic rows."
            )
            raise InputError(msg)
        if is_partitioned(syn):
            p_real, p_hold, bandwidth = self._partitioned_probabilities(
                space, real, holdout, syn, context
            )
        else:
            p_real, p_hold, bandwidth = self._probabilities(
                space, real, holdout, syn, context, tables
            )
        scores = ranking_summary(p_real, p_hold)
        if bandwidth == 1.0 and np.count_nonzero(p_real == 0.0) + np.count_nonzero(
            p_hold == 0.0
        ) > 0.01 * (p_real.size + p_hold.size):
            context.warn(
                "more than 1% of the probabilities underflow to exactly 0 (distances are large compared with "
                "the bandwidth of 1), which ties them; use bandwidth='median' for a scale-free kernel."
            )
        auc, average, baseline = (
            scores.roc_auc,
            scores.average_precision,
            scores.average_precision_baseline,
        )
        n_m, n_n = p_real.size, p_hold.size
        breakdown = {
            "roc_auc_score": auc,
            "average_precision_score": average,
            "average_precision_baseline": baseline,
            "expected_roc_auc_no_memorisation": 0.5,
            "mean_probability": {
                "members": float(p_real.mean()),
                "non_members": float(p_hold.mean()),
            },
            "bandwidth": bandwidth,
            "k": k,
            "distance": self.distance,
            "n_members": n_m,
            "n_non_members": n_n,
            "n_synthetic": n_rows(syn),
            "roc_curve": {"fpr": scores.fpr, "tpr": scores.tpr},
            **attack_summary(p_real, p_hold, seed=context.seed),
            "control": auc_control(p_real, p_hold),
        }
        records = {
            "real": RecordScores(
                "real",
                np.arange(n_m),
                p_real,
                "membership probability of each real (member) row: mean exp(-d/h)",
            ),
            "holdout": RecordScores(
                "holdout",
                np.arange(n_n),
                p_hold,
                "membership probability of each holdout (non-member) row",
            ),
        }
        params = dict(self.params)
        return Outcome(
            score=auc,
            breakdown=breakdown,
            ci=auc_delong_interval(p_real, p_hold),
            records=records,
            params=params,
        )


def _median_bandwidth(nearest: np.ndarray, everything: Any) -> float | None:
    """The median of ``nearest`` (reordered in place); if 0, the median positive value of ``everything()``."""
    median = float(np.median(nearest, overwrite_input=True))
    if median > 0:
        return median
    all_distances = everything()
    positive = all_distances[all_distances > 0]
    return float(np.median(positive)) if positive.size else None


def _fill(futures: list[Any], size: int) -> np.ndarray:
    """The futures' 1-d results, in order, in one array of ``size`` values.

    Each result is copied in as it is fetched, so the driver never holds the list of
    results beside their concatenation.
    """
    out = np.empty(size, dtype=np.float64)
    offset = 0
    for future in futures:
        part = future.result()
        out[offset : offset + part.size] = part
        offset += part.size
        future.release()
    if offset != size:  # pragma: no cover - partitions are counted when read
        msg = f"the partitions returned {offset} values for {size} rows"
        raise RuntimeError(msg)
    return out


def _distances(neighbors: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Task: the neighbours' distances (their positions are not needed)."""
    return neighbors[0]


def _nearest_column(distances: np.ndarray) -> np.ndarray:
    """Task: every row's distance to its nearest synthetic row."""
    return np.ascontiguousarray(distances[:, 0])


def _parzen_task(distances: np.ndarray, bandwidth: float) -> np.ndarray:
    """Task: :func:`parzen_probabilities` of one partition's rows."""
    return parzen_probabilities(distances, bandwidth=bandwidth)
