# SPDX-License-Identifier: BSD-3-Clause
"""``filter_copies``: drop the synthetic rows that copy training people, and re-assess.

When the verdict finds training people copied by synthetic rows (the ``identification``
metric: exact copies of a record no other real person shares, and near copies), the
quickest way forward is to remove those rows. :func:`filter_copies` evaluates the
synthetic table, removes every synthetic row the identification test lists as copying a
training person (``report["identification"].records["copying_rows"]``), evaluates the
filtered table again with the same seed, parameters and thresholds, and returns both
reports with what changed (:class:`FilterResult`).

Removing rows is a stopgap, not a fix (see ``docs/verdict.md``, "Filtering copies, and
why regenerating is better"): the next most isolated people become the exposed ones (the
privacy onion), and which rows were removed is itself information about the training
people. :data:`ONION_WARNING` says so, in every result.

>>> import synthrisk
>>> callable(synthrisk.filter_copies)
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from synthrisk._progress import Progress
from synthrisk._typing import Backend, JSONValue, TableLike
from synthrisk._validation import check_int
from synthrisk.evaluate import MetricsSpec, evaluate
from synthrisk.exceptions import InputError
from synthrisk.metrics import Metric
from synthrisk.results import EvaluationReport, MetricResult, to_jsonable
from synthrisk.schema.schema import Schema
from synthrisk.schema.tables import as_pandas
from synthrisk.settings import Workers
from synthrisk.verdict import Thresholds

__all__ = ["ONION_WARNING", "FilterResult", "copying_rows", "filter_copies"]

#: the metric whose records name the copying synthetic rows
IDENTIFICATION = "identification"

#: what every filter result says, in its text and its JSON
ONION_WARNING = (
    "Removing copies is a stopgap, not a fix. The privacy onion (Carlini et al. 2022): once "
    "the most exposed people are removed, the next most isolated training people become the "
    "exposed ones, so filtering again and again only peels the next layer. And removing rows "
    "leaks too: which synthetic rows are missing tells whoever can compare the table with the "
    "generator's output where synthetic rows sat close to real people (the criticism of "
    "similarity-based privacy filters: Ganev and De Cristofaro, arXiv:2312.05114). Prefer "
    "regenerating with a generator changed for a reason you can state (a differential-privacy "
    "budget fixed in advance, coarser or fewer columns, a smaller model); filter at most once."
)


def with_identification(metrics: MetricsSpec) -> MetricsSpec:
    """``metrics`` with the ``identification`` metric added when it is not named.

    ``None`` (the full assessment) runs it already; a list gets the id appended, a
    mapping the id with default parameters.
    """
    if metrics is None:
        return None
    if isinstance(metrics, Mapping):
        if IDENTIFICATION in metrics:
            return metrics
        return {**metrics, IDENTIFICATION: None}
    items: list[str | Metric] = [metrics] if isinstance(metrics, str) else list(metrics)
    ids = [m.id if isinstance(m, Metric) else str(m).strip().lower() for m in items]
    return items if IDENTIFICATION in ids else [*items, IDENTIFICATION]


def copying_rows(report: EvaluationReport) -> tuple[int, ...]:
    """The synthetic rows (0-based positions) that copy a training person, exactly or nearly.

    Read from the ``identification`` result's ``copying_rows`` records.

    Raises
    ------
    InputError
        The report has no ``identification`` result, the metric did not run (its
        reason is given), or its records were dropped (a report read back from JSON
        written without ``include_records``).
    """
    try:
        result: MetricResult = report[IDENTIFICATION]
    except KeyError:
        msg = (
            "the report has no `identification` result, so it does not say which synthetic "
            "rows copy training people; run `identification` (it runs by default, and needs "
            "a `holdout` table)."
        )
        raise InputError(msg) from None
    if result.status != "ok" and "copying_rows" not in result.records:
        msg = (
            f"the `identification` metric did not run on these tables ({result.reason}); it "
            "names the synthetic rows that copy training people, so nothing can be filtered."
        )
        raise InputError(msg)
    records = result.records.get("copying_rows")
    if records is None:
        msg = (
            "the `identification` result carries no per-record scores (`copying_rows`); a "
            "report read back from JSON keeps them only when written with "
            "`include_records=True` (`--include-records`). Evaluate the tables again."
        )
        raise InputError(msg)
    return tuple(sorted({int(i) for i in np.asarray(records.index).tolist()}))


def drop_rows(table: TableLike, rows: Sequence[int]) -> TableLike:
    """``table`` without the rows at ``rows`` (positions), the others in order; a new table.

    pandas keeps its index labels; polars and pyarrow tables stay of their kind. The
    input is never modified.
    """
    any_table: Any = table  # pyarrow's protocol type has no len()
    keep = np.ones(len(any_table), dtype=bool)
    keep[np.asarray(rows, dtype=np.int64)] = False
    module = type(table).__module__.split(".")[0]
    if module == "pandas":
        return any_table.iloc[np.flatnonzero(keep)].copy()
    if module == "polars":
        import polars as pl

        return any_table.filter(pl.Series(keep))
    if module == "pyarrow":
        import pyarrow as pa

        return any_table.filter(pa.array(keep))
    frame = as_pandas(table, name="synthetic")
    return frame.iloc[np.flatnonzero(keep)].copy()


def _identified(report: EvaluationReport) -> dict[str, JSONValue]:
    """The identification numbers of one report: people, exact copies, the chance model."""
    try:
        breakdown = report[IDENTIFICATION].breakdown
    except KeyError:
        return {}
    model = breakdown.get("chance_model")
    chance: dict[str, JSONValue] = {}
    if isinstance(model, Mapping):
        chance = {
            key: model.get(key)
            for key in (
                "identified",
                "exact",
                "expected_identified",
                "upper_identified",
                "expected_exact",
                "upper_exact",
                "p_value",
                "significant",
            )
        }
    return {
        "identified_training": breakdown.get("identified_training"),
        "exact_training": breakdown.get("exact_training"),
        "identified_holdout": breakdown.get("identified_holdout"),
        "copying_synthetic_rows": breakdown.get("copying_synthetic_rows"),
        "chance_model": chance,
    }


def _n_rows(table: Any) -> int:
    return len(table)


def _finding_level(report: EvaluationReport) -> str | None:
    if report.verdict is None:
        return None
    levels = [f.level for f in report.verdict.findings if f.kind == "copied_people"]
    return levels[0] if levels else None


@dataclasses.dataclass(frozen=True)
class FilterResult:
    """What :func:`filter_copies` did: the filtered table, the rows removed, both reports.

    Attributes
    ----------
    filtered : table
        The synthetic table without the removed rows, the others unchanged and in
        order (of the input's kind; a pandas table keeps its index labels). The input
        itself when nothing was removed.
    removed : tuple of int
        The removed rows: 0-based positions in the input synthetic table.
    before : EvaluationReport
        The assessment of the input synthetic table.
    after : EvaluationReport
        The assessment of the filtered table, with the same seed, metrics,
        parameters and thresholds; ``before`` itself when nothing was removed (no
        second evaluation).
    rows : int
        Rows of the input synthetic table.
    warning : str
        The privacy-onion warning (:data:`ONION_WARNING`).
    """

    filtered: Any = dataclasses.field(repr=False)
    removed: tuple[int, ...]
    before: EvaluationReport = dataclasses.field(repr=False)
    after: EvaluationReport = dataclasses.field(repr=False)
    rows: int
    warning: str = ONION_WARNING

    @property
    def reassessed(self) -> bool:
        """True when rows were removed and the filtered table was evaluated again."""
        return bool(self.removed)

    def comparison(self) -> dict[str, JSONValue]:
        """Before against after: overall verdict, each metric's level, people, chance model.

        ``levels`` lists every metric of the run with its level before and after;
        ``changed`` the metrics whose level moved; ``identification`` the identified
        and exactly copied training people and the chance model's numbers.
        """
        before, after = self.before.verdict, self.after.verdict
        levels = self._levels()
        changed: list[JSONValue] = [
            e["metric"] for e in levels if e["before"] != e["after"]
        ]
        return {
            "rows": {
                "before": self.rows,
                "after": self.rows - len(self.removed),
                "removed": len(self.removed),
            },
            "overall": {
                "before": None if before is None else before.overall,
                "after": None if after is None else after.overall,
            },
            "copied_people": {
                "before": _finding_level(self.before),
                "after": _finding_level(self.after),
            },
            "levels": [dict(e) for e in levels],
            "changed": changed,
            "identification": {
                "before": _identified(self.before),
                "after": _identified(self.after),
            },
        }

    def _levels(self) -> list[dict[str, str | None]]:
        """Each metric of the run with its level before and after."""
        before, after = self.before.verdict, self.after.verdict
        if before is None or after is None:
            return []
        after_levels = {v.metric: v.level for v in after.metrics}
        return [
            {"metric": v.metric, "before": v.level, "after": after_levels.get(v.metric)}
            for v in before.metrics
        ]

    def summary_lines(self) -> list[str]:
        """The result in a few lines: rows removed, verdict before → after, what changed."""
        c = self.comparison()
        rows = c["rows"]
        overall = c["overall"]
        assert isinstance(rows, dict)
        assert isinstance(overall, dict)
        if not self.removed:
            lines = [
                f"No synthetic row copies a training person: nothing removed, the table is "
                f"unchanged ({self.rows} rows; verdict {overall['before']}, not re-assessed)."
            ]
        else:
            shown = ", ".join(str(r) for r in self.removed[:12])
            more = (
                f" and {len(self.removed) - 12} more" if len(self.removed) > 12 else ""
            )
            lines = [
                f"Removed {len(self.removed)} of {self.rows} synthetic rows that copy a "
                f"training person (rows {shown}{more}); {rows['after']} rows remain.",
                f"Verdict before → after: {overall['before']} → {overall['after']}.",
            ]
            people = c["identification"]
            assert isinstance(people, dict)
            was, now = people["before"], people["after"]
            if isinstance(was, dict) and isinstance(now, dict) and was and now:
                lines.append(
                    "Identified training people before → after: "
                    f"{was.get('identified_training')} ({was.get('exact_training')} exactly) → "
                    f"{now.get('identified_training')} ({now.get('exact_training')} exactly)"
                    + _chance_text(was, now)
                    + "."
                )
            finding = c["copied_people"]
            assert isinstance(finding, dict)
            if finding["before"] is not None:
                lines.append(
                    f"Copied-people finding before → after: {finding['before']} → "
                    f"{finding['after']}."
                )
            moved = [e for e in self._levels() if e["before"] != e["after"]]
            if moved:
                lines.append(
                    "Levels that changed: "
                    + ", ".join(
                        f"{e['metric']} {e['before']} → {e['after']}" for e in moved
                    )
                    + "."
                )
            else:
                lines.append("No metric's level changed.")
        lines.append(f"Warning: {self.warning}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.summary_lines())

    def to_dict(self, *, include_reports: bool = True) -> dict[str, JSONValue]:
        """JSON-safe form: the rows removed, the comparison, the warning, both reports.

        Row numbers only, never record values (the reports are written as
        :meth:`EvaluationReport.to_dict` writes them, without records).
        """
        out: dict[str, JSONValue] = {
            "kind": "filter",
            "removed_rows": list(self.removed),
            "reassessed": self.reassessed,
            "comparison": self.comparison(),
            "warning": self.warning,
        }
        if include_reports:
            out["before"] = self.before.to_dict()
            out["after"] = self.after.to_dict()
        return to_jsonable(out)


def _chance_text(was: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    a, b = was.get("chance_model") or {}, now.get("chance_model") or {}
    if not a or not b:
        return ""
    return (
        f"; chance explains about {float(a.get('expected_identified') or 0):.1f} → "
        f"{float(b.get('expected_identified') or 0):.1f}"
    )


def filter_copies(
    real: TableLike,
    synthetic: TableLike,
    holdout: TableLike,
    *,
    metadata: Mapping[str, Any] | Schema | None = None,
    metrics: MetricsSpec = None,
    seed: int = 0,
    policy: str | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    progress: bool | Progress = False,
    workers: Workers | None = None,
    working_memory: float | None = None,
    backend: Backend | None = None,
    report: EvaluationReport | None = None,
    params: Mapping[str, Mapping[str, object]] | None = None,
) -> FilterResult:
    """Remove the synthetic rows that copy training people, and assess the table again.

    Evaluates ``synthetic`` (the full assessment when ``metrics`` is None, as
    :func:`synthrisk.evaluate` does; ``identification`` is added when ``metrics`` does
    not name it), removes every synthetic row that copies a training person, exactly or
    nearly (``report["identification"].records["copying_rows"]``), and evaluates the
    filtered table with the same seed, metrics, parameters and thresholds. When no
    row copies anyone, the filtered table is the input and there is no second
    evaluation.

    Filtering is a stopgap: the next most isolated people become the exposed ones, and
    which rows were removed is itself information (:data:`ONION_WARNING`, and
    ``docs/verdict.md``). Prefer regenerating.

    Parameters
    ----------
    real, synthetic, holdout : table
        As for :func:`synthrisk.evaluate`; ``holdout`` is required (the identification
        test compares training people with holdout people). None of them is modified.
    metadata, metrics, seed, policy, thresholds, progress, workers, working_memory, backend, params
        As for :func:`synthrisk.evaluate` (``params`` changes metrics of the full
        assessment when ``metrics`` is None).
    report : EvaluationReport, default=None
        The assessment of ``synthetic`` already made with these arguments (it must
        hold the identification result's records): it is used as the "before" report
        instead of evaluating again.

    Returns
    -------
    FilterResult
        ``.filtered`` (the table), ``.removed`` (row positions), ``.before`` and
        ``.after`` (the reports), ``.comparison()``, ``.summary_lines()``,
        ``.to_dict()``.

    Raises
    ------
    InputError
        No holdout table, or the identification metric cannot run on these tables.

    Examples
    --------
    >>> import numpy as np, synthrisk
    >>> from synthrisk.datasets.calibration import continuous_data
    >>> data = continuous_data(3000, np.random.default_rng(0))
    >>> real, holdout, synthetic = data[:1000], data[1000:2000], data[2000:].copy()
    >>> synthetic.iloc[:5] = real.iloc[:5].to_numpy()
    >>> result = synthrisk.filter_copies(real, synthetic, holdout,
    ...     metrics=["identification", "dcr_share"])
    >>> set(range(5)) <= set(result.removed)
    True
    """
    seed = check_int(seed, name="seed", minimum=0)
    if holdout is None:
        msg = (
            "`filter_copies` needs a `holdout` table (real rows the generator never saw): "
            "the identification test that names the copying synthetic rows compares "
            "training people with holdout people. Pass the holdout."
        )
        raise InputError(msg)
    chosen = with_identification(metrics)
    options: dict[str, Any] = {
        "metadata": metadata,
        "metrics": chosen,
        "seed": seed,
        "policy": policy,
        "thresholds": thresholds,
        "progress": progress,
        "workers": workers,
        "working_memory": working_memory,
        "backend": backend,
        "params": params,
    }
    before = (
        report if report is not None else evaluate(real, synthetic, holdout, **options)
    )
    removed = copying_rows(before)
    n_rows = _n_rows(synthetic)
    if not removed:
        return FilterResult(
            filtered=synthetic, removed=(), before=before, after=before, rows=n_rows
        )
    filtered = drop_rows(synthetic, removed)
    after = evaluate(real, filtered, holdout, **options)
    return FilterResult(
        filtered=filtered, removed=removed, before=before, after=after, rows=n_rows
    )
