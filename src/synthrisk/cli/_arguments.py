# SPDX-License-Identifier: BSD-3-Clause
"""What the command line's options mean: metric ids and ``--param`` values, thresholds, ``--top-n``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from synthrisk.exceptions import ParameterError

if TYPE_CHECKING:
    from synthrisk.context import ReleaseContext
    from synthrisk.report import Thresholds

__all__ = [
    "budget",
    "build_metrics",
    "command_line",
    "context",
    "default_params",
    "metric_ids",
    "param_value",
    "rows",
    "table_metric_ids",
    "table_people",
    "thresholds",
    "top_n",
    "with_hint",
    "with_params",
]


def metric_ids(text: str | None, option: str = "--metrics") -> list[str] | None:
    """The ids of ``--metrics`` (comma separated); None when the option is not given."""
    if text is None:
        return None
    metrics = [m.strip().lower() for m in text.split(",") if m.strip()]
    if not metrics:
        msg = (
            f"`{option}` names no metric (got {text!r}); give metric ids "
            "separated by commas (see `synthrisk metrics`), or leave it out to run the full assessment."
        )
        raise ParameterError(msg)
    return metrics


def table_metric_ids(text: str | None) -> list[str] | None:
    """``--table-metrics``: ids separated by commas, ``none`` for no per-table metrics."""
    if text is not None and text.strip().lower() == "none":
        return []
    return metric_ids(text, "--table-metrics")


def table_people(text: str) -> int | None:
    """``--table-people``: a whole number of at least 10 people, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 10:
        msg = (
            f"`--table-people` must be a whole number of people per side (at least 10) or "
            f"`all`; got {text!r}."
        )
        raise ParameterError(msg)
    return value


def with_params(
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
    for item, metric_id, name, value in _parsed(params, example):
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
        chosen[metric_id][name] = value
    return chosen


def default_params(params: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--param`` values without ``--metrics``: parameters of the full assessment's metrics.

    Each named metric must be one the full assessment runs; its other parameters and
    every other metric keep their defaults. The metrics are built once here, so that a
    bad parameter is reported before any table is read.
    """
    from synthrisk.metrics import METRICS, get_metric

    example = "`--param inference.n_attacks=3000`"
    chosen: dict[str, dict[str, Any]] = {}
    defaults = [m for m, cls in METRICS.items() if cls.runs_by_default]
    for item, metric_id, name, value in _parsed(params, example):
        cls = get_metric(metric_id)  # an unknown id: the message suggests the closest
        if not cls.runs_by_default:
            msg = (
                f"`--param {item}` sets a parameter of {metric_id!r}, which the full assessment "
                f"does not run (it needs parameters); name it with `--metrics`, e.g. "
                f"`--metrics {','.join([*defaults, metric_id])}`."
            )
            raise ParameterError(msg)
        values = chosen.setdefault(metric_id, {})
        if name in values:
            msg = f"`--param` gives {metric_id}.{name} twice; give each parameter once."
            raise ParameterError(msg)
        values[name] = value
    build_metrics(chosen)
    return chosen


def _parsed(params: Sequence[str], example: str) -> list[tuple[str, str, str, Any]]:
    """Each ``--param`` as (the text, metric id, parameter name, value)."""
    out = []
    for item in params:
        target, equals, text = item.partition("=")
        metric_id, dot, name = target.strip().partition(".")
        metric_id, name = metric_id.strip().lower(), name.strip()
        if not (equals and dot and metric_id and name):
            msg = f"`--param {item}` must read METRIC.NAME=VALUE, e.g. {example}."
            raise ParameterError(msg)
        out.append((item, metric_id, name, param_value(text, item)))
    return out


def param_value(text: str, item: str) -> Any:
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


def build_metrics(
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
            raise with_hint(exc) from None


def with_hint(exc: ParameterError) -> ParameterError:
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


#: the command line's context options -> the context's fields
_CONTEXT_OPTIONS = {
    "context_purpose": "purpose",
    "context_recipient": "recipient",
    "release_model": "release_model",
    "attacker_knows": "attacker_knows",
    "population_share": "population_share",
    "population_size": "population_size",
    "assessor": "assessor",
    "assessed_on": "assessed_on",
    "reassess_by": "reassess_by",
}


def context(args: Any) -> ReleaseContext | None:
    """The release context of ``--context FILE`` and the context options (None: none given)."""
    from synthrisk.context import ReleaseContext

    given = {
        field: getattr(args, option)
        for option, field in _CONTEXT_OPTIONS.items()
        if getattr(args, option, None) is not None
    }
    path = getattr(args, "context", None)
    if path is None and not given:
        return None
    base = ReleaseContext.from_value(None)
    if path is not None:
        from synthrisk.io.run_file import read_context

        base = read_context(path)
    try:
        return base.merged(given)
    except ParameterError as exc:
        option = next(
            (
                f"--{o.replace('_', '-')}"
                for o, f in _CONTEXT_OPTIONS.items()
                if f"context.{f}`" in str(exc)
            ),
            None,
        )
        msg = str(exc) if option is None else f"`{option}`: {exc}"
        raise ParameterError(msg) from None


def command_line(args: Any) -> str | None:
    """The command line as typed (for the record), or None when unknown."""
    import shlex

    argv = getattr(args, "argv", None)
    return None if argv is None else "synthrisk " + shlex.join(argv)


def thresholds(path: str | None) -> Thresholds | None:
    from synthrisk.io.files import read_thresholds

    return None if path is None else read_thresholds(path)


def top_n(value: int | None) -> int | None:
    if value is not None and value < 1:
        msg = f"`--top-n` must be an integer >= 1; got {value}."
        raise ParameterError(msg)
    return value


def budget(text: str | None) -> tuple[float | None, int | None]:
    """``--budget``: ``(seconds, None)`` for ``90s`` / ``30m`` / ``2h``, ``(None, runs)`` for a number."""
    from synthrisk.io.run_file import parse_budget

    return parse_budget(text, "`--budget`")


def seconds(text: str | None, name: str) -> float | None:
    """A duration option: ``90s`` / ``30m`` / ``2h`` / seconds, None for ``none``."""
    from synthrisk.io.run_file import parse_seconds

    return parse_seconds(text, name)


def generator_params(items: Sequence[str]) -> dict[str, object]:
    """``--generator-param KEY=VALUE`` (repeatable): values read as YAML scalars."""
    import yaml

    out: dict[str, object] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not (eq and key.strip()):
            msg = f"`--generator-param` must be KEY=VALUE; got {item!r}."
            raise ParameterError(msg)
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def rows(text: str | None) -> list[int]:
    """``--target-rows``: 0-based rows, comma-separated."""
    if text is None:
        return []
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part.isdecimal():
            msg = f"`--target-rows` must list 0-based row numbers separated by commas; got {text!r}."
            raise ParameterError(msg)
        out.append(int(part))
    return out
