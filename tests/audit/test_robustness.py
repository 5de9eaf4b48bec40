# SPDX-License-Identifier: BSD-3-Clause
"""Runs that hang or crash (timeouts, retries with a new seed) and the run cache."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from tests.audit._generators import Counting, Sleeper, population

from synthrisk.audit import CommandGenerator, RunCache, audit
from synthrisk.audit.game import draw_run, play
from synthrisk.exceptions import ParameterError

POOL = population(100, 1)
TARGETS = population(6, 2)
KW = {"n_runs": 4, "train_size": 30, "n_synthetic": 5, "seed": 2}


def _seeds(run: int) -> tuple[int, int]:
    draw = draw_run(2, run, n_pool=100, train_size=30, n_targets=6)
    return draw.seed, draw.retry_seed


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_hanging_run_is_stopped_and_retried_with_a_new_seed(n_jobs: int) -> None:
    first, _ = _seeds(1)
    tick = time.perf_counter()
    outcomes = list(
        play(Sleeper({first}), POOL, TARGETS, run_timeout=1.0, n_jobs=n_jobs, **KW)
    )
    assert time.perf_counter() - tick < 30  # not the hour the generator sleeps
    assert [o.draw.run for o in outcomes] == [0, 1, 2, 3]
    assert all(o.synthetic is not None for o in outcomes)
    assert [o.attempts for o in outcomes] == [1, 2, 1, 1]
    assert "ran past `run_timeout`=1 s" in str(outcomes[1].error)


def test_a_run_that_hangs_twice_fails_and_the_audit_goes_on() -> None:
    real, holdout = population(40, 3), population(120, 4)
    draw = draw_run(0, 2, n_pool=120, train_size=30, n_targets=3)
    result = audit(
        Sleeper({draw.seed, draw.retry_seed}),
        real,
        holdout,
        n_targets=3,
        n_runs=6,
        train_size=30,
        attacks=["dcr"],
        run_timeout=1.0,
    )
    assert result.runs["failed"] == 1
    assert result.runs["completed"] == 5
    assert result.failures[0].run == 2
    assert "run_timeout" in result.failures[0].error
    assert result.settings["run_timeout"] == 1.0


def test_a_hanging_command_is_killed() -> None:
    script = "import time; time.sleep(60)"
    command = CommandGenerator(f"{sys.executable} -c '{script}' {{train}} {{out}}")
    real, holdout = population(40, 3), population(120, 4)
    tick = time.perf_counter()
    result = audit(
        command,
        real,
        holdout,
        n_targets=3,
        n_runs=4,
        train_size=30,
        attacks=["dcr"],
        run_timeout=0.5,
    )
    assert time.perf_counter() - tick < 30
    assert result.runs["failed"] == 4
    assert all("ran past `timeout`=0.5 s" in f.error for f in result.failures)


def test_run_timeout_is_checked() -> None:
    with pytest.raises(ParameterError, match="`run_timeout` must be a positive number"):
        audit(Counting(), population(40, 3), population(120, 4), run_timeout=0)


def test_the_cache_reuses_earlier_runs_bit_for_bit(tmp_path: Path) -> None:
    real, holdout = population(40, 3), population(120, 4)
    kw = {"n_targets": 3, "train_size": 30, "attacks": ["dcr", "knn"], "seed": 4}
    first_gen = Counting()
    small = audit(first_gen, real, holdout, n_runs=8, cache=tmp_path, **kw)
    assert first_gen.calls == 8
    assert small.runs["cached"] == 0
    again = Counting()
    larger = audit(again, real, holdout, n_runs=12, cache=tmp_path, **kw)
    assert again.calls == 4  # only the 4 new runs
    assert larger.runs["cached"] == 8
    fresh = audit(Counting(), real, holdout, n_runs=12, **kw)
    assert larger.to_dict()["overall"] == fresh.to_dict()["overall"]
    assert larger.to_dict()["targets"] == fresh.to_dict()["targets"]
    # another seed or other settings miss the cache
    other = Counting()
    audit(other, real, holdout, n_runs=8, cache=tmp_path, **{**kw, "seed": 5})
    assert other.calls == 8


def test_the_cache_key_names_the_generator_settings(tmp_path: Path) -> None:
    train = POOL.iloc[:20]
    a = RunCache(tmp_path, "command: gen --x 1")
    b = RunCache(tmp_path, "command: gen --x 2")
    assert a.key(train, 5, 1) != b.key(train, 5, 1)
    assert a.key(train, 5, 1) != a.key(train, 6, 1)
    assert a.key(train, 5, 1) != a.key(train, 5, 2)
    assert a.key(train, 5, 1) != a.key(POOL.iloc[1:21], 5, 1)
    assert a.key(train, 5, 1) == RunCache(tmp_path, "command: gen --x 1").key(
        train.copy(), 5, 1
    )
    out = pd.DataFrame({"x": [0.1 + 0.2, 1e-300], "c": ["a", "b"]})
    a.put(train, 5, 1, out)
    pd.testing.assert_frame_equal(a.get(train, 5, 1), out)
    assert b.get(train, 5, 1) is None
    # a torn file is a miss, not an error
    path = next(tmp_path.rglob("*.pkl"))
    path.write_bytes(b"garbage")
    assert a.get(train, 5, 1) is None


def test_the_cache_tells_instances_with_other_settings_apart() -> None:
    from tests.audit._generators import Copier

    from synthrisk.audit import PythonGenerator
    from synthrisk.audit.generators import cache_identity

    assert cache_identity(Copier(0.3)) != cache_identity(Copier(1.0))
    assert cache_identity(Copier(0.3)) == cache_identity(Copier(0.3))
    a = PythonGenerator(sys.executable, "m:f", params={"epsilon": 1})
    b = PythonGenerator(sys.executable, "m:f", params={"epsilon": 2})
    assert cache_identity(a) != cache_identity(b)
    # the timeout does not change what the generator makes
    assert cache_identity(a) == cache_identity(
        PythonGenerator(sys.executable, "m:f", params={"epsilon": 1}, timeout=5)
    )


def test_a_file_is_not_a_cache_folder(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("x")
    with pytest.raises(ParameterError, match="is a file"):
        RunCache(file, "g")


def _spawns_a_sleeper(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Starts a grandchild process that would outlive a plain kill, then hangs."""
    import subprocess

    marker = Path(str(train.attrs.get("marker", "")))
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    marker.write_text(str(process.pid))
    time.sleep(60)
    return train


@pytest.mark.skipif(sys.platform != "linux", reason="process groups and /proc")
def test_a_timeout_kills_what_the_generator_started(tmp_path: Path) -> None:
    import os

    from synthrisk.audit.game import call_in_child
    from synthrisk.exceptions import GeneratorError

    marker = tmp_path / "pid"
    train = POOL.iloc[:5].copy()
    train.attrs["marker"] = str(marker)
    with pytest.raises(GeneratorError, match="run_timeout"):
        call_in_child(_spawns_a_sleeper, train, 5, 0, 2.0)
    pid = int(marker.read_text())
    for _ in range(50):  # the grandchild is gone (or a zombie of its own group)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "zombie" in status.read_text():
            break
        time.sleep(0.1)
    else:
        pytest.fail("the generator's own process outlived the timeout")
