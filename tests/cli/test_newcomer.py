# SPDX-License-Identifier: BSD-3-Clause
"""What a new user meets first: progress, early output checks, parameters, suggestions."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from synthrisk import evaluate
from synthrisk._progress import RichProgress, metric_plan, metric_step, stage
from synthrisk.cli import main
from synthrisk.cli._arguments import param_value as _param_value
from synthrisk.exceptions import ParameterError
from synthrisk.metrics import METRICS, get_metric


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("newcomer")
    rng = np.random.default_rng(5)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 90, n),
                "sex": rng.choice(["f", "m"], n),
                "region": rng.choice(["north", "south", "east"], n),
                "income": rng.normal(3000, 500, n).round(1),
            }
        )

    paths = {}
    for name, n in (("real", 300), ("synthetic", 300), ("holdout", 300)):
        paths[name] = folder / f"{name}.csv"
        table(n).to_csv(paths[name], index=False)
    return paths


def _evaluate(files: dict[str, Path], *extra: str) -> list[str]:
    return [
        "evaluate",
        "--real",
        str(files["real"]),
        "--synthetic",
        str(files["synthetic"]),
        "--holdout",
        str(files["holdout"]),
        *extra,
    ]


# ----------------------------------------------------------------------------- progress


def test_without_a_terminal_each_finished_metric_is_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_evaluate(files, "--metrics", "identical_match_share,nndr")) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2, err
    assert re.fullmatch(
        r"\[1/2\] identical_match_share  \d\.\d{3}  \(\d+\.\d s\)", err[0]
    )
    assert re.fullmatch(r"\[2/2\] nndr  \d\.\d{3}  \(\d+\.\d s\)", err[1])


def test_quiet_prints_no_progress_lines(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _evaluate(files, "--metrics", "identical_match_share", "--quiet")
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    # the answer, not the details: the verdict line and its reason only
    assert captured.out.startswith("Overall verdict: ")
    assert len(captured.out.splitlines()) == 2


def test_a_skipped_metric_is_a_line_too(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "evaluate",
        "--real",
        str(files["real"]),
        "--synthetic",
        str(files["synthetic"]),
    ]
    assert main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    n = len(lines)
    assert n == 15
    assert "[1/15] identification  skipped  (" in lines[0]
    assert "[2/15] vulnerable_people  skipped  (" in lines[1]
    assert "[4/15] dcr_overfitting_protection  skipped  (" in lines[3]


class _Recorder:
    """A progress object with every hook, recording what it is told."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.labels: list[str] = []

    @contextlib.contextmanager
    def plan(self, total: int) -> Iterator[None]:
        self.events.append(f"plan {total}")
        yield

    @contextlib.contextmanager
    def metric(self, metric_id: str) -> Iterator[object]:
        self.events.append(f"metric {metric_id}")
        yield lambda score, status: self.events.append(f"done {metric_id} {status}")

    @contextlib.contextmanager
    def stage(self, label: str) -> Iterator[None]:
        self.labels.append(label)
        try:
            yield
        finally:
            self.labels.pop()

    @contextlib.contextmanager
    def task(self, description: str, total: int) -> Iterator[object]:
        self.events.append(" · ".join([*self.labels, description]))
        yield lambda n: None


def test_inference_reports_the_column_it_attacks(files: dict[str, Path]) -> None:
    real, syn, hold = (pd.read_csv(files[n]) for n in ("real", "synthetic", "holdout"))
    recorder = _Recorder()
    evaluate(real, syn, hold, metrics=["inference", "nndr"], progress=recorder)
    events = recorder.events
    assert events[:2] == ["plan 2", "metric inference"]
    assert events[-1] == "done nndr ok"
    assert events.index("done inference ok") < events.index("metric nndr")
    columns = [e for e in events if e.startswith("column ")]
    # every column is the secret in turn; each step names the column it is on
    for i, column in enumerate(["age", "sex", "region", "income"], 1):
        assert f"column {i}/4 {column!r} · Inference: real targets" in columns
        assert f"column {i}/4 {column!r} · Inference: holdout targets" in columns


def test_a_progress_object_without_hooks_still_works(files: dict[str, Path]) -> None:
    class Plain:
        def __init__(self) -> None:
            self.tasks: list[str] = []

        @contextlib.contextmanager
        def task(self, description: str, total: int) -> Iterator[object]:
            self.tasks.append(description)
            yield lambda n: None

    real, syn = (pd.read_csv(files[n]) for n in ("real", "synthetic"))
    plain = Plain()
    report = evaluate(real, syn, metrics=["inference"], progress=plain)
    assert report["inference"].status == "ok"
    assert "Inference: real targets" in plain.tasks
    with metric_plan(plain, 3), metric_step(plain, "x") as finish, stage(plain, "y"):
        finish(0.5, "ok")


def test_terminal_bars_name_the_metric_its_number_and_step() -> None:
    progress = RichProgress()
    progress._console = Console(file=io.StringIO(), force_terminal=True, width=150)
    seen: list[list[str]] = []
    with metric_plan(progress, 13):
        for metric_id in ("dcr_share", "inference"):
            with metric_step(progress, metric_id) as finish:
                with (
                    stage(progress, "column 2/9 'sex'"),
                    progress.task("Inference: real targets", 10) as advance,
                ):
                    advance(5)
                    assert progress._bars is not None
                    seen.append([t.description for t in progress._bars.tasks])
                finish(0.1, "ok")
    assert seen == [
        ["[1/13] dcr_share · column 2/9 'sex'", "  Inference: real targets"],
        ["[2/13] inference · column 2/9 'sex'", "  Inference: real targets"],
    ]
    # an outer plan keeps its numbering across inner runs (the cluster path's two runs)
    with metric_plan(progress, 5), metric_plan(progress, 2):
        with metric_step(progress, "a"), metric_step(progress, "b"):
            pass
        with metric_step(progress, "c"), progress.task("t", 1):
            assert progress._bars is not None
            assert progress._bars.tasks[0].description == "[3/5] c"


# -------------------------------------------------------------------- outputs checked first


def test_an_unwritable_output_is_refused_before_any_work(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import synthrisk.pipeline

    def never(*args: object, **kwargs: object) -> None:
        msg = "the tables were read before the outputs were checked"
        raise AssertionError(msg)

    monkeypatch.setattr(synthrisk.pipeline, "read_table_with_notes", never)
    monkeypatch.setattr(synthrisk.pipeline, "evaluate_files", never)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for flag in ("--json", "--html"):
        target = blocker / "sub" / "report.out"
        assert main(_evaluate(files, flag, str(target))) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"synthrisk: error: cannot write {str(target)!r} (`{flag}`): "
            f"{str(blocker)!r} is a file, not a folder. Nothing was computed"
        ), err
    assert not list(tmp_path.rglob(".synthrisk-probe-*"))


_NOPE = "/proc/nope"


def _argv_writing(
    command: str, flag: str, target: str, files: dict[str, Path], tmp_path: Path
) -> list[str]:
    """``synthrisk COMMAND ... FLAG TARGET`` with valid inputs."""
    real, syn, hold = (str(files[n]) for n in ("real", "synthetic", "holdout"))
    if command == "evaluate":
        return _evaluate(files, flag, target)
    if command == "filter":
        return ["filter", "--real", real, "--synthetic", syn, "--holdout", hold, flag, target]  # fmt: skip
    if command == "report":
        saved = tmp_path / "saved.json"
        saved.write_text("{}")
        return ["report", str(saved), flag, target]
    if command == "audit":
        return ["audit", "--real", real, "--holdout", hold, "--generator", "sdv:gaussian_copula", flag, target]  # fmt: skip
    if command == "evaluate-tables":
        return ["evaluate-tables", "--real", str(tmp_path), "--synthetic", str(tmp_path), "--metadata", real, flag, target]  # fmt: skip
    assert command == "demo"
    return ["demo", flag, target]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize(
    ("command", "flag", "name"),
    [
        ("evaluate", "--json", "x.json"),
        ("evaluate", "--html", "x.html"),
        ("evaluate", "--filtered-out", "x.csv"),
        ("filter", "--out", "x.csv"),
        ("report", "--html", "x.html"),
        ("audit", "--json", "x.json"),
        ("audit", "--html", "x.html"),
        ("audit", "--cache", "cache"),
        ("evaluate-tables", "--json", "x.json"),
        ("evaluate-tables", "--html", "x.html"),
        ("demo", "--out", "demo"),
    ],
)
def test_an_output_in_a_missing_folder_names_that_folder(
    command: str,
    flag: str,
    name: str,
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # /proc exists and nothing can be created in it: '/proc/nope' is what is missing,
    # not '/proc' (the user's report: the message blamed '/proc')
    import synthrisk.pipeline

    def never(*args: object, **kwargs: object) -> None:
        msg = "the tables were read before the outputs were checked"
        raise AssertionError(msg)

    monkeypatch.setattr(synthrisk.pipeline, "read_table_with_notes", never)
    argv = _argv_writing(command, flag, f"{_NOPE}/{name}", files, tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    folder = (
        f"{_NOPE}/{name}" if flag in ("--cache", "--out") and "." not in name else _NOPE
    )
    assert f"the folder {folder!r} does not exist" in err, err
    assert "cannot be created in '/proc' (" in err, err
    assert f"create {folder!r} first, or give a path in a folder you can write" in err
    assert "the folder '/proc' cannot be written" not in err


def test_a_deeper_missing_folder_names_both(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux's /proc")
    assert main(_evaluate(files, "--json", f"{_NOPE}/deeper/x.json")) == 2
    err = capsys.readouterr().err
    assert (
        f"(`--json`): the folder '{_NOPE}/deeper' does not exist (nor does '{_NOPE}') "
        "and cannot be created in '/proc' ("
    ) in err, err


def test_the_api_checks_outputs_before_reading_tables(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import synthrisk.pipeline
    from synthrisk.exceptions import InputError

    def never(*args: object, **kwargs: object) -> None:
        msg = "tables read before the outputs were checked"
        raise AssertionError(msg)

    monkeypatch.setattr(synthrisk.pipeline, "read_table_with_notes", never)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(InputError, match=r"\(`json`\): .* is a file, not a folder"):
        synthrisk.pipeline.evaluate_files(
            files["real"], files["synthetic"], json=blocker / "r.json"
        )


def test_a_run_file_names_its_report_key(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {{real: {files['real']}, synthetic: {files['synthetic']}}}\n"
        f"report: {{json: {blocker / 'r.json'}}}\n"
    )
    assert main(["run", str(config)]) == 2
    assert "(`report.json` of run.yaml): " in capsys.readouterr().err


# ------------------------------------------------------------------ metric parameters


def test_a_metric_named_alone_runs_on_its_default_columns(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--metrics categorical_cap`` needs no parameters: its columns are chosen and recorded."""
    out = tmp_path / "r.json"
    argv = _evaluate(
        files, "--metrics", "categorical_cap", "--json", str(out), "--quiet"
    )
    assert main(argv) == 0, capsys.readouterr().err
    params = json.loads(out.read_text())["results"][0]["params"]
    assert params["key_fields"]
    assert params["sensitive_fields"]
    assert params["columns_chosen_by"]


def test_a_wrong_parameter_names_the_metric_and_says_how_to_pass_them(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _evaluate(
        files,
        "--metrics",
        "categorical_cap",
        "--param",
        "categorical_cap.key_fields=[]",
    )
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "synthrisk: error: metric 'categorical_cap': `key_fields` must name at least one column; "
        "got an empty list."
    )
    assert "`--param categorical_cap.key_fields=VALUE`" in err
    assert "`synthrisk metrics categorical_cap`" in err


def test_param_sets_a_metric_parameter(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    argv = _evaluate(
        files,
        "--metrics",
        "categorical_cap",
        "--param",
        "categorical_cap.key_fields=age,sex",
        "--param",
        "categorical_cap.sensitive_fields=region",
        "--json",
        str(out),
        "--quiet",
    )
    assert main(argv) == 0, capsys.readouterr().err
    params = json.loads(out.read_text())["results"][0]["params"]
    assert params["key_fields"] == ["age", "sex"]
    assert params["sensitive_fields"] == ["region"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--param", "nosuch.n_attacks=50"],
            "unknown metric 'nosuch'",
        ),
        (
            ["--param", "categorical_zero_cap.key_fields=age"],
            "which the full assessment does not run",
        ),
        (
            ["--metrics", "nndr", "--param", "inference.n_attacks=50"],
            "which `--metrics` does not name; add it: `--metrics nndr,inference`",
        ),
        (
            ["--metrics", "inference", "--param", "inference.n_atacks=50"],
            "has no parameter(s) ['n_atacks']; allowed parameters: ",
        ),
        (
            ["--metrics", "inference", "--param", "inference.n_atacks=50"],
            "Did you mean 'n_attacks'?",
        ),
        (
            ["--metrics", "inference", "--param", "inference.n_attacks=-5"],
            "metric 'inference': `n_attacks` must be an integer >= 1; got -5. "
            "Set metric parameters with `--param inference.n_attacks=VALUE`",
        ),
        (
            ["--metrics", "inference", "--param", "n_attacks=5"],
            "`--param n_attacks=5` must read METRIC.NAME=VALUE",
        ),
        (
            ["--metrics", "singlingout"],
            "unknown metric 'singlingout'. Did you mean 'singling_out' or 'singling_out_univariate'?",
        ),
        (
            [
                "--metrics",
                "categorical_cap",
                "--param",
                "categorical_cap.key_fields=agee",
                "--param",
                "categorical_cap.sensitive_fields=sex",
            ],
            "metric 'categorical_cap': `key_fields` names columns that are not in the tables: ['agee']",
        ),
    ],
)
def test_parameter_errors_name_the_metric_and_the_flag(
    files: dict[str, Path],
    extra: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(_evaluate(files, *extra, "--quiet")) == 2
    err = capsys.readouterr().err
    assert err.startswith("synthrisk: error: ")
    assert message in err, err
    assert "\n" not in err.rstrip("\n")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("age,sex", ["age", "sex"]),
        ("age, sex", ["age", "sex"]),
        ("[age, sex]", ["age", "sex"]),
        ("500", 500),
        ("0.05", 0.05),
        ("null", None),
        ("", None),
        ("true", True),
        ('"a,b"', "a,b"),
        ("0.1,0.9", [0.1, 0.9]),
        ("age", "age"),
    ],
)
def test_param_values_are_read_as_yaml_and_commas_make_lists(
    text: str, value: object
) -> None:
    assert _param_value(text, f"m.p={text}") == value


def test_metrics_describes_one_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "categorical_cap"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("categorical_cap (CategoricalCAP): ")
    assert "In the full assessment (no --metrics): no" in out
    assert re.search(r"key_fields\s+None\s+a list of column names", out)
    assert "--param categorical_cap.NAME=VALUE" in out
    assert main(["metrics", "singlingout"]) == 2
    assert "Did you mean 'singling_out'" in capsys.readouterr().err


def test_get_metric_suggests_the_closest_ids() -> None:
    with pytest.raises(ParameterError) as caught:
        get_metric("dcr_baseline")
    assert "Did you mean 'dcr_baseline_protection'" in str(caught.value)
    with pytest.raises(
        ParameterError, match=r"unknown metric 'zzz'\. Available metrics"
    ):
        get_metric("zzz")


def test_python_dict_of_parameters_names_the_metric(files: dict[str, Path]) -> None:
    real = pd.read_csv(files["real"])
    with pytest.raises(ParameterError) as caught:
        evaluate(real, real, metrics={"inference": {"n_attacks": -5}})
    assert caught.value.metric == "inference"
    assert caught.value.parameter == "n_attacks"
    assert str(caught.value).startswith("metric 'inference': `n_attacks` must be")
    # a metric built directly keeps the plain message (its class is in view)
    with pytest.raises(ParameterError, match=r"^`n_attacks` must be"):
        get_metric("inference")(n_attacks=-5)


def test_a_default_run_keeps_skip_reasons_without_the_prefix(
    files: dict[str, Path],
) -> None:
    real = pd.read_csv(files["real"])[["age"]]
    report = evaluate(real, real)
    reason = report["inference"].reason
    assert reason is not None
    assert not reason.startswith("metric ")


def test_the_caveats_of_the_verdict_are_printed_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fidelity warning that qualifies the verdict is printed next to it, in full."""
    rng = np.random.default_rng(1)
    paths = {}
    for name, shift in (("real", 0.0), ("holdout", 0.0), ("synthetic", 5.0)):
        frame = pd.DataFrame(
            {"x": rng.normal(shift, 1.0, 300), "c": rng.choice(list("abc"), 300)}
        )
        if name == "synthetic":
            frame["c"] = "a"
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    argv = _evaluate(paths, "--metrics", "distribution_validation,dcr_share")
    assert main(argv) in (0, 1)
    out = capsys.readouterr().out
    after_verdict = out[out.index("Overall verdict") :]
    assert re.search(
        r"caveat: distribution_validation: 2 of 2 synthetic column\(s\) differ",
        " ".join(after_verdict.split()),
    ), after_verdict


def test_param_without_metrics_changes_one_metric_of_the_full_assessment(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    argv = _evaluate(
        files, "--param", "inference.n_attacks=40", "--json", str(out), "--quiet"
    )
    assert main(argv) in (0, 1), capsys.readouterr().err
    data = json.loads(out.read_text())
    ran = {r["metric"]: r for r in data["results"]}
    # the whole assessment is kept (the replay metrics only run where the tables have
    # identifier or free-text columns: these have none)
    default = {
        m
        for m, cls in METRICS.items()
        if cls.runs_by_default
        and m not in ("identifier_replay", "text_replay", "row_string_replay")
    }
    assert set(ran) == default
    assert ran["inference"]["params"]["n_attacks"] == 40
    assert (
        ran["linkability"]["params"]["n_attacks"] is None
    )  # the rest keeps its defaults
    for entry in data["verdict"]["metrics"]:
        assert "next_step" in entry
        if entry["level"] == "review":
            assert entry["next_step"]
            assert entry["reason"].endswith(entry["next_step"])


def test_param_without_metrics_naming_an_unknown_metric_exits_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_evaluate(files, "--param", "inferance.n_attacks=40")) == 2
    err = capsys.readouterr().err
    assert "unknown metric 'inferance'" in err
    assert "inference" in err
