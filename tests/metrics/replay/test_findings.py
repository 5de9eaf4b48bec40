"""Replayed people as verdict findings: the chance model of values one person holds, the
levels under both policies, the notes on excluded columns, the self-test's identifier
scenario and the HTML section of examined columns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).parent))

from _fixtures import METADATA, tables

import synthrisk as sr
from synthrisk.metrics.replay._common import (
    is_row_counter,
    key_holders,
    singleton_chance,
)
from synthrisk.metrics.replay.identifier import identifier_columns
from synthrisk.report.html import render_html
from synthrisk.results import EvaluationReport, Finding
from synthrisk.schema.tables import prepare_tables

pytest.importorskip("phonenumbers")

ONLY_EMAIL = {"columns": {"age": {"kind": "numerical"}, "email": {"kind": "pii"}}}


def _emails(n_copied: int, seed: int = 0) -> tuple[pd.DataFrame, ...]:
    train, hold, syn = tables(1000, seed)
    train, hold, syn = (t[["age", "email"]].copy() for t in (train, hold, syn))
    syn.loc[: n_copied - 1, "email"] = train["email"].to_numpy()[:n_copied]
    return train, hold, syn


def test_singleton_chance_by_hand() -> None:
    # keys: 4 singletons (3 training, 1 holdout), 2 doubletons, one key of 4 holders
    holders = np.array([1, 1, 1, 1, 2, 2, 4])
    training = np.array([True, True, True, False, True, False, True])
    appears = np.array([True, True, False, False, True, True, True])
    out = singleton_chance(holders, training, appears, n_synthetic=5, tests=2)
    n = 4 + 4 + 4
    rate = 1 - np.exp(-5 * 2 * 2 / (n * 4))
    assert out["training_singletons"] == 3
    assert out["holdout_singletons"] == 1
    assert out["replayed"] == 2
    assert out["holdout_replayed"] == 0
    assert out["rate_model"] == pytest.approx(rate)
    assert out["rate"] == pytest.approx(rate)  # the holdout's own rate is 0
    assert out["expected"] == pytest.approx(3 * rate)
    assert out["p_value"] == pytest.approx(min(1.0, 2 * stats.binom.sf(1, 3, rate)))
    # the holdout's rate wins when it is clearly larger: its lower 95 % bound
    many = np.ones(40, dtype=np.int64)
    train40 = np.arange(40) < 20
    replayed = np.r_[np.zeros(20, bool), np.ones(10, bool), np.zeros(10, bool)]
    out = singleton_chance(many, train40, replayed, 5)
    assert out["rate_holdout"] == 0.5
    assert out["rate_holdout_bound"] == pytest.approx(stats.beta.ppf(0.05, 10, 11))
    assert out["rate"] == pytest.approx(out["rate_holdout_bound"])


def test_key_holders_counts_people_not_rows() -> None:
    keys = np.array(["a", "a", "b", "c", "c"], dtype=object)
    person = np.array([0, 0, 1, 2, 3])
    uniques, holders, owner = key_holders(keys, np.ones(5, bool), person)
    assert list(uniques) == ["a", "b", "c"]
    assert holders.tolist() == [1, 1, 2]
    assert owner.tolist() == [0, 1, 2]


def test_string_counters_are_not_identifiers() -> None:
    assert is_row_counter(pd.Series([f"u{i}" for i in range(50)]), 50)
    assert is_row_counter(pd.Series([f"P-{i:06d}" for i in range(50)]), 50)
    assert not is_row_counter(pd.Series([f"u{i}" for i in range(50)] + ["v1"]), 51)
    # e-mail addresses numbered one by one are e-mail addresses
    assert not is_row_counter(
        pd.Series([f"user{i}@example.org" for i in range(50)]), 50
    )
    # postcodes repeat: never a counter, whatever their range
    assert not is_row_counter(pd.Series([f"{i % 20:05d}" for i in range(200)]), 200)
    train, hold, syn = _emails(0)
    for t in (train, hold, syn):
        t["uid"] = [f"u{i}" for i in range(len(t))]
    md = {"columns": {**ONLY_EMAIL["columns"], "uid": {"kind": "id"}}}
    tabs = prepare_tables(train, syn, hold, metadata=md)
    assert identifier_columns(tabs, person=None) == ["email"]


def test_a_few_copied_emails_read_review_through_the_chance_model() -> None:
    train, hold, syn = _emails(4)
    report = sr.evaluate(
        train, syn, holdout=hold, metadata=ONLY_EMAIL, metrics=["identifier_replay"]
    )
    b = report.results[0].breakdown
    assert b["replayed_training"] == 4
    assert b["unique_replayed_training"] == 4
    model = b["chance_model"]
    assert model["column"] == "email"
    assert model["replayed"] == 4
    # no e-mail is held by two people: Good–Turing with one doubleton assumed
    rate = -np.expm1(-1000 * 2 * 1 / (2000 * 2000))
    assert model["expected"] == pytest.approx(1000 * rate)
    assert model["p_value"] == pytest.approx(stats.binom.sf(3, 1000, rate))
    assert model["significant"]
    # 4 of 1000 against 0 of 1000 is not significant for the holdout test (p = 0.06) ...
    assert report.verdict.metrics[0].level == "pass"
    # ... but no new person's e-mail reaches the table: the finding asks for review
    (finding,) = [
        f for f in report.verdict.findings if f.kind == "replayed_identifiers"
    ]
    assert finding.level == "review"
    assert report.verdict.overall == "review"
    assert finding.count == 4
    assert [p["real_rows"] for p in finding.people] == [[0], [1], [2], [3]]
    assert [p["synthetic_rows"] for p in finding.people] == [[0], [1], [2], [3]]
    assert finding.people[0]["how"] == "email, exact"
    assert "identifiers replayed" in report.verdict.reason
    again = Finding.from_dict(json.loads(json.dumps(finding.to_dict())))
    assert again == finding


def test_levels_under_both_policies() -> None:
    train, hold, syn = _emails(40)
    report = sr.evaluate(
        train, syn, holdout=hold, metadata=ONLY_EMAIL, metrics=["identifier_replay"]
    )
    (finding,) = report.verdict.findings
    assert finding.level == "fail"
    assert "significantly more" in finding.summary
    train, hold, syn = _emails(1)
    strict = sr.evaluate(
        train,
        syn,
        holdout=hold,
        metadata=ONLY_EMAIL,
        metrics=["identifier_replay"],
        policy="strict",
    )
    (finding,) = strict.verdict.findings
    assert finding.level == "fail"
    assert strict.verdict.overall == "fail"
    assert "strict policy tolerates no real person's own identifier" in finding.summary


def test_new_people_pass_and_show_no_rows() -> None:
    train, hold, syn = _emails(0)
    report = sr.evaluate(
        train, syn, holdout=hold, metadata=ONLY_EMAIL, metrics=["identifier_replay"]
    )
    (finding,) = report.verdict.findings
    assert finding.level == "pass"
    assert finding.people == ()
    assert report.verdict.overall == "pass"


def test_excluded_columns_say_what_checked_them() -> None:
    train, hold, syn = tables(300, 1)
    report = sr.evaluate(
        train, syn, holdout=hold, metrics=["identifier_replay", "text_replay"]
    )
    notes = "\n".join(report.warnings)
    assert "column 'email'" in notes
    assert "checked by identifier_replay" in notes
    assert "column 'note'" in notes
    assert "checked by text_replay" in notes
    assert "excluded from every metric" not in notes
    report = sr.evaluate(train, syn, holdout=hold, metrics=["dcr_share"])
    notes = "\n".join(report.warnings)
    assert (
        "left out of every metric of this run; text_replay checks such columns" in notes
    )


def test_self_test_plants_identifiers_and_text() -> None:
    train, hold, syn = tables(1000, 0)
    report = sr.evaluate(
        train,
        syn,
        holdout=hold,
        metadata=METADATA,
        metrics=["identifier_replay", "text_replay"],
        self_test=True,
    )
    scenarios = [s for s in report.self_test.scenarios if s.kind == "identifiers"]
    assert [s.planted for s in scenarios] == [1, 5, 10]
    assert scenarios[-1].caught
    assert "identifier_replay" in scenarios[-1].failed
    # one copied person is within chance; five read review (the chance model), ten fail
    assert [s.overall for s in scenarios] == ["pass", "review", "fail"]
    assert (
        "copied identifiers and text of 10 training people" in report.self_test.headline
    )
    again = EvaluationReport.from_json(report.to_json())
    assert [s.label for s in again.self_test.scenarios] == [
        s.label for s in report.self_test.scenarios
    ]


def test_html_lists_examined_columns_without_values() -> None:
    train, hold, syn = tables(400, 2)
    syn.loc[:19, "email"] = train["email"].to_numpy()[:20]
    report = sr.evaluate(
        train,
        syn,
        holdout=hold,
        metadata=METADATA,
        metrics=["identifier_replay", "text_replay"],
    )
    page = render_html(report)
    assert 'id="examined"' in page
    assert "20 of 400" in page  # training people replayed in email
    assert "Identifiers replayed" in page
    assert "email, exact" in page
    for value in train["email"].to_numpy()[:20]:
        assert value not in page


def test_near_copies_take_the_holdout_rate_with_its_uncertainty() -> None:
    # 43 of 39,032 training vs 2 of 4,879 holdout people near-copied (Adult, new people)
    holders = np.ones(39_032 + 4_879, dtype=np.int64)
    training = np.arange(holders.size) < 39_032
    appears = np.zeros(holders.size, dtype=bool)
    appears[:43] = True
    appears[39_032 : 39_032 + 2] = True
    point = singleton_chance(holders, training, appears, 4_879)
    bound = singleton_chance(holders, training, appears, 4_879, approximate=True)
    # with exact keys the holdout's 2 of 4,879 enters as its lower bound
    assert point["rate"] == pytest.approx(stats.beta.ppf(0.05, 2, 4_878))
    assert point["significant"]
    upper = stats.beta.ppf(0.95, 3, 4_877)
    assert bound["rate"] == pytest.approx(upper)
    assert bound["p_value"] == pytest.approx(stats.binom.sf(42, 39_032, upper))
    assert not bound["significant"]
