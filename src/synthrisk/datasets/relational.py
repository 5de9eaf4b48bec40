# SPDX-License-Identifier: BSD-3-Clause
"""Seeded related tables for testing multi-table privacy: a bank, a clinic, a hospital, claims.

* **bank**: ``customers`` → ``accounts`` → ``transactions`` (SDV multi-table metadata);
* **clinic**: ``patients`` → ``visits``, the visits a sequence ordered by ``visit_date``
  (multi-table metadata with a ``sequence_index``), or the same data as one sequence
  table with ``sequence_key`` (``sequential=True``);
* **hospital**: ``patients`` (with a date of birth) → ``admissions`` (a sequence by
  admission date) → ``procedures``, and ``patients`` → ``prescriptions``: a grandchild,
  sibling child tables, heavy-tailed history lengths and codes of hundreds of levels;
* **claims**: insurance claims as one SDV sequential table (``sequence_key`` ``member_id``,
  ``sequence_index`` ``claim_date``), several claim lines on one day, codes of many levels
  and amounts.

Each loader draws one population of people (every person with all their rows), splits
it into ``real`` (training) and ``holdout`` people, and builds synthetic versions:

* ``null`` — new people from the same population model, with all their rows (an ideal
  generator that saw no one);
* ``whole_copies`` — ``null`` with a share of its people replaced by exact copies of
  training people: the root row and every child row (new keys);
* ``child_copies`` — ``null`` with a share of its people given copies of a training
  person's child rows (all of them, with their children), attached to the new person's
  own root row;
* ``shuffled_sequences`` (clinic only) — ``null`` with a share of its people replaced by
  copies of training patients whose visits keep their dates but have their other values
  shuffled among the visits (the same events in another order);
* ``one_table_copies`` (hospital only) — ``null`` with a share of its people given copies
  of a training person's rows of *one* child table (their prescriptions), their other
  tables their own;
* ``long_rare_copies`` (hospital and claims) — ``null`` with its first people replaced by
  whole copies of the 0.5 % of training people with the longest, rarest histories (the
  most coded rows, weighted by how rare each code is).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from synthrisk._rng import as_generator
from synthrisk._validation import check_int

__all__ = [
    "BANK_METADATA",
    "CLAIMS_METADATA",
    "CLINIC_METADATA",
    "CLINIC_SEQUENTIAL_METADATA",
    "HOSPITAL_METADATA",
    "RelationalData",
    "hospital_people",
    "load_bank",
    "load_claims",
    "load_clinic",
    "load_hospital",
]

BANK_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "customers": {
            "primary_key": "customer_id",
            "columns": {
                "customer_id": {"sdtype": "id"},
                "age": {"sdtype": "numerical"},
                "region": {"sdtype": "categorical"},
                "segment": {"sdtype": "categorical"},
                "income": {"sdtype": "numerical"},
            },
        },
        "accounts": {
            "primary_key": "account_id",
            "columns": {
                "account_id": {"sdtype": "id"},
                "customer_id": {"sdtype": "id"},
                "kind": {"sdtype": "categorical"},
                "opened": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "balance": {"sdtype": "numerical"},
            },
        },
        "transactions": {
            "primary_key": "transaction_id",
            "columns": {
                "transaction_id": {"sdtype": "id"},
                "account_id": {"sdtype": "id"},
                "amount": {"sdtype": "numerical"},
                "channel": {"sdtype": "categorical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "customers",
            "parent_primary_key": "customer_id",
            "child_table_name": "accounts",
            "child_foreign_key": "customer_id",
        },
        {
            "parent_table_name": "accounts",
            "parent_primary_key": "account_id",
            "child_table_name": "transactions",
            "child_foreign_key": "account_id",
        },
    ],
}

CLINIC_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "patients": {
            "primary_key": "patient_id",
            "columns": {
                "patient_id": {"sdtype": "id"},
                "age": {"sdtype": "numerical"},
                "sex": {"sdtype": "categorical"},
                "region": {"sdtype": "categorical"},
            },
        },
        "visits": {
            "primary_key": "visit_id",
            "sequence_index": "visit_date",
            "columns": {
                "visit_id": {"sdtype": "id"},
                "patient_id": {"sdtype": "id"},
                "visit_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "department": {"sdtype": "categorical"},
                "cost": {"sdtype": "numerical"},
                "severity": {"sdtype": "numerical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "patients",
            "parent_primary_key": "patient_id",
            "child_table_name": "visits",
            "child_foreign_key": "patient_id",
        }
    ],
}

CLINIC_SEQUENTIAL_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "SINGLE_TABLE_V1",
    "columns": {
        "patient_id": {"sdtype": "id"},
        "age": {"sdtype": "numerical"},
        "sex": {"sdtype": "categorical"},
        "region": {"sdtype": "categorical"},
        "visit_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        "department": {"sdtype": "categorical"},
        "cost": {"sdtype": "numerical"},
        "severity": {"sdtype": "numerical"},
    },
    "sequence_key": "patient_id",
    "sequence_index": "visit_date",
}

_REGIONS = ["north", "south", "east", "west", "centre", "coast"]
_SEGMENTS = ["retail", "premium", "business"]
_KINDS = ["checking", "savings", "credit"]
_CHANNELS = ["card", "online", "atm", "transfer"]
_DEPARTMENTS = [
    "cardiology",
    "oncology",
    "general",
    "orthopaedics",
    "neurology",
    "emergency",
]
_BASE = np.datetime64("2015-01-01")


@dataclasses.dataclass(frozen=True)
class RelationalData:
    """Real, holdout and synthetic related tables with their metadata.

    ``synthetic`` maps a scenario (``null``, ``whole_copies``, ``child_copies``,
    ``shuffled_sequences``, ``one_table_copies``, ``long_rare_copies``: those of the
    dataset) to its tables; ``copied`` maps each copying scenario to
    the root keys of the training people it copied, in the order of their copies
    (the first synthetic root rows).
    """

    real: dict[str, pd.DataFrame]
    holdout: dict[str, pd.DataFrame]
    synthetic: dict[str, dict[str, pd.DataFrame]]
    metadata: dict[str, Any]
    copied: dict[str, list[str]]


# ---------------------------------------------------------------- bank


def _bank_people(
    n: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    ids = [f"{prefix}c{i:05d}" for i in range(n)]
    age = rng.integers(18, 90, n)
    income = np.round(rng.lognormal(10.3, 0.6, n) * (1 + (age - 18) / 120), 2)
    customers = pd.DataFrame(
        {
            "customer_id": ids,
            "age": age,
            "region": rng.choice(_REGIONS, n),
            "segment": rng.choice(_SEGMENTS, n, p=[0.7, 0.2, 0.1]),
            "income": income,
        }
    )
    n_accounts = rng.integers(1, 4, n)
    owner = np.repeat(np.arange(n), n_accounts)
    m = owner.size
    accounts = pd.DataFrame(
        {
            "account_id": [f"{prefix}a{i:06d}" for i in range(m)],
            "customer_id": np.asarray(ids, dtype=object)[owner],
            "kind": rng.choice(_KINDS, m),
            "opened": _BASE + rng.integers(0, 3000, m).astype("timedelta64[D]"),
            "balance": np.round(rng.gamma(2.0, income[owner] / 20), 2),
        }
    )
    n_tx = rng.integers(0, 7, m)
    account = np.repeat(np.arange(m), n_tx)
    t = account.size
    transactions = pd.DataFrame(
        {
            "transaction_id": [f"{prefix}t{i:07d}" for i in range(t)],
            "account_id": accounts["account_id"].to_numpy()[account],
            "amount": np.round(rng.lognormal(3.5, 1.0, t), 2),
            "channel": rng.choice(_CHANNELS, t),
        }
    )
    return {"customers": customers, "accounts": accounts, "transactions": transactions}


def _take_people(
    tables: dict[str, pd.DataFrame], ids: np.ndarray
) -> dict[str, pd.DataFrame]:
    customers = tables["customers"][tables["customers"]["customer_id"].isin(ids)]
    accounts = tables["accounts"][tables["accounts"]["customer_id"].isin(ids)]
    transactions = tables["transactions"][
        tables["transactions"]["account_id"].isin(accounts["account_id"])
    ]
    return {
        "customers": customers.reset_index(drop=True),
        "accounts": accounts.reset_index(drop=True),
        "transactions": transactions.reset_index(drop=True),
    }


def _rekey_bank(
    tables: dict[str, pd.DataFrame], prefix: str
) -> dict[str, pd.DataFrame]:
    """Give every row a new key (``prefix`` + position), foreign keys remapped."""
    c = tables["customers"].copy()
    a = tables["accounts"].copy()
    t = tables["transactions"].copy()
    cmap = dict(
        zip(c["customer_id"], [f"{prefix}c{i:05d}" for i in range(len(c))], strict=True)
    )
    amap = dict(
        zip(a["account_id"], [f"{prefix}a{i:06d}" for i in range(len(a))], strict=True)
    )
    c["customer_id"] = c["customer_id"].map(cmap)
    a["customer_id"] = a["customer_id"].map(cmap)
    a["account_id"] = a["account_id"].map(amap)
    t["account_id"] = t["account_id"].map(amap)
    t["transaction_id"] = [f"{prefix}t{i:07d}" for i in range(len(t))]
    return {"customers": c, "accounts": a, "transactions": t}


def _concat(parts: list[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    return {
        name: pd.concat([p[name] for p in parts], ignore_index=True)
        for name in parts[0]
    }


def load_bank(
    n_customers: int = 400,
    *,
    holdout_share: float = 0.2,
    copy_share: float = 0.05,
    seed: int = 0,
) -> RelationalData:
    """Customers with accounts with transactions: real, holdout and synthetic versions.

    Parameters
    ----------
    n_customers : int, default=400
        Real people (training and holdout together); the synthetic tables have as many
        customers as the training tables.
    holdout_share : float, default=0.2
        Share of the real people held out.
    copy_share : float, default=0.05
        Share of the synthetic people that copy a training person (at least one).
    seed : int, default=0
        Seed of every draw.

    Returns
    -------
    RelationalData
        Scenarios ``null``, ``whole_copies`` and ``child_copies``.
    """
    n_customers = check_int(n_customers, name="n_customers", minimum=10)
    rng = as_generator(check_int(seed, name="seed", minimum=0))
    pop_rng, syn_rng, pick_rng = rng.spawn(3)
    population = _bank_people(n_customers, pop_rng, "")
    ids = population["customers"]["customer_id"].to_numpy()
    n_holdout = max(1, round(holdout_share * n_customers))
    real = _take_people(population, ids[: n_customers - n_holdout])
    holdout = _take_people(population, ids[n_customers - n_holdout :])
    n_real = len(real["customers"])
    null = _rekey_bank(_bank_people(n_real, syn_rng, "n"), "s")
    n_copy = max(1, round(copy_share * n_real))
    # in the real table's order: the i-th copied person is the i-th synthetic copy
    real_ids = real["customers"]["customer_id"].to_numpy()
    chosen = real_ids[np.sort(pick_rng.choice(real_ids.size, n_copy, replace=False))]
    keep = null["customers"]["customer_id"].to_numpy()[n_copy:]

    whole = _rekey_bank(
        _concat([_take_people(real, chosen), _take_people(null, keep)]), "s"
    )

    # copies of children: the first n_copy null customers get a training person's
    # accounts (and their transactions)
    hosts = null["customers"]["customer_id"].to_numpy()[:n_copy]
    donor = _take_people(real, chosen)
    host_of = dict(zip(chosen, hosts, strict=True))
    donor_accounts = donor["accounts"].assign(
        customer_id=donor["accounts"]["customer_id"].map(host_of)
    )
    rest = _take_people(null, keep)
    child = {
        "customers": null["customers"],
        "accounts": pd.concat([donor_accounts, rest["accounts"]], ignore_index=True),
        "transactions": pd.concat(
            [donor["transactions"], rest["transactions"]], ignore_index=True
        ),
    }
    child = _rekey_bank(child, "s")
    return RelationalData(
        real=real,
        holdout=holdout,
        synthetic={"null": null, "whole_copies": whole, "child_copies": child},
        metadata=BANK_METADATA,
        copied={
            "whole_copies": [str(c) for c in chosen],
            "child_copies": [str(c) for c in chosen],
        },
    )


# ---------------------------------------------------------------- clinic


def _clinic_people(
    n: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    ids = [f"{prefix}p{i:05d}" for i in range(n)]
    age = rng.integers(1, 95, n)
    patients = pd.DataFrame(
        {
            "patient_id": ids,
            "age": age,
            "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(_REGIONS, n),
        }
    )
    n_visits = rng.integers(1, 9, n)
    owner = np.repeat(np.arange(n), n_visits)
    m = owner.size
    start = rng.integers(0, 2500, n)
    gaps = rng.integers(1, 120, m)
    first = np.r_[True, owner[1:] != owner[:-1]]
    day = np.empty(m, dtype=np.int64)
    for i in range(m):
        day[i] = start[owner[i]] if first[i] else day[i - 1] + gaps[i]
    visits = pd.DataFrame(
        {
            "visit_id": [f"{prefix}v{i:06d}" for i in range(m)],
            "patient_id": np.asarray(ids, dtype=object)[owner],
            "visit_date": _BASE + day.astype("timedelta64[D]"),
            "department": rng.choice(_DEPARTMENTS, m),
            "cost": np.round(rng.lognormal(5.0, 0.8, m) * (1 + age[owner] / 100), 2),
            "severity": rng.integers(1, 6, m),
        }
    )
    return {"patients": patients, "visits": visits}


def _take_patients(
    tables: dict[str, pd.DataFrame], ids: np.ndarray
) -> dict[str, pd.DataFrame]:
    return {
        "patients": tables["patients"][
            tables["patients"]["patient_id"].isin(ids)
        ].reset_index(drop=True),
        "visits": tables["visits"][
            tables["visits"]["patient_id"].isin(ids)
        ].reset_index(drop=True),
    }


def _rekey_clinic(
    tables: dict[str, pd.DataFrame], prefix: str
) -> dict[str, pd.DataFrame]:
    p = tables["patients"].copy()
    v = tables["visits"].copy()
    pmap = dict(
        zip(p["patient_id"], [f"{prefix}p{i:05d}" for i in range(len(p))], strict=True)
    )
    p["patient_id"] = p["patient_id"].map(pmap)
    v["patient_id"] = v["patient_id"].map(pmap)
    v["visit_id"] = [f"{prefix}v{i:06d}" for i in range(len(v))]
    return {"patients": p, "visits": v}


def _flatten(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    merged = (
        tables["visits"]
        .drop(columns="visit_id")
        .merge(tables["patients"], on="patient_id", how="left")
    )
    return {"visits": merged[list(CLINIC_SEQUENTIAL_METADATA["columns"])]}


def load_clinic(
    n_patients: int = 400,
    *,
    holdout_share: float = 0.2,
    copy_share: float = 0.05,
    sequential: bool = False,
    seed: int = 0,
) -> RelationalData:
    """Patients with a sequence of visits: real, holdout and synthetic versions.

    Parameters
    ----------
    n_patients : int, default=400
        Real people (training and holdout together).
    holdout_share : float, default=0.2
        Share of the real people held out.
    copy_share : float, default=0.05
        Share of the synthetic people that copy a training person (at least one).
    sequential : bool, default=False
        Give each side as one sequence table ``visits`` (patient columns repeated on
        every visit) with :data:`CLINIC_SEQUENTIAL_METADATA`, instead of two tables.
    seed : int, default=0
        Seed of every draw.

    Returns
    -------
    RelationalData
        Scenarios ``null``, ``whole_copies``, ``child_copies`` and
        ``shuffled_sequences``.
    """
    n_patients = check_int(n_patients, name="n_patients", minimum=10)
    if not isinstance(sequential, bool):
        msg = f"`sequential` must be true or false; got {sequential!r}."
        raise TypeError(msg)
    rng = as_generator(check_int(seed, name="seed", minimum=0))
    pop_rng, syn_rng, pick_rng, shuffle_rng = rng.spawn(4)
    population = _clinic_people(n_patients, pop_rng, "")
    ids = population["patients"]["patient_id"].to_numpy()
    n_holdout = max(1, round(holdout_share * n_patients))
    real = _take_patients(population, ids[: n_patients - n_holdout])
    holdout = _take_patients(population, ids[n_patients - n_holdout :])
    n_real = len(real["patients"])
    null = _rekey_clinic(_clinic_people(n_real, syn_rng, "n"), "s")
    n_copy = max(1, round(copy_share * n_real))
    # in the real table's order: the i-th copied person is the i-th synthetic copy
    real_ids = real["patients"]["patient_id"].to_numpy()
    chosen = real_ids[np.sort(pick_rng.choice(real_ids.size, n_copy, replace=False))]
    keep = null["patients"]["patient_id"].to_numpy()[n_copy:]
    donor = _take_patients(real, chosen)
    rest = _take_patients(null, keep)
    whole = _rekey_clinic(_concat([donor, rest]), "s")

    hosts = null["patients"]["patient_id"].to_numpy()[:n_copy]
    host_of = dict(zip(chosen, hosts, strict=True))
    moved = donor["visits"].assign(
        patient_id=donor["visits"]["patient_id"].map(host_of)
    )
    child = _rekey_clinic(
        {
            "patients": null["patients"],
            "visits": pd.concat([moved, rest["visits"]], ignore_index=True),
        },
        "s",
    )

    shuffled_visits = donor["visits"].copy()
    for _, rows in shuffled_visits.groupby("patient_id", sort=False).indices.items():
        order = shuffle_rng.permutation(rows)
        for column in ("department", "cost", "severity"):
            values = shuffled_visits[column].to_numpy()[order]
            shuffled_visits.iloc[rows, shuffled_visits.columns.get_loc(column)] = values
    shuffled = _rekey_clinic(
        _concat([{"patients": donor["patients"], "visits": shuffled_visits}, rest]), "s"
    )
    synthetic = {
        "null": null,
        "whole_copies": whole,
        "child_copies": child,
        "shuffled_sequences": shuffled,
    }
    metadata = CLINIC_METADATA
    if sequential:
        real, holdout = _flatten(real), _flatten(holdout)
        synthetic = {k: _flatten(v) for k, v in synthetic.items()}
        metadata = CLINIC_SEQUENTIAL_METADATA
    copied = {k: [str(c) for c in chosen] for k in synthetic if k != "null"}
    return RelationalData(real, holdout, synthetic, metadata, copied)


# ---------------------------------------------------------------- hospital

HOSPITAL_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "patients": {
            "primary_key": "patient_id",
            "columns": {
                "patient_id": {"sdtype": "id"},
                "date_of_birth": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "sex": {"sdtype": "categorical"},
                "ethnicity": {"sdtype": "categorical"},
                "insurance": {"sdtype": "categorical"},
                "marital": {"sdtype": "categorical"},
            },
        },
        "admissions": {
            "primary_key": "admission_id",
            "sequence_index": "admit_date",
            "columns": {
                "admission_id": {"sdtype": "id"},
                "patient_id": {"sdtype": "id"},
                "admit_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "los_days": {"sdtype": "numerical"},
                "charges": {"sdtype": "numerical"},
                "admission_type": {"sdtype": "categorical"},
                "discharge": {"sdtype": "categorical"},
                "diagnosis": {"sdtype": "categorical"},
            },
        },
        "prescriptions": {
            "primary_key": "prescription_id",
            "columns": {
                "prescription_id": {"sdtype": "id"},
                "patient_id": {"sdtype": "id"},
                "drug": {"sdtype": "categorical"},
                "dose": {"sdtype": "numerical"},
                "days_supply": {"sdtype": "numerical"},
                "route": {"sdtype": "categorical"},
            },
        },
        "procedures": {
            "primary_key": "procedure_id",
            "columns": {
                "procedure_id": {"sdtype": "id"},
                "admission_id": {"sdtype": "id"},
                "procedure_code": {"sdtype": "categorical"},
                "duration_min": {"sdtype": "numerical"},
                "priority": {"sdtype": "categorical"},
            },
        },
    },
    "relationships": [
        {
            "parent_table_name": "patients",
            "parent_primary_key": "patient_id",
            "child_table_name": "admissions",
            "child_foreign_key": "patient_id",
        },
        {
            "parent_table_name": "patients",
            "parent_primary_key": "patient_id",
            "child_table_name": "prescriptions",
            "child_foreign_key": "patient_id",
        },
        {
            "parent_table_name": "admissions",
            "parent_primary_key": "admission_id",
            "child_table_name": "procedures",
            "child_foreign_key": "admission_id",
        },
    ],
}

_ETHNICITIES = ["a", "b", "c", "d", "e", "f"]
_INSURANCES = ["public", "private", "self", "other"]
_MARITAL = ["single", "married", "divorced", "widowed", "unknown"]
_ADMISSION_TYPES = ["emergency", "elective", "urgent", "transfer"]
_DISCHARGES = ["home", "home care", "rehab", "nursing", "died"]
_ROUTES = ["oral", "iv", "topical"]
_PRIORITIES = ["routine", "urgent", "emergency"]
#: the coded column of each table below the root (rarity of a history)
_HOSPITAL_CODES = {
    "admissions": "diagnosis",
    "procedures": "procedure_code",
    "prescriptions": "drug",
}


def _codes(
    prefix: str, n_levels: int, size: int, rng: np.random.Generator
) -> np.ndarray:
    """``size`` codes of ``n_levels`` levels with Zipf-like frequencies (rare codes)."""
    weights = 1.0 / np.arange(1, n_levels + 1) ** 1.1
    picked = rng.choice(n_levels, size, p=weights / weights.sum())
    return np.char.add(prefix, picked.astype(str)).astype(object)


def hospital_people(
    n: int, rng: np.random.Generator, prefix: str = "", *, rows: int = 10
) -> dict[str, pd.DataFrame]:
    """``n`` patients with all their rows: heavy-tailed admissions and prescriptions.

    Admissions per patient are Zipf-distributed (1 to 60, mean about 2.8), each with a
    Poisson number of procedures (mean 1.5); prescriptions per patient are negative
    binomial (mean about ``rows / 2``). Diagnoses (500 levels), drugs (300) and
    procedure codes (800) have Zipf-like frequencies. Keys start with ``prefix``
    (``p``, ``a``, ``x``, ``r`` then a number). Vectorised: 100,000 patients take
    seconds.
    """
    ids = np.char.add(prefix + "p", np.arange(n).astype(str)).astype(object)
    birth = rng.integers(0, 90 * 365, n)
    root = pd.DataFrame(
        {
            "patient_id": ids,
            "date_of_birth": np.datetime64("1930-01-01")
            + birth.astype("timedelta64[D]"),
            "sex": rng.choice(["f", "m"], n),
            "ethnicity": rng.choice(
                _ETHNICITIES, n, p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05]
            ),
            "insurance": rng.choice(_INSURANCES, n, p=[0.5, 0.35, 0.1, 0.05]),
            "marital": rng.choice(_MARITAL, n),
        }
    )
    n_adm = np.minimum(rng.zipf(2.0, n), 60)
    m = int(n_adm.sum())
    owner = np.repeat(np.arange(n), n_adm)
    start = rng.integers(0, 3000, n)[owner]
    gaps = rng.integers(1, 400, m)
    first = np.r_[0, np.cumsum(n_adm)[:-1]]
    within = np.cumsum(gaps) - np.repeat(np.cumsum(gaps)[first] - gaps[first], n_adm)
    adm_ids = np.char.add(prefix + "a", np.arange(m).astype(str)).astype(object)
    los = np.round(rng.lognormal(1.2, 0.8, m), 1)
    admissions = pd.DataFrame(
        {
            "admission_id": adm_ids,
            "patient_id": ids[owner],
            "admit_date": np.datetime64("2010-01-01")
            + (start + within).astype("timedelta64[D]"),
            "los_days": los,
            "charges": np.round(los * rng.lognormal(7.5, 0.5, m), 2),
            "admission_type": rng.choice(_ADMISSION_TYPES, m, p=[0.5, 0.3, 0.15, 0.05]),
            "discharge": rng.choice(_DISCHARGES, m, p=[0.6, 0.15, 0.1, 0.1, 0.05]),
            "diagnosis": _codes("D", 500, m, rng),
        }
    )
    n_proc = rng.poisson(1.5, m)
    q = int(n_proc.sum())
    procedures = pd.DataFrame(
        {
            "procedure_id": np.char.add(prefix + "x", np.arange(q).astype(str)).astype(
                object
            ),
            "admission_id": adm_ids[np.repeat(np.arange(m), n_proc)],
            "procedure_code": _codes("P", 800, q, rng),
            "duration_min": np.round(rng.lognormal(3.5, 0.7, q)),
            "priority": rng.choice(_PRIORITIES, q, p=[0.7, 0.2, 0.1]),
        }
    )
    n_rx = rng.negative_binomial(1.0, 1.0 / (1.0 + rows / 2), n)
    r = int(n_rx.sum())
    prescriptions = pd.DataFrame(
        {
            "prescription_id": np.char.add(
                prefix + "r", np.arange(r).astype(str)
            ).astype(object),
            "patient_id": ids[np.repeat(np.arange(n), n_rx)],
            "drug": _codes("R", 300, r, rng),
            "dose": np.round(rng.lognormal(3.0, 1.0, r), 1),
            "days_supply": rng.choice([7, 14, 30, 60, 90], r),
            "route": rng.choice(_ROUTES, r, p=[0.7, 0.2, 0.1]),
        }
    )
    return {
        "patients": root,
        "admissions": admissions,
        "prescriptions": prescriptions,
        "procedures": procedures,
    }


def _take_hospital(
    tables: dict[str, pd.DataFrame], ids: np.ndarray
) -> dict[str, pd.DataFrame]:
    """The patients ``ids`` with all their rows."""
    admissions = tables["admissions"][tables["admissions"]["patient_id"].isin(ids)]
    out = {
        "patients": tables["patients"][tables["patients"]["patient_id"].isin(ids)],
        "admissions": admissions,
        "prescriptions": tables["prescriptions"][
            tables["prescriptions"]["patient_id"].isin(ids)
        ],
        "procedures": tables["procedures"][
            tables["procedures"]["admission_id"].isin(admissions["admission_id"])
        ],
    }
    return {name: frame.reset_index(drop=True) for name, frame in out.items()}


def _rekey_hospital(
    tables: dict[str, pd.DataFrame], prefix: str
) -> dict[str, pd.DataFrame]:
    """Give every row a new key (``prefix`` + a letter + position), foreign keys remapped."""
    out = {name: frame.copy() for name, frame in tables.items()}

    def new(letter: str, n: int) -> np.ndarray:
        return np.char.add(prefix + letter, np.arange(n).astype(str)).astype(object)

    p, a = out["patients"], out["admissions"]
    pmap = dict(zip(p["patient_id"], new("p", len(p)), strict=True))
    amap = dict(zip(a["admission_id"], new("a", len(a)), strict=True))
    p["patient_id"] = p["patient_id"].map(pmap)
    a["patient_id"] = a["patient_id"].map(pmap)
    a["admission_id"] = a["admission_id"].map(amap)
    rx, x = out["prescriptions"], out["procedures"]
    rx["patient_id"] = rx["patient_id"].map(pmap)
    rx["prescription_id"] = new("r", len(rx))
    x["admission_id"] = x["admission_id"].map(amap)
    x["procedure_id"] = new("x", len(x))
    return out


def _rarest_histories(
    rows: dict[str, tuple[pd.Series, pd.Series]], ids: np.ndarray, share: float
) -> np.ndarray:
    """The ``share`` of ``ids`` (at least one) with the longest, rarest histories.

    ``rows`` maps a table to (the person of each row, the code of each row); a
    person's score is the sum over their rows of ``-log`` of their code's share among
    that table's rows (a row of a code held by one row in ten thousand adds 9.2, a
    row of a common code little). Ties by position in ``ids``.
    """
    score = pd.Series(0.0, index=pd.Index(ids))
    for person, code in rows.values():
        freq = code.map(code.value_counts(normalize=True)).to_numpy(dtype=float)
        per_person = pd.Series(-np.log(freq)).groupby(person.to_numpy()).sum()
        score = score.add(per_person, fill_value=0.0)
    score = score.reindex(ids).fillna(0.0)
    k = max(1, round(share * ids.size))
    order = np.argsort(-score.to_numpy(), kind="stable")[:k]
    return ids[np.sort(order)]


def _hospital_code_rows(
    tables: dict[str, pd.DataFrame],
) -> dict[str, tuple[pd.Series, pd.Series]]:
    person_of_admission = tables["admissions"].set_index("admission_id")["patient_id"]
    procedures = tables["procedures"]
    return {
        "admissions": (
            tables["admissions"]["patient_id"],
            tables["admissions"]["diagnosis"],
        ),
        "procedures": (
            procedures["admission_id"].map(person_of_admission),
            procedures["procedure_code"],
        ),
        "prescriptions": (
            tables["prescriptions"]["patient_id"],
            tables["prescriptions"]["drug"],
        ),
    }


def load_hospital(
    n_patients: int = 2000,
    *,
    holdout_share: float = 0.2,
    copy_share: float = 0.01,
    long_share: float = 0.005,
    rows: int = 10,
    seed: int = 0,
) -> RelationalData:
    """Patients, admissions, procedures and prescriptions: real, holdout and synthetic versions.

    ``patients`` (date of birth, sex, ethnicity, insurance, marital status) →
    ``admissions`` (Zipf-distributed, 1 to 60 per patient, a sequence by admission date;
    length of stay, charges, type, discharge, a diagnosis of 500 levels) → ``procedures``
    (Poisson 1.5 per admission; a code of 800 levels, duration, priority); and
    ``patients`` → ``prescriptions`` (negative binomial, mean ``rows / 2``; a drug of 300
    levels, dose, days of supply, route). See :func:`hospital_people`.

    Parameters
    ----------
    n_patients : int, default=2000
        Real people (training and holdout together); the synthetic tables have as many
        patients as the training tables.
    holdout_share : float, default=0.2
        Share of the real people held out.
    copy_share : float, default=0.01
        Share of the synthetic people that copy a training person in the
        ``whole_copies``, ``child_copies`` and ``one_table_copies`` scenarios (at least
        one).
    long_share : float, default=0.005
        Share of the training people, those with the longest, rarest histories, copied
        whole in ``long_rare_copies`` (at least one).
    rows : int, default=10
        Twice the mean number of prescriptions per patient.
    seed : int, default=0
        Seed of every draw.

    Returns
    -------
    RelationalData
        Scenarios ``null``, ``whole_copies``, ``child_copies`` (a training person's
        admissions with their procedures and prescriptions under a new patient row),
        ``one_table_copies`` (a training person's prescriptions under a new patient who
        keeps their own admissions and procedures; donors with at least one
        prescription) and ``long_rare_copies``.
    """
    n_patients = check_int(n_patients, name="n_patients", minimum=10)
    rows = check_int(rows, name="rows", minimum=1)
    rng = as_generator(check_int(seed, name="seed", minimum=0))
    pop_rng, syn_rng, pick_rng = rng.spawn(3)
    population = hospital_people(n_patients, pop_rng, rows=rows)
    ids = population["patients"]["patient_id"].to_numpy()
    n_holdout = max(1, round(holdout_share * n_patients))
    # the holdout is a random subset of the people (not the last ones drawn), so the two
    # sides are exchangeable whatever the order the people were drawn in
    in_holdout = np.zeros(n_patients, dtype=bool)
    in_holdout[rng.spawn(1)[0].choice(n_patients, n_holdout, replace=False)] = True
    real = _take_hospital(population, ids[~in_holdout])
    holdout = _take_hospital(population, ids[in_holdout])
    n_real = len(real["patients"])
    null = _rekey_hospital(hospital_people(n_real, syn_rng, "n", rows=rows), "s")
    null_ids = null["patients"]["patient_id"].to_numpy()
    real_ids = real["patients"]["patient_id"].to_numpy()
    n_copy = max(1, round(copy_share * n_real))
    # in the real table's order: the i-th copied person is the i-th synthetic copy
    chosen = real_ids[np.sort(pick_rng.choice(real_ids.size, n_copy, replace=False))]
    keep = null_ids[n_copy:]
    whole = _rekey_hospital(
        _concat([_take_hospital(real, chosen), _take_hospital(null, keep)]),
        "s",
    )

    # a training person's rows below the root, under the first n_copy new patients
    donor = _take_hospital(real, chosen)
    host_of = dict(zip(chosen, null_ids[:n_copy], strict=True))
    rest = _take_hospital(null, keep)
    child = _rekey_hospital(
        {
            "patients": null["patients"],
            "admissions": pd.concat(
                [
                    donor["admissions"].assign(
                        patient_id=donor["admissions"]["patient_id"].map(host_of)
                    ),
                    rest["admissions"],
                ],
                ignore_index=True,
            ),
            "prescriptions": pd.concat(
                [
                    donor["prescriptions"].assign(
                        patient_id=donor["prescriptions"]["patient_id"].map(host_of)
                    ),
                    rest["prescriptions"],
                ],
                ignore_index=True,
            ),
            "procedures": pd.concat(
                [donor["procedures"], rest["procedures"]], ignore_index=True
            ),
        },
        "s",
    )

    # one child table: a training person's prescriptions under a new patient, whose
    # admissions and procedures are their own
    with_rx = real_ids[np.isin(real_ids, real["prescriptions"]["patient_id"])]
    rx_donors = with_rx[
        np.sort(pick_rng.choice(with_rx.size, min(n_copy, with_rx.size), replace=False))
    ]
    rx_host = dict(zip(rx_donors, null_ids[: rx_donors.size], strict=True))
    hosts = null_ids[: rx_donors.size]
    own_rx = null["prescriptions"][~null["prescriptions"]["patient_id"].isin(hosts)]
    copied_rx = real["prescriptions"][
        real["prescriptions"]["patient_id"].isin(rx_donors)
    ]
    one_table = _rekey_hospital(
        {
            "patients": null["patients"],
            "admissions": null["admissions"],
            "prescriptions": pd.concat(
                [
                    copied_rx.assign(patient_id=copied_rx["patient_id"].map(rx_host)),
                    own_rx,
                ],
                ignore_index=True,
            ),
            "procedures": null["procedures"],
        },
        "s",
    )

    longest = _rarest_histories(_hospital_code_rows(real), real_ids, long_share)
    long_rare = _rekey_hospital(
        _concat(
            [
                _take_hospital(real, longest),
                _take_hospital(null, null_ids[longest.size :]),
            ]
        ),
        "s",
    )
    return RelationalData(
        real=real,
        holdout=holdout,
        synthetic={
            "null": null,
            "whole_copies": whole,
            "child_copies": child,
            "one_table_copies": one_table,
            "long_rare_copies": long_rare,
        },
        metadata=HOSPITAL_METADATA,
        copied={
            "whole_copies": [str(c) for c in chosen],
            "child_copies": [str(c) for c in chosen],
            "one_table_copies": [str(c) for c in rx_donors],
            "long_rare_copies": [str(c) for c in longest],
        },
    )


# ---------------------------------------------------------------- claims

CLAIMS_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "SINGLE_TABLE_V1",
    "columns": {
        "member_id": {"sdtype": "id"},
        "date_of_birth": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        "sex": {"sdtype": "categorical"},
        "plan": {"sdtype": "categorical"},
        "region": {"sdtype": "categorical"},
        "claim_date": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
        "procedure_code": {"sdtype": "categorical"},
        "diagnosis_code": {"sdtype": "categorical"},
        "provider": {"sdtype": "categorical"},
        "amount": {"sdtype": "numerical"},
    },
    "sequence_key": "member_id",
    "sequence_index": "claim_date",
}

_PLANS = ["bronze", "silver", "gold", "platinum", "catastrophic"]
_PROVIDERS = ["clinic", "hospital", "pharmacy", "lab", "imaging", "specialist"]
_MEMBER_COLUMNS = ["member_id", "date_of_birth", "sex", "plan", "region"]


def _claims_people(
    n: int, rng: np.random.Generator, prefix: str
) -> dict[str, pd.DataFrame]:
    """``n`` members and their claim lines (two frames, flattened by :func:`_claims_table`).

    Visits per member are Zipf-distributed (1 to 60); each visit is one day with
    ``1 + Poisson(0.8)`` claim lines (same-day events), a procedure code of 1,200 levels
    and a diagnosis of 400 (Zipf-like), a provider type and an amount.
    """
    ids = np.char.add(prefix + "m", np.arange(n).astype(str)).astype(object)
    members = pd.DataFrame(
        {
            "member_id": ids,
            "date_of_birth": np.datetime64("1935-01-01")
            + rng.integers(0, 85 * 365, n).astype("timedelta64[D]"),
            "sex": rng.choice(["f", "m"], n),
            "plan": rng.choice(_PLANS, n, p=[0.3, 0.35, 0.2, 0.1, 0.05]),
            "region": rng.choice([f"R{i}" for i in range(10)], n),
        }
    )
    n_visits = np.minimum(rng.zipf(1.9, n), 60)
    v = int(n_visits.sum())
    owner = np.repeat(np.arange(n), n_visits)
    gaps = rng.integers(1, 200, v)
    first = np.r_[0, np.cumsum(n_visits)[:-1]]
    within = np.cumsum(gaps) - np.repeat(np.cumsum(gaps)[first] - gaps[first], n_visits)
    day = rng.integers(0, 1500, n)[owner] + within
    lines = 1 + rng.poisson(0.8, v)
    visit = np.repeat(np.arange(v), lines)
    m = visit.size
    claims = pd.DataFrame(
        {
            "member_id": ids[owner[visit]],
            "claim_date": np.datetime64("2016-01-01")
            + day[visit].astype("timedelta64[D]"),
            "procedure_code": _codes("C", 1200, m, rng),
            "diagnosis_code": _codes("I", 400, m, rng),
            "provider": rng.choice(
                _PROVIDERS, m, p=[0.35, 0.15, 0.25, 0.15, 0.05, 0.05]
            ),
            "amount": np.round(rng.lognormal(4.5, 1.2, m), 2),
        }
    )
    return {"members": members, "claims": claims}


def _take_members(
    tables: dict[str, pd.DataFrame], ids: np.ndarray
) -> dict[str, pd.DataFrame]:
    return {
        name: frame[frame["member_id"].isin(ids)].reset_index(drop=True)
        for name, frame in tables.items()
    }


def _rekey_members(
    tables: dict[str, pd.DataFrame], prefix: str
) -> dict[str, pd.DataFrame]:
    members = tables["members"].copy()
    new = np.char.add(prefix + "m", np.arange(len(members)).astype(str)).astype(object)
    mmap = dict(zip(members["member_id"], new, strict=True))
    members["member_id"] = new
    claims = tables["claims"].assign(member_id=tables["claims"]["member_id"].map(mmap))
    return {"members": members, "claims": claims}


def _claims_table(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The members' columns repeated on each of their claim lines: one sequence table."""
    merged = tables["claims"].merge(tables["members"], on="member_id", how="left")
    return {"claims": merged[list(CLAIMS_METADATA["columns"])]}


def load_claims(
    n_members: int = 2000,
    *,
    holdout_share: float = 0.2,
    copy_share: float = 0.01,
    long_share: float = 0.005,
    seed: int = 0,
) -> RelationalData:
    """Insurance claims as one SDV sequential table: real, holdout and synthetic versions.

    One table ``claims`` per side (metadata :data:`CLAIMS_METADATA`: ``sequence_key``
    ``member_id``, ``sequence_index`` ``claim_date``): each member's date of birth, sex,
    plan and region repeated on every claim line, and per line a procedure code (1,200
    levels), a diagnosis (400), a provider type and an amount. Visits per member are
    Zipf-distributed (1 to 60), each a day with one or more claim lines.

    Parameters
    ----------
    n_members : int, default=2000
        Real people (training and holdout together).
    holdout_share : float, default=0.2
        Share of the real people held out.
    copy_share : float, default=0.01
        Share of the synthetic members that copy a training member in ``whole_copies``
        and ``child_copies`` (at least one).
    long_share : float, default=0.005
        Share of the training members, those with the longest, rarest histories, copied
        whole in ``long_rare_copies`` (at least one).
    seed : int, default=0
        Seed of every draw.

    Returns
    -------
    RelationalData
        Scenarios ``null``, ``whole_copies``, ``child_copies`` (a training member's claim
        lines under a new member's id and columns) and ``long_rare_copies``.
    """
    n_members = check_int(n_members, name="n_members", minimum=10)
    rng = as_generator(check_int(seed, name="seed", minimum=0))
    pop_rng, syn_rng, pick_rng = rng.spawn(3)
    population = _claims_people(n_members, pop_rng, "")
    ids = population["members"]["member_id"].to_numpy()
    n_holdout = max(1, round(holdout_share * n_members))
    # the holdout is a random subset of the people (not the last ones drawn), so the two
    # sides are exchangeable whatever the order the people were drawn in
    in_holdout = np.zeros(n_members, dtype=bool)
    in_holdout[rng.spawn(1)[0].choice(n_members, n_holdout, replace=False)] = True
    real = _take_members(population, ids[~in_holdout])
    holdout = _take_members(population, ids[in_holdout])
    n_real = len(real["members"])
    null = _rekey_members(_claims_people(n_real, syn_rng, "n"), "s")
    null_ids = null["members"]["member_id"].to_numpy()
    real_ids = real["members"]["member_id"].to_numpy()
    n_copy = max(1, round(copy_share * n_real))
    chosen = real_ids[np.sort(pick_rng.choice(real_ids.size, n_copy, replace=False))]
    rest = _take_members(null, null_ids[n_copy:])
    donor = _take_members(real, chosen)
    whole = _rekey_members(_concat([donor, rest]), "s")
    host_of = dict(zip(chosen, null_ids[:n_copy], strict=True))
    child = _rekey_members(
        {
            "members": null["members"],
            "claims": pd.concat(
                [
                    donor["claims"].assign(
                        member_id=donor["claims"]["member_id"].map(host_of)
                    ),
                    rest["claims"],
                ],
                ignore_index=True,
            ),
        },
        "s",
    )
    claims = real["claims"]
    longest = _rarest_histories(
        {
            "procedure_code": (claims["member_id"], claims["procedure_code"]),
            "diagnosis_code": (claims["member_id"], claims["diagnosis_code"]),
        },
        real_ids,
        long_share,
    )
    long_rare = _rekey_members(
        _concat(
            [
                _take_members(real, longest),
                _take_members(null, null_ids[longest.size :]),
            ]
        ),
        "s",
    )
    synthetic = {
        "null": null,
        "whole_copies": whole,
        "child_copies": child,
        "long_rare_copies": long_rare,
    }
    return RelationalData(
        real=_claims_table(real),
        holdout=_claims_table(holdout),
        synthetic={k: _claims_table(v) for k, v in synthetic.items()},
        metadata=CLAIMS_METADATA,
        copied={
            "whole_copies": [str(c) for c in chosen],
            "child_copies": [str(c) for c in chosen],
            "long_rare_copies": [str(c) for c in longest],
        },
    )
