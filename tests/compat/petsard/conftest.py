# SPDX-License-Identifier: BSD-3-Clause
"""Stand-ins for the Anonymeter-family metrics, so PETsARD plumbing is tested on its own.

They accept the real metrics' PETsARD-facing parameters, check their columns, and return
results shaped like the real ones (risk as the score, nested rates, PETsARD's flat view,
successful queries, per-record outcomes), computed from the tables and the seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.metrics import METRICS, Context, Metric, Outcome
from synthrisk.metrics._params import Param, custom
from synthrisk.results import RecordScores
from synthrisk.schema.tables import Tables


def _estimate(n_main: int, n_base: int, n_ctrl: int, n: int) -> dict[str, Any]:
    z2 = 1.959964**2

    def rate(k: int) -> tuple[float, float]:
        value = (k + z2 / 2) / (n + z2)
        error = 1.959964 / (n + z2) * np.sqrt(k * (n - k) / n + z2 / 4)
        return float(value), float(error)

    (a, ea), (b, eb), (c, ec) = rate(n_main), rate(n_base), rate(n_ctrl)
    risk = max(0.0, min(1.0, (a - c) / (1 - c)))
    err = float(np.hypot(ea / (1 - c), ec * (a - 1) / (1 - c) ** 2))
    low, high = max(0.0, risk - err), min(1.0, risk + err)
    return {
        "risk": risk,
        "risk_ci": [low, high],
        "attack_rate": {"value": a, "error": ea},
        "baseline_rate": {"value": b, "error": eb},
        "control_rate": {"value": c, "error": ec},
        "n_attacks": {"main": n, "baseline": n, "control": n},
        "petsard": {
            "risk": risk, "risk_CI_btm": low, "risk_CI_top": high, "attack_rate": a, "attack_rate_err": ea,
            "baseline_rate": b, "baseline_rate_err": eb, "control_rate": c, "control_rate_err": ec,
        },
    }  # fmt: skip


class _FakeAttack(Metric):
    higher_is_safer = False
    requires_holdout = True
    runs_by_default = False

    def _columns(self) -> list[str]:
        return []

    def check_tables(self, tables: Tables) -> None:
        unknown = [c for c in self._columns() if c not in tables.schema.names]
        if unknown:
            msg = f"`aux_cols` names columns that are not in the tables: {unknown}."
            raise ParameterError(msg)

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        n_real = tables.encoded("real").n_rows
        n = min(
            self.params.get("n_attacks") or tables.encoded("holdout").n_rows, n_real
        )
        draws = context.rng.integers(0, max(n // 4, 2), size=3)
        breakdown = _estimate(int(draws[0]) + n // 2, int(draws[1]), int(draws[2]), n)
        breakdown["successful_queries"] = [
            f"age == {30 + i} AND sex == 'Male'" for i in range(3)
        ]
        rows = np.sort(context.rng.choice(n_real, size=min(n, n_real), replace=False))
        records = {
            "attacked_real": RecordScores(
                "real", rows, (rows % 3 == 0).astype(float), "1 = attack succeeded"
            )
        }
        return Outcome(
            breakdown["risk"], breakdown, tuple(breakdown["risk_ci"]), records
        )  # type: ignore[arg-type]


def _as_given(value: Any, name: str) -> Any:
    return value


def _n_attacks(value: Any, name: str) -> int:
    if not isinstance(value, int) or value < 1:
        msg = f"`{name}` must be an integer >= 1; got {value!r}."
        raise ParameterError(msg)
    return value


def _required(convert: Any) -> Any:
    def check(value: Any, name: str) -> Any:
        if value is None:
            msg = f"`{name}` is required."
            raise ParameterError(msg)
        return convert(value)

    return check


def _optional_list(value: Any, name: str) -> list[str] | None:
    return None if value is None else list(value)


class FakeSinglingOut(_FakeAttack):
    id = "singling_out"
    attack = "An attacker writes queries on the synthetic table that single out one real person."

    mode: Param[str] = Param(custom(_as_given, "anything"), "multivariate")
    n_attacks: Param[int] = Param(custom(_n_attacks, "an integer >= 1"), 2000)
    n_cols: Param[int] = Param(custom(_as_given, "anything"), 3)
    max_attempts: Param[int | None] = Param(custom(_as_given, "anything"), None)


class FakeLinkability(_FakeAttack):
    id = "linkability"
    attack = "An attacker links two partial records of one real person through the synthetic table."

    aux_cols: Param[list[list[str]], Sequence[Sequence[str]] | None] = Param(
        custom(_required(lambda pair: [list(h) for h in pair]), "two lists")
    )
    n_attacks: Param[int | None] = Param(custom(_as_given, "anything"), None)
    n_neighbors: Param[int] = Param(custom(_as_given, "anything"), 1)

    def _columns(self) -> list[str]:
        return [c for half in self.params["aux_cols"] for c in half]


class FakeInference(_FakeAttack):
    id = "inference"
    attack = "An attacker who knows some columns of a real person guesses a secret one from the synthetic table."

    secret: Param[str, str | None] = Param(
        custom(_required(lambda value: value), "a column name")
    )
    aux_cols: Param[list[str] | None, Sequence[str] | None] = Param(
        custom(_optional_list, "column names or None"), None
    )
    n_attacks: Param[int | None] = Param(custom(_as_given, "anything"), None)

    def _columns(self) -> list[str]:
        return [self.params["secret"], *(self.params["aux_cols"] or [])]


@pytest.fixture
def fake_anonymeter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the stand-ins as ``singling_out``, ``linkability`` and ``inference``."""
    for cls in (FakeSinglingOut, FakeLinkability, FakeInference):
        monkeypatch.setitem(METRICS, cls.id, cls)
    return
