# SPDX-License-Identifier: BSD-3-Clause
"""The native YAML configuration of ``synthrisk run``.

.. code-block:: yaml

    version: 1
    data: {real: real.csv, synthetic: synthetic.csv, holdout: holdout.csv, metadata: metadata.json,
           encoding: utf-8}  # encoding: of CSV / TSV files (default utf-8)
    seed: 0
    metrics:
      dcr_baseline_protection: {}
      dcr_overfitting_protection: {num_rows_subsample: null}
    params: {inference: {n_attacks: all}}   # parameters of metrics of the run; without
                                            # `metrics`, of the full assessment (the rest kept)
    compute: {working_memory: 256, backend: auto, workers: auto}   # or {backend: dask, scheduler: tcp://host:8786, sample_rows: 50000}
    report: {json: out/report.json, html: out/report.html, include_records: false,
             include_values: false, top_n: 20}
    thresholds: {singling_out: {pass: 0.05, fail: 0.1}, conservative: false}
    gate: review          # exit code 1 unless the overall verdict is pass ("fail": when it is fail)
    policy: statistical   # or strict: any synthetic row that copies a training person fails
    self_test: false      # true: the known-leak self-test (needs a holdout)
    context: {purpose: teaching, recipient: university course, release_model: public,
              attacker_knows: [age, sex, zip], population_share: 0.01, assessor: A. Officer,
              reassess_by: 2027-06-01}   # the release context (docs/record.md); or a file's path
    # report: {record: out/record.pdf}   the anonymisation record (HTML, or PDF via Chromium)

A generator audit (:func:`synthrisk.audit.audit`, ``synthrisk audit``) has its own layout,
told apart by its ``audit`` block:

.. code-block:: yaml

    version: 1
    data: {real: real.csv, holdout: holdout.csv, metadata: metadata.json}
    seed: 0
    audit: {generator: "sdv:gaussian_copula", targets: 10, target_rows: [3, 17], canaries: 10,
            runs: 200, budget: 30m, jobs: 2, max_epsilon: 1.0}   # or generator_cmd: "gen ..."
    report: {json: out/audit.json, html: out/audit.html}

The ``audit`` block also takes ``generator_python`` (another interpreter that runs
``generator``: ``module:function`` or a named generator such as ``dpmm:mst``),
``generator_params`` (the generator's keyword arguments), ``run_timeout`` (``2h``,
``90s``, seconds or ``none``), ``cache`` (a folder of earlier runs' outputs),
and ``scheduler`` (a Dask scheduler's address for the shadow runs); a top-level ``gate``
(``review`` or ``fail``) is the verdict that fails the gate, with ``max_epsilon``.

Related tables judged per person (:func:`synthrisk.relational.evaluate_tables`,
``synthrisk evaluate-tables``) have theirs, told apart by its ``tables`` block:

.. code-block:: yaml

    version: 1
    tables: {real: data/real, synthetic: data/synthetic, holdout: data/holdout,
             metadata: metadata.json, root: customers}   # folders: one file per table
    metrics: [identification, dcr_share]      # of the person level (default: PERSON_METRICS)
    table_metrics: []                         # of each table (default: TABLE_METRICS)
    table_people: 20000                       # people per side in the per-table metrics, or all
    compute: {backend: auto, working_memory: 256}   # or {scheduler: tcp://host:8786}
    seed: 0
    thresholds: {identification: {pass: 0.05, fail: 0.1}}
    report: {json: out/tables.json, html: out/tables.html}
    gate: fail
    policy: strict                            # the release policy (default statistical)

Paths are relative to the configuration file. Unknown keys are errors that list the
allowed keys; metric parameters are checked by the metrics themselves, so the API and
the YAML give the same messages. A file in PETsARD's layout (top-level ``Splitter``,
``Synthesizer``, ``Evaluator``, ``Reporter``) is read by :mod:`synthrisk.compat.petsard`;
:func:`synthrisk.pipeline.load_run_file` reads either layout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synthrisk._typing import Backend
from synthrisk.context import ReleaseContext
from synthrisk.exceptions import ConfigError, ParameterError, SynthriskError
from synthrisk.metrics import get_metric, suggest
from synthrisk.settings import Workers, check_compute, check_workers

__all__ = [
    "AuditConfig",
    "RunConfig",
    "TablesConfig",
    "check_gate",
    "check_policy",
    "check_report_options",
    "check_thresholds",
    "load_config",
    "parse_audit_config",
    "parse_budget",
    "parse_config",
    "parse_seconds",
    "parse_tables_config",
    "read_context",
    "read_yaml",
    "yaml_error_text",
]

_TOP = (
    "version",
    "data",
    "seed",
    "metrics",
    "params",
    "compute",
    "report",
    "thresholds",
    "gate",
    "policy",
    "self_test",
    "context",
)
_DATA = ("real", "synthetic", "holdout", "metadata", "encoding")
_COMPUTE = ("working_memory", "backend", "scheduler", "sample_rows", "workers")
_REPORT = ("json", "html", "include_records", "include_values", "top_n", "record")
_AUDIT_TOP = ("version", "data", "seed", "audit", "report", "gate")
_AUDIT_DATA = ("real", "holdout", "metadata", "encoding")
#: the ``audit`` block's keys -> the parameters of :func:`synthrisk.audit.audit`
AUDIT_OPTIONS = {
    "targets": "n_targets",
    "target_rows": "target_rows",
    "canaries": "n_canaries",
    "runs": "n_runs",
    "train_size": "train_size",
    "rows": "n_synthetic",
    "attacks": "attacks",
    "classifier": "classifier",
    "delta": "delta",
    "confidence": "confidence_level",
    "jobs": "n_jobs",
}
_AUDIT = (
    "generator",
    "generator_cmd",
    "generator_python",
    "generator_params",
    "budget",
    "run_timeout",
    "cache",
    "scheduler",
    "max_epsilon",
    *AUDIT_OPTIONS,
)
_TABLES_TOP = (
    "version",
    "tables",
    "seed",
    "metrics",
    "table_metrics",
    "table_people",
    "thresholds",
    "compute",
    "report",
    "gate",
    "policy",
)
_TABLES_COMPUTE = ("working_memory", "backend", "scheduler")
#: ``synthrisk.relational.TABLE_PEOPLE`` (not imported: reading a run file stays light)
TABLE_PEOPLE = 20_000
_TABLES = ("real", "synthetic", "holdout", "metadata", "root")
_TIME_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


def parse_budget(value: Any, name: str) -> tuple[float | None, int | None]:
    """An audit's budget: ``(seconds, None)`` for ``90s`` / ``30m`` / ``2h``, ``(None, runs)`` for a number.

    Raises
    ------
    ParameterError
        For anything else; the message names ``name``.
    """
    if value is None:
        return None, None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return None, value
    text = str(value).strip().lower()
    try:
        if text[-1:] in _TIME_UNITS:
            seconds = float(text[:-1]) * _TIME_UNITS[text[-1]]
            if 0 < seconds < float("inf"):
                return seconds, None
        elif text.isdecimal() and int(text) >= 1:
            return None, int(text)
    except ValueError:
        pass
    msg = (
        f"{name} must be a time (90s, 30m, 2h) or a number of runs >= 1; got {value!r}."
    )
    raise ParameterError(msg)


def parse_seconds(value: Any, name: str) -> float | None:
    """A duration: ``90s`` / ``30m`` / ``2h`` or a number of seconds; None for ``none``.

    Raises
    ------
    ParameterError
        For anything else; the message names ``name``.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if 0 < value < float("inf"):
            return float(value)
    else:
        text = str(value).strip().lower()
        try:
            number = (
                float(text[:-1]) * _TIME_UNITS[text[-1]]
                if text[-1:] in _TIME_UNITS
                else float(text)
            )
        except ValueError:
            number = float("nan")
        if 0 < number < float("inf"):
            return number
    msg = f"{name} must be a time (90s, 30m, 2h, or seconds) or none; got {value!r}."
    raise ParameterError(msg)


@dataclasses.dataclass(frozen=True)
class AuditConfig:
    """A parsed generator-audit configuration (paths already resolved).

    ``generator`` is the spec as written (``sdv:NAME``, a named generator such as
    ``dpmm:mst``, or ``module:function``) and ``generator_cmd`` a command template;
    exactly one is set. ``generator_python`` is another interpreter that runs
    ``generator``, ``generator_params`` the generator's keyword arguments. ``options``
    holds the other parameters of :func:`synthrisk.audit.audit` by their API names.
    """

    real: Path
    holdout: Path
    generator: str | None = None
    generator_cmd: str | None = None
    generator_python: str | None = None
    generator_params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    metadata: Path | None = None
    encoding: str | None = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    max_epsilon: float | None = None
    fail_on: str | None = None
    json: Path | None = None
    html: Path | None = None
    source: Path | None = None


@dataclasses.dataclass(frozen=True)
class TablesConfig:
    """A parsed configuration of related tables judged per person (paths resolved).

    ``real``, ``synthetic`` and ``holdout`` are folders holding one file per table;
    ``metrics`` and ``table_metrics`` map metric ids to parameters (None: the defaults
    of :func:`synthrisk.relational.evaluate_tables`; an empty ``table_metrics`` skips
    the per-table reports).
    """

    real: Path
    synthetic: Path
    metadata: Path
    holdout: Path | None = None
    root: str | None = None
    seed: int = 0
    metrics: Mapping[str, Mapping[str, Any]] | None = None
    table_metrics: Mapping[str, Mapping[str, Any]] | None = None
    table_people: int | None = TABLE_PEOPLE
    thresholds: Mapping[str, Any] | None = None
    working_memory: float | None = None
    backend: Backend | None = None
    scheduler: str | None = None
    json: Path | None = None
    html: Path | None = None
    gate: str | None = None
    source: Path | None = None
    policy: str | None = None


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A parsed run configuration (paths already resolved)."""

    real: Path
    synthetic: Path
    holdout: Path | None = None
    metadata: Path | None = None
    encoding: str | None = None
    seed: int = 0
    metrics: Mapping[str, Mapping[str, Any]] | None = None
    working_memory: float | None = None
    backend: Backend | None = None
    scheduler: str | None = None
    sample_rows: int | None = None
    workers: Workers | None = None
    json: Path | None = None
    include_records: bool = False
    html: Path | None = None
    include_values: bool = False
    top_n: int = 20
    thresholds: Mapping[str, Any] | None = None
    gate: str | None = None
    source: Path | None = None
    self_test: bool = False
    policy: str | None = None
    params: Mapping[str, Mapping[str, Any]] | None = None
    context: ReleaseContext | None = None
    record: Path | None = None


def _scheduler(value: Any, where: str, key: str = "compute.scheduler") -> str | None:
    if value is None or isinstance(value, str):
        return value
    msg = f"{where}: `{key}` must be a Dask scheduler address such as 'tcp://host:8786'; got {value!r}."
    raise ConfigError(msg)


def _workers(value: Any, where: str) -> Workers | None:
    if value is None:
        return None
    try:
        return check_workers(value, name="compute.workers")
    except ParameterError as exc:
        msg = f"{where}: {exc}"
        raise ConfigError(msg) from None


def _sample_rows(value: Any, where: str) -> int | None:
    if value is None or (
        isinstance(value, int) and not isinstance(value, bool) and value >= 1
    ):
        return value
    msg = f"{where}: `compute.sample_rows` must be a positive whole number of rows; got {value!r}."
    raise ConfigError(msg)


def _table_people(value: Any, where: str) -> int | None:
    """``table_people``: a whole number of at least 10 people, or ``all`` (None)."""
    if isinstance(value, str) and value.strip().lower() == "all":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10:
        return value
    msg = (
        f"{where}: `table_people` must be a whole number of people (at least 10) per side "
        f"for the per-table metrics, or `all`; got {value!r}."
    )
    raise ConfigError(msg)


def _check_keys(
    section: Any, allowed: tuple[str, ...], where: str
) -> Mapping[str, Any]:
    if not isinstance(section, Mapping):
        msg = f"{where} must be a mapping with keys {list(allowed)}; got {section!r}."
        raise ConfigError(msg)
    unknown = sorted(set(map(str, section)) - set(allowed))
    if unknown:
        hints = "".join(suggest(key, allowed) for key in unknown)
        msg = f"{where} has unknown keys {unknown}; allowed keys are {list(allowed)}.{hints}"
        raise ConfigError(msg)
    return section


def check_thresholds(value: Any, where: str) -> Mapping[str, Any] | None:
    """Validate a ``thresholds:`` mapping (values in [0, 1], known keys); returns it."""
    if value is None:
        return None
    from synthrisk.report.verdict import Thresholds

    try:
        Thresholds.from_dict(value)
    except SynthriskError as exc:
        msg = f"{where}: {exc}"
        raise ConfigError(msg) from None
    return dict(value)


def check_gate(value: Any, where: str) -> str | None:
    """Validate ``gate:`` (``review``, ``fail`` or null); the message names ``gate``."""
    if value is None:
        return None
    if isinstance(value, str) and value in ("review", "fail"):
        return value
    msg = (
        f"{where}: `gate` must be 'review' or 'fail' (or left out for no gate); got {value!r}. "
        "'review' fails the gate (exit code 1) unless the overall verdict is pass; "
        "'fail' only when it is fail."
    )
    raise ConfigError(msg)


def check_policy(
    value: Any, thresholds: Mapping[str, Any] | None, where: str
) -> str | None:
    """Validate a top-level ``policy:`` (``statistical``, ``strict`` or null).

    The message names ``policy`` and its allowed values; a ``policy`` under
    ``thresholds`` that says otherwise is an error too (give it once).
    """
    from synthrisk.verdict import POLICIES

    if value is None:
        return None
    if not isinstance(value, str) or value not in POLICIES:
        msg = (
            f"{where}: `policy` must be one of {list(POLICIES)} (or left out for "
            f"statistical); got {value!r}. statistical: the holdout-controlled gates, and "
            "copied people beyond what chance explains read review; strict: any synthetic "
            "row that copies a training person's record fails."
        )
        raise ConfigError(msg)
    inner = (thresholds or {}).get("policy")
    if inner is not None and inner != value:
        msg = (
            f"{where}: `policy: {value}` and `thresholds.policy: {inner}` disagree; give the "
            "release policy once, as the top-level `policy`."
        )
        raise ConfigError(msg)
    return value


def check_report_options(report: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validate the flags of a ``report:`` block; returns them with defaults."""
    out: dict[str, Any] = {}
    for key in ("include_records", "include_values"):
        value = report.get(key, False)
        if not isinstance(value, bool):
            msg = f"{where}: `report.{key}` must be true or false; got {value!r}."
            raise ConfigError(msg)
        out[key] = value
    top_n = report.get("top_n", 20)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        msg = f"{where}: `report.top_n` must be an integer >= 1; got {top_n!r}."
        raise ConfigError(msg)
    out["top_n"] = top_n
    return out


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file (``yaml.safe_load``); a missing or invalid file is a ConfigError."""
    import yaml

    path = Path(path)
    if not path.is_file():
        msg = f"the configuration file {str(path)!r} does not exist."
        raise ConfigError(msg)
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        msg = f"{path}: not valid YAML: {yaml_error_text(exc)}"
        raise ConfigError(msg) from None
    except UnicodeDecodeError as exc:
        msg = f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8."
        raise ConfigError(msg) from None


def yaml_error_text(exc: Exception) -> str:
    """A YAML parser error on one line: the problem and where it is."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem is None:
        return " ".join(str(exc).split())
    where = "" if mark is None else f" (line {mark.line + 1}, column {mark.column + 1})"
    if "\t" in problem or "'\\t'" in problem:
        where += "; YAML indents with spaces, not tabs"
    return f"{problem}{where}"


def load_config(path: str | Path) -> RunConfig:
    """Read and validate a run file in synthrisk's layout.

    :func:`synthrisk.pipeline.load_run_file` also reads PETsARD's layout.
    """
    path = Path(path)
    return parse_config(read_yaml(path), base=path.parent, source=path)


def parse_config(raw: Any, *, base: Path, source: Path | None = None) -> RunConfig:
    """Validate a configuration mapping; relative paths are resolved against ``base``."""
    where = str(source) if source else "config"
    raw = _check_keys(raw, _TOP, where)
    version = raw.get("version", 1)
    if version != 1:
        msg = f"{where}: `version` must be 1; got {version!r}."
        raise ConfigError(msg)
    data = _check_keys(raw.get("data"), _DATA, f"{where}: `data`")
    for key in ("real", "synthetic"):
        if not data.get(key):
            msg = f"{where}: `data.{key}` is required (a CSV or Parquet path)."
            raise ConfigError(msg)

    def resolve(value: Any, key: str) -> Path | None:
        return _path(value, key, base, where)

    metrics = _metrics(raw.get("metrics"), "metrics", where)
    params = _params(raw.get("params"), metrics, where)
    compute = _check_keys(raw.get("compute") or {}, _COMPUTE, f"{where}: `compute`")
    report = _check_keys(raw.get("report") or {}, _REPORT, f"{where}: `report`")
    flags = check_report_options(report, where)
    thresholds = check_thresholds(raw.get("thresholds"), f"{where}: `thresholds`")
    gate = check_gate(raw.get("gate"), where)
    policy = check_policy(raw.get("policy"), thresholds, where)
    seed = _seed(raw, where)
    self_test = raw.get("self_test", False)
    if not isinstance(self_test, bool):
        msg = f"{where}: `self_test` must be true or false; got {self_test!r}."
        raise ConfigError(msg)
    if self_test and not data.get("holdout"):
        msg = (
            f"{where}: `self_test: true` needs `data.holdout` (real rows the generator never "
            "saw): without one the verdict is always review, so there is no detection power "
            "to measure."
        )
        raise ConfigError(msg)
    return RunConfig(
        real=resolve(data["real"], "data.real"),  # type: ignore[arg-type]
        synthetic=resolve(data["synthetic"], "data.synthetic"),  # type: ignore[arg-type]
        holdout=resolve(data.get("holdout"), "data.holdout"),
        metadata=resolve(data.get("metadata"), "data.metadata"),
        encoding=_check_encoding(data.get("encoding"), where),
        seed=seed,
        metrics=metrics,
        params=params,
        working_memory=compute.get("working_memory"),
        backend=compute.get("backend"),
        scheduler=_scheduler(compute.get("scheduler"), where),
        sample_rows=_sample_rows(compute.get("sample_rows"), where),
        workers=_workers(compute.get("workers"), where),
        json=resolve(report.get("json"), "report.json"),
        include_records=flags["include_records"],
        html=resolve(report.get("html"), "report.html"),
        include_values=flags["include_values"],
        top_n=flags["top_n"],
        thresholds=thresholds,
        gate=gate,
        source=source,
        self_test=self_test,
        policy=policy,
        context=_context(raw.get("context"), base, where),
        record=resolve(report.get("record"), "report.record"),
    )


def read_context(path: str | Path) -> ReleaseContext:
    """Read a release context from a YAML or JSON file (a mapping of its fields).

    Raises
    ------
    ConfigError
        A missing or invalid file, an unknown key or a bad value (the message names
        the file).
    """
    raw = read_yaml(path)
    try:
        return ReleaseContext.from_value(raw)
    except ParameterError as exc:
        msg = f"{path}: {exc}"
        raise ConfigError(msg) from None


def _context(value: Any, base: Path, where: str) -> ReleaseContext | None:
    """A run file's ``context:``: a mapping of its fields, or the path of a file of them."""
    if value is None:
        return None
    if isinstance(value, str):
        return read_context(base / value)
    try:
        return ReleaseContext.from_value(value)
    except ParameterError as exc:
        msg = f"{where}: {exc}"
        raise ConfigError(msg) from None


def _params(
    params: Any, metrics: Mapping[str, Any] | None, where: str
) -> dict[str, dict[str, Any]] | None:
    """A ``params:`` block: parameters of metrics of the run (the full assessment's without ``metrics``)."""
    if params is None:
        return None
    if not isinstance(params, Mapping) or not all(
        isinstance(v, Mapping) or v is None for v in params.values()
    ):
        msg = (
            f"{where}: `params` must map metric ids to parameter mappings, e.g. "
            f"`params: {{inference: {{n_attacks: all}}}}`; got {params!r}."
        )
        raise ConfigError(msg)
    checked = _metrics(params, "params", where) or {}
    for metric_id in checked:
        in_run = (
            get_metric(metric_id).runs_by_default
            if metrics is None
            else metric_id in metrics
        )
        if not in_run:
            run = "the full assessment" if metrics is None else "`metrics`"
            msg = (
                f"{where}: `params.{metric_id}` sets parameters of a metric that {run} does not "
                f"run; add {metric_id!r} to `metrics` (with its parameters there)."
            )
            raise ConfigError(msg)
    return checked


def _metrics(metrics: Any, key: str, where: str) -> dict[str, dict[str, Any]] | None:
    """A ``metrics:`` block (a list of ids, or ids mapped to parameters), each checked."""
    if metrics is None:
        return None
    if isinstance(metrics, list):
        if not all(isinstance(m, str) for m in metrics):
            msg = f"{where}: `{key}` must list metric ids or map them to parameter mappings; got {metrics!r}."
            raise ConfigError(msg)
        metrics = {m: {} for m in metrics}
    if not isinstance(metrics, Mapping):
        msg = f"{where}: `{key}` must map metric ids to parameter mappings; got {metrics!r}."
        raise ConfigError(msg)
    checked = {}
    for metric_id, params in metrics.items():
        params = {} if params is None else params
        if not isinstance(params, Mapping):
            msg = f"{where}: parameters of metric {metric_id!r} must be a mapping; got {params!r}."
            raise ConfigError(msg)
        try:
            cls = get_metric(str(metric_id))
            # an old parameter name warns once, here, and is stored under its new name
            params = cls.rename_params(params)
            cls.from_params(params)
        except SynthriskError as exc:
            name = f"{key}.{metric_id}"
            if exc.parameter is not None:
                name += f".{exc.parameter}"
            msg = f"{where}: `{name}`: {exc.detail or exc}"
            raise ConfigError(msg) from None
        checked[str(metric_id)] = dict(params)
    return checked


def _check_encoding(value: Any, where: str) -> str | None:
    """``data.encoding``: None or the name of a known text encoding."""
    if value is None:
        return None
    import codecs

    try:
        codecs.lookup(value)
    except (LookupError, TypeError):
        msg = (
            f"{where}: `data.encoding` must name a text encoding such as utf-8, latin-1 or "
            f"cp1252; got {value!r}."
        )
        raise ConfigError(msg) from None
    return str(value)


def _seed(raw: Mapping[str, Any], where: str) -> int:
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        msg = f"{where}: `seed` must be a non-negative integer; got {seed!r}."
        raise ConfigError(msg)
    return seed


def _path(value: Any, key: str, base: Path, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"{where}: `{key}` must be a path string; got {value!r}."
        raise ConfigError(msg)
    p = Path(value)
    return p if p.is_absolute() else base / p


def parse_audit_config(
    raw: Any, *, base: Path, source: Path | None = None
) -> AuditConfig:
    """Validate a generator-audit configuration; relative paths are resolved against ``base``."""
    where = str(source) if source else "config"
    raw = _check_keys(raw, _AUDIT_TOP, where)
    if raw.get("version", 1) != 1:
        msg = f"{where}: `version` must be 1; got {raw.get('version')!r}."
        raise ConfigError(msg)
    data = _check_keys(raw.get("data"), _AUDIT_DATA, f"{where}: `data`")
    for key in ("real", "holdout"):
        if not data.get(key):
            msg = f"{where}: `data.{key}` is required (a CSV or Parquet path)."
            raise ConfigError(msg)
    block = _check_keys(raw.get("audit"), _AUDIT, f"{where}: `audit`")
    generator, command = block.get("generator"), block.get("generator_cmd")
    if (generator is None) == (command is None) or not isinstance(
        generator if command is None else command, str
    ):
        msg = (
            f"{where}: `audit` needs exactly one of `generator` (sdv:NAME or module:function) "
            "and `generator_cmd` (a command template with {train}, {out}, {n}, {seed})."
        )
        raise ConfigError(msg)
    report = _check_keys(
        raw.get("report") or {}, ("json", "html"), f"{where}: `report`"
    )
    seed = _seed(raw, where)
    try:
        seconds, runs = parse_budget(block.get("budget"), f"{where}: `audit.budget`")
    except ParameterError as exc:
        raise ConfigError(str(exc)) from None
    options: dict[str, Any] = {
        AUDIT_OPTIONS[key]: value
        for key, value in block.items()
        if key in AUDIT_OPTIONS
    }
    options["seed"] = seed
    options["max_seconds"] = seconds
    if runs is not None:
        options["n_runs"] = min(int(options.get("n_runs", runs)), runs)
    try:
        options["run_timeout"] = parse_seconds(
            block.get("run_timeout"), f"{where}: `audit.run_timeout`"
        )
    except ParameterError as exc:
        raise ConfigError(str(exc)) from None
    if block.get("cache") is not None:
        options["cache"] = _path(block["cache"], "audit.cache", base, where)
    if block.get("scheduler") is not None:
        options["scheduler"] = _scheduler(block["scheduler"], where, "audit.scheduler")
    python, params = block.get("generator_python"), block.get("generator_params") or {}
    if python is not None and (command is not None or not isinstance(python, str)):
        msg = (
            f"{where}: `audit.generator_python` (another interpreter's path) runs "
            "`generator` (module:function or a named generator), not `generator_cmd`."
        )
        raise ConfigError(msg)
    if not isinstance(params, Mapping) or (command is not None and params):
        msg = f"{where}: `audit.generator_params` must be a mapping of the generator's keyword arguments (not with `generator_cmd`)."
        raise ConfigError(msg)
    if (
        python is not None
        and not Path(python).is_absolute()
        and (base / python).exists()
    ):
        python = str(base / python)
    max_epsilon = block.get("max_epsilon")
    if max_epsilon is not None and (
        isinstance(max_epsilon, bool)
        or not isinstance(max_epsilon, (int, float))
        or not max_epsilon >= 0
    ):
        msg = (
            f"{where}: `audit.max_epsilon` must be a number >= 0; got {max_epsilon!r}."
        )
        raise ConfigError(msg)
    return AuditConfig(
        real=_path(data["real"], "data.real", base, where),  # type: ignore[arg-type]
        holdout=_path(data["holdout"], "data.holdout", base, where),  # type: ignore[arg-type]
        generator=generator,
        generator_cmd=command,
        generator_python=python,
        generator_params=dict(params),
        metadata=_path(data.get("metadata"), "data.metadata", base, where),
        encoding=_check_encoding(data.get("encoding"), where),
        options=options,
        max_epsilon=None if max_epsilon is None else float(max_epsilon),
        fail_on=check_gate(raw.get("gate"), where),
        json=_path(report.get("json"), "report.json", base, where),
        html=_path(report.get("html"), "report.html", base, where),
        source=source,
    )


def parse_tables_config(
    raw: Any, *, base: Path, source: Path | None = None
) -> TablesConfig:
    """Validate a configuration of related tables; relative paths are resolved against ``base``.

    The folders (``tables.real``, ``tables.synthetic``, ``tables.holdout``) and the
    metadata file must exist; each error names its key and the fix.
    """
    where = str(source) if source else "config"
    raw = _check_keys(raw, _TABLES_TOP, where)
    if raw.get("version", 1) != 1:
        msg = f"{where}: `version` must be 1; got {raw.get('version')!r}."
        raise ConfigError(msg)
    block = _check_keys(raw.get("tables"), _TABLES, f"{where}: `tables`")
    for key in ("real", "synthetic", "metadata"):
        if not block.get(key):
            what = (
                "the path of SDV's multi-table or sequential metadata (JSON)"
                if key == "metadata"
                else "a folder holding one CSV or Parquet file per table"
            )
            msg = f"{where}: `tables.{key}` is required ({what})."
            raise ConfigError(msg)
    folders: dict[str, Path | None] = {}
    for key in ("real", "synthetic", "holdout"):
        path = _path(block.get(key), f"tables.{key}", base, where)
        if path is not None and not path.is_dir():
            msg = (
                f"{where}: `tables.{key}`: the folder {str(path)!r} does not exist; give a "
                "folder holding one CSV or Parquet file per table (relative paths start "
                "at the configuration file)."
            )
            raise ConfigError(msg)
        folders[key] = path
    metadata = _path(block["metadata"], "tables.metadata", base, where)
    assert metadata is not None
    if not metadata.is_file():
        msg = (
            f"{where}: `tables.metadata`: the file {str(metadata)!r} does not exist; give "
            "the path of SDV's multi-table or sequential metadata (JSON)."
        )
        raise ConfigError(msg)
    root = block.get("root")
    if root is not None and not isinstance(root, str):
        msg = f"{where}: `tables.root` must name the table whose rows are people; got {root!r}."
        raise ConfigError(msg)
    report = _check_keys(
        raw.get("report") or {}, ("json", "html"), f"{where}: `report`"
    )
    compute = _check_keys(
        raw.get("compute") or {}, _TABLES_COMPUTE, f"{where}: `compute`"
    )
    try:
        memory, backend = check_compute(
            compute.get("working_memory"), compute.get("backend")
        )
    except (
        ParameterError
    ) as exc:  # "`backend` must ..." -> "`compute.backend` must ..."
        raise ConfigError(
            f"{where}: " + str(exc).replace("`", "`compute.", 1)
        ) from None
    assert folders["real"] is not None
    assert folders["synthetic"] is not None
    thresholds = check_thresholds(raw.get("thresholds"), f"{where}: `thresholds`")
    return TablesConfig(
        real=folders["real"],
        synthetic=folders["synthetic"],
        metadata=metadata,
        holdout=folders["holdout"],
        root=root,
        seed=_seed(raw, where),
        metrics=_metrics(raw.get("metrics"), "metrics", where),
        table_metrics=_metrics(raw.get("table_metrics"), "table_metrics", where),
        table_people=_table_people(raw.get("table_people", TABLE_PEOPLE), where),
        thresholds=thresholds,
        working_memory=memory,
        backend=backend,
        scheduler=_scheduler(compute.get("scheduler"), where),
        json=_path(report.get("json"), "report.json", base, where),
        html=_path(report.get("html"), "report.html", base, where),
        gate=check_gate(raw.get("gate"), where),
        source=source,
        policy=check_policy(raw.get("policy"), thresholds, where),
    )
