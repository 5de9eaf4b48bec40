# SPDX-License-Identifier: BSD-3-Clause
"""Generated populations for calibrating the verdict (``scripts/calibrate.py``) and its tests.

Three kinds of table a generator meets in practice: a coarse census-like one, where many
people share a record; correlated continuous measurements with missing values, where no
two people do; and a coarse panel, several yearly rows per person that often repeat one
another. Each draw is seeded by the generator passed in, and built from integer and
uniform draws only (no BLAS or LAPACK), so a seed gives the same table on every CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "clinic_data",
    "coarse_data",
    "continuous_data",
    "equicorrelated_normal",
    "panel_data",
]


def equicorrelated_normal(
    rng: np.random.Generator, n: int, width: int, rho: float = 0.5
) -> np.ndarray:
    """Standard normal columns with correlation ``rho`` between every pair, shape (n, width).

    Built element by element, ``sqrt(rho) * common + sqrt(1 - rho) * own``, so that the
    same seed gives the same values on every CPU. ``Generator.multivariate_normal``
    does not: it factors the covariance with LAPACK, and the repeated eigenvalue of an
    equicorrelated matrix leaves its eigenvectors to the BLAS kernel's rounding, which
    changes every draw from one machine to another.
    """
    common = rng.standard_normal((n, 1))
    own = rng.standard_normal((n, width))
    return np.sqrt(rho) * common + np.sqrt(1.0 - rho) * own


def coarse_data(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Census-like coarse table: categorical and small-integer columns, many duplicate rows."""
    age_band = rng.choice(8, n, p=[0.08, 0.14, 0.16, 0.16, 0.15, 0.13, 0.10, 0.08])
    sex = rng.choice(["f", "m"], n)
    region = rng.choice(list("ABCDEFGHIJ"), n, p=np.r_[0.3, np.full(9, 0.7 / 9)])
    edu = np.clip(np.round(rng.normal(2 + 0.2 * (age_band < 4), 1.1, n)), 0, 5).astype(
        int
    )
    children = np.minimum(rng.poisson(0.4 + 0.25 * age_band.clip(0, 4)), 5)
    employed = np.where(rng.random(n) < 0.25 + 0.1 * edu, "yes", "no")
    income_band = np.clip(edu + (employed == "yes") * 2 + rng.integers(-1, 2, n), 0, 8)
    marital = rng.choice(
        ["single", "married", "divorced", "widowed"], n, p=[0.35, 0.45, 0.12, 0.08]
    )
    household = np.clip(
        1 + children + (marital == "married") + rng.poisson(0.3, n), 1, 8
    )
    return pd.DataFrame(
        {
            "marital": marital,
            "household_size": household,
            "age_band": age_band,
            "sex": sex,
            "region": region,
            "education": edu.astype(str),
            "children": children,
            "employed": employed,
            "income_band": income_band,
        }
    )


def continuous_data(
    n: int,
    rng: np.random.Generator,
    *,
    missing: Sequence[str] = ("weight", "glucose", "pressure", "cholesterol"),
) -> pd.DataFrame:
    """Correlated continuous columns (lab-like measurements) with 5 % missing values.

    ``missing`` names the columns that lose about 5 % of their values.
    """
    z = equicorrelated_normal(rng, n, 5, 0.5)
    frame = pd.DataFrame(
        {
            "weight": np.round(75 + 14 * z[:, 0], 1),
            "height": np.round(172 + 9 * z[:, 1], 1),
            "glucose": np.round(np.exp(4.6 + 0.2 * z[:, 2]), 2),
            "pressure": np.round(125 + 15 * z[:, 3], 0),
            "cholesterol": np.round(5.2 + 1.0 * z[:, 4], 2),
            "group": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
        }
    )
    for column in missing:
        frame.loc[rng.random(n) < 0.05, column] = np.nan
    return frame


def _within_person(
    steps: np.ndarray, starts: np.ndarray, years: np.ndarray
) -> np.ndarray:
    """Running sum of ``steps`` restarted at each person's first row (rows grouped by person)."""
    total = np.cumsum(steps)
    before = total[starts] - steps[starts]
    return total - np.repeat(before, years)


def panel_data(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Coarse yearly panel: 2 to 6 rows per person (``person_id``), often identical.

    About ``n`` rows (whole people, at most ``n``), grouped by person. Sex, region, age
    band, education and marital status stay fixed over a person's years; employment
    flips, and the income band and household size step by one, with small yearly
    probabilities, so that about half of the people have identical rows in every year.
    Split such a table by person (all rows of a person on one side): ``person_id``
    repeats, which is how the per-person tests recognise it.
    """
    years = rng.integers(2, 7, n // 2 + 1)
    years = years[np.cumsum(years) <= n]
    if years.size == 0:
        years = np.array([min(max(n, 1), 6)])
    m = years.size
    starts = np.r_[0, np.cumsum(years)[:-1]]
    rows = int(years.sum())
    age_band = rng.choice(8, m, p=[0.08, 0.14, 0.16, 0.16, 0.15, 0.13, 0.10, 0.08])
    sex = rng.choice(["f", "m"], m)
    region = rng.choice(list("ABCDEFGHIJ"), m, p=np.r_[0.3, np.full(9, 0.7 / 9)])
    edu = np.clip(np.round(rng.normal(2 + 0.2 * (age_band < 4), 1.1, m)), 0, 5).astype(
        int
    )
    marital = rng.choice(
        ["single", "married", "divorced", "widowed"], m, p=[0.35, 0.45, 0.12, 0.08]
    )
    children = np.minimum(rng.poisson(0.4 + 0.25 * age_band.clip(0, 4)), 5)
    employed0 = rng.random(m) < 0.25 + 0.1 * edu
    first = np.zeros(rows, dtype=bool)
    first[starts] = True
    # yearly changes (none in a person's first year)
    flips = (rng.random(rows) < 0.08) & ~first
    employed = np.repeat(employed0, years) ^ (
        _within_person(flips, starts, years) % 2 == 1
    )
    income_step = (
        np.where(rng.random(rows) < 0.1, rng.choice([-1, 1], rows), 0) * ~first
    )
    income_band = np.clip(
        np.repeat(edu, years)
        + employed * 2
        + np.repeat(rng.integers(-1, 2, m), years)
        + _within_person(income_step, starts, years),
        0,
        8,
    )
    household_step = (
        np.where(rng.random(rows) < 0.06, rng.choice([-1, 1], rows), 0) * ~first
    )
    household = np.clip(
        np.repeat(1 + children + (marital == "married") + rng.poisson(0.3, m), years)
        + _within_person(household_step, starts, years),
        1,
        8,
    )
    return pd.DataFrame(
        {
            "person_id": np.repeat(np.arange(m, dtype=np.int64), years),
            "marital": np.repeat(marital, years),
            "household_size": household.astype(np.int64),
            "age_band": np.repeat(age_band, years).astype(np.int64),
            "sex": np.repeat(sex, years),
            "region": np.repeat(region, years),
            "education": np.repeat(edu.astype(str), years),
            "employed": np.where(employed, "yes", "no"),
            "income_band": income_band.astype(np.int64),
        }
    )


def clinic_data(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Clinic-like admissions, one row per patient: mixed kinds, a date, a code of many levels.

    Age, sex, region (12 levels), the admission date (two years), a diagnosis code of
    150 levels with Zipf-like frequencies (a few common, many rare), the length of stay
    (days, longer for older patients and some codes), blood pressure and HbA1c (rounded
    measurements, related to age), smoking and the outcome. Element-wise draws only, the
    same on every CPU.
    """
    age = np.clip(np.round(rng.gamma(9.0, 6.5, n)), 18, 99).astype(np.int64)
    sex = rng.choice(["f", "m"], n)
    region = rng.choice([f"R{i:02d}" for i in range(12)], n)
    days = rng.integers(0, 730, n)
    admitted = pd.Timestamp("2023-01-01") + pd.to_timedelta(days, unit="D")
    weights = 1.0 / np.arange(1, 151) ** 1.1
    code = rng.choice(150, n, p=weights / weights.sum())
    diagnosis = np.array([f"{chr(65 + c % 20)}{10 + c // 20:02d}" for c in code])
    stay = 1 + rng.geometric(1.0 / (2.0 + age / 25.0 + (code % 7 == 0) * 3.0))
    systolic = np.round(105 + 0.45 * age + rng.normal(0, 14, n))
    hba1c = np.round(np.clip(5.0 + 0.015 * age + rng.gamma(2.0, 0.4, n), 4.0, 14.0), 1)
    smoker = rng.random(n) < 0.22
    risk = 0.02 + 0.002 * (age - 18) + 0.01 * np.minimum(stay, 20)
    outcome = np.where(
        rng.random(n) < risk, np.where(rng.random(n) < 0.3, "died", "transfer"), "home"
    )
    return pd.DataFrame(
        {
            "age": age,
            "sex": sex,
            "region": region,
            "admitted": admitted,
            "diagnosis": diagnosis,
            "length_of_stay": stay.astype(np.int64),
            "systolic": systolic,
            "hba1c": hba1c,
            "smoker": smoker,
            "outcome": outcome,
        }
    )
