# SPDX-License-Identifier: BSD-3-Clause
"""The inference attack with every column as the secret (the default run)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from synthrisk._progress import stage
from synthrisk._typing import JSONValue
from synthrisk.metrics._base import Context, Outcome
from synthrisk.metrics._every_column import (
    holm_across,
    holm_levels_across,
    worst_column,
)
from synthrisk.metrics.attacks._common import attack_outcome, default_attacks
from synthrisk.metrics.attacks._inference_attack import (
    ALL_COLUMNS_ATTACKS,
    inference_attack,
)
from synthrisk.metrics.attacks._inference_guesses import InferenceAttack, secret_test
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables
from synthrisk.stats.holdout import ALPHA, matched_interval
from synthrisk.stats.intervals import AttackEstimate

if TYPE_CHECKING:
    from synthrisk.metrics.attacks.inference import InferenceRisk

__all__ = ["every_column"]


def every_column(metric: InferenceRisk, tables: Tables, context: Context) -> Outcome:
    """Inference with every usable column as the secret in turn; the worst column is the headline.

    Each column is attacked with all the others known; its holdout test compares the
    success on training people with holdout people (:func:`secret_test`, the same test
    as for a named secret), and the p-values are Holm-adjusted across the columns. The
    headline (score, rates, records, ``holdout_test``) is the column whose excess has
    the highest lower bound. ``holdout_test["parts"]`` holds every column's raw test and
    ``holdout_test["part"]`` the headline column: the verdict corrects the columns again
    at the level the run's correction leaves the metric, and needs every column's upper
    bound below the tolerance (``holdout_test["upper"]``: the highest 95 % one).

    Each column's entry of ``columns`` gives its interval at two levels: ``effect_ci``
    (95 %, with the raw ``p_value``) and ``effect_ci_adjusted`` at ``effect_ci_adjusted_level``,
    the level matching its Holm step across the columns at the verdict's family-wise
    error of 0.05, one-sided (:func:`~synthrisk.stats.holdout.holm_levels`): it excludes
    0 exactly when ``p_adjusted < 0.05``.
    """
    columns = [c.name for c in tables.schema.modelable]
    n_attacks: int | str | None = metric.n_attacks
    if n_attacks is None:
        n_attacks = min(default_attacks(tables), ALL_COLUMNS_ATTACKS)
    level = metric.confidence_level
    streams = context.rng.spawn(len(columns))
    runs: dict[str, tuple[InferenceAttack, AttackEstimate]] = {}
    # the holdout test of each column (JSON blocks, read back for their numbers)
    tests: dict[str, dict[str, Any]] = {}
    for i, (column, stream) in enumerate(zip(columns, streams, strict=True), 1):
        with stage(context.progress, f"column {i}/{len(columns)} {column!r}"):
            result = inference_attack(
                tables,
                secret=column,
                aux_cols=[c for c in columns if c != column],
                n_attacks=n_attacks,
                regression=None,
                closeness=metric.closeness,
                compat=metric.compat,
                rng=stream,
                context=context,
                max_groups=0,
            )
        for message in result.warnings:
            context.warn(f"{column}: {message}")
        estimate = result.estimate(confidence_level=level)
        runs[column] = (result, estimate)
        test = secret_test(result, confidence_level=level)
        if test is not None:
            tests[column] = test
    table: dict[str, JSONValue] = {}
    usable_tests = {c: t for c, t in tests.items() if t["effect"] is not None}
    raw = {c: float(t["p_value"]) for c, t in usable_tests.items()}
    adjusted = holm_across(raw)
    family = ALPHA  # the verdict's default family-wise error (one-sided)
    matched = holm_levels_across(raw, family)
    for column, (result, estimate) in runs.items():
        risk = estimate.risk()
        entry: dict[str, JSONValue] = {
            "risk": risk.value,
            "risk_ci": [risk.ci[0], risk.ci[1]],
            "attack_rate": estimate.attack_rate.value,
            "baseline_rate": estimate.baseline_rate.value,
            "control_rate": None
            if estimate.control_rate is None
            else estimate.control_rate.value,
            "n_attacks": int(result.main_success.size),
            "regression": result.regression,
        }
        held = usable_tests.get(column)
        if held is not None:
            low, high = matched_interval(
                float(held["effect"]),
                held["ci"],
                level=matched[column],
                significant=adjusted[column] < family,
                p_value=float(held["p_value"]),
                confidence_level=level,
            )
            entry.update(
                effect=held["effect"],
                effect_ci=held["ci"],
                p_value=held["p_value"],
                p_adjusted=adjusted[column],
                effect_ci_adjusted=[low, high],
                effect_ci_adjusted_level=1.0 - 2.0 * matched[column],
            )
        table[column] = entry
    if usable_tests:
        worst = worst_column(
            usable_tests,
            lambda c: (
                float(usable_tests[c]["ci"][0]),
                float(usable_tests[c]["effect"]),
            ),
        )
    else:
        worst = worst_column(runs, lambda c: runs[c][1].risk().value)
    result, estimate = runs[worst]
    details: dict[str, JSONValue] = {
        "secret": worst,
        "aux_cols": [c for c in columns if c != worst],
        "regression": result.regression,
        "worst_column": worst,
        "columns": table,
    }
    if worst in usable_tests:
        headline = dict(usable_tests[worst])
        headline["p_value"] = adjusted[worst]
        headline["upper"] = max(float(t["ci"][1]) for t in usable_tests.values())
        headline["part"] = worst
        headline["parts"] = {
            c: {
                "effect": t["effect"],
                "ci": t["ci"],
                "p_value": t["p_value"],
                "confidence_level": level,
            }
            for c, t in usable_tests.items()
        }
        headline["statistic"] = (
            f"inference success on training minus holdout people, worst of {len(usable_tests)} columns "
            f"({worst!r}; p-value Holm-adjusted across the columns)"
        )
        details["holdout_test"] = headline
    records = {
        "inferred_real": RecordScores(
            "real",
            result.targets,
            result.main_success.astype(np.float64),
            f"attacked real rows: 1 when their {worst!r} was guessed correctly (the worst column)",
        )
    }
    out_params: dict[str, Any] = dict(metric.params)
    out_params["secret"] = None
    out_params["n_attacks"] = (
        n_attacks if isinstance(n_attacks, str) else int(n_attacks)
    )
    out_params["columns"] = columns
    return attack_outcome(
        estimate,
        context,
        attack=f"inference attack on {worst!r}",
        details=details,
        records=records,
        params=out_params,
    )
