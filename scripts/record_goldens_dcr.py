# SPDX-License-Identifier: BSD-3-Clause
"""Record golden DCR values from SDMetrics 0.32 for synthrisk's compatibility tests.

Run with a Python that has ``sdmetrics==0.32.0`` (never synthrisk's own venv)::

    benchmarks/.venvs/sdmetrics/bin/python scripts/record_goldens_dcr.py

(create the venv with ``bash ../shared/tools/ref-venvs.sh benchmarks/.venvs``). It writes
the input tables as CSV and SDMetrics' deterministic outputs (per-row DCR, median DCR
of synthetic to real, the overfitting score and shares) to ``tests/metrics/data/``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "tests" / "metrics" / "data"


def mixed_tables(seed: int) -> tuple[dict[str, pd.DataFrame], dict]:
    rng = np.random.default_rng(seed)

    def table(n: int, prefix: str) -> pd.DataFrame:
        num_f = np.round(rng.normal(50, 15, n), 2)
        num_f[rng.random(n) < 0.1] = np.nan
        dates = pd.Timestamp("2020-01-01") + pd.to_timedelta(
            rng.integers(0, 400, n), unit="D"
        )
        date_str = pd.Series(dates.strftime("%Y-%m-%d"), dtype=object)
        date_str[rng.random(n) < 0.08] = None
        cat = pd.Series(rng.choice(["a", "b", "c", "d"], n), dtype=object)
        cat[rng.random(n) < 0.1] = None
        return pd.DataFrame(
            {
                "row_id": [f"{prefix}{i}" for i in range(n)],
                "num_f": num_f,
                "num_i": rng.integers(0, 20, n),
                "const": np.full(n, 5),
                "cat": cat,
                "flag": rng.random(n) < 0.3,
                "date": date_str,
            }
        )

    real, syn, hold = table(300, "r"), table(200, "s"), table(250, "h")
    syn.iloc[:40, 1:] = real.iloc[
        :40, 1:
    ].to_numpy()  # some exact copies: zero DCRs and ties
    syn.loc[5, "num_f"] = 500.0  # outside the real range: clipped at 1
    metadata = {
        "columns": {
            "row_id": {"sdtype": "id"},
            "num_f": {"sdtype": "numerical", "computer_representation": "Float"},
            "num_i": {"sdtype": "numerical", "computer_representation": "Int64"},
            "const": {"sdtype": "numerical"},
            "cat": {"sdtype": "categorical"},
            "flag": {"sdtype": "boolean"},
            "date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        },
        "primary_key": "row_id",
    }
    return {"real": real, "synthetic": syn, "holdout": hold}, metadata


def categorical_tables(seed: int) -> tuple[dict[str, pd.DataFrame], dict]:
    rng = np.random.default_rng(seed)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "x": rng.choice(["p", "q", "r", "s", "t"], n),
                "y": rng.choice(["u", "v", "w"], n),
                "z": rng.integers(0, 40, n),
            }
        )

    real, syn, hold = table(150), table(120), table(90)
    metadata = {
        "columns": {
            "x": {"sdtype": "categorical"},
            "y": {"sdtype": "categorical"},
            "z": {"sdtype": "numerical"},
        }
    }
    return {"real": real, "synthetic": syn, "holdout": hold}, metadata


def main() -> None:
    import sdmetrics
    from sdmetrics.single_table import DCRBaselineProtection, DCROverfittingProtection
    from sdmetrics.single_table.privacy.dcr_utils import calculate_dcr

    OUT.mkdir(parents=True, exist_ok=True)
    goldens = {"sdmetrics_version": sdmetrics.__version__, "cases": {}}
    for name, (frames, metadata) in {
        "mixed": mixed_tables(7),
        "categorical": categorical_tables(11),
    }.items():
        paths = {}
        for table, frame in frames.items():
            path = OUT / f"dcr_{name}_{table}.csv"
            frame.to_csv(path, index=False)
            paths[table] = path.name
        # compute from the CSVs so both libraries see exactly the same inputs
        read = {table: pd.read_csv(OUT / p) for table, p in paths.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dcr_syn = calculate_dcr(read["synthetic"], read["real"], metadata)
            dcr_hold_ref = calculate_dcr(read["synthetic"], read["holdout"], metadata)
            base = DCRBaselineProtection.compute_breakdown(
                read["real"], read["synthetic"], metadata, None
            )
            over = DCROverfittingProtection.compute_breakdown(
                read["real"], read["synthetic"], read["holdout"], metadata, None
            )
        goldens["cases"][name] = {
            "files": paths,
            "metadata": metadata,
            "dcr_synthetic_to_real": [float(v) for v in dcr_syn],
            "dcr_synthetic_to_holdout": [float(v) for v in dcr_hold_ref],
            "median_dcr_synthetic_to_real": float(
                base["median_DCR_to_real_data"]["synthetic_data"]
            ),
            "overfitting": {
                "score": float(over["score"]),
                "closer_to_training": float(
                    over["synthetic_data_percentages"]["closer_to_training"]
                ),
                "closer_to_holdout": float(
                    over["synthetic_data_percentages"]["closer_to_holdout"]
                ),
            },
        }
    (OUT / "dcr_goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(f"wrote {OUT / 'dcr_goldens.json'}")


if __name__ == "__main__":
    main()
