# SPDX-License-Identifier: BSD-3-Clause
"""The HTML page of a generator audit: from its JSON form, escaped, self-contained."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.audit import audit
from synthrisk.exceptions import ParameterError
from synthrisk.report import render_audit_html


@pytest.fixture(scope="module")
def result_dict() -> dict:
    g = np.random.default_rng(1)
    real = pd.DataFrame({"x": g.normal(size=40), "c": g.choice(list("ab"), 40)})
    holdout = pd.DataFrame({"x": g.normal(size=100), "c": g.choice(list("ab"), 100)})

    def copier(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        return train.sample(n, replace=True, random_state=seed)

    result = audit(
        copier, real, holdout, n_targets=3, n_runs=30, attacks=["dcr"], train_size=20
    )
    data = result.to_dict()
    data["generator"] = "<script>alert(1)</script>"
    # rendering never computes: one target's bound as a longer audit would give it,
    # so that the page draws its chart of the targets' bounds
    data["targets"][0]["epsilon_lower"] = 0.7
    return data


def test_the_page_states_the_bound_and_each_target_by_row(result_dict: dict) -> None:
    page = render_audit_html(result_dict)
    assert 'id="verdict"' in page
    assert "does not gate" in page  # no max_epsilon given
    for target in result_dict["targets"]:
        # row numbers never wrap ("230 / 4" once broke over two lines)
        assert f'<td class="mono nowrap">{target["row"]}</td>' in page
    assert "<img alt=" in page
    assert "data:image/svg+xml;base64," in page


def test_the_page_draws_the_roc_curves(result_dict: dict) -> None:
    page = render_audit_html(result_dict)
    assert (
        page.count("data:image/svg+xml;base64,") == 4
    )  # 2 pooled ROC, targets' ROC, bounds
    assert 'alt="ROC curves of the attacks, all targets pooled: dcr AUC' in page
    assert "(log-log axes)" in page
    rows = ", ".join(
        f"row {t['row']} ({t['best_attack'] or 'dcr'})" for t in result_dict["targets"]
    )
    assert f'alt="ROC curves of each target&#39;s best attack: {rows}"' in page


def test_a_saved_audit_without_roc_curves_still_renders(result_dict: dict) -> None:
    import copy

    old = copy.deepcopy(result_dict)
    for bound in old["overall"].values():
        bound.pop("roc")
    for target in old["targets"]:
        for bound in target["attacks"].values():
            bound.pop("roc")
    page = render_audit_html(old)
    assert page.count("data:image/svg+xml;base64,") == 1  # the bounds' bar chart only
    assert "ROC" not in page


def test_the_page_escapes_what_it_shows(result_dict: dict) -> None:
    page = render_audit_html(result_dict)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_verdict_makes_the_page_gate(result_dict: dict) -> None:
    verdict = {
        "passed": False,
        "epsilon_lower": 2.0,
        "max_epsilon": 1.0,
        "reason": "refuted",
    }
    page = render_audit_html(result_dict, verdict=verdict)
    assert '<span class="badge fail">fail</span>' in page
    assert "refuted" in page


def test_an_evaluation_report_is_not_an_audit() -> None:
    with pytest.raises(ParameterError, match="generator audit's JSON form"):
        render_audit_html({"results": []})


def test_bounds_of_zero_are_said_in_words_not_charted(result_dict: dict) -> None:
    pytest.importorskip("matplotlib")
    data = {
        **result_dict,
        "targets": [{**t, "epsilon_lower": 0.0} for t in result_dict["targets"]],
    }
    page = render_audit_html(data)
    assert "No target&#39;s ε lower bound is above 0" in page or (
        "No target's ε lower bound is above 0" in page
    )
    assert "any of the 3 targets" in page
    assert "bar chart:" not in page
    # with a positive bound the chart is back and the words are gone
    page = render_audit_html(result_dict)
    assert any(t["epsilon_lower"] > 0 for t in result_dict["targets"])
    assert "bar chart:" in page
    assert "lower bound is above 0" not in page


def test_counts_and_rows_stay_on_one_line(result_dict: dict) -> None:
    page = render_audit_html(result_dict)
    counts = next(iter(result_dict["overall"].values()))
    text = f"{counts['n_members']} / {counts['n_non_members']}"
    assert f'<td class="mono nowrap">{text}</td>' in page


def test_the_page_shows_the_canaries_beside_the_real_people() -> None:
    g = np.random.default_rng(2)
    real = pd.DataFrame({"x": g.normal(size=40), "c": g.choice(list("abc"), 40)})
    holdout = pd.DataFrame({"x": g.normal(size=100), "c": g.choice(list("abc"), 100)})

    def copier(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        return train.sample(n, replace=True, random_state=seed)

    result = audit(
        copier,
        real,
        holdout,
        n_targets=2,
        n_canaries=2,
        n_runs=30,
        attacks=["dcr"],
        train_size=20,
    )
    page = render_audit_html(result.to_dict(), verdict=result.verdict(1.0).to_dict())
    assert '<section id="canaries">' in page
    assert '<a href="#canaries">Canaries</a>' in page
    assert "Side by side:</strong> real people ε ≥" in page
    assert "worst-case canaries (2 crafted records)" in page
    # the canaries are numbered in the targets' table, never shown by value
    assert '<td class="mono nowrap">canary 0</td><td>canary</td>' in page
    assert '<td class="mono nowrap">canary 1</td><td>canary</td>' in page
    assert "Attacks, all real targets pooled" in page
    # without canaries the page has no canary section
    plain = audit(
        copier, real, holdout, n_targets=2, n_runs=30, attacks=["dcr"], train_size=20
    )
    assert 'id="canaries"' not in render_audit_html(plain.to_dict())
