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

from typing import Any

from synthrisk.report.html import render_html, render_result_html, write_html
from synthrisk.report.verdict import (
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
from synthrisk.results import EvaluationReport, MetricResult

__all__ = [
    "DEFAULT_THRESHOLDS",
    "LEVELS",
    "MetricVerdict",
    "Threshold",
    "Thresholds",
    "Verdict",
    "check_fail_on",
    "judge",
    "judge_result",
    "render_html",
    "render_result_html",
    "write_html",
]


def _report_repr_html(self: EvaluationReport) -> str:
    """Jupyter display: the full report as a scoped HTML fragment."""
    return render_html(self, fragment=True)


def _result_repr_html(self: MetricResult) -> str:
    """Jupyter display: one result as a small card with its verdict."""
    return render_result_html(self)


def _install_notebook_display(*classes: Any) -> None:
    # Installed here rather than in ``results`` so that the result objects keep no
    # dependency on the renderer (``report`` imports ``results``, never the reverse).
    for cls, method in zip(
        classes, (_report_repr_html, _result_repr_html), strict=True
    ):
        cls._repr_html_ = method


_install_notebook_display(EvaluationReport, MetricResult)
