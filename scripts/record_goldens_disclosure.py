# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values of SDMetrics 0.32's disclosure metrics for synthrisk's tests.

    python scripts/record_goldens_disclosure.py [--ref-venv PATH]

The script re-runs itself with the reference venv's Python (default
``benchmarks/.venvs/sdmetrics``, built with ``../shared/tools/ref-venvs.sh`` when
missing; e.g. ``--ref-venv benchmarks/.venvs/sdmetrics``). It generates mixed tables from a
fixed seed (NaN, constant columns, datetimes with and without NaT, booleans with and
without missing values, an id-like column), writes them as CSV to
``tests/metrics/data/disclosure_{real,synthetic}.csv`` and records, on the tables read
back from those files:

* ``DisclosureProtection.compute_breakdown`` for every case and computation method;
* the per-row probabilities of SDMetrics' CAP attackers for some cases;
* ``DisclosureProtectionEstimate.compute_breakdown`` with the subsamples SDMetrics drew
  (recorded, so the test can replay them);
* the legacy ``CategoricalCAP`` / ``CategoricalZeroCAP`` / ``CategoricalGeneralizedCAP``.

Everything goes to ``tests/metrics/data/disclosure_goldens.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "metrics" / "data"
SEED = 20250301
METHODS = ("cap", "zero_cap", "generalized_cap")
DATETIME_COLUMNS = ("date", "date_nat")

# name -> DisclosureProtection arguments (and synthrisk options that reproduce SDMetrics)
CASES: dict[str, dict] = {
    "basic": {"known": ["cat_a", "flag"], "sensitive": ["sens1"]},
    "multi_sensitive": {"known": ["cat_a", "cat_b", "flag_na"], "sensitive": ["sens1", "sens2"]},
    "binned": {"known": ["num_f", "date", "cat_b"], "sensitive": ["sens1"], "continuous": ["num_f", "date"], "bins": 4},
    "default_bins": {"known": ["num_f", "cat_a"], "sensitive": ["sens2"], "continuous": ["num_f"]},
    "exact_numeric": {"known": ["num_i", "cat_a"], "sensitive": ["sens_num"]},
    "exact_float_nan": {"known": ["num_k", "cat_b"], "sensitive": ["sens1", "flag_na"]},
    "constant_binned": {"known": ["const_num", "cat_b"], "sensitive": ["sens2"], "continuous": ["const_num"], "bins": 5},
    "constant_sensitive": {"known": ["cat_a"], "sensitive": ["const_cat"]},
    "nat_collapse": {
        "known": ["date_nat", "flag"], "sensitive": ["sens1"], "continuous": ["date_nat"], "bins": 4,
        "synthrisk": {"nat_binning": "sdmetrics"},
    },
    "no_overlap": {"known": ["uid", "cat_a"], "sensitive": ["sens2"]},
    "binned_sensitive_overlap": {"known": ["cat_b", "num_f"], "sensitive": ["num_f", "sens2"], "continuous": ["num_f"], "bins": 3},
    "unused_continuous": {"known": ["cat_a", "num_i"], "sensitive": ["sens2"], "continuous": ["date"]},
    "three_keys": {"known": ["cat_a", "cat_b", "num_i", "flag"], "sensitive": ["sens1"]},
}  # fmt: skip
ROW_CASES = ("basic", "binned", "multi_sensitive", "three_keys")
ESTIMATE_CASES = {
    "basic": {"n_sub": 90, "n_iter": 4},
    "binned": {"n_sub": 120, "n_iter": 3},
    "no_overlap": {"n_sub": 60, "n_iter": 3},
}
LEGACY_CASES: dict[str, dict] = {
    "legacy_categorical": {
        "key": ["cat_b", "flag", "num_i"],
        "sensitive": ["sens2"],
        "missing": "category",
    },
    "legacy_multi": {
        "key": ["cat_b", "num_i"],
        "sensitive": ["sens2", "sens_num"],
        "missing": "category",
    },
    # float NaN never equals (fresh float objects); object NaN is the np.nan singleton, so it matches
    "legacy_float_nan": {
        "key": ["num_k", "cat_b"],
        "sensitive": ["sens2"],
        "missing": "never_equal",
    },
    "legacy_object_nan": {
        "key": ["cat_a", "cat_b"],
        "sensitive": ["sens1"],
        "missing": "category",
    },
}


def make_tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Real and synthetic tables; 30 % of the synthetic rows copy a real row's values."""
    rng = np.random.default_rng(seed)

    def table(n: int, prefix: str) -> pd.DataFrame:
        cat_a = rng.choice(["a", "b", "c", "d"], n).astype(object)
        cat_a[rng.random(n) < 0.06] = None
        sens1 = np.where(
            rng.random(n) < 0.6,
            np.array(["p", "q", "r", "p"])[
                np.searchsorted(["a", "b", "c"], cat_a.astype(str))
            ],
            rng.choice(["p", "q", "r"], n),
        ).astype(object)
        sens1[rng.random(n) < 0.05] = None
        flag_na = (rng.random(n) < 0.4).astype(object)
        flag_na[rng.random(n) < 0.1] = None
        num_f = np.round(rng.normal(50, 15, n), 1)
        num_f[rng.random(n) < 0.1] = np.nan
        num_k = rng.choice([1.0, 2.0, 3.0], n)
        num_k[rng.random(n) < 0.15] = np.nan
        days = rng.integers(0, 400, n)
        date = pd.Timestamp("2020-01-01") + pd.to_timedelta(days, unit="D")
        date_nat = pd.Series(
            pd.Timestamp("2021-06-01")
            + pd.to_timedelta(rng.integers(0, 200, n), unit="D")
        )
        date_nat[rng.random(n) < 0.05] = pd.NaT
        return pd.DataFrame(
            {
                "uid": [f"{prefix}{i}" for i in range(n)],
                "cat_a": cat_a,
                "cat_b": rng.choice(["x", "y", "z"], n),
                "flag": rng.random(n) < 0.3,
                "flag_na": flag_na,
                "num_i": rng.integers(0, 6, n),
                "num_f": num_f,
                "num_k": num_k,
                "const_num": np.full(n, 7.0),
                "const_cat": np.full(n, "k"),
                "date": pd.Series(date).dt.strftime("%Y-%m-%d"),
                "date_nat": date_nat.dt.strftime("%Y-%m-%d"),
                "sens1": sens1,
                "sens2": np.where(
                    rng.random(n) < 0.7,
                    np.where(days < 200, "u", "v"),
                    rng.choice(["u", "v"], n),
                ),
                "sens_num": rng.integers(0, 4, n),
            }
        )

    real, syn = table(300, "r"), table(260, "s")
    copied = rng.choice(300, size=78, replace=False)
    syn.iloc[:78, 1:] = real.iloc[copied, 1:].to_numpy()
    syn.loc[[3, 8, 13], "const_num"] = [3.0, 11.0, 7.0]  # the real column is constant
    syn.loc[[5, 6], "num_f"] = [
        -40.0,
        400.0,
    ]  # outside the real range: first and last bin
    return real, syn


def load(path: Path) -> pd.DataFrame:
    """Read a table written by this script (the tests read it the same way)."""
    frame = pd.read_csv(path)
    for column in DATETIME_COLUMNS:
        frame[column] = pd.to_datetime(frame[column], format="ISO8601")
    return frame


def _float(value: object) -> float | None:
    value = float(value)  # type: ignore[arg-type]
    return None if math.isnan(value) else value


def _breakdown(out: dict) -> dict:
    return {
        "score": _float(out["score"]),
        "score_is_int": isinstance(out["score"], int),
        "cap_protection": _float(out["cap_protection"]),
        "baseline_protection": _float(out["baseline_protection"]),
    }


def record() -> None:
    import sdmetrics
    from sdmetrics.single_table import (
        CategoricalCAP,
        CategoricalGeneralizedCAP,
        CategoricalZeroCAP,
        DisclosureProtection,
        DisclosureProtectionEstimate,
    )
    from sdmetrics.single_table.privacy.disclosure_protection import CAP_METHODS

    warnings.simplefilter("ignore")
    real, syn = make_tables(SEED)
    OUT.mkdir(parents=True, exist_ok=True)
    real.to_csv(OUT / "disclosure_real.csv", index=False)
    syn.to_csv(OUT / "disclosure_synthetic.csv", index=False)
    real, syn = (
        load(OUT / "disclosure_real.csv"),
        load(OUT / "disclosure_synthetic.csv"),
    )

    goldens: dict = {
        "sdmetrics_version": sdmetrics.__version__,
        "pandas_version": pd.__version__,
        "files": {
            "real": "disclosure_real.csv",
            "synthetic": "disclosure_synthetic.csv",
        },
        "datetime_columns": list(DATETIME_COLUMNS),
        "cases": {},
        "rows": {},
        "estimate": {},
        "legacy": {},
    }
    for name, case in CASES.items():
        args = (case["known"], case["sensitive"])
        kwargs = {
            "continuous_column_names": case.get("continuous"),
            "num_discrete_bins": case.get("bins", 10),
        }
        goldens["cases"][name] = {**case, "results": {}}
        for method in METHODS:
            out = DisclosureProtection.compute_breakdown(
                real, syn, *args, computation_method=method, **kwargs
            )
            goldens["cases"][name]["results"][method] = _breakdown(out)

    for name in ROW_CASES:
        case = CASES[name]
        real_pre, syn_pre = DisclosureProtection._discretize_and_fillna(
            real,
            syn,
            case["known"],
            case["sensitive"],
            case.get("continuous"),
            case.get("bins", 10),
        )
        goldens["rows"][name] = {}
        for method in METHODS:
            model = CAP_METHODS[method.upper()]._fit(
                syn_pre, case["known"], case["sensitive"], None
            )
            probabilities = []
            for idx in range(len(real_pre)):
                key = tuple(real_pre[case["known"]].iloc[idx])
                sens = tuple(real_pre[case["sensitive"]].iloc[idx])
                p = model.score(key, sens)
                probabilities.append(None if p is None else float(p))
            goldens["rows"][name][method] = probabilities

    original_sample = pd.DataFrame.sample
    for name, spec in ESTIMATE_CASES.items():
        case = CASES[name]
        goldens["estimate"][name] = {**spec, "results": {}}
        for i, method in enumerate(METHODS):
            drawn: list[list[int]] = []

            def sample(
                self: pd.DataFrame,
                *args: object,
                _drawn: list = drawn,
                **kwargs: object,
            ) -> pd.DataFrame:
                out = original_sample(self, *args, **kwargs)
                _drawn.append([int(v) for v in out.index])
                return out

            pd.DataFrame.sample = sample  # type: ignore[method-assign]
            np.random.seed(SEED + i)  # noqa: NPY002 - SDMetrics samples with the global RNG
            try:
                out = DisclosureProtectionEstimate.compute_breakdown(
                    real, syn, case["known"], case["sensitive"], computation_method=method,
                    continuous_column_names=case.get("continuous"), num_discrete_bins=case.get("bins", 10),
                    num_rows_subsample=spec["n_sub"], num_iterations=spec["n_iter"], verbose=False,
                )  # fmt: skip
            finally:
                pd.DataFrame.sample = original_sample  # type: ignore[method-assign]
            goldens["estimate"][name]["results"][method] = {
                **_breakdown(out),
                "samples": [
                    [drawn[2 * k], drawn[2 * k + 1]] for k in range(spec["n_iter"])
                ],
            }

    legacy = {
        "cap": CategoricalCAP,
        "zero_cap": CategoricalZeroCAP,
        "generalized_cap": CategoricalGeneralizedCAP,
    }
    for name, case in LEGACY_CASES.items():
        columns = case["key"] + case["sensitive"]
        goldens["legacy"][name] = {**case, "results": {}}
        for method, cls in legacy.items():
            score = cls.compute(
                real[columns],
                syn[columns],
                key_fields=case["key"],
                sensitive_fields=case["sensitive"],
            )
            goldens["legacy"][name]["results"][method] = _float(score)

    path = OUT / "disclosure_goldens.json"
    path.write_text(json.dumps(goldens, indent=1) + "\n", encoding="utf-8")
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
