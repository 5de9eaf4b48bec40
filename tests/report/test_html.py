# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import base64
import dataclasses
import re
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synthrisk
from synthrisk import evaluate
from synthrisk.exceptions import InputError, ParameterError
from synthrisk.report import Thresholds, render_html, write_html
from synthrisk.report.html import SECTIONS
from synthrisk.results import (
    EvaluationReport,
    MetricResult,
    RecordScores,
    SelfTest,
    SelfTestScenario,
    ThreatModel,
)


def anonymeter_result(metric: str = "singling_out", risk: float = 0.12) -> MetricResult:
    """Shaped like the Anonymeter family's results: risk as score, nested rates, PETsARD's flat view, queries."""
    breakdown = {
        "risk": risk,
        "risk_ci": [risk - 0.04, risk + 0.04],
        "attack_rate": {"value": 0.2, "error": 0.02},
        "baseline_rate": {"value": 0.01, "error": 0.005},
        "control_rate": {"value": 0.09, "error": 0.015},
        "n_attacks": {"main": 2000, "baseline": 2000, "control": 2000},
        "petsard": {
            "risk": risk, "risk_CI_btm": risk - 0.04, "risk_CI_top": risk + 0.04, "attack_rate": 0.2,
            "attack_rate_err": 0.02, "baseline_rate": 0.01, "baseline_rate_err": 0.005, "control_rate": 0.09,
            "control_rate_err": 0.015,
        },
        "successful_queries": ["age == 77 AND occupation == 'astronaut'"],
    }  # fmt: skip
    return MetricResult(
        metric, risk, breakdown, (risk - 0.04, risk + 0.04), higher_is_safer=False,
        attack="An attacker writes queries that single out one synthetic row.",
        records={"singled_out_real": RecordScores("real", np.array([3, 8]), np.array([0.0, 5.0]), "query number")},
    )  # fmt: skip


def membership_result(n_real: int = 50) -> MetricResult:
    rng = np.random.default_rng(3)
    return MetricResult(
        "membership_knn_probabilities", 0.71,
        {"roc_auc": 0.71, "average_precision": 0.6, "roc": {"fpr": [0, 0.1, 0.4, 1], "tpr": [0, 0.3, 0.8, 1]}},
        (0.68, 0.74), higher_is_safer=False,
        records={"member_probability": RecordScores("real", np.arange(n_real), rng.random(n_real), "score")},
    )  # fmt: skip


def cap_result(n_real: int = 50) -> MetricResult:
    values = np.linspace(0, 1, n_real)
    return MetricResult(
        "disclosure_protection", 0.62, {"score": 0.62, "cap_protection": 0.5, "baseline_protection": 0.8},
        (0.6, 0.64),
        records={"per_record_risk": RecordScores("real", np.arange(n_real), values, "guess probability")},
    )  # fmt: skip


def dcr_result() -> MetricResult:
    syn = np.array([0.0, 0.3, 0.05, 0.2])
    return MetricResult(
        "dcr_overfitting_protection", 0.5, {"score": 0.5}, (0.4, 0.6),
        records={
            "synthetic_to_real": RecordScores("synthetic", np.arange(4), syn, "DCR to real"),
            "synthetic_to_holdout": RecordScores("synthetic", np.arange(4), syn + 0.1, "DCR to holdout"),
        },
    )  # fmt: skip


def hand_report(*results: MetricResult, **fields: object) -> EvaluationReport:
    base = {
        "synthrisk_version": "0.1.0", "seed": 4,
        "inputs": {"real": {"rows": 50, "columns": ["a"], "file": "real.csv", "sha256": "ab" * 32},
                   "synthetic": {"rows": 4, "columns": ["a"]}, "holdout": None},
        "results": results,
        "schema": {"columns": {"a": {"kind": "numerical", "source": "inferred"}}, "primary_key": None, "excluded": []},
    }  # fmt: skip
    base.update(fields)
    return EvaluationReport(**base)  # type: ignore[arg-type]


def plot_kinds(html: str) -> list[str]:
    return re.findall(r'<figure class="plot-([a-z_]+)">', html)


def svg_text(html: str) -> list[bytes]:
    return [
        base64.b64decode(m)
        for m in re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    ]


def test_page_is_self_contained_with_every_section() -> None:
    html = render_html(
        hand_report(
            anonymeter_result(), membership_result(), cap_result(), dcr_result()
        )
    )
    assert html.startswith("<!DOCTYPE html>")
    for section in SECTIONS:
        assert f'<section id="{section}">' in html
    assert "<script" not in html.lower()
    assert "Content-Security-Policy" in html
    assert "default-src 'none'" in html
    assert "@media print" in html
    # nothing is fetched: every src is a data URI, no link/stylesheet/font elements
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', html))
    assert not re.search(r"<link\b|@import|url\(", html)
    assert all(href.startswith("#") for href in re.findall(r'href="([^"]*)"', html))
    for svg in svg_text(html):
        assert b"<svg" in svg
        assert b"http://www.w3.org" in svg  # namespaces only, never fetched
        assert b'xlink:href="http' not in svg


def test_plots_follow_the_shapes_in_the_results() -> None:
    assert plot_kinds(render_html(hand_report(anonymeter_result()))) == ["rates"]
    assert plot_kinds(render_html(hand_report(membership_result()))) == [
        "roc",
        "record_risk",
    ]
    assert plot_kinds(render_html(hand_report(cap_result()))) == ["record_risk"]
    assert plot_kinds(render_html(hand_report(dcr_result()))) == ["distances"]
    # a result whose records are absent (JSON saved without records) has no record plots
    bare = dataclasses.replace(dcr_result(), records={})
    assert plot_kinds(render_html(hand_report(bare))) == []


def test_a_new_metric_family_is_rendered_without_changes() -> None:
    new = dataclasses.replace(anonymeter_result(), metric="attribute_disclosure_v2")
    html = render_html(hand_report(new))
    assert plot_kinds(html) == ["rates"]
    assert "informational without a holdout" in html
    assert 'id="m0"' in html


def test_verdict_and_rates_are_shown() -> None:
    score_scale = {"singling_out": {}}  # judge the risk on its score (a user threshold)
    html = render_html(
        hand_report(anonymeter_result(risk=0.137), dcr_result()), thresholds=score_scale
    )
    assert 'Overall: <span class="badge fail">' not in html
    assert 'Overall: <span class="badge review">review</span>' in html
    assert (
        "score 0.137 lies between the pass and fail limits (pass &lt; 0.09, fail ≥ 0.18)."
        in html
    )
    assert (
        'attack on real rows</td><td class="num">0.2</td><td class="num">0.02</td>'
        in html
    )
    assert (
        'control (holdout rows)</td><td class="num">0.09</td><td class="num">0.015</td>'
        in html
    )
    assert "PETsARD view" in html
    # a failing metric makes the overall verdict fail
    failing = render_html(
        hand_report(anonymeter_result(risk=0.3)), thresholds=score_scale
    )
    assert 'Overall: <span class="badge fail">fail</span>' in failing
    # custom thresholds change it
    relaxed = render_html(
        hand_report(anonymeter_result(risk=0.3)),
        thresholds={"singling_out": {"pass": 0.5, "fail": 0.9}},
    )
    assert "score 0.3 is within the pass limit" in relaxed
    # without a holdout nothing is a pass overall
    assert 'Overall: <span class="badge review">review</span>' in relaxed


def test_user_supplied_text_is_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    real = pd.DataFrame({evil: np.arange(40.0), "cat": ["<b>x</b>", "y"] * 20})
    synthetic = real.iloc[::-1].reset_index(drop=True) + 0.0 if False else real.copy()
    report = evaluate(real, synthetic, metrics=["dcr_baseline_protection"])
    inputs = dict(report.inputs)
    inputs["real"] = {**inputs["real"], "file": "<img src=x onerror=alert(2)>.csv"}
    extra = dataclasses.replace(
        anonymeter_result(),
        params={"aux_cols": [evil], "secret": "<i>income</i>"},
        warnings=(f"column {evil} is odd",),
        attack=f"attack on {evil}",
    )
    report = dataclasses.replace(
        report, inputs=inputs, results=(*report.results, extra)
    )
    for html in (
        render_html(report),
        render_html(
            report, tables={"real": real, "synthetic": synthetic}, include_values=True
        ),
    ):
        assert "<script" not in html
        assert "<img src=x" not in html
        assert "<b>x</b>" not in html
        assert "<i>income</i>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "&lt;img src=x onerror=alert(2)&gt;.csv" in html
    with_values = render_html(
        report, tables={"real": real, "synthetic": synthetic}, include_values=True
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in with_values  # a category value, shown as text
    assert "age == 77 AND occupation == &#39;astronaut&#39;" in with_values


def _real_frame(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "person_id": [f"ZX{9000 + i}Q" for i in range(n)],
            "income": np.round(12345.678 + 1000 * np.arange(n), 3),
            "city": [f"Xanadu-{i}" for i in range(n)],
        }
    )


def test_default_report_holds_no_real_values_and_include_values_shows_them() -> None:
    real = _real_frame(50)
    report = hand_report(cap_result(50), anonymeter_result(), membership_result(50))
    default = render_html(report, tables={"real": real})
    # the riskiest rows of the CAP result are the last ones (values rise with the row)
    top = real.iloc[::-1].head(5)
    distinctive = [
        *top["person_id"],
        *top["city"],
        *(f"{v:.3f}".rstrip("0") for v in top["income"]),
    ]
    for value in distinctive:
        assert value not in default
    assert "Real record values are not included" in default
    assert "age == 77" not in default  # text items of the breakdown are held back too
    shown = render_html(report, tables={"real": real}, include_values=True)
    for value in distinctive:
        assert value in shown
    assert "This report contains real record values." in shown
    assert "age == 77" in shown
    # include_values without the tables cannot show values, and says so
    requested = render_html(report, include_values=True)
    assert "no input tables were given to the renderer" in requested
    for value in distinctive:
        assert value not in requested


def test_drilldown_orders_and_limits_rows() -> None:
    html = render_html(hand_report(cap_result(50), dcr_result()), top_n=3)
    section = html[
        html.index('<section id="records">') : html.index('<section id="inputs">')
    ]
    rows = re.findall(
        r'<tr><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">([^<]+)</td>',
        section,
    )
    # CAP risks: highest first (rows 49, 48, 47); DCR: closest synthetic rows first (0, 2, 3)
    assert rows == [("1", "49", "1"), ("2", "48", "0.9796"), ("3", "47", "0.9592"),
                    ("1", "0", "0"), ("2", "2", "0.05"), ("3", "3", "0.2")]  # fmt: skip


def test_json_dict_renders_like_the_object_and_without_records_says_so() -> None:
    report = hand_report(anonymeter_result(), dcr_result())
    assert render_html(report.to_dict(include_records=True)) == render_html(report)
    without = render_html(report.to_dict())
    assert "save the JSON with <code>--include-records</code>" in without
    newer = report.to_dict()
    newer["schema_version"] = 2
    with pytest.raises(
        InputError, match="newer than the 1 this synthrisk reads; upgrade synthrisk"
    ):
        render_html(newer)


def test_rendering_is_deterministic_and_options_are_checked(tmp_path: Path) -> None:
    report = hand_report(anonymeter_result(), membership_result(), dcr_result())
    assert render_html(report) == render_html(report)
    with pytest.raises(ParameterError, match=r"`top_n` must be an integer >= 1; got 0"):
        render_html(report, top_n=0)
    with pytest.raises(ParameterError, match=r"`include_values` must be true or false"):
        render_html(report, include_values="yes")  # type: ignore[arg-type]
    with pytest.raises(
        ParameterError,
        match=r"`thresholds.singling_out.pass` must be a number in \[0, 1\]",
    ):
        render_html(report, thresholds={"singling_out": {"pass": 7}})
    path = write_html(
        report,
        tmp_path / "new" / "folder" / "r.html",
        thresholds=Thresholds(conservative=True),
    )
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_inputs_and_reproducibility_blocks() -> None:
    html = render_html(
        hand_report(anonymeter_result()), thresholds={"singling_out": {}}
    )
    inputs = html[
        html.index('<section id="inputs">') : html.index(
            '<section id="reproducibility">'
        )
    ]
    assert "real.csv" in inputs
    assert "ab" * 32 in inputs
    assert '<td>holdout</td><td colspan="4" class="muted">not given</td>' in inputs
    repro = html[html.index('<section id="reproducibility">') :]
    assert '<td class="mono">4</td>' in repro  # seed
    assert "&#34;max_attempts&#34;" not in repro  # params of this result are empty
    assert "pass &lt; 0.09, fail ≥ 0.18" in repro


def test_notebook_display() -> None:
    report = hand_report(anonymeter_result())
    fragment = report._repr_html_()  # type: ignore[attr-defined]
    assert "<html" not in fragment
    assert '<div class="sr">' in fragment
    # every style rule is scoped to the report's root class
    css = fragment[fragment.index("<style>") + 7 : fragment.index("</style>")]
    selectors = [
        s.strip() for block in re.findall(r"([^{}]+)\{", css) for s in block.split(",")
    ]
    assert all(s.startswith(".sr") or s.startswith("@media") for s in selectors if s)
    card = report.results[0]._repr_html_()  # type: ignore[attr-defined]
    assert "singling_out" in card
    assert "info" in card  # no holdout: informational
    assert (
        repr(report.results[0])
        == "MetricResult(metric='singling_out', score=0.1200, ci=(0.0800, 0.1600))"
    )


def test_renderer_never_imports_metric_code() -> None:
    folder = Path(synthrisk.report.__file__).parent
    for source in folder.glob("*.py"):
        text = source.read_text(encoding="utf-8")
        assert "synthrisk.metrics" not in text, source
        assert "synthrisk.evaluate" not in text, source


def test_breakdown_shows_column_lists_and_holds_back_other_text() -> None:
    result = dataclasses.replace(
        anonymeter_result("linkability"),
        breakdown={
            **anonymeter_result().breakdown,
            "aux_cols": [["a"], ["b"]],
            "labels": ["a", "secret value"],
        },
    )
    report = hand_report(result)
    report = dataclasses.replace(
        report,
        inputs={**report.inputs, "synthetic": {"rows": 4, "columns": ["a", "b"]}},
    )
    html = render_html(report)
    breakdown = html[
        html.index("<h4>Breakdown</h4>") : html.index("<h4>Parameters</h4>")
    ]
    assert (
        '<td class="key" title="aux_cols">aux cols</td><td class="mono">[[a], [b]]</td>'
        in breakdown
    )  # column names
    assert (
        '<td class="key" title="labels">labels</td><td class="mono">2 text items, not shown'
        in breakdown
    )
    assert "secret value" not in html
    assert (
        "petsard ›" not in breakdown
    )  # PETsARD's copy of the rates is shown once, in its own table
    assert "risk_CI_btm" in html[html.index('<section id="reproducibility">') :]


def test_labels_name_results_of_the_same_metric() -> None:
    report = hand_report(
        anonymeter_result("inference", 0.05), anonymeter_result("inference", 0.2)
    )
    html = render_html(report, labels=["income_risk", "age_risk"])
    assert "<h3>1. income_risk (inference)" in html
    assert "<h3>2. age_risk (inference)" in html
    assert 'id="m0"' in html
    assert 'id="m1"' in html
    with pytest.raises(
        ParameterError, match=r"`labels` must name each of the 2 results; got 1 labels"
    ):
        render_html(report, labels=["x"])


def test_report_package_exports_what_it_lists() -> None:
    import synthrisk.compat.petsard
    import synthrisk.report._extract

    for module in (
        synthrisk.report,
        synthrisk.report._extract,
        synthrisk.compat.petsard,
    ):
        assert all(hasattr(module, name) for name in module.__all__), module
    assert synthrisk.render_html is render_html


def test_report_verdict_module_is_the_verdict_layer() -> None:
    import synthrisk.report.verdict
    import synthrisk.verdict

    assert synthrisk.report.verdict.__all__ == synthrisk.verdict.__all__
    for name in synthrisk.verdict.__all__:
        assert getattr(synthrisk.report.verdict, name) is getattr(
            synthrisk.verdict, name
        )


def test_skipped_and_undefined_metrics_show_their_reason() -> None:
    skipped = MetricResult.skipped(
        "nndr",
        "it needs a holdout table (real rows the generator never saw); none was given.",
    )
    undefined = MetricResult(
        "dcr_share",
        None,
        {},
        higher_is_safer=False,
        reason="the holdout has one row <b>.",
    )
    html = render_html(hand_report(dcr_result(), skipped, undefined))
    # the skipped metric is badged and explained, and does not drag the verdict down
    assert '<span class="badge skipped">skipped</span>' in html
    assert (
        "<strong>Skipped:</strong> it needs a holdout table (real rows the generator never saw); "
        "none was given." in html
    )
    assert "1 of them skipped: not applicable to these tables" in html
    assert (
        "<strong>Score undefined:</strong> the holdout has one row &lt;b&gt;." in html
    )
    # no holdout here: every metric is informational, the skipped one among them
    assert "0 passed · 0 to review · 0 failed · 3 informational" in html
    with_skipped = render_html(hand_report(dcr_result(), skipped))
    without = render_html(hand_report(dcr_result()))
    overall = 'Overall: <span class="badge review">review</span>'
    assert overall in with_skipped
    assert overall in without
    card = skipped._repr_html_()
    assert card is not None
    assert "skipped" in card


def test_notebook_display_catches_only_the_missing_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from synthrisk import results
    from synthrisk.exceptions import MissingDependencyError

    report = hand_report(anonymeter_result())

    def missing(_: object) -> str:
        msg = "`jinja2` is required"
        raise MissingDependencyError(msg)

    def broken(_: object) -> str:
        msg = "a bug in the renderer"
        raise RuntimeError(msg)

    monkeypatch.setitem(results._HTML_RENDERERS, "report", missing)
    assert report._repr_html_() is None
    monkeypatch.setitem(results._HTML_RENDERERS, "report", broken)
    with pytest.raises(RuntimeError, match="a bug in the renderer"):
        report._repr_html_()


def test_record_sets_are_read_as_arrays() -> None:
    """JSON lists (with nulls and odd entries) and arrays give the same views."""
    from synthrisk.report._extract import finite_values, is_probability, record_arrays

    listed = {"index": [4, 2, 7, 9], "values": [0.5, None, True, "x"]}
    rows, values = record_arrays(listed)
    assert rows.tolist() == [4, 2, 7, 9]
    assert np.isnan(values[1:]).all()
    assert values[0] == 0.5
    assert finite_values(listed).tolist() == [0.5]
    assert is_probability(listed)
    arrays = {"index": np.arange(3), "values": np.array([0.1, np.inf, 1.5])}
    assert finite_values(arrays).tolist() == [0.1, 1.5]
    assert not is_probability(arrays)
    assert record_arrays({"index": [1, 2, 3], "values": [1.0]})[0].tolist() == [1]


def test_a_million_row_record_set_renders_from_arrays() -> None:
    """Drill-down, summary and plots read the arrays; the top rows are the right ones."""
    n = 1_000_000
    values = np.linspace(1.0, 0.0, n)
    values[123_456] = 0.0  # ties broken by row position
    values[5] = np.nan
    result = MetricResult(
        "dcr_baseline_protection",
        0.5,
        {},
        records={
            "synthetic_to_real": RecordScores(
                "synthetic", np.arange(n), values, "distance to the closest real row"
            ),
        },
    )
    report = EvaluationReport("0.1.0", 0, {}, (result,))
    html = render_html(report, top_n=3)
    assert "1,000,000" in html or "1000000" in html
    # closest first: the two zeros (row 123456 before row 999999), then the next smallest
    drill = html[html.index("closest first") :]
    assert drill.index("123456") < drill.index("999999") < drill.index("999998")


def test_each_metric_section_states_its_threat_model_in_one_line() -> None:
    threat = ThreatModel(
        attacker_holds="the synthetic table and some columns of a target person's record",
        target="training people",
        meaning="share of secrets <guessed> right",
        known=("aux_cols",),
        guessed=("secret",),
    ).for_params({"aux_cols": ["age", "<b>zip</b>"], "secret": "income"})
    with_threat = dataclasses.replace(
        anonymeter_result("inference"), threat_model=threat
    )
    html = render_html(hand_report(with_threat, anonymeter_result()))
    line = re.search(r'<span class="threat" id="threat-m0">(.*?)</span>', html)
    assert line is not None
    assert "&lt;b&gt;zip&lt;/b&gt;" in line.group(1)  # escaped, never markup
    text = unescape(re.sub(r"<[^>]+>", "", line.group(1)))
    assert text == (
        "Attacker holds: the synthetic table and some columns of a target person's record "
        "(knows age, <b>zip</b>; guesses income) · target: training people · "
        "the number: share of secrets <guessed> right."
    )
    # it joins the attack's sentence in the same paragraph, not a second heading
    paragraph = html[
        html.index('<p class="attack">') : html.index(
            "</p>", html.index('<p class="attack">')
        )
    ]
    assert "What the attack assumes: An attacker writes queries" in paragraph
    assert 'id="threat-m0"' in paragraph
    # a result without one (a report written before threat models) keeps the sentence only
    assert 'id="threat-m1"' not in html
    assert html.count("What the attack assumes:") == 2
    # the notebook card says it too
    card = with_threat._repr_html_()  # type: ignore[attr-defined]
    assert "Attacker holds: the synthetic table and some columns" in card
    assert "&lt;b&gt;zip&lt;/b&gt;" in card


def test_verdict_section_says_the_verdict_is_not_an_oracle() -> None:
    for html in (
        render_html(hand_report(anonymeter_result())),
        render_html(hand_report(anonymeter_result()), fragment=True),
    ):
        how = html[html.index('<details id="how-to-read"') : html.index("</details>")]
        note = re.search(r'<p class="small" id="not-an-oracle">(.*?)</p>', how)
        assert note is not None
        text = note.group(1)
        assert "Do not regenerate or tune a generator until this verdict passes" in text
        assert "ReconSyn" in text
        assert "arXiv:2312.05114" in text
        assert "not a licence to search" in text


def _self_test(person_column: str | None = None) -> SelfTest:
    scenarios = tuple(
        SelfTestScenario(kind, share, n, level, failed, review, reason="r")
        for kind, share, n, level, failed, review in (
            ("exact", 0.001, 1, "fail", ("dcr_overfitting_protection",), ()),
            ("exact", 0.01, 4, "fail", ("dcr_overfitting_protection",), ()),
            ("near", 0.001, 1, "review", (), ("not_in_this_report",)),
            ("near", 0.01, 4, "fail", ("dcr_overfitting_protection",), ()),
        )
    )
    return SelfTest(
        scenarios, ("dcr_overfitting_protection",), 400, 50, 48, person_column
    )


def test_self_test_section_is_rendered_from_the_report_alone() -> None:
    report = hand_report(
        anonymeter_result(), dcr_result(), self_test=_self_test("<b>pid</b>")
    )
    html = render_html(report)
    assert '<section id="self-test">' in html
    assert '<a href="#self-test">Self-test</a>' in html
    assert (
        html.index('id="verdict"')
        < html.index('id="self-test"')
        < html.index('id="metrics"')
    )
    assert unescape(report.self_test.headline) in unescape(html)  # type: ignore[union-attr]
    assert "<b>pid</b>" not in html
    assert "&lt;b&gt;pid&lt;/b&gt;" in html
    assert (
        html.count('<span class="badge fail">fail</span></td><td class="small">') == 3
    )
    # a re-run metric links to its section; one not in the report is plain text
    assert '<a href="#m1">dcr_overfitting_protection</a>' in html
    assert "not_in_this_report" in html
    assert 'href="#not_in_this_report"' not in html

    def section(page: str) -> str:
        return page[page.index('<section id="self-test">') : page.index('id="metrics"')]

    assert section(render_html(report.to_dict())) == section(html)  # from its JSON
    fragment = render_html(report, fragment=True)
    assert '<section id="self-test">' in fragment


def test_no_self_test_section_without_a_self_test() -> None:
    html = render_html(hand_report(dcr_result()))
    assert 'id="self-test"' not in html
    assert "Self-test" not in html


def test_column_table_shows_the_semantic_type() -> None:
    schema = {
        "columns": {
            "a": {"kind": "numerical", "source": "inferred"},
            "email": {"kind": "pii", "source": "inferred", "semantic": "email",
                      "note": "e-mail addresses, by content"},
        },
        "primary_key": None,
        "excluded": ["email"],
    }  # fmt: skip
    html = render_html(hand_report(dcr_result(), schema=schema))
    assert 'pii <span class="muted small">(email)</span>' in html
    assert "e-mail addresses, by content" in html


def test_a_report_rendered_as_a_part_has_no_second_overall() -> None:
    report = hand_report(anonymeter_result())
    whole = render_html(report, fragment=True)
    part = render_html(report, part="Table <accounts>")
    assert "Overall:" in whole
    assert "Overall:" not in part
    assert "<html" not in part
    assert "<h1>" not in part
    assert '<div class="sr part">' in part
    # the part's name is escaped, its level a smaller badge beside it
    assert re.search(
        r'<div class="part-verdict">Table &lt;accounts&gt;: <span class="badge \w+">',
        part,
    )
    with pytest.raises(ParameterError, match="`part` must be a string"):
        render_html(report, part=3)  # type: ignore[arg-type]
