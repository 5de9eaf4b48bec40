# SPDX-License-Identifier: BSD-3-Clause
"""The shadow runs: seeded draws, parallel workers, retries, budget and progress."""

from __future__ import annotations

import numpy as np
import pandas as pd
from tests.audit._generators import Copier, Flaky, population

from synthrisk.audit.game import draw_run, play, training_frame

POOL = population(100, 1)
TARGETS = population(6, 2)


def test_draw_run_depends_on_seed_and_run_only() -> None:
    a = draw_run(3, 17, n_pool=100, train_size=30, n_targets=6)
    b = draw_run(3, 17, n_pool=100, train_size=30, n_targets=6)
    c = draw_run(3, 18, n_pool=100, train_size=30, n_targets=6)
    d = draw_run(4, 17, n_pool=100, train_size=30, n_targets=6)
    np.testing.assert_array_equal(a.pool_rows, b.pool_rows)
    np.testing.assert_array_equal(a.included, b.included)
    np.testing.assert_array_equal(a.order, b.order)
    assert a.seed == b.seed
    assert a.seed != c.seed
    assert a.seed != d.seed
    assert len(np.unique(a.pool_rows)) == 30


def test_each_target_is_included_with_probability_one_half() -> None:
    included = np.array(
        [
            draw_run(0, r, n_pool=50, train_size=10, n_targets=20).included
            for r in range(400)
        ]
    )
    assert included.shape == (400, 20)
    # 8000 fair coins: the share is within 4 standard errors of 1/2
    assert abs(included.mean() - 0.5) < 4 * 0.5 / np.sqrt(8000)
    # independent targets: the correlation between two targets' coins is small
    assert abs(np.corrcoef(included[:, 0], included[:, 1])[0, 1]) < 0.2


def test_training_frame_holds_the_pool_draw_and_the_included_targets() -> None:
    draw = draw_run(0, 5, n_pool=100, train_size=30, n_targets=6)
    frame = training_frame(draw, POOL, TARGETS)
    assert len(frame) == 30 + int(draw.included.sum())
    assert set(frame["x"]) == set(POOL["x"].iloc[draw.pool_rows]) | set(
        TARGETS["x"][draw.included]
    )


def _outputs(outcomes) -> list[pd.DataFrame]:
    return [o.synthetic for o in outcomes]


def test_parallel_play_equals_serial_play_bit_for_bit() -> None:
    kw = {"n_runs": 6, "train_size": 30, "n_synthetic": 20, "seed": 9}
    serial = list(play(Copier(0.5), POOL, TARGETS, **kw))
    parallel = list(play(Copier(0.5), POOL, TARGETS, n_jobs=2, **kw))
    assert [o.draw.run for o in parallel] == list(range(6))
    for a, b in zip(serial, parallel, strict=True):
        pd.testing.assert_frame_equal(a.synthetic, b.synthetic)


def test_a_generator_that_cannot_be_pickled_runs_in_threads() -> None:
    def local(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        return train.sample(n, replace=True, random_state=seed)

    kw = {"n_runs": 4, "train_size": 30, "n_synthetic": 5, "seed": 1}
    serial = list(play(local, POOL, TARGETS, **kw))
    threads = list(play(local, POOL, TARGETS, n_jobs=2, **kw))
    for a, b in zip(serial, threads, strict=True):
        pd.testing.assert_frame_equal(a.synthetic, b.synthetic)


def test_failures_are_retried_once_then_reported() -> None:
    kw = {"n_runs": 8, "train_size": 30, "n_synthetic": 5, "seed": 2}
    once = list(play(Flaky(once=True), POOL, TARGETS, **kw))
    assert all(o.synthetic is not None for o in once)
    odd = [o for o in once if o.draw.seed % 2]
    assert odd
    assert all(o.attempts == 2 and "crash on seed" in str(o.error) for o in odd)
    # the retry gets the run's own new seed, drawn from (seed, run) too
    flaky = Flaky(once=True)
    again = list(play(flaky, POOL, TARGETS, **kw))
    tried = sorted(flaky.seeds.values())
    assert (
        sorted(
            [o.draw.seed, o.draw.retry_seed] if o.draw.seed % 2 else [o.draw.seed]
            for o in again
        )
        == tried
    )
    assert all(o.draw.retry_seed != o.draw.seed for o in again)
    always = list(play(Flaky(once=False), POOL, TARGETS, **kw))
    failed = [o for o in always if o.synthetic is None]
    assert len(failed) == len(odd)
    assert all(o.attempts == 2 for o in failed)


def test_a_generator_returning_no_table_fails_its_run() -> None:
    def empty(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
        return train.iloc[:0]

    def not_a_frame(train: pd.DataFrame, n: int, seed: int) -> object:
        return [1, 2]

    kw = {"n_runs": 4, "train_size": 30, "n_synthetic": 5, "seed": 2}
    (first, *_) = list(play(empty, POOL, TARGETS, **kw))
    assert first.synthetic is None
    assert first.error == "the generator returned an empty table."
    (first, *_) = list(play(not_a_frame, POOL, TARGETS, **kw))  # type: ignore[arg-type]
    assert "returned list, not a pandas DataFrame" in str(first.error)


def test_budget_and_progress() -> None:
    seen: list[tuple[int, int]] = []
    kw = {"n_runs": 5, "train_size": 30, "n_synthetic": 5, "seed": 2}
    out = list(
        play(
            Copier(0.5), POOL, TARGETS, progress=lambda d, t: seen.append((d, t)), **kw
        )
    )
    assert len(out) == 5
    assert seen == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    assert list(play(Copier(0.5), POOL, TARGETS, max_seconds=1e-9, **kw)) == []
