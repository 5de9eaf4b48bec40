# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of SDMetrics 0.32's inference metrics and NewRowSynthesis for synthrisk's tests.

    python scripts/record_goldens_ml_inference.py [--ref-venv PATH]

The script re-runs itself with the reference venv's Python (default
``benchmarks/.venvs/sdmetrics``; e.g. ``--ref-venv ../refvenvs/sdmetrics``). It generates
mixed tables from a fixed seed (text categories with missing values, integer and float
columns, booleans, datetimes, a column missing in every row, a constant column, an
identifier whose values never recur, near-copies of real rows), writes them as CSV to
``tests/metrics/data/ml_inference_{real,synthetic}.csv`` and records on the tables read
back from those files:

* the deterministic metrics (``CategoricalKNN``, ``CategoricalNB``, ``CategoricalSVM``,
  ``CategoricalEnsemble``, ``NumericalLR``, ``NumericalSVR``,
  ``NumericalRadiusNearestNeighbor``) once per case;
* the random ones (``CategoricalRF``, ``NumericalMLP``, unseeded in SDMetrics) once per
  seed of numpy's global RNG (``np.random.seed(s)`` right before the call, s = 0..19):
  their spread; synthrisk's ``seed=s`` reproduces SDMetrics' ``np.random.seed(s)``, as
  scikit-learn's global RNG and ``random_state=s`` draw the same stream;
* what synthrisk's default mode must equal: SDMetrics on the tables with a missing
  sensitive text value replaced by SDMetrics' own placeholder in both tables (missing
  then equals missing), and SDMetrics' numerical attackers on the complete rows only;
* ``model_kwargs``: the exception SDMetrics raises when they are passed to an attacker
  that takes none, and SDMetrics' value with the same arguments given to the
  scikit-learn estimator instead (its estimator class patched for the call); the radius
  attacker's own ``model_kwargs`` (cutoffs down to one where real rows have no
  neighbour: SDMetrics' 0/0 guess);
* ``NewRowSynthesis.compute_breakdown`` at several tolerances, with and without metadata
  (primary key, ``pii`` and id columns ignored), with a synthetic value in a column that
  is missing in every real row, and with ``synthetic_sample_size`` once per seed of
  numpy's global RNG (its spread);
* the exception type SDMetrics raises for wrong inputs and where it fails.

Everything goes to ``tests/metrics/data/ml_inference_goldens.json``.
"""

# The lambdas run at once inside their loop (B023); SDMetrics draws from numpy's global
# RNG, which is what np.random.seed controls (NPY002).
# ruff: noqa: B023, NPY002

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from _reference import partition_fingerprint

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
    "unseen_sensitive": {"key": ["cat_a", "cat_b"], "sensitive": ["cat_rare"]},
    "all_unseen": {"key": ["uid"], "sensitive": ["sens"]},
    "all_missing_key": {"key": ["empty", "cat_b"], "sensitive": ["sens"]},
    "all_missing_sensitive": {"key": ["cat_a"], "sensitive": ["empty"]},
}
#: cases where synthrisk's default differs from SDMetrics: a missing real sensitive value
DEFAULT_EQUIVALENT_CATEGORICAL = ("missing_sensitive",)
NUMERICAL_CASES: dict[str, dict] = {
    "one_key": {"key": ["x1"], "sensitive": ["y1"]},
    "two_keys": {"key": ["x1", "age"], "sensitive": ["y1"]},
    "two_sensitive": {"key": ["x1", "hours"], "sensitive": ["y1", "y2"]},
    "integer_columns": {"key": ["age"], "sensitive": ["hours"]},
    "constant_sensitive": {"key": ["x1"], "sensitive": ["const"]},
}
#: numerical cases with missing values: SDMetrics fails; synthrisk scores the complete rows
MISSING_NUMERICAL_CASES: dict[str, dict] = {
    "missing_key": {"key": ["x2"], "sensitive": ["y1"]},
    "missing_sensitive": {"key": ["x1", "age"], "sensitive": ["x2"]},
}
#: scikit-learn arguments passed as ``model_kwargs`` (case, estimator arguments)
MODEL_KWARGS = {
    "knn": ("basic", {"n_neighbors": 3}),
    "nb": ("basic", {"alpha": 0.5}),
    "svm": ("basic", {"C": 10.0}),
    "lr": ("two_keys", {"fit_intercept": False}),
    "svr": ("one_key", {"C": 10.0}),
    "mlp": (
        "two_keys",
        {"hidden_layer_sizes": [8], "max_iter": 500, "random_state": 0},
    ),
}
#: the radius attacker's model_kwargs['weight_func_kwargs'] (None: weight_func only)
RADIUS_WEIGHTS = {
    "cutoff_0.1": {"p": 2, "cutoff": 0.1},
    "defaults": None,
    "cutoff_0.02": {"cutoff": 0.02},
}
NRS_SAMPLE_SIZE = 40
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
    for prefix, frame in (("r", real), ("s", synthetic)):
        frame["empty"] = np.nan  # missing in every row
        frame["const"] = 5.0
        frame["uid"] = [f"{prefix}{i}" for i in range(len(frame))]  # never recurs
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
    if isinstance(value, Exception):  # CategoricalEnsemble *returns* its ValueError
        return {"returned": type(value).__name__}
    return {
        "value": None
        if value is None or (isinstance(value, float) and np.isnan(value))
        else float(value)
    }


def _spread(fn) -> dict:
    """``fn()`` once per seed of numpy's global RNG: the values (or the first error)."""
    out = []
    for s in range(N_SEEDS):
        np.random.seed(s)
        out.append(_error(fn))
    return out[0] if "error" in out[0] else {"values": [r["value"] for r in out]}


@contextlib.contextmanager
def _patched(owner, name: str, value):
    """``owner.name = value`` for the duration of the block."""
    old = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    setattr(owner, name, staticmethod(value) if isinstance(owner, type) else value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def _with_placeholder(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """The table with SDMetrics' own missing-value placeholder written into ``column``."""
    out = frame.copy()
    out[column] = (
        out[column].astype(object).where(out[column].notna(), "place_holder_for_nan")
    )
    return out


def record() -> None:
    import sklearn.naive_bayes
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
        numerical_sklearn,
    )
    from sdmetrics.single_table.privacy.radius_nearest_neighbor import InverseCDFCutoff
    from sklearn.linear_model import LinearRegression
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPRegressor
    from sklearn.svm import SVC, SVR

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
    categorical = {
        "knn": CategoricalKNN,
        "nb": CategoricalNB,
        "svm": CategoricalSVM,
        "rf": CategoricalRF,
    }
    numerical = {
        "lr": NumericalLR,
        "svr": NumericalSVR,
        "radius_nearest_neighbor": NumericalRadiusNearestNeighbor,
        "mlp": NumericalMLP,
    }

    def categorical_scores(r: pd.DataFrame, s: pd.DataFrame, spec: dict) -> dict:
        args = {"key_fields": spec["key"], "sensitive_fields": spec["sensitive"]}
        out = {
            name: (_spread if name == "rf" else _error)(
                lambda: metric.compute(r, s, **args)
            )
            for name, metric in categorical.items()
        }
        out["ensemble"] = _error(
            lambda: CategoricalEnsemble.compute(
                r, s, **args, model_kwargs={"attackers": attackers}
            )
        )
        return out

    def numerical_scores(r: pd.DataFrame, s: pd.DataFrame, spec: dict) -> dict:
        args = {"key_fields": spec["key"], "sensitive_fields": spec["sensitive"]}
        return {
            name: (_spread if name == "mlp" else _error)(
                lambda: metric.compute(r, s, **args)
            )
            for name, metric in numerical.items()
        }

    for case, spec in CATEGORICAL_CASES.items():
        entry = {**spec, "scores": categorical_scores(real, synthetic, spec)}
        if case in DEFAULT_EQUIVALENT_CATEGORICAL:  # missing equals missing
            column = spec["sensitive"][0]
            entry["default_scores"] = categorical_scores(
                _with_placeholder(real, column),
                _with_placeholder(synthetic, column),
                spec,
            )
        goldens["categorical"][case] = entry
        print(case, entry["scores"], flush=True)
    for case, spec in NUMERICAL_CASES.items():
        goldens["numerical"][case] = {
            **spec,
            "scores": numerical_scores(real, synthetic, spec),
        }
        print(case, goldens["numerical"][case]["scores"], flush=True)
    goldens["numerical_missing"] = {}
    for case, spec in MISSING_NUMERICAL_CASES.items():
        fields = [*spec["key"], *spec["sensitive"]]
        complete = {  # synthrisk's default: train and score on the complete rows
            name: frame.dropna(subset=fields).reset_index(drop=True)
            for name, frame in (("real", real), ("synthetic", synthetic))
        }
        goldens["numerical_missing"][case] = {
            **spec,
            "scores": numerical_scores(real, synthetic, spec),
            "complete_rows": {
                "n_real": len(complete["real"]),
                "n_synthetic": len(complete["synthetic"]),
                "scores": numerical_scores(
                    complete["real"], complete["synthetic"], spec
                ),
            },
        }
        print(case, goldens["numerical_missing"][case], flush=True)

    # model_kwargs: SDMetrics passes them to its attacker class (a TypeError); the values
    # are SDMetrics' with the same arguments given to the scikit-learn estimator
    def partial(cls, kwargs):
        return lambda: cls(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        )

    estimator = {
        "knn": (
            categorical_sklearn.CategoricalKNNAttacker,
            "SKL_LEARNER",
            KNeighborsClassifier,
        ),
        "nb": (sklearn.naive_bayes, "CategoricalNB", sklearn.naive_bayes.CategoricalNB),
        "svm": (categorical_sklearn, "SVC", SVC),
        "lr": (numerical_sklearn.LRAttacker, "SKL_LEARNER", LinearRegression),
        "svr": (numerical_sklearn, "SVR", SVR),
        "mlp": (numerical_sklearn.MLPAttacker, "SKL_LEARNER", MLPRegressor),
    }
    goldens["model_kwargs"] = {}
    for name, (case, kwargs) in MODEL_KWARGS.items():
        kind = "categorical" if name in categorical else "numerical"
        spec = (CATEGORICAL_CASES if kind == "categorical" else NUMERICAL_CASES)[case]
        metric = {**categorical, **numerical}[name]
        args = {"key_fields": spec["key"], "sensitive_fields": spec["sensitive"]}
        owner, attribute, cls = estimator[name]
        with _patched(owner, attribute, partial(cls, kwargs)):
            value = _error(lambda: metric.compute(real, synthetic, **args))
        goldens["model_kwargs"][name] = {
            "case": case,
            "kind": kind,
            "model_kwargs": kwargs,
            "sdmetrics": _error(
                lambda: metric.compute(real, synthetic, **args, model_kwargs=kwargs)
            ),
            "value": value,
        }
    goldens["radius_model_kwargs"] = {}
    for case, weights in RADIUS_WEIGHTS.items():
        model_kwargs = {"weight_func": InverseCDFCutoff}
        if weights is not None:
            model_kwargs["weight_func_kwargs"] = weights
        goldens["radius_model_kwargs"][case] = {
            "key": ["x1", "age"],
            "sensitive": ["y1"],
            "weight_func_kwargs": weights,
            "value": _error(
                lambda: NumericalRadiusNearestNeighbor.compute(
                    real,
                    synthetic,
                    key_fields=["x1", "age"],
                    sensitive_fields=["y1"],
                    model_kwargs=model_kwargs,
                )
            ),
        }
    print(goldens["model_kwargs"], goldens["radius_model_kwargs"], flush=True)

    # where SDMetrics fails, and the exception types of wrong inputs
    metadata = {
        "columns": {
            c: {"sdtype": "numerical", "computer_representation": "Float"}
            if c in ("x1", "x2", "y1", "y2")
            else {"sdtype": "categorical"}
            for c in real.columns
        }
    }
    dates = {
        "columns": {
            c: {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"}
            if c == "date"
            else {"sdtype": "categorical"}
            for c in real.columns
        }
    }
    knn = {"key_fields": ["cat_a"], "sensitive_fields": ["sens"]}
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
        "ensemble_without_attackers": _error(
            lambda: CategoricalEnsemble.compute(real, synthetic, **knn)
        ),
        "ensemble_attacker_names": _error(
            lambda: CategoricalEnsemble.compute(
                real,
                synthetic,
                **knn,
                model_kwargs={"attackers": ["CategoricalNBAttacker"]},
            )
        ),
        "missing_key_fields": _error(
            lambda: CategoricalKNN.compute(real, synthetic, sensitive_fields=["sens"])
        ),
        "missing_sensitive_fields": _error(
            lambda: NumericalLR.compute(real, synthetic, key_fields=["x1"])
        ),
        "empty_key_fields": _error(
            lambda: CategoricalNB.compute(
                real, synthetic, key_fields=[], sensitive_fields=["sens"]
            )
        ),
        "metadata_not_a_dict": _error(
            lambda: CategoricalKNN.compute(real, synthetic, [metadata], **knn)
        ),
        "table_name_not_a_string": _error(
            lambda: CategoricalKNN.compute(real, synthetic, metadata, 3, **knn)
        ),
        "undescribed_column": _error(
            lambda: CategoricalKNN.compute(
                real, synthetic, {"columns": {"cat_a": {}, "sens": {}}}, **knn
            )
        ),
        "unknown_column": _error(
            lambda: CategoricalKNN.compute(
                real, synthetic, key_fields=["nope"], sensitive_fields=["sens"]
            )
        ),
        "different_columns": _error(
            lambda: CategoricalKNN.compute(real, synthetic.drop(columns="x1"), **knn)
        ),
        "numerical_on_text": _error(
            lambda: NumericalLR.compute(
                real, synthetic, key_fields=["cat_a"], sensitive_fields=["y1"]
            )
        ),
        "categorical_on_datetime": _error(
            lambda: CategoricalKNN.compute(
                real, synthetic, dates, key_fields=["date"], sensitive_fields=["sens"]
            )
        ),
        "empty_real_table": _error(
            lambda: CategoricalKNN.compute(real.iloc[:0], synthetic, **knn)
        ),
        "new_row_synthesis_metadata_not_a_dict": _error(
            lambda: NewRowSynthesis.compute(real, synthetic, [metadata])
        ),
        "new_row_synthesis_different_columns": _error(
            lambda: NewRowSynthesis.compute(real, synthetic.drop(columns="x1"))
        ),
        "new_row_synthesis_empty_synthetic": _error(
            lambda: NewRowSynthesis.compute(real, synthetic.iloc[:0])
        ),
    }
    nrs_metadata = {
        "primary_key": "uid",
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
                for c in ("x1", "x2", "y1", "y2", "age", "hours", "empty", "const")
            },
            "y2": {"sdtype": "numerical", "pii": True},  # ignored by SDMetrics
            "uid": {"sdtype": "id"},
            "date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        },
    }
    # a synthetic value where the real column is missing in every row: never matched
    filled = synthetic.copy()
    filled.loc[filled.index % 7 == 0, "empty"] = 1.0
    goldens["new_row_synthesis"] = {
        str(tol): {
            # types from the dtypes (the identifier, text here, would make every row new)
            "inferred": NewRowSynthesis.compute_breakdown(
                real.drop(columns="uid"),
                synthetic.drop(columns="uid"),
                numerical_match_tolerance=tol,
            ),
            "metadata": NewRowSynthesis.compute_breakdown(
                real, synthetic, nrs_metadata, numerical_match_tolerance=tol
            ),
            "empty_column_filled": NewRowSynthesis.compute_breakdown(
                real, filled, nrs_metadata, numerical_match_tolerance=tol
            ),
        }
        for tol in NRS_TOLERANCES
    }
    goldens["new_row_synthesis_metadata"] = nrs_metadata
    goldens["new_row_synthesis_sample"] = {
        "synthetic_sample_size": NRS_SAMPLE_SIZE,
        "scores": _spread(
            lambda: NewRowSynthesis.compute(
                real, synthetic, nrs_metadata, synthetic_sample_size=NRS_SAMPLE_SIZE
            )
        ),
    }
    print(goldens["new_row_synthesis"], goldens["failures"], flush=True)
    # KNN and the ensemble keep, among tied rows, those NumPy's partition keeps here
    goldens["numpy_partition"] = partition_fingerprint()
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
