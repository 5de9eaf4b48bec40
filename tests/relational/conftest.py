# SPDX-License-Identifier: BSD-3-Clause
"""A small bank with dates as text, for the tests of related tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

#: customers → accounts → transactions (a sequence, several events a day), and
#: customers → cards (a sibling of accounts); every table has a date column as text
DATED_METADATA: dict[str, Any] = {
    "METADATA_SPEC_VERSION": "MULTI_TABLE_V1",
    "tables": {
        "customers": {
            "primary_key": "customer_id",
            "columns": {
                "customer_id": {"sdtype": "id"},
                "age": {"sdtype": "numerical"},
                "region": {"sdtype": "categorical"},
                # no metadata entry for "born": ISO dates, recognised by content
            },
        },
        "accounts": {
            "primary_key": "account_id",
            "columns": {
                "account_id": {"sdtype": "id"},
                "customer_id": {"sdtype": "id"},
                "kind": {"sdtype": "categorical"},
                "balance": {"sdtype": "numerical"},
                "opened": {"sdtype": "datetime", "datetime_format": "%d/%m/%Y"},
            },
        },
        "cards": {
            "primary_key": "card_id",
            "columns": {
                "card_id": {"sdtype": "id"},
                "customer_id": {"sdtype": "id"},
                "limit": {"sdtype": "numerical"},
                "issued": {"sdtype": "datetime"},  # timestamps with a time of day
            },
        },
        "transactions": {
            "primary_key": "transaction_id",
            "sequence_index": "day",
            "columns": {
                "transaction_id": {"sdtype": "id"},
                "account_id": {"sdtype": "id"},
                "day": {"sdtype": "datetime", "datetime_format": "%Y-%m-%d"},
                "amount": {"sdtype": "numerical"},
                "category": {"sdtype": "categorical"},
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
            "parent_table_name": "customers",
            "parent_primary_key": "customer_id",
            "child_table_name": "cards",
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


def _dated_bank(
    n_people: int, *, seed: int, first_id: int = 0
) -> dict[str, pd.DataFrame]:
    """``n_people`` customers with accounts, cards and transactions; dates as text."""
    rng = np.random.default_rng(seed)
    ids = np.arange(first_id, first_id + n_people)
    born = pd.Timestamp("1950-01-01") + pd.to_timedelta(
        rng.integers(0, 15_000, n_people), unit="D"
    )
    customers = pd.DataFrame(
        {
            "customer_id": ids,
            "age": rng.integers(18, 90, n_people),
            "region": rng.choice(["north", "south", "east"], n_people),
            "born": born.strftime("%Y-%m-%d"),
        }
    )
    n_accounts = rng.integers(1, 3, n_people)
    owner = np.repeat(ids, n_accounts)
    opened = pd.Timestamp("2015-01-01") + pd.to_timedelta(
        rng.integers(0, 2_000, owner.size), unit="D"
    )
    accounts = pd.DataFrame(
        {
            "account_id": np.arange(owner.size) + 10 * first_id,
            "customer_id": owner,
            "kind": rng.choice(["current", "savings"], owner.size),
            # sums of these differ in the last digit when added in another order
            "balance": rng.normal(1_000, 400, owner.size).round(2) + 0.1,
            "opened": opened.strftime("%d/%m/%Y"),
        }
    )
    n_cards = rng.integers(0, 3, n_people)
    holder = np.repeat(ids, n_cards)
    issued = pd.Timestamp("2018-01-01") + pd.to_timedelta(
        rng.integers(0, 2_000 * 24 * 60, holder.size), unit="min"
    )
    cards = pd.DataFrame(
        {
            "card_id": np.arange(holder.size) + 10 * first_id,
            "customer_id": holder,
            "limit": rng.choice([500.0, 1_000.0, 2_500.0], holder.size) + 0.3,
            "issued": issued.strftime("%Y-%m-%d %H:%M:%S"),
        }
    )
    n_tx = rng.integers(2, 6, owner.size)
    account = np.repeat(accounts["account_id"].to_numpy(), n_tx)
    # few days, so that several events of an account fall on one day
    day = pd.Timestamp("2022-01-01") + pd.to_timedelta(
        rng.integers(0, 4, account.size), unit="D"
    )
    transactions = pd.DataFrame(
        {
            "transaction_id": np.arange(account.size) + 100 * first_id,
            "account_id": account,
            "day": day.strftime("%Y-%m-%d"),
            "amount": (rng.lognormal(3, 1, account.size) * 100).round() / 100 + 0.01,
            "category": rng.choice(["food", "rent", "travel", "fun"], account.size),
        }
    )
    return {
        "customers": customers,
        "accounts": accounts,
        "cards": cards,
        "transactions": transactions,
    }


@pytest.fixture(scope="session")
def dated_bank() -> Callable[..., dict[str, pd.DataFrame]]:
    """The builder of the dated bank: ``dated_bank(n_people, seed=…, first_id=…)``."""
    return _dated_bank


@pytest.fixture(scope="module")
def dated() -> dict[str, Any]:
    """Training, synthetic (new people) and holdout sides of the dated bank."""
    return {
        "real": _dated_bank(60, seed=1),
        "synthetic": _dated_bank(60, seed=2, first_id=1_000),
        "holdout": _dated_bank(20, seed=3, first_id=2_000),
        "metadata": DATED_METADATA,
    }
