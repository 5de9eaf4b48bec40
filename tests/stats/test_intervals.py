# SPDX-License-Identifier: BSD-3-Clause
"""Wilson rates, residual risk and clipping.

Some expected values are ported from Anonymeter's ``tests/test_confidence.py``
(The Clear BSD License, Copyright (c) 2022 Anonos IP LLC); the golden file is
recorded from Anonymeter 1.1 by ``scripts/record_goldens_anonymeter.py``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.stats import (
    SuccessRate,
    baseline_warning,
    bind_value,
    estimate_attack,
    probit,
    residual_success,
    success_rate,
)
from synthrisk.stats.intervals import wilson_interval

GOLDENS = json.loads(
    (Path(__file__).parent / "data" / "anonymeter_stats_goldens.json").read_text()
)

# (N, n_main, n_base, n_ctrl, cl) -> A (value, err), C (value, err), risk (value, lo, hi):
# the test vectors of the reference notes (anonymeter_petsard.md §5)
VECTORS = [
    (
        (500, 16, 0, 9.2306, 0.95),
        (0.0355682, 0.0157767),
        (0.0221326, 0.0123140),
        (0.0137397, 0.0, 0.0341001),
    ),
    (
        (2000, 327, 64, 60.0046115, 0.95),
        (0.1641451, 0.0162051),
        (0.0309033, 0.0075234),
        (0.1374907, 0.1194780, 0.1555034),
    ),
    (
        (100, 30, 5, 10, 0.90),
        (0.3052685, 0.0745636),
        (0.1105371, 0.0498184),
        (0.2189315, 0.1243732, 0.3134898),
    ),
]


@pytest.mark.parametrize(("inputs", "attack", "control", "risk"), VECTORS)
def test_reference_vectors_reproduce_to_1e7(
    inputs: tuple, attack: tuple, control: tuple, risk: tuple
) -> None:
    n, n_main, n_base, n_ctrl, cl = inputs
    est = estimate_attack(
        n_success=n_main,
        n_attacks=n,
        n_baseline=n_base,
        n_control=n_ctrl,
        confidence_level=cl,
    )
    assert est.attack_rate.value == pytest.approx(attack[0], abs=1e-7)
    assert est.attack_rate.error == pytest.approx(attack[1], abs=1e-7)
    assert est.control_rate is not None
    assert est.control_rate.value == pytest.approx(control[0], abs=1e-7)
    assert est.control_rate.error == pytest.approx(control[1], abs=1e-7)
    got = est.risk()
    assert got.value == pytest.approx(risk[0], abs=1e-7)
    assert got.ci[0] == pytest.approx(risk[1], abs=1e-7)
    assert got.ci[1] == pytest.approx(risk[2], abs=1e-7)


def test_zero_of_500_baseline_is_the_wilson_centre() -> None:
    rate = success_rate(0, 500)
    assert rate.value == pytest.approx(0.0038122, abs=1e-7)
    assert rate.error == pytest.approx(0.0038122, abs=1e-7)
    assert rate.value == pytest.approx(rate.error, rel=1e-14)  # both z²/2 / (N + z²)
    est = estimate_attack(n_success=16, n_attacks=500, n_baseline=0)
    got = est.risk(baseline=True)
    assert got.value == rate.value
    assert got.ci == pytest.approx((0.0, rate.value + rate.error), abs=1e-15)


@pytest.mark.parametrize(
    "case", GOLDENS["cases"], ids=lambda c: f"{c['n_attacks']}-{c['confidence_level']}"
)
def test_estimate_equals_anonymeter_evaluation_results(case: dict) -> None:
    n_main, n_base, n_ctrl = case["n_attacks"]
    est = estimate_attack(
        n_success=case["n_success"], n_attacks=n_main, n_baseline=case["n_baseline"], n_baseline_attacks=n_base,
        n_control=case["n_control"], n_control_attacks=n_ctrl, confidence_level=case["confidence_level"],
    )  # fmt: skip
    assert list(est.attack_rate) == pytest.approx(case["attack_rate"], abs=1e-12)
    assert list(est.baseline_rate) == pytest.approx(case["baseline_rate"], abs=1e-12)
    if case["control_rate"] is None:
        assert est.control_rate is None
    else:
        assert list(est.control_rate) == pytest.approx(case["control_rate"], abs=1e-12)  # type: ignore[arg-type]
    risk = est.risk()
    assert [risk.value, *risk.ci] == pytest.approx(case["risk"], abs=1e-12)
    base = est.risk(baseline=True)
    assert [base.value, *base.ci] == pytest.approx(case["baseline_risk"], abs=1e-12)


def test_probit_of_95_percent() -> None:
    assert round(probit(0.95), 2) == 1.96
    assert probit(0.0) == 0.0


@pytest.mark.parametrize(
    ("n_success", "rate", "error"),
    [(850, 0.849, 0.022), (0, 0.002, 0.002), (1000, 0.998, 0.002)],
)
def test_success_rate_of_1000_attacks(
    n_success: int, rate: float, error: float
) -> None:
    got = success_rate(n_success, 1000)
    assert round(got.value, 3) == rate
    assert round(got.error, 3) == error


def test_success_rate_at_confidence_zero_is_the_plain_share() -> None:
    assert success_rate(23, 100, confidence_level=0) == SuccessRate(0.23, 0.0)
    assert success_rate(0, 7, confidence_level=0) == SuccessRate(0.0, 0.0)


def test_success_rate_accepts_fractional_successes() -> None:
    got = success_rate(60.0046115, 2000)
    assert got.value == pytest.approx(0.0309033, abs=1e-7)


@pytest.mark.parametrize(
    ("attack", "control", "expected"),
    [
        (SuccessRate(0.9, 0.0), SuccessRate(0.8, 0.0), (0.5, 0.0)),
        (SuccessRate(0.9, 0.02), SuccessRate(0.85, 0.02), (0.333, 0.16)),
    ],
)
def test_residual_success(
    attack: SuccessRate, control: SuccessRate, expected: tuple[float, float]
) -> None:
    got = residual_success(attack, control)
    assert (round(got.value, 3), round(got.error, 3)) == expected


def test_residual_error_is_first_order_propagation() -> None:
    a, c = SuccessRate(0.3, 0.05), SuccessRate(0.1, 0.04)
    got = residual_success(a, c)
    expected = math.sqrt((0.05 / 0.9) ** 2 + (0.04 * (0.3 - 1) / 0.81) ** 2)
    assert got.value == pytest.approx(0.2 / 0.9, abs=1e-15)
    assert got.error == pytest.approx(expected, abs=1e-15)


def test_residual_is_negative_before_clipping() -> None:
    got = residual_success(SuccessRate(0.1, 0.01), SuccessRate(0.2, 0.01))
    assert got.value < 0
    est = estimate_attack(n_success=10, n_attacks=100, n_baseline=0, n_control=30)
    assert est.residual().value < 0
    assert est.risk().value == 0.0
    assert est.risk().ci[0] == 0.0


@pytest.mark.parametrize(
    ("point", "error", "expected"),
    [
        (0.1, 0.3, (0.1, 0.0, 0.4)),
        (1.1, 0.5, (1.0, 0.6, 1.0)),
        (-0.1, 0.2, (0.0, 0.0, 0.1)),
    ],
)
def test_bind_value_clips_value_and_interval(
    point: float, error: float, expected: tuple
) -> None:
    got = bind_value(point, error)
    assert [got.value, *got.ci] == pytest.approx(list(expected), abs=1e-12)


def test_estimate_without_control_uses_the_attack_rate() -> None:
    est = estimate_attack(
        n_success=23, n_attacks=100, n_baseline=11, confidence_level=0.95
    )
    assert est.control_rate is None
    assert est.risk() == est.attack_rate.to_risk()
    assert est.attack_rate == SuccessRate(0.23998824451588613, 0.08155558571285167)
    assert est.baseline_rate == SuccessRate(0.1244274643007244, 0.06188550073007873)


def test_estimate_carries_separate_denominators() -> None:
    est = estimate_attack(
        n_success=5,
        n_attacks=10,
        n_baseline=1,
        n_baseline_attacks=20,
        n_control=3,
        n_control_attacks=30,
    )
    assert (est.n_attacks, est.n_baseline_attacks, est.n_control_attacks) == (
        10,
        20,
        30,
    )
    assert est.control_rate == success_rate(3, 30)
    assert est.baseline_rate == success_rate(1, 20)


def test_breakdown_and_petsard_view() -> None:
    est = estimate_attack(
        n_success=327, n_attacks=2000, n_baseline=64, n_control=60.0046115
    )
    out = est.to_dict()
    assert set(out) == {
        "risk", "risk_ci", "attack_rate", "baseline_rate", "control_rate", "n_attacks", "n_success", "confidence_level"
    }  # fmt: skip
    assert out["risk"] == pytest.approx(0.1374907, abs=1e-7)
    assert out["n_attacks"] == {"main": 2000, "baseline": 2000, "control": 2000}
    view = est.petsard()
    assert list(view) == [
        "risk", "risk_CI_btm", "risk_CI_top", "attack_rate", "attack_rate_err",
        "baseline_rate", "baseline_rate_err", "control_rate", "control_rate_err",
    ]  # fmt: skip
    assert view["risk_CI_btm"] == pytest.approx(0.1194780, abs=1e-7)
    assert view["control_rate_err"] == pytest.approx(0.0075234, abs=1e-7)


def test_baseline_warning_when_attack_is_no_better() -> None:
    est = estimate_attack(n_success=49, n_attacks=100, n_baseline=50)
    (message,) = est.warnings()
    assert "no more often than the random-guessing baseline" in message
    assert "0.4900" in message or "0.49" in message
    assert estimate_attack(n_success=60, n_attacks=100, n_baseline=50).warnings() == []
    assert baseline_warning(SuccessRate(0.5, 0.1), SuccessRate(0.5, 0.1)) is not None


@pytest.mark.parametrize("level", [-0.1, 1.0, 1.2, True, "0.95", float("nan")])
def test_confidence_level_must_be_in_unit_interval(level: object) -> None:
    with pytest.raises(
        ParameterError, match=r"`confidence_level` must be a number in \[0, 1\)"
    ):
        success_rate(1, 2, confidence_level=level)  # type: ignore[arg-type]


@pytest.mark.parametrize(("n_success", "n_total"), [(1, 0), (3, 2), (-1, 5), (1, 2.5)])
def test_counts_are_validated(n_success: float, n_total: int) -> None:
    with pytest.raises(ParameterError, match="`n_"):
        success_rate(n_success, n_total)  # type: ignore[arg-type]


def test_residual_needs_control_below_one() -> None:
    with pytest.raises(ParameterError, match="control success rate must be below 1"):
        residual_success(SuccessRate(0.5, 0.1), SuccessRate(1.0, 0.0))


def test_control_always_successful_leaves_the_risk_undefined() -> None:
    est = estimate_attack(
        n_success=2, n_attacks=2, n_baseline=0, n_control=2, confidence_level=0
    )
    risk = est.risk()
    assert math.isnan(risk.value)
    assert all(math.isnan(b) for b in risk.ci)
    assert est.to_dict()["risk_ci"] is None
    assert any("control attack succeeded every time" in w for w in est.warnings())


def test_wilson_interval_known_value() -> None:
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 10)[0] == 0.0
