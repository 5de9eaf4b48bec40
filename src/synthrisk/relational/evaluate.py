# SPDX-License-Identifier: BSD-3-Clause
"""``evaluate_tables``: privacy of related tables (or sequences), judged per person."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd

from synthrisk._progress import Progress, as_progress, metric_step, stage
from synthrisk._rng import as_generator
from synthrisk._typing import Backend
from synthrisk._validation import check_int
from synthrisk.evaluate import evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.metrics import get_metric
from synthrisk.relational.features import PersonFeatures
from synthrisk.relational.linkage import linkage_attack
from synthrisk.relational.metadata import (
    RelationalMetadata,
    check_tables,
    expand_sequences,
    load_metadata,
    normalise_tables,
)
from synthrisk.relational.people import person_of_rows
from synthrisk.relational.rarity import RowRarity
from synthrisk.relational.results import MultiTableReport
from synthrisk.results import EvaluationReport
from synthrisk.verdict import Thresholds

__all__ = [
    "PERSON_COLUMN",
    "PERSON_METRICS",
    "TABLE_METRICS",
    "TABLE_PEOPLE",
    "evaluate_tables",
]

#: the metrics run on the person feature tables by default
PERSON_METRICS: tuple[str, ...] = (
    "identification",
    "vulnerable_people",
    "dcr_share",
    "identical_match_share",
    "membership_knn_probabilities",
    "singling_out",
)
#: the metrics run on each table by default (people, not rows, as the unit)
#: people of each side whose rows the per-table metrics use (a seeded sample above it)
TABLE_PEOPLE = 20_000

TABLE_METRICS: tuple[str, ...] = (
    "identification",
    "dcr_share",
    "identical_match_share",
)
#: the column added to each table below the root to name the person of every row
PERSON_COLUMN = "synthrisk_person"

_RANK = {"pass": 0, "review": 1, "fail": 2}
#: whom the holdout-controlled tests of the most isolated people cover, at person level
ISOLATED_PEOPLE = (
    "the most isolated 1–5 % of people, by their rows (how many, how rare their codes) "
    "and summaries"
)
_SIDE_TAG = {"real": "r:", "synthetic": "s:", "holdout": "h:"}


def _metric_list(
    spec: Sequence[str] | Mapping[str, Mapping[str, object] | None] | None,
    default: Sequence[str],
    name: str,
) -> dict[str, dict[str, object]]:
    if spec is None:
        return {m: {} for m in default}
    if isinstance(spec, str):
        spec = [spec]
    if isinstance(spec, Mapping):
        out = {}
        for metric, params in spec.items():
            if params is not None and not isinstance(params, Mapping):
                msg = f"parameters of metric {metric!r} in `{name}` must be a mapping; got {params!r}."
                raise ParameterError(msg)
            out[str(metric)] = dict(params or {})
        return out
    out = {}
    for metric in spec:
        if not isinstance(metric, str):
            msg = f"`{name}` must list metric ids (or map them to parameters); got {metric!r}."
            raise ParameterError(msg)
        out[metric] = {}
    return out


def _runnable(
    chosen: dict[str, dict[str, object]], *, has_holdout: bool, person: str | None
) -> dict[str, Mapping[str, object] | None]:
    """Drop holdout metrics without a holdout; name the person key where supported."""
    out: dict[str, Mapping[str, object] | None] = {}
    for metric, params in chosen.items():
        cls = get_metric(metric)
        if cls.requires_holdout and not has_holdout:
            continue
        params = dict(params)
        if "person" in cls.param_names() and "person" not in params:
            params["person"] = person
        out[metric] = params
    return out


#: people of each side that a stratum of ``vulnerable_people`` needs (a margin over its 10)
_STRATUM_PEOPLE = 25


def _fit_strata(
    chosen: dict[str, Mapping[str, object] | None],
    n_train: int,
    n_holdout: int,
    warnings: list[str],
) -> None:
    """Widen the default strata of ``vulnerable_people`` so that one can be tested.

    The default strata (the most isolated 1 % and 5 %) hold too few holdout people
    below a few thousand people; a stratum of ``_STRATUM_PEOPLE`` expected holdout (and
    training) people is added, or the metric is left out with a warning when even half
    of the people would not do.
    """
    if "vulnerable_people" not in chosen:
        return
    n = n_train + n_holdout
    smaller = min(n_train, n_holdout) / n
    share = _STRATUM_PEOPLE / (smaller * n)
    if share <= 0.05:
        return
    if share > 0.5:
        del chosen["vulnerable_people"]
        warnings.append(
            f"vulnerable_people: left out, {n_train} training and {n_holdout} holdout people are "
            "too few for a stratum of the most isolated people."
        )
        return
    params = dict(chosen["vulnerable_people"] or {})
    params.setdefault("strata", (0.05, round(share, 3)))
    chosen["vulnerable_people"] = params


def evaluate_tables(
    real: Mapping[str, pd.DataFrame],
    synthetic: Mapping[str, pd.DataFrame],
    holdout: Mapping[str, pd.DataFrame] | None = None,
    *,
    metadata: Mapping[str, Any] | str | os.PathLike[str] | RelationalMetadata,
    root: str | None = None,
    metrics: Sequence[str] | Mapping[str, Mapping[str, object] | None] | None = None,
    table_metrics: Sequence[str]
    | Mapping[str, Mapping[str, object] | None]
    | None = None,
    seed: int = 0,
    n_events: int = 3,
    max_levels: int = 10,
    linkage_candidates: int = 3,
    match_ratio: float | None = None,
    linkage_alpha: float = 0.01,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    working_memory: float | None = None,
    backend: Backend | None = None,
    table_people: int | None = TABLE_PEOPLE,
    client: Any | None = None,
    scheduler: str | None = None,
    progress: bool | Progress = False,
) -> MultiTableReport:
    """Evaluate how much synthetic related tables leak about the real people behind them.

    The **person** is the unit: a row of the root table with every row below it. Three
    levels are measured:

    * **people** — each person becomes one row of features (their root row and
      summaries of their children, :class:`~synthrisk.relational.features.PersonFeatures`)
      and :func:`synthrisk.evaluate` runs ``metrics`` on those tables; its verdict is
      the release verdict;
    * **linkage** — the cross-table linkage attack
      (:func:`~synthrisk.relational.linkage.linkage_attack`): does a person's root row,
      their history, or the set of their rows below the root (in any order) lead to
      synthetic rows that reproduce their real children more often for training people
      than for holdout people;
    * **tables** — ``table_metrics`` on each table, every row of a table below the root
      tagged with its person (the ``person`` parameter of the metrics that take one),
      so that the holdout arm holds only holdout people's rows and people, not rows,
      are the unit; their verdicts are shown beside the person-level one.

    Parameters
    ----------
    real, synthetic : dict of str to DataFrame
        The training tables and the generator's tables, by table name (never modified).
    holdout : dict of str to DataFrame, default=None
        Real people the generator never saw, with all their rows (see
        :func:`~synthrisk.relational.split_people`); without it the verdict is review.
    metadata : dict, path or RelationalMetadata
        SDV's multi-table metadata, or sequential metadata (one table with a
        ``sequence_key``), or the path of its JSON file.
    root : str, default=None
        The table whose rows are people; None: the table without a parent.
    metrics : list of ids or dict id -> params, default=None
        Metrics of the person level; None: :data:`PERSON_METRICS`.
    table_metrics : list of ids or dict id -> params, default=None
        Metrics of each table; None: :data:`TABLE_METRICS`; ``[]`` skips the tables.
    seed : int, default=0
        Seed of every random step.
    n_events : int, default=3
        Events of each sequence kept in order as person features.
    max_levels : int, default=10
        Columns with at most this many values among the real rows get a share per value.
    linkage_candidates : int, default=3
        Synthetic root rows the linkage attacker inspects per person.
    match_ratio : float, default=None
        How close a matched history must be, relative to the nearest real stranger's,
        for the linkage attack to count a person as linked; None: the ratio chance
        reaches for only 1 real person in 1,000
        (:func:`~synthrisk.relational.linkage.chance_ratio`).
    linkage_alpha : float, default=0.01
        Level of the linkage test (so a generator that memorised no one fails the
        whole run with chance at most 0.05 + 0.01).
    thresholds : Thresholds or dict, default=None
        Verdict thresholds of the person level and of each table.
    working_memory : float, default=None
        MiB budget of blocked computations.
    backend : {"auto", "numpy", "numba", "dask"}, default=None
        Neighbour-search backend.
    table_people : int, default=20000
        The per-table metrics run on the rows of at most this many people of each
        side: a seeded sample of the people (with all their rows) of a side that has
        more, and a warning says so; the person level and the linkage always use
        every person. None: every person.
    client : dask.distributed.Client, default=None
        Run the person level's and each table's metrics on this Dask cluster
        (:func:`synthrisk.evaluate`'s ``client``); the linkage attack runs here.
    scheduler : str, default=None
        Address of a running Dask scheduler (``tcp://host:8786``) to run them on.
    progress : bool or Progress, default=False
        Show progress on standard error: each level's metrics (``people · [2/6]
        dcr_share``, ``table 'transactions' · …``) and the linkage attack.

    Returns
    -------
    MultiTableReport

    Raises
    ------
    RelationshipError
        Metadata that cannot define people (a cycle, an ambiguous root).
    TableMismatchError
        A table present on one side only.
    KeyIntegrityError
        A missing key column, a primary key that repeats, an orphan foreign key.

    Examples
    --------
    >>> from synthrisk.datasets.relational import load_bank
    >>> bank = load_bank(n_customers=600, seed=3)  # 5 % of the synthetic people copied
    >>> report = evaluate_tables(bank.real, bank.synthetic["whole_copies"], bank.holdout,
    ...                          metadata=bank.metadata, table_metrics=[])
    >>> report.verdict, report.linkage.level, report.linkage.attacks[0].linked_training
    ('fail', 'fail', 24)
    """
    seed = check_int(seed, name="seed", minimum=0)
    if table_people is not None:
        table_people = check_int(table_people, name="table_people", minimum=10)
    n_events = check_int(n_events, name="n_events", minimum=1)
    max_levels = check_int(max_levels, name="max_levels", minimum=1)
    linkage_candidates = check_int(
        linkage_candidates, name="linkage_candidates", minimum=1
    )
    for value, name in ((match_ratio, "match_ratio"), (linkage_alpha, "linkage_alpha")):
        if value is None and name == "match_ratio":
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not 0 < value < 1
        ):
            msg = f"`{name}` must be a number in (0, 1); got {value!r}."
            raise ParameterError(msg)
    meta = load_metadata(metadata, root=root)
    given = {"real": real, "synthetic": synthetic, "holdout": holdout}
    for side, tables in given.items():
        if tables is not None and not isinstance(tables, Mapping):
            msg = f"`{side}` must map table names to DataFrames; got {type(tables).__name__}."
            raise ParameterError(msg)
    sides, meta = expand_sequences(given, meta)
    check_tables(sides, meta)
    # dates parsed and rows in canonical order, once, for every consumer below
    sides = normalise_tables(sides, meta)
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        thresholds = Thresholds.from_dict(thresholds)
    present = {k: v for k, v in sides.items() if v is not None}
    warnings: list[str] = []
    people = {side: person_of_rows(t, meta) for side, t in present.items()}
    for side, tables in present.items():
        if len(tables[meta.root]) == 0:
            msg = f"the {side} root table {meta.root!r} has no rows: there are no people to evaluate."
            raise InputError(msg)

    reporter = as_progress(progress)
    real_sides = {k: v for k, v in present.items() if k in ("real", "holdout")}
    plan = PersonFeatures.fit(
        real_sides, meta, n_events=n_events, max_levels=max_levels
    )
    rarity = RowRarity.fit(real_sides, plan)
    feats = {
        side: pd.concat(
            [
                plan.transform(t, people[side]),
                rarity.transform(t, people[side], meta.root),
            ],
            axis=1,
        ).reset_index(drop=True)
        for side, t in present.items()
    }
    feature_meta = {"columns": {**dict(plan.metadata["columns"]), **rarity.metadata}}
    root_columns = plan.root_columns
    child_columns = [c for c in feature_meta["columns"] if c not in set(root_columns)]
    has_holdout = "holdout" in present
    common = {
        "seed": seed,
        "thresholds": thresholds,
        "working_memory": working_memory,
        "backend": backend,
        "client": client,
        "scheduler": scheduler,
        "progress": reporter,
    }
    person_metrics = _runnable(
        _metric_list(metrics, PERSON_METRICS, "metrics"),
        has_holdout=has_holdout,
        person=None,
    )
    if metrics is None and has_holdout:
        _fit_strata(person_metrics, len(feats["real"]), len(feats["holdout"]), warnings)
    with stage(reporter, "people"):
        people_report = evaluate(
            feats["real"],
            feats["synthetic"],
            feats.get("holdout"),
            metadata=feature_meta,
            metrics=person_metrics,
            **common,  # type: ignore[arg-type]
        )
    if has_holdout:
        with metric_step(reporter, "linkage attack (p-value)") as done:
            linkage = linkage_attack(
                feats["real"],
                feats["synthetic"],
                feats["holdout"],
                root_columns=root_columns,
                child_columns=child_columns,
                metadata=feature_meta,
                n_candidates=linkage_candidates,
                match_ratio=match_ratio,
                alpha=linkage_alpha,
                seed=seed,
                row_sets=(
                    plan.row_sets(present["real"], people["real"]),
                    plan.row_sets(present["synthetic"], people["synthetic"]),
                    plan.row_sets(present["holdout"], people["holdout"]),
                ),
                subtrees={
                    top: (
                        [c for c in child_columns if c.split(".", 1)[0] in tables],
                        cast(
                            "tuple[np.ndarray, np.ndarray, np.ndarray]",
                            tuple(
                                dataclasses.replace(
                                    plan,
                                    plans=tuple(
                                        t for t in plan.plans if t.name in tables
                                    ),
                                ).row_sets(present[side], people[side])
                                for side in ("real", "synthetic", "holdout")
                            ),
                        ),
                    )
                    for top, tables in _subtrees(meta).items()
                },
            )
            done(linkage.p_value, "ok")
    else:
        from synthrisk.relational.linkage import LinkageResult

        linkage = LinkageResult(
            (),
            1.0,
            linkage_alpha,
            "info",
            0.0 if match_ratio is None else match_ratio,
            linkage_candidates,
            "not run: the linkage attack needs a holdout table.",
        )

    table_reports: dict[str, EvaluationReport] = {}
    chosen_tables = _metric_list(table_metrics, TABLE_METRICS, "table_metrics")
    if chosen_tables and table_people is not None:
        present, people = _sample_people(
            present, people, meta, table_people, seed, warnings
        )
    detached = set(meta.detached())
    own: list[tuple[str, bool, dict[str, pd.DataFrame]]] = []
    for name in meta.tables:
        if not chosen_tables:
            break
        below_root = name != meta.root and name not in detached
        frames = _table_frames(name, meta, present, people, below_root=below_root)
        if frames is None:
            warnings.append(
                f"{name}: no columns besides keys; not evaluated on its own."
            )
            continue
        empty = [side for side, frame in frames.items() if len(frame) == 0]
        if empty:
            warnings.append(
                f"{name}: no rows on the {' and '.join(empty)} side; not evaluated on its "
                "own (its people are judged at person level, with no rows in it)."
            )
            continue
        if name in detached:
            warnings.append(
                f"{name}: outside the tree of {meta.root!r}; evaluated with rows as the unit."
            )
        own.append((name, below_root, frames))
    # the tables' own tests are one family: each table's at alpha / T, so that a
    # failing table lifts the release with the family-wise error of one table
    table_thresholds = _split_alpha(thresholds, len(own))
    for name, below_root, frames in own:
        columns = {
            c: dict(meta.tables[name].columns.get(c, {}))
            for c in frames["real"].columns
        }
        columns = {c: v for c, v in columns.items() if v}
        if below_root:
            columns[PERSON_COLUMN] = {"sdtype": "id"}
        with stage(reporter, f"table {name!r}"):
            table_reports[name] = evaluate(
                frames["real"],
                frames["synthetic"],
                frames.get("holdout"),
                metadata={"columns": columns},
                metrics=_runnable(
                    chosen_tables,
                    has_holdout=has_holdout,
                    person=PERSON_COLUMN if below_root else None,
                ),
                **{**common, "thresholds": table_thresholds},  # type: ignore[arg-type]
            )

    person_level = people_report.verdict.overall if people_report.verdict else "review"
    verdict = person_level
    if linkage.level == "fail":
        verdict = "fail"
    detail = ""
    if people_report.verdict is not None and people_report.verdict.reason:
        detail = " — " + people_report.verdict.reason.rstrip(". ").replace(
            "among the most isolated 1–5 %", "among " + ISOLATED_PEOPLE
        )
    reason = (
        f"Person level ({len(feats['real'])} training people): {person_level}{detail}. "
        f"Linkage: {linkage.level} — {linkage.reason}"
    )
    verdict, carried = _carry_tables(
        verdict,
        table_reports,
        None if table_thresholds is None else table_thresholds.alpha,
    )
    reason += carried
    return MultiTableReport(
        verdict=verdict,
        reason=reason,
        people=people_report,
        linkage=linkage,
        tables=table_reports,
        root=meta.root,
        n_people={side: len(f) for side, f in feats.items()},
        features={
            "root": list(plan.root_columns),
            "children": list(child_columns),
            "n_events": n_events,
            "max_levels": max_levels,
        },
        seed=seed,
        warnings=tuple(warnings),
    )


def _split_alpha(thresholds: Thresholds | None, n_tables: int) -> Thresholds | None:
    """The thresholds of each table's own verdict: the family-wise error split over the tables.

    Each table's gating tests are Holm-corrected at ``alpha / n_tables`` (Bonferroni over
    the tables), so that the tables together, whose failures make the release at least
    review, keep the run's family-wise error ``alpha``.
    """
    if n_tables <= 1:
        return thresholds
    base = thresholds if thresholds is not None else Thresholds()
    return base.with_alpha(base.alpha / n_tables)


def _carry_tables(
    verdict: str,
    table_reports: Mapping[str, EvaluationReport],
    alpha: float | None = None,
) -> tuple[str, str]:
    """The release verdict with every table's own finding: a failing table means review.

    Returns the verdict (at least review when a table's own verdict fails) and the
    sentence naming those tables (empty when none fails).
    """
    failed = [
        name
        for name, r in table_reports.items()
        if r.verdict is not None and r.verdict.overall == "fail"
    ]
    if not failed:
        return verdict, ""
    verdict = max(verdict, "review", key=lambda level: _RANK[level])
    one = len(failed) == 1
    named = ", ".join(repr(t) for t in failed)
    level = (
        ""
        if alpha is None or len(table_reports) <= 1
        else f" (each table's tests Holm-corrected at {alpha:.3g}: the run's family-wise "
        f"error shared by {len(table_reports)} tables)"
    )
    return verdict, (
        f" Tables: {named} {'fails' if one else 'fail'} on {'its' if one else 'their'} "
        f"own{level}, so the release reads at least review (see "
        f"{'that table' if one else 'those tables'}' reports)."
    )


def _subtrees(meta: RelationalMetadata) -> dict[str, list[str]]:
    """Each table below the root with its descendants, judged on its own by the linkage.

    A subtree that holds every table below the root (the root's only child with all
    of its descendants) is the whole person's history and is left out.
    """
    links = meta.links()
    below = list(links)
    out: dict[str, list[str]] = {}
    for top in below:
        tables = [top]
        for name in below:  # parents come before children
            if name not in tables and links[name].parent in tables:
                tables.append(name)
        if len(tables) < len(below):
            out[top] = tables
    return out


def _sample_people(
    present: Mapping[str, Mapping[str, pd.DataFrame]],
    people: Mapping[str, Mapping[str, pd.Series]],
    meta: RelationalMetadata,
    cap: int,
    seed: int,
    warnings: list[str],
) -> tuple[dict[str, dict[str, pd.DataFrame]], dict[str, dict[str, pd.Series]]]:
    """Each side with at most ``cap`` people (a seeded sample, all their rows kept)."""
    rng = as_generator(seed)
    tables_out: dict[str, dict[str, pd.DataFrame]] = {}
    people_out: dict[str, dict[str, pd.Series]] = {}
    sampled = []
    for side in ("real", "synthetic", "holdout"):
        if side not in present:
            continue
        ids = people[side][meta.root].to_numpy()
        if ids.size <= cap:
            tables_out[side] = dict(present[side])
            people_out[side] = dict(people[side])
            continue
        sampled.append(f"{side} {ids.size}")
        chosen = ids[np.sort(rng.choice(ids.size, cap, replace=False))]
        tables_out[side] = dict(present[side])
        people_out[side] = {}
        for name, person in people[side].items():
            keep = person.isin(chosen).to_numpy()
            tables_out[side][name] = present[side][name][keep]
            people_out[side][name] = person[keep]
    if sampled:
        warnings.append(
            f"tables: the per-table metrics ran on a seeded sample of {cap} people of each "
            f"side that has more ({', '.join(sampled)}), with all their rows; the person "
            "level and the linkage used every person (all people: table_people=None in "
            "Python, `--table-people all` or `table_people: all` in a run file)."
        )
    return tables_out, people_out


def _table_frames(
    name: str,
    meta: RelationalMetadata,
    present: Mapping[str, Mapping[str, pd.DataFrame]],
    people: Mapping[str, Mapping[str, pd.Series]],
    *,
    below_root: bool,
) -> dict[str, pd.DataFrame] | None:
    """One table on each side: its value columns, plus the person of each row below the root."""
    value_columns = meta.value_columns(name, present["real"][name])
    if not value_columns:
        return None
    out = {}
    for side, tables in present.items():
        frame = tables[name][[c for c in value_columns if c in tables[name].columns]]
        if below_root:
            tag = _SIDE_TAG[side]
            person = (tag + people[side][name].astype(str)).to_numpy()
            frame = frame.assign(**{PERSON_COLUMN: person})
        out[side] = frame.reset_index(drop=True)
    return out
