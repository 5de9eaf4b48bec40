# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of SynthEval's ε-identifiability (``eps_risk``, ``priv_loss``).

    python scripts/record_goldens_syntheval.py --ref-venv PATH

``PATH`` is a virtual environment with ``pip install syntheval`` (1.x). The script
generates mixed tables from a fixed seed (continuous and integer numbers, categories,
exact copies), writes them to ``tests/metrics/data/syntheval_{real,synthetic,holdout}.csv``,
re-runs itself with the venv's Python and records SynthEval's
``EpsilonIdentifiability(real, synthetic, holdout, cat_cols, num_cols, nn_dist="gower")``
results (with SynthEval's own preprocessing) into
``tests/metrics/data/syntheval_goldens.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from _reference import main as run_reference

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "metrics" / "data"
SEED = 20261123
CAT = ["colour", "size"]
NUM = ["x", "y", "count"]


def _tables() -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(SEED)

    def table(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "x": rng.normal(0, 1, n),
                "colour": rng.choice(
                    ["red", "green", "blue", "grey"], n, p=[0.4, 0.3, 0.2, 0.1]
                ),
                "y": rng.gamma(2.0, 3.0, n),
                "size": rng.choice(["s", "m", "l"], n),
                "count": rng.integers(0, 50, n).astype(float),
            }
        )

    real, syn, hold = table(300), table(280), table(200)
    syn.iloc[:40] = real.iloc[rng.choice(300, 40, replace=False)].to_numpy()
    return {"real": real, "synthetic": syn, "holdout": hold}


def record() -> None:
    from syntheval.metrics.privacy.metric_epsilon_identifiability import (
        EpsilonIdentifiability,
    )

    frames = {
        name: pd.read_csv(OUT / f"syntheval_{name}.csv")
        for name in ("real", "synthetic", "holdout")
    }
    goldens: dict = {
        "syntheval_version": __import__("importlib.metadata").metadata.version(
            "syntheval"
        )
    }
    metric = EpsilonIdentifiability(
        frames["real"], frames["synthetic"], frames["holdout"], cat_cols=CAT, num_cols=NUM,
        nn_dist="gower", do_preprocessing=True, verbose=False,
    )  # fmt: skip
    goldens["with_holdout"] = metric.evaluate()
    metric = EpsilonIdentifiability(
        frames["real"], frames["synthetic"], None, cat_cols=CAT, num_cols=NUM,
        nn_dist="gower", do_preprocessing=True, verbose=False,
    )  # fmt: skip
    goldens["without_holdout"] = metric.evaluate()
    (OUT / "syntheval_goldens.json").write_text(json.dumps(goldens, indent=1) + "\n")
    print(json.dumps(goldens))


def _write_inputs() -> None:
    for name, frame in _tables().items():
        frame.to_csv(OUT / f"syntheval_{name}.csv", index=False)


def main() -> None:
    run_reference(__file__, record, package="syntheval", write_inputs=_write_inputs)


if __name__ == "__main__":
    main()
