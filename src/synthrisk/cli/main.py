# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk`` command line: parse, call :mod:`synthrisk.pipeline`, print, exit code.

Exit codes: 0 success; 1 the release gate failed (``--fail-on review|fail`` or ``gate:``
in the YAML, and the overall verdict is at or below that level; the reports are still
written); 2 usage or input error (``synthrisk: error: …`` on standard error, no
traceback); 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthrisk.cli._parser import UsageError, build_parser
from synthrisk.exceptions import ParameterError, SynthriskError

if TYPE_CHECKING:
    from synthrisk.pipeline import FileEvaluation
    from synthrisk.report import Thresholds

__all__ = ["main"]

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--debug"]
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            # a library's warning is shown after the run as one line, never as the
            # multi-line text Python prints (it would break the one-line error)
            warnings.simplefilter("default")
            args = parser.parse_args(argv)
            if args.command is None:
                parser.print_help(sys.stderr)
                return EXIT_USAGE
            code = int(_dispatch(args))
        _print_warnings(caught, debug=debug)
        return code
    except (UsageError, SynthriskError) as exc:
        print(f"synthrisk: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except (
        OSError
    ) as exc:  # the system refused a path: a name too long, a full disk, ...
        if debug:
            raise
        where = f" {exc.filename!r}" if exc.filename else ""
        print(
            f"synthrisk: error: cannot use{where}: {_one_line(exc.strerror or str(exc))}.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("synthrisk: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so plainly, traceback only on request
        if debug:
            raise
        print(
            f"synthrisk: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in synthrisk; please report it (run with --debug for the traceback).",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


def _one_line(text: str) -> str:
    """``text`` on one line (messages quoting YAML or parser errors span several)."""
    return " ".join(text.split())


def _print_warnings(caught: Sequence[warnings.WarningMessage], *, debug: bool) -> None:
    """Warnings raised during the run, one line each (after the run's own output)."""
    from synthrisk.exceptions import SynthriskWarning

    shown: set[str] = set()
    for w in caught:
        line = _one_line(str(w.message))
        if not issubclass(w.category, SynthriskWarning):
            line = f"{w.category.__name__}: {line}"
            if debug:
                line += f" ({w.filename}:{w.lineno})"
        if line not in shown:
            shown.add(line)
            print(f"synthrisk: warning: {line}", file=sys.stderr)


def _dispatch(args: argparse.Namespace) -> int:
    commands = {
        "evaluate": _cmd_evaluate,
        "run": _cmd_run,
        "report": _cmd_report,
        "demo": _cmd_demo,
    }
    return commands.get(args.command, _cmd_metrics)(args)


def _cmd_metrics(args: argparse.Namespace) -> int:
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


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from synthrisk.pipeline import check_outputs, evaluate_files

    metrics = None
    if args.metrics is not None:
        metrics = [m.strip().lower() for m in args.metrics.split(",") if m.strip()]
        if not metrics:
            msg = (
                f"`--metrics` names no metric (got {args.metrics!r}); give metric ids "
                "separated by commas (see `synthrisk metrics`), or leave it out to run the full assessment."
            )
            raise ParameterError(msg)
    chosen = _with_params(metrics, args.param)
    # before reading any table: the metrics build, and the outputs can be written
    _build_metrics(chosen)
    check_outputs(
        {"`--json`": args.json, "`--html`": args.html},
        {
            "real": args.real,
            "synthetic": args.synthetic,
            "holdout": args.holdout,
            "metadata": args.metadata,
        },
    )
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
            thresholds=_thresholds(args.thresholds),
            json=args.json,
            html=args.html,
            include_records=args.include_records,
            include_values=args.include_values,
            top_n=_top_n(args.top_n) or 20,
            encoding=args.encoding,
            self_test=args.self_test,
        )
    except ParameterError as exc:
        raise _with_hint(exc) from None
    written = [Path(p) for p in (args.json, args.html) if p and p != "-"]
    return _finish([evaluation], written, args.fail_on, quiet=args.quiet or to_stdout)


def _with_params(
    metrics: list[str] | None, params: Sequence[str]
) -> list[str] | dict[str, dict[str, Any]] | None:
    """The ``metrics`` argument: the ids of ``--metrics``, with ``--param`` values by id."""
    if not params:
        return metrics
    example = "`--metrics categorical_cap --param categorical_cap.key_fields=age,sex`"
    if metrics is None:
        msg = (
            "`--param` sets parameters of the metrics named in `--metrics` (the full "
            f"assessment runs with default parameters); name the metrics to run, e.g. {example}."
        )
        raise ParameterError(msg)
    chosen: dict[str, dict[str, Any]] = {m: {} for m in metrics}
    for item in params:
        target, equals, text = item.partition("=")
        metric_id, dot, name = target.strip().partition(".")
        metric_id, name = metric_id.strip().lower(), name.strip()
        if not (equals and dot and metric_id and name):
            msg = f"`--param {item}` must read METRIC.NAME=VALUE, e.g. {example}."
            raise ParameterError(msg)
        if metric_id not in chosen:
            from synthrisk.metrics import get_metric

            get_metric(metric_id)  # an unknown id: the message suggests the closest
            listed = ",".join([*metrics, metric_id])
            msg = (
                f"`--param {item}` sets a parameter of {metric_id!r}, which `--metrics` does "
                f"not name; add it: `--metrics {listed}`."
            )
            raise ParameterError(msg)
        if name in chosen[metric_id]:
            msg = f"`--param` gives {metric_id}.{name} twice; give each parameter once."
            raise ParameterError(msg)
        chosen[metric_id][name] = _param_value(text, item)
    return chosen


def _param_value(text: str, item: str) -> Any:
    """A ``--param`` value read as YAML; a plain text with commas is a list (``age,sex``)."""
    import yaml

    from synthrisk.io.run_file import yaml_error_text

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        msg = f"`--param {item}`: the value is not valid YAML: {yaml_error_text(exc)}"
        raise ParameterError(msg) from None
    if isinstance(value, str) and "," in value and text.strip()[:1] not in ("'", '"'):
        items = []
        for part in (p.strip() for p in value.split(",")):
            try:
                parsed = yaml.safe_load(part) if part else part
            except yaml.YAMLError:
                parsed = part
            items.append(parsed if isinstance(parsed, (str, int, float)) else part)
        return items
    return value


def _build_metrics(
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any]] | None,
) -> None:
    """Build the chosen metrics once, so that a bad id or parameter is reported at once."""
    from synthrisk.metrics import get_metric

    if metrics is None:
        return
    params = metrics if isinstance(metrics, Mapping) else dict.fromkeys(metrics)
    for metric_id, values in params.items():
        try:
            get_metric(metric_id).from_params(values)
        except ParameterError as exc:
            raise _with_hint(exc) from None


def _with_hint(exc: ParameterError) -> ParameterError:
    """A metric's parameter error, saying how to pass parameters on the command line."""
    if exc.metric is None:
        return exc
    name = exc.parameter or "NAME"
    msg = (
        f"{exc} Set metric parameters with `--param {exc.metric}.{name}=VALUE` (repeatable; "
        f"a list as a,b), or in a YAML run file (`synthrisk run`); `synthrisk metrics "
        f"{exc.metric}` lists its parameters."
    )
    return ParameterError(msg)


def _cmd_run(args: argparse.Namespace) -> int:
    from synthrisk.pipeline import run_file

    outcome = run_file(
        args.config,
        html=args.html,
        include_values=args.include_values,
        top_n=_top_n(args.top_n),
        thresholds=_thresholds(args.thresholds),
        progress=not args.quiet,
    )
    from synthrisk.cli._console import console, esc

    for note in outcome.notes:
        console(quiet=args.quiet).print(f"[yellow]note:[/yellow] {esc(note)}")
    fail_on = args.fail_on or outcome.gate
    return _finish(outcome.evaluations, outcome.written, fail_on, quiet=args.quiet)


def _cmd_report(args: argparse.Namespace) -> int:
    from synthrisk.pipeline import check_outputs, report_file

    inputs = {name: getattr(args, name) for name in ("real", "synthetic", "holdout")}
    check_outputs({"`--html`": args.html}, {"report": args.report, **inputs})
    evaluation = report_file(
        args.report,
        html=args.html,
        thresholds=_thresholds(args.thresholds),
        include_values=args.include_values,
        inputs=inputs,
        top_n=_top_n(args.top_n) or 20,
        encoding=args.encoding,
    )
    written = [Path(args.html)] if args.html and args.html != "-" else []
    quiet = args.quiet or args.html == "-"
    return _finish([evaluation], written, args.fail_on, quiet=quiet)


def _cmd_demo(args: argparse.Namespace) -> int:
    from synthrisk.cli._console import console, esc, print_demo_table
    from synthrisk.pipeline import check_outputs, run_demo

    check_outputs({"`--out`": Path(args.out) / "report.json"})
    out = console(quiet=args.quiet)
    out.print(
        f"Generating the demo population ({args.rows} rows, seed {args.seed}) and "
        "evaluating each synthetic version …"
    )
    demo = run_demo(args.out, n_rows=args.rows, seed=args.seed, progress=not args.quiet)
    print_demo_table(demo.reports, quiet=args.quiet)
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
    return EXIT_OK


def _thresholds(path: str | None) -> Thresholds | None:
    from synthrisk.io.files import read_thresholds

    return None if path is None else read_thresholds(path)


def _top_n(value: int | None) -> int | None:
    if value is not None and value < 1:
        msg = f"`--top-n` must be an integer >= 1; got {value}."
        raise ParameterError(msg)
    return value


def _finish(
    evaluations: Sequence[FileEvaluation],
    written: Sequence[Path],
    fail_on: str | None,
    *,
    quiet: bool,
) -> int:
    """Print what was written and the verdicts; the exit code of the release gate."""
    from synthrisk.cli._console import console, esc, print_summary, print_written

    print_written(written, quiet=quiet)
    for evaluation in evaluations:
        if evaluation.label is not None:
            console(quiet=quiet).print(f"\n[bold]{esc(evaluation.label)}[/bold]")
        print_summary(
            evaluation.report,
            evaluation.verdict,
            quiet=quiet,
            labels=evaluation.metric_labels,
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
