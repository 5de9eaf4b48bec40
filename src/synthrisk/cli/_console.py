# SPDX-License-Identifier: BSD-3-Clause
"""What the command line prints: rich tables of results and verdicts, notes, written files."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from synthrisk._format import format_excess, format_level
from synthrisk.report import judge
from synthrisk.results import LEVEL_HEAD, LEVEL_NOTE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from synthrisk.audit import AuditResult
    from synthrisk.metrics import Metric
    from synthrisk.pipeline import DemoOutcome, FileAudit
    from synthrisk.report import Verdict
    from synthrisk.results import EvaluationReport, Finding, SelfTest

__all__ = [
    "console",
    "esc",
    "print_demo_table",
    "print_findings",
    "print_metric_help",
    "print_self_test",
    "print_summary",
    "print_verdict",
    "print_written",
    "results_table",
    "verdict_console",
]

_COLORS = {
    "pass": "green",
    "review": "yellow",
    "fail": "red",
    "info": "dim",
    "skipped": "dim",
}
_KINDS = {".json": "JSON report", ".html": "HTML report", ".csv": "CSV report"}


def esc(text: str) -> str:
    """Escape rich markup in user-supplied text (paths like ``petsard[Report]_[global].csv``)."""
    return escape(text)


def console(*, quiet: bool) -> Console:
    """The console on standard output (silent with ``quiet``)."""
    return Console(quiet=quiet, highlight=False, soft_wrap=True)


def verdict_console(*, stderr: bool) -> Console:
    """The console of the verdict, which ``--quiet`` never silences (``--quiet``
    silences progress and the details, not the answer); on standard error when a
    report goes to standard output (``--json -``)."""
    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def print_written(paths: Iterable[Path], *, quiet: bool) -> None:
    """One line per file written."""
    out = console(quiet=quiet)
    for path in paths:
        out.print(f"{_KINDS.get(path.suffix, 'output')} written to {esc(str(path))}")


def print_verdict(verdict: Verdict, *, stderr: bool = False) -> None:
    """The overall verdict and its reason, then the findings that ask for something
    (review or fail: copied people): printed even with ``--quiet``."""
    out = verdict_console(stderr=stderr)
    overall = verdict.overall
    out.print(
        f"Overall verdict: [bold {_COLORS[overall]}]{overall}[/bold {_COLORS[overall]}]"
        f" [dim]({esc(verdict.policy)} policy)[/dim]"
    )
    if verdict.reason:
        out.print(esc(verdict.reason))
    print_findings(verdict.findings, out=out)


#: below this console width the results table leaves out the score and tolerance
NARROW = 100


def results_table(
    report: EvaluationReport,
    verdict: Verdict,
    *,
    width: int,
    labels: Sequence[str] | None = None,
) -> Table:
    """The results table for a console of ``width`` columns: metric (never cut),
    score, excess over the holdout, its interval with the interval's level, tolerance
    and verdict; below :data:`NARROW` columns without the score, tolerance and
    warning counts (the caveats follow the table), and without vertical rules where
    they would not fit, so that metric ids and intervals stay on one line at 80
    columns."""
    wide = width >= NARROW
    rows = []
    for i, (r, v) in enumerate(zip(report.results, verdict.metrics, strict=True)):
        name = r.metric if labels is None else f"{labels[i]} ({r.metric})"
        excess, interval = format_excess(v.effect, v.ci, unit=v.unit)
        if interval and v.ci_level is not None:
            interval += f" ({format_level(v.ci_level)})"
        label = "skipped" if v.skipped else (v.level if v.gating else "info")
        warned = f" ({len(r.warnings)} warn.)" if r.warnings and wide else ""
        rows.append((name, r, v, excess, interval or "—", label, warned))
    heads = ("metric", "excess", "[interval] (level)", "verdict")
    needed = 13 + sum(  # 4 columns: 5 rules and a space either side of each cell
        max(len(head), *(len(str(row[k])) for row in rows))
        for head, k in zip(heads, (0, 3, 4, 5), strict=True)
    )
    if wide or needed <= width:
        table = Table(title="synthrisk results")
    else:  # no vertical rules: the cells need every character
        table = Table(title="synthrisk results", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("metric", no_wrap=True)
    if wide:
        table.add_column("score", justify="right", no_wrap=True)
    table.add_column("excess", justify="right", no_wrap=True)
    table.add_column(esc(f"[interval] {LEVEL_HEAD}"), justify="right", no_wrap=True)
    if wide:
        table.add_column("tol.", justify="right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for name, r, v, excess, interval, label, warned in rows:
        cells = [esc(name)]
        if wide:
            cells.append(_fmt(r.score))
        cells += [excess, esc(interval)]
        if wide:
            cells.append(_fmt(v.tolerance))
        cells.append(f"[{_COLORS[label]}]{label}[/{_COLORS[label]}]{warned}")
        table.add_row(*cells)
    return table


def print_summary(
    report: EvaluationReport,
    verdict: Verdict,
    *,
    quiet: bool,
    labels: Sequence[str] | None = None,
    stderr: bool = False,
) -> None:
    """The verdict (:func:`print_verdict`, even with ``quiet``; on standard error with
    ``stderr``), then, unless ``quiet``, the results table (:func:`results_table`) and
    the caveats."""
    print_verdict(verdict, stderr=stderr)
    out = console(quiet=quiet)
    out.print(results_table(report, verdict, width=out.width, labels=labels))
    if any(v.ci is not None for v in verdict.metrics):
        out.print(f"[dim]{esc(LEVEL_NOTE)}[/dim]")
    for r in report.results:
        if r.status != "ok":
            what = "skipped" if r.status == "skipped" else "score undefined"
            out.print(f"[dim]{esc(r.metric)} {what}:[/dim] {esc(str(r.reason))}")
    for warning in report.verdict_caveats(verdict=verdict):
        out.print(f"[yellow]caveat:[/yellow] {esc(warning)}")
    if report.self_test is not None:
        print_self_test(report.self_test, quiet=quiet)


#: copied people listed per finding on the terminal (the JSON has the rest)
FINDING_LINES = 10


def _rows_text(what: str, rows: Sequence[object]) -> str:
    """``training row 12`` / ``synthetic rows 3, 8``."""
    listed = ", ".join(str(r) for r in rows) or "—"
    return f"{what} row{'s' if len(rows) != 1 else ''} {listed}"


def print_findings(findings: Sequence[Finding], *, out: Console) -> None:
    """The findings that read review or fail: the level, the summary, one line per
    copied person (training rows → the synthetic rows that copy them, exact copies
    first; at most :data:`FINDING_LINES`) and the next step, on ``out``. Row positions
    only, never record values."""
    for finding in findings:
        if finding.level not in ("review", "fail"):
            continue
        color = _COLORS[finding.level]
        title = finding.title
        out.print(
            f"\n[bold]Finding: {esc(title)}[/bold] "
            f"[bold {color}]{finding.level}[/bold {color}] "
            f"[dim]({esc(finding.policy)} policy)[/dim]"
        )
        out.print(esc(finding.summary))
        people = sorted(finding.people, key=lambda p: not p.get("exact"))
        for person in people[:FINDING_LINES]:
            if person.get("how"):
                kind = str(person["how"])
            elif person.get("exact"):
                kind = "exact"
            else:
                ratio = person.get("ratio")
                kind = "near " if ratio is None else f"near (ratio {float(ratio):.2f})"
            real = _rows_text("training", list(person.get("real_rows") or ()))
            syn = _rows_text("synthetic", list(person.get("synthetic_rows") or ()))
            out.print(f"  {esc(kind)}  {esc(real)} → {esc(syn)}")
        total = finding.count
        if total > FINDING_LINES:
            out.print(f"  … {total - FINDING_LINES} more in the JSON")
        if finding.next_step:
            out.print(f"[bold]Next step:[/bold] {esc(finding.next_step)}")
    if any(f.level in ("review", "fail") for f in findings):
        out.print()


def print_self_test(self_test: SelfTest, *, quiet: bool) -> None:
    """The known-leak self-test: one row per planted leak, then the headline."""
    out = console(quiet=quiet)
    table = Table(
        title="known-leak self-test: copies of the most isolated training people planted"
    )
    table.add_column("planted", no_wrap=True)
    table.add_column("share", justify="right")
    table.add_column("rows", justify="right")
    table.add_column("verdict", no_wrap=True)
    table.add_column("failed")
    table.add_column("review")
    for s in self_test.scenarios:
        color = _COLORS.get(s.overall, "dim")
        table.add_row(
            s.what,
            f"{s.share * 100:g} %",
            str(s.planted),
            f"[{color}]{s.overall}[/{color}]",
            esc(", ".join(s.failed)) or "—",
            esc(", ".join(s.review)) or "—",
        )
    out.print(table)
    out.print(esc(self_test.headline))
    for note in self_test.notes:
        out.print(f"[yellow]self-test note:[/yellow] {esc(note)}")


def print_metric_help(cls: type[Metric]) -> None:
    """What one metric measures, when it runs, and its parameters (``synthrisk metrics ID``)."""
    out = console(quiet=False)
    out.print(f"[bold]{esc(cls.id)}[/bold] ({cls.__name__}): {esc(cls.attack)}")
    default = (
        "yes"
        if cls.runs_by_default
        else "no: name it with --metrics (its parameters have documented defaults)"
    )
    out.print(f"In the full assessment (no --metrics): {default}")
    out.print(f"Needs a holdout table: {'yes' if cls.requires_holdout else 'no'}")
    declared = cls.declared_params
    if not declared:
        out.print("Parameters: none.")
        return
    table = Table(title=None, box=None, show_header=True, pad_edge=False)
    table.add_column("parameter", no_wrap=True)
    table.add_column("default", no_wrap=True)
    table.add_column("accepts / what it does")
    for name, param in declared.items():
        text = param.constraint.rule + (f". {param.doc}" if param.doc else "")
        table.add_row(esc(name), esc(repr(param.default)), esc(text))
    out.print(table)
    out.print(
        f"Set them with `synthrisk evaluate --metrics {cls.id} --param {cls.id}.NAME=VALUE` "
        "(repeatable; the value is read as YAML, a comma-separated one as a list), or under "
        f"`metrics: {{{cls.id}: {{NAME: VALUE}}}}` in a YAML run file."
    )


def print_demo_table(reports: Mapping[str, EvaluationReport], *, quiet: bool) -> None:
    """Scores and overall verdicts of every demo version side by side."""
    out = console(quiet=quiet)
    out.print(demo_table(reports, width=out.width))


def demo_table(
    reports: Mapping[str, EvaluationReport], *, width: int | None = None
) -> Table:
    """The table of :func:`print_demo_table`: a row per metric, a column per version.

    Metric ids stay whole, with their arrow. Where the table is wider than ``width``,
    long version names fold onto a second header line at their underscores (so 80
    columns hold the five demo versions without cutting a metric's name).
    """
    table = _demo_table(reports, fold=False)
    if width is not None and Console(width=10_000).measure(table).maximum > width:
        table = _demo_table(reports, fold=True)
    return table


def _demo_table(reports: Mapping[str, EvaluationReport], *, fold: bool) -> Table:
    first = next(iter(reports.values()))
    table = Table(
        title="synthrisk demo: scores and verdicts by synthetic version",
        caption="↑ higher is safer   ↓ higher means more risk",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("metric", no_wrap=True)
    for name in reports:
        header = name.replace("_", "_\n") if fold and len(name) > 9 else name
        widest = max(len(line) for line in header.split("\n"))
        table.add_column(header, justify="right", overflow="fold", min_width=widest)
    for result in first.results:
        arrow = "↑" if result.higher_is_safer else "↓"
        scores = [
            "skipped"
            if reports[name][result.metric].status == "skipped"
            else _fmt(reports[name][result.metric].score)
            for name in reports
        ]
        table.add_row(f"{result.metric} {arrow}", *scores)
    verdicts = [
        (reports[name].verdict or judge(reports[name], None)).overall
        for name in reports
    ]
    table.add_row("[bold]verdict[/bold]", *verdicts)
    return table


def print_demo(demo: DemoOutcome, *, quiet: bool) -> None:
    """The demo's table of every version, and where its reports and data are."""
    print_demo_table(demo.reports, quiet=quiet)
    out = console(quiet=quiet)
    out.print(f"\nReport of the 'partial' version: {esc(str(demo.json))}")
    if demo.html is not None:
        out.print(
            "HTML report of the 'partial' version (open it in a browser): "
            f"{esc(str(demo.html))}"
        )
    else:
        out.print(
            "[yellow]note:[/yellow] no HTML report: it needs the report extra "
            "(pip install 'synthrisk\\[report]')."
        )
    out.print(
        f"Reports of every version: {esc(str(demo.reports_dir))}/   "
        f"Data: {esc(str(demo.data_dir))}/"
    )


@contextlib.contextmanager
def audit_progress(
    total: int, *, quiet: bool
) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar with an ETA over the shadow runs (None when quiet)."""
    if quiet:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("shadow runs"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("runs", total=total)

    def advance(done: int, n_runs: int) -> None:
        bar.update(task, completed=done, total=n_runs)

    with bar:
        yield advance


def print_audit(outcome: FileAudit, *, quiet: bool, stderr: bool = False) -> None:
    """What was written, the audit's bound per attack and its verdict (the verdict even
    with ``quiet``; on standard error with ``stderr``)."""
    print_written(outcome.written, quiet=quiet)
    result = outcome.result
    n_canaries = result.canaries.n_canaries if result.canaries is not None else 0
    groups = [("", result.overall)]
    if result.canaries is not None:
        groups = [
            (", real people", result.overall),
            (f", {n_canaries} canaries", result.canaries.overall),
        ]
    for label, overall in groups:
        if not overall:
            continue
        table = Table(
            title=f"generator audit: {result.runs_summary()}, "
            f"{len(result.targets) - n_canaries} targets{label}"
        )
        table.add_column("attack")
        table.add_column("ε lower bound", justify="right")
        table.add_column("AUC", justify="right")
        table.add_column("TPR at FPR 1 %", justify="right")
        for name, bound in overall.items():
            table.add_row(
                esc(name),
                _fmt(bound.epsilon_lower),
                _fmt(bound.auc),
                _fmt(bound.tpr_at_fpr.get("0.01")),
            )
        if result.n_runs:
            console(quiet=quiet).print(table)
    if result.canaries is not None and result.n_runs:
        natural = result.epsilon_lower_natural
        canaries = _fmt(result.canaries.epsilon_lower)
        console(quiet=quiet).print(
            f"ε lower bounds side by side: worst-case canaries {canaries}"
            if natural is None
            else f"ε lower bounds side by side: real people {_fmt(natural)}, worst-case "
            f"canaries {canaries} (each at the confidence level); the headline is the "
            f"larger, each counted at half the error: {_fmt(result.epsilon_lower)} "
            f"({esc(str(result.selected_targets))})."
        )
    out = verdict_console(stderr=stderr)
    _print_run_failures(result, stderr=stderr)
    if not result.runs.get("evaluation"):
        return  # the caller says the audit tested nothing (exit code 4)
    if outcome.verdict is None:
        out.print(
            f"ε ≥ {result.epsilon_lower:.3g} (no --max-epsilon: the audit does not gate)."
        )
    else:
        level = outcome.verdict.level
        out.print(f"[bold]{level}[/bold]: {esc(outcome.verdict.reason)}")


def _print_run_failures(result: AuditResult, *, stderr: bool) -> None:
    """The shadow runs that failed and the generator's last error, with the end of its
    standard error (even with ``quiet``: a failing generator is part of the answer)."""
    if not result.failures:
        return
    out = verdict_console(stderr=stderr)
    last = result.failures[-1]
    out.print(
        f"[yellow]warning:[/yellow] {esc(result.runs_summary())}. "
        f"The generator's last error (run {last.run}):"
    )
    for line in last.error.splitlines():
        out.print(f"    {esc(line)}")
    others = {f.error for f in result.failures} - {last.error}
    if others:
        out.print(
            f"    ({len(others)} other message(s): see `failures` in the JSON or the HTML page)"
        )
