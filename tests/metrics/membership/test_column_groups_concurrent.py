# SPDX-License-Identifier: BSD-3-Clause
"""Column subsets run two at a time give the numbers, warnings and random state of the
one-after-the-other run."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pandas as pd
import pytest

from synthrisk import DCRShare
from synthrisk.metrics._base import Context, Outcome, make_context
from synthrisk.metrics.membership import _column_groups
from synthrisk.metrics.membership._column_groups import _in_order, _Relay
from synthrisk.schema import prepare_tables
from synthrisk.schema.tables import Tables


def _tables() -> Tables:
    rng = np.random.default_rng(4)
    frames = [
        pd.DataFrame({f"c{i}": rng.normal(size=60) for i in range(3)}) for _ in range(3)
    ]
    return prepare_tables(*frames)


def _job(i: int, tables: Tables, context: Context) -> Outcome:
    """Draws at different moments (or never), sleeps, warns, sometimes twice the same."""
    if i % 3 == 0:
        time.sleep(0.02)  # a slow start: the next job waits for its turn to draw
    values = [] if i % 4 == 1 else context.rng.integers(0, 10**6, 1 + i).tolist()
    context.warn(f"job {i % 3}")
    if i % 2 == 0:
        values += context.rng.choice(50, 5, replace=False).tolist()
        values += [float(context.rng.random())]
    return Outcome(score=float(i), breakdown={"values": values})


def _run(
    monkeypatch: pytest.MonkeyPatch, *, concurrent: bool, n: int
) -> tuple[object, ...]:
    with monkeypatch.context() as patch:
        if not concurrent:
            patch.setattr(_column_groups, "_concurrent_kernels", lambda: False)
        context = make_context(
            "dcr_share", seed=3, working_memory=None, backend=None, progress=False
        )
        jobs = [_tables() for _ in range(n)]
        outcomes = _in_order(lambda t, c: _job(jobs.index(t), t, c), jobs, context)
        after = context.rng.integers(0, 10**9, 4).tolist()
    return [o.breakdown for o in outcomes], list(context.warnings), after


@pytest.mark.parametrize("n", [1, 2, 7])
def test_concurrent_jobs_draw_the_sequential_numbers(
    monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    want = _run(monkeypatch, concurrent=False, n=n)
    got = _run(monkeypatch, concurrent=True, n=n)
    assert got == want


def test_a_failing_job_raises_and_releases_the_others(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context = make_context(
        "dcr_share", seed=3, working_memory=None, backend=None, progress=False
    )
    jobs = [_tables() for _ in range(4)]

    def compute(tables: Tables, job_context: Context) -> Outcome:
        i = jobs.index(tables)
        if i == 1:
            msg = "job 1 failed"
            raise RuntimeError(msg)
        return _job(i, tables, job_context)

    with pytest.raises(RuntimeError, match="job 1 failed"):
        _in_order(compute, jobs, context)


def test_relay_waits_for_its_turn() -> None:
    shared = np.random.default_rng(9)
    turn = threading.Event()
    relay = _Relay(shared, turn)
    assert isinstance(relay, np.random.Generator)
    drawn: list[int] = []
    worker = threading.Thread(
        target=lambda: drawn.append(int(relay.integers(0, 10**9)))
    )
    worker.start()
    time.sleep(0.05)
    assert not drawn  # blocked until the turn comes
    shared.integers(0, 10, 3)  # the previous task draws meanwhile
    turn.set()
    worker.join()
    expected = np.random.default_rng(9)
    expected.integers(0, 10, 3)
    assert drawn == [int(expected.integers(0, 10**9))]
    # the bit generator is the shared stream's too
    assert relay.bit_generator.state == expected.bit_generator.state


def test_worst_share_matches_the_sequential_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(1)
    frames = [
        pd.DataFrame(
            {f"c{i}": np.round(rng.normal(size=300), 1) for i in range(8)}
            | {f"k{i}": rng.choice(list("abc"), 300) for i in range(4)}
        )
        for _ in range(3)
    ]
    frames[2] = frames[2].iloc[:200]  # a smaller holdout: size-corrected repeats
    metric = DCRShare(n_permutations=49, column_subsets="worst")
    concurrent = metric.compute(*frames)
    monkeypatch.setattr(_column_groups, "_concurrent_kernels", lambda: False)
    sequential = metric.compute(*frames)

    def as_json(result: object) -> str:
        data = result.to_dict()  # type: ignore[attr-defined]
        data.pop("seconds", None)
        return json.dumps(data, sort_keys=True, default=str)

    assert as_json(concurrent) == as_json(sequential)
    assert len(concurrent.breakdown["column_subsets"]) == 7
