# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk evaluate --record`` and the context options; ``report: {record: …}`` in run files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthrisk.cli import main
from synthrisk.datasets import load_demo


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("record")
    demo = load_demo(n_rows=200, seed=2)
    paths = {n: folder / f"{n}.csv" for n in ("real", "holdout", "synthetic")}
    demo.real.to_csv(paths["real"], index=False)
    demo.holdout.to_csv(paths["holdout"], index=False)
    demo.synthetic["leaky"].to_csv(paths["synthetic"], index=False)
    return paths


def _inputs(files: dict[str, Path]) -> list[str]:
    return ["--real", str(files["real"]), "--synthetic", str(files["synthetic"]),
            "--holdout", str(files["holdout"])]  # fmt: skip


def test_evaluate_writes_the_record_with_the_context(
    files: dict[str, Path], tmp_path: Path
) -> None:
    record, report = tmp_path / "out" / "record.html", tmp_path / "out" / "report.json"
    context = tmp_path / "context.yaml"
    context.write_text(
        "purpose: teaching\nrecipient: a course\nassessed_on: 2026-05-01\n"
    )
    code = main([
        "evaluate", *_inputs(files), "--metrics", "identification", "--quiet",
        "--json", str(report), "--record", str(record), "--context", str(context),
        "--context-recipient", "students", "--release-model", "restricted",
        "--attacker-knows", "age,sex", "--population-share", "1%",
        "--assessor", "A. Officer", "--reassess-by", "2027-06-01",
    ])  # fmt: skip
    assert code == 0
    stored = json.loads(report.read_text())["context"]
    assert stored["purpose"] == "teaching"
    assert stored["recipient"] == "students"  # the option over the file
    assert stored["attacker_knows"] == ["age", "sex"]
    assert stored["population_share"] == pytest.approx(0.01)
    assert stored["assessed_on"] == "2026-05-01"
    assert "reassess_by" not in stored["defaults"]
    page = record.read_text()
    assert "synthrisk evaluate --real" in page  # the command line
    assert "students" in page
    assert "π = 1 %" in page


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (["--population-share", "2"], "`--population-share`"),
        (["--reassess-by", "soon"], "`--reassess-by`"),
        (["--attacker-knows", "postcode"], "which the real table lacks"),
        (["--record", "record.docx"], r"must end in \.html or \.pdf"),
    ],
)
def test_bad_context_options_exit_2(
    files: dict[str, Path],
    tmp_path: Path,
    options: list[str],
    match: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = [str(tmp_path / o) if o.endswith(".docx") else o for o in options]
    code = main(
        ["evaluate", *_inputs(files), "--metrics", "dcr_share", "--quiet", *options]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "synthrisk: error:" in err
    assert pytest.importorskip("re").search(match, err)


def test_run_file_writes_the_record(files: dict[str, Path], tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "version: 1\n"
        f"data: {{real: {files['real']}, synthetic: {files['synthetic']}, holdout: {files['holdout']}}}\n"
        "metrics: [identification]\n"
        "context: {purpose: research, release_model: enclave, population_size: 100000}\n"
        "report: {json: out/report.json, record: out/record.html}\n"
    )
    assert main(["run", str(config), "--quiet"]) in (0, 1)
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert data["context"]["release_model"] == "enclave"
    page = (tmp_path / "out" / "record.html").read_text()
    assert "synthrisk run" in page
    assert "research" in page
