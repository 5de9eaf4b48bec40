# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk`` command line: parse, call the API, write outputs, return an exit code.

Exit codes: 0 success; 1 the release gate failed (``--fail-on review|fail`` or ``gate:``
in the YAML, and the overall verdict is at or below that level; the reports are still
written); 2 usage or input error (``synthrisk: error: …`` on standard error, no
traceback); 3 internal error (a bug: please report it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from synthrisk import __version__
from synthrisk.exceptions import SynthriskError

__all__ = ["main"]

EXIT_OK = 0
EXIT_GATE = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        msg = f"{message} (see `{self.prog} --help`)"
        raise _UsageError(msg)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="synthrisk",
        description="Measure how much a synthetic table leaks about the real records it was made from.",
    )
    parser.add_argument(
        "--version", action="version", version=f"synthrisk {__version__}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="evaluate a synthetic table against the real (and holdout) table",
    )
    ev.add_argument(
        "--real",
        required=True,
        metavar="PATH",
        help="real rows the generator was trained on (CSV or Parquet)",
    )
    ev.add_argument(
        "--synthetic",
        required=True,
        metavar="PATH",
        help="the generator's output (CSV or Parquet)",
    )
    ev.add_argument(
        "--holdout",
        metavar="PATH",
        help="real rows the generator never saw (CSV or Parquet)",
    )
    ev.add_argument(
        "--metadata",
        metavar="PATH",
        help="column kinds: SDMetrics or synthrisk metadata (JSON or YAML)",
    )
    ev.add_argument(
        "--metrics",
        metavar="IDS",
        help="comma-separated metric ids (default: all that need no parameters)",
    )
    ev.add_argument(
        "--seed", type=int, default=0, help="seed of every random step (default: 0)"
    )
    ev.add_argument("--json", metavar="OUT", help="write the JSON report here")
    ev.add_argument(
        "--include-records",
        action="store_true",
        help="add per-record scores (row positions) to the JSON",
    )
    _add_report_options(ev)
    ev.add_argument(
        "--working-memory",
        type=float,
        metavar="MIB",
        help="memory budget of one block (default: 256)",
    )
    ev.add_argument(
        "--backend",
        choices=["auto", "numpy", "numba", "dask"],
        help="neighbour-search backend",
    )
    ev.add_argument(
        "--quiet", action="store_true", help="no progress bars or summary table"
    )

    run = sub.add_parser(
        "run",
        help="run the evaluation described by a YAML file (synthrisk's or PETsARD's layout)",
    )
    run.add_argument("config", metavar="CONFIG.yaml")
    _add_report_options(run)
    run.add_argument(
        "--quiet", action="store_true", help="no progress bars or summary table"
    )

    rep = sub.add_parser("report", help="re-render a saved JSON report (verdict, HTML)")
    rep.add_argument("report", metavar="REPORT.json")
    _add_report_options(rep)
    rep.add_argument(
        "--real",
        metavar="PATH",
        help="the real table (only to show values with --include-values)",
    )
    rep.add_argument(
        "--synthetic",
        metavar="PATH",
        help="the synthetic table (only with --include-values)",
    )
    rep.add_argument(
        "--holdout",
        metavar="PATH",
        help="the holdout table (only with --include-values)",
    )
    rep.add_argument("--quiet", action="store_true", help="no summary table")

    demo = sub.add_parser(
        "demo", help="evaluate the built-in demo data and write reports"
    )
    demo.add_argument(
        "--out",
        default="demo-output",
        metavar="DIR",
        help="output folder (default: demo-output)",
    )
    demo.add_argument(
        "--rows",
        type=int,
        default=20_000,
        help="size of the demo population (default: 20000)",
    )
    demo.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    demo.add_argument(
        "--quiet", action="store_true", help="no progress bars or summary table"
    )

    sub.add_parser("metrics", help="list the available metrics")
    return parser


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--html", metavar="OUT", help="write the self-contained HTML report here"
    )
    parser.add_argument(
        "--include-values", action="store_true",
        help="show the values of the most at-risk records in the HTML report (real data: handle with care)",
    )  # fmt: skip
    parser.add_argument(
        "--top-n",
        type=int,
        metavar="N",
        help="records per at-risk table in the HTML report (default: 20)",
    )
    parser.add_argument(
        "--thresholds",
        metavar="FILE",
        help="verdict thresholds (YAML or JSON: {metric: {pass, fail}})",
    )
    parser.add_argument(
        "--fail-on", choices=["review", "fail"],
        help="exit with code 1 when the overall verdict is at or below this level (release gate)",
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = _build_parser()
    debug = "--debug" in (sys.argv[1:] if argv is None else argv)
    argv = [a for a in (sys.argv[1:] if argv is None else argv) if a != "--debug"]
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return int(_dispatch(args))
    except _UsageError as exc:
        print(f"synthrisk: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SynthriskError as exc:
        print(f"synthrisk: error: {exc}", file=sys.stderr)
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


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "evaluate":
        return _cmd_evaluate(args)
    if args.command == "run":
        return _cmd_run(args)
    if args.command == "report":
        return _cmd_report(args)
    if args.command == "demo":
        return _cmd_demo(args)
    return _cmd_metrics()


def _esc(text: str) -> str:
    """Escape rich markup in user-supplied text (paths like ``petsard[Report]_[global].csv``)."""
    from rich.markup import escape

    return escape(text)


def _console(quiet: bool) -> Any:
    from rich.console import Console

    return Console(quiet=quiet, highlight=False, soft_wrap=True)


def _cmd_metrics() -> int:
    from synthrisk.metrics import METRICS

    console = _console(False)
    for metric_id, cls in sorted(METRICS.items()):
        needs = []
        if cls.requires_holdout:
            needs.append("holdout")
        if not cls.runs_by_default:
            needs.append("parameters")
        suffix = f" (needs {', '.join(needs)})" if needs else ""
        console.print(f"[bold]{metric_id}[/bold]{suffix}: {cls.attack}")
    return EXIT_OK


def _evaluate_files(
    *,
    real: Path,
    synthetic: Path,
    holdout: Path | None,
    metadata: Path | None,
    metrics: Any,
    seed: int,
    working_memory: float | None,
    backend: str | None,
    quiet: bool,
) -> Any:
    from synthrisk.evaluate import evaluate
    from synthrisk.io.files import read_metadata, read_table, sha256_file

    frames = {
        "real": read_table(real, name="real"),
        "synthetic": read_table(synthetic, name="synthetic"),
        "holdout": None if holdout is None else read_table(holdout, name="holdout"),
    }
    meta = None if metadata is None else read_metadata(metadata)
    report = evaluate(
        frames["real"], frames["synthetic"], frames["holdout"], metadata=meta, metrics=metrics, seed=seed,
        working_memory=working_memory, backend=backend, progress=not quiet,
    )  # fmt: skip
    inputs = dict(report.inputs)
    for name, path in (("real", real), ("synthetic", synthetic), ("holdout", holdout)):
        if path is not None and inputs.get(name) is not None:
            inputs[name] = {
                **inputs[name],
                "file": Path(path).name,
                "sha256": sha256_file(path),
            }
    import dataclasses

    tables = {name: frame for name, frame in frames.items() if frame is not None}
    return dataclasses.replace(report, inputs=inputs), tables


def _cmd_evaluate(args: argparse.Namespace) -> int:
    metrics = None
    if args.metrics:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    thresholds = _load_thresholds(args.thresholds)
    top_n = _top_n(args.top_n, 20)
    report, tables = _evaluate_files(
        real=Path(args.real), synthetic=Path(args.synthetic),
        holdout=None if args.holdout is None else Path(args.holdout),
        metadata=None if args.metadata is None else Path(args.metadata),
        metrics=metrics, seed=args.seed, working_memory=args.working_memory, backend=args.backend,
        quiet=args.quiet,
    )  # fmt: skip
    outputs: dict[Path, str] = {}
    if args.json:
        outputs[Path(args.json)] = report.to_json(
            include_records=args.include_records, include_values=args.include_values
        )
    if args.html:
        outputs[Path(args.html)] = _render(
            report,
            thresholds=thresholds,
            tables=tables,
            include_values=args.include_values,
            top_n=top_n,
        )
    _write_all(outputs, quiet=args.quiet)
    verdict = _judge(report, thresholds)
    _print_summary(report, verdict, quiet=args.quiet)
    return _gate(verdict, args.fail_on)


def _cmd_run(args: argparse.Namespace) -> int:
    from synthrisk.io.config import RunConfig, load_config

    config = load_config(args.config)
    if not isinstance(config, RunConfig):
        return _cmd_run_petsard(args, config)
    thresholds = _load_thresholds(args.thresholds, fallback=config.thresholds)
    top_n = _top_n(args.top_n, config.top_n)
    report, tables = _evaluate_files(
        real=config.real, synthetic=config.synthetic, holdout=config.holdout, metadata=config.metadata,
        metrics=config.metrics, seed=config.seed, working_memory=config.working_memory,
        backend=config.backend, quiet=args.quiet,
    )  # fmt: skip
    outputs: dict[Path, str] = {}
    if config.json is not None:
        outputs[config.json] = report.to_json(
            include_records=config.include_records,
            include_values=args.include_values or config.include_values,
        )
    html = Path(args.html) if args.html else config.html
    if html is not None:
        outputs[html] = _render(
            report, thresholds=thresholds, tables=tables, include_values=args.include_values or config.include_values,
            top_n=top_n,
        )  # fmt: skip
    _write_all(outputs, quiet=args.quiet)
    verdict = _judge(report, thresholds)
    _print_summary(report, verdict, quiet=args.quiet)
    return _gate(verdict, args.fail_on or config.gate)


def _cmd_run_petsard(args: argparse.Namespace, config: Any) -> int:
    from synthrisk._progress import as_progress
    from synthrisk.compat.petsard import petsard_outputs, run_petsard

    console = _console(args.quiet)
    for note in config.notes:
        console.print(f"[yellow]note:[/yellow] {_esc(note)}")
    thresholds = _load_thresholds(args.thresholds, fallback=config.thresholds)
    top_n = _top_n(args.top_n, config.top_n)
    runs = run_petsard(config, progress=as_progress(not args.quiet))
    outputs: dict[Path, str] = {}
    for reporter in config.reporters:
        outputs.update(petsard_outputs(runs, reporter, digits=config.csv_digits))
    html_base = Path(args.html) if args.html else config.html
    many = len(runs) > 1
    verdicts = []
    for run in runs:
        suffix = (
            f"_{run.experiment.splitter}_{run.experiment.synthesizer}" if many else ""
        )
        if config.json is not None:
            path = config.json.with_name(
                f"{config.json.stem}{suffix}{config.json.suffix}"
            )
            outputs[path] = run.report.to_json(
                include_records=config.include_records,
                include_values=args.include_values or config.include_values,
            )
        if html_base is not None:
            path = html_base.with_name(f"{html_base.stem}{suffix}{html_base.suffix}")
            outputs[path] = _render(
                run.report, thresholds=thresholds, tables=run.tables,
                include_values=args.include_values or config.include_values, top_n=top_n,
                title=f"synthrisk privacy report: {run.experiment.splitter} × {run.experiment.synthesizer}",
                labels=run.evaluator_names,
            )  # fmt: skip
        verdict = _judge(run.report, thresholds)
        verdicts.append(verdict)
        if many:
            console.print(
                f"\n[bold]Splitter {_esc(run.experiment.splitter)} × "
                f"Synthesizer {_esc(run.experiment.synthesizer)}[/bold]"
            )
        _print_summary(
            run.report, verdict, quiet=args.quiet, labels=run.evaluator_names
        )
    _write_all(outputs, quiet=args.quiet)
    fail_on = args.fail_on or config.gate
    codes = [_gate(v, fail_on) for v in verdicts]
    return max(codes) if codes else EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    import json

    from synthrisk.exceptions import InputError
    from synthrisk.results import EvaluationReport

    path = Path(args.report)
    if not path.is_file():
        msg = f"the report file {str(path)!r} does not exist."
        raise InputError(msg)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        msg = f"the report file {str(path)!r} is not valid JSON: {exc}"
        raise InputError(msg) from None
    if not isinstance(data, dict) or "results" not in data:
        msg = f"the report file {str(path)!r} is not a synthrisk JSON report (no 'results')."
        raise InputError(msg)
    try:
        report = EvaluationReport.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        msg = f"the report file {str(path)!r} is not a valid synthrisk JSON report: {exc!r}"
        raise InputError(msg) from None
    thresholds = _load_thresholds(args.thresholds)
    tables = _tables_for_values(args, report) if args.include_values else None
    outputs: dict[Path, str] = {}
    if args.html:
        outputs[Path(args.html)] = _render(
            report, thresholds=thresholds, tables=tables, include_values=args.include_values,
            top_n=_top_n(args.top_n, 20),
        )  # fmt: skip
    _write_all(outputs, quiet=args.quiet)
    verdict = _judge(report, thresholds)
    _print_summary(report, verdict, quiet=args.quiet)
    return _gate(verdict, args.fail_on)


def _tables_for_values(args: argparse.Namespace, report: Any) -> dict[str, Any]:
    """Read the tables named on the command line, checking them against the report's hashes."""
    from synthrisk.exceptions import InputError
    from synthrisk.io.files import read_table, sha256_file

    given = {
        name: getattr(args, name)
        for name in ("real", "synthetic", "holdout")
        if getattr(args, name)
    }
    if not given:
        msg = (
            "`--include-values` needs the input tables to look the values up: pass --real (and --synthetic, "
            "--holdout) with the files the report was computed from."
        )
        raise InputError(msg)
    tables = {}
    for name, file in given.items():
        recorded = (report.inputs.get(name) or {}).get("sha256")
        if recorded and sha256_file(file) != recorded:
            msg = (
                f"`--{name}` {file!r} is not the file the report was computed from (its SHA-256 differs from the "
                "one recorded in the report); the row positions would point at other records."
            )
            raise InputError(msg)
        tables[name] = read_table(file, name=name)
    return tables


def _load_thresholds(path: str | None, *, fallback: Any = None) -> Any:
    from synthrisk.report.verdict import Thresholds

    if path is None:
        return Thresholds.from_dict(fallback)
    from synthrisk.exceptions import ConfigError
    from synthrisk.io.files import read_metadata

    try:
        data = read_metadata(path)
    except ConfigError as exc:
        msg = (
            str(exc)
            .replace("metadata file", "thresholds file")
            .replace(" with a 'columns' entry", "")
        )
        raise ConfigError(msg) from None
    except SynthriskError as exc:
        msg = str(exc).replace("metadata file", "thresholds file")
        raise type(exc)(msg) from None
    return Thresholds.from_dict(data)


def _top_n(value: int | None, default: int) -> int:
    from synthrisk.exceptions import ParameterError

    if value is None:
        return default
    if value < 1:
        msg = f"`--top-n` must be an integer >= 1; got {value}."
        raise ParameterError(msg)
    return value


def _render(report: Any, **options: Any) -> str:
    from synthrisk.report import render_html

    return render_html(report, **options)


def _judge(report: Any, thresholds: Any) -> Any:
    from synthrisk.report import judge

    return judge(report, thresholds)


def _gate(verdict: Any, fail_on: str | None) -> int:
    if fail_on is None:
        return EXIT_OK
    if verdict.fails(fail_on):
        print(
            f"synthrisk: gate failed: the overall verdict is {verdict.overall!r}, at or below --fail-on {fail_on!r}.",
            file=sys.stderr,
        )
        return EXIT_GATE
    return EXIT_OK


def _write_all(outputs: dict[Path, str], *, quiet: bool) -> None:
    """Write every output or none: all go to temporary files first, then are renamed."""
    import os
    import tempfile

    from synthrisk.exceptions import InputError

    staged: list[tuple[str, Path]] = []
    try:
        for path, text in outputs.items():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(
                    prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
                )
            except OSError as exc:
                msg = f"cannot write {str(path)!r}: {exc.strerror or exc}; no output was written."
                raise InputError(msg) from None
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
        raise
    console = _console(quiet)
    for path in outputs:
        kind = {
            ".json": "JSON report",
            ".html": "HTML report",
            ".csv": "CSV report",
        }.get(path.suffix, "output")
        console.print(f"{kind} written to {_esc(str(path))}")


def _cmd_demo(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from synthrisk._optional import is_available
    from synthrisk.datasets import demo_metrics, load_demo
    from synthrisk.evaluate import evaluate
    from synthrisk.io.files import sha256_file, write_text_atomic

    out = Path(args.out)
    console = _console(args.quiet)
    with_html = is_available("jinja2") and is_available("matplotlib")
    console.print(
        f"Generating the demo population ({args.rows} rows, seed {args.seed}) …"
    )
    demo = load_demo(n_rows=args.rows, seed=args.seed)
    data = out / "data"
    write_text_atomic(data / "real.csv", demo.real.to_csv(index=False))
    write_text_atomic(data / "holdout.csv", demo.holdout.to_csv(index=False))
    for name, frame in demo.synthetic.items():
        write_text_atomic(data / f"synthetic_{name}.csv", frame.to_csv(index=False))
    write_text_atomic(data / "metadata.json", json.dumps(demo.metadata, indent=2))
    reports = {}
    for name, frame in demo.synthetic.items():
        console.print(f"Evaluating synthetic version [bold]{name}[/bold] …")
        report = evaluate(
            demo.real, frame, demo.holdout, metadata=demo.metadata, metrics=demo_metrics(), seed=args.seed,
            progress=not args.quiet,
        )  # fmt: skip
        files = {
            "real": data / "real.csv",
            "synthetic": data / f"synthetic_{name}.csv",
            "holdout": data / "holdout.csv",
        }
        inputs = {
            table: {
                **report.inputs[table],
                "file": file.name,
                "sha256": sha256_file(file),
            }
            for table, file in files.items()
        }
        reports[name] = dataclasses.replace(report, inputs=inputs)
        write_text_atomic(out / "reports" / f"{name}.json", reports[name].to_json())
        if with_html:
            title = f"synthrisk demo: the '{name}' synthetic version"
            write_text_atomic(
                out / "reports" / f"{name}.html", _render(reports[name], title=title)
            )
    main_report = reports["partial"]
    path = write_text_atomic(out / "report.json", main_report.to_json())
    _print_demo_table(reports, console)
    console.print(f"\nReport of the 'partial' version: {_esc(str(path))}")
    if with_html:
        title = "synthrisk demo: the 'partial' synthetic version"
        html = write_text_atomic(out / "report.html", _render(main_report, title=title))
        console.print(
            f"HTML report of the 'partial' version (open it in a browser): {_esc(str(html))}"
        )
    else:
        console.print(
            "[yellow]note:[/yellow] no HTML report: it needs the report extra "
            "(pip install 'synthrisk\\[report]')."
        )
    console.print(
        f"Reports of every version: {_esc(str(out / 'reports'))}/   "
        f"Data: {_esc(str(data))}/"
    )
    return EXIT_OK


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def _print_summary(
    report: Any, verdict: Any, *, quiet: bool, labels: Sequence[str] | None = None
) -> None:
    from rich.table import Table

    console = _console(quiet)
    table = Table(title="synthrisk results")
    table.add_column("metric")
    table.add_column("score", justify="right")
    table.add_column("95% interval", justify="right")
    table.add_column("verdict")
    table.add_column("warnings", justify="right")
    colors = {"pass": "green", "review": "yellow", "fail": "red"}
    for i, (r, v) in enumerate(zip(report.results, verdict.metrics, strict=True)):
        ci = "—" if r.ci is None else f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]"
        name = r.metric if labels is None else f"{labels[i]} ({r.metric})"
        level = f"[{colors[v.level]}]{v.level}[/{colors[v.level]}]"
        table.add_row(_esc(name), _fmt(r.score), ci, level, str(len(r.warnings)))
    console.print(table)
    overall = verdict.overall
    console.print(
        f"Overall verdict: [bold {colors[overall]}]{overall}[/bold {colors[overall]}]"
    )
    for warning in report.warnings:
        console.print(f"[yellow]note:[/yellow] {_esc(warning)}")


def _print_demo_table(reports: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    first = next(iter(reports.values()))
    table = Table(
        title="synthrisk demo: scores and verdicts by synthetic version",
        caption="↑ higher is safer   ↓ higher means more risk",
    )
    table.add_column("metric")
    for name in reports:
        table.add_column(name, justify="right")
    for result in first.results:
        arrow = "↑" if result.higher_is_safer else "↓"
        scores = [_fmt(reports[name][result.metric].score) for name in reports]
        table.add_row(f"{result.metric} {arrow}", *scores)
    verdicts = [_judge(reports[name], None).overall for name in reports]
    table.add_row("[bold]verdict[/bold]", *verdicts)
    console.print(table)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
