# SPDX-License-Identifier: BSD-3-Clause
"""Properties of the release verdict: a null generator passes, copies fail, and the
intervals shown agree with the Holm-corrected decisions."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from synthrisk import EvaluationReport, MetricResult, evaluate
from synthrisk.datasets.calibration import equicorrelated_normal
from synthrisk.exceptions import ParameterError
from synthrisk.results import MetricVerdict
from synthrisk.stats.holdout import holm, holm_levels
from synthrisk.verdict import (
    DEFAULT_TOLERANCES,
    INFORMATIONAL,
    Thresholds,
    judge,
    judge_result,
)

METRICS = ["dcr_share", "identical_match_share", "membership_knn_probabilities"]


def population(n: int, rng: np.random.Generator) -> pd.DataFrame:
    z = equicorrelated_normal(rng, n, 3, 0.5)
    frame = pd.DataFrame(
        {
            "a": np.round(50 + 10 * z[:, 0], 1),
            "b": np.round(100 + 15 * z[:, 1], 1),
            "c": np.round(5 + z[:, 2], 2),
            "g": rng.choice(["x", "y", "z"], n),
        }
    )
    frame.loc[rng.random(n) < 0.05, "c"] = np.nan
    return frame


def thirds(seed: int, n: int = 2400) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    frame = population(n, rng)
    order = rng.permutation(n)
    k = n // 3
    parts = [
        frame.iloc[order[i * k : (i + 1) * k]].reset_index(drop=True) for i in range(3)
    ]
    return parts[0], parts[1], parts[2]


@pytest.mark.parametrize("seed", [0, 1])
def test_new_people_from_the_same_population_pass(seed: int) -> None:
    # 2,000 rows a side: fewer leave the DCR share's interval wider than its tolerance
    real, holdout, synthetic = thirds(seed, n=6000)
    report = evaluate(real, synthetic, holdout, metrics=METRICS, seed=seed)
    assert report.verdict is not None
    assert report.verdict.overall == "pass", report.verdict.reason
    for v in report.verdict.metrics:
        assert v.gating
        assert v.ci is not None
        assert v.ci[0] <= 0.0 + 0.05  # no material excess


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_copies_of_training_rows_fail(seed: int) -> None:
    real, holdout, synthetic = thirds(seed)
    rng = np.random.default_rng(100 + seed)
    n_copy = len(synthetic) // 10
    copies = real.iloc[rng.choice(len(real), n_copy, replace=False)]
    leaky = pd.concat([synthetic.iloc[n_copy:], copies], ignore_index=True)
    report = evaluate(real, leaky, holdout, metrics=METRICS, seed=seed)
    assert report.verdict is not None
    assert report.verdict.overall == "fail"
    ims = report.verdict["identical_match_share"]
    assert ims.level == "fail"
    # every copy is of a row no other real person shares: the excess is the copy share
    assert ims.effect == pytest.approx(0.1, abs=0.01)


def test_without_a_holdout_the_verdict_is_review() -> None:
    real, _, synthetic = thirds(0)
    report = evaluate(real, synthetic, metrics=["identical_match_share"])
    assert report.verdict is not None
    assert report.verdict.overall == "review"
    assert report.verdict.metrics[0].level == "info"


def test_the_verdict_is_in_the_json_and_the_frame() -> None:
    real, holdout, synthetic = thirds(0, n=6000)
    report = evaluate(real, synthetic, holdout, metrics=METRICS, seed=0)
    from synthrisk import EvaluationReport

    back = EvaluationReport.from_json(report.to_json())
    assert back.verdict == report.verdict
    frame = report.to_frame()
    assert list(frame.index) == METRICS
    assert set(frame["level"]) == {"pass"}
    assert frame["gating"].all()


# ------------------------------------------ intervals that agree with the decisions

GATING = [m for m in DEFAULT_TOLERANCES if m not in INFORMATIONAL]


def _normal_p(effect: float, se: float) -> float:
    if se == 0.0:
        return 0.0 if effect > 0 else 1.0
    return float(stats.norm.sf(effect / se))


@st.composite
def one_test(draw: Any, *, parts: bool) -> dict[str, Any]:
    """A holdout test: a normal interval with its normal, a permutation or any p-value."""
    level = draw(st.sampled_from([0.9, 0.95, 0.99]))
    z = float(stats.norm.ppf(0.5 + level / 2))

    def draw_part() -> dict[str, Any]:
        effect = draw(st.floats(-0.2, 0.4, allow_nan=False))
        se = draw(st.one_of(st.just(0.0), st.floats(1e-4, 0.1)))
        kind = draw(st.sampled_from(["normal", "normal", "permutation", "any"]))
        p = _normal_p(effect, se)
        if kind == "permutation":
            p = max(p, 1.0 / (1 + draw(st.sampled_from([99, 999]))))
        elif kind == "any":
            p = draw(st.floats(0.0, 1.0))
        return {
            "effect": effect,
            "ci": [effect - z * se, effect + z * se],
            "p_value": p,
            "confidence_level": level,
            "kind": kind,
        }

    if not parts:
        test = draw_part()
        test["n"] = draw(st.sampled_from([1000, 1000, 1000, 10]))
        return test
    cols = [draw_part() for _ in range(draw(st.integers(2, 8)))]
    names = [f"c{i}" for i in range(len(cols))]
    raw = [c["p_value"] for c in cols]
    adjusted = holm(raw)
    head = max(range(len(cols)), key=lambda i: (cols[i]["ci"][0], cols[i]["effect"]))
    return {
        **{k: v for k, v in cols[head].items() if k != "p_value"},
        "p_value": adjusted[head],
        "n": 1000,
        "upper": max(c["ci"][1] for c in cols),
        "part": names[head],
        "parts": {
            n: {k: v for k, v in c.items() if k != "kind"}
            for n, c in zip(names, cols, strict=True)
        },
    }


@st.composite
def runs(draw: Any) -> tuple[list[dict[str, Any]], float]:
    n_tests = draw(st.integers(1, 12))
    tests = [draw(one_test(parts=draw(st.booleans()))) for _ in range(n_tests)]
    alpha = draw(st.sampled_from([0.05, 0.01, 0.1, 0.2]))
    return tests, alpha


def _report(tests: list[dict[str, Any]]) -> EvaluationReport:
    results = tuple(
        MetricResult(
            GATING[i % len(GATING)] if "parts" not in t else "inference",
            0.5,
            {"holdout_test": {k: v for k, v in t.items() if k != "kind"}},
            higher_is_safer=False,
        )
        for i, t in enumerate(tests)
    )
    return EvaluationReport("0.1.0", 0, {"holdout": {"rows": 1000}}, results)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(runs())
def test_the_interval_shown_excludes_0_exactly_when_the_test_is_significant(
    run: tuple[list[dict[str, Any]], float],
) -> None:
    tests, alpha = run
    verdict = judge(_report(tests), Thresholds(alpha=alpha))
    levels = holm_levels([t["p_value"] for t in tests], alpha)
    for test, v, level in zip(tests, verdict.metrics, levels, strict=True):
        assert v.gating
        assert v.ci is not None
        assert v.ci_level is not None
        assert v.p_adjusted is not None
        assert v.tolerance is not None
        low, high = v.ci
        significant = v.p_adjusted < alpha
        # the interval excludes 0 exactly when the Holm-adjusted test is significant
        assert (low > 0.0) == significant
        assert low <= high
        # the tolerance decision reads the interval shown; a tolerance of 0 people is
        # decided by significance alone; an imprecise test whose excess is within its
        # tolerance passes when not significant (its detectable excess is stated)
        by_significance = DEFAULT_TOLERANCES[v.metric].decision == "significance"
        quiet = v.underpowered
        if v.level == "fail":
            assert significant
            assert low > v.tolerance
        if v.level == "pass":
            assert high <= v.tolerance or by_significance or quiet
        if quiet:
            assert v.level == "pass"
            assert not significant
            assert test["effect"] <= v.tolerance
            assert v.detectable is not None
            # imprecise at this size, too few units to judge, or no evidence of a leak:
            # every part's excess within the tolerance
            largest = max(
                [test["effect"]]
                + [p["effect"] for p in (test.get("parts") or {}).values()]
            )
            assert (
                v.detectable > 2 * v.tolerance
                or test["n"] < 30
                or largest <= v.tolerance
            )
        if test["n"] >= 30 and "parts" not in test:
            if by_significance:
                expected = "fail" if significant else "pass"
            else:
                expected = (
                    "fail"
                    if significant and low > v.tolerance
                    else "pass"
                    if high <= v.tolerance or quiet
                    else "review"
                )
            assert v.level == expected
        if v.reason.startswith("no evidence of leakage"):
            assert low <= 0.0
        if "parts" in test:
            assert 0.0 < v.ci_level < 1.0
            continue
        # the level is Holm's step level; a normal test's interval is only rescaled
        assert v.ci_level == pytest.approx(1.0 - 2.0 * level)
        if test["kind"] == "normal" and test["ci"][1] > test["ci"][0]:
            z = float(stats.norm.isf(level))
            half = (test["ci"][1] - test["ci"][0]) / 2
            se = half / float(stats.norm.ppf(0.5 + test["confidence_level"] / 2))
            assert high == pytest.approx(test["effect"] + z * se, rel=1e-9, abs=1e-12)
            # away from the boundary, the lower end is the rescaled one too
            if abs(test["effect"] / se - z) > 1e-6:
                assert low == pytest.approx(
                    test["effect"] - z * se, rel=1e-9, abs=1e-12
                )


def test_holm_levels_match_holms_decisions() -> None:
    rng = np.random.default_rng(0)
    for _ in range(2000):
        k = int(rng.integers(1, 20))
        p = rng.uniform(0, 0.1, k) ** rng.uniform(0.5, 3)
        if rng.random() < 0.3:
            p[: k // 2] = p[0]  # ties
        alpha = float(rng.choice([0.05, 0.01, 0.2]))
        levels = holm_levels(p, alpha)
        adjusted = holm(p)
        for pi, level, adj in zip(p, levels, adjusted, strict=True):
            assert (pi < level) == (adj < alpha)
            assert alpha / k <= level <= alpha


def test_a_worst_column_not_significant_after_holm_shows_0_in_its_interval() -> None:
    # the leaky demo's inference: the worst of 15 columns has a 95 % interval
    # [0.0025, 0.051] (p = 0.0165) that excludes 0, but after Holm's correction over the
    # columns and the run the excess is not significant: the interval shown includes 0
    se = (0.051 - 0.0025) / (2 * 1.959963984540054)
    effect = (0.051 + 0.0025) / 2
    raw = [_normal_p(effect, se)] + [0.5] * 14
    parts = {
        f"c{i}": {
            "effect": effect if i == 0 else 0.0,
            "ci": [0.0025, 0.051] if i == 0 else [-0.02, 0.02],
            "p_value": p,
            "confidence_level": 0.95,
        }
        for i, p in enumerate(raw)
    }
    test = {
        "effect": effect,
        "ci": [0.0025, 0.051],
        "p_value": holm(raw)[0],
        "n": 3000,
        "part": "c0",
        "parts": parts,
    }
    result = MetricResult(
        "inference", 0.1, {"holdout_test": test}, higher_is_safer=False
    )
    dcr = MetricResult(
        "dcr_share",
        0.5,
        {
            "holdout_test": {
                "effect": 0.0,
                "ci": [-0.01, 0.01],
                "p_value": 0.5,
                "n": 3000,
            }
        },
        higher_is_safer=False,
    )
    verdict = judge(EvaluationReport("0.1.0", 0, {"holdout": {}}, (result, dcr)))
    v = verdict["inference"]
    assert v.p_adjusted is not None
    assert v.p_adjusted >= 0.05
    assert v.ci is not None
    assert v.ci[0] <= 0.0 < v.ci[1]
    assert v.reason.startswith("no evidence of leakage")
    # each end a one-sided bound at 1 - 0.05 / 2 / 15 (2 gating tests, 15 columns)
    assert v.ci_level == pytest.approx(1 - 2 * 0.05 / 2 / 15)
    assert "99.667 % interval" in v.reason
    assert math.isclose(
        v.ci[1], effect + float(stats.norm.isf(0.05 / 30)) * se, rel_tol=1e-9
    )


def _identification_report(significant: bool, identified: int, exact: int) -> dict:
    """A report dict with one identification result carrying a chance model."""
    test = {"effect": 1.0, "ci": [-2.0, 4.0], "p_value": 0.4, "n": 1000}
    model = {
        "identified": identified,
        "exact": exact,
        "expected_identified": 2.0,
        "upper_identified": 9.0,
        "p_value": 1e-6 if significant else 0.5,
        "significant": significant,
        "assumption": "a",
        "detectable": 1,
        "detectable_near": 8,
        "components": {"strict_near": identified - exact, "strict_threshold": 0.01},
    }
    people = [
        {
            "rows": [i],
            "synthetic_rows": [100 + i],
            "exact": i < exact,
            "ratio": 0.0,
            "isolation": 1.0,
        }
        for i in range(identified)
    ]
    breakdown = {"holdout_test": test, "chance_model": model, "identified": people}
    return {
        "synthrisk_version": "0",
        "seed": 0,
        "inputs": {"holdout": {"rows": 1000}},
        "results": [
            {
                "metric": "identification",
                "score": 0.01,
                "breakdown": breakdown,
                "higher_is_safer": False,
            }
        ],
    }


def test_copied_people_beyond_chance_read_review_and_fail_strict() -> None:
    report = _identification_report(True, 8, 8)
    verdict = judge(report)
    assert verdict.policy == "statistical"
    (finding,) = verdict.findings
    assert finding.level == "review"
    assert verdict.overall == "review"  # the holdout test itself passes
    assert verdict["identification"].level == "pass"
    assert finding.people[0]["synthetic_rows"] == [100]
    assert "100" in finding.next_step
    strict = judge(report, Thresholds(policy="strict"))
    assert strict.findings[0].level == "fail"
    assert strict.overall == "fail"
    # copies that chance explains: pass under statistical, still fail under strict
    explained = _identification_report(False, 3, 0)
    assert judge(explained).overall == "pass"
    assert judge(explained, Thresholds(policy="strict")).overall == "fail"
    assert (
        judge(_identification_report(False, 0, 0), Thresholds(policy="strict")).overall
        == "pass"
    )


def test_findings_and_policy_survive_json() -> None:
    from synthrisk.results import Verdict

    verdict = judge(
        _identification_report(True, 3, 2), Thresholds.from_dict({"policy": "strict"})
    )
    again = Verdict.from_dict(verdict.to_dict())
    assert again.policy == "strict"
    assert again.findings == verdict.findings
    assert again.to_dict() == verdict.to_dict()


def test_a_policy_must_be_known() -> None:
    with pytest.raises(ParameterError, match="policy"):
        Thresholds(policy="lenient")
    with pytest.raises(ParameterError, match="policy"):
        Thresholds.from_dict({"policy": 1})
    assert Thresholds().with_policy("strict").policy == "strict"
    assert Thresholds().to_dict()["policy"] == "statistical"


# --------------------------------------------------- nothing to try, and the next step


def _singling(
    test: dict[str, Any], metric: str = "singling_out_univariate"
) -> MetricResult:
    return MetricResult(metric, 0.0, {"holdout_test": test}, higher_is_safer=False)


def test_a_table_that_offers_few_singling_out_queries_is_low_risk() -> None:
    # 13 of 2,000 queries, excess +0.15 with a wide interval: before, "too few rows" review
    test = {
        "effect": 0.15, "ci": [-0.25, 0.56], "p_value": 0.25, "n": 13, "estimate": 0.38,
        "control": 0.23, "n_requested": 2000, "successes": 5.0, "control_successes": 3.0,
    }  # fmt: skip
    v = judge_result(_singling(test))
    assert v.level == "pass"
    assert v.reason.startswith(
        "only 13 of the 2,000 singling-out queries asked for could be written on the synthetic "
        "table (it offers few rare values or extremes to single out), and 5 of them single out "
        "a training person (3 a holdout person): at most 0.00"
    )
    assert "low risk" in v.reason
    # the bound: a one-sided 95 % Clopper-Pearson bound of 5 in 13, times 13 / 2,000
    bound = stats.beta.ppf(0.95, 6, 8) * 13 / 2000
    assert f"at most {bound:.4g} of the queries asked for" in v.reason
    assert v.next_step == ""
    assert not v.underpowered


def test_a_significant_singling_out_excess_is_never_passed_by_the_bound() -> None:
    # all 13 queries single out a training person and none a holdout person: a leak of rare values
    test = {
        "effect": 1.0, "ci": [0.7, 1.3], "p_value": 1e-6, "n": 13, "estimate": 1.0,
        "control": 0.0, "n_requested": 2000, "successes": 13.0, "control_successes": 0.0,
    }  # fmt: skip
    v = judge_result(_singling(test))
    assert v.level == "review"
    assert v.next_step.startswith(
        "inspect the training rows that the 13 successful queries"
    )
    assert v.reason.endswith("Next step: " + v.next_step)


def test_the_bound_needs_few_successes_relative_to_the_queries_asked_for() -> None:
    # 400 queries offered, 300 successes: the bound (about 0.16) is beyond the tolerance
    # 0.15, and so is the excess (not significant): review, not a pass by the bound
    test = {
        "effect": 0.2, "ci": [0.1, 0.3], "p_value": 0.06, "n": 400, "estimate": 0.75,
        "control": 0.55, "n_requested": 2000, "successes": 300.0, "control_successes": 220.0,
    }  # fmt: skip
    v = judge_result(_singling(test))
    assert v.level == "review"
    assert v.next_step.startswith("a holdout about ")


def test_every_review_names_its_next_step() -> None:
    straddle = {"effect": 0.06, "ci": [0.0, 0.12], "p_value": 0.03, "n": 1000,
                "estimate": 0.7, "control": 0.64}  # fmt: skip
    inference = MetricResult(
        "inference", 0.06, {"holdout_test": straddle}, higher_is_safer=False,
        params={"n_attacks": None},
    )  # fmt: skip
    v = judge_result(inference)
    assert v.level == "review"
    assert v.next_step.startswith("--param inference.n_attacks=all")
    assert v.reason.endswith("Next step: " + v.next_step)
    raised = dataclasses.replace(inference, params={"n_attacks": "all"})
    v = judge_result(raised)
    assert v.level == "review"
    # to pass, the judged upper bound (90 %: 0.1104) must fall to 0.09: the half-width
    # 0.0504 must shrink to 0.03, (0.0504 / 0.03)^2 = 2.8 times the rows
    assert v.ci is not None
    growth = ((v.ci[1] - 0.06) / 0.03) ** 2
    assert round(growth, 1) == 2.8
    assert v.next_step.startswith("a holdout about 2.8 times as large")
    assert f"1,000 units would be about {math.ceil(growth * 1000):,}" in v.next_step
    at_tolerance = {**straddle, "effect": 0.09, "ci": [0.03, 0.15]}
    v = judge_result(
        dataclasses.replace(raised, breakdown={"holdout_test": at_tolerance})
    )
    assert v.level == "review"
    assert "sits at the tolerance" in v.next_step
    score = judge(
        EvaluationReport(
            "0", 0, {}, (MetricResult("dcr_share", 0.6, {}, higher_is_safer=False),)
        ),
        Thresholds({"dcr_share": {"pass": 0.55, "fail": 0.65}}),
    ).metrics[0]
    assert score.level == "review"
    assert score.next_step.startswith("inspect the training rows the result lists")
    assert score.reason.endswith(score.next_step)
    for level in ("pass", "fail"):
        assert all(not m.next_step for m in judge(EvaluationReport(
            "0", 0, {}, (MetricResult("dcr_share", 0.5 if level == "pass" else 0.9, {},
                                      higher_is_safer=False),)),
            Thresholds({"dcr_share": {"pass": 0.55, "fail": 0.65}})).metrics)  # fmt: skip


def test_next_step_round_trips_through_json() -> None:
    v = judge_result(
        MetricResult(
            "inference", 0.06,
            {"holdout_test": {"effect": 0.06, "ci": [0.0, 0.12], "p_value": 0.03, "n": 1000}},
            higher_is_safer=False,
        )
    )  # fmt: skip
    assert v.to_dict()["next_step"] == v.next_step != ""
    assert MetricVerdict.from_dict(v.to_dict()).next_step == v.next_step
    assert MetricVerdict.from_dict({"metric": "x", "level": "pass"}).next_step == ""


def test_with_alpha_is_a_copy_at_another_family_wise_error() -> None:
    base = Thresholds(tolerances={"dcr_share": 0.03}, policy="strict")
    split = base.with_alpha(0.0125)
    assert (split.alpha, base.alpha) == (0.0125, 0.05)
    assert split.policy == "strict"
    assert split.tolerance("dcr_share").value == 0.03
    with pytest.raises(ParameterError, match="alpha"):
        base.with_alpha(0.0)
