# SPDX-License-Identifier: BSD-3-Clause
"""Render an evaluation report to one self-contained HTML document.

The renderer reads only the report (an :class:`~synthrisk.results.EvaluationReport` or
its JSON dict): it imports no metric code and recomputes nothing. Plots are inline SVG
data URIs; the page has no JavaScript and loads nothing from the network (a Content
Security Policy forbids it); a print stylesheet makes "print to PDF" give a clean
document. Every user-supplied string (column names, category values, file names,
parameters) goes through Jinja2's autoescaping.

Real record values appear only when ``include_values=True`` *and* the tables are passed
in (``tables={"real": frame, …}``); the default report holds row positions and per-record
scores only, and says so.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synthrisk._atomic import write_text_atomic
from synthrisk._format import (
    format_excess,
    format_level,
    format_number,
    format_p_value,
    natural_key,
)
from synthrisk._optional import import_optional
from synthrisk.exceptions import ParameterError
from synthrisk.report._extract import (
    distance_records,
    finite_values,
    is_probability,
    number,
    rates,
    real_records,
    record_arrays,
)
from synthrisk.report._plots import drawn_together, plots_for
from synthrisk.results import EvaluationReport, Finding, MetricResult, SelfTest
from synthrisk.verdict import MetricVerdict, Thresholds, Verdict, judge

__all__ = ["render_html", "render_result_html", "write_html"]

#: sections every full report has, by element id (the browser test checks them)
SECTIONS = ("verdict", "metrics", "records", "inputs", "reproducibility")


def _as_report(report: EvaluationReport | Mapping[str, Any]) -> EvaluationReport:
    if isinstance(report, EvaluationReport):
        return report
    if isinstance(report, Mapping):
        return EvaluationReport.from_dict(report)
    msg = f"`report` must be an EvaluationReport or its JSON dict; got {type(report).__name__}."
    raise ParameterError(msg)


def _fmt(value: Any, digits: int = 4) -> str:
    """Every number of the page goes through here (see :func:`synthrisk._format.format_number`)."""
    return format_number(value, digits)


def _natural_order(value: Any) -> Any:
    """``value`` with every mapping's keys in natural order (``2`` before ``10``)."""
    if isinstance(value, Mapping):
        return {
            str(k): _natural_order(value[k]) for k in sorted(value, key=natural_key)
        }
    if isinstance(value, (list, tuple)):
        return [_natural_order(v) for v in value]
    return value


def _leaf_strings(value: Any, depth: int = 0) -> list[str] | None:
    """Every string inside nested lists (None when something else than scalars and lists is inside)."""
    out: list[str] = []
    for item in value:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, (list, tuple)) and depth < 2:
            inner = _leaf_strings(item, depth + 1)
            if inner is None:
                return None
            out.extend(inner)
        elif isinstance(item, Mapping):
            return None
    return out


def _list_text(value: Any) -> str:
    parts = [_list_text(v) if isinstance(v, (list, tuple)) else _fmt(v) for v in value]
    return "[" + ", ".join(parts) + "]"


#: words for the breakdown keys people read most; other keys read with their
#: underscores as spaces (:func:`key_label`); the raw key stays in the cell's title
KEY_LABELS: Mapping[str, str] = {
    "holdout_test": "holdout test",
    "effect": "excess over the holdout",
    "ci": "interval",
    "ci_level": "interval level",
    "confidence_level": "confidence level",
    "p_value": "p-value (one-sided)",
    "p_adjusted": "p-value (Holm-adjusted)",
    "p_exact": "p-value (exact)",
    "mde": "smallest detectable excess (80 % power)",
    "mde_level": "level of the smallest detectable excess",
    "detectable": "smallest detectable excess",
    "detectable_near": "smallest detectable excess (near copies)",
    "n": "units compared",
    "n_attacks": "attacks",
    "n_real": "real rows",
    "n_synthetic": "synthetic rows",
    "n_holdout": "holdout rows",
    "n_queries": "queries",
    "n_requested": "queries requested",
    "null": "value without memorisation",
    "estimate": "on training rows",
    "control": "on holdout rows",
    "chance": "chance rate",
    "se": "standard error",
    "statistic": "statistic",
    "compared": "what is compared",
    "unit": "unit",
    "decision": "decided by",
    "component": "worst part",
    "components": "parts",
    "attack_rate": "attack success rate",
    "attack_rate_err": "attack success rate, error",
    "baseline_rate": "baseline success rate",
    "baseline_rate_err": "baseline success rate, error",
    "control_rate": "holdout success rate",
    "control_rate_err": "holdout success rate, error",
    "risk_ci": "risk interval",
    "roc_auc_score": "ROC AUC",
    "tpr_at_fpr": "true-positive rate at false-positive rate",
    "tpr": "true-positive rate",
    "fpr": "false-positive rate",
    "mean": "mean",
    "median": "median",
    "k": "k",
}


def key_label(key: str) -> str:
    """A breakdown key for people: :data:`KEY_LABELS`, else underscores as spaces.

    Examples
    --------
    >>> key_label("mde_level"), key_label("n_dropped_holdout")
    ('level of the smallest detectable excess', 'n dropped holdout')
    """
    return KEY_LABELS.get(key) or key.replace("_", " ")


def _labelled(
    rows: list[tuple[str, str]], columns: frozenset[str]
) -> list[tuple[str, str, str]]:
    """Rows ``(label, raw key, text)``: each part of the dotted key in words (column
    names as they are), the raw ``a.b`` path kept for the cell's title."""
    out = []
    for key, text in rows:
        parts = key.split(" › ")
        label = " › ".join(p if p in columns else key_label(p) for p in parts)
        out.append((label, ".".join(parts), text))
    return out


def _flatten(
    value: Any,
    *,
    include_values: bool,
    columns: frozenset[str] = frozenset(),
    prefix: str = "",
    depth: int = 0,
) -> list[tuple[str, str]]:
    """Rows ``(dotted key, text)`` of a breakdown or parameter mapping.

    Lists of text are held back unless ``include_values`` (they can hold values of real
    records, e.g. singling-out queries), except lists of the tables' column names.
    """
    rows: list[tuple[str, str]] = []
    if isinstance(value, Mapping) and depth < 4:
        if not value and prefix:
            rows.append((prefix, "{}"))
        for key, item in value.items():
            label = f"{prefix} › {key}" if prefix else str(key)
            rows.extend(
                _flatten(
                    item,
                    include_values=include_values,
                    columns=columns,
                    prefix=label,
                    depth=depth + 1,
                )
            )
        return rows
    if isinstance(value, (list, tuple)):
        strings = _leaf_strings(value)
        if strings is None or len(value) > 200:
            rows.append((prefix, f"{len(value)} items"))
        elif strings and not include_values and not set(strings) <= columns:
            rows.append(
                (
                    prefix,
                    f"{len(value)} text items, not shown: they can hold values of real records "
                    "(render with include_values to list them)",
                )
            )
        else:
            rows.append((prefix, _list_text(value)))
        return rows
    if isinstance(value, Mapping):
        rows.append((prefix, json.dumps(value, sort_keys=True, default=str)[:500]))
        return rows
    rows.append((prefix, _fmt(value)))
    return rows


def _cell(value: Any) -> str:
    try:
        import pandas as pd

        if value is None or (not isinstance(value, (list, tuple)) and pd.isna(value)):
            return "missing"
    except (TypeError, ValueError):
        pass
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.15g}"  # the stored value, not a rounded one
    return str(value)


@dataclasses.dataclass
class _DrillDown:
    metric: str
    anchor: str
    name: str
    table: str
    description: str
    order: str
    n_total: int
    rows: list[dict[str, Any]]
    columns: list[str]


def _drilldowns(
    index: int,
    result: Mapping[str, Any],
    *,
    top_n: int,
    tables: Mapping[str, Any] | None,
    include_values: bool,
) -> list[_DrillDown]:
    out = []
    candidates: list[tuple[str, Mapping[str, Any], str]] = []
    for name, rec in real_records(result).items():
        order = (
            "highest value first" if is_probability(rec) else "in the metric's order"
        )
        candidates.append((name, rec, order))
    for name, rec in distance_records(result).items():
        if name.endswith("_to_real") and rec.get("table") not in ("real", "random"):
            candidates.append((name, rec, "closest first"))
    for name, rec, order in candidates:
        rows_of, values = record_arrays(rec)
        finite = np.flatnonzero(~np.isnan(values))
        if rec.get("table") == "real" and is_probability(rec):
            finite = finite[np.lexsort((rows_of[finite], -values[finite]))]
        elif rec.get("table") != "real":
            finite = finite[np.lexsort((rows_of[finite], values[finite]))]
        chosen = [(int(rows_of[i]), float(values[i])) for i in finite[:top_n]]
        table = str(rec.get("table", ""))
        frame = None if tables is None else tables.get(table)
        columns: list[str] = []
        if include_values and frame is not None:
            columns = [str(c) for c in frame.columns]
        rows = []
        for rank, (row, value) in enumerate(chosen, start=1):
            entry: dict[str, Any] = {
                "rank": rank,
                "row": row,
                "value": _fmt(value),
                "cells": [],
            }
            if columns:
                if 0 <= row < len(frame):  # type: ignore[arg-type]
                    record = frame.iloc[row]  # type: ignore[union-attr]
                    entry["cells"] = [
                        _cell(record.iloc[j]) for j in range(len(columns))
                    ]
                else:
                    entry["cells"] = ["(row not in the table)"] * len(columns)
            rows.append(entry)
        out.append(
            _DrillDown(
                metric=str(result.get("metric")),
                anchor=f"m{index}",
                name=name,
                table=table,
                description=str(rec.get("description", "")),
                order=order,
                n_total=int(values.size),
                rows=rows,
                columns=columns,
            )
        )
    return out


def _record_arrays_of(result: MetricResult) -> dict[str, dict[str, Any]]:
    """The result's record sets in their JSON shape, with arrays instead of lists.

    A record set can have millions of rows; the views read them with numpy.
    """
    return {
        name: {
            "table": rec.table,
            "description": rec.description,
            "index": rec.index,
            "values": rec.values,
        }
        for name, rec in result.records.items()
    }


def _result_with_arrays(result: MetricResult) -> dict[str, Any]:
    """``result.to_dict()`` with its record sets as arrays."""
    out = result.to_dict()
    if result.records:
        out["records"] = _record_arrays_of(result)
    return out


def _with_record_arrays(
    report: EvaluationReport, data: dict[str, Any]
) -> dict[str, Any]:
    """``data`` (the report's JSON form) with each result's record sets as arrays."""
    for entry, result in zip(data["results"], report.results, strict=True):
        if result.records:
            entry["records"] = _record_arrays_of(result)
    return data


def _p_phrase(p: float) -> str:
    """``= 0.3`` or ``< 0.0001``: what follows "p" in a sentence."""
    text = format_p_value(p)
    return text if text.startswith("<") else f"= {text}"


def _verdict_view(v: MetricVerdict) -> dict[str, Any]:
    """The verdict's cells. The Holm-adjusted p-value belongs to gating tests only; an
    informational metric's own p-value (not adjusted, not part of the verdict) is shown
    in its section, labelled as such."""
    excess = interval = level = None
    if v.effect is not None:
        excess, interval = format_excess(v.effect, v.ci, unit=v.unit)
        interval = interval or None
        if interval and v.ci_level is not None:
            level = format_level(v.ci_level)
    gating_test = v.gating and v.p_adjusted is not None
    return {
        "level": v.level,
        "gating": v.gating,
        "badge": "skipped" if v.skipped else v.level,
        "reason": v.reason,
        "rule": v.rule or None,
        "source": v.source or None,
        "statistic": v.statistic or None,
        "excess": excess,
        "interval": interval,
        "ci_level": level,
        "tolerance": None if v.tolerance is None else f"{v.tolerance:g}",
        "p": format_p_value(v.p_adjusted) if gating_test else None,
        "p_unadjusted": None
        if gating_test or v.p_value is None
        else _p_phrase(v.p_value),
    }


def _threat_view(data: Any) -> dict[str, str] | None:
    """A result's threat model for the page (None in reports written before it existed)."""
    if not isinstance(data, Mapping):
        return None
    view = {
        key: str(data.get(key) or "").strip()
        for key in ("attacker_holds", "target", "meaning", "columns")
    }
    if not (view["attacker_holds"] and view["target"] and view["meaning"]):
        return None
    return view


def _result_view(
    index: int,
    result: Mapping[str, Any],
    verdict: MetricVerdict,
    *,
    include_values: bool,
    columns: frozenset[str] = frozenset(),
    label: str | None = None,
) -> dict[str, Any]:
    ci = result.get("ci")
    found_rates = rates(result)
    rate_rows = []
    if found_rates:
        names = {
            "attack_rate": "attack on real rows",
            "baseline_rate": "baseline (random guessing)",
            "control_rate": "control (holdout rows)",
        }
        for key, (value, error) in found_rates.items():
            rate_rows.append(
                {"name": names[key], "value": _fmt(value), "error": _fmt(error)}
            )
    records = result.get("records") or {}
    record_names = [
        {
            "name": name,
            "table": rec.get("table"),
            "n": 0 if rec.get("values") is None else len(rec["values"]),
            "description": rec.get("description", ""),
        }
        for name, rec in records.items()
        if isinstance(rec, Mapping)
    ]
    distance_summary = []
    for name, rec in distance_records(result).items():
        values = finite_values(rec)
        if values.size:
            distance_summary.append(
                {
                    "name": name.replace("_to_", " → "),
                    "n": int(values.size),
                    "median": _fmt(float(np.median(values))),
                    "zero": _fmt(np.count_nonzero(values == 0) / values.size),
                }
            )
    breakdown = dict(result.get("breakdown") or {})
    if found_rates and isinstance(breakdown.get("petsard"), Mapping):
        # PETsARD's flat copy of the rates: shown once, in the PETsARD view table
        breakdown.pop("petsard")
    orientation = (
        "higher is safer"
        if result.get("higher_is_safer", True)
        else "higher means more risk"
    )
    return {
        "index": index,
        "anchor": f"m{index}",
        "metric": str(result.get("metric")),
        "label": str(result.get("metric"))
        if label is None
        else f"{label} ({result.get('metric')})",
        "attack": result.get("attack") or "",
        "threat": _threat_view(result.get("threat_model")),
        "orientation": orientation,
        "score": _fmt(result.get("score")),
        "status": str(result.get("status") or "ok"),
        "status_reason": result.get("reason") or "",
        "ci": None if not ci else f"[{_fmt(ci[0])}, {_fmt(ci[1])}]",
        "verdict": _verdict_view(verdict),
        "breakdown": _labelled(
            _flatten(breakdown, include_values=include_values, columns=columns),
            columns,
        ),
        "params": _flatten(result.get("params") or {}, include_values=True),
        "warnings": list(result.get("warnings") or ()),
        "rates": rate_rows,
        "distances": distance_summary,
        "plots": plots_for(result),
        "records": record_names,
    }


def _inputs_view(data: Mapping[str, Any]) -> dict[str, Any]:
    inputs = data.get("inputs") or {}
    tables: list[dict[str, Any]] = []
    for name in ("real", "synthetic", "holdout"):
        entry = inputs.get(name)
        if entry is None:
            tables.append({"name": name, "present": False})
            continue
        tables.append(
            {
                "name": name,
                "present": True,
                "rows": entry.get("rows"),
                "n_columns": len(entry.get("columns") or ()),
                "file": entry.get("file"),
                "sha256": entry.get("sha256"),
            }
        )
    schema = data.get("schema") or {}
    columns = []
    for name, spec in (schema.get("columns") or {}).items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = spec.get("kind", "")
        columns.append(
            {
                "name": name,
                "kind": kind,
                "source": spec.get("source", ""),
                "note": spec.get("note", ""),
                "excluded": kind in ("id", "pii", "text"),
                "format": spec.get("datetime_format", ""),
                "semantic": spec.get("semantic", ""),
            }
        )
    return {
        "tables": tables,
        "columns": columns,
        "primary_key": schema.get("primary_key"),
        "excluded": list(schema.get("excluded") or ()),
    }


def _judged(report: EvaluationReport) -> bool:
    """Whether ``report`` carries a verdict on exactly its results."""
    return report.verdict is not None and [
        v.metric for v in report.verdict.metrics
    ] == [r.metric for r in report.results]


def _context(
    report: EvaluationReport,
    *,
    thresholds: Thresholds | None,
    verdict: Verdict | None = None,
    title: str | None,
    tables: Mapping[str, Any] | None,
    include_values: bool,
    top_n: int,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    if verdict is not None:
        # judged by the caller with `thresholds`
        thresholds = Thresholds() if thresholds is None else thresholds
    elif thresholds is None and report.verdict is not None and _judged(report):
        verdict = report.verdict
        thresholds = Thresholds()
    else:
        thresholds = Thresholds() if thresholds is None else thresholds
        verdict = judge(report, thresholds)
    # withheld below unless asked
    data = _with_record_arrays(report, report.to_dict(include_values=True))
    results = data["results"]
    columns = frozenset(map(str, (data.get("schema") or {}).get("columns") or ()))
    for table in (data.get("inputs") or {}).values():
        if isinstance(table, Mapping):
            columns |= frozenset(map(str, table.get("columns") or ()))
    views = [
        _result_view(
            i,
            r,
            v,
            include_values=include_values,
            columns=columns,
            label=None if labels is None else labels[i],
        )
        for i, (r, v) in enumerate(zip(results, verdict.metrics, strict=True))
    ]
    drill = []
    for i, r in enumerate(results):
        drill.extend(
            _drilldowns(i, r, top_n=top_n, tables=tables, include_values=include_values)
        )
    has_records = any(r.get("records") for r in results)
    values_shown = (
        include_values and tables is not None and any(d.columns for d in drill)
    )
    params = {
        f"{i + 1}. {r['metric']}": r.get("params") or {} for i, r in enumerate(results)
    }
    petsard = _petsard_view(results, labels)
    caveats = [
        _caveat_view(text, results)
        for text in report.verdict_caveats(verdict=verdict, width=None)
    ]
    findings = [
        _finding_view(f, tables=tables, include_values=include_values, top_n=top_n)
        for f in verdict.findings
    ]
    anchors: dict[str, str] = {}
    for i, r in enumerate(results):
        anchors.setdefault(str(r.get("metric")), f"m{i}")
    for f in findings:
        f["anchor"] = anchors.get(f["metric"])
    finding_values = any(f["columns"] for f in findings)
    return {
        "title": title or "synthrisk privacy report",
        "data": data,
        "verdict": {
            "overall": verdict.overall,
            "reason": verdict.reason,
            "alpha": f"{verdict.alpha:.3g}",
            "counts": verdict.counts(),
            "skipped": sum(v.skipped for v in verdict.metrics),
            "conservative": verdict.conservative,
            "policy": verdict.policy,
            "policy_text": POLICY_TEXT.get(verdict.policy, ""),
            "coverage": _coverage_text(verdict),
            "findings": findings,
            "finding_counts": {
                level: sum(f.level == level for f in verdict.findings)
                for level in ("review", "fail")
            },
            "metric_fails": any(
                v.gating and v.level == "fail" for v in verdict.metrics
            ),
            "rows": [
                {"view": view, "verdict": _verdict_view(v)}
                for view, v in zip(views, verdict.metrics, strict=True)
            ],
        },
        "results": views,
        "drilldowns": drill,
        "has_records": has_records,
        "include_values": bool(values_shown or finding_values),
        "values_requested": include_values,
        "top_n": top_n,
        "inputs": _inputs_view(data),
        "params_json": json.dumps(_natural_order(params), indent=2),
        "thresholds": _threshold_rows(verdict, thresholds),
        "petsard": petsard,
        "warnings": list(data.get("warnings") or ()),
        "caveats": caveats,
        "self_test": _self_test_view(report.self_test, results),
        "examined": _examined_view(results, data),
    }


#: the per-person replay metrics whose breakdown counts people per column (or
#: combination of columns)
_PER_COLUMN_METRICS = (
    "identifier_replay",
    "text_replay",
    "row_string_replay",
    "rare_value_replay",
    "quasi_identifier_replay",
)


def _examined_view(
    results: Sequence[Mapping[str, Any]], data: Mapping[str, Any]
) -> dict[str, Any] | None:
    """What the replay tests checked, per column: people replayed on each side and the
    test's p-value (counts and row positions only, never values). None when no
    replay test ran and no column was left out."""
    rows: list[dict[str, Any]] = []
    checked: set[str] = set()
    for i, result in enumerate(results):
        metric = str(result.get("metric"))
        if metric not in _PER_COLUMN_METRICS or result.get("status") != "ok":
            continue
        breakdown = result.get("breakdown") or {}
        parts = {
            str(c.get("part")): c
            for c in ((breakdown.get("holdout_test") or {}).get("components") or ())
            if isinstance(c, Mapping)
        }
        for key in ("columns", "combinations"):
            block = breakdown.get(key)
            if not isinstance(block, Mapping):
                continue
            for name, counts in block.items():
                if not isinstance(counts, Mapping):
                    continue
                part = parts.get(str(name)) or {}
                p = part.get("p_value_adjusted")
                checked.add(str(name))
                rows.append(
                    {
                        "column": str(name),
                        "metric": metric,
                        "anchor": f"m{i}",
                        "training": f"{int(counts.get('training_replayed') or 0)} of "
                        f"{int(counts.get('training_people') or 0)}",
                        "holdout": f"{int(counts.get('holdout_replayed') or 0)} of "
                        f"{int(counts.get('holdout_people') or 0)}",
                        "p": "—" if p is None else format_p_value(float(p)),
                    }
                )
    schema = data.get("schema") or {}
    unchecked = [
        str(name)
        for name, spec in (schema.get("columns") or {}).items()
        if isinstance(spec, Mapping)
        and spec.get("kind") in ("id", "pii", "text")
        and str(name) not in checked
    ]
    if not rows and not unchecked:
        return None
    return {"rows": rows, "unchecked": unchecked}


#: PETsARD's columns of the Anonymeter results, in its order
_PETSARD_FIELDS = (
    "risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err",
    "baseline_rate", "baseline_rate_err", "control_rate", "control_rate_err",
)  # fmt: skip


def _petsard_view(
    results: Sequence[Mapping[str, Any]], labels: Sequence[str] | None
) -> dict[str, Any] | None:
    """PETsARD's flat view of the Anonymeter-style results, one column per result.

    Transposed against PETsARD's CSV (one row per field, one column per evaluator) so
    that nine fields and a few evaluators fit the page width.
    """
    columns, views = [], []
    for i, r in enumerate(results):
        view = (r.get("breakdown") or {}).get("petsard")
        if not isinstance(view, Mapping):
            continue
        columns.append(
            {
                "anchor": f"m{i}",
                "metric": str(r.get("metric")),
                "label": None if labels is None else labels[i],
            }
        )
        views.append(view)
    if not columns:
        return None
    fields = [f for f in _PETSARD_FIELDS if any(f in v for v in views)]
    fields += sorted({str(k) for v in views for k in v} - set(fields), key=natural_key)
    rows = [
        {"field": f, "values": [_fmt(number(v.get(f))) for v in views]} for f in fields
    ]
    return {"columns": columns, "rows": rows}


def _caveat_view(text: str, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A caveat ``"m1, m2: text"`` split into its sources (linked to their sections) and text."""
    anchors: dict[str, str] = {}
    for i, r in enumerate(results):
        anchors.setdefault(str(r.get("metric")), f"m{i}")
    head, sep, rest = text.partition(": ")
    names = head.split(", ") if sep else []
    if not names or not all(n in anchors or n == "inputs" for n in names):
        return {"sources": [], "text": text}
    sources = [
        {"name": n, "anchor": "inputs" if n == "inputs" else anchors[n]} for n in names
    ]
    return {"sources": sources, "text": rest}


def _self_test_view(
    self_test: SelfTest | None, results: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """The known-leak self-test's table (None when the run had none)."""
    if self_test is None:
        return None
    anchors: dict[str, str] = {}
    for i, r in enumerate(results):
        anchors.setdefault(str(r.get("metric")), f"m{i}")

    def links(ids: Sequence[str]) -> list[dict[str, str | None]]:
        return [{"name": m, "anchor": anchors.get(m)} for m in ids]

    rows = [
        {
            "kind": s.kind,
            "what": s.what,
            "share": f"{s.share * 100:g} %",
            "planted": s.planted,
            "overall": s.overall,
            "failed": links(s.failed),
            "review": links(s.review),
            "reason": s.reason,
        }
        for s in self_test.scenarios
    ]
    return {
        "headline": self_test.headline,
        "rows": rows,
        "metrics": links(self_test.metrics),
        "synthetic_rows": self_test.synthetic_rows,
        "training_people": self_test.training_people,
        "candidates": self_test.candidates,
        "person_column": self_test.person_column,
        "near_move": f"{self_test.near_move * 100:g} %",
        "notes": list(self_test.notes),
    }


#: what each release policy does, in the page's words
POLICY_TEXT = {
    "statistical": (
        "the holdout-controlled tests gate, and more copied people than chance explains "
        "read review (never fail by themselves)"
    ),
    "strict": (
        "any synthetic row that copies a training person's record, exactly or within "
        "the strict near-copy threshold, fails the verdict, whatever chance explains"
    ),
}


def _count_text(value: Any) -> str:
    """``8`` / ``1.0``: a count of people, whole or estimated."""
    number_ = float(value or 0.0)
    return f"{number_:.0f}" if number_.is_integer() else f"{number_:.1f}"


def _chance_p(p: float) -> str:
    """``p < 1e-12`` / ``p = 0.003``: as the finding's summary writes it."""
    return "p < 1e-12" if p < 1e-12 else f"p = {p:.2g}"


def _chance_words(finding: Finding) -> list[tuple[str, str]]:
    """The chance model of a finding, one (label, sentence) per line."""
    model = finding.chance or {}
    if not model:
        return []
    if finding.kind != "copied_people":
        return _replay_chance_words(model)
    found = int(model.get("identified") or 0)
    exact = int(model.get("exact") or 0)
    rows = [
        (
            "observed",
            f"{found} training {'person' if found == 1 else 'people'} copied "
            f"({exact} exactly, {found - exact} nearly)",
        ),
        (
            "expected by chance",
            f"about {_count_text(model.get('expected_identified'))} "
            f"(95 % upper bound {_count_text(model.get('upper_identified'))})",
        ),
        (
            "p-value",
            f"{_chance_p(float(model.get('p_value', 1.0)))} under the chance model",
        ),
    ]
    components = model.get("components") or {}
    if finding.policy == "strict" and components.get("strict_threshold") is not None:
        near = int(components.get("strict_near") or 0)
        rows.append(
            (
                "strict policy counts",
                f"{exact} exact and {near} near "
                f"{'copy' if near == 1 else 'copies'} within the near-copy threshold "
                f"{float(components['strict_threshold']):.3g} (closeness ratio)",
            )
        )
    if model.get("model"):
        rows.append(("model", str(model["model"])))
    if model.get("assumption"):
        rows.append(("assumption", str(model["assumption"])))
    return rows


def _replay_chance_words(model: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The chance model of a replay finding (values one real person holds), in words."""
    where = model.get("column") or " + ".join(map(str, model.get("columns") or ()))
    found = int(model.get("replayed") or 0)
    rows = [
        (
            "observed",
            f"in {where}: {found} of {int(model.get('training_singletons') or 0)} training "
            "people replayed through a value only they hold; "
            f"{int(model.get('holdout_replayed') or 0)} of "
            f"{int(model.get('holdout_singletons') or 0)} holdout people",
        ),
        (
            "expected by chance",
            f"about {_count_text(model.get('expected'))} (95 % upper bound "
            f"{_count_text(model.get('upper'))}; per person {float(model.get('rate') or 0):.3g}: "
            f"Good–Turing {float(model.get('rate_model') or 0):.3g}, holdout "
            f"{float(model.get('rate_holdout') or 0):.3g}, the larger)",
        ),
        (
            "p-value",
            f"{_chance_p(float(model.get('p_value', 1.0)))} under the chance model "
            "(Bonferroni across the columns)",
        ),
    ]
    if model.get("model"):
        rows.append(("model", str(model["model"])))
    if model.get("assumption"):
        rows.append(("assumption", str(model["assumption"])))
    return rows


def _finding_view(
    finding: Finding,
    *,
    tables: Mapping[str, Any] | None,
    include_values: bool,
    top_n: int,
) -> dict[str, Any]:
    """A finding for the page: its level, summary, chance model in words, the copied
    people (row positions, exact copies first) and, only with ``include_values`` and the
    synthetic table at hand, the copying synthetic rows' values."""
    people = sorted(finding.people, key=lambda p: not p.get("exact"))
    rows = []
    for person in people:
        ratio = person.get("ratio")
        isolation = person.get("isolation")
        rows.append(
            {
                "how": str(person.get("how") or ""),
                "real_rows": ", ".join(str(r) for r in person.get("real_rows") or ()),
                "synthetic_rows": ", ".join(
                    str(r) for r in person.get("synthetic_rows") or ()
                ),
                "kind": "exact" if person.get("exact") else "near",
                "ratio": "—" if ratio is None else format_number(float(ratio)),
                "isolation": "—"
                if isolation is None
                else format_number(float(isolation)),
            }
        )
    total = finding.count
    columns: list[str] = []
    values: list[dict[str, Any]] = []
    frame = None if tables is None else tables.get("synthetic")
    if include_values and frame is not None and people:
        columns = [str(c) for c in frame.columns]
        seen: list[int] = []
        for person in people:
            for row in person.get("synthetic_rows") or ():
                if int(row) not in seen:
                    seen.append(int(row))
        for row in seen[:top_n]:
            if 0 <= row < len(frame):
                record = frame.iloc[row]
                cells = [_cell(record.iloc[j]) for j in range(len(columns))]
            else:
                cells = ["(row not in the table)"] * len(columns)
            values.append({"row": row, "cells": cells})
    return {
        "kind": finding.kind,
        "replay": finding.kind != "copied_people",
        "title": finding.title,
        "metric": finding.metric,
        "level": finding.level,
        "policy": finding.policy,
        "summary": finding.summary,
        "next_step": finding.next_step,
        "chance": _chance_words(finding),
        "people": rows,
        "more": total - len(rows),
        "columns": columns,
        "values": values,
    }


def _coverage_text(verdict: Verdict) -> str:
    """Whom the holdout-controlled tests cover and what the chance model flags, at
    this run's size (the verdict reason's power sentence, for the page)."""
    out = []
    for v in verdict.metrics:
        if v.metric == "identification" and v.gating and v.detectable is not None:
            n = int(np.ceil(v.detectable))
            out.append(
                "The holdout-controlled tests compare training people with new people, so "
                "they cover the most isolated 1–5 % of training people: at this size they "
                f"detect copies of {n} of them (80 % power)."
            )
            break
    for finding in verdict.findings:
        model = finding.chance or {}
        if finding.kind == "copied_people" and model.get("detectable") is not None:
            exact = int(model["detectable"])
            near = int(model.get("detectable_near") or 0)
            out.append(
                "Copies of ordinary people are judged by the chance model, which flags exact "
                f"copies of {exact} training {'person' if exact == 1 else 'people'} beyond "
                f"chance ({near} if near copies)."
            )
            break
    if not out:
        out.append(
            "The holdout-controlled tests cover the most isolated 1–5 % of training people; "
            "copies of ordinary people are judged by the chance model of copied people."
        )
    return " ".join(out)


def _threshold_rows(verdict: Verdict, thresholds: Thresholds) -> list[dict[str, Any]]:
    rows, seen = [], set()
    for v in verdict.metrics:
        if v.metric in seen:
            continue
        seen.add(v.metric)
        t = v.threshold
        tolerance = thresholds.tolerance(v.metric)
        if t is not None:
            rule, source = t.describe(), t.source
            orientation = "higher is safer" if t.higher_is_safer else "lower is safer"
        elif v.gating and v.tolerance is not None:
            rule, source = v.rule, v.source
            orientation = f"excess over holdout ≤ {v.tolerance:g}"
        else:
            rule, source, orientation = "does not gate", v.reason, ""
            if tolerance is not None:
                orientation = f"tolerance {tolerance.value:g} (not applied)"
        rows.append(
            {
                "metric": v.metric,
                "rule": rule,
                "orientation": orientation,
                "source": source,
            }
        )
    return rows


def _environment() -> Any:
    jinja2 = import_optional("jinja2", extra="report")
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("synthrisk.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.loopcontrols"],
    )
    return env


def render_html(
    report: EvaluationReport | Mapping[str, Any],
    *,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    verdict: Verdict | None = None,
    title: str | None = None,
    tables: Mapping[str, Any] | None = None,
    include_values: bool = False,
    top_n: int = 20,
    fragment: bool = False,
    labels: Sequence[str] | None = None,
    part: str | None = None,
) -> str:
    """Render ``report`` to a self-contained HTML document.

    Parameters
    ----------
    report : EvaluationReport or dict
        The report (its JSON dict works too; per-record sections need ``records``,
        i.e. ``to_dict(include_records=True)``).
    thresholds : Thresholds or dict, default=None
        Verdict thresholds; None uses the documented defaults (or the verdict the
        report carries, when it carries one on exactly its results).
    verdict : Verdict, default=None
        The verdict already judged for ``report`` with ``thresholds`` (as
        :func:`synthrisk.pipeline.evaluate_files` does), shown as it is; None judges
        the report here.
    title : str, default=None
        Page title.
    tables : dict of str to DataFrame, default=None
        The input tables by name (``real``, ``synthetic``, ``holdout``); used only with
        ``include_values=True`` to show the drill-down rows' values.
    include_values : bool, default=False
        Show real record values in the drill-down. The report then says so at the top.
    top_n : int, default=20
        Rows per drill-down table.
    fragment : bool, default=False
        Return a ``<div>`` with scoped styles instead of a full document (Jupyter).
    labels : list of str, default=None
        A name for each result, shown beside its metric id (e.g. PETsARD's evaluator
        names when one metric runs with several parameter sets).
    part : str, default=None
        Render the report as one part of a larger page (a fragment, whatever
        ``fragment`` says): its verdict reads ``<part>: <level>`` in a smaller heading,
        never "Overall", without the page title, and its headings are a level
        smaller (the page of related tables: ``"Person-level tests"``).

    Returns
    -------
    str
        The HTML.

    Examples
    --------
    >>> from synthrisk import EvaluationReport, MetricResult
    >>> r = EvaluationReport("0.1.0", 0, {}, (MetricResult("dcr_baseline_protection", 0.8, {}),))
    >>> "pass" in render_html(r)
    True
    """
    report = _as_report(report)
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        thresholds = Thresholds.from_dict(thresholds)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        msg = f"`top_n` must be an integer >= 1; got {top_n!r}."
        raise ParameterError(msg)
    if not isinstance(include_values, bool):
        msg = f"`include_values` must be true or false; got {include_values!r}."
        raise ParameterError(msg)
    if labels is not None:
        labels = [str(label) for label in labels]
        if len(labels) != len(report.results):
            msg = f"`labels` must name each of the {len(report.results)} results; got {len(labels)} labels."
            raise ParameterError(msg)
    if part is not None and not isinstance(part, str):
        msg = f"`part` must be a string (the part's name) or None; got {part!r}."
        raise ParameterError(msg)
    if verdict is not None and not isinstance(verdict, Verdict):
        msg = f"`verdict` must be a Verdict (from synthrisk.report.judge); got {type(verdict).__name__}."
        raise ParameterError(msg)
    # the plots are drawn at the end, side by side where that pays
    with drawn_together() as fill:
        context = _context(
            report,
            thresholds=thresholds,
            verdict=verdict,
            title=title,
            tables=tables,
            include_values=include_values,
            top_n=top_n,
            labels=labels,
        )
        env = _environment()
        html = str(
            env.get_template("report.html.j2").render(
                fragment=fragment or part is not None, part=part, **context
            )
        )
        return fill(html)


def render_result_html(
    result: MetricResult, *, thresholds: Thresholds | None = None
) -> str:
    """A small HTML card for one result (Jupyter's ``_repr_html_``)."""
    from synthrisk.verdict import judge_result

    verdict = judge_result(result, thresholds)
    view = _result_view(0, _result_with_arrays(result), verdict, include_values=False)
    env = _environment()
    return str(env.get_template("result_card.html.j2").render(r=view))


def write_html(
    report: EvaluationReport | Mapping[str, Any],
    path: str | Path,
    **options: Any,
) -> Path:
    """Render ``report`` (see :func:`render_html` for ``options``) and write it atomically."""
    return write_text_atomic(path, render_html(report, **options))
