# SPDX-License-Identifier: BSD-3-Clause
"""synthpop's disclosure measures as metrics: ``replicated_uniques`` and ``disco``.

The tables and measures are computed by
:func:`synthrisk.metrics.disclosure._synthpop_kernel.synthpop_disclosure`; this module
encodes the columns, applies synthpop's exclusion options and adds the holdout control.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from synthrisk._typing import IntArray, JSONValue
from synthrisk._validation import check_columns
from synthrisk.exceptions import ParameterError
from synthrisk.metrics._base import Context, Metric, Outcome, register
from synthrisk.metrics._combinations import combination_codes, present_tables
from synthrisk.metrics._params import (
    Param,
    boolean,
    column_list,
    confidence,
    custom,
    integer,
)
from synthrisk.metrics._threat import SOME_COLUMNS, TRAINING, ThreatModel
from synthrisk.metrics.disclosure._defaults import (
    exact_choice_text,
    resolve_key_columns,
    run_resolved,
)
from synthrisk.metrics.disclosure._synthpop_kernel import (
    SynthpopDisclosure,
    synthpop_disclosure,
)
from synthrisk.results import MetricResult, RecordScores, to_jsonable
from synthrisk.schema.tables import Tables
from synthrisk.stats.control import compare_proportions, wilson_bounds

__all__ = ["DiSCO", "ReplicatedUniques"]

#: ``columns_chosen_by`` of :class:`ReplicatedUniques` without ``keys``
_WHOLE_RECORDS = (
    "synthpop's default (replicated.uniques() compares whole records; docs/disclosure.md, "
    "'Default columns'): `keys` = every usable column; columns of kind id, pii and text are left out."
)
#: where :class:`DiSCO`'s default keys come from (synthpop's disclosure() has none)
_DISCO_SOURCE = (
    "synthpop's disclosure() has no default keys; its documented example keys every column but the "
    "target, and multi.disclosure() targets every column outside the keys"
)


def _flags(value: Any, *, name: str, n: int) -> list[bool]:
    if isinstance(value, bool):
        return [value] * n
    if (
        isinstance(value, (list, tuple))
        and all(isinstance(v, bool) for v in value)
        and len(value) == n
    ):
        return list(value)
    msg = f"`{name}` must be true, false or a list of {n} booleans (one per key column); got {value!r}."
    raise ParameterError(msg)


def _target_column(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        msg = f"`target` must name one column; got {value!r}."
        raise ParameterError(msg)
    return value


def _any(value: Any, name: str) -> Any:
    """Any value (checked by ``_check_params``, which knows the other parameters)."""
    return value


def _levels(value: Any, name: str) -> list[JSONValue]:
    if value is None:
        return []
    if isinstance(value, (str, int, float, bool)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    msg = f"`not_target_levels` must be a list of target values; got {value!r}."
    raise ParameterError(msg)


def _matching_ids(
    frames: dict[str, pd.DataFrame],
    codes: dict[str, IntArray],
    mask_of: Any,
    n_ids: int,
) -> np.ndarray:
    """Per id: True where some row with that id satisfies ``mask_of(frame)``."""
    out = np.zeros(n_ids, dtype=bool)
    for name, frame in frames.items():
        out[codes[name][np.asarray(mask_of(frame), dtype=bool)]] = True
    return out


@dataclasses.dataclass(frozen=True)
class _Prepared:
    keys: dict[str, IntArray]
    target: dict[str, IntArray]
    n_targets: int
    excluded_keys: np.ndarray | None
    excluded_targets: np.ndarray | None


class _SynthpopBase(Metric):
    """Shared column checks and encoding of the synthpop measures."""

    runs_by_default = False
    higher_is_safer = False
    #: whether the measure has a target column (chosen by default when not given)
    _has_target = False

    keys: Param[list[str] | None, Iterable[str] | None] = Param(
        column_list(allow_none=True),
        None,
        "Key columns (quasi-identifiers) an intruder could know; None: synthrisk's choice.",
    )

    def _check_params(self) -> None:
        if self.keys is None:  # the length is checked once the keys are chosen
            flags = self._key_flags()
            n = len(flags) if isinstance(flags, (list, tuple)) else 1
            _flags(flags, name="use_missing_keys", n=n)
            return
        flags = _flags(self._key_flags(), name="use_missing_keys", n=len(self.keys))
        self._replace_param("use_missing_keys", flags)

    def _chosen_keys(self) -> list[str]:
        assert self.keys is not None  # chosen by :meth:`run` when not given
        return self.keys

    def _note(self, result: MetricResult) -> str | None:
        """A warning when synthrisk's default keys single out nobody (none by default)."""
        return None

    def run(self, tables: Tables, context: Context) -> MetricResult:
        """Choose the key (and target) columns left out (synthrisk's default, recorded), then compute."""
        target = self._target()
        wants_target = self._has_target
        if self.keys is not None and (target is not None or not wants_target):
            return super().run(tables, context)
        names = tables.schema.names
        if self.keys is not None:
            check_columns(self.keys, name="keys", available=names)
        if target is not None:
            check_columns([target], name="target", available=names)
        if not wants_target:
            # synthpop's replicated.uniques() compares whole records: every usable column
            usable = [c.name for c in tables.schema.modelable]
            if not usable:
                msg = f"metric {self.id!r} found no usable column to use as a key; name them with `keys`."
                raise ParameterError(msg)
            return run_resolved(
                self, {"keys": usable}, _WHOLE_RECORDS, tables, context, note=self._note
            )
        keys, sensitive, rule = resolve_key_columns(
            tables,
            keys=self.keys,
            sensitive=None if target is None else [target],
            metric=self.id,
            hint="name them with `keys` and `target`",
            rule="all",
        )
        chosen: dict[str, Any] = {"keys": keys, "target": sensitive[0]}
        why = exact_choice_text(
            keys="keys" if self.keys is None else None,
            sensitive="target" if target is None else None,
            rule=rule,
            source=_DISCO_SOURCE if self.keys is None else None,
        )
        return run_resolved(self, chosen, why, tables, context, note=self._note)

    # what the measures add to the shared steps (replicated uniques have no target)
    def _key_flags(self) -> Any:
        """synthpop's ``usekeysNA``: by default records with a missing key value are kept."""
        return True

    def _target(self) -> str | None:
        return None

    def _not_target_levels(self) -> list[JSONValue]:
        return []

    def _use_missing_target(self) -> bool:
        return True

    def _denom_limit(self) -> int | None:
        return None

    def check_tables(self, tables: Tables) -> None:
        """Check the key and target columns against the tables."""
        names = tables.schema.names
        check_columns(self._chosen_keys(), name="keys", available=names)
        target = self._target()
        if target is not None:
            check_columns([target], name="target", available=names)
            if target in self._chosen_keys():
                msg = f"`target` {target!r} is also one of the `keys`; synthpop needs it outside the keys."
                raise ParameterError(msg)

    def _prepare(self, tables: Tables) -> _Prepared:
        key_codes, n_keys = combination_codes(tables, self._chosen_keys())
        frames = {name: tables.table(name) for name in present_tables(tables)}
        excluded_keys = None
        flags = self._key_flags()
        if not all(flags):
            dropped = [
                k for k, use in zip(self._chosen_keys(), flags, strict=True) if not use
            ]
            excluded_keys = _matching_ids(
                frames, key_codes, lambda f: f[dropped].isna().any(axis=1), n_keys
            )
        target = self._target()
        if target is None:
            zeros = {
                name: np.zeros(codes.size, dtype=np.int64)
                for name, codes in key_codes.items()
            }
            return _Prepared(key_codes, zeros, 1, excluded_keys, None)
        target_codes, n_targets = combination_codes(tables, [target])
        excluded_targets = np.zeros(n_targets, dtype=bool)
        levels = self._not_target_levels()
        if levels:
            as_text = {str(v) for v in levels}
            excluded_targets |= _matching_ids(
                frames,
                target_codes,
                lambda f: f[target].isin(levels) | f[target].astype(str).isin(as_text),
                n_targets,
            )
        if not self._use_missing_target() and frames["real"][target].isna().any():
            excluded_targets |= _matching_ids(
                frames, target_codes, lambda f: f[target].isna(), n_targets
            )
        return _Prepared(
            key_codes, target_codes, n_targets, excluded_keys, excluded_targets
        )

    def _measures(self, prepared: _Prepared, original: str) -> SynthpopDisclosure:
        limit = self._denom_limit()
        return synthpop_disclosure(
            prepared.keys[original],
            prepared.target[original],
            prepared.keys["synthetic"],
            prepared.target["synthetic"],
            n_targets=prepared.n_targets,
            excluded_keys=prepared.excluded_keys,
            excluded_targets=prepared.excluded_targets,
            denom_lim=None if limit is None else int(limit),
        )


def _equal_size_rep_unique(
    self: _SynthpopBase,
    prepared: _Prepared,
    side: str,
    m: int,
    n_repeats: int,
    rng: np.random.Generator,
) -> float:
    """Mean number of replicated uniques in ``m``-row samples of ``side`` (real or holdout)."""
    n = prepared.keys[side].shape[0]
    total = 0.0
    for _ in range(n_repeats):
        rows = np.sort(rng.choice(n, size=m, replace=False))
        sub = dataclasses.replace(
            prepared,
            keys={**prepared.keys, side: prepared.keys[side][rows]},
            target={**prepared.target, side: prepared.target[side][rows]},
        )
        total += float(self._measures(sub, side).rep_unique.sum())
    return total / n_repeats


@register
class ReplicatedUniques(_SynthpopBase):
    """Replicated uniques (repU): real records unique on the keys whose keys are unique in the synthetic table too.

    synthpop's identity disclosure measures (``disclosure()``, ``replicated.uniques()``):
    the score is ``repU`` as a share of the real records; ``UiO`` (real records unique
    on the keys: what the real data alone would expose), ``UiS`` and ``UiOiS`` are in
    the breakdown, as percentages like synthpop prints them. With a holdout, the same
    is measured with holdout rows in place of the real rows (the real table is sampled
    to the holdout's size, ``n_repeats`` times, because uniqueness depends on the
    table size) and compared in ``breakdown["control"]``.

    Parameters
    ----------
    keys : list of str, default=None
        Key columns (quasi-identifiers) an intruder could know. None: every usable
        column, as synthpop's ``replicated.uniques()`` compares whole records
        (``docs/disclosure.md``, "Default columns"; recorded in the result's
        parameters).
    use_missing_keys : bool or list of bool, default=True
        synthpop's ``usekeysNA``: False drops the records with a missing value in
        that key (all keys when one boolean is given).
    n_repeats : int, default=10
        Equal-size samples of the real table for the holdout control.
    confidence_level : float, default=0.95
        Level of the Wilson interval of the score and of the control's interval.
    """

    id = "replicated_uniques"
    report_order = 80
    attack = (
        "An intruder who knows a real person's key values finds a synthetic record that is the only one "
        "with those values, while the person is the only one with them in the real data."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of real records unique on the keys whose key values are unique in the synthetic table too (synthpop's repU): 0 = none replicated"
        ),
        known=("keys",),
    )

    use_missing_keys: Param[bool | Sequence[bool]] = Param(
        custom(_any, "true, false or a list of booleans (one per key column)"),
        True,
        "synthpop's usekeysNA: False drops records with a missing key value.",
    )
    n_repeats: Param[int] = Param(
        integer(minimum=1), 10, "Equal-size samples of the real table for the control."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Level of the Wilson interval and of the control."
    )

    def _key_flags(self) -> Any:
        return self.use_missing_keys

    def _note(self, result: MetricResult) -> str | None:
        synthpop = result.breakdown.get("synthpop")
        ident = synthpop.get("ident") if isinstance(synthpop, dict) else None
        if isinstance(ident, dict) and ident.get("UiO") == 0:
            return (
                f"no real record is unique on the default keys {result.params['keys']}, so repU is 0 "
                "by construction: an attacker who knows these columns singles out nobody."
            )
        return None

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        prepared = self._prepare(tables)
        real = self._measures(prepared, "real")
        n_r = real.rep_unique.size
        level = self.confidence_level
        z = float(stats.norm.ppf(0.5 + level / 2))
        n_rep = int(real.rep_unique.sum())
        breakdown: dict[str, JSONValue] = {
            "rep_u": n_rep / n_r if n_r else None,
            "n_replicated_uniques": n_rep,
            "n_real": n_r,
            "n_synthetic": int(prepared.keys["synthetic"].size),
            "synthpop": {"ident": real.ident},
        }
        records = {
            "replicated_unique": RecordScores(
                "real",
                np.arange(n_r),
                real.rep_unique,
                "1 if the real record is unique on the keys and its keys are unique in the synthetic table",
            )
        }
        if tables.holdout is not None:
            hold = self._measures(prepared, "holdout")
            n_h = hold.rep_unique.size
            m = min(n_r, n_h)
            if n_r > n_h:
                repeats = self.n_repeats
                x_real = _equal_size_rep_unique(
                    self, prepared, "real", m, repeats, context.rng
                )
            else:
                x_real = float(n_rep)
            x_hold = float(hold.rep_unique.sum())
            if n_h > n_r:
                x_hold = _equal_size_rep_unique(
                    self, prepared, "holdout", m, self.n_repeats, context.rng
                )
            breakdown["control"] = compare_proportions(
                x_real,
                m,
                x_hold,
                m,
                statistic="repU (equal-size samples)",
                confidence_level=level,
            )
            breakdown["synthpop_holdout"] = {"ident": hold.ident}
            records["replicated_unique_holdout"] = RecordScores(
                "holdout",
                np.arange(n_h),
                hold.rep_unique,
                "1 if the holdout record is unique on the keys and its keys are unique in the synthetic table",
            )
        ci = None
        if n_r:
            ci = wilson_bounds(n_rep, n_r, z)
        return Outcome(
            score=n_rep / n_r if n_r else None,
            breakdown=breakdown,
            ci=ci,
            records=records,
        )


@register
class DiSCO(_SynthpopBase):
    """DiSCO: real records whose keys point, in the synthetic table, to one target value that is theirs.

    synthpop's attribute disclosure measures (``disclosure()``): a real record is
    *disclosed* when every synthetic record with its key values has the same target
    value and that value is the record's own. The score is DiSCO as a share of the
    real records; ``DiO`` (synthpop's ``Dorig``: the same disclosure from the real data
    alone, its baseline) and all of synthpop's ``attrib``, ``ident`` and ``allCAPs``
    measures (DCAP, TCAP, baseCAP, ...) are in the breakdown, as percentages like
    synthpop prints them. With a holdout, the same attack on holdout records (people
    the generator never saw) is the control: ``breakdown["control"]`` compares the two.

    Parameters
    ----------
    keys : list of str, default=None
        Key columns an intruder knows; matched on exact values (missing is a value).
        None: every usable column but the target, as in synthpop's ``disclosure()``
        example (synthpop has no default; ``docs/disclosure.md``, "Default columns";
        recorded in the result's parameters).
    target : str, default=None
        The column the intruder wants to learn. None: the last categorical column
        outside the keys.
    not_target_levels : list, default=None
        synthpop's ``not.targetlev``: target values whose disclosure does not count.
    use_missing_target : bool, default=True
        synthpop's ``usetargetNA``: False drops records with a missing target.
    use_missing_keys : bool or list of bool, default=True
        synthpop's ``usekeysNA``, per key or for all keys.
    denom_lim : int, default=5
        synthpop's ``denom_lim``: with ``exclude_over_denom_lim``, cells counting more
        records than this are excluded.
    exclude_over_denom_lim : bool, default=False
        synthpop's ``exclude_ov_denom_lim``.
    confidence_level : float, default=0.95
        Level of the Wilson interval of the score and of the control's interval.
    """

    id = "disco"
    report_order = 90
    attack = (
        "An intruder who knows a real person's key values looks them up in the synthetic table; when all "
        "matching synthetic records share one target value, the intruder takes it as the person's."
    )
    threat_model = ThreatModel(
        attacker_holds=SOME_COLUMNS,
        target=TRAINING,
        meaning=(
            "share of real records whose keys occur in the synthetic table with a single target value, theirs (synthpop's DiSCO): 0 = none disclosed; compare with DiO, what the real data alone disclose"
        ),
        known=("keys",),
        guessed=("target",),
    )

    _has_target = True

    target: Param[str | None] = Param(
        custom(_target_column, "one column name or None"),
        None,
        "The column the intruder wants to learn; None: synthrisk's choice.",
    )
    not_target_levels: Param[
        list[JSONValue], str | float | Sequence[str | float] | None
    ] = Param(
        custom(_levels, "a list of target values"),
        None,
        "synthpop's not.targetlev: target values whose disclosure does not count.",
    )
    use_missing_target: Param[bool] = Param(
        boolean(), True, "synthpop's usetargetNA: False drops missing targets."
    )
    use_missing_keys: Param[bool | Sequence[bool]] = Param(
        custom(_any, "true, false or a list of booleans (one per key column)"),
        True,
        "synthpop's usekeysNA, per key or for all keys.",
    )
    denom_lim: Param[int] = Param(integer(minimum=1), 5, "synthpop's denom_lim.")
    exclude_over_denom_lim: Param[bool] = Param(
        boolean(), False, "synthpop's exclude_ov_denom_lim."
    )
    confidence_level: Param[float] = Param(
        confidence(), 0.95, "Level of the Wilson interval and of the control."
    )

    def _key_flags(self) -> Any:
        return self.use_missing_keys

    def _target(self) -> str | None:
        return self.target

    def _not_target_levels(self) -> list[JSONValue]:
        return self.not_target_levels

    def _use_missing_target(self) -> bool:
        return self.use_missing_target

    def _denom_limit(self) -> int | None:
        return self.denom_lim if self.exclude_over_denom_lim else None

    @staticmethod
    def _block(m: SynthpopDisclosure) -> dict[str, JSONValue]:
        return {
            "ident": to_jsonable(m.ident),
            "attrib": to_jsonable(m.attrib),
            "allCAPs": to_jsonable(m.all_caps),
            "attrib_denoms": to_jsonable(m.attrib_denoms),
        }

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        prepared = self._prepare(tables)
        real = self._measures(prepared, "real")
        n_r = real.disco.size
        level = self.confidence_level
        z = float(stats.norm.ppf(0.5 + level / 2))
        n_disco = int(real.disco.sum())
        if n_r == 0:
            return Outcome(score=None, breakdown={"n_real": 0})

        def frac(value: float) -> float | None:
            return None if not np.isfinite(value) else value / 100.0

        breakdown: dict[str, JSONValue] = {
            "disco": n_disco / n_r,
            "dio": frac(real.attrib["Dorig"]),
            "disco_minus_dio": n_disco / n_r - float(real.dio.mean()),
            "dcap": frac(real.attrib["DCAPd"]),
            "tcap": frac(real.all_caps["TCAP"]),
            "base_cap": frac(real.all_caps["baseCAPd"]),
            "rep_u": frac(real.ident["repU"]),
            "n_disclosed": n_disco,
            "n_real": n_r,
            "n_synthetic": int(prepared.keys["synthetic"].size),
            "synthpop": self._block(real),
        }
        records = {
            "disclosed": RecordScores(
                "real",
                np.arange(n_r),
                real.disco,
                "1 if the synthetic records with the real record's keys all carry its target value (DiSCO)",
            ),
            "target_share_in_synthetic": RecordScores(
                "real",
                np.arange(n_r),
                real.dcap,
                "share of the synthetic records with the real record's keys that carry its target value (DCAP term)",
            ),
        }
        if tables.holdout is not None:
            hold = self._measures(prepared, "holdout")
            n_h = hold.disco.size
            breakdown["control"] = compare_proportions(
                float(n_disco),
                n_r,
                float(hold.disco.sum()),
                n_h,
                statistic="DiSCO",
                confidence_level=level,
            )
            breakdown["synthpop_holdout"] = self._block(hold)
            records["disclosed_holdout"] = RecordScores(
                "holdout",
                np.arange(n_h),
                hold.disco,
                "1 if the synthetic records with the holdout record's keys all carry its target value",
            )
        if real.disco_cells[0].size:
            worst = int(np.argmax(real.disco_cells[2]))
            breakdown["largest_disclosed_cell"] = int(real.disco_cells[2][worst])
        return Outcome(
            score=n_disco / n_r,
            breakdown=breakdown,
            ci=wilson_bounds(n_disco, n_r, z),
            records=records,
        )
