# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthrisk.cli import main
from synthrisk.compat.petsard import (
    PETSARD_COLUMNS,
    fill_missing_petsard,
    petsard_outputs,
    petsard_schema_to_metadata,
)
from synthrisk.compat.petsard.parse import (
    PETSARD_MISSING_NUMERIC,
    PetsardConfig,
    PetsardExperiment,
    PetsardReporter,
    PetsardRun,
)
from synthrisk.exceptions import ConfigError
from synthrisk.pipeline import load_run_file as load_config
from synthrisk.results import EvaluationReport, MetricResult, RecordScores

SAMPLE = Path(__file__).parent / "data" / "adults_sample"

# The three examples of PETsARD's documentation (spec 002) in one file, with the paths
# pointing at local files and the benchmark's column names mapped onto the Anonymeter
# Adult files' names (workclass -> type_employer, marital-status -> marital,
# gender -> sex, native-country -> country).
SPEC_EXAMPLE = """\
Splitter:
  external_split:
    method: custom_data
    filepath:
      ori: {ori}
      control: {control}
Synthesizer:
  external_data:
    method: custom_data
    filepath: {syn}
Evaluator:
  singling_out_risk:
    method: anonymeter-singlingout
    n_attacks: 400 # Number of attacks (default: 2,000)
    n_cols: 3 # Columns per query (default: 3)
    max_attempts: 4000 # Maximum attempts (default: 500,000)
  linkability_risk:
    method: anonymeter-linkability
    max_n_attacks: true # Use control dataset size (default: true)
    n_neighbors: 1 # Nearest neighbors (default: 1)
    aux_cols: # Auxiliary columns (default: None)
      - # First list: Public data columns
        - type_employer
        - education
        - occupation
        - race
        - sex
      - # Second list: Private data columns
        - age
        - marital
        - relationship
        - country
        - income
  inference_risk:
    method: anonymeter-inference
    max_n_attacks: true # Use control dataset size (default: true)
    secret: income # Sensitive column to infer (required)
Reporter:
  save_report:
    method: save_report
    granularity: [global, details]
"""


def _spec_config(tmp_path: Path, folder: Path = SAMPLE) -> Path:
    path = tmp_path / "petsard.yaml"
    path.write_text(
        SPEC_EXAMPLE.format(
            ori=folder / "ori.csv",
            control=folder / "control.csv",
            syn=folder / "syn.csv",
        )
    )
    return path


def test_spec_example_maps_onto_synthrisk_metrics(
    tmp_path: Path, fake_anonymeter: None
) -> None:
    config = load_config(_spec_config(tmp_path))
    assert isinstance(config, PetsardConfig)
    (exp,) = config.experiments
    assert (exp.splitter, exp.synthesizer) == ("external_split", "external_data")
    assert exp.real == SAMPLE / "ori.csv"
    assert exp.holdout == SAMPLE / "control.csv"
    assert exp.synthetic == SAMPLE / "syn.csv"
    by_name = {e.name: e for e in config.evaluators}
    assert [e.name for e in config.evaluators] == [
        "singling_out_risk",
        "linkability_risk",
        "inference_risk",
    ]
    assert by_name["singling_out_risk"].metric == "singling_out"
    assert dict(by_name["singling_out_risk"].params) == {
        "n_attacks": 400, "n_cols": 3, "max_attempts": 4000, "mode": "multivariate",
    }  # fmt: skip
    # max_n_attacks: true -> attack as many rows as the control table holds (synthrisk's None)
    assert dict(by_name["linkability_risk"].params) == {
        "aux_cols": [
            ["type_employer", "education", "occupation", "race", "sex"],
            ["age", "marital", "relationship", "country", "income"],
        ],
        "n_attacks": None,
        "n_neighbors": 1,
    }
    assert dict(by_name["inference_risk"].params) == {
        "secret": "income",
        "aux_cols": None,
        "n_attacks": None,
    }
    (reporter,) = config.reporters
    assert reporter.granularities == ("global", "details")
    assert reporter.output == tmp_path / "petsard"
    assert config.json == tmp_path / "petsard[Report]_synthrisk.json"
    assert config.html == tmp_path / "petsard[Report]_synthrisk.html"
    assert config.seed == 0
    assert config.csv_digits == 2


def test_petsard_defaults_follow_petsard(tmp_path: Path, fake_anonymeter: None) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "Splitter: {s: {method: custom_data, filepath: {ori: a.csv, control: b.csv}}}\n"
        "Synthesizer: {y: {method: custom_data, filepath: c.csv}}\n"
        "Evaluator:\n"
        "  so: {method: anonymeter-singlingout}\n"
        "  inf: {method: anonymeter-inference, secret: income, max_n_attacks: false, aux_cols: [age, sex]}\n"
        "  link: {method: anonymeter-linkability, aux_cols: [[a], [b]], max_n_attacks: false, n_attacks: 50, n_jobs: 4}\n"
        "synthrisk: {seed: 7, missing: petsard, csv_digits: null, json: out/r.json, gate: fail}\n"
    )
    config = load_config(path)
    assert isinstance(config, PetsardConfig)
    params = {e.name: dict(e.params) for e in config.evaluators}
    # PETsARD's code defaults: 2000 attacks, 3 columns; synthrisk's attempts (PETsARD's
    # 500 000 only with a compat mode, see test_petsard_example.py)
    assert params["so"] == {
        "n_attacks": 2000,
        "n_cols": 3,
        "max_attempts": 10_000_000,
        "mode": "multivariate",
    }
    assert params["inf"] == {
        "secret": "income",
        "aux_cols": ["age", "sex"],
        "n_attacks": 2000,
    }
    assert params["link"]["n_attacks"] == 50
    assert (config.seed, config.missing, config.csv_digits, config.gate) == (
        7,
        "petsard",
        None,
        "fail",
    )
    assert config.json == tmp_path / "out" / "r.json"
    assert config.reporters == ()
    assert any("`n_jobs` was ignored" in note for note in config.notes)


def test_inference_closeness_and_its_old_name(tmp_path: Path) -> None:
    # synthrisk's own `closeness` passes through; its old name `tolerance` still works
    # for one release, with a deprecation warning, and becomes `closeness`
    from synthrisk.exceptions import SynthriskDeprecationWarning

    head = (
        "Splitter: {s: {method: custom_data, filepath: {ori: a.csv, control: b.csv}}}\n"
        "Synthesizer: {y: {method: custom_data, filepath: c.csv}}\n"
        "Evaluator:\n"
    )
    path = tmp_path / "p.yaml"
    path.write_text(
        head + "  inf: {method: anonymeter-inference, secret: income, closeness: 0.1}\n"
    )
    config = load_config(path)
    assert isinstance(config, PetsardConfig)
    assert config.evaluators[0].params["closeness"] == 0.1
    path.write_text(
        head + "  inf: {method: anonymeter-inference, secret: income, tolerance: 0.1}\n"
    )
    with pytest.warns(SynthriskDeprecationWarning, match="renamed `closeness`"):
        old = load_config(path)
    assert isinstance(old, PetsardConfig)
    assert dict(old.evaluators[0].params) == dict(config.evaluators[0].params)
    path.write_text(
        head
        + "  inf: {method: anonymeter-inference, secret: income, tolerance: 0.1, closeness: 0.1}\n"
    )
    with pytest.raises(ConfigError, match="give `closeness` only"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (
            "Loader: {l: {filepath: a.csv}}\n",
            r"`Loader`: synthrisk evaluates data that is already split",
        ),
        (
            "Splitter: {s: {num_samples: 3, train_split_ratio: 0.8}}\n",
            r"`Splitter.s`.method: synthrisk reads pre-split data only",
        ),
        (
            "Splitter: {s: {method: custom_data, filepath: {ori: 'benchmark://adult-income_ori', control: b.csv}}}\n",
            r"`Splitter.s`.filepath.ori: 'benchmark://adult-income_ori' names a PETsARD benchmark dataset",
        ),
        (
            "{base}Synthesizer: {{y: {{method: sdv-single_table-ctgan}}}}\n",
            r"`Synthesizer.y`.method: synthrisk evaluates synthetic data that already exists",
        ),
        (
            "{base}{synth}Evaluator: {{q: {{method: sdmetrics-qualityreport}}}}\n",
            r"`Evaluator.q`.method: 'sdmetrics-qualityreport' is not supported by synthrisk",
        ),
        (
            "{base}{synth}Evaluator: {{l: {{method: anonymeter-linkability, aux_cols: [[age, sex], [sex, income]]}}}}\n",
            r"`Evaluator.l`.aux_cols: the two lists overlap in \['sex'\]; they must be disjoint \(PETsARD rejects",
        ),
        (
            "{base}{synth}Evaluator: {{l: {{method: anonymeter-linkability, aux_cols: [age, sex]}}}}\n",
            r"`Evaluator.l`.aux_cols: must be two non-empty lists of column names",
        ),
        (
            "{base}{synth}Evaluator: {{i: {{method: anonymeter-inference, secret: income, aux_cols: [age, income]}}}}\n",
            r"`Evaluator.i`.aux_cols: must not contain the secret 'income'",
        ),
        (
            "{base}{synth}Evaluator: {{i: {{method: anonymeter-inference}}}}\n",
            r"`Evaluator.i`.secret: is required",
        ),
        (
            "{base}{synth}Evaluator: {{s: {{method: anonymeter-singlingout, n_attack: 3}}}}\n",
            r"`Evaluator.s`: unknown keys \['n_attack'\]; synthrisk understands \['method', 'n_attacks'",
        ),
        (
            "{base}{synth}Evaluator: {{s: {{method: anonymeter-singlingout, n_attacks: 0}}}}\n",
            r"`Evaluator.s`: metric 'singling_out': `n_attacks` must be an integer >= 1; got 0",
        ),
        (
            "{base}{synth}{ev}Reporter: {{r: {{method: save_data, source: Synthesizer}}}}\n",
            r"`Reporter.r`.method: 'save_data' is not supported",
        ),
        (
            "{base}{synth}{ev}Reporter: {{r: {{method: save_report, granularity: everything}}}}\n",
            r"`Reporter.r`.granularity: unknown \['everything'\]",
        ),
        (
            "{base}{synth}{ev}Reporter: {{r: {{method: save_report, granularity: global, eval: nope}}}}\n",
            r"`Reporter.r`.eval: names evaluators \['nope'\] that are not in `Evaluator`",
        ),
        (
            "{base}{synth}{ev}synthrisk: {{missing: zero}}\n",
            r"`synthrisk`: `missing` must be 'keep' \(synthrisk's handling\) or 'petsard'",
        ),
        (
            "{base}{synth}{ev}synthrisk: {{thresholds: {{singling_out: {{pass: 1.5}}}}}}\n",
            r"`thresholds.singling_out.pass` must be a number in \[0, 1\]; got 1.5",
        ),
        (
            "{base}{synth}{ev}synthrisk: {{gate: maybe}}\n",
            r"`synthrisk`: `gate` must be 'review' or 'fail' \(or left out for no gate\); got 'maybe'",
        ),
        (
            "{base}{synth}{ev}Describer: {{d: {{method: describe}}}}\n",
            r"`Describer`: synthrisk does not run PETsARD's Describer",
        ),
    ],
)
def test_keys_synthrisk_cannot_honour_are_named(
    tmp_path: Path, fake_anonymeter: None, text: str, match: str
) -> None:
    base = (
        "Splitter: {s: {method: custom_data, filepath: {ori: a.csv, control: b.csv}}}\n"
    )
    synth = "Synthesizer: {y: {method: custom_data, filepath: c.csv}}\n"
    ev = "Evaluator: {so: {method: anonymeter-singlingout}}\n"
    path = tmp_path / "p.yaml"
    path.write_text(
        text.format(base=base, synth=synth, ev=ev) if "{base}" in text else text
    )
    with pytest.raises(ConfigError, match=match):
        load_config(path)


def test_missing_metric_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synthrisk.metrics import METRICS

    # a copy, so that the registry's order is unchanged afterwards (monkeypatch would
    # re-insert the metric at the end)
    monkeypatch.setattr(
        "synthrisk.metrics.METRICS",
        {k: v for k, v in METRICS.items() if k != "singling_out"},
    )
    path = tmp_path / "p.yaml"
    path.write_text(
        "Splitter: {s: {method: custom_data, filepath: {ori: a.csv, control: b.csv}}}\n"
        "Synthesizer: {y: {method: custom_data, filepath: c.csv}}\n"
        "Evaluator: {so: {method: anonymeter-singlingout}}\n"
    )
    with pytest.raises(
        ConfigError,
        match=r"`Evaluator.so`: `anonymeter-singlingout` runs synthrisk's 'singling_out'",
    ):
        load_config(path)


def test_petsard_schema_becomes_metadata_and_na_values() -> None:
    schema = {
        "id": "adult",
        "fields": {
            "age": {"type": "int"},
            "education_num": {"type": "int", "category": True},
            "type_employer": {"type": "str", "na_values": "?"},
            "email": {"type": "str", "logical_type": "email"},
            "when": {"type": "date"},
            "flag": {"type": "bool", "precision": 2},
        },
    }
    metadata, na_values = petsard_schema_to_metadata(schema)
    assert metadata == {
        "columns": {
            "age": {"kind": "numerical"},
            "education_num": {"kind": "categorical"},
            "type_employer": {"kind": "categorical"},
            "email": {"kind": "pii"},
            "when": {"kind": "datetime"},
            "flag": {"kind": "boolean"},
        }
    }
    assert na_values == {"type_employer": ["?"]}
    with pytest.raises(ConfigError, match=r"unknown type 'decimal'"):
        petsard_schema_to_metadata({"fields": {"x": {"type": "decimal"}}})


def test_schema_files_are_read_and_must_agree(
    tmp_path: Path, fake_anonymeter: None
) -> None:
    (tmp_path / "schema.yaml").write_text(
        "fields:\n  type_employer: {type: str, na_values: '?'}\n  age: {type: int}\n"
    )
    (tmp_path / "other.yaml").write_text("fields:\n  age: {type: str}\n")
    base = (
        "Splitter: {s: {method: custom_data, filepath: {ori: a.csv, control: b.csv}, "
        "schema: {ori: schema.yaml, control: schema.yaml}}}\n"
        "Evaluator: {so: {method: anonymeter-singlingout}}\n"
    )
    path = tmp_path / "p.yaml"
    path.write_text(
        base
        + "Synthesizer: {y: {method: custom_data, filepath: c.csv, schema: schema.yaml}}\n"
    )
    config = load_config(path)
    assert isinstance(config, PetsardConfig)
    (exp,) = config.experiments
    assert exp.metadata == {
        "columns": {
            "type_employer": {"kind": "categorical"},
            "age": {"kind": "numerical"},
        }
    }
    assert exp.na_values == {"type_employer": ["?"]}
    path.write_text(
        base
        + "Synthesizer: {y: {method: custom_data, filepath: c.csv, schema: other.yaml}}\n"
    )
    with pytest.raises(
        ConfigError, match=r"`Synthesizer.y`.schema: describes the columns differently"
    ):
        load_config(path)


def test_fill_missing_petsard() -> None:
    frame = pd.DataFrame(
        {
            "num": [1.5, np.nan, 3.0],
            "count": pd.array([1, None, 3], dtype="Int64"),
            "cat": ["a", None, "b"],
            "flag": pd.array([True, None, False], dtype="boolean"),
            "when": pd.to_datetime(["2020-01-01", None, "2020-01-03"]),
        }
    )
    out = fill_missing_petsard(frame)
    assert out["num"].tolist() == [1.5, PETSARD_MISSING_NUMERIC, 3.0]
    assert out["count"].dtype == np.float64
    assert out["count"].tolist() == [1.0, -999999.0, 3.0]
    assert out["cat"].tolist() == ["a", "missing", "b"]
    assert out["flag"].tolist() == [True, "missing", False]
    assert out["when"].isna().tolist() == [
        False,
        True,
        False,
    ]  # datetimes are left alone
    assert frame["cat"].isna().sum() == 1  # the input is not modified
    # kinds from the schema win over dtypes
    assert fill_missing_petsard(frame, {"num": "categorical"})["num"].tolist() == [
        1.5,
        "missing",
        3.0,
    ]


def _hand_built_runs() -> list[PetsardRun]:
    def result(metric: str, risk: float) -> MetricResult:
        breakdown = {
            "risk": risk,
            "attack_rate": {"value": 0.123456, "error": 0.011111},
            "baseline_rate": {"value": 0.004567, "error": 0.002},
            "control_rate": {"value": 0.05, "error": 0.009876},
            "petsard": {
                "risk": risk, "risk_CI_btm": risk - 0.02, "risk_CI_top": risk + 0.02, "attack_rate": 0.123456,
                "attack_rate_err": 0.011111, "baseline_rate": 0.004567, "baseline_rate_err": 0.002,
                "control_rate": 0.05, "control_rate_err": 0.009876,
            },
            "successful_queries": ["age == 41 AND race == 'Other'", "sex == 'Female' AND country == 'Peru'"],
        }  # fmt: skip
        records = {
            "singled_out_real": RecordScores(
                "real", np.array([4, 9]), np.array([0.0, 1.0]), "singled out"
            )
        }
        return MetricResult(
            metric,
            risk,
            breakdown,
            (risk - 0.02, risk + 0.02),
            higher_is_safer=False,
            records=records,
        )

    runs = []
    for synth, risk in (("ctgan", 0.0768), ("tvae", 0.1234)):
        exp = PetsardExperiment(
            "split", synth, Path("o.csv"), Path("c.csv"), Path(f"{synth}.csv")
        )
        report = EvaluationReport(
            "0.1.0",
            0,
            {},
            (result("singling_out", risk), result("linkability", risk / 2)),
        )
        runs.append(PetsardRun(exp, report, ("so_risk", "link_risk"), {}))
    return runs


def test_global_csv_has_petsards_layout_and_rounding(tmp_path: Path) -> None:
    reporter = PetsardReporter("rpt", ("global",), tmp_path / "petsard")
    outputs = petsard_outputs(_hand_built_runs(), reporter)
    (path,) = outputs
    assert path == tmp_path / "petsard[Report]_[global].csv"
    frame = pd.read_csv(pd.io.common.StringIO(outputs[path]))
    expected = ["full_expt_name", "Splitter", "Synthesizer", "Evaluator"]
    expected += [
        f"{name}_{column}"
        for name in ("so_risk", "link_risk")
        for column in PETSARD_COLUMNS
    ]
    assert list(frame.columns) == expected
    assert frame["full_expt_name"].tolist() == [
        "Splitter[split]_Synthesizer[ctgan]_Evaluator[global]",
        "Splitter[split]_Synthesizer[tvae]_Evaluator[global]",
    ]
    assert frame["Evaluator"].tolist() == ["[global]", "[global]"]
    # PETsARD rounds every number to 2 decimals
    assert frame["so_risk_risk"].tolist() == [0.08, 0.12]
    assert frame["so_risk_attack_rate"].tolist() == [0.12, 0.12]
    assert frame["link_risk_risk_CI_top"].tolist() == [0.06, 0.08]
    assert frame["so_risk_baseline_rate"].tolist() == [0.0, 0.0]
    full = petsard_outputs(_hand_built_runs(), reporter, digits=None)[path]
    assert pd.read_csv(pd.io.common.StringIO(full))["so_risk_attack_rate"].tolist() == [
        0.123456,
        0.123456,
    ]


def test_global_csv_for_chosen_evaluators_and_details(tmp_path: Path) -> None:
    reporter = PetsardReporter(
        "rpt", ("global", "details"), tmp_path / "out" / "x", evals=("link_risk",)
    )
    outputs = petsard_outputs(_hand_built_runs(), reporter)
    assert sorted(p.name for p in outputs) == [
        "x[Report]_link_risk_[details].csv",
        "x[Report]_link_risk_[global].csv",
    ]
    frame = pd.read_csv(
        pd.io.common.StringIO(
            outputs[tmp_path / "out" / "x[Report]_link_risk_[global].csv"]
        )
    )
    assert [c for c in frame.columns if c.endswith("_risk")] == ["link_risk_risk"]
    assert frame["Evaluator"].tolist() == ["link_risk_[global]"] * 2
    details = pd.read_csv(
        pd.io.common.StringIO(
            outputs[tmp_path / "out" / "x[Report]_link_risk_[details].csv"]
        )
    )
    assert list(details.columns) == [
        "full_expt_name", "Splitter", "Synthesizer", "Evaluator", "item", "table", "row", "value", "text",
    ]  # fmt: skip
    first = details[details["Synthesizer"] == "ctgan"]
    assert first["text"].dropna().tolist() == [
        "age == 41 AND race == 'Other'",
        "sex == 'Female' AND country == 'Peru'",
    ]
    assert first.loc[first["item"] == "singled_out_real", "row"].tolist() == [4, 9]


def test_petsard_run_writes_csv_json_html_and_is_repeatable(
    tmp_path: Path, fake_anonymeter: None, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _spec_config(tmp_path)
    assert main(["run", str(config), "--quiet"]) == 0
    names = sorted(
        p.name for p in tmp_path.iterdir() if p.suffix in (".csv", ".json", ".html")
    )
    assert names == [
        "petsard[Report]_[global].csv",
        "petsard[Report]_inference_risk_[details].csv",
        "petsard[Report]_linkability_risk_[details].csv",
        "petsard[Report]_singling_out_risk_[details].csv",
        "petsard[Report]_synthrisk.html",
        "petsard[Report]_synthrisk.json",
    ]
    frame = pd.read_csv(tmp_path / "petsard[Report]_[global].csv")
    for name in ("singling_out_risk", "linkability_risk", "inference_risk"):
        for column in PETSARD_COLUMNS:
            assert f"{name}_{column}" in frame.columns
    assert len(frame) == 1
    data = json.loads((tmp_path / "petsard[Report]_synthrisk.json").read_text())
    assert [r["metric"] for r in data["results"]] == [
        "singling_out",
        "linkability",
        "inference",
    ]
    assert data["inputs"]["real"]["file"] == "ori.csv"
    assert len(data["inputs"]["holdout"]["sha256"]) == 64
    html = (tmp_path / "petsard[Report]_synthrisk.html").read_text()
    assert "PETsARD view" in html
    # the same file twice gives identical outputs (the JSON differs only in timings)
    before = {
        p.name: p.read_bytes()
        for p in tmp_path.iterdir()
        if p.suffix in (".csv", ".html")
    }
    assert main(["run", str(config), "--quiet"]) == 0
    after = {
        p.name: p.read_bytes()
        for p in tmp_path.iterdir()
        if p.suffix in (".csv", ".html")
    }
    assert before == after
    again = json.loads((tmp_path / "petsard[Report]_synthrisk.json").read_text())
    for a, b in zip(data["results"], again["results"], strict=True):
        a.pop("seconds"), b.pop("seconds")
        assert a == b


def test_petsard_run_with_several_synthesizers_and_gate(
    tmp_path: Path, fake_anonymeter: None
) -> None:
    text = _spec_config(tmp_path).read_text()
    text = text.replace(
        "Synthesizer:\n  external_data:\n    method: custom_data\n",
        f"Synthesizer:\n  second:\n    method: custom_data\n    filepath: {SAMPLE / 'ori.csv'}\n"
        "  external_data:\n    method: custom_data\n",
    )
    text += "synthrisk:\n  html: out/report.html\n  gate: review\n  missing: petsard\n"
    path = tmp_path / "petsard.yaml"
    path.write_text(text)
    code = main(["run", str(path), "--quiet"])
    frame = pd.read_csv(tmp_path / "petsard[Report]_[global].csv")
    assert frame["Synthesizer"].tolist() == ["second", "external_data"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "report_external_split_external_data.html",
        "report_external_split_second.html",
    ]
    # the stand-in risks exceed the 0.09 pass limit for at least one evaluator
    assert frame.filter(like="_risk_risk").max(axis=None) > 0.09
    assert code == 1


def _find_adults() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        for candidate in (
            parent / "shared" / "data" / "adults",
            parent / "../shared/data/adults",
        ):
            if (candidate / "adults_train_reconstructed.csv").is_file():
                return candidate.resolve()
    return None


def _require_anonymeter_metrics() -> None:
    import synthrisk

    if "singling_out" not in synthrisk.METRICS:
        pytest.skip(
            "synthrisk's Anonymeter family (singling_out, linkability, inference) is not installed yet; "
            "this end-to-end test runs once it is"
        )


def test_spec_example_runs_end_to_end_on_adults(tmp_path: Path) -> None:
    """PETsARD's documented example runs unchanged (paths adapted) with synthrisk's real metrics.

    Uses the shared Adult files when they are found above the repository, else the
    committed sample (tests/compat/petsard/data/adults_sample).
    """
    _require_anonymeter_metrics()
    folder = _find_adults()
    if folder is not None:
        config = tmp_path / "petsard.yaml"
        config.write_text(
            SPEC_EXAMPLE.format(
                ori=folder / "adults_train_reconstructed.csv",
                control=folder / "adults_control.csv",
                syn=folder / "adults_syn_ctgan.csv",
            )
        )
    else:
        config = _spec_config(tmp_path)
    code = main(["run", str(config), "--quiet"])
    assert code == 0
    frame = pd.read_csv(tmp_path / "petsard[Report]_[global].csv")
    expected = ["full_expt_name", "Splitter", "Synthesizer", "Evaluator"]
    expected += [f"{name}_{column}" for name in ("singling_out_risk", "linkability_risk", "inference_risk")
                 for column in PETSARD_COLUMNS]  # fmt: skip
    assert list(frame.columns) == expected
    values = frame.filter(like="_risk_").to_numpy(dtype=float)
    assert np.isfinite(values).all()
    assert ((values >= 0) & (values <= 1)).all()
    data = json.loads((tmp_path / "petsard[Report]_synthrisk.json").read_text())
    assert [r["metric"] for r in data["results"]] == [
        "singling_out",
        "linkability",
        "inference",
    ]
    for result in data["results"]:
        assert result["higher_is_safer"] is False
        assert 0 <= result["score"] <= 1
    assert (tmp_path / "petsard[Report]_synthrisk.html").is_file()


def test_spec_example_with_real_metrics_is_repeatable(tmp_path: Path) -> None:
    """The same PETsARD file run twice gives byte-identical CSV and HTML reports."""
    _require_anonymeter_metrics()
    config = _spec_config(tmp_path)
    assert main(["run", str(config), "--quiet"]) == 0
    outputs = sorted(p for p in tmp_path.iterdir() if p.suffix in (".csv", ".html"))
    assert len(outputs) == 5
    first = {p.name: p.read_bytes() for p in outputs}
    assert main(["run", str(config), "--quiet"]) == 0
    assert {p.name: p.read_bytes() for p in outputs} == first


def test_missing_petsard_fills_only_linkability_and_inference(
    tmp_path: Path, fake_anonymeter: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synthrisk.metrics import METRICS

    seen: dict[str, pd.DataFrame] = {}
    for metric_id in ("singling_out", "inference"):
        base = METRICS[metric_id]

        def compute(self, tables, context, _base=base):  # type: ignore[no-untyped-def]
            seen[self.id] = tables.real
            return _base._compute(self, tables, context)

        monkeypatch.setitem(
            METRICS, metric_id, type(base.__name__, (base,), {"_compute": compute})
        )
    frame = pd.DataFrame(
        {
            "age": [30.0, None, 50.0, 41.0] * 5,
            "job": ["a", None, "b", "c"] * 5,
            "income": ["lo", "hi", None, "lo"] * 5,
        }
    )
    for name in ("ori", "control", "syn"):
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "p.yaml").write_text(
        "Splitter: {s: {method: custom_data, filepath: {ori: ori.csv, control: control.csv}}}\n"
        "Synthesizer: {y: {method: custom_data, filepath: syn.csv}}\n"
        "Evaluator:\n  so: {method: anonymeter-singlingout, n_attacks: 5}\n  inf: {method: anonymeter-inference, secret: income}\n"
        "synthrisk: {missing: petsard}\n"
    )
    assert main(["run", str(tmp_path / "p.yaml"), "--quiet"]) == 0
    assert (
        seen["singling_out"]["age"].isna().sum() == 5
    )  # singling out keeps missing values
    assert seen["inference"]["age"].tolist()[:4] == [30.0, -999999.0, 50.0, 41.0]
    assert seen["inference"]["job"].tolist()[:4] == ["a", "missing", "b", "c"]
    assert seen["inference"]["income"].tolist()[:4] == ["lo", "hi", "missing", "lo"]
    data = json.loads((tmp_path / "petsard[Report]_synthrisk.json").read_text())
    assert any(
        "PETsARD's missing-value handling was applied" in w for w in data["warnings"]
    )
