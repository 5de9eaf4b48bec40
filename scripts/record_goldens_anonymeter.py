# SPDX-License-Identifier: BSD-3-Clause
"""Record golden values from Anonymeter 1.1 for synthrisk's compatibility tests.

Run with a Python that has ``anonymeter==1.1.0`` (never synthrisk's own venv)::

    benchmarks/.venvs/anonymeter/bin/python scripts/record_goldens_anonymeter.py

(create the venv with ``bash ../shared/tools/ref-venvs.sh benchmarks/.venvs``, or pass
any Anonymeter 1.1 venv's python). Only the deterministic parts of Anonymeter are
recorded; the random parts are compared statistically by ``scripts/compare_anonymeter.py``:

* ``tests/stats/data/anonymeter_stats_goldens.json``: success rates, residual risk and
  clipped intervals of ``EvaluationResults`` for many count combinations;
* ``tests/metrics/data/anonymeter_goldens.json`` with the CSV tables beside it:

  - query counts: random conjunctive queries evaluated by Anonymeter 1.1's polars
    engine (``_evaluate_queries``) and by pandas boolean masks (the null semantics of
    Anonymeter 1.0's ``DataFrame.query``);
  - the control-size correction factor of ``_fit_model`` on three data sets;
  - ``evaluate_inference_guesses`` on numeric and categorical guesses;
  - Gower distances of ``MixedTypeKNeighbors`` (NaN poisoning, datetimes as categories).

Every input is generated from fixed seeds and written next to the goldens, so the tests
rebuild nothing.
"""

from __future__ import annotations

import json
import operator
import warnings
from functools import reduce
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
from anonymeter.evaluators.inference_evaluator import evaluate_inference_guesses
from anonymeter.evaluators.singling_out_evaluator import _evaluate_queries, _fit_model
from anonymeter.neighbors.mixed_types_kneighbors import MixedTypeKNeighbors
from anonymeter.stats.confidence import EvaluationResults

ROOT = Path(__file__).resolve().parents[1]
METRICS_DATA = ROOT / "tests" / "metrics" / "data"
STATS_DATA = ROOT / "tests" / "stats" / "data"


def stats_goldens() -> list[dict]:
    rng = np.random.default_rng(4)
    cases = []
    for _ in range(60):
        n = int(rng.choice([1, 2, 7, 50, 500, 2000, 9758]))
        n_base_attacks = int(rng.integers(1, n + 1))
        n_ctrl_attacks = int(rng.integers(1, n + 1))
        cl = float(rng.choice([0.0, 0.5, 0.68, 0.9, 0.95, 0.99]))
        n_success = int(rng.integers(0, n + 1))
        n_baseline = int(rng.integers(0, n_base_attacks + 1))
        n_control = (
            None
            if rng.random() < 0.2
            else float(np.round(rng.uniform(0, n_ctrl_attacks), 4))
        )
        res = EvaluationResults(
            n_attacks=(n, n_base_attacks, n_ctrl_attacks),
            n_success=n_success,
            n_baseline=n_baseline,
            n_control=n_control,
            confidence_level=cl,
        )
        try:
            risk = res.risk()
        except ZeroDivisionError:
            continue
        cases.append(
            {
                "n_attacks": [n, n_base_attacks, n_ctrl_attacks],
                "n_success": n_success,
                "n_baseline": n_baseline,
                "n_control": n_control,
                "confidence_level": cl,
                "attack_rate": list(res.attack_rate),
                "baseline_rate": list(res.baseline_rate),
                "control_rate": None
                if res.control_rate is None
                else list(res.control_rate),
                "risk": [risk.value, *risk.ci],
                "baseline_risk": [
                    res.risk(baseline=True).value,
                    *res.risk(baseline=True).ci,
                ],
            }
        )
    return cases


def query_table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    num_f = np.round(rng.normal(10, 3, n), 1)
    num_f[rng.random(n) < 0.1] = np.nan
    cat = pd.Series(
        rng.choice(["a", "b", "c", "d", "e"], n, p=[0.4, 0.3, 0.2, 0.09, 0.01]),
        dtype=object,
    )
    cat[rng.random(n) < 0.08] = None
    word = pd.Series(
        rng.choice(["plain", "O'Neil", 'say "hi"', "x y"], n), dtype=object
    )
    return pd.DataFrame(
        {
            "num_f": num_f,
            "num_i": rng.integers(0, 25, n),
            "cat": cat,
            "word": word,
            "flag": rng.random(n) < 0.3,
        }
    )


def random_queries(df: pd.DataFrame, n_queries: int, seed: int) -> list[list[list]]:
    rng = np.random.default_rng(seed)
    queries = []
    cols = list(df.columns)
    for _ in range(n_queries):
        width = int(rng.integers(1, 4))
        chosen = rng.choice(cols, size=width, replace=False)
        query = []
        for col in chosen:
            value = df[col].iloc[int(rng.integers(len(df)))]
            if pd.isna(value):
                op = str(rng.choice(["is_null", "is_not_null"]))
                query.append([str(col), op, None])
                continue
            if col in ("num_f", "num_i"):
                op = str(rng.choice(["==", "!=", "<", "<=", ">", ">="]))
                value = float(value)
            elif col == "flag":
                op = str(rng.choice(["==", "!="]))
                value = bool(value)
            else:
                op = str(rng.choice(["==", "!="]))
            query.append([str(col), op, value])
        queries.append(query)
    return queries


_OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def polars_expr(query: list[list]) -> pl.Expr:
    parts = []
    for col, op, value in query:
        if op == "is_null":
            parts.append(pl.col(col).is_null())
        elif op == "is_not_null":
            parts.append(~pl.col(col).is_null())
        else:
            parts.append(_OPS[op](pl.col(col), value))
    return reduce(operator.and_, parts)


def pandas_count(df: pd.DataFrame, query: list[list]) -> int:
    mask = pd.Series(True, index=df.index)
    for col, op, value in query:
        s = df[col]
        if op == "is_null":
            m = s.isna()
        elif op == "is_not_null":
            m = s.notna()
        elif op == "!=":
            m = (s != value) | s.isna()  # pandas: NaN != x is True
        else:
            m = _OPS[op](s, value) & s.notna()
        mask &= m.astype(bool)
    return int(mask.sum())


def query_goldens() -> dict:
    table = query_table(11, 300)
    table.to_csv(METRICS_DATA / "anonymeter_queries_table.csv", index=False)
    read_back = pd.read_csv(METRICS_DATA / "anonymeter_queries_table.csv")
    queries = random_queries(read_back, 400, 12)
    polars_df = pl.DataFrame(read_back)
    counts = _evaluate_queries(df=polars_df, queries=[polars_expr(q) for q in queries])
    return {
        "table": "anonymeter_queries_table.csv",
        "queries": queries,
        "counts_polars": [int(c) for c in counts],
        "counts_pandas": [pandas_count(read_back, q) for q in queries],
    }


# control successes per subsample seen on Adult with 2,000 queries (10 sizes x 5 repeats)
ADULT_LIKE = [
    104, 101, 99, 110, 103, 125, 131, 128, 120, 127, 167, 160, 158, 170, 163, 194, 190, 187, 199, 192,
    221, 210, 206, 215, 218, 200, 230, 226, 221, 233, 245, 238, 241, 236, 244, 244, 240, 247, 239, 242,
    237, 246, 243, 248, 245, 249, 249, 249, 249, 249,
]  # fmt: skip


def size_correction_goldens() -> list[dict]:
    sizes = np.repeat(np.linspace(1000, 9758, 10).astype(int), 5)
    rng = np.random.default_rng(5)
    model = 4.0e6 * (1 - (sizes * 2e-4 + 1) * (1 - 2e-4) ** sizes) / (sizes + 1)
    cases = {
        "adult_like": np.array(ADULT_LIKE, dtype=float),
        "flat": np.full(sizes.size, 600.0),
        "model_noise": np.round(model + rng.normal(0, 3, sizes.size)),
    }
    out = []
    for name, successes in cases.items():
        fitted = _fit_model(sizes=sizes, successes=successes)
        out.append(
            {
                "name": name,
                "sizes": sizes.tolist(),
                "successes": successes.tolist(),
                "n_real": 39032,
                "n_control": 9758,
                "factor": float(fitted(39032) / fitted(9758)),
            }
        )
    return out


def inference_goldens() -> list[dict]:
    rng = np.random.default_rng(6)
    cases = []
    g = np.round(rng.normal(0, 10, 200), 1)
    s = np.round(g * rng.normal(1, 0.06, 200), 1)
    g[:10] = np.nan
    s[5:15] = np.nan
    g[20:30] = 0.0
    s[25:30] = 0.0
    for regression in (True, False):
        ok = evaluate_inference_guesses(
            guesses=pd.Series(g), secrets=pd.Series(s), regression=regression
        )
        cases.append(
            {
                "guesses": g.tolist(),
                "secrets": s.tolist(),
                "regression": regression,
                "success": ok.tolist(),
            }
        )
    return cases


def knn_goldens() -> dict:
    rng = np.random.default_rng(7)

    def frame(n: int) -> pd.DataFrame:
        num = np.round(rng.normal(5, 2, n), 2)
        num[rng.random(n) < 0.15] = np.nan
        cat = pd.Series(rng.choice(["u", "v", "w"], n), dtype=object)
        cat[rng.random(n) < 0.1] = None
        day = pd.Timestamp("2022-03-01") + pd.to_timedelta(
            rng.integers(0, 5, n), unit="D"
        )
        return pd.DataFrame(
            {
                "num": num,
                "count": rng.integers(0, 6, n),
                "cat": cat,
                "day": day.strftime("%Y-%m-%d"),
            }
        )

    syn, query = frame(60), frame(25)
    syn.to_csv(METRICS_DATA / "anonymeter_knn_synthetic.csv", index=False)
    query.to_csv(METRICS_DATA / "anonymeter_knn_query.csv", index=False)
    syn = pd.read_csv(
        METRICS_DATA / "anonymeter_knn_synthetic.csv", parse_dates=["day"]
    )
    query = pd.read_csv(METRICS_DATA / "anonymeter_knn_query.csv", parse_dates=["day"])
    nn = MixedTypeKNeighbors(n_neighbors=5, n_jobs=1).fit(syn)
    distances, _ = nn.kneighbors(query, return_distance=True)
    return {
        "synthetic": "anonymeter_knn_synthetic.csv",
        "query": "anonymeter_knn_query.csv",
        "k": 5,
        "distances": [
            [None if np.isnan(d) else float(d) for d in row] for row in distances
        ],
    }


def main() -> None:
    warnings.simplefilter(
        "ignore"
    )  # Anonymeter's baseline sanity warnings on random counts
    METRICS_DATA.mkdir(parents=True, exist_ok=True)
    STATS_DATA.mkdir(parents=True, exist_ok=True)
    stats = {"source": "anonymeter 1.1.0 EvaluationResults", "cases": stats_goldens()}
    (STATS_DATA / "anonymeter_stats_goldens.json").write_text(
        json.dumps(stats, indent=1) + "\n"
    )
    goldens = {
        "source": "anonymeter 1.1.0 (polars engine), pandas masks for 1.0's null semantics",
        "queries": query_goldens(),
        "size_correction": size_correction_goldens(),
        "inference_guesses": inference_goldens(),
        "knn": knn_goldens(),
    }
    (METRICS_DATA / "anonymeter_goldens.json").write_text(
        json.dumps(goldens, indent=1) + "\n"
    )
    print(
        f"wrote {len(stats['cases'])} stats cases and {len(goldens['queries']['queries'])} query counts"
    )


if __name__ == "__main__":
    main()
