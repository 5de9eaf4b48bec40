# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.report.verdict import (
    DEFAULT_THRESHOLDS,
    Threshold,
    Thresholds,
    check_fail_on,
    judge,
    judge_result,
)
from synthrisk.results import EvaluationReport, MetricResult

#: every metric id the project defines
ALL_METRIC_IDS = (
    "dcr_baseline_protection", "dcr_overfitting_protection", "disclosure_protection",
    "disclosure_protection_estimate", "categorical_cap", "categorical_zero_cap", "categorical_generalized_cap",
    "singling_out", "linkability", "inference", "membership_knn_probabilities", "dcr_share",
    "membership_classification", "distribution_validation", "nndr", "identical_match_share",
)  # fmt: skip


def risk(
    metric: str, score: float | None, ci: tuple[float, float] | None = None
) -> MetricResult:
    return MetricResult(metric, score, {}, ci, higher_is_safer=False)


def protection(
    metric: str, score: float | None, ci: tuple[float, float] | None = None
) -> MetricResult:
    return MetricResult(metric, score, {}, ci, higher_is_safer=True)


def report(*results: MetricResult) -> EvaluationReport:
    return EvaluationReport("0.1.0", 0, {}, tuple(results))


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (0.0, "pass"),
        (0.0899, "pass"),
        (0.09, "review"),
        (0.1799, "review"),
        (0.18, "fail"),
        (1.0, "fail"),
    ],
)
def test_anonymeter_risk_passes_below_petsards_0_09(score: float, level: str) -> None:
    # PETsARD: "risk < 0.09" (exclusive); fail at 0.18
    for metric in ("singling_out", "linkability", "inference"):
        assert judge_result(risk(metric, score)).level == level


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (1.0, "pass"),
        (0.5, "pass"),
        (0.4999, "review"),
        (0.25, "review"),
        (0.2499, "fail"),
    ],
)
def test_dcr_overfitting_passes_at_half(score: float, level: str) -> None:
    assert judge_result(protection("dcr_overfitting_protection", score)).level == level


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (1.0, "pass"),
        (0.5, "pass"),
        (0.4999, "review"),
        (0.24, "review"),
        (0.1, "review"),
        (0.0999, "fail"),
    ],
)
def test_dcr_baseline_passes_at_half_and_fails_on_near_copies(
    score: float, level: str
) -> None:
    assert judge_result(protection("dcr_baseline_protection", score)).level == level


@pytest.mark.parametrize(
    ("auc", "level"), [(0.5, "pass"), (0.6, "pass"), (0.61, "review"), (0.75, "fail")]
)
def test_membership_auc_passes_at_or_below_0_6(auc: float, level: str) -> None:
    assert judge_result(risk("membership_knn_probabilities", auc)).level == level


def test_defaults_have_sources_and_valid_limits() -> None:
    for metric, threshold in DEFAULT_THRESHOLDS.items():
        assert metric in ALL_METRIC_IDS
        assert threshold.source
        assert 0 <= threshold.pass_at <= 1
        assert 0 <= threshold.fail_at <= 1


def test_reasons_say_what_was_compared() -> None:
    verdict = judge_result(risk("singling_out", 0.137))
    assert (
        verdict.reason
        == "score 0.137 lies between the pass and fail limits (pass < 0.09, fail ≥ 0.18)."
    )
    assert judge_result(protection("dcr_baseline_protection", 0.05)).reason == (
        "score 0.05 is beyond the fail limit (pass ≥ 0.5, fail < 0.1)."
    )


def test_undefined_score_missing_threshold_and_wrong_orientation_need_review() -> None:
    undefined = judge_result(protection("dcr_baseline_protection", None))
    assert (undefined.level, undefined.reason) == (
        "review",
        "the score is undefined (see the metric's warnings).",
    )
    unknown = judge_result(protection("brand_new_metric", 0.99))
    assert unknown.level == "review"
    assert unknown.threshold is None
    assert "no threshold is configured for 'brand_new_metric'" in unknown.reason
    flipped = judge_result(
        protection("singling_out", 0.01)
    )  # a risk metric reporting higher_is_safer=True
    assert flipped.level == "review"
    assert "the threshold assumes a lower score is safer" in flipped.reason


def test_conservative_judges_the_unsafe_end_of_the_interval() -> None:
    result = risk("singling_out", 0.05, ci=(0.02, 0.11))
    assert judge_result(result).level == "pass"
    conservative = judge_result(result, Thresholds(conservative=True))
    assert (conservative.level, conservative.value) == ("review", 0.11)
    assert conservative.reason.startswith("upper interval bound 0.11")
    dcr = protection("dcr_baseline_protection", 0.6, ci=(0.05, 0.8))
    assert judge_result(dcr, Thresholds(conservative=True)).level == "fail"
    # without an interval the point estimate is judged
    assert (
        judge_result(risk("singling_out", 0.05), Thresholds(conservative=True)).level
        == "pass"
    )


def test_overall_is_the_worst_and_gates() -> None:
    passing = report(
        protection("dcr_baseline_protection", 0.9), risk("singling_out", 0.01)
    )
    reviewing = report(
        protection("dcr_baseline_protection", 0.9), risk("singling_out", 0.1)
    )
    failing = report(
        protection("dcr_baseline_protection", 0.05), risk("singling_out", 0.1)
    )
    assert [judge(r).overall for r in (passing, reviewing, failing)] == [
        "pass",
        "review",
        "fail",
    ]
    assert judge(failing).counts() == {"pass": 0, "review": 1, "fail": 1}
    assert not judge(passing).fails("review")
    assert judge(reviewing).fails("review")
    assert not judge(reviewing).fails("fail")
    assert judge(failing).fails("fail")
    assert judge(report()).overall == "review"  # nothing evaluated is not a pass


def test_judge_reads_the_json_dict() -> None:
    data = report(risk("singling_out", 0.2)).to_dict()
    assert judge(data).overall == "fail"
    data["schema_version"] = 99
    with pytest.raises(ValueError, match="newer than the 1 this synthrisk reads"):
        judge(data)


def test_overrides_complete_from_the_defaults() -> None:
    thresholds = Thresholds({"singling_out": {"pass": 0.05}})
    t = thresholds["singling_out"]
    assert (t.pass_at, t.fail_at, t.higher_is_safer, t.inclusive) == (
        0.05,
        0.18,
        False,
        False,
    )
    assert t.source.startswith("user-supplied (default: pass: PETsARD")
    assert judge_result(risk("singling_out", 0.06), thresholds).level == "review"
    # a metric without a default takes its orientation from the result
    custom = Thresholds({"my_metric": {"pass": 0.8, "fail": 0.6}})
    assert "my_metric" not in custom
    assert judge_result(protection("my_metric", 0.9), custom).level == "pass"
    assert judge_result(protection("my_metric", 0.5), custom).level == "fail"
    explicit = Thresholds(
        {"my_metric": Threshold(0.2, 0.4, higher_is_safer=False, source="ours")}
    )
    assert judge_result(risk("my_metric", 0.3), explicit).level == "review"
    assert Thresholds(defaults=False).for_result(risk("singling_out", 0.0)) is None
    assert Thresholds.from_dict({"conservative": True}).conservative is True


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (
            {"singling_out": {"pass": 1.5}},
            r"`thresholds.singling_out.pass` must be a number in \[0, 1\]; got 1.5\.",
        ),
        (
            {"singling_out": {"fail": -0.1}},
            r"`thresholds.singling_out.fail` must be a number in \[0, 1\]; got -0.1\.",
        ),
        (
            {"singling_out": {"pass": "0.1"}},
            r"`thresholds.singling_out.pass` must be a number in \[0, 1\]; got '0.1'\.",
        ),
        (
            {"singling_out": {"pass": True}},
            r"`thresholds.singling_out.pass` must be a number in \[0, 1\]; got True\.",
        ),
        (
            {"singling_out": {"pass": 0.1, "fial": 0.2}},
            r"`thresholds.singling_out` has unknown keys \['fial'\]",
        ),
        (
            {"singling_out": {"pass": 0.3, "fail": 0.2}},
            r"`fail_at` must not be below `pass_at`",
        ),
        ({"dcr_share": 0.5}, r"`thresholds.dcr_share` must be a mapping"),
        (
            {"new_metric": {"pass": 0.5}},
            r"`thresholds.new_metric` needs `fail` \(metric 'new_metric' has no default",
        ),
        (
            {"singling_out": {"pass": 0.1, "higher_is_safer": "no"}},
            r"`thresholds.singling_out.higher_is_safer` must be true or false",
        ),
    ],
)
def test_bad_thresholds_are_rejected(spec: dict[str, object], match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        Thresholds.from_dict(spec)


def test_threshold_limits_are_checked() -> None:
    with pytest.raises(
        ParameterError, match=r"`pass_at` must be a number in \[0, 1\]; got 2"
    ):
        Threshold(2, 0.5, higher_is_safer=True)
    with pytest.raises(
        ParameterError,
        match="for a metric where higher is safer, `fail_at` must not exceed `pass_at`",
    ):
        Threshold(0.3, 0.5, higher_is_safer=True)
    with pytest.raises(ParameterError, match="`thresholds` must be a mapping"):
        Thresholds.from_dict([0.1])  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["warn", "", None, "FAIL"])
def test_unknown_gate_level_is_rejected(level: object) -> None:
    with pytest.raises(ParameterError, match=r"`fail_on` must be 'review' or 'fail'"):
        check_fail_on(level)
