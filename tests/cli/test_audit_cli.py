# SPDX-License-Identifier: BSD-3-Clause
"""``synthrisk audit``: a generator audited from files, its pages written, the gate's exit code."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.cli.main import main

GENERATORS = '''
import pandas as pd


def copier(train, n, seed):
    """Outputs its training rows: every target that joins is in the output."""
    return train.sample(n, replace=True, random_state=seed).reset_index(drop=True)


def fresh(train, n, seed):
    """Outputs rows of its own population, whatever it was trained on."""
    import numpy as np

    g = np.random.default_rng(10_000 + seed)
    return pd.DataFrame({"x": g.normal(size=n).round(3), "c": g.choice(list("abc"), n)})
'''


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    g = np.random.default_rng(0)
    paths = {}
    for name, n in (("real", 60), ("holdout", 160)):
        frame = pd.DataFrame(
            {"x": g.normal(size=n).round(3), "c": g.choice(list("abc"), n)}
        )
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    (tmp_path / "my_generators.py").write_text(textwrap.dedent(GENERATORS))
    monkeypatch.syspath_prepend(str(tmp_path))
    return paths


def _audit(files: dict[str, Path], tmp_path: Path, *extra: str) -> int:
    return main(
        [
            "audit",
            "--real", str(files["real"]),
            "--holdout", str(files["holdout"]),
            "--targets", "4",
            "--runs", "40",
            "--train-size", "30",
            "--attacks", "dcr",
            "--json", str(tmp_path / "audit.json"),
            "--html", str(tmp_path / "audit.html"),
            "--quiet",
            *extra,
        ]
    )  # fmt: skip


def test_a_copying_generator_fails_the_gate(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _audit(
        files, tmp_path, "--generator", "my_generators:copier", "--max-epsilon", "0.1"
    )
    assert code == 1
    # --quiet: no progress bar or table, but the verdict
    out = capsys.readouterr().out
    assert out.startswith("fail: ")
    assert len(out.splitlines()) == 1
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["kind"] == "generator_audit"
    assert data["epsilon_lower"] > 0.1
    assert data["verdict"]["passed"] is False
    assert data["inputs"]["real"]["rows"] == 60
    assert len(data["inputs"]["holdout"]["sha256"]) == 64
    page = (tmp_path / "audit.html").read_text()
    assert '<span class="badge fail">fail</span>' in page
    # targets by row number, never their values
    real = pd.read_csv(files["real"])
    for row in (t["row"] for t in data["targets"]):
        assert f"{real.loc[row, 'x']:.3f}" not in page


def test_a_generator_of_new_people_passes(
    files: dict[str, Path], tmp_path: Path
) -> None:
    code = _audit(
        files, tmp_path, "--generator", "my_generators:fresh", "--max-epsilon", "0.5"
    )
    assert code == 0
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["epsilon_lower"] <= 0.5
    assert data["verdict"]["passed"] is True


def test_a_command_template_runs_a_generator_in_another_process(
    files: dict[str, Path], tmp_path: Path
) -> None:
    script = tmp_path / "gen.py"
    script.write_text(
        "import sys, pandas as pd\n"
        "args = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
        "t = pd.read_csv(args['--train'])\n"
        "t.sample(int(args['--rows']), replace=True, random_state=int(args['--seed']))"
        ".to_csv(args['--out'], index=False)\n"
    )
    command = f"{sys.executable} {script} --train {{train}} --out {{out}} --rows {{n}} --seed {{seed}}"
    code = main(
        [
            "audit", "--real", str(files["real"]), "--holdout", str(files["holdout"]),
            "--generator-cmd", command, "--targets", "2", "--runs", "10",
            "--train-size", "30", "--attacks", "dcr", "--json", str(tmp_path / "a.json"), "--quiet",
        ]
    )  # fmt: skip
    assert code == 0
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["runs"]["completed"] == 10
    assert data["verdict"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--generator", "my_generators:copier", "--budget", "soon"],
            "`--budget` must be a time",
        ),
        (["--generator", "no_such_module:f"], "cannot import 'no_such_module'"),
        (["--generator", "my_generators"], "must be sdv:NAME or module:function"),
        (
            ["--generator", "my_generators:copier", "--target-rows", "1,x"],
            "`--target-rows`",
        ),
        (
            ["--generator", "my_generators:copier", "--run-timeout", "soon"],
            "`--run-timeout` must be a time",
        ),
        (
            ["--generator", "my_generators:copier", "--generator-param", "novalue"],
            "`--generator-param` must be KEY=VALUE",
        ),
        (
            ["--generator", "m:f", "--generator-python", "/no/such/python"],
            "not an interpreter found",
        ),
    ],
)
def test_bad_options_are_usage_errors(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    assert _audit(files, tmp_path, *extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "audit.json").exists()


def test_a_budget_in_runs_caps_the_runs(files: dict[str, Path], tmp_path: Path) -> None:
    assert (
        _audit(files, tmp_path, "--generator", "my_generators:fresh", "--budget", "12")
        == 0
    )
    assert json.loads((tmp_path / "audit.json").read_text())["runs"]["completed"] == 12


def test_a_yaml_run_file_audits_a_generator(
    files: dict[str, Path], tmp_path: Path
) -> None:
    config = tmp_path / "audit.yaml"
    config.write_text(
        "version: 1\n"
        "data: {real: real.csv, holdout: holdout.csv}\n"
        "seed: 3\n"
        "audit: {generator: 'my_generators:copier', targets: 4, runs: 60, train_size: 30,\n"
        "        attacks: [dcr], budget: 40, max_epsilon: 0.1}\n"
        "report: {json: out/audit.json}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 1
    data = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert data["runs"]["completed"] == 40  # the budget in runs caps the runs
    assert data["settings"]["seed"] == 3
    assert data["verdict"]["passed"] is False


def test_another_interpreter_runs_the_generator_with_a_cache(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the other interpreter imports my_generators from here
    cache = tmp_path / "cache"
    args = [
        "--generator", "my_generators:copier",
        "--generator-python", sys.executable,
        "--run-timeout", "5m",
        "--cache", str(cache),
        "--budget", "8",
    ]  # fmt: skip
    assert _audit(files, tmp_path, *args) == 0
    first = json.loads((tmp_path / "audit.json").read_text())
    assert first["generator"].startswith("python: my_generators:copier in ")
    assert first["runs"]["completed"] == 8
    assert first["settings"]["run_timeout"] == 300.0
    assert len(list(cache.rglob("*.pkl"))) == 8
    assert _audit(files, tmp_path, *args[:-1], "10") == 0
    again = json.loads((tmp_path / "audit.json").read_text())
    assert again["runs"]["cached"] == 8
    assert again["runs"]["completed"] == 10


def test_an_audit_too_small_for_its_claim_reads_review(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 40 runs of 4 targets cannot refute ε = 20 even with a perfect attack: review
    args = ("--generator", "my_generators:fresh", "--max-epsilon", "20")
    assert _audit(files, tmp_path, *args) == 0
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["verdict"]["level"] == "review"
    assert data["verdict"]["passed"] is True
    assert data["verdict"]["reachable"] < 20
    assert _audit(files, tmp_path, *args, "--fail-on", "review") == 1
    assert "reads review" in capsys.readouterr().err
    assert "review" in (tmp_path / "audit.html").read_text()


def test_a_run_file_gate_of_review_fails_an_audit_that_reads_review(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "audit.yaml"
    block = (
        "audit: {generator: 'my_generators:fresh', max_epsilon: 20, targets: 4, runs: 40,\n"
        "        train_size: 30, attacks: [dcr]}\n"
    )
    data = "data: {real: real.csv, holdout: holdout.csv}\n"
    config.write_text(data + block + "gate: review\n")
    assert main(["run", str(config), "--quiet"]) == 1
    config.write_text(data + block)
    assert main(["run", str(config), "--quiet"]) == 0
    config.write_text(data + block + "gate: warn\n")
    assert main(["run", str(config), "--quiet"]) == 2
    assert "`gate` must be 'review' or 'fail'" in capsys.readouterr().err


def test_the_runs_go_to_a_dask_scheduler(
    files: dict[str, Path], tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    code = _audit(files, tmp_path, "--generator", "my_generators:copier")
    assert code == 0
    local = json.loads((tmp_path / "audit.json").read_text())
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    ) as cluster:
        code = _audit(
            files,
            tmp_path,
            "--generator", "my_generators:copier",
            "--scheduler", cluster.scheduler_address,
            "--run-timeout", "none",
        )  # fmt: skip
    assert code == 0
    on_dask = json.loads((tmp_path / "audit.json").read_text())
    assert on_dask["settings"]["dask"] is True
    assert on_dask["settings"]["n_jobs"] == 2
    assert on_dask["epsilon_lower"] == local["epsilon_lower"]
    assert on_dask["overall"] == local["overall"]


def test_a_yaml_run_file_with_another_interpreter_and_params(
    files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shifted.py").write_text(
        "def fit_sample(train, n, seed, shift=0.0):\n"
        "    out = train.sample(n, replace=True, random_state=seed)\n"
        "    out['x'] = out['x'] + shift\n"
        "    return out\n"
    )
    config = tmp_path / "audit.yaml"
    config.write_text(
        "data: {real: real.csv, holdout: holdout.csv}\n"
        f"audit: {{generator: 'shifted:fit_sample', generator_python: '{sys.executable}',\n"
        "        generator_params: {shift: 1000.0}, run_timeout: 120, cache: runs,\n"
        "        targets: 3, runs: 6, train_size: 30, attacks: [dcr]}\n"
        "report: {json: out/audit.json}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 0
    data = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert data["runs"]["completed"] == 6
    # every output is shifted far away: no attack refutes anything
    assert data["overall"]["dcr"]["auc"] == pytest.approx(0.5, abs=0.25)
    assert len(list((tmp_path / "runs").rglob("*.pkl"))) == 6


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("{targets: 3}", "needs exactly one of `generator`"),
        ("{generator: 'x:y', run_timeout: soon}", "`audit.run_timeout` must be a time"),
        (
            "{generator_cmd: 'g {train} {out}', generator_python: python}",
            "`audit.generator_python`",
        ),
        (
            "{generator: 'x:y', generator_params: [1]}",
            "`audit.generator_params` must be",
        ),
        ("{generator: 'x:y', generator_cmd: 'z'}", "needs exactly one of `generator`"),
        ("{generator: 'x:y', budget: soon}", "`audit.budget` must be a time"),
        ("{generator: 'x:y', runz: 3}", "unknown keys ['runz']"),
        (
            "{generator: 'x:y', scheduler: 5}",
            "`audit.scheduler` must be a Dask scheduler",
        ),
    ],
)
def test_a_bad_audit_block_is_a_usage_error(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    block: str,
    message: str,
) -> None:
    config = tmp_path / "audit.yaml"
    config.write_text(
        f"data: {{real: real.csv, holdout: holdout.csv}}\naudit: {block}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 2
    assert message in capsys.readouterr().err


#: generators that never give a usable table: a crash with a message, a program that
#: exits 0 and writes nothing, and one that writes a table of other columns
BROKEN = {
    "crash": (
        "import sys; print('loading the model'); "
        "print('Traceback (most recent call last):', file=sys.stderr); "
        "print('ValueError: the model diverged at epoch 3', file=sys.stderr); sys.exit(3)"
    ),
    "silent": "import sys",
    "wrong_columns": (
        "import sys, pandas as pd; "
        "pd.DataFrame(dict(a=[1, 2, 3], b=[4, 5, 6])).to_csv(sys.argv[2], index=False)"
    ),
}
BROKEN_MESSAGE = {
    "crash": "ValueError: the model diverged at epoch 3",
    "silent": "exited normally but wrote no table",
    "wrong_columns": "the generator's output lacks the columns ['x', 'c']",
}


def _broken_command(kind: str) -> str:
    return f'{sys.executable} -c "{BROKEN[kind]}" {{train}} {{out}}'


@pytest.mark.parametrize("gate", [False, True])
@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_generator_that_never_works_is_reported_not_gated(
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    gate: bool,
) -> None:
    extra = ["--max-epsilon", "1"] if gate else []
    code = main(
        [
            "audit", "--real", str(files["real"]), "--holdout", str(files["holdout"]),
            "--generator-cmd", _broken_command(kind), "--targets", "2", "--runs", "4",
            "--train-size", "20", "--attacks", "dcr", "--json", str(tmp_path / "a.json"),
            *extra,
        ]
    )  # fmt: skip
    assert code == 4  # the audit tested nothing: neither a pass nor a gate failure
    captured = capsys.readouterr()
    text = captured.out + captured.err
    # the generator's own error (for a crash, the end of its standard error) is shown
    assert BROKEN_MESSAGE[kind] in text
    assert "0 of 4 shadow runs completed; 4 failed: runs 0, 1, 2 and 3" in text
    assert "synthrisk: error: the audit tested nothing" in captured.err
    assert ("cannot be judged" in captured.err) is gate
    assert "is above the largest acceptable" not in text
    assert "0 shadow runs" not in text
    assert ".." not in text.replace("...", "")
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["runs"]["completed"] == 0
    assert data["runs"]["failed"] == 4
    # retried counts the runs whose retry succeeded: the retries list
    assert data["runs"]["retried"] == len(data["retries"]) == 0
    assert [f["run"] for f in data["failures"]] == [0, 1, 2, 3]
    assert all(BROKEN_MESSAGE[kind] in f["error"] for f in data["failures"])
    if gate:
        assert data["verdict"]["passed"] is False
        assert "no evaluation run completed" in data["verdict"]["reason"]
        assert "4 failed: runs 0, 1, 2 and 3" in data["verdict"]["reason"]


def test_failed_runs_are_named_in_the_review_and_on_the_console(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # runs that train on no target fail twice (a quarter of them), and some first
    # attempts fail (seeds divisible by 5), then succeed with the retry seed
    script = tmp_path / "flaky.py"
    script.write_text(
        "import sys, pandas as pd\n"
        "train, out, n, seed = sys.argv[1:5]\n"
        "t = pd.read_csv(train)\n"
        "if len(t) == 30 or int(seed) % 5 == 0:\n"
        "    print('flaky: seed ' + seed, file=sys.stderr)\n"
        "    sys.exit(1)\n"
        "t.sample(int(n), replace=True, random_state=int(seed)).to_csv(out, index=False)\n"
    )
    command = f"{sys.executable} {script} {{train}} {{out}} {{n}} {{seed}}"
    code = main(
        [
            "audit", "--real", str(files["real"]), "--holdout", str(files["holdout"]),
            "--generator-cmd", command, "--targets", "2", "--runs", "12",
            "--train-size", "30", "--attacks", "dcr", "--json", str(tmp_path / "a.json"),
            "--max-epsilon", "100", "--fail-on", "review", "--quiet",
        ]
    )  # fmt: skip
    data = json.loads((tmp_path / "a.json").read_text())
    captured = capsys.readouterr()
    assert data["runs"]["retried"] == len(data["retries"])
    failed = [f["run"] for f in data["failures"]]
    assert failed, "the fixture should make some runs fail twice"
    assert data["runs"]["failed"] == len(failed)
    assert code == 1
    reason = data["verdict"]["reason"]
    assert data["verdict"]["level"] == "review"
    # both reasons: the reach and the failed runs, named
    assert "could not have refuted it" in reason
    assert len(failed) >= 2
    listed = ", ".join(str(r) for r in failed[:-1]) + f" and {failed[-1]}"
    assert f"{len(failed)} failed: runs {listed}" in reason
    assert "flaky: seed" in captured.out  # the generator's own standard error
    assert ".." not in (captured.out + captured.err).replace("...", "")


def test_canaries_from_the_command_line_and_a_run_file(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "audit",
            "--real", str(files["real"]),
            "--holdout", str(files["holdout"]),
            "--generator", "my_generators:copier",
            "--targets", "2",
            "--canaries", "3",
            "--runs", "20",
            "--train-size", "30",
            "--attacks", "dcr",
            "--json", str(tmp_path / "audit.json"),
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "3 canaries" in out  # their own table of attacks
    assert "ε lower bounds side by side: real people" in out
    data = json.loads((tmp_path / "audit.json").read_text())
    assert data["settings"]["n_canaries"] == 3
    assert data["canaries"]["n_canaries"] == 3
    assert [t["source"] for t in data["targets"]] == ["vulnerable"] * 2 + ["canary"] * 3
    config = tmp_path / "audit.yaml"
    config.write_text(
        "version: 1\n"
        "data: {real: real.csv, holdout: holdout.csv}\n"
        "audit: {generator: 'my_generators:copier', targets: 2, canaries: 3, runs: 20,\n"
        "        train_size: 30, attacks: [dcr]}\n"
        "report: {json: out/audit.json}\n"
    )
    assert main(["run", str(config), "--quiet"]) == 0
    from_file = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert from_file["settings"]["n_canaries"] == 3
    assert from_file["canaries"]["epsilon_lower"] == data["canaries"]["epsilon_lower"]
