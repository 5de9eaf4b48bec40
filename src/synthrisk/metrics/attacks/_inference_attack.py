# SPDX-License-Identifier: BSD-3-Clause
"""The inference attack itself: targets, nearest synthetic rows, guesses and their success.

:func:`inference_attack` runs Anonymeter's inference attack for one secret column on
validated tables; the ``inference`` metric (:mod:`synthrisk.metrics.attacks.inference`)
runs it for a named secret or, with every column as the secret in turn,
through :func:`synthrisk.metrics.attacks._every_column.every_column`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from synthrisk._typing import FloatArray, IntArray
from synthrisk.metrics._base import Context
from synthrisk.metrics.attacks._common import (
    attack_neighbors,
    attack_sizes,
    cap_attacks,
    shared_scale,
)
from synthrisk.metrics.attacks._inference_guesses import (
    InferenceAttack,
    inference_success,
)
from synthrisk.metrics.attacks._partitioned import (
    encoder_of,
    n_rows,
    on_cluster,
    take_rows,
)
from synthrisk.metrics.attacks._queries import unified_values
from synthrisk.metrics.attacks._secrets import SecretValues, gather_values
from synthrisk.schema.tables import Tables

__all__ = ["ALL_COLUMNS_ATTACKS", "MAX_GROUPS", "GuessFunction", "inference_attack"]

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
    n_attacks: int | str | None = None,
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
    n_attacks : int, "all" or None, default=None
        Targets per attack; None = the holdout's size (the real table's without holdout);
        ``"all"``: every real and every holdout row, up to ``ALL_TARGETS`` each.
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
