# SPDX-License-Identifier: BSD-3-Clause
"""PETsARD configuration files: read and validate PETsARD's YAML layout.

PETsARD (NICS, Taiwan) wraps Anonymeter in a pipeline described by YAML::

    Splitter:
      external_split:
        method: custom_data
        filepath: {ori: train.csv, control: control.csv}
        schema: {ori: schema.yaml, control: schema.yaml}
    Synthesizer:
      external_data: {method: custom_data, filepath: syn.csv, schema: schema.yaml}
    Evaluator:
      singling_out_risk: {method: anonymeter-singlingout, n_attacks: 400, n_cols: 3, max_attempts: 4000}
      linkability_risk:
        method: anonymeter-linkability
        aux_cols: [[workclass, education], [age, income]]
      inference_risk: {method: anonymeter-inference, secret: income}
    Reporter:
      save: {method: save_report, granularity: [global, details]}

``synthrisk run petsard.yaml`` runs such a file unchanged: ``ori`` is synthrisk's
``real`` table, ``control`` its ``holdout``; each evaluator becomes synthrisk's
``singling_out``, ``linkability`` or ``inference`` metric; every Splitter × Synthesizer
combination is one evaluation (PETsARD's experiment product). The Reporter writes
PETsARD's CSV files (``petsard[Report]_[global].csv``: one row per combination with the
columns ``{evaluator}_risk``, ``…_risk_CI_btm``, ``…_risk_CI_top``, ``…_attack_rate``,
``…_attack_rate_err``, ``…_baseline_rate``, ``…_baseline_rate_err``, ``…_control_rate``,
``…_control_rate_err``, rounded to 2 decimals as PETsARD does) plus synthrisk's JSON and
HTML reports.

An optional top-level ``synthrisk:`` block holds what PETsARD has no key for::

    synthrisk:
      seed: 0
      missing: keep        # or "petsard": categorical -> "missing", numeric -> -999999
      json: out/report.json
      html: out/report.html
      include_records: false
      include_values: false
      thresholds: {singling_out: {pass: 0.05, fail: 0.1}}
      gate: review
      csv_digits: 2        # null: full precision in the CSV files
      working_memory: 256
      backend: auto

Keys synthrisk cannot honour (a ``Loader``, a synthesizer other than ``custom_data``,
``benchmark://`` paths, evaluators other than Anonymeter's) are errors naming the key.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from synthrisk._typing import Backend
from synthrisk.exceptions import ConfigError, SynthriskError

__all__ = [
    "EVALUATOR_METHODS",
    "PETSARD_MISSING_NUMERIC",
    "PETSARD_MISSING_TEXT",
    "PetsardConfig",
    "PetsardEvaluator",
    "PetsardExperiment",
    "PetsardReporter",
    "PetsardRun",
    "is_petsard_layout",
    "parse_petsard",
    "petsard_schema_to_metadata",
]

#: PETsARD's pipeline modules (top-level keys of its YAML).
PETSARD_MODULES = (
    "Executor",
    "Loader",
    "Splitter",
    "Preprocessor",
    "Synthesizer",
    "Postprocessor",
    "Constrainer",
    "Evaluator",
    "Describer",
    "Reporter",
)
#: PETsARD evaluator methods synthrisk runs, and the synthrisk metric each becomes.
EVALUATOR_METHODS = {
    "anonymeter-singlingout": "singling_out",
    "anonymeter-linkability": "linkability",
    "anonymeter-inference": "inference",
}
#: PETsARD's documented fill values for missing cells (linkability and inference).
PETSARD_MISSING_TEXT = "missing"
PETSARD_MISSING_NUMERIC = -999999.0

_SYNTHRISK_KEYS = (
    "seed",
    "missing",
    "json",
    "html",
    "include_records",
    "include_values",
    "top_n",
    "thresholds",
    "gate",
    "csv_digits",
    "working_memory",
    "backend",
    "metadata",
)
_PETSARD_EVALUATOR_KEYS = {
    "singling_out": (
        "method",
        "n_attacks",
        "n_cols",
        "max_attempts",
        "mode",
        "max_n_attacks",
        "n_jobs",
    ),
    "linkability": (
        "method",
        "n_attacks",
        "max_n_attacks",
        "aux_cols",
        "n_neighbors",
        "n_jobs",
    ),
    "inference": (
        "method",
        "n_attacks",
        "max_n_attacks",
        "secret",
        "aux_cols",
        "n_jobs",
    ),
}
#: PETsARD's code defaults (petsard/evaluator/anonymeter.py)
_PETSARD_N_ATTACKS = 2000
_PETSARD_MAX_ATTEMPTS = 500_000
_GRANULARITIES = ("global", "columnwise", "pairwise", "details", "tree")
_REPORTER_KEYS = ("method", "granularity", "output", "eval", "naming_strategy")
_TYPE_TO_KIND = {
    "int": "numerical",
    "integer": "numerical",
    "int8": "numerical",
    "int16": "numerical",
    "int32": "numerical",
    "int64": "numerical",
    "float": "numerical",
    "float32": "numerical",
    "float64": "numerical",
    "numeric": "numerical",
    "number": "numerical",
    "str": "categorical",
    "string": "categorical",
    "object": "categorical",
    "category": "categorical",
    "categorical": "categorical",
    "bool": "boolean",
    "boolean": "boolean",
    "date": "datetime",
    "datetime": "datetime",
    "datetime64": "datetime",
    "timestamp": "datetime",
}
_PII_LOGICAL_TYPES = frozenset(
    {"email", "url", "ip_address", "phone", "postal_code", "name", "address"}
)


@dataclasses.dataclass(frozen=True)
class PetsardExperiment:
    """One Splitter × Synthesizer combination: the three tables of one evaluation."""

    splitter: str
    synthesizer: str
    real: Path
    holdout: Path
    synthetic: Path
    metadata: Mapping[str, Any] | None = None
    na_values: Mapping[str, list[str]] | None = None

    @property
    def modules(self) -> tuple[tuple[str, str], ...]:
        """``(module, experiment name)`` pairs, in pipeline order."""
        return (("Splitter", self.splitter), ("Synthesizer", self.synthesizer))


@dataclasses.dataclass(frozen=True)
class PetsardEvaluator:
    """One ``Evaluator`` entry mapped onto a synthrisk metric."""

    name: str
    method: str
    metric: str
    params: Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class PetsardReporter:
    """One ``Reporter`` entry with ``method: save_report``."""

    name: str
    granularities: tuple[str, ...]
    output: Path
    evals: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class PetsardConfig:
    """A parsed PETsARD configuration."""

    experiments: tuple[PetsardExperiment, ...]
    evaluators: tuple[PetsardEvaluator, ...]
    reporters: tuple[PetsardReporter, ...]
    seed: int = 0
    missing: str = "keep"
    json: Path | None = None
    html: Path | None = None
    include_records: bool = False
    include_values: bool = False
    top_n: int = 20
    thresholds: Mapping[str, Any] | None = None
    gate: str | None = None
    csv_digits: int | None = 2
    working_memory: float | None = None
    backend: Backend | None = None
    notes: tuple[str, ...] = ()
    source: Path | None = None


@dataclasses.dataclass(frozen=True)
class PetsardRun:
    """The outcome of one experiment: its report and the evaluator name of each result."""

    experiment: PetsardExperiment
    report: Any
    evaluator_names: tuple[str, ...]
    tables: Mapping[str, pd.DataFrame]


def is_petsard_layout(raw: Any) -> bool:
    """True when a parsed YAML document uses PETsARD's module names as top-level keys."""
    return isinstance(raw, Mapping) and any(str(key) in PETSARD_MODULES for key in raw)


def _err(where: str, message: str) -> ConfigError:
    return ConfigError(f"{where}: {message}")


def _mapping(value: Any, where: str, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not value:
        raise _err(where, f"must be a non-empty mapping of {what}; got {value!r}.")
    return value


def _check_keys(entry: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    unknown = sorted(set(map(str, entry)) - set(allowed))
    if unknown:
        raise _err(
            where, f"unknown keys {unknown}; synthrisk understands {list(allowed)}."
        )


def _path(value: Any, where: str, base: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise _err(where, f"must be a file path; got {value!r}.")
    if value.startswith("benchmark://"):
        raise _err(
            where,
            f"{value!r} names a PETsARD benchmark dataset, which synthrisk does not download; "
            "download the file and give its local path.",
        )
    if "://" in value:
        raise _err(where, f"{value!r} is a URL; synthrisk reads local files only.")
    path = Path(value)
    return path if path.is_absolute() else base / path


def parse_petsard(
    raw: Mapping[str, Any], *, base: Path, source: Path | None = None
) -> PetsardConfig:
    """Validate a PETsARD configuration mapping; relative paths resolve against ``base``.

    Raises
    ------
    ConfigError
        For keys synthrisk cannot honour (named in the message), overlapping
        linkability ``aux_cols``, a ``secret`` inside ``aux_cols``, bad parameter values.
    """
    where = str(source) if source else "config"
    notes: list[str] = []
    allowed_top = (
        "Executor",
        "Splitter",
        "Synthesizer",
        "Evaluator",
        "Reporter",
        "synthrisk",
    )
    for key in raw:
        key = str(key)
        if key in allowed_top:
            continue
        if key == "Loader":
            msg = f"{where}: `Loader`"
            raise _err(
                msg,
                "synthrisk evaluates data that is already split: give the training and control files to "
                "`Splitter` with `method: custom_data` (filepath: {ori: …, control: …}) instead of a Loader.",
            )
        if key in PETSARD_MODULES:
            msg = f"{where}: `{key}`"
            raise _err(
                msg,
                f"synthrisk does not run PETsARD's {key} (it evaluates existing files); remove the module.",
            )
        raise _err(
            where,
            f"unknown top-level key {key!r}; a PETsARD file for synthrisk may hold {list(allowed_top)}.",
        )
    if "Executor" in raw:
        notes.append("the `Executor` block (PETsARD's logging settings) was ignored.")
    extra = _parse_synthrisk_block(raw.get("synthrisk"), where, base)
    splits = _parse_splitters(raw.get("Splitter"), where, base)
    synths = _parse_synthesizers(raw.get("Synthesizer"), where, base)
    metadata = extra.pop("metadata")
    experiments = []
    for split_name, split in splits.items():
        for synth_name, synth in synths.items():
            meta, na_values = _combine_schemas(
                [split["schema_ori"], split["schema_control"], synth["schema"]],
                where,
                base,
            )
            experiments.append(
                PetsardExperiment(
                    splitter=split_name,
                    synthesizer=synth_name,
                    real=split["ori"],
                    holdout=split["control"],
                    synthetic=synth["filepath"],
                    metadata=metadata if metadata is not None else meta,
                    na_values=na_values,
                )
            )
    evaluators = _parse_evaluators(raw.get("Evaluator"), where, notes)
    reporters = _parse_reporters(
        raw.get("Reporter"), where, base, [e.name for e in evaluators], notes
    )
    json_path, html_path = extra.pop("json"), extra.pop("html")
    if json_path is None or html_path is None:
        prefix = reporters[0].output if reporters else base / "petsard"
        json_path = json_path or prefix.with_name(
            f"{prefix.name}[Report]_synthrisk.json"
        )
        html_path = html_path or prefix.with_name(
            f"{prefix.name}[Report]_synthrisk.html"
        )
    return PetsardConfig(
        experiments=tuple(experiments),
        evaluators=tuple(evaluators),
        reporters=tuple(reporters),
        json=json_path,
        html=html_path,
        notes=tuple(notes),
        source=source,
        **extra,
    )


def _parse_synthrisk_block(block: Any, where: str, base: Path) -> dict[str, Any]:
    from synthrisk.io.run_file import check_gate, check_report_options, check_thresholds

    block = {} if block is None else block
    here = f"{where}: `synthrisk`"
    if not isinstance(block, Mapping):
        raise _err(
            here, f"must be a mapping with keys {list(_SYNTHRISK_KEYS)}; got {block!r}."
        )
    _check_keys(block, _SYNTHRISK_KEYS, here)
    seed = block.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _err(here, f"`seed` must be a non-negative integer; got {seed!r}.")
    missing = block.get("missing", "keep")
    if missing not in ("keep", "petsard"):
        raise _err(
            here,
            f"`missing` must be 'keep' (synthrisk's handling) or 'petsard' (categorical -> "
            f"{PETSARD_MISSING_TEXT!r}, numeric -> {PETSARD_MISSING_NUMERIC:.0f}); got {missing!r}.",
        )
    digits = block.get("csv_digits", 2)
    if digits is not None and (
        isinstance(digits, bool) or not isinstance(digits, int) or digits < 0
    ):
        raise _err(
            here,
            f"`csv_digits` must be a non-negative integer or null; got {digits!r}.",
        )
    flags = check_report_options(block, here)
    paths = {}
    for key in ("json", "html", "metadata"):
        value = block.get(key)
        paths[key] = None if value is None else _path(value, f"{here}: `{key}`", base)
    metadata = None
    if paths["metadata"] is not None:
        from synthrisk.io.files import read_metadata

        metadata = read_metadata(paths["metadata"])
    return {
        "seed": seed,
        "missing": missing,
        "csv_digits": digits,
        "json": paths["json"],
        "html": paths["html"],
        "metadata": metadata,
        "thresholds": check_thresholds(
            block.get("thresholds"), f"{here}: `thresholds`"
        ),
        "gate": check_gate(block.get("gate"), here),
        "working_memory": block.get("working_memory"),
        "backend": block.get("backend"),
        **flags,
    }


def _custom_data_entries(
    section: Any, where: str, kind: str, refusal: Callable[[Any], str]
) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """The ``method: custom_data`` entries of a Splitter/Synthesizer section, checked."""
    section = _mapping(
        section,
        f"{where}: `{kind}`",
        "experiment names to settings (method: custom_data)",
    )
    for name, entry in section.items():
        here = f"{where}: `{kind}.{name}`"
        entry = _mapping(entry, here, "settings")
        method = entry.get("method")
        if method != "custom_data":
            msg = f"{here}.method"
            raise _err(msg, refusal(method))
        _check_keys(entry, ("method", "filepath", "schema"), here)
        yield str(name), here, entry


def _parse_splitters(section: Any, where: str, base: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for name, here, entry in _custom_data_entries(
        section,
        where,
        "Splitter",
        lambda method: (
            f"synthrisk reads pre-split data only (`method: custom_data` with filepath: {{ori, control}}); "
            f"got {method!r}. PETsARD's own splitting (num_samples, train_split_ratio …) is not supported."
        ),
    ):
        filepath = entry.get("filepath")
        if not isinstance(filepath, Mapping) or set(filepath) != {"ori", "control"}:
            msg = f"{here}.filepath"
            raise _err(
                msg,
                f"must be a mapping {{ori: PATH, control: PATH}}; got {filepath!r}.",
            )
        schema = entry.get("schema") or {}
        if not isinstance(schema, Mapping) or not set(schema) <= {"ori", "control"}:
            msg = f"{here}.schema"
            raise _err(
                msg, f"must be a mapping {{ori: PATH, control: PATH}}; got {schema!r}."
            )
        out[name] = {
            "ori": _path(filepath["ori"], f"{here}.filepath.ori", base),
            "control": _path(filepath["control"], f"{here}.filepath.control", base),
            "schema_ori": (schema.get("ori"), f"{here}.schema.ori"),
            "schema_control": (schema.get("control"), f"{here}.schema.control"),
        }
    return out


def _parse_synthesizers(
    section: Any, where: str, base: Path
) -> dict[str, dict[str, Any]]:
    out = {}
    for name, here, entry in _custom_data_entries(
        section,
        where,
        "Synthesizer",
        lambda method: (
            f"synthrisk evaluates synthetic data that already exists (`method: custom_data` with a "
            f"filepath); it does not train synthesizers. Got {method!r}."
        ),
    ):
        out[name] = {
            "filepath": _path(entry.get("filepath"), f"{here}.filepath", base),
            "schema": (entry.get("schema"), f"{here}.schema"),
        }
    return out


def _combine_schemas(
    schemas: Sequence[tuple[Any, str]], where: str, base: Path
) -> tuple[dict[str, Any] | None, dict[str, list[str]] | None]:
    """One metadata dict (and na_values) from the experiment's PETsARD schemas; they must agree."""
    parsed: list[tuple[dict[str, Any], dict[str, list[str]], str]] = []
    for value, key in schemas:
        if value is None:
            continue
        raw = value
        if isinstance(value, str):
            path = _path(value, key, base)
            from synthrisk.io.files import read_metadata

            try:
                raw = read_metadata(path)
            except SynthriskError as exc:
                raise _err(key, str(exc)) from None
        meta, na_values = petsard_schema_to_metadata(raw, where=key)
        parsed.append((meta, na_values, key))
    if not parsed:
        return None, None
    first_meta, first_na, first_key = parsed[0]
    for meta, na_values, key in parsed[1:]:
        if meta != first_meta or na_values != first_na:
            raise _err(
                key,
                f"describes the columns differently from `{first_key}`; give one schema for all tables.",
            )
    return first_meta, (first_na or None)


def petsard_schema_to_metadata(
    schema: Any, *, where: str = "schema"
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Translate a PETsARD schema (``fields:`` or ``attributes:``) into synthrisk metadata.

    ``type`` (int, float, str, bool, date, datetime …) and ``category: true`` give the
    column kind, a personal-data ``logical_type`` (email, phone …) makes it ``pii``,
    ``na_values`` are read as missing. Other PETsARD keys (precision, nullable …) do
    not change an evaluation and are ignored. synthrisk / SDMetrics metadata (a
    ``columns:`` mapping) is passed through.

    Returns
    -------
    metadata : dict
        ``{"columns": {name: {"kind": ...}}}``.
    na_values : dict of str to list of str
        Extra missing-value markers by column.
    """
    if not isinstance(schema, Mapping):
        raise _err(
            where,
            f"a schema must be a mapping with `fields` (or `attributes`); got {schema!r}.",
        )
    if "columns" in schema and "fields" not in schema and "attributes" not in schema:
        return dict(schema), {}
    fields = schema.get("fields", schema.get("attributes"))
    if not isinstance(fields, Mapping):
        raise _err(
            where,
            "a PETsARD schema needs a `fields` (or `attributes`) mapping of column settings.",
        )
    columns: dict[str, Any] = {}
    na_values: dict[str, list[str]] = {}
    for name, spec in fields.items():
        spec = spec or {}
        if not isinstance(spec, Mapping):
            msg = f"{where}.fields.{name}"
            raise _err(msg, f"must be a mapping; got {spec!r}.")
        kind = None
        type_name = spec.get("type")
        if type_name is not None:
            kind = _TYPE_TO_KIND.get(str(type_name).lower())
            if kind is None:
                msg = f"{where}.fields.{name}.type"
                raise _err(
                    msg,
                    f"unknown type {type_name!r}; synthrisk understands {sorted(set(_TYPE_TO_KIND))}.",
                )
        if spec.get("category") is True or spec.get("category_method") == "force":
            kind = "categorical"
        if str(spec.get("logical_type", "")).lower() in _PII_LOGICAL_TYPES:
            kind = "pii"
        if kind is not None:
            columns[str(name)] = {"kind": kind}
        markers = spec.get("na_values")
        if markers is not None:
            markers = (
                [markers] if isinstance(markers, (str, int, float)) else list(markers)
            )
            na_values[str(name)] = [str(m) for m in markers]
    return {"columns": columns}, na_values


def _parse_evaluators(
    section: Any, where: str, notes: list[str]
) -> list[PetsardEvaluator]:
    from synthrisk.metrics import METRICS

    section = _mapping(
        section, f"{where}: `Evaluator`", "experiment names to evaluator settings"
    )
    out = []
    for name, entry in section.items():
        here = f"{where}: `Evaluator.{name}`"
        entry = _mapping(entry, here, "settings")
        method = entry.get("method")
        if method not in EVALUATOR_METHODS:
            msg = f"{here}.method"
            raise _err(
                msg,
                f"{method!r} is not supported by synthrisk; PETsARD evaluators it runs: {list(EVALUATOR_METHODS)}.",
            )
        metric = EVALUATOR_METHODS[method]
        if metric not in METRICS:
            raise _err(
                here,
                f"`{method}` runs synthrisk's {metric!r} metric, which this installation does not have "
                f"(available metrics: {sorted(METRICS)}).",
            )
        cls = METRICS[metric]
        petsard_keys = _PETSARD_EVALUATOR_KEYS[metric]
        # synthrisk's own parameters, and their old names (deprecated, still accepted)
        extra_keys = [
            p
            for p in (*cls.param_names(), *cls.renamed_params)
            if p not in petsard_keys
        ]
        _check_keys(entry, (*petsard_keys, *extra_keys), here)
        params = _map_evaluator(metric, entry, here, notes)
        for key in extra_keys:
            if key in entry:
                params[key] = entry[key]
        try:
            params = cls.rename_params(params)
            cls.from_params(params)
        except SynthriskError as exc:
            raise _err(here, str(exc)) from None
        out.append(
            PetsardEvaluator(
                name=str(name), method=str(method), metric=metric, params=params
            )
        )
    return out


def _default_max_attempts(entry: Mapping[str, Any]) -> int | None:
    """``max_attempts`` when the YAML has none: PETsARD's 500,000 in a compat mode.

    In synthrisk's own mode, synthrisk's default: PETsARD's 500,000 caps Anonymeter's
    slow query generation and stops short on tables like Adult (about 1 candidate in
    300 singles out a synthetic row there, so PETsARD's default 2,000 queries need
    some 650,000 attempts); synthrisk tries a million candidates in seconds.
    """
    if entry.get("compat") is not None:
        return _PETSARD_MAX_ATTEMPTS
    from synthrisk.metrics import SinglingOutRisk

    default: int | None = SinglingOutRisk.declared_params["max_attempts"].default
    return default


def _map_evaluator(
    metric: str, entry: Mapping[str, Any], here: str, notes: list[str]
) -> dict[str, Any]:
    if "n_jobs" in entry:
        notes.append(
            f"{here}: `n_jobs` was ignored (synthrisk sizes its own parallelism)."
        )
    max_n = entry.get("max_n_attacks", metric != "singling_out")
    if not isinstance(max_n, bool):
        msg = f"{here}.max_n_attacks"
        raise _err(msg, f"must be true or false; got {max_n!r}.")
    if metric == "singling_out":
        if entry.get("max_n_attacks"):
            notes.append(
                f"{here}: `max_n_attacks` does not apply to singling out (PETsARD ignores it too)."
            )
        return {
            "n_attacks": entry.get("n_attacks", _PETSARD_N_ATTACKS),
            "n_cols": entry.get("n_cols", 3),
            "max_attempts": entry.get("max_attempts", _default_max_attempts(entry)),
            "mode": entry.get("mode", "multivariate"),
        }
    # linkability and inference: max_n_attacks (default true, as PETsARD documents) attacks
    # as many rows as the control table holds, which is synthrisk's n_attacks=None
    n_attacks = None if max_n else entry.get("n_attacks", _PETSARD_N_ATTACKS)
    if max_n and "n_attacks" in entry:
        notes.append(
            f"{here}: `n_attacks` was ignored because `max_n_attacks` is true (as in PETsARD)."
        )
    if metric == "linkability":
        aux = entry.get("aux_cols")
        if (
            not isinstance(aux, Sequence)
            or isinstance(aux, str)
            or len(aux) != 2
            or not all(
                isinstance(h, Sequence) and not isinstance(h, str) and h for h in aux
            )
            or not all(isinstance(c, str) for h in aux for c in h)
        ):
            msg = f"{here}.aux_cols"
            raise _err(
                msg,
                f"must be two non-empty lists of column names (the columns of two datasets an attacker "
                f"links); got {aux!r}.",
            )
        overlap = sorted(set(aux[0]) & set(aux[1]))
        if overlap:
            msg = f"{here}.aux_cols"
            raise _err(
                msg,
                f"the two lists overlap in {overlap}; they must be disjoint (PETsARD rejects overlapping "
                "lists too).",
            )
        return {
            "aux_cols": [list(aux[0]), list(aux[1])],
            "n_attacks": n_attacks,
            "n_neighbors": entry.get("n_neighbors", 1),
        }
    secret = entry.get("secret")
    if not isinstance(secret, str) or not secret:
        msg = f"{here}.secret"
        raise _err(
            msg,
            f"is required: the one column the attacker tries to infer; got {secret!r}.",
        )
    aux = entry.get("aux_cols")
    if aux is not None:
        if isinstance(aux, str):
            aux = [aux]
        if not isinstance(aux, Sequence) or not all(isinstance(c, str) for c in aux):
            msg = f"{here}.aux_cols"
            raise _err(msg, f"must be a list of column names; got {aux!r}.")
        if secret in aux:
            msg = f"{here}.aux_cols"
            raise _err(
                msg,
                f"must not contain the secret {secret!r} (PETsARD rejects this too).",
            )
        aux = list(aux)
    return {"secret": secret, "aux_cols": aux, "n_attacks": n_attacks}


def _parse_reporters(
    section: Any,
    where: str,
    base: Path,
    evaluator_names: Sequence[str],
    notes: list[str],
) -> list[PetsardReporter]:
    if section is None:
        return []
    section = _mapping(
        section, f"{where}: `Reporter`", "experiment names to reporter settings"
    )
    out = []
    for name, entry in section.items():
        here = f"{where}: `Reporter.{name}`"
        entry = _mapping(entry, here, "settings")
        method = entry.get("method")
        if method != "save_report":
            msg = f"{here}.method"
            raise _err(
                msg,
                f"{method!r} is not supported: synthrisk writes evaluation reports (`save_report`); it does "
                "not transform data (`save_data`) and records timings in its JSON report (`save_timing`).",
            )
        _check_keys(entry, _REPORTER_KEYS, here)
        granularity = entry.get("granularity")
        levels = [granularity] if isinstance(granularity, str) else granularity
        if (
            not isinstance(levels, list)
            or not levels
            or not all(isinstance(g, str) for g in levels)
        ):
            msg = f"{here}.granularity"
            raise _err(
                msg,
                f"must be one of {list(_GRANULARITIES)} or a list of them; got {granularity!r}.",
            )
        levels = [g.lower() for g in levels]
        unknown = [g for g in levels if g not in _GRANULARITIES]
        if unknown:
            msg = f"{here}.granularity"
            raise _err(
                msg,
                f"unknown {unknown}; PETsARD's granularities are {list(_GRANULARITIES)}.",
            )
        for g in levels:
            if g not in ("global", "details"):
                notes.append(
                    f"{here}: granularity {g!r} has no Anonymeter report (PETsARD writes none either)."
                )
        naming = entry.get("naming_strategy", "traditional")
        if naming != "traditional":
            msg = f"{here}.naming_strategy"
            raise _err(
                msg, f"only 'traditional' file names are written; got {naming!r}."
            )
        evals = entry.get("eval")
        if evals is not None:
            evals = [evals] if isinstance(evals, str) else evals
            if not isinstance(evals, list) or not all(
                isinstance(e, str) for e in evals
            ):
                msg = f"{here}.eval"
                raise _err(
                    msg,
                    f"must be an evaluator name or a list of them; got {entry.get('eval')!r}.",
                )
            missing = [e for e in evals if e not in evaluator_names]
            if missing:
                msg = f"{here}.eval"
                raise _err(
                    msg,
                    f"names evaluators {missing} that are not in `Evaluator` ({list(evaluator_names)}).",
                )
        output = entry.get("output") or "petsard"
        out.append(
            PetsardReporter(
                name=str(name),
                granularities=tuple(dict.fromkeys(levels)),
                output=_path(str(output), f"{here}.output", base),
                evals=None if evals is None else tuple(evals),
            )
        )
    return out
