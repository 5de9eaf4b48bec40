# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import threading

import pandas as pd

from synthrisk import evaluate
from synthrisk._warmup import _done, numba_warmup


def _warmup_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "synthrisk-numba-warmup"]


def test_numba_warmup_is_joined_when_the_block_ends() -> None:
    with numba_warmup():
        pass
    assert _done.is_set()
    assert not _warmup_threads()
    # once per process: a second block starts no thread
    with numba_warmup():
        assert not _warmup_threads()


def test_evaluate_leaves_no_warmup_thread_behind() -> None:
    real = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "c": list("abab")})
    report = evaluate(real, real.iloc[::-1], metrics=["identical_match_share"])
    assert report.results[0].status == "ok"
    assert _done.is_set()
    assert not _warmup_threads()
