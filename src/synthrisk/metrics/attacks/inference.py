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

from collections.abc import Callable, Iterable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray, JSONValue
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
    COMPAT,
    CONFIDENCE_LEVEL,
    N_ATTACKS,
    Compat,
    attack_neighbors,
    attack_outcome,
    attack_sizes,
    cap_attacks,
    check_not_excluded,
    shared_scale,
)
from synthrisk.metrics.attacks._inference_guesses import (
    InferenceAttack,
    inference_success,
    secret_test,
)
from synthrisk.metrics.attacks._partitioned import (
    encoder_of,
    n_rows,
    on_cluster,
    take_rows,
)
from synthrisk.metrics.attacks._queries import unified_values
from synthrisk.metrics.attacks._secrets import SecretValues, gather_values
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables

__all__ = [
    "InferenceAttack",
    "InferenceRisk",
    "inference_attack",
    "inference_success",
    "secret_test",
]

#: per-secret-value breakdowns are reported for at most this many distinct values
MAX_GROUPS = 50
#: default targets per attack and column when every column is the secret in turn
ALL_COLUMNS_ATTACKS = 3000

GuessFunction = Callable[[str, IntArray], FloatArray]


def _label(tables: Tables, secret: str, value: float) -> str:
    kind = tables.schema[secret].kind
    encoder = encoder_of(tables)
    if kind in ("categorical", "boolean"):
        return str(encoder.categories[secret][int(value)])
    if kind == "datetime":
        return pd.Timestamp(encoder.time_origin + round(value * 1e9)).isoformat()
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def inference_attack(
    tables: Tables,
    *,
    secret: str,
    aux_cols: Sequence[str],
    n_attacks: int | None = None,
    regression: bool | None = None,
    closeness: float = 0.05,
    compat: str | None = None,
    rng: np.random.Generator,
    context: Context | None = None,
    guess: GuessFunction | None = None,
    labels: dict[str, np.ndarray] | None = None,
    max_groups: int | None = MAX_GROUPS,
) -> InferenceAttack:
    """Run the inference attack on validated tables (the holdout is optional).

    Parameters
    ----------
    tables : Tables
        Validated tables.
    secret : str
        Column to guess (validated by the caller).
    aux_cols : list of str
        Columns the attacker knows (validated by the caller).
    n_attacks : int or None, default=None
        Targets per attack; None = the holdout's size (the real table's without holdout).
    regression : bool or None, default=None
        None: automatic (numerical and datetime secrets are judged within ``closeness``;
        with ``compat="anonymeter-1.1"`` never, with ``"anonymeter-1.0"`` for numerical
        ones).
    closeness : float, default=0.05
        How close a numeric guess must be, relative to the true value.
    compat : {None, "anonymeter-1.0", "anonymeter-1.1"}, default=None
        Reference behaviour to reproduce.
    rng : numpy Generator
        Source of every random draw.
    context : Context, default=None
        Backend, working memory and progress of the neighbour search.
    guess : callable, default=None
        ``guess(table_name, rows) -> encoded guesses``, replacing the 1-NN guess (used by
        the Anonymeter compatibility layer for custom inference models).
    labels : dict, default=None
        Row labels of the ``real`` and ``synthetic`` tables, for Anonymeter 1.1's
        index-realigned baseline (positions when None).
    max_groups : int or None, default=50
        Per-value results are prepared only when the secret has at most this many
        distinct real values (None: always).
    """
    context = Context() if context is None else context
    warnings: list[str] = []
    kind = tables.schema[secret].kind
    if regression is None:
        if compat == "anonymeter-1.1":
            regression = False
        elif compat == "anonymeter-1.0":
            regression = kind == "numerical"
        else:
            regression = kind in ("numerical", "datetime")
    n_real, n_syn = n_rows(tables, "real"), n_rows(tables, "synthetic")
    requested, n_main, n_ctrl = attack_sizes(tables, n_attacks, warnings=warnings)
    if compat == "anonymeter-1.0":
        n_base = cap_attacks(requested, n_syn, table="synthetic", warnings=warnings)
        n_base = min(n_base, n_real)
    else:
        n_base = min(n_syn, n_main)
    main_rng, base_rng, ctrl_rng = rng.spawn(3)
    rule = "fixed" if compat is None else "anonymeter"
    scale = None
    if rule == "fixed" and kind == "datetime":
        scale = float(shared_scale(tables, [secret])[0]) or 1.0
    secrets = SecretValues(tables, secret)
    reference = tables.encoded("synthetic").select(list(aux_cols))

    def search(
        name: str, targets: IntArray, stream: np.random.Generator
    ) -> tuple[IntArray | None, FloatArray | None]:
        """Nearest synthetic row of each target, and the targets' secrets (both None
        with a ``guess`` function)."""
        if guess is not None:
            return None, None
        table = tables.encoded(name)
        partitioned = on_cluster(table)
        # a partitioned table sends only the known columns (the secret comes after)
        gathered = take_rows(table, targets, aux_cols if partitioned else None)
        rows = attack_neighbors(
            tables,
            gathered if partitioned else gathered.select(list(aux_cols)),
            reference,
            k=1,
            compat=compat,
            rng=stream,
            context=context,
            description=f"Inference: {name} targets",
        )[:, 0]
        if partitioned:
            del gathered
            return rows, secrets.at(name, targets)
        return rows, unified_values(gathered.select([secret]))[:, 0]

    def judge(guesses: FloatArray, secrets: FloatArray) -> np.ndarray:
        return inference_success(
            guesses,
            secrets,
            regression=regression,
            closeness=closeness,
            rule=rule,
            scale=scale,
        )

    # every random draw and neighbour search first (in this order), then the values:
    # a partitioned table's are gathered in one round per table
    targets = main_rng.choice(n_real, size=n_main, replace=False)
    main_rows, main_secrets = search("real", targets, main_rng)
    main_guesses = None if guess is None else guess("real", targets)
    base_targets = base_rng.choice(n_real, size=n_base, replace=False)
    base_rows = base_rng.choice(n_syn, size=n_base, replace=False)
    control_targets = control_rows = control_secrets = control_guesses = None
    if n_ctrl is not None:
        n_hold = n_rows(tables, "holdout")
        control_targets = ctrl_rng.choice(n_hold, size=n_ctrl, replace=False)
        control_rows, control_secrets = search("holdout", control_targets, ctrl_rng)
        if guess is not None:
            control_guesses = guess("holdout", control_targets)
    syn_values = gather_values(
        secrets.at, "synthetic", [base_rows, main_rows, control_rows]
    )
    base_guesses, found_main, found_control = syn_values
    main_guesses = found_main if main_guesses is None else main_guesses
    control_guesses = found_control if control_guesses is None else control_guesses
    base_secrets, found_targets = gather_values(
        secrets.at, "real", [base_targets, targets if main_secrets is None else None]
    )
    main_secrets = found_targets if main_secrets is None else main_secrets
    assert main_guesses is not None
    assert main_secrets is not None
    main_success = judge(main_guesses, main_secrets)

    if compat == "anonymeter-1.1":
        # 1.1 re-aligns the random guesses to the targets by index label: a target gets a
        # guess only when its label is among the sampled synthetic labels
        real_labels = np.arange(n_real) if labels is None else labels["real"]
        syn_labels = np.arange(n_syn) if labels is None else labels["synthetic"]
        where = pd.Index(syn_labels[base_rows]).get_indexer(
            pd.Index(real_labels[base_targets])
        )
        base_guesses = np.where(where >= 0, base_guesses[np.maximum(where, 0)], np.nan)
    baseline_success = judge(base_guesses, base_secrets)

    control_success = None
    holdout_sizes: dict[float, int] = {}
    distinct = secrets.distinct("real", max_groups)
    group_labels: dict[float, str] = {}
    if distinct is not None:
        group_labels = {float(v): _label(tables, secret, float(v)) for v in distinct}
    if control_targets is not None:
        if control_secrets is None:
            control_secrets = secrets.at("holdout", control_targets)
        assert control_guesses is not None
        control_success = judge(control_guesses, control_secrets)
        if group_labels or not on_cluster(tables.encoded("holdout")):
            holdout_sizes = secrets.counts("holdout", np.array(list(group_labels)))
    return InferenceAttack(
        secret=secret,
        aux_cols=tuple(aux_cols),
        regression=bool(regression),
        targets=targets,
        main_secrets=main_secrets,
        main_guesses=main_guesses,
        main_success=main_success,
        baseline_success=baseline_success,
        control_targets=control_targets,
        control_secrets=control_secrets,
        control_guesses=control_guesses,
        control_success=control_success,
        group_labels=group_labels,
        holdout_group_sizes=holdout_sizes,
        compat=compat,
        warnings=tuple(warnings),
    )


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
    n_attacks : int or None, default=None
        Targets per attack; None = the holdout's size (PETsARD's ``max_n_attacks``),
        and at most ``ALL_COLUMNS_ATTACKS`` per column when every column is attacked.
        Capped with a warning to the sizes of the real table and the holdout.
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
    n_attacks: Param[int | None] = N_ATTACKS
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

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        if self.secret is None:
            from synthrisk.metrics.attacks._every_column import every_column

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
