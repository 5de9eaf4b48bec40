# SPDX-License-Identifier: BSD-3-Clause
"""dpmm's MST on the Adult columns with a public domain, for the generator audit's worker.

Usage (from the repository root, dpmm in a virtual environment of its own,
``python -m venv DPMM_VENV && DPMM_VENV/bin/pip install dpmm``)::

    synthrisk audit --real real.csv --holdout holdout.csv \
        --generator benchmarks.dpmm_generator:fit_sample \
        --generator-python DPMM_VENV/bin/python --generator-param epsilon=1 --runs 200

The persistent worker (``python -m synthrisk.audit.worker``, started by
``--generator-python``) imports this module once and calls ``fit_sample(train, n, seed,
**params)`` for every shadow run. It needs only pandas and dpmm.

The whole ε goes to MST, and nothing else looks at the data: dpmm's preprocessing is
told the public domain of every column (:data:`ADULT_DOMAIN`: the numeric columns'
bounds and the categorical columns' values in the UCI Adult data, public knowledge in
the audit's threat model), bins the numeric columns uniformly into a fixed number of
bins (``proc_epsilon=None``: no private bound or bin search), and so spends no privacy
budget. Without the categories dpmm reads them from the training table (it warns
"PrivacyLeakage"), which is not differentially private: a target with a rare value
would change the domain. MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST
contest", arXiv 2108.04978) is then (ε, δ)-DP with dpmm's default δ = 1e-5.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

#: the public domain of the Adult columns (numeric bounds, categorical values)
ADULT_DOMAIN: dict[str, dict[str, Any]] = {
    "age": {"lower": 17, "upper": 90},
    "type_employer": {
        "categories": [
            "?", "Federal-gov", "Local-gov", "Never-worked", "Private", "Self-emp-inc",
            "Self-emp-not-inc", "State-gov", "Without-pay",
        ]
    },
    "education": {
        "categories": [
            "10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm",
            "Assoc-voc", "Bachelors", "Doctorate", "HS-grad", "Masters", "Preschool",
            "Prof-school", "Some-college",
        ]
    },
    "education_num": {"lower": 1, "upper": 16},
    "marital": {
        "categories": [
            "Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent",
            "Never-married", "Separated", "Widowed",
        ]
    },
    "occupation": {
        "categories": [
            "?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial",
            "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service",
            "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support",
            "Transport-moving",
        ]
    },
    "relationship": {
        "categories": [
            "Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried", "Wife",
        ]
    },
    "race": {
        "categories": [
            "Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White",
        ]
    },
    "sex": {"categories": ["Female", "Male"]},
    "capital_gain": {"lower": 0, "upper": 99999},
    "capital_loss": {"lower": 0, "upper": 4356},
    "hr_per_week": {"lower": 1, "upper": 99},
    "country": {
        "categories": [
            "?", "Cambodia", "Canada", "China", "Columbia", "Cuba", "Dominican-Republic",
            "Ecuador", "El-Salvador", "England", "France", "Germany", "Greece", "Guatemala",
            "Haiti", "Holand-Netherlands", "Honduras", "Hong", "Hungary", "India", "Iran",
            "Ireland", "Italy", "Jamaica", "Japan", "Laos", "Mexico", "Nicaragua",
            "Outlying-US(Guam-USVI-etc)", "Peru", "Philippines", "Poland", "Portugal",
            "Puerto-Rico", "Scotland", "South", "Taiwan", "Thailand", "Trinadad&Tobago",
            "United-States", "Vietnam", "Yugoslavia",
        ]
    },
    "income": {"categories": ["<=50K", ">50K"]},
}  # fmt: skip


def fit_sample(
    train: pd.DataFrame,
    n: int,
    seed: int,
    *,
    epsilon: float = 1.0,
    delta: float = 1e-5,
    n_bins: int = 20,
    n_iters: int = 5000,
) -> pd.DataFrame:
    """Fit dpmm's MST on ``train`` (ε, δ) and generate ``n`` rows, seeded by ``seed``."""
    import numpy as np
    from dpmm.pipelines import MSTPipeline

    np.random.seed(seed % 2**32)  # noqa: NPY002  (dpmm also draws from numpy's global generator)
    domain = {c: dict(ADULT_DOMAIN[c]) for c in train.columns}
    pipeline = MSTPipeline(
        epsilon=epsilon,
        delta=delta,
        proc_epsilon=None,
        n_bins=n_bins,
        n_jobs=1,
        gen_kwargs={"n_iters": n_iters},
    )
    pipeline.fit(train, domain, random_state=seed)
    return pd.DataFrame(pipeline.generate(n_records=int(n), random_state=seed))
