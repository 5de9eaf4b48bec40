# SPDX-License-Identifier: BSD-3-Clause
"""Metrics of one run in forked worker processes: the same report, errors, a dead worker."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_mixed

from synthrisk import DCRBaselineProtection, evaluate
from synthrisk._workers import (
    _groups,
    fork_safe_kernels,
    forked_map,
    kernel_guard,
    plan_workers,
    threadsafe_kernels,
)
from synthrisk.cli.main import main
from synthrisk.datasets import load_demo
from synthrisk.evaluate import resolve_metrics
from synthrisk.exceptions import ConfigError, ParameterError
from synthrisk.io.run_file import parse_config
from synthrisk.metrics._base import Context, Metric, Outcome
from synthrisk.results import ThreatModel
from synthrisk.schema import prepare_tables
from synthrisk.schema.tables import Tables
from synthrisk.settings import Config, check_workers, config_context

linux = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="worker processes are forked on Linux"
)


def _report(report: Any) -> dict[str, Any]:
    data = report.to_dict(include_records=True)
    for result in data["results"]:
        result.pop("seconds")
    return json.loads(json.dumps(data, default=str))


def test_synthrisk_chose_a_fork_safe_layer() -> None:
    """``import synthrisk`` asked numba for a fork-safe layer (no layer was set)."""
    if "NUMBA_THREADING_LAYER" in os.environ:
        pytest.skip("NUMBA_THREADING_LAYER is set: the user's choice is kept")
    assert fork_safe_kernels()
    threadsafe_kernels()  # launches the layer if nothing has yet
    assert str(numba.threading_layer()) in ("workqueue", "tbb")  # type: ignore[attr-defined]


@linux
def test_workers_give_the_report_of_one_process(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    before = set(multiprocessing.active_children())
    one = evaluate(real, syn, hold, seed=3, workers=1)
    tables = prepare_tables(real, syn, hold)
    assert plan_workers(2, tables, resolve_metrics(None), backend=None) == 2
    two = evaluate(real, syn, hold, seed=3, workers=2)
    three = evaluate(real, syn, hold, seed=3, workers=3)
    assert _report(two) == _report(one) == _report(three)
    assert [r.metric for r in two.results] == [r.metric for r in one.results]
    assert two.verdict == one.verdict
    # the workers ended with the run
    _assert_no_new_children(before)


def test_auto_stays_in_this_process_for_small_tables(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    tables = prepare_tables(*mixed_tables)
    metrics = resolve_metrics(None)
    assert plan_workers("auto", tables, metrics, backend=None) == 1
    assert plan_workers(1, tables, metrics, backend=None) == 1
    # one group of metrics, or a backend that runs elsewhere: this process
    assert plan_workers(4, tables, metrics[:1], backend=None) == 1
    assert plan_workers(4, tables, metrics, backend="dask") == 1
    assert plan_workers(4, tables, metrics, backend="torch") == 1


@linux
def test_auto_forks_for_large_tables() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: auto runs in this process")
    frames = [make_mixed(7_000, seed, prefix=p) for seed, p in enumerate("rsh")]
    tables = prepare_tables(*frames)
    n = plan_workers("auto", tables, resolve_metrics(None), backend=None)
    assert 2 <= n <= min(4, os.cpu_count() or 1)


def test_metrics_sharing_a_search_stay_together_longest_first() -> None:
    metrics = resolve_metrics(None)
    groups = _groups(metrics)
    ids = [[metrics[i].id for i in group] for group in groups]
    assert ["dcr_baseline_protection", "dcr_overfitting_protection"] in ids
    assert [
        "identification",
        "vulnerable_people",
        "membership_knn_probabilities",
    ] in ids
    assert sorted(i for group in groups for i in group) == list(range(len(metrics)))
    costs = [sum(metrics[i].cost for i in group) for group in groups]
    assert costs == sorted(costs, reverse=True)


@linux
def test_an_error_in_a_worker_is_raised_here(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    real = real.head(40)
    bad = DCRBaselineProtection(num_rows_subsample=80, subsample_real=True)
    with pytest.raises(ParameterError, match="larger than the real table") as one:
        evaluate(real, syn, hold, metrics=["nndr", bad], workers=1)
    with pytest.raises(ParameterError, match="larger than the real table") as two:
        evaluate(real, syn, hold, metrics=["nndr", bad], workers=2)
    assert str(two.value) == str(one.value)


class _DiesInAWorker(Metric):
    """Kills the worker process it runs in; in the parent it scores 0.5."""

    id = "dies_in_a_worker"
    threat_model = ThreatModel(
        attacker_holds="synthetic", target="training", meaning="a test metric"
    )
    parent = os.getpid()

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        if os.getpid() != self.parent:
            os._exit(3)
        return Outcome(score=0.5, breakdown={"score": 0.5})


@linux
def test_a_dead_worker_costs_only_time(
    mixed_tables: tuple[pd.DataFrame, ...], caplog: pytest.LogCaptureFixture
) -> None:
    real, syn, hold = mixed_tables
    metrics = ["dcr_baseline_protection", "nndr", "identical_match_share"]
    one = evaluate(real, syn, hold, metrics=[*metrics, _DiesInAWorker()], workers=1)
    with caplog.at_level(logging.WARNING, logger="synthrisk._workers"):
        two = evaluate(real, syn, hold, metrics=[*metrics, _DiesInAWorker()], workers=2)
    assert "a worker process died" in caplog.text
    assert _report(two) == _report(one)
    assert two["dies_in_a_worker"].score == 0.5


def test_workers_setting_is_checked() -> None:
    assert check_workers("auto") == "auto"
    assert check_workers(3) == 3
    assert check_workers(np.int64(2)) == 2
    for bad in (0, -1, 1.5, "2", True, None):
        with pytest.raises(ParameterError, match="`workers` must be 'auto' or a whole"):
            check_workers(bad)
    with pytest.raises(ParameterError, match="`workers` must be"):
        Config(workers=0)
    with config_context(workers=1) as config:
        assert config.workers == 1
    with pytest.raises(ParameterError, match="`workers` must be"):
        evaluate(*[make_mixed(30, s) for s in range(2)], workers="many")  # type: ignore[arg-type]


def test_kernel_guard_lets_threads_take_turns() -> None:
    """Under numba's workqueue layer two threads' kernels at once abort the process;
    through the guard they take turns (under OpenMP or TBB they run together)."""
    from synthrisk._workers import _count

    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                out = np.zeros(10_000, dtype=np.int64)
                with kernel_guard():
                    _count(out)
                assert out[-1] == 9_999
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


class _Warns(Metric):
    """Raises a Python warning (a library's, say) while it computes."""

    id = "warns_while_computing"
    threat_model = ThreatModel(
        attacker_holds="synthetic", target="training", meaning="a test metric"
    )

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        warnings.warn(f"computed in process {os.getpid()}", UserWarning, stacklevel=1)
        return Outcome(score=0.25, breakdown={"score": 0.25})


@linux
def test_python_warnings_of_a_worker_are_raised_here(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    with pytest.warns(UserWarning, match=r"computed in process \d+") as caught:
        report = evaluate(real, syn, hold, metrics=["nndr", _Warns()], workers=2)
    assert report["warns_while_computing"].score == 0.25
    pids = {int(str(w.message).rsplit(" ", 1)[1]) for w in caught}
    assert os.getpid() not in pids  # it ran in a worker, and its warning came back


@linux
def test_progress_names_each_metric_once_with_its_own_time(
    mixed_tables: tuple[pd.DataFrame, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    real, syn, hold = mixed_tables
    chosen = ["dcr_baseline_protection", "nndr", "identical_match_share"]
    report = evaluate(real, syn, hold, metrics=chosen, workers=2, progress=True)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3
    assert sorted(line.split()[0] for line in lines) == ["[1/3]", "[2/3]", "[3/3]"]
    for result in report.results:
        (line,) = [x for x in lines if x.split()[1] == result.metric]
        assert line.endswith(f"({result.seconds:.1f} s)")


def test_run_file_reads_compute_workers(tmp_path: Path) -> None:
    raw: dict[str, Any] = {"data": {"real": "r.csv", "synthetic": "s.csv"}}
    assert parse_config(raw, base=tmp_path).workers is None
    for value in ("auto", 1, 3):
        raw["compute"] = {"workers": value}
        assert parse_config(raw, base=tmp_path).workers == value
    for bad in (0, -1, 2.5, True, "many"):
        raw["compute"] = {"workers": bad}
        with pytest.raises(ConfigError, match=r"`compute.workers` must be 'auto' or"):
            parse_config(raw, base=tmp_path)


@linux
def test_command_line_and_run_file_pass_workers_on(tmp_path: Path) -> None:
    """``--workers`` and ``compute.workers`` reach the run (a dying metric shows where
    it ran), and the JSON is the one-process JSON."""
    demo = load_demo(n_rows=300, seed=2)
    demo.real.to_csv(tmp_path / "real.csv", index=False)
    demo.synthetic["leaky"].to_csv(tmp_path / "syn.csv", index=False)
    demo.holdout.to_csv(tmp_path / "hold.csv", index=False)
    files = [
        "--real", str(tmp_path / "real.csv"), "--synthetic", str(tmp_path / "syn.csv"),
        "--holdout", str(tmp_path / "hold.csv"), "--quiet",
        "--metrics", "dcr_baseline_protection,nndr,identical_match_share",
    ]  # fmt: skip
    reports = {}
    for workers in ("1", "2"):
        out = tmp_path / f"cli-{workers}.json"
        code = main(["evaluate", *files, "--workers", workers, "--json", str(out)])
        assert code == 0
        reports[workers] = _results(out)
    (tmp_path / "run.yaml").write_text(
        "data: {real: real.csv, synthetic: syn.csv, holdout: hold.csv}\n"
        "metrics: {dcr_baseline_protection: {}, nndr: {}, identical_match_share: {}}\n"
        "compute: {workers: 2}\n"
        "report: {json: yaml.json}\n"
    )
    seen: list[int] = []
    # the module (``synthrisk.evaluate`` the attribute is the function)
    evaluate_module = sys.modules["synthrisk.evaluate"]
    original = evaluate_module.run_metrics

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs["workers"])
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(evaluate_module, "run_metrics", spy)
        assert main(["run", str(tmp_path / "run.yaml"), "--quiet"]) == 0
        assert main(["evaluate", *files, "--workers", "3"]) == 0
    assert seen == [2, 3]
    assert reports["1"] == reports["2"] == _results(tmp_path / "yaml.json")


def _results(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    for result in data["results"]:
        result.pop("seconds")
    return data["results"]


class _Sleeps(Metric):
    """Takes a minute (in a worker) unless it is stopped."""

    id = "sleeps_a_minute"
    threat_model = ThreatModel(
        attacker_holds="synthetic", target="training", meaning="a test metric"
    )
    cost = 100.0  # started first

    def _compute(self, tables: Tables, context: Context) -> Outcome:
        time.sleep(60)
        return Outcome(score=0.5, breakdown={"score": 0.5})


@linux
def test_an_error_stops_the_other_workers_at_once(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    real, syn, hold = mixed_tables
    bad = DCRBaselineProtection(num_rows_subsample=80, subsample_real=True)
    before = set(multiprocessing.active_children())
    start = time.perf_counter()
    with pytest.raises(ParameterError, match="larger than the real table"):
        evaluate(real.head(40), syn, hold, metrics=[_Sleeps(), bad], workers=2)
    assert time.perf_counter() - start < 30
    _assert_no_new_children(before)


def _assert_no_new_children(before: set[Any]) -> None:
    """Every worker process started since ``before`` has ended (within 10 s)."""
    new = [p for p in multiprocessing.active_children() if p not in before]
    for process in new:
        process.join(timeout=10)
    assert [p.pid for p in new if _exists(p.pid)] == []


def _exists(pid: int | None) -> bool:
    """Whether the process ``pid`` still exists (the executor may have reaped it, and
    multiprocessing's own object then never learns its exit code)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone but for its exit status
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_every_metric_declares_a_usable_cost_and_share_name() -> None:
    from synthrisk.metrics import METRICS

    for metric_id, cls in METRICS.items():
        assert isinstance(cls.shares, str), metric_id
        assert isinstance(cls.cost, float | int), metric_id
        assert 0 < cls.cost < 1_000, metric_id
    # the names in use are shared by more than one metric (a name alone groups nothing)
    names = [cls.shares for cls in METRICS.values() if cls.shares]
    assert all(names.count(name) > 1 for name in names)


@linux
def test_forked_map_keeps_the_order_and_runs_elsewhere() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the calls run here")
    offset = 7  # a closure: nothing but the results is pickled

    def where(i: int) -> tuple[int, int]:
        return i + offset, os.getpid()

    found = forked_map(where, 9)
    assert [value for value, _ in found] == list(range(7, 16))
    assert os.getpid() not in {pid for _, pid in found}
    with config_context(workers=1):
        assert {pid for _, pid in forked_map(where, 9)} == {os.getpid()}
    assert {pid for _, pid in forked_map(where, 3)} == {os.getpid()}  # too few


@linux
def test_forked_map_raises_a_workers_error() -> None:
    def fails_at_five(i: int) -> int:
        if i == 5:
            msg = f"item {i} failed"
            raise ValueError(msg)
        return i

    before = set(multiprocessing.active_children())
    with pytest.raises(ValueError, match="item 5 failed"):
        forked_map(fails_at_five, 8)
    _assert_no_new_children(before)


def test_html_report_is_the_same_with_plots_drawn_side_by_side(
    mixed_tables: tuple[pd.DataFrame, ...],
) -> None:
    from synthrisk.report import render_html

    report = evaluate(*mixed_tables, seed=1, workers=1)
    side_by_side = render_html(report)
    with config_context(workers=1):
        one_by_one = render_html(report)
    assert side_by_side == one_by_one
    assert side_by_side.count('src="data:image/svg+xml;base64,') >= 4
    assert "synthrisk-plot-" not in side_by_side
