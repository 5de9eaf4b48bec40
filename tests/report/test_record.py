# SPDX-License-Identifier: BSD-3-Clause
"""The anonymisation record: sections, precision, classical models, no record values."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk import EvaluationReport, MetricResult, evaluate
from synthrisk.context import ReleaseContext
from synthrisk.evaluate import RECORD_METRICS, record_metrics
from synthrisk.exceptions import MissingDependencyError, ParameterError
from synthrisk.report import accusation_precision, render_record, write_record
from synthrisk.report.record import (
    CRITERIA,
    RECORD_SECTIONS,
    find_chromium,
    precision_interval,
)


def _sections(page: str) -> dict[str, str]:
    out = {}
    for key in RECORD_SECTIONS:
        match = re.search(
            rf'<section id="{key}" class="rec">(.*?)</section>', page, re.S
        )
        assert match is not None, key
        out[key] = match.group(1)
    return out


def _text(page: str) -> str:
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_accusation_precision_matches_the_formula() -> None:
    assert accusation_precision(0.5, 0.3, 0.1) == pytest.approx(0.75)
    assert accusation_precision(0.01, 0.5, 0.01) == pytest.approx(
        0.005 / (0.005 + 0.0099)
    )
    assert accusation_precision(0.1, 0.0, 0.0) is None


def test_precision_interval_takes_the_worst_ends() -> None:
    low, high = precision_interval(0.1, (0.2, 0.4), (0.01, 0.05))
    assert low == pytest.approx(accusation_precision(0.1, 0.2, 0.05))
    assert high == pytest.approx(accusation_precision(0.1, 0.4, 0.01))
    assert low <= accusation_precision(0.1, 0.3, 0.03) <= high
    # no false positive possible: the upper end is 1
    assert precision_interval(0.1, (0.0, 0.2), (0.0, 0.0))[1] == 1.0


def _hand_report(**extra: object) -> EvaluationReport:
    results = (
        MetricResult(
            "identification",
            3.0,
            {
                "identified_training": 30,
                "training_people": 100,
                "identified_holdout": 2,
                "holdout_people": 100,
            },
        ),
        MetricResult(
            "membership_knn_probabilities",
            0.6,
            {
                "roc_auc_score": 0.6,
                "tpr_at_fpr": {"0.01": 0.05},
                "n_members": 100,
                "n_non_members": 100,
            },
        ),
    )
    return EvaluationReport(
        "0.1.0",
        0,
        {
            "real": {"rows": 100, "columns": ["age", "zip"]},
            "synthetic": {"rows": 100, "columns": ["age", "zip"]},
            "holdout": {"rows": 100, "columns": ["age", "zip"]},
        },
        results + tuple(extra.get("results", ())),  # type: ignore[operator]
        schema={
            "columns": {"age": {"kind": "numerical"}, "zip": {"kind": "categorical"}}
        },
        context=extra.get("context"),  # type: ignore[arg-type]
    )


def test_record_has_every_section_filled_and_states_defaults() -> None:
    page = render_record(_hand_report())
    sections = _sections(page)
    for key, body in sections.items():
        assert len(_text(body).split()) > 10, key
    assert "<script" not in page.lower()
    context = _text(sections["context"])
    assert "public (default" in context
    assert "one year after the assessment" in context
    # π not given: three shares
    precision = _text(sections["precision"])
    assert "π not given: shown at 1 %, 10 %, 50 %" in precision
    assert "identification" in precision
    assert "membership_knn_probabilities" in precision
    # the criteria name every mapped test
    criteria = _text(sections["criteria"])
    for crit in CRITERIA:
        for metric in crit.metrics:
            assert metric in criteria
    assert "reidentification_risk: not run" in _text(sections["classical"])
    signoff = _text(sections["signoff"])
    for word in (
        "Name",
        "Role",
        "Date",
        "release with conditions",
        "do not release",
        "Signature",
    ):
        assert word in signoff


def test_record_escapes_the_context_and_uses_the_stated_share() -> None:
    context = ReleaseContext.from_value(
        {
            "purpose": "<script>alert(1)</script> teaching",
            "recipient": "A & B",
            "population_share": 0.02,
            "assessor": 'Ann "Q" Officer',
            "reassess_by": "2027-06-01",
            "assessed_on": "2026-06-01",
        }
    )
    page = render_record(_hand_report(context=context))
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; teaching" in page
    assert "A &amp; B" in page
    text = _text(_sections(page)["precision"])
    assert "π = 2 %" in text
    # identification: TPR 0.3, FPR 0.02 at π = 0.02
    expected = accusation_precision(0.02, 0.3, 0.02)
    assert f"{100 * expected:.3g} %" in text
    assert "2027-06-01" in _text(_sections(page)["context"])


def test_precision_from_the_population_size() -> None:
    context = ReleaseContext.from_value({"population_size": 10_000})
    text = _text(_sections(render_record(_hand_report(context=context)))["precision"])
    assert "π = 1 %" in text
    assert "population size" in text


def test_classical_models_are_shown_when_present() -> None:
    risk = MetricResult(
        "reidentification_risk",
        0.2,
        {
            a: {
                "highest": 1.0,
                "average": avg,
                "records_at_risk": 0.3,
                "real_anchored": True,
            }
            for a, avg in (
                ("prosecutor", 0.2),
                ("journalist", 0.04),
                ("marketer", 0.01),
            )
        },
    )
    sdc = MetricResult(
        "sdc_risk",
        0.1,
        {
            "individual_risk": {"mean": 0.01, "max": 0.5},
            "suda": {"mean_dis_score": 0.002},
        },
    )
    report = _hand_report(
        results=(risk, sdc),
        context=ReleaseContext.from_value({"release_model": "restricted"}),
    )
    text = _text(_sections(render_record(report))["classical"])
    assert "prosecutor" in text
    assert "above 0.09" in text
    assert "within 0.09" in text
    assert "individual_risk.mean" in text
    assert "suda.mean_dis_score" in text
    assert "not run" not in text


def test_a_classical_model_this_synthrisk_lacks_reads_not_run() -> None:
    text = _text(
        _sections(render_record(_hand_report(), registered=["identification"]))[
            "classical"
        ]
    )
    assert "this synthrisk has no metric `sdc_risk`" in text


def test_record_metrics_adds_only_registered_ids() -> None:
    from synthrisk.metrics import METRICS

    added = [m.id for m in record_metrics([])]
    assert added == [m for m in RECORD_METRICS if m in METRICS]


def test_record_path_must_be_html_or_pdf(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"must end in \.html or \.pdf"):
        write_record(_hand_report(), tmp_path / "record.txt")


def test_pdf_without_chromium_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNTHRISK_CHROMIUM", str(tmp_path / "no-such-browser"))
    assert find_chromium() is None
    with pytest.raises(MissingDependencyError, match="apt-get install chromium"):
        write_record(_hand_report(), tmp_path / "record.pdf")
    assert not (tmp_path / "record.pdf").exists()


def _small_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    rng = np.random.default_rng(7)
    n = 120
    names = [f"Zq{w}vath" for w in rng.choice(list("abcdefghijklmnop"), size=n)]
    codes = [f"QX-{c}" for c in rng.integers(1000, 9999, size=n)]

    def table(start: int) -> pd.DataFrame:
        idx = range(start, start + n)
        return pd.DataFrame({
            "surname": [f"{names[i % n]}{i}" for i in idx],
            "code": [codes[i % n] + f"/{i}" for i in idx],
            "age": rng.integers(18, 90, size=n),
            "weight": np.round(rng.normal(70, 12, size=n), 3) + 0.123,
        })  # fmt: skip

    real, holdout = table(0), table(n)
    synthetic = real.copy()  # a leaky generator: verbatim copies
    values = sorted(
        {str(v) for col in ("surname", "code", "weight") for v in real[col]}
        | {str(v) for col in ("surname", "code", "weight") for v in holdout[col]}
    )
    return real, synthetic, holdout, values


def _pdf_text(path: Path) -> str | None:
    if shutil.which("pdftotext"):
        done = subprocess.run(
            ["pdftotext", str(path), "-"], capture_output=True, check=True
        )
        return done.stdout.decode("utf-8", "replace")
    try:
        import pypdf
    except ImportError:
        return None
    return "\n".join(p.extract_text() for p in pypdf.PdfReader(str(path)).pages)


def test_record_holds_no_record_value(tmp_path: Path) -> None:
    real, synthetic, holdout, values = _small_tables()
    report = evaluate(
        real, synthetic, holdout,
        metrics=["identification", "rare_value_replay", "singling_out_univariate"],
        context={"attacker_knows": ["age", "surname"], "population_share": 0.05},
        record=True,
    )  # fmt: skip
    assert report.verdict is not None
    assert report.verdict.findings
    assert set(report.inputs["record_metrics"]["unavailable"]) <= set(RECORD_METRICS)
    page = report.write_record(tmp_path / "record.html").read_text()
    findings = _text(_sections(page)["findings"])
    assert "Copied people" in findings
    searched = {"html": _text(page) + page}
    if find_chromium() is not None:
        pdf = report.write_record(tmp_path / "record.pdf")
        assert pdf.read_bytes().startswith(b"%PDF")
        text = _pdf_text(pdf)
        if text is not None:  # pdftotext or pypdf; else the HTML only is searched
            assert "Anonymisation record" in text
            searched["pdf"] = text
    for where, text in searched.items():
        found = [v for v in values if v in text]
        assert found == [], (where, found[:5])


def test_report_context_round_trips() -> None:
    context = ReleaseContext.from_value(
        {"purpose": "x", "attacker_knows": "age,zip", "assessed_on": "2026-01-02"}
    )
    report = _hand_report(context=context)
    again = EvaluationReport.from_json(report.to_json())
    assert again.context == context
    assert again.to_dict()["context"]["defaults"] == list(context.defaults)
    assert "context" not in _hand_report().to_dict()


def test_evaluate_checks_the_attacker_columns() -> None:
    real, synthetic, holdout, _ = _small_tables()
    with pytest.raises(ParameterError, match="which the real table lacks"):
        evaluate(
            real,
            synthetic,
            holdout,
            metrics=["dcr_share"],
            context={"attacker_knows": ["postcode"]},
        )
