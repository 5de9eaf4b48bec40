# SPDX-License-Identifier: BSD-3-Clause
"""Progress: silent by default, hooks called only when present, output on stderr only."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest

from synthrisk._progress import (
    NullProgress,
    RichProgress,
    as_progress,
    metric_plan,
    metric_step,
    stage,
)

SECONDS = r"\(\d+\.\d s\)"


@pytest.fixture
def not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "0")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")


class TaskOnly:
    """A progress object with ``task`` and none of the optional hooks."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, int, int]] = []

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[object]:
        done = [0]
        yield lambda n: done.__setitem__(0, done[0] + n)
        self.tasks.append((description, total, done[0]))


class Recorder(TaskOnly):
    """A progress object with every hook, recording the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, object]] = []

    @contextlib.contextmanager
    def plan(self, total: int) -> Iterator[None]:
        self.calls.append(("plan", total))
        yield
        self.calls.append(("plan end", total))

    @contextlib.contextmanager
    def metric(self, metric_id: str) -> Iterator[object]:
        self.calls.append(("metric", metric_id))
        yield lambda score, status: self.calls.append(("finish", (score, status)))
        self.calls.append(("metric end", metric_id))

    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        self.calls.append(("stage", label))
        yield
        self.calls.append(("stage end", label))


@pytest.mark.parametrize("value", [None, False])
def test_as_progress_off_is_silent(
    value: bool | None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = as_progress(value)
    assert isinstance(progress, NullProgress)
    with metric_plan(progress, 2), metric_step(progress, "dcr") as finish:
        with stage(progress, "column 1/2"), progress.task("search", 10) as advance:
            assert advance(10) is None
        assert finish(0.5, "ok") is None
    assert capsys.readouterr() == ("", "")


def test_as_progress_true_and_objects(not_a_terminal: None) -> None:
    assert isinstance(as_progress(True), RichProgress)
    custom = TaskOnly()
    assert as_progress(custom) is custom


def test_hooks_are_no_ops_without_them(capsys: pytest.CaptureFixture[str]) -> None:
    progress = TaskOnly()
    with metric_plan(progress, 3) as planned:
        assert planned is None
        with metric_step(progress, "nndr") as finish:
            assert finish(0.25, "ok") is None
            with stage(progress, "column 'age'") as staged:
                assert staged is None
                with progress.task("queries", 4) as advance:
                    advance(3)
    assert progress.tasks == [("queries", 4, 3)]
    assert capsys.readouterr() == ("", "")


def test_hooks_called_when_present() -> None:
    progress = Recorder()
    with metric_plan(progress, 2), metric_step(progress, "linkability") as finish:
        with stage(progress, "column 2/9 'sex'"):
            pass
        finish(0.135, "ok")
    assert progress.calls == [
        ("plan", 2),
        ("metric", "linkability"),
        ("stage", "column 2/9 'sex'"),
        ("stage end", "column 2/9 'sex'"),
        ("finish", (0.135, "ok")),
        ("metric end", "linkability"),
        ("plan end", 2),
    ]


def test_stage_without_label_is_a_no_op() -> None:
    progress = Recorder()
    with stage(progress, ""):
        pass
    assert progress.calls == []


def test_rich_progress_line_per_finished_metric(
    not_a_terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = as_progress(True)
    with metric_plan(progress, 3):
        with metric_step(progress, "singling_out") as finish:
            with progress.task("queries", 100) as advance:
                advance(100)
            finish(0.13456, "ok")
        with metric_step(progress, "linkability") as finish:
            finish(None, "skipped")
        with metric_step(progress, "inference") as finish:
            finish(None, "ok")
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 3
    assert re.fullmatch(rf"\[1/3\] singling_out  0\.135  {SECONDS}", lines[0])
    assert re.fullmatch(rf"\[2/3\] linkability  skipped  {SECONDS}", lines[1])
    assert re.fullmatch(rf"\[3/3\] inference  no score  {SECONDS}", lines[2])


def test_rich_progress_last_finish_counts_and_skipped_wins(
    not_a_terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = RichProgress()
    with metric_step(progress, "dcr") as finish:
        finish(0.1, "ok")
        finish(0.9, "ok")
    with metric_step(progress, "nndr") as finish:
        finish(0.7, "skipped")
    lines = capsys.readouterr().err.splitlines()
    assert re.fullmatch(rf"dcr  0\.900  {SECONDS}", lines[0])
    assert re.fullmatch(rf"nndr  skipped  {SECONDS}", lines[1])


def test_rich_progress_outer_plan_numbers_and_stage_prefix(
    not_a_terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = RichProgress()
    with metric_plan(progress, 2):
        with (
            stage(progress, "dataset a"),
            metric_plan(progress, 5),
            metric_step(progress, "dcr") as finish,
        ):
            with stage(progress, "column 1/2"):
                pass
            finish(0.5, "ok")
        with metric_step(progress, "nndr") as finish:
            finish(0.25, "ok")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(rf"dataset a · \[1/2\] dcr  0\.500  {SECONDS}", lines[0])
    assert re.fullmatch(rf"\[2/2\] nndr  0\.250  {SECONDS}", lines[1])


def test_rich_progress_silent_without_finished_metric(
    not_a_terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = RichProgress()
    with (
        metric_plan(progress, 1),
        metric_step(progress, "dcr"),
        stage(progress, "column 1/1"),
        progress.task("search", 5) as advance,
    ):
        advance(5)
    assert capsys.readouterr() == ("", "")


def test_rich_progress_live_display_on_stderr_only(
    terminal: None, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = RichProgress()
    with metric_plan(progress, 1), metric_step(progress, "dcr") as finish:
        with (
            stage(progress, "column 1/2 'sex'"),
            progress.task("neighbours", 10) as advance,
        ):
            advance(10)
        finish(0.5, "ok")
    out, err = capsys.readouterr()
    assert out == ""
    assert "[1/1] dcr · column 1/2 'sex'" in err
    assert "neighbours" in err
    assert "0.500" not in err  # the live display shows no finished line
