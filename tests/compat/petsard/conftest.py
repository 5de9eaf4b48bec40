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


class FakeSinglingOut(_FakeAttack):
    id = "singling_out"
    attack = "An attacker writes queries on the synthetic table that single out one real person."

    def __init__(
        self,
        *,
        mode: str = "multivariate",
        n_attacks: int = 2000,
        n_cols: int = 3,
        max_attempts: int | None = None,
    ) -> None:
        if not isinstance(n_attacks, int) or n_attacks < 1:
            msg = f"`n_attacks` must be an integer >= 1; got {n_attacks!r}."
            raise ParameterError(msg)
        self._set_params(
            mode=mode, n_attacks=n_attacks, n_cols=n_cols, max_attempts=max_attempts
        )


class FakeLinkability(_FakeAttack):
    id = "linkability"
    attack = "An attacker links two partial records of one real person through the synthetic table."

    def __init__(
        self,
        *,
        aux_cols: Sequence[Sequence[str]] | None = None,
        n_attacks: int | None = None,
        n_neighbors: int = 1,
    ) -> None:
        if aux_cols is None:
            msg = "`aux_cols` is required."
            raise ParameterError(msg)
        self._set_params(
            aux_cols=[list(h) for h in aux_cols],
            n_attacks=n_attacks,
            n_neighbors=n_neighbors,
        )

    def _columns(self) -> list[str]:
        return [c for half in self.params["aux_cols"] for c in half]


class FakeInference(_FakeAttack):
    id = "inference"
    attack = "An attacker who knows some columns of a real person guesses a secret one from the synthetic table."

    def __init__(
        self,
        *,
        secret: str | None = None,
        aux_cols: Sequence[str] | None = None,
        n_attacks: int | None = None,
    ) -> None:
        if secret is None:
            msg = "`secret` is required."
            raise ParameterError(msg)
        self._set_params(
            secret=secret,
            aux_cols=None if aux_cols is None else list(aux_cols),
            n_attacks=n_attacks,
        )

    def _columns(self) -> list[str]:
        return [self.params["secret"], *(self.params["aux_cols"] or [])]


@pytest.fixture
def fake_anonymeter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the stand-ins as ``singling_out``, ``linkability`` and ``inference``."""
    for cls in (FakeSinglingOut, FakeLinkability, FakeInference):
        monkeypatch.setitem(METRICS, cls.id, cls)
    return
