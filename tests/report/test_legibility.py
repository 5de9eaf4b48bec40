# SPDX-License-Identifier: BSD-3-Clause
"""What a new user trips on when reading the report: colours, contrast, numbers, order, width."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from synthrisk import evaluate
from synthrisk._format import format_number, format_p_value, natural_key
from synthrisk.report import _plots, render_html
from synthrisk.report.html import _result_with_arrays
from synthrisk.results import EvaluationReport, MetricResult, RecordScores
from synthrisk.verdict import judge

CSS = (
    Path(__file__).resolve().parents[2]
    / "src"
    / "synthrisk"
    / "report"
    / "templates"
    / "report.css"
)
CTGAN_WARNING = (
    "15 of 15 synthetic column(s) differ from the real data (['age', 'capital_gain', 'capital_loss', "
    "'country', 'education', 'education_num', 'fnlwgt', 'hr_per_week', 'income', 'marital', 'occupation', "
    "'race', 'relationship', 'sex', 'type_employer']); membership results partly reflect fidelity, not only "
    "memorisation."
)


def _records(names: list[str], n: int = 60) -> dict[str, RecordScores]:
    rng = np.random.default_rng(0)
    return {
        name: RecordScores(
            "synthetic" if name.startswith("synthetic") else name.split("_")[0],
            np.arange(n),
            rng.random(n) * (i + 1),
            name,
        )
        for i, name in enumerate(names)
    }


def _test(effect: float, p: float, n: int = 1000) -> dict[str, Any]:
    return {
        "effect": effect,
        "ci": [effect - 0.01, effect + 0.01],
        "p_value": p,
        "n": n,
    }


def _judged(*results: MetricResult, warnings: tuple[str, ...] = ()) -> EvaluationReport:
    report = EvaluationReport(
        "0.1.0",
        0,
        {
            "real": {"rows": 1000, "columns": ["a", "b"]},
            "synthetic": {"rows": 1000, "columns": ["a", "b"]},
            "holdout": {"rows": 1000, "columns": ["a", "b"]},
        },
        results,
        warnings=warnings,
    )
    return dataclasses.replace(report, verdict=judge(report))


def _ctgan_style_report() -> EvaluationReport:
    """Like the Adult CTGAN run: gating tests pass, the fidelity check warns."""
    return _judged(
        MetricResult(
            "dcr_baseline_protection",
            0.094,
            {"holdout_test": _test(-0.199, 1.0)},
            (0.09, 0.1),
            warnings=("an informational metric's own caveat.",),
            records=_records(
                ["synthetic_to_real", "random_to_real", "holdout_to_real"]
            ),
        ),
        MetricResult(
            "dcr_share",
            0.5035,
            {"holdout_test": _test(-0.001, 0.6)},
            higher_is_safer=False,
            warnings=("the holdout (9758 rows) is much smaller than the other table.",),
        ),
        MetricResult(
            "distribution_validation",
            0.0,
            {"distributions_valid": False},
            warnings=(CTGAN_WARNING,),
        ),
        MetricResult("nndr", 3.08e-06, {"holdout_test": _test(0.2, 1e-12)}),
        warnings=("`id` looks like an identifier and was left out.",),
    )


# -- 1. every curve of every plot has its own colour and line style ------------------


def _capture(
    monkeypatch: pytest.MonkeyPatch, make: Callable[[Any], Any], result: Any
) -> Any:
    """Run a plot function and return the matplotlib axes it drew on."""
    from matplotlib.figure import Figure

    axes: list[Any] = []

    def draw(callback: Callable[[Any], None], *args: Any, **kwargs: Any) -> str:
        ax = Figure().add_subplot()
        callback(ax)
        axes.append(ax)
        return "data:image/svg+xml;base64,"

    monkeypatch.setattr(_plots, "_draw", draw)
    assert make(result) is not None
    return axes[0]


def _curves(ax: Any) -> list[tuple[str, Any]]:
    """``(colour, line style)`` of each curve: the legend's entries, or the bars."""
    from matplotlib.colors import to_hex

    handles, _ = ax.get_legend_handles_labels()
    out = []
    for handle in handles:
        if hasattr(handle, "get_color") and not hasattr(handle, "get_facecolor"):
            out.append((to_hex(handle.get_color()), handle.get_linestyle()))
        elif hasattr(handle, "patches"):  # a bar container
            out.append(
                (
                    to_hex(handle.patches[0].get_facecolor()),
                    handle.patches[0].get_hatch(),
                )
            )
        elif handle.get_fill():
            out.append((to_hex(handle.get_facecolor()), handle.get_linestyle()))
        else:
            out.append((to_hex(handle.get_edgecolor()), handle.get_linestyle()))
    return out


def test_curves_of_one_plot_never_share_a_colour(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dcr = MetricResult(
        "dcr_baseline_protection",
        0.14,
        {},
        records=_records(
            [
                "synthetic_to_real",
                "random_to_real",
                "holdout_to_real",
                "synthetic_to_holdout",
            ]
        ),
    )
    risks = MetricResult(
        "m",
        0.5,
        {},
        records={
            name: RecordScores(
                "real", np.arange(50), np.linspace(0, 1, 50) ** (i + 1), name
            )
            for i, name in enumerate(["risk_a", "risk_b", "risk_c", "risk_d"])
        },
    )
    rates = MetricResult(
        "singling_out",
        0.1,
        {"attack_rate": 0.2, "baseline_rate": 0.05, "control_rate": 0.1},
    )
    roc = MetricResult(
        "membership_knn_probabilities",
        0.7,
        {"roc": {"fpr": [0, 0.5, 1], "tpr": [0, 0.8, 1], "auc": 0.7}},
    )
    cases = [
        (_plots.distance_plot, dcr, 4),
        (_plots.record_risk_plot, risks, 4),
        (_plots.rates_plot, rates, 3),
        (_plots.roc_plot, roc, 2),
    ]
    for make, result, n in cases:
        ax = _capture(monkeypatch, make, _result_with_arrays(result))
        curves = _curves(ax)
        assert len(curves) == n, make.__name__
        colours = [c for c, _ in curves]
        assert len(set(colours)) == n, (make.__name__, colours)
        styles = [repr(s) for _, s in curves]
        assert len(set(styles)) == n, (make.__name__, styles)
    # the two curves the DCR plot exists to compare, in particular
    ax = _capture(monkeypatch, _plots.distance_plot, _result_with_arrays(dcr))
    by_label = dict(zip(ax.get_legend_handles_labels()[1], _curves(ax), strict=True))
    synthetic = next(v for k, v in by_label.items() if k.startswith("synthetic → real"))
    holdout = next(v for k, v in by_label.items() if k.startswith("holdout → real"))
    assert synthetic[0] != holdout[0]
    assert synthetic[1] != holdout[1]


def test_plot_styles_are_distinct_and_colour_blind_safe() -> None:
    okabe_ito = {
        "#D55E00",
        "#0072B2",
        "#009E73",
        "#CC79A7",
        "#E69F00",
        "#56B4E9",
        "#000000",
    }
    assert set(_plots.PALETTE) <= okabe_ito
    roles = ["synthetic_to_real", "synthetic_to_real", "a", "b", "holdout_to_real", "c"]
    chosen = _plots.styles(roles)
    assert len({c for c, _ in chosen}) == len(roles)
    assert len({repr(s) for _, s in chosen}) == len(roles)
    # a role keeps its own colour when it is free
    assert _plots.styles(["holdout_to_real"])[0][0] == "#0072B2"


# -- 1. badges readable: WCAG AA contrast (4.5:1) ------------------------------------


def _luminance(colour: str) -> float:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    channels = [int(colour[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels
    ]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _rules(css: str) -> dict[str, dict[str, str]]:
    rules: dict[str, dict[str, str]] = {}
    for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = {
            k.strip(): v.strip()
            for k, v in (d.split(":", 1) for d in body.split(";") if ":" in d)
        }
        for name in selector.split(","):
            rules.setdefault(" ".join(name.split()), {}).update(declarations)
    return rules


def test_every_badge_meets_wcag_aa_contrast() -> None:
    assert (
        contrast("#ffffff", "#e0e0e0") < 4.5
    )  # the old INFO badge: the check can fail
    css = CSS.read_text(encoding="utf-8")
    rules = _rules(css.split("@media print")[0])
    variables = {k: v for k, v in rules[".sr"].items() if k.startswith("--")}

    def resolve(value: str) -> str:
        match = re.fullmatch(r"var\((--[\w-]+)\)", value)
        return variables[match.group(1)] if match else value

    base = rules[".sr .badge"]
    levels = ["pass", "review", "fail", "info", "skipped"]
    for level in levels:
        own = rules[f".sr .badge.{level}"]
        text = resolve(own.get("color", base["color"]))
        background = resolve(own.get("background", base.get("background", "#fff")))
        ratio = contrast(text, background)
        assert ratio >= 4.5, f"{level}: {text} on {background} is {ratio:.2f}:1"
    html = render_html(_ctgan_style_report())
    used = set(re.findall(r'<span class="badge ([a-z]+)">', html))
    assert used <= set(levels)


# -- 1. numbers readable and the same everywhere --------------------------------------


def test_number_formats() -> None:
    assert format_number(3.08e-06) == "3.08 × 10⁻⁶"
    assert format_number(0.14183) == "0.1418"
    assert format_number(2.5e12) == "2.5 × 10¹²"
    assert format_number(0.0001) == "0.0001"
    assert format_p_value(0.0) == "< 0.0001"
    assert format_p_value(1.2e-7) == "< 0.0001"
    assert format_p_value(0.0123) == "0.012"


def _visible(html: str) -> str:
    """The page without its style sheet and its images."""
    html = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    return re.sub(r'src="data:[^"]*"', "", html)


def test_tiny_scores_read_as_powers_of_ten_everywhere() -> None:
    html = render_html(_ctgan_style_report())
    page = _visible(html)
    assert not re.search(r"\d\.?\d*e[-+]\d", page), re.search(
        r".{40}\d\.?\d*e[-+]\d.{10}", page
    )
    summary = page[
        page.index('<section id="verdict">') : page.index('<section id="metrics">')
    ]
    assert "3.08 × 10⁻⁶" in summary
    section = page[page.index('<article class="metric" id="m3">') :]
    assert "score 3.08 × 10⁻⁶" in section


# -- 1. "All parameters" in natural order ---------------------------------------------


def test_all_parameters_are_in_natural_order() -> None:
    results = [
        MetricResult(f"metric_{i}", 0.5, {}, params={"k10": 1, "k2": 2, "k1": 3})
        for i in range(12)
    ]
    html = render_html(EvaluationReport("0.1.0", 0, {}, tuple(results)))
    block = html[html.index("<h4>All parameters</h4>") :]
    block = block[: block.index("</pre>")]
    keys = re.findall(r"&#34;(\d+)\. metric_\d+&#34;", block)
    assert keys == [str(i) for i in range(1, 13)]
    first = block[block.index("1. metric_0") : block.index("2. metric_1")]
    assert first.index("k1&") < first.index("k2&") < first.index("k10&")
    assert sorted(["k10", "k2", "k1"], key=natural_key) == ["k1", "k2", "k10"]


# -- 1. wide tables stay in their box: the PETsARD view --------------------------------


def anonymeter_result(metric: str, risk: float) -> MetricResult:
    """Shaped like the Anonymeter family's results, with PETsARD's flat view."""
    petsard = {
        "risk": risk, "risk_CI_btm": risk - 0.04, "risk_CI_top": risk + 0.04, "attack_rate": 0.2,
        "attack_rate_err": 0.02, "baseline_rate": 0.01, "baseline_rate_err": 0.005, "control_rate": 0.09,
        "control_rate_err": 0.015,
    }  # fmt: skip
    breakdown = {
        "attack_rate": {"value": 0.2, "error": 0.02},
        "baseline_rate": {"value": 0.01, "error": 0.005},
        "control_rate": {"value": 0.09, "error": 0.015},
        "petsard": petsard,
    }
    return MetricResult(
        metric, risk, breakdown, (risk - 0.04, risk + 0.04), higher_is_safer=False
    )


def petsard_report() -> EvaluationReport:
    """Four Anonymeter-style results as PETsARD's evaluators name them."""
    return _judged(
        anonymeter_result("singling_out", 0.1),
        anonymeter_result("singling_out", 0.2),
        anonymeter_result("linkability", 0.05),
        anonymeter_result("inference", 0.3),
    )


PETSARD_LABELS = [
    "singling_out_risk_with_a_long_evaluator_name",
    "singling_out_univariate_risk",
    "linkability_risk",
    "inference_risk",
]


def test_petsard_view_is_one_column_per_evaluator_and_tables_stay_in_their_box() -> (
    None
):
    html = render_html(petsard_report(), labels=PETSARD_LABELS)
    block = html[html.index("<h4>PETsARD view</h4>") :]
    block = block[: block.index("</table>")]
    rows = re.findall(r"<tr>(.*?)</tr>", block, flags=re.S)
    assert len(rows) == 1 + 9  # a header, then risk … control_rate_err
    assert all(row.count("<td") == 1 + 4 for row in rows[1:])
    assert [re.search(r'<td class="mono">(\w+)</td>', r).group(1) for r in rows[1:]][
        :3
    ] == [  # type: ignore[union-attr]
        "risk",
        "risk_CI_btm",
        "risk_CI_top",
    ]
    assert "singling_out_risk_with_a_long_evaluator_name" in rows[0]
    # every table sits in a box that scrolls on screen and wraps on paper
    tables = html.count("<table")
    assert tables == html.count('<div class="wrap"><table')
    css = _rules(CSS.read_text(encoding="utf-8").split("@media print")[0])
    assert css[".sr .wrap"]["overflow-x"] == "auto"
    print_css = _rules(CSS.read_text(encoding="utf-8").split("@media print")[1])
    assert print_css[".sr .wrap"]["overflow"] == "visible"
    assert print_css[".sr th"]["overflow-wrap"] == "anywhere"


# -- 1. p (Holm) only where Holm applies ------------------------------------------------


def _verdict_rows(html: str) -> dict[str, list[str]]:
    section = html[
        html.index('<section id="verdict">') : html.index('<section id="metrics">')
    ]
    rows = {}
    for row in re.findall(
        r"<tr><td><a [^>]*>([^<]+)</a></td>(.*?)</tr>", section, flags=re.S
    ):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row[1], flags=re.S)
        rows[row[0]] = [re.sub(r"<[^>]+>", "", c).strip() for c in cells]
    return rows


def test_holm_p_is_shown_for_gating_rows_only() -> None:
    report = _ctgan_style_report()
    html = render_html(report)
    rows = _verdict_rows(html)
    header = re.search(r"<th[^>]*>p \(Holm\)</th>", html)
    assert header is not None
    p_column = 3  # score, excess, tolerance, p
    # informational rows with their own (unadjusted) p-value: a dash
    assert report.verdict is not None
    assert report.verdict["dcr_baseline_protection"].p_value == 1.0
    assert report.verdict["nndr"].p_value == 1e-12
    assert rows["dcr_baseline_protection"][p_column] == "—"
    assert rows["nndr"][p_column] == "—"
    assert rows["distribution_validation"][p_column] == "—"
    # the gating row: Holm-adjusted
    assert report.verdict["dcr_share"].p_adjusted is not None
    assert rows["dcr_share"][p_column] == format_p_value(
        report.verdict["dcr_share"].p_adjusted
    )
    # the informational p-value is in the metric's own section, labelled unadjusted
    nndr = html[html.index('<article class="metric" id="m3">') :]
    nndr = nndr[: nndr.index("</article>")]
    assert "one-sided p &lt; 0.0001 (unadjusted" in nndr


# -- 2. caveats next to the verdict --------------------------------------------------------


def test_ctgan_fidelity_warning_appears_next_to_the_verdict() -> None:
    report = _ctgan_style_report()
    caveats = report.verdict_caveats()
    assert caveats == [
        "inputs: `id` looks like an identifier and was left out.",
        "dcr_share: the holdout (9758 rows) is much smaller than the other table.",
        "distribution_validation: 15 of 15 synthetic column(s) differ from the real data (age, capital_gain, "
        "capital_loss and 12 more); membership results partly reflect fidelity, not only memorisation.",
    ]
    # an informational metric's own warning stays in its section
    assert not any("informational metric's own caveat" in c for c in caveats)
    assert all(len(c) <= 200 for c in report.verdict_caveats())
    assert all(len(c) <= 80 for c in report.verdict_caveats(width=80))
    assert report.verdict is not None
    assert report.verdict.caveats == tuple(report.verdict_caveats(width=None))
    # the HTML verdict box
    html = render_html(report)
    box = html[
        html.index('<div class="banner') : html.index('<details id="how-to-read"')
    ]
    assert 'id="caveats"' in box
    assert "membership results partly reflect fidelity" in box
    assert '<a href="#m2">distribution_validation</a>' in box
    # print(report) and print(report.verdict)
    for text in (str(report), str(report.verdict)):
        head = text[: text.index("caveats")]
        assert "verdict: PASS" in head
        assert (
            "membership results partly reflect fidelity"
            in text[text.index("caveats") :]
        )
    # the JSON carries them and reads them back
    again = EvaluationReport.from_json(report.to_json())
    assert again.verdict is not None
    assert again.verdict.caveats == report.verdict.caveats


def test_fidelity_warning_of_a_real_evaluation_reaches_the_verdict() -> None:
    rng = np.random.default_rng(1)
    real = pd.DataFrame({"x": rng.normal(size=300), "c": rng.choice(list("abc"), 300)})
    holdout = pd.DataFrame(
        {"x": rng.normal(size=300), "c": rng.choice(list("abc"), 300)}
    )
    synthetic = pd.DataFrame({"x": rng.normal(5.0, 1.0, size=300), "c": ["a"] * 300})
    report = evaluate(
        real,
        synthetic,
        holdout,
        metrics=["distribution_validation", "dcr_share"],
        seed=0,
    )
    caveats = report.verdict_caveats()
    assert any(
        c.startswith("distribution_validation: 2 of 2 synthetic column(s) differ")
        for c in caveats
    ), caveats
    assert "distribution_validation: 2 of 2" in str(report)
    assert "distribution_validation: 2 of 2" in str(report.verdict)


def test_a_report_without_verdict_or_warnings_has_no_caveats() -> None:
    plain = EvaluationReport("0.1.0", 0, {}, (MetricResult("m", 0.5, {}),))
    assert plain.verdict_caveats() == []
    html = render_html(plain)
    assert 'id="caveats"' not in html
    assert "no verdict" in str(plain)
