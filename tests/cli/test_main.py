# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from tests._demo_run import DemoRun

from synthrisk.cli import main
from synthrisk.datasets import load_demo


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("demo")
    demo = load_demo(n_rows=600, seed=1)
    paths = {
        "real": folder / "real.csv",
        "holdout": folder / "holdout.parquet",
        "synthetic": folder / "syn.csv",
    }
    demo.real.to_csv(paths["real"], index=False)
    demo.holdout.to_parquet(paths["holdout"])
    demo.synthetic["partial"].to_csv(paths["synthetic"], index=False)
    paths["metadata"] = folder / "metadata.json"
    paths["metadata"].write_text(json.dumps(demo.metadata))
    return paths


def test_evaluate_writes_json_with_file_hashes(
    demo_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "report.json"
    code = main([
        "evaluate", "--real", str(demo_files["real"]), "--synthetic", str(demo_files["synthetic"]),
        "--holdout", str(demo_files["holdout"]), "--metadata", str(demo_files["metadata"]),
        "--seed", "3", "--json", str(out), "--quiet", "--metrics", "dcr_baseline_protection,dcr_overfitting_protection",
    ])  # fmt: skip
    assert code == 0
    data = json.loads(out.read_text())
    assert [r["metric"] for r in data["results"]] == [
        "dcr_baseline_protection",
        "dcr_overfitting_protection",
    ]
    assert data["seed"] == 3
    assert len(data["inputs"]["real"]["sha256"]) == 64
    assert data["inputs"]["holdout"]["file"] == "holdout.parquet"
    assert data["schema"]["excluded"] == ["person_id"]
    # --quiet: the verdict and its reason, no results table
    assert capsys.readouterr().out.splitlines() == [
        "Overall verdict: review (statistical policy)",
        "review: no metric of this run gates (no holdout test ran and no threshold was "
        "given).",
    ]


def test_quiet_prints_the_verdict_and_findings_but_no_table(
    demo_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = [
        "--real", str(demo_files["real"]), "--synthetic", str(demo_files["synthetic"]),
        "--holdout", str(demo_files["holdout"]), "--metadata", str(demo_files["metadata"]),
        "--metrics", "identification", "--policy", "strict",
    ]  # fmt: skip
    assert main(["evaluate", *inputs, "--quiet"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "Overall verdict: fail (strict policy)"
    assert lines[1].startswith("fail: 0 of 1 gating tests pass, 0 need review, 1 fail")
    # the finding that reads fail, with its people and next step
    assert "Finding: Copied people fail (strict policy)" in lines
    assert any(line.startswith("Next step: inspect synthetic rows") for line in lines)
    assert "synthrisk results" not in captured.out  # no table
    assert captured.err == ""  # no progress
    # with the JSON on standard output the verdict goes to standard error
    assert main(["evaluate", *inputs, "--quiet", "--json", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"]["overall"] == "fail"
    assert captured.err.splitlines()[0] == "Overall verdict: fail (strict policy)"


def test_run_quiet_prints_the_verdict(
    demo_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "version: 1\n"
        f"data: {{real: {demo_files['real']}, synthetic: {demo_files['synthetic']}, holdout: {demo_files['holdout']}, metadata: {demo_files['metadata']}}}\n"
        "metrics: [identification]\npolicy: strict\n"
    )
    assert main(["run", str(config), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Overall verdict: fail (strict policy)\nfail: ")
    assert "Finding: Copied people fail" in out


def test_evaluate_prints_a_summary_table(
    demo_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "evaluate",
            "--real",
            str(demo_files["real"]),
            "--synthetic",
            str(demo_files["synthetic"]),
            "--metrics",
            "dcr_baseline_protection",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "dcr_baseline_protection" in out
    assert "dcr_overfitting_protection" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["evaluate", "--real", "x.csv"],
            "synthrisk: error: the following arguments are required: --synthetic",
        ),
        (
            ["evaluate", "--real", "missing.csv", "--synthetic", "missing.csv"],
            "synthrisk: error: the `real` file 'missing.csv' does not exist.",
        ),
        (
            ["frobnicate"],
            "synthrisk: error: argument COMMAND: invalid choice: 'frobnicate'",
        ),
        (
            ["run", "nowhere.yaml"],
            "synthrisk: error: the configuration file 'nowhere.yaml' does not exist.",
        ),
    ],
)
def test_usage_and_input_errors_exit_2_without_traceback(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert "Traceback" not in err


def test_bad_input_tables_exit_2(
    demo_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.csv"
    pd.DataFrame({"zzz": [1, 2]}).to_csv(other, index=False)
    assert (
        main(
            [
                "evaluate",
                "--real",
                str(demo_files["real"]),
                "--synthetic",
                str(other),
                "--quiet",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith(
        "synthrisk: error: the `real` and `synthetic` tables have different columns"
    )
    assert (
        main(
            [
                "evaluate",
                "--real",
                str(demo_files["real"]),
                "--synthetic",
                str(demo_files["synthetic"]),
                "--metrics",
                "dcr_overfitting_protection",
                "--quiet",
            ]
        )
        == 2
    )
    assert "needs a `holdout` table" in capsys.readouterr().err


def test_run_config(demo_files: dict[str, Path], tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "version: 1\n"
        f"data: {{real: {demo_files['real']}, synthetic: {demo_files['synthetic']}, holdout: {demo_files['holdout']}, metadata: {demo_files['metadata']}}}\n"
        "seed: 2\n"
        "metrics:\n  dcr_overfitting_protection: {num_rows_subsample: 100, num_iterations: 2}\n"
        "report: {json: out/report.json, include_records: true}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 0
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    (result,) = data["results"]
    assert result["params"]["num_iterations"] == 2
    assert len(result["records"]["synthetic_to_real"]["index"]) == 100
    # running the same config twice gives the same numbers
    first = (tmp_path / "out" / "report.json").read_text()
    assert main(["run", str(config), "--quiet"]) == 0
    second = (tmp_path / "out" / "report.json").read_text()
    for a, b in zip(
        json.loads(first)["results"], json.loads(second)["results"], strict=False
    ):
        a.pop("seconds"), b.pop("seconds")
        assert a == b


def test_run_config_with_unknown_key_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("data: {real: a.csv, synthetic: b.csv}\nmetricz: {}\n")
    assert main(["run", str(config)]) == 2
    assert "unknown keys ['metricz']" in capsys.readouterr().err


def test_demo_writes_reports_and_table(demo_run: DemoRun) -> None:
    out = demo_run.printed
    assert "leaky" in out
    assert "independent" in out
    # whole, or folded at its underscore where the terminal is narrow
    assert "isolated_copies" in out or (
        "isolated_\n" in out.replace(" ", "") and "copies" in out
    )
    data = json.loads((demo_run.out / "report.json").read_text())
    assert data["inputs"]["real"]["rows"] == 300
    for name in ("leaky", "partial", "isolated_copies", "fresh", "independent"):
        assert (demo_run.out / "reports" / f"{name}.json").is_file()
        assert (demo_run.out / "data" / f"synthetic_{name}.csv").is_file()


def test_metrics_lists_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "dcr_overfitting_protection (needs a holdout)" in out
    # every metric runs without parameters now: the others say when they run
    assert "k_anonymity (runs when named)" in out
    assert "needs parameters" not in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith("synthrisk ")


def test_evaluate_self_test_writes_json_and_shows_its_steps(
    demo_files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    code = main([
        "evaluate", "--real", str(demo_files["real"]), "--synthetic", str(demo_files["synthetic"]),
        "--holdout", str(demo_files["holdout"]), "--metadata", str(demo_files["metadata"]),
        "--metrics", "identification", "--self-test", "--json", str(out),
    ])  # fmt: skip
    assert code == 0
    data = json.loads(out.read_text())
    kinds = [(s["kind"], s["share"]) for s in data["self_test"]["scenarios"]]
    assert kinds == [(k, s) for k in ("exact", "near") for s in (0.001, 0.005, 0.01)]
    assert data["self_test"]["metrics"] == ["identification"]
    captured = capsys.readouterr()
    # off a terminal: one progress line per metric run, named by its scenario
    assert "self-test · exact copies, " in captured.err
    assert "known-leak self-test" in captured.out
    assert data["self_test"]["headline"].split("(")[0] in " ".join(captured.out.split())


def test_evaluate_self_test_without_holdout_exits_2(
    demo_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([
        "evaluate", "--real", str(demo_files["real"]), "--synthetic", str(demo_files["synthetic"]),
        "--self-test", "--quiet",
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "synthrisk: error: the self-test (`self_test=True`, `--self-test`) needs a `holdout` table"
    )


def test_run_file_passes_self_test_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import synthrisk.pipeline as pipeline

    seen: dict[str, object] = {}

    def fake(*args: object, **options: object) -> object:
        seen.update(options)
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "evaluate_files", fake)
    config = tmp_path / "run.yaml"
    config.write_text(
        "data: {real: r.csv, synthetic: s.csv, holdout: h.csv}\nself_test: true\n"
    )
    with pytest.raises(SystemExit):
        pipeline.run_file(config)
    assert seen["self_test"] is True
