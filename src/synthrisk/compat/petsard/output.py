# SPDX-License-Identifier: BSD-3-Clause
"""PETsARD's CSV reports (``global`` and ``details`` granularities) of PETsARD runs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from synthrisk.compat.petsard.parse import (
    PetsardExperiment,
    PetsardReporter,
    PetsardRun,
)
from synthrisk.report import attack_rates

__all__ = ["PETSARD_COLUMNS", "petsard_outputs", "petsard_view"]

#: PETsARD's ``global`` report columns for an Anonymeter evaluator, in its order.
PETSARD_COLUMNS = (
    "risk",
    "risk_CI_btm",
    "risk_CI_top",
    "attack_rate",
    "attack_rate_err",
    "baseline_rate",
    "baseline_rate_err",
    "control_rate",
    "control_rate_err",
)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def petsard_view(result: Mapping[str, Any]) -> dict[str, float | None]:
    """PETsARD's nine ``global`` columns for one result (None where unknown).

    Taken from ``breakdown["petsard"]`` when present, else from flat breakdown keys,
    else derived from the attack rates and the result's score and interval.
    """
    breakdown = result.get("breakdown") or {}
    out: dict[str, float | None] = dict.fromkeys(PETSARD_COLUMNS)
    nested = breakdown.get("petsard") if isinstance(breakdown, Mapping) else None
    if isinstance(nested, Mapping):
        return {column: _number(nested.get(column)) for column in PETSARD_COLUMNS}
    if isinstance(breakdown, Mapping) and all(
        k in breakdown for k in ("risk", "risk_CI_btm", "risk_CI_top")
    ):
        flat = {column: _number(breakdown.get(column)) for column in PETSARD_COLUMNS}
        if not isinstance(breakdown.get("attack_rate"), Mapping):
            return flat
    out["risk"] = _number(result.get("score"))
    ci = result.get("ci")
    if isinstance(ci, Sequence) and len(ci) == 2:
        out["risk_CI_btm"], out["risk_CI_top"] = _number(ci[0]), _number(ci[1])
    for name, (value, error) in (attack_rates(result) or {}).items():
        out[name], out[f"{name}_err"] = value, error
    return out


def _round(value: float | None, digits: int | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return value if digits is None else round(value, digits)


def _csv(frame: pd.DataFrame) -> str:
    return frame.to_csv(index=False, lineterminator="\n")


def _full_expt_name(exp: PetsardExperiment, output_eval_name: str) -> str:
    base = "_".join(f"{module}[{name}]" for module, name in exp.modules)
    return f"{base}_Evaluator{output_eval_name}"


def petsard_outputs(
    runs: Sequence[PetsardRun], reporter: PetsardReporter, *, digits: int | None = 2
) -> dict[Path, str]:
    """PETsARD's CSV reports of ``runs`` for one reporter: ``{path: csv text}``.

    ``global``: ``{output}[Report]_[global].csv`` (or ``…_{eval1}-{eval2}_[global].csv``
    when the reporter names evaluators), one row per experiment with ``full_expt_name``,
    ``Splitter``, ``Synthesizer``, ``Evaluator`` and, per evaluator, PETsARD's nine
    columns prefixed with its name. ``details``: ``{output}[Report]_{eval}_[details].csv``
    per evaluator, one row per detail item (text items such as successful singling-out
    queries, and per-record values by row position).
    """
    out: dict[Path, str] = {}
    names = list(runs[0].evaluator_names) if runs else []
    chosen = (
        names if reporter.evals is None else [n for n in names if n in reporter.evals]
    )
    prefix = reporter.output
    if "global" in reporter.granularities and chosen:
        output_eval_name = (
            "[global]"
            if reporter.evals is None
            else "-".join(reporter.evals) + "_[global]"
        )
        rows = []
        for run in runs:
            row: dict[str, Any] = {
                "full_expt_name": _full_expt_name(run.experiment, output_eval_name)
            }
            for module, name in run.experiment.modules:
                row[module] = name
            row["Evaluator"] = output_eval_name
            data = run.report.to_dict()["results"]
            for eval_name, result in zip(run.evaluator_names, data, strict=True):
                if eval_name not in chosen:
                    continue
                view = petsard_view(result)
                for column in PETSARD_COLUMNS:
                    row[f"{eval_name}_{column}"] = _round(view[column], digits)
            rows.append(row)
        out[prefix.with_name(f"{prefix.name}[Report]_{output_eval_name}.csv")] = _csv(
            pd.DataFrame(rows)
        )
    if "details" in reporter.granularities:
        for eval_name in chosen:
            rows = []
            for run in runs:
                index = run.evaluator_names.index(eval_name)
                result = run.report.to_dict(include_records=True)["results"][index]
                head = {
                    "full_expt_name": _full_expt_name(
                        run.experiment, f"{eval_name}_[details]"
                    )
                }
                head.update(dict(run.experiment.modules))
                head["Evaluator"] = f"{eval_name}_[details]"
                for key, value in (result.get("breakdown") or {}).items():
                    if (
                        isinstance(value, list)
                        and value
                        and all(isinstance(v, str) for v in value)
                    ):
                        rows.extend(
                            {
                                **head,
                                "item": key,
                                "table": "",
                                "row": None,
                                "value": None,
                                "text": v,
                            }
                            for v in value
                        )
                for key, rec in (result.get("records") or {}).items():
                    for row_index, value in zip(
                        rec.get("index") or (), rec.get("values") or (), strict=False
                    ):
                        rows.append(
                            {
                                **head,
                                "item": key,
                                "table": rec.get("table", ""),
                                "row": int(row_index),
                                "value": _round(value, None),
                                "text": "",
                            }
                        )
            columns = [
                "full_expt_name",
                "Splitter",
                "Synthesizer",
                "Evaluator",
                "item",
                "table",
                "row",
                "value",
                "text",
            ]
            frame = pd.DataFrame(rows, columns=columns)
            frame["row"] = frame["row"].astype("Int64")
            out[
                prefix.with_name(f"{prefix.name}[Report]_{eval_name}_[details].csv")
            ] = _csv(frame)
    return out
