# SPDX-License-Identifier: BSD-3-Clause
"""The ``synthrisk`` argument parser."""

from __future__ import annotations

import argparse
from typing import NoReturn

from synthrisk._version import __version__

__all__ = ["UsageError", "build_parser"]


class UsageError(Exception):
    """A command-line usage error (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        msg = f"{message} (see `{self.prog} --help`)"
        raise UsageError(msg)


def build_parser() -> argparse.ArgumentParser:
    """The ``synthrisk`` argument parser: one sub-command per job."""
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
    _add_table_options(ev, holdout_required=False)
    ev.add_argument(
        "--include-records",
        action="store_true",
        help="add per-record scores (row positions) to the JSON",
    )
    ev.add_argument(
        "--self-test",
        action="store_true",
        help=(
            "known-leak self-test: plant copies of the most isolated training people "
            "(exact and near, 0.1 / 0.5 / 1 %% of the synthetic rows), re-run the gating "
            "tests and report whether the verdict would have caught them (needs --holdout; "
            "adds about twice the evaluation's time)"
        ),
    )
    ev.add_argument(
        "--filtered-out",
        metavar="PATH",
        help=(
            "also write the synthetic table without the rows that copy a training person "
            "(exactly or nearly, as the identification test lists them) here, in the "
            "synthetic file's format; not re-assessed: `synthrisk filter` does both (needs "
            "--holdout)"
        ),
    )
    _add_report_options(ev)
    _add_record_options(ev)
    _add_compute_options(ev)
    ev.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on the Dask scheduler at ADDRESS (tcp://host:8786); implies --backend dask",
    )
    ev.add_argument(
        "--sample-rows",
        type=int,
        metavar="N",
        help=(
            "folder or glob inputs: rows per table of the seeded sample that metrics "
            "needing every row in memory run on (default: 50000)"
        ),
    )
    ev.add_argument(
        "--quiet",
        action="store_true",
        help="no progress (bars on a terminal, a line per metric otherwise) or summary "
        "table; the verdict, its reason and the findings that read review or fail "
        "still print",
    )

    flt = sub.add_parser(
        "filter",
        help=(
            "remove the synthetic rows that copy training people, write the table, and "
            "assess it again"
        ),
        description=(
            "Evaluate the synthetic table, remove every synthetic row that copies a training "
            "person (exactly, or nearly: the identification test's copying rows), write the "
            "filtered table (--out, in the format its name says, else the synthetic file's), "
            "evaluate it again with the same seed and options, and print what changed. "
            "Filtering is a stopgap: the next most isolated people become the exposed ones "
            "(the privacy onion), and which rows were removed is itself information; "
            "regenerating is better (docs/verdict.md)."
        ),
    )
    _add_table_options(flt, holdout_required=True)
    flt.add_argument(
        "--out",
        required=True,
        metavar="PATH",
        help="write the filtered synthetic table here (CSV, TSV, optionally .gz/.bz2/.xz/.zip, or Parquet)",
    )
    _add_report_options(flt)
    _add_compute_options(flt)
    flt.add_argument(
        "--quiet",
        action="store_true",
        help="no progress or summary (what changed is still printed)",
    )

    run = sub.add_parser(
        "run",
        help="run the evaluation or generator audit described by a YAML file (synthrisk's layouts or PETsARD's)",
        description=(
            "Run a YAML file in one of synthrisk's layouts, told apart by their blocks: "
            "`data:` (one table: real, synthetic, holdout, metadata), `audit:` (a generator "
            "audit) or `tables:` (related tables judged per person: real, synthetic and "
            "holdout folders with one file per table, SDV multi-table or sequential "
            "metadata, an optional root table; with metrics, table_metrics, seed, "
            "thresholds, report {json, html} and gate, as in `synthrisk evaluate-tables`); "
            "or PETsARD's layout. See README.md, docs/audit.md and docs/relational.md."
        ),
    )
    run.add_argument("config", metavar="CONFIG.yaml")
    _add_report_options(run)
    run.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bars or summary table (the verdict still prints)",
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
    rep.add_argument(
        "--encoding",
        metavar="NAME",
        help="text encoding of CSV / TSV inputs (default: utf-8)",
    )
    rep.add_argument(
        "--quiet",
        action="store_true",
        help="no summary table (the verdict still prints)",
    )

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
        default=None,
        help=(
            "size of the demo population (default: 20000 rows; with --multi-table, "
            "1000 people)"
        ),
    )
    demo.add_argument(
        "--multi-table",
        action="store_true",
        help=(
            "related tables instead: a seeded bank (customers -> accounts -> "
            "transactions) with three synthetic versions, judged per person: new people "
            "(pass), 5%% of people copied with all their rows (fail), and 5%% of "
            "customers given a real person's accounts and transactions (fail). The "
            "last is the main report: every customer row is new, so the customers "
            "table passes on its own, yet the people are exposed, which only a "
            "per-person evaluation sees"
        ),
    )
    demo.add_argument("--seed", type=int, default=0, help="seed (default: 0)")
    demo.add_argument(
        "--quiet", action="store_true", help="no progress bars or summary table"
    )

    tab = sub.add_parser(
        "evaluate-tables",
        help="evaluate related tables (multi-table or sequential), judged per person",
        description=(
            "Evaluate synthetic related tables (SDV multi-table or sequential metadata) with "
            "the person as the unit: a root row with every row below it."
        ),
    )
    tab.add_argument(
        "--real",
        required=True,
        metavar="FOLDER",
        help="real tables the generator was trained on: one CSV or Parquet file per table",
    )
    tab.add_argument(
        "--synthetic", required=True, metavar="FOLDER", help="the generator's tables"
    )
    tab.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the metrics on the Dask scheduler at ADDRESS (tcp://host:8786); needs synthrisk[dask]",
    )
    tab.add_argument(
        "--holdout",
        metavar="FOLDER",
        help="real people the generator never saw, with all their rows (see synthrisk.split_people)",
    )
    tab.add_argument(
        "--metadata",
        required=True,
        metavar="PATH",
        help="SDV multi-table or sequential metadata (JSON)",
    )
    tab.add_argument("--root", metavar="TABLE", help="the table whose rows are people")
    tab.add_argument(
        "--metrics",
        metavar="IDS",
        help="comma-separated metric ids of the person level (default: PERSON_METRICS)",
    )
    tab.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="METRIC.NAME=VALUE",
        help="a parameter of a person-level metric named in --metrics (repeatable)",
    )
    tab.add_argument(
        "--table-metrics",
        metavar="IDS",
        help="comma-separated metric ids of each table (default: TABLE_METRICS; none: skip the tables)",
    )
    tab.add_argument(
        "--table-people",
        metavar="N",
        default="20000",
        help="people of each side whose rows the per-table metrics use, or all (default: 20000)",
    )
    _add_compute_options(tab)
    tab.add_argument(
        "--seed", type=int, default=0, help="seed of every random step (default: 0)"
    )
    tab.add_argument(
        "--thresholds", metavar="PATH", help="verdict thresholds (YAML or JSON)"
    )
    _add_policy_option(tab)
    tab.add_argument("--json", metavar="PATH", help="write the JSON report here")
    tab.add_argument("--html", metavar="PATH", help="write the HTML report here")
    tab.add_argument(
        "--fail-on",
        choices=("review", "fail"),
        help="exit code 1 when the person-level verdict is at or below this level",
    )
    tab.add_argument(
        "--quiet",
        action="store_true",
        help="no progress lines or summary (the verdict still prints)",
    )

    aud = sub.add_parser(
        "audit",
        help="audit a generator: shadow-model membership attacks and an effective-ε lower bound",
        description=(
            "Train the generator again and again on shadow training sets drawn from the holdout, "
            "each target person in or out at random, and measure how well attacks tell members "
            "from non-members: AUC, TPR at low FPR, and a lower bound on the generator's ε. "
            "Exit codes: 0 done (the gate, if any, passed); 1 the gate failed (--max-epsilon, "
            "--fail-on); 2 usage or input error; 3 internal error; 4 the audit tested "
            "nothing: no evaluation run completed (every shadow run failed, the generator's "
            "errors are shown), so no bound and no gate can be judged."
        ),
    )
    aud.add_argument(
        "--real",
        required=True,
        metavar="PATH",
        help="the real training table: the targets come from it (CSV, TSV or Parquet)",
    )
    aud.add_argument(
        "--holdout",
        required=True,
        metavar="PATH",
        help="real rows of the same population the targets are not among: the attacker's sample",
    )
    gen = aud.add_mutually_exclusive_group(required=True)
    gen.add_argument(
        "--generator",
        metavar="SPEC",
        help=(
            "sdv:gaussian_copula, sdv:ctgan, sdv:tvae, sdv:copula_gan (the audit extra); "
            "synthpop:cart, dpmm:mst, dpmm:aim, dpmm:privbayes, smartnoise:mst (and aim, mwem, "
            "dpctgan, patectgan); or module:function, a Python callable "
            "fit_sample(train, n, seed) -> DataFrame"
        ),
    )
    gen.add_argument(
        "--generator-cmd",
        metavar="TEMPLATE",
        help=(
            'a command that trains and samples, e.g. "gen --train {train} --out {out} --rows {n} '
            '--seed {seed}" (CSV files; any language or Python environment)'
        ),
    )
    aud.add_argument(
        "--generator-python",
        metavar="PYTHON",
        help=(
            "another Python interpreter (e.g. another virtual environment's bin/python) that "
            "runs --generator, exchanging CSV files: for packages whose pins clash with this one; "
            "one persistent worker per job slot imports it once (python -m synthrisk.audit.worker)"
        ),
    )
    aud.add_argument(
        "--generator-fresh-process",
        action="store_true",
        help=(
            "with --generator-python: start a fresh interpreter for every run instead of one "
            "persistent worker per job slot that imports the generator once (the default)"
        ),
    )
    aud.add_argument(
        "--generator-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a keyword argument of the generator (repeatable; VALUE read as YAML: 1, 0.5, true, text)",
    )
    aud.add_argument("--metadata", metavar="PATH", help="column kinds (JSON or YAML)")
    aud.add_argument(
        "--encoding", metavar="NAME", help="text encoding of CSV / TSV inputs"
    )
    aud.add_argument(
        "--targets",
        type=int,
        default=10,
        metavar="N",
        help="most vulnerable real people audited (default: 10)",
    )
    aud.add_argument(
        "--target-rows",
        metavar="ROWS",
        help="rows of the real table audited as well (0-based, comma-separated)",
    )
    aud.add_argument(
        "--canaries",
        type=int,
        default=0,
        metavar="N",
        help=(
            "worst-case canaries audited as well: N records crafted from the tables' "
            "domain (extreme values, rare categories), reported beside the real people "
            "(default: 0)"
        ),
    )
    aud.add_argument(
        "--runs",
        type=int,
        default=200,
        metavar="N",
        help="shadow runs, at least 4 (default: 200)",
    )
    aud.add_argument(
        "--train-size",
        type=int,
        metavar="N",
        help="holdout rows per shadow training set (default: the smaller of the real table and half the holdout)",
    )
    aud.add_argument(
        "--rows",
        type=int,
        metavar="N",
        help="rows generated per run (default: --train-size)",
    )
    aud.add_argument(
        "--attacks",
        metavar="NAMES",
        help="comma-separated attacks (default: dcr,dcr_diff,knn,density,gen_lra,classifier)",
    )
    aud.add_argument(
        "--classifier",
        choices=("ridge", "logistic", "boosting"),
        default="ridge",
        help="the set classifier of the classifier attack (default: ridge)",
    )
    aud.add_argument(
        "--delta",
        type=float,
        default=0.0,
        help="the δ of (ε, δ) the bound is for (default: 0)",
    )
    aud.add_argument(
        "--confidence",
        type=float,
        default=0.95,
        help="confidence of the bounds (default: 0.95)",
    )
    aud.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="worker processes for the runs (default: 1)",
    )
    aud.add_argument(
        "--budget",
        metavar="LIMIT",
        help="stop starting runs after this time (90s, 30m, 2h) or this many runs (a number)",
    )
    aud.add_argument(
        "--run-timeout",
        default="2h",
        metavar="LIMIT",
        help=(
            "stop a generator run after this time (90s, 30m, 2h; none: never) and retry it once "
            "with a new seed (default: 2h)"
        ),
    )
    aud.add_argument(
        "--cache",
        metavar="DIR",
        help="keep every run's output here; a re-run with more runs calls the generator only for the new ones",
    )
    aud.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=(
            "run the shadow runs on the Dask scheduler at ADDRESS (tcp://host:8786; its "
            "workers' threads replace --jobs); needs synthrisk[dask]"
        ),
    )
    aud.add_argument(
        "--seed", type=int, default=0, help="seed of the whole audit (default: 0)"
    )
    aud.add_argument(
        "--max-epsilon",
        type=float,
        metavar="EPS",
        help=(
            "the largest acceptable ε: exit code 1 when the audit's lower bound is above it "
            "(exit code 4, with or without it, when no evaluation run completed: every "
            "shadow run failed, or the budget ran out first)"
        ),
    )
    aud.add_argument(
        "--fail-on",
        choices=("review", "fail"),
        default="fail",
        help=(
            "the verdict that gives exit code 1 (default: fail, the bound above --max-epsilon; "
            "review: also when the runs could not have refuted it, or a tenth of them failed)"
        ),
    )
    aud.add_argument("--json", metavar="PATH", help="write the audit's JSON here")
    aud.add_argument("--html", metavar="PATH", help="write the audit's HTML page here")
    aud.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar or summary (the verdict still prints)",
    )

    met = sub.add_parser(
        "metrics", help="list the available metrics, or describe one and its parameters"
    )
    met.add_argument(
        "metric",
        nargs="?",
        metavar="METRIC",
        help="a metric id: show what it measures and its parameters",
    )
    return parser


def _add_table_options(
    parser: argparse.ArgumentParser, *, holdout_required: bool
) -> None:
    """The inputs and the run's choices (of ``evaluate`` and ``filter``): ``--real``,
    ``--synthetic``, ``--holdout``, ``--encoding``, ``--metadata``, ``--metrics``,
    ``--param``, ``--seed`` and ``--json`` (``--policy`` comes with the report options)."""
    parser.add_argument(
        "--real",
        required=True,
        metavar="PATH",
        help="real rows the generator was trained on (CSV, TSV, optionally .gz/.bz2/.zip/.xz, or Parquet)",
    )
    parser.add_argument(
        "--synthetic",
        required=True,
        metavar="PATH",
        help="the generator's output (CSV or Parquet)",
    )
    parser.add_argument(
        "--holdout",
        required=holdout_required,
        metavar="PATH",
        help="real rows the generator never saw (CSV or Parquet)",
    )
    parser.add_argument(
        "--encoding",
        metavar="NAME",
        help="text encoding of CSV / TSV inputs, e.g. latin-1 or cp1252 (default: utf-8; a byte-order mark decides its file's)",
    )
    parser.add_argument(
        "--metadata",
        metavar="PATH",
        help="column kinds: SDMetrics or synthrisk metadata (JSON or YAML)",
    )
    parser.add_argument(
        "--metrics",
        metavar="IDS",
        help="comma-separated metric ids (default: the full assessment, every metric that needs no parameters)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="METRIC.NAME=VALUE",
        help=(
            "a metric's parameter, e.g. inference.n_attacks=all; without --metrics it changes that "
            "metric of the full assessment and keeps the rest (repeatable; the value is read as "
            "YAML, a comma-separated one as a list; `synthrisk metrics METRIC` lists the parameters)"
        ),
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of every random step (default: 0)"
    )
    parser.add_argument(
        "--json",
        metavar="OUT",
        help="write the JSON report here (- for standard output)",
    )


def _workers_option(text: str) -> int | str:
    """``--workers``: ``auto`` or a whole number of processes, at least 1."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"expected auto or a whole number of processes (at least 1); got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _add_compute_options(parser: argparse.ArgumentParser) -> None:
    """``--working-memory``, ``--backend`` and ``--workers`` (of ``evaluate`` and
    ``evaluate-tables``)."""
    parser.add_argument(
        "--working-memory",
        type=float,
        metavar="MIB",
        help="memory budget of one block (default: 256)",
    )
    parser.add_argument(
        "--backend",
        choices=["auto", "numpy", "numba", "dask", "torch"],
        help=(
            "neighbour-search backend (dask: a local cluster sized to this machine; "
            "torch: a CUDA GPU when present)"
        ),
    )
    parser.add_argument(
        "--workers",
        type=_workers_option,
        metavar="N",
        help=(
            "worker processes that run the metrics side by side: a number, or auto "
            "(default: up to one per core on Linux for tables of 20,000 rows or more; "
            "1: one metric after another)"
        ),
    )


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--html",
        metavar="OUT",
        help="write the self-contained HTML report here (- for standard output)",
    )
    parser.add_argument(
        "--include-values",
        action="store_true",
        help="show the values of the most at-risk records in the HTML report (real data: handle with care)",
    )
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
    _add_policy_option(parser)
    parser.add_argument(
        "--fail-on",
        choices=["review", "fail"],
        help="exit with code 1 when the overall verdict is at or below this level (release gate)",
    )


def _add_record_options(parser: argparse.ArgumentParser) -> None:
    """``--record`` and the release context (docs/record.md)."""
    group = parser.add_argument_group(
        "anonymisation record",
        "the record a privacy officer files (docs/record.md) and the release context it "
        "states; every option left out is stated as a default in the record",
    )
    group.add_argument(
        "--record",
        metavar="OUT",
        help=(
            "write the anonymisation record here: .html, or .pdf (printed by a headless "
            "Chromium); a default run then also runs the classical risk models "
            "(reidentification_risk, sdc_risk) where this synthrisk has them"
        ),
    )
    group.add_argument(
        "--context",
        metavar="FILE",
        help="the release context as YAML or JSON (the options below override its fields)",
    )
    group.add_argument(
        "--context-purpose", metavar="TEXT", help="why the table is released"
    )
    group.add_argument(
        "--context-recipient",
        metavar="TEXT",
        help="who receives it (the assessment takes their side)",
    )
    group.add_argument(
        "--release-model",
        choices=["public", "restricted", "enclave"],
        help="how it is released (default: public, the most demanding)",
    )
    group.add_argument(
        "--attacker-knows",
        metavar="COLUMNS",
        help="columns the attacker is assumed to know about a target, separated by commas",
    )
    group.add_argument(
        "--population-share",
        metavar="SHARE",
        help=(
            "share of the population in the training data, e.g. 0.01 or 1%% (the prior "
            "of the membership precision; default: shown at 1 %%, 10 %%, 50 %%)"
        ),
    )
    group.add_argument(
        "--population-size",
        type=int,
        metavar="N",
        help="size of the population (with the training rows, gives the share)",
    )
    group.add_argument("--assessor", metavar="TEXT", help="who assessed (name, role)")
    group.add_argument(
        "--assessed-on",
        metavar="YYYY-MM-DD",
        help="date of the assessment (default: today)",
    )
    group.add_argument(
        "--reassess-by",
        metavar="YYYY-MM-DD",
        help="when to assess again (default: one year after the assessment)",
    )


def _add_policy_option(parser: argparse.ArgumentParser) -> None:
    """``--policy``: the release policy for copied people."""
    parser.add_argument(
        "--policy",
        choices=["statistical", "strict"],
        help=(
            "release policy for training people a synthetic row copies, exactly or nearly "
            "(default: statistical, or the run file's `policy`). statistical: the "
            "holdout-controlled gates decide, and more copies than chance explains read "
            "review; strict: any copied person fails the verdict, whatever chance explains"
        ),
    )
