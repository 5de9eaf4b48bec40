# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of SDMetrics 0.32's inference metrics and NewRowSynthesis for synthrisk's tests.

    python scripts/record_goldens_ml_inference.py [--ref-venv PATH]

The script re-runs itself with the reference venv's Python (default
``benchmarks/.venvs/sdmetrics``; e.g. ``--ref-venv ../refvenvs/sdmetrics``). It generates
mixed tables from a fixed seed (text categories with missing values, integer and float
columns, booleans, datetimes, near-copies of real rows), writes them as CSV to
``tests/metrics/data/ml_inference_{real,synthetic}.csv`` and records on the tables read
back from those files:

* the deterministic metrics (``CategoricalKNN``, ``CategoricalNB``, ``CategoricalSVM``,
  ``CategoricalEnsemble``, ``NumericalLR``, ``NumericalSVR``,
  ``NumericalRadiusNearestNeighbor``) once per case;
* the random ones (``CategoricalRF``, ``NumericalMLP``, unseeded in SDMetrics) once per
  seed of numpy's global RNG (``np.random.seed(s)`` for s = 0..19): their spread;
* ``NewRowSynthesis.compute_breakdown`` at several tolerances;
* the exception type SDMetrics raises in the cases where it fails.

Everything goes to ``tests/metrics/data/ml_inference_goldens.json``.
"""

# The lambdas run at once inside their loop (B023); SDMetrics draws from numpy's global
# RNG, which is what np.random.seed controls (NPY002).
# ruff: noqa: B023, NPY002

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "metrics" / "data"
SEED = 20251122
N_SEEDS = 20

CATEGORICAL_CASES: dict[str, dict] = {
    "basic": {"key": ["cat_a", "cat_b"], "sensitive": ["sens"]},
    "numbers_as_categories": {"key": ["num_i", "flag"], "sensitive": ["sens"]},
    "missing_keys": {"key": ["cat_na", "cat_b"], "sensitive": ["sens"]},
    "missing_sensitive": {"key": ["cat_a", "num_i"], "sensitive": ["sens_na"]},
    "two_sensitive": {"key": ["cat_a", "cat_b"], "sensitive": ["sens", "flag"]},
    "unseen_keys": {"key": ["cat_rare", "cat_b"], "sensitive": ["sens"]},
}
NUMERICAL_CASES: dict[str, dict] = {
    "one_key": {"key": ["x1"], "sensitive": ["y1"]},
    "two_keys": {"key": ["x1", "age"], "sensitive": ["y1"]},
    "two_sensitive": {"key": ["x1", "hours"], "sensitive": ["y1", "y2"]},
    "integer_columns": {"key": ["age"], "sensitive": ["hours"]},
}
ENSEMBLE = ("CategoricalNBAttacker", "CategoricalKNNAttacker", "CategoricalSVMAttacker")
NRS_TOLERANCES = (0.01, 0.0, 0.05)


def make_tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Real and synthetic tables; a quarter of the synthetic rows copy or nearly copy real rows."""
    rng = np.random.default_rng(seed)

    def table(n: int) -> pd.DataFrame:
        cat_a = rng.choice(["a", "b", "c", "d"], n)
        cat_b = rng.choice(["x", "y", "z"], n)
        sens = np.where(
            rng.random(n) < 0.6,
            np.array(["p", "q", "r", "p"])[np.searchsorted(["a", "b", "c"], cat_a)],
            rng.choice(["p", "q", "r"], n),
        ).astype(object)
        sens_na = sens.copy()
        sens_na[rng.random(n) < 0.1] = None
        cat_na = cat_a.astype(object)
        cat_na[rng.random(n) < 0.1] = None
        x1 = rng.normal(0, 1, n)
        x2 = rng.gamma(2.0, 1.0, n)
        age = rng.integers(18, 80, n)
        return pd.DataFrame(
            {
                "cat_a": cat_a,
                "cat_b": cat_b,
                "cat_na": cat_na,
                "cat_rare": rng.choice(
                    ["r1", "r2", "r3", "r4", "r5", "r6"],
                    n,
                    p=[0.4, 0.3, 0.2, 0.05, 0.03, 0.02],
                ),
                "sens": sens,
                "sens_na": sens_na,
                "flag": rng.random(n) < 0.3,
                "num_i": rng.integers(0, 4, n),
                "x1": np.round(x1, 3),
                "x2": np.round(x2, 3),
                "y1": np.round(0.8 * x1 + rng.normal(0, 0.5, n), 3),
                "y2": np.round(x2 - 0.5 * x1 + rng.normal(0, 1, n), 3),
                "age": age,
                "hours": np.clip(
                    np.round(40 + 0.3 * (age - 40) + rng.normal(0, 8, n)), 1, 99
                ).astype(int),
                "date": (
                    pd.Timestamp("2020-01-01")
                    + pd.to_timedelta(rng.integers(0, 900, n), unit="D")
                ).strftime("%Y-%m-%d"),
            }
        )

    real = table(120)
    synthetic = table(120)
    copies = rng.choice(len(real), 20, replace=False)
    synthetic.iloc[:20] = real.iloc[copies].to_numpy()
    # near copies: within 1 % on x1 for the first 5, 3 % for the next 5
    synthetic.loc[20:29] = real.iloc[
        rng.choice(len(real), 10, replace=False)
    ].to_numpy()
    synthetic.loc[20:24, "x1"] = synthetic.loc[20:24, "x1"].astype(float) * 1.005
    synthetic.loc[25:29, "x1"] = synthetic.loc[25:29, "x1"].astype(float) * 1.03
    for frame in (real, synthetic):
        frame.loc[frame.index % 17 == 3, "x2"] = (
            np.nan
        )  # missing numbers (NewRowSynthesis)
    # a rare key value that occurs in real rows only
    real.loc[real.index % 11 == 0, "cat_rare"] = "only_real"
    return real, synthetic


def read_tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The tables as the tests read them."""
    return (
        pd.read_csv(OUT / "ml_inference_real.csv"),
        pd.read_csv(OUT / "ml_inference_synthetic.csv"),
    )


def _error(fn) -> dict:
    try:
        value = fn()
    except Exception as exc:
        return {"error": type(exc).__name__, "message": str(exc)[:200]}
    return {
        "value": None
        if value is None or (isinstance(value, float) and np.isnan(value))
        else float(value)
    }


def record() -> None:
    from sdmetrics.single_table import NewRowSynthesis
    from sdmetrics.single_table.privacy import (
        CategoricalEnsemble,
        CategoricalKNN,
        CategoricalNB,
        CategoricalRF,
        CategoricalSVM,
        NumericalLR,
        NumericalMLP,
        NumericalRadiusNearestNeighbor,
        NumericalSVR,
        categorical_sklearn,
    )

    warnings.simplefilter("ignore")
    real, synthetic = make_tables(SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    real.to_csv(OUT / "ml_inference_real.csv", index=False)
    synthetic.to_csv(OUT / "ml_inference_synthetic.csv", index=False)
    real, synthetic = read_tables()
    goldens: dict = {
        "seed": SEED,
        "n_seeds": N_SEEDS,
        "categorical": {},
        "numerical": {},
    }
    attackers = [getattr(categorical_sklearn, name) for name in ENSEMBLE]
    for case, spec in CATEGORICAL_CASES.items():
        args = {"key_fields": spec["key"], "sensitive_fields": spec["sensitive"]}
        out = {
            "knn": _error(lambda: CategoricalKNN.compute(real, synthetic, **args)),
            "nb": _error(lambda: CategoricalNB.compute(real, synthetic, **args)),
            "svm": _error(lambda: CategoricalSVM.compute(real, synthetic, **args)),
            "ensemble": _error(
                lambda: CategoricalEnsemble.compute(
                    real, synthetic, **args, model_kwargs={"attackers": attackers}
                )
            ),
        }
        rf = []
        for s in range(N_SEEDS):
            np.random.seed(s)
            rf.append(_error(lambda: CategoricalRF.compute(real, synthetic, **args)))
        out["rf"] = rf[0] if "error" in rf[0] else {"values": [r["value"] for r in rf]}
        goldens["categorical"][case] = {**spec, "scores": out}
        print(case, out, flush=True)
    for case, spec in NUMERICAL_CASES.items():
        args = {"key_fields": spec["key"], "sensitive_fields": spec["sensitive"]}
        out = {
            "lr": _error(lambda: NumericalLR.compute(real, synthetic, **args)),
            "svr": _error(lambda: NumericalSVR.compute(real, synthetic, **args)),
            "radius_nearest_neighbor": _error(
                lambda: NumericalRadiusNearestNeighbor.compute(real, synthetic, **args)
            ),
        }
        mlp = []
        for s in range(N_SEEDS):
            np.random.seed(s)
            mlp.append(_error(lambda: NumericalMLP.compute(real, synthetic, **args)))
        out["mlp"] = (
            mlp[0] if "error" in mlp[0] else {"values": [r["value"] for r in mlp]}
        )
        goldens["numerical"][case] = {**spec, "scores": out}
        print(case, out, flush=True)
    # where SDMetrics fails
    metadata = {
        "columns": {
            c: {"sdtype": "numerical", "computer_representation": "Float"}
            if c in ("x1", "x2", "y1", "y2")
            else {"sdtype": "categorical"}
            for c in real.columns
        }
    }
    goldens["failures"] = {
        "numerical_with_metadata": _error(
            lambda: NumericalLR.compute(
                real, synthetic, metadata, key_fields=["x1"], sensitive_fields=["y1"]
            )
        ),
        "numerical_missing_values": _error(
            lambda: NumericalLR.compute(
                real, synthetic, key_fields=["x2"], sensitive_fields=["y1"]
            )
        ),
        "categorical_missing_numbers": _error(
            lambda: CategoricalKNN.compute(
                real, synthetic, key_fields=["x2"], sensitive_fields=["sens"]
            )
        ),
        "ensemble_without_attackers": {
            "returned": type(
                CategoricalEnsemble.compute(
                    real, synthetic, key_fields=["cat_a"], sensitive_fields=["sens"]
                )
            ).__name__
        },
    }
    nrs_metadata = {
        "columns": {
            **{
                c: {"sdtype": "categorical"}
                for c in (
                    "cat_a",
                    "cat_b",
                    "cat_na",
                    "cat_rare",
                    "sens",
                    "sens_na",
                    "flag",
                    "num_i",
                )
            },
            **{
                c: {"sdtype": "numerical"}
                for c in ("x1", "x2", "y1", "y2", "age", "hours")
            },
            "date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        }
    }
    goldens["new_row_synthesis"] = {
        str(tol): {
            "inferred": NewRowSynthesis.compute_breakdown(
                real, synthetic, numerical_match_tolerance=tol
            ),
            "metadata": NewRowSynthesis.compute_breakdown(
                real, synthetic, nrs_metadata, numerical_match_tolerance=tol
            ),
        }
        for tol in NRS_TOLERANCES
    }
    goldens["new_row_synthesis_metadata"] = nrs_metadata
    print(goldens["new_row_synthesis"], goldens["failures"], flush=True)
    path = OUT / "ml_inference_goldens.json"
    path.write_text(json.dumps(goldens, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--ref-venv", type=Path, default=None, help="venv with sdmetrics==0.32.0"
    )
    args = parser.parse_args()
    try:
        import sdmetrics  # noqa: F401
    except ImportError:
        venv = args.ref_venv or ROOT / "benchmarks" / ".venvs" / "sdmetrics"
        python = venv / "bin" / "python"
        if not python.exists():
            tools = ROOT.parent / "shared" / "tools" / "ref-venvs.sh"
            subprocess.run(["bash", str(tools), str(venv.parent)], check=True)
        os.execv(
            str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]]
        )
    record()


if __name__ == "__main__":
    main()
