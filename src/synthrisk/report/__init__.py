# SPDX-License-Identifier: BSD-3-Clause
"""Reports: verdicts against thresholds and a self-contained HTML rendering.

``synthrisk.report`` reads an :class:`~synthrisk.results.EvaluationReport` (or its JSON
dict) and nothing else: it never imports metric code and never recomputes. It
recognises shapes in the results (attack rates, ROC points, distance and per-record
values), so new metric families get their plots without changes here.

>>> from synthrisk import EvaluationReport, MetricResult
>>> from synthrisk.report import judge
>>> report = EvaluationReport("0.1.0", 0, {}, (MetricResult("dcr_baseline_protection", 0.3, {}),))
>>> judge(report).overall
'review'
"""

from __future__ import annotations

from synthrisk.report._extract import rates as attack_rates
from synthrisk.report.audit import render_audit_html
from synthrisk.report.html import render_html, render_result_html, write_html
from synthrisk.report.record import accusation_precision, render_record, write_record
from synthrisk.report.tables import render_tables_html
from synthrisk.results import register_html_renderers, register_record_writer
from synthrisk.verdict import (
    DEFAULT_THRESHOLDS,
    LEVELS,
    MetricVerdict,
    Threshold,
    Thresholds,
    Verdict,
    check_fail_on,
    judge,
    judge_result,
)

register_html_renderers(
    result=render_result_html,
    report=lambda report: render_html(report, fragment=True),
)
register_record_writer(write_record)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LEVELS",
    "MetricVerdict",
    "Threshold",
    "Thresholds",
    "Verdict",
    "accusation_precision",
    "attack_rates",
    "check_fail_on",
    "judge",
    "judge_result",
    "render_audit_html",
    "render_html",
    "render_record",
    "render_result_html",
    "render_tables_html",
    "write_html",
    "write_record",
]
