# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of SDNist 2.4's privacy measures for synthrisk's tests.

    python scripts/record_goldens_sdnist.py --ref-venv PATH

``PATH`` is a virtual environment with ``pip install sdnist==2.4``. The script re-runs
itself with that venv's Python, generates coarse tables from a fixed seed (duplicates,
missing values), writes them to ``tests/metrics/data/sdnist_{real,synthetic}.csv`` and
records, on the tables read back from those files, SDNist's
``unique_exact_matches(target, deidentified)`` and the per-match percentages of
``apparent_match_dist.cellchange(target, deidentified, quasi, exclude_cols)`` into
``tests/metrics/data/sdnist_goldens.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from _reference import main as run_reference

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "metrics" / "data"
SEED = 20261122
CASES = [
    {"quasi": ["sex", "age"], "exclude": []},
    {"quasi": ["sex", "age", "area"], "exclude": ["weight"]},
    {"quasi": ["age", "job"], "exclude": ["area"]},
]


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(SEED)

    def table(n: int) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "sex": rng.choice(["f", "m"], n),
                "age": rng.integers(18, 70, n),
                "area": rng.integers(0, 6, n),
                "job": rng.choice(list("abcde"), n),
                "income": rng.choice(["low", "mid", "high"], n),
                "weight": rng.integers(1, 4, n),
            }
        )
        frame.loc[rng.random(n) < 0.05, "job"] = None
        return frame

    real = table(400)
    syn = table(380)
    # some exact copies, so unique exact matches happen
    syn.iloc[:60] = real.iloc[rng.choice(400, 60, replace=False)].to_numpy()
    return real, syn


def record() -> None:
    import sdnist.report.score.privacy  # noqa: F401  (resolves SDNist's circular import)
    from sdnist.metrics.apparent_match_dist import cellchange
    from sdnist.metrics.unique_exact_matches import unique_exact_matches

    real = pd.read_csv(OUT / "sdnist_real.csv")
    syn = pd.read_csv(OUT / "sdnist_synthetic.csv")
    matched, perc_matched, unique, perc_unique = unique_exact_matches(real, syn)
    goldens: dict = {
        "sdnist_version": __import__("importlib.metadata").metadata.version("sdnist"),
        "unique_exact_matches": {
            "t_rec_matched": int(matched),
            "perc_t_rec_matched": float(perc_matched),
            "t_unique_records": int(unique),
            "perc_t_unique_records": float(perc_unique),
        },
        "apparent_match": [],
    }
    for case in CASES:
        percents, *_ = cellchange(real, syn, case["quasi"], case["exclude"])
        goldens["apparent_match"].append(
            {**case, "percents": [float(v) for v in percents]}
        )
    (OUT / "sdnist_goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(json.dumps(goldens["unique_exact_matches"]))


def _write_inputs() -> None:
    real, syn = _tables()
    real.to_csv(OUT / "sdnist_real.csv", index=False)
    syn.to_csv(OUT / "sdnist_synthetic.csv", index=False)


def main() -> None:
    run_reference(
        __file__,
        record,
        package="sdnist==2.4",
        write_inputs=_write_inputs,
        env={"PYTHONHASHSEED": "0"},
    )


if __name__ == "__main__":
    main()
