# SPDX-License-Identifier: BSD-3-Clause
"""One search of the real and holdout rows against the synthetic table serves the run."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from synthrisk import evaluate
from synthrisk.datasets import load_demo
from synthrisk.metrics.membership import _space
from synthrisk.metrics.membership._space import SHARED_K


def _results(report: Any) -> dict[str, Any]:
    """Each metric's JSON result without its timing."""
    out = {}
    for result in json.loads(report.to_json())["results"]:
        result.pop("seconds", None)
        out[result["metric"]] = result
    return out


@pytest.fixture(scope="module")
def demo() -> Any:
    # without missing values: on tables with some, identification reads a missing cell
    # as the column's typical value (its own geometry), and searches on its own
    # (test_missing_values_give_identification_its_own_search)
    demo = load_demo(n_rows=600, seed=4)
    return dataclasses.replace(
        demo,
        real=demo.real.dropna().reset_index(drop=True),
        holdout=demo.holdout.dropna().reset_index(drop=True),
        synthetic={
            name: frame.dropna().reset_index(drop=True)
            for name, frame in demo.synthetic.items()
        },
    )


def _searches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, int]]:
    """(query rows, reference rows, k) of every in-memory search of the membership family."""
    seen: list[tuple[int, int, int]] = []
    original = _space.nearest_neighbors

    def spy(query: Any, reference: Any, **kwargs: Any) -> Any:
        seen.append((query.n_rows, reference.n_rows, kwargs["k"]))
        return original(query, reference, **kwargs)

    monkeypatch.setattr(_space, "nearest_neighbors", spy)
    return seen


@pytest.mark.parametrize("version", ["leaky", "fresh"])
def test_identification_and_the_knn_attack_share_one_search(
    demo: Any, version: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    synthetic = demo.synthetic[version]
    alone = {}
    for metric in ("identification", "membership_knn_probabilities"):
        report = evaluate(
            demo.real, synthetic, demo.holdout, metadata=demo.metadata, metrics=[metric]
        )
        alone.update(_results(report))
    seen = _searches(monkeypatch)
    together = evaluate(
        demo.real,
        synthetic,
        demo.holdout,
        metadata=demo.metadata,
        metrics=["identification", "membership_knn_probabilities"],
    )
    # the same numbers as each metric alone, bit for bit
    assert _results(together) == alone
    n_real, n_hold, n_syn = len(demo.real), len(demo.holdout), len(synthetic)
    to_synthetic = [s for s in seen if s[1] == n_syn]
    assert to_synthetic == [(n_real + n_hold, n_syn, SHARED_K)]


def test_more_neighbours_than_shared_search_alone(
    demo: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics = {
        "identification": {},
        "membership_knn_probabilities": {"k": SHARED_K + 2},
    }
    alone = {}
    for metric, params in metrics.items():
        report = evaluate(
            demo.real,
            demo.synthetic["leaky"],
            demo.holdout,
            metadata=demo.metadata,
            metrics={metric: params},
        )
        alone.update(_results(report))
    seen = _searches(monkeypatch)
    together = evaluate(
        demo.real,
        demo.synthetic["leaky"],
        demo.holdout,
        metadata=demo.metadata,
        metrics=metrics,
    )
    assert _results(together) == alone
    n_real, n_hold, n_syn = (
        len(demo.real),
        len(demo.holdout),
        len(demo.synthetic["leaky"]),
    )
    to_synthetic = sorted(s for s in seen if s[1] == n_syn)
    # identification's shared search, then the attack's own two
    assert to_synthetic == sorted(
        [
            (n_real + n_hold, n_syn, SHARED_K),
            (n_real, n_syn, SHARED_K + 2),
            (n_hold, n_syn, SHARED_K + 2),
        ]
    )


def test_missing_values_give_identification_its_own_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    demo = load_demo(n_rows=600, seed=4)
    assert demo.real.isna().any(axis=None)
    seen = _searches(monkeypatch)
    evaluate(
        demo.real,
        demo.synthetic["leaky"],
        demo.holdout,
        metadata=demo.metadata,
        metrics=["identification", "membership_knn_probabilities"],
    )
    n_real, n_hold = len(demo.real), len(demo.holdout)
    n_syn = len(demo.synthetic["leaky"])
    # identification's geometry (missing cells read as typical values), then the
    # attack's shared search in the DCR distance
    assert sorted(s for s in seen if s[1] == n_syn) == [
        (n_real + n_hold, n_syn, 1),
        (n_real + n_hold, n_syn, SHARED_K),
    ]
