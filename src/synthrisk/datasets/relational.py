# SPDX-License-Identifier: BSD-3-Clause
"""Seeded related tables for testing multi-table privacy: a bank and a clinic.

* **bank**: ``customers`` → ``accounts`` → ``transactions`` (SDV multi-table metadata);
* **clinic**: ``patients`` → ``visits``, the visits a sequence ordered by ``visit_date``
  (multi-table metadata with a ``sequence_index``), or the same data as one sequence
  table with ``sequence_key`` (``sequential=True``).

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
  shuffled among the visits (the same events in another order).
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
    "CLINIC_METADATA",
    "CLINIC_SEQUENTIAL_METADATA",
    "RelationalData",
    "load_bank",
    "load_clinic",
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
    ``shuffled_sequences``) to its tables; ``copied`` maps each copying scenario to
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
