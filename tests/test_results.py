# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from synthrisk.results import (
    EvaluationReport,
    MetricResult,
    RecordScores,
    SelfTest,
    SelfTestScenario,
    ThreatModel,
    to_jsonable,
)


def _report() -> EvaluationReport:
    rec = RecordScores("synthetic", np.array([0, 2]), np.array([0.5, np.nan]), "d")
    result = MetricResult(
        metric="m", score=0.25, breakdown={"score": 0.25, "x": {"y": np.float64(np.nan)}}, ci=(0.1, 0.4),
        params={"k": np.int64(3)}, warnings=("careful",), seconds=1.5, records={"r": rec},
    )  # fmt: skip
    return EvaluationReport(
        synthrisk_version="0.1.0", seed=7, inputs={"real": {"rows": 3, "columns": ["a"]}, "synthetic": None, "holdout": None},
        results=(result,),
    )  # fmt: skip


def test_json_contract_keys_and_nan_as_null() -> None:
    data = json.loads(_report().to_json())
    assert set(data) >= {
        "schema_version",
        "synthrisk_version",
        "seed",
        "inputs",
        "results",
    }
    assert data["schema_version"] == 1
    entry = data["results"][0]
    assert set(entry) == {
        "metric",
        "status",
        "reason",
        "score",
        "breakdown",
        "ci",
        "params",
        "warnings",
        "seconds",
        "attack",
        "higher_is_safer",
    }
    assert entry["breakdown"]["x"]["y"] is None
    assert entry["params"] == {"k": 3}
    assert entry["ci"] == [0.1, 0.4]
    assert entry["status"] == "ok"
    assert entry["reason"] is None


def test_records_only_when_asked_and_round_trip() -> None:
    report = _report()
    assert "records" not in json.loads(report.to_json())["results"][0]
    text = report.to_json(include_records=True)
    assert json.loads(text)["results"][0]["records"]["r"] == {
        "table": "synthetic",
        "description": "d",
        "index": [0, 2],
        "values": [0.5, None],
    }
    again = EvaluationReport.from_json(text)
    assert again.to_json(include_records=True) == text
    assert again["m"].score == 0.25


def test_getitem_unknown_metric_lists_results() -> None:
    with pytest.raises(KeyError, match=r"no result for metric 'zz'; results: \['m'\]"):
        _report()["zz"]


def test_to_jsonable_handles_numpy() -> None:
    assert to_jsonable({"a": np.array([1, 2]), "b": (np.bool_(True), np.float32(0.5)), "c": float("inf")}) == {
        "a": [1, 2], "b": [True, 0.5], "c": None,
    }  # fmt: skip


def test_repr_is_readable() -> None:
    assert (
        repr(_report()["m"])
        == "MetricResult(metric='m', score=0.2500, ci=(0.1000, 0.4000), warnings=1)"
    )


def test_newer_schema_version_is_rejected() -> None:
    from synthrisk.exceptions import InputError

    data = _report().to_dict()
    data["schema_version"] = 2
    with pytest.raises(
        InputError, match=r"schema_version 2, newer than the 1 this synthrisk reads"
    ):
        EvaluationReport.from_dict(data)


def test_value_keys_are_withheld_unless_asked() -> None:
    result = MetricResult(
        metric="singling_out", score=0.1, breakdown={"successful_queries": ["age == 41 AND zip == '1234'"], "n": 1},
        value_keys=("successful_queries",),
    )  # fmt: skip
    report = EvaluationReport("0.1.0", 0, {}, (result,))
    default = json.loads(report.to_json())["results"][0]
    assert default["breakdown"]["successful_queries"].startswith(
        "withheld: 1 entries built from real records' values"
    )
    assert "1234" not in report.to_json()
    shown = json.loads(report.to_json(include_values=True))["results"][0]
    assert shown["breakdown"]["successful_queries"] == ["age == 41 AND zip == '1234'"]
    assert EvaluationReport.from_json(report.to_json(include_values=True))[
        "singling_out"
    ].value_keys == ("successful_queries",)


def test_status_of_skipped_and_undefined_results_round_trips() -> None:
    skipped = MetricResult.skipped(
        "nndr", "it needs a holdout table; none was given.", params={"k": 1}
    )
    undefined = MetricResult("m", None, {}, warnings=("no real row is unique.",))
    explained = MetricResult("m2", float("nan"), {}, reason="too few rows.")
    assert skipped.status == "skipped"
    assert skipped.reason == "it needs a holdout table; none was given."
    # an undefined score takes its reason from the last warning unless given one
    assert (undefined.status, undefined.reason) == (
        "undefined",
        "no real row is unique.",
    )
    assert explained.status == "undefined"
    assert explained.reason == "too few rows."
    assert MetricResult("m3", 0.5, {}, reason="ignored").reason is None
    report = EvaluationReport("0.1.0", 0, {}, (skipped, undefined, explained))
    text = report.to_json()
    entries = json.loads(text)["results"]
    assert [(e["status"], e["reason"], e["score"]) for e in entries] == [
        ("skipped", "it needs a holdout table; none was given.", None),
        ("undefined", "no real row is unique.", None),
        ("undefined", "too few rows.", None),
    ]
    again = EvaluationReport.from_json(text)
    assert again.to_json() == text
    assert again["nndr"] == skipped
    assert "status='skipped'" in repr(skipped)


def test_unknown_status_is_rejected() -> None:
    with pytest.raises(ValueError, match="`status` must be one of"):
        MetricResult("m", 0.5, {}, status="maybe")  # type: ignore[arg-type]


def test_reports_without_status_read_as_before() -> None:
    data = json.loads(_report().to_json())
    for entry in data["results"]:
        del entry["status"], entry["reason"]
    again = EvaluationReport.from_dict(data)
    assert again["m"].status == "ok"


def _judged_report() -> EvaluationReport:
    """Thirteen metrics like a default run: gating tests, informational ones, a skipped one, caveats."""
    from synthrisk.verdict import judge

    def test(effect: float, p: float) -> dict[str, object]:
        return {
            "effect": effect,
            "ci": [effect - 0.01, effect + 0.01],
            "p_value": p,
            "n": 1000,
        }

    long_warning = (
        "the holdout is much smaller than the real table; "
        + "a caveat that goes on. " * 12
    )
    results = [
        MetricResult("dcr_baseline_protection", 0.1418, {"holdout_test": test(0.2, 1e-9)}, (0.13, 0.15)),
        MetricResult("dcr_share", 0.7019, {"holdout_test": test(0.2, 1e-20)}, higher_is_safer=False),
        MetricResult(
            "membership_knn_probabilities", 0.498, {"holdout_test": test(-0.002, 0.7)}, higher_is_safer=False,
            warnings=(long_warning,),
        ),
        MetricResult("distribution_validation", 0.0, {}, warnings=("2 of 2 synthetic column(s) differ.",)),
        MetricResult("nndr", 3.08e-06, {"holdout_test": test(0.2, 1e-12)}),
        MetricResult.skipped("singling_out", "it needs at least 2 columns."),
    ]  # fmt: skip
    results += [MetricResult(f"extra_metric_{i}", 0.1 * i, {}) for i in range(7)]
    report = EvaluationReport(
        "0.1.0", 0,
        {"real": {"rows": 1000, "columns": ["a", "b"]}, "synthetic": {"rows": 1000, "columns": ["a", "b"]},
         "holdout": {"rows": 1000, "columns": ["a", "b"]}},
        tuple(results), warnings=("column `id` was left out: it looks like an identifier.",),
    )  # fmt: skip
    return dataclasses.replace(report, verdict=judge(report))


def test_print_report_is_a_readable_summary() -> None:
    report = _judged_report()
    assert report.verdict is not None
    lines = str(report).splitlines()
    assert 10 < len(lines) < 40
    assert max(len(line) for line in lines) <= 120
    assert lines[0].startswith("synthrisk report: 13 metric(s), seed 0")
    assert "verdict: FAIL" in lines
    assert lines[lines.index("verdict: FAIL") + 1].strip() == report.verdict.reason
    table = [
        line
        for line in lines
        if line.startswith("  ")
        and line.split()[0] in ("pass", "review", "fail", "info", "skipped")
    ]
    # one line per metric, in result order, each with its level and score
    assert [line.split()[1] for line in table] == [r.metric for r in report.results]
    share = table[1].split()
    assert share[0] == "fail"
    assert share[2] == "0.7019"
    assert "+0.200 [+0.190, +0.210]" in table[1]
    assert "3.08 × 10⁻⁶" in table[4]
    assert table[5].split()[0] == "skipped"
    # the caveats follow the table; a long one wraps instead of running off
    start = lines.index("caveats (warnings that qualify the verdict):")
    caveats = "\n".join(lines[start:])
    assert "inputs: column `id` was left out" in caveats
    assert "membership_knn_probabilities: the holdout is much smaller" in caveats
    assert "distribution_validation: 2 of 2 synthetic column(s) differ." in caveats


def test_print_verdict_is_a_readable_summary() -> None:
    report = _judged_report()
    verdict = report.verdict
    assert verdict is not None
    text = str(verdict)
    lines = text.splitlines()
    assert len(text) < 3000
    assert max(len(line) for line in lines) <= 120
    assert lines[0] == "verdict: FAIL"
    for result in report.results:
        assert sum(line.split()[1:2] == [result.metric] for line in lines) == 1
    assert "distribution_validation: 2 of 2 synthetic column(s) differ." in text
    # one metric's verdict prints as one line
    assert "\n" not in str(verdict["dcr_share"])
    assert len(str(verdict["dcr_share"])) <= 120


def test_reprs_are_short_and_unambiguous() -> None:
    report = _judged_report()
    assert repr(report) == (
        "EvaluationReport(synthrisk_version='0.1.0', seed=0, results=13, verdict='fail', warnings=1)"
    )
    assert report.verdict is not None
    assert (
        repr(report.verdict)
        == "Verdict(overall='fail', pass=1, review=0, fail=1, info=11, caveats=3)"
    )
    share = repr(report.verdict["dcr_share"])
    assert share.startswith(
        "MetricVerdict(metric='dcr_share', level='fail', effect=0.2, ci=(0.19, 0.21)"
    )
    assert len(share) < 160
    plain = EvaluationReport("0.1.0", 3, {}, ())
    assert (
        repr(plain)
        == "EvaluationReport(synthrisk_version='0.1.0', seed=3, results=0, verdict=None)"
    )


def test_notebook_view_shows_the_verdict_first() -> None:
    pytest.importorskip("jinja2")
    import synthrisk.report  # noqa: F401 - registers the HTML renderers

    report = _judged_report()
    fragment = report._repr_html_()
    assert fragment is not None
    body = fragment[fragment.index('<div class="sr">') :]
    first = re.search(
        r"<(section|header|h1|p|div)\b[^>]*>", body[len('<div class="sr">') :]
    )
    assert first is not None
    assert first.group(0) == '<section id="verdict">'
    assert (
        body.index('<section id="verdict">')
        < body.index("<header>")
        < body.index('<section id="metrics">')
    )
    assert body.index('id="caveats"') < body.index('<section id="metrics">')


def _threat(**fields: object) -> ThreatModel:
    base: dict[str, object] = {
        "attacker_holds": "the synthetic table and some columns of a target person's record",
        "target": "training people",
        "meaning": "share of secrets guessed right",
    }
    base.update(fields)
    return ThreatModel(**base)  # type: ignore[arg-type]


def test_threat_model_names_the_columns_of_the_run() -> None:
    inference = _threat(known=("aux_cols",), guessed=("secret",), unset_means_all=True)
    assert (
        inference.for_params({"aux_cols": ["age", "sex"], "secret": "income"}).columns
        == "knows age, sex; guesses income"
    )
    assert (
        inference.for_params({"aux_cols": None, "secret": "income"}).columns
        == "knows every other column; guesses income"
    )
    assert (
        inference.for_params({"aux_cols": None, "secret": None}).columns
        == "guesses each column in turn from all the others"
    )
    cap = _threat(known=("key_fields",), guessed=("sensitive_fields",))
    # unset columns that a run resolves later: nothing said before the run
    assert (
        cap.for_params({"key_fields": None, "sensitive_fields": None}).columns is None
    )
    link = _threat(known=("aux_cols",))
    assert (
        link.for_params({"aux_cols": [["age", "city"], ["sex"]]}).columns
        == "knows age, city in one record and sex in the other"
    )
    many = _threat(compared=("columns",))
    names = [f"c{i}" for i in range(10)]
    assert (
        many.for_params({"columns": names}).columns
        == "columns c0, c1, c2, c3, c4, c5 and 4 more"
    )
    assert _threat().for_params({"columns": names}).columns is None


def test_threat_model_in_json_round_trips_and_old_reports_read() -> None:
    tm = _threat(known=("aux_cols",), guessed=("secret",)).for_params(
        {"aux_cols": ["age"], "secret": "income"}
    )
    result = MetricResult(
        "inference", 0.1, {}, params={"secret": "income"}, threat_model=tm
    )
    entry = result.to_dict()
    assert entry["threat_model"] == {
        "attacker_holds": tm.attacker_holds,
        "target": "training people",
        "meaning": "share of secrets guessed right",
        "columns": "knows age; guesses income",
    }
    again = MetricResult.from_dict(json.loads(json.dumps(entry)))
    assert again.threat_model == tm
    assert again.to_dict() == entry
    assert tm.describe() == (
        "Attacker holds: the synthetic table and some columns of a target person's record "
        "(knows age; guesses income). Target: training people. "
        "The number: share of secrets guessed right."
    )
    # a report written before threat models existed reads as before, and writes none
    old = dict(entry)
    del old["threat_model"]
    before = MetricResult.from_dict(old)
    assert before.threat_model is None
    assert "threat_model" not in before.to_dict()
    # an incomplete block is ignored rather than breaking the report
    broken = {**entry, "threat_model": {"target": "x"}}
    assert MetricResult.from_dict(broken).threat_model is None
    skipped = MetricResult.skipped("inference", "no holdout", threat_model=tm)
    assert MetricResult.from_dict(skipped.to_dict()).threat_model == tm


@pytest.mark.parametrize("field", ["attacker_holds", "target", "meaning"])
def test_threat_model_fields_are_one_non_empty_line(field: str) -> None:
    with pytest.raises(ValueError, match=f"`{field}` of a threat model must be"):
        _threat(**{field: " "})
    with pytest.raises(ValueError, match=f"`{field}` of a threat model must be"):
        _threat(**{field: "two\nlines"})
    with pytest.raises(ValueError, match="`known` of a threat model must be a tuple"):
        _threat(known="aux_cols")


def _scenario(kind: str, share: float, n: int, level: str) -> SelfTestScenario:
    failed = ("identification",) if level == "fail" else ()
    review = ("dcr_share",) if level == "review" else ()
    return SelfTestScenario(kind, share, n, level, failed, review, reason=level)


def _self_test(*levels: str) -> SelfTest:
    shares = ((0.001, 39), (0.005, 195), (0.01, 390))
    kinds = [("exact", s) for s in shares] + [("near", s) for s in shares]
    scenarios = tuple(
        _scenario(kind, share, n, level)
        for (kind, (share, n)), level in zip(kinds, levels, strict=True)
    )
    return SelfTest(scenarios, ("identification", "dcr_share"), 39_040, 39_032, 39_000)


@pytest.mark.parametrize(
    ("levels", "headline"),
    [
        (
            ["fail"] * 6,
            "The verdict would have caught exact copies of 39 training people (0.1 % of "
            "the synthetic rows) and near copies of 39 (0.1 %); every planted leak fails.",
        ),
        (
            ["fail", "fail", "fail", "pass", "review", "fail"],
            "The verdict would have caught exact copies of 39 training people (0.1 % of "
            "the synthetic rows) and near copies of 390 (1 %). Not caught: near copies of "
            "39 (0.1 %: pass), near copies of 195 (0.5 %: review).",
        ),
        (
            ["pass", "review", "review", "pass", "pass", "pass"],
            "The verdict would have caught none of the planted leaks: exact copies of 39 "
            "(0.1 %: pass), exact copies of 195 (0.5 %: review), exact copies of 390 "
            "(1 %: review), near copies of 39 (0.1 %: pass), near copies of 195 "
            "(0.5 %: pass), near copies of 390 (1 %: pass).",
        ),
    ],
)
def test_self_test_headline_says_what_was_caught(
    levels: list[str], headline: str
) -> None:
    assert _self_test(*levels).headline == headline


def test_self_test_in_json_and_print() -> None:
    tested = _self_test("fail", "fail", "fail", "review", "fail", "fail")
    report = dataclasses.replace(_report(), self_test=tested)
    data = json.loads(report.to_json())
    assert list(data)[-2:] == ["self_test", "results"]
    block = data["self_test"]
    assert set(block) == {
        "headline", "metrics", "synthetic_rows", "training_people", "candidates",
        "person_column", "near_move", "notes", "scenarios",
    }  # fmt: skip
    assert block["scenarios"][3] == {
        "kind": "near", "share": 0.001, "planted": 39, "overall": "review",
        "caught": False, "failed": [], "review": ["dcr_share"], "passed": [],
        "reason": "review",
    }  # fmt: skip
    assert EvaluationReport.from_json(report.to_json()).self_test == tested
    assert "self_test" not in json.loads(_report().to_json())
    lines = report.summary_lines(width=100)
    assert all(len(line) <= 100 for line in lines)
    text = "\n".join(lines)
    assert (
        "self-test (copies of the most isolated training people planted): The verdict"
        in text
    )
    assert (
        "exact: 0.1 % fail, 0.5 % fail, 1 % fail · near: 0.1 % review, 0.5 % fail, 1 % fail"
        in text
    )
    assert repr(report).endswith("self_test=5/6 caught)")


def test_self_test_without_scenarios_says_why() -> None:
    empty = SelfTest(
        tuple(
            SelfTestScenario(k, s, 0, "skipped", reason="skipped: nobody")
            for k in ("exact", "near")
            for s in (0.001, 0.005, 0.01)
        ),
        ("identification",), 100, 100, 0, notes=("every record is shared",),
    )  # fmt: skip
    assert empty.headline == "No planted leak was evaluated: every record is shared"


def test_self_test_headline_of_one_person() -> None:
    one = SelfTest(
        (SelfTestScenario("exact", 0.001, 1, "fail", ("identification",)),),
        ("identification",), 100, 100, 100,
    )  # fmt: skip
    assert one.headline == (
        "The verdict would have caught exact copies of 1 training person (0.1 % of the "
        "synthetic rows); every planted leak fails."
    )
