# SPDX-License-Identifier: BSD-3-Clause
"""Run a parsed PETsARD configuration: every Splitter × Synthesizer experiment, evaluated."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from synthrisk._progress import as_progress, metric_plan, stage
from synthrisk.compat.petsard.parse import (
    PETSARD_MISSING_NUMERIC,
    PETSARD_MISSING_TEXT,
    PetsardConfig,
    PetsardRun,
)
from synthrisk.evaluate import run_metrics
from synthrisk.io.files import add_provenance, read_table
from synthrisk.metrics import get_metric
from synthrisk.schema.tables import prepare_tables

if TYPE_CHECKING:
    from synthrisk._typing import JSONValue

__all__ = ["fill_missing_petsard", "run_petsard"]


def fill_missing_petsard(
    frame: pd.DataFrame, kinds: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """PETsARD's documented missing-value handling, on a copy of ``frame``.

    Numerical columns become float64 with missing cells set to -999999; categorical,
    boolean and text columns get the string ``"missing"``; datetime and id columns are
    left alone. ``kinds`` (column → synthrisk kind) overrides the kinds read from the
    pandas dtypes.
    """
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        kind = (kinds or {}).get(str(column))
        if kind is None:
            if pd.api.types.is_bool_dtype(series.dtype):
                kind = "boolean"
            elif pd.api.types.is_numeric_dtype(series.dtype):
                kind = "numerical"
            elif pd.api.types.is_datetime64_any_dtype(series.dtype):
                kind = "datetime"
            else:
                kind = "categorical"
        if kind == "numerical":
            out[column] = (
                pd.to_numeric(series, errors="coerce")
                .astype(np.float64)
                .fillna(PETSARD_MISSING_NUMERIC)
            )
        elif kind in ("categorical", "boolean", "text"):
            values = series.astype(object)
            out[column] = values.where(series.notna(), PETSARD_MISSING_TEXT)
    return out


def _read(
    path: Path, name: str, na_values: Mapping[str, list[str]] | None
) -> pd.DataFrame:
    if not na_values:
        return read_table(path, name=name)
    if not path.name.lower().endswith((".parquet", ".pq")):
        return read_table(path, name=name, na_values=na_values)
    frame = read_table(path, name=name)
    for column, markers in na_values.items():
        if column in frame.columns:
            frame[column] = frame[column].mask(frame[column].astype(str).isin(markers))
    return frame


def run_petsard(config: PetsardConfig, *, progress: Any = False) -> list[PetsardRun]:
    """Run every experiment of ``config`` (each evaluator in order) and return the reports."""
    runs = []
    progress = as_progress(progress)
    many = len(config.experiments) > 1
    for exp in config.experiments:
        label = f"{exp.splitter} × {exp.synthesizer}" if many else ""
        files = {"real": exp.real, "synthetic": exp.synthetic, "holdout": exp.holdout}
        frames = {
            name: _read(path, name, exp.na_values) for name, path in files.items()
        }
        tables = prepare_tables(
            frames["real"],
            frames["synthetic"],
            frames["holdout"],
            metadata=exp.metadata,
        )
        filled = None
        results: list[Any] = []
        notes = list(tables.notes)
        first: Any = None
        # the evaluators numbered [i/n] as one run, each experiment labelled
        with metric_plan(progress, len(config.evaluators)), stage(progress, label):
            for ev in config.evaluators:
                metric = get_metric(ev.metric).from_params(ev.params)
                use = tables
                if config.missing == "petsard" and ev.metric in (
                    "linkability",
                    "inference",
                ):
                    if filled is None:
                        kinds = {c.name: c.kind for c in tables.schema.columns}
                        # the same kinds (and datetime formats), booleans now holding "missing"
                        meta = tables.schema.to_dict()
                        specs = cast("dict[str, dict[str, JSONValue]]", meta["columns"])
                        for spec in specs.values():
                            if spec["kind"] == "boolean":
                                spec["kind"] = "categorical"
                        filled = prepare_tables(
                            *(
                                fill_missing_petsard(frames[n], kinds)
                                for n in ("real", "synthetic", "holdout")
                            ),
                            metadata=meta,
                        )
                    use = filled
                part = run_metrics(
                    use,
                    [metric],
                    seed=config.seed,
                    working_memory=config.working_memory,
                    backend=config.backend,
                    progress=progress,
                )
                first = first or part
                results.extend(part.results)
        if config.missing == "petsard":
            notes.append(
                "PETsARD's missing-value handling was applied for linkability and inference "
                f"(categorical -> {PETSARD_MISSING_TEXT!r}, numeric -> {PETSARD_MISSING_NUMERIC:.0f})."
            )
        schema = tables.schema.to_dict()
        schema["excluded"] = [c.name for c in tables.schema.excluded]
        report = dataclasses.replace(
            first,
            results=tuple(results),
            inputs=dict(tables.summary()),
            schema=schema,
            warnings=tuple(notes) + tuple(config.notes),
        )
        runs.append(
            PetsardRun(
                experiment=exp,
                report=add_provenance(report, files),
                evaluator_names=tuple(e.name for e in config.evaluators),
                tables=frames,
            )
        )
    return runs
