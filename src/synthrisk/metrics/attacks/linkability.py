# SPDX-License-Identifier: BSD-3-Clause
"""Linkability risk: Anonymeter's ``LinkabilityEvaluator`` on synthrisk's neighbour engine.

The attacker holds two datasets about the same people, with the columns
``aux_cols[0]`` and ``aux_cols[1]``, and uses the synthetic table to link them: for
each target person, the ``n_neighbors`` synthetic rows nearest to each half are
found; the link succeeds when the two sets share a row. The main attack targets real
rows, the control attack holdout rows; the baseline draws two random sets of
``n_neighbors`` synthetic rows per target. Risk = ``(main - control) / (1 - control)``.

Neighbours use Anonymeter's Gower variant (numeric differences divided by the column
range, categorical mismatch 1, summed). Ties among equally near synthetic rows are
broken uniformly at random (seeded), independently for each half. The neighbours are
found once for ``n_neighbors`` and :meth:`LinkabilityAttack.estimate` re-counts links
for any smaller ``k`` without searching again; targets whose halves are equal share one
search. A synthetic table partitioned on a Dask cluster is searched in place, in the
same seeded order.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from synthrisk._typing import IntArray, JSONValue
from synthrisk._validation import check_columns, check_int
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import Param, custom, integer
from synthrisk.metrics._threat import TRAINING, ThreatModel
from synthrisk.metrics.attacks._common import (
    COMPAT,
    CONFIDENCE_LEVEL,
    N_ATTACKS,
    Compat,
    attack_neighbors,
    attack_outcome,
    attack_sizes,
    check_not_excluded,
)
from synthrisk.metrics.attacks._partitioned import n_rows, on_cluster, take_rows
from synthrisk.metrics.attacks._queries import distinct_rows
from synthrisk.results import RecordScores, to_jsonable
from synthrisk.schema.encoding import EncodedTable
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import mean_difference_test
from synthrisk.stats.intervals import (
    AttackEstimate,
    estimate_attack,
)

__all__ = ["LinkabilityAttack", "LinkabilityRisk", "count_links", "linkability_attack"]


def count_links(idx_a: IntArray, idx_b: IntArray, k: int) -> IntArray:
    """Whether the first ``k`` neighbours of the two halves share a row, per target.

    Parameters
    ----------
    idx_a, idx_b : ndarray of shape (n_targets, >= k)
        Neighbour positions of each target's two halves, nearest first.
    k : int
        Number of neighbours to compare.

    Returns
    -------
    ndarray of shape (n_targets,) of bool

    Examples
    --------
    >>> import numpy as np
    >>> count_links(np.array([[0, 1], [2, 3]]), np.array([[1, 0], [3, 2]]), 1).tolist()
    [False, False]
    >>> count_links(np.array([[0, 1], [2, 3]]), np.array([[1, 0], [3, 2]]), 2).tolist()
    [True, True]
    """
    a = idx_a[:, :k]
    b = idx_b[:, :k]
    if a.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    if k <= 64:
        return (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))
    out = np.empty(a.shape[0], dtype=bool)
    for i in range(a.shape[0]):
        out[i] = np.intersect1d(a[i], b[i], assume_unique=True).size > 0
    return out


#: neighbour lists longer than this are intersected per ``k`` instead
_DEPTH_MAX_NEIGHBORS = 64


def link_depths(idx_a: IntArray, idx_b: IntArray) -> IntArray:
    """Per target, the smallest ``k`` for which :func:`count_links` is True.

    Parameters
    ----------
    idx_a, idx_b : ndarray of shape (n_targets, n_neighbors)
        Neighbour positions of each target's two halves, nearest first.

    Returns
    -------
    ndarray of shape (n_targets,)
        ``max(i, j) + 1`` minimised over the pairs with ``idx_a[:, i] == idx_b[:, j]``;
        ``n_neighbors + 1`` when the lists share no row.

    Examples
    --------
    >>> import numpy as np
    >>> link_depths(np.array([[0, 1], [2, 3], [4, 5]]), np.array([[1, 0], [3, 2], [6, 7]])).tolist()
    [2, 2, 3]
    """
    n_neighbors = idx_a.shape[1]
    depth = np.maximum.outer(np.arange(n_neighbors), np.arange(n_neighbors)) + 1
    shared = idx_a[:, :, None] == idx_b[:, None, :]
    return np.where(shared, depth, n_neighbors + 1).min(
        axis=(1, 2), initial=n_neighbors + 1
    )


def random_subsets(
    rng: np.random.Generator, n_rows: int, size: int, n_population: int
) -> IntArray:
    """``n_rows`` independent uniform subsets of ``size`` distinct positions in ``range(n_population)``."""
    if size * 4 > n_population:
        return np.array(
            [rng.choice(n_population, size=size, replace=False) for _ in range(n_rows)]
        ).reshape(n_rows, size)
    out = rng.integers(0, n_population, size=(n_rows, size))
    if size == 1:
        return out
    while True:
        ordered = np.sort(out, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if bad.size == 0:
            return out
        out[bad] = rng.integers(0, n_population, size=(bad.size, size))


@dataclasses.dataclass(frozen=True)
class LinkabilityAttack:
    """Neighbour sets of the main, baseline and control linkability attacks.

    Attributes
    ----------
    aux_cols : tuple of two tuples of str
        The attacker's two column sets.
    n_neighbors : int
        Neighbours computed per half (``estimate`` accepts any ``k <= n_neighbors``).
    targets : ndarray of shape (n_main,)
        Positions of the attacked real rows.
    main_a, main_b : ndarray of shape (n_main, n_neighbors)
        Synthetic neighbours of each target's two halves.
    baseline_a, baseline_b : ndarray of shape (n_main, n_neighbors)
        Random synthetic rows (the baseline).
    control_targets : ndarray of shape (n_control,) or None
        Positions of the attacked holdout rows.
    control_a, control_b : ndarray of shape (n_control, n_neighbors) or None
        Synthetic neighbours of the control targets' halves.
    warnings : tuple of str
        Caveats found while running.
    """

    aux_cols: tuple[tuple[str, ...], tuple[str, ...]]
    n_neighbors: int
    targets: IntArray
    main_a: IntArray
    main_b: IntArray
    baseline_a: IntArray
    baseline_b: IntArray
    control_targets: IntArray | None
    control_a: IntArray | None
    control_b: IntArray | None
    warnings: tuple[str, ...]

    def _k(self, n_neighbors: int | None) -> int:
        k = (
            self.n_neighbors
            if n_neighbors is None
            else check_int(n_neighbors, name="n_neighbors", minimum=1)
        )
        if k > self.n_neighbors:
            msg = (
                f"`n_neighbors` must be at most the number of neighbours computed ({self.n_neighbors}); got {k}. "
                "Run the attack again with a larger `n_neighbors`."
            )
            raise ParameterError(msg)
        return k

    def links(self, which: str = "main", *, n_neighbors: int | None = None) -> IntArray:
        """Per target of ``which`` (``main``, ``baseline``, ``control``), whether it was linked."""
        k = self._k(n_neighbors)
        a, b = {
            "main": (self.main_a, self.main_b),
            "baseline": (self.baseline_a, self.baseline_b),
            "control": (self.control_a, self.control_b),
        }[which]
        if a is None or b is None:
            msg = "no control attack was run (no holdout table)."
            raise ParameterError(msg)
        if self.n_neighbors > _DEPTH_MAX_NEIGHBORS:
            return count_links(a, b, k)
        return np.less_equal(self._link_depths[which], k)

    @functools.cached_property
    def _link_depths(self) -> dict[str, IntArray]:
        """Per attack and target, the smallest ``k`` that links it (``n_neighbors + 1``
        when none does): every ``k`` of the report is then one comparison."""
        pairs = {"main": (self.main_a, self.main_b)}
        pairs["baseline"] = (self.baseline_a, self.baseline_b)
        if self.control_a is not None and self.control_b is not None:
            pairs["control"] = (self.control_a, self.control_b)
        return {name: link_depths(a, b) for name, (a, b) in pairs.items()}

    def estimate(
        self, *, confidence_level: float = 0.95, n_neighbors: int | None = None
    ) -> AttackEstimate:
        """Rates and risk for links among the first ``n_neighbors`` neighbours."""
        k = self._k(n_neighbors)
        n_control = None
        if self.control_a is not None:
            n_control = int(self.links("control", n_neighbors=k).sum())
        return estimate_attack(
            n_success=int(self.links("main", n_neighbors=k).sum()),
            n_attacks=int(self.targets.size),
            n_baseline=int(self.links("baseline", n_neighbors=k).sum()),
            n_baseline_attacks=int(self.targets.size),
            n_control=n_control,
            n_control_attacks=None
            if self.control_targets is None
            else int(self.control_targets.size),
            confidence_level=confidence_level,
        )


def _halves(tables: Tables, name: str, aux_cols: Sequence[Sequence[str]]) -> list[Any]:
    """The two column sets of every row of a table (on the cluster for a partitioned one)."""
    table = tables.encoded(name)
    return [table.select(list(cols)) for cols in aux_cols]


def _half(tables: Tables, name: str, rows: IntArray, cols: Sequence[str]) -> Any:
    """One column set of the rows ``rows`` of a table, in memory (gathered alone)."""
    return take_rows(tables.encoded(name), rows, list(cols))


#: targets of a partitioned table gathered (one column set) and searched at a time
TARGET_BLOCK = 1 << 19


def _neighbors_blockwise(
    tables: Tables,
    name: str,
    targets: IntArray,
    cols: Sequence[str],
    reference: Any,
    *,
    k: int,
    compat: str | None,
    stream: np.random.Generator,
    context: Context,
    description: str,
    blocks: bool,
) -> IntArray:
    """:func:`attack_neighbors` of a table's targets (with ``blocks``, a block at a time).

    The search draws its tie order (a permutation of the synthetic rows) first; each
    block starts from the same generator state, so every block gets the same order
    and the neighbours are those of one search over all targets, while the driver
    holds one block of targets at a time. With ``compat`` (Anonymeter's distance,
    whose numeric ranges come from the targets compared) the targets stay one block.
    """
    block_rows = TARGET_BLOCK if blocks and compat is None else max(targets.size, 1)
    n_blocks = max(1, -(-targets.size // block_rows))
    start_state = copy.deepcopy(stream.bit_generator.state)
    out = []
    for b in range(n_blocks):
        stream.bit_generator.state = copy.deepcopy(start_state)
        block = targets[b * block_rows : (b + 1) * block_rows]
        query = _half(tables, name, block, cols)
        first, inverse = _distinct_rows(query)
        found = attack_neighbors(
            tables,
            query.take(first),
            reference,
            k=k,
            compat=compat,
            rng=stream,
            context=context,
            description=description
            if n_blocks == 1
            else f"{description} ({b + 1}/{n_blocks})",
        )
        out.append(found[inverse])
    return out[0] if n_blocks == 1 else np.concatenate(out)


def _distinct_rows(table: EncodedTable) -> tuple[IntArray, IntArray]:
    """The position of one row per distinct row of ``table``, and each row's distinct row.

    The neighbour search is exact and breaks ties by reference position alone, so
    equal target rows have the same neighbours, and each distinct row is searched
    once. The numeric ranges of Anonymeter's distance (over the targets and the
    synthetic rows) are unchanged, as the distinct rows hold the same values. A
    column set of a few categorical columns leaves far fewer distinct rows than
    targets.
    """
    columns = [*np.asarray(table.numeric, dtype=np.float64).T, *table.codes.T]
    if table.n_rows == 0 or not columns:
        return np.arange(table.n_rows), np.arange(table.n_rows)
    return distinct_rows(columns)


def linkability_attack(
    tables: Tables,
    *,
    aux_cols: Sequence[Sequence[str]],
    n_attacks: int | None = None,
    n_neighbors: int = 1,
    compat: str | None = None,
    rng: np.random.Generator,
    context: Context | None = None,
) -> LinkabilityAttack:
    """Run the linkability attack on validated tables (the holdout is optional).

    Parameters
    ----------
    tables : Tables
        Validated tables.
    aux_cols : pair of lists of str
        The attacker's two column sets (validated by the caller).
    n_attacks : int or None, default=None
        Targets per attack; None = the holdout's size (the real table's without holdout).
        Capped, with a warning, to the size of the real table and of the holdout.
    n_neighbors : int, default=1
        Neighbours per half; capped to the synthetic table's size with a warning.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        None: missing values never poison distances, numeric ranges over all tables;
        a version: Anonymeter's distance (ranges over synthetic ∪ targets, its NaN rule,
        datetimes compared as categories).
    rng : numpy Generator
        Source of every random draw.
    context : Context, default=None
        Backend, working memory and progress of the neighbour search.
    """
    context = Context() if context is None else context
    warnings: list[str] = []
    n_real = n_rows(tables, "real")
    n_syn = n_rows(tables, "synthetic")
    _, n_main, n_ctrl = attack_sizes(tables, n_attacks, warnings=warnings)
    k = n_neighbors
    if k > n_syn:
        warnings.append(
            f"`n_neighbors` ({k}) is larger than the synthetic table ({n_syn} rows); {n_syn} neighbours were used."
        )
        k = n_syn
    halves = (tuple(aux_cols[0]), tuple(aux_cols[1]))
    main_rng, base_rng, ctrl_rng = rng.spawn(3)
    # the synthetic halves (on the cluster for a partitioned table), for both attacks
    reference = _halves(tables, "synthetic", halves)
    partitioned = on_cluster(tables.encoded("real"))

    def search(
        name: str, targets: IntArray, stream: np.random.Generator
    ) -> tuple[IntArray, IntArray]:
        # the targets' rows are gathered one half (and, partitioned, one block) at
        # a time, each freed after its search
        found = [
            _neighbors_blockwise(
                tables,
                name,
                targets,
                halves[h],
                reference[h],
                k=k,
                compat=compat,
                stream=stream,
                context=context,
                description=f"Linkability: {name} targets, half {'AB'[h]}",
                blocks=partitioned,
            )
            for h in range(2)
        ]
        return found[0], found[1]

    targets = main_rng.choice(n_real, size=n_main, replace=False)
    main_a, main_b = search("real", targets, main_rng)
    base_a = random_subsets(base_rng, n_main, k, n_syn)
    base_b = random_subsets(base_rng, n_main, k, n_syn)
    control_targets = control_a = control_b = None
    if n_ctrl is not None:
        n_hold = n_rows(tables, "holdout")
        control_targets = ctrl_rng.choice(n_hold, size=n_ctrl, replace=False)
        control_a, control_b = search("holdout", control_targets, ctrl_rng)
    return LinkabilityAttack(
        aux_cols=halves,
        n_neighbors=k,
        targets=targets,
        main_a=main_a,
        main_b=main_b,
        baseline_a=base_a,
        baseline_b=base_b,
        control_targets=control_targets,
        control_a=control_a,
        control_b=control_b,
        warnings=tuple(warnings),
    )


def default_split(tables: Tables, rng: np.random.Generator) -> list[list[str]]:
    """The default attacker datasets: the usable columns shuffled (seeded) and cut in two halves."""
    usable = [c.name for c in tables.schema.modelable]
    order = [usable[i] for i in rng.permutation(len(usable))]
    cut = (len(order) + 1) // 2
    return [
        sorted(order[:cut], key=usable.index),
        sorted(order[cut:], key=usable.index),
    ]


def check_aux_pair(aux_cols: Any) -> tuple[list[str], list[str]]:
    """Validate the two column lists of a linkability attack (not yet against the tables)."""
    if aux_cols is None:
        msg = (
            "`aux_cols` is required: two lists of column names, the attacker's two datasets, "
            "e.g. aux_cols=[['age', 'zip'], ['income', 'job']]."
        )
        raise ParameterError(msg)
    if (
        isinstance(aux_cols, str)
        or not isinstance(aux_cols, Sequence)
        or len(aux_cols) != 2
    ):
        msg = f"`aux_cols` must be two lists of column names; got {aux_cols!r}."
        raise ParameterError(msg)
    halves = []
    for h, cols in enumerate(aux_cols):
        if isinstance(cols, str):
            cols = [cols]
        if not isinstance(cols, Sequence) or not all(isinstance(c, str) for c in cols):
            msg = f"`aux_cols[{h}]` must be a list of column names; got {cols!r}."
            raise ParameterError(msg)
        if len(cols) == 0:
            msg = f"`aux_cols[{h}]` must name at least one column; got an empty list."
            raise ParameterError(msg)
        if len(set(cols)) != len(cols):
            msg = f"`aux_cols[{h}]` names a column more than once: {list(cols)!r}."
            raise ParameterError(msg)
        halves.append(list(cols))
    overlap = sorted(set(halves[0]) & set(halves[1]))
    if overlap:
        msg = (
            f"`aux_cols` lists must not overlap; both name {overlap}. Each column belongs to one of the "
            "attacker's two datasets."
        )
        raise ParameterError(msg)
    return halves[0], halves[1]


def _aux_pair(value: Any, name: str) -> list[list[str]] | None:
    return None if value is None else list(check_aux_pair(value))


@register
class LinkabilityRisk(Metric):
    """Linkability risk: can the synthetic table link two partial records of the same real person?

    Anonymeter's linkability evaluation (WP29 / CNIL criterion). ``score`` is the risk
    ``(main - control) / (1 - control)`` in [0, 1] (higher = more leakage; the attack
    rate without a holdout) and ``ci`` its interval.

    Parameters
    ----------
    aux_cols : pair of lists of str or None, default=None
        The attacker's two datasets: two non-overlapping, non-empty column lists.
        None splits the usable columns at random (seeded by the run's seed) into two
        halves of sizes ``ceil(n / 2)`` and ``floor(n / 2)``: two datasets that
        together describe every column, each a different source. The split used is
        recorded in the result's parameters.
    n_attacks : int or None, default=None
        Targets per attack; None = the holdout's size (PETsARD's ``max_n_attacks``).
        Capped with a warning to the sizes of the real table and the holdout.
    n_neighbors : int, default=1
        A link succeeds when the two halves share one of their ``n_neighbors`` nearest
        synthetic rows. The breakdown also reports every smaller ``k``.
    confidence_level : float, default=0.95
        Confidence level of the intervals.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        None: missing values never poison distances and numeric ranges are shared by
        all tables; a version string reproduces Anonymeter's distance.

    On tables partitioned on a Dask cluster
    (:func:`synthrisk.cluster.evaluate_dataset`) it runs on every row, with the
    in-memory result: the targets are gathered, the synthetic table stays on the
    cluster.
    """

    id = "linkability"
    report_order = 130
    attack = (
        "An attacker holding two datasets about the same people, with different columns, links their "
        "records through the synthetic rows nearest to each of them."
    )
    threat_model = ThreatModel(
        attacker_holds="the synthetic table and two partial records of each target, from sources with different columns",
        target=TRAINING,
        meaning=(
            "Anonymeter's risk: share of targets whose two partial records are linked through their nearest synthetic rows, beyond the share for holdout people: 0 = no more than for new people, 1 = every target"
        ),
        known=("aux_cols",),
    )
    higher_is_safer = False
    runs_partitioned = True

    aux_cols: Param[list[list[str]] | None, Sequence[Sequence[str]] | None] = Param(
        custom(_aux_pair, "two lists of column names or None"),
        None,
        "The attacker's two datasets; None splits the usable columns at random.",
    )
    n_attacks: Param[int | None] = N_ATTACKS
    n_neighbors: Param[int] = Param(
        integer(minimum=1), 1, "Nearest synthetic rows the two halves may share."
    )
    confidence_level: Param[float] = CONFIDENCE_LEVEL
    compat: Param[str | None, Compat | None] = COMPAT

    def check_tables(self, tables: Tables) -> None:
        """Both column lists must name usable columns of the tables."""
        usable = [c.name for c in tables.schema.modelable]
        if self.aux_cols is None:
            if len(usable) < 2:
                msg = (
                    f"linkability needs at least 2 usable columns to split between the attacker's two "
                    f"datasets; the tables have {len(usable)}."
                )
                raise ParameterError(msg)
            return
        for h, cols in enumerate(self.aux_cols):
            check_not_excluded(
                tables,
                cols,
                name=f"aux_cols[{h}]",
                remedy="Give them another kind in the metadata or leave them out.",
            )
            check_columns(cols, name=f"aux_cols[{h}]", available=usable)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        aux_cols = self.aux_cols
        if aux_cols is None:
            aux_cols = default_split(tables, context.rng.spawn(1)[0])
        result = linkability_attack(
            tables,
            aux_cols=aux_cols,
            n_attacks=self.n_attacks,
            n_neighbors=self.n_neighbors,
            compat=self.compat,
            rng=context.rng,
            context=context,
        )
        level = self.confidence_level
        estimate = result.estimate(confidence_level=level)
        by_k: dict[str, JSONValue] = {}
        for k in range(1, result.n_neighbors + 1):
            est_k = (
                estimate
                if k == result.n_neighbors
                else result.estimate(confidence_level=level, n_neighbors=k)
            )
            risk_k = est_k.risk()
            by_k[str(k)] = {
                "risk": risk_k.value,
                "risk_ci": [risk_k.ci[0], risk_k.ci[1]],
                "n_success": {
                    "main": est_k.n_success,
                    "baseline": est_k.n_baseline,
                    "control": est_k.n_control,
                },
            }
        details: dict[str, JSONValue] = {
            "n_neighbors": result.n_neighbors,
            "by_n_neighbors": by_k,
        }
        if result.control_a is not None:
            details["holdout_test"] = mean_difference_test(
                result.links("main"),
                result.links("control"),
                statistic="share of training people whose two records were linked minus the same for holdout people",
            )
        linked = result.links("main")
        records = {
            "linked_real": RecordScores(
                "real",
                result.targets,
                linked.astype(np.float64),
                "attacked real rows: 1 when their two halves were linked through a synthetic row",
            )
        }
        return attack_outcome(
            estimate,
            context,
            attack="linkability attack",
            details=details,
            records=records,
            run_warnings=result.warnings,
            params={**self.params, "aux_cols": to_jsonable(aux_cols)},
        )
