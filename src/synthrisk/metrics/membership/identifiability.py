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

from typing import Any

import numpy as np

from synthrisk._typing import FloatArray, IntArray, JSONValue
from synthrisk._validation import check_int, check_option
from synthrisk.exceptions import InputError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics.membership._space import Space, n_rows
from synthrisk.neighbors import nearest_neighbors
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


class _SynthEvalSpace:
    """SynthEval's weighted Gower distance as an L1 distance on an embedding.

    ``d(x, y) = (Σ_num w_j |x_j - y_j| + n_cat Σ_cat w_c [x_c != y_c] / Σ w_cat) / Σ w``
    on min-max scaled numbers: numbers are multiplied by ``w_j / Σ w``, each category is
    a one-hot block of height ``n_cat w_c / (2 Σ w_cat Σ w)``, so the L1 distance of two
    embedded rows is SynthEval's distance, and the shared neighbour engine searches it.
    """

    def __init__(self, tables: Tables, names: list[str]) -> None:
        encoded = {name: tables.encoded(name) for name in names}
        stacked = np.vstack([encoded[name].numeric for name in names])
        lo = np.nanmin(stacked, axis=0) if stacked.shape[1] else np.zeros(0)
        span = (np.nanmax(stacked, axis=0) - lo) if stacked.shape[1] else np.zeros(0)
        span = np.where((span == 0) | np.isnan(span), 1.0, span)
        self.lo, self.span = lo, span
        real = encoded["real"]
        w_num, w_cat = entropy_weights((real.numeric - lo) / span, real.codes)
        self.w_num, self.w_cat = w_num, w_cat
        total = w_num.sum() + w_cat.sum()
        n_cat = w_cat.size
        self.num_factor = w_num / total
        self.cat_height = (
            n_cat * w_cat / (2.0 * w_cat.sum() * total) if n_cat else w_cat
        )
        max_code = max(
            (int(encoded[name].codes.max(initial=-1)) for name in names), default=-1
        )
        self.n_levels = max_code + 2  # codes -1 (missing) .. max_code
        self.encoded = encoded

    def data(self, name: str) -> FloatArray:
        table = self.encoded[name]
        num = (table.numeric - self.lo) / self.span * self.num_factor
        n, n_cat = table.codes.shape
        onehot = np.zeros((n, n_cat * self.n_levels))
        rows = np.arange(n)
        for c in range(n_cat):
            onehot[rows, c * self.n_levels + table.codes[:, c] + 1] = self.cat_height[c]
        return np.ascontiguousarray(np.hstack([num, onehot]))


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
    higher_is_safer = False
    runs_by_default = False

    def __init__(self, *, variant: str = "syntheval", n_repeats: int = 10) -> None:
        variant = check_option(variant, name="variant", allowed=VARIANTS)
        repeats = check_int(n_repeats, name="n_repeats", minimum=1)
        self._set_params(variant=variant, n_repeats=repeats)

    def _searcher(self, tables: Tables, context: Context) -> Any:
        names = ["real", "synthetic"] + (
            ["holdout"] if tables.holdout is not None else []
        )
        if self.params["variant"] in ("synthcity", "dcr"):
            distance = "euclidean" if self.params["variant"] == "synthcity" else "dcr"
            space = Space.for_tables(tables, distance)
            arrays = {name: space.data(tables, name) for name in names}

            def search(
                query: FloatArray, reference: FloatArray, k: int, what: str
            ) -> FloatArray:
                return space.search(
                    query, reference, k=k, context=context, description=what
                ).distances

            return arrays, search
        embed = _SynthEvalSpace(tables, names)
        arrays = {name: embed.data(name) for name in names}

        def search_gower(
            query: FloatArray, reference: FloatArray, k: int, what: str
        ) -> FloatArray:
            with context.progress.task(what, query.shape[0]) as advance:
                return nearest_neighbors(
                    query,
                    reference,
                    k=k,
                    distance="gower",
                    scale=np.ones(query.shape[1]),
                    backend=context.backend,
                    working_memory=context.working_memory,
                    progress=advance,
                ).distances

        return arrays, search_gower

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        arrays, search = self._searcher(tables, context)
        real, syn = arrays["real"], arrays["synthetic"]
        n_r = n_rows(real)
        if n_r < 2:
            msg = f"`epsilon_identifiability` needs at least 2 real rows (the nearest *other* real row); got {n_r}."
            raise InputError(msg)

        def identifiable(side: Any, to_syn: FloatArray) -> np.ndarray:
            inner = search(side, side, 2, "nearest other row")[:, 1]
            return to_syn < inner

        d_syn = search(real, syn, 1, "real → synthetic")[:, 0]
        flags = identifiable(real, d_syn)
        n_id = int(flags.sum())
        breakdown: dict[str, JSONValue] = {
            "eps_risk": n_id / n_r,
            "n_identifiable": n_id,
            "n_real": n_r,
            "n_synthetic": n_rows(syn),
            "variant": self.params["variant"],
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
        if "holdout" in arrays:
            hold = arrays["holdout"]
            n_h = n_rows(hold)
            if n_h >= 2:
                d_hold = search(hold, syn, 1, "holdout → synthetic")[:, 0]
                hold_flags = identifiable(hold, d_hold)
                # SynthEval divides the holdout's count by the real table's size
                breakdown["priv_loss"] = n_id / n_r - float(hold_flags.sum()) / n_r
                m = min(n_r, n_h)
                repeats = int(self.params["n_repeats"])
                x_r, x_h = float(n_id), float(hold_flags.sum())
                if n_r > n_h:
                    x_r = self._equal_size(
                        real, d_syn, m, repeats, context, identifiable
                    )
                elif n_h > n_r:
                    x_h = self._equal_size(
                        hold, d_hold, m, repeats, context, identifiable
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
        return Outcome(
            score=n_id / n_r,
            breakdown=breakdown,
            ci=wilson_bounds(n_id, n_r, 1.959963984540054),
            records=records,
            params=dict(self.params),
        )

    @staticmethod
    def _equal_size(
        side: FloatArray,
        to_syn: FloatArray,
        m: int,
        repeats: int,
        context: Context,
        identifiable: Any,
    ) -> float:
        total = 0.0
        for _ in range(repeats):
            rows = np.sort(context.rng.choice(side.shape[0], size=m, replace=False))
            total += float(identifiable(side[rows], to_syn[rows]).sum())
        return total / repeats
