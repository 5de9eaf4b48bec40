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
            r"unknown keys \['extra'\]; allowed keys are \['version', 'data', 'seed', 'metrics', 'compute', 'report', 'thresholds', 'gate', 'self_test'\]",
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
            r"`report` has unknown keys \['htm'\]; allowed keys are \['json', 'html', 'include_records', 'include_values', 'top_n'\]",
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
