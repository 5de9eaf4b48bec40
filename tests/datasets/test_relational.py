# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthrisk.datasets.relational import (
    CLAIMS_METADATA,
    CLINIC_SEQUENTIAL_METADATA,
    RelationalData,
    load_bank,
    load_claims,
    load_clinic,
    load_hospital,
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


def _values(frame: pd.DataFrame) -> list[tuple[object, ...]]:
    """The rows of ``frame`` without its key columns, as a sorted list."""
    kept = frame[[c for c in frame.columns if not c.endswith("_id")]]
    return sorted(map(tuple, kept.astype(str).to_numpy()))


def _patient(tables: dict[str, pd.DataFrame], pid: str) -> dict[str, pd.DataFrame]:
    admissions = tables["admissions"][tables["admissions"]["patient_id"] == pid]
    return {
        "patients": tables["patients"][tables["patients"]["patient_id"] == pid],
        "admissions": admissions,
        "procedures": tables["procedures"][
            tables["procedures"]["admission_id"].isin(admissions["admission_id"])
        ],
        "prescriptions": tables["prescriptions"][
            tables["prescriptions"]["patient_id"] == pid
        ],
    }


@pytest.fixture(scope="module")
def hospital() -> RelationalData:
    return load_hospital(n_patients=2000, seed=5)


def test_load_hospital_is_seeded_and_keys_hold(hospital: RelationalData) -> None:
    again = load_hospital(n_patients=2000, seed=5)
    pd.testing.assert_frame_equal(hospital.real["procedures"], again.real["procedures"])
    assert (len(hospital.real["patients"]), len(hospital.holdout["patients"])) == (
        1600,
        400,
    )
    assert hospital.real["patients"]["date_of_birth"].dtype.kind == "M"
    meta = load_metadata(hospital.metadata)
    assert set(hospital.synthetic) == {
        "null",
        "whole_copies",
        "child_copies",
        "one_table_copies",
        "long_rare_copies",
    }
    for synthetic in hospital.synthetic.values():
        check_tables(
            {
                "real": hospital.real,
                "synthetic": synthetic,
                "holdout": hospital.holdout,
            },
            meta,
        )
        assert len(synthetic["patients"]) == 1600
    # 1 % of 1,600 training people copied; 0.5 % in long_rare_copies
    assert [len(hospital.copied[k]) for k in sorted(hospital.copied)] == [16, 8, 16, 16]
    # heavy-tailed histories: most patients have one admission, a few dozens
    counts = hospital.real["admissions"]["patient_id"].value_counts()
    assert counts.median() <= 2
    assert counts.max() >= 30


def test_hospital_copies_copy_the_named_rows(hospital: RelationalData) -> None:
    real, null = hospital.real, hospital.synthetic["null"]
    for scenario in ("whole_copies", "child_copies", "one_table_copies"):
        synthetic = hospital.synthetic[scenario]
        for i, person in enumerate(hospital.copied[scenario][:3]):
            donor = _patient(real, person)
            host = synthetic["patients"]["patient_id"].iloc[i]
            copy = _patient(synthetic, host)
            new = _patient(null, null["patients"]["patient_id"].iloc[i])
            copied = {
                "whole_copies": (
                    "patients",
                    "admissions",
                    "procedures",
                    "prescriptions",
                ),
                "child_copies": ("admissions", "procedures", "prescriptions"),
                "one_table_copies": ("prescriptions",),
            }[scenario]
            for name in ("patients", "admissions", "procedures", "prescriptions"):
                source = donor if name in copied else new
                assert _values(copy[name]) == _values(source[name]), (scenario, name)
    # one child table: the donors all have prescriptions
    prescribed = set(real["prescriptions"]["patient_id"])
    assert set(hospital.copied["one_table_copies"]) <= prescribed


def test_hospital_long_rare_copies_are_the_longest_rarest_histories(
    hospital: RelationalData,
) -> None:
    real = hospital.real
    rows = (
        real["admissions"]["patient_id"]
        .value_counts()
        .reindex(real["patients"]["patient_id"], fill_value=0)
    )
    chosen = hospital.copied["long_rare_copies"]
    # the 8 chosen people hold far more admissions than the median person (1)
    assert rows[chosen].min() >= 10
    assert rows[chosen].median() > rows.quantile(0.99)
    synthetic = hospital.synthetic["long_rare_copies"]
    first = _patient(synthetic, synthetic["patients"]["patient_id"].iloc[0])
    assert _values(first["procedures"]) == _values(
        _patient(real, chosen[0])["procedures"]
    )


def test_load_claims_is_one_sequence_table_with_same_day_claims() -> None:
    claims = load_claims(n_members=1000, seed=2)
    columns = list(CLAIMS_METADATA["columns"])
    for side in (claims.real, claims.holdout, *claims.synthetic.values()):
        assert list(side) == ["claims"]
        assert list(side["claims"].columns) == columns
    real = claims.real["claims"]
    assert real["member_id"].nunique() == 800
    # the member's columns never change within their sequence
    constant = real.groupby("member_id")[["date_of_birth", "sex", "plan", "region"]]
    assert (constant.nunique() == 1).all().all()
    # several claim lines on one day
    assert real.duplicated(["member_id", "claim_date"]).mean() > 0.2
    meta = load_metadata(claims.metadata)
    assert meta.sequence is not None
    assert meta.sequence.key == "member_id"
    whole, child = claims.synthetic["whole_copies"], claims.synthetic["child_copies"]
    null = claims.synthetic["null"]["claims"]
    events = ["claim_date", "procedure_code", "diagnosis_code", "provider", "amount"]
    for i, member in enumerate(claims.copied["whole_copies"][:3]):
        donor = real[real["member_id"] == member]
        host_id = whole["claims"]["member_id"].unique()[i]
        copy = whole["claims"][whole["claims"]["member_id"] == host_id]
        assert _values(copy.drop(columns="member_id")) == _values(
            donor.drop(columns="member_id")
        )
        # child copies: the donor's claim lines under a new member's columns
        host = child["claims"][child["claims"]["member_id"] == f"sm{i}"]
        assert _values(host[events]) == _values(donor[events])
        new = null[null["member_id"] == f"sm{i}"]
        assert host["plan"].iloc[0] == new["plan"].iloc[0]
        assert host["date_of_birth"].iloc[0] == new["date_of_birth"].iloc[0]
    lengths = real["member_id"].value_counts()
    longest = claims.copied["long_rare_copies"]
    assert len(longest) == 4
    assert lengths[longest].min() > lengths.quantile(0.95)
    assert np.isin(longest, real["member_id"]).all()
