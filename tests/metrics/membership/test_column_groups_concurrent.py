# SPDX-License-Identifier: BSD-3-Clause
"""Column subsets run two at a time give the numbers and warnings of the one-after-the-other
run; only the largest share is tested and bootstrapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthrisk import DCRShare
from synthrisk.metrics._base import make_context
from synthrisk.metrics.membership._column_groups import worst_share
from synthrisk.schema import prepare_tables
from synthrisk.schema.tables import Tables


def _tables() -> Tables:
    rng = np.random.default_rng(4)
    frames = [
        pd.DataFrame({f"c{i}": rng.normal(size=60) for i in range(3)}) for _ in range(3)
    ]
    return prepare_tables(*frames)


_CONCURRENT_RUN = """
import json, sys
import numba
import numpy as np
import pandas as pd
from synthrisk import DCRShare
from synthrisk.metrics.membership import _column_groups

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
threads = _column_groups.threadsafe_kernels()
concurrent = metric.compute(*frames)
_column_groups.threadsafe_kernels = lambda: False
sequential = metric.compute(*frames)

def as_json(result):
    data = result.to_dict()
    data.pop("seconds", None)
    return json.dumps(data, sort_keys=True, default=str)

print(json.dumps({
    "layer": str(numba.threading_layer()),
    "threads": threads,
    "same": as_json(concurrent) == as_json(sequential),
    "subsets": len(concurrent.breakdown["column_subsets"]),
}))
"""


def test_worst_share_matches_the_sequential_run() -> None:
    """Under OpenMP (thread safe; synthrisk itself prefers a fork-safe layer, so a
    process of its own) the two-at-a-time run gives the sequential run's JSON."""
    env = dict(os.environ, NUMBA_THREADING_LAYER="omp")
    done = subprocess.run(
        [sys.executable, "-c", _CONCURRENT_RUN],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0 and "omp" in done.stderr.lower():
        pytest.skip(f"numba's OpenMP layer is not available here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"layer": "omp", "threads": True, "same": True, "subsets": 7}


def _mixed_frames(n_columns: int) -> list[pd.DataFrame]:
    rng = np.random.default_rng(2)
    return [
        pd.DataFrame(
            {f"c{i}": np.round(rng.normal(size=size), 1) for i in range(n_columns)}
        )
        for size in (120, 120, 80)
    ]


def test_a_failing_group_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    tables = prepare_tables(*_mixed_frames(12))
    context = make_context(
        "dcr_share", seed=3, working_memory=None, backend=None, progress=False
    )
    metric = DCRShare(n_permutations=9)
    calls: list[int] = []

    def shares(sub: Tables, ctx: object) -> object:
        calls.append(len(sub.schema.columns))
        if len(calls) == 3:
            msg = "group 3 failed"
            raise RuntimeError(msg)
        return metric._shares(sub, ctx)  # type: ignore[arg-type]

    with pytest.raises(RuntimeError, match="group 3 failed"):
        worst_share(shares, metric._finish, tables, context)


def test_few_columns_worst_is_the_plain_run() -> None:
    """At most 10 columns there is one group: the plain run, plus the subset keys."""
    frames = _mixed_frames(6)
    plain = DCRShare(n_permutations=19).compute(*frames, seed=5)
    worst = DCRShare(n_permutations=19, column_subsets="worst").compute(*frames, seed=5)
    extra = worst.breakdown
    assert extra.pop("worst_columns") == [f"c{i}" for i in range(6)]
    assert extra.pop("column_subsets") == [
        {"columns": [f"c{i}" for i in range(6)], "share": plain.score}
    ]
    assert extra.pop("p_value_bonferroni") == plain.breakdown["p_value"]
    assert extra == plain.breakdown
    assert worst.score == plain.score
    assert worst.ci == plain.ci
    assert worst.warnings == plain.warnings


def test_only_the_largest_group_is_tested(monkeypatch: pytest.MonkeyPatch) -> None:
    """The permutation test and the interval run once, on the largest share."""
    frames = _mixed_frames(12)
    finished: list[float] = []
    original = DCRShare._finish

    def finish(self: DCRShare, shares: object, context: object) -> object:
        finished.append(shares.score)  # type: ignore[attr-defined]
        return original(self, shares, context)  # type: ignore[arg-type]

    monkeypatch.setattr(DCRShare, "_finish", finish)
    result = DCRShare(n_permutations=19, column_subsets="worst").compute(*frames)
    shares = [group["share"] for group in result.breakdown["column_subsets"]]
    assert len(shares) == 7
    assert finished == [max(shares)] == [result.score]
    best = shares.index(max(shares))
    assert (
        result.breakdown["worst_columns"]
        == (result.breakdown["column_subsets"][best]["columns"])
    )
