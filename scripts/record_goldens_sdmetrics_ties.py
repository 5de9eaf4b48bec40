# SPDX-License-Identifier: BSD-3-Clause
"""Record SDMetrics 0.32's categorical attackers on tables full of ties, once per NumPy SIMD level.

    python scripts/record_goldens_sdmetrics_ties.py [--ref-venv PATH]

On one-hot keys many synthetic rows are equally close to a real row. SDMetrics'
``CategoricalKNN`` keeps the k nearest as scikit-learn's ``KNeighborsClassifier`` does,
with ``numpy.argpartition``, and NumPy partitions with AVX-512, AVX2 or plain code as the
CPU allows, each keeping other rows among ties: SDMetrics' own score on such a table
depends on the machine. This script therefore runs SDMetrics once per NumPy dispatch
level this machine offers (``NPY_DISABLE_CPU_FEATURES`` = ``""``, ``"X86_V4"``,
``"X86_V3 X86_V4"``) and files each run under a fingerprint of NumPy's partition (which
rows it keeps among equal values, ``_reference.partition_fingerprint``), so that ``tests/compat/test_sdmetrics_ties.py`` can
compare exactly wherever the machine's NumPy partitions as one of the recorded runs did.

The tables, written as CSV into ``tests/metrics/data/sdmetrics_ties/`` with this
repository's Python, are:

* ``test_good_s0`` ... ``test_good_s4``: SDMetrics' own integration-test tables (100 real
  rows cycling five key combinations, 20 "good" synthetic rows drawn after
  ``np.random.seed(s)``), keys ``key1``, ``key2``, sensitive ``sensitive1``, ``sensitive2``;
* ``small``: 150 rows, three text keys of 2-3 levels, one 2-level sensitive column;
* ``survey``: 1,200 coarse rows, three skewed keys (5 % missing in one), a 3-level secret;
* ``numbers``: 400 rows, an integer and a boolean key read as categories;
* ``two_sensitive``: 300 rows, two keys, two sensitive columns;
* ``duplicates``: synthetic rows drawn from ten distinct records (exact duplicates);

plus the categorical cases of ``tests/metrics/data/ml_inference_*`` (their tables and
fields as ``scripts/record_goldens_ml_inference.py`` wrote them). For each, the goldens
are ``CategoricalKNN``, ``CategoricalNB``, ``CategoricalSVM``, ``CategoricalRF`` (after
``np.random.seed(0)``), ``CategoricalEnsemble`` (NB, KNN, SVM) and the legacy
``CategoricalCAP``, ``CategoricalZeroCAP`` and ``CategoricalGeneralizedCAP``. Everything
goes to ``tests/metrics/data/sdmetrics_ties/goldens.json``.
"""

# SDMetrics draws from numpy's global RNG, which np.random.seed controls (NPY002).
# ruff: noqa: NPY002

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _reference import partition_fingerprint

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "metrics" / "data"
OUT = DATA / "sdmetrics_ties"
SEED = 20261126
#: NumPy dispatch levels to record (each run keeps the ones this machine offers)
LEVELS = ("", "X86_V4", "X86_V3 X86_V4")
MODELS = ("knn", "nb", "svm", "rf", "ensemble", "cap", "zero_cap", "generalized_cap")


# ------------------------------------------------------------------------ the tables


def _draw(
    rng: np.random.Generator, levels: list[str], n: int, skew: float
) -> np.ndarray:
    p = rng.dirichlet(np.full(len(levels), skew))
    return rng.choice(np.array(levels, dtype=object), n, p=p)


def _sdmetrics_test(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    letters = ["a", "b", "c", "d", "e"]
    real = pd.DataFrame(
        {
            "key1": letters * 20,
            "key2": [0, 1, 2, 3, 4] * 20,
            "sensitive1": letters * 20,
            "sensitive2": [0, 1, 2, 3, 4] * 20,
        }
    )
    state = np.random.RandomState(seed)  # what np.random.seed(seed) then draws
    synthetic = pd.DataFrame(
        {
            "key1": state.choice(letters, 20),
            "key2": state.randint(0, 5, size=20),
            "sensitive1": state.choice(letters, 20),
            "sensitive2": state.randint(0, 5, size=20),
        }
    )
    return real, synthetic


def _survey_like(
    rng: np.random.Generator, n: int, levels: list[int], n_secret: int, skew: float
) -> pd.DataFrame:
    keys = {
        f"k{j}": _draw(rng, [f"l{i}" for i in range(m)], n, skew)
        for j, m in enumerate(levels)
    }
    first = np.array([int(str(v)[1:]) for v in keys["k0"]])
    noise = rng.integers(0, n_secret, n)
    keep = rng.random(n) < 0.6
    secret = np.where(keep, first % n_secret, noise)
    return pd.DataFrame(
        {**keys, "s": np.array([f"s{v}" for v in secret], dtype=object)}
    )


def make_cases() -> dict[str, dict]:
    """Every case: its two tables and its fields."""
    rng = np.random.default_rng(SEED)
    cases: dict[str, dict] = {}
    for s in range(5):
        real, synthetic = _sdmetrics_test(s)
        cases[f"test_good_s{s}"] = {
            "tables": (real, synthetic),
            "key": ["key1", "key2"],
            "sensitive": ["sensitive1", "sensitive2"],
        }
    three = ["k0", "k1", "k2"]
    cases["small"] = {
        "tables": tuple(_survey_like(rng, 150, [2, 3, 3], 2, 1.0) for _ in range(2)),
        "key": three,
        "sensitive": ["s"],
    }
    survey = [_survey_like(rng, 1200, [4, 3, 5], 3, 0.5) for _ in range(2)]
    for frame in survey:
        frame.loc[rng.random(len(frame)) < 0.05, "k2"] = np.nan
    cases["survey"] = {"tables": tuple(survey), "key": three, "sensitive": ["s"]}
    numbers = []
    for _ in range(2):
        frame = _survey_like(rng, 400, [4, 2], 3, 1.0)
        frame["k0"] = np.array([int(str(v)[1:]) for v in frame["k0"]])
        frame["k1"] = frame["k1"] == "l0"
        numbers.append(frame)
    cases["numbers"] = {
        "tables": tuple(numbers),
        "key": ["k0", "k1"],
        "sensitive": ["s"],
    }
    two = []
    for _ in range(2):
        frame = _survey_like(rng, 300, [3, 3], 2, 1.0)
        frame["t"] = np.where(frame["k1"] == "l0", "yes", "no").astype(object)
        flip = rng.random(len(frame)) < 0.3
        frame.loc[flip, "t"] = rng.choice(["yes", "no"], int(flip.sum()))
        two.append(frame)
    cases["two_sensitive"] = {
        "tables": tuple(two),
        "key": ["k0", "k1"],
        "sensitive": ["s", "t"],
    }
    real = _survey_like(rng, 300, [3, 3, 2], 3, 1.0)
    pool = _survey_like(rng, 10, [3, 3, 2], 3, 1.0)
    synthetic = pool.iloc[rng.integers(0, len(pool), 300)].reset_index(drop=True)
    cases["duplicates"] = {
        "tables": (real, synthetic),
        "key": three,
        "sensitive": ["s"],
    }
    return cases


def write_inputs() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    fields = {}
    for name, case in make_cases().items():
        real, synthetic = case["tables"]
        real.to_csv(OUT / f"{name}_real.csv", index=False)
        synthetic.to_csv(OUT / f"{name}_synthetic.csv", index=False)
        fields[name] = {"key": case["key"], "sensitive": case["sensitive"]}
    (OUT / "cases.json").write_text(json.dumps(fields, indent=1, sort_keys=True) + "\n")


def read_cases() -> dict[str, dict]:
    """The recorded cases, read back from their CSV files (as the tests read them)."""
    fields = json.loads((OUT / "cases.json").read_text())
    cases = {
        name: {
            "real": pd.read_csv(OUT / f"{name}_real.csv"),
            "synthetic": pd.read_csv(OUT / f"{name}_synthetic.csv"),
            **spec,
        }
        for name, spec in fields.items()
    }
    goldens = json.loads((DATA / "ml_inference_goldens.json").read_text())
    real = pd.read_csv(DATA / "ml_inference_real.csv")
    synthetic = pd.read_csv(DATA / "ml_inference_synthetic.csv")
    for name, spec in goldens["categorical"].items():
        cases[f"ml_inference_{name}"] = {
            "real": real,
            "synthetic": synthetic,
            "key": spec["key"],
            "sensitive": spec["sensitive"],
        }
    return cases


# ----------------------------------------------------------------- inside SDMetrics


def record_level() -> None:
    """One run of SDMetrics at this process's NumPy level: JSON on standard output."""
    import warnings

    from sdmetrics.single_table.privacy import (
        CategoricalCAP,
        CategoricalEnsemble,
        CategoricalGeneralizedCAP,
        CategoricalKNN,
        CategoricalNB,
        CategoricalRF,
        CategoricalSVM,
        CategoricalZeroCAP,
        categorical_sklearn,
    )

    warnings.simplefilter("ignore")
    classes = {
        "knn": CategoricalKNN,
        "nb": CategoricalNB,
        "svm": CategoricalSVM,
        "rf": CategoricalRF,
        "cap": CategoricalCAP,
        "zero_cap": CategoricalZeroCAP,
        "generalized_cap": CategoricalGeneralizedCAP,
    }
    ensemble = {
        "attackers": [
            categorical_sklearn.CategoricalNBAttacker,
            categorical_sklearn.CategoricalKNNAttacker,
            categorical_sklearn.CategoricalSVMAttacker,
        ]
    }
    out: dict[str, dict[str, float | str]] = {}
    for name, case in read_cases().items():
        args = (case["real"], case["synthetic"])
        kwargs = {"key_fields": case["key"], "sensitive_fields": case["sensitive"]}
        values: dict[str, float | str] = {}
        for model in MODELS:
            np.random.seed(0)
            try:
                if model == "ensemble":
                    value = CategoricalEnsemble.compute(
                        *args, model_kwargs=ensemble, **kwargs
                    )
                else:
                    value = classes[model].compute(*args, **kwargs)
                values[model] = float(value)
            except Exception as exc:
                values[model] = f"error: {type(exc).__name__}"
        out[name] = values
    json.dump({"fingerprint": partition_fingerprint(), "cases": out}, sys.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--ref-venv", type=Path, default=None, help="venv with sdmetrics==0.32.0"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        record_level()
        return
    write_inputs()
    venv = args.ref_venv or ROOT / "benchmarks" / ".venvs" / "sdmetrics"
    python = venv / "bin" / "python"
    if not python.exists():
        sys.exit(
            f"no Python at {python}: pass --ref-venv (a venv with sdmetrics==0.32.0)"
        )
    runs: dict[str, dict] = {}
    for level in LEVELS:
        env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": level}
        done = subprocess.run(
            [str(python), str(Path(__file__).resolve()), "--child"],
            check=True,
            env=env,
            capture_output=True,
            text=True,
        )
        run = json.loads(done.stdout)
        entry = runs.setdefault(
            run["fingerprint"], {"levels": [], "cases": run["cases"]}
        )
        if entry["cases"] != run["cases"]:
            sys.exit(f"two runs with NumPy partition {run['fingerprint']} disagree")
        entry["levels"].append(level or "all available")
        print(
            f"NPY_DISABLE_CPU_FEATURES={level!r}: partition {run['fingerprint']}",
            flush=True,
        )
    versions = subprocess.run(
        [
            str(python),
            "-c",
            "import json, numpy, sklearn, sdmetrics, pandas; print(json.dumps({'sdmetrics': "
            "sdmetrics.__version__, 'sklearn': sklearn.__version__, 'numpy': numpy.__version__, "
            "'pandas': pandas.__version__}))",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    goldens = {"versions": json.loads(versions.stdout), "by_partition": runs}
    path = OUT / "goldens.json"
    path.write_text(json.dumps(goldens, indent=1, sort_keys=True) + "\n")
    print(f"wrote {path} ({len(runs)} NumPy partition(s))")


if __name__ == "__main__":
    main()
