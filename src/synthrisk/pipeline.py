# SPDX-License-Identifier: BSD-3-Clause
"""Files in, reports out: what the ``synthrisk`` command does, as a Python API.

:func:`evaluate_files` reads the tables, evaluates them, records each input file's name
and SHA-256 in the report (provenance), writes the JSON and HTML reports all-or-nothing
and judges the verdict; :meth:`FileEvaluation.gate_fails` is the release gate.
:func:`run_file` does the same for a YAML run file (synthrisk's layout, a generator audit's,
related tables' or PETsARD's),
:func:`run_demo` for the built-in demo data (:func:`run_tables_demo`: related tables), :func:`report_file` for a saved JSON report,
:func:`audit_files` for a generator audit of files.

>>> import synthrisk
>>> callable(synthrisk.evaluate_files)
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import json as _json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from synthrisk._atomic import check_output_paths, write_text_atomic, write_texts_atomic
from synthrisk._optional import is_available
from synthrisk._progress import as_progress, stage
from synthrisk._typing import Backend
from synthrisk._validation import check_int
from synthrisk.context import ReleaseContext, check_context
from synthrisk.evaluate import check_self_test, evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.filtering import (
    FilterResult,
    copying_rows,
    drop_rows,
    filter_copies,
    with_identification,
)
from synthrisk.io.dataset import is_dataset
from synthrisk.io.files import (
    add_provenance,
    read_metadata,
    read_report,
    read_table,
    read_table_with_notes,
    sha256_file,
    table_bytes,
    table_format,
)
from synthrisk.io.run_file import (
    AuditConfig,
    RunConfig,
    TablesConfig,
    parse_audit_config,
    parse_config,
    parse_tables_config,
    read_yaml,
)
from synthrisk.report import Thresholds, Verdict, judge, render_html
from synthrisk.report.record import check_record_path, record_bytes
from synthrisk.schema.tables import TABLE_NAMES
from synthrisk.settings import config_context

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from synthrisk._typing import JSONValue
    from synthrisk.audit import AuditResult, AuditVerdict
    from synthrisk.compat.petsard import PetsardConfig
    from synthrisk.relational import MultiTableReport
    from synthrisk.results import EvaluationReport

__all__ = [
    "DemoOutcome",
    "FileAudit",
    "FileEvaluation",
    "FileFilter",
    "RunOutcome",
    "TablesDemoOutcome",
    "audit_files",
    "check_output_folder",
    "check_outputs",
    "evaluate_files",
    "filter_files",
    "generator_from_spec",
    "load_run_file",
    "report_file",
    "run_demo",
    "run_file",
    "run_tables_demo",
    "tables_gate_fails",
]

PathLike: TypeAlias = "str | os.PathLike[str]"


@dataclasses.dataclass(frozen=True)
class FileEvaluation:
    """One evaluation of files: the report (with provenance), its verdict, the tables read.

    Attributes
    ----------
    report : EvaluationReport
        The results; ``report.inputs[name]`` holds each file's name and SHA-256.
    verdict : Verdict
        The report judged against the thresholds.
    tables : dict of str to DataFrame
        The tables as read (to look up record values in the HTML report).
    label : str or None
        A heading for this evaluation when a run has several (PETsARD experiments).
    metric_labels : tuple of str or None
        A display name of each result (PETsARD's evaluator names).
    removed : tuple of int or None
        With ``filtered_out``: the synthetic rows (0-based) left out of the filtered
        table written there; None otherwise.
    """

    report: EvaluationReport
    verdict: Verdict
    tables: Mapping[str, pd.DataFrame] = dataclasses.field(repr=False)
    label: str | None = None
    metric_labels: tuple[str, ...] | None = None
    removed: tuple[int, ...] | None = None

    def gate_fails(self, fail_on: str | None) -> bool:
        """True when the release gate fails: the verdict is at or below ``fail_on``."""
        return fail_on is not None and self.verdict.fails(fail_on)


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """What a run file produced: its evaluations, the files written, its gate and notes."""

    evaluations: tuple[FileEvaluation, ...]
    written: tuple[Path, ...]
    gate: str | None = None
    notes: tuple[str, ...] = ()
    audits: tuple[FileAudit, ...] = ()
    table_reports: tuple[MultiTableReport, ...] = ()

    def gate_fails(self, fail_on: str | None = None) -> bool:
        """True when any evaluation fails the gate (``fail_on``, else the file's
        ``gate``; for related tables, the person-level verdict), or a generator audit
        refuted its ``max_epsilon``."""
        level = fail_on or self.gate
        return (
            any(e.gate_fails(level) for e in self.evaluations)
            or any(a.gate_fails(fail_on) for a in self.audits)
            or any(tables_gate_fails(r.verdict, level) for r in self.table_reports)
        )


def tables_gate_fails(verdict: str, fail_on: str | None) -> bool:
    """True when a person-level verdict is at or below ``fail_on`` (``review``/``fail``)."""
    order = {"fail": 0, "review": 1, "pass": 2}
    return fail_on is not None and order[verdict] <= order[fail_on]


def _thresholds(value: Thresholds | Mapping[str, Any] | None) -> Thresholds:
    return value if isinstance(value, Thresholds) else Thresholds.from_dict(value)


def _read_tables(
    files: Mapping[str, PathLike | None], encoding: str | None
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Read each named file (None: no table), with the notes the reading made."""
    tables: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    for name, path in files.items():
        if path is not None:
            tables[name], read_notes = read_table_with_notes(
                path, name=name, encoding=encoding
            )
            notes += read_notes
    return tables, notes


def evaluate_files(
    real: PathLike,
    synthetic: PathLike,
    holdout: PathLike | None = None,
    *,
    metadata: PathLike | None = None,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    working_memory: float | None = None,
    backend: Backend | None = None,
    scheduler: str | None = None,
    sample_rows: int | None = None,
    progress: bool = False,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    json: PathLike | None = None,
    html: PathLike | None = None,
    include_records: bool = False,
    include_values: bool = False,
    top_n: int = 20,
    encoding: str | None = None,
    self_test: bool = False,
    policy: str | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    filtered_out: PathLike | None = None,
    context: ReleaseContext | Mapping[str, Any] | None = None,
    record: PathLike | None = None,
    command: str | None = None,
) -> FileEvaluation:
    """Evaluate CSV or Parquet files and write the reports.

    Parameters
    ----------
    real, synthetic, holdout : path
        The tables (CSV, TSV or Parquet); ``holdout`` is optional. A folder or a
        glob (Parquet dataset, CSV files) is read partition by partition on a Dask
        cluster by :func:`synthrisk.cluster.evaluate_dataset`.
    metadata : path, default=None
        Column kinds (SDMetrics' or synthrisk's format, JSON or YAML).
    metrics, seed, working_memory, backend, scheduler, progress
        As for :func:`synthrisk.evaluate`.
    sample_rows : int, default=None
        Folder or glob inputs: rows per table of the seeded sample that metrics needing
        every row in memory run on (None: 50,000; see
        :func:`synthrisk.cluster.evaluate_dataset`). Ignored for single files.
    thresholds : Thresholds or dict, default=None
        Verdict thresholds; None uses synthrisk's defaults.
    json, html : path, default=None
        Where to write the JSON and HTML reports; both are written or neither.
    include_records : bool, default=False
        Add per-record scores (row positions) to the JSON.
    include_values : bool, default=False
        Show the values of the most at-risk records in the HTML report.
    top_n : int, default=20
        Records per at-risk table in the HTML report.
    encoding : str, default=None
        Text encoding of CSV / TSV files (``latin-1``, ``cp1252``, ...); None
        means UTF-8 (see :func:`synthrisk.io.read_table`).
    self_test : bool, default=False
        Run the known-leak self-test (see :func:`synthrisk.evaluate`); single files
        only, with a holdout.
    policy : {"statistical", "strict"} or None, default=None
        The release policy for copied people (None: the thresholds' own, by default
        ``statistical``); see :func:`synthrisk.evaluate`.
    params : dict of metric id -> dict, default=None
        Parameters of metrics of the run (see :func:`synthrisk.evaluate`): with
        ``metrics=None`` they change those metrics of the full assessment. Single files
        only: for folder or glob inputs, name the metrics with their parameters.
    filtered_out : path, default=None
        Also write the synthetic table without the rows that copy a training person
        (the identification test's ``copying_rows``; the metric is added when
        ``metrics`` does not name it) here, in the format its name says (else the
        synthetic file's), with the reports, all or nothing. Not re-assessed:
        :func:`filter_files` does that. Single files only, with a holdout.
    context : ReleaseContext or dict, default=None
        The release context recorded in the report (see :func:`synthrisk.evaluate`).
    record : path, default=None
        Also write the anonymisation record here (HTML, or PDF for a ``.pdf`` name,
        printed by a headless Chromium; see :func:`synthrisk.report.write_record`); a
        default run then also runs the classical risk models this synthrisk has
        (:data:`synthrisk.evaluate.RECORD_METRICS`).
    command : str, default=None
        The command line, for the record's reproducibility section.

    Returns
    -------
    FileEvaluation
        With ``filtered_out``, ``removed`` lists the rows left out.
    """
    if sample_rows is not None:
        check_int(sample_rows, name="sample_rows", minimum=1)
    check_self_test(self_test, has_holdout=holdout is not None)
    files = {"real": real, "synthetic": synthetic, "holdout": holdout}
    check_outputs(
        {
            "`json`": json,
            "`html`": html,
            "`filtered_out`": filtered_out,
            "`record`": record,
        },
        {**files, "metadata": metadata},
    )
    checked_context = check_context(context)
    if record is not None:
        check_record_path(record)  # a PDF without Chromium fails before any work
    notes: list[str] = []
    checked = _thresholds(thresholds)
    if policy is not None:
        checked = checked.with_policy(policy)
    if filtered_out is not None:
        _check_filtering(files, "`filtered_out` (`--filtered-out`)")
        table_format(filtered_out, like=synthetic)
        metrics = with_identification(metrics)  # type: ignore[assignment]
    if any(is_dataset(path) for path in files.values() if path is not None):
        if self_test:
            msg = (
                "the self-test needs the tables in memory; it does not run on folder or "
                "glob inputs (read partition by partition on a Dask cluster). Evaluate "
                "single files, or leave the self-test off."
            )
            raise ParameterError(msg)
        if params:
            msg = (
                "`params` (`--param` without `--metrics`) works on single files; for folder or "
                "glob inputs name the metrics with their parameters (`--metrics` with `--param`, "
                "or a `metrics:` block)."
            )
            raise ParameterError(msg)
        from synthrisk.cluster import evaluate_dataset

        report = evaluate_dataset(
            real,
            synthetic,
            holdout,
            metadata=None if metadata is None else read_metadata(metadata),
            metrics=metrics,
            seed=seed,
            working_memory=working_memory,
            scheduler=scheduler,
            progress=progress,
            thresholds=checked,
            **({} if sample_rows is None else {"sample_rows": sample_rows}),
        )
        files = {n: p for n, p in files.items() if p is not None and Path(p).is_file()}
        tables: dict[str, pd.DataFrame] = {}
    else:
        tables, read_notes = _read_tables(files, encoding)
        notes += read_notes
        report = evaluate(
            tables["real"],
            tables["synthetic"],
            tables.get("holdout"),
            metadata=None if metadata is None else read_metadata(metadata),
            metrics=metrics,
            seed=seed,
            working_memory=working_memory,
            backend=backend,
            scheduler=scheduler,
            progress=progress,
            thresholds=checked,
            self_test=self_test,
            params=params,
            context=checked_context,
            record=record is not None,
        )
    if checked_context is not None and report.context is None:
        report = dataclasses.replace(report, context=checked_context.dated())
    if notes:
        report = dataclasses.replace(report, warnings=(*notes, *report.warnings))
    verdict = report.verdict
    if verdict is None:
        verdict = judge(report, checked)
        report = dataclasses.replace(report, verdict=verdict)
    removed = None if filtered_out is None else copying_rows(report)
    evaluation = FileEvaluation(
        add_provenance(report, files), verdict, tables, removed=removed
    )
    outputs: dict[Path, str | bytes] = {}
    if filtered_out is not None and removed is not None:
        outputs[Path(filtered_out)] = table_bytes(
            cast("pd.DataFrame", drop_rows(tables["synthetic"], removed)),
            filtered_out,
            like=synthetic,
        )
    if json is not None:
        outputs[Path(json)] = evaluation.report.to_json(
            include_records=include_records, include_values=include_values
        )
    if html is not None:
        outputs[Path(html)] = render_html(
            evaluation.report,
            thresholds=checked,
            verdict=verdict,
            tables=tables,
            include_values=include_values,
            top_n=top_n,
        )
    if record is not None:
        from synthrisk.metrics import METRICS

        outputs[Path(record)] = record_bytes(
            evaluation.report, record, command=command, registered=sorted(METRICS)
        )
    write_texts_atomic(outputs)
    return evaluation


def _check_filtering(files: Mapping[str, PathLike | None], what: str) -> None:
    """Refuse, before any work, inputs a filtered table cannot be made from."""
    if files.get("holdout") is None:
        msg = (
            f"{what} needs a holdout table (`--holdout`): the identification test that "
            "names the synthetic rows copying training people compares training people "
            "with holdout people."
        )
        raise InputError(msg)
    if any(is_dataset(path) for path in files.values() if path is not None):
        msg = (
            f"{what} needs the tables in memory; it does not run on folder or glob inputs. "
            "Give single files."
        )
        raise InputError(msg)


@dataclasses.dataclass(frozen=True)
class FileFilter:
    """One filtering of files: the result, the verdict after filtering, the tables read.

    Attributes
    ----------
    result : FilterResult
        What :func:`synthrisk.filter_copies` did (rows removed, both reports).
    verdict : Verdict
        The verdict on the filtered table (the input's when nothing was removed).
    tables : dict of str to DataFrame
        The tables as read, ``synthetic`` the input's.
    written : tuple of Path
        The files written: the filtered table, then the reports.
    """

    result: FilterResult
    verdict: Verdict
    tables: Mapping[str, pd.DataFrame] = dataclasses.field(repr=False)
    written: tuple[Path, ...] = ()

    def gate_fails(self, fail_on: str | None) -> bool:
        """True when the verdict on the filtered table is at or below ``fail_on``."""
        return fail_on is not None and self.verdict.fails(fail_on)


def filter_files(
    real: PathLike,
    synthetic: PathLike,
    holdout: PathLike,
    *,
    out: PathLike,
    metadata: PathLike | None = None,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any]] | None = None,
    seed: int = 0,
    policy: str | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    json: PathLike | None = None,
    html: PathLike | None = None,
    include_values: bool = False,
    top_n: int = 20,
    encoding: str | None = None,
    progress: bool = False,
    working_memory: float | None = None,
    backend: Backend | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> FileFilter:
    """Filter the synthetic file's copies of training people; write the table and reports.

    Reads the tables, runs :func:`synthrisk.filter_copies` (evaluate, remove the rows
    that copy a training person, evaluate again with the same options), and writes the
    filtered table to ``out`` — in the format its name says (``.csv``, ``.tsv``,
    optionally compressed, or ``.parquet``), else the synthetic file's — with the
    JSON (:meth:`FilterResult.to_dict`: both reports and the comparison) and the HTML
    report of the filtered table, all or nothing.

    Parameters
    ----------
    real, synthetic, holdout : path
        Single files (CSV, TSV or Parquet); the holdout is required.
    out : path
        Where the filtered synthetic table goes (never one of the inputs).
    metadata, metrics, seed, policy, thresholds, encoding, progress, working_memory, backend, params
        As for :func:`evaluate_files`.
    json, html : path, default=None
        The JSON of the whole filtering and the HTML report of the filtered table.
    include_values, top_n
        As for :func:`evaluate_files` (HTML only).

    Returns
    -------
    FileFilter
    """
    files = {"real": real, "synthetic": synthetic, "holdout": holdout}
    check_outputs(
        {"`out`": out, "`json`": json, "`html`": html},
        {**files, "metadata": metadata},
    )
    if str(out) == "-":
        msg = "the filtered table (`out`, `--out`) needs a file name, not `-`; give a path such as filtered.csv."
        raise InputError(msg)
    _check_filtering(files, "filtering")
    table_format(out, like=synthetic)
    checked = _thresholds(thresholds)
    if policy is not None:
        checked = checked.with_policy(policy)
    tables, notes = _read_tables(files, encoding)
    result = filter_copies(
        tables["real"],
        tables["synthetic"],
        tables["holdout"],
        metadata=None if metadata is None else read_metadata(metadata),
        metrics=metrics,
        seed=seed,
        thresholds=checked,
        progress=progress,
        working_memory=working_memory,
        backend=backend,
        params=params,
    )
    before = add_provenance(result.before, files)
    after = add_provenance(result.after, {"real": real, "holdout": holdout})
    if notes:
        before = dataclasses.replace(before, warnings=(*notes, *before.warnings))
        after = dataclasses.replace(after, warnings=(*notes, *after.warnings))
    result = dataclasses.replace(result, before=before, after=after)
    verdict = after.verdict if after.verdict is not None else judge(after, checked)
    outputs: dict[Path, str | bytes] = {
        Path(out): table_bytes(result.filtered, out, like=synthetic)
    }
    if json is not None:
        outputs[Path(json)] = _json.dumps(result.to_dict(), indent=2, allow_nan=False)
    if html is not None:
        outputs[Path(html)] = render_html(
            after,
            thresholds=checked,
            verdict=verdict,
            # the after report's row numbers are positions in the filtered table
            tables={**tables, "synthetic": result.filtered.reset_index(drop=True)},
            include_values=include_values,
            top_n=top_n,
        )
    written = write_texts_atomic(outputs)
    return FileFilter(
        result,
        verdict,
        tables,
        written=tuple(p for p in written if str(p) != "-"),
    )


def report_file(
    path: PathLike,
    *,
    html: PathLike | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    include_values: bool = False,
    inputs: Mapping[str, PathLike] | None = None,
    top_n: int = 20,
    encoding: str | None = None,
    policy: str | None = None,
) -> FileEvaluation:
    """Judge a saved JSON report again and render it to HTML.

    With ``include_values`` the input tables are needed (``inputs``: ``{"real": path,
    ...}``, read with ``encoding``); each file must be the one the report was computed
    from (same SHA-256). ``policy`` (``statistical`` or ``strict``; None: the
    thresholds' own) is the release policy for copied people.
    """
    check_outputs({"`html`": html}, {"report": path, **(inputs or {})})
    report = read_report(path)
    checked = _thresholds(thresholds).with_policy(policy)
    verdict = judge(report, checked)
    report = dataclasses.replace(report, verdict=verdict)
    tables = (
        _tables_for_values(report, inputs or {}, encoding=encoding)
        if include_values
        else {}
    )
    evaluation = FileEvaluation(report, verdict, tables)
    if html is not None:
        text = render_html(
            report,
            thresholds=checked,
            verdict=verdict,
            tables=tables or None,
            include_values=include_values,
            top_n=top_n,
        )
        write_texts_atomic({Path(html): text})
    return evaluation


def check_outputs(
    outputs: Mapping[str, PathLike | None],
    inputs: Mapping[str, PathLike | None] | None = None,
) -> None:
    """Refuse, before any work, outputs that cannot be written.

    An output is refused when it is a folder, named twice, one of the ``inputs``, or
    when its folder cannot be written (or created: the nearest existing folder above it
    is probed with a temporary file or folder, removed at once). ``-`` (standard
    output) and existing devices or pipes are accepted as they are.

    Parameters
    ----------
    outputs : dict of str to path or None
        Each output under the name the messages give it (``"`--json`"``,
        ``"`report.html` of run.yaml"``); None entries are ignored.
    inputs : dict of str to path or None, default=None
        The input files by table name (``real``, ``metadata``, ...): no output may
        overwrite one.

    Raises
    ------
    InputError
        Naming the output and its path, and why it cannot be written.
    """
    given = {name: Path(p) for name, p in outputs.items() if p is not None}
    check_output_paths(given.values())
    for out_name, out in given.items():
        if str(out) == "-":
            continue
        refused = _unwritable(out)
        if refused is not None:
            reason, remedy = refused
            msg = (
                f"cannot write {str(out)!r} ({out_name}): {reason}. Nothing was computed "
                f"and no output was written; {remedy}."
            )
            raise InputError(msg)
        if not _is_file(out):
            continue
        for in_name, source in (inputs or {}).items():
            if source is None or not _is_file(Path(source)):
                continue
            if os.path.samefile(out, source):
                msg = (
                    f"the {out_name} output {str(out)!r} is the `{in_name}` input file; "
                    "writing it would overwrite the input. Give the report another file name."
                )
                raise InputError(msg)


_ANYWHERE = "give a path in a folder you can write to"


def check_output_folder(name: str, folder: PathLike) -> None:
    """Refuse, before any work, an output folder (``--cache``) that cannot be written
    to or created, naming the folder that is missing."""
    folder = Path(folder)
    refused = _unwritable(folder / ".synthrisk-probe")
    if refused is None:
        return
    reason, remedy = refused
    msg = (
        f"cannot write to the folder {str(folder)!r} ({name}): {reason}. Nothing was "
        f"computed and no output was written; {remedy}."
    )
    raise InputError(msg)


def _unwritable(path: Path) -> tuple[str, str] | None:
    """Why ``path`` cannot be written atomically (a temporary file in its folder) and
    what to do about it, or None.

    A missing folder is named as it is missing (``/proc/nope`` of
    ``/proc/nope/x.html``), with the existing folder it cannot be created in.
    """
    folder = probe = path.parent
    try:
        if path.exists() and not path.is_file() and not path.is_dir():
            return None  # a device or a pipe (``/dev/stdout``): written directly
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        if not probe.is_dir():
            return f"{str(probe)!r} is a file, not a folder", _ANYWHERE
        if probe == folder:
            fd, tmp = tempfile.mkstemp(prefix=".synthrisk-probe-", dir=probe)
            os.close(fd)
            os.unlink(tmp)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".synthrisk-probe-", dir=probe))
    except OSError as exc:
        why = exc.strerror or str(exc)
        if probe == folder:
            return f"the folder {str(probe)!r} cannot be written to ({why})", _ANYWHERE
        # the first folder that would have to be made, right below ``probe``
        first = folder
        while first.parent != probe:
            first = first.parent
        reason = f"the folder {str(folder)!r} does not exist"
        if first != folder:
            reason += f" (nor does {str(first)!r})"
        reason += f" and cannot be created in {str(probe)!r} ({why})"
        return reason, f"create {str(folder)!r} first, or {_ANYWHERE}"
    return None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name the system refuses: the reader or writer says so
        return False


def _tables_for_values(
    report: EvaluationReport,
    inputs: Mapping[str, PathLike],
    *,
    encoding: str | None = None,
) -> dict[str, pd.DataFrame]:
    """Read the input tables, checking them against the report's hashes."""
    given = {name: inputs[name] for name in TABLE_NAMES if inputs.get(name)}
    if not given:
        msg = (
            "`--include-values` needs the input tables to look the values up: pass --real (and --synthetic, "
            "--holdout) with the files the report was computed from."
        )
        raise InputError(msg)
    tables = {}
    for name, file in given.items():
        entry = cast("Mapping[str, JSONValue]", report.inputs.get(name) or {})
        recorded = entry.get("sha256")
        if recorded and sha256_file(file) != recorded:
            msg = (
                f"`--{name}` {str(file)!r} is not the file the report was computed from (its SHA-256 differs "
                "from the one recorded in the report); the row positions would point at other records."
            )
            raise InputError(msg)
        tables[name] = read_table(file, name=name, encoding=encoding)
    return tables


def load_run_file(
    path: PathLike,
) -> RunConfig | PetsardConfig | AuditConfig | TablesConfig:
    """Read a YAML run file: synthrisk's layout, a generator audit's, related tables'
    (a ``tables`` block) or PETsARD's."""
    from synthrisk.compat.petsard import is_petsard_layout, parse_petsard

    path = Path(path)
    raw = read_yaml(path)
    if is_petsard_layout(raw):
        return parse_petsard(raw, base=path.parent, source=path)
    if isinstance(raw, Mapping) and "audit" in raw:
        return parse_audit_config(raw, base=path.parent, source=path)
    if isinstance(raw, Mapping) and "tables" in raw:
        return parse_tables_config(raw, base=path.parent, source=path)
    return parse_config(raw, base=path.parent, source=path)


def run_file(
    path: PathLike,
    *,
    html: PathLike | None = None,
    include_values: bool = False,
    top_n: int | None = None,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    progress: bool = False,
    policy: str | None = None,
) -> RunOutcome:
    """Run a YAML run file and write its outputs; the arguments override the file's
    (``policy``, the release policy for copied people, overrides its ``policy:``)."""
    config = load_run_file(path)
    if isinstance(config, AuditConfig):
        return _run_audit_file(config, path, html=html, progress=progress)
    if isinstance(config, TablesConfig):
        return _run_tables_file(
            config,
            path,
            html=html,
            thresholds=thresholds,
            progress=progress,
            policy=policy or config.policy,
        )
    values = include_values or config.include_values
    checked = _thresholds(
        config.thresholds if thresholds is None else thresholds
    ).with_policy(policy or (config.policy if isinstance(config, RunConfig) else None))
    top = config.top_n if top_n is None else top_n
    html_path = Path(html) if html is not None else config.html
    # outputs checked before any work, named as the user gave them
    name = Path(path).name
    block = "report." if isinstance(config, RunConfig) else ""
    check_outputs(
        {
            f"`{block}json` of {name}": config.json,
            "`--html`" if html is not None else f"`{block}html` of {name}": html_path,
            f"`{block}record` of {name}": getattr(config, "record", None),
        }
    )
    if isinstance(config, RunConfig):
        workers = (
            contextlib.nullcontext()
            if config.workers is None
            else config_context(workers=config.workers)
        )
        with workers:
            evaluation = evaluate_files(
                config.real,
                config.synthetic,
                config.holdout,
                metadata=config.metadata,
                metrics=config.metrics,
                seed=config.seed,
                working_memory=config.working_memory,
                backend=config.backend,
                scheduler=config.scheduler,
                sample_rows=config.sample_rows,
                progress=progress,
                thresholds=checked,
                json=config.json,
                html=html_path,
                include_records=config.include_records,
                include_values=values,
                top_n=top,
                encoding=config.encoding,
                self_test=config.self_test,
                params=config.params,
                context=config.context,
                record=config.record,
                command=f"synthrisk run {path}",
            )
        written = tuple(
            p for p in (config.json, html_path, config.record) if p is not None
        )
        return RunOutcome((evaluation,), written, gate=config.gate)
    from synthrisk.compat.petsard import petsard_outputs, run_petsard

    runs = run_petsard(config, progress=progress)
    outputs: dict[Path, str] = {}
    for reporter in config.reporters:
        outputs.update(petsard_outputs(runs, reporter, digits=config.csv_digits))
    many = len(runs) > 1
    evaluations = []
    for run in runs:
        verdict = judge(run.report, checked)
        judged = dataclasses.replace(run.report, verdict=verdict)
        exp = run.experiment
        suffix = f"_{exp.splitter}_{exp.synthesizer}" if many else ""
        if config.json is not None:
            target = config.json.with_name(
                f"{config.json.stem}{suffix}{config.json.suffix}"
            )
            outputs[target] = judged.to_json(
                include_records=config.include_records, include_values=values
            )
        if html_path is not None:
            target = html_path.with_name(f"{html_path.stem}{suffix}{html_path.suffix}")
            outputs[target] = render_html(
                judged,
                thresholds=checked,
                verdict=verdict,
                tables=run.tables,
                include_values=values,
                top_n=top,
                title=f"synthrisk privacy report: {exp.splitter} × {exp.synthesizer}",
                labels=run.evaluator_names,
            )
        evaluations.append(
            FileEvaluation(
                judged,
                verdict,
                run.tables,
                label=f"Splitter {exp.splitter} × Synthesizer {exp.synthesizer}"
                if many
                else None,
                metric_labels=run.evaluator_names,
            )
        )
    paths = tuple(write_texts_atomic(outputs))
    return RunOutcome(tuple(evaluations), paths, config.gate, config.notes)


@dataclasses.dataclass(frozen=True)
class DemoOutcome:
    """The demo's reports by synthetic version, and where it wrote them."""

    reports: Mapping[str, EvaluationReport]
    json: Path
    html: Path | None
    reports_dir: Path
    data_dir: Path


def run_demo(
    out: PathLike, *, n_rows: int = 20_000, seed: int = 0, progress: bool = False
) -> DemoOutcome:
    """Write the demo tables, evaluate every synthetic version and write its reports.

    The HTML reports are written when the report extra is installed.
    """
    from synthrisk.datasets import demo_metrics, load_demo

    out = Path(out)
    check_outputs({"`out`": out / "report.json"})
    with_html = is_available("jinja2") and is_available("matplotlib")
    reporter = as_progress(progress)
    demo = load_demo(n_rows=n_rows, seed=seed)
    data = out / "data"
    write_text_atomic(data / "real.csv", demo.real.to_csv(index=False))
    write_text_atomic(data / "holdout.csv", demo.holdout.to_csv(index=False))
    for name, frame in demo.synthetic.items():
        write_text_atomic(data / f"synthetic_{name}.csv", frame.to_csv(index=False))
    write_text_atomic(data / "metadata.json", _json.dumps(demo.metadata, indent=2))
    reports = {}
    for name, frame in demo.synthetic.items():
        with stage(reporter, f"version {name!r}"):
            report = evaluate(
                demo.real,
                frame,
                demo.holdout,
                metadata=demo.metadata,
                metrics=demo_metrics(),
                seed=seed,
                progress=reporter,
            )
        files = {
            "real": data / "real.csv",
            "synthetic": data / f"synthetic_{name}.csv",
            "holdout": data / "holdout.csv",
        }
        reports[name] = add_provenance(report, files)
        write_text_atomic(out / "reports" / f"{name}.json", reports[name].to_json())
        if with_html:
            title = f"synthrisk demo: the '{name}' synthetic version"
            write_text_atomic(
                out / "reports" / f"{name}.html",
                render_html(reports[name], title=title),
            )
    main_report = reports["partial"]
    json_path = write_text_atomic(out / "report.json", main_report.to_json())
    html_path = None
    if with_html:
        title = "synthrisk demo: the 'partial' synthetic version"
        html_path = write_text_atomic(
            out / "report.html", render_html(main_report, title=title)
        )
    return DemoOutcome(reports, json_path, html_path, out / "reports", data)


#: the synthetic versions of the related-tables demo, the taught one last
TABLES_DEMO_VERSIONS = ("null", "whole_copies", "child_copies")


@dataclasses.dataclass(frozen=True)
class TablesDemoOutcome:
    """The related-tables demo's reports by synthetic version, and where it wrote them."""

    reports: Mapping[str, MultiTableReport]
    json: Path
    html: Path | None
    reports_dir: Path
    data_dir: Path
    config: Path


def run_tables_demo(
    out: PathLike, *, n_people: int = 1000, seed: int = 0
) -> TablesDemoOutcome:
    """Write seeded related tables (a bank), evaluate each synthetic version per person.

    :func:`synthrisk.datasets.relational.load_bank` draws customers → accounts →
    transactions; 20 % of the people are held out. Three synthetic versions are
    evaluated: ``null`` (new people: passes), ``whole_copies`` (5 % of the synthetic
    people are training people with all their rows: fails) and ``child_copies`` (5 %
    of the synthetic customers carry a training person's accounts and transactions:
    every customer row is new, so the customers table passes on its own, yet the
    person level fails — the case that only a per-person evaluation sees). The
    ``child_copies`` report is written as ``report.json`` / ``report.html``; the data
    go to ``out/data`` (one folder per side, one CSV per table, ``metadata.json``)
    with ``out/tables.yaml``, a run file that ``synthrisk run`` evaluates again. The
    HTML reports are written when the report extra is installed.
    """
    from synthrisk.datasets.relational import load_bank
    from synthrisk.relational import evaluate_tables
    from synthrisk.report.tables import render_tables_html

    n_people = check_int(n_people, name="n_people", minimum=50)
    out = Path(out)
    check_outputs({"`out`": out / "report.json"})
    with_html = is_available("jinja2") and is_available("matplotlib")
    bank = load_bank(n_people, seed=seed)
    data = out / "data"
    texts: dict[Path, str] = {}
    sides = {
        "real": bank.real,
        "holdout": bank.holdout,
        **{f"synthetic_{v}": bank.synthetic[v] for v in TABLES_DEMO_VERSIONS},
    }
    for side, tables in sides.items():
        for name, frame in tables.items():
            texts[data / side / f"{name}.csv"] = frame.to_csv(index=False)
    texts[data / "metadata.json"] = _json.dumps(bank.metadata, indent=2) + "\n"
    texts[out / "tables.yaml"] = (
        "# synthrisk run tables.yaml: the demo's 'child_copies' version, judged per person\n"
        "version: 1\n"
        "tables:\n"
        "  real: data/real\n"
        "  synthetic: data/synthetic_child_copies\n"
        "  holdout: data/holdout\n"
        "  metadata: data/metadata.json\n"
        f"seed: {seed}\n"
        "report: {json: rerun/tables.json, html: rerun/tables.html}\n"
        "gate: fail\n"
    )
    write_texts_atomic(texts)
    reports: dict[str, MultiTableReport] = {}
    pages: dict[str, str] = {}
    for version in TABLES_DEMO_VERSIONS:
        report = evaluate_tables(
            bank.real,
            bank.synthetic[version],
            bank.holdout,
            metadata=bank.metadata,
            seed=seed,
        )
        reports[version] = report
        outputs = {out / "reports" / f"{version}.json": report.to_json() + "\n"}
        if with_html:
            pages[version] = render_tables_html(
                report.people,
                report.tables,
                verdict=report.verdict,
                reason=report.reason,
                linkage=report.linkage.to_dict(),
                root=report.root,
                n_people=report.n_people,
                warnings=report.warnings,
            )
            outputs[out / "reports" / f"{version}.html"] = pages[version]
        write_texts_atomic(outputs)
    taught = TABLES_DEMO_VERSIONS[-1]
    json_path = write_text_atomic(out / "report.json", reports[taught].to_json() + "\n")
    html_path = (
        write_text_atomic(out / "report.html", pages[taught]) if with_html else None
    )
    return TablesDemoOutcome(
        reports, json_path, html_path, out / "reports", data, out / "tables.yaml"
    )


@dataclasses.dataclass(frozen=True)
class FileAudit:
    """A generator audit of files: the result, its verdict, what was written.

    Attributes
    ----------
    result : AuditResult
        The audit (:func:`synthrisk.audit.audit`).
    verdict : AuditVerdict or None
        Against ``max_epsilon``; None when none was given (the audit does not gate).
    data : dict
        The JSON written: the result's JSON form with each input file's name and
        SHA-256 (``inputs``) and the verdict (``verdict``).
    written : tuple of Path
        The files written.
    fail_on : {"review", "fail"} or None
        The level that fails the gate (None: ``"fail"``).
    """

    result: AuditResult
    verdict: AuditVerdict | None
    data: dict[str, JSONValue]
    written: tuple[Path, ...]
    fail_on: str | None = None

    def gate_fails(self, fail_on: str | None = None) -> bool:
        """True when the audit's verdict is at or beyond ``fail_on`` (default ``"fail"``:
        it refuted the largest acceptable ε); exit code 1."""
        return self.verdict is not None and self.verdict.fails(
            fail_on or self.fail_on or "fail"
        )


def audit_files(
    real: PathLike,
    holdout: PathLike,
    generator: Any,
    *,
    metadata: PathLike | None = None,
    encoding: str | None = None,
    max_epsilon: float | None = None,
    fail_on: str | None = None,
    json: PathLike | None = None,
    html: PathLike | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> FileAudit:
    """Audit a generator on the tables in files, and write the JSON and HTML pages.

    Parameters
    ----------
    real, holdout : path
        The real training table (targets come from it) and real rows of the same
        population that the targets are not among (the attacker's auxiliary sample):
        CSV, TSV or Parquet, read as :func:`synthrisk.io.read_table` does.
    generator : callable, str or adapter
        As :func:`synthrisk.audit.audit`: a ``fit_sample(train, n, seed)`` callable, a
        command template, or ``"sdv:gaussian_copula"`` and the other SDV names.
    metadata : path, default=None
        Column kinds (SDMetrics or synthrisk metadata, JSON or YAML).
    encoding : str, default=None
        Text encoding of CSV / TSV files.
    max_epsilon : float, default=None
        The largest acceptable ε: the audit fails when its lower bound is above it, and
        reads review when it passes but could not have refuted it (too few runs) or a
        tenth of its runs failed (:meth:`AuditResult.verdict`).
    fail_on : {"review", "fail"}, default=None
        The verdict level that fails the gate (:meth:`FileAudit.gate_fails`); None:
        ``"fail"``.
    json, html : path, default=None
        Where to write the audit's JSON and HTML pages (all-or-nothing).
    progress : callable, default=None
        ``progress(done, n_runs)`` after each shadow run.
    **options
        The other parameters of :func:`synthrisk.audit.audit` (``n_runs``,
        ``n_targets``, ``target_rows``, ``n_jobs``, ``max_seconds``, ``seed``, ...).

    Returns
    -------
    FileAudit
    """
    from synthrisk.audit import audit
    from synthrisk.report.audit import render_audit_html

    files = {"real": real, "holdout": holdout}
    check_outputs({"`json`": json, "`html`": html}, {**files, "metadata": metadata})
    if options.get("cache") is not None:
        check_output_folder("`cache`", options["cache"])
    if max_epsilon is not None:
        # refused before any run: the bound is checked against it at the end
        value: Any = max_epsilon
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not value >= 0
        ):
            msg = f"`max_epsilon` must be a finite number >= 0; got {max_epsilon!r}."
            raise ParameterError(msg)
    if fail_on not in (None, "review", "fail"):
        msg = f"`fail_on` must be 'review' or 'fail'; got {fail_on!r}."
        raise ParameterError(msg)
    tables = {
        name: read_table(path, name=name, encoding=encoding)
        for name, path in files.items()
    }
    result = audit(
        generator,
        tables["real"],
        tables["holdout"],
        metadata=None if metadata is None else read_metadata(metadata),
        progress=progress,
        **options,
    )
    verdict = None if max_epsilon is None else result.verdict(float(max_epsilon))
    data = result.to_dict()
    data["inputs"] = {
        name: {
            "file": Path(path).name,
            "sha256": sha256_file(path),
            "rows": len(tables[name]),
        }
        for name, path in files.items()
    }
    data["verdict"] = None if verdict is None else verdict.to_dict()
    outputs: dict[Path, str] = {}
    if json is not None:
        outputs[Path(json)] = _json.dumps(data, indent=2, allow_nan=False) + "\n"
    if html is not None:
        outputs[Path(html)] = render_audit_html(
            data, verdict=None if verdict is None else verdict.to_dict()
        )
    written = tuple(write_texts_atomic(outputs))
    return FileAudit(result, verdict, data, written, fail_on)


def generator_from_spec(
    spec: str | None,
    command: str | None = None,
    *,
    python: str | None = None,
    params: Mapping[str, Any] | None = None,
    worker: bool = True,
) -> Any:
    """The generator of ``--generator`` / ``audit.generator`` or a command template.

    ``spec`` is ``sdv:NAME``, a named generator (``synthpop:cart``, ``dpmm:mst``, ...:
    :data:`synthrisk.audit.NAMED_GENERATORS`) or ``module:function``, a Python callable
    ``fit_sample(train, n, seed)`` imported from the Python path; ``command`` a template
    run in its own process (:class:`synthrisk.audit.CommandGenerator`). With ``python``,
    another interpreter runs ``spec`` (:class:`synthrisk.audit.PythonGenerator`), as a
    persistent worker per job slot unless ``worker`` is False (a fresh interpreter per
    run). ``params`` are the generator's keyword arguments.

    Raises
    ------
    ParameterError
        For a spec that names nothing importable.
    """
    from synthrisk.audit import (
        NAMED_GENERATORS,
        CommandGenerator,
        NamedGenerator,
        PythonGenerator,
        SDVGenerator,
    )

    params = dict(params or {})
    if command is not None:
        if python is not None or params:
            msg = "a command template takes no `--generator-python` or generator parameters."
            raise ParameterError(msg)
        return CommandGenerator(command)
    if spec is None:
        msg = "give a generator: sdv:NAME, module:function, or a command template."
        raise ParameterError(msg)
    if python is not None:
        return PythonGenerator(python, spec, params=params, worker=worker)
    if spec in NAMED_GENERATORS:
        return NamedGenerator(spec, params)
    if spec.lower().startswith("sdv:"):
        return SDVGenerator(spec[4:].lower(), params) if params else spec
    module_name, colon, name = spec.partition(":")
    if not (colon and module_name and name):
        msg = (
            f"`generator` must be sdv:NAME or module:function (a Python callable "
            f"fit_sample(train, n, seed)); got {spec!r}."
        )
        raise ParameterError(msg)
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        msg = f"generator {spec!r}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?"
        raise ParameterError(msg) from None
    function = getattr(module, name, None)
    if not callable(function):
        msg = f"generator {spec!r}: {module_name!r} has no callable {name!r}."
        raise ParameterError(msg)
    if params:
        import functools

        return functools.partial(function, **params)
    return function


def _report_html(
    json: Path | None, html: Path | None, path: PathLike, override: PathLike | None
) -> Path | None:
    """The run file's HTML path (``--html`` overrides it), both outputs checked first."""
    html_path = Path(override) if override is not None else html
    name = Path(path).name
    check_outputs(
        {
            f"`report.json` of {name}": json,
            "`--html`"
            if override is not None
            else f"`report.html` of {name}": html_path,
        }
    )
    return html_path


def _run_audit_file(
    config: AuditConfig,
    path: PathLike,
    *,
    html: PathLike | None,
    progress: bool | Callable[[int, int], None],
) -> RunOutcome:
    """A run file in the generator audit's layout (``--html`` overrides ``report.html``)."""
    html_path = _report_html(config.json, config.html, path, html)
    outcome = audit_files(
        config.real,
        config.holdout,
        generator_from_spec(
            config.generator,
            config.generator_cmd,
            python=config.generator_python,
            params=config.generator_params,
        ),
        metadata=config.metadata,
        encoding=config.encoding,
        max_epsilon=config.max_epsilon,
        fail_on=config.fail_on,
        json=config.json,
        html=html_path,
        progress=progress if callable(progress) else None,
        **dict(config.options),
    )
    return RunOutcome((), outcome.written, audits=(outcome,))


def _run_tables_file(
    config: TablesConfig,
    path: PathLike,
    *,
    html: PathLike | None,
    thresholds: Thresholds | Mapping[str, Any] | None,
    progress: bool = False,
    policy: str | None = None,
) -> RunOutcome:
    """A run file of related tables (``--html`` / ``--thresholds`` override the file's)."""
    html_path = _report_html(config.json, config.html, path, html)
    report = evaluate_table_files(
        config.real,
        config.synthetic,
        config.holdout,
        metadata=config.metadata,
        root=config.root,
        metrics=config.metrics,
        table_metrics=config.table_metrics,
        seed=config.seed,
        thresholds=config.thresholds if thresholds is None else thresholds,
        json=config.json,
        html=html_path,
        scheduler=config.scheduler,
        table_people=config.table_people,
        working_memory=config.working_memory,
        backend=config.backend,
        progress=progress,
        policy=policy,
    )
    written = tuple(p for p in (config.json, html_path) if p is not None)
    return RunOutcome((), written, gate=config.gate, table_reports=(report,))


def evaluate_table_files(
    real: PathLike,
    synthetic: PathLike,
    holdout: PathLike | None = None,
    *,
    metadata: PathLike,
    root: str | None = None,
    metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None] | None = None,
    table_metrics: Sequence[str] | Mapping[str, Mapping[str, Any] | None] | None = None,
    seed: int = 0,
    thresholds: Thresholds | Mapping[str, Any] | None = None,
    json: PathLike | None = None,
    html: PathLike | None = None,
    scheduler: str | None = None,
    table_people: int | None = 20_000,
    working_memory: float | None = None,
    backend: Backend | None = None,
    progress: bool = False,
    policy: str | None = None,
) -> MultiTableReport:
    """Evaluate related tables in folders, judged per person, and write the reports.

    Parameters
    ----------
    real, synthetic, holdout : path
        Folders with one file per table (``customers.csv``, ``accounts.parquet`` …),
        read by :func:`synthrisk.relational.read_tables`.
    metadata : path
        SDV's multi-table or sequential metadata (JSON).
    root : str, default=None
        The table whose rows are people (None: the one no table refers up from).
    metrics, table_metrics : list of ids or dict id -> params, default=None
        Metrics of the person level and of each table (None: the defaults of
        :func:`synthrisk.relational.evaluate_tables`; ``[]`` skips the tables).
    seed : int, default=0
        Seed of every random step.
    thresholds : Thresholds or dict, default=None
        Verdict thresholds.
    json, html : path, default=None
        Where to write the JSON and HTML reports (all-or-nothing); the HTML page gives
        the person-level verdict first, then the linkage attack, then each table.
    scheduler : str, default=None
        A Dask scheduler's address: the metrics run on that cluster.
    table_people : int, default=20000
        People of each side whose rows the per-table metrics use (None: all).
    working_memory : float, default=None
        MiB budget of blocked computations.
    backend : str, default=None
        Neighbour-search backend.
    progress : bool, default=False
        Show progress on standard error.
    policy : {"statistical", "strict"} or None, default=None
        The release policy for copied people (None: the thresholds' own).

    Returns
    -------
    MultiTableReport
    """
    from synthrisk.relational import evaluate_tables, load_metadata, read_tables
    from synthrisk.report.tables import render_tables_html

    folders = {"real": real, "synthetic": synthetic, "holdout": holdout}
    if policy is not None:
        thresholds = _thresholds(thresholds).with_policy(policy)
    check_outputs({"`json`": json, "`html`": html}, {"metadata": metadata})
    meta = load_metadata(metadata)
    frames = {
        name: read_tables(path, name=name)
        for name, path in folders.items()
        if path is not None
    }
    report = evaluate_tables(
        frames["real"],
        frames["synthetic"],
        frames.get("holdout"),
        metadata=meta,
        root=root,
        metrics=metrics,
        table_metrics=table_metrics,
        seed=seed,
        thresholds=thresholds,
        scheduler=scheduler,
        table_people=table_people,
        working_memory=working_memory,
        backend=backend,
        progress=progress,
    )
    outputs: dict[Path, str] = {}
    if json is not None:
        outputs[Path(json)] = report.to_json() + "\n"
    if html is not None:
        outputs[Path(html)] = render_tables_html(
            report.people,
            report.tables,
            verdict=report.verdict,
            reason=report.reason,
            linkage=report.linkage.to_dict(),
            root=report.root,
            n_people=report.n_people,
            warnings=report.warnings,
        )
    write_texts_atomic(outputs)
    return report
