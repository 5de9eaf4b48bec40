# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import pandas as pd
import pytest

from synthrisk.datasets.relational import (
    CLINIC_SEQUENTIAL_METADATA,
    load_bank,
    load_clinic,
)
from synthrisk.relational.metadata import check_tables, load_metadata


def test_load_bank_is_seeded_and_keys_hold() -> None:
    a, b = load_bank(n_customers=80, seed=3), load_bank(n_customers=80, seed=3)
    c = load_bank(n_customers=80, seed=4)
    pd.testing.assert_frame_equal(a.real["transactions"], b.real["transactions"])
    assert not a.real["customers"].equals(c.real["customers"])
    assert len(a.real["customers"]) == 64
    assert len(a.holdout["customers"]) == 16
    meta = load_metadata(a.metadata)
    for synthetic in a.synthetic.values():
        check_tables(
            {"real": a.real, "synthetic": synthetic, "holdout": a.holdout}, meta
        )
        assert len(synthetic["customers"]) == 64


def test_bank_whole_copies_copy_every_row_of_a_person() -> None:
    bank = load_bank(n_customers=200, seed=0)
    copied = bank.copied["whole_copies"]
    assert len(copied) == 8  # 5 % of 160
    syn = bank.synthetic["whole_copies"]
    real = bank.real
    for i, person in enumerate(copied):
        syn_id = syn["customers"]["customer_id"].iloc[i]
        values = ["age", "region", "segment", "income"]
        assert (
            syn["customers"].iloc[i][values].tolist()
            == real["customers"].set_index("customer_id").loc[person, values].tolist()
        )
        real_acc = real["accounts"][real["accounts"]["customer_id"] == person]
        syn_acc = syn["accounts"][syn["accounts"]["customer_id"] == syn_id]
        assert sorted(real_acc["balance"]) == sorted(syn_acc["balance"])
        real_tx = real["transactions"][
            real["transactions"]["account_id"].isin(real_acc["account_id"])
        ]
        syn_tx = syn["transactions"][
            syn["transactions"]["account_id"].isin(syn_acc["account_id"])
        ]
        assert sorted(real_tx["amount"]) == sorted(syn_tx["amount"])


def test_bank_child_copies_keep_new_root_rows() -> None:
    bank = load_bank(n_customers=200, seed=0)
    null, child = bank.synthetic["null"], bank.synthetic["child_copies"]
    pd.testing.assert_frame_equal(
        null["customers"].drop(columns="customer_id"),
        child["customers"].drop(columns="customer_id"),
    )
    real_balances = set(bank.real["accounts"]["balance"])
    shared = child["accounts"]["balance"].isin(real_balances)
    assert shared.sum() >= len(bank.copied["child_copies"])
    assert not null["accounts"]["balance"].isin(real_balances).any()


def test_null_shares_no_visit_with_the_real_people() -> None:
    clinic = load_clinic(n_patients=100, seed=1)
    columns = ["visit_date", "department", "cost", "severity"]
    real = pd.concat([clinic.real["visits"], clinic.holdout["visits"]])[columns]
    null = clinic.synthetic["null"]["visits"][columns]
    assert len(null.merge(real, on=columns)) == 0
    copies = clinic.synthetic["whole_copies"]["visits"][columns]
    assert len(copies.merge(real, on=columns)) >= len(clinic.copied["whole_copies"])


def test_load_clinic_sequential_form() -> None:
    clinic = load_clinic(n_patients=50, seed=2, sequential=True)
    assert clinic.metadata is CLINIC_SEQUENTIAL_METADATA
    for side in (clinic.real, clinic.holdout, *clinic.synthetic.values()):
        assert list(side) == ["visits"]
        assert list(side["visits"].columns) == list(
            CLINIC_SEQUENTIAL_METADATA["columns"]
        )
    assert set(clinic.synthetic) == {
        "null",
        "whole_copies",
        "child_copies",
        "shuffled_sequences",
    }


def test_loaders_refuse_bad_sizes() -> None:
    with pytest.raises(ValueError, match="n_customers"):
        load_bank(n_customers=3)
    with pytest.raises(TypeError, match="sequential"):
        load_clinic(sequential="yes")  # type: ignore[arg-type]
