# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk`` command line: parse, call the API, write outputs, return an exit code.

Exit codes: 0 success; 1 reserved for "risk threshold exceeded" (release gating);
2 usage or input error (``synthrisk: error: …`` on standard error, no traceback);
3 internal error (a bug: please report it).
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
    parser.add_argument("--version", action="version", version=f"synthrisk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ev = sub.add_parser("evaluate", help="evaluate a synthetic table against the real (and holdout) table")
    ev.add_argument("--real", required=True, metavar="PATH", help="real rows the generator was trained on (CSV or Parquet)")
    ev.add_argument("--synthetic", required=True, metavar="PATH", help="the generator's output (CSV or Parquet)")
    ev.add_argument("--holdout", metavar="PATH", help="real rows the generator never saw (CSV or Parquet)")
    ev.add_argument("--metadata", metavar="PATH", help="column kinds: SDMetrics or synthrisk metadata (JSON or YAML)")
    ev.add_argument("--metrics", metavar="IDS", help="comma-separated metric ids (default: all that need no parameters)")
    ev.add_argument("--seed", type=int, default=0, help="seed of every random step (default: 0)")
    ev.add_argument("--json", metavar="OUT", help="write the JSON report here")
    ev.add_argument("--include-records", action="store_true", help="add per-record scores (row positions) to the JSON")
    ev.add_argument("--working-memory", type=float, metavar="MIB", help="memory budget of one block (default: 256)")
    ev.add_argument("--backend", choices=["auto", "numpy", "numba", "dask"], help="neighbour-search backend")
    ev.add_argument("--quiet", action="store_true", help="no progress bars or summary table")

    run = sub.add_parser("run", help="run the evaluation described by a YAML configuration file")
    run.add_argument("config", metavar="CONFIG.yaml")
    run.add_argument("--quiet", action="store_true", help="no progress bars or summary table")

    demo = sub.add_parser("demo", help="evaluate the built-in demo data and write reports")
    demo.add_argument("--out", default="demo-output", metavar="DIR", help="output folder (default: demo-output)")
    demo.add_argument("--rows", type=int, default=20_000, help="size of the demo population (default: 20000)")
    demo.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    demo.add_argument("--quiet", action="store_true", help="no progress bars or summary table")

    sub.add_parser("metrics", help="list the available metrics")
    return parser


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
    if args.command == "demo":
        return _cmd_demo(args)
    return _cmd_metrics()


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
            inputs[name] = {**inputs[name], "file": Path(path).name, "sha256": sha256_file(path)}
    import dataclasses

    return dataclasses.replace(report, inputs=inputs)


def _cmd_evaluate(args: argparse.Namespace) -> int:
    metrics = None
    if args.metrics:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    report = _evaluate_files(
        real=Path(args.real), synthetic=Path(args.synthetic),
        holdout=None if args.holdout is None else Path(args.holdout),
        metadata=None if args.metadata is None else Path(args.metadata),
        metrics=metrics, seed=args.seed, working_memory=args.working_memory, backend=args.backend,
        quiet=args.quiet,
    )  # fmt: skip
    _write_outputs(report, json_path=args.json, include_records=args.include_records, quiet=args.quiet)
    _print_summary(report, quiet=args.quiet)
    return EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from synthrisk.io.config import load_config

    config = load_config(args.config)
    report = _evaluate_files(
        real=config.real, synthetic=config.synthetic, holdout=config.holdout, metadata=config.metadata,
        metrics=config.metrics, seed=config.seed, working_memory=config.working_memory,
        backend=config.backend, quiet=args.quiet,
    )  # fmt: skip
    json_path = None if config.json is None else str(config.json)
    _write_outputs(report, json_path=json_path, include_records=config.include_records, quiet=args.quiet)
    _print_summary(report, quiet=args.quiet)
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    import json

    from synthrisk.datasets import demo_metrics, load_demo
    from synthrisk.evaluate import evaluate
    from synthrisk.io.files import write_text_atomic

    out = Path(args.out)
    console = _console(args.quiet)
    console.print(f"Generating the demo population ({args.rows} rows, seed {args.seed}) …")
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
        reports[name] = evaluate(
            demo.real, frame, demo.holdout, metadata=demo.metadata, metrics=demo_metrics(), seed=args.seed,
            progress=not args.quiet,
        )  # fmt: skip
        write_text_atomic(out / "reports" / f"{name}.json", reports[name].to_json())
    main_report = reports["partial"]
    path = write_text_atomic(out / "report.json", main_report.to_json())
    _print_demo_table(reports, console)
    console.print(f"\nReport of the 'partial' version: {path}")
    console.print(f"Reports of every version: {out / 'reports'}/   Data: {data}/")
    return EXIT_OK


def _write_outputs(report: Any, *, json_path: str | None, include_records: bool, quiet: bool) -> None:
    from synthrisk.io.files import write_text_atomic

    if json_path:
        path = write_text_atomic(json_path, report.to_json(include_records=include_records))
        _console(quiet).print(f"JSON report written to {path}")


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def _print_summary(report: Any, *, quiet: bool) -> None:
    from rich.table import Table

    console = _console(quiet)
    table = Table(title="synthrisk results")
    table.add_column("metric")
    table.add_column("score", justify="right")
    table.add_column("95% interval", justify="right")
    table.add_column("warnings", justify="right")
    for r in report.results:
        ci = "—" if r.ci is None else f"[{r.ci[0]:.3f}, {r.ci[1]:.3f}]"
        table.add_row(r.metric, _fmt(r.score), ci, str(len(r.warnings)))
    console.print(table)
    for warning in report.warnings:
        console.print(f"[yellow]note:[/yellow] {warning}")


def _print_demo_table(reports: dict[str, Any], console: Any) -> None:
    from rich.table import Table

    metric_ids = [r.metric for r in next(iter(reports.values())).results]
    table = Table(title="synthrisk demo: scores by synthetic version (higher = safer)")
    table.add_column("metric")
    for name in reports:
        table.add_column(name, justify="right")
    for metric_id in metric_ids:
        table.add_row(metric_id, *[_fmt(reports[name][metric_id].score) for name in reports])
    console.print(table)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
