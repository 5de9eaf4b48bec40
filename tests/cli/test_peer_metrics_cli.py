# SPDX-License-Identifier: BSD-3-Clause
"""The peers' measures run from a YAML file through the CLI and land in the JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from synthrisk.cli.main import main

CONFIG = """
version: 1
data: {real: real.csv, synthetic: synthetic.csv, holdout: holdout.csv}
seed: 3
metrics:
  disco: {keys: [age, sex], target: income}
  replicated_uniques: {keys: [age, sex, zip]}
  unique_exact_matches: {}
  apparent_match_distribution: {quasi_identifiers: [age, sex]}
  k_anonymity: {quasi_identifiers: [age, sex], sensitive: [income], k: 3}
  epsilon_identifiability: {variant: syntheval}
  domias: {density: prior}
  monte_carlo_membership: {max_neighbors: 20}
  collision_membership: {}
  dcr_share: {column_subsets: worst, n_permutations: 19}
report: {json: out/report.json}
"""


def test_yaml_run_writes_every_peer_measure(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(18, 80, n),
                "sex": rng.choice(["f", "m"], n),
                "zip": rng.integers(0, 20, n),
                "income": rng.choice(["low", "high"], n),
                "x": rng.normal(size=n),
            }
        )

    for name, n in (("real", 300), ("synthetic", 300), ("holdout", 200)):
        table(n).to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "run.yaml").write_text(CONFIG)
    code = main(["run", str(tmp_path / "run.yaml")])
    assert code in (0, 1)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    results = {r["metric"]: r for r in report["results"]}
    assert set(results) == {
        "disco", "replicated_uniques", "unique_exact_matches", "apparent_match_distribution", "k_anonymity",
        "epsilon_identifiability", "domias", "monte_carlo_membership", "collision_membership", "dcr_share",
    }  # fmt: skip
    for metric_id, result in results.items():
        assert result["score"] is not None, metric_id
    assert "control" in results["disco"]["breakdown"]
    assert "empirical_epsilon" in results["domias"]["breakdown"]
    assert results["k_anonymity"]["breakdown"]["class_values"].startswith("withheld")
