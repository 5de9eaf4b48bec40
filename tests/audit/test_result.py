# SPDX-License-Identifier: BSD-3-Clause
"""The audit result: JSON-safe, row numbers only, and its verdict."""

from __future__ import annotations

import json
import math

import pytest

from synthrisk.audit import AuditResult, Bound, RunFailure, TargetAudit
from synthrisk.exceptions import ParameterError

BOUND = Bound(
    auc=0.75,
    tpr_at_fpr={"0.01": 0.1, "0.1": 0.4},
    epsilon_lower=0.8,
    threshold=0.5,
    direction="higher",
    tpr=(0.6, 0.8),
    fpr=(0.1, 0.3),
    n_members=100,
    n_non_members=90,
)
EMPTY = Bound(
    auc=None,
    tpr_at_fpr={"0.01": None, "0.1": None},
    epsilon_lower=0.0,
    threshold=None,
    direction=None,
    tpr=(0.0, 1.0),
    fpr=(0.0, 1.0),
    n_members=0,
    n_non_members=0,
)


def _result(epsilon: float = 0.8) -> AuditResult:
    target = TargetAudit(
        row=12,
        source="vulnerable",
        isolation=0.31,
        n_included=51,
        attacks={"dcr": BOUND, "knn": EMPTY},
        epsilon_lower=0.8,
        best_attack="dcr",
    )
    return AuditResult(
        generator="callable: my.generator",
        threat_model={"attacker_knows": "the algorithm"},
        settings={"confidence_level": 0.95, "delta": 0.0},
        runs={"completed": 200, "evaluation": 100, "failed": 1},
        epsilon_lower=epsilon,
        best_attack="dcr" if epsilon else None,
        overall={"dcr": BOUND, "knn": EMPTY},
        targets=(target,),
        failures=(RunFailure(run=7, error="RuntimeError: out of memory"),),
    )


def test_to_json_round_trips_and_is_strict_json() -> None:
    result = _result()
    data = json.loads(result.to_json())
    assert data == json.loads(json.dumps(result.to_dict()))
    assert data["schema_version"] == 1
    assert data["kind"] == "generator_audit"
    assert data["epsilon_lower"] == 0.8
    assert data["overall"]["dcr"]["tpr"] == [0.6, 0.8]
    assert data["overall"]["knn"]["auc"] is None
    assert data["targets"][0]["row"] == 12
    assert data["targets"][0]["attacks"]["dcr"]["n_members"] == 100
    assert data["failures"] == [{"run": 7, "error": "RuntimeError: out of memory"}]
    assert result.n_runs == 200


def test_verdict_passes_and_fails_at_the_bound() -> None:
    result = _result(0.8)
    fail = result.verdict(0.5)
    assert not fail.passed
    assert "not 0.5-differentially private" in fail.reason
    assert "dcr" in fail.reason
    ok = result.verdict(1.0)
    assert ok.passed
    assert "no attack refuted ε = 1" in ok.reason
    assert result.verdict(0.8).passed  # a bound equal to the claim does not refute it
    assert fail.to_dict() == {
        "passed": False,
        "epsilon_lower": 0.8,
        "max_epsilon": 0.5,
        "reason": fail.reason,
        "level": "fail",
        "reachable": pytest.approx(fail.reachable),
    }
    assert ok.level == "pass"


def test_reachable_epsilon_is_a_perfect_attacks_bound() -> None:
    # 100 member and 90 non-member guesses, two-sided Clopper-Pearson intervals at 97.5 %
    # per rate (1.25 % in each tail): all 100 members flagged -> TPR >= 0.0125^(1/100);
    # no non-member flagged -> FPR <= 1 - 0.0125^(1/90)
    tpr_low, fpr_high = 0.0125 ** (1 / 100), 1 - 0.0125 ** (1 / 90)
    by_hand = max(
        math.log(tpr_low / fpr_high), math.log((1 - fpr_high) / (1 - tpr_low))
    )
    # or all 190 guesses right, one-sided at 95 %: share >= 0.05^(1/190), the larger
    q = 0.05 ** (1 / 190)
    by_hand = max(by_hand, math.log(q / (1 - q)))
    result = _result(0.8)
    assert result.reachable_epsilon() == pytest.approx(by_hand, rel=1e-9)
    assert 4.1 < by_hand < 4.2


def test_verdict_reads_review_when_the_runs_could_not_refute_the_claim() -> None:
    result = _result(0.8)
    reachable = result.reachable_epsilon()
    assert reachable is not None
    claim = reachable + 0.5
    review = result.verdict(claim)
    assert review.passed
    assert review.level == "review"
    assert "could not have refuted it" in review.reason
    assert review.fails("review")
    assert not review.fails("fail")
    assert result.verdict(1.0).level == "pass"
    with pytest.raises(ParameterError, match="`fail_on` must be"):
        review.fails("warn")


def test_verdict_reads_review_when_many_runs_failed() -> None:
    result = _result(0.8)
    many = AuditResult(
        **{**result.__dict__, "runs": {"completed": 80, "evaluation": 40, "failed": 20}}
    )
    assert many.verdict(1.0).level == "review"
    assert "80 of 100 shadow runs completed; 20 failed: runs 7 and 19 more" in (
        many.verdict(1.0).reason
    )
    assert many.verdict(0.5).level == "fail"


@pytest.mark.parametrize("bad", [-1, float("inf"), "1", True, float("nan")])
def test_verdict_rejects_bad_max_epsilon(bad: object) -> None:
    with pytest.raises(
        ParameterError, match="`max_epsilon` must be a finite number >= 0"
    ):
        _result().verdict(bad)  # type: ignore[arg-type]


def test_result_is_frozen() -> None:
    with pytest.raises(AttributeError):
        _result().epsilon_lower = 0.0  # type: ignore[misc]


def test_from_dict_round_trips() -> None:
    result = _result()
    again = AuditResult.from_dict(json.loads(result.to_json()))
    assert again == result
    assert again.to_json() == result.to_json()


def test_from_dict_refuses_other_documents() -> None:
    with pytest.raises(ParameterError, match="must be a generator audit's JSON"):
        AuditResult.from_dict({"schema_version": 1, "results": []})
