# SPDX-License-Identifier: BSD-3-Clause
"""The anonymisation record: the evidence a privacy officer files with a regulator.

:func:`render_record` turns an :class:`~synthrisk.results.EvaluationReport` (or its
JSON dict) into one printable HTML document; :func:`write_record` writes it as HTML or,
through a headless Chromium, as PDF. Its sections follow ISO/IEC 27559 (context, data,
attack testing, mitigation, governance), the EDPB's three criteria (WP29 Opinion
05/2014: singling out, linkability, inference; membership beside them, EDPB Opinion
28/2024) and Québec's anonymisation regulation (risk analysis, "very low" residual
risk, re-assessment, register); ``docs/record.md`` explains each for a privacy officer.

Like the HTML report it reads the report and nothing else: no tables, no metric code.
It holds no record values: row positions, counts, rates and column names only; every
text goes through :func:`html.escape`. The only arithmetic is the precision of a
membership accusation at the stated share of the population in the training data
(:func:`accusation_precision`) from the rates the report holds.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synthrisk._atomic import write_text_atomic
from synthrisk._format import format_number
from synthrisk._version import __version__
from synthrisk.context import DEFAULT_WORDS, RELEASE_MODELS, ReleaseContext
from synthrisk.exceptions import MissingDependencyError, ParameterError
from synthrisk.results import EvaluationReport
from synthrisk.verdict import judge

__all__ = [
    "CRITERIA",
    "DEFAULT_PRIORS",
    "RECORD_SECTIONS",
    "Criterion",
    "accusation_precision",
    "check_record_path",
    "find_chromium",
    "precision_interval",
    "record_bytes",
    "render_record",
    "write_record",
]

#: the record's sections by element id, in order (the tests check every one is filled)
RECORD_SECTIONS = (
    "context",
    "data",
    "criteria",
    "precision",
    "classical",
    "findings",
    "limitations",
    "reproducibility",
    "signoff",
)

#: priors shown when the share of the population in the training data is not given
DEFAULT_PRIORS = (0.01, 0.1, 0.5)

#: the classical risk models' ids (the evaluation's ``RECORD_METRICS``)
_CLASSICAL = ("reidentification_risk", "sdc_risk")

#: average re-identification risk thresholds by release model (EMA; public-use practice)
_CLASSICAL_THRESHOLDS = {
    "public": (
        0.05,
        "0.05: public-use microdata practice (CIHI public-use file, El Emam et al., "
        "BMC Med Inform Decis Mak 11:53, 2011)",
    ),
    "restricted": (
        0.09,
        "0.09: EMA Policy 0070 clinical-data publication guidance (average "
        "re-identification risk ≤ 0.09); El Emam, Mosquera & Bass, JMIR 2020",
    ),
    "enclave": (
        0.09,
        "0.09: EMA Policy 0070 clinical-data publication guidance (average "
        "re-identification risk ≤ 0.09); an enclave's controls allow no higher threshold here",
    ),
}


class Criterion:
    """One criterion of the record: its question, its tests and its precedent."""

    __slots__ = ("key", "metrics", "precedent", "question", "title")

    def __init__(
        self,
        key: str,
        title: str,
        question: str,
        metrics: Sequence[str],
        precedent: str,
    ) -> None:
        self.key = key
        self.title = title
        self.question = question
        self.metrics = tuple(metrics)
        self.precedent = precedent

    def __repr__(self) -> str:
        return f"Criterion({self.key!r}, metrics={list(self.metrics)})"


#: the EDPB's three criteria and membership, with the tests that bear on each
CRITERIA: tuple[Criterion, ...] = (
    Criterion(
        "singling_out",
        "Singling out (Québec: individualization)",
        "Can a recipient isolate one real person's record with the synthetic table?",
        (
            "singling_out",
            "singling_out_univariate",
            "identification",
            "quasi_identifier_replay",
            "rare_value_replay",
            "reidentification_risk",
        ),
        "Anonymeter-type risks: 0.09 (PETsARD, after Singapore PDPC's Guide on Synthetic "
        "Data Generation, 2024; EMA Policy 0070's 0.09), judged on the excess over the "
        "holdout; per-person tests: 0 people beyond chance (EDPB Opinion 28/2024: "
        "insignificant for each data subject)",
    ),
    Criterion(
        "linkability",
        "Linkability (Québec: correlation)",
        "Can a recipient link a synthetic record to a real person's record held elsewhere?",
        ("linkability", "identifier_replay", "text_replay", "row_string_replay"),
        "Linkability: 0.09 on the excess over the holdout (PETsARD after Singapore PDPC, "
        "2024); replayed identifiers and text: 0 people beyond chance (an identifier "
        "discloses its holder by itself)",
    ),
    Criterion(
        "inference",
        "Inference",
        "Can a recipient deduce a real person's attribute with significant probability?",
        ("inference", "disclosure_protection"),
        "Inference: 0.09 on the excess over the holdout (PETsARD after Singapore PDPC, "
        "2024); CAP disclosure: 0.05 on the excess (synthrisk's tolerance, "
        "docs/verdict.md)",
    ),
    Criterion(
        "membership",
        "Membership (EDPB Opinion 28/2024: extraction and membership)",
        "Can a recipient tell that a given person's record was in the training data?",
        (
            "dcr_share",
            "identical_match_share",
            "nndr",
            "membership_knn_probabilities",
            "vulnerable_people",
            "membership_classification",
            "collision_membership",
            "domias",
            "monte_carlo_membership",
        ),
        "Membership AUC: 0.55 (0.05 over a coin toss); DCR share: 0.55; copies beyond "
        "chance: 1 synthetic row in 200; the most isolated people: 0 people beyond chance "
        "(Meeus et al. 2023); read membership at a realistic share of the population "
        "(Domingo-Ferrer et al., arXiv 2511.10516; Jebreel et al., arXiv 2603.22987)",
    ),
)

#: which criterion a per-person finding serves, by the metric that carries it
_FINDING_CRITERION = {
    "identification": "singling_out",
    "quasi_identifier_replay": "singling_out",
    "rare_value_replay": "singling_out",
    "identifier_replay": "linkability",
    "text_replay": "linkability",
    "row_string_replay": "linkability",
}

_LEVEL_RANK = {"pass": 0, "info": 0, "review": 1, "fail": 2}


# --------------------------------------------------------------------------- numbers


def accusation_precision(prior: float, tpr: float, fpr: float) -> float | None:
    """Precision of "this person was in the training data" at a prior.

    ``precision = π·TPR / (π·TPR + (1 − π)·FPR)``: of the people an attack flags, the
    share who were in the training data, when a share ``π`` of the population is
    (Domingo-Ferrer et al., arXiv 2511.10516). None when nobody is flagged.

    >>> round(accusation_precision(0.01, 0.5, 0.01), 3)
    0.336
    >>> accusation_precision(0.5, 0.0, 0.0) is None
    True
    """
    flagged = prior * tpr + (1.0 - prior) * fpr
    if not flagged > 0:
        return None
    return prior * tpr / flagged


def precision_interval(
    prior: float, tpr: tuple[float, float], fpr: tuple[float, float]
) -> tuple[float | None, float | None]:
    """The precision's interval from the TPR's and FPR's intervals, worst cases.

    The lower end pairs the lowest TPR with the highest FPR, the upper end the highest
    TPR with the lowest FPR (precision rises with the TPR and falls with the FPR).
    An upper end with no false positive possible is 1.
    """
    low = accusation_precision(prior, tpr[0], fpr[1])
    high = accusation_precision(prior, tpr[1], fpr[0])
    if high is None and tpr[1] > 0:
        high = 1.0
    if low is None:
        low = 0.0 if fpr[1] > 0 or tpr[0] == 0 else 1.0
    return low, high


def _clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    import numpy as np

    from synthrisk.stats.mia import clopper_pearson

    low, high = clopper_pearson(np.array([k]), np.array([n]), level)
    return float(low[0]), float(high[0])


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


# --------------------------------------------------------------------------- html


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _f(value: Any, digits: int = 3) -> str:
    number = _num(value)
    return "—" if number is None else _e(format_number(number, digits))


def _pct(value: Any) -> str:
    number = _num(value)
    if number is None:
        return "—"
    return _e(f"{100 * number:.3g} %")


def _badge(level: str) -> str:
    return f'<span class="badge {_e(level)}">{_e(level)}</span>'


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """A table of already-escaped cells (``head`` is escaped here)."""
    out = [f'<table class="{_e(cls)}"><thead><tr>']
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _keyvalues(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(
        f'<tr><th scope="row">{_e(k)}</th><td>{v}</td></tr>' for k, v in rows
    )
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{_e(key)}" class="rec"><h2>{_e(title)}</h2>{body}</section>'


# --------------------------------------------------------------------------- sections


def _context_section(
    context: ReleaseContext, n_training: int | None, today: str
) -> str:
    defaults = set(context.defaults)

    def stated(name: str, text: str | None) -> str:
        if name in defaults or text is None:
            return f'<span class="default">{_e(DEFAULT_WORDS[name])}</span>'
        return _e(text)

    prior = context.prior(n_training)
    if context.population_share is not None and "population_share" not in defaults:
        share = f"{_pct(context.population_share)} (stated)"
    elif prior is not None:
        share = (
            f"{_pct(prior)} (the training table's {_e(n_training)} rows over the stated "
            f"population of {_e(context.population_size)})"
        )
    else:
        share = f'<span class="default">{_e(DEFAULT_WORDS["population_share"])}</span>'
    model = context.release_model
    release = (
        f'<span class="default">{_e(DEFAULT_WORDS["release_model"])}</span>'
        if "release_model" in defaults
        else _e(RELEASE_MODELS.get(model, model))
    )
    known = ", ".join(context.attacker_knows) if context.attacker_knows else None
    assessed = context.assessed_on or today
    reassess = (
        context.reassessment() or ReleaseContext(assessed_on=assessed).reassessment()
    )
    rows = [
        ("Purpose", stated("purpose", context.purpose)),
        ("Recipient", stated("recipient", context.recipient)),
        ("Release model", release),
        ("What the attacker is assumed to know", stated("attacker_knows", known)),
        ("Share of the population in the training data (π)", share),
        ("Assessed by", stated("assessor", context.assessor)),
        (
            "Assessed on",
            _e(assessed)
            + (
                ' <span class="default">(default: the date of the run, or of this record)</span>'
                if "assessed_on" in defaults or context.assessed_on is None
                else ""
            ),
        ),
        (
            "Re-assess by",
            _e(reassess)
            + (
                ' <span class="default">(default: one year after the assessment)</span>'
                if "reassess_by" in defaults
                else ""
            ),
        ),
    ]
    intro = (
        "<p>The assessment takes the recipient's side: a table is anonymous for a recipient "
        "who has no means reasonably likely to be used to identify anyone in it (CJEU "
        "C-413/23 P, <i>EDPS v SRB</i>, 2025; ISO/IEC 27559 §6, context assessment). "
        'Entries in <span class="default">grey italics</span> are synthrisk\'s defaults, '
        "not statements of the assessor.</p>"
    )
    return _section("context", "1. Context of the release", intro + _keyvalues(rows))


def _data_section(report: EvaluationReport) -> str:
    columns: Any = (report.schema or {}).get("columns") or {}
    inputs: Any = report.inputs or {}
    rows = []
    for name, label in (
        ("real", "training (real rows the generator saw)"),
        ("holdout", "holdout (real rows it never saw)"),
        ("synthetic", "synthetic (the table to release)"),
    ):
        entry = inputs.get(name)
        if not isinstance(entry, Mapping):
            rows.append([_e(label), "not given", "—", "—", "—"])
            continue
        cols = entry.get("columns") or []
        rows.append(
            [
                _e(label),
                _e(entry.get("file") or "in memory"),
                _e(entry.get("rows") if isinstance(entry.get("rows"), int) else "—"),
                _e(len(cols)),
                f'<span class="mono">{_e(entry.get("sha256") or "not recorded (tables passed in memory)")}</span>',
            ]
        )
    body = _table(["table", "file", "rows", "columns", "SHA-256"], rows)
    kinds = []
    schema: Any = report.schema or {}
    excluded = set(schema.get("excluded") or ())
    real_cols = (inputs.get("real") or {}).get("columns") or list(columns)
    for col in real_cols:
        spec = columns.get(col) if isinstance(columns, Mapping) else None
        kind = spec.get("kind") if isinstance(spec, Mapping) else None
        note = "excluded from the tests (a key)" if col in excluded else ""
        kinds.append([_e(col), _e(kind or "—"), _e(note)])
    body += "<h3>Columns and their kinds</h3>" + _table(
        ["column", "kind", "note"], kinds
    )
    body += (
        '<p class="small">Column names, kinds, sizes and fingerprints only: this record '
        "holds no value of any record.</p>"
    )
    return _section("data", "2. The data", body)


def _verdict_by_metric(report: EvaluationReport) -> dict[str, Any]:
    verdict = report.verdict if report.verdict is not None else judge(report)
    return {v.metric: v for v in verdict.metrics}


def _interval(v: Any) -> str:
    if v.ci is None:
        return "—"
    level = (
        "" if v.ci_level is None else f" ({_e(format_number(100 * v.ci_level, 4))} %)"
    )
    return f"[{_f(v.ci[0])}, {_f(v.ci[1])}]{level}"


def _criteria_section(report: EvaluationReport) -> tuple[str, dict[str, str]]:
    by_metric = _verdict_by_metric(report)
    statuses = {r.metric: r for r in report.results}
    levels: dict[str, str] = {}
    summary_rows = []
    blocks = []
    for crit in CRITERIA:
        rows = []
        worst = None
        for metric in crit.metrics:
            result = statuses.get(metric)
            v = by_metric.get(metric)
            if result is None or v is None:
                rows.append(
                    [
                        f'<span class="mono">{_e(metric)}</span>',
                        "not run",
                        "—",
                        "—",
                        "—",
                        "—",
                        "not in this run (no column it examines, or not chosen)",
                    ]
                )
                continue
            if result.status == "skipped" or v.skipped:
                rows.append(
                    [
                        f'<span class="mono">{_e(metric)}</span>',
                        f"not run: {_e(result.reason or 'skipped')}",
                        "—",
                        "—",
                        "—",
                        "—",
                        "—",
                    ]
                )
                continue
            level = v.level
            if v.gating:
                worst = (
                    level
                    if worst is None or _LEVEL_RANK[level] > _LEVEL_RANK[worst]
                    else worst
                )
            tolerance = (
                f'{_f(v.tolerance)}<br><span class="small">{_e(v.source)}</span>'
                if v.tolerance is not None
                else _e(v.source or "—")
            )
            rows.append(
                [
                    f'<span class="mono">{_e(metric)}</span>',
                    _badge(level)
                    + (
                        ""
                        if v.gating
                        else ' <span class="small">(informational)</span>'
                    ),
                    _f(v.effect),
                    _interval(v),
                    tolerance,
                    _f(v.detectable),
                    _e(v.reason),
                ]
            )
        level = worst or "not run"
        levels[crit.key] = level
        summary_rows.append(
            [
                _e(crit.title),
                _badge(level) if worst else "not run",
                _e(crit.precedent),
            ]
        )
        blocks.append(
            f'<div class="criterion" id="criterion-{_e(crit.key)}"><h3>{_e(crit.title)} '
            f"{_badge(level) if worst else ''}</h3><p>{_e(crit.question)}</p>"
            f"<p><b>Threshold fixed in advance:</b> {_e(crit.precedent)}.</p>"
            + _table(
                [
                    "test",
                    "verdict",
                    "excess over holdout",
                    "interval",
                    "tolerance and its source",
                    "smallest leak detectable",
                    "reason",
                ],
                rows,
                "criteria",
            )
            + "</div>"
        )
    verdict = report.verdict if report.verdict is not None else judge(report)
    intro = (
        "<p>Each criterion of the EDPB (WP29 Opinion 05/2014 on anonymisation techniques) "
        "and membership (EDPB Opinion 28/2024) lists the tests that bear on it. Every test "
        "compares what an attack learns about the training people with what it learns about "
        "holdout people the generator never saw (the <i>excess</i>); the tolerance was fixed "
        "before the run and is printed with its source. The interval is at the level of "
        "the test's Holm-corrected significance (family-wise error "
        f"{_e(format_number(verdict.alpha, 3))}); <i>smallest leak detectable</i> is the "
        "excess this test finds with 80 % power at this size.</p>"
        f"<p><b>Overall verdict:</b> {_badge(verdict.overall)} {_e(verdict.reason)}</p>"
        f"<p><b>Release policy:</b> {_e(verdict.policy)}.</p>"
    )
    body = (
        intro
        + _table(["criterion", "verdict", "threshold fixed in advance"], summary_rows)
        + "".join(blocks)
    )
    return _section("criteria", "3. The three criteria and membership", body), levels


def _operating_points(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every (TPR, FPR) the result holds, with intervals and the AUC beside it."""
    breakdown = result.get("breakdown") or {}
    metric = result.get("metric")
    points: list[dict[str, Any]] = []
    if not isinstance(breakdown, Mapping):
        return points
    if metric == "identification":
        a, n_a = breakdown.get("identified_training"), breakdown.get("training_people")
        b, n_b = breakdown.get("identified_holdout"), breakdown.get("holdout_people")
        if (
            isinstance(a, int)
            and isinstance(n_a, int)
            and isinstance(b, int)
            and isinstance(n_b, int)
            and n_a
            and n_b
        ):
            points.append(
                {
                    "where": "identified people (exact or near copy)",
                    "tpr": a / n_a,
                    "tpr_ci": _clopper_pearson(a, n_a),
                    "fpr": b / n_b,
                    "fpr_ci": _clopper_pearson(b, n_b),
                    "auc": None,
                    "counts": f"{a} of {n_a} training, {b} of {n_b} holdout",
                }
            )
        return points

    def walk(node: Any, path: tuple[str, ...], auc: Any) -> None:
        if not isinstance(node, Mapping) or len(path) > 5:
            if isinstance(node, list) and len(path) <= 5:
                for i, item in enumerate(node):
                    label = item.get("stratum") if isinstance(item, Mapping) else None
                    walk(item, (*path, str(label or i)), auc)
            return
        here = node.get("auc", auc)
        if isinstance(here, Mapping):
            here = here.get("real")
        for key, value in node.items():
            if key == "tpr_at_fpr" and isinstance(value, Mapping):
                for fpr_text, entry in value.items():
                    fpr = _num(_float_or_none(fpr_text))
                    if fpr is None:
                        continue
                    tpr = entry.get("tpr") if isinstance(entry, Mapping) else entry
                    tpr = _num(tpr)
                    if tpr is None:
                        continue
                    ci = entry.get("ci") if isinstance(entry, Mapping) else None
                    n_m, n_n = _sizes(node, breakdown)
                    if isinstance(ci, Sequence) and len(ci) == 2:
                        tpr_ci = (float(ci[0]), float(ci[1]))
                    elif n_m:
                        tpr_ci = _clopper_pearson(round(tpr * n_m), n_m)
                    else:
                        tpr_ci = (tpr, tpr)
                    resolution = (
                        _num(entry.get("fpr_resolution"))
                        if isinstance(entry, Mapping)
                        else None
                    )
                    if resolution or n_n:
                        n_h = round(1 / resolution) if resolution else int(n_n or 0)
                        k = math.floor(fpr * n_h + 1e-9)
                        fpr_ci = _clopper_pearson(k, n_h)
                        fpr_ci = (fpr_ci[0], max(fpr_ci[1], fpr))
                    else:
                        fpr_ci = (0.0, fpr)
                    points.append(
                        {
                            "where": " / ".join(
                                p for p in path if p not in ("strata", "attacks")
                            )
                            or "whole table",
                            "tpr": tpr,
                            "tpr_ci": tpr_ci,
                            "fpr": fpr,
                            "fpr_ci": fpr_ci,
                            "auc": _num(here),
                            "counts": "",
                        }
                    )
            elif isinstance(value, (Mapping, list)) and key not in ("records",):
                walk(value, (*path, str(key)), here)

    walk(breakdown, (), _auc_of(result))
    return points


def _sizes(
    node: Mapping[str, Any], breakdown: Mapping[str, Any]
) -> tuple[int | None, int | None]:
    """Members and non-members behind a node's rates (the node's, else the breakdown's)."""
    for source in (node, breakdown):
        for members, others in (
            ("n_members", "n_non_members"),
            ("n_real", "n_holdout"),
        ):
            m, n = source.get(members), source.get(others)
            if isinstance(m, int) and isinstance(n, int) and m > 0 and n > 0:
                return m, n
    return None, None


def _float_or_none(text: Any) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _auc_of(result: Mapping[str, Any]) -> float | None:
    breakdown = result.get("breakdown") or {}
    for key in ("auc", "roc_auc", "roc_auc_score"):
        value = breakdown.get(key) if isinstance(breakdown, Mapping) else None
        if isinstance(value, Mapping):
            value = value.get("real")
        if _num(value) is not None:
            return _num(value)
    return None


def _precision_section(
    report: EvaluationReport, data: Mapping[str, Any], context: ReleaseContext
) -> str:
    n_training = _rows(report, "real")
    prior = context.prior(n_training)
    priors = (prior,) if prior is not None else DEFAULT_PRIORS
    if prior is not None:
        stated = f"π = {_pct(prior)}"
        if context.population_share is None:
            stated += " (training rows over the stated population size)"
    else:
        stated = "π not given: shown at 1 %, 10 %, 50 %"
    rows = []
    for result in data.get("results") or ():
        metric = result.get("metric")
        if result.get("status") != "ok":
            continue
        points = _operating_points(result)
        auc = _auc_of(result)
        if not points:
            if auc is not None and metric in CRITERIA[3].metrics:
                rows.append(
                    [
                        f'<span class="mono">{_e(metric)}</span>',
                        "AUC only (no operating point recorded)",
                        _f(auc),
                        "—",
                        "—",
                        "—",
                    ]
                )
            continue
        # the attacker's best point at each FPR (highest TPR), one row each
        best: dict[float, dict[str, Any]] = {}
        for p in points:
            if p["fpr"] not in best or p["tpr"] > best[p["fpr"]]["tpr"]:
                best[p["fpr"]] = p
        for fpr in sorted(best):
            p = best[fpr]
            cells = []
            for pi in priors:
                value = accusation_precision(pi, p["tpr"], p["fpr"])
                low, high = precision_interval(pi, p["tpr_ci"], p["fpr_ci"])
                cells.append(
                    f"{_e(format_number(100 * pi, 3))} %: {_pct(value)} "
                    f'<span class="small">[{_pct(low)}, {_pct(high)}]</span>'
                )
            rows.append(
                [
                    f'<span class="mono">{_e(metric)}</span>',
                    _e(p["where"])
                    + (
                        f'<br><span class="small">{_e(p["counts"])}</span>'
                        if p["counts"]
                        else ""
                    ),
                    _f(p["auc"] if p["auc"] is not None else auc),
                    f"{_pct(p['tpr'])} "
                    f'<span class="small">[{_pct(p["tpr_ci"][0])}, {_pct(p["tpr_ci"][1])}]</span>',
                    f"{_pct(p['fpr'])} "
                    f'<span class="small">[{_pct(p["fpr_ci"][0])}, {_pct(p["fpr_ci"][1])}]</span>',
                    "<br>".join(cells),
                ]
            )
    intro = (
        "<p>A membership or identification attack accuses a person of having been in the "
        "training data. How often such an accusation is right depends on how many of the "
        "population were in it (π): precision = π·TPR / (π·TPR + (1 − π)·FPR). Membership "
        "rates read alone overstate the risk when the training data hold a small share of "
        "the population (Domingo-Ferrer et al., arXiv 2511.10516; Jebreel, Sánchez and "
        "Domingo-Ferrer, arXiv 2603.22987). The precision's interval pairs the ends of the "
        "TPR's and FPR's 95 % intervals in the worst way for each end. The holdout plays the "
        "non-members: with π = 50 % the precision equals the attack's accuracy on a balanced "
        f"game.</p><p><b>Share used:</b> {stated}.</p>"
    )
    shares = [
        str(r.get("metric"))
        for r in data.get("results") or ()
        if r.get("status") == "ok"
        and r.get("metric") in CRITERIA[3].metrics
        and not _operating_points(r)
        and _auc_of(r) is None
    ]
    if shares:
        intro += (
            f"<p>Membership tests that compare shares or distances and make no accusation "
            f"with a false-positive rate (judged in section 3 only): {_e(', '.join(shares))}.</p>"
        )
    if not rows:
        body = (
            intro
            + "<p>No membership or identification attack with a rate ran in this assessment.</p>"
        )
    else:
        body = intro + _table(
            [
                "attack",
                "where",
                "AUC",
                "TPR [95 %]",
                "FPR [95 %]",
                "precision at π [interval]",
            ],
            rows,
        )
    return _section(
        "precision", "4. Accusation precision of the membership attacks", body
    )


def _rows(report: EvaluationReport, name: str) -> int | None:
    entry: Any = (report.inputs or {}).get(name)
    if isinstance(entry, Mapping) and isinstance(entry.get("rows"), int):
        return int(entry["rows"])
    return None


def _flat(node: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """Scalars of a breakdown as (key, formatted value), lists summarised."""
    out: list[tuple[str, str]] = []
    if isinstance(node, Mapping) and depth < 3:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, Mapping):
                out += _flat(value, name, depth + 1)
            elif isinstance(value, (list, tuple)):
                out.append((name, _e(f"{len(value)} entries")))
            elif isinstance(value, bool) or value is None:
                out.append((name, _e(value)))
            elif isinstance(value, (int, float)):
                out.append((name, _f(value, 4)))
            else:
                out.append((name, _e(value)))
    return out


def _classical_section(
    report: EvaluationReport,
    data: Mapping[str, Any],
    context: ReleaseContext,
    registered: Sequence[str] | None,
) -> str:
    results = {r.get("metric"): r for r in data.get("results") or ()}
    noted: Any = (report.inputs or {}).get("record_metrics")
    unavailable = (
        set(noted.get("unavailable") or ()) if isinstance(noted, Mapping) else set()
    )
    model = context.release_model
    threshold, source = _CLASSICAL_THRESHOLDS.get(
        model, _CLASSICAL_THRESHOLDS["public"]
    )
    body = (
        "<p>The classical disclosure-risk models of statistical disclosure control, on the "
        "real rows (El Emam's prosecutor, journalist and marketer risks as in ARX; SDC "
        "individual risk and SUDA as in sdcMicro). They judge the real data's "
        "re-identifiability through the columns an attacker knows, the first question of a "
        "risk analysis before release (Québec's regulation: analysis before and after). "
        f"<b>Threshold fixed in advance</b> for the average risk under the "
        f"{_e(model)} release model: {_e(source)}.</p>"
    )
    for metric in _CLASSICAL:
        result = results.get(metric)
        if result is None:
            if metric in unavailable or (
                registered is not None and metric not in registered
            ):
                why = f"this synthrisk has no metric `{metric}`; the record shows it as not run"
            elif registered is None:
                why = (
                    "not part of this run (a default run asked for a record adds it where "
                    "this synthrisk has it; a run that names its metrics runs only those)"
                )
            else:
                why = (
                    "not part of this run (name it with --metrics, or write the record "
                    "from a default run with --record)"
                )
            body += f"<h3>{_e(metric)}: not run</h3><p>{_e(why)}.</p>"
            continue
        if result.get("status") != "ok":
            body += (
                f"<h3>{_e(metric)}: not run</h3>"
                f"<p>{_e(result.get('reason') or result.get('status'))}</p>"
            )
            continue
        breakdown = result.get("breakdown") or {}
        body += f"<h3>{_e(metric)}</h3>"
        if metric == "reidentification_risk" and isinstance(breakdown, Mapping):
            rows = []
            for attacker in ("prosecutor", "journalist", "marketer"):
                entry = breakdown.get(attacker)
                if not isinstance(entry, Mapping):
                    rows.append([_e(attacker), "—", "—", "—", "—", "—"])
                    continue
                average = _num(entry.get("average"))
                judged = (
                    "—"
                    if average is None
                    else ("within" if average <= threshold else "above")
                    + f" {_e(format_number(threshold, 3))}"
                )
                rows.append(
                    [
                        _e(attacker),
                        _f(entry.get("highest")),
                        _f(average),
                        _f(entry.get("records_at_risk")),
                        _e(entry.get("real_anchored")),
                        _e(judged),
                    ]
                )
            body += _table(
                [
                    "attacker",
                    "highest risk",
                    "average risk",
                    "records at risk",
                    "real-anchored",
                    "average vs threshold",
                ],
                rows,
            )
        elif isinstance(breakdown, Mapping):
            pairs = []
            for key in ("individual_risk", "suda"):
                if key in breakdown:
                    pairs += _flat({key: breakdown[key]})
            pairs = pairs or _flat(breakdown)
            body += _keyvalues(pairs[:40])
        body += f'<p class="small">Score: {_f(result.get("score"))}.</p>'
    return _section("classical", "5. Classical risk models", body)


def _findings_section(report: EvaluationReport) -> str:
    verdict = report.verdict if report.verdict is not None else judge(report)
    if not verdict.findings:
        body = (
            "<p>No per-person finding: no training person is copied, and no identifier, "
            "free text, rare value or known combination of a training person is replayed "
            "beyond chance (or the tests that find them did not run; see section 3).</p>"
        )
        return _section("findings", "6. Per-person findings", body)
    titles = {c.key: c.title for c in CRITERIA}
    body = (
        "<p>People, not averages: a release that reproduces a few identifiable people is a "
        "leak even when every average is clean (EDPB Opinion 28/2024: insignificant "
        "<i>for each data subject</i>). Each finding is listed under the criterion it "
        "serves, by row positions only (training rows → synthetic rows), never values.</p>"
    )
    for finding in verdict.findings:
        crit = _FINDING_CRITERION.get(finding.metric, "membership")
        people = []
        for person in list(finding.people)[:20]:
            real_rows = ", ".join(str(r) for r in person.get("real_rows") or ())
            syn_rows = ", ".join(str(r) for r in person.get("synthetic_rows") or ())
            how = person.get("how")
            if how is None:
                exact = person.get("exact")
                how = (
                    "exact copy"
                    if exact
                    else ("near copy" if exact is not None else "")
                )
            people.append([_e(real_rows), _e(syn_rows), _e(how)])
        table = (
            _table(["training rows", "synthetic rows", "how"], people) if people else ""
        )
        more = (
            f'<p class="small">{_e(finding.count - len(people))} more in the JSON report.</p>'
            if finding.count > len(people)
            else ""
        )
        body += (
            f'<div class="finding"><h3>{_e(finding.title)} {_badge(finding.level)}</h3>'
            f"<p><b>Criterion:</b> {_e(titles[crit])}. <b>Test:</b> "
            f'<span class="mono">{_e(finding.metric)}</span>. <b>People:</b> {_e(finding.count)}.</p>'
            f"<p>{_e(finding.summary)}</p>"
            + (
                f"<p><b>Mitigation:</b> {_e(finding.next_step)}</p>"
                if finding.next_step
                else ""
            )
            + table
            + more
            + "</div>"
        )
    return _section("findings", "6. Per-person findings", body)


def _limitations_section(
    report: EvaluationReport, data: Mapping[str, Any], context: ReleaseContext
) -> str:
    verdict = report.verdict if report.verdict is not None else judge(report)
    ran = {
        r.get("metric") for r in data.get("results") or () if r.get("status") == "ok"
    }
    not_run = [m for c in CRITERIA for m in c.metrics if m not in ran]
    items = [
        "This record is evidence for a decision, not a proof of anonymity: it measures the "
        "attacks listed in section 3 at this size, with the power stated there; an attack "
        "not listed, or a leak smaller than the smallest detectable one, is not excluded.",
        "Population uniqueness is not estimated: without a population register the tests "
        "compare training with holdout people; whether a record is unique in the whole "
        "population (the journalist's question) is estimated only by the classical models "
        "of section 5, from the sample.",
        "Attacks not run in this assessment: "
        + (", ".join(dict.fromkeys(not_run)) if not_run else "none of the mapped tests")
        + ".",
        f"The verdict applies the release policy `{verdict.policy}` (docs/verdict.md); "
        "another policy can change the verdict on copied people.",
        "The holdout stands for new people from the same population: a holdout drawn from "
        "another population, one that overlaps the training rows, or one much smaller than "
        "the training table weakens every test (see the caveats below and "
        "docs/verdict.md, 'A checked holdout').",
        "Membership precision (section 4) depends on the share of the population in the "
        "training data; "
        + (
            "it was stated."
            if context.prior(_rows(report, "real")) is not None
            else "it was not given, so three shares are shown."
        ),
        "The generator itself was not audited (shadow training, synthrisk audit); the "
        "assessment is of this released table only.",
    ]
    if not isinstance((report.inputs or {}).get("holdout"), Mapping):
        items.insert(
            0,
            "No holdout was given: closeness to real rows cannot be told from fidelity, "
            "and the verdict is review at best.",
        )
    caveats = list(verdict.caveats)
    body = "<ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>"
    if caveats:
        body += (
            "<h3>Caveats of this run</h3><ul>"
            + "".join(f"<li>{_e(c)}</li>" for c in caveats[:30])
            + "</ul>"
        )
    return _section("limitations", "7. Limitations", body)


def _reproducibility_section(
    report: EvaluationReport, data: Mapping[str, Any], command: str | None
) -> str:
    inputs = report.inputs or {}
    rows: list[tuple[str, str]] = []
    for name in ("real", "synthetic", "holdout"):
        entry = inputs.get(name)
        if isinstance(entry, Mapping):
            rows.append(
                (
                    f"SHA-256 of {name}",
                    f'<span class="mono">{_e(entry.get("sha256") or "not recorded (tables passed in memory)")}</span>',
                )
            )
    rows += [
        ("synthrisk (report)", _e(report.synthrisk_version)),
        ("synthrisk (record)", _e(__version__)),
        ("Python", _e(sys.version.split()[0])),
        ("Seed", _e(report.seed)),
        ("JSON report schema", _e(report.schema_version)),
        (
            "Metrics run",
            _e(
                ", ".join(
                    str(r.get("metric"))
                    for r in data.get("results") or ()
                    if r.get("status") == "ok"
                )
                or "none"
            ),
        ),
        (
            "Command line",
            f'<span class="mono">{_e(command)}</span>'
            if command
            else "not recorded (Python API)",
        ),
    ]
    body = _keyvalues(rows) + (
        '<p class="small">The same inputs, versions, seed and options give the same numbers '
        "(the metrics' timings aside).</p>"
    )
    return _section("reproducibility", "8. Reproducibility", body)


def _signoff_section(levels: Mapping[str, str]) -> str:
    decided = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in levels.items())
    body = (
        "<p>To be completed by the qualified person who takes the decision (Québec's "
        "regulation: a qualified person supervises; the residual risk must be very low). "
        f"Criteria as measured: {_e(decided)}.</p>"
        '<table class="kv signoff"><tbody>'
        '<tr><th scope="row">Name</th><td class="blank"></td></tr>'
        '<tr><th scope="row">Role</th><td class="blank"></td></tr>'
        '<tr><th scope="row">Date</th><td class="blank"></td></tr>'
        '<tr><th scope="row">Decision</th><td>'
        "☐ release &nbsp;&nbsp; ☐ release with conditions &nbsp;&nbsp; ☐ do not release"
        "</td></tr>"
        '<tr><th scope="row">Conditions</th><td class="blank tall"></td></tr>'
        '<tr><th scope="row">Residual risk judged very low</th><td>☐ yes &nbsp;&nbsp; ☐ no</td></tr>'
        '<tr><th scope="row">Register entry</th><td class="blank"></td></tr>'
        '<tr><th scope="row">Signature</th><td class="blank tall"></td></tr>'
        "</tbody></table>"
    )
    return _section("signoff", "9. Decision and sign-off", body)


_CSS = """
body { margin: 0; }
.record { color: #1c2833; font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif;
          max-width: 1000px; margin: 0 auto; padding: 24px; }
.record h1 { font-size: 24px; margin: 0 0 4px; }
.record h2 { font-size: 19px; margin: 28px 0 8px; padding-bottom: 3px; border-bottom: 2px solid #d5d8dc; }
.record h3 { font-size: 16px; margin: 18px 0 6px; }
.record p { margin: 6px 0; }
.record table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; font-size: 13px; }
.record th, .record td { border-bottom: 1px solid #d5d8dc; padding: 4px 6px; text-align: left;
                         vertical-align: top; overflow-wrap: break-word; }
.record td.num { white-space: nowrap; text-align: right; }
.record .mono { overflow-wrap: anywhere; }
.record table.criteria td:first-child { min-width: 10.5em; }
.record table.criteria td:first-child .mono { overflow-wrap: normal; word-break: normal; }
.record table.criteria td:nth-child(5) { width: 30%; }
.record thead th { background: #f4f6f7; }
.record table.kv th { width: 34%; background: #f4f6f7; font-weight: 600; }
.record .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
.record .small { font-size: 12px; color: #5d6d7e; }
.record .default { color: #5d6d7e; font-style: italic; }
.record .badge { display: inline-block; white-space: nowrap; padding: 0 8px; border-radius: 10px; color: #fff;
                 font-weight: 700; font-size: 12px; text-transform: uppercase; }
.record .badge.pass { background: #196f3d; } .record .badge.review { background: #9a6209; }
.record .badge.fail { background: #c0392b; }
.record .badge.info { background: #e5e8e8; color: #1c2833; }
.record td.blank { height: 26px; border-bottom: 1px solid #1c2833; }
.record td.tall { height: 56px; }
.record .finding, .record .criterion { margin: 10px 0 16px; }
.record header .meta { color: #5d6d7e; font-size: 13px; }
@page { size: A4; margin: 16mm 14mm; }
@media print {
  .record { max-width: none; padding: 0; font-size: 10pt; }
  .record section.rec { break-before: page; page-break-before: always; }
  .record section.rec:first-of-type { break-before: auto; page-break-before: auto; }
  .record h2, .record h3 { break-after: avoid; page-break-after: avoid; }
  .record tr, .record .signoff { break-inside: avoid; page-break-inside: avoid; }
  .record .badge { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .record a { color: inherit; text-decoration: none; }
}
"""


def render_record(
    report: EvaluationReport | Mapping[str, Any],
    *,
    context: ReleaseContext | Mapping[str, Any] | None = None,
    command: str | None = None,
    registered: Sequence[str] | None = None,
    today: _dt.date | None = None,
) -> str:
    """The anonymisation record of ``report`` as one printable HTML document.

    Parameters
    ----------
    report : EvaluationReport or dict
        A judged report (or its JSON dict); a report without a verdict is judged with
        the default thresholds.
    context : ReleaseContext or dict, default=None
        The release context; None uses the report's own (``report.context``), else the
        defaults, each stated as a default in the record. Fields given here override
        the report's.
    command : str, default=None
        The command line that produced the report (the reproducibility section).
    registered : sequence of str, default=None
        The metric ids this synthrisk registers, to tell a classical risk model this
        synthrisk lacks from one the run did not include (None: not told apart; the
        pipeline and :meth:`EvaluationReport.write_record` pass them).
    today : date, default=None
        The record's date (None: today, UTC).

    Returns
    -------
    str
        A self-contained HTML document with no script and no network access; every
        text escaped; no record values.
    """
    if isinstance(report, Mapping):
        report = EvaluationReport.from_dict(report)
    if not isinstance(report, EvaluationReport):
        msg = f"`report` must be an EvaluationReport or its JSON dict; got {type(report).__name__}."
        raise ParameterError(msg)
    base = report.context or ReleaseContext.from_value(None)
    chosen = base if context is None else base.merged(context)
    day = (today or _dt.datetime.now(_dt.timezone.utc).date()).isoformat()
    data = report.to_dict()
    criteria, levels = _criteria_section(report)
    verdict = report.verdict if report.verdict is not None else judge(report)
    title = "Anonymisation record"
    header = (
        f"<header><h1>{_e(title)}</h1>"
        f'<p class="meta">Synthetic data release assessed with synthrisk {_e(report.synthrisk_version)} · '
        f"record written {_e(day)} · overall verdict {_badge(verdict.overall)}</p>"
        "<p>Structure: ISO/IEC 27559 (context, data, attack testing, mitigation, "
        "governance); the EDPB's three criteria (WP29 Opinion 05/2014); Québec's "
        "Regulation respecting the anonymization of personal information (risk analysis "
        "before and after, very low residual risk, re-assessment, register); the EHDS "
        "(Regulation (EU) 2025/327) and TEHDAS2 guidance (synthetic data as an "
        "alternative provided that privacy risks are properly assessed).</p></header>"
    )
    parts = [
        header,
        _context_section(chosen, _rows(report, "real"), day),
        _data_section(report),
        criteria,
        _precision_section(report, data, chosen),
        _classical_section(report, data, chosen, registered),
        _findings_section(report),
        _limitations_section(report, data, chosen),
        _reproducibility_section(report, data, command),
        _signoff_section(levels),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f'<body><main class="record">{"".join(parts)}</main></body></html>\n'
    )


#: executables tried, in order, for the PDF record
_CHROMIUM_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
)


def find_chromium() -> str | None:
    """The path of a Chromium or Chrome that prints to PDF (``SYNTHRISK_CHROMIUM`` first)."""
    chosen = os.environ.get("SYNTHRISK_CHROMIUM")
    if chosen:
        return shutil.which(chosen) or (chosen if Path(chosen).is_file() else None)
    for name in _CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def check_record_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a record's path: ``.html``/``.htm`` or ``.pdf`` (a PDF needs Chromium).

    Raises
    ------
    ParameterError
        Another suffix.
    MissingDependencyError
        A PDF, and no Chromium or Chrome is installed (the message names the fix).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".pdf"):
        msg = (
            f"the record's path must end in .html or .pdf (PDF printed by a headless "
            f"Chromium); got {str(path)!r}."
        )
        raise ParameterError(msg)
    if suffix == ".pdf":
        _chromium()
    return path


def _chromium() -> str:
    chromium = find_chromium()
    if chromium is None:
        msg = (
            "writing the record as PDF needs a headless Chromium or Chrome on PATH (tried "
            f"{', '.join(_CHROMIUM_NAMES)}; or set SYNTHRISK_CHROMIUM); install one (e.g. "
            "`apt-get install chromium`), or write the record as HTML (`--record record.html`) "
            "and print it to PDF from a browser."
        )
        raise MissingDependencyError(msg)
    return chromium


def _pdf_bytes(page: str, *, timeout: float = 120.0) -> bytes:
    chromium = _chromium()
    with tempfile.TemporaryDirectory(prefix="synthrisk-record-") as tmp:
        source = Path(tmp) / "record.html"
        target = Path(tmp) / "record.pdf"
        source.write_text(page, encoding="utf-8")
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
            f"--user-data-dir={Path(tmp) / 'profile'}",
            f"--print-to-pdf={target}",
            source.as_uri(),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            msg = f"{chromium} did not print the record to PDF within {timeout:.0f} s."
            raise MissingDependencyError(msg) from None
        if not target.is_file() or target.stat().st_size == 0:
            err = " ".join(done.stderr.decode("utf-8", "replace").split())[-300:]
            msg = f"{chromium} did not print the record to PDF (exit {done.returncode}): {err}"
            raise MissingDependencyError(msg)
        return target.read_bytes()


def write_record(
    report: EvaluationReport | Mapping[str, Any],
    path: str | os.PathLike[str],
    *,
    context: ReleaseContext | Mapping[str, Any] | None = None,
    command: str | None = None,
    today: _dt.date | None = None,
    registered: Sequence[str] | None = None,
) -> Path:
    """Write the anonymisation record: HTML, or PDF when ``path`` ends in ``.pdf``.

    See :func:`render_record` for the options. The PDF is printed by a headless
    Chromium (:func:`find_chromium`); without one a
    :class:`~synthrisk.exceptions.MissingDependencyError` names the fix.
    """
    check_record_path(path)
    page = render_record(
        report, context=context, command=command, today=today, registered=registered
    )
    if Path(path).suffix.lower() == ".pdf":
        return write_text_atomic(path, _pdf_bytes(page))
    return write_text_atomic(path, page)


def record_bytes(
    report: EvaluationReport | Mapping[str, Any],
    path: str | os.PathLike[str],
    **options: Any,
) -> bytes | str:
    """The record's content for ``path`` (PDF bytes or HTML text), for all-or-nothing writes."""
    check_record_path(path)
    page = render_record(report, **options)
    if Path(path).suffix.lower() == ".pdf":
        return _pdf_bytes(page)
    return page
