# SPDX-License-Identifier: BSD-3-Clause
"""The HTML page of related tables judged per person (:func:`synthrisk.relational.evaluate_tables`).

One verdict comes first, the release's (the person-level verdict, made fail by the
linkage attack), with its parts listed below it: the person-level tests, the cross-table
linkage attack and each table's own verdict. Then a section per part. Each report is
rendered by :func:`render_html` as a part of the page (``part=``: a smaller verdict,
never a second "Overall"), so a section reads as the single-table report does; every
text is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from synthrisk._format import format_p_value
from synthrisk._optional import import_optional
from synthrisk._version import __version__
from synthrisk.report.html import _environment, render_html
from synthrisk.results import EvaluationReport

__all__ = ["render_tables_html"]


def render_tables_html(
    people: EvaluationReport,
    tables: Mapping[str, EvaluationReport],
    *,
    verdict: str,
    reason: str,
    linkage: Mapping[str, Any],
    root: str,
    n_people: Mapping[str, int],
    warnings: tuple[str, ...] = (),
    title: str | None = None,
) -> str:
    """Render a multi-table evaluation to one self-contained HTML page.

    Parameters
    ----------
    people : EvaluationReport
        The person-level report (its verdict judged).
    tables : dict of str to EvaluationReport
        Each table's report.
    verdict, reason : str
        The release verdict, judged at person level, and its reason.
    linkage : dict
        The linkage attack's JSON form (``LinkageResult.to_dict()``).
    root : str
        The table whose rows are people.
    n_people : dict of str to int
        People on each side.
    warnings : tuple of str, default=()
        Notes about the inputs.
    title : str, default=None
        Page title.

    Returns
    -------
    str
        The HTML.
    """
    markup = import_optional("markupsafe", extra="report").Markup
    attacks = [
        {
            "name": a.get("name"),
            "description": a.get("description"),
            "training": f"{a.get('linked_training')} of {a.get('n_training')}",
            "holdout": f"{a.get('linked_holdout')} of {a.get('n_holdout')}",
            "p_value": format_p_value(a.get("p_value")),
        }
        for a in linkage.get("attacks") or []
    ]
    # the fragments are synthrisk's own escaped HTML
    # each report is a part of this page: its verdict is a smaller "Table …: level"
    sections = [
        (
            name,
            "review" if report.verdict is None else report.verdict.overall,
            markup(render_html(report, verdict=report.verdict, part=f"Table {name}")),
        )
        for name, report in tables.items()
    ]
    people_level = "review" if people.verdict is None else people.verdict.overall
    context = {
        "title": title or "synthrisk privacy report: related tables, judged per person",
        "version": __version__,
        "verdict": verdict,
        "reason": reason,
        "root": root,
        "n_people": sorted(n_people.items()),
        "warnings": list(warnings),
        "linkage": linkage,
        "linkage_attacks": attacks,
        "people": markup(
            render_html(people, verdict=people.verdict, part="Person-level tests")
        ),
        "people_level": people_level,
        "people_reason": "" if people.verdict is None else people.verdict.reason,
        "tables": sections,
        "table_verdicts": [(name, level) for name, level, _ in sections],
    }
    return str(_environment().get_template("tables.html.j2").render(**context))
