# SPDX-License-Identifier: BSD-3-Clause
"""The release policy on the command line and in run files, and the copied-people
finding in the terminal summary and the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.cli import main
from synthrisk.datasets.calibration import continuous_data

#: a column name that would run script if the page did not escape it
EVIL = "<img src=x onerror=alert(1)>"
ROWS = 1500
#: the training rows copied into the synthetic table, and where the copies are
COPIED = range(100, 108)
COPIES = range(8)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Training, holdout and synthetic thirds of one population; 8 synthetic rows are
    exact copies of training rows (too few for the holdout test, more than chance)."""
    folder = tmp_path_factory.mktemp("policy")
    rng = np.random.default_rng(0)
    frame = continuous_data(3 * ROWS, rng)
    frame["score"] = rng.normal(size=len(frame))  # full-precision values to look for
    frame = frame.rename(columns={"group": EVIL})
    real, holdout, synthetic = (
        frame.iloc[i * ROWS : (i + 1) * ROWS].reset_index(drop=True) for i in range(3)
    )
    synthetic = synthetic.copy()
    synthetic.iloc[list(COPIES)] = real.iloc[list(COPIED)].to_numpy()
    paths = {}
    for name, table in (("real", real), ("holdout", holdout), ("synthetic", synthetic)):
        paths[name] = folder / f"{name}.csv"
        table.to_csv(paths[name], index=False)
    return paths


def _evaluate(files: dict[str, Path], *extra: str) -> list[str]:
    return [
        "evaluate", "--real", str(files["real"]), "--synthetic", str(files["synthetic"]),
        "--holdout", str(files["holdout"]), "--metrics", "identification,dcr_share",
        *extra,
    ]  # fmt: skip


def _copied_values(files: dict[str, Path]) -> list[str]:
    """The full-precision ``score`` of each copied synthetic row, as text."""
    synthetic = pd.read_csv(files["synthetic"])
    return [f"{float(synthetic['score'].iloc[i]):.15g}" for i in COPIES]


def test_strict_policy_fails_the_gate_where_statistical_asks_for_review(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "statistical.json"
    argv = _evaluate(files, "--fail-on", "fail", "--json", str(out))
    assert main([*argv, "--policy", "statistical"]) == 0
    printed = capsys.readouterr().out
    verdict = json.loads(out.read_text())["verdict"]
    assert verdict["policy"] == "statistical"
    assert verdict["overall"] == "review"
    assert [f["level"] for f in verdict["findings"]] == ["review"]
    # the finding comes right after the overall verdict, before the metric table
    start = printed.index("Overall verdict: review")
    finding = printed.index("Finding: Copied people review")
    assert start < finding < printed.index("synthrisk results")
    for row in COPIES:
        assert f"synthetic row {row}" in printed[finding:]
    assert "Next step:" in printed

    strict = tmp_path / "strict.json"
    argv = _evaluate(files, "--fail-on", "fail", "--json", str(strict))
    assert main([*argv, "--policy", "strict"]) == 1
    captured = capsys.readouterr()
    assert "gate failed" in captured.err
    assert "Finding: Copied people fail (strict policy)" in captured.out
    verdict = json.loads(strict.read_text())["verdict"]
    assert verdict["policy"] == "strict"
    assert verdict["overall"] == "fail"
    # statistical is the default
    default = tmp_path / "default.json"
    assert main([*_evaluate(files, "--json", str(default), "--quiet")]) == 0
    assert json.loads(default.read_text())["verdict"]["policy"] == "statistical"


def test_html_shows_the_findings_first_without_values_unless_asked(
    files: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    saved = tmp_path / "report.json"
    argv = _evaluate(files, "--policy", "strict", "--html", str(page))
    assert main([*argv, "--json", str(saved), "--quiet"]) == 0
    html = page.read_text()
    findings = html.index('<section id="findings">')
    assert html.index('id="verdict"') < findings < html.index("<th>metric</th>")
    block = html[findings : html.index("</section>", findings)]
    assert '<span class="badge fail">fail</span>' in block
    assert "strict policy" in block
    for row in COPIES:
        assert f'<td class="mono">{row}</td>' in block
    for row in COPIED:
        assert f'<td class="mono">{row}</td>' in block
    assert "expected by chance" in block
    assert "assumption" in block
    assert "Next step:" in block
    assert "Release policy in force: strict" in html
    assert "most isolated 1–5 %" in html
    # no record values (not even the heading of their table), and the column name is
    # text, not markup
    assert "Values of the copying synthetic rows" not in html
    for value in _copied_values(files):
        assert value not in html
    assert EVIL not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html

    # re-rendered with the values: the copying synthetic rows' values, still escaped
    shown = tmp_path / "values.html"
    inputs = [f"--{name}={path}" for name, path in files.items()]
    rerender = ["report", str(saved), "--html", str(shown), "--include-values"]
    assert main([*rerender, "--policy", "strict", *inputs, "--quiet"]) == 0
    with_values = shown.read_text()
    block = with_values[with_values.index('<section id="findings">') :]
    block = block[: block.index("</section>")]
    assert "Values of the copying synthetic rows" in block
    for value in _copied_values(files):
        assert value in block
    assert EVIL not in with_values


def test_run_file_policy_reaches_the_verdict(
    files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "run.json"
    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {{real: {files['real']}, synthetic: {files['synthetic']}, "
        f"holdout: {files['holdout']}}}\n"
        "metrics: [identification, dcr_share]\n"
        f"report: {{json: {out}}}\n"
        "policy: strict\n"
        "gate: fail\n"
    )
    assert main(["run", str(config), "--quiet"]) == 1
    verdict = json.loads(out.read_text())["verdict"]
    assert verdict["policy"] == "strict"
    assert verdict["findings"][0]["level"] == "fail"
    # --policy on the command line overrides the file's
    assert main(["run", str(config), "--quiet", "--policy", "statistical"]) == 0
    assert json.loads(out.read_text())["verdict"]["policy"] == "statistical"


def test_a_bad_policy_is_a_usage_error_naming_the_choices(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_evaluate(files, "--policy", "lenient")) == 2
    err = capsys.readouterr().err
    assert "--policy" in err
    assert "'statistical'" in err
    assert "'strict'" in err

    config = tmp_path / "run.yaml"
    config.write_text(
        f"data: {{real: {files['real']}, synthetic: {files['synthetic']}}}\n"
        "policy: lenient\n"
    )
    assert main(["run", str(config), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "`policy` must be one of ['statistical', 'strict']" in err
    assert "'lenient'" in err

    config.write_text(
        f"data: {{real: {files['real']}, synthetic: {files['synthetic']}}}\n"
        "policy: strict\nthresholds: {policy: statistical}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 2
    assert "give the release policy once" in capsys.readouterr().err
