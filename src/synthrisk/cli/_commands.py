# SPDX-License-Identifier: BSD-3-Clause
"""The commands of the command line: each reads its arguments, calls
:mod:`synthrisk.pipeline` and returns the exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import synthrisk.cli._arguments as arguments
from synthrisk.exceptions import ParameterError

if TYPE_CHECKING:
    from synthrisk.pipeline import FileAudit, FileEvaluation
    from synthrisk.relational import MultiTableReport

__all__ = [
    "COMMANDS",
    "EXIT_GATE",
    "EXIT_INTERNAL",
    "EXIT_NO_RUNS",
    "EXIT_OK",
    "EXIT_USAGE",
    "metrics",
]

#: exit codes (see :mod:`synthrisk.cli.main`)
EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
#: a generator audit that tested nothing: no evaluation run completed (every shadow
#: run failed, or the budget ran out first), so its gate cannot be judged
EXIT_NO_RUNS = 4


def metrics(args: argparse.Namespace) -> int:
    """``synthrisk metrics [METRIC]``: list the metrics, or describe one."""
    from synthrisk.cli._console import console, print_metric_help
    from synthrisk.metrics import METRICS, get_metric

    out = console(quiet=False)
    if args.metric is not None:
        print_metric_help(get_metric(args.metric.strip().lower()))
        return EXIT_OK
    for metric_id, cls in sorted(METRICS.items()):
        notes = ["needs a holdout"] if cls.requires_holdout else []
        notes += [] if cls.runs_by_default else ["runs when named"]
        suffix = f" ({'; '.join(notes)})" if notes else ""
        out.print(f"[bold]{metric_id}[/bold]{suffix}: {cls.attack}")
    out.print(
        "\n`synthrisk metrics METRIC` describes one metric and its parameters; set them with "
        "`synthrisk evaluate --metrics METRIC --param METRIC.NAME=VALUE` or in a YAML run file."
    )
    return EXIT_OK


def _chosen_metrics(
    args: argparse.Namespace,
) -> tuple[Any, dict[str, dict[str, Any]] | None]:
    """``--metrics`` with their ``--param``s, or the full assessment with changed parameters."""
    ids = arguments.metric_ids(args.metrics)
    if ids is None and args.param:
        # the full assessment, with these metrics' parameters changed
        return None, arguments.default_params(args.param)
    return arguments.with_params(ids, args.param), None


def _input_files(args: argparse.Namespace) -> dict[str, Any]:
    """The input files of ``evaluate`` and ``filter`` (outputs must not overwrite them)."""
    return {
        "real": args.real,
        "synthetic": args.synthetic,
        "holdout": args.holdout,
        "metadata": args.metadata,
    }


def evaluate(args: argparse.Namespace) -> int:
    """``synthrisk evaluate``: evaluate three files, write the reports, gate."""
    from synthrisk.pipeline import check_outputs, evaluate_files

    chosen, params = _chosen_metrics(args)
    # before reading any table: the metrics build, and the outputs can be written
    arguments.build_metrics(chosen)
    check_outputs(
        {
            "`--json`": args.json,
            "`--html`": args.html,
            "`--filtered-out`": args.filtered_out,
            "`--record`": args.record,
        },
        _input_files(args),
    )
    release_context = arguments.context(args)
    to_stdout = "-" in (args.json, args.html)
    try:
        evaluation = evaluate_files(
            args.real,
            args.synthetic,
            args.holdout,
            metadata=args.metadata,
            metrics=chosen,
            seed=args.seed,
            working_memory=args.working_memory,
            backend=args.backend,
            scheduler=args.scheduler,
            sample_rows=args.sample_rows,
            progress=not (args.quiet or to_stdout),
            thresholds=arguments.thresholds(args.thresholds),
            json=args.json,
            html=args.html,
            include_records=args.include_records,
            include_values=args.include_values,
            top_n=arguments.top_n(args.top_n) or 20,
            encoding=args.encoding,
            self_test=args.self_test,
            policy=args.policy,
            params=params,
            filtered_out=args.filtered_out,
            context=release_context,
            record=args.record,
            command=arguments.command_line(args),
        )
    except ParameterError as exc:
        raise arguments.with_hint(exc) from None
    # the filtered table is named in its own line below
    written = [Path(p) for p in (args.json, args.html, args.record) if p and p != "-"]
    code = _finish(
        [evaluation],
        written,
        args.fail_on,
        quiet=args.quiet or to_stdout,
        stderr=to_stdout,
    )
    if evaluation.removed is not None:
        n = len(evaluation.removed)
        line = (
            f"Filtered synthetic table written to {args.filtered_out}: without the {n} "
            f"{'row' if n == 1 else 'rows'} that copy a training person ({evaluation.verdict.overall} "
            "was the verdict with them; the filtered table is not re-assessed). Run `synthrisk "
            "filter` to remove them and re-assess, and prefer regenerating: the next most "
            "isolated people become the exposed ones (the privacy onion)."
            if n
            else f"Filtered synthetic table written to {args.filtered_out}: no synthetic row "
            "copies a training person, so it is the synthetic table unchanged."
        )
        print(line, file=sys.stderr if to_stdout else sys.stdout)
    return code


def filter_copies(args: argparse.Namespace) -> int:
    """``synthrisk filter``: remove the rows that copy training people, write, re-assess."""
    from synthrisk.cli._console import console, esc, print_written
    from synthrisk.pipeline import check_outputs, filter_files

    chosen, params = _chosen_metrics(args)
    arguments.build_metrics(chosen)
    check_outputs(
        {"`--out`": args.out, "`--json`": args.json, "`--html`": args.html},
        _input_files(args),
    )
    to_stdout = "-" in (args.json, args.html)
    quiet = args.quiet or to_stdout
    try:
        outcome = filter_files(
            args.real,
            args.synthetic,
            args.holdout,
            out=args.out,
            metadata=args.metadata,
            metrics=chosen,
            seed=args.seed,
            policy=args.policy,
            thresholds=arguments.thresholds(args.thresholds),
            json=args.json,
            html=args.html,
            include_values=args.include_values,
            top_n=arguments.top_n(args.top_n) or 20,
            encoding=args.encoding,
            progress=not quiet,
            working_memory=args.working_memory,
            backend=args.backend,
            params=params,
        )
    except ParameterError as exc:
        raise arguments.with_hint(exc) from None
    table, *reports = outcome.written
    console(quiet=quiet).print(f"Filtered synthetic table written to {esc(str(table))}")
    print_written(reports, quiet=quiet)
    # what changed is printed even with --quiet (on standard error when a report
    # goes to standard output)
    out = console(quiet=False)
    for line in outcome.result.summary_lines():
        if to_stdout:
            print(line, file=sys.stderr)
        else:
            out.print(esc(line))
    if outcome.gate_fails(args.fail_on):
        print(
            f"synthrisk: gate failed: the overall verdict after filtering is "
            f"{outcome.verdict.overall!r}, at or below --fail-on {args.fail_on!r}.",
            file=sys.stderr,
        )
        return EXIT_GATE
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """``synthrisk run CONFIG``: a YAML run file (synthrisk's, a generator audit's,
    related tables' or PETsARD's)."""
    from synthrisk.pipeline import run_file

    outcome = run_file(
        args.config,
        html=args.html,
        include_values=args.include_values,
        top_n=arguments.top_n(args.top_n),
        thresholds=arguments.thresholds(args.thresholds),
        progress=not args.quiet,
        policy=args.policy,
    )
    from synthrisk.cli._console import console, esc

    for note in outcome.notes:
        console(quiet=args.quiet).print(f"[yellow]note:[/yellow] {esc(note)}")
    if outcome.audits:
        return _finish_audit(outcome.audits[0], args.quiet)
    fail_on = args.fail_on or outcome.gate
    if outcome.table_reports:
        return _finish_tables(
            outcome.table_reports[0], outcome.written, fail_on, quiet=args.quiet
        )
    return _finish(outcome.evaluations, outcome.written, fail_on, quiet=args.quiet)


def report(args: argparse.Namespace) -> int:
    """``synthrisk report``: judge a saved JSON report again and render it."""
    from synthrisk.pipeline import check_outputs, report_file

    inputs = {name: getattr(args, name) for name in ("real", "synthetic", "holdout")}
    check_outputs({"`--html`": args.html}, {"report": args.report, **inputs})
    evaluation = report_file(
        args.report,
        html=args.html,
        thresholds=arguments.thresholds(args.thresholds),
        include_values=args.include_values,
        inputs=inputs,
        top_n=arguments.top_n(args.top_n) or 20,
        encoding=args.encoding,
        policy=args.policy,
    )
    written = [Path(args.html)] if args.html and args.html != "-" else []
    quiet = args.quiet or args.html == "-"
    return _finish(
        [evaluation], written, args.fail_on, quiet=quiet, stderr=args.html == "-"
    )


def demo(args: argparse.Namespace) -> int:
    """``synthrisk demo``: generate the demo data, evaluate every version, write reports."""
    from synthrisk.cli._console import console, print_demo
    from synthrisk.pipeline import check_outputs, run_demo

    check_outputs({"`--out`": Path(args.out) / "report.json"})
    if args.multi_table:
        return _tables_demo(args)
    rows = 20_000 if args.rows is None else args.rows
    console(quiet=args.quiet).print(
        f"Generating the demo population ({rows} rows, seed {args.seed}) and "
        "evaluating each synthetic version …"
    )
    outcome = run_demo(args.out, n_rows=rows, seed=args.seed, progress=not args.quiet)
    print_demo(outcome, quiet=args.quiet)
    return EXIT_OK


def _tables_demo(args: argparse.Namespace) -> int:
    """``synthrisk demo --multi-table``: related tables, each version judged per person."""
    from synthrisk.cli._console import console, esc
    from synthrisk.pipeline import run_tables_demo

    people = 1000 if args.rows is None else args.rows
    out = console(quiet=args.quiet)
    out.print(
        f"Generating the demo bank ({people} people: customers -> accounts -> transactions, "
        f"seed {args.seed}) and evaluating each synthetic version per person …"
    )
    demo = run_tables_demo(args.out, n_people=people, seed=args.seed)
    for version, report in demo.reports.items():
        tables = ", ".join(f"{k} {v}" for k, v in report.table_verdicts.items())
        people_level = (
            report.people.verdict.overall if report.people.verdict else "review"
        )
        out.print(
            f"[bold]{esc(version)}[/bold]: verdict {report.verdict.upper()} "
            f"(person level {people_level}, linkage {report.linkage.level}; "
            f"tables: {esc(tables)})"
        )
    out.print(f"\nReport of the 'child_copies' version: {esc(str(demo.json))}")
    if demo.html is not None:
        out.print(
            f"HTML report of the 'child_copies' version (open it in a browser): {esc(str(demo.html))}"
        )
    else:
        out.print(
            "[yellow]note:[/yellow] no HTML report: it needs the report extra "
            "(pip install 'synthrisk\\[report]')."
        )
    out.print(
        f"Reports of every version: {esc(str(demo.reports_dir))}/   Data: "
        f"{esc(str(demo.data_dir))}/   Run it again: synthrisk run {esc(str(demo.config))}"
    )
    return EXIT_OK


def _finish(
    evaluations: Sequence[FileEvaluation],
    written: Sequence[Path],
    fail_on: str | None,
    *,
    quiet: bool,
    stderr: bool = False,
) -> int:
    """Print what was written and the verdicts; the exit code of the release gate.

    ``quiet`` silences the files written, the results tables and the caveats, never
    the verdicts (on standard error with ``stderr``: a report went to standard output).
    """
    from synthrisk.cli._console import (
        esc,
        print_summary,
        print_written,
        verdict_console,
    )

    print_written(written, quiet=quiet)
    for evaluation in evaluations:
        if evaluation.label is not None:
            verdict_console(stderr=stderr).print(
                f"\n[bold]{esc(evaluation.label)}[/bold]"
            )
        print_summary(
            evaluation.report,
            evaluation.verdict,
            quiet=quiet,
            labels=evaluation.metric_labels,
            stderr=stderr,
        )
    code = EXIT_OK
    for evaluation in evaluations:
        if evaluation.gate_fails(fail_on):
            print(
                f"synthrisk: gate failed: the overall verdict is {evaluation.verdict.overall!r}, "
                f"at or below --fail-on {fail_on!r}.",
                file=sys.stderr,
            )
            code = EXIT_GATE
    return code


def audit(args: argparse.Namespace) -> int:
    """``synthrisk audit``: shadow-model membership attacks on the generator, an ε bound."""
    from synthrisk.cli._console import audit_progress
    from synthrisk.pipeline import (
        audit_files,
        check_output_folder,
        check_outputs,
        generator_from_spec,
    )

    check_outputs(
        {"`--json`": args.json, "`--html`": args.html},
        {"real": args.real, "holdout": args.holdout, "metadata": args.metadata},
    )
    if args.cache is not None:
        check_output_folder("`--cache`", args.cache)
    seconds, max_runs = arguments.budget(args.budget)
    options = {
        "n_targets": args.targets,
        "target_rows": arguments.rows(args.target_rows),
        "n_canaries": args.canaries,
        "n_runs": args.runs if max_runs is None else min(args.runs, max_runs),
        "train_size": args.train_size,
        "n_synthetic": args.rows,
        "classifier": args.classifier,
        "delta": args.delta,
        "confidence_level": args.confidence,
        "n_jobs": args.jobs,
        "max_seconds": seconds,
        "seed": args.seed,
        "run_timeout": arguments.seconds(args.run_timeout, "`--run-timeout`"),
        "cache": args.cache,
        "scheduler": args.scheduler,
    }
    if args.attacks is not None:
        options["attacks"] = [a.strip() for a in args.attacks.split(",") if a.strip()]
    generator = generator_from_spec(
        args.generator,
        args.generator_cmd,
        python=args.generator_python,
        params=arguments.generator_params(args.generator_param),
        worker=not args.generator_fresh_process,
    )
    quiet = args.quiet or "-" in (args.json, args.html)
    with audit_progress(options["n_runs"], quiet=quiet) as progress:
        outcome = audit_files(
            args.real,
            args.holdout,
            generator,
            metadata=args.metadata,
            encoding=args.encoding,
            max_epsilon=args.max_epsilon,
            fail_on=args.fail_on,
            json=args.json,
            html=args.html,
            progress=progress,
            **options,
        )
    return _finish_audit(outcome, quiet, stderr="-" in (args.json, args.html))


def _finish_audit(outcome: FileAudit, quiet: bool, *, stderr: bool = False) -> int:
    """Print the audit's summary (its verdict even when ``quiet``); the exit code of
    its ``max_epsilon`` gate."""
    from synthrisk.cli._console import print_audit

    print_audit(outcome, quiet=quiet, stderr=stderr)
    result = outcome.result
    if not result.runs.get("evaluation"):
        gate = (
            ""
            if outcome.verdict is None
            else f" The gate (--max-epsilon {outcome.verdict.max_epsilon:g}) cannot be judged."
        )
        why = (
            "every shadow run failed"
            if result.failures and not result.n_runs
            else "no evaluation run completed"
        )
        print(
            f"synthrisk: error: the audit tested nothing: {why} "
            f"({result.runs_summary()}).{gate} Fix the generator (its errors are above "
            "and in the JSON's `failures`) and run the audit again.",
            file=sys.stderr,
        )
        return EXIT_NO_RUNS
    if outcome.gate_fails():
        assert outcome.verdict is not None
        if outcome.verdict.level == "fail":
            why = (
                f"the audit's ε lower bound {result.epsilon_lower:.3g} is above the "
                f"largest acceptable ε {outcome.verdict.max_epsilon:g}"
            )
        else:
            why = f"the audit reads review (--fail-on review): {outcome.verdict.reason}"
        print(f"synthrisk: gate failed: {why.rstrip('.')}.", file=sys.stderr)
        return EXIT_GATE
    return EXIT_OK


def evaluate_tables(args: argparse.Namespace) -> int:
    """``synthrisk evaluate-tables``: related tables judged per person."""
    from synthrisk.pipeline import evaluate_table_files

    # the pipeline refuses outputs that cannot be written before reading any table
    report = evaluate_table_files(
        args.real,
        args.synthetic,
        args.holdout,
        metadata=args.metadata,
        root=args.root,
        metrics=arguments.with_params(arguments.metric_ids(args.metrics), args.param),
        table_metrics=arguments.table_metric_ids(args.table_metrics),
        seed=args.seed,
        thresholds=arguments.thresholds(args.thresholds),
        json=args.json,
        html=args.html,
        scheduler=args.scheduler,
        table_people=arguments.table_people(args.table_people),
        working_memory=args.working_memory,
        backend=args.backend,
        progress=not (args.quiet or "-" in (args.json, args.html)),
        policy=args.policy,
    )
    to_stdout = "-" in (args.json, args.html)
    written = [Path(p) for p in (args.json, args.html) if p and p != "-"]
    return _finish_tables(
        report,
        written,
        args.fail_on,
        quiet=args.quiet or to_stdout,
        stderr=to_stdout,
    )


def _finish_tables(
    report: MultiTableReport,
    written: Sequence[Path],
    fail_on: str | None,
    *,
    quiet: bool,
    stderr: bool = False,
) -> int:
    """Print what was written and the person-level summary; the gate's exit code.

    ``quiet`` leaves the verdict, its reason and the person level's findings that read
    review or fail (on standard error with ``stderr``)."""
    from synthrisk.cli._console import (
        console,
        esc,
        print_findings,
        print_written,
        verdict_console,
    )
    from synthrisk.pipeline import tables_gate_fails

    print_written(written, quiet=quiet)
    if quiet:
        out = verdict_console(stderr=stderr)
        out.print(f"verdict: {report.verdict.upper()}")
        out.print(esc(f"  {report.reason}"))
        if report.people.verdict is not None:
            print_findings(report.people.verdict.findings, out=out)
    else:
        out = console(quiet=False)
        for line in report.summary_lines():
            out.print(esc(line))
    if tables_gate_fails(report.verdict, fail_on):
        print(
            f"synthrisk: gate failed: the person-level verdict is {report.verdict!r}, "
            f"at or below --fail-on {fail_on!r}.",
            file=sys.stderr,
        )
        return EXIT_GATE
    return EXIT_OK


#: the command of each sub-command name; ``synthrisk metrics`` is the fallback
COMMANDS = {
    "audit": audit,
    "evaluate-tables": evaluate_tables,
    "evaluate": evaluate,
    "filter": filter_copies,
    "run": run,
    "report": report,
    "demo": demo,
}
