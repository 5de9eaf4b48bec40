# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json

import pytest

from synthrisk.exceptions import ParameterError
from synthrisk.report.verdict import (
    DEFAULT_THRESHOLDS,
    DEFAULT_TOLERANCES,
    Threshold,
    Thresholds,
    check_fail_on,
    judge,
    judge_result,
)
from synthrisk.results import EvaluationReport, MetricResult, Verdict

#: every metric id the project defines
ALL_METRIC_IDS = (
    "identification", "vulnerable_people", "identifier_replay", "text_replay", "row_string_replay",
    "quasi_identifier_replay", "rare_value_replay",
    "dcr_baseline_protection", "dcr_overfitting_protection", "disclosure_protection",
    "disclosure_protection_estimate", "categorical_cap", "categorical_zero_cap", "categorical_generalized_cap",
    "singling_out", "linkability", "inference", "membership_knn_probabilities", "dcr_share",
    "membership_classification", "distribution_validation", "nndr", "identical_match_share",
    "singling_out_univariate",
)  # fmt: skip


def scale(*metrics: str, conservative: bool = False) -> Thresholds:
    """User thresholds that judge ``metrics`` on the documented score scale."""
    return Thresholds({m: {} for m in metrics}, conservative=conservative)


def risk(
    metric: str, score: float | None, ci: tuple[float, float] | None = None
) -> MetricResult:
    return MetricResult(metric, score, {}, ci, higher_is_safer=False)


def protection(
    metric: str, score: float | None, ci: tuple[float, float] | None = None
) -> MetricResult:
    return MetricResult(metric, score, {}, ci, higher_is_safer=True)


def report(*results: MetricResult, holdout: bool = True) -> EvaluationReport:
    inputs = {"holdout": {"rows": 1000} if holdout else None}
    return EvaluationReport("0.1.0", 0, inputs, tuple(results))


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
        assert judge_result(risk(metric, score), scale(metric)).level == level


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
    metric = "dcr_overfitting_protection"
    assert judge_result(protection(metric, score), scale(metric)).level == level


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
    metric = "dcr_baseline_protection"
    assert judge_result(protection(metric, score), scale(metric)).level == level


@pytest.mark.parametrize(
    ("auc", "level"), [(0.5, "pass"), (0.6, "pass"), (0.61, "review"), (0.75, "fail")]
)
def test_membership_auc_passes_at_or_below_0_6(auc: float, level: str) -> None:
    metric = "membership_knn_probabilities"
    assert judge_result(risk(metric, auc), scale(metric)).level == level


def test_defaults_have_sources_and_valid_limits() -> None:
    for metric, threshold in DEFAULT_THRESHOLDS.items():
        assert metric in ALL_METRIC_IDS
        assert threshold.source
        assert 0 <= threshold.pass_at <= 1
        assert 0 <= threshold.fail_at <= 1
    for metric, tolerance in DEFAULT_TOLERANCES.items():
        assert metric in ALL_METRIC_IDS
        assert tolerance.reasoning
        assert tolerance.unit
        if (
            tolerance.decision == "significance"
        ):  # a count of people: 0, any excess fails
            assert tolerance.value == 0
            assert tolerance.unit.endswith("(people)")
        else:
            assert 0 < tolerance.value <= 0.15


def test_reasons_say_what_was_compared() -> None:
    verdict = judge_result(risk("singling_out", 0.137), scale("singling_out"))
    assert verdict.reason == (
        "score 0.137 lies between the pass and fail limits (pass < 0.09, fail ≥ 0.18). "
        "Next step: " + verdict.next_step
    )
    assert verdict.next_step.startswith("inspect the training rows the result lists")
    dcr = scale("dcr_baseline_protection")
    assert judge_result(protection("dcr_baseline_protection", 0.05), dcr).reason == (
        "score 0.05 is beyond the fail limit (pass ≥ 0.5, fail < 0.1)."
    )


def test_undefined_score_missing_threshold_and_wrong_orientation() -> None:
    undefined = judge_result(
        protection("dcr_baseline_protection", None), scale("dcr_baseline_protection")
    )
    assert (undefined.level, undefined.reason) == (
        "review",
        "the score is undefined (see the metric's warnings).",
    )
    unknown = judge_result(protection("brand_new_metric", 0.99))
    assert (unknown.level, unknown.gating) == ("info", False)
    assert unknown.threshold is None
    assert "'brand_new_metric' has no holdout-controlled test" in unknown.reason
    flipped = judge_result(
        protection("singling_out", 0.01), scale("singling_out")
    )  # a risk metric reporting higher_is_safer=True
    assert flipped.level == "review"
    assert "the threshold assumes a lower score is safer" in flipped.reason


def test_conservative_judges_the_unsafe_end_of_the_interval() -> None:
    result = risk("singling_out", 0.05, ci=(0.02, 0.11))
    assert judge_result(result, scale("singling_out")).level == "pass"
    conservative = judge_result(result, scale("singling_out", conservative=True))
    assert (conservative.level, conservative.value) == ("review", 0.11)
    assert conservative.reason.startswith("upper interval bound 0.11")
    dcr = protection("dcr_baseline_protection", 0.6, ci=(0.05, 0.8))
    assert (
        judge_result(dcr, scale("dcr_baseline_protection", conservative=True)).level
        == "fail"
    )
    # without an interval the point estimate is judged
    assert (
        judge_result(
            risk("singling_out", 0.05), scale("singling_out", conservative=True)
        ).level
        == "pass"
    )


def test_overall_is_the_worst_and_gates() -> None:
    both = scale("dcr_baseline_protection", "singling_out")
    passing = report(
        protection("dcr_baseline_protection", 0.9), risk("singling_out", 0.01)
    )
    reviewing = report(
        protection("dcr_baseline_protection", 0.9), risk("singling_out", 0.1)
    )
    failing = report(
        protection("dcr_baseline_protection", 0.05), risk("singling_out", 0.1)
    )
    assert [judge(r, both).overall for r in (passing, reviewing, failing)] == [
        "pass",
        "review",
        "fail",
    ]
    assert judge(failing, both).counts() == {
        "pass": 0,
        "review": 1,
        "fail": 1,
        "info": 0,
    }
    assert not judge(passing, both).fails("review")
    assert judge(reviewing, both).fails("review")
    assert not judge(reviewing, both).fails("fail")
    assert judge(failing, both).fails("fail")
    assert judge(report()).overall == "review"  # nothing evaluated is not a pass


def test_judge_reads_the_json_dict() -> None:
    data = report(risk("singling_out", 0.2)).to_dict()
    assert judge(data, scale("singling_out")).overall == "fail"
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
    assert Thresholds().for_result(risk("singling_out", 0.0)) is None
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


# --------------------------------------------------------------- holdout tests


def holdout_result(
    metric: str,
    effect: float,
    ci: tuple[float, float],
    p: float,
    *,
    n: int = 1000,
    **extra: object,
) -> MetricResult:
    test = {
        "effect": effect,
        "ci": list(ci),
        "p_value": p,
        "n": n,
        "estimate": 0.5 + effect,
        "control": 0.5,
    }
    test.update(extra)
    return MetricResult(
        metric, 0.5 + effect, {"holdout_test": test}, higher_is_safer=False
    )


@pytest.mark.parametrize(
    ("effect", "ci", "p", "level"),
    [
        (0.0, (-0.02, 0.02), 0.5, "pass"),  # upper bound within the tolerance 0.05
        (0.03, (0.01, 0.05), 0.001, "pass"),  # significant but immaterial
        (0.05, (0.02, 0.08), 0.001, "review"),  # straddles the tolerance
        (0.10, (0.06, 0.14), 1e-6, "fail"),  # significant and entirely above it
        (0.10, (0.06, 0.14), 0.2, "review"),  # above it but not significant
        (0.03, (-0.005, 0.065), 0.5, "pass"),  # straddles it, but no evidence of a leak
        (0.055, (-0.02, 0.13), 0.2, "review"),  # straddles it, the excess beyond it
        (0.06, (-0.2, 0.32), 0.5, "review"),  # imprecise, and the excess is above it
        (0.0, (-0.2, 0.2), 0.5, "pass"),  # imprecise: quiet tests pass (power stated)
    ],
)
def test_holdout_rule_each_level(
    effect: float, ci: tuple[float, float], p: float, level: str
) -> None:
    verdict = judge(report(holdout_result("dcr_share", effect, ci, p)))
    v = verdict["dcr_share"]
    assert (v.level, v.gating, v.tolerance) == (level, True, 0.05)
    assert (v.effect, v.p_value, v.p_adjusted) == (effect, p, p)
    assert verdict.overall == level
    # one test alone: each end a one-sided 95 % bound, the dual of a one-sided test at
    # alpha = 0.05 (a two-sided 90 % interval), rescaled from the 95 % one
    assert v.ci is not None
    assert v.ci_level == pytest.approx(0.9)
    assert v.ci[1] == pytest.approx(effect + (ci[1] - effect) * 1.6448536 / 1.9599640)
    assert (v.ci[0] > 0.0) == (p < 0.05)
    assert "90 % interval" in v.reason
    # what the test detects at this size: the tolerance plus (z_0.95 + z_0.8) standard errors
    se = (ci[1] - ci[0]) / (2 * 1.9599640)
    assert v.detectable == pytest.approx(0.05 + (1.6448536 + 0.8416212) * se)
    # a pass whose interval reaches past the tolerance: too imprecise at this size, or
    # no evidence of a leak (not significant, within the tolerance)
    assert v.underpowered == (level == "pass" and p >= 0.05 and v.ci[1] > 0.05)
    if v.underpowered:
        assert "dcr_share (they pass" in verdict.reason
        if v.detectable > 0.1:
            assert "too imprecise" in v.reason
        else:
            assert "only the interval's width reaches past the tolerance" in v.reason


def test_an_attack_no_better_than_its_control_reads_as_no_evidence() -> None:
    v = judge(report(holdout_result("inference", -0.01, (-0.03, 0.01), 0.9)))[
        "inference"
    ]
    assert v.level == "pass"
    assert v.reason.startswith("no evidence of leakage")


def test_too_few_rows_are_inconclusive_unless_quiet() -> None:
    # an excess beyond the tolerance on 10 units: too few to tell
    v = judge(report(holdout_result("dcr_share", 0.2, (-0.1, 0.5), 0.2, n=10)))[
        "dcr_share"
    ]
    assert v.level == "review"
    assert v.reason.startswith("inconclusive: too few rows (10)")
    # within the tolerance and not significant: it does not hold the verdict back
    quiet = judge(report(holdout_result("dcr_share", 0.0, (-0.3, 0.3), 0.5, n=10)))
    v = quiet["dcr_share"]
    assert v.level == "pass"
    assert v.underpowered
    assert v.reason.startswith("too few units (10)")
    assert "dcr_share (they pass" in quiet.reason


def test_holm_corrects_across_the_gating_tests() -> None:
    # p = 0.02 alone is significant; with a second test Holm doubles the smallest p
    one = judge(report(holdout_result("dcr_share", 0.1, (0.06, 0.14), 0.02)))
    assert one.overall == "fail"
    two = judge(
        report(
            holdout_result("dcr_share", 0.1, (0.06, 0.14), 0.02),
            holdout_result("membership_knn_probabilities", 0.1, (0.06, 0.14), 0.03),
        )
    )
    assert [v.p_adjusted for v in two.metrics] == [0.04, 0.04]
    assert two.overall == "fail"
    three = judge(
        report(
            holdout_result("dcr_share", 0.1, (0.06, 0.14), 0.02),
            holdout_result("membership_knn_probabilities", 0.1, (0.06, 0.14), 0.03),
            holdout_result("identical_match_share", 0.0, (-0.001, 0.001), 0.9),
        )
    )
    assert [v.p_adjusted for v in three.metrics] == [0.06, 0.06, 0.9]
    assert [v.level for v in three.metrics] == ["review", "review", "pass"]


def test_a_worst_column_upper_bound_keeps_the_metric_at_review() -> None:
    result = holdout_result("inference", 0.01, (-0.01, 0.03), 0.3, upper=0.12)
    v = judge(report(result))["inference"]
    assert v.level == "review"
    assert "another part's upper bound" in v.reason


def _parts_result(effects: dict[str, tuple[float, float, float]]) -> MetricResult:
    """An every-column inference result whose parts have (effect, low, high) at 95 %."""
    parts = {
        name: {"effect": e, "ci": [lo, hi], "p_value": p, "confidence_level": 0.95}
        for name, (e, lo, hi), p in zip(
            effects, effects.values(), [0.3, 0.4, 0.45], strict=False
        )
    }
    head = max(parts, key=lambda n: parts[n]["effect"])
    test = {
        **parts[head],
        "n": 1000,
        "part": head,
        "parts": parts,
        "p_value": min(1.0, 3 * parts[head]["p_value"]),
    }
    return MetricResult("inference", 0.3, {"holdout_test": test}, higher_is_safer=False)


def test_no_evidence_of_a_leak_passes_a_test_of_many_parts() -> None:
    """Every column's excess within the tolerance, none significant: pass, not review."""
    quiet = _parts_result(
        {"a": (0.04, -0.01, 0.09), "b": (0.01, -0.04, 0.06), "c": (0.0, -0.05, 0.05)}
    )
    v = judge(report(quiet))["inference"]
    assert v.level == "pass"
    assert v.underpowered
    assert "within the tolerance" in v.reason
    # beyond half the tolerance (0.09) but within it, not significant: still no evidence
    near = _parts_result(
        {"a": (0.08, 0.03, 0.13), "b": (0.01, -0.04, 0.06), "c": (0.0, -0.05, 0.05)}
    )
    assert judge(report(near))["inference"].level == "pass"
    # one column beyond the tolerance: review, with a next step
    loud = _parts_result(
        {"a": (0.10, 0.05, 0.15), "b": (0.01, -0.04, 0.06), "c": (0.0, -0.05, 0.05)}
    )
    w = judge(report(loud))["inference"]
    assert w.level == "review"
    assert w.next_step


def test_informational_metrics_never_gate() -> None:
    verdict = judge(
        report(
            protection("dcr_baseline_protection", 0.01),  # far "too close" to real rows
            holdout_result("dcr_share", 0.0, (-0.02, 0.02), 0.5),
        )
    )
    info = verdict["dcr_baseline_protection"]
    assert (info.level, info.gating) == ("info", False)
    assert "informational" in info.reason
    assert verdict.overall == "pass"
    # a user threshold makes it gate again
    gated = judge(
        report(
            protection("dcr_baseline_protection", 0.01),
            holdout_result("dcr_share", 0.0, (-0.02, 0.02), 0.5),
        ),
        scale("dcr_baseline_protection"),
    )
    assert gated.overall == "fail"


def test_without_a_holdout_the_overall_verdict_is_review() -> None:
    verdict = judge(report(protection("dcr_baseline_protection", 0.9), holdout=False))
    assert verdict.overall == "review"
    assert (
        "without a holdout, closeness to real rows cannot be told apart from fidelity"
        in verdict.reason
    )


def test_copies_are_judged_against_the_chance_rate_on_coarse_tables() -> None:
    # the same excess of copies: material where new people rarely coincide with real
    # records, within the tolerance where 8 % of synthetic rows do so by chance
    def judged(effect: float, ci: tuple[float, float], chance: float):
        result = holdout_result(
            "identical_match_share", effect, ci, 1e-8, chance=chance
        )
        return judge(report(result))["identical_match_share"]

    v_rare = judged(0.012, (0.008, 0.016), 0.001)
    v_coarse = judged(0.012, (0.008, 0.016), 0.08)
    assert (v_rare.level, v_rare.tolerance) == ("fail", 0.005)
    assert v_coarse.level == "pass"
    assert v_coarse.tolerance == pytest.approx(0.08 * 2 / 9)
    assert "(0.222 × the chance rate 0.08)" in v_coarse.reason
    # however common chance matches are, the tolerance stops at 0.02: 5 % copies on a
    # very coarse table (an excess of 0.03 where 40 % match by chance) fail
    v_copies = judged(0.03, (0.024, 0.036), 0.4)
    assert (v_copies.level, v_copies.tolerance) == ("fail", 0.02)
    assert "the ceiling; 0.222 × the chance rate 0.4 is larger" in v_copies.reason
    # a user tolerance is absolute
    fixed = Thresholds.from_dict({"tolerances": {"identical_match_share": 0.01}})
    coarse = holdout_result(
        "identical_match_share", 0.012, (0.011, 0.013), 1e-8, chance=0.08
    )
    assert judge(report(coarse), fixed)["identical_match_share"].level == "fail"


def test_tolerances_and_alpha_can_be_overridden() -> None:
    result = holdout_result("dcr_share", 0.04, (0.02, 0.06), 0.001)
    assert judge(report(result)).overall == "review"
    loose = Thresholds.from_dict({"tolerances": {"dcr_share": 0.07}})
    assert judge(report(result), loose).overall == "pass"
    strict = Thresholds.from_dict({"tolerances": {"dcr_share": 0.01}, "alpha": 0.0001})
    assert (
        judge(report(result), strict).overall == "review"
    )  # p = 0.001 is not below 0.0001
    for alpha in (1.0, 0.5, 0.0):
        with pytest.raises(
            ParameterError,
            match=r"`alpha` must be a number strictly between 0 and 0\.5",
        ):
            Thresholds(alpha=alpha)
    with pytest.raises(
        ParameterError, match=r"`tolerances.dcr_share` must be a number in \[0, 1\]"
    ):
        Thresholds(tolerances={"dcr_share": -1})


def test_verdict_round_trips_through_json() -> None:
    rep = report(
        holdout_result("dcr_share", 0.1, (0.06, 0.14), 1e-6),
        protection("dcr_baseline_protection", 0.3),
    )
    rep = EvaluationReport(
        rep.synthrisk_version, rep.seed, rep.inputs, rep.results, verdict=judge(rep)
    )
    data = json.loads(rep.to_json())
    assert data["verdict"]["overall"] == "fail"
    assert data["verdict"]["metrics"][0]["level"] == "fail"
    assert data["verdict"]["metrics"][1]["gating"] is False
    back = EvaluationReport.from_json(rep.to_json())
    assert isinstance(back.verdict, Verdict)
    assert back.verdict.to_dict() == rep.verdict.to_dict()  # type: ignore[union-attr]
    frame = back.to_frame()
    assert list(frame.index) == ["dcr_share", "dcr_baseline_protection"]
    assert frame.loc["dcr_share", "level"] == "fail"
    assert frame.loc["dcr_share", "effect"] == 0.1
    assert (
        frame.loc["dcr_baseline_protection", "gating"] is False
        or not frame.loc["dcr_baseline_protection", "gating"]
    )
