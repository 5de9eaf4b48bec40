# SPDX-License-Identifier: BSD-3-Clause
"""Inference risk: Anonymeter's ``InferenceEvaluator`` on synthrisk's neighbour engine.

The attacker knows some columns (``aux_cols``) of a target person and guesses a
``secret`` column from the synthetic row nearest to them (1-NN, Anonymeter's Gower
variant, ties broken uniformly at random). A categorical secret must be guessed
exactly; a numeric one within a relative ``closeness``. The main attack targets real
rows, the control attack holdout rows; the baseline guesses are secrets of random
synthetic rows (draws from the synthetic marginal) compared position by position with
random real targets. Risk = ``(main - control) / (1 - control)``.

With a holdout, the result's ``holdout_test`` (:func:`secret_test`) compares the share
of training people whose secret was guessed with the same share for holdout people:
the test the release verdict judges, for a named secret and for every column in turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

import numpy as np

from synthrisk._typing import JSONValue
from synthrisk._validation import check_columns
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._params import (
    Param,
    boolean,
    column_list,
    custom,
    positive_float,
)
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.attacks._common import (
    ALL_TARGETS,
    COMPAT,
    CONFIDENCE_LEVEL,
    Compat,
    attack_outcome,
    check_attacks,
    check_not_excluded,
    default_attacks,
)
from synthrisk.metrics.attacks._every_column import every_column
from synthrisk.metrics.attacks._inference_attack import (
    ALL_COLUMNS_ATTACKS,
    inference_attack,
)
from synthrisk.metrics.attacks._inference_guesses import (
    InferenceAttack,
    inference_success,
    secret_test,
)
from synthrisk.metrics.attacks._partitioned import n_rows
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables

__all__ = [
    "InferenceAttack",
    "InferenceRisk",
    "inference_attack",
    "inference_success",
    "secret_test",
]


def _secret(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        msg = f"`{name}` must be a single column name; got {value!r}."
        raise ParameterError(msg)
    return value


@register
class InferenceRisk(Metric):
    """Inference risk: can the synthetic table reveal a secret attribute of real people?

    Anonymeter's attribute-inference evaluation (WP29 / CNIL criterion). ``score`` is
    the risk ``(main - control) / (1 - control)`` in [0, 1] (higher = more leakage; the
    attack rate without a holdout) and ``ci`` its interval.

    With ``secret=None`` (the default run) **every usable column** is the secret in
    turn, the attacker knowing all the others: the breakdown's ``columns`` table gives
    each column's rates, risk and holdout test (p-values Holm-adjusted across the
    columns), and the headline (score, rates, records) is the worst column: the one
    whose excess over the holdout has the highest lower confidence bound.

    Parameters
    ----------
    secret : str or None, default=None
        The column the attacker tries to guess; None = every usable column in turn.
    aux_cols : list of str or None, default=None
        The columns the attacker knows; None = every other usable column.
    n_attacks : int, "all" or None, default=None
        Targets per attack; None = the holdout's size (PETsARD's ``max_n_attacks``),
        and at most ``ALL_COLUMNS_ATTACKS`` per column when every column is attacked.
        Capped with a warning to the sizes of the real table and the holdout.
        ``"all"``: every training row and every holdout row, up to ``ALL_TARGETS``
        (10,000) each — the precision :func:`synthrisk.evaluate` raises a default run
        to when its interval straddles the verdict's tolerance
        (:meth:`more_precise`).
    regression : bool or None, default=None
        Judge guesses within ``closeness`` (True) or exactly (False); None decides from
        the secret's kind (numerical and datetime: True).
    closeness : float, default=0.05
        How close a numeric guess must be to count as correct, relative to the true
        value: ``|guess - secret| <= closeness * |secret|`` (datetime secrets:
        ``closeness`` times the column's range). Anonymeter calls it ``tolerance``; its
        old synthrisk name ``tolerance`` still works for one release, with a
        :class:`~synthrisk.exceptions.SynthriskDeprecationWarning` (the verdict's
        *tolerance* is another thing: the largest excess over the holdout that is not
        material).
    confidence_level : float, default=0.95
        Confidence level of the intervals.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        None fixes Anonymeter's bugs (baseline aligned by position, regression from the
        column kind, closeness relative to the true value, NaN never poisons distances);
        a version string reproduces that version.

    With a holdout, ``breakdown["holdout_test"]`` compares the success on training
    people with holdout people (:func:`secret_test`); the release verdict judges it
    against the tolerance of 0.09, for a named secret as for every column.

    On tables partitioned on a Dask cluster
    (:func:`synthrisk.cluster.evaluate_dataset`) it runs on every row, with the
    in-memory result: the targets are gathered, the synthetic table stays on the
    cluster.
    """

    id = "inference"
    cost = 4.0
    report_order = 140
    attack = (
        "An attacker who knows some attributes of a person guesses a secret attribute from the most "
        "similar synthetic row, compared with real people the generator never saw."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "Anonymeter's risk: share of targets whose secret the nearest synthetic row gives away, beyond the share for holdout people (the worst column when every column is attacked): 0 = no more than for new people, 1 = every target"
        ),
        known=("aux_cols",),
        guessed=("secret",),
        unset_means_all=True,
    )
    higher_is_safer = False
    runs_partitioned = True

    secret: Param[str | None] = Param(
        custom(_secret, "a column name or None"),
        None,
        "The column the attacker guesses; None = every usable column in turn.",
    )
    aux_cols: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True, strict=True),
        None,
        "The columns the attacker knows; None = every other usable column.",
    )
    n_attacks: Param[int | str | None] = Param(
        custom(
            check_attacks,
            f'an integer >= 1, "all" (every row, up to {ALL_TARGETS:,} per side) or None',
        ),
        None,
        'Targets per attack; None = the holdout\'s size; "all" = every training and holdout row.',
    )
    regression: Param[bool | None] = Param(
        boolean(allow_none=True),
        None,
        "Judge guesses within `closeness` (True) or exactly; None: from the secret's kind.",
    )
    closeness: Param[float] = Param(
        positive_float(),
        0.05,
        "How close a numeric guess must be, relative to the true value (Anonymeter's `tolerance`).",
    )
    renamed_params = MappingProxyType({"tolerance": ("closeness", "0.2.0")})
    confidence_level: Param[float] = CONFIDENCE_LEVEL
    compat: Param[str | None, Compat | None] = COMPAT

    def _check_params(self) -> None:
        if self.aux_cols is None:
            return
        if self.secret is None:
            msg = "`aux_cols` needs a `secret`: with every column as the secret, the attacker knows all the others."
            raise ParameterError(msg)
        if self.secret in self.aux_cols:
            msg = f"`secret` ({self.secret!r}) must not be one of `aux_cols`; the attacker does not know it."
            raise ParameterError(msg)

    def _aux(self, tables: Tables) -> list[str]:
        cols = self.aux_cols
        if cols is None:
            return [c.name for c in tables.schema.modelable if c.name != self.secret]
        return list(cols)

    def check_tables(self, tables: Tables) -> None:
        """``secret`` and ``aux_cols`` must name usable columns; regression needs a numeric secret."""
        usable = [c.name for c in tables.schema.modelable]
        secret = self.secret
        if secret is None:
            if len(usable) < 2:
                msg = (
                    f"inference needs at least 2 usable columns (a secret and a known one); the tables have "
                    f"{len(usable)}."
                )
                raise ParameterError(msg)
            return
        check_not_excluded(tables, [secret], name="secret")
        check_not_excluded(tables, self.aux_cols or [], name="aux_cols")
        check_columns([secret], name="secret", available=usable)
        if self.aux_cols is not None:
            check_columns(self.aux_cols, name="aux_cols", available=usable)
        elif not self._aux(tables):
            msg = f"`aux_cols` would be empty: {secret!r} is the only usable column."
            raise ParameterError(msg)
        if self.regression and tables.schema[secret].kind not in (
            "numerical",
            "datetime",
        ):
            msg = (
                f"`regression=True` needs a numerical or datetime `secret`; {secret!r} is "
                f"{tables.schema[secret].kind}."
            )
            raise ParameterError(msg)

    def more_precise(self, tables: Tables) -> InferenceRisk | None:
        """This attack on every training and holdout row (``n_attacks="all"``), if that is more.

        Only a run with the default ``n_attacks`` (None) is raised, and only where the
        tables hold more targets than the default attacks.
        """
        if self.n_attacks is not None or tables.holdout is None:
            return None
        default = default_attacks(tables)
        if self.secret is None:
            default = min(default, ALL_COLUMNS_ATTACKS)
        more = max(
            min(n_rows(tables, "real"), ALL_TARGETS),
            min(n_rows(tables, "holdout"), ALL_TARGETS),
        )
        if more <= default:
            return None
        return self.with_params({"n_attacks": "all"})

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        if self.secret is None:
            return every_column(self, tables, context)
        aux = self._aux(tables)
        result = inference_attack(
            tables,
            secret=self.secret,
            aux_cols=aux,
            n_attacks=self.n_attacks,
            regression=self.regression,
            closeness=self.closeness,
            compat=self.compat,
            rng=context.rng,
            context=context,
        )
        level = self.confidence_level
        groups: dict[str, JSONValue] | None = None
        if result.group_labels:
            groups = {}
            for value, est in result.groups(confidence_level=level).items():
                risk_g = est.risk()
                groups[result.group_labels[value]] = {
                    "risk": risk_g.value,
                    "risk_ci": [risk_g.ci[0], risk_g.ci[1]],
                    "attack_rate": {
                        "value": est.attack_rate.value,
                        "error": est.attack_rate.error,
                    },
                    "control_rate": None
                    if est.control_rate is None
                    else {
                        "value": est.control_rate.value,
                        "error": est.control_rate.error,
                    },
                    "n_attacks": {
                        "main": est.n_attacks,
                        "control": est.n_control_attacks,
                    },
                }
        records = {
            "inferred_real": RecordScores(
                "real",
                result.targets,
                result.main_success.astype(np.float64),
                "attacked real rows: 1 when their secret was guessed correctly",
            )
        }
        params: dict[str, Any] = dict(self.params)
        params["aux_cols"] = aux
        details: dict[str, JSONValue] = {
            "secret": self.secret,
            "aux_cols": aux,
            "regression": result.regression,
            "groups": groups,
        }
        test = secret_test(result, confidence_level=level)
        if test is not None:
            details["holdout_test"] = test
        return attack_outcome(
            result.estimate(confidence_level=level),
            context,
            attack="inference attack",
            details=details,
            records=records,
            run_warnings=result.warnings,
            params=params,
        )
