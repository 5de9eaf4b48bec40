# SPDX-License-Identifier: BSD-3-Clause
"""The release context of an assessment: purpose, recipient, release model, attacker.

An anonymisation record is judged from the recipient's side (CJEU C-413/23 P, *EDPS v
SRB*, 2025: "means reasonably likely to be used" by *that* recipient), so the record
states for whom and for what the table is released, what the attacker is assumed to
know, and what share of the population the training table holds (which turns a
membership attack's rates into the precision of an accusation). ISO/IEC 27559 §6
(context assessment) and Québec's anonymisation regulation (purposes fixed first, a
re-assessment date, a register) ask for the same facts.

A :class:`ReleaseContext` is recorded in the report (``report.context``, the JSON's
``context`` block) and read back; every field left out is listed in ``defaults`` so
that the record says which statements are the user's and which are synthrisk's
defaults.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any

from synthrisk.exceptions import ParameterError

__all__ = [
    "CONTEXT_FIELDS",
    "RELEASE_MODELS",
    "ReleaseContext",
    "check_context",
]

#: the release models a record may state (ISO/IEC 27559's public, controlled, enclave)
RELEASE_MODELS: Mapping[str, str] = {
    "public": "public release: anyone may obtain the table (the most demanding case)",
    "restricted": "restricted release: named recipients under a data-use agreement",
    "enclave": "enclave: the table stays in a controlled environment; only vetted outputs leave it",
}

#: the fields of a context, in the record's order
CONTEXT_FIELDS = (
    "purpose",
    "recipient",
    "release_model",
    "attacker_knows",
    "population_share",
    "population_size",
    "assessor",
    "assessed_on",
    "reassess_by",
)

#: what the record says for a field left out (``release_model``: the default value)
DEFAULT_WORDS: Mapping[str, str] = {
    "purpose": "not stated",
    "recipient": "not stated: judged as if anyone may obtain the table",
    "release_model": "public (default: the most demanding release model)",
    "attacker_knows": (
        "not stated: each attack chooses its own columns (Anonymeter's linkability "
        "and inference, the replay tests' known columns)"
    ),
    "population_share": "not given: precision is shown at 1 %, 10 % and 50 %",
    "population_size": "not given",
    "assessor": "not stated",
    "assessed_on": "the date the record was written",
    "reassess_by": "one year after the assessment (default)",
}


def _text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"`context.{name}` must be a text; got {value!r}."
        raise ParameterError(msg)
    value = " ".join(value.split())
    return value or None


def _date(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        value = value.date()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value.strip()).isoformat()
        except ValueError:
            pass
    msg = f"`context.{name}` must be a date written YYYY-MM-DD (e.g. 2027-06-01); got {value!r}."
    raise ParameterError(msg)


def _columns(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in (p.strip() for p in value.split(",")) if v]
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        msg = (
            "`context.attacker_knows` must list column names (a list, or one text "
            f"separated by commas: age,sex,zip); got {value!r}."
        )
        raise ParameterError(msg)
    out = tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
    return out or None


def _share(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        with contextlib.suppress(ValueError):
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (0 < float(value) <= 1)
    ):
        msg = (
            "`context.population_share` must be the share of the population in the "
            f"training table, a number in (0, 1] (e.g. 0.01, or 1%); got {value!r}."
        )
        raise ParameterError(msg)
    return float(value)


def _size(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"`context.population_size` must be a whole number of people (at least 1); got {value!r}."
        raise ParameterError(msg)
    return int(value)


@dataclasses.dataclass(frozen=True)
class ReleaseContext:
    """Who receives the synthetic table, for what, and what the attacker is assumed to know.

    Every field is optional; a field left out is named in ``defaults`` and the record
    states synthrisk's default for it (:data:`DEFAULT_WORDS`).

    Attributes
    ----------
    purpose : str, default=None
        Why the table is released (fixed before the assessment; Québec §3).
    recipient : str, default=None
        Who receives it: the assessment takes the recipient's side (CJEU C-413/23 P).
    release_model : {"public", "restricted", "enclave"}, default="public"
        How it is released (:data:`RELEASE_MODELS`).
    attacker_knows : tuple of str, default=None
        The columns the attacker is assumed to know about a target (quasi-identifiers).
    population_share : float, default=None
        The share of the population whose records are in the training table, in (0, 1]:
        the prior of "this person was in the training data" that turns a membership
        attack's TPR and FPR into the precision of an accusation.
    population_size : int, default=None
        The size of the population the training rows were drawn from; with the
        training table's size it gives ``population_share`` when that is not given.
    assessor : str, default=None
        Who assessed (name, role).
    assessed_on : str, default=None
        The date of the assessment (``YYYY-MM-DD``); the record's date when left out.
    reassess_by : str, default=None
        When the assessment is to be repeated (``YYYY-MM-DD``); one year after the
        assessment when left out.
    defaults : tuple of str
        The fields left out (filled in by :meth:`from_value`).

    Examples
    --------
    >>> ctx = ReleaseContext.from_value({"purpose": "teaching", "population_share": "1%"})
    >>> ctx.population_share, ctx.release_model
    (0.01, 'public')
    >>> "release_model" in ctx.defaults
    True
    """

    purpose: str | None = None
    recipient: str | None = None
    release_model: str = "public"
    attacker_knows: tuple[str, ...] | None = None
    population_share: float | None = None
    population_size: int | None = None
    assessor: str | None = None
    assessed_on: str | None = None
    reassess_by: str | None = None
    defaults: tuple[str, ...] = ()

    @classmethod
    def from_value(
        cls, value: ReleaseContext | Mapping[str, Any] | None
    ) -> ReleaseContext:
        """A checked context from a mapping (the YAML ``context:`` block), a context or None.

        Raises
        ------
        ParameterError
            An unknown key (the message lists the allowed ones) or a bad value.
        """
        if isinstance(value, ReleaseContext):
            return value
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            msg = (
                "`context` must be a mapping of "
                f"{list(CONTEXT_FIELDS)} (or a ReleaseContext); got {type(value).__name__}."
            )
            raise ParameterError(msg)
        unknown = sorted(str(k) for k in value if k not in CONTEXT_FIELDS)
        if unknown:
            msg = f"`context` has unknown keys {unknown}; allowed keys are {list(CONTEXT_FIELDS)}."
            raise ParameterError(msg)
        model = value.get("release_model")
        if model is not None:
            model = str(model).strip().lower()
            if model not in RELEASE_MODELS:
                msg = (
                    f"`context.release_model` must be one of {list(RELEASE_MODELS)}; "
                    f"got {value.get('release_model')!r}."
                )
                raise ParameterError(msg)
        fields: dict[str, Any] = {
            "purpose": _text(value.get("purpose"), "purpose"),
            "recipient": _text(value.get("recipient"), "recipient"),
            "release_model": model,
            "attacker_knows": _columns(value.get("attacker_knows")),
            "population_share": _share(value.get("population_share")),
            "population_size": _size(value.get("population_size")),
            "assessor": _text(value.get("assessor"), "assessor"),
            "assessed_on": _date(value.get("assessed_on"), "assessed_on"),
            "reassess_by": _date(value.get("reassess_by"), "reassess_by"),
        }
        if (
            fields["assessed_on"]
            and fields["reassess_by"]
            and fields["reassess_by"] <= fields["assessed_on"]
        ):
            msg = (
                f"`context.reassess_by` ({fields['reassess_by']}) must come after "
                f"`context.assessed_on` ({fields['assessed_on']})."
            )
            raise ParameterError(msg)
        given = {k: v for k, v in fields.items() if v is not None}
        defaults = tuple(k for k in CONTEXT_FIELDS if k not in given)
        return cls(**given, defaults=defaults)

    def merged(
        self, other: ReleaseContext | Mapping[str, Any] | None
    ) -> ReleaseContext:
        """This context with the fields ``other`` states (the command line over a file)."""
        other = ReleaseContext.from_value(other)
        values = self.given()
        values.update(other.given())
        return ReleaseContext.from_value(values)

    def given(self) -> dict[str, Any]:
        """The fields the user stated (not the defaults)."""
        return {k: getattr(self, k) for k in CONTEXT_FIELDS if k not in self.defaults}

    def dated(self, today: _dt.date | None = None) -> ReleaseContext:
        """With ``assessed_on`` set to ``today`` (the run's date) when it was left out."""
        if self.assessed_on is not None:
            return self
        today = today or _dt.datetime.now(_dt.timezone.utc).date()
        return dataclasses.replace(self, assessed_on=today.isoformat())

    def prior(self, n_training: int | None) -> float | None:
        """The share of the population in the training table: stated, else
        ``n_training / population_size``, else None."""
        if self.population_share is not None:
            return self.population_share
        if self.population_size and n_training:
            return min(1.0, n_training / self.population_size)
        return None

    def reassessment(self) -> str | None:
        """``reassess_by``, else one year after ``assessed_on`` (None without a date)."""
        if self.reassess_by is not None:
            return self.reassess_by
        if self.assessed_on is None:
            return None
        day = _dt.date.fromisoformat(self.assessed_on)
        try:
            return day.replace(year=day.year + 1).isoformat()
        except ValueError:  # 29 February
            return day.replace(year=day.year + 1, day=28).isoformat()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the report's ``context`` block)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in CONTEXT_FIELDS}
        if self.attacker_knows is not None:
            out["attacker_knows"] = list(self.attacker_knows)
        out["defaults"] = list(self.defaults)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReleaseContext:
        """Rebuild from :meth:`to_dict` output (``defaults`` kept as written)."""
        values = {k: data.get(k) for k in CONTEXT_FIELDS if data.get(k) is not None}
        checked = cls.from_value(values)
        defaults = data.get("defaults")
        if defaults is None:
            return checked
        return dataclasses.replace(checked, defaults=tuple(str(d) for d in defaults))


def check_context(
    value: ReleaseContext | Mapping[str, Any] | None,
) -> ReleaseContext | None:
    """``value`` as a checked :class:`ReleaseContext` (None stays None)."""
    return None if value is None else ReleaseContext.from_value(value)
