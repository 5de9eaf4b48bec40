# SPDX-License-Identifier: BSD-3-Clause
"""A seeded census-like population, split into real and holdout, with synthetic versions.

The synthetic versions leak by design, from worst to best:

* ``leaky`` — every real row copied with small noise (a generator that memorised);
* ``partial`` — 40 % noisy copies of real rows, 60 % new people from the population;
* ``isolated_copies`` — ``fresh`` with a few rows (0.2 %, at least 5) replaced by
  verbatim copies of the most isolated real people (those farthest from every other
  real person): every average looks clean, yet each copy gives a person away, which the
  per-person ``identification`` test finds;
* ``fresh`` — new people drawn from the same population model (an ideal generator);
* ``independent`` — every column drawn independently from the population's marginals
  (a fresh sample with each column shuffled on its own: safe, but useless, since all
  correlations are gone). Resampling the *training* table's own values column by column
  would copy rare exact values of training people (a unique income, a unique date),
  which the univariate singling-out attack rightly finds.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._rng import as_generator
from synthrisk._validation import check_int

__all__ = ["DEMO_METADATA", "DemoData", "demo_metrics", "load_demo"]

_EDUCATION = [
    "primary",
    "lower-secondary",
    "upper-secondary",
    "vocational",
    "bachelor",
    "master",
    "doctorate",
]
_OCCUPATION = [
    "clerical",
    "craft",
    "education",
    "farming",
    "health",
    "management",
    "sales",
    "service",
    "technical",
    "transport",
]
_REGION = [
    "north",
    "north-east",
    "east",
    "south-east",
    "south",
    "south-west",
    "west",
    "capital",
]

DEMO_METADATA: dict[str, Any] = {
    "columns": {
        "person_id": {"sdtype": "id"},
        "age": {"sdtype": "numerical", "computer_representation": "Int64"},
        "sex": {"sdtype": "categorical"},
        "region": {"sdtype": "categorical"},
        "education": {"sdtype": "categorical"},
        "occupation": {"sdtype": "categorical"},
        "hours_per_week": {"sdtype": "numerical"},
        "income": {"sdtype": "numerical", "computer_representation": "Float"},
        "married": {"sdtype": "boolean"},
        "start_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
    },
    "primary_key": "person_id",
}


#: share of the ``isolated_copies`` version's rows that copy real people (at least
#: ``_ISOLATED_MIN``): few enough that no average-based test notices them
_ISOLATED_SHARE = 0.002
_ISOLATED_MIN = 5


@dataclasses.dataclass(frozen=True)
class DemoData:
    """Real, holdout and synthetic demo tables.

    Attributes
    ----------
    real : DataFrame
        The rows a (pretend) generator was trained on.
    holdout : DataFrame
        Rows from the same population the generator never saw.
    synthetic : dict of str to DataFrame
        Synthetic versions by name: ``leaky``, ``partial``, ``isolated_copies``,
        ``fresh``, ``independent``.
    metadata : dict
        SDMetrics-style metadata of the tables.
    """

    real: pd.DataFrame
    holdout: pd.DataFrame
    synthetic: dict[str, pd.DataFrame]
    metadata: dict[str, Any]


def _population(n: int, rng: np.random.Generator, prefix: str) -> pd.DataFrame:
    age = np.clip(np.round(rng.gamma(7.0, 6.0, n) + 16), 17, 90).astype(int)
    sex = rng.choice(["female", "male"], n, p=[0.51, 0.49])
    region = rng.choice(_REGION, n, p=[0.08, 0.1, 0.12, 0.15, 0.14, 0.11, 0.1, 0.2])
    edu_score = np.clip(
        rng.normal(2.6 + 0.01 * (age - 40) * -1 + (region == "capital") * 0.8, 1.4, n),
        0,
        6.99,
    )
    education = np.asarray(_EDUCATION)[edu_score.astype(int)]
    occ_p = np.full(len(_OCCUPATION), 1.0 / len(_OCCUPATION))
    occupation = rng.choice(_OCCUPATION, n, p=occ_p).astype(object)
    professional = (edu_score >= 4) & (rng.random(n) < 0.5)
    occupation[professional] = rng.choice(
        ["education", "health", "management", "technical"], int(professional.sum())
    )
    hours = np.clip(
        np.round(
            rng.normal(38 + 4 * (sex == "male") - 0.3 * np.maximum(age - 60, 0), 7, n)
        ),
        4,
        80,
    )
    log_income = (
        9.6
        + 0.22 * edu_score
        + 0.012 * hours
        + 0.01 * np.minimum(age, 55)
        + 0.15 * (sex == "male")
    )
    income = np.round(np.exp(log_income + rng.normal(0, 0.35, n)), -1)
    income[age >= 67] *= 0.6
    married = rng.random(n) < np.clip(0.15 + 0.012 * (age - 18), 0.1, 0.7)
    years_in_job = np.minimum(rng.exponential(7.0, n), np.maximum(age - 16, 0))
    start = pd.Timestamp("2026-01-01") - pd.to_timedelta(
        np.round(years_in_job * 365.25), unit="D"
    )
    frame = pd.DataFrame(
        {
            "person_id": [f"{prefix}{i:06d}" for i in range(n)],
            "age": pd.array(age, dtype="Int64"),
            "sex": sex,
            "region": region,
            "education": education,
            "occupation": occupation,
            "hours_per_week": hours,
            "income": income,
            "married": pd.array(married, dtype="boolean"),
            "start_date": pd.Series(start)
            .dt.strftime("%Y-%m-%d")
            .to_numpy(dtype=object),
        }
    )
    # missing values: occupation 3 %, hours 2 %, married 1 %, start_date 2 %, age 0.5 %
    for column, share in (
        ("occupation", 0.03),
        ("hours_per_week", 0.02),
        ("married", 0.01),
        ("start_date", 0.02),
        ("age", 0.005),
    ):
        frame.loc[rng.random(n) < share, column] = None
    return frame


def _noisy_copy(
    frame: pd.DataFrame, rng: np.random.Generator, prefix: str
) -> pd.DataFrame:
    out = frame.copy()
    n = len(out)
    out["person_id"] = [f"{prefix}{i:06d}" for i in range(n)]
    jitter_age = rng.random(n) < 0.2
    ages = out["age"].astype("Float64")
    ages[jitter_age] = ages[jitter_age] + rng.choice([-1, 1], int(jitter_age.sum()))
    out["age"] = ages.round().astype("Int64")
    out["income"] = np.round(out["income"] * (1 + rng.normal(0, 0.01, n)), -1)
    return out


def _independent(n: int, rng: np.random.Generator, prefix: str) -> pd.DataFrame:
    frame = _population(n, rng, prefix)
    columns: dict[str, Any] = {}
    for column in frame.columns:
        if column == "person_id":
            columns[column] = frame[column].to_numpy()
            continue
        columns[column] = frame[column].iloc[rng.permutation(n)].reset_index(drop=True)
    return pd.DataFrame(columns)


def _isolated_copies(
    fresh: pd.DataFrame,
    real: pd.DataFrame,
    holdout: pd.DataFrame,
    rng: np.random.Generator,
    *,
    seed: int,
) -> pd.DataFrame:
    """``fresh`` with rows replaced by verbatim copies of the most isolated real people.

    Isolation is the per-person tests' (the ``identification`` metric's records): the
    distance from a real record to the nearest record of another real person of the
    pooled real ∪ holdout rows. Only records no other real person shares are copied.
    """
    from synthrisk.metrics.membership import Identification

    result = Identification().compute(
        real, fresh, holdout, metadata=DEMO_METADATA, seed=seed
    )
    isolation = result.records["isolation"]
    order = np.argsort(-isolation.values, kind="stable")
    order = order[isolation.values[order] > 0]
    n_copy = min(order.size, max(_ISOLATED_MIN, round(_ISOLATED_SHARE * len(fresh))))
    sources = isolation.index[order[:n_copy]]
    places = np.sort(rng.choice(len(fresh), n_copy, replace=False))
    # the copies keep the ids of the rows they replace (a generator names its own rows)
    copies = real.iloc[sources].set_axis(places)
    copies["person_id"] = fresh["person_id"].iloc[places].to_numpy()
    return pd.concat([fresh.drop(places), copies]).sort_index()


def load_demo(*, n_rows: int = 20_000, seed: int = 0) -> DemoData:
    """Generate the demo data.

    Parameters
    ----------
    n_rows : int, default=20_000
        Size of the population; half becomes ``real``, half ``holdout``.
        Each synthetic version has as many rows as ``real``.
    seed : int, default=0
        Seed of the generator; the same seed gives identical tables.

    Examples
    --------
    >>> demo = load_demo(n_rows=1000)
    >>> len(demo.real), len(demo.holdout), sorted(demo.synthetic)
    (500, 500, ['fresh', 'independent', 'isolated_copies', 'leaky', 'partial'])
    """
    n_rows = check_int(n_rows, name="n_rows", minimum=20)
    rng = as_generator(seed)
    population = _population(n_rows, rng, "P")
    order = rng.permutation(n_rows)
    half = n_rows // 2
    real = population.iloc[order[:half]].reset_index(drop=True)
    holdout = population.iloc[order[half : 2 * half]].reset_index(drop=True)
    n = len(real)
    leaky = _noisy_copy(real, rng, "L")
    n_copy = round(0.4 * n)
    copied = _noisy_copy(
        real.iloc[rng.choice(n, n_copy, replace=False)].reset_index(drop=True), rng, "C"
    )
    new = _population(n - n_copy, rng, "N")
    partial = (
        pd.concat([copied, new], ignore_index=True)
        .iloc[rng.permutation(n)]
        .reset_index(drop=True)
    )
    partial["person_id"] = [f"S{i:06d}" for i in range(n)]
    fresh = _population(n, rng, "F")
    independent = _independent(n, rng, "I")
    isolated_copies = _isolated_copies(fresh, real, holdout, rng, seed=seed)
    return DemoData(
        real=real,
        holdout=holdout,
        synthetic={
            "leaky": leaky,
            "partial": partial,
            "isolated_copies": isolated_copies,
            "fresh": fresh,
            "independent": independent,
        },
        metadata=DEMO_METADATA,
    )


def demo_metrics() -> dict[str, dict[str, Any]]:
    """Metric parameters for the demo data: every registered metric the demo knows how to configure."""
    from synthrisk.metrics import METRICS

    known: dict[str, dict[str, Any]] = {
        "identification": {},
        "dcr_baseline_protection": {},
        "dcr_overfitting_protection": {},
        # an attacker who knows age (binned), sex, region and education guesses the income band
        "disclosure_protection": {
            "known_column_names": ["age", "sex", "region", "education"],
            "sensitive_column_names": ["income"],
            "continuous_column_names": ["age", "income"],
            "num_discrete_bins": 10,
            "computation_method": "generalized_cap",
        },
        "singling_out": {"mode": "multivariate"},
        "singling_out_univariate": {},
        "linkability": {
            "aux_cols": [
                ["age", "sex", "region", "married"],
                ["education", "occupation", "hours_per_week", "start_date"],
            ],
            "n_attacks": 1000,
        },
        "inference": {
            "secret": "income",
            "aux_cols": [
                "age",
                "sex",
                "region",
                "education",
                "occupation",
                "hours_per_week",
            ],
            "n_attacks": 1000,
        },
        "membership_knn_probabilities": {},
        "dcr_share": {},
        "membership_classification": {},
        "distribution_validation": {},
        "nndr": {},
        "identical_match_share": {},
    }
    return {
        metric_id: params for metric_id, params in known.items() if metric_id in METRICS
    }
