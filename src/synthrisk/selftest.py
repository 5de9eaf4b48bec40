# SPDX-License-Identifier: BSD-3-Clause
"""The known-leak self-test: would the verdict have caught copies of real people?

A verdict that passes says the tests found no leak; it does not say they could have
found one on these tables. The self-test measures that power on the user's own data,
after LeakPro's ``LeakySynthesizer`` and the deliberate risk insertion of Plasencia
Palacios et al. (2025): it plants known leaks into the synthetic table and runs the
run's gating tests again.

* **Who is copied**: the most isolated training people (the distance to the nearest
  other real person of the pooled training ∪ holdout rows, as the ``identification``
  metric measures it; :func:`synthrisk.metrics.membership.isolation.isolated_training_people`),
  one row each: a person with several rows (a person column) gives their most isolated
  row. Records another real person shares identify no one and are never copied.
* **Where**: each copy replaces a synthetic row drawn at random (seeded); the table
  keeps its size. The scenarios are nested: the copies and replaced rows of a smaller
  share are those of the larger ones.
* **Scenarios**: {exact, near} × {0.1 %, 0.5 %, 1 %} of the synthetic rows, at least one
  row each. A *near* copy moves every numerical and date cell by 1 % of the column's
  standard deviation in the real table, up or down at random (seeded), and keeps the
  categorical and boolean cells. Integer-valued columns are not rounded back to whole
  numbers: 1 % of a standard deviation is below half a unit for most of them (Adult's
  ``age``: 0.14 years), so rounding would make the near copy an exact copy again; the
  near scenario measures the tests' power on copies one small step away.
* **Identifiers and text**: when a replay metric gates, the scenario ``identifiers``
  copies only the id, pii and text cells of training people who hold a value no other
  real row holds (random, seeded) into random synthetic rows, at the same shares
  (:func:`plan_identifiers`).
* **Judging**: only the metrics whose verdict gates in the run are re-run, with the same
  parameters and seed (each metric gets its own random stream, as in the run), and the
  planted tables are judged as the run was: the same thresholds, Holm's correction
  across the re-run gating tests, under the run's release policy; the copied-people
  finding (the chance model, or any copy under the strict policy) counts as the verdict
  counts it. A scenario is *caught* when the overall verdict fails.

The run's validated tables, their encoding and the encoded real and holdout tables are
reused (:meth:`synthrisk.schema.tables.Tables.with_synthetic`), and so are its
neighbour searches (:func:`synthrisk.neighbors.reuse_searches`): a search on a planted
table starts from the same search on the synthetic table (or on the previous planted
table) and searches only the rows that changed, with the same result as a full search.
The isolation ranking is computed once for every scenario, from the run's searches.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthrisk._progress import Progress, as_progress, metric_plan, metric_step, stage
from synthrisk._rng import metric_generator
from synthrisk._typing import Backend, FloatArray, IntArray
from synthrisk._version import __version__
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import Metric, make_context
from synthrisk.metrics.membership.isolation import (
    IsolatedPeople,
    isolated_training_people,
)
from synthrisk.neighbors import SearchReuse, active_reuse, reuse_searches
from synthrisk.results import (
    EvaluationReport,
    SelfTest,
    SelfTestScenario,
)
from synthrisk.schema.tables import Tables
from synthrisk.verdict import Thresholds, judge

__all__ = [
    "KINDS",
    "NEAR_MOVE",
    "REPLAY_KINDS",
    "REPLAY_METRICS",
    "SHARES",
    "PlantedLeak",
    "plan_identifiers",
    "plan_leak",
    "plant",
    "plant_identifiers",
    "planted_rows",
    "replay_columns",
    "run_self_test",
]

logger = logging.getLogger(__name__)

#: the shares of synthetic rows replaced by copies
SHARES: tuple[float, ...] = (0.001, 0.005, 0.01)
#: exact copies, then near copies
KINDS: tuple[str, ...] = ("exact", "near")
#: a near copy's move of each numerical cell, as a share of the column's standard deviation
NEAR_MOVE = 0.01
#: the random stream of the self-test (see :func:`synthrisk._rng.metric_generator`)
_STREAM = "self_test"
#: the kinds of column the identifier scenario copies, and the metrics that check them
REPLAY_KINDS = ("id", "pii", "text")
REPLAY_METRICS = ("identifier_replay", "text_replay", "row_string_replay")


def replay_columns(tables: Tables, gating: Sequence[Metric]) -> list[str]:
    """The identifier and free-text columns the ``identifiers`` scenario copies.

    Empty unless a replay metric gates in the run (only they look at these columns).
    """
    if not any(m.id in REPLAY_METRICS for m in gating):
        return []
    return [
        spec.name
        for spec in tables.schema.columns
        if spec.kind in REPLAY_KINDS and spec.name in tables.synthetic.columns
    ]


def plan_identifiers(
    tables: Tables, columns: Sequence[str], *, n: int, seed: int
) -> PlantedLeak:
    """Which training rows' identifiers and text go where (the ``identifiers`` scenario).

    Training rows holding, in some column of ``columns``, a value no other real row
    holds are copied, in a random (seeded) order: a shared value identifies no one.
    They replace the cells of random synthetic rows; the other cells stay.
    """
    assert tables.holdout is not None
    unique = np.zeros(len(tables.real), dtype=bool)
    for name in columns:
        pooled = pd.concat([tables.real[name], tables.holdout[name]], ignore_index=True)
        present = pooled.notna().to_numpy()
        single = ~pooled.astype(str).duplicated(keep=False).to_numpy() & present
        unique |= single[: len(tables.real)]
    rng = metric_generator(seed, _STREAM + "_identifiers")
    sources = rng.permutation(np.flatnonzero(unique))
    n = min(n, int(sources.size), len(tables.synthetic))
    positions = rng.permutation(len(tables.synthetic))[:n].astype(np.int64)
    return PlantedLeak(
        sources=sources[:n].astype(np.int64), positions=positions, moves={}
    )


def plant_identifiers(
    tables: Tables, leak: PlantedLeak, n: int, columns: Sequence[str]
) -> pd.DataFrame:
    """The synthetic table with the first ``n`` planned rows' ``columns`` copied in."""
    frame = tables.synthetic.copy()
    sources, positions = leak.sources[:n], leak.positions[:n]
    for name in columns:
        values = frame[name].to_numpy(copy=True)
        values[positions] = tables.real[name].to_numpy()[sources]
        frame[name] = pd.Series(values, dtype=frame[name].dtype, index=frame.index)
    return frame


def planted_rows(share: float, n_synthetic: int) -> int:
    """Rows a scenario replaces: ``share`` of the synthetic rows, at least one."""
    return min(max(1, round(share * n_synthetic)), n_synthetic)


@dataclasses.dataclass(frozen=True)
class PlantedLeak:
    """Where the copies go and how the near copies move (drawn once for all scenarios).

    Attributes
    ----------
    sources : ndarray of shape (n_max,)
        Rows of the real table to copy, most isolated person first.
    positions : ndarray of shape (n_max,)
        The synthetic rows they replace, in the same order (a random draw).
    moves : dict of str to ndarray of shape (n_max,)
        Per moved column, what a near copy adds to each copied cell (numbers in the
        column's unit; dates in nanoseconds).
    """

    sources: IntArray
    positions: IntArray
    moves: dict[str, FloatArray]


def _spread(tables: Tables, column: str, kind: str) -> float:
    """The column's standard deviation in the real table (nanoseconds for dates); 0 if undefined."""
    values = tables.real[column].dropna()
    if kind == "datetime":
        numbers = values.to_numpy(dtype="datetime64[ns]").view(np.int64)
    else:
        numbers = values.to_numpy(dtype=np.float64)
    numbers = numbers.astype(np.float64)
    if numbers.size < 2:
        return 0.0
    sd = float(np.std(numbers, ddof=1))
    return sd if np.isfinite(sd) else 0.0


def _moved_columns(tables: Tables, skip: str | None) -> dict[str, float]:
    """The columns a near copy moves, with their standard deviation (all above 0)."""
    out = {}
    for spec in tables.schema.modelable:
        if spec.kind not in ("numerical", "datetime") or spec.name == skip:
            continue
        sd = _spread(tables, spec.name, spec.kind)
        if sd > 0:
            out[spec.name] = sd
    return out


def plant(tables: Tables, leak: PlantedLeak, n: int, *, near: bool) -> pd.DataFrame:
    """The synthetic table with its first ``n`` planted copies (a new frame).

    ``tables.synthetic`` is not modified. Every column keeps its normalised dtype.
    """
    sources, positions = leak.sources[:n], leak.positions[:n]
    columns = {}
    for name in tables.synthetic.columns:
        values = tables.synthetic[name].to_numpy(copy=True)
        copied = tables.real[name].to_numpy()[sources]
        if near and name in leak.moves:
            delta = leak.moves[name][:n]
            if tables.schema[name].kind == "datetime":
                copied = copied + np.round(delta).astype("timedelta64[ns]")
            else:
                copied = copied + delta
        values[positions] = copied
        columns[name] = pd.Series(values, dtype=tables.synthetic[name].dtype)
    return pd.DataFrame(columns, columns=tables.synthetic.columns)


def plan_leak(
    tables: Tables, isolated: IsolatedPeople, *, n: int, seed: int
) -> PlantedLeak:
    """The copies of the ``n`` most isolated training people and where they go.

    The replaced synthetic rows and the near copies' directions are drawn from the
    self-test's own random stream of ``seed``; the first ``m`` copies of the plan are
    those of a smaller scenario of ``m`` rows.
    """
    n = min(n, int(isolated.rows.size), len(tables.synthetic))
    moved = _moved_columns(tables, isolated.person_column)
    rng = metric_generator(seed, _STREAM)
    positions = rng.permutation(len(tables.synthetic))[:n].astype(np.int64)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n, len(moved)))
    return PlantedLeak(
        sources=isolated.rows[:n].astype(np.int64),
        positions=positions,
        moves={
            name: signs[:, j] * NEAR_MOVE * sd
            for j, (name, sd) in enumerate(moved.items())
        },
    )


def _identification_person(report: EvaluationReport) -> str | None:
    """The person column of the run's identification test (``"auto"`` without one)."""
    for result in report.results:
        if result.metric == "identification" and result.status == "ok":
            person = result.params.get("person", "auto")
            return None if person is None else str(person)
    return "auto"


def _scenario(
    kind: str, share: float, n: int, report: EvaluationReport, thresholds: Thresholds
) -> SelfTestScenario:
    verdict = judge(report, thresholds)
    by_level: dict[str, list[str]] = {"fail": [], "review": [], "pass": []}
    for v in verdict.metrics:
        if v.gating and not v.skipped:
            by_level[v.level].append(v.metric)
    # the per-person findings (copied people beyond the chance model, or any copy under
    # the strict policy) count as the verdict counts them
    for finding in verdict.findings:
        if finding.level in ("fail", "review"):
            by_level[finding.level].append(f"{finding.kind} (finding)")
    return SelfTestScenario(
        kind=kind,
        share=share,
        planted=n,
        overall=verdict.overall,
        failed=tuple(by_level["fail"]),
        review=tuple(by_level["review"]),
        passed=tuple(by_level["pass"]),
        reason=verdict.reason,
    )


def run_self_test(
    tables: Tables,
    metrics: Sequence[Metric],
    report: EvaluationReport,
    *,
    seed: int,
    working_memory: float | None = None,
    backend: Backend | None = None,
    progress: bool | Progress = False,
    thresholds: Thresholds | None = None,
) -> SelfTest:
    """Plant copies of the most isolated training people and judge each planted table.

    Parameters
    ----------
    tables : Tables
        The run's validated tables (with a holdout); never modified.
    metrics : sequence of Metric
        The run's metrics, in the order of ``report.results``.
    report : EvaluationReport
        The run's report, judged (its verdict says which metrics gate).
    seed : int
        The run's seed: each metric re-runs on its own stream of it, and the copies and
        the rows they replace are drawn from the self-test's own stream.
    working_memory, backend, progress
        As for :func:`synthrisk.evaluate`.
    thresholds : Thresholds, default=None
        What the run was judged by (None: the defaults).

    Returns
    -------
    SelfTest

    Raises
    ------
    InputError
        Without a holdout table.
    """
    if tables.holdout is None:
        msg = (
            "the self-test needs a `holdout` table: without one the verdict is always "
            "review (closeness to real rows cannot be told apart from fidelity), so there "
            "is no detection power to measure. Pass the holdout, or leave the self-test off."
        )
        raise InputError(msg)
    thresholds = Thresholds() if thresholds is None else thresholds
    if len(metrics) != len(report.results):
        msg = f"`metrics` must be the {len(report.results)} metrics of the report; got {len(metrics)}."
        raise ParameterError(msg)
    verdict = (
        report.verdict if report.verdict is not None else judge(report, thresholds)
    )
    gating = [
        metric
        for metric, v in zip(metrics, verdict.metrics, strict=True)
        if v.gating and not v.skipped
    ]
    with contextlib.ExitStack() as stack:
        store = active_reuse()
        if store is None:
            store = stack.enter_context(reuse_searches())
        return _self_test(
            tables,
            gating,
            report,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=as_progress(progress),
            thresholds=thresholds,
            store=store,
        )


def _self_test(
    tables: Tables,
    gating: Sequence[Metric],
    report: EvaluationReport,
    *,
    seed: int,
    working_memory: float | None,
    backend: Backend | None,
    progress: Progress,
    thresholds: Thresholds,
    store: SearchReuse,
) -> SelfTest:
    """:func:`run_self_test` once the gating metrics are known and searches are reused."""
    reporter = progress
    before = dataclasses.replace(store.stats)
    with stage(reporter, "self-test"):
        context = make_context(
            _STREAM,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            progress=reporter,
        )
        isolated = isolated_training_people(
            tables, person=_identification_person(report), context=context
        )
    n_syn = len(tables.synthetic)
    candidates = int(isolated.rows.size)
    notes: list[str] = []
    wanted = {share: planted_rows(share, n_syn) for share in SHARES}
    counts = {share: min(n, candidates) for share, n in wanted.items()}
    short = [share for share in SHARES if counts[share] < wanted[share]]
    if short and candidates:
        notes.append(
            f"only {candidates} training people have a record no other real person "
            f"shares; the {', '.join(f'{s * 100:g} %' for s in short)} scenarios plant "
            f"{candidates} copies instead of {', '.join(str(wanted[s]) for s in short)}."
        )
    leak = plan_leak(tables, isolated, n=max(counts.values()), seed=seed)
    moved = leak.moves
    skip_reason = {}
    if not candidates:
        reason = (
            "every training person's record is shared by another real person: a copy "
            "identifies no one, so there is nobody to plant."
        )
        notes.append(reason)
        skip_reason = dict.fromkeys(KINDS, reason)
    elif not moved:
        reason = (
            "no numerical or date column varies in the real table: a near copy would be "
            "an exact copy."
        )
        notes.append(f"near copies skipped: {reason}")
        skip_reason["near"] = reason
    kinds = list(KINDS)
    texts = replay_columns(tables, gating)
    id_leak = None
    if texts:
        id_leak = plan_identifiers(tables, texts, n=max(wanted.values()), seed=seed)
        kinds.append("identifiers")
        if id_leak.sources.size == 0:
            skip_reason["identifiers"] = (
                "no training person holds an identifier or text value of their own."
            )
    plan = [
        (kind, share) for kind in kinds for share in SHARES if kind not in skip_reason
    ]
    id_counts = (
        {}
        if id_leak is None
        else {share: min(n, int(id_leak.sources.size)) for share, n in wanted.items()}
    )

    def count(kind: str, share: float) -> int:
        return id_counts[share] if kind == "identifiers" else counts[share]

    # shares that plant the same number of rows (small tables) share one run
    runs = sorted(
        {(kind, count(kind, share)) for kind, share in plan},
        key=lambda run: (kinds.index(run[0]), run[1]),
    )
    judged: dict[tuple[str, int], EvaluationReport] = {}
    with metric_plan(reporter, len(runs) * len(gating)):
        for kind, n in runs:
            shares = ", ".join(f"{s * 100:g} %" for s in SHARES if count(kind, s) == n)
            label = f"self-test · {kind} copies, {n} rows ({shares})"
            with stage(reporter, label):
                if kind == "identifiers":
                    assert id_leak is not None
                    frame = plant_identifiers(tables, id_leak, n, texts)
                else:
                    frame = plant(tables, leak, n, near=kind == "near")
                planted = tables.with_synthetic(frame)
                results = []
                for metric in gating:
                    with metric_step(reporter, metric.id) as finished:
                        # a metric that cannot run on a planted table is recorded as skipped
                        result = metric.run_with(
                            planted,
                            seed=seed,
                            working_memory=working_memory,
                            backend=backend,
                            progress=reporter,
                            skip_inapplicable=True,
                        )
                        finished(result.score, result.status)
                    results.append(result)
            store.sweep()  # keep the searches this scenario made or started from
            judged[kind, n] = EvaluationReport(
                synthrisk_version=__version__,
                seed=seed,
                inputs=tables.summary(),
                results=tuple(results),
            )
    after = store.stats
    logger.info(
        "self-test: %d searches, %d answered from memory, %d from a few changed rows, "
        "%d in full; %.1f %% of the distances computed",
        after.searches - before.searches,
        after.identical - before.identical,
        after.delta - before.delta,
        after.full - before.full,
        100.0
        * (after.pairs_searched - before.pairs_searched)
        / max(after.pairs_asked - before.pairs_asked, 1),
    )
    scenarios = []
    for kind in kinds:
        for share in SHARES:
            if kind in skip_reason:
                scenarios.append(
                    SelfTestScenario(
                        kind,
                        share,
                        0,
                        "skipped",
                        reason=f"skipped: {skip_reason[kind]}",
                    )
                )
                continue
            n = count(kind, share)
            scenarios.append(_scenario(kind, share, n, judged[kind, n], thresholds))
    return SelfTest(
        scenarios=tuple(scenarios),
        metrics=tuple(m.id for m in gating),
        synthetic_rows=n_syn,
        training_people=isolated.n_people,
        candidates=candidates,
        person_column=isolated.person_column,
        near_move=NEAR_MOVE,
        notes=tuple(notes),
    )
