# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from synthrisk.datasets.relational import BANK_METADATA, load_bank, load_clinic
from synthrisk.exceptions import ParameterError
from synthrisk.relational import person_of_rows, split_people
from synthrisk.relational.metadata import load_metadata


@pytest.fixture(scope="module")
def bank() -> Any:
    return load_bank(n_customers=60, seed=2)


def _owner_of_transactions(tables: dict[str, Any]) -> np.ndarray:
    accounts = tables["accounts"].set_index("account_id")["customer_id"]
    return accounts.reindex(tables["transactions"]["account_id"]).to_numpy()


def test_person_of_rows_walks_two_foreign_keys(bank: Any) -> None:
    person = person_of_rows(bank.real, load_metadata(BANK_METADATA))
    assert set(person) == {"customers", "accounts", "transactions"}
    np.testing.assert_array_equal(
        person["transactions"].to_numpy(), _owner_of_transactions(bank.real)
    )
    np.testing.assert_array_equal(
        person["accounts"].to_numpy(), bank.real["accounts"]["customer_id"].to_numpy()
    )


def test_split_people_keeps_every_person_on_one_side(bank: Any) -> None:
    train, holdout = split_people(bank.real, BANK_METADATA, holdout_share=0.25, seed=3)
    people_train = set(train["customers"]["customer_id"])
    people_hold = set(holdout["customers"]["customer_id"])
    assert not people_train & people_hold
    assert len(people_hold) == round(0.25 * len(bank.real["customers"])) == 12
    # every row of every table is on exactly one side, with its person
    for name in ("accounts", "transactions"):
        assert len(train[name]) + len(holdout[name]) == len(bank.real[name])
    assert set(train["accounts"]["customer_id"]) <= people_train
    assert set(holdout["accounts"]["customer_id"]) <= people_hold
    assert set(_owner_of_transactions(train)) <= people_train
    assert set(_owner_of_transactions(holdout)) <= people_hold


def test_split_people_is_seeded(bank: Any) -> None:
    a = split_people(bank.real, BANK_METADATA, seed=1)[1]["customers"]["customer_id"]
    b = split_people(bank.real, BANK_METADATA, seed=1)[1]["customers"]["customer_id"]
    c = split_people(bank.real, BANK_METADATA, seed=2)[1]["customers"]["customer_id"]
    assert a.tolist() == b.tolist()
    assert a.tolist() != c.tolist()


def test_split_people_splits_a_sequence_table_by_its_key() -> None:
    clinic = load_clinic(n_patients=50, sequential=True, seed=4)
    visits = clinic.real["visits"]
    train, holdout = split_people(
        clinic.real, clinic.metadata, holdout_share=0.5, seed=0
    )
    assert set(train["visits"]["patient_id"]).isdisjoint(
        holdout["visits"]["patient_id"]
    )
    assert len(train["visits"]) + len(holdout["visits"]) == len(visits)
    assert holdout["visits"]["patient_id"].nunique() == 20


@pytest.mark.parametrize("share", [0, 1, 1.5, "0.2", True])
def test_split_people_refuses_a_bad_share(bank: Any, share: Any) -> None:
    with pytest.raises(
        ParameterError, match=r"`holdout_share` must be a number in \(0, 1\)"
    ):
        split_people(bank.real, BANK_METADATA, holdout_share=share)
