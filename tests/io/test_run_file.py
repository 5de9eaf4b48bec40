# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

from pathlib import Path

import pytest

from synthrisk.exceptions import ConfigError
from synthrisk.io import load_config


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_native_config_is_parsed_and_paths_resolved(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "version: 1\n"
        "data: {real: real.csv, synthetic: /abs/syn.csv, holdout: h.csv, metadata: m.json}\n"
        "seed: 4\n"
        "metrics:\n  dcr_baseline_protection: {}\n  dcr_overfitting_protection: {num_rows_subsample: null}\n"
        "report: {json: out/report.json}\n",
    )
    config = load_config(path)
    assert config.real == tmp_path / "real.csv"
    assert config.synthetic == Path("/abs/syn.csv")
    assert config.seed == 4
    assert config.metrics == {
        "dcr_baseline_protection": {},
        "dcr_overfitting_protection": {"num_rows_subsample": None},
    }
    assert config.json == tmp_path / "out" / "report.json"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "version: 1\ndata: {real: a, synthetic: b}\nextra: 1\n",
            r"unknown keys \['extra'\]; allowed keys are \['version', 'data', 'seed', 'metrics', 'params', 'compute', 'report', 'thresholds', 'gate', 'policy', 'self_test', 'context'\]",
        ),
        (
            "data: {real: a, synthetic: b, control: c}\n",
            r"`data` has unknown keys \['control'\]",
        ),
        ("data: {real: a}\n", r"`data.synthetic` is required"),
        (
            "data: {real: a, synthetic: b, holdout: c}\nself_test: yes please\n",
            r"run\.yaml: `self_test` must be true or false; got 'yes please'\.",
        ),
        (
            "data: {real: a, synthetic: b}\nself_test: true\n",
            r"`self_test: true` needs `data.holdout`",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {zz: {}}\n",
            r"`metrics.zz`: unknown metric 'zz'\. Available metrics",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {dcr_baseline_protection: {n: 1}}\n",
            r"has no parameter\(s\) \['n'\]",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {dcr_baseline_protection: {num_iterations: 0}}\n",
            r"run\.yaml: `metrics\.dcr_baseline_protection\.num_iterations`: `num_iterations` must be an integer >= 1; got 0",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {inference: {n_attacks: -5}}\n",
            r"run\.yaml: `metrics\.inference\.n_attacks`: `n_attacks` must be an integer >= 1; got -5\.$",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {singlingout: {}}\n",
            r"`metrics\.singlingout`: unknown metric 'singlingout'\. Did you mean 'singling_out' or 'singling_out_univariate'\?",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrics: {inference: {n_atacks: 5}}\n",
            r"`metrics\.inference`: metric 'inference' has no parameter\(s\) \['n_atacks'\].* Did you mean 'n_attacks'\?",
        ),
        (
            "data: {real: a, synthetic: b}\ngate: warn\n",
            r"run\.yaml: `gate` must be 'review' or 'fail' \(or left out for no gate\); got 'warn'\.",
        ),
        (
            "data: {real: a, synthetic: b}\nmetrcs: {}\n",
            r"unknown keys \['metrcs'\]; .* Did you mean 'metrics'\?",
        ),
        (
            "data: {real: a, synthetic: b}\nseed: -2\n",
            r"`seed` must be a non-negative integer",
        ),
        ("version: 2\ndata: {real: a, synthetic: b}\n", r"`version` must be 1"),
        ("data: [1, 2\n", r"not valid YAML"),
        (
            "data: {real: a, synthetic: b}\nreport: {htm: x}\n",
            r"`report` has unknown keys \['htm'\]; allowed keys are \['json', 'html', 'include_records', 'include_values', 'top_n', 'record'\]",
        ),
    ],
)
def test_bad_configs(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as caught:
        load_config(_write(tmp_path, text))
    assert "fail_on" not in str(caught.value)  # the user's keys, never internal names


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.yaml")


def test_an_old_parameter_name_warns_once_and_is_stored_under_the_new_one(
    tmp_path: Path,
) -> None:
    from synthrisk.exceptions import SynthriskDeprecationWarning

    path = _write(
        tmp_path,
        "data: {real: a, synthetic: b}\nmetrics: {inference: {secret: s, tolerance: 0.1}}\n",
    )
    with pytest.warns(SynthriskDeprecationWarning, match="renamed `closeness`") as w:
        config = load_config(path)
    assert len(w) == 1
    assert config.metrics == {"inference": {"secret": "s", "closeness": 0.1}}


def test_self_test_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "data: {real: r.csv, synthetic: s.csv, holdout: h.csv}\nself_test: true\n",
    )
    assert load_config(path).self_test is True
    plain = _write(tmp_path, "data: {real: r.csv, synthetic: s.csv}\n")
    assert load_config(plain).self_test is False


def _tables_layout(tmp_path: Path) -> None:
    for side in ("real", "synthetic", "holdout"):
        (tmp_path / side).mkdir()
    (tmp_path / "metadata.json").write_text("{}")


def test_tables_layout_is_parsed_and_paths_resolved(tmp_path: Path) -> None:
    from synthrisk.io.run_file import TablesConfig
    from synthrisk.pipeline import load_run_file

    _tables_layout(tmp_path)
    path = _write(
        tmp_path,
        "version: 1\n"
        "tables: {real: real, synthetic: synthetic, holdout: holdout,\n"
        "         metadata: metadata.json, root: customers}\n"
        "metrics: [identification, dcr_share]\n"
        "table_metrics: {identification: {}}\n"
        "seed: 4\n"
        "thresholds: {identification: {pass: 0.05, fail: 0.1}}\n"
        "report: {json: out/t.json, html: out/t.html}\n"
        "gate: fail\n",
    )
    config = load_run_file(path)
    assert isinstance(config, TablesConfig)
    assert config.real == tmp_path / "real"
    assert config.holdout == tmp_path / "holdout"
    assert config.metadata == tmp_path / "metadata.json"
    assert config.root == "customers"
    assert config.metrics == {"identification": {}, "dcr_share": {}}
    assert config.table_metrics == {"identification": {}}
    assert config.seed == 4
    assert config.json == tmp_path / "out" / "t.json"
    assert config.gate == "fail"


def test_tables_layout_without_holdout_or_options(tmp_path: Path) -> None:
    from synthrisk.io.run_file import TablesConfig
    from synthrisk.pipeline import load_run_file

    _tables_layout(tmp_path)
    config = load_run_file(
        _write(
            tmp_path,
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n",
        )
    )
    assert isinstance(config, TablesConfig)
    assert config.holdout is None
    assert config.metrics is None
    assert config.table_metrics is None
    empty = load_run_file(
        _write(
            tmp_path,
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "table_metrics: []\n",
        )
    )
    assert isinstance(empty, TablesConfig)
    assert empty.table_metrics == {}


def test_tables_layout_compute_and_table_people(tmp_path: Path) -> None:
    from synthrisk.io.run_file import TablesConfig
    from synthrisk.pipeline import load_run_file
    from synthrisk.relational import TABLE_PEOPLE

    _tables_layout(tmp_path)
    head = "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
    config = load_run_file(
        _write(
            tmp_path,
            head + "table_people: 500\n"
            "compute: {backend: numpy, working_memory: 64, scheduler: 'tcp://host:8786'}\n",
        )
    )
    assert isinstance(config, TablesConfig)
    assert (config.table_people, config.backend) == (500, "numpy")
    assert (config.working_memory, config.scheduler) == (64.0, "tcp://host:8786")
    every = load_run_file(_write(tmp_path, head + "table_people: all\n"))
    assert isinstance(every, TablesConfig)
    assert every.table_people is None
    default = load_run_file(_write(tmp_path, head))
    assert isinstance(default, TablesConfig)
    assert default.table_people == TABLE_PEOPLE == 20_000
    assert (default.backend, default.working_memory, default.scheduler) == (None,) * 3


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json, roots: x}\n",
            r"`tables` has unknown keys \['roots'\]; allowed keys are "
            r"\['real', 'synthetic', 'holdout', 'metadata', 'root'\]\. Did you mean 'root'\?",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\ndata: {}\n",
            r"run\.yaml has unknown keys \['data'\]",
        ),
        (
            "tables: {real: real, synthetic: nowhere, metadata: metadata.json}\n",
            r"`tables\.synthetic`: the folder '.*nowhere' does not exist; give a folder",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: meta.json}\n",
            r"`tables\.metadata`: the file '.*meta\.json' does not exist",
        ),
        (
            "tables: {real: real, synthetic: synthetic}\n",
            r"`tables\.metadata` is required \(the path of SDV's",
        ),
        (
            "tables: {real: real, metadata: metadata.json}\n",
            r"`tables\.synthetic` is required \(a folder holding one CSV or Parquet",
        ),
        (
            "tables: {real: 3, synthetic: synthetic, metadata: metadata.json}\n",
            r"`tables\.real` must be a path string; got 3",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json, root: [a]}\n",
            r"`tables\.root` must name the table whose rows are people",
        ),
        (
            "tables: [real, synthetic]\n",
            r"`tables` must be a mapping with keys",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "table_metrics: {singlingout: {}}\n",
            r"`table_metrics\.singlingout`: unknown metric 'singlingout'",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "metrics: [1, 2]\n",
            r"`metrics` must list metric ids or map them to parameter mappings",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "table_people: 5\n",
            r"`table_people` must be a whole number of people \(at least 10\) per side .* or "
            r"`all`; got 5",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "compute: {backend: gpu}\n",
            r"`compute\.backend` must be one of \['auto', 'numpy', 'numba', 'dask', 'torch'\]; "
            r"got 'gpu'",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "compute: {working_memory: -1}\n",
            r"`compute\.working_memory` must be a positive number of MiB; got -1",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "compute: {sample_rows: 3}\n",
            r"`compute` has unknown keys \['sample_rows'\]",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "gate: always\n",
            r"`gate` must be 'review' or 'fail'",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "seed: x\n",
            r"`seed` must be a non-negative integer",
        ),
        (
            "tables: {real: real, synthetic: synthetic, metadata: metadata.json}\n"
            "report: {json: a, top_n: 3}\n",
            r"`report` has unknown keys \['top_n'\]; allowed keys are \['json', 'html'\]",
        ),
    ],
)
def test_bad_tables_layouts(tmp_path: Path, text: str, match: str) -> None:
    from synthrisk.pipeline import load_run_file

    _tables_layout(tmp_path)
    with pytest.raises(ConfigError, match=match):
        load_run_file(_write(tmp_path, text))


def test_params_change_metrics_of_the_full_assessment(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "data: {real: a.csv, synthetic: b.csv}\nparams: {inference: {n_attacks: all}}\n"
    )
    assert load_config(path).params == {"inference": {"n_attacks": "all"}}
    path.write_text(
        "data: {real: a.csv, synthetic: b.csv}\nparams: {categorical_cap: {key_fields: [a]}}\n"
    )
    with pytest.raises(
        ConfigError, match="does not run; add 'categorical_cap' to `metrics`"
    ):
        load_config(path)


def test_context_block_and_record_are_parsed(tmp_path: Path) -> None:
    (tmp_path / "ctx.yaml").write_text(
        "recipient: analysts\nrelease_model: restricted\n"
    )
    path = tmp_path / "run.yaml"
    path.write_text(
        "data: {real: r.csv, synthetic: s.csv}\n"
        "context: {purpose: teaching, attacker_knows: [age, sex], reassess_by: 2027-06-01}\n"
        "report: {record: out/record.pdf}\n"
    )
    config = load_config(path)
    assert config.context is not None
    assert config.context.purpose == "teaching"
    assert config.context.attacker_knows == ("age", "sex")
    assert config.context.reassess_by == "2027-06-01"
    assert config.record == tmp_path / "out" / "record.pdf"
    path.write_text("data: {real: r.csv, synthetic: s.csv}\ncontext: ctx.yaml\n")
    assert load_config(path).context.release_model == "restricted"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("block", "match"),
    [
        ("context: {who: me}", r"`context` has unknown keys \['who'\]"),
        ("context: {population_share: 3}", r"population_share"),
        ("context: missing.yaml", r"does not exist"),
    ],
)
def test_bad_context_blocks(tmp_path: Path, block: str, match: str) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(f"data: {{real: r.csv, synthetic: s.csv}}\n{block}\n")
    with pytest.raises(ConfigError, match=match):
        load_config(path)
