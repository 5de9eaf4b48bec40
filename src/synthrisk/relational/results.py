# SPDX-License-Identifier: BSD-3-Clause
"""The result of a multi-table evaluation: the person-level verdict first, tables beside it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from synthrisk._typing import JSONValue
from synthrisk.relational.linkage import LinkageResult
from synthrisk.results import EvaluationReport, to_jsonable

__all__ = ["MultiTableReport"]

#: version of the multi-table JSON form
MULTI_SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True)
class MultiTableReport:
    """Everything :func:`~synthrisk.relational.evaluate_tables` produced.

    Attributes
    ----------
    verdict : {"pass", "review", "fail"}
        The release verdict, judged at person level: the person-level report's verdict,
        made ``fail`` when the linkage attack fails.
    reason : str
        The verdict in words.
    people : EvaluationReport
        The metrics run on the person feature tables (one row per person), with their
        own verdict.
    linkage : LinkageResult
        The cross-table linkage attack.
    tables : dict of str to EvaluationReport
        Each table's single-table report (its rows grouped by person where the metrics
        support it), with its own verdict shown beside the person-level one.
    root : str
        The table whose rows are people.
    n_people : dict of str to int
        People on each side (``real``, ``synthetic``, ``holdout``).
    features : dict
        The person features: ``root`` and ``children`` column names, ``n_events``,
        ``max_levels``.
    seed : int
        The run's seed.
    warnings : tuple of str
        Notes about the inputs (tables evaluated without people, tables skipped).
    """

    verdict: str
    reason: str
    people: EvaluationReport
    linkage: LinkageResult
    tables: Mapping[str, EvaluationReport]
    root: str
    n_people: Mapping[str, int]
    features: Mapping[str, JSONValue]
    seed: int
    warnings: tuple[str, ...] = ()
    schema_version: int = MULTI_SCHEMA_VERSION

    @property
    def table_verdicts(self) -> dict[str, str]:
        """Each table's own verdict (``review`` where a report has none)."""
        return {
            name: "review" if r.verdict is None else r.verdict.overall
            for name, r in self.tables.items()
        }

    def __repr__(self) -> str:
        return (
            f"MultiTableReport(verdict={self.verdict!r}, root={self.root!r}, "
            f"people={dict(self.n_people)}, tables={self.table_verdicts})"
        )

    def __str__(self) -> str:
        return "\n".join(self.summary_lines())

    def summary_lines(self) -> list[str]:
        """What ``print(report)`` shows: the verdict, each level in a line or two."""
        people = ", ".join(f"{side} {n}" for side, n in self.n_people.items())
        lines = [
            f"synthrisk multi-table report: root {self.root!r}, people: {people}, seed {self.seed}",
            f"verdict: {self.verdict.upper()}",
            f"  {self.reason}",
        ]
        if self.people.verdict is not None:
            levels = ", ".join(
                f"{v.metric} {v.level}" for v in self.people.verdict.metrics
            )
            lines.append(f"person level: {levels}")
        lines.append(f"linkage: {self.linkage.level}")
        lines += [
            f"  {a.label}: {a.linked_training} of {a.n_training} training people linked, "
            f"{a.linked_holdout} of {a.n_holdout} holdout people (p = {a.p_value:.3g})"
            for a in self.linkage.attacks
        ]
        if self.tables:
            tables = ", ".join(f"{k} {v}" for k, v in self.table_verdicts.items())
            lines.append(f"tables: {tables}")
        lines += [f"note: {w}" for w in self.warnings]
        return lines

    def to_dict(self) -> dict[str, JSONValue]:
        """JSON-safe form: the verdict first, then the person level, linkage and tables."""
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "schema_version": self.schema_version,
            "kind": "multi_table",
            "root": self.root,
            "seed": self.seed,
            "n_people": to_jsonable(self.n_people),
            "table_verdicts": to_jsonable(self.table_verdicts),
            "warnings": list(self.warnings),
            "features": to_jsonable(self.features),
            "people": self.people.to_dict(),
            "linkage": self.linkage.to_dict(),
            "tables": {name: r.to_dict() for name, r in self.tables.items()},
        }

    def to_json(self, *, indent: int | None = 2) -> str:
        """The report as a JSON string (NaN never appears)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MultiTableReport:
        """Rebuild from :meth:`to_dict` output."""
        return cls(
            verdict=str(data["verdict"]),
            reason=str(data["reason"]),
            people=EvaluationReport.from_dict(data["people"]),
            linkage=LinkageResult.from_dict(data["linkage"]),
            tables={
                str(k): EvaluationReport.from_dict(v)
                for k, v in (data.get("tables") or {}).items()
            },
            root=str(data["root"]),
            n_people={str(k): int(v) for k, v in data["n_people"].items()},
            features=dict(data.get("features") or {}),
            seed=int(data["seed"]),
            warnings=tuple(str(w) for w in data.get("warnings") or ()),
            schema_version=int(data.get("schema_version", MULTI_SCHEMA_VERSION)),
        )

    @classmethod
    def from_json(cls, text: str) -> MultiTableReport:
        """Rebuild from a JSON string."""
        return cls.from_dict(json.loads(text))
